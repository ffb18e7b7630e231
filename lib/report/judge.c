/* Judging a cell for every report writer, and the escaping they share
 * (see judge.h). */
#include "judge.h"

#include "attr.h"

#include <string.h>

/* ---- escaping ---- */

static void escape(GString *out, const char *s, bool xml)
{
	g_autofree char *valid = g_utf8_make_valid(s ? s : "", -1);

	for (const char *p = valid; *p; p++) {
		unsigned char c = (unsigned char)*p;

		/* Nor the noncharacters U+FFFE and U+FFFF (EF BF BE/BF). */
		if (c == 0xef && (unsigned char)p[1] == 0xbf &&
		    ((unsigned char)p[2] == 0xbe || (unsigned char)p[2] == 0xbf)) {
			if (xml)
				g_string_append(out, (unsigned char)p[2] == 0xbe ? "\\u{fffe}" : "\\u{ffff}");
			else
				g_string_append(out, "&#xfffd;");
			p += 2;
			continue;
		}
		switch (c) {
		case '&': g_string_append(out, "&amp;"); break;
		case '<': g_string_append(out, "&lt;"); break;
		case '>': g_string_append(out, "&gt;"); break;
		case '"': g_string_append(out, "&quot;"); break;
		case '\'': g_string_append(out, "&#39;"); break;
		default:
			/* XML 1.0 cannot carry most C0 controls, even as references. */
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
				g_string_append_printf(out, xml ? "\\x%02x" : "&#xfffd;", c);
			else
				g_string_append_c(out, (char)c);
		}
	}
}

void report_escape_html(GString *out, const char *s)
{
	escape(out, s, false);
}

void report_escape_xml(GString *out, const char *s)
{
	escape(out, s, true);
}

/* ---- judging a cell: harm, known erratum, regression against a baseline ---- */

static const char *const verdict_names[VERDICT_COUNT] = {
	[VERDICT_PASS] = "pass",
	[VERDICT_REJECTED] = "rejected",
	[VERDICT_KNOWN] = "known",
	[VERDICT_REGRESSION] = "regression",
	[VERDICT_HARM] = "harm",
	[VERDICT_INFRA] = "infra",
	[VERDICT_ABSENT] = "absent",
};

const char *report_verdict_name(enum cell_verdict v)
{
	return v < VERDICT_COUNT ? verdict_names[v] : "?";
}

void report_judge(const struct report_ctx *ctx, const struct cell *cell,
		  const struct matrix_source *src, const struct erratum *e, struct judged *j)
{
	memset(j, 0, sizeof(*j));
	j->cell = cell;
	j->src = src;
	j->erratum = e;
	j->inputs = 1;
	if (ctx->base) {
		g_autofree char *key = results_cell_key(cell->profile, cell->spec);

		j->base = g_hash_table_lookup(ctx->base, key);
		if (j->base)
			j->group = diff_classify(j->base->outcome, cell->outcome);
	}
	if (e)
		j->verdict = VERDICT_KNOWN;
	else if (cell->outcome == OUTCOME_INFRA)
		j->verdict = VERDICT_INFRA;
	else if (outcome_is_harm(cell->outcome))
		j->verdict = VERDICT_HARM;
	else if (outcome_class(cell->outcome) == OUTCOME_CLASS_REJECTED)
		j->verdict = VERDICT_REJECTED;
	else if (j->base && diff_group_fails(j->group))
		j->verdict = VERDICT_REGRESSION;
	else
		j->verdict = VERDICT_PASS;
}

void report_judge_mc(const struct report_ctx *ctx, const struct matrix_cell *mc,
		     struct judged *j)
{
	report_judge(ctx, mc->cell, ctx->m->sources->pdata[mc->source], mc->erratum, j);
	j->disagree = mc->disagree;
	j->inputs = mc->inputs;
}

/* Everything a person wants to know about one cell, as plain lines. */
char *report_judged_describe(const struct report_ctx *ctx, const struct judged *j)
{
	const struct cell *c = j->cell;
	GString *s = g_string_new(NULL);
	g_autofree char *ev = matrix_cell_evidence(c);

	g_string_append_printf(s, "kernel %s, profile %s, spec %s\n", c->kernel, c->profile,
			       c->spec);
	g_string_append_printf(s, "outcome %s (%s)", outcome_name(c->outcome),
			       outcome_class_name(outcome_class(c->outcome)));
	if (c->n)
		g_string_append_printf(s, ", k/n %d/%d", c->k, c->n);
	g_string_append_c(s, '\n');
	if (results_cell_rule(c))
		g_string_append_printf(s, "judged by rule %s (proven on a sample of attrs armed alone; "
				       "this one was not)\n", results_cell_rule(c));
	if (j->erratum)
		g_string_append_printf(s, "known erratum %s: %s\n", erratum_id(j->erratum),
				       erratum_title(j->erratum));
	if (j->base)
		g_string_append_printf(s, "baseline %s: %s -> %s (%s)\n",
				       ctx->base_name ? ctx->base_name : "",
				       outcome_name(j->base->outcome), outcome_name(c->outcome),
				       diff_group_title(j->group));
	if (j->disagree)
		g_string_append_printf(s, "inputs disagree: the worst of %u is shown\n", j->inputs);
	g_string_append_printf(s, "cpu %s, input %s\n", j->src->cpu_label, j->src->name);
	if (c->has_attr) {
		g_autofree char *a = attr_to_string(&c->attr);

		g_string_append_printf(s, "attr: %s\n", a);
	}
	if (c->error)
		g_string_append_printf(s, "rejected by the profile: %s\n", c->error);
	for (guint i = 0; i < c->tries->len; i++) {
		const struct cell_try *t = &g_array_index(c->tries, struct cell_try, i);
		g_autofree char *a = attr_to_string(&t->attr);

		g_string_append_printf(s, "try %u: %s -> %s%s%s\n", i + 1, a,
				       outcome_name(t->outcome), t->why ? " (" : "",
				       t->why ? t->why : "");
		if (t->why)
			g_string_append_c(s, ')');
	}
	for (guint i = 0; i < c->per_cpu->len; i++) {
		const struct cell_cpu *cc = &g_array_index(c->per_cpu, struct cell_cpu, i);

		g_string_append_printf(s, "cpu%d: %s\n", cc->cpu, outcome_name(cc->outcome));
	}
	if (*ev) {
		g_auto(GStrv) lines = g_strsplit(ev, "\n", -1);

		for (char **l = lines; *l; l++)
			g_string_append_printf(s, "evidence: %s\n", *l);
	}
	if (s->len && s->str[s->len - 1] == '\n')
		g_string_truncate(s, s->len - 1);
	return g_string_free(s, FALSE);
}
