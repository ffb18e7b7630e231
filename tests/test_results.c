/* Tests for lib/results: the result-file schema, its JSON round trip, strict
 * reading, atomic writing and the readable matrix. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "diff.h"
#include "log.h"
#include "report.h"
#include "results.h"
#include "testutil.h"

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

static char *tmpdir;

static int setup(void **state)
{
	tmpdir = g_dir_make_tmp("test_results.XXXXXX", NULL);
	return tmpdir ? 0 : -1;
}

static int teardown(void **state)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);

	assert_int_equal(system(cmd), 0);
	g_free(tmpdir);
	return 0;
}

static struct perf_event_attr attr_make(uint32_t type, uint64_t config, int precise,
					int exclude_guest)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.size = sizeof(a);
	a.config = config;
	a.precise_ip = precise;
	a.exclude_guest = exclude_guest;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
	a.freq = 1;
	a.sample_period = 4000;
	return a;
}

/* A set with one cell of each shape the schema allows. */
static struct result_set *set_sample(void)
{
	struct result_set *set = result_set_new(RESULTS_KIND_PROBE);
	struct perf_event_attr a = attr_make(PERF_TYPE_SOFTWARE, 0, 0, 0);
	struct perf_event_attr b = attr_make(PERF_TYPE_HARDWARE, 0, 2, 0);
	struct perf_event_attr b2 = attr_make(PERF_TYPE_HARDWARE, 0, 2, 1);
	struct cell *c;
	json_t *host = json_pack("{s:{s:s},s:s,s:b}", "kernel", "release", "6.1.0-test",
				 "accel", "tcg", "hw_pmu", 0);

	results_set_host(set, host);
	set->scenario = json_pack("{s:s}", "name", "smoke");
	set->extra = json_pack("{s:s}", "verdict", "CLEAN");

	c = cell_new(set->kernel, "perf-6.1", "cpu-clock:u");
	cell_set_attr(c, &a);
	cell_add_try(c, &a, OUTCOME_OK, NULL);
	c->outcome = OUTCOME_OK;
	results_add_cell(set, c);

	c = cell_new(set->kernel, "perf-3.6", "cycles:pp");
	cell_set_attr(c, &b2);
	cell_add_try(c, &b, OUTCOME_EOPNOTSUPP, NULL);
	cell_add_try(c, &b2, OUTCOME_ENOENT, "set exclude_guest");
	cell_add_cpu(c, 0, OUTCOME_ENOENT);
	cell_add_cpu(c, 1, OUTCOME_EBUSY);
	c->outcome = OUTCOME_ENOENT;
	c->k = 1;
	c->n = 3;
	json_array_append_new(c->evidence, json_pack("{s:s}", "console", "oops"));
	c->extra = json_pack("{s:i}", "batch", 7);
	results_add_cell(set, c);

	c = cell_new(set->kernel, "perf-3.6", "cycles:Z");
	cell_set_error(c, "cycles:Z: unknown modifier 'Z' at 8");
	results_add_cell(set, c);
	return set;
}

/* KVM inside a virtual machine says so; TCG has its own line; KVM on bare
 * metal has neither. */
static void test_nested_kvm_limitation(void **state)
{
	static const struct { const char *accel; int hypervisor; bool nested, tcg; } cases[] = {
		{ "kvm", 1, true, false },
		{ "kvm", 0, false, false },
		{ "tcg", 1, false, true },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
		bool nested = false, tcg = false;

		results_set_host(set, json_pack("{s:s,s:b,s:{s:b}}", "accel", cases[i].accel,
						"hw_pmu", 1, "cpu", "hypervisor",
						cases[i].hypervisor));
		for (guint l = 0; l < set->limitations->len; l++) {
			nested |= !strcmp(set->limitations->pdata[l], RESULTS_LIMIT_NESTED_KVM);
			tcg |= !strcmp(set->limitations->pdata[l], RESULTS_LIMIT_TCG);
		}
		assert_int_equal(nested, cases[i].nested);
		assert_int_equal(tcg, cases[i].tcg);
		assert_int_equal(set->limitations->len, (guint)(nested + tcg));
		/* the run falls back to TCG (run --tcg, or the fleet's choice):
		 * only the TCG line is left */
		g_free(set->accel);
		set->accel = g_strdup("tcg");
		results_note_standard_limitations(set, true);
		assert_int_equal(set->limitations->len, 1);
		assert_string_equal(set->limitations->pdata[0], RESULTS_LIMIT_TCG);
	}
}

static void test_round_trip(void **state)
{
	g_autoptr(result_set) set = set_sample();
	g_autoptr(result_set) back = NULL;
	g_autofree char *path = g_build_filename(tmpdir, "probe.json", NULL);
	json_t *a, *b;
	g_autoptr(GDir) dir = NULL;
	int files = 0;

	assert_int_equal(results_write_json(set, path), 0);
	assert_int_equal(results_read_json(path, &back), 0);
	a = results_to_json(set);
	b = results_to_json(back);
	assert_true(json_equal(a, b));
	/* The writer's text is results_to_json()'s document. */
	json_decref(b);
	b = json_load_file(path, 0, NULL);
	assert_true(json_equal(a, b));
	/* The shape others rely on. */
	assert_string_equal(json_string_value(json_object_get(b, "schema")), "pmucanary/2");
	assert_string_equal(json_string_value(json_object_get(b, "kind")), "probe");
	assert_string_equal(json_string_value(json_object_get(b, "kernel")), "6.1.0-test");
	assert_string_equal(json_string_value(json_object_get(b, "accel")), "tcg");
	assert_string_equal(json_string_value(json_object_get(b, "verdict")), "CLEAN");
	{
		json_t *cells = json_object_get(b, "cells");
		json_t *attrs = json_object_get(b, "attrs");
		json_t *rej = json_array_get(cells, 2);
		json_t *dis = json_array_get(cells, 1);
		json_t *tries = json_object_get(dis, "tries");
		json_t *final = json_array_get(attrs, json_integer_value(json_object_get(dis, "attr")));
		json_t *first = json_array_get(attrs, json_integer_value(
			json_object_get(json_array_get(tries, 0), "attr")));

		/* a, b, b2: each once. */
		assert_int_equal(json_array_size(attrs), 3);
		assert_null(json_object_get(rej, "attr"));
		assert_string_equal(json_string_value(json_object_get(rej, "outcome")), "REJECTED");
		assert_string_equal(json_string_value(json_object_get(rej, "error")),
				    "cycles:Z: unknown modifier 'Z' at 8");
		assert_int_equal(json_array_size(json_object_get(rej, "tries")), 0);
		assert_null(json_object_get(json_array_get(cells, 0), "per_cpu"));
		/* The file's kernel is not repeated in every cell. */
		assert_null(json_object_get(json_array_get(cells, 0), "kernel"));
		assert_string_equal(json_string_value(json_object_get(
			json_object_get(dis, "per_cpu"), "1")), "EBUSY");
		/* The cell's attr is the last try's, the one ENOENT belongs to. */
		assert_int_equal(json_integer_value(json_object_get(final, "precise_ip")), 2);
		assert_int_equal(json_integer_value(json_object_get(final, "exclude_guest")), 1);
		assert_true(json_equal(json_object_get(dis, "attr"), json_object_get(
			json_array_get(tries, 1), "attr")));
		assert_null(json_object_get(first, "exclude_guest"));
	}
	{
		const struct cell *rc = back->cells->pdata[2];
		const struct cell *dc = back->cells->pdata[1];

		assert_int_equal(rc->outcome, OUTCOME_REJECTED);
		assert_false(rc->has_attr);
		assert_string_equal(rc->error, "cycles:Z: unknown modifier 'Z' at 8");
		assert_string_equal(rc->kernel, "6.1.0-test");
		assert_int_equal(dc->attr.exclude_guest, 1);
		assert_int_equal(g_array_index(dc->tries, struct cell_try, 0).attr.exclude_guest, 0);
		assert_int_equal(dc->tries->len, 2);
	}
	json_decref(a);
	json_decref(b);
	/* The limitation lines for TCG and for no hardware PMU. */
	assert_true(g_ptr_array_find_with_equal_func(back->limitations, RESULTS_LIMIT_TCG,
						     g_str_equal, NULL));
	assert_true(g_ptr_array_find_with_equal_func(back->limitations,
						     RESULTS_LIMIT_NO_HW_PMU, g_str_equal, NULL));
	/* No temporary file left next to it. */
	dir = g_dir_open(tmpdir, 0, NULL);
	while (g_dir_read_name(dir))
		files++;
	assert_int_equal(files, 1);
}

/* Writes text to a file and reads it as a result file; returns the error. */
static int read_text(const char *text, const char *name)
{
	g_autofree char *path = g_build_filename(tmpdir, name, NULL);
	g_autoptr(result_set) set = NULL;

	assert_true(g_file_set_contents(path, text, -1, NULL));
	return results_read_json(path, &set);
}

static void test_schema_errors(void **state)
{
	assert_int_equal(read_text("{\"kind\":\"probe\",\"cells\":[]}", "a.json"), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "a.json"));
	assert_non_null(strstr(pc_errmsg(), "schema"));

	assert_int_equal(read_text("{\"schema\":\"pmucanary/3\",\"kind\":\"probe\"}", "b.json"),
			 -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "b.json"));
	assert_non_null(strstr(pc_errmsg(), "pmucanary/3"));

	assert_int_equal(read_text("{\"schema\":\"pmucanary/1\",\"kind\":\"bisect\"}", "c.json"),
			 -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "bisect"));

	assert_int_equal(read_text("{\"schema\":\"pmucanary/1\",\"kind\":\"run\","
				   "\"run_id\":\"r\",\"created\":\"t\",\"tool_version\":\"v\","
				   "\"kernel\":\"k\",\"accel\":\"kvm\",\"cells\":[{\"profile\":"
				   "\"p\",\"spec\":\"s\",\"outcome\":\"MAYBE\"}]}", "d.json"),
			 -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "cells[0]"));
	assert_non_null(strstr(pc_errmsg(), "MAYBE"));

	assert_int_equal(read_text("{\"schema\":\"pmucanary/1\",\"kind\":\"run\","
				   "\"run_id\":\"r\",\"created\":\"t\",\"tool_version\":\"v\","
				   "\"kernel\":\"k\",\"accel\":\"kvm\",\"cells\":[{\"profile\":"
				   "\"p\",\"spec\":\"s\",\"outcome\":\"OK\",\"attr\":"
				   "{\"no_such_member\":1}}]}", "e.json"), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "no_such_member"));

	/* per_cpu keys are decimal CPU numbers, nothing strtol would skip. */
	static const char *const bad_cpus[] = { " 5", "+5", "-0", "2147483648", "0x1", "5 " };
	for (size_t i = 0; i < G_N_ELEMENTS(bad_cpus); i++) {
		g_autofree char *doc = g_strdup_printf(
			"{\"schema\":\"pmucanary/1\",\"kind\":\"run\",\"run_id\":\"r\","
			"\"created\":\"t\",\"tool_version\":\"v\",\"kernel\":\"k\",\"accel\":\"kvm\","
			"\"cells\":[{\"profile\":\"p\",\"spec\":\"s\",\"outcome\":\"OK\","
			"\"per_cpu\":{\"%s\":\"OK\"}}]}", bad_cpus[i]);
		g_autofree char *want = g_strdup_printf("per_cpu key '%s' is not a CPU", bad_cpus[i]);

		assert_int_equal(read_text(doc, "cpu.json"), -EINVAL);
		if (!strstr(pc_errmsg(), want))
			fail_msg("'%s': %s", bad_cpus[i], pc_errmsg());
	}
	assert_int_equal(read_text("{\"schema\":\"pmucanary/1\",\"kind\":\"run\",\"run_id\":\"r\","
				   "\"created\":\"t\",\"tool_version\":\"v\",\"kernel\":\"k\","
				   "\"accel\":\"kvm\",\"cells\":[{\"profile\":\"p\",\"spec\":\"s\","
				   "\"outcome\":\"OK\",\"per_cpu\":{\"2147483647\":\"OK\"}}]}",
				   "cpu.json"), 0);

	/* Truncated: jansson's line and column. */
	assert_int_equal(read_text("{\"schema\":\"pmucanary/1\",\n\"kind\":", "f.json"), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "f.json:2:"));

	assert_true(results_read_json("/nonexistent/x.json", &(struct result_set *){ NULL }) < 0);
	assert_non_null(strstr(pc_errmsg(), "/nonexistent/x.json"));
}

/* A /1 file: inline attr objects, the first try as the cell's attr, and a
 * rejected spec stored as EINVAL with "error". */
static void test_read_v1(void **state)
{
	g_autofree char *path = g_build_filename(tmpdir, "v1.json", NULL);
	g_autoptr(result_set) set = NULL;
	const struct cell *c;

	assert_true(g_file_set_contents(path,
		"{\"schema\":\"pmucanary/1\",\"kind\":\"probe\",\"run_id\":\"r\",\"created\":\"t\","
		"\"tool_version\":\"v\",\"kernel\":\"6.1\",\"accel\":\"tcg\",\"cells\":["
		"{\"kernel\":\"6.1\",\"profile\":\"perf-modern\",\"spec\":\"cpu-cycles:pp\","
		"\"attr\":{\"type\":0,\"precise_ip\":2},\"outcome\":\"OK\",\"tries\":["
		"{\"attr\":{\"type\":0,\"precise_ip\":2},\"outcome\":\"ENOENT\"},"
		"{\"attr\":{\"type\":1},\"outcome\":\"OK\",\"why\":\"cycles -> cpu-clock\"}],"
		"\"k\":0,\"n\":0,\"evidence\":[]},"
		"{\"kernel\":\"6.1\",\"profile\":\"perf-3.6\",\"spec\":\"cycles:Z\","
		"\"error\":\"cycles:Z: unknown modifier\",\"outcome\":\"EINVAL\",\"tries\":[]}]}",
		-1, NULL));
	assert_int_equal(results_read_json(path, &set), 0);
	assert_int_equal(set->cells->len, 2);
	c = set->cells->pdata[0];
	assert_int_equal(c->outcome, OUTCOME_OK);
	assert_int_equal(c->attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(c->tries->len, 2);
	assert_int_equal(g_array_index(c->tries, struct cell_try, 0).attr.precise_ip, 2);
	c = set->cells->pdata[1];
	assert_int_equal(c->outcome, OUTCOME_REJECTED);
	assert_string_equal(c->error, "cycles:Z: unknown modifier");
	assert_false(c->has_attr);
}

/* Two cells sharing one attr: one entry in "attrs". */
static void test_attr_dedup(void **state)
{
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	struct perf_event_attr a = attr_make(PERF_TYPE_SOFTWARE, 0, 0, 0);
	struct perf_event_attr b = attr_make(PERF_TYPE_SOFTWARE, 1, 0, 0);
	json_t *j;

	for (int i = 0; i < 2; i++) {
		struct cell *c = cell_new(set->kernel, i ? "perf-3.6" : "perf-modern", "cpu-clock");

		cell_set_attr(c, &a);
		cell_add_try(c, &a, OUTCOME_OK, NULL);
		c->outcome = OUTCOME_OK;
		results_add_cell(set, c);
	}
	j = results_to_json(set);
	assert_int_equal(json_array_size(json_object_get(j, "attrs")), 1);
	json_decref(j);
	{
		struct cell *c = cell_new(set->kernel, "raw", "x");

		cell_set_attr(c, &b);
		cell_add_try(c, &b, OUTCOME_OK, NULL);
		c->outcome = OUTCOME_OK;
		results_add_cell(set, c);
	}
	j = results_to_json(set);
	assert_int_equal(json_array_size(json_object_get(j, "attrs")), 2);
	assert_int_equal(json_integer_value(json_object_get(
		json_array_get(json_object_get(j, "cells"), 2), "attr")), 1);
	json_decref(j);
}

#define V2_HEAD "{\"schema\":\"pmucanary/2\",\"kind\":\"probe\",\"run_id\":\"r\"," \
	"\"created\":\"t\",\"tool_version\":\"v\",\"kernel\":\"k\",\"accel\":\"tcg\","

/* An attrs index is an integer in range; anything else names the place. */
static void test_bad_index(void **state)
{
	static const struct {
		const char *attr, *want;
	} bad[] = {
		{ "1", "x.json: cells[0].tries[1].attr: index 1 out of range (attrs has 1)" },
		{ "999", "x.json: cells[0].tries[1].attr: index 999 out of range (attrs has 1)" },
		{ "-1", "x.json: cells[0].tries[1].attr: index -1 out of range (attrs has 1)" },
		{ "\"0\"", "x.json: cells[0].tries[1].attr: not an index" },
		{ "0.0", "x.json: cells[0].tries[1].attr: not an index" },
		{ "{\"type\":1}", "x.json: cells[0].tries[1].attr: not an index" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *doc = g_strdup_printf(V2_HEAD "\"attrs\":[{\"type\":1}],\"cells\":["
			"{\"profile\":\"p\",\"spec\":\"s\",\"attr\":0,\"outcome\":\"OK\",\"tries\":["
			"{\"attr\":0,\"outcome\":\"EINVAL\"},{\"attr\":%s,\"outcome\":\"OK\"}]}]}",
			bad[i].attr);

		assert_int_equal(read_text(doc, "x.json"), -EINVAL);
		if (!strstr(pc_errmsg(), bad[i].want))
			fail_msg("%s: '%s', want '%s'", bad[i].attr, pc_errmsg(), bad[i].want);
	}
	/* The cell's own attr too, and an attr that is not one. */
	assert_int_equal(read_text(V2_HEAD "\"attrs\":[],\"cells\":[{\"profile\":\"p\","
				   "\"spec\":\"s\",\"attr\":0,\"outcome\":\"OK\"}]}", "y.json"),
			 -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "y.json: cells[0].attr: index 0 out of range "
					    "(attrs has 0)"));
	assert_int_equal(read_text(V2_HEAD "\"attrs\":[{\"nope\":1}],\"cells\":[]}", "z.json"),
			 -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "attrs[0]"));
	assert_non_null(strstr(pc_errmsg(), "nope"));
	assert_int_equal(read_text(V2_HEAD "\"cells\":[]}", "w.json"), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "\"attrs\" is missing"));
	/* In range is fine. */
	assert_int_equal(read_text(V2_HEAD "\"attrs\":[{\"type\":1}],\"cells\":[{\"profile\":"
				   "\"p\",\"spec\":\"s\",\"attr\":0,\"outcome\":\"OK\",\"tries\":"
				   "[{\"attr\":0,\"outcome\":\"OK\"}]}]}", "ok.json"), 0);
}

/* k harmful runs of n: k > n (n = 0 included) is refused, naming the
 * cell; k = n and 0/0 (a rule-covered cell) read. A key given twice (a
 * second "cells" that would drop the first, a cell's "outcome") is
 * refused, at any depth, with where. */
static void test_counts_and_duplicates(void **state)
{
	static const struct {
		int k, n;
		bool ok;
	} kn[] = { { 3, 1, false }, { 2, 0, false }, { 1, 0, false }, { 0, 0, true },
		   { 3, 3, true }, { 0, 3, true }, { 1, 2, true } };
	static const struct {
		const char *doc, *want;
	} dup[] = {
		{ V2_HEAD "\"attrs\":[],\"cells\":[{\"profile\":\"p\",\"spec\":\"s\",\"outcome\":"
		  "\"GUEST_CRASH\",\"k\":1,\"n\":1}],\n\"cells\":[]}", "d1.json:" },
		{ V2_HEAD "\"cells\":[],\"attrs\":[],\"cells\":[]}", "d2.json:" },
		{ V2_HEAD "\"attrs\":[],\"cells\":[{\"profile\":\"p\",\"spec\":\"s\",\"outcome\":"
		  "\"GUEST_CRASH\",\"outcome\":\"OK\"}]}", "d3.json:" },
		{ "{\"schema\":\"pmucanary/2\",\"schema\":\"pmucanary/2\",\"kind\":\"probe\","
		  "\"attrs\":[],\"cells\":[]}", "d4.json:" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(kn); i++) {
		g_autofree char *doc = g_strdup_printf(V2_HEAD "\"attrs\":[],\"cells\":[{\"profile\":"
			"\"p\",\"spec\":\"s\",\"outcome\":\"GUEST_CRASH\",\"k\":%d,\"n\":%d}]}",
			kn[i].k, kn[i].n);
		g_autofree char *want = g_strdup_printf("kn.json: cells[0] (p s): \"k\" (%d) is more "
							"than \"n\" (%d)", kn[i].k, kn[i].n);
		int r = read_text(doc, "kn.json");

		if (kn[i].ok) {
			assert_int_equal(r, 0);
			continue;
		}
		assert_int_equal(r, -EINVAL);
		if (!strstr(pc_errmsg(), want))
			fail_msg("k=%d n=%d: '%s', want '%s'", kn[i].k, kn[i].n, pc_errmsg(), want);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(dup); i++) {
		char name[16];

		snprintf(name, sizeof(name), "d%zu.json", i + 1);
		assert_int_equal(read_text(dup[i].doc, name), -EINVAL);
		if (!strstr(pc_errmsg(), dup[i].want) || !strstr(pc_errmsg(), "duplicate"))
			fail_msg("%s: '%s'", name, pc_errmsg());
	}
}

/* REJECTED is the profile's verdict with perf's message, and only that. */
static void test_rejected(void **state)
{
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	g_autoptr(result_set) back = NULL;
	g_autofree char *path = g_build_filename(tmpdir, "rej.json", NULL);
	struct cell *c = cell_new(set->kernel, "perf-modern", "cycles:W");
	struct perf_event_attr a = attr_make(PERF_TYPE_SOFTWARE, 0, 0, 0);

	cell_set_error(c, "Weak modifier is for use with groups");
	assert_int_equal(c->outcome, OUTCOME_REJECTED);
	assert_int_equal(outcome_class(c->outcome), OUTCOME_CLASS_REJECTED);
	assert_int_equal(outcome_errno(c->outcome), 0);
	results_add_cell(set, c);
	assert_int_equal(results_write_json(set, path), 0);
	assert_int_equal(results_read_json(path, &back), 0);
	c = back->cells->pdata[0];
	assert_int_equal(c->outcome, OUTCOME_REJECTED);
	assert_string_equal(c->error, "Weak modifier is for use with groups");
	/* An attr makes it a cell the kernel will see: not rejected. */
	cell_set_attr(c, &a);
	assert_int_not_equal(c->outcome, OUTCOME_REJECTED);
	assert_null(c->error);

	assert_int_equal(read_text(V2_HEAD "\"attrs\":[],\"cells\":[{\"profile\":\"p\","
				   "\"spec\":\"s\",\"outcome\":\"REJECTED\"}]}", "r1.json"), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "REJECTED without"));
	assert_int_equal(read_text(V2_HEAD "\"attrs\":[],\"cells\":[{\"profile\":\"p\","
				   "\"spec\":\"s\",\"error\":\"m\",\"outcome\":\"EINVAL\"}]}",
				   "r2.json"), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "not REJECTED"));
}

/* Bytes that are not UTF-8 in a spec, perf's message, a try's why and
 * evidence are kept as \xNN; the file reads back and the matrix takes it. */
static void test_utf8(void **state)
{
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	g_autoptr(result_set) back = NULL;
	g_autofree char *path = g_build_filename(tmpdir, "utf8.json", NULL);
	g_autoptr(GString) out = g_string_new(NULL);
	struct perf_event_attr a = attr_make(PERF_TYPE_SOFTWARE, 0, 0, 0);
	struct cell *c = cell_new(set->kernel, "perf-modern", "cpu-clock:\xff");
	json_t *s;

	cell_set_error(c, "event syntax error: 'cpu-clock:\xff' \xc3(");
	results_add_cell(set, c);
	c = cell_new(set->kernel, "raw", "pmu\xfe/x/");
	cell_set_attr(c, &a);
	cell_add_try(c, &a, OUTCOME_EINVAL, NULL);
	cell_add_try(c, &a, OUTCOME_OK, "why \x80");
	c->outcome = OUTCOME_OK;
	json_array_append_new(c->evidence, json_pack("{s:o}", "console",
						     results_json_string("oops \xe2\x82 caf\xc3\xa9")));
	results_add_cell(set, c);
	assert_int_equal(results_write_json(set, path), 0);
	assert_int_equal(results_read_json(path, &back), 0);
	{
		json_t *ja = results_to_json(set);
		json_t *jb = json_load_file(path, 0, NULL);

		assert_true(json_equal(ja, jb));
		json_decref(ja);
		json_decref(jb);
	}
	c = back->cells->pdata[0];
	assert_string_equal(c->spec, "cpu-clock:\\xff");
	assert_string_equal(c->error, "event syntax error: 'cpu-clock:\\xff' \\xc3(");
	c = back->cells->pdata[1];
	assert_string_equal(c->spec, "pmu\\xfe/x/");
	assert_string_equal(g_array_index(c->tries, struct cell_try, 1).why, "why \\x80");
	/* Valid multi-byte text stays as it is. */
	assert_string_equal(json_string_value(json_object_get(json_array_get(c->evidence, 0),
							      "console")),
			    "oops \\xe2\\x82 caf\xc3\xa9");
	{
		const struct result_set *one = back;

		assert_int_equal(report_render(REPORT_TEXT, &one, 1, NULL, out), 0);
		assert_non_null(strstr(out->str, "pmu\\xfe/x/"));
	}
	s = results_json_string(NULL);
	assert_true(json_is_null(s));
	json_decref(s);
}

/* The /1 fixtures of tests/data, read and written back as /2 through the
 * writer, read again: the same sets (matrix and diff say the same), and the
 * file is /2 with fewer attrs than references. */
static void test_v1_fixtures_round_trip(void **state)
{
	static const char *const files[] = {
		"diff/probe-3.6.json", "diff/probe-3.7.json", "diff/probe-3.8.json",
		"diff/run-3.6.json", "diff/run-3.7.json", "diff/run-3.8.json",
		"diff/run-3.8-harm.json", "matrix/amd-3.6.json", "matrix/hsw-3.6.json",
		"matrix/ivb-3.6.json", "matrix/tcg-6.1.json",
	};
	g_autofree char *top = test_top_dir();
	g_autoptr(result_set) prev1 = NULL;
	g_autoptr(result_set) prev2 = NULL;

	for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
		g_autofree char *src = g_build_filename(top, "tests", "data", files[i], NULL);
		g_autofree char *dst = g_build_filename(tmpdir, "v2.json", NULL);
		g_autoptr(result_set) v1 = NULL;
		g_autoptr(result_set) v2 = NULL;
		g_autoptr(GString) m1 = g_string_new(NULL);
		g_autoptr(GString) m2 = g_string_new(NULL);
		g_autofree char *text = NULL;
		json_t *a, *b;

		if (results_read_json(src, &v1) < 0)
			fail_msg("%s: %s", files[i], pc_errmsg());
		assert_int_equal(results_write_json(v1, dst), 0);
		assert_true(g_file_get_contents(dst, &text, NULL, NULL));
		assert_non_null(strstr(text, "\"schema\":\"pmucanary/2\""));
		if (results_read_json(dst, &v2) < 0)
			fail_msg("%s as /2: %s", files[i], pc_errmsg());
		a = results_to_json(v1);
		b = results_to_json(v2);
		if (!json_equal(a, b))
			fail_msg("%s: not the same set after /2", files[i]);
		json_decref(a);
		json_decref(b);
		{
			const struct result_set *s1 = v1, *s2 = v2;
			const struct report_options all = { .all = true };

			assert_int_equal(report_render(REPORT_TEXT, &s1, 1, &all, m1), 0);
			assert_int_equal(report_render(REPORT_TEXT, &s2, 1, &all, m2), 0);
			assert_string_equal(m1->str, m2->str);
		}
		if (prev1) {
			g_autoptr(diff_result) d1 = NULL;
			g_autoptr(diff_result) d2 = NULL;
			g_autofree char *t1 = NULL, *t2 = NULL;

			assert_int_equal(diff_compare(prev1, "base", v1, "new", &d1), 0);
			assert_int_equal(diff_compare(prev2, "base", v2, "new", &d2), 0);
			t1 = diff_result_to_text(d1);
			t2 = diff_result_to_text(d2);
			assert_string_equal(t1, t2);
		}
		g_clear_pointer(&prev1, result_set_free);
		g_clear_pointer(&prev2, result_set_free);
		prev1 = g_steal_pointer(&v1);
		prev2 = g_steal_pointer(&v2);
	}
}

/* A second write replaces the file whole: readers see the old file or the
 * new one, and no temporary file stays behind. */
static void test_overwrite(void **state)
{
	g_autoptr(result_set) set = set_sample();
	g_autoptr(result_set) back = NULL;
	g_autofree char *sub = g_build_filename(tmpdir, "over", NULL);
	g_autofree char *path = g_build_filename(sub, "run.json", NULL);
	g_autoptr(GDir) dir = NULL;
	int files = 0;

	assert_int_equal(g_mkdir(sub, 0755), 0);
	assert_int_equal(results_write_json(set, path), 0);
	g_ptr_array_remove_index(set->cells, 0);
	assert_int_equal(results_write_json(set, path), 0);
	assert_int_equal(results_read_json(path, &back), 0);
	assert_int_equal(back->cells->len, 2);
	dir = g_dir_open(sub, 0, NULL);
	while (g_dir_read_name(dir))
		files++;
	assert_int_equal(files, 1);
}

static void test_write_fails_cleanly(void **state)
{
	g_autoptr(result_set) set = set_sample();

	assert_int_equal(results_write_json(set, "/nonexistent/dir/x.json"), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "/nonexistent/dir/x.json"));
}

static void test_spec_event(void **state)
{
	static const char *const cases[][2] = {
		{ "cycles:ppH", "cycles" },
		{ "cycles", "cycles" },
		{ "msr/tsc/", "msr/tsc/" },
		{ "msr/tsc/:u", "msr/tsc/" },
		{ "msr/tsc/u", "msr/tsc/" },
		{ "msr/tsc/ppGH", "msr/tsc/" },
		{ "cpu/event=0x3c,umask=0x0/:ukp", "cpu/event=0x3c,umask=0x0/" },
		{ "cycles[exclude_user,precise_ip=2]", "cycles" },
		{ "L1-dcache-load-misses:G", "L1-dcache-load-misses" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *ev = results_spec_event(cases[i][0]);

		assert_string_equal(ev, cases[i][1]);
	}
}

static void test_limitations_dedup(void **state)
{
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_RUN);

	g_free(set->accel);
	set->accel = g_strdup("kvm");
	results_note_standard_limitations(set, true);
	assert_int_equal(set->limitations->len, 0);
	results_add_limitation(set, "x %d", 1);
	results_add_limitation(set, "x %d", 1);
	assert_int_equal(set->limitations->len, 1);
	assert_true(g_str_has_suffix(set->created, "Z"));
	assert_true(strlen(set->run_id) > 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_kvm_limitation),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_schema_errors),
		cmocka_unit_test(test_read_v1),
		cmocka_unit_test(test_attr_dedup),
		cmocka_unit_test(test_bad_index),
		cmocka_unit_test(test_counts_and_duplicates),
		cmocka_unit_test(test_rejected),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_v1_fixtures_round_trip),
		cmocka_unit_test(test_overwrite),
		cmocka_unit_test(test_write_fails_cleanly),
		cmocka_unit_test(test_spec_event),
		cmocka_unit_test(test_limitations_dedup),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
