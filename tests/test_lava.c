/* Tests for lib/lava: case ids round-trip for hostile specs and keep to
 * LAVA's character set; each outcome gets the LAVA result a lab would act
 * on; the job is YAML with the fields LAVA needs, and bad input is refused;
 * a log as lava-run writes it comes back as the same cells, while a
 * truncated or garbled log is an error naming file:line, and a job that
 * failed to boot is INFRA with no verdict. */
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
	"x y\t=>\"'`$(reboot)", "\xe2\x80\xae" "evil", "\x01\x7f\xff", "perf-3.6__cycles", "_",
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
	};

	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *p = NULL, *s = NULL;

		if (lava_case_id_parse(bad[i], &p, &s) != -EINVAL)
			fail_msg("'%s' parsed as (%s, %s)", bad[i], p, s);
	}
	g_autofree char *longspec = g_strnfill(300, 'c');
	assert_null(lava_case_id("raw", longspec));
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
		skip();
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
	};
	g_autoptr(GString) out = g_string_new(NULL);

	cases[1].o.device_type = "pdp11";
	cases[2].o.kernel_url = "ftp:/x";
	cases[3].o.ramdisk_url = "http://x/'$(reboot)'";
	cases[4].o.probe_events = bad_events;
	cases[5].o.modules_url = "http://x/m.tar";
	cases[6].o.ramdisk_url = NULL;
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

static char *make_log(const struct result_set *set, const char *job_result, bool with_cases)
{
	GString *log = g_string_new(NULL);
	g_autoptr(GString) lines = g_string_new(NULL);
	g_auto(GStrv) ls = NULL;
	size_t skipped;

	log_line(log, "info", "\"start: 0 validate\"");
	/* console bytes as LAVA's YAML dumper escapes them */
	log_line(log, "target", "\"\\e[0mcaf\\xE9 \\U0001F600 \\N\\L \\\" \\\\ \\x00\\0 \\/\"");
	log_line(log, "results", "{\"case\": \"validate\", \"definition\": \"lava\", \"result\": \"pass\"}");
	if (with_cases) {
		assert_int_equal(lava_cases_format(set, NULL, NULL, lines, &skipped), 0);
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
	assert_int_equal(got->cells->len, set->cells->len);
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *a = g_ptr_array_index(set->cells, i);
		const struct cell *b = g_ptr_array_index(got->cells, i);

		assert_string_equal(a->profile, b->profile);
		assert_string_equal(a->spec, b->spec);
		assert_int_equal(a->outcome, b->outcome);
		assert_int_equal(a->k, b->k);
		assert_int_equal(a->n, b->n);
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
	g_autoptr(GString) s = g_string_new(NULL);
	char *p;

	expect_bad(trunc, "job: the log ends before the job's result");
	expect_bad(cut, "job.log:");
	expect_bad("garbage\n", "job.log:1: line: not a lava-run log line");
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
		cmocka_unit_test(test_cases_baseline),
		cmocka_unit_test(test_collect_bad_logs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
