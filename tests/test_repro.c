/* Tests for lib/repro: the attr written as C field by field and as perf -vv
 * prints it (expected lines written by hand), hostile specs that must not
 * break repro.c (a comment closer, a newline, quotes, trigraphs: the
 * program still builds warning-free and names the cell byte for byte,
 * escaped), safe directory names, picking cells, and the whole repro.c and
 * README.txt of tests/data/repro/run.json against golden files
 * (PMUCANARY_REGENERATE=1 rewrites them). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "hbproto.h"
#include "log.h"
#include "repro.h"
#include "results.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>

/* cycles:pp as perf 3.6 built it, plus the members whose C spelling is
 * not plain decimal: a mask past 32 bits, a negative clockid. */
static struct perf_event_attr hand_attr(void)
{
	struct perf_event_attr a = { 0 };

	a.type = PERF_TYPE_HARDWARE;
	a.size = 96;
	a.config = 0;
	a.sample_freq = 4000;
	a.freq = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	a.read_format = PERF_FORMAT_ID;
	a.disabled = 1;
	a.inherit = 1;
	a.precise_ip = 2;
	a.exclude_guest = 1;
	a.use_clockid = 1;
	a.clockid = -1;
	a.config1 = 0x100000000ULL;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY;
	a.wakeup_events = 1;
	return a;
}

static void test_c_attr_lines(void **state)
{
	struct perf_event_attr a = hand_attr();
	g_autoptr(GString) out = g_string_new(NULL);

	repro_c_attr_append(out, &a);
	assert_string_equal(out->str,
		"\t.type = 0,\n"
		"\t.size = 96,\n"
		"\t.sample_freq = 4000,\n"
		"\t.sample_type = 0x107,\n"
		"\t.read_format = 0x4,\n"
		"\t.disabled = 1,\n"
		"\t.inherit = 1,\n"
		"\t.freq = 1,\n"
		"\t.precise_ip = 2,\n"
		"\t.exclude_guest = 1,\n"
		"\t.use_clockid = 1,\n"
		"\t.wakeup_events = 1,\n"
		"\t.config1 = 0x100000000ULL,\n"
		"\t.branch_sample_type = 0x9,\n"
		"\t.clockid = -1,\n");

	/* Without freq the union member is sample_period; type and size are
	 * written even when zero. */
	struct perf_event_attr b = { .sample_period = 3000000000ULL };

	g_string_truncate(out, 0);
	repro_c_attr_append(out, &b);
	assert_string_equal(out->str, "\t.type = 0,\n\t.size = 0,\n\t.sample_period = 3000000000ULL,\n");
}

static void test_perf_layout(void **state)
{
	struct perf_event_attr a = hand_attr();
	g_autoptr(GString) out = g_string_new(NULL);

	repro_perf_attr_append(out, &a);
	assert_string_equal(out->str,
		"  size                             96\n"
		"  { sample_period, sample_freq }   4000\n"
		"  sample_type                      IP|TID|TIME|PERIOD\n"
		"  read_format                      ID\n"
		"  disabled                         1\n"
		"  inherit                          1\n"
		"  freq                             1\n"
		"  precise_ip                       2\n"
		"  exclude_guest                    1\n"
		"  use_clockid                      1\n"
		"  { wakeup_events, wakeup_watermark } 1\n"
		"  { bp_addr, config1 }             0x100000000\n"
		"  branch_sample_type               USER|ANY\n"
		"  clockid                          -1\n");

	/* A bit perf has no name for is shown, not dropped. */
	struct perf_event_attr b = { .type = 4, .config = 0x3c,
				     .sample_type = PERF_SAMPLE_IP | (1ULL << 40) };

	g_string_truncate(out, 0);
	repro_perf_attr_append(out, &b);
	assert_string_equal(out->str,
		"  type                             4\n"
		"  config                           0x3c\n"
		"  sample_type                      IP|0x10000000000\n");
}

static void test_escapes(void **state)
{
	g_autoptr(GString) s = g_string_new(NULL);

	repro_c_string_append(s, "cycles:pp msr/tsc/ a\"b\\c?\?/\n*/\x1b\xe2\x80\xae");
	assert_string_equal(s->str,
		"cycles:pp msr/tsc/ a\\042b\\134c\\077\\077/\\012*/\\033\\342\\200\\256");
	g_string_truncate(s, 0);
	repro_c_comment_append(s, "msr/tsc/ x*/y\n/*z\\ ?\?/");
	assert_string_equal(s->str, "msr/tsc/ x\\x2a/y\\x0a/\\x2az\\x5c \\x3f\\x3f/");
}

static void test_dir_names(void **state)
{
	g_autoptr(results_cell) a = cell_new(NULL, "perf-3.6", "cycles:pp");
	g_autoptr(results_cell) b = cell_new(NULL, "raw", "../../etc/x y");
	g_autoptr(results_cell) c = cell_new(NULL, ".", "msr/tsc/:u");
	g_autofree char *long_spec = g_strnfill(400, '/');
	g_autoptr(results_cell) d = cell_new(NULL, "raw", long_spec);
	g_autoptr(results_cell) e = cell_new(NULL, "raw", long_spec);
	g_autofree char *na = repro_dir_name(a), *nb = repro_dir_name(b), *nc = repro_dir_name(c);
	g_autofree char *nd = NULL, *ne = NULL;

	assert_string_equal(na, "perf-3.6+cycles%3App");
	assert_string_equal(nb, "raw+..%2F..%2Fetc%2Fx%20y");
	assert_string_equal(nc, "%2E+msr%2Ftsc%2F%3Au");
	nd = repro_dir_name(d);
	assert_true(strlen(nd) <= 200);
	assert_null(strchr(nd, '/'));
	assert_true(g_str_has_prefix(nd, "raw+%2F%2F"));
	/* the cut never splits a %XX: what is left before the hash is whole */
	assert_int_equal(nd[strlen(nd) - 17], '+');
	assert_int_equal(nd[strlen(nd) - 20], '%');
	/* a different long spec with the same prefix gets another name */
	e->spec[399] = 'x';
	ne = repro_dir_name(e);
	assert_string_not_equal(nd, ne);
}

static struct result_set *read_data(void)
{
	g_autofree char *top = test_top_dir();
	g_autofree char *path = g_build_filename(top, "tests/data/repro/run.json", NULL);
	struct result_set *set = NULL;

	if (results_read_json(path, &set) < 0)
		fail_msg("%s", pc_errmsg());
	return set;
}

static void test_find_cell(void **state)
{
	g_autoptr(result_set) set = read_data();
	const struct cell *c = NULL;
	int defaults = 0;

	assert_int_equal(repro_find_cell(set, "perf-3.6:cycles:pp", &c), 0);
	assert_string_equal(c->profile, "perf-3.6");
	assert_int_equal(c->outcome, OUTCOME_GUEST_CRASH);
	assert_int_equal(repro_find_cell(set, "perf-modern:cpu-clock", &c), 0);
	assert_int_equal(repro_find_cell(set, "perf-3.6:cycles:ppp", &c), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "no cell perf-3.6:cycles:ppp"));
	assert_int_equal(repro_find_cell(set, "cycles:pp", &c), -ENOENT);
	assert_int_equal(repro_find_cell(set, "perf-3.1:cycles:H", &c), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "has no attr"));
	assert_int_equal(repro_find_cell(set, "perf-modern:task-clock", &c), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "INFRA"));
	for (guint i = 0; i < set->cells->len; i++)
		defaults += repro_cell_default(set->cells->pdata[i]);
	/* the crash, the hang, the EOPNOTSUPP, the hostile EINVAL; not OK,
	 * REJECTED, INFRA */
	assert_int_equal(defaults, 4);
}

static void golden(const char *name, const GString *got)
{
	g_autofree char *top = test_top_dir();
	g_autofree char *path = g_build_filename(top, "tests/data/repro", name, NULL);
	g_autofree char *want = NULL;

	if (getenv("PMUCANARY_REGENERATE")) {
		assert_true(g_file_set_contents(path, got->str, (gssize)got->len, NULL));
		return;
	}
	if (!g_file_get_contents(path, &want, NULL, NULL))
		fail_msg("no golden file %s (PMUCANARY_REGENERATE=1 writes it)", path);
	if (strcmp(want, got->str))
		fail_msg("%s differs from what repro made:\n%s", path, got->str);
}

static void test_golden(void **state)
{
	g_autoptr(result_set) set = read_data();
	const struct cell *c = NULL;
	const struct repro_opts opts = { 0 };
	g_autoptr(GString) src = NULL, readme = NULL, readme2 = NULL, readme3 = NULL;

	assert_int_equal(repro_find_cell(set, "perf-3.6:cycles:pp", &c), 0);
	src = repro_c_source(set, c, &opts);
	readme = repro_readme(set, "run.json", c, &opts);
	golden("crash.repro.c", src);
	golden("crash.README.txt", readme);
	assert_int_equal(repro_find_cell(set, "perf-3.7:cycles:pp", &c), 0);
	readme2 = repro_readme(set, "run.json", c, &opts);
	golden("eopnotsupp.README.txt", readme2);
	/* harmful only beside another attr: the README says repro.c arms it alone */
	assert_int_equal(repro_find_cell(set, "perf-3.6:cycles:p", &c), 0);
	readme3 = repro_readme(set, "run.json", c, &opts);
	golden("together.README.txt", readme3);
}

/* The hostile cell's repro.c builds with -Wall -Wextra -Werror, and the
 * program names the cell as text_escape() shows it, on one line. Run with
 * a bad argument it stops at the usage: no perf_event_open. */
static void test_hostile_builds(void **state)
{
	g_autoptr(result_set) set = read_data();
	const struct cell *hostile = NULL;
	g_autofree char *dir = g_dir_make_tmp("test_repro.XXXXXX", NULL);
	g_autofree char *written = NULL, *bin = NULL, *src = NULL, *cout = NULL, *cerr = NULL;
	const struct repro_opts opts = { 0 };
	int status;

	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];

		if (!strcmp(c->profile, "raw"))
			hostile = c;
	}
	assert_non_null(hostile);
	assert_non_null(strstr(hostile->spec, "*/\n"));
	assert_int_equal(repro_write(set, "run.json", hostile, &opts, dir, &written), 0);
	src = g_build_filename(written, "repro.c", NULL);
	bin = g_build_filename(written, "repro", NULL);
	{
		const char *argv[] = { "cc", "-Wall", "-Wextra", "-Werror", "-o", bin, src, NULL };

		assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
					 &cout, &cerr, &status, NULL));
		if (!g_spawn_check_wait_status(status, NULL))
			fail_msg("cc: %s", cerr);
		assert_string_equal(cerr, "");
	}
	g_clear_pointer(&cout, g_free);
	g_clear_pointer(&cerr, g_free);
	{
		const char *argv[] = { bin, "not-a-number", NULL };

		assert_true(g_spawn_sync(NULL, (char **)argv, NULL, 0, NULL, NULL, &cout, &cerr,
					 &status, NULL));
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 2);
		assert_non_null(strstr(cerr, "usage:"));
	}
	/* The name in the program is the escaped one: grep it out of the source. */
	{
		g_autofree char *text = NULL;

		assert_true(g_file_get_contents(src, &text, NULL, NULL));
		assert_non_null(strstr(text,
			"static const char cell_name[] = \"raw:x*/\\134x0aint main(void){return 0;}"
			"/*\\042\\134\\077\\077/\\134u{202e}\";"));
		/* the title comment holds the spec, and nothing closes it early */
		assert_non_null(strstr(text, "EINVAL with x\\x2a/\\x0aint main(void){return 0;}/\\x2a"));
	}
	{
		const char *argv[] = { "rm", "-rf", dir, NULL };

		g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
			     NULL, NULL);
	}
}

/* Every field of the README's result line comes from the file: a newline
 * or a tab in any of them stays escaped, so none can start a line of its
 * own (a forged "run it as root" step, say). */
static void test_readme_result_line(void **state)
{
	g_autoptr(result_set) set = read_data();
	const struct cell *c = NULL;
	const struct repro_opts opts = { 0 };
	char **fields[] = { &set->run_id, &set->created, &set->tool_version, &set->accel };

	assert_int_equal(repro_find_cell(set, "perf-3.6:cycles:pp", &c), 0);
	for (size_t f = 0; f <= G_N_ELEMENTS(fields); f++) {
		g_autoptr(result_set) fresh = read_data();
		g_autoptr(GString) readme = NULL;
		const char *name = "run.json";

		if (f < G_N_ELEMENTS(fields)) {
			char **field = (char **)((char *)fresh + ((char *)fields[f] - (char *)set));

			g_free(*field);
			*field = g_strdup("x\nFORGED line\tend");
		} else {
			name = "run.json\nFORGED line";
		}
		assert_int_equal(repro_find_cell(fresh, "perf-3.6:cycles:pp", &c), 0);
		readme = repro_readme(fresh, name, c, &opts);
		if (strstr(readme->str, "\nFORGED") || strchr(readme->str, '\t'))
			fail_msg("field %zu: a raw newline or tab in README.txt:\n%s", f, readme->str);
		assert_non_null(strstr(readme->str, "FORGED line"));
	}
}

/* README: the evidence as recorded. The deepest the harness writes is a
 * rule's (entry, literals, a literal, its value: objects down to depth 2
 * under the entry); two levels more than that are shown whole, and only a
 * hostile file nested far deeper is cut, with a note, not followed. */
static void test_readme_evidence_depth(void **state)
{
	g_autoptr(result_set) set = read_data();
	const struct cell *cc = NULL;
	struct cell *c;
	const struct repro_opts opts = { 0 };
	g_autoptr(GString) readme = NULL;
	json_t *deep = json_string("bottom"), *hostile = json_integer(7);

	assert_int_equal(repro_find_cell(set, "perf-3.6:cycles:pp", &cc), 0);
	c = (struct cell *)cc;
	/* {"kind":"deep","l1":{"l2":{"l3":{"l4":{"leaf":"bottom"}}}}}: the
	 * object under l4 sits at depth 4. */
	deep = json_pack("{s:o}", "leaf", deep);
	for (int d = 4; d >= 1; d--) {
		g_autofree char *k = g_strdup_printf("l%d", d);

		deep = json_pack("{s:o}", k, deep);
	}
	json_object_set_new(deep, "kind", json_string("deep"));
	for (int d = 0; d < 64; d++)
		hostile = json_pack("{s:o}", "h", hostile);
	json_array_clear(c->evidence);
	json_array_append_new(c->evidence, deep);
	json_array_append_new(c->evidence, hostile);
	readme = repro_readme(set, "run.json", c, &opts);
	if (!strstr(readme->str, "\n            leaf: bottom\n"))
		fail_msg("the fourth level is not shown whole:\n%s", readme->str);
	assert_non_null(strstr(readme->str, "(nested too deep, left out)"));
	assert_null(strstr(readme->str, ": 7\n"));
}

static void test_dwell(void **state)
{
	g_autoptr(result_set) set = read_data();
	const struct repro_opts given = { .dwell_ms = 250 };
	const char *from = NULL;

	assert_int_equal(repro_dwell_ms(set, NULL, &from), 1500);
	assert_non_null(strstr(from, "scenario"));
	assert_int_equal(repro_dwell_ms(set, &given, &from), 250);
	json_decref(set->scenario);
	set->scenario = NULL;
	assert_int_equal(repro_dwell_ms(set, NULL, &from), REPRO_DEFAULT_DWELL_MS);
	assert_non_null(strstr(from, "not recorded"));
}

/* Numbers a result file gives the reproducer are read as the scenario
 * defines them, else the default: a dwell of 1 ms up to a day ("more than
 * a day is not one"), ring_pages a power of two of 1..1024 (scenario.c's
 * [load] ring_pages); anything else (0, negative, not a number, too big,
 * 3 pages) is not the file's value. */
static void test_file_numbers_in_range(void **state)
{
	static const struct {
		const char *json;
		unsigned int want;
	} dwell[] = {
		{ "1", 1 }, { "1500", 1500 }, { "86400000", 86400000 },
		{ "86400001", REPRO_DEFAULT_DWELL_MS }, { "0", REPRO_DEFAULT_DWELL_MS },
		{ "-5", REPRO_DEFAULT_DWELL_MS }, { "\"2s\"", REPRO_DEFAULT_DWELL_MS },
		{ "1.5", REPRO_DEFAULT_DWELL_MS }, { "null", REPRO_DEFAULT_DWELL_MS },
	}, ring[] = {
		{ "1", 1 }, { "16", 16 }, { "1024", 1024 }, { "2048", 8 }, { "3", 8 },
		{ "0", 8 }, { "-4", 8 }, { "\"16\"", 8 },
	};
	g_autoptr(result_set) set = read_data();
	const struct cell *cell = NULL;
	json_t *load = json_object_get(set->scenario, "load");

	(void)state;
	assert_non_null(load);
	assert_int_equal(repro_find_cell(set, "perf-3.6:cycles:pp", &cell), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(dwell); i++) {
		const char *from = NULL;

		json_object_set_new(load, "dwell_ms", json_loads(dwell[i].json, JSON_DECODE_ANY, NULL));
		if (repro_dwell_ms(set, NULL, &from) != dwell[i].want)
			fail_msg("dwell_ms %s: %u, want %u", dwell[i].json, repro_dwell_ms(set, NULL, &from),
				 dwell[i].want);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(ring); i++) {
		g_autofree char *want = g_strdup_printf("\n#define RING_PAGES %u\n", ring[i].want);
		g_autoptr(GString) src = NULL;

		json_object_set_new(load, "ring_pages", json_loads(ring[i].json, JSON_DECODE_ANY, NULL));
		src = repro_c_source(set, cell, NULL);
		if (!strstr(src->str, want))
			fail_msg("ring_pages %s: want RING_PAGES %u", ring[i].json, ring[i].want);
	}
}

/* The values guest.sh sets, read back by a real /bin/sh: the script up to
 * its fixed part, then the variables printed one per line. */
static char *guest_sh_values(const GString *sh)
{
	g_autofree char *dir = test_tmpdir("test_repro_sh");
	g_autofree char *path = g_build_filename(dir, "values.sh", NULL);
	const char *end = strstr(sh->str, "\nhere=");
	g_autofree char *head = NULL, *out = NULL, *err = NULL;
	const char *argv[] = { "/bin/sh", path, NULL };
	int status;

	assert_non_null(end);
	head = g_strndup(sh->str, end - sh->str + 1);
	{
		g_autofree char *body = g_strdup_printf("%s\nprintf '%%s\\n' \"$KERNEL\" \"$INITRD\" "
							"\"$CMDLINE\" \"$ACCEL\" \"$MEM\" \"$SMP\" "
							"\"$HB_TIMEOUT_S\" \"$BOOT_TIMEOUT_S\" "
							"\"$GRACE_S\" \"$DWELL_MS\" \"$PORT\" "
							"\"$RECORDED\"\n", head);

		assert_true(g_file_set_contents(path, body, -1, NULL));
	}
	assert_true(g_spawn_sync(NULL, (char **)argv, (char *[]){ "PATH=/usr/bin:/bin", NULL }, 0,
				 NULL, NULL, &out, &err, &status, NULL));
	if (!g_spawn_check_wait_status(status, NULL))
		fail_msg("sh: %s", err);
	unlink(path);
	test_tmpdir_remove(dir);
	return g_steal_pointer(&out);
}

/* guest.sh: written only for a harm cell of a run whose run.json says how
 * its initramfs guest booted; every value from the file reaches the shell
 * as the very bytes it was (quotes, $(...), backquotes, spaces), a value a
 * script line cannot carry (a newline, an escape) means no script; the
 * scenario's numbers are read in range, else the fleet's defaults. */
static void test_guest_sh(void **state)
{
	g_autoptr(result_set) set = read_data();
	const struct cell *crash = NULL, *eop = NULL;
	const char *why = NULL;
	const char *kernel = "/k/it's $(touch /tmp/owned) `id` \\ \"x\"";
	const char *cmdline = "console=ttyS0 panic=0 pmucanary.interval=500 a='b c' $HOME";
	g_autoptr(GString) none = NULL, none2 = NULL, sh = NULL, sh2 = NULL, bad = NULL;
	g_autofree char *want = NULL, *got = NULL, *got2 = NULL;
	json_t *gk, *fleet;

	(void)state;
	assert_int_equal(repro_find_cell(set, "perf-3.6:cycles:pp", &crash), 0);
	assert_int_equal(repro_find_cell(set, "perf-3.7:cycles:pp", &eop), 0);
	/* this run.json predates the guest's recipe */
	none = repro_guest_sh(set, crash, NULL, &why);
	assert_null(none);
	assert_non_null(strstr(why, "predates"));
	gk = json_pack("{s:s,s:s,s:s,s:s}", "source", "distribution", "path", kernel,
		       "initrd", "/i/initramfs.cpio", "cmdline", cmdline);
	if (!set->extra)
		set->extra = json_object();
	json_object_set_new(set->extra, "guest_kernel", gk);
	/* an errno cell has no guest to watch */
	none2 = repro_guest_sh(set, eop, NULL, &why);
	assert_null(none2);
	assert_non_null(strstr(why, "only a harm cell"));

	sh = repro_guest_sh(set, crash, NULL, &why);
	assert_non_null(sh);
	assert_true(g_str_has_prefix(sh->str, "#!/bin/sh\n"));
	got = guest_sh_values(sh);
	/* kvm, the fleet's defaults (no [fleet] in this file): 192 MiB, one
	 * vCPU, heartbeat timeout 2 s (grace twice that), boot 30 s; the
	 * scenario's dwell 1500 ms */
	want = g_strdup_printf("%s\n/i/initramfs.cpio\n%s\nkvm\n192\n1\n2\n30\n4\n1500\n%s\n"
			       "GUEST_CRASH, k/n %d/%d\n", kernel, cmdline, HB_PORT_NAME, crash->k,
			       crash->n);
	assert_string_equal(got, want);

	/* the scenario's fleet, in range; tcg's own defaults where it is not */
	fleet = json_pack("{s:i,s:i,s:i,s:i}", "memory_mib", 512, "vcpus", 2,
			  "heartbeat_timeout_ms", 20001, "boot_timeout_ms", 0);
	json_object_set_new(set->scenario, "fleet", fleet);
	g_free(set->accel);
	set->accel = g_strdup("tcg");
	sh2 = repro_guest_sh(set, crash, &(struct repro_opts){ .dwell_ms = 250 }, &why);
	assert_non_null(sh2);
	got2 = guest_sh_values(sh2);
	g_free(want);
	want = g_strdup_printf("%s\n/i/initramfs.cpio\n%s\ntcg\n512\n2\n21\n120\n42\n250\n%s\n"
			       "GUEST_CRASH, k/n %d/%d\n", kernel, cmdline, HB_PORT_NAME, crash->k,
			       crash->n);
	assert_string_equal(got2, want);
	json_object_set_new(fleet, "memory_mib", json_integer(-1));
	json_object_set_new(fleet, "vcpus", json_integer(65));
	{
		g_autoptr(GString) sh3 = repro_guest_sh(set, crash, NULL, &why);

		assert_non_null(strstr(sh3->str, "\nMEM=192\nSMP=1\n"));
	}

	/* a newline or an escape in a value: no script */
	json_object_set_new(gk, "cmdline", json_string("console=ttyS0\nrm -rf /"));
	bad = repro_guest_sh(set, crash, NULL, &why);
	assert_null(bad);
	assert_non_null(strstr(why, "byte"));
	json_object_set_new(gk, "cmdline", json_string(cmdline));
	json_object_set_new(gk, "path", json_string("/k/\033]0;x\007"));
	assert_null(repro_guest_sh(set, crash, NULL, &why));
	/* a probe boots no guests; an empty initrd is a disk guest's */
	json_object_set_new(gk, "path", json_string("/k/vmlinuz"));
	json_object_set_new(gk, "initrd", json_string(""));
	assert_null(repro_guest_sh(set, crash, NULL, &why));
	assert_non_null(strstr(why, "disk guests"));
	json_object_set_new(gk, "initrd", json_string("/i/rd"));
	set->kind = RESULTS_KIND_PROBE;
	assert_null(repro_guest_sh(set, crash, NULL, &why));
	assert_non_null(strstr(why, "not a run"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_c_attr_lines),
		cmocka_unit_test(test_perf_layout),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_dir_names),
		cmocka_unit_test(test_find_cell),
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_hostile_builds),
		cmocka_unit_test(test_dwell),
		cmocka_unit_test(test_file_numbers_in_range),
		cmocka_unit_test(test_readme_result_line),
		cmocka_unit_test(test_readme_evidence_depth),
		cmocka_unit_test(test_guest_sh),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
