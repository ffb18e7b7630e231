/* Writing result files (results.h): the jansson tree (results_to_json),
 * and the same document as text straight from the model
 * (results_to_text, results_write_json through outfile). */
#include "results.h"
#include "results_priv.h"

#include "attr.h"
#include "jsonstr.h"
#include "log.h"
#include "outfile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *results_json_string(const char *s)
{
	const char *end;
	GString *esc;

	if (!s)
		return json_null();
	if (g_utf8_validate(s, -1, NULL))
		return json_string_nocheck(s);
	/* Invalid bytes (a sysfs name, a guest's console, a perf binary's
	 * stderr) become the text \xNN: kept, and the file stays JSON that
	 * every reader takes. */
	esc = g_string_new(NULL);
	while (!g_utf8_validate(s, -1, &end)) {
		g_string_append_len(esc, s, end - s);
		g_string_append_printf(esc, "\\x%02x", (unsigned char)*end);
		s = end + 1;
	}
	g_string_append(esc, s);
	{
		json_t *j = json_string_nocheck(esc->str);

		g_string_free(esc, TRUE);
		return j;
	}
}

static void extra_merge(json_t *obj, const json_t *extra)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)extra, key, v)
		if (!json_object_get(obj, key))
			json_object_set(obj, key, v);
}

/* The file's "attrs": each distinct attr once, in order of first use. */
struct attr_table {
	GHashTable *index;         /* struct perf_event_attr * -> index + 1 */
	json_t *attrs;
};

static json_int_t attr_table_add(struct attr_table *t, const struct perf_event_attr *attr)
{
	gpointer v = g_hash_table_lookup(t->index, attr);

	if (v)
		return GPOINTER_TO_SIZE(v) - 1;
	json_array_append_new(t->attrs, attr_to_json(attr));
	g_hash_table_insert(t->index, (gpointer)attr,
			    GSIZE_TO_POINTER(json_array_size(t->attrs)));
	return (json_int_t)json_array_size(t->attrs) - 1;
}

static json_t *cell_to_json(const struct cell *cell, const char *kernel,
			    struct attr_table *at)
{
	json_t *o = json_object();
	json_t *tries = json_array();

	/* A cell's kernel is the file's unless it says otherwise (a lab
	 * merges kernels): 112k copies of one string cost more than the
	 * rest of a cell. */
	if (g_strcmp0(cell->kernel, kernel) != 0)
		json_object_set_new(o, "kernel", results_json_string(cell->kernel));
	json_object_set_new(o, "profile", results_json_string(cell->profile));
	json_object_set_new(o, "spec", results_json_string(cell->spec));
	if (cell->has_attr)
		json_object_set_new(o, "attr", json_integer(attr_table_add(at, &cell->attr)));
	if (cell->error)
		json_object_set_new(o, "error", results_json_string(cell->error));
	json_object_set_new(o, "outcome", json_string_nocheck(outcome_name(cell->outcome)));
	for (unsigned int i = 0; i < cell->tries->len; i++) {
		const struct cell_try *t = &g_array_index(cell->tries, struct cell_try, i);
		json_t *jt = json_object();

		json_object_set_new(jt, "attr", json_integer(attr_table_add(at, &t->attr)));
		json_object_set_new(jt, "outcome", json_string_nocheck(outcome_name(t->outcome)));
		if (t->why)
			json_object_set_new(jt, "why", results_json_string(t->why));
		json_array_append_new(tries, jt);
	}
	json_object_set_new(o, "tries", tries);
	if (cell->per_cpu->len) {
		json_t *pc = json_object();

		for (unsigned int i = 0; i < cell->per_cpu->len; i++) {
			const struct cell_cpu *c = &g_array_index(cell->per_cpu, struct cell_cpu, i);
			char key[16];

			snprintf(key, sizeof(key), "%d", c->cpu);
			json_object_set_new(pc, key, json_string_nocheck(outcome_name(c->outcome)));
		}
		json_object_set_new(o, "per_cpu", pc);
	}
	/* k/n count repeated tries of a harm; 0/0 (most cells) goes unsaid. */
	if (cell->k || cell->n) {
		json_object_set_new(o, "k", json_integer(cell->k));
		json_object_set_new(o, "n", json_integer(cell->n));
	}
	if (cell->evidence && json_array_size(cell->evidence))
		json_object_set_new(o, "evidence", json_incref(cell->evidence));
	if (cell->extra)
		extra_merge(o, cell->extra);
	return o;
}

json_t *results_to_json(const struct result_set *set)
{
	json_t *o = json_object();
	json_t *lim = json_array();
	json_t *cells = json_array();
	const char *kernel = set->kernel ? set->kernel : "";
	struct attr_table at = { g_hash_table_new(attr_hash_func, attr_equal_func),
				 json_array() };

	json_object_set_new(o, "schema", json_string(RESULTS_SCHEMA));
	json_object_set_new(o, "kind", json_string(results_kind_name(set->kind)));
	json_object_set_new(o, "run_id", results_json_string(set->run_id));
	json_object_set_new(o, "created", results_json_string(set->created));
	json_object_set_new(o, "tool_version", results_json_string(set->tool_version));
	json_object_set_new(o, "host", set->host ? json_incref(set->host) : json_object());
	json_object_set_new(o, "kernel", results_json_string(kernel));
	json_object_set_new(o, "accel", results_json_string(set->accel ? set->accel : "none"));
	for (unsigned int i = 0; i < set->limitations->len; i++)
		json_array_append_new(lim, results_json_string(set->limitations->pdata[i]));
	json_object_set_new(o, "limitations", lim);
	json_object_set_new(o, "selftest", json_boolean(set->selftest));
	json_object_set_new(o, "scenario",
			    set->scenario ? json_incref(set->scenario) : json_null());
	for (unsigned int i = 0; i < set->cells->len; i++)
		json_array_append_new(cells, cell_to_json(set->cells->pdata[i], kernel, &at));
	json_object_set_new(o, "attrs", at.attrs);
	json_object_set_new(o, "cells", cells);
	g_hash_table_unref(at.index);
	if (set->extra)
		extra_merge(o, set->extra);
	return o;
}

/* ---- the writer: text straight from the model ---- */

/* A JSON string: jansson's escapes, and bytes that are not UTF-8 as the
 * text \xNN, as results_json_string() does. */
static void text_json_append(GString *out, const char *s)
{
	jsonstr_append(out, s, 0);
}

/* false when jansson cannot encode v (out of memory, or a value it refuses):
 * the file is then not written, rather than written with a null in its place. */
static bool json_value_append(GString *out, const json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	if (!text)
		return false;
	g_string_append(out, text);
	free(text);
	return true;
}

/* attr_to_json(), written out. */
static void attr_text_append(GString *out, const struct perf_event_attr *attr)
{
	const char *sep = "";

	g_string_append_c(out, '{');
	for (int f = 0; f < ATTR_FIELD_COUNT; f++) {
		uint64_t v = attr_get(attr, f);

		if (!v)
			continue;
		g_string_append_printf(out, "%s\"%s\":", sep, attr_field_display_name(attr, f));
		if (f == ATTR_F_clockid)
			g_string_append_printf(out, "%" PRId32, (int32_t)v);
		else if (v > (uint64_t)INT64_MAX)
			g_string_append_printf(out, "\"0x%" PRIx64 "\"", v);
		else
			g_string_append_printf(out, "%" PRIu64, v);
		sep = ",";
	}
	g_string_append_c(out, '}');
}

static bool cell_text_append(GString *out, const struct cell *cell, const char *kernel,
			     GHashTable *index)
{
	if (g_strcmp0(cell->kernel, kernel) != 0) {
		g_string_append(out, "{\"kernel\":");
		text_json_append(out, cell->kernel ? cell->kernel : "");
		g_string_append(out, ",\"profile\":");
	} else {
		g_string_append(out, "{\"profile\":");
	}
	text_json_append(out, cell->profile ? cell->profile : "");
	g_string_append(out, ",\"spec\":");
	text_json_append(out, cell->spec ? cell->spec : "");
	if (cell->has_attr)
		g_string_append_printf(out, ",\"attr\":%u", GPOINTER_TO_UINT(
			g_hash_table_lookup(index, &cell->attr)) - 1);
	if (cell->error) {
		g_string_append(out, ",\"error\":");
		text_json_append(out, cell->error);
	}
	g_string_append_printf(out, ",\"outcome\":\"%s\",\"tries\":[", outcome_name(cell->outcome));
	for (unsigned int i = 0; i < cell->tries->len; i++) {
		const struct cell_try *t = &g_array_index(cell->tries, struct cell_try, i);

		g_string_append_printf(out, "%s{\"attr\":%u,\"outcome\":\"%s\"", i ? "," : "",
				       GPOINTER_TO_UINT(g_hash_table_lookup(index, &t->attr)) - 1,
				       outcome_name(t->outcome));
		if (t->why) {
			g_string_append(out, ",\"why\":");
			text_json_append(out, t->why);
		}
		g_string_append_c(out, '}');
	}
	g_string_append_c(out, ']');
	if (cell->per_cpu->len) {
		g_string_append(out, ",\"per_cpu\":{");
		for (unsigned int i = 0; i < cell->per_cpu->len; i++) {
			const struct cell_cpu *c = &g_array_index(cell->per_cpu, struct cell_cpu, i);

			g_string_append_printf(out, "%s\"%d\":\"%s\"", i ? "," : "", c->cpu,
					       outcome_name(c->outcome));
		}
		g_string_append_c(out, '}');
	}
	if (cell->k || cell->n)
		g_string_append_printf(out, ",\"k\":%d,\"n\":%d", cell->k, cell->n);
	if (cell->evidence && json_array_size(cell->evidence)) {
		g_string_append(out, ",\"evidence\":");
		if (!json_value_append(out, cell->evidence))
			return false;
	}
	if (cell->extra) {
		const char *key;
		json_t *v;

		json_object_foreach(cell->extra, key, v) {
			if (g_strv_contains(results_cell_keys, key))
				continue;
			g_string_append_c(out, ',');
			text_json_append(out, key);
			g_string_append_c(out, ':');
			if (!json_value_append(out, v))
				return false;
		}
	}
	g_string_append_c(out, '}');
	return true;
}

/* The writer's attr index hashes and compares bytes: attr_hash() walks every
 * member and was half of a full sweep's write. An attr whose unused bits
 * differ only gets a second, identical entry. */
static guint attr_bytes_hash(gconstpointer p)
{
	const unsigned char *b = p;
	guint64 h = 1469598103934665603ULL;

	for (size_t i = 0; i + 8 <= sizeof(struct perf_event_attr); i += 8) {
		guint64 w;

		memcpy(&w, b + i, 8);
		h = (h ^ w) * 1099511628211ULL;
		h ^= h >> 29;
	}
	return (guint)(h ^ (h >> 32));
}

static gboolean attr_bytes_equal(gconstpointer a, gconstpointer b)
{
	return memcmp(a, b, sizeof(struct perf_event_attr)) == 0;
}

/* The same document as results_to_json() (test_results checks), written
 * from the model without building jansson's tree of every cell: that tree
 * cost more than a second of CPU for a full sweep, and as much again to
 * free. */
GString *results_to_text(const struct result_set *set)
{
	const char *kernel = set->kernel ? set->kernel : "";
	g_autoptr(GHashTable) index = g_hash_table_new(attr_bytes_hash, attr_bytes_equal);
	g_autoptr(GPtrArray) attrs = g_ptr_array_new();
	GString *out = g_string_sized_new(256 + (gsize)set->cells->len * 128);
	json_t *env = json_object();
	char *head;

#define ATTR_INDEX(a)                                                               \
	do {                                                                        \
		if (!g_hash_table_contains(index, (a))) {                           \
			g_ptr_array_add(attrs, (gpointer)(a));                      \
			g_hash_table_insert(index, (gpointer)(a),                   \
					    GUINT_TO_POINTER(attrs->len));          \
		}                                                                   \
	} while (0)
	for (unsigned int i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];

		if (c->has_attr)
			ATTR_INDEX(&c->attr);
		for (unsigned int t = 0; t < c->tries->len; t++)
			ATTR_INDEX(&g_array_index(c->tries, struct cell_try, t).attr);
	}
#undef ATTR_INDEX
	/* The envelope as results_to_json() builds it, less its end. */
	json_object_set_new(env, "schema", json_string(RESULTS_SCHEMA));
	json_object_set_new(env, "kind", json_string(results_kind_name(set->kind)));
	json_object_set_new(env, "run_id", results_json_string(set->run_id));
	json_object_set_new(env, "created", results_json_string(set->created));
	json_object_set_new(env, "tool_version", results_json_string(set->tool_version));
	json_object_set_new(env, "host", set->host ? json_incref(set->host) : json_object());
	json_object_set_new(env, "kernel", results_json_string(kernel));
	json_object_set_new(env, "accel", results_json_string(set->accel ? set->accel : "none"));
	{
		json_t *lim = json_array();

		for (unsigned int i = 0; i < set->limitations->len; i++)
			json_array_append_new(lim, results_json_string(set->limitations->pdata[i]));
		json_object_set_new(env, "limitations", lim);
	}
	json_object_set_new(env, "selftest", json_boolean(set->selftest));
	json_object_set_new(env, "scenario",
			    set->scenario ? json_incref(set->scenario) : json_null());
	if (set->extra) {
		const char *key;
		json_t *v;

		json_object_foreach(set->extra, key, v)
			if (!g_strv_contains(results_set_keys, key))
				json_object_set(env, key, v);
	}
	head = json_dumps(env, JSON_COMPACT);
	json_decref(env);
	if (!head) {
		g_string_free(out, TRUE);
		return NULL;
	}
	/* "{...}" less its "}", then the attrs and the cells. */
	g_string_append_len(out, head, strlen(head) - 1);
	free(head);
	g_string_append(out, ",\"attrs\":[");
	for (unsigned int i = 0; i < attrs->len; i++) {
		if (i)
			g_string_append_c(out, ',');
		attr_text_append(out, attrs->pdata[i]);
	}
	g_string_append(out, "],\"cells\":[");
	for (unsigned int i = 0; i < set->cells->len; i++) {
		if (i)
			g_string_append_c(out, ',');
		if (!cell_text_append(out, set->cells->pdata[i], kernel, index)) {
			g_string_free(out, TRUE);
			return NULL;
		}
	}
	g_string_append(out, "]}\n");
	return out;
}

int results_write_json(const struct result_set *set, const char *path)
{
	g_autoptr(GString) text = results_to_text(set);

	if (!text)
		return pc_fail(ENOMEM, "cannot write %s: cannot build its JSON", path);
	return outfile_write(path, text->str, text->len);
}
