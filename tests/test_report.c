/* Tests for lib/report: the writer table, escaping (a spec or evidence with
 * <script> must not inject), JUnit well-formedness and verdicts (harm,
 * INFRA, known erratum, regression against a baseline), and the KCIDB v5
 * required fields and id/path formats (kernelci/kcidb-io schema v05_00). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "errata.h"
#include "judge.h"
#include "kcidb.h"
#include "log.h"
#include "report.h"
#include "results.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char top_dir[4096];

static GPtrArray *load(const char *dir, ...)
{
	GPtrArray *sets = g_ptr_array_new_with_free_func((GDestroyNotify)result_set_free);
	va_list ap;
	const char *name;

	va_start(ap, dir);
	while ((name = va_arg(ap, const char *))) {
		g_autofree char *path = g_strdup_printf("%s/tests/data/%s/%s.json", top_dir, dir,
							name);
		struct result_set *set = NULL;

		if (results_read_json(path, &set) < 0)
			fail_msg("%s: %s", path, pc_errmsg());
		g_ptr_array_add(sets, set);
	}
	va_end(ap);
	return sets;
}

static char *render(enum report_format f, GPtrArray *sets, const struct report_options *o)
{
	GString *out = g_string_new(NULL);

	int rc = report_render(f, (const struct result_set *const *)sets->pdata, sets->len, o, out);

	/* lib/ returns 0 or -errno: anything else is no success either */
	if (rc)
		fail_msg("render %s: %d: %s", report_format_name(f), rc, rc < 0 ? pc_errmsg() : "");
	return g_string_free(out, FALSE);
}

static unsigned int count(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_table(void **state)
{
	for (int f = 0; f < REPORT_FORMAT_COUNT; f++)
		assert_int_equal(report_format_from_name(report_format_name(f)), f);
	assert_int_equal(report_format_from_name("pdf"), REPORT_FORMAT_COUNT);
	assert_string_equal(report_format_name(REPORT_KCIDB), "kcidb");
}

static void test_escape(void **state)
{
	g_autoptr(GString) h = g_string_new(NULL);
	g_autoptr(GString) x = g_string_new(NULL);
	g_autofree char *c1 = report_kcidb_component("msr/tsc/");
	g_autofree char *c2 = report_kcidb_component("perf-3.6");
	g_autofree char *c3 = report_kcidb_component("::");
	/* '_' is one of the kept characters (report.h): it stays as written */
	g_autofree char *c4 = report_kcidb_component("_x__y_.z");

	report_escape_html(h, "<script>\"a\" & 'b'</script>\001\xff");
	assert_string_equal(h->str, "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
				    "&#xfffd;\xef\xbf\xbd");
	report_escape_xml(x, "a\001b\tc\n");
	assert_string_equal(x->str, "a\\x01b\tc\n");
	/* U+FFFE and U+FFFF are not XML characters either; U+FFFD and
	 * U+EFBF (EE BE BF) are */
	g_string_truncate(x, 0);
	report_escape_xml(x, "\xef\xbf\xbe|\xef\xbf\xbf|\xef\xbf\xbd|\xee\xbe\xbf");
	assert_string_equal(x->str, "\\u{fffe}|\\u{ffff}|\xef\xbf\xbd|\xee\xbe\xbf");
	/* but U+FEBF and U+FFBE (EF BA BF, EF BE BE) are characters like any */
	g_string_truncate(x, 0);
	report_escape_xml(x, "\xef\xba\xbf|\xef\xbe\xbe");
	assert_string_equal(x->str, "\xef\xba\xbf|\xef\xbe\xbe");
	g_string_truncate(h, 0);
	report_escape_html(h, "\xef\xbf\xbe");
	assert_string_equal(h->str, "&#xfffd;");
	assert_string_equal(c1, "msr_tsc_");
	assert_string_equal(c2, "perf-3_6");
	assert_string_equal(c3, "_");
	assert_string_equal(c4, "_x__y__z");
	/* kcidb.h: every run outside the kept characters is one '_', the
	 * first and the last too, so that distinct names stay distinct */
	{
		static const char *const cases[][2] = {
			{ "x", "x" }, { "/x", "_x" }, { "x/", "x_" }, { "//x//y//", "_x_y_" },
			{ "{cycles,instructions}", "_cycles_instructions_" }, { "", "_" },
			{ " ", "_" }, { "-a_", "-a_" },
		};

		for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
			g_autofree char *got = report_kcidb_component(cases[i][0]);

			if (strcmp(got, cases[i][1]))
				fail_msg("'%s' -> '%s', not '%s'", cases[i][0], got, cases[i][1]);
		}
	}
}

/* Nothing from the inputs may become markup: the only <script> elements are
 * the page's data and its code, the data holds no "</" nor "<!--" nor a raw
 * U+2028/2029 (each ends a script or a line early), and the text the page
 * states as HTML is escaped. */
static void test_html_no_injection(void **state)
{
	g_autoptr(GPtrArray) sets = load("matrix", "xss", "tcg-6.1", NULL);
	struct result_set *xss = sets->pdata[0];
	g_autofree char *html = NULL;
	const char *data, *data_end;

	/* A separator a JavaScript parser would take for a line end. */
	results_add_limitation(xss, "line\xe2\x80\xa8separator <!-- comment");
	html = render(REPORT_HTML, sets, NULL);
	assert_int_equal(count(html, "<script"), 2);
	assert_int_equal(count(html, "</script>"), 2);
	data = strstr(html, "<script type=\"application/json\" id=\"pc-data\">");
	assert_non_null(data);
	data_end = strstr(data, "</script>");
	assert_non_null(data_end);
	for (const char *p = data + 1; p < data_end; p++) {
		assert_false(*p == '<');
		assert_false(!strncmp(p, "\xe2\x80\xa8", 3) || !strncmp(p, "\xe2\x80\xa9", 3));
	}
	/* The hostile spec and evidence are in the data, as \u escapes. */
	assert_non_null(strstr(html, "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"));
	assert_non_null(strstr(html, "\\u003cimg src=x onerror=alert(3)\\u003e"));
	assert_null(strstr(html, "<img"));
	assert_null(strstr(html, "<b>evil"));
	assert_null(strstr(html, "<i>6.1"));
	assert_null(strstr(html, "alert(1)</"));
	/* Inputs and limitations are escaped HTML, readable without the script. */
	assert_non_null(strstr(html, "limitation with &lt;script&gt;alert(5)"));
	assert_non_null(strstr(html, "line\xe2\x80\xa8separator &lt;!-- comment"));
	assert_non_null(strstr(html, "limitation: " RESULTS_LIMIT_TCG));
	assert_non_null(strstr(html, "6.1.0-&lt;b&gt;evil&lt;/b&gt;"));
	assert_null(strstr(html, "http"));  /* self-contained: nothing to fetch */
}

/* The full sweep's shape in small: many cells sharing attrs and halves are
 * stored once, and every cell is there (its code in its row's string). */
/* The filter box matches verdict words (README: a class such as `harm` or
 * `rejected`): the page's data names each verdict by its number, in the
 * order of judge.h's enum. */
static void test_verdict_names(void **state)
{
	static const char *const names[VERDICT_COUNT] = {
		[VERDICT_PASS] = "pass", [VERDICT_REJECTED] = "rejected", [VERDICT_KNOWN] = "known",
		[VERDICT_REGRESSION] = "regression", [VERDICT_HARM] = "harm",
		[VERDICT_INFRA] = "infra", [VERDICT_ABSENT] = "absent",
	};
	g_autoptr(GPtrArray) sets = load("matrix", "xss", NULL);
	g_autofree char *html = render(REPORT_HTML, sets, NULL);

	for (int v = 0; v < VERDICT_COUNT; v++)
		assert_string_equal(report_verdict_name(v), names[v]);
	assert_string_equal(report_verdict_name(VERDICT_COUNT), "?");
	assert_non_null(strstr(html, "\"verdicts\":[\"pass\",\"rejected\",\"known\",\"regression\","
				     "\"harm\",\"infra\",\"absent\"]"));
}

static void test_html_compact(void **state)
{
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	const struct result_set *sets[] = { set };
	g_autoptr(GString) out = g_string_new(NULL);
	const char *codes;

	/* 100 events x 20 profiles, 100 distinct configs. */
	for (int i = 0; i < 2000; i++) {
		g_autofree char *spec = g_strdup_printf("ev%d:%s", i / 20, i % 2 ? "u" : "k");
		g_autofree char *profile = g_strdup_printf("p%d", i % 20);
		struct cell *c = cell_new("6.1", profile, spec);
		struct perf_event_attr a = { .type = 1, .size = 136, .config = i % 100 };

		cell_set_attr(c, &a);
		cell_add_try(c, &a, OUTCOME_OK, NULL);
		c->outcome = OUTCOME_OK;
		results_add_cell(set, c);
	}
	assert_int_equal(report_render(REPORT_HTML, sets, 1, NULL, out), 0);
	/* 100 distinct configs: one event half each, one setup half for all. */
	assert_int_equal(count(out->str, "\"type=1"), 100);
	assert_int_equal(count(out->str, "\"size=136"), 1);
	/* 20 rows, 100 OK cells each: "A" is OK's code. */
	codes = strstr(out->str, "\"o\":\"");
	assert_non_null(codes);
	assert_int_equal(strspn(codes + 5, "A"), 100);
	assert_int_equal(count(out->str, "\"o\":\""), 20);
}

/* The heatmap's data: a harm cell keeps its one try (the open that worked
 * before the guest was hurt: its outcome is not the cell's), a plain OK cell
 * does not repeat it; the attr's fields are named, the leading ones in the
 * kernel's member order of struct perf_event_attr. */
static void test_html_tries_fields(void **state)
{
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_RUN);
	const struct result_set *sets[] = { set };
	g_autoptr(GString) out = g_string_new(NULL);
	struct perf_event_attr a = { .type = 1, .size = 136, .precise_ip = 2 };
	struct cell *harm = cell_new("6.1", "perf-3.6", "cpu-clock:pp");
	struct cell *ok = cell_new("6.1", "perf-3.6", "cpu-clock");

	cell_set_attr(harm, &a);
	cell_add_try(harm, &a, OUTCOME_OK, NULL);
	harm->outcome = OUTCOME_GUEST_CRASH;
	results_add_cell(set, harm);
	a.precise_ip = 0;
	cell_set_attr(ok, &a);
	cell_add_try(ok, &a, OUTCOME_OK, NULL);
	ok->outcome = OUTCOME_OK;
	results_add_cell(set, ok);
	assert_int_equal(report_render(REPORT_HTML, sets, 1, NULL, out), 0);
	assert_int_equal(count(out->str, "\"t\":["), 1);
	assert_non_null(strstr(out->str, "\"fields\":[\"type\",\"size\",\"config\",\"sample_period\","
					  "\"sample_freq\",\"sample_type\",\"read_format\","));
}

/* What names the event is the event half: perf's type and config and the
 * members a PMU's sysfs format extends config with (config1, config2: an
 * offcore response's mask), and a breakpoint's bp_type (its address and
 * length are config1/config2). Attrs of one setup that differ in any of
 * these are distinct events (one event half each) and share one setup
 * half. */
static void test_html_event_half(void **state)
{
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	const struct result_set *sets[] = { set };
	g_autoptr(GString) out = g_string_new(NULL);

	(void)state;
	/* 6 offcore masks (config1), 5 config2 values, 4 breakpoint types */
	for (int i = 0; i < 15; i++) {
		g_autofree char *spec = g_strdup_printf("ev%d", i);
		struct cell *c = cell_new("6.1", "perf-6.1", spec);
		struct perf_event_attr a = { .type = PERF_TYPE_RAW, .size = 136, .config = 0x1b7,
					     .sample_period = 4000, .exclude_kernel = 1 };

		if (i < 6) {
			a.config1 = 0x10001 + i;
		} else if (i < 11) {
			a.config1 = 0x10001;
			a.config2 = 0x20 + i;
		} else {
			a.type = PERF_TYPE_BREAKPOINT;
			a.config = 0;
			a.bp_type = 1u << (i - 11); /* R, W, X: HW_BREAKPOINT_R/W/X */
			if (i == 14)
				a.bp_type = 3; /* RW */
			a.bp_addr = 0x1000;
			a.bp_len = 8;
		}
		cell_set_attr(c, &a);
		c->outcome = OUTCOME_OK;
		results_add_cell(set, c);
	}
	assert_int_equal(report_render(REPORT_HTML, sets, 1, NULL, out), 0);
	assert_int_equal(count(out->str, "\"type=4 config=0x1b7 config1=0x"), 11);
	assert_int_equal(count(out->str, "\"type=4 config=0x1b7 config1=0x10001 config2=0x"), 5);
	assert_int_equal(count(out->str, "\"type=5 bp_type="), 4);
	assert_int_equal(count(out->str, "\"size=136 sample_period=4000 exclude_kernel=1\""), 1);
}

/* README: "No input noted a limitation." only when none did: one input with
 * a limitation, first or last, is enough to leave it out. */
static void test_html_no_limitation_line(void **state)
{
	static const char none[] = "No input noted a limitation.";
	g_autoptr(GPtrArray) clean = load("matrix", "ivb-3.6", "hsw-3.6", NULL);
	g_autoptr(GPtrArray) first = load("matrix", "tcg-6.1", "ivb-3.6", NULL);
	g_autoptr(GPtrArray) last = load("matrix", "ivb-3.6", "tcg-6.1", NULL);
	g_autofree char *c = render(REPORT_HTML, clean, NULL);
	g_autofree char *f = render(REPORT_HTML, first, NULL);
	g_autofree char *l = render(REPORT_HTML, last, NULL);

	(void)state;
	assert_int_equal(count(c, none), 1);
	assert_int_equal(count(f, none), 0);
	assert_int_equal(count(l, none), 0);
	/* tcg-6.1.json lists two */
	assert_int_equal(count(f, "<li class=\"limitation\">"), 2);
}

/* A rule's counts in words, singular for exactly one (README: the attrs it
 * covers, `refuted_before`): the HTML section and the text view agree. */
static void test_rule_counts_singular_plural(void **state)
{
	static const struct {
		int attrs, refuted;
		const char *html_attrs, *html_refuted, *text;
	} cases[] = {
		{ 1, 1, "GUEST_CRASH on 1 attr,", "<span class=\"refuted\">1 rule refuted before it</span>",
		  "GUEST_CRASH on 1 attr, 18 cells" },
		{ 2, 2, "GUEST_CRASH on 2 attrs,", "<span class=\"refuted\">2 rules refuted before it</span>",
		  "GUEST_CRASH on 2 attrs, 18 cells" },
		{ 0, 0, "GUEST_CRASH on 0 attrs,", "<span class=\"refuted\">0 rules refuted before it</span>",
		  "GUEST_CRASH on 0 attrs, 18 cells" },
	};

	(void)state;
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) sets = load("matrix", "rule-6.18", NULL);
		struct result_set *set = sets->pdata[0];
		json_t *rule = json_array_get(json_object_get(set->extra, "rules"), 0);
		g_autofree char *html = NULL, *text = NULL;

		json_object_set_new(rule, "attrs", json_integer(cases[i].attrs));
		json_object_set_new(rule, "refuted_before", json_integer(cases[i].refuted));
		html = render(REPORT_HTML, sets, NULL);
		text = render(REPORT_TEXT, sets, NULL);
		if (!strstr(html, cases[i].html_attrs) || !strstr(html, cases[i].html_refuted))
			fail_msg("case %zu: html lacks '%s' or '%s'", i, cases[i].html_attrs,
				 cases[i].html_refuted);
		if (!strstr(text, cases[i].text))
			fail_msg("case %zu: text lacks '%s'", i, cases[i].text);
	}
}

/* README: a tile is coloured by the worst outcome class among its cells;
 * the legend (plain HTML, read without the script) shows a swatch for
 * every class, each harm kind, the baseline's frame and the known
 * erratum, and names the modifier classes. */
static void test_html_legend(void **state)
{
	static const char *const swatches[] = {
		"<span class=\"sw c-ok\">", "<span class=\"sw c-errno\">",
		"<span class=\"sw c-infra\">", "<span class=\"sw c-rejected\">",
		"<span class=\"sw c-harm o-GUEST_CRASH\">", "<span class=\"sw c-harm o-HOST_HANG\">",
		"regression against the baseline", "known erratum", "no cell",
	};
	g_autoptr(GPtrArray) sets = load("matrix", "ivb-3.6", NULL);
	g_autofree char *html = render(REPORT_HTML, sets, NULL);
	const char *legend = strstr(html, "<h2>Legend</h2>");

	(void)state;
	assert_non_null(legend);
	for (size_t i = 0; i < G_N_ELEMENTS(swatches); i++)
		if (!strstr(legend, swatches[i]))
			fail_msg("the legend lacks %s", swatches[i]);
	assert_non_null(strstr(legend, "modifier classes:"));
}

/* A well-formedness check with GLib's XML parser. */
static void xml_check(const char *xml)
{
	g_autoptr(GError) err = NULL;
	static const GMarkupParser parser = { 0 };
	GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, NULL, NULL);
	const char *body = strstr(xml, "?>");
	gboolean ok;

	assert_non_null(body);
	ok = g_markup_parse_context_parse(ctx, body + 2, -1, &err) &&
	     g_markup_parse_context_end_parse(ctx, &err);
	g_markup_parse_context_free(ctx);
	if (!ok)
		fail_msg("not well-formed XML: %s", err->message);
}

static void test_junit(void **state)
{
	g_autofree char *path = g_strdup_printf("%s/scenarios/errata.ini", top_dir);
	g_autoptr(errata_set) e = NULL;
	g_autoptr(GPtrArray) sets = load("matrix", "ivb-3.6", "hsw-3.6", "amd-3.6", "xss", NULL);
	struct report_options o = { 0 };
	g_autofree char *plain = NULL, *known = NULL;

	plain = render(REPORT_JUNIT, sets, NULL);
	xml_check(plain);
	assert_non_null(strstr(plain, "<testsuites name=\"pmucanary\" tests=\"10\" failures=\"4\" "
				      "errors=\"1\" skipped=\"0\">"));
	assert_non_null(strstr(plain, "<testcase classname=\"3.6.11.perf-3.6\" name=\"cycles:pp\""));
	assert_non_null(strstr(plain, "<failure message=\"GUEST_CRASH 3/3\" type=\"GUEST_CRASH\">"));
	assert_non_null(strstr(plain, "<error message=\"INFRA: could not test\" type=\"INFRA\">"));
	assert_null(strstr(plain, "<script"));

	assert_int_equal(errata_load(path, &e), 0);
	o.errata = e;
	known = render(REPORT_JUNIT, sets, &o);
	xml_check(known);
	assert_non_null(strstr(known, "tests=\"10\" failures=\"2\" errors=\"1\" skipped=\"2\">"));
	assert_non_null(strstr(known, "<skipped message=\"known erratum intel-pebs-2012: "
				      "GUEST_CRASH 3/3"));
	/* The limitation lines go with each suite. */
	{
		g_autoptr(GPtrArray) tcg = load("matrix", "tcg-6.1", NULL);
		g_autofree char *t = render(REPORT_JUNIT, tcg, NULL);

		xml_check(t);
		assert_non_null(strstr(t, "<property name=\"limitation\" value=\"accel is tcg:"));
		assert_non_null(strstr(t, "tests=\"4\" failures=\"0\" errors=\"0\""));
	}
}

/* A cell whose CPUs disagree: every CPU's outcome is in the JUnit text,
 * the first CPU's too. */
static void test_junit_per_cpu(void **state)
{
	g_autoptr(GPtrArray) sets = load("matrix", "ivb-3.6", NULL);
	struct result_set *set = sets->pdata[0];
	g_autofree char *junit = NULL;
	bool marked = false;

	(void)state;
	for (guint i = 0; i < set->cells->len && !marked; i++) {
		struct cell *c = set->cells->pdata[i];
		struct cell_cpu cc[] = { { .cpu = 0, .outcome = OUTCOME_EBUSY },
					 { .cpu = 1, .outcome = OUTCOME_OK } };

		if (!outcome_is_harm(c->outcome))
			continue;
		g_array_set_size(c->per_cpu, 0);
		g_array_append_vals(c->per_cpu, cc, G_N_ELEMENTS(cc));
		marked = true;
	}
	assert_true(marked);
	junit = render(REPORT_JUNIT, sets, NULL);
	xml_check(junit);
	assert_non_null(strstr(junit, "cpu0: EBUSY\ncpu1: OK\n"));
}

/* A harm judged by a proven rule (isolate = rule) fails JUnit as any
 * harm, and JUnit and KCIDB name the rule instead of a k/n it lacks. */
static void test_rule_covered(void **state)
{
	g_autoptr(GPtrArray) sets = load("matrix", "ivb-3.6", NULL);
	struct result_set *set = sets->pdata[0];
	g_autofree char *junit = NULL, *kcidb = NULL;
	bool marked = false;

	for (guint i = 0; i < set->cells->len; i++) {
		struct cell *c = set->cells->pdata[i];

		if (!outcome_is_harm(c->outcome) || marked)
			continue;
		c->k = c->n = 0;
		json_decref(c->extra);
		c->extra = json_pack("{s:s,s:s}", "judged", "rule", "rule", "precise_ip>0 exclude_guest=0");
		marked = true;
	}
	assert_true(marked);
	junit = render(REPORT_JUNIT, sets, NULL);
	xml_check(junit);
	assert_non_null(strstr(junit, "<failure message=\"GUEST_CRASH by rule precise_ip&gt;0 "
				      "exclude_guest=0\" type=\"GUEST_CRASH\">"));
	assert_non_null(strstr(junit, "judged by rule precise_ip&gt;0 exclude_guest=0"));
	kcidb = render(REPORT_KCIDB, sets, NULL);
	assert_int_equal(count(kcidb, "\"rule\": \"precise_ip>0 exclude_guest=0\""), 1);
}

/* A run with a proven rule (tests/data/matrix/rule-6.18.json: a runner's
 * run.json, fake guests crashing on every task-clock attr; its one rule
 * covers 17 attrs, 18 cells: 5 armed alone, 13 not, a sample of 4 at 2/2,
 * no rule refuted before it): every writer states the rule before any
 * cell. */
static void test_rule_first(void **state)
{
	g_autoptr(GPtrArray) sets = load("matrix", "rule-6.18", NULL);
	g_autofree char *html = render(REPORT_HTML, sets, NULL);
	g_autofree char *junit = render(REPORT_JUNIT, sets, NULL);
	g_autofree char *kcidb = render(REPORT_KCIDB, sets, NULL);
	g_autofree char *text = render(REPORT_TEXT, sets, NULL);
	const char *rules = strstr(html, "<div id=\"rules\">");
	json_t *k, *rule;

	assert_non_null(rules);
	assert_true(rules < strstr(html, "<div id=\"findings\">"));
	assert_true(rules < strstr(html, "<div id=\"heatmap\">"));
	assert_non_null(strstr(rules, "<li class=\"rule\" data-cells=\"18\" data-by-rule=\"13\">"
				      "<code class=\"rule-text\">type=software config=task-clock</code>: "
				      "GUEST_CRASH on 17 attrs, <span class=\"rule-cells\">18 cells (13 "
				      "judged by the rule, not armed alone; 5 armed alone)</span>, input "
				      "<code>"));
	assert_non_null(strstr(rules, "; <span class=\"refuted\">0 rules refuted before it</span>"));
	assert_int_equal(count(html, "<li class=\"sample\">sample <code>type=1 "), 4);
	assert_int_equal(count(html, " GUEST_CRASH k/n 2/2</li>"), 4);
	/* the 13 cells it judged carry it to the drill-down (one string) */
	assert_int_equal(count(html, ",\"r\":"), 13);

	xml_check(junit);
	assert_non_null(strstr(junit, "<property name=\"rule\" value=\"type=software config=task-clock: "
				      "GUEST_CRASH on 17 attrs, 18 cells (13 judged by the rule, not armed "
				      "alone; 5 armed alone); sample type=1 "));
	assert_true(strstr(junit, "<property name=\"rule\"") < strstr(junit, "<testcase"));
	assert_int_equal(count(junit, "<failure message=\"GUEST_CRASH by rule type=software "
				      "config=task-clock\""), 13);

	k = json_loads(kcidb, 0, NULL);
	assert_non_null(k);
	rule = json_array_get(json_object_get(json_object_get(json_array_get(json_object_get(k, "builds"),
									      0), "misc"), "rules"), 0);
	assert_string_equal(json_string_value(json_object_get(rule, "text")),
			    "type=software config=task-clock");
	assert_int_equal(json_integer_value(json_object_get(rule, "cells")), 18);
	assert_int_equal(json_integer_value(json_object_get(rule, "judged_by_rule")), 13);
	assert_int_equal(json_integer_value(json_object_get(rule, "attrs")), 17);
	assert_int_equal(json_array_size(json_object_get(rule, "sample")), 4);
	json_decref(k);
	assert_true(strstr(kcidb, "\"builds\"") < strstr(kcidb, "\"tests\""));

	assert_true(strstr(text, "harm explained by a rule") < strstr(text, "HARM (no known erratum"));
	assert_non_null(strstr(text, "\n  [1] type=software config=task-clock: GUEST_CRASH on 17 attrs, "
				     "18 cells (13 judged by the rule, not armed alone; 5 armed alone); "
				     "sample type=1 "));
	assert_non_null(strstr(text, "perf-3.6 task-clock:u: GUEST_CRASH judged by rule "
				     "type=software config=task-clock (not armed alone) [cpu "));
}

/* A rule text from a hostile result file: markup, quotes, U+FFFE and an
 * escape byte come out as text in every writer. */
static void test_rule_hostile(void **state)
{
	static const char evil[] = "<script>alert(9)</script> \"q\" 'a' \xef\xbf\xbe \x1b[2J";
	g_autoptr(GPtrArray) sets = load("matrix", "rule-6.18", NULL);
	struct result_set *set = sets->pdata[0];
	g_autofree char *html = NULL, *junit = NULL, *kcidb = NULL, *text = NULL;
	json_t *k;

	for (guint i = 0; i < set->cells->len; i++) {
		struct cell *c = set->cells->pdata[i];

		if (c->extra && json_object_get(c->extra, "rule"))
			json_object_set_new(c->extra, "rule", json_string(evil));
	}
	json_object_set_new(json_array_get(json_object_get(set->extra, "rules"), 0), "text",
			    json_string(evil));
	html = render(REPORT_HTML, sets, NULL);
	assert_int_equal(count(html, "alert(9)"), 2); /* the section, the page's data */
	assert_non_null(strstr(html, "<code class=\"rule-text\">&lt;script&gt;alert(9)&lt;/script&gt; "
				     "&quot;q&quot; &#39;a&#39; &#xfffd; &#xfffd;[2J</code>"));
	assert_non_null(strstr(html, "\"\\u003cscript\\u003ealert(9)\\u003c/script\\u003e \\\"q\\\" 'a' "
				     "\\ufffe \\u001B[2J\""));
	assert_null(strstr(html, "<script>alert"));
	assert_null(strstr(html, "\xef\xbf\xbe"));
	assert_null(strchr(html, '\x1b'));

	junit = render(REPORT_JUNIT, sets, NULL);
	xml_check(junit);
	assert_non_null(strstr(junit, "<property name=\"rule\" value=\"&lt;script&gt;alert(9)&lt;/script&gt; "
				      "&quot;q&quot; &#39;a&#39; \\u{fffe} \\x1b[2J: GUEST_CRASH"));
	assert_null(strstr(junit, "<script>"));

	kcidb = render(REPORT_KCIDB, sets, NULL);
	k = json_loads(kcidb, 0, NULL);
	assert_non_null(k);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(
		json_object_get(json_array_get(json_object_get(k, "builds"), 0), "misc"), "rules"), 0),
		"text")), evil);
	json_decref(k);

	text = render(REPORT_TEXT, sets, NULL);
	assert_null(strchr(text, '\x1b'));
	assert_non_null(strstr(text, "\n  [1] <script>alert(9)</script> \"q\" 'a' \xef\xbf\xbe \\x1b[2J: "
				     "GUEST_CRASH on 17 attrs"));
}

/* diff's variant: against a baseline, an ABI regression fails. */
static void test_junit_baseline(void **state)
{
	g_autoptr(GPtrArray) base = load("diff", "probe-3.6", NULL);
	g_autoptr(GPtrArray) new = load("diff", "probe-3.7", NULL);
	struct report_options o = { .base = base->pdata[0], .base_name = "probe-3.6.json" };
	g_autofree char *xml = render(REPORT_JUNIT, new, &o);
	struct report_summary sum;

	xml_check(xml);
	assert_int_equal(count(xml, "<failure message=\"regression against the baseline "
				    "(ABI regressions): OK -&gt; EOPNOTSUPP\" type=\"abi_regression\">"),
			 2);
	assert_int_equal(report_summarize((const struct result_set *const *)new->pdata, 1, &o,
					  &sum), 0);
	assert_int_equal(sum.regressions, 2);
	assert_int_equal(sum.harm, 0);

	/* A baseline cell is found by (profile, spec), as `pmucanary diff`
	 * finds it, whether or not the file recorded its attr: the same two
	 * regressions when no baseline cell has one (only a spec the profile
	 * rejected, with its error, is no tested cell). */
	{
		struct result_set *b = base->pdata[0];
		g_autofree char *bare = NULL;

		for (guint i = 0; i < b->cells->len; i++)
			((struct cell *)b->cells->pdata[i])->has_attr = false;
		bare = render(REPORT_JUNIT, new, &o);
		assert_int_equal(count(bare, "<failure message=\"regression against the baseline "
					      "(ABI regressions): OK -&gt; EOPNOTSUPP\""), 2);
		assert_int_equal(report_summarize((const struct result_set *const *)new->pdata, 1,
						  &o, &sum), 0);
		assert_int_equal(sum.regressions, 2);
	}
}

static void need_str(json_t *o, const char *key, const char *pattern, const char *what)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		fail_msg("%s: required \"%s\" missing or not a string", what, key);
	if (pattern && !g_regex_match_simple(pattern, json_string_value(v), 0, 0))
		fail_msg("%s: \"%s\" = '%s' does not match %s", what, key, json_string_value(v),
			 pattern);
}

static void no_nulls(json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	assert_false(json_is_null(v));
	if (json_is_object(v))
		json_object_foreach(v, k, x) no_nulls(x);
	if (json_is_array(v))
		json_array_foreach(v, i, x) no_nulls(x);
}

#define ORIGIN_ID "^[a-z0-9_]+:.*$"

static void test_kcidb(void **state)
{
	g_autofree char *path = g_strdup_printf("%s/scenarios/errata.ini", top_dir);
	g_autoptr(errata_set) e = NULL;
	g_autoptr(GPtrArray) sets = load("matrix", "ivb-3.6", "hsw-3.6", "tcg-6.1", "xss", NULL);
	struct report_options o = { 0 };
	g_autofree char *text = NULL;
	json_t *root, *tests, *t;
	json_error_t jerr;
	size_t i;
	GHashTable *build_ids = g_hash_table_new(g_str_hash, g_str_equal);
	GHashTable *checkout_ids = g_hash_table_new(g_str_hash, g_str_equal);
	unsigned int status[6] = { 0 }, waived = 0;
	static const char *const statuses[] = { "FAIL", "ERROR", "MISS", "PASS", "DONE", "SKIP" };

	assert_int_equal(errata_load(path, &e), 0);
	o.errata = e;
	text = render(REPORT_KCIDB, sets, &o);
	root = json_loads(text, 0, &jerr);
	assert_non_null(root);
	no_nulls(root);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "version"),
							    "major")), 5);
	assert_true(json_is_integer(json_object_get(json_object_get(root, "version"), "minor")));

	json_array_foreach(json_object_get(root, "checkouts"), i, t) {
		need_str(t, "id", ORIGIN_ID, "checkout");
		need_str(t, "origin", "^[a-z0-9_]+$", "checkout");
		g_hash_table_add(checkout_ids, (char *)json_string_value(json_object_get(t, "id")));
	}
	assert_int_equal(g_hash_table_size(checkout_ids), 3);
	json_array_foreach(json_object_get(root, "builds"), i, t) {
		need_str(t, "id", ORIGIN_ID, "build");
		need_str(t, "origin", "^[a-z0-9_]+$", "build");
		need_str(t, "checkout_id", ORIGIN_ID, "build");
		assert_true(g_hash_table_contains(checkout_ids,
			json_string_value(json_object_get(t, "checkout_id"))));
		g_hash_table_add(build_ids, (char *)json_string_value(json_object_get(t, "id")));
	}
	assert_int_equal(g_hash_table_size(build_ids), 4);
	tests = json_object_get(root, "tests");
	assert_int_equal(json_array_size(tests), 12);
	json_array_foreach(tests, i, t) {
		const char *st;
		json_t *excerpt = json_object_get(t, "log_excerpt");

		need_str(t, "id", ORIGIN_ID, "test");
		need_str(t, "origin", "^[a-z0-9_]+$", "test");
		need_str(t, "build_id", ORIGIN_ID, "test");
		need_str(t, "path", "^([a-zA-Z0-9_-]+(\\.[a-zA-Z0-9_-]+)*)?$", "test");
		need_str(t, "status", "^(FAIL|ERROR|MISS|PASS|DONE|SKIP)$", "test");
		assert_true(g_hash_table_contains(build_ids,
			json_string_value(json_object_get(t, "build_id"))));
		assert_true(!excerpt || strlen(json_string_value(excerpt)) <= 16384);
		st = json_string_value(json_object_get(t, "status"));
		for (int s = 0; s < 6; s++)
			status[s] += !strcmp(st, statuses[s]);
		waived += json_is_true(json_object_get(t, "waived"));
	}
	/* ivb+hsw: 2 known errata (FAIL, waived), INFRA -> ERROR; xss: 1 harm;
	 * tcg: cycles:S rejected -> SKIP. */
	assert_int_equal(status[0], 3);
	assert_int_equal(waived, 2);
	assert_int_equal(status[1], 1);
	assert_int_equal(status[5], 1);
	assert_int_equal(status[3], 7);

	t = json_array_get(tests, 0);
	assert_string_equal(json_string_value(json_object_get(t, "path")),
			    "pmucanary.perf-3_6.cycles.pp");
	assert_string_equal(json_string_value(json_object_get(t, "id")),
			    "pmucanary:ivb-3.6:perf-3.6:cycles:pp");
	assert_string_equal(json_string_value(json_object_get(json_object_get(t, "misc"),
							      "known_erratum")),
			    "intel-pebs-2012");
	json_decref(root);
	g_hash_table_unref(build_ids);
	g_hash_table_unref(checkout_ids);

	/* The origin must be a KCIDB origin name. */
	{
		struct report_options bad = { .origin = "Bad-Origin" };
		g_autoptr(GString) out = g_string_new(NULL);

		assert_int_equal(report_render(REPORT_KCIDB,
					       (const struct result_set *const *)sets->pdata,
					       sets->len, &bad, out), -EINVAL);
		assert_non_null(strstr(pc_errmsg(), "Bad-Origin"));
	}
}

/* One test's misc and its build's misc, by hand from the result files:
 * what a KCIDB dashboard filters on. */
static json_t *kcidb_doc(GPtrArray *sets, const struct report_options *o)
{
	g_autofree char *text = render(REPORT_KCIDB, sets, o);
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr);

	if (!root)
		fail_msg("KCIDB is no JSON: %s", jerr.text);
	return root;
}

static void test_kcidb_fields(void **state)
{
	g_autoptr(GPtrArray) sets = load("matrix", "tcg-6.1", NULL);
	struct result_set *set = sets->pdata[0];
	json_t *root, *lim, *misc, *t;
	size_t i;
	bool eperm = false;

	/* Every limitation of the run, in its order, in its build. */
	assert_int_equal(set->limitations->len, 2);
	root = kcidb_doc(sets, NULL);
	lim = json_object_get(json_object_get(json_array_get(json_object_get(root, "builds"), 0),
					      "misc"), "limitations");
	assert_int_equal(json_array_size(lim), 2);
	assert_true(g_str_has_prefix(json_string_value(json_array_get(lim, 0)), "accel is tcg: "));
	assert_true(g_str_has_prefix(json_string_value(json_array_get(lim, 1)),
				     "no hardware PMU on this host: "));
	/* The file's CPU: family 25, model 1, stepping 1 (tcg-6.1.json). */
	misc = json_object_get(json_object_get(json_array_get(json_object_get(root, "tests"), 0),
					       "environment"), "misc");
	assert_int_equal(json_integer_value(json_object_get(misc, "cpu_family")), 25);
	assert_int_equal(json_integer_value(json_object_get(misc, "cpu_model")), 1);
	assert_int_equal(json_integer_value(json_object_get(misc, "cpu_stepping")), 1);
	json_decref(root);

	/* An unknown model is left out, not -1; an errno outcome carries its
	 * number, EPERM's 1 too (asm-generic/errno-base.h). */
	json_object_set_new(json_object_get(set->host, "cpu"), "model", json_null());
	/* stepping 0 is a stepping (many a CPU's first), not "unknown" */
	json_object_set_new(json_object_get(set->host, "cpu"), "stepping", json_integer(0));
	((struct cell *)set->cells->pdata[0])->outcome = OUTCOME_EPERM;
	root = kcidb_doc(sets, NULL);
	json_array_foreach(json_object_get(root, "tests"), i, t) {
		misc = json_object_get(json_object_get(t, "environment"), "misc");
		assert_null(json_object_get(misc, "cpu_model"));
		assert_int_equal(json_integer_value(json_object_get(misc, "cpu_family")), 25);
		assert_true(json_is_integer(json_object_get(misc, "cpu_stepping")));
		assert_int_equal(json_integer_value(json_object_get(misc, "cpu_stepping")), 0);
		misc = json_object_get(t, "misc");
		if (!strcmp(json_string_value(json_object_get(misc, "outcome")), "EPERM")) {
			eperm = true;
			assert_int_equal(json_integer_value(json_object_get(misc, "errno")), 1);
		} else if (!strcmp(json_string_value(json_object_get(misc, "outcome")), "OK")) {
			assert_null(json_object_get(misc, "errno"));
		}
	}
	assert_true(eperm);
	json_decref(root);

	/* A run that recorded no kernel release is "unknown", whether the
	 * field is missing or empty: never a checkout named "kernel-". */
	{
		char *saved = set->kernel;
		char *const names[] = { NULL, "" };
		json_t *co;

		for (i = 0; i < G_N_ELEMENTS(names); i++) {
			set->kernel = names[i];
			root = kcidb_doc(sets, NULL);
			co = json_array_get(json_object_get(root, "checkouts"), 0);
			assert_string_equal(json_string_value(json_object_get(co, "id")),
					    "pmucanary:kernel-unknown");
			assert_string_equal(json_string_value(json_object_get(
					json_object_get(co, "misc"), "kernel_release")), "unknown");
			json_decref(root);
		}
		set->kernel = saved;
	}

	/* An origin is [a-z0-9_]+: one or more. */
	{
		struct report_options empty = { .origin = "" };
		g_autoptr(GString) out = g_string_new(NULL);

		assert_int_equal(report_render(REPORT_KCIDB,
					       (const struct result_set *const *)sets->pdata,
					       sets->len, &empty, out), -EINVAL);
	}
}

/* Each CPU part is reported when known, 0 included (family, model and
 * stepping 0 are real parts), left out when unknown; a text member whose
 * value is empty (no accel, no creation time, no vendor) is left out, as
 * a null would be: no "" value anywhere in the document. */
static void no_empty_strings(json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_string(v) && !*json_string_value(v))
		fail_msg("an empty string in the KCIDB document");
	if (json_is_object(v))
		json_object_foreach(v, k, x) no_empty_strings(x);
	if (json_is_array(v))
		json_array_foreach(v, i, x) no_empty_strings(x);
}

static void test_kcidb_cpu_parts_and_empty_text(void **state)
{
	static const char *const parts[] = { "family", "model", "stepping" };

	(void)state;
	for (size_t p = 0; p < G_N_ELEMENTS(parts); p++) {
		g_autoptr(GPtrArray) sets = load("matrix", "tcg-6.1", NULL);
		struct result_set *set = sets->pdata[0];
		g_autofree char *key = g_strdup_printf("cpu_%s", parts[p]);
		json_t *root, *t;
		size_t i;

		json_object_set_new(json_object_get(set->host, "cpu"), parts[p], json_integer(0));
		root = kcidb_doc(sets, NULL);
		json_array_foreach(json_object_get(root, "tests"), i, t) {
			json_t *v = json_object_get(json_object_get(json_object_get(t, "environment"),
								   "misc"), key);

			if (!json_is_integer(v) || json_integer_value(v) != 0)
				fail_msg("%s 0 is not reported as 0", key);
		}
		json_decref(root);
	}
	{
		g_autoptr(GPtrArray) sets = load("matrix", "tcg-6.1", NULL);
		struct result_set *set = sets->pdata[0];
		json_t *root, *t;
		size_t i;

		g_free(set->accel);
		set->accel = g_strdup("");
		g_free(set->created);
		set->created = g_strdup("");
		json_object_set_new(json_object_get(set->host, "cpu"), "vendor", json_string(""));
		root = kcidb_doc(sets, NULL);
		no_empty_strings(root);
		json_array_foreach(json_object_get(root, "tests"), i, t) {
			assert_null(json_object_get(t, "start_time"));
			assert_null(json_object_get(json_object_get(json_object_get(t, "environment"),
								    "misc"), "accel"));
			assert_null(json_object_get(json_object_get(json_object_get(t, "environment"),
								    "misc"), "cpu_vendor"));
		}
		json_decref(root);
	}
}

static void test_write(void **state)
{
	g_autoptr(GPtrArray) sets = load("diff", "run-3.6", NULL);
	g_autofree char *dir = g_dir_make_tmp("report-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "junit.xml", NULL);
	g_autofree char *bad = g_build_filename(dir, "no/such/dir/junit.xml", NULL);
	g_autofree char *text = NULL;

	assert_int_equal(report_write(REPORT_JUNIT, (const struct result_set *const *)sets->pdata,
				      1, NULL, path), 0);
	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	xml_check(text);
	assert_int_equal(report_write(REPORT_JUNIT, (const struct result_set *const *)sets->pdata,
				      1, NULL, bad), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "no/such/dir"));
	assert_int_equal(report_write(REPORT_HTML, NULL, 0, NULL, path), -EINVAL);
	unlink(path);
	rmdir(dir);
}

/* A cell that names no kernel of its own (or an empty one) was measured
 * under its file's kernel: KCIDB matches errata against that release, as
 * the matrix and JUnit do (ivb-3.6's cycles:pp crash is the 2012 PEBS
 * erratum under 3.6.11). */
static void test_kcidb_cell_without_kernel(void **state)
{
	g_autofree char *path = g_strdup_printf("%s/scenarios/errata.ini", top_dir);
	g_autoptr(errata_set) e = NULL;
	struct report_options o = { 0 };

	(void)state;
	assert_int_equal(errata_load(path, &e), 0);
	o.errata = e;
	for (int empty = 0; empty < 2; empty++) {
		g_autoptr(GPtrArray) sets = load("matrix", "ivb-3.6", NULL);
		struct result_set *set = sets->pdata[0];
		g_autofree char *junit = NULL;
		json_t *root, *t;
		unsigned int known = 0;
		size_t i;

		for (guint c = 0; c < set->cells->len; c++) {
			struct cell *cell = set->cells->pdata[c];

			g_free(cell->kernel);
			cell->kernel = empty ? g_strdup("") : NULL;
		}
		root = kcidb_doc(sets, &o);
		json_array_foreach(json_object_get(root, "tests"), i, t) {
			const char *k = json_string_value(json_object_get(json_object_get(t, "misc"),
									  "known_erratum"));

			if (k && !strcmp(k, "intel-pebs-2012") && json_is_true(json_object_get(t, "waived")))
				known++;
		}
		json_decref(root);
		assert_int_equal(known, 1);
		junit = render(REPORT_JUNIT, sets, &o);
		assert_non_null(strstr(junit, "known erratum intel-pebs-2012"));
	}
}

int main(void)
{
	g_autofree char *top = test_top_dir();

	snprintf(top_dir, sizeof(top_dir), "%s", top);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_html_no_injection),
		cmocka_unit_test(test_verdict_names),
		cmocka_unit_test(test_html_compact),
		cmocka_unit_test(test_html_tries_fields),
		cmocka_unit_test(test_html_event_half),
		cmocka_unit_test(test_html_legend),
		cmocka_unit_test(test_html_no_limitation_line),
		cmocka_unit_test(test_rule_counts_singular_plural),
		cmocka_unit_test(test_junit),
		cmocka_unit_test(test_junit_per_cpu),
		cmocka_unit_test(test_junit_baseline),
		cmocka_unit_test(test_rule_covered),
		cmocka_unit_test(test_rule_first),
		cmocka_unit_test(test_rule_hostile),
		cmocka_unit_test(test_kcidb),
		cmocka_unit_test(test_kcidb_fields),
		cmocka_unit_test(test_kcidb_cpu_parts_and_empty_text),
		cmocka_unit_test(test_kcidb_cell_without_kernel),
		cmocka_unit_test(test_write),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
