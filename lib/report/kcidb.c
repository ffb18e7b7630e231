/* The KCIDB v5 JSON writer (report.h "kcidb"). */
#include "kcidb.h"

#include "attr.h"
#include "diff.h"
#include "jsonstr.h"
#include "log.h"
#include "matrix.h"

#include <errno.h>
#include <string.h>

char *report_kcidb_component(const char *s)
{
	GString *o = g_string_new(NULL);
	bool sep = false;

	for (const char *p = s ? s : ""; *p; p++) {
		if (g_ascii_isalnum(*p) || *p == '_' || *p == '-') {
			/* a leading run too: "/x" and "x" are two components */
			if (sep)
				g_string_append_c(o, '_');
			sep = false;
			g_string_append_c(o, *p);
		} else {
			sep = true;
		}
	}
	if (sep)
		g_string_append_c(o, '_');
	if (!o->len)
		g_string_append_c(o, '_');
	return g_string_free(o, FALSE);
}

#define KCIDB_MAJOR 5
#define KCIDB_MINOR 0
#define KCIDB_EXCERPT_MAX 16384

static bool origin_valid(const char *o)
{
	if (!*o)
		return false;
	for (; *o; o++)
		if (!(g_ascii_islower(*o) || g_ascii_isdigit(*o) || *o == '_'))
			return false;
	return true;
}

/* KCIDB forbids nulls: only set a string that is there. */
static void set_str(json_t *o, const char *key, const char *v)
{
	if (v && *v)
		json_object_set_new(o, key, json_string(v));
}

static char *kcidb_path(const struct cell *c)
{
	g_autofree char *event = results_spec_event(c->spec);
	g_autofree char *profile = report_kcidb_component(c->profile);
	g_autofree char *ev = report_kcidb_component(event);
	const char *rest = c->spec + (g_str_has_prefix(c->spec, event) ? strlen(event) : 0);

	while (*rest == ':')
		rest++;
	if (*rest) {
		g_autofree char *mods = report_kcidb_component(rest);

		return g_strdup_printf("pmucanary.%s.%s.%s", profile, ev, mods);
	}
	return g_strdup_printf("pmucanary.%s.%s", profile, ev);
}

static char *utf8_truncate(const char *s, size_t max)
{
	const char *end;

	if (strlen(s) <= max)
		return g_strdup(s);
	end = g_utf8_find_prev_char(s, s + max);
	return g_strndup(s, end ? (size_t)(end - s) : 0);
}

/* A deep copy without null members or elements: KCIDB forbids nulls. */
static json_t *json_without_nulls(const json_t *v)
{
	const char *k;
	json_t *x, *copy;
	size_t i;

	if (json_is_object(v)) {
		copy = json_object();
		json_object_foreach((json_t *)v, k, x)
			if (!json_is_null(x))
				json_object_set_new(copy, k, json_without_nulls(x));
		return copy;
	}
	if (json_is_array(v)) {
		copy = json_array();
		json_array_foreach(v, i, x)
			if (!json_is_null(x))
				json_array_append_new(copy, json_without_nulls(x));
		return copy;
	}
	return json_deep_copy(v);
}

static const char *kcidb_status(enum cell_verdict v)
{
	switch (v) {
	case VERDICT_HARM:
	case VERDICT_KNOWN:
	case VERDICT_REGRESSION:
		return "FAIL";
	case VERDICT_INFRA:
		return "ERROR";
	case VERDICT_REJECTED:
		return "SKIP";
	default:
		return "PASS";
	}
}

/* A JSON string as jansson writes one, from text made valid UTF-8 first. */
static void kcidb_str(GString *out, const char *s)
{
	jsonstr_append(out, s, JSONSTR_REPLACE_INVALID);
}

/* ", KEY: STRING" unless v is NULL or empty: KCIDB forbids nulls. */
static void kcidb_member(GString *out, const char *key, const char *v, bool *first)
{
	if (!v || !*v)
		return;
	g_string_append(out, *first ? "{" : ", ");
	*first = false;
	kcidb_str(out, key);
	g_string_append(out, ": ");
	kcidb_str(out, v);
}

static void kcidb_int(GString *out, const char *key, long long v, bool *first)
{
	g_string_append(out, *first ? "{" : ", ");
	*first = false;
	g_string_append_printf(out, "\"%s\": %lld", key, v);
}

static void kcidb_json(GString *out, const char *key, json_t *v, bool *first)
{
	g_autofree char *dump = json_dumps(v, JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);

	json_decref(v);
	g_string_append(out, *first ? "{" : ", ");
	*first = false;
	g_string_append_printf(out, "\"%s\": %s", key, dump ? dump : "{}");
}

/* One test, one line, written straight into out: building a jansson object
 * per test and dumping it was most of KCIDB's time at full scale. */
static void kcidb_test(const struct report_ctx *ctx, const char *origin, const char *build_id,
		       const struct judged *j, GString *out)
{
	const struct cell *c = j->cell;
	const struct result_set *set = j->src->set;
	g_autofree char *id = g_strdup_printf("%s:%s:%s:%s", origin, set->run_id, c->profile,
					      c->spec);
	g_autofree char *path = kcidb_path(c);
	g_autofree char *text = report_judged_describe(ctx, j);
	g_autofree char *excerpt = utf8_truncate(text, KCIDB_EXCERPT_MAX);
	g_autofree char *envc = g_strdup_printf("cpu %s, accel %s", j->src->cpu_label,
						set->accel ? set->accel : "?");
	bool first = true, efirst = true, mfirst = true;

	kcidb_member(out, "id", id, &first);
	kcidb_member(out, "origin", origin, &first);
	kcidb_member(out, "build_id", build_id, &first);
	kcidb_member(out, "path", path, &first);
	kcidb_member(out, "status", kcidb_status(j->verdict), &first);
	if (j->verdict == VERDICT_KNOWN)
		g_string_append(out, ", \"waived\": true");
	kcidb_member(out, "start_time", set->created, &first);
	kcidb_member(out, "log_excerpt", excerpt, &first);
	kcidb_member(out, "comment", c->spec, &first);

	g_string_append(out, ", \"environment\": ");
	kcidb_member(out, "comment", envc, &efirst);
	g_string_append(out, ", \"misc\": ");
	kcidb_member(out, "cpu_vendor", j->src->cpu.vendor, &mfirst);
	if (j->src->cpu.family >= 0)
		kcidb_int(out, "cpu_family", j->src->cpu.family, &mfirst);
	if (j->src->cpu.model >= 0)
		kcidb_int(out, "cpu_model", j->src->cpu.model, &mfirst);
	if (j->src->cpu.stepping >= 0)
		kcidb_int(out, "cpu_stepping", j->src->cpu.stepping, &mfirst);
	kcidb_member(out, "accel", set->accel, &mfirst);
	g_string_append(out, mfirst ? "{}}" : "}}");

	mfirst = true;
	g_string_append(out, ", \"misc\": ");
	kcidb_member(out, "kernel", c->kernel, &mfirst);
	kcidb_member(out, "profile", c->profile, &mfirst);
	kcidb_member(out, "spec", c->spec, &mfirst);
	kcidb_member(out, "outcome", outcome_name(c->outcome), &mfirst);
	kcidb_member(out, "outcome_class", outcome_class_name(outcome_class(c->outcome)), &mfirst);
	if (outcome_errno(c->outcome) > 0)
		kcidb_int(out, "errno", outcome_errno(c->outcome), &mfirst);
	kcidb_int(out, "k", c->k, &mfirst);
	kcidb_int(out, "n", c->n, &mfirst);
	/* k/n 0/0 on a harm: judged by a proven rule, say which */
	kcidb_member(out, "rule", results_cell_rule(c), &mfirst);
	if (c->has_attr)
		kcidb_json(out, "attr", attr_to_json(&c->attr), &mfirst);
	kcidb_member(out, "error", c->error, &mfirst);
	kcidb_int(out, "tries", c->tries->len, &mfirst);
	if (json_array_size(c->evidence))
		kcidb_json(out, "evidence", json_without_nulls(c->evidence), &mfirst);
	if (j->erratum)
		kcidb_member(out, "known_erratum", erratum_id(j->erratum), &mfirst);
	if (j->base) {
		kcidb_member(out, "baseline_outcome", outcome_name(j->base->outcome), &mfirst);
		kcidb_member(out, "baseline_change", diff_group_name(j->group), &mfirst);
	}
	g_string_append(out, "}}");
}

int kcidb_render(const struct report_ctx *ctx, const struct result_set *const *sets,
			size_t n, GString *out)
{
	const struct matrix *m = ctx->m;
	const char *origin = ctx->opts->origin ? ctx->opts->origin : "pmucanary";
	json_t *root = json_object(), *checkouts = json_array(), *builds = json_array();
	json_t *version = json_object();
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	/* One test a line, written as it is judged: a document tree of 140,000
	 * tests dumped at once took 19 s and 1.6 GB. */
	g_autoptr(GString) tests = g_string_new(NULL);
	g_autofree char *dump = NULL;

	if (!origin_valid(origin)) {
		json_decref(root);
		json_decref(checkouts);
		json_decref(builds);
		json_decref(version);
		return pc_fail(EINVAL, "KCIDB origin '%s' must match [a-z0-9_]+", origin);
	}
	json_object_set_new(version, "major", json_integer(KCIDB_MAJOR));
	json_object_set_new(version, "minor", json_integer(KCIDB_MINOR));
	json_object_set_new(root, "version", version);

	for (guint i = 0; i < m->sources->len; i++) {
		const struct matrix_source *s = m->sources->pdata[i];
		const char *kernel = s->set->kernel && *s->set->kernel ? s->set->kernel : "unknown";
		g_autofree char *checkout_id = g_strdup_printf("%s:kernel-%s", origin, kernel);
		g_autofree char *build_id = g_strdup_printf("%s:%s", origin, s->set->run_id);
		g_autofree char *comment = g_strdup_printf("pmucanary %s %s on cpu %s",
							   results_kind_name(s->set->kind),
							   s->set->run_id, s->cpu_label);
		json_t *b = json_object(), *bmisc = json_object(), *lim = json_array();

		if (!g_hash_table_contains(seen, checkout_id)) {
			json_t *co = json_object(), *comisc = json_object();
			g_autofree char *cc = g_strdup_printf("host kernel %s", kernel);

			json_object_set_new(co, "id", json_string(checkout_id));
			json_object_set_new(co, "origin", json_string(origin));
			json_object_set_new(co, "comment", json_string(cc));
			json_object_set_new(comisc, "kernel_release", json_string(kernel));
			json_object_set_new(co, "misc", comisc);
			json_array_append_new(checkouts, co);
			g_hash_table_add(seen, g_strdup(checkout_id));
		}
		json_object_set_new(b, "id", json_string(build_id));
		json_object_set_new(b, "origin", json_string(origin));
		json_object_set_new(b, "checkout_id", json_string(checkout_id));
		json_object_set_new(b, "comment", json_string(comment));
		set_str(b, "start_time", s->set->created);
		set_str(bmisc, "input", s->name);
		set_str(bmisc, "kind", results_kind_name(s->set->kind));
		set_str(bmisc, "accel", s->set->accel);
		set_str(bmisc, "cpu", s->cpu_label);
		set_str(bmisc, "tool_version", s->set->tool_version);
		for (guint l = 0; l < s->set->limitations->len; l++)
			json_array_append_new(lim, json_string(s->set->limitations->pdata[l]));
		json_object_set_new(bmisc, "limitations", lim);
		if (results_rules(s->set)) {
			/* The run's proven rules, in its build: before its tests. */
			json_t *rules = json_array(), *r;
			size_t k;

			json_array_foreach(results_rules(s->set), k, r) {
				json_t *o = json_is_object(r) ? json_without_nulls(r) : json_object();
				struct results_rule_cover cov = results_rule_cover(
					s->set, json_string_value(json_object_get(r, "text")));
				g_autofree char *d = results_rule_describe(s->set, r);

				json_object_set_new(o, "description", json_string(d));
				json_object_set_new(o, "cells", json_integer(cov.by_rule + cov.alone));
				json_object_set_new(o, "judged_by_rule", json_integer(cov.by_rule));
				json_array_append_new(rules, o);
			}
			json_object_set_new(bmisc, "rules", rules);
		}
		json_object_set_new(b, "misc", bmisc);
		json_array_append_new(builds, b);

		for (guint c = 0; c < s->set->cells->len; c++) {
			const struct cell *cell = s->set->cells->pdata[c];
			struct judged j;

			report_judge(ctx, cell, s,
				     errata_match(ctx->opts->errata, &s->cpu,
						  cell->kernel && *cell->kernel ? cell->kernel : kernel,
						  cell), &j);
			g_string_append(tests, tests->len ? ",\n    " : "    ");
			kcidb_test(ctx, origin, build_id, &j, tests);
		}
	}
	json_object_set_new(root, "checkouts", checkouts);
	json_object_set_new(root, "builds", builds);
	dump = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	/* The root ends in "\n}": the tests go in as its last member. */
	if (!dump || !g_str_has_suffix(dump, "\n}"))
		return pc_fail(ENOMEM, "cannot serialise the KCIDB report");
	g_string_append_len(out, dump, strlen(dump) - 2);
	g_string_append(out, ",\n  \"tests\": [\n");
	g_string_append_len(out, tests->str, tests->len);
	g_string_append(out, tests->len ? "\n  ]\n}\n" : "]\n}\n");
	return 0;
}
