#include "only.h"

#include "attr.h"
#include "log.h"
#include "repro.h"
#include "scenario.h"
#include "textesc.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

/* A traced perf binary's column (perfbin.h names them "bin:perf-<version>"):
 * its attrs came from a binary this run does not have. */
#define ONLY_BIN_PREFIX "bin:"

/* pc_fail with a prefix before the current message (pc_errmsg's buffer is
 * the one pc_fail writes: copied first). */
static int __attribute__((format(printf, 2, 3))) refail_prefix(int err, const char *fmt, ...)
{
	g_autofree char *msg = g_strdup(pc_errmsg());
	g_autofree char *prefix = NULL;
	va_list ap;

	va_start(ap, fmt);
	prefix = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	return pc_fail(err, "%s%s", prefix, msg);
}

static void only_cell_free(gpointer p)
{
	struct only_cell *c = p;

	g_free(c->profile);
	g_free(c->spec);
	g_free(c);
}

static struct run_only *only_new(const char *result, const char *run_id)
{
	struct run_only *o = g_new0(struct run_only, 1);

	o->result = g_strdup(result);
	o->run_id = run_id && *run_id ? g_strdup(run_id) : NULL;
	o->cells = g_ptr_array_new_with_free_func(only_cell_free);
	return o;
}

void only_free(struct run_only *o)
{
	if (!o)
		return;
	g_free(o->result);
	g_free(o->run_id);
	if (o->cells)
		g_ptr_array_unref(o->cells);
	g_free(o);
}

static void only_add(struct run_only *o, const char *profile, const char *spec,
		     const struct perf_event_attr *attr, enum outcome was)
{
	struct only_cell *c = g_new0(struct only_cell, 1);

	c->profile = g_strdup(profile);
	c->spec = g_strdup(spec);
	c->attr = *attr;
	c->was = was;
	g_ptr_array_add(o->cells, c);
}

int only_select(const char *result, const char *const *names, size_t n,
		struct run_only **out)
{
	g_autoptr(result_set) set = NULL;
	g_autoptr(GPtrArray) picked = g_ptr_array_new();
	g_autoptr(GHashTable) seen = g_hash_table_new(NULL, NULL);
	g_autoptr(GHashTable) keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree char *shown = text_escape(result);
	g_autoptr(run_only) o = NULL;
	int e;

	*out = NULL;
	if ((e = results_read_json(result, &set)))
		return pc_errno_bad_path(e) || e == -EINVAL ? refail_prefix(EINVAL, "--only: ") : e;
	for (size_t i = 0; i < n; i++) {
		const struct cell *c;

		if (repro_find_cell(set, names[i], &c) < 0)
			return refail_prefix(EINVAL, "--only %s: --cell: ", shown);
		if (g_hash_table_add(seen, (gpointer)c))
			g_ptr_array_add(picked, (gpointer)c);
	}
	if (!n)
		for (guint i = 0; i < set->cells->len; i++)
			if (repro_cell_default(set->cells->pdata[i]))
				g_ptr_array_add(picked, set->cells->pdata[i]);
	o = only_new(result, set->run_id);
	for (guint i = 0; i < picked->len; i++) {
		const struct cell *c = picked->pdata[i];
		g_autofree char *cp = text_escape(c->profile), *cs = text_escape(c->spec);
		char *key = results_cell_key(c->profile, c->spec);

		/* A merged file may hold one cell per kernel: re-tested once. */
		if (!g_hash_table_add(keys, key))
			continue;

		if (g_str_has_prefix(c->profile, ONLY_BIN_PREFIX)) {
			pc_warn("--only %s: cell %s:%s left out: its attr was traced from a perf "
				"binary, which this run cannot encode again (re-test it with "
				"--perf-binary in a full run)", shown, cp, cs);
			o->left_out++;
			continue;
		}
		only_add(o, c->profile, c->spec, cell_first_attr(c), c->outcome);
	}
	if (!o->cells->len)
		return pc_fail(EINVAL, "--only %s: nothing to re-test: %s", shown,
			       o->left_out ? "every cell selected is a traced perf binary's" :
			       "no harm or errno cell with an attr (--cell PROFILE:SPEC picks others)");
	*out = g_steal_pointer(&o);
	return 0;
}

char *only_attr_diff(const struct perf_event_attr *was, const struct perf_event_attr *now)
{
	g_autoptr(GString) s = g_string_new(NULL);

	for (int f = 0; f < ATTR_FIELD_COUNT; f++) {
		uint64_t a = attr_get(was, (enum attr_field)f), b = attr_get(now, (enum attr_field)f);

		if (a == b)
			continue;
		/* A dynamic PMU's number is the order it registered in on that
		 * host's boot, not part of the event (only.h). */
		if (f == ATTR_F_type && a >= PERF_TYPE_MAX && b >= PERF_TYPE_MAX)
			continue;
		g_string_append_printf(s, "%s%s %#" G_GINT64_MODIFIER "x -> %#" G_GINT64_MODIFIER "x",
				       s->len ? ", " : "", attr_field_name((enum attr_field)f),
				       (guint64)a, (guint64)b);
	}
	return s->len ? g_string_free(g_steal_pointer(&s), FALSE) : NULL;
}

/* Why a selected cell cannot be re-tested here: NULL when it can. */
static char *cell_refusal(const struct run_only *o, const struct only_cell *oc,
			  const struct cell *c)
{
	g_autofree char *cp = text_escape(oc->profile), *cs = text_escape(oc->spec);
	g_autofree char *diff = NULL;

	if (!c)
		return g_strdup_printf("cell %s:%s of RESULT is not in this scenario's sweep "
				       "(give the scenario RESULT's run used)", cp, cs);
	if (!c->has_attr) {
		g_autofree char *why = text_escape(c->error ? c->error : "?");

		return g_strdup_printf("cell %s:%s: profile %s rejects the spec here (%s); "
				       "RESULT has an attr for it", cp, cs, cp, why);
	}
	if ((diff = only_attr_diff(&oc->attr, &c->attr)))
		return g_strdup_printf("cell %s:%s: profile %s encodes another attr than RESULT's "
				       "(RESULT -> this binary: %s): a re-test would arm another "
				       "attr under its name", cp, cs, cp, diff);
	return NULL;
}

int only_apply(const struct run_only *o, struct result_set *set)
{
	g_autoptr(GHashTable) by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree struct cell **match = g_new0(struct cell *, o->cells->len + 1);
	g_autofree char *shown = text_escape(o->result);
	g_autoptr(GHashTable) keep = g_hash_table_new(NULL, NULL);
	json_t *cells = json_array(), *obj;
	struct cell **all;
	gsize n_all;

	for (guint i = 0; i < o->cells->len; i++) {
		const struct only_cell *oc = o->cells->pdata[i];

		g_hash_table_insert(by_key, results_cell_key(oc->profile, oc->spec),
				    GUINT_TO_POINTER(i + 1));
	}
	for (guint i = 0; i < set->cells->len; i++) {
		struct cell *c = set->cells->pdata[i];
		g_autofree char *key = results_cell_key(c->profile, c->spec);
		guint at = GPOINTER_TO_UINT(g_hash_table_lookup(by_key, key));

		if (at && !match[at - 1])
			match[at - 1] = c;
	}
	/* Every check before anything changes: bad input leaves set whole. */
	for (guint i = 0; i < o->cells->len; i++) {
		g_autofree char *why = cell_refusal(o, o->cells->pdata[i], match[i]);

		if (why) {
			json_decref(cells);
			return pc_fail(EINVAL, "--only %s: %s", shown, why);
		}
	}
	for (guint i = 0; i < o->cells->len; i++) {
		const struct only_cell *oc = o->cells->pdata[i];
		json_t *ev = json_pack("{s:s,s:o,s:s}", "kind", "only",
				       "result", results_json_string(o->result),
				       "was", outcome_name(oc->was));

		json_object_set_new(ev, "run_id", o->run_id ? json_string(o->run_id) : json_null());
		json_object_set_new(ev, "why", json_string("re-tested from RESULT (run --only): "
							   "the outcome here is this run's"));
		json_array_append_new(match[i]->evidence, ev);
		g_hash_table_add(keep, match[i]);
		json_array_append_new(cells, json_pack("{s:s,s:s,s:s}", "profile", oc->profile,
						       "spec", oc->spec, "was", outcome_name(oc->was)));
	}
	/* The scenario's other cells go: the result has only what was re-tested. */
	all = (struct cell **)g_ptr_array_steal(set->cells, &n_all);
	for (gsize i = 0; i < n_all; i++) {
		if (g_hash_table_contains(keep, all[i]))
			g_ptr_array_add(set->cells, all[i]);
		else
			cell_free(all[i]);
	}
	g_free(all);
	obj = json_pack("{s:o,s:o,s:o,s:I}", "result", results_json_string(o->result),
			"run_id", o->run_id ? json_string(o->run_id) : json_null(),
			"cells", cells, "left_out_perf_binary_cells", (json_int_t)o->left_out);
	json_object_set_new(set->extra ? set->extra : (set->extra = json_object()), "only", obj);
	results_add_limitation(set, "run --only: re-tested only %u cell(s) of %s (run %s), the ones "
			       "it marks harmed or failed with an errno or --cell names; the "
			       "scenario's other cells were not run%s", o->cells->len, shown,
			       o->run_id ? o->run_id : "?",
			       o->left_out ? "; cells of traced perf binaries were left out" : "");
	return 0;
}

json_t *only_to_json(const struct run_only *o)
{
	json_t *cells = json_array();

	for (guint i = 0; i < o->cells->len; i++) {
		const struct only_cell *oc = o->cells->pdata[i];

		json_array_append_new(cells, json_pack("{s:s,s:s,s:o,s:s}", "profile", oc->profile,
						       "spec", oc->spec, "attr", attr_to_json(&oc->attr),
						       "was", outcome_name(oc->was)));
	}
	return json_pack("{s:o,s:o,s:o,s:I}", "result", results_json_string(o->result),
			 "run_id", o->run_id ? json_string(o->run_id) : json_null(),
			 "cells", cells, "left_out", (json_int_t)o->left_out);
}

int only_from_json(const json_t *j, const char *where, struct run_only **out)
{
	const char *result = json_string_value(json_object_get(j, "result"));
	json_t *cells = json_object_get(j, "cells"), *c;
	g_autoptr(run_only) o = NULL;
	size_t i;

	*out = NULL;
	if (!result || !json_is_array(cells) || !json_array_size(cells))
		return pc_fail(EINVAL, "%s: bad \"only\" in the start line", where);
	o = only_new(result, json_string_value(json_object_get(j, "run_id")));
	json_array_foreach(cells, i, c) {
		const char *profile = json_string_value(json_object_get(c, "profile"));
		const char *spec = json_string_value(json_object_get(c, "spec"));
		enum outcome was = outcome_from_name(json_string_value(json_object_get(c, "was")));
		struct perf_event_attr attr;

		memset(&attr, 0, sizeof(attr));
		if (!profile || !spec || was == OUTCOME_COUNT ||
		    attr_from_json(json_object_get(c, "attr"), &attr) < 0)
			return pc_fail(EINVAL, "%s: bad \"only\" in the start line: cells[%zu]",
				       where, i);
		only_add(o, profile, spec, &attr, was);
	}
	o->left_out = (unsigned int)json_integer_value(json_object_get(j, "left_out"));
	*out = g_steal_pointer(&o);
	return 0;
}

char *only_default_scenario(const char *result)
{
	g_autofree char *base = g_path_get_basename(result);
	g_autofree char *dir = g_path_get_dirname(result);
	g_autofree char *kept = g_build_filename(dir, SCENARIO_RUN_FILE, NULL);

	if (strcmp(base, "run.json") || !g_file_test(kept, G_FILE_TEST_IS_REGULAR))
		return NULL;
	return g_steal_pointer(&kept);
}
