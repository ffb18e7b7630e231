/* Shared by the fuzz targets that read result sets (fuzz_results,
 * fuzz_lava): "the same cells" means every field a user reads back, and a
 * result set goes back through the writer production uses (results_to_text,
 * what results_write_json writes) and the reader (results_read_json). */
#ifndef PMUCANARY_FUZZ_CELLS_H
#define PMUCANARY_FUZZ_CELLS_H
#include "fuzz.h"
#include "attr.h"
#include "results.h"
#include <jansson.h>
#include <stdio.h>

static inline bool fuzz_str_same(const char *a, const char *b)
{
	return !g_strcmp0(a ? a : "", b ? b : "");
}

static inline bool fuzz_attr_same(const struct perf_event_attr *a, const struct perf_event_attr *b)
{
	g_autofree char *x = attr_to_string(a), *y = attr_to_string(b);

	return !strcmp(x, y);
}

static inline bool fuzz_json_same(const json_t *a, const json_t *b)
{
	if (!a || json_is_null(a) || (json_is_array(a) && !json_array_size(a)))
		return !b || json_is_null(b) || (json_is_array(b) && !json_array_size(b));
	return b && json_equal(a, b);
}

/* Whether cell a and b say the same; prints the first difference. */
static inline bool fuzz_cell_same(const struct cell *a, const struct cell *b, guint i)
{
	const char *what = NULL;

	if (!fuzz_str_same(a->kernel, b->kernel))
		what = "kernel";
	else if (strcmp(a->profile, b->profile) || strcmp(a->spec, b->spec))
		what = "profile or spec";
	else if (a->outcome != b->outcome || a->k != b->k || a->n != b->n)
		what = "outcome or k/n";
	else if (a->has_attr != b->has_attr || (a->has_attr && !fuzz_attr_same(&a->attr, &b->attr)))
		what = "attr";
	else if (!fuzz_str_same(a->error, b->error))
		what = "error";
	else if (a->tries->len != b->tries->len)
		what = "number of tries";
	else if (a->per_cpu->len != b->per_cpu->len)
		what = "number of per-cpu outcomes";
	else if (!fuzz_json_same(a->evidence, b->evidence))
		what = "evidence";
	else if (!fuzz_json_same(a->extra, b->extra))
		what = "unknown keys";
	for (guint t = 0; !what && t < a->tries->len; t++) {
		const struct cell_try *x = &g_array_index(a->tries, struct cell_try, t);
		const struct cell_try *y = &g_array_index(b->tries, struct cell_try, t);

		if (x->outcome != y->outcome || !fuzz_str_same(x->why, y->why) ||
		    !fuzz_attr_same(&x->attr, &y->attr))
			what = "a try";
	}
	for (guint c = 0; !what && c < a->per_cpu->len; c++) {
		const struct cell_cpu *x = &g_array_index(a->per_cpu, struct cell_cpu, c);
		const struct cell_cpu *y = &g_array_index(b->per_cpu, struct cell_cpu, c);

		if (x->cpu != y->cpu || x->outcome != y->outcome)
			what = "a per-cpu outcome";
	}
	if (what)
		fprintf(stderr, "cells[%u] (%s %s): %s differs after a round trip\n", i, a->profile,
			a->spec, what);
	return !what;
}

static inline bool fuzz_cells_same(const struct result_set *a, const struct result_set *b)
{
	if (a->cells->len != b->cells->len) {
		fprintf(stderr, "%u cells, %u after a round trip\n", a->cells->len, b->cells->len);
		return false;
	}
	for (guint i = 0; i < a->cells->len; i++)
		if (!fuzz_cell_same(a->cells->pdata[i], b->cells->pdata[i], i))
			return false;
	return true;
}

/* set through results_to_json() and through the file writer's text, each
 * read back: the same cells both ways. */
static inline void fuzz_check_round_trips(const struct result_set *set)
{
	g_autoptr(result_set) again = NULL;
	g_autoptr(result_set) file = NULL;
	g_autoptr(GString) text = results_to_text(set);
	g_autofree char *path = NULL;
	json_t *j = results_to_json(set);
	int ret;

	FUZZ_ASSERT(j != NULL);
	ret = results_from_json(j, "rewritten", &again);
	if (ret < 0)
		fprintf(stderr, "rewritten: %s\n", pc_errmsg());
	FUZZ_ASSERT(ret == 0);
	json_decref(j);
	FUZZ_ASSERT(fuzz_cells_same(set, again));
	FUZZ_ASSERT(text != NULL);
	path = fuzz_file("written.json", (const uint8_t *)text->str, text->len);
	ret = results_read_json(path, &file);
	if (ret < 0)
		fprintf(stderr, "written: %s\n", pc_errmsg());
	FUZZ_ASSERT(ret == 0);
	FUZZ_ASSERT(fuzz_cells_same(set, file));
}

#endif
