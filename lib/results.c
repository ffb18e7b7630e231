/* The results model and its JSON form (see results.h for the schema). */
#include "results.h"

#include "attr.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const kind_names[RESULTS_KIND_COUNT] = {
	[RESULTS_KIND_PROBE] = "probe",
	[RESULTS_KIND_RUN] = "run",
};

static const char *const accel_names[] = { "kvm", "tcg", "none" };

const char *results_kind_name(enum results_kind kind)
{
	return kind < RESULTS_KIND_COUNT ? kind_names[kind] : "?";
}

enum results_kind results_kind_from_name(const char *name)
{
	for (int i = 0; name && i < RESULTS_KIND_COUNT; i++)
		if (strcmp(kind_names[i], name) == 0)
			return i;
	return RESULTS_KIND_COUNT;
}

static void cell_try_clear(void *p)
{
	struct cell_try *t = p;

	g_free(t->why);
}

struct cell *cell_new(const char *kernel, const char *profile, const char *spec)
{
	struct cell *cell = g_new0(struct cell, 1);

	cell->kernel = g_strdup(kernel ? kernel : "");
	cell->profile = g_strdup(profile);
	cell->spec = g_strdup(spec);
	cell->outcome = OUTCOME_INFRA;
	cell->tries = g_array_new(FALSE, TRUE, sizeof(struct cell_try));
	g_array_set_clear_func(cell->tries, cell_try_clear);
	cell->per_cpu = g_array_new(FALSE, TRUE, sizeof(struct cell_cpu));
	cell->evidence = json_array();
	return cell;
}

void cell_free(struct cell *cell)
{
	if (!cell)
		return;
	g_free(cell->kernel);
	g_free(cell->profile);
	g_free(cell->spec);
	g_free(cell->error);
	g_array_unref(cell->tries);
	g_array_unref(cell->per_cpu);
	json_decref(cell->evidence);
	json_decref(cell->extra);
	g_free(cell);
}

void cell_set_attr(struct cell *cell, const struct perf_event_attr *attr)
{
	cell->has_attr = true;
	cell->attr = *attr;
	g_clear_pointer(&cell->error, g_free);
}

void cell_set_error(struct cell *cell, const char *message)
{
	cell->has_attr = false;
	memset(&cell->attr, 0, sizeof(cell->attr));
	g_free(cell->error);
	cell->error = g_strdup(message ? message : "rejected");
	cell->outcome = OUTCOME_EINVAL;
	g_array_set_size(cell->tries, 0);
	g_array_set_size(cell->per_cpu, 0);
}

void cell_add_try(struct cell *cell, const struct perf_event_attr *attr,
		  enum outcome outcome, const char *why)
{
	struct cell_try t = { .attr = *attr, .outcome = outcome, .why = g_strdup(why) };

	g_array_append_val(cell->tries, t);
}

void cell_add_cpu(struct cell *cell, int cpu, enum outcome outcome)
{
	struct cell_cpu c = { .cpu = cpu, .outcome = outcome };

	g_array_append_val(cell->per_cpu, c);
}

char *results_spec_event(const char *spec)
{
	const char *br = strchr(spec, '[');
	const char *slash = strrchr(spec, '/');
	const char *colon;

	if (br && spec[strlen(spec) - 1] == ']')
		return g_strndup(spec, br - spec);
	/* pmu/terms/: the modifiers follow the closing slash. */
	colon = strchr(slash ? slash : spec, ':');
	return colon ? g_strndup(spec, colon - spec) : g_strdup(spec);
}

struct result_set *result_set_new(enum results_kind kind)
{
	struct result_set *set = g_new0(struct result_set, 1);
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();
	g_autofree char *stamp = g_date_time_format(now, "%Y%m%dT%H%M%SZ");

	set->kind = kind;
	set->created = g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");
	set->run_id = g_strdup_printf("%s-%06x", stamp, g_random_int() & 0xffffff);
	set->tool_version = g_strdup(PMUCANARY_VERSION);
	set->kernel = g_strdup("");
	set->accel = g_strdup("none");
	set->limitations = g_ptr_array_new_with_free_func(g_free);
	set->cells = g_ptr_array_new_with_free_func((GDestroyNotify)cell_free);
	return set;
}

void result_set_free(struct result_set *set)
{
	if (!set)
		return;
	g_free(set->run_id);
	g_free(set->created);
	g_free(set->tool_version);
	json_decref(set->host);
	g_free(set->kernel);
	g_free(set->accel);
	g_ptr_array_unref(set->limitations);
	json_decref(set->scenario);
	g_ptr_array_unref(set->cells);
	json_decref(set->extra);
	g_free(set);
}

void results_add_cell(struct result_set *set, struct cell *cell)
{
	g_ptr_array_add(set->cells, cell);
}

static void limitation_add(struct result_set *set, char *line)
{
	for (unsigned int i = 0; i < set->limitations->len; i++)
		if (strcmp(set->limitations->pdata[i], line) == 0) {
			g_free(line);
			return;
		}
	g_ptr_array_add(set->limitations, line);
}

void results_add_limitation(struct result_set *set, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	limitation_add(set, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

void results_note_standard_limitations(struct result_set *set, bool hw_pmu)
{
	if (set->accel && strcmp(set->accel, "tcg") == 0)
		limitation_add(set, g_strdup(RESULTS_LIMIT_TCG));
	if (!hw_pmu)
		limitation_add(set, g_strdup(RESULTS_LIMIT_NO_HW_PMU));
}

void results_set_host(struct result_set *set, json_t *host)
{
	const char *release = json_string_value(json_object_get(
		json_object_get(host, "kernel"), "release"));
	const char *accel = json_string_value(json_object_get(host, "accel"));

	json_decref(set->host);
	set->host = host;
	if (release) {
		g_free(set->kernel);
		set->kernel = g_strdup(release);
	}
	if (accel) {
		g_free(set->accel);
		set->accel = g_strdup(accel);
	}
	results_note_standard_limitations(
		set, json_is_true(json_object_get(host, "hw_pmu")));
}

/* ---- to JSON ---- */

static void extra_merge(json_t *obj, const json_t *extra)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)extra, key, v)
		if (!json_object_get(obj, key))
			json_object_set(obj, key, v);
}

static json_t *cell_to_json(const struct cell *cell)
{
	json_t *o = json_object();
	json_t *tries = json_array();

	json_object_set_new(o, "kernel", json_string(cell->kernel));
	json_object_set_new(o, "profile", json_string(cell->profile));
	json_object_set_new(o, "spec", json_string(cell->spec));
	if (cell->has_attr)
		json_object_set_new(o, "attr", attr_to_json(&cell->attr));
	if (cell->error)
		json_object_set_new(o, "error", json_string(cell->error));
	json_object_set_new(o, "outcome", json_string(outcome_name(cell->outcome)));
	for (unsigned int i = 0; i < cell->tries->len; i++) {
		const struct cell_try *t = &g_array_index(cell->tries, struct cell_try, i);
		json_t *jt = json_object();

		json_object_set_new(jt, "attr", attr_to_json(&t->attr));
		json_object_set_new(jt, "outcome", json_string(outcome_name(t->outcome)));
		if (t->why)
			json_object_set_new(jt, "why", json_string(t->why));
		json_array_append_new(tries, jt);
	}
	json_object_set_new(o, "tries", tries);
	if (cell->per_cpu->len) {
		json_t *pc = json_object();

		for (unsigned int i = 0; i < cell->per_cpu->len; i++) {
			const struct cell_cpu *c = &g_array_index(cell->per_cpu, struct cell_cpu, i);
			char key[16];

			snprintf(key, sizeof(key), "%d", c->cpu);
			json_object_set_new(pc, key, json_string(outcome_name(c->outcome)));
		}
		json_object_set_new(o, "per_cpu", pc);
	}
	json_object_set_new(o, "k", json_integer(cell->k));
	json_object_set_new(o, "n", json_integer(cell->n));
	json_object_set_new(o, "evidence",
			    cell->evidence ? json_incref(cell->evidence) : json_array());
	if (cell->extra)
		extra_merge(o, cell->extra);
	return o;
}

json_t *results_to_json(const struct result_set *set)
{
	json_t *o = json_object();
	json_t *lim = json_array();
	json_t *cells = json_array();

	json_object_set_new(o, "schema", json_string(RESULTS_SCHEMA));
	json_object_set_new(o, "kind", json_string(results_kind_name(set->kind)));
	json_object_set_new(o, "run_id", json_string(set->run_id));
	json_object_set_new(o, "created", json_string(set->created));
	json_object_set_new(o, "tool_version", json_string(set->tool_version));
	json_object_set_new(o, "host", set->host ? json_incref(set->host) : json_object());
	json_object_set_new(o, "kernel", json_string(set->kernel ? set->kernel : ""));
	json_object_set_new(o, "accel", json_string(set->accel ? set->accel : "none"));
	for (unsigned int i = 0; i < set->limitations->len; i++)
		json_array_append_new(lim, json_string(set->limitations->pdata[i]));
	json_object_set_new(o, "limitations", lim);
	json_object_set_new(o, "selftest", json_boolean(set->selftest));
	json_object_set_new(o, "scenario",
			    set->scenario ? json_incref(set->scenario) : json_null());
	for (unsigned int i = 0; i < set->cells->len; i++)
		json_array_append_new(cells, cell_to_json(set->cells->pdata[i]));
	json_object_set_new(o, "cells", cells);
	if (set->extra)
		extra_merge(o, set->extra);
	return o;
}

/* ---- from JSON ---- */

static const char *const set_keys[] = {
	"schema", "kind", "run_id", "created", "tool_version", "host", "kernel",
	"accel", "limitations", "selftest", "scenario", "cells", NULL
};
static const char *const cell_keys[] = {
	"kernel", "profile", "spec", "attr", "error", "outcome", "tries",
	"per_cpu", "k", "n", "evidence", NULL
};

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

static int cell_from_json(const json_t *o, const char *name, size_t idx,
			  const char *kernel, struct cell **out)
{
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
	if ((v = json_object_get(o, "attr"))) {
		if ((ret = attr_get_json(v, name, where, &cell->attr)) < 0)
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
			if ((ret = attr_get_json(json_object_get(t, "attr"), name, where,
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
			char *end;
			long cpu = strtol(key, &end, 10);
			enum outcome oc;

			if (*key == '\0' || *end || cpu < 0 || cpu > G_MAXINT)
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
	cell->extra = extra_collect(o, cell_keys);
	*out = g_steal_pointer(&cell);
	return 0;
}

int results_from_json(const json_t *root, const char *name, struct result_set **out)
{
	g_autoptr(result_set) set = NULL;
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
	if (!schema || strcmp(schema, RESULTS_SCHEMA) != 0)
		return pc_fail(EINVAL, "%s: schema is '%s', expected '%s'", name,
			       schema ? schema : "(not a string)", RESULTS_SCHEMA);
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
	v = json_object_get(root, "cells");
	if (!json_is_array(v))
		return pc_fail(EINVAL, "%s: \"cells\" %s", name,
			       v ? "is not an array" : "is missing");
	for (i = 0; i < json_array_size(v); i++) {
		struct cell *cell;

		ret = cell_from_json(json_array_get(v, i), name, i, set->kernel, &cell);
		if (ret < 0)
			return ret;
		results_add_cell(set, cell);
	}
	set->extra = extra_collect(root, set_keys);
	*out = g_steal_pointer(&set);
	return 0;
}

/* ---- files ---- */

static bool write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= n;
	}
	return true;
}

int results_write_json(const struct result_set *set, const char *path)
{
	g_autofree char *dir = g_path_get_dirname(path);
	g_autofree char *base = g_path_get_basename(path);
	g_autofree char *tmp = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
	json_t *root = results_to_json(set);
	g_autofree char *text = NULL;
	int fd, dfd, ret = 0;

	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = pc_fail(errno, "%s: cannot create a temporary file in %s: %s",
			      path, dir, g_strerror(errno));
		json_decref(root);
		return ret;
	}
	/* One buffer and one write: jansson's own fd writer makes a syscall
	 * per token, which is seconds for a full sweep. */
	text = json_dumps(root, JSON_COMPACT);
	if (!text || !write_all(fd, text, strlen(text)) || !write_all(fd, "\n", 1))
		ret = pc_fail(errno ? errno : EIO, "%s: write failed: %s", tmp,
			      g_strerror(errno ? errno : EIO));
	else if (fsync(fd) < 0)
		ret = pc_fail(errno, "%s: fsync failed: %s", tmp, g_strerror(errno));
	/* Result files are for reading by others (CI, matrix): not 0600. */
	if (!ret)
		(void)fchmod(fd, 0644);
	if (close(fd) < 0 && !ret)
		ret = pc_fail(errno, "%s: close failed: %s", tmp, g_strerror(errno));
	json_decref(root);
	if (!ret && rename(tmp, path) < 0)
		ret = pc_fail(errno, "%s: cannot rename %s into place: %s", path, tmp,
			      g_strerror(errno));
	if (ret) {
		unlink(tmp);
		return ret;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

int results_read_json(const char *path, struct result_set **out)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);
	int ret;

	if (!root) {
		if (access(path, R_OK) < 0)
			return pc_fail(errno, "%s: %s", path, g_strerror(errno));
		return pc_fail(EINVAL, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
	}
	ret = results_from_json(root, path, out);
	json_decref(root);
	return ret;
}

/* ---- the readable matrix ---- */

#define MATRIX_WIDTH 120

static unsigned int index_of(GPtrArray *names, GHashTable *idx, const char *name)
{
	void *v;

	if (g_hash_table_lookup_extended(idx, name, NULL, &v))
		return GPOINTER_TO_UINT(v);
	g_ptr_array_add(names, g_strdup(name));
	g_hash_table_insert(idx, names->pdata[names->len - 1],
			    GUINT_TO_POINTER(names->len - 1));
	return names->len - 1;
}

static void cell_format_line(const struct cell *c, GString *out)
{
	g_string_append_printf(out, "  %-12s %-40s %s", c->profile, c->spec,
			       outcome_name(c->outcome));
	if (c->per_cpu->len) {
		g_string_append(out, " (");
		for (unsigned int i = 0; i < c->per_cpu->len; i++) {
			const struct cell_cpu *p = &g_array_index(c->per_cpu, struct cell_cpu, i);

			g_string_append_printf(out, "%scpu%d=%s", i ? " " : "", p->cpu,
					       outcome_name(p->outcome));
		}
		g_string_append(out, ")");
	}
	if (c->n)
		g_string_append_printf(out, " k/n=%d/%d", c->k, c->n);
	if (c->error)
		g_string_append_printf(out, "  rejected: %s", c->error);
	if (c->tries->len > 1) {
		g_string_append_printf(out, "  after %u tries:", c->tries->len);
		for (unsigned int i = 1; i < c->tries->len; i++) {
			const struct cell_try *t = &g_array_index(c->tries, struct cell_try, i);

			g_string_append_printf(out, "%s %s -> %s", i > 1 ? ";" : "",
					       t->why ? t->why : "retry", outcome_name(t->outcome));
		}
	}
	g_string_append_c(out, '\n');
}

void results_format_matrix(const struct result_set *set, GString *out)
{
	g_autoptr(GPtrArray) profiles = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) pidx = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) eidx = g_hash_table_new(g_str_hash, g_str_equal);
	g_autofree unsigned int *cell_p = g_new0(unsigned int, set->cells->len + 1);
	g_autofree unsigned int *cell_e = g_new0(unsigned int, set->cells->len + 1);
	g_autofree unsigned int *counts = NULL;
	g_autofree unsigned int *width = NULL;
	unsigned int total[OUTCOME_COUNT] = { 0 };
	unsigned int np, ne, pw = strlen("profile"), nonok = 0;

	g_string_append_printf(out, "pmucanary %s %s  kernel %s  accel %s  tool %s  %s\n",
			       results_kind_name(set->kind), set->run_id, set->kernel,
			       set->accel, set->tool_version, set->created);
	if (set->limitations->len) {
		g_string_append(out, "limitations:\n");
		for (unsigned int i = 0; i < set->limitations->len; i++)
			g_string_append_printf(out, "  - %s\n",
					       (char *)set->limitations->pdata[i]);
	}
	for (unsigned int i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		g_autofree char *ev = results_spec_event(c->spec);

		cell_p[i] = index_of(profiles, pidx, c->profile);
		cell_e[i] = index_of(events, eidx, ev);
		total[c->outcome]++;
		nonok += c->outcome != OUTCOME_OK;
	}
	np = profiles->len;
	ne = events->len;
	g_string_append_printf(out, "cells: %u (", set->cells->len);
	for (int o = 0, first = 1; o < OUTCOME_COUNT; o++)
		if (total[o]) {
			g_string_append_printf(out, "%s%s %u", first ? "" : ", ",
					       outcome_name(o), total[o]);
			first = 0;
		}
	g_string_append_printf(out, ")  profiles: %u  events: %u\n", np, ne);
	if (!set->cells->len)
		return;

	counts = g_new0(unsigned int, (size_t)ne * np * OUTCOME_COUNT);
	for (unsigned int i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];

		counts[((size_t)cell_e[i] * np + cell_p[i]) * OUTCOME_COUNT + c->outcome]++;
	}
	for (unsigned int p = 0; p < np; p++)
		pw = MAX(pw, strlen(profiles->pdata[p]));

	/* Width of each (event, outcome) column; 0 when no cell has it. */
	width = g_new0(unsigned int, (size_t)ne * OUTCOME_COUNT);
	for (unsigned int e = 0; e < ne; e++) {
		unsigned int gw = 0, last = 0;

		for (int o = 0; o < OUTCOME_COUNT; o++) {
			unsigned int maxc = 0;

			for (unsigned int p = 0; p < np; p++)
				maxc = MAX(maxc, counts[((size_t)e * np + p) * OUTCOME_COUNT + o]);
			if (!maxc)
				continue;
			width[e * OUTCOME_COUNT + o] = MAX(strlen(outcome_name(o)),
							   (size_t)snprintf(NULL, 0, "%u", maxc));
			gw += width[e * OUTCOME_COUNT + o] + 1;
			last = o;
		}
		if (gw < strlen(events->pdata[e]) + 1)
			width[e * OUTCOME_COUNT + last] += strlen(events->pdata[e]) + 1 - gw;
	}

	for (unsigned int first = 0; first < ne;) {
		unsigned int end = first, lw = pw + 1;

		/* Events that fit on this band of lines (at least one). */
		while (end < ne) {
			unsigned int gw = 2;

			for (int o = 0; o < OUTCOME_COUNT; o++)
				if (width[end * OUTCOME_COUNT + o])
					gw += width[end * OUTCOME_COUNT + o] + 1;
			if (end > first && lw + gw > MATRIX_WIDTH)
				break;
			lw += gw;
			end++;
		}
		g_string_append_printf(out, "\n%-*s", pw, "");
		for (unsigned int e = first; e < end; e++) {
			unsigned int gw = 0;

			for (int o = 0; o < OUTCOME_COUNT; o++)
				if (width[e * OUTCOME_COUNT + o])
					gw += width[e * OUTCOME_COUNT + o] + 1;
			g_string_append_printf(out, " | %-*s", gw - 1, (char *)events->pdata[e]);
		}
		g_string_append_printf(out, "\n%-*s", pw, "profile");
		for (unsigned int e = first; e < end; e++) {
			const char *sep = " | ";

			for (int o = 0; o < OUTCOME_COUNT; o++)
				if (width[e * OUTCOME_COUNT + o]) {
					g_string_append_printf(out, "%s%-*s", sep,
							       width[e * OUTCOME_COUNT + o],
							       outcome_name(o));
					sep = " ";
				}
		}
		g_string_append_c(out, '\n');
		for (unsigned int p = 0; p < np; p++) {
			g_string_append_printf(out, "%-*s", pw, (char *)profiles->pdata[p]);
			for (unsigned int e = first; e < end; e++) {
				const char *sep = " | ";

				for (int o = 0; o < OUTCOME_COUNT; o++)
					if (width[e * OUTCOME_COUNT + o]) {
						g_string_append_printf(
							out, "%s%-*u", sep, width[e * OUTCOME_COUNT + o],
							counts[((size_t)e * np + p) * OUTCOME_COUNT + o]);
						sep = " ";
					}
			}
			g_string_append_c(out, '\n');
		}
		first = end;
	}

	g_string_append_printf(out, "\nnon-OK cells: %u\n", nonok);
	for (unsigned int i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];

		if (c->outcome != OUTCOME_OK)
			cell_format_line(c, out);
	}
}
