/* The results model (see results.h for the schema): the set and its
 * cells, the limitations, the lookups (cell keys, rules) and the readable
 * matrix. The file is read in results_read.c and written in
 * results_write.c. */
#include "results.h"
#include "results_priv.h"

#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const kind_names[RESULTS_KIND_COUNT] = {
	[RESULTS_KIND_PROBE] = "probe",
	[RESULTS_KIND_RUN] = "run",
};

/* The keys of the schema (results.h); the others are kept in `extra`. */
const char *const results_set_keys[] = {
	"schema", "kind", "run_id", "created", "tool_version", "host", "kernel",
	"accel", "limitations", "selftest", "scenario", "attrs", "cells", NULL
};
const char *const results_cell_keys[] = {
	"kernel", "profile", "spec", "attr", "error", "outcome", "tries",
	"per_cpu", "k", "n", "evidence", NULL
};

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
	/* An attr means the spec reached the kernel (or will): no longer a
	 * verdict of the profile's parser. */
	if (cell->outcome == OUTCOME_REJECTED)
		cell->outcome = OUTCOME_INFRA;
}

void cell_set_error(struct cell *cell, const char *message)
{
	cell->has_attr = false;
	memset(&cell->attr, 0, sizeof(cell->attr));
	g_free(cell->error);
	cell->error = g_strdup(message ? message : "rejected");
	cell->outcome = OUTCOME_REJECTED;
	g_array_set_size(cell->tries, 0);
	g_array_set_size(cell->per_cpu, 0);
}

const struct perf_event_attr *cell_first_attr(const struct cell *cell)
{
	if (cell->tries->len)
		return &g_array_index(cell->tries, struct cell_try, 0).attr;
	return cell->has_attr ? &cell->attr : NULL;
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
	/* pmu/terms/: the modifiers follow the closing slash, with or without
	 * a colon ("msr/tsc/u", "msr/tsc/:u"). */
	if (slash && slash != spec && strchr(spec, '/') != slash)
		return g_strndup(spec, slash + 1 - spec);
	colon = strchr(spec, ':');
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
	bool vm = json_is_true(json_object_get(json_object_get(set->host, "cpu"), "hypervisor"));

	if (set->accel && strcmp(set->accel, "tcg") == 0) {
		limitation_add(set, g_strdup(RESULTS_LIMIT_TCG));
		/* the run fell back to TCG (--tcg, or the fleet's own choice):
		 * its guests are not nested under KVM after all */
		for (guint i = 0; i < set->limitations->len; i++)
			if (!strcmp(set->limitations->pdata[i], RESULTS_LIMIT_NESTED_KVM))
				g_ptr_array_remove_index(set->limitations, i--);
	} else if (set->accel && strcmp(set->accel, "kvm") == 0 && vm) {
		limitation_add(set, g_strdup(RESULTS_LIMIT_NESTED_KVM));
	}
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

const char *results_cell_rule(const struct cell *c)
{
	json_t *j = c->extra ? json_object_get(c->extra, "judged") : NULL;

	if (g_strcmp0(json_string_value(j), "rule"))
		return NULL;
	return json_string_value(json_object_get(c->extra, "rule"));
}

json_t *results_rules(const struct result_set *set)
{
	json_t *rules = set && set->extra ? json_object_get(set->extra, "rules") : NULL;

	return json_array_size(rules) ? rules : NULL;
}

struct results_rule_cover results_rule_cover(const struct result_set *set, const char *rule_text)
{
	struct results_rule_cover cov = { 0 };

	for (guint i = 0; rule_text && i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		const char *judged, *text;

		if (!c->extra)
			continue;
		judged = json_string_value(json_object_get(c->extra, "judged"));
		text = json_string_value(json_object_get(c->extra, "rule"));
		if (!judged || g_strcmp0(text, rule_text))
			continue;
		if (!strcmp(judged, "rule"))
			cov.by_rule++;
		else if (!strcmp(judged, "alone"))
			cov.alone++;
	}
	return cov;
}

char *results_rule_describe(const struct result_set *set, const json_t *rule)
{
	const char *text = json_string_value(json_object_get(rule, "text"));
	const json_t *attrs = json_object_get(rule, "attrs");
	const json_t *refuted = json_object_get(rule, "refuted_before");
	const json_t *sample = json_object_get(rule, "sample");
	struct results_rule_cover cov = results_rule_cover(set, text);
	GString *s = g_string_new(text ? text : "?");
	size_t k;
	json_t *sa;

	g_string_append_printf(s, ": %s", json_string_value(json_object_get(rule, "outcome")) ?: "harm");
	if (json_is_integer(attrs))
		g_string_append_printf(s, " on %" JSON_INTEGER_FORMAT " attr%s",
				       json_integer_value(attrs),
				       json_integer_value(attrs) == 1 ? "" : "s");
	g_string_append_printf(s, ", %u cell%s (%u judged by the rule, not armed alone; %u armed "
			       "alone)", cov.by_rule + cov.alone,
			       cov.by_rule + cov.alone == 1 ? "" : "s", cov.by_rule, cov.alone);
	if (json_array_size(sample))
		g_string_append(s, "; sample");
	json_array_foreach(sample, k, sa)
		g_string_append_printf(s, "%s %s k/n=%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
				       k ? ";" : "",
				       json_string_value(json_object_get(sa, "attr")) ?: "?",
				       json_integer_value(json_object_get(sa, "k")),
				       json_integer_value(json_object_get(sa, "n")));
	if (json_is_integer(refuted))
		g_string_append_printf(s, "; %" JSON_INTEGER_FORMAT " rule%s refuted before it",
				       json_integer_value(refuted),
				       json_integer_value(refuted) == 1 ? "" : "s");
	return g_string_free(s, FALSE);
}

/* A run's proven rules (run.json "rules", written by the runner), first:
 * one line says what a class of cells has in common. */
static void format_rules(const struct result_set *set, GString *out)
{
	json_t *rules = results_rules(set);
	size_t i;
	json_t *r;

	if (!rules)
		return;
	g_string_append(out, "harm explained by a rule over attr fields (proven on the sample, "
			     "each armed alone; the other attrs it matches were not):\n");
	json_array_foreach(rules, i, r) {
		g_autofree char *d = results_rule_describe(set, r);

		g_string_append_printf(out, "  - %s\n", d);
	}
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
	if (results_cell_rule(c))
		g_string_append_printf(out, " by rule: %s", results_cell_rule(c));
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

/* The table's columns: every outcome; the cells the profile rejected
 * (perf's parser refused the spec: no syscall) are the "rejected" one, which
 * must not read as the kernel's EINVAL. */
#define COL_REJECTED OUTCOME_REJECTED
#define NCOL OUTCOME_COUNT

static unsigned int cell_col(const struct cell *c)
{
	return c->error ? COL_REJECTED : (unsigned int)c->outcome;
}

static const char *col_name(unsigned int col)
{
	return col == COL_REJECTED ? "rejected" : outcome_name(col);
}

/* What the summary needs about the set, computed once. */
struct matrix_index {
	const struct result_set *set;
	GPtrArray *profiles;       /* char *, in order of first appearance */
	GPtrArray *events;
	unsigned int *cell_p, *cell_e;
	unsigned int *tot;         /* cells per (event, profile): [e * np + p] */
	unsigned int np, ne;
};

/* "perf-3.6..perf-modern, raw": profile indices (sorted) as names, runs of
 * three or more as a range; "every profile" when all are there. */
static void profiles_describe(const struct matrix_index *mx, const unsigned int *idx,
			      unsigned int n, GString *out)
{
	if (n == mx->np && n > 1) {
		g_string_append(out, "every profile");
		return;
	}
	for (unsigned int i = 0; i < n;) {
		unsigned int j = i;

		while (j + 1 < n && idx[j + 1] == idx[j] + 1)
			j++;
		g_string_append_printf(out, "%s%s", i ? ", " : "",
				       (char *)mx->profiles->pdata[idx[i]]);
		if (j - i >= 2)
			g_string_append_printf(out, "..%s", (char *)mx->profiles->pdata[idx[j]]);
		else if (j > i)
			g_string_append_printf(out, ", %s", (char *)mx->profiles->pdata[idx[j]]);
		i = j + 1;
	}
}

/* Appends words, wrapping at MATRIX_WIDTH with an indent; at most `max`
 * words, then "(+N more)". */
static void words_wrap(GString *out, const char *indent, char **words, unsigned int n,
		       unsigned int max)
{
	size_t col = strlen(indent);

	g_string_append(out, indent);
	for (unsigned int i = 0; i < n && i < max; i++) {
		size_t w = strlen(words[i]) + 1;

		if (i && col + w > MATRIX_WIDTH) {
			g_string_append_printf(out, "\n%s", indent);
			col = strlen(indent);
		}
		g_string_append_printf(out, "%s%s", i && col > strlen(indent) ? " " : "", words[i]);
		col += w;
	}
	if (n > max)
		g_string_append_printf(out, " (+%u more)", n - max);
	g_string_append_c(out, '\n');
}

/* The group title of a non-OK (or fallen-back OK) cell: its outcome and
 * what its tries show. Rejected cells: perf's message without the spec and
 * the position, so that one parser rule is one group. */
static char *cell_group_title(const struct cell *c)
{
	GString *t = g_string_new(NULL);

	if (c->error) {
		const char *msg = c->error;
		size_t sl = strlen(c->spec);
		g_autoptr(GRegex) at = g_regex_new(" at [0-9]+", 0, 0, NULL);
		g_autofree char *clean = NULL;

		if (strncmp(msg, c->spec, sl) == 0 && msg[sl] == ':' && msg[sl + 1] == ' ')
			msg += sl + 2;
		clean = g_regex_replace_literal(at, msg, -1, 0, "", 0, NULL);
		g_string_append_printf(t, "rejected by the profile's parser (no syscall): %s",
				       clean ? clean : msg);
		return g_string_free(t, FALSE);
	}
	g_string_append(t, outcome_name(c->outcome));
	if (c->tries->len <= 1) {
		g_string_append(t, c->tries->len ? " at the first try" : " (not opened)");
	} else {
		g_string_append(t, " after");
		for (unsigned int i = 1; i < c->tries->len; i++) {
			const struct cell_try *tr = &g_array_index(c->tries, struct cell_try, i);

			g_string_append_printf(t, "%s %s -> %s", i > 1 ? ";" : "",
					       tr->why ? tr->why : "retry", outcome_name(tr->outcome));
		}
	}
	if (c->per_cpu->len)
		g_string_append(t, " (CPUs disagree)");
	return g_string_free(t, FALSE);
}

struct matrix_group {
	char *title;
	GArray *cells;             /* unsigned int: cell indices */
};

static void matrix_group_free(void *p)
{
	struct matrix_group *g = p;

	g_free(g->title);
	g_array_unref(g->cells);
	g_free(g);
}

static gint group_cmp_size(gconstpointer a, gconstpointer b)
{
	const struct matrix_group *ga = *(struct matrix_group *const *)a;
	const struct matrix_group *gb = *(struct matrix_group *const *)b;

	if (ga->cells->len != gb->cells->len)
		return ga->cells->len > gb->cells->len ? -1 : 1;
	return strcmp(ga->title, gb->title);
}

/* One set of events that a group covers the same way under every profile. */
struct event_cluster {
	char *sig;
	GPtrArray *names;          /* char *, borrowed */
	unsigned int cells;
	unsigned int first_e;
};

static void event_cluster_free(void *p)
{
	struct event_cluster *ec = p;

	g_free(ec->sig);
	g_ptr_array_unref(ec->names);
	g_free(ec);
}

static gint cluster_cmp_size(gconstpointer a, gconstpointer b)
{
	const struct event_cluster *ca = *(struct event_cluster *const *)a;
	const struct event_cluster *cb = *(struct event_cluster *const *)b;

	if (ca->cells != cb->cells)
		return ca->cells > cb->cells ? -1 : 1;
	return ca->first_e < cb->first_e ? -1 : ca->first_e > cb->first_e;
}

/* "every spec of perf-3.6..perf-modern, raw; 32 of 128 specs of perf-3.1":
 * how much of each profile's sweep of event e the group covers. */
static char *coverage_describe(const struct matrix_index *mx, const unsigned int *gc,
			       unsigned int e)
{
	GString *d = g_string_new(NULL);
	g_autofree unsigned int *idx = g_new0(unsigned int, mx->np + 1);
	g_autofree bool *done = g_new0(bool, mx->np + 1);
	unsigned int cnt = 0;

	/* Whole sweeps first, whatever their size, then partial ones by k of n. */
	for (unsigned int p = 0; p < mx->np; p++) {
		unsigned int k = gc[(size_t)e * mx->np + p], n = mx->tot[(size_t)e * mx->np + p];

		if (k && k == n) {
			done[p] = true;
			idx[cnt++] = p;
		}
	}
	if (cnt) {
		g_string_append(d, "every spec of ");
		profiles_describe(mx, idx, cnt, d);
	}
	for (unsigned int p = 0; p < mx->np; p++) {
		unsigned int k = gc[(size_t)e * mx->np + p], n = mx->tot[(size_t)e * mx->np + p];

		if (done[p] || !k)
			continue;
		cnt = 0;
		for (unsigned int q = p; q < mx->np; q++)
			if (!done[q] && gc[(size_t)e * mx->np + q] == k &&
			    mx->tot[(size_t)e * mx->np + q] == n) {
				done[q] = true;
				idx[cnt++] = q;
			}
		g_string_append_printf(d, "%s%u of %u specs of ", d->len ? "; " : "", k, n);
		profiles_describe(mx, idx, cnt, d);
	}
	return g_string_free(d, FALSE);
}

#define GROUP_MAX_CLUSTERS 8
#define GROUP_MAX_EVENTS 60
#define GROUP_LIST_CELLS 3

static void cell_format_line(const struct cell *c, GString *out);

static void group_format(const struct matrix_index *mx, const struct matrix_group *g,
			 GString *out)
{
	g_autofree unsigned int *gc = g_new0(unsigned int, (size_t)mx->ne * mx->np + 1);
	g_autoptr(GPtrArray) clusters = g_ptr_array_new_with_free_func(event_cluster_free);
	g_autoptr(GHashTable) by_sig = g_hash_table_new(g_str_hash, g_str_equal);
	unsigned int shown = 0;

	g_string_append_printf(out, "\n%s: %u cell%s\n", g->title, g->cells->len,
			       g->cells->len == 1 ? "" : "s");
	if (g->cells->len <= GROUP_LIST_CELLS) {
		for (unsigned int i = 0; i < g->cells->len; i++)
			cell_format_line(mx->set->cells->pdata[g_array_index(g->cells,
									     unsigned int, i)], out);
		return;
	}
	for (unsigned int i = 0; i < g->cells->len; i++) {
		unsigned int ci = g_array_index(g->cells, unsigned int, i);

		gc[(size_t)mx->cell_e[ci] * mx->np + mx->cell_p[ci]]++;
	}
	for (unsigned int e = 0; e < mx->ne; e++) {
		g_autofree char *sig = NULL;
		struct event_cluster *ec;
		unsigned int cells = 0;

		for (unsigned int p = 0; p < mx->np; p++)
			cells += gc[(size_t)e * mx->np + p];
		if (!cells)
			continue;
		sig = coverage_describe(mx, gc, e);
		ec = g_hash_table_lookup(by_sig, sig);
		if (!ec) {
			ec = g_new0(struct event_cluster, 1);
			ec->sig = g_steal_pointer(&sig);
			ec->names = g_ptr_array_new();
			ec->first_e = e;
			g_ptr_array_add(clusters, ec);
			g_hash_table_insert(by_sig, ec->sig, ec);
		}
		g_ptr_array_add(ec->names, mx->events->pdata[e]);
		ec->cells += cells;
	}
	g_ptr_array_sort(clusters, cluster_cmp_size);
	for (unsigned int i = 0; i < clusters->len && shown < GROUP_MAX_CLUSTERS; i++, shown++) {
		const struct event_cluster *ec = clusters->pdata[i];

		if (ec->names->len == 1) {
			g_string_append_printf(out, "  %s, %u cell%s: %s\n",
					       (char *)ec->names->pdata[0], ec->cells,
					       ec->cells == 1 ? "" : "s", ec->sig);
			continue;
		}
		g_string_append_printf(out, "  %u events, %u cells: %s:\n", ec->names->len,
				       ec->cells, ec->sig);
		words_wrap(out, "      ", (char **)ec->names->pdata, ec->names->len,
			   GROUP_MAX_EVENTS);
	}
	if (clusters->len > shown) {
		unsigned int rest = 0;

		for (unsigned int i = shown; i < clusters->len; i++)
			rest += ((struct event_cluster *)clusters->pdata[i])->cells;
		g_string_append_printf(out, "  ... %u more event sets (%u cells)\n",
				       clusters->len - shown, rest);
	}
}

/* Specs that two profiles both encoded but the kernel answered differently
 * (the binary axis: OK under one perf release, an errno under another).
 * Specs where the only difference is that a profile's parser rejected the
 * spec are counted, not listed: the rejected groups show them. */
static void disagreements_format(const struct matrix_index *mx, unsigned int max_lines,
				 GString *out)
{
	const struct result_set *set = mx->set;
	g_autoptr(GHashTable) by_spec = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
							       (GDestroyNotify)g_array_unref);
	g_autoptr(GPtrArray) specs = g_ptr_array_new();
	g_autoptr(GHashTable) by_sig = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
							      (GDestroyNotify)g_ptr_array_unref);
	g_autoptr(GPtrArray) sigs = g_ptr_array_new();
	g_autofree unsigned int *idx = g_new0(unsigned int, mx->np + 1);
	unsigned int rejected_only = 0, nspecs = 0, lines = 0;

	for (unsigned int i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		GArray *a = g_hash_table_lookup(by_spec, c->spec);

		if (!a) {
			a = g_array_new(FALSE, FALSE, sizeof(unsigned int));
			g_hash_table_insert(by_spec, c->spec, a);
			g_ptr_array_add(specs, c->spec);
		}
		g_array_append_val(a, i);
	}
	for (unsigned int s = 0; s < specs->len; s++) {
		GArray *a = g_hash_table_lookup(by_spec, specs->pdata[s]);
		unsigned int cols[NCOL] = { 0 };
		unsigned int kinds = 0;
		GString *sig;
		GPtrArray *list;

		if (a->len < 2)
			continue;
		for (unsigned int i = 0; i < a->len; i++) {
			const struct cell *c = set->cells->pdata[g_array_index(a, unsigned int, i)];

			if (!cols[cell_col(c)]++ && !c->error)
				kinds++;
		}
		if (kinds < 2) {
			rejected_only += kinds == 1 && cols[COL_REJECTED];
			continue;
		}
		nspecs++;
		/* "EINVAL: perf-3.1; OK: perf-3.6..perf-modern", columns in table
		 * order, profiles in table order. */
		sig = g_string_new(NULL);
		for (unsigned int col = 0; col < NCOL; col++) {
			unsigned int n = 0;

			if (!cols[col])
				continue;
			for (unsigned int p = 0; p < mx->np; p++)
				for (unsigned int i = 0; i < a->len; i++) {
					unsigned int ci = g_array_index(a, unsigned int, i);

					if (mx->cell_p[ci] == p &&
					    cell_col(set->cells->pdata[ci]) == col) {
						idx[n++] = p;
						break;
					}
				}
			g_string_append_printf(sig, "%s%s under ", sig->len ? "; " : "", col_name(col));
			profiles_describe(mx, idx, n, sig);
		}
		list = g_hash_table_lookup(by_sig, sig->str);
		if (!list) {
			list = g_ptr_array_new();
			g_ptr_array_add(sigs, sig->str);
			g_hash_table_insert(by_sig, g_string_free(sig, FALSE), list);
		} else {
			g_string_free(sig, TRUE);
		}
		g_ptr_array_add(list, specs->pdata[s]);
	}
	if (!nspecs && !rejected_only)
		return;
	g_string_append_printf(out, "\nprofiles disagree on %u spec%s (same spec, different "
			       "outcome from the kernel under different profiles):\n", nspecs,
			       nspecs == 1 ? "" : "s");
	for (unsigned int i = 0; i < sigs->len; i++) {
		GPtrArray *list = g_hash_table_lookup(by_sig, sigs->pdata[i]);

		if (lines >= max_lines) {
			g_string_append_printf(out, "  ... more (--list-all prints every cell)\n");
			break;
		}
		g_string_append_printf(out, "  %s (%u spec%s):\n", (char *)sigs->pdata[i],
				       list->len, list->len == 1 ? "" : "s");
		words_wrap(out, "      ", (char **)list->pdata, list->len, 40);
		lines += 2 + list->len / 8;
	}
	if (rejected_only)
		g_string_append_printf(out, "  and %u spec%s where the only difference is that a "
				       "profile's parser rejects %s (see the rejected groups)\n",
				       rejected_only, rejected_only == 1 ? "" : "s",
				       rejected_only == 1 ? "it" : "them");
}

void results_format_matrix(const struct result_set *set, GString *out)
{
	results_format_matrix_opts(set, NULL, out);
}

void results_format_matrix_opts(const struct result_set *set,
				const struct results_matrix_opts *opts, GString *out)
{
	static const struct results_matrix_opts defaults = { 0 };
	g_autoptr(GPtrArray) profiles = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) pidx = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) eidx = g_hash_table_new(g_str_hash, g_str_equal);
	g_autofree unsigned int *cell_p = g_new0(unsigned int, set->cells->len + 1);
	g_autofree unsigned int *cell_e = g_new0(unsigned int, set->cells->len + 1);
	g_autofree unsigned int *counts = NULL;
	g_autofree unsigned int *width = NULL;
	g_autofree unsigned int *tot = NULL;
	g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func(matrix_group_free);
	g_autoptr(GPtrArray) okgroups = g_ptr_array_new_with_free_func(matrix_group_free);
	g_autoptr(GHashTable) gidx = g_hash_table_new(g_str_hash, g_str_equal);
	unsigned int total[NCOL] = { 0 };
	unsigned int np, ne, pw = strlen("profile"), nonok = 0, harms = 0, fellback = 0;
	struct matrix_index mx = { 0 };

	if (!opts)
		opts = &defaults;
	g_string_append_printf(out, "pmucanary %s %s  kernel %s  accel %s  tool %s  %s\n",
			       results_kind_name(set->kind), set->run_id, set->kernel,
			       set->accel, set->tool_version, set->created);
	if (set->limitations->len) {
		g_string_append(out, "limitations:\n");
		for (unsigned int i = 0; i < set->limitations->len; i++)
			g_string_append_printf(out, "  - %s\n",
					       (char *)set->limitations->pdata[i]);
	}
	format_rules(set, out);
	for (unsigned int i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		g_autofree char *ev = results_spec_event(c->spec);

		cell_p[i] = index_of(profiles, pidx, c->profile);
		cell_e[i] = index_of(events, eidx, ev);
		total[cell_col(c)]++;
		nonok += c->outcome != OUTCOME_OK;
	}
	np = profiles->len;
	ne = events->len;
	g_string_append_printf(out, "cells: %u (", set->cells->len);
	for (unsigned int o = 0, first = 1; o < NCOL; o++)
		if (total[o]) {
			g_string_append_printf(out, "%s%s %u", first ? "" : ", ", col_name(o),
					       total[o]);
			first = 0;
		}
	g_string_append_printf(out, ")  profiles: %u  events: %u\n", np, ne);
	if (total[COL_REJECTED])
		g_string_append(out, "  (rejected: the profile's parser refused the spec, no "
			       "syscall was made; EINVAL counts only the kernel's answers)\n");
	if (!set->cells->len)
		return;

	counts = g_new0(unsigned int, (size_t)ne * np * NCOL);
	tot = g_new0(unsigned int, (size_t)ne * np);
	for (unsigned int i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];

		counts[((size_t)cell_e[i] * np + cell_p[i]) * NCOL + cell_col(c)]++;
		tot[(size_t)cell_e[i] * np + cell_p[i]]++;
	}
	for (unsigned int p = 0; p < np; p++)
		pw = MAX(pw, strlen(profiles->pdata[p]));

	/* Width of each (event, column); 0 when no cell has it. */
	width = g_new0(unsigned int, (size_t)ne * NCOL);
	for (unsigned int e = 0; e < ne; e++) {
		unsigned int gw = 0, last = 0;

		for (unsigned int o = 0; o < NCOL; o++) {
			unsigned int maxc = 0;

			for (unsigned int p = 0; p < np; p++)
				maxc = MAX(maxc, counts[((size_t)e * np + p) * NCOL + o]);
			if (!maxc)
				continue;
			width[e * NCOL + o] = MAX(strlen(col_name(o)),
						  (size_t)snprintf(NULL, 0, "%u", maxc));
			gw += width[e * NCOL + o] + 1;
			last = o;
		}
		if (gw < strlen(events->pdata[e]) + 1)
			width[e * NCOL + last] += strlen(events->pdata[e]) + 1 - gw;
	}

	for (unsigned int first = 0; first < ne;) {
		unsigned int end = first, lw = pw + 1;

		/* Events that fit on this band of lines (at least one). */
		while (end < ne) {
			unsigned int gw = 2;

			for (unsigned int o = 0; o < NCOL; o++)
				if (width[end * NCOL + o])
					gw += width[end * NCOL + o] + 1;
			if (end > first && lw + gw > MATRIX_WIDTH)
				break;
			lw += gw;
			end++;
		}
		g_string_append_printf(out, "\n%-*s", pw, "");
		for (unsigned int e = first; e < end; e++) {
			unsigned int gw = 0;

			for (unsigned int o = 0; o < NCOL; o++)
				if (width[e * NCOL + o])
					gw += width[e * NCOL + o] + 1;
			g_string_append_printf(out, " | %-*s", gw - 1, (char *)events->pdata[e]);
		}
		g_string_append_printf(out, "\n%-*s", pw, "profile");
		for (unsigned int e = first; e < end; e++) {
			const char *sep = " | ";

			for (unsigned int o = 0; o < NCOL; o++)
				if (width[e * NCOL + o]) {
					g_string_append_printf(out, "%s%-*s", sep, width[e * NCOL + o],
							       col_name(o));
					sep = " ";
				}
		}
		g_string_append_c(out, '\n');
		for (unsigned int p = 0; p < np; p++) {
			g_string_append_printf(out, "%-*s", pw, (char *)profiles->pdata[p]);
			for (unsigned int e = first; e < end; e++) {
				const char *sep = " | ";

				for (unsigned int o = 0; o < NCOL; o++)
					if (width[e * NCOL + o]) {
						g_string_append_printf(
							out, "%s%-*u", sep, width[e * NCOL + o],
							counts[((size_t)e * np + p) * NCOL + o]);
						sep = " ";
					}
			}
			g_string_append_c(out, '\n');
		}
		first = end;
	}

	mx.set = set;
	mx.profiles = profiles;
	mx.events = events;
	mx.cell_p = cell_p;
	mx.cell_e = cell_e;
	mx.tot = tot;
	mx.np = np;
	mx.ne = ne;

	/* Harm and INFRA first, every cell: they are what a run is for. */
	for (unsigned int i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];

		if (!outcome_is_harm(c->outcome) && c->outcome != OUTCOME_INFRA)
			continue;
		if (!harms++)
			g_string_append(out, "\nharm and could-not-test cells:\n");
		cell_format_line(c, out);
	}

	disagreements_format(&mx, opts->max_disagree_lines ? opts->max_disagree_lines : 60, out);

	for (unsigned int i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		g_autofree char *title = NULL;
		struct matrix_group *g;
		bool ok = c->outcome == OUTCOME_OK;

		if (ok && c->tries->len <= 1)
			continue;
		if (outcome_is_harm(c->outcome) || c->outcome == OUTCOME_INFRA)
			continue;
		fellback += ok;
		title = cell_group_title(c);
		g = g_hash_table_lookup(gidx, title);
		if (!g) {
			g = g_new0(struct matrix_group, 1);
			g->title = g_steal_pointer(&title);
			g->cells = g_array_new(FALSE, FALSE, sizeof(unsigned int));
			g_ptr_array_add(ok ? okgroups : groups, g);
			g_hash_table_insert(gidx, g->title, g);
		}
		g_array_append_val(g->cells, i);
	}
	g_ptr_array_sort(groups, group_cmp_size);
	g_ptr_array_sort(okgroups, group_cmp_size);

	g_string_append_printf(out, "\nnon-OK cells: %u", nonok);
	if (nonok) {
		g_string_append(out, " (");
		for (unsigned int o = 1, first = 1; o < NCOL; o++)
			if (total[o]) {
				g_string_append_printf(out, "%s%s %u", first ? "" : ", ",
						       o == COL_REJECTED ? "rejected by the profile"
								         : col_name(o),
						       total[o]);
				first = 0;
			}
		g_string_append_printf(out, ") in %u group%s by outcome and tries%s\n",
				       groups->len, groups->len == 1 ? "" : "s",
				       opts->list_all ? "" : "; --list-all prints every cell");
	} else {
		g_string_append_c(out, '\n');
	}
	for (unsigned int i = 0; i < groups->len; i++)
		group_format(&mx, groups->pdata[i], out);
	if (fellback) {
		g_string_append_printf(out, "\nOK only after a fallback: %u cells\n", fellback);
		for (unsigned int i = 0; i < okgroups->len; i++)
			group_format(&mx, okgroups->pdata[i], out);
	}

	if (opts->list_all && nonok) {
		g_string_append_printf(out, "\nevery non-OK cell (%u):\n", nonok);
		for (unsigned int i = 0; i < set->cells->len; i++) {
			const struct cell *c = set->cells->pdata[i];

			if (c->outcome != OUTCOME_OK)
				cell_format_line(c, out);
		}
	}
}

char *results_cell_key(const char *profile, const char *spec)
{
	return g_strdup_printf("%zu:%s%s", strlen(profile), profile, spec);
}
