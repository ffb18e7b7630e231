/* The JUnit XML writer (report.h "junit"). */
#include "junit.h"

#include "attr.h"
#include "diff.h"
#include "log.h"
#include "matrix.h"

#include <string.h>

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

int junit_render(const struct report_ctx *ctx, const struct result_set *const *sets,
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
