/* The HTML report (report.h "html"): one self-contained page that a browser
 * opens at full scale (the default sweep: 140,000 cells in a few MB).
 *
 * The page holds the data once, as JSON in a <script type="application/json">
 * element, and its own small script draws the heatmap from it: rows kernel x
 * profile grouped by CPU signature, tiles event x modifier class
 * (matrix_groups_build), each coloured by the worst outcome class in it.
 * Clicking a tile lists its cells with their tries and evidence; a filter
 * box narrows every view; the view (filter, open tile) lives in the URL
 * fragment. Everything the inputs hold is text to the script (textContent),
 * never markup; what the page states without the script (summary, inputs,
 * limitations, legend) is escaped HTML.
 *
 * Compact on purpose: a spec is an event plus a modifier suffix (both
 * tables); an attr is a pair of printed halves, the event ("type=.. config=..")
 * and the setup (everything else), each half stored once; a row's cells are a
 * code string and attr-index deltas; only cells that carry more (tries beyond
 * the one that opened, a profile's error, evidence, k/n, a verdict the code
 * does not say) have an object. */
#include "heatmap.h"

#include "attr.h"
#include "jsonstr.h"
#include "matrix.h"
#include "repro.h"

#include <inttypes.h>
#include <string.h>

/* ---- JSON that is safe inside a <script> element ---- */

/* A JSON string that cannot end the <script> element it sits in; invalid
 * UTF-8 becomes U+FFFD. */
static void js_str(GString *out, const char *s)
{
	jsonstr_append(out, s, JSONSTR_HTML_SAFE | JSONSTR_REPLACE_INVALID);
}

/* ---- tables: every string and attr half once ---- */

struct strtab {
	GHashTable *idx;   /* string (owned by list) -> index + 1 */
	GPtrArray *list;   /* char * */
};

static void strtab_init(struct strtab *t)
{
	t->idx = g_hash_table_new(g_str_hash, g_str_equal);
	t->list = g_ptr_array_new_with_free_func(g_free);
}

static void strtab_clear(struct strtab *t)
{
	g_hash_table_unref(t->idx);
	g_ptr_array_unref(t->list);
}

static unsigned int strtab_add(struct strtab *t, const char *s)
{
	gpointer v = g_hash_table_lookup(t->idx, s);

	if (v)
		return GPOINTER_TO_UINT(v) - 1;
	g_ptr_array_add(t->list, g_strdup(s));
	g_hash_table_insert(t->idx, t->list->pdata[t->list->len - 1],
			    GUINT_TO_POINTER(t->list->len));
	return t->list->len - 1;
}

static void strtab_write(GString *out, const char *key, const struct strtab *t)
{
	g_string_append_printf(out, ",\n\"%s\":[", key);
	for (guint i = 0; i < t->list->len; i++) {
		if (i)
			g_string_append_c(out, ',');
		js_str(out, t->list->pdata[i]);
	}
	g_string_append_c(out, ']');
}

/* The members that say which event an attr counts; the rest is how. */
static bool attr_field_is_event(enum attr_field f)
{
	return f == ATTR_F_type || f == ATTR_F_config || f == ATTR_F_config1 ||
	       f == ATTR_F_config2 || f == ATTR_F_bp_type;
}

/* One half of attr_to_string(): the same "name=value" words, in its order. */
static char *attr_half(const struct perf_event_attr *a, bool event)
{
	g_autofree char *all = attr_to_string(a);
	g_auto(GStrv) words = g_strsplit(all, " ", -1);
	GString *s = g_string_new(NULL);

	for (char **w = words; *w && **w; w++) {
		g_autofree char *name = g_strndup(*w, strcspn(*w, "="));

		if (attr_field_is_event(attr_field_from_name(name)) != event)
			continue;
		if (s->len)
			g_string_append_c(s, ' ');
		g_string_append(s, *w);
	}
	return g_string_free(s, FALSE);
}

struct hm {
	const struct report_ctx *ctx;
	struct strtab strs;          /* errors, whys, evidence, errata, ... */
	struct strtab halves;        /* attr halves */
	GHashTable *attr_idx;        /* struct perf_event_attr * (owned) -> index */
	GArray *attrs;               /* guint pairs: event half, setup half */
};

/* Index of an attr; 0 stands for "no attr". */
static unsigned int hm_attr(struct hm *h, const struct perf_event_attr *a)
{
	gpointer v = g_hash_table_lookup(h->attr_idx, a);
	g_autofree char *ev = NULL, *setup = NULL;
	guint pair[2];

	if (v)
		return GPOINTER_TO_UINT(v);
	ev = attr_half(a, true);
	setup = attr_half(a, false);
	pair[0] = strtab_add(&h->halves, ev);
	pair[1] = strtab_add(&h->halves, setup);
	g_array_append_vals(h->attrs, pair, 2);
	g_hash_table_insert(h->attr_idx, g_memdup2(a, sizeof(*a)),
			    GUINT_TO_POINTER(h->attrs->len / 2 - 1));
	return h->attrs->len / 2 - 1;
}

/* The page's code of a cell: its outcome; REJECTED when the profile refused
 * the spec, however the file said so (matrix_cell_rejected). */
static unsigned int hm_code(const struct cell *c)
{
	return matrix_cell_rejected(c) ? OUTCOME_REJECTED : (unsigned int)c->outcome;
}

static bool tries_trivial(const struct cell *c)
{
	const struct cell_try *t;

	if (c->tries->len != 1 || !c->has_attr)
		return c->tries->len == 0;
	t = &g_array_index(c->tries, struct cell_try, 0);
	return !t->why && t->outcome == c->outcome && attr_equal(&t->attr, &c->attr);
}

/* The cell's object when it carries more than code and attr; NULL else. */
static GString *hm_cell_extra(struct hm *h, const struct matrix_cell *mc, size_t row_source)
{
	const struct cell *c = mc->cell;
	struct judged j;
	GString *x = g_string_new(NULL);

	report_judge_mc(h->ctx, mc, &j);
	if (!tries_trivial(c)) {
		g_string_append(x, ",\"t\":[");
		for (guint i = 0; i < c->tries->len; i++) {
			const struct cell_try *t = &g_array_index(c->tries, struct cell_try, i);

			g_string_append_printf(x, "%s%u,%u,%d", i ? "," : "", hm_attr(h, &t->attr) + 1,
					       (unsigned int)t->outcome,
					       t->why ? (int)strtab_add(&h->strs, t->why) : -1);
		}
		g_string_append_c(x, ']');
	}
	if (c->error) {
		/* Most messages start with the spec: stored once without it. */
		size_t sl = strlen(c->spec);

		if (!strncmp(c->error, c->spec, sl) && c->error[sl])
			g_string_append_printf(x, ",\"es\":%u", strtab_add(&h->strs, c->error + sl));
		else
			g_string_append_printf(x, ",\"e\":%u", strtab_add(&h->strs, c->error));
	}
	if (c->n)
		g_string_append_printf(x, ",\"k\":%d,\"n\":%d", c->k, c->n);
	if (results_cell_rule(c))
		g_string_append_printf(x, ",\"r\":%u", strtab_add(&h->strs, results_cell_rule(c)));
	if (json_array_size(c->evidence)) {
		g_autofree char *ev = matrix_cell_evidence(c);

		g_string_append(x, ",\"v\":");
		js_str(x, ev);
	}
	if (j.verdict == VERDICT_KNOWN || j.verdict == VERDICT_REGRESSION)
		g_string_append_printf(x, ",\"V\":%d", (int)j.verdict);
	if (j.erratum) {
		g_autofree char *e = g_strdup_printf("%s: %s", erratum_id(j.erratum),
						     erratum_title(j.erratum));

		g_string_append_printf(x, ",\"E\":%u", strtab_add(&h->strs, e));
	}
	if (j.base)
		g_string_append_printf(x, ",\"b\":[%u,%u]", hm_code(j.base),
				       strtab_add(&h->strs, diff_group_title(j.group)));
	if (mc->disagree)
		g_string_append_printf(x, ",\"d\":%u", mc->inputs);
	if (h->ctx->opts && h->ctx->opts->repro_dirs && h->ctx->opts->repro_dirs[mc->source] &&
	    repro_cell_auto(c)) {
		g_autofree char *name = repro_dir_name(c);
		g_autofree char *href = g_strdup_printf("%s/%s/", h->ctx->opts->repro_dirs[mc->source],
							name);
		g_autofree char *esc = g_uri_escape_string(href, "/", FALSE);

		g_string_append(x, ",\"p\":");
		js_str(x, esc);
	}
	if (mc->source != row_source)
		g_string_append_printf(x, ",\"src\":%zu", mc->source);
	if (c->per_cpu->len) {
		g_string_append(x, ",\"c\":[");
		for (guint i = 0; i < c->per_cpu->len; i++) {
			const struct cell_cpu *cc = &g_array_index(c->per_cpu, struct cell_cpu, i);

			g_string_append_printf(x, "%s%d,%u", i ? "," : "", cc->cpu,
					       (unsigned int)cc->outcome);
		}
		g_string_append_c(x, ']');
	}
	if (!x->len) {
		g_string_free(x, TRUE);
		return NULL;
	}
	x->str[0] = '{';
	g_string_append_c(x, '}');
	return x;
}

/* A code as one character of a row's code string: A-Z, then a-z. */
G_STATIC_ASSERT(OUTCOME_COUNT <= 52);
static char code_char(unsigned int code)
{
	return code < 26 ? (char)('A' + code) : (char)('a' + code - 26);
}

/* One row: its cells in column order as runs of columns, codes, attr
 * deltas and the sparse objects. */
static void hm_row(struct hm *h, const struct matrix_row *row, size_t ncols, GString *out)
{
	g_autoptr(GString) runs = g_string_new(NULL);
	g_autoptr(GString) codes = g_string_new(NULL);
	g_autoptr(GString) deltas = g_string_new(NULL);
	g_autoptr(GString) extras = g_string_new(NULL);
	long prev_attr = 0;
	size_t pos = 0, run_start = 0, run_len = 0, src = 0;
	bool src_set = false;

	for (size_t c = 0; c < ncols; c++) {
		const struct matrix_cell *mc = row->cells[c];
		long a;
		GString *x;

		if (!mc)
			continue;
		if (!src_set) {
			src = mc->source;
			src_set = true;
		}
		if (run_len && run_start + run_len == c) {
			run_len++;
		} else {
			if (run_len)
				g_string_append_printf(runs, "%s%zu,%zu", runs->len ? "," : "",
						       run_start, run_len);
			run_start = c;
			run_len = 1;
		}
		g_string_append_c(codes, code_char(hm_code(mc->cell)));
		a = mc->cell->has_attr ? (long)hm_attr(h, &mc->cell->attr) + 1 : 0;
		g_string_append_printf(deltas, "%s%ld", pos ? "," : "", a - prev_attr);
		prev_attr = a;
		x = hm_cell_extra(h, mc, src);
		if (x) {
			g_string_append_printf(extras, "%s%zu,", extras->len ? "," : "", pos);
			g_string_append_len(extras, x->str, x->len);
			g_string_free(x, TRUE);
		}
		pos++;
	}
	if (run_len)
		g_string_append_printf(runs, "%s%zu,%zu", runs->len ? "," : "", run_start, run_len);
	g_string_append_printf(out, "{\"src\":%zu,\"s\":[%s],\"o\":\"%s\",\"a\":[%s],\"x\":[%s]}", src,
			       runs->str, codes->str, deltas->str, extras->str);
}

static void hm_data(struct hm *h, const struct matrix_groups *g, GString *out)
{
	const struct matrix *m = h->ctx->m;
	g_autoptr(GString) rows = g_string_new(NULL);
	struct strtab mods;
	/* Tile columns: (event, class) pairs that hold a cell, in event order. */
	g_autofree int *col_of = g_new(int, g->events->len * MATRIX_MODCLASS_COUNT + 1);
	g_autoptr(GArray) cols = g_array_new(FALSE, FALSE, sizeof(guint));
	g_autofree bool *used = g_new0(bool, g->events->len * MATRIX_MODCLASS_COUNT + 1);

	strtab_init(&mods);
	for (guint c = 0; c < m->columns->len; c++)
		used[g->col_event[c] * MATRIX_MODCLASS_COUNT + g->col_class[c]] = true;
	for (guint i = 0; i < g->events->len * MATRIX_MODCLASS_COUNT; i++) {
		col_of[i] = used[i] ? (int)cols->len : -1;
		if (used[i])
			g_array_append_val(cols, i);
	}

	g_string_append(out, "{\"codes\":[");
	for (unsigned int o = 0; o < OUTCOME_COUNT; o++)
		g_string_append_printf(out, "%s[\"%s\",\"%s\"]", o ? "," : "", outcome_name(o),
				       outcome_class_name(outcome_class(o)));
	g_string_append(out, "],\n\"verdicts\":[");
	for (int v = 0; v < VERDICT_COUNT; v++)
		g_string_append_printf(out, "%s\"%s\"", v ? "," : "", report_verdict_name(v));
	/* The kernel's member order, to print an attr's two halves as one. */
	g_string_append(out, "],\n\"fields\":[");
	for (int f = 0; f < ATTR_FIELD_COUNT; f++) {
		g_string_append_printf(out, "%s\"%s\"", f ? "," : "", attr_field_name(f));
		if (f == ATTR_F_sample_period)
			g_string_append(out, ",\"sample_freq\"");
	}
	g_string_append(out, "],\n\"sources\":[");
	for (guint i = 0; i < m->sources->len; i++) {
		const struct matrix_source *s = m->sources->pdata[i];

		g_string_append(out, i ? ",[" : "[");
		js_str(out, s->name);
		g_string_append_c(out, ',');
		js_str(out, s->cpu_label);
		g_string_append_c(out, ']');
	}
	g_string_append(out, "],\n\"groups\":[");
	for (guint i = 0; i < m->groups->len; i++) {
		if (i)
			g_string_append_c(out, ',');
		js_str(out, m->groups->pdata[i]);
	}
	g_string_append(out, "],\n\"events\":[");
	for (guint i = 0; i < g->events->len; i++) {
		if (i)
			g_string_append_c(out, ',');
		js_str(out, g->events->pdata[i]);
	}
	g_string_append(out, "],\n\"classes\":[");
	for (int i = 0; i < MATRIX_MODCLASS_COUNT; i++) {
		g_string_append(out, i ? ",[" : "[");
		js_str(out, matrix_modclass_name(i));
		g_string_append_c(out, ',');
		js_str(out, matrix_modclass_what(i));
		g_string_append_c(out, ']');
	}
	g_string_append(out, "],\n\"cols\":[");
	for (guint i = 0; i < cols->len; i++) {
		guint v = g_array_index(cols, guint, i);

		g_string_append_printf(out, "%s%u,%u", i ? "," : "", v / MATRIX_MODCLASS_COUNT,
				       v % MATRIX_MODCLASS_COUNT);
	}
	/* A spec is its event's name and a suffix: stored as (tile column, suffix). */
	g_string_append(out, "],\n\"specs\":[");
	for (guint c = 0; c < m->columns->len; c++) {
		/* results_spec_event() is a prefix of the spec. */
		const char *spec = m->columns->pdata[c];
		size_t el = strlen(g->events->pdata[g->col_event[c]]);

		g_string_append_printf(out, "%s%d,%u", c ? "," : "",
				       col_of[g->col_event[c] * MATRIX_MODCLASS_COUNT + g->col_class[c]],
				       strtab_add(&mods, spec + el));
	}
	g_string_append_c(out, ']');
	strtab_write(out, "mods", &mods);
	strtab_clear(&mods);

	for (guint r = 0; r < m->rows->len; r++) {
		const struct matrix_row *row = m->rows->pdata[r];

		g_string_append_printf(rows, "%s[%zu,", r ? ",\n" : "", row->group);
		js_str(rows, row->kernel);
		g_string_append_c(rows, ',');
		js_str(rows, row->profile);
		g_string_append_c(rows, ',');
		hm_row(h, row, m->columns->len, rows);
		g_string_append_c(rows, ']');
	}
	g_string_append(out, ",\n\"rows\":[\n");
	g_string_append_len(out, rows->str, rows->len);
	g_string_append(out, "]");
	strtab_write(out, "strs", &h->strs);
	strtab_write(out, "halves", &h->halves);
	g_string_append(out, ",\n\"attrs\":[");
	for (guint i = 0; i < h->attrs->len; i++)
		g_string_append_printf(out, "%s%u", i ? "," : "", g_array_index(h->attrs, guint, i));
	g_string_append(out, "]}");
}

/* ---- the page ---- */

static const char heatmap_style[] =
	"body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\n"
	"h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.2em}\n"
	"#findings{max-height:40vh;overflow:auto;border:1px solid #ddd;padding:0 .8em;margin:.6em 0}\n"
	"ul.findings{list-style:none;padding:0;font-size:13px}\n"
	"li.finding{margin:2px 0;font-family:monospace}\n"
	".fk{display:inline-block;min-width:7em;font-weight:bold}\n"
	".f-harm .fk{color:#b71c1c}.f-regression .fk{color:#d50000}.f-known .fk{color:#5d4037}"
	".f-differs .fk{color:#6d4c00}\n"
	"#filterbar{margin:.6em 0}#filter{width:40em;font:13px monospace;padding:3px}\n"
	"#fcount{margin-left:1em;color:#555}\n"
	"#heatmap{overflow-x:auto}\n"
	"table.heatmap{border-collapse:collapse;font-size:11px}\n"
	".heatmap th,.heatmap td{border:1px solid #fff;padding:2px 3px;white-space:nowrap}\n"
	".heatmap th.row{text-align:left;font-family:monospace;background:#f4f4f4;"
	"position:sticky;left:0;z-index:1}\n"
	".heatmap th.event{font-weight:normal;font-family:monospace;background:#eceff1;"
	"border-left:2px solid #90a4ae}\n"
	".heatmap th.mod{font-weight:normal;font-family:monospace;color:#555}\n"
	"td.tile{text-align:center;font-family:monospace;cursor:pointer;min-width:2.2em}\n"
	"td.tile.sel{outline:3px solid #1565c0;outline-offset:-3px}\n"
	"td.x-diff{box-shadow:inset 0 -4px 0 #6d4c00}\n"
	".c-ok{background:#c8e6c9;color:#1b5e20}\n"
	".c-errno{background:#fff3c4;color:#6d4c00}\n"
	".c-infra{background:#d1c4e9;color:#311b92}\n"
	".c-rejected,.v-rejected{background:#eeeeee;color:#757575}\n"
	".v-absent{background:#fafafa;color:#bdbdbd;cursor:default}\n"
	".c-harm{color:#fff;font-weight:bold}\n"
	".o-GUEST_CRASH{background:#b71c1c}\n"
	".o-GUEST_HANG{background:#e65100}\n"
	".o-GUEST_REBOOT{background:#f57c00}\n"
	".o-GUEST_CORRUPTION{background:#880e4f}\n"
	".o-GUEST_OOPS{background:#d32f2f}\n"
	".o-HOST_WARN{background:#6a1b9a}\n"
	".o-HOST_CRASH{background:#000;color:#ff5252}\n"
	".o-HOST_HANG{background:#000;color:#ffab40}\n"
	".v-known{background:repeating-linear-gradient(45deg,#ffe082,#ffe082 6px,"
	"#ffca28 6px,#ffca28 12px);color:#5d4037;font-weight:normal}\n"
	".v-regression{outline:3px solid #d50000;outline-offset:-3px}\n"
	".legend span.sw,span.chip{display:inline-block;min-width:5em;padding:2px 6px;margin:2px;"
	"text-align:center;font-family:monospace;font-size:12px}\n"
	".limitations li{color:#b71c1c}\n"
	"#rules{border:1px solid #b71c1c;padding:0 .8em;margin:.6em 0}\n"
	"ul.rules{padding-left:1.2em;font-size:13px}ul.sample{font-size:12px}\n"
	"code.rule-text{font-weight:bold;color:#b71c1c}\n"
	"#tip{position:absolute;display:none;background:#263238;color:#eceff1;"
	"padding:6px 8px;border-radius:4px;font:12px monospace;white-space:pre-wrap;"
	"max-width:60em;pointer-events:none;z-index:10}\n"
	"#drill{border:2px solid #1565c0;padding:0 .8em .8em;margin:.6em 0}\n"
	"#drill button.close{float:right;margin-top:-2.2em}\n"
	"div.cell{border-top:1px solid #ddd;padding:4px 0}\n"
	"div.cellhead .spec{font:bold 13px monospace;margin-right:1em}\n"
	"div.line{font:12px monospace;white-space:pre-wrap;margin-left:1.5em}\n"
	"div.line.try{color:#37474f}div.line.evidence{color:#4e342e}"
	"div.line.error{color:#757575}\n";

static void html_legend(GString *out)
{
	static const struct {
		const char *cls, *text, *what;
	} items[] = {
		{ "c-ok", "12", "OK: opened, no harm" },
		{ "c-errno", "3", "errno: the kernel refused (EOPNOTSUPP, EINVAL, ...)" },
		{ "c-infra", "1", "INFRA: could not test, no kernel verdict" },
		{ "c-rejected", "16", "REJECTED: the profile's parser refused the spec, no syscall" },
		{ "v-known c-harm", "1", "harm explained by a known erratum (not a regression)" },
		{ "c-errno v-regression", "2", "red frame: regression against the baseline" },
		{ "c-errno x-diff", "5", "underlined: refused where another row of the same cpu opens "
					 "the same spec" },
		{ "v-absent", "", "no cell" },
	};

	g_string_append(out, "<div class=\"legend\"><h2>Legend</h2>\n<p>A tile is one row "
			     "(kernel, profile) and one event with one class of modifiers; its "
			     "colour is the worst outcome class among its cells (harm, INFRA, "
			     "errno, OK, rejected), its number how many cells are of that class. "
			     "Hover for the counts, click for the cells.</p>\n<p>");
	for (size_t i = 0; i < G_N_ELEMENTS(items); i++)
		g_string_append_printf(out, "<span class=\"sw %s\">%s</span> %s<br>\n",
				       items[i].cls, items[i].text, items[i].what);
	g_string_append(out, "</p><p>harm, by kind:<br>\n");
	for (int o = 0; o < OUTCOME_COUNT; o++)
		if (outcome_is_harm(o))
			g_string_append_printf(out, "<span class=\"sw c-harm o-%s\">%s</span> %s<br>\n",
					       outcome_name(o), matrix_outcome_abbrev(o),
					       outcome_name(o));
	g_string_append(out, "</p><p>modifier classes:<br>\n");
	for (int c = 0; c < MATRIX_MODCLASS_COUNT; c++)
		g_string_append_printf(out, "<code>%s</code> %s<br>\n", matrix_modclass_name(c),
				       matrix_modclass_what(c));
	g_string_append(out, "</p></div>\n");
}

static void html_inputs(const struct report_ctx *ctx, GString *out)
{
	const struct matrix *m = ctx->m;
	bool any_limit = false;

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
	if (ctx->base_set) {
		g_string_append(out, "<p>Baseline: <code>");
		report_escape_html(out, ctx->base_name ? ctx->base_name :
				   ctx->base_set->run_id);
		g_string_append(out, "</code> (framed tiles regressed against it)</p>\n");
	}
}

/* The inputs' proven rules, before the heat map: what a class of harmful
 * cells has in common, the sample it was proven on, and how many cells it
 * judged that nobody armed alone. Nothing when no input has one. */
static void html_rules(const struct report_ctx *ctx, GString *out)
{
	const struct matrix *m = ctx->m;
	bool any = false;

	for (guint i = 0; i < m->sources->len; i++) {
		const struct matrix_source *s = m->sources->pdata[i];
		json_t *rules = results_rules(s->set), *r;
		size_t k;

		json_array_foreach(rules, k, r) {
			const char *text = json_string_value(json_object_get(r, "text"));
			const char *outcome = json_string_value(json_object_get(r, "outcome"));
			json_t *attrs = json_object_get(r, "attrs");
			json_t *refuted = json_object_get(r, "refuted_before");
			json_t *sample = json_object_get(r, "sample"), *sa;
			struct results_rule_cover cov = results_rule_cover(s->set, text);
			unsigned int cells = cov.by_rule + cov.alone;
			size_t j;

			if (!any)
				g_string_append(out, "<div id=\"rules\">\n<h2>Proven rules</h2>\n"
						     "<p>Harm explained by a rule over attr fields: proven "
						     "on a sample of attrs, each armed alone; the other "
						     "cells it covers are judged by the rule, not armed "
						     "alone (one of them could be an exception).</p>\n"
						     "<ul class=\"rules\">\n");
			any = true;
			g_string_append_printf(out, "<li class=\"rule\" data-cells=\"%u\" "
						    "data-by-rule=\"%u\"><code class=\"rule-text\">",
					       cells, cov.by_rule);
			report_escape_html(out, text ? text : "?");
			g_string_append(out, "</code>: ");
			report_escape_html(out, outcome ? outcome : "harm");
			if (json_is_integer(attrs))
				g_string_append_printf(out, " on %" JSON_INTEGER_FORMAT " attr%s",
						       json_integer_value(attrs),
						       json_integer_value(attrs) == 1 ? "" : "s");
			g_string_append_printf(out, ", <span class=\"rule-cells\">%u cell%s (%u "
						    "judged by the rule, not armed alone; %u armed "
						    "alone)</span>, input <code>",
					       cells, cells == 1 ? "" : "s", cov.by_rule, cov.alone);
			report_escape_html(out, s->name);
			g_string_append(out, "</code>");
			if (json_is_integer(refuted))
				g_string_append_printf(out, "; <span class=\"refuted\">%" JSON_INTEGER_FORMAT
							    " rule%s refuted before it</span>",
						       json_integer_value(refuted),
						       json_integer_value(refuted) == 1 ? "" : "s");
			if (json_array_size(sample))
				g_string_append(out, "\n<ul class=\"sample\">");
			json_array_foreach(sample, j, sa) {
				const char *a = json_string_value(json_object_get(sa, "attr"));
				const char *o = json_string_value(json_object_get(sa, "outcome"));

				g_string_append(out, "<li class=\"sample\">sample <code>");
				report_escape_html(out, a ? a : "?");
				g_string_append(out, "</code> ");
				report_escape_html(out, o ? o : "?");
				g_string_append_printf(out, " k/n %" JSON_INTEGER_FORMAT "/%"
							    JSON_INTEGER_FORMAT "</li>",
						       json_integer_value(json_object_get(sa, "k")),
						       json_integer_value(json_object_get(sa, "n")));
			}
			if (json_array_size(sample))
				g_string_append(out, "</ul>");
			g_string_append(out, "</li>\n");
		}
	}
	if (any)
		g_string_append(out, "</ul>\n</div>\n");
}

/* The page's own script (the source of truth is this string; it reads the
 * data element and builds everything with createElement and textContent). */
static const char heatmap_script[] =
	"(function () {\n"
	"'use strict';\n"
	"var t0 = performance.now();\n"
	"var D = JSON.parse(document.getElementById('pc-data').textContent);\n"
	"function $(id) { return document.getElementById(id); }\n"
	"/* Text from the inputs only ever goes in through textContent. */\n"
	"function el(tag, cls, text) {\n"
	"  var e = document.createElement(tag);\n"
	"  if (cls) e.className = cls;\n"
	"  if (text != null) e.textContent = text;\n"
	"  return e;\n"
	"}\n"
	"var NCODE = D.codes.length, V = {};\n"
	"D.verdicts.forEach(function (n, i) { V[n] = i; });\n"
	"var ncols = D.cols.length / 2, nspec = D.specs.length / 2;\n"
	"var specCol = new Int32Array(nspec), specText = new Array(nspec);\n"
	"for (var i = 0; i < nspec; i++) {\n"
	"  specCol[i] = D.specs[2 * i];\n"
	"  specText[i] = D.events[D.cols[2 * specCol[i]]] + D.mods[D.specs[2 * i + 1]];\n"
	"}\n"
	"var R = D.rows.map(function (r) {\n"
	"  var d = r[3], n = d.o.length, spec = new Int32Array(n), code = new Uint8Array(n);\n"
	"  var attr = new Int32Array(n), x = {}, k = 0, a = 0, i, j;\n"
	"  for (i = 0; i < d.s.length; i += 2)\n"
	"    for (j = 0; j < d.s[i + 1]; j++) spec[k++] = d.s[i] + j;\n"
	"  for (i = 0; i < n; i++) {\n"
	"    var ch = d.o.charCodeAt(i);\n"
	"    code[i] = ch < 97 ? ch - 65 : ch - 71;\n"
	"    a += d.a[i]; attr[i] = a;\n"
	"  }\n"
	"  for (i = 0; i < d.x.length; i += 2) x[d.x[i]] = d.x[i + 1];\n"
	"  return { g: r[0], kernel: r[1], profile: r[2], src: d.src, n: n, spec: spec, code: code,\n"
	"           attr: attr, x: x, diff: new Uint8Array(n) };\n"
	"});\n"
	"var nrows = R.length;\n"
	"function cls(c) { return D.codes[c][1]; }\n"
	"function verdict(r, i) {\n"
	"  var x = r.x[i], c = cls(r.code[i]);\n"
	"  if (x && x.V != null) return x.V;\n"
	"  return c === 'harm' ? V.harm : c === 'infra' ? V.infra : c === 'rejected' ? V.rejected : V.pass;\n"
	"}\n"
	"var FIELD = {};\n"
	"D.fields.forEach(function (f, i) { FIELD[f] = i; });\n"
	"function rank(w) { var r = FIELD[w.slice(0, w.indexOf('='))]; return r == null ? 1e9 : r; }\n"
	"/* The two halves merged back into the kernel's member order. */\n"
	"function attrText(a) {\n"
	"  if (!a) return '';\n"
	"  var e = D.halves[D.attrs[2 * (a - 1)]], s = D.halves[D.attrs[2 * (a - 1) + 1]];\n"
	"  if (!e || !s) return e || s;\n"
	"  var x = e.split(' '), y = s.split(' '), o = [], i = 0, j = 0;\n"
	"  while (i < x.length || j < y.length)\n"
	"    o.push(j >= y.length || (i < x.length && rank(x[i]) <= rank(y[j])) ? x[i++] : y[j++]);\n"
	"  return o.join(' ');\n"
	"}\n"
	"function colName(c) {\n"
	"  return D.events[D.cols[2 * c]] + ' \\u00b7 ' + D.classes[D.cols[2 * c + 1]][0];\n"
	"}\n"
	"function rowName(r) {\n"
	"  return (D.groups.length > 1 ? 'cpu ' + D.groups[R[r].g] + ': ' : '') + R[r].kernel + ' ' + R[r].profile;\n"
	"}\n"
	"\n"
	"/* A spec OK in one row and refused (errno or harm) in another row of the\n"
	" * same CPU: the refusing cells are findings. */\n"
	"(function () {\n"
	"  var groups = {};\n"
	"  R.forEach(function (r, ri) { (groups[r.g] = groups[r.g] || []).push(ri); });\n"
	"  Object.keys(groups).forEach(function (g) {\n"
	"    var rows = groups[g];\n"
	"    if (rows.length < 2) return;\n"
	"    var ok = new Uint8Array(nspec), bad = new Uint8Array(nspec);\n"
	"    rows.forEach(function (ri) {\n"
	"      var r = R[ri];\n"
	"      for (var i = 0; i < r.n; i++) {\n"
	"        var c = cls(r.code[i]);\n"
	"        if (c === 'ok') ok[r.spec[i]] = 1;\n"
	"        else if (c === 'errno' || c === 'harm') bad[r.spec[i]] = 1;\n"
	"      }\n"
	"    });\n"
	"    rows.forEach(function (ri) {\n"
	"      var r = R[ri];\n"
	"      for (var i = 0; i < r.n; i++) {\n"
	"        var c = cls(r.code[i]);\n"
	"        if (ok[r.spec[i]] && (c === 'errno' || c === 'harm')) r.diff[i] = 1;\n"
	"      }\n"
	"    });\n"
	"  });\n"
	"})();\n"
	"\n"
	"var filter = '', terms = [], specLow = null;\n"
	"function setFilter(f) {\n"
	"  filter = f;\n"
	"  terms = f.toLowerCase().split(/\\s+/).filter(function (t) { return t; });\n"
	"  if (terms.length && !specLow) specLow = specText.map(function (s) { return s.toLowerCase(); });\n"
	"}\n"
	"/* Every term must name the cell: part of its spec, or its outcome, class,\n"
	" * verdict, profile or kernel; 'differs' a cell OK in another row, 'rule' a\n"
	" * cell a proven rule judged. */\n"
	"function match(r, i) {\n"
	"  for (var k = 0; k < terms.length; k++) {\n"
	"    var t = terms[k], c = D.codes[r.code[i]];\n"
	"    if (specLow[r.spec[i]].indexOf(t) >= 0 || c[0].toLowerCase() === t || c[1] === t ||\n"
	"        D.verdicts[verdict(r, i)] === t || r.profile.toLowerCase() === t ||\n"
	"        r.kernel.toLowerCase() === t || (t === 'differs' && r.diff[i]) ||\n"
	"        (t === 'rule' && r.x[i] && r.x[i].r != null)) continue;\n"
	"    return false;\n"
	"  }\n"
	"  return true;\n"
	"}\n"
	"\n"
	"/* Per tile: cells per code, and how many are harm, known, regression,\n"
	" * differing; only the cells the filter keeps. */\n"
	"var NT = nrows * ncols, counts, flags;\n"
	"function tally() {\n"
	"  counts = new Uint32Array(NT * NCODE);\n"
	"  flags = new Uint32Array(NT * 5);\n"
	"  R.forEach(function (r, ri) {\n"
	"    for (var i = 0; i < r.n; i++) {\n"
	"      if (terms.length && !match(r, i)) continue;\n"
	"      var t = ri * ncols + specCol[r.spec[i]], v = verdict(r, i);\n"
	"      counts[t * NCODE + r.code[i]]++;\n"
	"      flags[t * 5]++;\n"
	"      if (v === V.harm) flags[t * 5 + 1]++;\n"
	"      if (v === V.known) flags[t * 5 + 2]++;\n"
	"      if (v === V.regression) flags[t * 5 + 3]++;\n"
	"      if (r.diff[i]) flags[t * 5 + 4]++;\n"
	"    }\n"
	"  });\n"
	"}\n"
	"var RANK = { harm: 5, infra: 4, errno: 3, ok: 2, rejected: 1 };\n"
	"function tileLook(t) {\n"
	"  var best = -1, bestRank = 0, c;\n"
	"  for (c = 0; c < NCODE; c++) {\n"
	"    var n = counts[t * NCODE + c];\n"
	"    if (!n) continue;\n"
	"    var rk = RANK[cls(c)] || 0;\n"
	"    if (rk > bestRank || (rk === bestRank && n >= counts[t * NCODE + best])) { best = c; bestRank = rk; }\n"
	"  }\n"
	"  var k = cls(best), n = 0;\n"
	"  for (c = 0; c < NCODE; c++) if (cls(c) === k) n += counts[t * NCODE + c];\n"
	"  var f = t * 5, v = flags[f + 1] ? 'harm' : flags[f + 3] ? 'regression' : flags[f + 2] ? 'known' :\n"
	"          k === 'infra' ? 'infra' : k === 'rejected' ? 'rejected' : 'pass';\n"
	"  return { code: best, cls: k, n: n, v: v };\n"
	"}\n"
	"function tileText(t, r, c) {\n"
	"  var lines = ['kernel ' + R[r].kernel + ', profile ' + R[r].profile,\n"
	"               'event ' + D.events[D.cols[2 * c]] + ', modifiers ' + D.classes[D.cols[2 * c + 1]][0] +\n"
	"               ' (' + D.classes[D.cols[2 * c + 1]][1] + ')'];\n"
	"  var parts = [];\n"
	"  for (var k = 0; k < NCODE; k++)\n"
	"    if (counts[t * NCODE + k]) parts.push(D.codes[k][0] + ' ' + counts[t * NCODE + k]);\n"
	"  lines.push(flags[t * 5] + ' cell' + (flags[t * 5] === 1 ? '' : 's') + ': ' + parts.join(', '));\n"
	"  if (flags[t * 5 + 1]) lines.push(flags[t * 5 + 1] + ' harmful, no known erratum explains it');\n"
	"  if (flags[t * 5 + 2]) lines.push(flags[t * 5 + 2] + ' harmful, explained by a known erratum');\n"
	"  if (flags[t * 5 + 3]) lines.push(flags[t * 5 + 3] + ' regressed against the baseline');\n"
	"  if (flags[t * 5 + 4]) lines.push(flags[t * 5 + 4] + ' not OK here, OK in another row of this cpu');\n"
	"  /* Cells a proven rule judged: how many per rule (only on hover). */\n"
	"  var byRule = {}, row = R[r];\n"
	"  for (var i = 0; i < row.n; i++) {\n"
	"    var x = row.x[i];\n"
	"    if (x && x.r != null && specCol[row.spec[i]] === c && (!terms.length || match(row, i)))\n"
	"      byRule[x.r] = (byRule[x.r] || 0) + 1;\n"
	"  }\n"
	"  Object.keys(byRule).forEach(function (q) {\n"
	"    lines.push(byRule[q] + ' judged by rule ' + D.strs[q] + ' (not armed alone)');\n"
	"  });\n"
	"  lines.push('click for the cells');\n"
	"  return lines.join('\\n');\n"
	"}\n"
	"\n"
	"var tip = $('tip'), map = $('heatmap'), drill = $('drill');\n"
	"function drawMap() {\n"
	"  map.textContent = '';\n"
	"  D.groups.forEach(function (label, g) {\n"
	"    var rows = [], cols = [], r, c;\n"
	"    for (r = 0; r < nrows; r++) if (R[r].g === g) rows.push(r);\n"
	"    for (c = 0; c < ncols; c++)\n"
	"      for (r = 0; r < rows.length; r++)\n"
	"        if (flags[(rows[r] * ncols + c) * 5]) { cols.push(c); break; }\n"
	"    map.appendChild(el('h2', null, 'cpu ' + label));\n"
	"    var table = el('table', 'heatmap'), thead = el('thead'), h1 = el('tr'), h2 = el('tr');\n"
	"    table.setAttribute('data-cpu', label);\n"
	"    h1.appendChild(el('th', 'row', 'kernel')); h1.appendChild(el('th', 'row', 'profile'));\n"
	"    h2.appendChild(el('th', 'row')); h2.appendChild(el('th', 'row'));\n"
	"    for (var i = 0; i < cols.length; i++) {\n"
	"      var ev = D.cols[2 * cols[i]];\n"
	"      if (!i || D.cols[2 * cols[i - 1]] !== ev) {\n"
	"        var span = 1;\n"
	"        while (i + span < cols.length && D.cols[2 * cols[i + span]] === ev) span++;\n"
	"        var th = el('th', 'event', D.events[ev]);\n"
	"        th.colSpan = span;\n"
	"        h1.appendChild(th);\n"
	"      }\n"
	"      var thc = el('th', 'mod', D.classes[D.cols[2 * cols[i] + 1]][0]);\n"
	"      thc.title = D.classes[D.cols[2 * cols[i] + 1]][1];\n"
	"      h2.appendChild(thc);\n"
	"    }\n"
	"    thead.appendChild(h1); thead.appendChild(h2); table.appendChild(thead);\n"
	"    var tbody = el('tbody');\n"
	"    rows.forEach(function (ri) {\n"
	"      var tr = el('tr');\n"
	"      tr.appendChild(el('th', 'row', R[ri].kernel));\n"
	"      tr.appendChild(el('th', 'row', R[ri].profile));\n"
	"      cols.forEach(function (ci) {\n"
	"        var t = ri * ncols + ci, td;\n"
	"        if (!flags[t * 5]) {\n"
	"          td = el('td', 'tile v-absent', '');\n"
	"        } else {\n"
	"          var look = tileLook(t);\n"
	"          td = el('td', 'tile v-' + look.v + ' c-' + look.cls + ' o-' + D.codes[look.code][0] +\n"
	"                  (flags[t * 5 + 4] ? ' x-diff' : ''), String(look.n));\n"
	"          td.setAttribute('data-t', ri + '.' + ci);\n"
	"          td.setAttribute('data-n', String(flags[t * 5]));\n"
	"          if (view.tile === ri + '.' + ci) td.classList.add('sel');\n"
	"        }\n"
	"        tr.appendChild(td);\n"
	"      });\n"
	"      tbody.appendChild(tr);\n"
	"    });\n"
	"    table.appendChild(tbody);\n"
	"    map.appendChild(table);\n"
	"  });\n"
	"}\n"
	"map.addEventListener('mouseover', function (e) {\n"
	"  var td = e.target.closest && e.target.closest('td.tile[data-t]');\n"
	"  if (!td) { tip.style.display = 'none'; return; }\n"
	"  var p = td.getAttribute('data-t').split('.').map(Number);\n"
	"  tip.textContent = tileText(p[0] * ncols + p[1], p[0], p[1]);\n"
	"  tip.style.display = 'block';\n"
	"});\n"
	"map.addEventListener('mousemove', function (e) {\n"
	"  tip.style.left = (e.pageX + 14) + 'px'; tip.style.top = (e.pageY + 14) + 'px';\n"
	"});\n"
	"map.addEventListener('mouseleave', function () { tip.style.display = 'none'; });\n"
	"map.addEventListener('click', function (e) {\n"
	"  var td = e.target.closest && e.target.closest('td.tile[data-t]');\n"
	"  if (td) go(filter, td.getAttribute('data-t'), true);\n"
	"});\n"
	"\n"
	"/* Everything about one cell, the lines report.c's text writers print. */\n"
	"function cellLines(r, i) {\n"
	"  var x = r.x[i] || {}, c = D.codes[r.code[i]], L = [], k;\n"
	"  var spec = specText[r.spec[i]];\n"
	"  L.push(['head', 'outcome ' + c[0] + ' (' + c[1] + ')' + (x.n ? ', k/n ' + x.k + '/' + x.n : '')]);\n"
	"  if (x.r != null) L.push(['rule', 'judged by rule ' + D.strs[x.r] + ' (not armed alone)']);\n"
	"  if (x.E != null) L.push(['known', 'known erratum ' + D.strs[x.E]]);\n"
	"  if (x.b) L.push(['base', 'baseline: ' + D.codes[x.b[0]][0] + ' -> ' + c[0] + ' (' + D.strs[x.b[1]] + ')']);\n"
	"  if (x.d) L.push(['disagree', 'inputs disagree: the worst of ' + x.d + ' is shown']);\n"
	"  var src = D.sources[x.src != null ? x.src : r.src];\n"
	"  L.push(['src', 'cpu ' + src[1] + ', input ' + src[0]]);\n"
	"  if (r.attr[i]) L.push(['attr', 'attr: ' + attrText(r.attr[i])]);\n"
	"  if (x.e != null) L.push(['error', 'rejected by the profile: ' + D.strs[x.e]]);\n"
	"  if (x.es != null) L.push(['error', 'rejected by the profile: ' + spec + D.strs[x.es]]);\n"
	"  if (x.t) {\n"
	"    for (k = 0; k < x.t.length; k += 3)\n"
	"      L.push(['try', 'try ' + (k / 3 + 1) + ': ' + attrText(x.t[k]) + ' -> ' + D.codes[x.t[k + 1]][0] +\n"
	"              (x.t[k + 2] >= 0 ? ' (' + D.strs[x.t[k + 2]] + ')' : '')]);\n"
	"  } else if (r.attr[i] && c[1] !== 'rejected') {\n"
	"    L.push(['try', 'try 1: ' + attrText(r.attr[i]) + ' -> ' + c[0]]);\n"
	"  }\n"
	"  if (x.c) for (k = 0; k < x.c.length; k += 2) L.push(['cpu', 'cpu' + x.c[k] + ': ' + D.codes[x.c[k + 1]][0]]);\n"
	"  if (r.diff[i]) L.push(['differs', 'not OK here, OK in another row of this cpu']);\n"
	"  if (x.v) x.v.split('\\n').forEach(function (l) { L.push(['evidence', 'evidence: ' + l]); });\n"
	"  return L;\n"
	"}\n"
	"var DRILL_MAX = 500;\n"
	"function drawDrill(all) {\n"
	"  drill.textContent = '';\n"
	"  if (!view.tile) { drill.hidden = true; return; }\n"
	"  var p = view.tile.split('.').map(Number), ri = p[0], ci = p[1];\n"
	"  if (!(ri >= 0 && ri < nrows && ci >= 0 && ci < ncols)) { drill.hidden = true; return; }\n"
	"  drill.hidden = false;\n"
	"  var r = R[ri], cells = [], total = 0, i;\n"
	"  for (i = 0; i < r.n; i++) {\n"
	"    if (specCol[r.spec[i]] !== ci) continue;\n"
	"    total++;\n"
	"    if (!terms.length || match(r, i)) cells.push(i);\n"
	"  }\n"
	"  var head = el('h2', null, 'kernel ' + r.kernel + ', profile ' + r.profile + ': ' + colName(ci));\n"
	"  drill.appendChild(head);\n"
	"  var close = el('button', 'close', 'close');\n"
	"  close.addEventListener('click', function () { go(filter, '', false); });\n"
	"  drill.appendChild(close);\n"
	"  drill.appendChild(el('p', 'count', cells.length + ' of ' + total + ' cell' + (total === 1 ? '' : 's') +\n"
	"                       (terms.length ? ' match the filter' : '')));\n"
	"  var list = el('div', 'cells');\n"
	"  cells.slice(0, all ? cells.length : DRILL_MAX).forEach(function (i) {\n"
	"    var box = el('div', 'cell'), v = D.verdicts[verdict(r, i)], c = D.codes[r.code[i]];\n"
	"    box.setAttribute('data-spec', specText[r.spec[i]]);\n"
	"    var h = el('div', 'cellhead');\n"
	"    h.appendChild(el('span', 'spec', specText[r.spec[i]]));\n"
	"    h.appendChild(el('span', 'chip v-' + v + ' c-' + c[1] + ' o-' + c[0], c[0]));\n"
	"    box.appendChild(h);\n"
	"    cellLines(r, i).forEach(function (l) { box.appendChild(el('div', 'line ' + l[0], l[1])); });\n"
	"    var xp = r.x[i];\n"
	"    if (xp && xp.p) {\n"
	"      var rp = el('div', 'line repro', 'reproducer: '), a = el('a', 'repro', 'repro.c, README.txt');\n"
	"      a.href = xp.p;\n"
	"      rp.appendChild(a);\n"
	"      box.appendChild(rp);\n"
	"    }\n"
	"    list.appendChild(box);\n"
	"  });\n"
	"  drill.appendChild(list);\n"
	"  if (!all && cells.length > DRILL_MAX) {\n"
	"    var more = el('button', 'more', 'show all ' + cells.length);\n"
	"    more.addEventListener('click', function () { drawDrill(true); });\n"
	"    drill.appendChild(more);\n"
	"  }\n"
	"}\n"
	"\n"
	"/* Harm, regressions and refusals where another row is OK, as links. */\n"
	"function drawFindings() {\n"
	"  var box = $('findings'), items = [], nh = 0, nr = 0, nk = 0, nd = 0;\n"
	"  for (var t = 0; t < NT; t++) {\n"
	"    var f = t * 5;\n"
	"    if (!flags[f]) continue;\n"
	"    var r = Math.floor(t / ncols), c = t % ncols, what = null, kind;\n"
	"    if (flags[f + 1]) { kind = 'harm'; nh++; what = flags[f + 1] + ' harmful'; }\n"
	"    else if (flags[f + 3]) { kind = 'regression'; nr++; what = flags[f + 3] + ' regressed against the baseline'; }\n"
	"    else if (flags[f + 2]) { kind = 'known'; nk++; what = flags[f + 2] + ' harmful, a known erratum'; }\n"
	"    else if (flags[f + 4]) { kind = 'differs'; nd++; what = flags[f + 4] + ' not OK here, OK in another row'; }\n"
	"    if (!what) continue;\n"
	"    var outs = [];\n"
	"    for (var k = 0; k < NCODE; k++)\n"
	"      if (counts[t * NCODE + k] && cls(k) !== 'ok') outs.push(D.codes[k][0] + ' ' + counts[t * NCODE + k]);\n"
	"    items.push([['harm', 'regression', 'known', 'differs'].indexOf(kind), kind, r, c,\n"
	"                what + ' (' + outs.join(', ') + ')']);\n"
	"  }\n"
	"  items.sort(function (a, b) { return a[0] - b[0] || a[2] - b[2] || a[3] - b[3]; });\n"
	"  box.textContent = '';\n"
	"  box.appendChild(el('h2', null, 'Findings'));\n"
	"  box.appendChild(el('p', 'fsum', nh + ' tile' + (nh === 1 ? '' : 's') + ' with harm no erratum explains, ' +\n"
	"                     nr + ' with regressions against the baseline, ' + nk + ' with harm a known erratum ' +\n"
	"                     'explains, ' + nd + ' where a spec is not OK that another row of the same cpu opens ' +\n"
	"                     '(a regression between kernels or profiles)'));\n"
	"  var ul = el('ul', 'findings');\n"
	"  items.forEach(function (it) {\n"
	"    var li = el('li', 'finding f-' + it[1]), a = el('a', null, rowName(it[2]) + ': ' + colName(it[3]));\n"
	"    a.href = '#t=' + it[2] + '.' + it[3];\n"
	"    li.appendChild(el('span', 'fk', it[1]));\n"
	"    li.appendChild(a);\n"
	"    li.appendChild(el('span', 'fw', ' ' + it[4]));\n"
	"    ul.appendChild(li);\n"
	"  });\n"
	"  box.appendChild(ul);\n"
	"}\n"
	"\n"
	"/* The view lives in the fragment: #f=FILTER&t=ROW.COL */\n"
	"var view = { tile: '' };\n"
	"function readHash() {\n"
	"  var o = { f: '', t: '' };\n"
	"  location.hash.replace(/^#/, '').split('&').forEach(function (kv) {\n"
	"    var p = kv.indexOf('=');\n"
	"    if (p > 0) {\n"
	"      try { o[kv.slice(0, p)] = decodeURIComponent(kv.slice(p + 1)); } catch (e) { /* ignore */ }\n"
	"    }\n"
	"  });\n"
	"  return o;\n"
	"}\n"
	"function hashOf(f, t) {\n"
	"  var h = [];\n"
	"  if (f) h.push('f=' + encodeURIComponent(f));\n"
	"  if (t) h.push('t=' + t);\n"
	"  return h.length ? '#' + h.join('&') : '#';\n"
	"}\n"
	"function apply(f, t, scroll) {\n"
	"  if (f !== filter) { setFilter(f); tally(); view.tile = t; drawMap(); }\n"
	"  else if (t !== view.tile) {\n"
	"    var old = map.querySelector('td.sel');\n"
	"    if (old) old.classList.remove('sel');\n"
	"    view.tile = t;\n"
	"    var td = map.querySelector('td[data-t=\"' + t + '\"]');\n"
	"    if (td) td.classList.add('sel');\n"
	"  }\n"
	"  view.tile = t;\n"
	"  if ($('filter').value !== f) $('filter').value = f;\n"
	"  drawDrill(false);\n"
	"  $('fcount').textContent = terms.length ? countMatches() + ' cells match' : '';\n"
	"  if (scroll && t && !drill.hidden) drill.scrollIntoView({ block: 'nearest' });\n"
	"}\n"
	"function countMatches() {\n"
	"  var n = 0;\n"
	"  for (var t = 0; t < NT; t++) n += flags[t * 5];\n"
	"  return n;\n"
	"}\n"
	"function go(f, t, scroll) {\n"
	"  history.replaceState(null, '', hashOf(f, t));\n"
	"  apply(f, t, scroll);\n"
	"}\n"
	"window.addEventListener('hashchange', function () { var h = readHash(); apply(h.f, h.t, true); });\n"
	"var timer = null;\n"
	"$('filter').addEventListener('input', function () {\n"
	"  clearTimeout(timer);\n"
	"  var box = this;\n"
	"  timer = setTimeout(function () { go(box.value, view.tile, false); }, 150);\n"
	"});\n"
	"\n"
	"tally();\n"
	"drawFindings();\n"
	"var ncells = 0, failing = 0, known = 0, ntiles = 0, t;\n"
	"R.forEach(function (r) {\n"
	"  ncells += r.n;\n"
	"  for (var i = 0; i < r.n; i++) {\n"
	"    var v = verdict(r, i);\n"
	"    if (v === V.harm || v === V.regression) failing++;\n"
	"    if (v === V.known) known++;\n"
	"  }\n"
	"});\n"
	"for (t = 0; t < NT; t++) if (flags[t * 5]) ntiles++;\n"
	"$('js-status').textContent = ncells + ' cells in ' + ntiles + ' tiles, ' + failing + ' failing, ' + known +\n"
	"  ' known errata; click a tile for its cells';\n"
	"var h0 = readHash();\n"
	"if (h0.f) { setFilter(h0.f); tally(); }\n"
	"view.tile = h0.t;\n"
	"$('filter').value = h0.f;\n"
	"drawMap();\n"
	"apply(h0.f, h0.t, false);\n"
	"/* Since navigation start (the page's own parse included), and the script's share. */\n"
	"document.body.setAttribute('data-ready-ms', String(Math.round(performance.now())));\n"
	"document.body.setAttribute('data-script-ms', String(Math.round(performance.now() - t0)));\n"
	"document.body.setAttribute('data-js', 'ready');\n"
	"})();\n";

int heatmap_render(const struct report_ctx *ctx, const struct result_set *const *sets,
		   size_t n, GString *out)
{
	const struct matrix *m = ctx->m;
	g_autoptr(matrix_groups) g = NULL;
	struct hm h = { .ctx = ctx };
	int rc = matrix_groups_build(m, &g);

	if (rc < 0)
		return rc;
	strtab_init(&h.strs);
	strtab_init(&h.halves);
	h.attr_idx = g_hash_table_new_full(attr_hash_func, attr_equal_func, g_free, NULL);
	h.attrs = g_array_new(FALSE, FALSE, sizeof(guint));

	g_string_append(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			     "<title>pmucanary matrix</title>\n<style>\n");
	g_string_append(out, heatmap_style);
	g_string_append(out, "</style>\n</head>\n<body>\n<h1>pmucanary matrix</h1>\n");
	g_string_append_printf(out, "<p class=\"summary\" id=\"summary\" data-harm=\"%u\" "
				    "data-known=\"%u\" data-infra=\"%u\">%u harmful cell%s, "
				    "%u known errat%s, %u INFRA; %u rows &times; %u specs from %u "
				    "input%s.</p>\n",
			       m->harm, m->known_errata, m->infra, m->harm, m->harm == 1 ? "" : "s",
			       m->known_errata, m->known_errata == 1 ? "um" : "a", m->infra,
			       m->rows->len, m->columns->len, m->sources->len,
			       m->sources->len == 1 ? "" : "s");
	html_rules(ctx, out);
	g_string_append(out, "<p id=\"js-status\">This page draws its heatmap with JavaScript; "
			     "without it, the summary above, the inputs and the legend are all "
			     "there is.</p>\n"
			     "<div id=\"findings\"></div>\n"
			     "<div id=\"filterbar\"><label>filter <input id=\"filter\" type=\"search\" "
			     "placeholder=\"words: part of a spec, an outcome (ENOENT), a class (harm, "
			     "errno, ok, infra, rejected), a profile, a kernel, differs, rule\"></label>"
			     "<span id=\"fcount\"></span></div>\n"
			     "<div id=\"drill\" hidden></div>\n<div id=\"heatmap\"></div>\n");
	html_inputs(ctx, out);
	html_legend(out);
	g_string_append(out, "<div id=\"tip\" role=\"tooltip\"></div>\n"
			     "<script type=\"application/json\" id=\"pc-data\">");
	hm_data(&h, g, out);
	g_string_append(out, "</script>\n<script>\n");
	g_string_append(out, heatmap_script);
	g_string_append(out, "</script>\n</body>\n</html>\n");

	strtab_clear(&h.strs);
	strtab_clear(&h.halves);
	g_hash_table_unref(h.attr_idx);
	g_array_unref(h.attrs);
	return 0;
}
