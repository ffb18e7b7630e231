/* Tests for lib/diff over the fixture result files in tests/data/diff:
 * the 2012 PEBS story (crash on 3.6, EOPNOTSUPP regression on 3.7, the
 * fix), every group, every verdict and bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "diff.h"
#include "log.h"
#include "results.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char data_dir[4096];

static char *fixture(const char *name)
{
	return g_strdup_printf("%s/%s.json", data_dir, name);
}

/* Loads and compares two fixtures; fails the test on error. */
static struct diff_result *compare(const char *base, const char *new)
{
	g_autofree char *bp = fixture(base), *np = fixture(new);
	g_autoptr(result_set) b = NULL;
	g_autoptr(result_set) n = NULL;
	struct diff_result *res = NULL;

	if (results_read_json(bp, &b) < 0 || results_read_json(np, &n) < 0 ||
	    diff_compare(b, base, n, new, &res) < 0)
		fail_msg("%s vs %s: %s", base, new, pc_errmsg());
	return res;
}

static const struct diff_cell *find_cell(const struct diff_result *res, const char *profile,
					 const char *spec)
{
	for (guint i = 0; i < res->cells->len; i++) {
		const struct diff_cell *c = res->cells->pdata[i];
		if (strcmp(c->profile, profile) == 0 && strcmp(c->spec, spec) == 0)
			return c;
	}
	fail_msg("no cell (%s, %s)", profile, spec);
	return NULL;
}

static void test_classify_table(void **state)
{
	assert_int_equal(diff_classify(OUTCOME_OK, OUTCOME_OK), DIFF_UNCHANGED);
	assert_int_equal(diff_classify(OUTCOME_OK, OUTCOME_EOPNOTSUPP), DIFF_ABI_REGRESSION);
	assert_int_equal(diff_classify(OUTCOME_OK, OUTCOME_GUEST_CRASH), DIFF_HARM_REGRESSION);
	assert_int_equal(diff_classify(OUTCOME_EINVAL, OUTCOME_HOST_WARN), DIFF_HARM_REGRESSION);
	assert_int_equal(diff_classify(OUTCOME_GUEST_CRASH, OUTCOME_OK), DIFF_FIXED);
	assert_int_equal(diff_classify(OUTCOME_GUEST_CRASH, OUTCOME_EOPNOTSUPP), DIFF_FENCED);
	assert_int_equal(diff_classify(OUTCOME_ENOENT, OUTCOME_OK), DIFF_NEW_CAPABILITY);
	assert_int_equal(diff_classify(OUTCOME_EINVAL, OUTCOME_EOPNOTSUPP), DIFF_CHANGED_ERRNO);
	assert_int_equal(diff_classify(OUTCOME_EINVAL, OUTCOME_EINVAL), DIFF_UNCHANGED);
	assert_int_equal(diff_classify(OUTCOME_GUEST_CRASH, OUTCOME_GUEST_HANG), DIFF_STILL_HARMFUL);
	assert_int_equal(diff_classify(OUTCOME_OK, OUTCOME_INFRA), DIFF_UNTESTED);
	assert_int_equal(diff_classify(OUTCOME_INFRA, OUTCOME_GUEST_CRASH), DIFF_UNTESTED);
	assert_int_equal(diff_classify(OUTCOME_OK, OUTCOME_COUNT), DIFF_ONLY_BASE);
	assert_int_equal(diff_classify(OUTCOME_COUNT, OUTCOME_OK), DIFF_ONLY_NEW);
	/* The profile's parser is no kernel verdict, on either side. */
	assert_int_equal(diff_classify(OUTCOME_OK, OUTCOME_REJECTED), DIFF_REJECTED);
	assert_int_equal(diff_classify(OUTCOME_REJECTED, OUTCOME_GUEST_CRASH), DIFF_REJECTED);
	assert_int_equal(diff_classify(OUTCOME_INFRA, OUTCOME_REJECTED), DIFF_REJECTED);
	assert_int_equal(diff_classify(OUTCOME_REJECTED, OUTCOME_REJECTED), DIFF_UNCHANGED);
	assert_int_equal(diff_classify(OUTCOME_REJECTED, OUTCOME_COUNT), DIFF_REJECTED);
	assert_int_equal(diff_classify(OUTCOME_COUNT, OUTCOME_REJECTED), DIFF_REJECTED);
	assert_false(diff_group_fails(DIFF_REJECTED));
	assert_true(diff_group_fails(DIFF_ABI_REGRESSION));
	assert_true(diff_group_fails(DIFF_HARM_REGRESSION));
	assert_false(diff_group_fails(DIFF_FENCED));
	assert_string_equal(diff_group_name(DIFF_FENCED), "fenced");
	assert_string_equal(diff_verdict_name(DIFF_VERDICT_CANNOT_TELL), "CANNOT_TELL");
	assert_int_equal(diff_verdict_exit_code(DIFF_VERDICT_CLEAN), 0);
	assert_int_equal(diff_verdict_exit_code(DIFF_VERDICT_REGRESSION), 1);
	assert_int_equal(diff_verdict_exit_code(DIFF_VERDICT_CANNOT_TELL), 125);
}

/* 3.6 -> 3.7 with no guests: perf 3.6's cycles:pp (no exclude_guest) now
 * gets EOPNOTSUPP: the ABI regression that was reverted before 3.8. */
static void test_2012_abi_regression(void **state)
{
	g_autoptr(diff_result) res = compare("probe-3.6", "probe-3.7");
	const struct diff_cell *c = find_cell(res, "perf-3.6", "cycles:pp");

	assert_int_equal(c->base, OUTCOME_OK);
	assert_int_equal(c->new, OUTCOME_EOPNOTSUPP);
	assert_int_equal(c->group, DIFF_ABI_REGRESSION);
	/* perf 3.7 sets exclude_guest for :pp and keeps working. */
	assert_int_equal(find_cell(res, "perf-3.7", "cycles:pp")->group, DIFF_UNCHANGED);
	assert_int_equal(find_cell(res, "perf-3.6", "instructions:ppp")->group, DIFF_CHANGED_ERRNO);
	assert_int_equal(res->count[DIFF_ABI_REGRESSION], 2);
	assert_int_equal(diff_result_verdict(res), DIFF_VERDICT_REGRESSION);
	/* The profile rejected cycles:S on both sides: not a tested cell. */
	assert_int_equal(res->base.rejected, 1);
	assert_int_equal(res->base.cells, 6);
	assert_string_equal(res->base.kernel, "3.6.11");
	assert_string_equal(res->new.kernel, "3.7.0");
}

/* With guests: 3.6 crashes them; 3.7 fences the crash with EOPNOTSUPP (a
 * fix, not a failure); 3.8 fixes it. */
static void test_2012_fenced(void **state)
{
	g_autoptr(diff_result) res = compare("run-3.6", "run-3.7");
	const struct diff_cell *c = find_cell(res, "perf-3.6", "cycles:pp");

	assert_int_equal(c->base, OUTCOME_GUEST_CRASH);
	assert_int_equal(c->base_k, 3);
	assert_int_equal(c->base_n, 3);
	assert_int_equal(c->group, DIFF_FENCED);
	assert_int_equal(diff_result_verdict(res), DIFF_VERDICT_CLEAN);
}

static void test_2012_fixed(void **state)
{
	g_autoptr(diff_result) res = compare("run-3.6", "run-3.8");

	assert_int_equal(find_cell(res, "perf-3.6", "cycles:pp")->group, DIFF_FIXED);
	assert_int_equal(res->count[DIFF_FIXED], 2);
	assert_int_equal(diff_result_verdict(res), DIFF_VERDICT_CLEAN);
}

static void test_2012_new_capability(void **state)
{
	g_autoptr(diff_result) res = compare("probe-3.7", "probe-3.8");

	assert_int_equal(find_cell(res, "perf-3.6", "cycles:pp")->group, DIFF_NEW_CAPABILITY);
	assert_int_equal(diff_result_verdict(res), DIFF_VERDICT_CLEAN);
}

static void test_harm_regression(void **state)
{
	g_autoptr(diff_result) res = compare("run-3.8", "run-3.8-harm");

	assert_int_equal(find_cell(res, "perf-3.6", "cycles")->group, DIFF_HARM_REGRESSION);
	assert_int_equal(find_cell(res, "perf-3.6", "instructions:ppp")->new, OUTCOME_HOST_WARN);
	assert_int_equal(res->count[DIFF_HARM_REGRESSION], 2);
	assert_int_equal(diff_result_verdict(res), DIFF_VERDICT_REGRESSION);
}

/* A harm judged by a proven rule (isolate = rule: no k/n of its own, the
 * rule in the cell) fails the gate as any harm, after a trip through
 * run.json. */
static void test_rule_covered_harm(void **state)
{
	g_autofree char *bp = fixture("run-3.8"), *np = fixture("run-3.8-harm");
	g_autoptr(result_set) b = NULL;
	g_autoptr(result_set) n = NULL;
	g_autoptr(result_set) back = NULL;
	g_autoptr(diff_result) res = NULL;
	json_t *j;
	bool marked = false;

	assert_int_equal(results_read_json(bp, &b), 0);
	assert_int_equal(results_read_json(np, &n), 0);
	for (guint i = 0; i < n->cells->len; i++) {
		struct cell *c = n->cells->pdata[i];

		if (!outcome_is_harm(c->outcome))
			continue;
		c->k = c->n = 0;
		c->extra = json_pack("{s:s,s:s}", "judged", "rule", "rule", "precise_ip>0 exclude_guest=0");
		marked = true;
	}
	assert_true(marked);
	j = results_to_json(n);
	assert_int_equal(results_from_json(j, "new.json", &back), 0);
	json_decref(j);
	for (guint i = 0; i < back->cells->len; i++) {
		const struct cell *c = back->cells->pdata[i];

		if (outcome_is_harm(c->outcome))
			assert_string_equal(results_cell_rule(c), "precise_ip>0 exclude_guest=0");
		else
			assert_null(results_cell_rule(c));
	}
	assert_int_equal(diff_compare(b, "run-3.8", back, "new", &res), 0);
	assert_int_equal(find_cell(res, "perf-3.6", "cycles")->group, DIFF_HARM_REGRESSION);
	assert_int_equal(diff_result_verdict(res), DIFF_VERDICT_REGRESSION);
	assert_int_equal(diff_verdict_exit_code(diff_result_verdict(res)), 1);
}

/* NEW's cycles harm judged by a rule BASE never proved: the rule is the
 * first thing the text says after the two sides, and the cell names it;
 * JSON carries both; a hostile rule text reaches the terminal escaped. A
 * rule BASE proved as well is not new. */
static void rule_new_side(struct result_set *n, const char *text)
{
	for (guint i = 0; i < n->cells->len; i++) {
		struct cell *c = n->cells->pdata[i];

		if (!strcmp(c->spec, "cycles")) {
			c->k = c->n = 0;
			if (!c->extra)
				c->extra = json_object();
			json_object_set_new(c->extra, "judged", json_string("rule"));
			json_object_set_new(c->extra, "rule", json_string(text));
		}
	}
	if (!n->extra)
		n->extra = json_object();
	json_object_set_new(n->extra, "rules",
			    json_pack("[{s:s,s:s,s:i,s:[{s:s,s:s,s:i,s:i}],s:i}]", "text", text,
				      "outcome", "GUEST_HANG", "attrs", 4, "sample", "attr",
				      "precise_ip=3", "outcome", "GUEST_HANG", "k", 3, "n", 3,
				      "refuted_before", 2));
}

static void test_new_rule_first(void **state)
{
	g_autofree char *bp = fixture("run-3.8"), *np = fixture("run-3.8-harm");
	g_autoptr(result_set) b = NULL;
	g_autoptr(result_set) n = NULL;
	g_autoptr(diff_result) res = NULL;
	g_autoptr(diff_result) same = NULL;
	g_autofree char *text = NULL;
	const char *rules, *harm;
	json_t *j, *cell = NULL, *c;
	size_t i;

	assert_int_equal(results_read_json(bp, &b), 0);
	assert_int_equal(results_read_json(np, &n), 0);
	rule_new_side(n, "precise_ip>0 \x1b[2J<b>");
	assert_int_equal(diff_compare(b, "run-3.8", n, "new", &res), 0);
	assert_int_equal(diff_result_verdict(res), DIFF_VERDICT_REGRESSION);
	text = diff_result_to_text(res);
	rules = strstr(text, "\nnew rules (1): ");
	harm = strstr(text, "\nharm regressions (2): ");
	assert_non_null(rules);
	assert_non_null(harm);
	assert_true(rules < harm);
	/* nothing but the two sides before it */
	assert_ptr_equal(strchr(strstr(text, "\nNEW  new: ") + 1, '\n'), rules - 1);
	assert_non_null(strstr(text, "\n  precise_ip>0 \\x1b[2J<b>: GUEST_HANG on 4 attrs, 1 cell (1 judged "
				     "by the rule, not armed alone; 0 armed alone); sample precise_ip=3 "
				     "k/n=3/3; 2 rules refuted before it\n"));
	assert_non_null(strstr(text, "\n  perf-3.6     cycles                   OK -> GUEST_HANG judged by "
				     "rule precise_ip>0 \\x1b[2J<b> (not armed alone)\n"));
	assert_null(strchr(text, '\x1b'));
	/* the other harm was armed alone: no rule on its line */
	assert_non_null(strstr(text, "instructions:ppp         EINVAL -> HOST_WARN (3/3)\n"));

	j = diff_result_to_json(res);
	assert_int_equal(json_array_size(json_object_get(j, "new_rules")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "new_rules"), 0),
							       "text")), "precise_ip>0 \x1b[2J<b>");
	json_array_foreach(json_object_get(json_object_get(j, "groups"), "harm_regression"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "spec")), "cycles"))
			cell = c;
	assert_non_null(cell);
	assert_string_equal(json_string_value(json_object_get(cell, "new_rule")), "precise_ip>0 \x1b[2J<b>");
	/* judged by the rule, never armed alone: no k/n of its own */
	assert_null(json_object_get(cell, "new_kn"));
	assert_non_null(json_object_get(cell, "base_kn"));
	json_decref(j);

	/* BASE proved the same rule: not new, not listed */
	rule_new_side(b, "precise_ip>0 \x1b[2J<b>");
	assert_int_equal(diff_compare(b, "run-3.8", n, "new", &same), 0);
	assert_int_equal(same->new_rule_lines->len, 0);
	g_free(text);
	text = diff_result_to_text(same);
	assert_null(strstr(text, "new rules"));

	/* BASE proved another rule: NEW's is still new */
	{
		g_autoptr(result_set) b2 = NULL;
		g_autoptr(diff_result) other = NULL;

		assert_int_equal(results_read_json(bp, &b2), 0);
		rule_new_side(b2, "exclude_guest=0");
		assert_int_equal(diff_compare(b2, "run-3.8", n, "new", &other), 0);
		assert_int_equal(other->new_rule_lines->len, 1);
	}
}

static void test_still_harmful(void **state)
{
	g_autoptr(diff_result) res = compare("run-3.6", "run-3.6");

	assert_int_equal(res->count[DIFF_STILL_HARMFUL], 2);
	assert_int_equal(diff_result_verdict(res), DIFF_VERDICT_CLEAN);
}

static void test_infra_cell_cannot_tell(void **state)
{
	g_autoptr(diff_result) res = compare("run-3.8", "run-3.8-infra-cell");
	g_autoptr(diff_result) rev = compare("run-3.8-infra-cell", "run-3.8");

	assert_int_equal(res->count[DIFF_UNTESTED], 1);
	assert_int_equal(res->new.infra_cells, 1);
	assert_int_equal(diff_result_verdict(res), DIFF_VERDICT_CANNOT_TELL);
	assert_int_equal(diff_result_verdict(rev), DIFF_VERDICT_CANNOT_TELL);
}

/* A spec that one side's profile rejected is in its own group: not a
 * regression (OK -> REJECTED) and not "cannot tell" (NEW lacks nothing
 * that was tested). */
static void test_rejected_own_group(void **state)
{
	g_autoptr(result_set) base = result_set_new(RESULTS_KIND_PROBE);
	g_autoptr(result_set) new = result_set_new(RESULTS_KIND_PROBE);
	g_autoptr(diff_result) res = NULL;
	g_autofree char *text = NULL;
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a) };
	struct cell *c;

	c = cell_new("k", "perf-6.1", "cycles:W");
	cell_set_attr(c, &a);
	c->outcome = OUTCOME_OK;
	results_add_cell(base, c);
	c = cell_new("k", "perf-6.1", "cycles:X");
	cell_set_error(c, "unknown modifier 'X'");
	results_add_cell(base, c);
	c = cell_new("k", "perf-6.1", "cycles:W");
	cell_set_error(c, "Weak modifier is for use with groups");
	results_add_cell(new, c);
	assert_int_equal(diff_compare(base, "a.json", new, "b.json", &res), 0);
	assert_int_equal(res->count[DIFF_REJECTED], 2);
	assert_int_equal(res->count[DIFF_ABI_REGRESSION], 0);
	assert_int_equal(res->count[DIFF_ONLY_BASE], 0);
	assert_int_equal(res->base.rejected, 1);
	assert_int_equal(res->new.rejected, 1);
	assert_int_equal(diff_result_verdict(res), DIFF_VERDICT_CLEAN);
	text = diff_result_to_text(res);
	assert_non_null(strstr(text, "rejected by a profile (2)"));
	assert_non_null(strstr(text, "OK -> REJECTED"));
}

static void test_infra_verdict_cannot_tell(void **state)
{
	g_autoptr(diff_result) res = compare("run-3.8", "run-3.8-infra-verdict");

	assert_true(res->new.infra_verdict);
	/* 6 tested cells and cycles:S, REJECTED on both sides. */
	assert_int_equal(res->count[DIFF_UNCHANGED], 7);
	assert_int_equal(diff_result_verdict(res), DIFF_VERDICT_CANNOT_TELL);
}

static void test_coverage(void **state)
{
	g_autoptr(diff_result) missing = compare("run-3.8", "run-3.8-missing");
	g_autoptr(diff_result) extra = compare("run-3.8", "run-3.8-extra");

	assert_int_equal(missing->count[DIFF_ONLY_BASE], 1);
	assert_int_equal(find_cell(missing, "perf-3.6", "cpu-clock:u")->new, OUTCOME_COUNT);
	assert_int_equal(diff_result_verdict(missing), DIFF_VERDICT_CANNOT_TELL);
	/* New coverage never fails. */
	assert_int_equal(extra->count[DIFF_ONLY_NEW], 1);
	assert_int_equal(diff_result_verdict(extra), DIFF_VERDICT_CLEAN);
}

static void test_regression_wins_over_cannot_tell(void **state)
{
	/* probe vs run cannot show harms, but the ABI regression is measured. */
	g_autoptr(diff_result) mixed = compare("probe-3.8", "run-3.8");
	g_autoptr(diff_result) reg = compare("probe-3.6", "run-3.7");

	assert_true(mixed->kinds_differ);
	assert_int_equal(diff_result_verdict(mixed), DIFF_VERDICT_CANNOT_TELL);
	assert_int_equal(diff_result_verdict(reg), DIFF_VERDICT_REGRESSION);
}

/* Bad files are refused by the results reader, with a message naming the
 * file: the CLI turns that into exit 2. */
static void expect_load_error(const char *name, const char *needle)
{
	g_autofree char *path = fixture(name);
	g_autoptr(result_set) set = NULL;

	assert_true(results_read_json(path, &set) < 0);
	assert_null(set);
	if (!strstr(pc_errmsg(), needle))
		fail_msg("message \"%s\" lacks \"%s\"", pc_errmsg(), needle);
	assert_non_null(strstr(pc_errmsg(), name));
}

static void test_bad_input(void **state)
{
	expect_load_error("no-such-file", "no-such-file.json");
	/* jansson's line:column */
	expect_load_error("truncated", "truncated.json:107:");
	expect_load_error("schema-3", "pmucanary/3");
	expect_load_error("bad-outcome", "GUEST_EXPLODED");
}

static void test_duplicate_cell(void **state)
{
	g_autofree char *good = fixture("run-3.8");
	g_autofree char *dup = fixture("duplicate-cell");
	g_autoptr(result_set) g = NULL;
	g_autoptr(result_set) d = NULL;
	struct diff_result *res = NULL;

	assert_int_equal(results_read_json(good, &g), 0);
	assert_int_equal(results_read_json(dup, &d), 0);
	assert_int_equal(diff_compare(d, "duplicate-cell", g, "run-3.8", &res), -EINVAL);
	assert_null(res);
	assert_non_null(strstr(pc_errmsg(), "twice"));
	assert_non_null(strstr(pc_errmsg(), "duplicate-cell"));
}

/* Two cells whose profile and spec join to the same bytes around a
 * separator (\x1f inside a name read from a file) are two cells: no
 * "appears twice", and each is matched to its own base cell. */
static void test_cell_keys_do_not_collide(void **state)
{
	g_autoptr(result_set) b = NULL, n = NULL;
	struct diff_result *res = NULL;
	struct result_set **sides[] = { &b, &n };

	for (int i = 0; i < 2; i++) {
		struct cell *c;

		*sides[i] = result_set_new(RESULTS_KIND_PROBE);
		c = cell_new("k", "a\x1f" "b", "c");
		c->outcome = i ? OUTCOME_EOPNOTSUPP : OUTCOME_OK;
		c->has_attr = true;
		g_ptr_array_add((*sides[i])->cells, c);
		c = cell_new("k", "a", "b\x1f" "c");
		c->outcome = OUTCOME_OK;
		c->has_attr = true;
		g_ptr_array_add((*sides[i])->cells, c);
	}
	if (diff_compare(b, "base", n, "new", &res) < 0)
		fail_msg("%s", pc_errmsg());
	assert_int_equal(res->cells->len, 2);
	assert_int_equal(find_cell(res, "a\x1f" "b", "c")->group, DIFF_ABI_REGRESSION);
	assert_int_equal(find_cell(res, "a", "b\x1f" "c")->group, DIFF_UNCHANGED);
	diff_result_free(res);
}

/* The cells come worst group first (the table's order: regressions,
 * then fixes...), then by profile and spec: what a reader sees first. */
static void test_cells_in_group_order(void **state)
{
	static const char *const pairs[][2] = { { "run-3.6", "run-3.8-harm" },
						{ "run-3.8-harm", "run-3.6" },
						{ "probe-3.6", "probe-3.8" } };
	unsigned int groups_seen = 0;

	for (size_t p = 0; p < G_N_ELEMENTS(pairs); p++) {
		struct diff_result *res = compare(pairs[p][0], pairs[p][1]);

		for (guint i = 1; i < res->cells->len; i++) {
			const struct diff_cell *a = res->cells->pdata[i - 1], *b = res->cells->pdata[i];
			int c = strcmp(a->profile, b->profile);

			if (a->group != b->group)
				groups_seen++;
			if (a->group > b->group ||
			    (a->group == b->group && (c > 0 || (!c && strcmp(a->spec, b->spec) > 0))))
				fail_msg("%s vs %s: %s %s (%s) before %s %s (%s)", pairs[p][0], pairs[p][1],
					 a->profile, a->spec, diff_group_name(a->group), b->profile,
					 b->spec, diff_group_name(b->group));
		}
		diff_result_free(res);
	}
	assert_true(groups_seen >= 2);   /* the order was put to the test */
}

static void test_text_and_json(void **state)
{
	g_autoptr(diff_result) res = compare("probe-3.6", "probe-3.7");
	g_autofree char *text = diff_result_to_text(res);
	json_t *j = diff_result_to_json(res), *abi;

	assert_non_null(strstr(text, "ABI regressions (2)"));
	assert_non_null(strstr(text, "OK -> EOPNOTSUPP"));
	assert_non_null(strstr(text, "verdict: REGRESSION (exit 1)"));
	assert_null(strstr(text, "fenced"));

	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "REGRESSION");
	assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "counts"),
							      "abi_regression")), 2);
	abi = json_object_get(json_object_get(j, "groups"), "abi_regression");
	assert_int_equal(json_array_size(abi), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(abi, 0), "new")),
			    "EOPNOTSUPP");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "base"), "kernel")),
			    "3.6.11");
	json_decref(j);

	g_autoptr(diff_result) harm = compare("run-3.6", "run-3.7");
	g_autofree char *t2 = diff_result_to_text(harm);
	assert_non_null(strstr(t2, "GUEST_CRASH (3/3) -> EOPNOTSUPP"));
}

/* Both sides of the k/n rule in --json: each side carries the k/n its run
 * recorded for the cell ("base_kn" as "new_kn"; the fixtures' cells, by
 * hand: run-3.6 perf-3.6 cycles:pp GUEST_CRASH 3/3, run-3.7 EOPNOTSUPP
 * 0/3, run-3.8 perf-3.6 cycles OK 0/3, run-3.8-harm GUEST_HANG 3/3); and a
 * cell one run lacks reads "-" on that side in the text, not an outcome. */
static void expect_kn(json_t *group, const char *profile, const char *spec, const char *side,
		      int k, int n)
{
	size_t i;
	json_t *e;

	json_array_foreach(group, i, e) {
		json_t *kn;

		if (strcmp(json_string_value(json_object_get(e, "profile")), profile) ||
		    strcmp(json_string_value(json_object_get(e, "spec")), spec))
			continue;
		kn = json_object_get(e, side);
		assert_true(json_is_array(kn) && json_array_size(kn) == 2);
		assert_int_equal(json_integer_value(json_array_get(kn, 0)), k);
		assert_int_equal(json_integer_value(json_array_get(kn, 1)), n);
		return;
	}
	fail_msg("no %s %s in the group", profile, spec);
}

static void test_kn_sides_and_missing_side(void **state)
{
	g_autoptr(diff_result) fenced = compare("run-3.6", "run-3.7");
	g_autoptr(diff_result) harm = compare("run-3.8", "run-3.8-harm");
	g_autoptr(diff_result) missing = compare("run-3.8", "run-3.8-missing");
	json_t *j = diff_result_to_json(fenced), *h = diff_result_to_json(harm);
	json_t *fg = json_object_get(json_object_get(j, "groups"), "fenced");
	json_t *hg = json_object_get(json_object_get(h, "groups"), "harm_regression");
	g_autofree char *text = diff_result_to_text(missing);

	(void)state;
	expect_kn(fg, "perf-3.6", "cycles:pp", "base_kn", 3, 3);
	expect_kn(fg, "perf-3.6", "cycles:pp", "new_kn", 0, 3);
	expect_kn(hg, "perf-3.6", "cycles", "base_kn", 0, 3);
	expect_kn(hg, "perf-3.6", "cycles", "new_kn", 3, 3);
	assert_non_null(strstr(text, "cpu-clock:u              OK -> -\n"));
	json_decref(j);
	json_decref(h);

	/* --json of a cell one run lacks: no outcome and no k/n on that
	 * side, both on the side it has */
	{
		g_autoptr(diff_result) extra = compare("run-3.8", "run-3.8-extra");
		json_t *mj = diff_result_to_json(missing), *ej = diff_result_to_json(extra);
		json_t *ob = json_array_get(json_object_get(json_object_get(mj, "groups"), "only_base"), 0);
		json_t *on = json_array_get(json_object_get(json_object_get(ej, "groups"), "only_new"), 0);

		assert_non_null(ob);
		assert_string_equal(json_string_value(json_object_get(ob, "base")), "OK");
		assert_non_null(json_object_get(ob, "base_kn"));
		assert_null(json_object_get(ob, "new"));
		assert_null(json_object_get(ob, "new_kn"));
		assert_non_null(on);
		assert_non_null(json_object_get(on, "new"));
		assert_null(json_object_get(on, "base"));
		assert_null(json_object_get(on, "base_kn"));
		json_decref(mj);
		json_decref(ej);
	}
}

/* The groups' table at its edge, and a run verdict of INFRA on either side
 * said in the verdict line. */
static void test_group_edge_and_infra_either_side(void **state)
{
	g_autoptr(diff_result) nside = compare("run-3.8", "run-3.8-infra-verdict");
	g_autoptr(diff_result) bside = compare("run-3.8-infra-verdict", "run-3.8");
	g_autofree char *nt = diff_result_to_text(nside), *bt = diff_result_to_text(bside);

	(void)state;
	assert_false(diff_group_fails(DIFF_GROUP_COUNT));
	assert_string_equal(diff_group_what(DIFF_GROUP_COUNT), "?");
	/* the verdict names of diff.h's table, each its own, and "?" past it */
	assert_string_equal(diff_verdict_name(DIFF_VERDICT_CLEAN), "CLEAN");
	assert_string_equal(diff_verdict_name(DIFF_VERDICT_REGRESSION), "REGRESSION");
	assert_string_equal(diff_verdict_name(DIFF_VERDICT_CANNOT_TELL), "CANNOT_TELL");
	assert_string_equal(diff_verdict_name(DIFF_VERDICT_COUNT), "?");
	assert_string_equal(diff_verdict_name(DIFF_VERDICT_COUNT + 1), "?");
	assert_true(diff_group_fails(DIFF_HARM_REGRESSION));
	assert_non_null(strstr(nt, "a run verdict is INFRA"));
	assert_non_null(strstr(bt, "a run verdict is INFRA"));
}

int main(int argc, char **argv)
{
	g_autofree char *top = test_top_dir();

	snprintf(data_dir, sizeof(data_dir), "%s/tests/data/diff", top);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_table),
		cmocka_unit_test(test_2012_abi_regression),
		cmocka_unit_test(test_2012_fenced),
		cmocka_unit_test(test_2012_fixed),
		cmocka_unit_test(test_2012_new_capability),
		cmocka_unit_test(test_harm_regression),
		cmocka_unit_test(test_rule_covered_harm),
		cmocka_unit_test(test_new_rule_first),
		cmocka_unit_test(test_still_harmful),
		cmocka_unit_test(test_infra_cell_cannot_tell),
		cmocka_unit_test(test_infra_verdict_cannot_tell),
		cmocka_unit_test(test_rejected_own_group),
		cmocka_unit_test(test_coverage),
		cmocka_unit_test(test_regression_wins_over_cannot_tell),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_duplicate_cell),
		cmocka_unit_test(test_cell_keys_do_not_collide),
		cmocka_unit_test(test_cells_in_group_order),
		cmocka_unit_test(test_text_and_json),
		cmocka_unit_test(test_kn_sides_and_missing_side),
		cmocka_unit_test(test_group_edge_and_infra_either_side),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
