/* Tests for lib/matrix: merging the tests/data/diff fixtures (the 2012
 * story over three kernels) and tests/data/matrix (one kernel on several
 * CPU steppings) with exact rows and columns, merging duplicate cells,
 * known errata, and the terminal text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "errata.h"
#include "log.h"
#include "matrix.h"
#include "results.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char top_dir[4096];

struct loaded {
	GPtrArray *sets;   /* struct result_set * */
	GPtrArray *names;  /* char * */
};

static void loaded_clear(struct loaded *l)
{
	g_ptr_array_unref(l->sets);
	g_ptr_array_unref(l->names);
}

/* Loads "dir/name.json" for each name (NULL-terminated). */
static void load(struct loaded *l, const char *dir, ...)
{
	va_list ap;
	const char *name;

	l->sets = g_ptr_array_new_with_free_func((GDestroyNotify)result_set_free);
	l->names = g_ptr_array_new_with_free_func(g_free);
	va_start(ap, dir);
	while ((name = va_arg(ap, const char *))) {
		g_autofree char *path = g_strdup_printf("%s/tests/data/%s/%s.json", top_dir, dir,
							name);
		struct result_set *set = NULL;

		if (results_read_json(path, &set) < 0)
			fail_msg("%s: %s", path, pc_errmsg());
		g_ptr_array_add(l->sets, set);
		g_ptr_array_add(l->names, g_strdup(name));
	}
	va_end(ap);
}

static struct matrix *build(struct loaded *l, const struct errata *e)
{
	struct matrix *m = NULL;

	if (matrix_build((const struct result_set *const *)l->sets->pdata,
			 (const char *const *)l->names->pdata, l->sets->len, e, &m) < 0)
		fail_msg("matrix_build: %s", pc_errmsg());
	return m;
}

/* "group|kernel|profile" for each row, joined by ";". */
static char *rows_string(const struct matrix *m)
{
	GString *s = g_string_new(NULL);

	for (guint r = 0; r < m->rows->len; r++) {
		const struct matrix_row *row = m->rows->pdata[r];

		g_string_append_printf(s, "%s%s|%s|%s", r ? ";" : "",
				       (char *)m->groups->pdata[row->group], row->kernel,
				       row->profile);
	}
	return g_string_free(s, FALSE);
}

static char *columns_string(const struct matrix *m)
{
	g_ptr_array_add(m->columns, NULL);
	char *s = g_strjoinv(";", (char **)m->columns->pdata);
	g_ptr_array_remove_index(m->columns, m->columns->len - 1);
	return s;
}

/* The codes of one row, joined by " ". */
static char *row_codes(const struct matrix *m, guint r)
{
	GString *s = g_string_new(NULL);

	for (guint c = 0; c < m->columns->len; c++)
		g_string_append_printf(s, "%s%s", c ? " " : "",
				       matrix_cell_abbrev(matrix_at(m, r, c)));
	return g_string_free(s, FALSE);
}

static void test_2012_three_kernels(void **state)
{
	struct loaded l;
	g_autoptr(matrix) m = NULL;
	g_autofree char *rows = NULL, *cols = NULL;
	static const char *const want[] = {
		"CRASH! ok ok - INVAL rej", "ok - - - - -", "- - - CRASH! - -",
		"NOSUP ok ok - INVAL rej",  "ok - - - - -", "- - - NOSUP - -",
		"ok ok ok - INVAL rej",     "ok - - - - -", "- - - ok - -",
	};

	/* Inputs out of kernel order: rows come out in version order. */
	load(&l, "diff", "run-3.8", "run-3.6", "run-3.7", NULL);
	m = build(&l, NULL);
	rows = rows_string(m);
	cols = columns_string(m);
	/* Columns in the order first seen (run-3.8's). */
	assert_string_equal(cols, "cycles:pp;cycles;cpu-clock:u;cycles[precise_ip=2];"
				  "instructions:ppp;cycles:S");
	assert_string_equal(rows,
		"GenuineIntel 6/58/9|3.6.11|perf-3.6;GenuineIntel 6/58/9|3.6.11|perf-3.7;"
		"GenuineIntel 6/58/9|3.6.11|raw;"
		"GenuineIntel 6/58/9|3.7.0|perf-3.6;GenuineIntel 6/58/9|3.7.0|perf-3.7;"
		"GenuineIntel 6/58/9|3.7.0|raw;"
		"GenuineIntel 6/58/9|3.8.0|perf-3.6;GenuineIntel 6/58/9|3.8.0|perf-3.7;"
		"GenuineIntel 6/58/9|3.8.0|raw");
	assert_false(matrix_cpus_differ(m));
	for (guint r = 0; r < G_N_ELEMENTS(want); r++) {
		g_autofree char *codes = row_codes(m, r);

		assert_string_equal(codes, want[r]);
	}
	assert_int_equal(m->harm, 2);
	assert_int_equal(m->known_errata, 0);
	assert_int_equal(m->count[OUTCOME_EOPNOTSUPP], 2);
	loaded_clear(&l);
}

static void test_cpu_steppings(void **state)
{
	struct loaded l;
	g_autoptr(matrix) m = NULL;
	g_autofree char *rows = NULL, *cols = NULL;

	load(&l, "matrix", "ivb-3.6", "hsw-3.6", "amd-3.6", NULL);
	m = build(&l, NULL);
	rows = rows_string(m);
	cols = columns_string(m);
	assert_true(matrix_cpus_differ(m));
	assert_int_equal(m->groups->len, 3);
	assert_string_equal(cols, "cycles:pp;cpu-clock:u");
	assert_string_equal(rows,
		"GenuineIntel 6/58/9|3.6.11|perf-3.6;GenuineIntel 6/58/9|3.6.11|perf-3.7;"
		"GenuineIntel 6/63/2|3.6.11|perf-3.6;GenuineIntel 6/63/2|3.6.11|perf-3.7;"
		"AuthenticAMD 16/4/3|3.6.11|perf-3.6;AuthenticAMD 16/4/3|3.6.11|perf-3.7");
	{
		g_autofree char *r0 = row_codes(m, 0), *r2 = row_codes(m, 2), *r4 = row_codes(m, 4);

		assert_string_equal(r0, "CRASH! ok");
		assert_string_equal(r2, "CORRUPT! infra?");
		assert_string_equal(r4, "CRASH! -");
	}
	assert_int_equal(m->harm, 3);
	assert_int_equal(m->infra, 1);
	loaded_clear(&l);
}

static void test_known_errata(void **state)
{
	g_autofree char *path = g_strdup_printf("%s/scenarios/errata.ini", top_dir);
	g_autoptr(errata_set) e = NULL;
	struct loaded l;
	g_autoptr(matrix) m = NULL;
	g_autoptr(GString) text = g_string_new(NULL);

	assert_int_equal(errata_load(path, &e), 0);
	load(&l, "matrix", "ivb-3.6", "hsw-3.6", "amd-3.6", NULL);
	m = build(&l, e);
	/* Both Intel steppings are the known PEBS erratum; AMD is not Intel. */
	assert_string_equal(erratum_id(matrix_at(m, 0, 0)->erratum), "intel-pebs-2012");
	assert_string_equal(matrix_cell_abbrev(matrix_at(m, 0, 0)), "CRASH~");
	assert_string_equal(matrix_cell_abbrev(matrix_at(m, 2, 0)), "CORRUPT~");
	assert_null(matrix_at(m, 4, 0)->erratum);
	assert_int_equal(m->known_errata, 2);
	assert_int_equal(m->harm, 1);

	matrix_format_text(m, false, 120, text);
	assert_non_null(strstr(text->str, "known erratum intel-pebs-2012"));
	/* The default view names each harmful cell while there are few. */
	assert_non_null(strstr(text->str, "HARM (no known erratum explains it): 1 cell\n"
					  "  3.6.11 perf-3.6 cycles:pp: GUEST_CRASH 1/3 "
					  "[cpu AuthenticAMD 16/4/3, amd-3.6]"));
	assert_non_null(strstr(text->str, "cpu GenuineIntel 6/63/2:\n"));
	assert_non_null(strstr(text->str, "X~ = harm explained by a known erratum"));
	assert_null(strstr(text->str, "\033["));
	loaded_clear(&l);
}

/* One run of kernel 3.7.0 on an unknown CPU: cell i is spec "s<i>" under
 * perf-3.6 with outcome o[i]. */
static struct result_set *run_with(const enum outcome *o, size_t n)
{
	struct result_set *set = result_set_new(RESULTS_KIND_RUN);

	g_free(set->kernel);
	set->kernel = g_strdup("3.7.0");
	for (size_t i = 0; i < n; i++) {
		g_autofree char *spec = g_strdup_printf("s%zu", i);
		struct cell *c = cell_new("3.7.0", "perf-3.6", spec);

		c->outcome = o[i];
		results_add_cell(set, c);
	}
	return set;
}

static void test_duplicates_merge_worst(void **state)
{
	/* Two runs of one kernel on one CPU that disagree: harm beats an
	 * errno beats OK beats INFRA (no verdict), whichever input comes
	 * first. The last cell agrees. */
	static const enum outcome a[] = { OUTCOME_OK, OUTCOME_GUEST_CRASH, OUTCOME_EOPNOTSUPP,
					  OUTCOME_INFRA, OUTCOME_GUEST_HANG, OUTCOME_EINVAL };
	static const enum outcome b[] = { OUTCOME_GUEST_CRASH, OUTCOME_OK, OUTCOME_OK,
					  OUTCOME_OK, OUTCOME_EOPNOTSUPP, OUTCOME_EINVAL };
	static const enum outcome worst[] = { OUTCOME_GUEST_CRASH, OUTCOME_GUEST_CRASH,
					      OUTCOME_EOPNOTSUPP, OUTCOME_OK, OUTCOME_GUEST_HANG,
					      OUTCOME_EINVAL };
	g_autoptr(result_set) sa = run_with(a, G_N_ELEMENTS(a));
	g_autoptr(result_set) sb = run_with(b, G_N_ELEMENTS(b));

	for (int order = 0; order < 2; order++) {
		const struct result_set *sets[2] = { order ? sb : sa, order ? sa : sb };
		const char *names[2] = { order ? "b" : "a", order ? "a" : "b" };
		g_autoptr(matrix) m = NULL;

		assert_int_equal(matrix_build(sets, names, 2, NULL, &m), 0);
		assert_int_equal(m->rows->len, 1);
		assert_int_equal(m->columns->len, G_N_ELEMENTS(worst));
		for (guint c = 0; c < G_N_ELEMENTS(worst); c++) {
			const struct matrix_cell *mc = matrix_at(m, 0, c);

			assert_non_null(mc);
			assert_int_equal(mc->inputs, 2);
			if (mc->cell->outcome != worst[c])
				fail_msg("order %d, s%u: %s merged, want %s", order, c,
					 outcome_name(mc->cell->outcome), outcome_name(worst[c]));
			/* the source named is the one that gave the shown outcome */
			assert_int_equal(mc->cell->outcome,
					 (mc->source == 0 ? sets[0] : sets[1]) == sa ? a[c] : b[c]);
			assert_int_equal(mc->disagree, a[c] != b[c]);
		}
		assert_int_equal(m->harm, 3);
		assert_int_equal(m->infra, 0);
		assert_int_equal(m->count[OUTCOME_EOPNOTSUPP], 1);
		assert_int_equal(m->count[OUTCOME_OK], 1);
	}
}

static void test_text_limitations_and_color(void **state)
{
	struct loaded l;
	g_autoptr(matrix) m = NULL;
	g_autoptr(GString) plain = g_string_new(NULL);
	g_autoptr(GString) color = g_string_new(NULL);

	load(&l, "matrix", "tcg-6.1", "amd-3.6", "xss", NULL);
	m = build(&l, NULL);
	matrix_format_text(m, false, 120, plain);
	matrix_format_text(m, true, 120, color);
	assert_non_null(strstr(plain->str, "limitation: " RESULTS_LIMIT_TCG "\n"));
	assert_non_null(strstr(plain->str, "limitation: " RESULTS_LIMIT_NO_HW_PMU "\n"));
	assert_non_null(strstr(plain->str, "legend: ok=OK"));
	assert_non_null(strstr(plain->str, "rej=the profile rejected the spec"));
	/* A raw control byte in evidence never reaches the terminal. */
	assert_null(strchr(plain->str, '\001'));
	assert_non_null(strstr(plain->str, "\\x01ctrl"));
	assert_non_null(strstr(color->str, "\033[1;31mCRASH!\033[0m"));
	loaded_clear(&l);
}

static void test_wrap(void **state)
{
	struct loaded l;
	g_autoptr(matrix) m = NULL;
	g_autoptr(GString) text = g_string_new(NULL);

	load(&l, "diff", "run-3.6", NULL);
	m = build(&l, NULL);
	matrix_format_text_all(m, false, 40, text);
	assert_non_null(strstr(text->str, "columns 1-"));
	g_auto(GStrv) lines = g_strsplit(text->str, "\n", -1);
	unsigned int rows = 0;

	for (char **line = lines; *line; line++)
		if (g_str_has_prefix(*line, "3.6.11 ")) {
			assert_true(strlen(*line) <= 40 || !strchr(*line + 30, ' '));
			rows++;
		}
	/* run-3.6's three profiles, each wrapped into more than one block */
	assert_true(rows > 3);
	loaded_clear(&l);
}

static void test_modclass(void **state)
{
	static const struct {
		const char *spec, *cls;
	} cases[] = {
		{ "cycles", "none" },          { "cycles:u", "u/k/h" },
		{ "cycles:ukh", "u/k/h" },     { "cycles:G", "G/H" },
		{ "cycles:uH", "G/H" },        { "cycles:pp", "p" },
		{ "cycles:uP", "p" },          { "cycles:ppH", "p+G/H" },
		{ "cycles:pppGH", "p+G/H" },   { "cycles:W", "W" },
		{ "cycles:pppHW", "W" },       { "msr/tsc/", "none" },
		{ "msr/tsc/u", "u/k/h" },      { "msr/tsc/GHX", "X" },
		{ "cycles:S", "S" },           { "cycles:ppI", "I" },
		{ "cycles[exclude_guest]", "G/H" },
		{ "cycles[exclude_kernel,exclude_hv]", "u/k/h" },
		{ "cycles[exclude_host,precise_ip=2]", "p+G/H" },
		{ "cycles[precise_ip=0]", "none" },
		{ "cycles[exclude_idle,precise_ip=1]", "I" },
		{ "cycles:Z", "other" },       { "cycles:Wz", "other" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		const char *got = matrix_modclass_name(matrix_spec_modclass(cases[i].spec));

		if (strcmp(got, cases[i].cls))
			fail_msg("%s: class %s, want %s", cases[i].spec, got, cases[i].cls);
	}
}

/* A run of `kernel` with cells (profile, spec, outcome). */
static struct result_set *run_cells(const char *kernel, const char *const *profiles,
				    const char *const *specs, const enum outcome *o, size_t n)
{
	struct result_set *set = result_set_new(RESULTS_KIND_RUN);

	g_free(set->kernel);
	set->kernel = g_strdup(kernel);
	for (size_t i = 0; i < n; i++) {
		struct cell *c = cell_new(kernel, profiles[i], specs[i]);

		c->outcome = o[i];
		results_add_cell(set, c);
	}
	return set;
}

/* Two kernels, 40 events x 3 specs x 2 profiles that agree but for one
 * planted cell: the view names it first, keeps the agreeing mass as counts
 * and stays short. */
static void test_view_planted_difference(void **state)
{
	g_autoptr(GPtrArray) prof = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) spec = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) oa = g_array_new(FALSE, FALSE, sizeof(enum outcome));
	g_autoptr(GArray) ob = g_array_new(FALSE, FALSE, sizeof(enum outcome));
	static const char *const mods[] = { "", ":u", ":ppH" };
	g_autoptr(result_set) a = NULL, b = NULL;
	g_autoptr(matrix) m = NULL;
	g_autoptr(GString) text = g_string_new(NULL);
	const char *names[2] = { "a.json", "b.json" };
	unsigned int lines = 0;

	for (int p = 0; p < 2; p++)
		for (int e = 0; e < 40; e++)
			for (int k = 0; k < 3; k++) {
				enum outcome o = e < 30 ? OUTCOME_OK : OUTCOME_ENOENT;
				enum outcome o2 = o;

				g_ptr_array_add(prof, g_strdup(p ? "perf-new" : "perf-old"));
				g_ptr_array_add(spec, g_strdup_printf("ev%d%s", e, mods[k]));
				if (p == 0 && e == 7 && k == 2)
					o2 = OUTCOME_EOPNOTSUPP;
				g_array_append_val(oa, o);
				g_array_append_val(ob, o2);
			}
	a = run_cells("6.1.0", (const char *const *)prof->pdata, (const char *const *)spec->pdata,
		      (enum outcome *)oa->data, oa->len);
	b = run_cells("6.2.0", (const char *const *)prof->pdata, (const char *const *)spec->pdata,
		      (enum outcome *)ob->data, ob->len);
	{
		const struct result_set *sets[2] = { a, b };

		assert_int_equal(matrix_build(sets, names, 2, NULL, &m), 0);
	}
	matrix_format_text(m, false, 120, text);
	/* named, with both kernels' outcomes, before the grid */
	const char *diff = strstr(text->str, "ev7 x p+G/H: 6.1.0 ok | 6.2.0 NOSUP\n      ev7:ppH "
					     "under perf-old");
	assert_non_null(diff);
	assert_non_null(strstr(text->str, "what differs between kernels (1 cell;"));
	const char *grid = strstr(text->str, "where rows differ: 1 column group");
	assert_non_null(grid);
	assert_true(diff < grid);
	/* the differing row reads NOSUP in the grid; the rest collapse */
	assert_non_null(strstr(text->str, "\n6.2.0   perf-old            NOSUP\n"));
	/* rows of one kernel that read the same are one line */
	assert_non_null(strstr(text->str, "\n6.1.0   perf-old..perf-new  ok\n"));
	assert_non_null(strstr(text->str, "\n6.2.0   perf-new            ok\n"));
	assert_non_null(strstr(text->str, "where every row agrees: 119 specs in 2 column groups"));
	assert_non_null(strstr(text->str, "  ok        ev0, ev1, ev2 (+27 events) x none, u/k/h, "
					  "p+G/H: 89 specs, 356 cells\n"));
	assert_non_null(strstr(text->str, "  NOENT     ev30, ev31, ev32 (+7 events)"));
	for (const char *p = text->str; *p; p++)
		lines += *p == '\n';
	assert_true(lines < 40);
	/* --all still holds every cell */
	g_string_truncate(text, 0);
	matrix_format_text_all(m, false, 120, text);
	assert_non_null(strstr(text->str, "columns 1-"));
}

static void test_duplicate_in_one_input(void **state)
{
	static const char *const profiles[] = { "perf-3.6", "perf-3.6", "perf-3.6" };
	static const char *const specs[] = { "cycles", "cycles:pp", "cycles" };
	static const enum outcome o[] = { OUTCOME_OK, OUTCOME_OK, OUTCOME_GUEST_CRASH };
	g_autoptr(result_set) a = run_cells("3.7.0", profiles, specs, o, 2);
	g_autoptr(result_set) dup = run_cells("3.7.0", profiles, specs, o, 3);
	struct matrix *m = NULL;
	const char *names[2] = { "a.json", "dup.json" };
	const struct result_set *sets[2] = { a, dup };

	/* the same cell in two inputs merges; twice in one input is bad input */
	assert_int_equal(matrix_build(sets, names, 1, NULL, &m), 0);
	matrix_free(m);
	m = NULL;
	assert_int_equal(matrix_build(sets, names, 2, NULL, &m), -EINVAL);
	assert_null(m);
	assert_string_equal(pc_errmsg(), "dup.json: cell 2: (3.7.0, perf-3.6, cycles) appears twice");
}

/* Specs, kernels, profiles, file names, limitations and evidence come from
 * files written elsewhere: no byte of them may drive the terminal. */
static void test_hostile_strings(void **state)
{
	static const char *const profiles[] = { "perf\033]0;owned\007", "raw" };
	static const char *const specs[] = { "cyc\033[2Jles:pp", "x\r\nHARM: none\u202e" };
	static const enum outcome o[] = { OUTCOME_GUEST_CRASH, OUTCOME_OK };
	g_autoptr(result_set) a = run_cells("6.1\r", profiles, specs, o, 2);
	g_autoptr(matrix) m = NULL;
	const char *names[1] = { "evil\033[31m.json" };
	const struct result_set *sets[1] = { a };

	results_add_limitation(a, "%s", "lim\033[2J\nforged line");
	json_array_append_new(((struct cell *)a->cells->pdata[0])->evidence,
			      json_pack("{s:s, s:s}", "kind", "console",
					"excerpt", "panic\033[2J\rline2\n\xc2\x9b" "1m"));
	assert_int_equal(matrix_build(sets, names, 1, NULL, &m), 0);
	for (int all = 0; all < 2; all++) {
		g_autoptr(GString) text = g_string_new(NULL);

		if (all)
			matrix_format_text_all(m, false, 120, text);
		else
			matrix_format_text(m, false, 120, text);
		assert_null(strchr(text->str, '\033'));
		assert_null(strchr(text->str, '\r'));
		assert_null(strchr(text->str, '\007'));
		assert_null(strstr(text->str, "\u202e"));
		assert_null(strstr(text->str, "\n forged line"));
		assert_null(strstr(text->str, "\nforged line"));
		assert_null(strstr(text->str, "\nHARM: none"));
		assert_non_null(strstr(text->str, "cyc\\x1b[2Jles:pp"));
		assert_non_null(strstr(text->str, "6.1\\x0d"));
		assert_non_null(strstr(text->str, "evil\\x1b[31m.json"));
		assert_non_null(strstr(text->str, "x\\x0d\\x0aHARM"));
		if (all)
			assert_non_null(strstr(text->str, "x\\x0d\\x0aHARM: none\\u{202e}"));
		/* evidence keeps its lines, each one prefixed */
		assert_non_null(strstr(text->str, "evidence: console: panic\\x1b[2J\\x0dline2\n"
						  "      evidence: \\u{009b}1m"));
	}
}


/* ---- one input: a run's matrix.txt, `probe`, `matrix` of one file ---- */

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
	return a;
}

/* One TCG run of 6.1.0: an OK cell, a guest crash, an errno after a
 * fallback with CPUs that disagree, a spec the profile rejects, and an OK
 * that needed the fallback. */
static struct result_set *one_run(void)
{
	struct result_set *set = result_set_new(RESULTS_KIND_RUN);
	struct perf_event_attr sw = attr_make(PERF_TYPE_SOFTWARE, 0, 0, 0);
	struct perf_event_attr hw = attr_make(PERF_TYPE_HARDWARE, 0, 2, 0);
	struct perf_event_attr hwg = attr_make(PERF_TYPE_HARDWARE, 0, 2, 1);
	struct cell *c;

	g_free(set->run_id);
	set->run_id = g_strdup("r1");
	g_free(set->kernel);
	set->kernel = g_strdup("6.1.0");
	g_free(set->accel);
	set->accel = g_strdup("tcg");
	g_free(set->tool_version);
	set->tool_version = g_strdup("0.1");
	g_free(set->created);
	set->created = g_strdup("2026-12-07T00:00:00Z");
	json_decref(set->host);
	set->host = json_pack("{s:{s:s,s:i,s:i,s:i}}", "cpu", "vendor", "GenuineIntel",
			      "family", 6, "model", 58, "stepping", 9);
	results_add_limitation(set, "%s", RESULTS_LIMIT_TCG);

	c = cell_new("6.1.0", "perf-6.1", "cpu-clock:u");
	cell_add_try(c, &sw, OUTCOME_OK, NULL);
	c->outcome = OUTCOME_OK;
	results_add_cell(set, c);

	c = cell_new("6.1.0", "perf-3.6", "cpu-clock:k");
	cell_add_try(c, &sw, OUTCOME_OK, NULL);
	c->outcome = OUTCOME_GUEST_CRASH;
	c->k = 2;
	c->n = 2;
	json_array_append_new(c->evidence, json_pack("{s:s,s:i,s:s}", "kind", "console",
						     "guest", 0, "excerpt",
						     "sysrq triggered crash"));
	results_add_cell(set, c);

	c = cell_new("6.1.0", "perf-3.6", "cycles:pp");
	cell_add_try(c, &hw, OUTCOME_EOPNOTSUPP, NULL);
	cell_add_try(c, &hwg, OUTCOME_ENOENT, "set exclude_guest");
	cell_add_cpu(c, 0, OUTCOME_ENOENT);
	cell_add_cpu(c, 1, OUTCOME_EBUSY);
	c->outcome = OUTCOME_ENOENT;
	results_add_cell(set, c);

	c = cell_new("6.1.0", "perf-3.6", "cycles:Z");
	cell_set_error(c, "cycles:Z: unknown modifier 'Z' at 8");
	results_add_cell(set, c);

	c = cell_new("6.1.0", "perf-modern", "cycles:pp");
	cell_add_try(c, &hw, OUTCOME_EOPNOTSUPP, NULL);
	cell_add_try(c, &hwg, OUTCOME_OK, "set exclude_guest");
	c->outcome = OUTCOME_OK;
	results_add_cell(set, c);
	return set;
}

static char *one_view(const struct result_set *set, bool all)
{
	g_autoptr(matrix) m = NULL;
	GString *text = g_string_new(NULL);

	if (matrix_build(&set, NULL, 1, NULL, &m) < 0)
		fail_msg("matrix_build: %s", pc_errmsg());
	if (all)
		matrix_format_text_all(m, false, 120, text);
	else
		matrix_format_text(m, false, 120, text);
	if (g_getenv("PMUCANARY_TEST_DUMP"))
		fputs(text->str, stderr);
	return g_string_free(text, FALSE);
}

/* The default view of one run, whole: what the run's own report said
 * (the run, the tool that wrote it, the TCG limitation, every harm with
 * evidence, counts per outcome, the errno cells by what their tries show,
 * the OK cells that needed a fallback) in the merged view's shape. Written
 * from the contract (matrix.h), not from the output. */
static void test_one_run_view(void **state)
{
	g_autoptr(result_set) set = one_run();
	g_autofree char *text = one_view(set, false);

	assert_string_equal(text,
		"pmucanary matrix: 1 input, 1 CPU signature, 1 kernel, 3 profiles, 4 specs, 5 cells\n"
		"inputs:\n"
		"  [1] r1: run r1, kernel 6.1.0, accel tcg, cpu GenuineIntel 6/58/9\n"
		"      written by pmucanary 0.1 at 2026-12-07T00:00:00Z\n"
		"      profiles: perf-6.1, perf-3.6, perf-modern\n"
		"      limitation: " RESULTS_LIMIT_TCG "\n"
		"\n"
		"HARM (no known erratum explains it): 1 cell\n"
		"  6.1.0 perf-3.6 cpu-clock:k: GUEST_CRASH 2/2 [cpu GenuineIntel 6/58/9, r1]\n"
		"      evidence: console (guest 0): sysrq triggered crash\n"
		"\n"
		"where rows differ: 2 column groups (event x modifier class; a cell names the "
		"outcomes of its specs):\n"
		"kernel  profile      c1      c2\n"
		"6.1.0   perf-6.1     ok      -\n"
		"6.1.0   perf-3.6     CRASH!  NOENT\n"
		"6.1.0   perf-modern  -       ok\n"
		"columns:\n"
		"  c1   cpu-clock x u/k/h: 2 specs, 2 cells\n"
		"  c2   cycles x p: 1 spec, 2 cells\n"
		"\n"
		"where every row agrees: 1 spec in 1 column group, collapsed:\n"
		"  rej       cycles x other: 1 spec, 1 cell\n"
		"\n"
		"profiles disagree on 1 spec (same spec, different outcome from the kernel under "
		"different profiles):\n"
		"  OK under perf-modern; ENOENT under perf-3.6 (1 spec):\n"
		"      cycles:pp\n"
		"\n"
		"errno and rejected cells by outcome and tries: 2 (ENOENT 1, rejected by the "
		"profile 1) in 2 groups\n"
		"\n"
		"ENOENT after set exclude_guest -> ENOENT (CPUs disagree): 1 cell\n"
		"  perf-3.6     cycles:pp                                ENOENT (cpu0=ENOENT "
		"cpu1=EBUSY)  after 2 tries: set exclude_guest -> ENOENT\n"
		"\n"
		"rejected by the profile's parser (no syscall): unknown modifier 'Z': 1 cell\n"
		"  perf-3.6     cycles:Z                                 REJECTED  rejected: "
		"cycles:Z: unknown modifier 'Z' at 8\n"
		"\n"
		"OK only after a fallback: 1 cell\n"
		"\n"
		"OK after set exclude_guest -> OK: 1 cell\n"
		"  perf-modern  cycles:pp                                OK  after 2 tries: set "
		"exclude_guest -> OK\n"
		"\n"
		"cells by outcome: OK 2, ENOENT 1, GUEST_CRASH 1, rejected by the profile 1\n"
		"(every cell: --all; narrow with --event, --profile, --kernel, --outcome)\n"
		"\n"
		"legend: ok=OK NOENT=ENOENT CRASH!=GUEST_CRASH rej=the profile rejected the spec "
		"-=not measured\n"
		"  X! = harm (guest or host hurt)\n"
		"modifier classes (by the perf_event_attr fields the modifiers set; a flag wins, "
		"then p, then G/H):\n"
		"  u/k/h = privilege filter only (exclude_user/kernel/hv);\n"
		"  p = precise_ip>0 (p pp ppp P), no G/H, with or without u/k/h; other = other "
		"modifiers or PMU terms\n"
		"1 harmful cell, 0 known errata, 0 INFRA\n");
}

/* --all of one run (probe --list-all): every cell in the grid, the harm with
 * evidence, every non-OK cell on its own line with its tries, the counts. */
static void test_one_run_all(void **state)
{
	g_autoptr(result_set) set = one_run();
	g_autofree char *text = one_view(set, true);

	assert_non_null(strstr(text,
		"kernel  profile      cpu-clock:u  cpu-clock:k  cycles:pp  cycles:Z\n"
		"6.1.0   perf-6.1     ok           -            -          -\n"
		"6.1.0   perf-3.6     -            CRASH!       NOENT      rej\n"
		"6.1.0   perf-modern  -            -            ok         -\n"));
	assert_non_null(strstr(text,
		"\nHARM (no known erratum explains it):\n"
		"  6.1.0 perf-3.6 cpu-clock:k: GUEST_CRASH 2/2 [cpu GenuineIntel 6/58/9, r1]\n"
		"      evidence: console (guest 0): sysrq triggered crash\n"));
	assert_non_null(strstr(text,
		"\nevery non-OK cell (3):\n"
		"  perf-3.6     cpu-clock:k                              GUEST_CRASH k/n=2/2\n"
		"  perf-3.6     cycles:pp                                ENOENT (cpu0=ENOENT "
		"cpu1=EBUSY)  after 2 tries: set exclude_guest -> ENOENT\n"
		"  perf-3.6     cycles:Z                                 REJECTED  rejected: "
		"cycles:Z: unknown modifier 'Z' at 8\n"));
	assert_non_null(strstr(text, "limitation: " RESULTS_LIMIT_TCG "\n"));
	assert_non_null(strstr(text,
		"\ncells by outcome: OK 2, ENOENT 1, GUEST_CRASH 1, rejected by the profile 1\n"));
	assert_true(g_str_has_suffix(text, "1 harmful cell, 0 known errata, 0 INFRA\n"));
}

/* Two inputs keep the merged view: no tries section, no "written by". */
static void test_two_runs_no_tries(void **state)
{
	g_autoptr(result_set) a = one_run();
	g_autoptr(result_set) b = one_run();
	g_autoptr(matrix) m = NULL;
	g_autoptr(GString) text = g_string_new(NULL);
	const struct result_set *sets[2] = { a, b };
	const char *names[2] = { "a", "b" };

	g_free(b->kernel);
	b->kernel = g_strdup("6.2.0");
	for (guint i = 0; i < b->cells->len; i++) {
		struct cell *c = b->cells->pdata[i];

		g_free(c->kernel);
		c->kernel = g_strdup("6.2.0");
	}
	assert_int_equal(matrix_build(sets, names, 2, NULL, &m), 0);
	matrix_format_text(m, false, 120, text);
	assert_null(strstr(text->str, "written by"));
	assert_null(strstr(text->str, "profiles: "));
	assert_null(strstr(text->str, "by outcome and tries"));
	assert_non_null(strstr(text->str, "      limitations: as [1]\n"));
	assert_non_null(strstr(text->str, "\ncells by outcome: OK 4, ENOENT 2, GUEST_CRASH 2, "
					  "rejected by the profile 2\n"));
	g_string_truncate(text, 0);
	matrix_format_text_all(m, false, 120, text);
	assert_null(strstr(text->str, "every non-OK cell"));
	assert_non_null(strstr(text->str, "\ncells by outcome: OK 4"));
}

/* perf's messages, tries and specs of one run are escaped in the tries
 * section as everywhere else. */
static void test_one_run_hostile_tries(void **state)
{
	g_autoptr(result_set) set = one_run();
	struct perf_event_attr sw = attr_make(PERF_TYPE_SOFTWARE, 0, 0, 0);
	struct cell *c;

	c = cell_new("6.1.0", "perf\033[2J", "cpu\033]0;x\007:u");
	cell_set_error(c, "cpu\033]0;x\007:u: bad\r\nHARM: none");
	results_add_cell(set, c);
	c = cell_new("6.1.0", "perf-3.6", "cpu-clock:h");
	cell_add_try(c, &sw, OUTCOME_EACCES, NULL);
	cell_add_try(c, &sw, OUTCOME_EINVAL, "why\033[31m");
	c->outcome = OUTCOME_EINVAL;
	results_add_cell(set, c);
	for (int all = 0; all < 2; all++) {
		g_autofree char *text = one_view(set, all);

		assert_null(strchr(text, '\033'));
		assert_null(strchr(text, '\r'));
		assert_null(strchr(text, '\007'));
		assert_null(strstr(text, "\nHARM: none"));
		assert_non_null(strstr(text, "why\\x1b[31m -> EINVAL"));
		assert_non_null(strstr(text, "bad\\x0d\\x0aHARM: none"));
		if (all)
			assert_non_null(strstr(text, "  perf\\x1b[2J  cpu\\x1b]0;x\\x07:u"));
	}
}

/* A sweep shaped like a host without a hardware PMU: 64 modifiers x 3
 * events x 2 profiles plus raw; one spec where the profiles disagree. */
static struct result_set *set_sweep(void)
{
	static const char *const mods[] = { "", "u", "k", "uk", "h", "G", "H", "GH" };
	static const char *const pp[] = { "", "p", "pp", "ppp" };
	struct result_set *set = result_set_new(RESULTS_KIND_PROBE);
	struct perf_event_attr sw = attr_make(PERF_TYPE_SOFTWARE, 0, 0, 0);
	struct perf_event_attr hw = attr_make(PERF_TYPE_HARDWARE, 1, 0, 0);
	struct perf_event_attr hw0 = attr_make(PERF_TYPE_HARDWARE, 0, 2, 0);
	const char *profiles[] = { "perf-3.1", "perf-3.6", "perf-3.7" };

	for (size_t p = 0; p < G_N_ELEMENTS(profiles); p++)
		for (size_t e = 0; e < 3; e++)
			for (size_t m = 0; m < G_N_ELEMENTS(mods); m++)
				for (size_t q = 0; q < G_N_ELEMENTS(pp); q++) {
					static const char *const ev[] = { "cpu-clock", "instructions",
									  "branch-misses" };
					g_autofree char *spec = NULL;
					struct cell *c;

					spec = *mods[m] || *pp[q]
						? g_strdup_printf("%s:%s%s", ev[e], mods[m], pp[q])
						: g_strdup(ev[e]);
					c = cell_new("6.1", profiles[p], spec);
					if (p == 0 && strpbrk(mods[m], "GH")) {
						g_autofree char *msg = g_strdup_printf(
							"%s: unknown modifier '%c' at %zu (perf-3.1 knows "
							"'ukhp')", spec, *strpbrk(mods[m], "GH"),
							strlen(ev[e]) + 2);

						cell_set_error(c, msg);
					} else if (e == 0) {
						cell_set_attr(c, &sw);
						cell_add_try(c, &sw, OUTCOME_OK, NULL);
						c->outcome = OUTCOME_OK;
					} else {
						cell_set_attr(c, &hw);
						cell_add_try(c, &hw, OUTCOME_ENOENT, NULL);
						c->outcome = OUTCOME_ENOENT;
					}
					results_add_cell(set, c);
				}
	/* The 2012 story in one cell pair: the same spec, two releases. */
	for (size_t p = 1; p < 3; p++) {
		struct cell *c = cell_new("6.1", profiles[p], "cycles:pp");

		cell_set_attr(c, &hw0);
		cell_add_try(c, &hw0, p == 1 ? OUTCOME_EOPNOTSUPP : OUTCOME_OK, NULL);
		c->outcome = p == 1 ? OUTCOME_EOPNOTSUPP : OUTCOME_OK;
		results_add_cell(set, c);
	}
	return set;
}

/* The default view shows the ten largest errno groups and counts the rest;
 * --all shows every one. One fallback repeated (perf's :P walk) is named
 * once with its count. */
static void test_one_run_groups_capped(void **state)
{
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	struct perf_event_attr sw = attr_make(PERF_TYPE_SOFTWARE, 0, 0, 0);
	g_autofree char *text = NULL, *all = NULL;

	for (unsigned int g = 0; g < 12; g++)
		for (unsigned int i = 0; i <= 12 - g; i++) {
			g_autofree char *spec = g_strdup_printf("ev%u:%c", i, "ukhpGHSDIWeb"[g]);
			g_autofree char *why = g_strdup_printf("fallback %u", g);
			struct cell *c = cell_new(set->kernel, "perf-6.1", spec);

			cell_add_try(c, &sw, OUTCOME_EOPNOTSUPP, NULL);
			for (int k = 0; k < 3; k++)
				cell_add_try(c, &sw, OUTCOME_EINVAL, why);
			c->outcome = OUTCOME_EINVAL;
			results_add_cell(set, c);
		}
	text = one_view(set, false);
	all = one_view(set, true);
	assert_non_null(strstr(text, "\nEINVAL after fallback 0 -> EINVAL (3 times): 13 cells\n"));
	assert_non_null(strstr(text, "\nEINVAL after fallback 9 -> EINVAL (3 times): 4 cells\n"));
	assert_null(strstr(text, "fallback 10 "));
	assert_non_null(strstr(text, "\n  ... 2 more groups (5 cells): --all lists every group "
				     "and every non-OK cell\n"));
	assert_non_null(strstr(all, "\nEINVAL after fallback 11 -> EINVAL (3 times): 2 cells\n"));
	assert_null(strstr(all, "more groups"));
	assert_non_null(strstr(all, "after 4 tries: fallback 11 -> EINVAL; fallback 11 -> EINVAL; "
				    "fallback 11 -> EINVAL\n"));
}

/* A probe-sized sweep of one host: the grouped view stays a screenful and
 * names what the old count table and groups named. */
static void test_one_probe_grouped(void **state)
{
	g_autoptr(result_set) set = set_sweep();
	g_autofree char *text = one_view(set, false);
	g_autofree char *all = one_view(set, true);
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

	assert_true(g_strv_length(lines) < 70);
	assert_non_null(strstr(text, "errno and rejected cells by outcome and tries: 205 "
				     "(EOPNOTSUPP 1, ENOENT 168, rejected by the profile 36) "
				     "in 4 groups\n"));
	assert_non_null(strstr(text, "\ncells by outcome: OK 85, EOPNOTSUPP 1, ENOENT 168, "
				     "rejected by the profile 36\n"));
	/* One line for the hardware events x every spec of two profiles. */
	assert_non_null(strstr(text, "ENOENT at the first try: 168 cells\n"
				     "  2 events, 168 cells: every spec of perf-3.6, perf-3.7; "
				     "20 of 32 specs of perf-3.1:\n"
				     "      instructions branch-misses\n"));
	/* Parser rules are grouped without the spec and the position. */
	assert_non_null(strstr(text, "rejected by the profile's parser (no syscall): "
				     "unknown modifier 'G' (perf-3.1 knows 'ukhp'): 24 cells"));
	/* The spec the releases disagree on is named, with both answers. */
	assert_non_null(strstr(text, "profiles disagree on 1 spec"));
	assert_non_null(strstr(text, "  OK under perf-3.7; EOPNOTSUPP under perf-3.6 (1 spec):\n"
				     "      cycles:pp\n"));
	assert_null(strstr(text, "perf-3.6     instructions:ukp "));
	assert_non_null(strstr(all, "every non-OK cell (205):"));
	assert_non_null(strstr(all, "  perf-3.6     instructions:ukp "));
	assert_non_null(strstr(all, "  perf-3.1     cpu-clock:GH"));
}

static void test_filters(void **state)
{
	struct loaded l;
	GPtrArray *views = NULL;
	struct matrix_filter f = { .event = "cycles", .outcome = "harm" };
	struct matrix_filter bad_outcome = { .outcome = "GUEST_EXPLODED" };
	struct matrix_filter no_match = { .profile = "perf-9*" };
	struct matrix_filter spec = { .event = "cycles:pp", .kernel = "3.[67]*" };
	unsigned int n = 0;

	load(&l, "diff", "run-3.6", "run-3.7", NULL);
	assert_int_equal(matrix_filter_sets((const struct result_set *const *)l.sets->pdata, 2, &f,
					    &views), 0);
	for (guint i = 0; i < views->len; i++) {
		const struct result_set *v = views->pdata[i];

		for (guint c = 0; c < v->cells->len; c++) {
			const struct cell *cell = v->cells->pdata[c];

			assert_true(outcome_is_harm(cell->outcome));
			assert_true(g_str_has_prefix(cell->spec, "cycles"));
			n++;
		}
	}
	assert_int_equal(n, 2);  /* cycles:pp under perf-3.6 and raw on 3.6 */
	matrix_views_free(views);
	assert_int_equal(matrix_filter_sets((const struct result_set *const *)l.sets->pdata, 2,
					    &spec, &views), 0);
	n = 0;
	for (guint i = 0; i < views->len; i++)
		n += ((struct result_set *)views->pdata[i])->cells->len;
	assert_int_equal(n, 4);  /* cycles:pp under perf-3.6 and perf-3.7, two kernels */
	matrix_views_free(views);
	assert_int_equal(matrix_filter_sets((const struct result_set *const *)l.sets->pdata, 2,
					    &bad_outcome, &views), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "--outcome 'GUEST_EXPLODED' names no outcome"));
	assert_int_equal(matrix_filter_sets((const struct result_set *const *)l.sets->pdata, 2,
					    &no_match, &views), -EINVAL);
	assert_string_equal(pc_errmsg(), "--profile 'perf-9*' matches no cell of the inputs");
	assert_null(views);
	loaded_clear(&l);
}

static void test_no_inputs(void **state)
{
	struct matrix *m = NULL;

	assert_int_equal(matrix_build(NULL, NULL, 0, NULL, &m), -EINVAL);
	assert_null(m);
	assert_non_null(strstr(pc_errmsg(), "no result files"));
}

int main(void)
{
	g_autofree char *top = test_top_dir();

	snprintf(top_dir, sizeof(top_dir), "%s", top);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_2012_three_kernels),
		cmocka_unit_test(test_cpu_steppings),
		cmocka_unit_test(test_known_errata),
		cmocka_unit_test(test_duplicates_merge_worst),
		cmocka_unit_test(test_text_limitations_and_color),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_no_inputs),
		cmocka_unit_test(test_modclass),
		cmocka_unit_test(test_view_planted_difference),
		cmocka_unit_test(test_duplicate_in_one_input),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_one_run_view),
		cmocka_unit_test(test_one_run_all),
		cmocka_unit_test(test_two_runs_no_tries),
		cmocka_unit_test(test_one_run_hostile_tries),
		cmocka_unit_test(test_one_run_groups_capped),
		cmocka_unit_test(test_one_probe_grouped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
