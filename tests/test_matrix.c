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
	assert_non_null(strstr(text->str, "HARM (no known erratum explains it):\n"
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
	matrix_format_text(m, false, 40, text);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
