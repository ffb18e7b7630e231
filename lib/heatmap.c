/* The HTML report (report.h "html"): a self-contained page. */
#include "heatmap.h"
#include "report_writer.h"

#include "matrix.h"

#include <string.h>

static const char html_style[] =
	"body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\n"
	"h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}\n"
	"table.heatmap{border-collapse:collapse;font-size:12px}\n"
	".heatmap th,.heatmap td{border:1px solid #fff;padding:3px 6px;white-space:nowrap}\n"
	".heatmap th.spec{writing-mode:vertical-rl;transform:rotate(180deg);"
	"text-align:left;font-weight:normal;font-family:monospace}\n"
	".heatmap th.row{text-align:left;font-family:monospace;background:#f4f4f4}\n"
	"td.cell{text-align:center;font-family:monospace;cursor:default;min-width:3em}\n"
	".c-ok{background:#c8e6c9;color:#1b5e20}\n"
	".c-errno{background:#fff3c4;color:#6d4c00}\n"
	".c-infra{background:#d1c4e9;color:#311b92}\n"
	".v-rejected{background:#eeeeee;color:#757575}\n"
	".v-absent{background:#fafafa;color:#bdbdbd}\n"
	".c-harm{color:#fff;font-weight:bold}\n"
	".o-GUEST_CRASH{background:#b71c1c}\n"
	".o-GUEST_HANG{background:#e65100}\n"
	".o-GUEST_REBOOT{background:#f57c00}\n"
	".o-GUEST_CORRUPTION{background:#880e4f}\n"
	".o-GUEST_OOPS{background:#d32f2f}\n"
	".o-HOST_WARN{background:#6a1b9a}\n"
	".o-HOST_CRASH{background:#000;color:#ff5252}\n"
	".o-HOST_HANG{background:#000;color:#ffab40}\n"
	"td.v-known{background:repeating-linear-gradient(45deg,#ffe082,#ffe082 6px,"
	"#ffca28 6px,#ffca28 12px);color:#5d4037;font-weight:normal}\n"
	"td.v-regression{outline:3px solid #d50000;outline-offset:-3px}\n"
	".legend span.sw{display:inline-block;min-width:5em;padding:2px 6px;margin:2px;"
	"text-align:center;font-family:monospace;font-size:12px}\n"
	".limitations li{color:#b71c1c}\n"
	"#tip{position:absolute;display:none;background:#263238;color:#eceff1;"
	"padding:6px 8px;border-radius:4px;font:12px monospace;white-space:pre-wrap;"
	"max-width:60em;pointer-events:none;z-index:10}\n"
	"pre.detail{white-space:pre-wrap;font-size:12px;background:#f7f7f7;padding:6px}\n";

/* Data lives only in escaped attributes; the script reads it with
 * getAttribute and writes it with textContent, never as markup. */
static const char html_script[] =
	"(function(){\n"
	"var tip=document.getElementById('tip');\n"
	"var cells=document.querySelectorAll('td.cell');\n"
	"var measured=document.querySelectorAll('td.cell:not(.v-absent)').length;\n"
	"cells.forEach(function(td){\n"
	" td.addEventListener('mouseenter',function(){"
	"tip.textContent=td.getAttribute('data-tip');tip.style.display='block';});\n"
	" td.addEventListener('mousemove',function(e){"
	"tip.style.left=(e.pageX+14)+'px';tip.style.top=(e.pageY+14)+'px';});\n"
	" td.addEventListener('mouseleave',function(){tip.style.display='none';});\n"
	"});\n"
	"var failing=document.querySelectorAll('td.v-harm,td.v-regression').length;\n"
	"var known=document.querySelectorAll('td.v-known').length;\n"
	"document.getElementById('js-status').textContent="
	"'hover a cell for its evidence; '+measured+' cells, '+failing+"
	"' failing, '+known+' known errata';\n"
	"document.body.setAttribute('data-js','ready');\n"
	"})();\n";

static const char *cell_class_name(const struct cell *c)
{
	return outcome_class_name(outcome_class(c->outcome));
}

static void html_cell(const struct report_ctx *ctx, const struct matrix_cell *mc, GString *out)
{
	struct judged j;
	g_autofree char *tip = NULL;
	g_autofree char *cls = NULL;

	if (!mc) {
		g_string_append(out, "<td class=\"cell v-absent\" data-tip=\"not measured\" "
				     "title=\"not measured\">-</td>");
		return;
	}
	report_judge_mc(ctx, mc, &j);
	tip = report_judged_describe(ctx, &j);
	cls = g_ascii_strdown(cell_class_name(mc->cell), -1);
	g_string_append_printf(out, "<td class=\"cell v-%s c-%s o-%s\" data-outcome=\"%s\"",
			       report_verdict_name(j.verdict), cls, outcome_name(mc->cell->outcome),
			       outcome_name(mc->cell->outcome));
	if (j.erratum) {
		g_string_append(out, " data-erratum=\"");
		report_escape_html(out, erratum_id(j.erratum));
		g_string_append_c(out, '"');
	}
	g_string_append(out, " data-tip=\"");
	report_escape_html(out, tip);
	g_string_append(out, "\" title=\"");
	report_escape_html(out, tip);
	g_string_append(out, "\">");
	report_escape_html(out, matrix_cell_abbrev(mc));
	if (mc->disagree)
		g_string_append_c(out, '*');
	g_string_append(out, "</td>");
}

static void html_legend(GString *out)
{
	static const struct {
		const char *cls, *text, *what;
	} items[] = {
		{ "c-ok", "ok", "OK: opened, no harm" },
		{ "c-errno", "NOSUP", "errno: the kernel refused (EOPNOTSUPP, EINVAL, ...)" },
		{ "c-infra", "infra?", "INFRA: could not test, no kernel verdict" },
		{ "v-rejected", "rej", "the profile rejected the spec" },
		{ "v-known c-harm", "CRASH~", "harm explained by a known erratum (not a regression)" },
		{ "c-ok v-regression", "NOSUP", "red frame: regression against the baseline" },
		{ "v-absent", "-", "not measured" },
	};

	g_string_append(out, "<div class=\"legend\"><h2>Legend</h2>\n<p>");
	for (size_t i = 0; i < G_N_ELEMENTS(items); i++)
		g_string_append_printf(out, "<span class=\"sw %s\">%s</span> %s<br>\n",
				       items[i].cls, items[i].text, items[i].what);
	g_string_append(out, "</p><p>harm, by kind:<br>\n");
	for (int o = 0; o < OUTCOME_COUNT; o++)
		if (outcome_is_harm(o))
			g_string_append_printf(out, "<span class=\"sw c-harm o-%s\">%s</span> %s<br>\n",
					       outcome_name(o), matrix_outcome_abbrev(o),
					       outcome_name(o));
	g_string_append(out, "</p></div>\n");
}

int heatmap_render(const struct report_ctx *ctx, const struct result_set *const *sets,
		       size_t n, GString *out)
{
	const struct matrix *m = ctx->m;
	bool any_limit = false;

	g_string_append(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			     "<title>pmucanary matrix</title>\n<style>\n");
	g_string_append(out, html_style);
	g_string_append(out, "</style>\n</head>\n<body>\n<h1>pmucanary matrix</h1>\n");
	g_string_append_printf(out, "<p class=\"summary\" id=\"summary\" data-harm=\"%u\" "
				    "data-known=\"%u\" data-infra=\"%u\">%u harmful cell%s, "
				    "%u known errat%s, %u INFRA; %u rows &times; %u specs from %u "
				    "input%s.</p>\n",
			       m->harm, m->known_errata, m->infra, m->harm, m->harm == 1 ? "" : "s",
			       m->known_errata, m->known_errata == 1 ? "um" : "a", m->infra,
			       m->rows->len, m->columns->len, m->sources->len,
			       m->sources->len == 1 ? "" : "s");
	g_string_append(out, "<p id=\"js-status\">(JavaScript off: hover shows the title "
			     "of a cell)</p>\n");

	g_string_append(out, "<h2>Inputs</h2>\n<ul class=\"inputs\">\n");
	for (guint i = 0; i < m->sources->len; i++) {
		const struct matrix_source *s = m->sources->pdata[i];

		g_string_append(out, "<li><code>");
		report_escape_html(out, s->name);
		g_string_append(out, "</code>: ");
		report_escape_html(out, results_kind_name(s->set->kind));
		g_string_append(out, " ");
		report_escape_html(out, s->set->run_id);
		g_string_append(out, ", kernel ");
		report_escape_html(out, s->set->kernel);
		g_string_append(out, ", accel ");
		report_escape_html(out, s->set->accel);
		g_string_append(out, ", cpu ");
		report_escape_html(out, s->cpu_label);
		if (matrix_source_verdict(s)) {
			g_string_append(out, ", run verdict ");
			report_escape_html(out, matrix_source_verdict(s));
		}
		if (s->set->limitations->len) {
			any_limit = true;
			g_string_append(out, "\n<ul class=\"limitations\">\n");
			for (guint l = 0; l < s->set->limitations->len; l++) {
				g_string_append(out, "<li class=\"limitation\">limitation: ");
				report_escape_html(out, s->set->limitations->pdata[l]);
				g_string_append(out, "</li>\n");
			}
			g_string_append(out, "</ul>");
		}
		g_string_append(out, "</li>\n");
	}
	g_string_append(out, "</ul>\n");
	if (!any_limit)
		g_string_append(out, "<p>No input noted a limitation.</p>\n");
	if (ctx->opts->base) {
		g_string_append(out, "<p>Baseline: <code>");
		report_escape_html(out, ctx->opts->base_name ? ctx->opts->base_name :
				   ctx->opts->base->run_id);
		g_string_append(out, "</code> (framed cells regressed against it)</p>\n");
	}

	for (guint g = 0; g < m->groups->len; g++) {
		/* Each CPU's table shows only the specs measured on that CPU. */
		g_autofree bool *used = g_new0(bool, m->columns->len + 1);

		for (guint r = 0; r < m->rows->len; r++)
			for (guint c = 0; c < m->columns->len; c++)
				if (((struct matrix_row *)m->rows->pdata[r])->group == g &&
				    matrix_at(m, r, c))
					used[c] = true;
		g_string_append(out, "<h2>cpu ");
		report_escape_html(out, m->groups->pdata[g]);
		g_string_append_printf(out, "</h2>\n<table class=\"heatmap\" data-cpu=\"");
		report_escape_html(out, m->groups->pdata[g]);
		g_string_append(out, "\">\n<thead><tr><th class=\"row\">kernel</th>"
				     "<th class=\"row\">profile</th>");
		for (guint c = 0; c < m->columns->len; c++) {
			if (!used[c])
				continue;
			g_string_append(out, "<th class=\"spec\" scope=\"col\">");
			report_escape_html(out, m->columns->pdata[c]);
			g_string_append(out, "</th>");
		}
		g_string_append(out, "</tr></thead>\n<tbody>\n");
		for (guint r = 0; r < m->rows->len; r++) {
			const struct matrix_row *row = m->rows->pdata[r];

			if (row->group != g)
				continue;
			g_string_append(out, "<tr><th class=\"row\">");
			report_escape_html(out, row->kernel);
			g_string_append(out, "</th><th class=\"row\">");
			report_escape_html(out, row->profile);
			g_string_append(out, "</th>");
			for (guint c = 0; c < m->columns->len; c++)
				if (used[c])
					html_cell(ctx, row->cells[c], out);
			g_string_append(out, "</tr>\n");
		}
		g_string_append(out, "</tbody>\n</table>\n");
	}

	html_legend(out);

	g_string_append(out, "<h2>Harmful, known-erratum, regressed and INFRA cells</h2>\n");
	for (guint r = 0; r < m->rows->len; r++)
		for (guint c = 0; c < m->columns->len; c++) {
			const struct matrix_cell *mc = matrix_at(m, r, c);
			struct judged j;
			g_autofree char *text = NULL;

			if (!mc)
				continue;
			report_judge_mc(ctx, mc, &j);
			if (j.verdict == VERDICT_PASS || j.verdict == VERDICT_REJECTED)
				continue;
			text = report_judged_describe(ctx, &j);
			g_string_append_printf(out, "<pre class=\"detail v-%s\">",
					       report_verdict_name(j.verdict));
			report_escape_html(out, text);
			g_string_append(out, "</pre>\n");
		}
	g_string_append(out, "<div id=\"tip\" role=\"tooltip\"></div>\n<script>\n");
	g_string_append(out, html_script);
	g_string_append(out, "</script>\n</body>\n</html>\n");
	return 0;
}
