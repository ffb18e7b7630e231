/* Reading result files (results.h): pmucanary/2 and /1, from a jansson
 * tree (results_from_json) or from a file, plain or gzip, through infile
 * (results_read_json), cell by cell without the whole file's tree. */
#include "results.h"
#include "results_priv.h"

#include "attr.h"
#include "infile.h"
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static const char *const accel_names[] = { "kvm", "tcg", "none" };

static json_t *extra_collect(const json_t *obj, const char *const *known)
{
	json_t *extra = NULL;
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v) {
		if (g_strv_contains(known, key))
			continue;
		if (!extra)
			extra = json_object();
		json_object_set(extra, key, v);
	}
	return extra;
}

static int str_get(const json_t *obj, const char *key, bool required,
		   const char *name, const char *where, char **out)
{
	const json_t *v = json_object_get(obj, key);

	if (!v) {
		if (required)
			return pc_fail(EINVAL, "%s: %smissing \"%s\"", name, where, key);
		return 0;
	}
	if (!json_is_string(v))
		return pc_fail(EINVAL, "%s: %s\"%s\" is not a string", name, where, key);
	g_free(*out);
	*out = g_strdup(json_string_value(v));
	return 0;
}

static int outcome_get(const json_t *v, const char *name, const char *where,
		       enum outcome *out)
{
	const char *s = json_string_value(v);
	enum outcome o;

	if (!s)
		return pc_fail(EINVAL, "%s: %soutcome missing or not a string", name, where);
	o = outcome_from_name(s);
	if (o == OUTCOME_COUNT)
		return pc_fail(EINVAL, "%s: %sunknown outcome '%s'", name, where, s);
	*out = o;
	return 0;
}

static int int_get(const json_t *obj, const char *key, const char *name,
		   const char *where, int *out)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > G_MAXINT)
		return pc_fail(EINVAL, "%s: %s\"%s\" is not a count", name, where, key);
	*out = (int)json_integer_value(v);
	return 0;
}

static int attr_get_json(const json_t *v, const char *name, const char *where,
			 struct perf_event_attr *attr)
{
	int ret;

	if (!json_is_object(v))
		return pc_fail(EINVAL, "%s: %s\"attr\" is not an object", name, where);
	memset(attr, 0, sizeof(*attr));
	ret = attr_from_json(v, attr);
	if (ret < 0) {
		g_autofree char *msg = g_strdup(pc_errmsg());

		return pc_fail(-ret, "%s: %sattr: %s", name, where, msg);
	}
	return 0;
}

/* What the reader needs across cells: the schema's version and, for /2,
 * the file's attrs. */
struct read_ctx {
	const char *name;
	int version;                    /* 1 or 2 */
	struct perf_event_attr *attrs;  /* /2 */
	size_t nattrs;
};

/* A /1 attr object, or a /2 index into "attrs". `where` is the path of
 * the value ("cells[12].tries[1].attr"). */
static int attr_ref_get(const struct read_ctx *rc, const json_t *v, const char *where,
			struct perf_event_attr *attr)
{
	json_int_t i;

	if (rc->version == 1)
		return attr_get_json(v, rc->name, where, attr);
	if (!json_is_integer(v))
		return pc_fail(EINVAL, "%s: %s: not an index into \"attrs\" (%s stores "
			       "each attr once, by index)", rc->name, where, RESULTS_SCHEMA);
	i = json_integer_value(v);
	if (i < 0 || (guint64)i >= rc->nattrs)
		return pc_fail(EINVAL, "%s: %s: index %" JSON_INTEGER_FORMAT
			       " out of range (attrs has %zu)", rc->name, where, i, rc->nattrs);
	*attr = rc->attrs[i];
	return 0;
}

static int cell_from_json(const struct read_ctx *rc, const json_t *o, size_t idx,
			  const char *kernel, struct cell **out)
{
	const char *name = rc->name;
	g_autoptr(results_cell) cell = cell_new(kernel, NULL, NULL);
	g_autofree char *where = g_strdup_printf("cells[%zu]: ", idx);
	const json_t *v;
	int ret;

	if (!json_is_object(o))
		return pc_fail(EINVAL, "%s: %snot an object", name, where);
	if ((ret = str_get(o, "kernel", false, name, where, &cell->kernel)) < 0 ||
	    (ret = str_get(o, "profile", true, name, where, &cell->profile)) < 0 ||
	    (ret = str_get(o, "spec", true, name, where, &cell->spec)) < 0 ||
	    (ret = str_get(o, "error", false, name, where, &cell->error)) < 0 ||
	    (ret = outcome_get(json_object_get(o, "outcome"), name, where, &cell->outcome)) < 0 ||
	    (ret = int_get(o, "k", name, where, &cell->k)) < 0 ||
	    (ret = int_get(o, "n", name, where, &cell->n)) < 0)
		return ret;
	g_free(where);
	where = g_strdup_printf("cells[%zu] (%s %s): ", idx, cell->profile, cell->spec);
	/* k harmful runs out of n: never more than n. */
	if (cell->k > cell->n)
		return pc_fail(EINVAL, "%s: %s\"k\" (%d) is more than \"n\" (%d)", name, where,
			       cell->k, cell->n);
	if ((v = json_object_get(o, "attr"))) {
		g_autofree char *at = g_strdup_printf("cells[%zu].attr", idx);

		if ((ret = attr_ref_get(rc, v, at, &cell->attr)) < 0)
			return ret;
		cell->has_attr = true;
	}
	if ((v = json_object_get(o, "tries"))) {
		size_t i;
		const json_t *t;

		if (!json_is_array(v))
			return pc_fail(EINVAL, "%s: %s\"tries\" is not an array", name, where);
		json_array_foreach(v, i, t) {
			struct cell_try ct = { 0 };

			if (!json_is_object(t))
				return pc_fail(EINVAL, "%s: %stries[%zu] is not an object",
					       name, where, i);
			if (!json_object_get(t, "attr"))
				return pc_fail(EINVAL, "%s: %stries[%zu] has no \"attr\"",
					       name, where, i);
			g_autofree char *at = g_strdup_printf("cells[%zu].tries[%zu].attr",
							      idx, i);

			if ((ret = attr_ref_get(rc, json_object_get(t, "attr"), at,
						&ct.attr)) < 0 ||
			    (ret = outcome_get(json_object_get(t, "outcome"), name, where,
					       &ct.outcome)) < 0)
				return ret;
			if (json_object_get(t, "why") && !json_is_string(json_object_get(t, "why")))
				return pc_fail(EINVAL, "%s: %stries[%zu].why is not a string",
					       name, where, i);
			cell_add_try(cell, &ct.attr, ct.outcome,
				     json_string_value(json_object_get(t, "why")));
		}
	}
	if ((v = json_object_get(o, "per_cpu"))) {
		const char *key;
		json_t *c;

		if (!json_is_object(v))
			return pc_fail(EINVAL, "%s: %s\"per_cpu\" is not an object", name, where);
		json_object_foreach((json_t *)v, key, c) {
			guint64 cpu;
			enum outcome oc;

			/* Decimal 0..G_MAXINT as written; strtol took " 5" and "+5". */
			if (!g_ascii_isdigit(*key) ||
			    !g_ascii_string_to_unsigned(key, 10, 0, G_MAXINT, &cpu, NULL))
				return pc_fail(EINVAL, "%s: %sper_cpu key '%s' is not a CPU",
					       name, where, key);
			if ((ret = outcome_get(c, name, where, &oc)) < 0)
				return ret;
			cell_add_cpu(cell, (int)cpu, oc);
		}
	}
	if ((v = json_object_get(o, "evidence"))) {
		if (!json_is_array(v))
			return pc_fail(EINVAL, "%s: %s\"evidence\" is not an array", name, where);
		json_decref(cell->evidence);
		cell->evidence = json_incref((json_t *)v);
	}
	if (rc->version == 1) {
		/* /1 stored the profile's refusal as EINVAL and the first try
		 * as the cell's attr; the model holds what /2 says. */
		if (cell->error) {
			cell->outcome = OUTCOME_REJECTED;
			cell->has_attr = false;
			memset(&cell->attr, 0, sizeof(cell->attr));
		} else if (cell->tries->len) {
			cell->attr = g_array_index(cell->tries, struct cell_try,
						   cell->tries->len - 1).attr;
		}
	} else if (!cell->error != (cell->outcome != OUTCOME_REJECTED)) {
		return pc_fail(EINVAL, "%s: %s%s", name, where, cell->error ?
			       "\"error\" on a cell whose outcome is not REJECTED" :
			       "outcome REJECTED without the profile's \"error\"");
	}
	cell->extra = extra_collect(o, results_cell_keys);
	*out = g_steal_pointer(&cell);
	return 0;
}

static int attrs_from_json(struct read_ctx *rc, const json_t *v)
{
	size_t i;
	const json_t *a;

	if (!v)
		return pc_fail(EINVAL, "%s: \"attrs\" is missing", rc->name);
	if (!json_is_array(v))
		return pc_fail(EINVAL, "%s: \"attrs\" is not an array", rc->name);
	rc->nattrs = json_array_size(v);
	rc->attrs = g_new0(struct perf_event_attr, rc->nattrs + 1);
	json_array_foreach(v, i, a) {
		g_autofree char *where = g_strdup_printf("attrs[%zu]: ", i);
		int ret = attr_get_json(a, rc->name, where, &rc->attrs[i]);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Everything but the cells: a set with no cells, and in rc what reading
 * the cells needs (rc->attrs is the caller's to g_free()). */
static int envelope_from_json(const json_t *root, const char *name, struct read_ctx *rc_out,
			      struct result_set **out)
{
	g_autoptr(result_set) set = NULL;
	struct read_ctx rc = { 0 };
	const char *schema, *kind;
	const json_t *v;
	size_t i;
	int ret;

	if (!name)
		name = "(result)";
	if (!json_is_object(root))
		return pc_fail(EINVAL, "%s: not a JSON object", name);
	v = json_object_get(root, "schema");
	if (!v)
		return pc_fail(EINVAL, "%s: no \"schema\": not a pmucanary result file", name);
	schema = json_string_value(v);
	if (schema && strcmp(schema, RESULTS_SCHEMA) == 0)
		rc.version = 2;
	else if (schema && strcmp(schema, RESULTS_SCHEMA_V1) == 0)
		rc.version = 1;
	else
		return pc_fail(EINVAL, "%s: schema is '%s', expected '%s' (or '%s')", name,
			       schema ? schema : "(not a string)", RESULTS_SCHEMA,
			       RESULTS_SCHEMA_V1);
	rc.name = name;
	kind = json_string_value(json_object_get(root, "kind"));
	if (!kind || results_kind_from_name(kind) == RESULTS_KIND_COUNT)
		return pc_fail(EINVAL, "%s: \"kind\" is '%s', expected 'probe' or 'run'",
			       name, kind ? kind : "(missing)");
	set = result_set_new(results_kind_from_name(kind));
	if ((ret = str_get(root, "run_id", true, name, "", &set->run_id)) < 0 ||
	    (ret = str_get(root, "created", true, name, "", &set->created)) < 0 ||
	    (ret = str_get(root, "tool_version", true, name, "", &set->tool_version)) < 0 ||
	    (ret = str_get(root, "kernel", true, name, "", &set->kernel)) < 0 ||
	    (ret = str_get(root, "accel", true, name, "", &set->accel)) < 0)
		return ret;
	{
		bool ok = false;

		for (i = 0; i < G_N_ELEMENTS(accel_names); i++)
			ok |= strcmp(accel_names[i], set->accel) == 0;
		if (!ok)
			return pc_fail(EINVAL, "%s: \"accel\" is '%s', expected kvm, tcg or none",
				       name, set->accel);
	}
	if ((v = json_object_get(root, "host"))) {
		if (!json_is_object(v))
			return pc_fail(EINVAL, "%s: \"host\" is not an object", name);
		set->host = json_incref((json_t *)v);
	}
	if ((v = json_object_get(root, "limitations"))) {
		const json_t *l;

		if (!json_is_array(v))
			return pc_fail(EINVAL, "%s: \"limitations\" is not an array", name);
		json_array_foreach(v, i, l) {
			if (!json_is_string(l))
				return pc_fail(EINVAL, "%s: limitations[%zu] is not a string", name, i);
			g_ptr_array_add(set->limitations, g_strdup(json_string_value(l)));
		}
	}
	if ((v = json_object_get(root, "selftest"))) {
		if (!json_is_boolean(v))
			return pc_fail(EINVAL, "%s: \"selftest\" is not a boolean", name);
		set->selftest = json_is_true(v);
	}
	if ((v = json_object_get(root, "scenario")) && !json_is_null(v)) {
		if (!json_is_object(v))
			return pc_fail(EINVAL, "%s: \"scenario\" is neither an object nor null", name);
		set->scenario = json_incref((json_t *)v);
	}
	if (rc.version == 2) {
		ret = attrs_from_json(&rc, json_object_get(root, "attrs"));
		if (ret < 0) {
			g_free(rc.attrs);
			return ret;
		}
	}
	*rc_out = rc;
	*out = g_steal_pointer(&set);
	return 0;
}

/* consume: free each cell's JSON once it is read, so that the tree and
 * the model are not both whole in memory at once. */
static int set_from_json(json_t *root, const char *name, bool consume,
			 struct result_set **out)
{
	g_autoptr(result_set) set = NULL;
	g_autofree struct perf_event_attr *attrs = NULL;
	struct read_ctx rc = { 0 };
	const json_t *v;
	size_t i;
	int ret;

	if (!name)
		name = "(result)";
	if ((ret = envelope_from_json(root, name, &rc, &set)) < 0)
		return ret;
	attrs = rc.attrs;
	v = json_object_get(root, "cells");
	if (!json_is_array(v))
		return pc_fail(EINVAL, "%s: \"cells\" %s", name,
			       v ? "is not an array" : "is missing");
	for (i = 0; i < json_array_size(v); i++) {
		struct cell *cell = NULL;

		ret = cell_from_json(&rc, json_array_get(v, i), i, set->kernel, &cell);
		if (ret < 0)
			return ret;
		results_add_cell(set, cell);
		if (consume)
			json_array_set_new((json_t *)v, i, json_null());
	}
	set->extra = extra_collect(root, results_set_keys);
	*out = g_steal_pointer(&set);
	return 0;
}

int results_from_json(const json_t *root, const char *name, struct result_set **out)
{
	return set_from_json((json_t *)root, name, false, out);
}

/* ---- files ---- */

typedef json_t results_json;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(results_json, json_decref)

static size_t skip_ws(const char *text, size_t len, size_t pos)
{
	while (pos < len && strchr(" \t\r\n", text[pos]) && text[pos])
		pos++;
	return pos;
}

/* One JSON value at text[*pos], *pos moved past it; NULL when it is not
 * one (the whole-tree path then says where and why). */
static json_t *value_at(const char *text, size_t len, size_t *pos)
{
	json_error_t jerr;
	json_t *v = json_loadb(text + *pos, len - *pos,
			       JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &jerr);

	if (v)
		*pos += jerr.position;
	return v;
}

/* The reader without jansson's tree of the whole file: the top-level object
 * is walked here and each cell is parsed, read and freed on its own, so a
 * full sweep costs its model and one cell's tree, not a tree of every cell
 * (hundreds of MB) on top. Returns 1, having read nothing, for anything it
 * does not take as it comes (bad JSON, "cells" before the keys it needs);
 * results_read_json() then parses the whole tree, which gives the same set
 * or jansson's line:column message. Errors in a cell's content are the
 * same as results_from_json()'s. */
static int stream_read(const char *text, size_t len, const char *path, struct result_set **out)
{
	static const char *const before_cells[] = { "schema", "kind", "kernel", "attrs", NULL };
	g_autoptr(results_json) root = json_object();
	g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func((GDestroyNotify)cell_free);
	g_autoptr(result_set) set = NULL;
	g_autofree char *cells_kernel = NULL;
	bool seen_cells = false;
	size_t pos = skip_ws(text, len, 0);
	int ret;

	if (pos >= len || text[pos] != '{')
		return 1;
	pos++;
	for (;;) {
		g_autoptr(results_json) key = NULL;

		pos = skip_ws(text, len, pos);
		if (pos >= len || text[pos] != '"' || !(key = value_at(text, len, &pos)) ||
		    !json_is_string(key))
			return 1;
		pos = skip_ws(text, len, pos);
		if (pos >= len || text[pos] != ':')
			return 1;
		pos = skip_ws(text, len, pos + 1);
		if (!strcmp(json_string_value(key), "cells")) {
			g_autoptr(result_set) env = NULL;
			g_autofree struct perf_event_attr *attrs = NULL;
			struct read_ctx rc = { 0 };

			if (seen_cells || pos >= len || text[pos] != '[' ||
			    envelope_from_json(root, path, &rc, &env) < 0)
				return 1;
			attrs = rc.attrs;
			seen_cells = true;
			/* Read into rc.attrs: their tree is not needed again. */
			if (json_object_get(root, "attrs"))
				json_object_set_new(root, "attrs", json_array());
			cells_kernel = g_strdup(env->kernel);
			pos = skip_ws(text, len, pos + 1);
			if (pos < len && text[pos] == ']')
				pos++;
			else
				for (size_t i = 0;; i++) {
					g_autoptr(results_json) c = value_at(text, len, &pos);
					struct cell *cell = NULL;

					if (!c)
						return 1;
					if ((ret = cell_from_json(&rc, c, i, env->kernel, &cell)) < 0)
						return ret;
					g_ptr_array_add(cells, cell);
					pos = skip_ws(text, len, pos);
					if (pos < len && text[pos] == ',') {
						pos = skip_ws(text, len, pos + 1);
						continue;
					}
					if (pos < len && text[pos] == ']') {
						pos++;
						break;
					}
					return 1;
				}
		} else {
			json_t *v;

			/* The cells were read with what came before them; a key
			 * given twice is the whole-tree path's error. */
			if ((seen_cells && g_strv_contains(before_cells, json_string_value(key))) ||
			    json_object_get(root, json_string_value(key)))
				return 1;
			if (!(v = value_at(text, len, &pos)))
				return 1;
			json_object_set_new(root, json_string_value(key), v);
		}
		pos = skip_ws(text, len, pos);
		if (pos < len && text[pos] == ',') {
			pos++;
			continue;
		}
		if (pos < len && text[pos] == '}') {
			pos++;
			break;
		}
		return 1;
	}
	if (skip_ws(text, len, pos) != len || !seen_cells)
		return 1;
	{
		g_autofree struct perf_event_attr *attrs = NULL;
		struct read_ctx rc = { 0 };

		if ((ret = envelope_from_json(root, path, &rc, &set)) < 0)
			return ret;
		attrs = rc.attrs;
	}
	g_ptr_array_unref(set->cells);
	set->cells = g_steal_pointer(&cells);
	set->extra = extra_collect(root, results_set_keys);
	*out = g_steal_pointer(&set);
	return 0;
}

int results_read_json(const char *path, struct result_set **out)
{
	g_autofree char *text = NULL;
	json_error_t jerr;
	json_t *root;
	size_t len;
	int ret;

	if ((ret = infile_read(path, INFILE_RESULTS, &text, &len)) ||
	    (ret = infile_gunzip(path, infile_limit(INFILE_RESULTS),
				 infile_kind_name(INFILE_RESULTS), &text, &len)))
		return ret;
	ret = stream_read(text, len, path, out);
	if (ret <= 0)
		return ret;
	/* A key given twice would keep one value and drop the other (the
	 * "cells" of a GUEST_CRASH): refused, like every other reader's. */
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return pc_fail(EINVAL, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
	g_clear_pointer(&text, g_free);
	ret = set_from_json(root, path, true, out);
	json_decref(root);
	return ret;
}
