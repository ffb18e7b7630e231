/* Tests for lib/lava: case ids round-trip for hostile specs and keep to
 * LAVA's character set; each outcome gets the LAVA result a lab would act
 * on; the job is YAML with the fields LAVA needs, and bad input is refused;
 * a log as lava-run writes it comes back as the same cells, while a
 * truncated or garbled log is an error naming file:line, and a job that
 * failed to boot is INFRA with no verdict. A LAVA server's results export
 * (its YAML and its REST API's JSON) gives the same cells, alone with an
 * unknown fingerprint, or with the log when both agree case by case; a
 * REJECTED cell comes back with the device's message. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "errata.h"
#include "lava.h"
#include "log.h"
#include "testutil.h"

#include <errno.h>
#include <string.h>

static const char *const hostile[] = {
	"cycles:ppH", "msr/tsc/", "cycles[exclude_guest,precise_ip=2]", "a__b", "_41",
	"x y\t=>\"'`$(reboot)", "\xe2\x80\xae" "evil", "\x01\x7f\xc3\xbf", "perf-3.6__cycles", "_",
	"..", "-", "%2F", "cpu/event=0x3c,umask=0x0/u",
};

static bool id_charset_ok(const char *id)
{
	for (const char *p = id; *p; p++)
		if (!g_ascii_isalnum(*p) && !strchr("-_.", *p))
			return false;
	return *id != '\0';
}

static void test_case_id_round_trip(void **state)
{
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	const char *profiles[] = { "perf-3.6", "raw", "perf_x", "a_" };

	for (size_t p = 0; p < G_N_ELEMENTS(profiles); p++) {
		for (size_t i = 0; i < G_N_ELEMENTS(hostile); i++) {
			g_autofree char *id = lava_case_id(profiles[p], hostile[i]);
			g_autofree char *prof = NULL, *spec = NULL;

			assert_non_null(id);
			if (!id_charset_ok(id))
				fail_msg("id '%s' leaves LAVA's [-_a-zA-Z0-9.]", id);
			if (lava_case_id_parse(id, &prof, &spec) < 0)
				fail_msg("'%s' does not parse: %s", id, pc_errmsg());
			assert_string_equal(prof, profiles[p]);
			assert_string_equal(spec, hostile[i]);
			/* two cells never share an id */
			assert_false(g_hash_table_contains(seen, id));
			g_hash_table_add(seen, g_strdup(id));
		}
	}
	/* ("a_", "b") and ("a", "_b") stay apart */
	g_autofree char *x = lava_case_id("a_", "b");
	g_autofree char *y = lava_case_id("a", "_b");
	assert_string_not_equal(x, y);
}

static void test_case_id_refuses_foreign_ids(void **state)
{
	const char *bad[] = {
		"perf-3.6__", "__cycles", "cycles", "perf__a_41", /* escape of a kept byte */
		"perf__a_2f", /* lower-case hex */ "perf__a b", "perf__a_4", "perf__a_00",
		"perf__x__y", "perf__a=b", "p\xc3\xa9__x", "login-action",
		/* escapes of bytes that are not UTF-8: a lone continuation
		 * byte, a sequence cut short, 0xFF; in the spec and the profile */
		"perf-3.6__x_20y_90", "perf__caf_C3", "perf__a_FF", "p_90__cycles",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *p = NULL, *s = NULL;

		if (lava_case_id_parse(bad[i], &p, &s) != -EINVAL)
			fail_msg("'%s' parsed as (%s, %s)", bad[i], p, s);
	}
	g_autofree char *longspec = g_strnfill(300, 'c');
	assert_null(lava_case_id("raw", longspec));
	/* no id for a name that is not UTF-8: the parser would refuse it */
	assert_null(lava_case_id("raw", "x\xff"));
	assert_null(lava_case_id("p\x90", "cycles"));
}

static void test_case_results(void **state)
{
	assert_int_equal(lava_case_result(OUTCOME_OK, false, false), LAVA_RESULT_PASS);
	assert_int_equal(lava_case_result(OUTCOME_EOPNOTSUPP, false, false), LAVA_RESULT_PASS);
	assert_int_equal(lava_case_result(OUTCOME_EOPNOTSUPP, true, false), LAVA_RESULT_FAIL);
	assert_int_equal(lava_case_result(OUTCOME_GUEST_CRASH, false, false), LAVA_RESULT_FAIL);
	assert_int_equal(lava_case_result(OUTCOME_HOST_CRASH, true, false), LAVA_RESULT_FAIL);
	assert_int_equal(lava_case_result(OUTCOME_GUEST_CRASH, false, true), LAVA_RESULT_SKIP);
	assert_int_equal(lava_case_result(OUTCOME_REJECTED, false, false), LAVA_RESULT_SKIP);
	assert_int_equal(lava_case_result(OUTCOME_INFRA, false, false), LAVA_RESULT_SKIP);
}

static bool python_yaml(void)
{
	return system("python3 -c 'import yaml' >/dev/null 2>&1") == 0;
}

static void test_job_is_yaml_with_fields(void **state)
{
	char *events[] = { "cpu-clock", "msr/tsc/", NULL };
	char *profiles[] = { "perf-3.1", NULL };
	struct lava_job_opts o = {
		.device_type = "qemu", .kernel_url = "file:///boot/vmlinuz",
		.ramdisk_url = "https://lab.example/rd.cpio.gz", .pmucanary_path = "/usr/bin/pmucanary",
		.probe_events = events, .probe_profiles = profiles,
		.baseline_url = "http://lab.example/base.json", .timeout_min = 15,
	};
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *dir = test_tmpdir("test_lava");
	g_autofree char *path = g_build_filename(dir, "job.yaml", NULL);
	g_autofree char *cmd = NULL;

	assert_int_equal(lava_job_write(&o, out), 0);
	assert_non_null(strstr(out->str, "device_type: \"qemu\"\n"));
	assert_non_null(strstr(out->str, "to: tmpfs"));
	assert_non_null(strstr(out->str, "method: qemu"));
	assert_non_null(strstr(out->str, "job: {minutes: 35}"));
	assert_non_null(strstr(out->str, "- test:\n    timeout: {minutes: 15}"));
	assert_non_null(strstr(out->str, "--event 'msr/tsc/'"));
	assert_non_null(strstr(out->str, "--baseline /tmp/pmucanary/base.json"));
	assert_non_null(strstr(out->str, "lava-test-case pmucanary-exit"));
	if (!python_yaml()) {
		test_tmpdir_remove(dir);
		test_skip("python3 with PyYAML (python3-yaml) is not installed: the job's YAML is not parsed");
	}
	assert_true(g_file_set_contents(path, out->str, (gssize)out->len, NULL));
	cmd = g_strdup_printf(
		"python3 -c 'import sys, yaml; j = yaml.safe_load(open(sys.argv[1])); "
		"a = j[\"actions\"]; assert [list(x)[0] for x in a] == [\"deploy\", \"boot\", \"test\"]; "
		"assert a[0][\"deploy\"][\"images\"][\"ramdisk\"][\"url\"] == \"https://lab.example/rd.cpio.gz\"; "
		"assert a[0][\"deploy\"][\"images\"][\"ramdisk\"][\"overlays\"][\"lava\"] is True; "
		"d = a[2][\"test\"][\"definitions\"][0]; assert d[\"from\"] == \"inline\"; "
		"assert any(\"lava cases\" in s for s in d[\"repository\"][\"run\"][\"steps\"])' %s",
		path);
	assert_int_equal(system(cmd), 0);
	/* the x86 type: tftp + iPXE, modules allowed */
	o.device_type = "x86";
	o.modules_url = "http://lab.example/modules.tar.xz";
	g_string_truncate(out, 0);
	assert_int_equal(lava_job_write(&o, out), 0);
	assert_true(g_file_set_contents(path, out->str, (gssize)out->len, NULL));
	g_free(cmd);
	cmd = g_strdup_printf(
		"python3 -c 'import sys, yaml; j = yaml.safe_load(open(sys.argv[1])); "
		"d = j[\"actions\"][0][\"deploy\"]; assert d[\"to\"] == \"tftp\"; "
		"assert d[\"modules\"][\"compression\"] == \"xz\"; "
		"assert j[\"actions\"][1][\"boot\"][\"method\"] == \"ipxe\"' %s", path);
	assert_int_equal(system(cmd), 0);
	test_tmpdir_remove(dir);
}

/* --scenario: the scenario travels inside the job, byte for byte, and the
 * device runs `pmucanary run` on it. */
static void test_job_carries_scenario(void **state)
{
	const char *ini = "[scenario]\nname = it's \"quoted\" $(x)\n[sweep]\nevents = cpu-clock\n";
	struct lava_job_opts o = {
		.device_type = "qemu", .kernel_url = "file:///k", .ramdisk_url = "file:///r",
		.pmucanary_url = "https://lab.example/pmucanary-lava.tar.gz", .scenario_text = ini,
		.artifact_url = "https://lab.example/upload/run.json",
	};
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *b64 = g_base64_encode((const guchar *)ini, strlen(ini));
	g_autofree char *want = g_strdup_printf("echo %s | base64 -d > /tmp/pmucanary/scenario.ini",
						b64);

	assert_int_equal(lava_job_write(&o, out), 0);
	assert_non_null(strstr(out->str, want));
	assert_non_null(strstr(out->str, "\\\"$PC\\\" run /tmp/pmucanary/scenario.ini"));
	assert_non_null(strstr(out->str, "wget -q -O pc.tgz 'https://lab.example/pmucanary-lava.tar.gz'"));
	assert_non_null(strstr(out->str, "PC=/tmp/pmucanary/pmucanary-lava/pmucanary"));
	assert_null(strstr(out->str, " probe "));
	assert_non_null(strstr(out->str, "wget -q -O /dev/null --post-file \\\"$RJ\\\" "
				    "'https://lab.example/upload/run.json' && lava-test-reference "
				    "pmucanary-run-json --result pass --reference "
				    "'https://lab.example/upload/run.json'"));
}

static void test_job_bad_input(void **state)
{
	char *events[] = { "cpu-clock", NULL };
	char *bad_events[] = { "cpu-clock;reboot now", NULL };
	struct lava_job_opts base = {
		.device_type = "qemu", .kernel_url = "file:///k", .ramdisk_url = "file:///r",
		.probe_events = events,
	};
	struct {
		struct lava_job_opts o;
		const char *says;
	} cases[] = {
		{ base, NULL },
		{ base, "device type 'pdp11'" },
		{ base, "kernel 'ftp:/x'" },
		{ base, "ramdisk: byte" },
		{ base, "probe event" },
		{ base, "modules: the qemu device type" },
		{ base, "needs a ramdisk" },
		{ base, "kernel args: panic=-1 reboots a panicked device" },
		{ base, "kernel args: panic=10 reboots" },
		{ base, NULL },   /* panic=0 is the harness's own setting */
		/* every word that goes into the job's shell line as it is */
		{ base, "job name 'nightly run': spaces or control bytes" },
		{ base, "job name: empty or longer than 256 bytes" },
		{ base, "job name: empty or longer than 256 bytes" },
		{ base, NULL },   /* 256 bytes is a name */
		{ base, "probe profile 'perf-3.6\tx': spaces or control bytes" },
		{ base, "pmucanary path: empty" },
		{ base, "probe event: empty" },
		/* a good name does not end the checks: what follows is checked */
		{ base, "kernel args: panic=-1 reboots" },
		/* lava.h: a URL of at most 2048 bytes */
		{ base, NULL },
		{ base, "ramdisk: URL longer than 2048 bytes" },
	};
	char *bad_profiles[] = { "perf-3.6\tx", NULL };
	char *empty_events[] = { "", NULL };
	g_autofree char *long_name = g_strnfill(257, 'j'), *name256 = g_strnfill(256, 'j');
	g_autofree char *fill2048 = g_strnfill(2048 - strlen("http://x/"), 'u');
	g_autofree char *url2048 = g_strconcat("http://x/", fill2048, NULL);
	g_autofree char *url2049 = g_strconcat(url2048, "v", NULL);
	g_autoptr(GString) out = g_string_new(NULL);

	cases[1].o.device_type = "pdp11";
	cases[2].o.kernel_url = "ftp:/x";
	cases[3].o.ramdisk_url = "http://x/'$(reboot)'";
	cases[4].o.probe_events = bad_events;
	cases[5].o.modules_url = "http://x/m.tar";
	cases[6].o.ramdisk_url = NULL;
	cases[7].o.kernel_args = "quiet panic=-1";
	cases[8].o.kernel_args = "panic=10 loglevel=7";
	cases[9].o.kernel_args = "quiet panic=0";
	cases[10].o.job_name = "nightly run";
	cases[11].o.job_name = "";
	cases[12].o.job_name = long_name;
	cases[13].o.job_name = name256;
	cases[14].o.probe_profiles = bad_profiles;
	cases[15].o.pmucanary_path = "";
	cases[16].o.probe_events = empty_events;
	cases[17].o.job_name = "nightly";
	cases[17].o.kernel_args = "panic=-1";
	cases[18].o.ramdisk_url = url2048;
	cases[19].o.ramdisk_url = url2049;
	assert_int_equal(strlen(url2048), 2048);
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		int ret = lava_job_write(&cases[i].o, out);

		if (!cases[i].says) {
			assert_int_equal(ret, 0);
			continue;
		}
		assert_int_equal(ret, -EINVAL);
		if (!strstr(pc_errmsg(), cases[i].says))
			fail_msg("case %zu: '%s' lacks '%s'", i, pc_errmsg(), cases[i].says);
	}
}

/* A set with every kind of cell, and the log lava-run writes when the
 * device reports it: target lines for the header, results lines (with
 * LAVA's "! " tags) for the cases, the job's own result last. */
static struct result_set *sample_set(void)
{
	struct result_set *set = result_set_new(RESULTS_KIND_PROBE);
	json_t *host = json_pack("{s:{s:s},s:{s:s,s:i,s:i,s:i},s:[],s:s}", "kernel", "release",
				 "6.1.0-57-amd64", "cpu", "vendor", "AuthenticAMD", "family", 25,
				 "model", 1, "stepping", 1, "pmus", "accel", "tcg");
	struct {
		const char *spec;
		enum outcome o;
		int k, n;
	} cells[] = {
		{ "cpu-clock:u", OUTCOME_OK, 0, 0 },
		{ "msr/tsc/:u", OUTCOME_EINVAL, 0, 0 },
		{ "cycles[exclude_guest,precise_ip=2]", OUTCOME_GUEST_CRASH, 2, 3 },
		{ "x y\t=>\"'", OUTCOME_REJECTED, 0, 0 },
		{ "cpu-clock:W", OUTCOME_INFRA, 0, 0 },
	};

	results_set_host(set, host);
	for (size_t i = 0; i < G_N_ELEMENTS(cells); i++) {
		struct cell *c = cell_new(NULL, "perf-3.6", cells[i].spec);
		struct perf_event_attr a = { .type = 1, .size = 64 };

		if (cells[i].o == OUTCOME_REJECTED) {
			cell_set_error(c, "bad modifier");
		} else {
			cell_set_attr(c, &a);
			c->outcome = cells[i].o;
		}
		c->k = cells[i].k;
		c->n = cells[i].n;
		results_add_cell(set, c);
	}
	return set;
}

static void log_line(GString *log, const char *lvl, const char *msg_json)
{
	g_string_append_printf(log, "{\"dt\": \"2026-12-04T02:33:59.31\", \"lvl\": \"%s\", "
				    "\"msg\": %s}\n", lvl, msg_json);
}

/* The header lines of lines with its lava_rejected replaced by rejected
 * (JSON text), as a lying device would print them. */
static void header_replace_rejected(GString *lines, const char *rejected)
{
	g_autoptr(GString) b64 = g_string_new(NULL), out = g_string_new(NULL);
	g_auto(GStrv) ls = g_strsplit(lines->str, "\n", -1);
	g_autofree guchar *raw = NULL;
	g_autofree char *txt = NULL, *enc = NULL;
	gsize len;
	json_t *root;
	size_t n, chunks;

	for (char **l = ls; *l && **l; l++)
		if (g_str_has_prefix(*l, "pmucanary-header "))
			g_string_append(b64, strchr(strchr(*l, ' ') + 1, ' ') + 1);
	raw = g_base64_decode(b64->str, &len);
	txt = g_strndup((const char *)raw, len);
	root = json_loads(txt, 0, NULL);
	assert_non_null(root);
	json_object_set_new(root, "lava_rejected", json_loads(rejected, JSON_DECODE_ANY, NULL));
	g_free(txt);
	txt = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	enc = g_base64_encode((const guchar *)txt, strlen(txt));
	n = strlen(enc);
	chunks = (n + LAVA_HEADER_CHUNK - 1) / LAVA_HEADER_CHUNK;
	for (size_t i = 0; i < chunks; i++)
		g_string_append_printf(out, "pmucanary-header %zu/%zu %.*s\n", i + 1, chunks,
				       LAVA_HEADER_CHUNK, enc + i * LAVA_HEADER_CHUNK);
	for (char **l = ls; *l && **l; l++)
		if (!g_str_has_prefix(*l, "pmucanary-header "))
			g_string_append_printf(out, "%s\n", *l);
	g_string_assign(lines, out->str);
}

static char *make_log_rejected(const struct result_set *set, const char *job_result,
			       bool with_cases, const char *rejected)
{
	GString *log = g_string_new(NULL);
	g_autoptr(GString) lines = g_string_new(NULL);
	g_auto(GStrv) ls = NULL;
	size_t skipped;

	log_line(log, "info", "\"start: 0 validate\"");
	/* console bytes as LAVA's YAML dumper escapes them (an escape right
	 * after an escape too: "\t\"") */
	log_line(log, "target", "\"\\e[0mcaf\\xE9 \\U0001F600 \\N\\L \\\" \\\\ \\x00\\0 \\/ \\t\\\"q\"");
	log_line(log, "results", "{\"case\": \"validate\", \"definition\": \"lava\", \"result\": \"pass\"}");
	if (with_cases) {
		assert_int_equal(lava_cases_format(set, NULL, NULL, lines, &skipped), 0);
		if (rejected)
			header_replace_rejected(lines, rejected);
		log_line(log, "results", "{\"case\": \"pmucanary-exit\", \"definition\": \"0_pmucanary\", "
					 "\"measurement\": ! \"0.0\", \"result\": \"pass\", \"units\": \"exit-code\"}");
		ls = g_strsplit(lines->str, "\n", -1);
		for (char **l = ls; *l && **l; l++) {
			g_auto(GStrv) f = g_strsplit(*l, " ", -1);

			if (!strcmp(f[0], "case")) {
				g_autofree char *m = g_strdup_printf(
					"{\"case\": \"%s\", \"definition\": \"0_pmucanary\", "
					"\"endtc\": ! \"576\", \"measurement\": ! \"%s.0\", "
					"\"result\": \"%s\", \"starttc\": ! \"576\", \"units\": \"%s\"}",
					f[1], f[3], f[2], f[4]);
				log_line(log, "results", m);
			} else {
				g_autofree char *m = g_strdup_printf("\"%s\"", *l);

				log_line(log, "target", m);
			}
		}
		log_line(log, "results", "{\"case\": \"pmucanary-run-json\", \"definition\": "
					 "\"0_pmucanary\", \"reference\": \"http://lab.example/r/run.json\", "
					 "\"result\": \"pass\"}");
	}
	if (!strcmp(job_result, "pass"))
		log_line(log, "results", "{\"case\": \"job\", \"definition\": \"lava\", \"result\": \"pass\"}");
	else
		log_line(log, "results", "{\"case\": \"job\", \"definition\": \"lava\", \"error_msg\": "
					 "\"auto-login-action timed out after 120 seconds\", \"error_type\": "
					 "\"Infrastructure\", \"result\": \"fail\"}");
	return g_string_free(log, FALSE);
}

static char *make_log(const struct result_set *set, const char *job_result, bool with_cases)
{
	return make_log_rejected(set, job_result, with_cases, NULL);
}

static void assert_cells_equal(const struct result_set *a, const struct result_set *b)
{
	assert_int_equal(a->cells->len, b->cells->len);
	for (guint i = 0; i < a->cells->len; i++) {
		const struct cell *x = g_ptr_array_index(a->cells, i);
		const struct cell *y = g_ptr_array_index(b->cells, i);

		assert_string_equal(x->profile, y->profile);
		assert_string_equal(x->spec, y->spec);
		assert_int_equal(x->outcome, y->outcome);
		assert_int_equal(x->k, y->k);
		assert_int_equal(x->n, y->n);
	}
}

static void test_collect_round_trip(void **state)
{
	g_autoptr(result_set) set = sample_set();
	g_autoptr(result_set) got = NULL;
	g_autofree char *log = make_log(set, "pass", true);
	bool infra = true;

	if (lava_collect(log, strlen(log), "job.log", &got, &infra) < 0)
		fail_msg("%s", pc_errmsg());
	assert_false(infra);
	assert_int_equal(got->kind, RESULTS_KIND_PROBE); /* the device's own kind */
	assert_string_equal(got->kernel, "6.1.0-57-amd64");
	assert_string_equal(json_string_value(json_object_get(json_object_get(got->host, "cpu"),
							      "vendor")), "AuthenticAMD");
	assert_string_equal(json_string_value(json_object_get(json_object_get(got->extra, "lava"),
							      "run_json")), "http://lab.example/r/run.json");
	assert_cells_equal(set, got);
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *a = g_ptr_array_index(set->cells, i);
		const struct cell *b = g_ptr_array_index(got->cells, i);

		/* a REJECTED cell's message is the device's own; the table
		 * gives no other cell one */
		if (a->outcome == OUTCOME_REJECTED)
			assert_string_equal(b->error, a->error);
		else
			assert_null(b->error);
	}
	/* a LAVA server's output.yaml: the same lines as a YAML sequence */
	g_autoptr(GString) seq = g_string_new(NULL);
	g_autoptr(result_set) got2 = NULL;
	g_auto(GStrv) lines = g_strsplit(log, "\n", -1);

	for (char **l = lines; *l && **l; l++)
		g_string_append_printf(seq, "- %s\n", *l);
	if (lava_collect(seq->str, seq->len, "output.yaml", &got2, &infra) < 0)
		fail_msg("%s", pc_errmsg());
	assert_int_equal(got2->cells->len, set->cells->len);
	/* and it is a result file every other command reads */
	json_t *root = results_to_json(got);
	g_autoptr(result_set) back = NULL;

	assert_int_equal(results_from_json(root, "collected", &back), 0);
	json_decref(root);
}

static void test_collect_failed_boot_is_infra(void **state)
{
	g_autoptr(result_set) set = sample_set();
	g_autoptr(result_set) got = NULL;
	g_autofree char *log = make_log(set, "fail", false);
	g_autofree char *log2 = make_log(set, "fail", true);
	bool infra = false;

	assert_int_equal(lava_collect(log, strlen(log), "job.log", &got, &infra), 0);
	assert_true(infra);
	assert_int_equal(got->cells->len, 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(got->extra, "lava"),
							      "verdict")), "INFRA");
	assert_string_equal(json_string_value(json_object_get(json_object_get(got->extra, "lava"),
							      "error_type")), "Infrastructure");
	/* a job that failed after its cases: still INFRA, no cell a verdict */
	result_set_free(g_steal_pointer(&got));
	infra = false;
	assert_int_equal(lava_collect(log2, strlen(log2), "job.log", &got, &infra), 0);
	assert_true(infra);
	assert_int_equal(got->cells->len, 0);
}

/* Collected only when the job says it all went through: a job that
 * "passed" with an error type (LAVA's cancel) is INFRA; a device that
 * exited 1 (harm or a regression) with no failing case among those
 * collected lost some (a case id LAVA refused): INFRA, never clean. */
/* A failed job's error message as lava-run's YAML dumper escapes it (yaml
 * emitter: \" \\ \xHH): kept as the text LAVA had, a quote or backslash
 * before hex letters no byte escape. */
static void test_collect_error_msg_escapes(void **state)
{
	g_autoptr(result_set) set = sample_set();
	g_autoptr(result_set) got = NULL;
	g_autofree char *log = make_log(set, "fail", false);
	g_autoptr(GString) s = g_string_new(log);
	static const char said[] = "auto-login-action timed out after 120 seconds";
	char *p = strstr(s->str, said);
	bool infra = false;

	(void)state;
	assert_non_null(p);
	g_string_erase(s, p - s->str, strlen(said));
	g_string_insert(s, p - s->str, "login \\\"ab\\\" on caf\\xE9 at C:\\\\fe\\x41");
	assert_non_null(strstr(s->str, "\"login \\\"ab\\\" on caf\\xE9 at C:\\\\fe\\x41\""));
	assert_int_equal(lava_collect(s->str, s->len, "job.log", &got, &infra), 0);
	assert_true(infra);
	assert_string_equal(json_string_value(json_object_get(json_object_get(got->extra, "lava"),
							      "error_msg")),
			    "login \"ab\" on caf\xc3\xa9 at C:\\feA");
}

static void test_collect_inconsistent_is_infra(void **state)
{
	g_autoptr(result_set) set = sample_set(), clean = sample_set();
	g_autofree char *log = NULL, *clean_log = NULL;
	static const char job_pass[] =
		"{\"case\": \"job\", \"definition\": \"lava\", \"result\": \"pass\"}";
	static const char job_canceled[] =
		"{\"case\": \"job\", \"definition\": \"lava\", \"error_msg\": \"Canceled by "
		"admin\", \"error_type\": \"Canceled\", \"result\": \"pass\"}";
	static const char exit0[] = "\"measurement\": ! \"0.0\", \"result\": \"pass\", \"units\": \"exit-code\"";
	static const char exit1[] = "\"measurement\": ! \"1.0\", \"result\": \"pass\", \"units\": \"exit-code\"";
	struct {
		const char *const *log;
		const char *from, *to, *why;   /* why NULL: collected */
	} cases[] = {
		{ (const char *const *)&log, job_pass, job_canceled, "with an error type" },
		{ (const char *const *)&clean_log, exit0, exit1,
		  "exited 1 (harm or a regression) but no case it reported failed" },
		/* the other side: exit 1 with its failing cases is collected */
		{ (const char *const *)&log, exit0, exit1, NULL },
	};

	/* clean: the sample less every cell whose case fails */
	for (guint i = clean->cells->len; i-- > 0;) {
		const struct cell *c = g_ptr_array_index(clean->cells, i);

		if (lava_case_result(c->outcome, false, false) == LAVA_RESULT_FAIL)
			g_ptr_array_remove_index(clean->cells, i);
	}
	assert_true(clean->cells->len > 0 && clean->cells->len < set->cells->len);
	log = make_log(set, "pass", true);
	clean_log = make_log(clean, "pass", true);
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(result_set) got = NULL;
		g_auto(GStrv) parts = g_strsplit(*cases[i].log, cases[i].from, -1);
		g_autofree char *bad = g_strjoinv(cases[i].to, parts);
		bool infra = !cases[i].why;

		assert_int_equal(g_strv_length(parts), 2);
		assert_int_equal(lava_collect(bad, strlen(bad), "job.log", &got, &infra), 0);
		assert_int_equal(infra, cases[i].why != NULL);
		if (!cases[i].why) {
			assert_int_equal(got->cells->len, set->cells->len);
			continue;
		}
		assert_int_equal(got->cells->len, 0);
		assert_non_null(strstr(json_string_value(json_object_get(json_object_get(got->extra,
			"lava"), "why")), cases[i].why));
	}
}

static void expect_bad(const char *log, const char *says)
{
	g_autoptr(result_set) got = NULL;
	bool infra;

	if (lava_collect(log, strlen(log), "job.log", &got, &infra) != -EINVAL)
		fail_msg("accepted; wanted '%s'", says);
	assert_null(got);
	if (!strstr(pc_errmsg(), says))
		fail_msg("'%s' lacks '%s'", pc_errmsg(), says);
}

/* Against a baseline, an OK cell that now fails is a failing case and a
 * harm that became an errno passes (fenced). */
static void test_cases_baseline(void **state)
{
	g_autoptr(result_set) base = sample_set();
	g_autoptr(result_set) now = sample_set();
	g_autoptr(GString) out = g_string_new(NULL);
	struct cell *c0 = g_ptr_array_index(now->cells, 0), *c2 = g_ptr_array_index(now->cells, 2);
	size_t skipped;

	c0->outcome = OUTCOME_EOPNOTSUPP;
	c2->outcome = OUTCOME_EOPNOTSUPP;
	c2->k = c2->n = 0;
	assert_int_equal(lava_cases_format(now, base, NULL, out, &skipped), 0);
	assert_non_null(strstr(out->str, "\ncase perf-3.6__cpu-clock_3Au fail 0 EOPNOTSUPP\n"));
	assert_non_null(strstr(out->str, "\ncase perf-3.6__cycles_5Bexclude_5Fguest_2Cprecise_5Fip_3D2_5D pass 0 EOPNOTSUPP\n"));
	assert_non_null(strstr(out->str, "\ncase perf-3.6__msr_2Ftsc_2F_3Au pass 0 EINVAL\n"));
	g_string_truncate(out, 0);
	/* a known erratum of this CPU and kernel explains the crash: skip */
	g_autoptr(errata_set) errata = NULL;
	assert_int_equal(errata_parse("[erratum amd-test]\nvendor = AuthenticAMD\nfamily = 25\n"
				      "model = *\nstepping = *\nkernel = <7.0\nattr = type=1\n"
				      "harm = GUEST_CRASH\n", "e.ini", &errata), 0);
	assert_int_equal(lava_cases_format(base, NULL, errata, out, &skipped), 0);
	assert_non_null(strstr(out->str, "\ncase perf-3.6__cycles_5Bexclude_5Fguest_2Cprecise_5Fip_3D2_5D skip 2 GUEST_CRASH/3\n"));
	g_string_truncate(out, 0);
	assert_int_equal(lava_cases_format(base, NULL, NULL, out, &skipped), 0);
	assert_non_null(strstr(out->str, "\ncase perf-3.6__cycles_5Bexclude_5Fguest_2Cprecise_5Fip_3D2_5D fail 2 GUEST_CRASH/3\n"));
	assert_int_equal(skipped, 0);
}

static void test_collect_bad_logs(void **state)
{
	g_autoptr(result_set) set = sample_set();
	g_autofree char *log = make_log(set, "pass", true);
	g_autofree char *trunc = g_strndup(log, g_strrstr_len(log, (gssize)strlen(log) - 1, "\n") -
					   log + 1);
	g_autofree char *cut = g_strndup(log, strlen(log) / 2);
	g_auto(GStrv) cut_lines = g_strsplit(cut, "\n", -1);
	g_autofree char *cut_says = NULL;
	g_autoptr(GString) s = g_string_new(NULL);
	char *p;

	expect_bad(trunc, "job: the log ends before the job's result");
	/* cut inside a line: that line, by number, is not a log line */
	assert_int_not_equal(cut[strlen(cut) - 1], '\n');
	cut_says = g_strdup_printf("job.log:%u: line: not a lava-run log line (premature end of input)",
				   (unsigned int)g_strv_length(cut_lines));
	expect_bad(cut, cut_says);
	expect_bad("garbage\n", "job.log:1: line: not a lava-run log line");
	/* an escape YAML has not (\x needs two hex digits): refused, quoting
	 * the log's own bytes */
	{
		g_autoptr(GString) esc = g_string_new(NULL);

		log_line(esc, "target", "\"odd \\xg1 byte\"");
		expect_bad(esc->str, "job.log:1: line: not a lava-run log line (invalid escape near "
				     "'\"odd \\x')");
	}
	expect_bad("{\"dt\": \"x\", \"lvl\": \"info\"}\n", "job.log:1: line: not a {dt, lvl, msg}");
	/* a harm reported as pass */
	g_string_assign(s, log);
	p = strstr(s->str, "\"result\": \"fail\", \"starttc\": ! \"576\", \"units\": \"GUEST_CRASH/3\"");
	assert_non_null(p);
	memcpy(p + strlen("\"result\": \""), "pass", 4);
	expect_bad(s->str, "msg.result: 'pass' does not fit outcome GUEST_CRASH");
	/* an outcome that is none */
	g_string_assign(s, log);
	p = strstr(s->str, "\"units\": \"EINVAL\"");
	assert_non_null(p);
	memcpy(p + strlen("\"units\": \""), "EVIL!!", 6);
	expect_bad(s->str, "msg.units: 'EVIL!!' is not an outcome");
	/* k above n */
	g_string_assign(s, log);
	p = strstr(s->str, "\"measurement\": ! \"2.0\"");
	assert_non_null(p);
	p[strlen("\"measurement\": ! \"")] = '7';
	expect_bad(s->str, "k=7 of n=3");
	/* a case after the job's result line (a log with more appended) */
	{
		g_autoptr(GString) after = g_string_new(log);
		const char *line = NULL;

		/* the first pmucanary case line, copied to after the end */
		for (const char *q = log; (q = strstr(q, "\"definition\": \"0_pmucanary\"")); q++) {
			line = q;
			break;
		}
		assert_non_null(line);
		while (line > log && line[-1] != '\n')
			line--;
		g_string_append_len(after, line, strchr(line, '\n') - line + 1);
		expect_bad(after->str, "after the job's result");
	}
	/* header lines as the device writes them, not a looser spelling */
	for (const char *const *loose = (const char *const[]){ "pmucanary-header +1/", "pmucanary-header  1/",
							      NULL }; *loose; loose++) {
		g_string_assign(s, log);
		p = strstr(s->str, "pmucanary-header 1/");
		assert_non_null(p);
		g_string_insert_len(s, p - s->str, *loose, (gssize)strlen(*loose));
		p = strstr(s->str, *loose) + strlen(*loose);
		g_string_erase(s, p - s->str, (gssize)strlen("pmucanary-header 1/"));
		expect_bad(s->str, "header line without I/N");
	}
	/* a header chunk missing */
	g_string_assign(s, log);
	p = strstr(s->str, "pmucanary-header 2/");
	assert_non_null(p);
	p[strlen("pmucanary-header ")] = '3';
	expect_bad(s->str, "header chunk 3");
	/* a reference that is no URL of ours */
	g_string_assign(s, log);
	p = strstr(s->str, "http://lab.example/r/run.json");
	assert_non_null(p);
	memcpy(p, "gopher", 6);
	expect_bad(s->str, "msg.reference");
	/* the same case twice */
	g_string_assign(s, log);
	p = strstr(s->str, "{\"dt\": \"2026-12-04T02:33:59.31\", \"lvl\": \"results\", \"msg\": {\"case\": \"perf-3.6__cpu-clock_3Au\"");
	assert_non_null(p);
	g_string_insert_len(s, p - s->str, p, strchr(p, '\n') - p + 1);
	expect_bad(s->str, "reported twice");
}

/* ---- a LAVA server's results export ---- */

/* One case of an export as the server writes it, hand-written from
 * lava-server 2023.01: lava_results_app/utils.py export_testcase() (every
 * value str(), measurement "None" or str() of a DecimalField(decimal_places=10):
 * "2.0000000000", but "0E-10" for zero (Python's Decimal), unit
 * "" when none, metadata the log's result line), dumped by
 * lava_results_app/views/__init__.py testjob_yaml() one
 * yaml_dump([export_testcase(tc)]) each (lava_common/compat.py: CDumper,
 * block style, sorted keys, strings that would read as numbers or are
 * empty single-quoted). */
static void export_yaml_case(GString *y, int id, const char *suite, const char *name,
			     const char *result, const char *meas, const char *unit,
			     const char *meta_yaml)
{
	g_auto(GStrv) ml = g_strsplit(meta_yaml, "\n", -1);

	g_string_append_printf(y, "- id: '%d'\n  job: '4711'\n  level: ''\n  log_end_line: ''\n"
				  "  log_start_line: ''\n  logged: '2026-12-04 02:34:00.123456+00:00'\n"
				  "  measurement: %s\n  metadata:\n", id, meas);
	for (char **l = ml; *l && **l; l++)
		g_string_append_printf(y, "    %s\n", *l);
	g_string_append_printf(y, "  name: %s\n  result: %s\n  suite: %s\n  unit: %s\n"
				  "  url: /results/4711/%s/%s\n", name, result, suite,
			       *unit ? unit : "''", suite, name);
}

/* The same case from the REST API, lava_rest_app/v02/serializers.py
 * TestCaseSerializer (base_serializers' fields "__all__" but units, plus
 * unit and resource_uri; result is result_code; suite the suite's pk;
 * metadata the YAML text the server stored (dbutils.map_scanned_results:
 * yaml_dump(results)); measurement a string (DRF's
 * COERCE_DECIMAL_TO_STRING) or null). */
static void export_rest_case(json_t *results, int id, const char *name, const char *result,
			     const char *meas, const char *unit, const char *meta_yaml)
{
	json_array_append_new(results, json_pack(
		"{s:i,s:s,s:s,s:s,s:s,s:o,s:s,s:n,s:n,s:s,s:i,s:n}", "id", id, "resource_uri",
		"https://lava.example/api/v0.2/jobs/4711/suites/9/tests/1/", "unit", unit, "result",
		result, "name", name, "measurement", meas ? json_string(meas) : json_null(),
		"metadata", meta_yaml, "start_log_line", "end_log_line", "logged",
		"2026-12-04T02:34:00.123456Z", "suite", 9, "test_set"));
}

/* The export of the job make_log() writes: the cases of set, its lava
 * suite's validate and job cases. rest: the REST API's JSON page. */
static char *make_export(const struct result_set *set, const char *job_result, bool rest)
{
	g_autoptr(GString) y = g_string_new(NULL), lines = g_string_new(NULL);
	json_t *results = json_array();
	g_auto(GStrv) ls = NULL;
	size_t skipped;
	int id = 1;
	struct {
		const char *suite, *name, *result, *meas, *unit, *meta;
	} lava_cases[] = {
		{ "lava", "validate", "pass", NULL, "",
		  "case: validate\ndefinition: lava\nresult: pass\n" },
		{ "0_pmucanary", "pmucanary-exit", "pass", "0.0000000000", "exit-code",
		  "case: pmucanary-exit\ndefinition: 0_pmucanary\nmeasurement: '0.0'\nresult: pass\n"
		  "units: exit-code\n" },
		{ "0_pmucanary", "pmucanary-run-json", "pass", NULL, "",
		  "case: pmucanary-run-json\ndefinition: 0_pmucanary\n"
		  "reference: http://lab.example/r/run.json\nresult: pass\n" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(lava_cases); i++) {
		if (rest)
			export_rest_case(results, id++, lava_cases[i].name, lava_cases[i].result,
					 lava_cases[i].meas, lava_cases[i].unit, lava_cases[i].meta);
		else
			export_yaml_case(y, id++, lava_cases[i].suite, lava_cases[i].name,
					 lava_cases[i].result,
					 lava_cases[i].meas ? "0E-10" : "None",
					 lava_cases[i].unit, lava_cases[i].meta);
	}
	assert_int_equal(lava_cases_format(set, NULL, NULL, lines, &skipped), 0);
	ls = g_strsplit(lines->str, "\n", -1);
	for (char **l = ls; *l && **l; l++) {
		g_auto(GStrv) f = g_strsplit(*l, " ", -1);
		g_autofree char *meta = NULL, *meas = NULL, *qmeas = NULL;

		if (strcmp(f[0], "case"))
			continue;
		meta = g_strdup_printf("case: %s\ndefinition: 0_pmucanary\nendtc: '576'\n"
				       "measurement: '%s.0'\nresult: %s\nstarttc: '576'\nunits: %s\n",
				       f[1], f[3], f[2], f[4]);
		meas = g_strdup_printf("%s.0000000000", f[3]);
		qmeas = strcmp(f[3], "0") ? g_strdup_printf("'%s'", meas) : g_strdup("0E-10");
		if (rest)
			export_rest_case(results, id++, f[1], f[2], meas, f[4], meta);
		else
			export_yaml_case(y, id++, "0_pmucanary", f[1], f[2], qmeas, f[4], meta);
	}
	if (!strcmp(job_result, "pass")) {
		const char *meta = "case: job\ndefinition: lava\nresult: pass\n";

		if (rest)
			export_rest_case(results, id++, "job", "pass", NULL, "", meta);
		else
			export_yaml_case(y, id++, "lava", "job", "pass", "None", "", meta);
	} else {
		/* a long error_msg: the dumper folds it at 80 columns, counted from
		 * where the metadata's mapping starts */
		const char *meta = rest ? "case: job\ndefinition: lava\nerror_msg: 'auto-login-action "
					  "timed out after 120 seconds: a very long message that\n"
					  "  goes past eighty columns for sure'\nerror_type: "
					  "Infrastructure\nresult: fail\n"
					: "case: job\ndefinition: lava\nerror_msg: 'auto-login-action "
					  "timed out after 120 seconds: a very long message\n  that "
					  "goes past eighty columns for sure'\nerror_type: "
					  "Infrastructure\nresult: fail\n";

		if (rest)
			export_rest_case(results, id++, "job", "fail", NULL, "", meta);
		else
			export_yaml_case(y, id++, "lava", "job", "fail", "None", "", meta);
	}
	if (rest) {
		json_t *page = json_pack("{s:i,s:n,s:n,s:o}", "count", (int)json_array_size(results),
					 "next", "previous", "results", results);
		char *t = json_dumps(page, JSON_COMPACT);

		json_decref(page);
		return t;
	}
	json_decref(results);
	return g_strdup(y->str);
}

static const char *lava_str(const struct result_set *set, const char *key)
{
	return json_string_value(json_object_get(json_object_get(set->extra, "lava"), key));
}

/* Replaces the first from in text by to. */
static char *subst(const char *text, const char *from, const char *to)
{
	const char *p = strstr(text, from);

	assert_non_null(p);
	return g_strdup_printf("%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
}

/* The export alone: the cells, and a fingerprint that says it is unknown. */
static void test_export_alone(void **state)
{
	g_autoptr(result_set) set = sample_set();

	for (int rest = 0; rest < 2; rest++) {
		g_autofree char *ex = make_export(set, "pass", rest);
		g_autoptr(result_set) got = NULL;
		bool infra = true;

		if (lava_collect_export(ex, strlen(ex), "export", NULL, 0, NULL, &got, &infra) < 0)
			fail_msg("%s: %s", rest ? "REST" : "YAML", pc_errmsg());
		assert_false(infra);
		assert_cells_equal(set, got);
		assert_string_equal(lava_str(got, "source"), "results export");
		assert_string_equal(lava_str(got, "run_json"), "http://lab.example/r/run.json");
		assert_non_null(strstr(lava_str(got, "fingerprint"), "unknown"));
		if (rest)
			assert_string_equal(got->kernel, "unknown");
		else
			assert_string_equal(got->kernel, "unknown (LAVA job 4711)");
		assert_int_equal(json_object_size(got->host), 0);
	}
}

/* Export and log together: they agree, and the set is the log's with its
 * header; a case that differs or is missing on one side is refused. */
static void test_export_with_log_agrees(void **state)
{
	g_autoptr(result_set) set = sample_set();
	g_autofree char *log = make_log(set, "pass", true);

	for (int rest = 0; rest < 2; rest++) {
		g_autofree char *ex = make_export(set, "pass", rest);
		g_autoptr(result_set) got = NULL;
		g_autoptr(GString) s = g_string_new(ex);
		bool infra = true;
		char *p;

		if (lava_collect_export(ex, strlen(ex), "export", log, strlen(log), "job.log", &got,
					&infra) < 0)
			fail_msg("%s", pc_errmsg());
		assert_false(infra);
		assert_cells_equal(set, got);
		assert_string_equal(got->kernel, "6.1.0-57-amd64");
		assert_string_equal(lava_str(got, "source"), "results export and job log");
		if (!rest)
			assert_string_equal(lava_str(got, "job_id"), "4711");
		assert_null(lava_str(got, "fingerprint"));
		/* the export says fail 1 where the log says fail 2 */
		p = strstr(s->str, rest ? "\"measurement\":\"2.0000000000\""
					: "measurement: '2.0000000000'");
		assert_non_null(p);
		p[strlen(rest ? "\"measurement\":\"" : "measurement: '")] = '1';
		result_set_free(g_steal_pointer(&got));
		assert_int_equal(lava_collect_export(s->str, s->len, "export", log, strlen(log),
						     "job.log", &got, &infra), -EINVAL);
		if (!strstr(pc_errmsg(), "export: case perf-3.6__cycles_5Bexclude_5Fguest_2Cprecise_5Fip_3D2_5D: "
				      "'fail 1 GUEST_CRASH/3' in the export, 'fail 2 GUEST_CRASH/3' in job.log:"))
			fail_msg("%s", pc_errmsg());
	}
	/* a case the log has and the export lacks */
	g_autofree char *ex = make_export(set, "pass", false);
	g_autoptr(GString) s = g_string_new(ex);
	char *a = strstr(s->str, "- id: '5'"), *b = strstr(s->str, "- id: '6'");
	g_autoptr(result_set) got = NULL;
	bool infra;

	assert_non_null(a);
	assert_non_null(b);
	g_string_erase(s, a - s->str, b - a);
	assert_int_equal(lava_collect_export(s->str, s->len, "export", log, strlen(log), "job.log",
					     &got, &infra), -EINVAL);
	if (!strstr(pc_errmsg(), "in job.log:") || !strstr(pc_errmsg(), "not in the export"))
		fail_msg("%s", pc_errmsg());
	/* the device's exit code and its run.json differ between the two */
	g_autofree char *xex = subst(ex, "measurement: 0E-10", "measurement: '3.0000000000'");
	g_autofree char *rex = subst(ex, "http://lab.example/r/run.json",
				     "http://lab.example/r/other.json");

	assert_int_equal(lava_collect_export(xex, strlen(xex), "export", log, strlen(log),
					     "job.log", &got, &infra), -EINVAL);
	if (!strstr(pc_errmsg(), "export: case pmucanary-exit: 3 in the export, 0 in job.log"))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(lava_collect_export(rex, strlen(rex), "export", log, strlen(log),
					     "job.log", &got, &infra), -EINVAL);
	if (!strstr(pc_errmsg(), "export: case pmucanary-run-json: differs from job.log"))
		fail_msg("%s", pc_errmsg());
	/* a log cut before the job's own result (its last line): lava.h's
	 * "a log without the job's final result", however well the export
	 * agrees with what is there */
	{
		g_autofree char *cut = g_strdup(log);
		char *last;

		g_strchomp(cut);
		last = strrchr(cut, '\n');
		assert_non_null(last);
		last[1] = '\0';
		assert_int_equal(lava_collect_export(ex, strlen(ex), "export", cut, strlen(cut),
						     "job.log", &got, &infra), -EINVAL);
		if (!strstr(pc_errmsg(), "job.log:") ||
		    !strstr(pc_errmsg(), "the log ends before the job's result"))
			fail_msg("%s", pc_errmsg());
	}
	/* a job that passed in the export and failed in the log */
	g_autofree char *flog = make_log(set, "fail", true);

	assert_int_equal(lava_collect_export(ex, strlen(ex), "export", flog, strlen(flog),
					     "job.log", &got, &infra), -EINVAL);
	if (!strstr(pc_errmsg(), "export: job: 'pass' (no error) in the export, 'fail' "
				 "(Infrastructure) in job.log"))
		fail_msg("%s", pc_errmsg());
}

static void test_export_failed_job_is_infra(void **state)
{
	g_autoptr(result_set) set = sample_set();

	for (int rest = 0; rest < 2; rest++) {
		g_autofree char *ex = make_export(set, "fail", rest);
		g_autoptr(result_set) got = NULL;
		bool infra = false;

		if (lava_collect_export(ex, strlen(ex), "export", NULL, 0, NULL, &got, &infra) < 0)
			fail_msg("%s", pc_errmsg());
		assert_true(infra);
		assert_int_equal(got->cells->len, 0);
		assert_string_equal(lava_str(got, "verdict"), "INFRA");
		assert_string_equal(lava_str(got, "error_type"), "Infrastructure");
		/* the folded message reads back whole */
		assert_string_equal(lava_str(got, "error_msg"), "auto-login-action timed out "
				    "after 120 seconds: a very long message that goes past eighty "
				    "columns for sure");
	}
}

static void expect_bad_export(const char *ex, const char *says)
{
	g_autoptr(result_set) got = NULL;
	bool infra;

	if (lava_collect_export(ex, strlen(ex), "export", NULL, 0, NULL, &got, &infra) != -EINVAL)
		fail_msg("accepted; wanted '%s'", says);
	assert_null(got);
	if (!strstr(pc_errmsg(), says))
		fail_msg("'%s' lacks '%s'", pc_errmsg(), says);
}

static void test_export_bad_input(void **state)
{
	g_autoptr(result_set) set = sample_set();
	g_autofree char *y = make_export(set, "pass", false);
	g_autofree char *j = make_export(set, "pass", true);
	g_autofree char *t1 = subst(y, "unit: EINVAL", "unit: EVIL");
	g_autofree char *t2 = subst(y, "- id: '2'\n  job: '4711'", "- id: '2'\n  job: '4712'");
	g_autofree char *t3 = subst(y, "  unit: GUEST_CRASH/3", "  unit: GUEST_CRASH/3\n  unit: OK");
	g_autofree char *t4 = subst(y, "name: job\n  result: pass", "name: jobs\n  result: pass");
	g_autofree char *t5 = subst(y, "result: fail\n  suite", "result: pass\n  suite");
	g_autofree char *t6 = subst(y, "- id: '1'", "- &a id: '1'\n  x: *a");
	g_autofree char *t7 = subst(j, "\"count\":", "\"count\":50,\"c\":");
	g_autofree char *t8 = subst(j, "definition: 0_pmucanary", "def: 0_pmucanary");
	g_autofree char *t9 = subst(j, "\"result\":\"skip\"", "\"result\":\"unknown\"");
	g_autofree char *deep = g_strnfill(200, '[');

	expect_bad_export(t1, "export:");
	expect_bad_export(t1, ": unit: 'EVIL' is not an outcome");
	expect_bad_export(t2, "export:17: job: '4712' in an export of job 4711");
	expect_bad_export(t3, ": unit: a key twice");
	expect_bad_export(t4, "export: job: no case 'job' in suite 'lava'");
	expect_bad_export(t5, ": result: 'pass' does not fit outcome GUEST_CRASH");
	expect_bad_export(t6, "yaml: an alias");
	expect_bad_export("- id: '1'\n  job: [\n", "export:3: yaml:");
	expect_bad_export(t7, "export: results: ");
	expect_bad_export(t7, " of the job's 50 cases");
	expect_bad_export(t8, "export: results[1]: metadata.definition: missing");
	/* a REST case whose metadata text is empty says no more than one with
	 * none: no definition */
	{
		json_t *root = json_loads(j, 0, NULL);
		g_autofree char *e = NULL;

		assert_non_null(root);
		json_object_set_new(json_array_get(json_object_get(root, "results"), 1), "metadata",
				    json_string(""));
		e = json_dumps(root, JSON_COMPACT);
		json_decref(root);
		expect_bad_export(e, "export: results[1]: metadata.definition: missing");
	}
	expect_bad_export(t9, ": result: 'unknown' is not pass, fail or skip");
	/* a measurement as a JSON number: whole, or refused like "1.96" */
	g_autofree char *r1 = subst(j, "\"measurement\":\"2.0000000000\"", "\"measurement\":2.0");
	g_autofree char *r2 = subst(j, "\"measurement\":\"2.0000000000\"", "\"measurement\":1.96");
	g_autoptr(result_set) r1_got = NULL;
	bool r1_infra;

	if (lava_collect_export(r1, strlen(r1), "export", NULL, 0, NULL, &r1_got, &r1_infra) < 0)
		fail_msg("%s", pc_errmsg());
	assert_cells_equal(set, r1_got);
	expect_bad_export(r2, "export: results[5]: measurement: '1.96' is not a whole count");
	expect_bad_export("{\"count\": 1, \"results\": [{\"name\": \"x\"", "export:1: json:");
	expect_bad_export(deep, "export:1: json:");
	g_free(deep);
	deep = g_strnfill(200, '[');
	deep[0] = '-';
	deep[1] = ' ';
	expect_bad_export(deep, "export:1: yaml: nested deeper than 32");
	/* a REST export is bounded before jansson builds it; commas in a
	 * string are no values */
	g_autoptr(GString) wide = g_string_new("[");
	for (int i = 0; i < LAVA_EXPORT_NODES_MAX; i++)
		g_string_append(wide, "0,");
	g_string_append(wide, "0]");
	expect_bad_export(wide->str, "export: json: more than 8000000 nodes");
	g_string_assign(wide, "[\"");
	for (int i = 0; i < LAVA_EXPORT_NODES_MAX; i++)
		g_string_append(wide, "\\\",");
	g_string_append(wide, "\"]");
	expect_bad_export(wide->str, "export: results[0]: case: not a mapping");
	expect_bad_export("a: b\n", "export: not a list of test cases");
	expect_bad_export("", "export: empty");
	/* a "\0" escape in a scalar, which sget() would cut there */
	g_autofree char *n1 = subst(y, "suite: lava", "suite: \"lava\\0evil\"");
	g_autofree char *n2 = subst(y, "name: perf-3.6__cpu-clock_3Au\n",
				    "name: \"perf-3.6__cpu-clock_3Au\\0junk\"\n");
	g_autofree char *n3 = subst(j, "definition: 0_pmucanary",
				    "definition: \\\"0_pmucanary\\\\0x\\\"");

	expect_bad_export(n1, "export:14: suite: a NUL byte");
	expect_bad_export(n2, ": name: a NUL byte");
	expect_bad_export(n3, "export: results[1]: metadata: definition: a NUL byte");
	/* a NUL byte inside what the caller read */
	g_autoptr(result_set) got = NULL;
	bool infra;

	assert_int_equal(lava_collect_export("- id: '1'\n\0x", 12, "export", NULL, 0, NULL, &got,
					     &infra), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "export: a NUL byte"));
}

/* REJECTED cells' messages come back through the header; a device that
 * lies about them is refused. */
static void test_collect_rejected_messages(void **state)
{
	g_autoptr(result_set) set = sample_set();
	struct cell *c = cell_new(NULL, "perf-3.6", "cycles:Q");
	struct cell *d = cell_new(NULL, "raw", "cpu-clock:Z");
	g_autoptr(result_set) got = NULL;
	g_autofree char *log = NULL;
	bool infra;

	cell_set_error(c, "event syntax error: 'cycles:Q' \xe2\x80\x94 unknown modifier");
	cell_set_error(d, "bad modifier");
	results_add_cell(set, c);
	results_add_cell(set, d);
	log = make_log(set, "pass", true);
	if (lava_collect(log, strlen(log), "job.log", &got, &infra) < 0)
		fail_msg("%s", pc_errmsg());
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *a = g_ptr_array_index(set->cells, i);
		const struct cell *b = g_ptr_array_index(got->cells, i);

		if (a->outcome == OUTCOME_REJECTED)
			assert_string_equal(b->error, a->error);
	}
	/* lies: a case that is not REJECTED, one twice, a control byte, too many */
	struct {
		const char *table, *says;
	} lies[] = {
		{ "[{\"error\": \"x\", \"cases\": [\"perf-3.6__cpu-clock_3Au\"]}]",
		  "lava_rejected[0]: case 0 is not a REJECTED case of the job" },
		{ "[{\"error\": \"x\", \"cases\": [\"raw__cpu-clock_3AZ\"]}, "
		  "{\"error\": \"y\", \"cases\": [\"raw__cpu-clock_3AZ\"]}]",
		  "lava_rejected[1]: 'raw__cpu-clock_3AZ' has a second message" },
		{ "[{\"error\": \"x\\u001b[2J\", \"cases\": [\"raw__cpu-clock_3AZ\"]}]",
		  "lava_rejected[0]: not {error: a printable message" },
		{ "[{\"error\": \"x\", \"cases\": []}]", "lava_rejected[0]: not {error:" },
		{ "{}", "lava_rejected: not a list" },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(lies); i++) {
		g_autofree char *bad = make_log_rejected(set, "pass", true, lies[i].table);

		expect_bad(bad, lies[i].says);
	}
}

/* perf's messages name the spec: thousands of distinct ones all come back
 * (a default probe has ~6000); past LAVA_REJECTED_BYTES_MAX of them the
 * rest are counted, never silently placeholders. */
static void test_collect_many_rejected_messages(void **state)
{
	for (int round = 0; round < 2; round++) {
		g_autoptr(result_set) set = sample_set();
		g_autoptr(result_set) got = NULL;
		g_autofree char *log = NULL;
		/* round 1: messages of 1000 bytes, 3000 of them: 3 MB, past 2 MiB */
		int n = 3000, kept = 0, placeholders = 0;
		json_t *left;
		bool infra;

		for (int i = 0; i < n; i++) {
			g_autofree char *spec = g_strdup_printf("cpu-clock:Q%d", i);
			g_autofree char *msg = round ? g_strdup_printf("%0999d", i)
						     : g_strdup_printf("event syntax error: '%s'", spec);
			struct cell *c = cell_new(NULL, "perf-3.6", spec);

			cell_set_error(c, msg);
			results_add_cell(set, c);
		}
		log = make_log(set, "pass", true);
		if (lava_collect(log, strlen(log), "job.log", &got, &infra) < 0)
			fail_msg("%s", pc_errmsg());
		for (guint i = 0; i < set->cells->len; i++) {
			const struct cell *a = g_ptr_array_index(set->cells, i);
			const struct cell *b = g_ptr_array_index(got->cells, i);

			if (a->outcome != OUTCOME_REJECTED)
				continue;
			if (!strcmp(b->error, a->error))
				kept++;
			else
				placeholders++;
		}
		left = json_object_get(json_object_get(got->extra, "lava"),
				       "rejected_messages_left_out");
		if (!round) {
			assert_int_equal(kept, n + 1);
			assert_null(left);
		} else {
			/* 2 MiB holds ~1990 of them (1051 bytes each with the id), and
			 * every other one is counted */
			assert_in_range(kept, 1900, 2100);
			assert_int_equal(json_integer_value(left), placeholders);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_case_id_round_trip),
		cmocka_unit_test(test_case_id_refuses_foreign_ids),
		cmocka_unit_test(test_case_results),
		cmocka_unit_test(test_job_is_yaml_with_fields),
		cmocka_unit_test(test_job_carries_scenario),
		cmocka_unit_test(test_job_bad_input),
		cmocka_unit_test(test_collect_round_trip),
		cmocka_unit_test(test_collect_failed_boot_is_infra),
		cmocka_unit_test(test_collect_error_msg_escapes),
		cmocka_unit_test(test_collect_inconsistent_is_infra),
		cmocka_unit_test(test_cases_baseline),
		cmocka_unit_test(test_collect_bad_logs),
		cmocka_unit_test(test_collect_rejected_messages),
		cmocka_unit_test(test_collect_many_rejected_messages),
		cmocka_unit_test(test_export_alone),
		cmocka_unit_test(test_export_with_log_agrees),
		cmocka_unit_test(test_export_failed_job_is_infra),
		cmocka_unit_test(test_export_bad_input),
	};

	return test_run_group(tests, NULL, NULL);
}
