/* Report writers: text, HTML heatmap, JUnit XML, KCIDB JSON (see report.h). */
#include "report.h"

#include "attr.h"
#include "diff.h"
#include "heatmap.h"
#include "judge.h"
#include "jsonstr.h"
#include "log.h"
#include "matrix.h"
#include "outfile.h"

#include <errno.h>
#include <string.h>

char *report_kcidb_component(const char *s)
{
	GString *o = g_string_new(NULL);
	bool sep = false;

	for (const char *p = s ? s : ""; *p; p++) {
		if (g_ascii_isalnum(*p) || *p == '_' || *p == '-') {
			if (sep && o->len)
				g_string_append_c(o, '_');
			sep = false;
			g_string_append_c(o, *p);
		} else {
			sep = true;
		}
	}
	if (sep && o->len)
		g_string_append_c(o, '_');
	if (!o->len)
		g_string_append_c(o, '_');
	return g_string_free(o, FALSE);
}

/* ---- text ---- */

static int render_text(const struct report_ctx *ctx, const struct result_set *const *sets,
		       size_t n, GString *out)
{
	const struct matrix *m = ctx->m;
	unsigned int regressions = 0;

	matrix_format_text(m, ctx->opts->color, ctx->opts->width ? ctx->opts->width : 120, out);
	if (!ctx->base)
		return 0;
	for (guint r = 0; r < m->rows->len; r++)
		for (guint c = 0; c < m->columns->len; c++) {
			const struct matrix_cell *mc = matrix_at(m, r, c);
			const struct matrix_row *row = m->rows->pdata[r];
			struct judged j;

			if (!mc)
				continue;
			report_judge_mc(ctx, mc, &j);
			if (j.verdict != VERDICT_REGRESSION)
				continue;
			if (!regressions++)
				g_string_append_printf(out, "\nregressions against the baseline %s:\n",
						       ctx->opts->base_name ? ctx->opts->base_name :
						       ctx->opts->base->run_id);
			g_string_append_printf(out, "  %s %s %s: %s -> %s (%s)\n", row->kernel,
					       row->profile, (char *)m->columns->pdata[c],
					       outcome_name(j.base->outcome),
					       outcome_name(j.cell->outcome),
					       diff_group_title(j.group));
		}
	return 0;
}

/* ---- JUnit ---- */

static void xml_attr(GString *out, const char *name, const char *value)
{
	g_string_append_printf(out, " %s=\"", name);
	report_escape_xml(out, value);
	g_string_append_c(out, '"');
}

static void junit_case(const struct report_ctx *ctx, const struct matrix_row *row,
		       const char *spec, const struct matrix_cell *mc, GString *out,
		       unsigned int *counts)
{
	struct judged j;
	g_autofree char *text = NULL;
	g_autofree char *classname = g_strdup_printf("%s.%s", row->kernel, row->profile);
	g_autofree char *msg = NULL;

	report_judge_mc(ctx, mc, &j);
	text = report_judged_describe(ctx, &j);
	counts[j.verdict]++;
	g_string_append(out, "    <testcase");
	xml_attr(out, "classname", classname);
	xml_attr(out, "name", spec);
	g_string_append(out, " time=\"0\">\n");
	switch (j.verdict) {
	case VERDICT_HARM:
		if (results_cell_rule(j.cell))
			msg = g_strdup_printf("%s by rule %s%s%s", outcome_name(j.cell->outcome),
					      results_cell_rule(j.cell), j.base ? ": " : "",
					      j.base ? diff_group_title(j.group) : "");
		else
			msg = g_strdup_printf("%s %d/%d%s%s", outcome_name(j.cell->outcome), j.cell->k,
					      j.cell->n, j.base ? ": " : "",
					      j.base ? diff_group_title(j.group) : "");
		g_string_append(out, "      <failure");
		xml_attr(out, "message", msg);
		xml_attr(out, "type", outcome_name(j.cell->outcome));
		g_string_append(out, ">");
		report_escape_xml(out, text);
		g_string_append(out, "</failure>\n");
		break;
	case VERDICT_REGRESSION:
		msg = g_strdup_printf("regression against the baseline (%s): %s -> %s",
				      diff_group_title(j.group), outcome_name(j.base->outcome),
				      outcome_name(j.cell->outcome));
		g_string_append(out, "      <failure");
		xml_attr(out, "message", msg);
		xml_attr(out, "type", diff_group_name(j.group));
		g_string_append(out, ">");
		report_escape_xml(out, text);
		g_string_append(out, "</failure>\n");
		break;
	case VERDICT_INFRA:
		g_string_append(out, "      <error message=\"INFRA: could not test\" type=\"INFRA\">");
		report_escape_xml(out, text);
		g_string_append(out, "</error>\n");
		break;
	case VERDICT_KNOWN:
		msg = g_strdup_printf("known erratum %s: %s %d/%d (%s)", erratum_id(j.erratum),
				      outcome_name(j.cell->outcome), j.cell->k, j.cell->n,
				      erratum_title(j.erratum));
		g_string_append(out, "      <skipped");
		xml_attr(out, "message", msg);
		g_string_append(out, "/>\n");
		break;
	case VERDICT_REJECTED:
		/* Not run: the profile's parser refused the spec; perf's own
		 * words say why. */
		msg = g_strdup_printf("rejected by the profile: %s",
				      j.cell->error ? j.cell->error : "no message");
		g_string_append(out, "      <skipped");
		xml_attr(out, "message", msg);
		g_string_append(out, "/>\n");
		break;
	default:
		break;
	}
	g_string_append(out, "      <system-out>");
	report_escape_xml(out, text);
	g_string_append(out, "</system-out>\n    </testcase>\n");
}

static int render_junit(const struct report_ctx *ctx, const struct result_set *const *sets,
			size_t n, GString *out)
{
	const struct matrix *m = ctx->m;
	unsigned int total[VERDICT_COUNT] = { 0 }, tests = 0;
	g_autoptr(GString) body = g_string_new(NULL);

	for (guint g = 0; g < m->groups->len; g++) {
		unsigned int counts[VERDICT_COUNT] = { 0 }, cases = 0;
		g_autoptr(GString) cs = g_string_new(NULL);
		g_autofree char *suite = g_strdup_printf("pmucanary cpu %s",
							 (char *)m->groups->pdata[g]);

		for (guint r = 0; r < m->rows->len; r++) {
			const struct matrix_row *row = m->rows->pdata[r];

			if (row->group != g)
				continue;
			for (guint c = 0; c < m->columns->len; c++)
				if (row->cells[c]) {
					junit_case(ctx, row, m->columns->pdata[c], row->cells[c], cs,
						   counts);
					cases++;
				}
		}
		g_string_append(body, "  <testsuite");
		xml_attr(body, "name", suite);
		g_string_append_printf(body, " tests=\"%u\" failures=\"%u\" errors=\"%u\" "
					     "skipped=\"%u\">\n    <properties>\n",
				       cases, counts[VERDICT_HARM] + counts[VERDICT_REGRESSION],
				       counts[VERDICT_INFRA],
				       counts[VERDICT_KNOWN] + counts[VERDICT_REJECTED]);
		for (guint i = 0; i < m->sources->len; i++) {
			const struct matrix_source *s = m->sources->pdata[i];
			g_autofree char *desc = NULL;

			if (strcmp(s->cpu_label, m->groups->pdata[g]))
				continue;
			desc = g_strdup_printf("%s (%s %s, kernel %s, accel %s)", s->name,
					       results_kind_name(s->set->kind), s->set->run_id,
					       s->set->kernel, s->set->accel);
			g_string_append(body, "      <property name=\"input\"");
			xml_attr(body, "value", desc);
			g_string_append(body, "/>\n");
			for (guint l = 0; l < s->set->limitations->len; l++) {
				g_string_append(body, "      <property name=\"limitation\"");
				xml_attr(body, "value", s->set->limitations->pdata[l]);
				g_string_append(body, "/>\n");
			}
			/* Its proven rules before any test case: what a class of
			 * failures has in common. */
			json_t *rules = results_rules(s->set), *r;
			size_t k;

			json_array_foreach(rules, k, r) {
				g_autofree char *d = results_rule_describe(s->set, r);

				g_string_append(body, "      <property name=\"rule\"");
				xml_attr(body, "value", d);
				g_string_append(body, "/>\n");
			}
		}
		g_string_append(body, "    </properties>\n");
		g_string_append_len(body, cs->str, cs->len);
		g_string_append(body, "  </testsuite>\n");
		for (int v = 0; v < VERDICT_COUNT; v++)
			total[v] += counts[v];
		tests += cases;
	}
	g_string_append(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	g_string_append_printf(out, "<testsuites name=\"pmucanary\" tests=\"%u\" failures=\"%u\" "
				    "errors=\"%u\" skipped=\"%u\">\n",
			       tests, total[VERDICT_HARM] + total[VERDICT_REGRESSION],
			       total[VERDICT_INFRA], total[VERDICT_KNOWN] + total[VERDICT_REJECTED]);
	g_string_append_len(out, body->str, body->len);
	g_string_append(out, "</testsuites>\n");
	return 0;
}

/* ---- KCIDB v5 ---- */

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

static int render_kcidb(const struct report_ctx *ctx, const struct result_set *const *sets,
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

/* ---- the table ---- */

static const struct report_writer {
	const char *name;
	int (*render)(const struct report_ctx *ctx, const struct result_set *const *sets,
		      size_t n, GString *out);
} report_writers[REPORT_FORMAT_COUNT] = {
	[REPORT_TEXT] = { "text", render_text },
	[REPORT_HTML] = { "html", heatmap_render },
	[REPORT_JUNIT] = { "junit", render_junit },
	[REPORT_KCIDB] = { "kcidb", render_kcidb },
};

const char *report_format_name(enum report_format f)
{
	return f < REPORT_FORMAT_COUNT ? report_writers[f].name : "?";
}

enum report_format report_format_from_name(const char *name)
{
	for (int f = 0; name && f < REPORT_FORMAT_COUNT; f++)
		if (!strcmp(report_writers[f].name, name))
			return f;
	return REPORT_FORMAT_COUNT;
}

static void ctx_clear(struct report_ctx *ctx)
{
	matrix_free((struct matrix *)ctx->m);
	if (ctx->base)
		g_hash_table_unref(ctx->base);
}

static int ctx_init(struct report_ctx *ctx, const struct result_set *const *sets, size_t n,
		    const struct report_options *opts)
{
	static const struct report_options no_opts;
	struct matrix *m = NULL;
	int rc;

	memset(ctx, 0, sizeof(*ctx));
	ctx->opts = opts ? opts : &no_opts;
	rc = matrix_build(sets, ctx->opts->names, n, ctx->opts->errata, &m);
	if (rc < 0)
		return rc;
	ctx->m = m;
	ctx->base_set = ctx->opts->base;
	ctx->base_name = ctx->opts->base_name;
	if (ctx->opts->base) {
		ctx->base = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		for (guint i = 0; i < ctx->opts->base->cells->len; i++) {
			const struct cell *c = ctx->opts->base->cells->pdata[i];

			/* As in diff: a spec the profile rejected is not a tested cell. */
			if (!c->has_attr && c->error)
				continue;
			g_hash_table_insert(ctx->base,
					    results_cell_key(c->profile, c->spec),
					    (void *)c);
		}
	}
	return 0;
}

int report_render(enum report_format f, const struct result_set *const *sets, size_t n,
		  const struct report_options *opts, GString *out)
{
	struct report_ctx ctx;
	int rc;

	if (f >= REPORT_FORMAT_COUNT)
		return pc_fail(EINVAL, "unknown report format %d", (int)f);
	rc = ctx_init(&ctx, sets, n, opts);
	if (rc < 0)
		return rc;
	rc = report_writers[f].render(&ctx, sets, n, out);
	ctx_clear(&ctx);
	return rc;
}

int report_summarize(const struct result_set *const *sets, size_t n,
		     const struct report_options *opts, struct report_summary *out)
{
	struct report_ctx ctx;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = ctx_init(&ctx, sets, n, opts);
	if (rc < 0)
		return rc;
	for (guint r = 0; r < ctx.m->rows->len; r++)
		for (guint c = 0; c < ctx.m->columns->len; c++) {
			const struct matrix_cell *mc = matrix_at(ctx.m, r, c);
			struct judged j;

			if (!mc)
				continue;
			report_judge_mc(&ctx, mc, &j);
			out->cells++;
			out->harm += j.verdict == VERDICT_HARM;
			out->known += j.verdict == VERDICT_KNOWN;
			out->regressions += j.verdict == VERDICT_REGRESSION;
			out->infra += j.verdict == VERDICT_INFRA;
		}
	ctx_clear(&ctx);
	return 0;
}

int report_write(enum report_format f, const struct result_set *const *sets, size_t n,
		 const struct report_options *opts, const char *path)
{
	g_autoptr(GString) out = g_string_new(NULL);
	int rc = report_render(f, sets, n, opts, out);

	if (rc < 0)
		return rc;
	return outfile_write(path, out->str, out->len);
}
