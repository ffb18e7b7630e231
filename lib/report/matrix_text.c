/* The terminal views of a matrix (matrix.h "text"): the full grid with
 * --all, and the default screen-sized view. The model they draw is
 * matrix.c's. */
#include "matrix.h"

#include "attr.h"
#include "log.h"
#include "textesc.h"

#include <errno.h>
#include <string.h>

/* The text codes: one per outcome, and the variant for a harm that a known
 * erratum explains ("~" instead of "!"). */
static const struct {
	const char *code;
	const char *known;
} abbrevs[OUTCOME_COUNT] = {
	[OUTCOME_OK] = { "ok", NULL },
	[OUTCOME_EOPNOTSUPP] = { "NOSUP", NULL },
	[OUTCOME_EINVAL] = { "INVAL", NULL },
	[OUTCOME_ENOENT] = { "NOENT", NULL },
	[OUTCOME_EACCES] = { "ACCES", NULL },
	[OUTCOME_EPERM] = { "PERM", NULL },
	[OUTCOME_ENODEV] = { "NODEV", NULL },
	[OUTCOME_EBUSY] = { "BUSY", NULL },
	[OUTCOME_E2BIG] = { "2BIG", NULL },
	[OUTCOME_EFAULT] = { "FAULT", NULL },
	[OUTCOME_ENOSPC] = { "NOSPC", NULL },
	[OUTCOME_EOVERFLOW] = { "OVFL", NULL },
	[OUTCOME_ENOMEM] = { "NOMEM", NULL },
	[OUTCOME_ESRCH] = { "SRCH", NULL },
	[OUTCOME_ENOSYS] = { "NOSYS", NULL },
	[OUTCOME_EIO] = { "EIO", NULL },
	[OUTCOME_EAGAIN] = { "AGAIN", NULL },
	[OUTCOME_EMFILE] = { "MFILE", NULL },
	[OUTCOME_EBADF] = { "BADF", NULL },
	[OUTCOME_EUNKNOWN] = { "E?", NULL },
	[OUTCOME_GUEST_CRASH] = { "CRASH!", "CRASH~" },
	[OUTCOME_GUEST_HANG] = { "HANG!", "HANG~" },
	[OUTCOME_GUEST_REBOOT] = { "REBOOT!", "REBOOT~" },
	[OUTCOME_GUEST_CORRUPTION] = { "CORRUPT!", "CORRUPT~" },
	[OUTCOME_GUEST_OOPS] = { "OOPS!", "OOPS~" },
	[OUTCOME_HOST_WARN] = { "HWARN!", "HWARN~" },
	[OUTCOME_HOST_CRASH] = { "HCRASH!", "HCRASH~" },
	[OUTCOME_HOST_HANG] = { "HHANG!", "HHANG~" },
	[OUTCOME_INFRA] = { "infra?", NULL },
};

#define CODE_REJECTED "rej"
#define CODE_ABSENT "-"

const char *matrix_outcome_abbrev(enum outcome o)
{
	if (o >= OUTCOME_COUNT)
		return "?";
	return abbrevs[o].code ? abbrevs[o].code : outcome_name(o);
}

const char *matrix_cell_abbrev(const struct matrix_cell *mc)
{
	if (!mc)
		return CODE_ABSENT;
	if (matrix_cell_rejected(mc->cell))
		return CODE_REJECTED;
	if (mc->erratum && abbrevs[mc->cell->outcome].known)
		return abbrevs[mc->cell->outcome].known;
	return matrix_outcome_abbrev(mc->cell->outcome);
}

#define ANSI_HARM "\033[1;31m"
#define ANSI_KNOWN "\033[33m"
#define ANSI_INFRA "\033[35m"
#define ANSI_OFF "\033[0m"

/* Appends text read from a file, as one escaped line. */
static void esc(GString *out, const char *s)
{
	text_escape_append(out, s, 0);
}

/* Width of s once escaped. */
static size_t esc_len(const char *s)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p >= 0x7f) {
			g_autofree char *e = text_escape(s);

			return g_utf8_strlen(e, -1);
		}
		n++;
	}
	return n;
}

/* Appends s escaped and padded to width w. */
static void esc_pad(GString *out, const char *s, size_t w)
{
	size_t len = esc_len(s);

	esc(out, s);
	while (len++ < w)
		g_string_append_c(out, ' ');
}

static const char *cell_color(const struct matrix_cell *mc)
{
	if (!mc)
		return NULL;
	if (mc->erratum)
		return ANSI_KNOWN;
	if (outcome_is_harm(mc->cell->outcome))
		return ANSI_HARM;
	if (mc->cell->outcome == OUTCOME_INFRA)
		return ANSI_INFRA;
	return NULL;
}

static void pad(GString *out, size_t n)
{
	while (n--)
		g_string_append_c(out, ' ');
}

static void row_widths(const struct matrix *m, size_t *kw, size_t *pw)
{
	*kw = strlen("kernel");
	*pw = strlen("profile");
	for (guint r = 0; r < m->rows->len; r++) {
		const struct matrix_row *row = m->rows->pdata[r];

		*kw = MAX(*kw, esc_len(row->kernel));
		*pw = MAX(*pw, esc_len(row->profile));
	}
}

static void cpu_header(const struct matrix *m, guint r, GString *out)
{
	const struct matrix_row *row = m->rows->pdata[r];

	if (matrix_cpus_differ(m) &&
	    (r == 0 || ((struct matrix_row *)m->rows->pdata[r - 1])->group != row->group)) {
		g_string_append(out, "cpu ");
		esc(out, m->groups->pdata[row->group]);
		g_string_append(out, ":\n");
	}
}

static void format_grid(const struct matrix *m, bool color, int width, GString *out)
{
	size_t kw, pw, ncols = m->columns->len;
	g_autofree size_t *cw = g_new0(size_t, ncols + 1);

	row_widths(m, &kw, &pw);
	for (size_t c = 0; c < ncols; c++) {
		cw[c] = esc_len(m->columns->pdata[c]);
		for (guint r = 0; r < m->rows->len; r++) {
			const struct matrix_cell *mc = matrix_at(m, r, c);

			cw[c] = MAX(cw[c], strlen(matrix_cell_abbrev(mc)) + (mc && mc->disagree));
		}
	}
	for (size_t first = 0; first < ncols || (first == 0 && !ncols);) {
		size_t used = kw + 2 + pw, last = first;

		/* At least one column per chunk, however wide. */
		do {
			used += 2 + cw[last];
			last++;
		} while (last < ncols && used + 2 + cw[last] <= (size_t)width);
		if (ncols == 0)
			last = 0;
		if (first > 0 || last < ncols)
			g_string_append_printf(out, "columns %zu-%zu of %zu:\n", first + 1, last,
					       ncols);
		for (guint r = 0; r <= m->rows->len; r++) {
			const struct matrix_row *row = r ? m->rows->pdata[r - 1] : NULL;

			if (row)
				cpu_header(m, r - 1, out);
			esc_pad(out, row ? row->kernel : "kernel", kw);
			g_string_append(out, "  ");
			esc_pad(out, row ? row->profile : "profile", pw);
			for (size_t c = first; c < last; c++) {
				const struct matrix_cell *mc = row ? row->cells[c] : NULL;
				const char *ansi = color && row ? cell_color(mc) : NULL;
				size_t len;

				g_string_append(out, "  ");
				if (ansi)
					g_string_append(out, ansi);
				if (row) {
					g_string_append(out, matrix_cell_abbrev(mc));
					len = strlen(matrix_cell_abbrev(mc));
				} else {
					esc(out, m->columns->pdata[c]);
					len = esc_len(m->columns->pdata[c]);
				}
				if (mc && mc->disagree) {
					g_string_append_c(out, '*');
					len++;
				}
				if (ansi)
					g_string_append(out, ANSI_OFF);
				if (c + 1 < last)
					pad(out, cw[c] - len);
			}
			g_string_append_c(out, '\n');
		}
		if (last >= ncols)
			break;
		g_string_append_c(out, '\n');
		first = last;
	}
}

static void cell_line(const struct matrix *m, const struct matrix_row *row, size_t col,
		      const struct matrix_cell *mc, GString *out)
{
	const struct matrix_source *s = m->sources->pdata[mc->source];
	g_autofree char *ev = matrix_cell_evidence(mc->cell);

	g_string_append(out, "  ");
	esc(out, row->kernel);
	g_string_append_c(out, ' ');
	esc(out, row->profile);
	g_string_append_c(out, ' ');
	esc(out, m->columns->pdata[col]);
	g_string_append_printf(out, ": %s", outcome_name(mc->cell->outcome));
	if (mc->cell->n)
		g_string_append_printf(out, " %d/%d", mc->cell->k, mc->cell->n);
	if (results_cell_rule(mc->cell)) {
		g_string_append(out, " judged by rule ");
		esc(out, results_cell_rule(mc->cell));
		g_string_append(out, " (not armed alone)");
	}
	if (mc->erratum) {
		g_string_append_printf(out, " - known erratum ");
		esc(out, erratum_id(mc->erratum));
		g_string_append(out, " (");
		esc(out, erratum_title(mc->erratum));
		g_string_append_c(out, ')');
	}
	g_string_append(out, " [cpu ");
	esc(out, s->cpu_label);
	g_string_append(out, ", ");
	esc(out, s->name);
	g_string_append_c(out, ']');
	if (mc->disagree)
		g_string_append_printf(out, " (inputs disagree: worst of %u shown)", mc->inputs);
	g_string_append_c(out, '\n');
	if (mc->cell->has_attr) {
		g_autofree char *attr = attr_to_string(&mc->cell->attr);

		g_string_append_printf(out, "      attr: %s\n", attr);
	}
	if (*ev) {
		g_auto(GStrv) lines = g_strsplit(ev, "\n", -1);

		for (char **l = lines; *l; l++)
			g_string_append_printf(out, "      evidence: %s\n", *l);
	}
}

enum detail_kind { DETAIL_HARM, DETAIL_KNOWN, DETAIL_INFRA, DETAIL_COUNT };

static bool detail_wants(enum detail_kind k, const struct matrix_cell *mc)
{
	switch (k) {
	case DETAIL_HARM: return !mc->erratum && outcome_is_harm(mc->cell->outcome);
	case DETAIL_KNOWN: return mc->erratum != NULL;
	case DETAIL_INFRA: return mc->cell->outcome == OUTCOME_INFRA;
	default: return false;
	}
}

static const char *const detail_titles[DETAIL_COUNT] = {
	[DETAIL_HARM] = "HARM (no known erratum explains it)",
	[DETAIL_KNOWN] = "known errata (expected harm, not a regression)",
	[DETAIL_INFRA] = "could not test (INFRA, no kernel verdict)",
};

static const char *code_abbrev(unsigned int code, bool known)
{
	if (code == MATRIX_CODE_REJECTED)
		return CODE_REJECTED;
	if (known && abbrevs[code].known)
		return abbrevs[code].known;
	return matrix_outcome_abbrev(code);
}

static void format_legend(const struct matrix *m, const bool *modclass_seen, GString *out)
{
	bool seen[MATRIX_CODE_COUNT] = { false }, absent = false, disagree = false;
	bool known = false;

	for (guint r = 0; r < m->rows->len; r++)
		for (guint c = 0; c < m->columns->len; c++) {
			const struct matrix_cell *mc = matrix_at(m, r, c);

			if (!mc) {
				absent = true;
				continue;
			}
			seen[matrix_cell_code(mc)] = true;
			known |= mc->erratum != NULL;
			disagree |= mc->disagree;
		}
	g_string_append(out, "legend:");
	for (unsigned int o = 0; o < OUTCOME_COUNT; o++)
		if (seen[o])
			g_string_append_printf(out, " %s=%s", matrix_outcome_abbrev(o),
					       outcome_name(o));
	if (seen[MATRIX_CODE_REJECTED])
		g_string_append(out, " " CODE_REJECTED "=the profile rejected the spec");
	if (absent)
		g_string_append(out, " " CODE_ABSENT "=not measured");
	g_string_append(out, "\n  X! = harm (guest or host hurt)");
	if (known)
		g_string_append(out, "; X~ = harm explained by a known erratum");
	if (disagree)
		g_string_append(out, "; * = inputs disagree, the worst is shown");
	g_string_append_c(out, '\n');
	if (!modclass_seen)
		return;
	{
		/* One wrapped paragraph: the classes this view uses. */
		size_t col;

		g_string_append(out, "modifier classes (by the perf_event_attr fields the modifiers "
				     "set; a flag wins, then p, then G/H):\n ");
		col = 1;
		for (int c = 0; c < MATRIX_MODCLASS_COUNT; c++) {
			g_autofree char *item = NULL;

			if (!modclass_seen[c])
				continue;
			item = g_strdup_printf(" %s = %s;", matrix_modclass_name(c),
					       matrix_modclass_what(c));
			if (col + strlen(item) > 118) {
				g_string_append(out, "\n ");
				col = 1;
			}
			g_string_append(out, item);
			col += strlen(item);
		}
		g_string_truncate(out, out->len - 1);
		g_string_append_c(out, '\n');
	}
}

/* Several runs on one host share their limitations: the earlier input
 * (1-based) whose list is the same as input i's, or 0. */
static guint limitations_as(const struct matrix *m, guint i)
{
	const struct matrix_source *s = m->sources->pdata[i];

	for (guint j = 0; j < i && s->set->limitations->len; j++) {
		const struct matrix_source *o = m->sources->pdata[j];
		bool same = o->set->limitations->len == s->set->limitations->len;

		for (guint l = 0; same && l < s->set->limitations->len; l++)
			same = !strcmp(o->set->limitations->pdata[l], s->set->limitations->pdata[l]);
		if (same)
			return j + 1;
	}
	return 0;
}

/* The inputs' proven rules, before any cell: one line says what a class of
 * harmful cells has in common, and which of them no one armed alone. */
static void format_rules(const struct matrix *m, GString *out)
{
	bool header = false;

	for (guint i = 0; i < m->sources->len; i++) {
		const struct matrix_source *s = m->sources->pdata[i];
		json_t *rules = results_rules(s->set), *r;
		size_t k;

		json_array_foreach(rules, k, r) {
			g_autofree char *d = results_rule_describe(s->set, r);

			if (!header)
				g_string_append(out, "harm explained by a rule over attr fields (proven "
						     "on a sample, each armed alone; the other cells it "
						     "covers were not):\n");
			header = true;
			g_string_append_printf(out, "  [%u] ", i + 1);
			esc(out, d);
			g_string_append_c(out, '\n');
		}
	}
}

static void format_header(const struct matrix *m, GString *out)
{
	g_autoptr(GHashTable) kernels = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) profiles = g_hash_table_new(g_str_hash, g_str_equal);
	unsigned int cells = 0;

	for (guint r = 0; r < m->rows->len; r++) {
		const struct matrix_row *row = m->rows->pdata[r];

		g_hash_table_add(kernels, row->kernel);
		g_hash_table_add(profiles, row->profile);
	}
	for (int o = 0; o < OUTCOME_COUNT; o++)
		cells += m->count[o];
	g_string_append_printf(out, "pmucanary matrix: %u input%s, %u CPU signature%s, "
			       "%u kernel%s, %u profile%s, %u spec%s, %u cell%s\n",
			       m->sources->len, m->sources->len == 1 ? "" : "s",
			       m->groups->len, m->groups->len == 1 ? "" : "s",
			       g_hash_table_size(kernels), g_hash_table_size(kernels) == 1 ? "" : "s",
			       g_hash_table_size(profiles), g_hash_table_size(profiles) == 1 ? "" : "s",
			       m->columns->len, m->columns->len == 1 ? "" : "s",
			       cells, cells == 1 ? "" : "s");
	g_string_append(out, "inputs:\n");
	for (guint i = 0; i < m->sources->len; i++) {
		const struct matrix_source *s = m->sources->pdata[i];

		g_string_append_printf(out, "  [%u] ", i + 1);
		esc(out, s->name);
		g_string_append_printf(out, ": %s ", results_kind_name(s->set->kind));
		esc(out, s->set->run_id);
		g_string_append(out, ", kernel ");
		esc(out, s->set->kernel ? s->set->kernel : "?");
		g_string_append(out, ", accel ");
		esc(out, s->set->accel ? s->set->accel : "?");
		g_string_append(out, ", cpu ");
		esc(out, s->cpu_label);
		g_string_append_c(out, '\n');
		/* One input is one run's own report: which build wrote it, when,
		 * and every profile it measured (the grid names only the rows that
		 * differ). */
		if (m->sources->len == 1) {
			g_string_append(out, "      written by pmucanary ");
			esc(out, s->set->tool_version ? s->set->tool_version : "?");
			g_string_append(out, " at ");
			esc(out, s->set->created ? s->set->created : "?");
			g_string_append(out, "\n      profiles:");
			for (guint r = 0, col = 16; r < m->rows->len; r++) {
				const struct matrix_row *row = m->rows->pdata[r];
				size_t w = esc_len(row->profile) + 2;

				if (r && col + w > 118) {
					g_string_append(out, ",\n               ");
					col = 15;
				} else if (r) {
					g_string_append_c(out, ',');
				}
				g_string_append_c(out, ' ');
				esc(out, row->profile);
				col += w;
			}
			g_string_append_c(out, '\n');
		}
		if (matrix_source_verdict(s)) {
			g_string_append(out, "      run verdict: ");
			esc(out, matrix_source_verdict(s));
			g_string_append_c(out, '\n');
		}
		if (limitations_as(m, i)) {
			g_string_append_printf(out, "      limitations: as [%u]\n", limitations_as(m, i));
			continue;
		}
		for (guint l = 0; l < s->set->limitations->len; l++) {
			g_string_append(out, "      limitation: ");
			esc(out, s->set->limitations->pdata[l]);
			g_string_append_c(out, '\n');
		}
	}
	format_rules(m, out);
}

static void format_details(const struct matrix *m, bool color, GString *out)
{
	for (int k = 0; k < DETAIL_COUNT; k++) {
		bool header = false;

		for (guint r = 0; r < m->rows->len; r++)
			for (guint c = 0; c < m->columns->len; c++) {
				const struct matrix_cell *mc = matrix_at(m, r, c);

				if (!mc || !detail_wants(k, mc))
					continue;
				if (!header) {
					g_string_append_printf(out, "\n%s%s:%s\n",
							       color && k == DETAIL_HARM ? ANSI_HARM : "",
							       detail_titles[k],
							       color && k == DETAIL_HARM ? ANSI_OFF : "");
					header = true;
				}
				cell_line(m, m->rows->pdata[r], c, mc, out);
			}
	}
}

static void format_summary(const struct matrix *m, GString *out)
{
	g_string_append_printf(out, "%u harmful cell%s, %u known errat%s, %u INFRA\n", m->harm,
			       m->harm == 1 ? "" : "s", m->known_errata,
			       m->known_errata == 1 ? "um" : "a", m->infra);
}

/* "cells by outcome: OK 4, EINVAL 1, rejected by the profile 1". Counted
 * here, not from m->count: a pmucanary/1 file says EINVAL for a spec the
 * profile rejected. */
static void format_counts(const struct matrix *m, GString *out)
{
	unsigned int rejected = 0, count[OUTCOME_COUNT] = { 0 };
	const char *sep = "";

	g_string_append(out, "\ncells by outcome:");
	for (guint r = 0; r < m->rows->len; r++)
		for (guint c = 0; c < m->columns->len; c++) {
			const struct matrix_cell *mc = matrix_at(m, r, c);

			if (!mc)
				continue;
			if (matrix_cell_code(mc) == MATRIX_CODE_REJECTED)
				rejected++;
			else
				count[mc->cell->outcome]++;
		}
	for (int o = 0; o < OUTCOME_COUNT; o++)
		if (count[o]) {
			g_string_append_printf(out, "%s %s %u", sep, outcome_name(o), count[o]);
			sep = ",";
		}
	if (rejected)
		g_string_append_printf(out, "%s rejected by the profile %u", sep, rejected);
	g_string_append_c(out, '\n');
}

void matrix_format_text_all(const struct matrix *m, bool color, int width, GString *out)
{
	format_header(m, out);
	g_string_append_c(out, '\n');
	format_grid(m, color, width > 40 ? width : 40, out);
	format_details(m, color, out);
	if (m->sources->len == 1)
		matrix_format_tries(((struct matrix_source *)m->sources->pdata[0])->set, true, out);
	format_counts(m, out);
	g_string_append_c(out, '\n');
	format_legend(m, NULL, out);
	format_summary(m, out);
}

/* ---- the default view ---- */

/* How many lines one list may take before the rest is counted. */
#define VIEW_MAX_KERNEL_DIFFS 20
#define VIEW_MAX_DETAIL_CELLS 20
#define VIEW_MAX_DETAIL_GROUPS 40
#define VIEW_MAX_GRID_COLUMNS 30
#define VIEW_SAMPLE_SPECS 3

/* Harms first, then errnos, then OK, INFRA, rejected: the order a tile's
 * codes are named in. */
static int code_rank(unsigned int code)
{
	if (code == MATRIX_CODE_REJECTED)
		return 4;
	switch (outcome_class(code)) {
	case OUTCOME_CLASS_HARM: return 0;
	case OUTCOME_CLASS_ERRNO: return 1;
	case OUTCOME_CLASS_OK: return 2;
	default: return 3;
	}
}

static bool codes_have_harm(guint64 codes, guint64 known)
{
	for (unsigned int c = 0; c < OUTCOME_COUNT; c++)
		if ((codes & ~known) >> c & 1 && outcome_is_harm(c))
			return true;
	return false;
}

/* "ok", "ok/NOSUP", "CRASH!/ok+1": at most two codes named. */
static void tile_label(const struct matrix_tile *t, GString *out)
{
	unsigned int named = 0, total = 0;

	if (!t || !t->cells) {
		g_string_append(out, CODE_ABSENT);
		return;
	}
	for (int rank = 0; rank <= 4; rank++)
		for (unsigned int c = 0; c < MATRIX_CODE_COUNT; c++) {
			if (!(t->codes >> c & 1) || code_rank(c) != rank)
				continue;
			total++;
			if (named < 2) {
				if (named++)
					g_string_append_c(out, '/');
				g_string_append(out, code_abbrev(c, t->known >> c & 1));
			}
		}
	if (total > named)
		g_string_append_printf(out, "+%u", total - named);
}

/* Column groups: (event, class) pairs whose tiles read the same in every
 * row. */
struct colgroup {
	GPtrArray *pairs;          /* GUINT_TO_POINTER(event * COUNT + class) */
	const struct matrix_tile *first;  /* the tiles of the first pair, per row */
	bool agree, harm;
	unsigned int specs, cells;
	guint64 codes, known;      /* union over rows */
};

static void colgroup_free(void *p)
{
	struct colgroup *cg = p;

	g_ptr_array_unref(cg->pairs);
	g_free(cg);
}

/* The order of groups in a summary: harm first, then the most specs. */
static int harm_then_most_cmp(bool aharm, unsigned int an, bool bharm, unsigned int bn)
{
	if (aharm != bharm)
		return aharm ? -1 : 1;
	return an > bn ? -1 : an < bn;
}

static int colgroup_cmp(const void *pa, const void *pb)
{
	const struct colgroup *a = *(struct colgroup *const *)pa;
	const struct colgroup *b = *(struct colgroup *const *)pb;

	return harm_then_most_cmp(a->harm, a->specs, b->harm, b->specs);
}

/* "cpu-cycles, instructions (+3 events) x G/H, p (+1 class)" */
static void colgroup_describe(const struct matrix_groups *g, const struct colgroup *cg,
			      GString *out)
{
	bool cls[MATRIX_MODCLASS_COUNT] = { false };
	g_autofree bool *ev = g_new0(bool, g->events->len + 1);
	unsigned int nev = 0, ncls = 0, shown = 0;

	for (guint i = 0; i < cg->pairs->len; i++) {
		guint pair = GPOINTER_TO_UINT(cg->pairs->pdata[i]);

		ev[pair / MATRIX_MODCLASS_COUNT] = true;
		cls[pair % MATRIX_MODCLASS_COUNT] = true;
	}
	for (guint e = 0; e < g->events->len; e++)
		if (ev[e]) {
			if (nev++ < VIEW_SAMPLE_SPECS) {
				if (shown++)
					g_string_append(out, ", ");
				esc(out, g->events->pdata[e]);
			}
		}
	if (nev > VIEW_SAMPLE_SPECS)
		g_string_append_printf(out, " (+%u events)", nev - VIEW_SAMPLE_SPECS);
	g_string_append(out, " x ");
	shown = 0;
	for (int c = 0; c < MATRIX_MODCLASS_COUNT; c++)
		if (cls[c]) {
			ncls++;
			if (shown++ < 4)
				g_string_append_printf(out, "%s%s", shown > 1 ? ", " : "",
						       matrix_modclass_name(c));
		}
	if (ncls > 4)
		g_string_append_printf(out, " (+%u classes)", ncls - 4);
}

static GPtrArray *colgroups_build(const struct matrix *m, const struct matrix_groups *g)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(colgroup_free);
	g_autoptr(GHashTable) idx = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
							  (GDestroyNotify)g_bytes_unref, NULL);
	size_t nrows = g->rows, stride = g->events->len * MATRIX_MODCLASS_COUNT;
	g_autofree struct matrix_tile *vec = g_new0(struct matrix_tile, nrows + 1);
	g_autofree unsigned int *specs = g_new0(unsigned int, stride + 1);

	for (size_t c = 0; c < m->columns->len; c++)
		specs[g->col_event[c] * MATRIX_MODCLASS_COUNT + g->col_class[c]]++;
	for (size_t pair = 0; pair < stride; pair++) {
		struct colgroup *cg;
		g_autoptr(GBytes) key = NULL;
		bool any = false;

		if (!specs[pair])
			continue;
		for (size_t r = 0; r < nrows; r++) {
			vec[r] = g->tiles[r * stride + pair];
			/* A key is what a row reads, not how many cells made it. */
			vec[r].cells = vec[r].cells ? 1 : 0;
			any |= vec[r].cells;
		}
		if (!any)
			continue;
		key = g_bytes_new(vec, nrows * sizeof(*vec));
		cg = g_hash_table_lookup(idx, key);
		if (!cg) {
			guint64 first = 0;

			cg = g_new0(struct colgroup, 1);
			cg->pairs = g_ptr_array_new();
			cg->first = &g->tiles[pair];
			cg->agree = true;
			for (size_t r = 0; r < nrows; r++) {
				if (!vec[r].cells)
					continue;
				if (first && (vec[r].codes != first))
					cg->agree = false;
				first = first ? first : vec[r].codes;
				cg->codes |= vec[r].codes;
				cg->known |= vec[r].known;
			}
			cg->harm = codes_have_harm(cg->codes, cg->known);
			g_ptr_array_add(out, cg);
			g_hash_table_insert(idx, g_steal_pointer(&key), cg);
		}
		g_ptr_array_add(cg->pairs, GSIZE_TO_POINTER(pair));
		cg->specs += specs[pair];
		for (size_t r = 0; r < nrows; r++)
			cg->cells += g->tiles[r * stride + pair].cells;
	}
	g_ptr_array_sort(out, colgroup_cmp);
	return out;
}

/* The context of a row: CPU signature and kernel ("3.7.0", or
 * "GenuineIntel 6/58/9 3.7.0" when CPUs differ). */
static char *row_context(const struct matrix *m, const struct matrix_row *row)
{
	g_autofree char *k = text_escape(row->kernel);

	if (!matrix_cpus_differ(m))
		return g_steal_pointer(&k);
	g_autofree char *cpu = text_escape(m->groups->pdata[row->group]);

	return g_strdup_printf("%s %s", cpu, k);
}

struct kdiff {
	char *vector;              /* "3.6.11 ok | 3.7.0 NOSUP", or a detail's head */
	GPtrArray *profiles;       /* char *, escaped, unique */
	GPtrArray *specs;          /* char *, escaped, first few */
	GPtrArray *pairs;          /* event * MATRIX_MODCLASS_COUNT + class, unique */
	unsigned int nspecs;
	bool harm;
};

static struct kdiff *kdiff_new(char *vector)
{
	struct kdiff *d = g_new0(struct kdiff, 1);

	d->vector = vector;
	d->profiles = g_ptr_array_new_with_free_func(g_free);
	d->specs = g_ptr_array_new_with_free_func(g_free);
	d->pairs = g_ptr_array_new();
	return d;
}

static void kdiff_free(void *p)
{
	struct kdiff *d = p;

	g_free(d->vector);
	g_ptr_array_unref(d->profiles);
	g_ptr_array_unref(d->specs);
	g_ptr_array_unref(d->pairs);
	g_free(d);
}

static int kdiff_cmp(const void *pa, const void *pb)
{
	const struct kdiff *a = *(struct kdiff *const *)pa;
	const struct kdiff *b = *(struct kdiff *const *)pb;

	return harm_then_most_cmp(a->harm, a->nspecs, b->harm, b->nspecs);
}

/* Adds s (escaped unless already) when not there yet. */
static void names_add_unique_esc(GPtrArray *names, const char *s, bool escaped)
{
	g_autofree char *e = escaped ? g_strdup(s) : text_escape(s);

	for (guint i = 0; i < names->len; i++)
		if (!strcmp(names->pdata[i], e))
			return;
	g_ptr_array_add(names, g_steal_pointer(&e));
}

static void names_add_unique(GPtrArray *names, const char *s)
{
	names_add_unique_esc(names, s, false);
}

static void pairs_add_unique(GPtrArray *pairs, guint pair)
{
	for (guint i = 0; i < pairs->len; i++)
		if (GPOINTER_TO_UINT(pairs->pdata[i]) == pair)
			return;
	g_ptr_array_add(pairs, GUINT_TO_POINTER(pair));
}

static void names_join(GString *out, GPtrArray *names, guint max)
{
	for (guint i = 0; i < names->len && i < max; i++)
		g_string_append_printf(out, "%s%s", i ? ", " : "", (char *)names->pdata[i]);
	if (names->len > max)
		g_string_append_printf(out, " (+%u)", names->len - max);
}

/* Folds d1 (one event and class) into the group of list that has its
 * vector and profiles (level2: "vector\x1fprofiles" -> group), a new one
 * when there is none. */
static void kdiff_merge(GHashTable *level2, GPtrArray *list, const struct kdiff *d1)
{
	g_autoptr(GString) key = g_string_new(d1->vector);
	struct kdiff *d;

	g_string_append_c(key, '\x1f');
	names_join(key, d1->profiles, G_MAXUINT);
	d = g_hash_table_lookup(level2, key->str);
	if (!d) {
		d = kdiff_new(g_strdup(d1->vector));
		for (guint p = 0; p < d1->profiles->len; p++)
			names_add_unique_esc(d->profiles, d1->profiles->pdata[p], true);
		g_hash_table_insert(level2, g_string_free(g_steal_pointer(&key), FALSE), d);
		g_ptr_array_add(list, d);
	}
	d->harm |= d1->harm;
	pairs_add_unique(d->pairs, GPOINTER_TO_UINT(d1->pairs->pdata[0]));
	for (guint s = 0; s < d1->specs->len; s++)
		if (d->specs->len < VIEW_SAMPLE_SPECS)
			names_add_unique_esc(d->specs, d1->specs->pdata[s], true);
	d->nspecs += d1->nspecs;
}

/* Cells of one profile and spec whose outcome differs between contexts
 * (kernels, or CPUs): by name, grouped by the outcomes per context and the
 * profiles that saw them, each group naming its events, modifier classes
 * and first specs. */
static void format_kernel_diffs(const struct matrix *m, const struct matrix_groups *g,
				bool color, GString *out)
{
	g_autoptr(GHashTable) ctx_idx = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GPtrArray) ctx_names = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) prof_idx = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GPtrArray) prof_rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
	g_autoptr(GPtrArray) prof_names = g_ptr_array_new();
	g_autoptr(GHashTable) level1 = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GPtrArray) list1 = g_ptr_array_new_with_free_func(kdiff_free);
	g_autoptr(GHashTable) level2 = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func(kdiff_free);
	g_autofree guint *row_ctx = g_new0(guint, m->rows->len + 1);
	g_autoptr(GString) vec = g_string_new(NULL);
	g_autoptr(GString) key = g_string_new(NULL);
	gpointer v;
	unsigned int total = 0;

	for (guint r = 0; r < m->rows->len; r++) {
		const struct matrix_row *row = m->rows->pdata[r];
		g_autofree char *ctx = row_context(m, row);
		GArray *rows;

		if (!g_hash_table_lookup_extended(ctx_idx, ctx, NULL, &v)) {
			v = GUINT_TO_POINTER(ctx_names->len);
			g_ptr_array_add(ctx_names, g_strdup(ctx));
			g_hash_table_insert(ctx_idx, g_steal_pointer(&ctx), v);
		}
		row_ctx[r] = GPOINTER_TO_UINT(v);
		/* profiles in row order: the output does not depend on hashing */
		if (!g_hash_table_lookup_extended(prof_idx, row->profile, NULL, &v)) {
			v = GUINT_TO_POINTER(prof_rows->len);
			g_ptr_array_add(prof_rows, g_array_new(FALSE, FALSE, sizeof(guint)));
			g_ptr_array_add(prof_names, row->profile);
			g_hash_table_insert(prof_idx, row->profile, v);
		}
		rows = prof_rows->pdata[GPOINTER_TO_UINT(v)];
		g_array_append_val(rows, r);
	}
	if (ctx_names->len < 2)
		return;

	for (guint p = 0; p < prof_rows->len; p++) {
		GArray *rows = prof_rows->pdata[p];

		if (rows->len < 2)
			continue;
		for (guint c = 0; c < m->columns->len; c++) {
			unsigned int first = MATRIX_CODE_COUNT, measured = 0;
			bool differ = false, harm = false;
			guint pair = g->col_event[c] * MATRIX_MODCLASS_COUNT + g->col_class[c];
			struct kdiff *d;

			for (guint i = 0; i < rows->len; i++) {
				const struct matrix_cell *mc =
					matrix_at(m, g_array_index(rows, guint, i), c);
				unsigned int code;

				if (!mc)
					continue;
				code = matrix_cell_code(mc);
				measured++;
				if (first == MATRIX_CODE_COUNT)
					first = code;
				else if (code != first)
					differ = true;
				harm |= !mc->erratum && outcome_is_harm(mc->cell->outcome);
			}
			if (!differ || measured < 2)
				continue;
			total++;
			g_string_truncate(vec, 0);
			for (guint i = 0; i < rows->len; i++) {
				guint r = g_array_index(rows, guint, i);
				const struct matrix_cell *mc = matrix_at(m, r, c);

				if (!mc)
					continue;
				g_string_append_printf(vec, "%s%s %s", vec->len ? " | " : "",
						       (char *)ctx_names->pdata[row_ctx[r]],
						       matrix_cell_abbrev(mc));
			}
			g_string_printf(key, "%u\x1f%s", pair, vec->str);
			d = g_hash_table_lookup(level1, key->str);
			if (!d) {
				d = kdiff_new(g_strdup(vec->str));
				g_hash_table_insert(level1, g_strdup(key->str), d);
				g_ptr_array_add(list1, d);
				pairs_add_unique(d->pairs, pair);
			}
			d->harm |= harm;
			names_add_unique(d->profiles, prof_names->pdata[p]);
			if (d->nspecs++ < VIEW_SAMPLE_SPECS)
				names_add_unique(d->specs, m->columns->pdata[c]);
		}
	}
	/* Events and classes that read the same over the same profiles: one
	 * group (13 software events turning EOPNOTSUPP under one profile are
	 * one finding, not 13). */
	for (guint i = 0; i < list1->len; i++)
		kdiff_merge(level2, list, list1->pdata[i]);
	if (!list->len)
		return;
	g_ptr_array_sort(list, kdiff_cmp);
	g_string_append_printf(out, "\n%swhat differs between %s%s (%u cell%s; a profile and "
			       "spec seen with other outcomes):\n",
			       color ? ANSI_HARM : "",
			       matrix_cpus_differ(m) ? "kernels and CPUs" : "kernels",
			       color ? ANSI_OFF : "", total, total == 1 ? "" : "s");
	for (guint i = 0; i < list->len && i < VIEW_MAX_KERNEL_DIFFS; i++) {
		const struct kdiff *d = list->pdata[i];
		struct colgroup cg = { .pairs = d->pairs };

		g_string_append(out, "  ");
		colgroup_describe(g, &cg, out);
		g_string_append_printf(out, ": %s\n      ", d->vector);
		names_join(out, d->specs, VIEW_SAMPLE_SPECS);
		if (d->nspecs > d->specs->len)
			g_string_append_printf(out, " (+%u specs)", d->nspecs - d->specs->len);
		g_string_append(out, " under ");
		names_join(out, d->profiles, 6);
		g_string_append_c(out, '\n');
	}
	if (list->len > VIEW_MAX_KERNEL_DIFFS)
		g_string_append_printf(out, "  ... %u more groups: narrow with --event, --profile, "
				       "--kernel, --outcome\n", list->len - VIEW_MAX_KERNEL_DIFFS);
}

/* Harm, known errata, INFRA: one line per cell when there are few, else
 * one line per (context, outcome, event, modifier class). */
static void format_view_details(const struct matrix *m, const struct matrix_groups *g,
				bool color, GString *out)
{
	for (int k = 0; k < DETAIL_COUNT; k++) {
		g_autoptr(GHashTable) groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
								     NULL);
		g_autoptr(GHashTable) level2 = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
								     NULL);
		g_autoptr(GPtrArray) list1 = g_ptr_array_new_with_free_func(kdiff_free);
		g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func(kdiff_free);
		unsigned int n = 0;

		for (guint r = 0; r < m->rows->len; r++)
			for (guint c = 0; c < m->columns->len; c++) {
				const struct matrix_cell *mc = matrix_at(m, r, c);

				n += mc && detail_wants(k, mc);
			}
		if (!n)
			continue;
		g_string_append_printf(out, "\n%s%s: %u cell%s%s\n",
				       color && k == DETAIL_HARM ? ANSI_HARM : "", detail_titles[k],
				       n, n == 1 ? "" : "s", color && k == DETAIL_HARM ? ANSI_OFF : "");
		if (n <= VIEW_MAX_DETAIL_CELLS) {
			for (guint r = 0; r < m->rows->len; r++)
				for (guint c = 0; c < m->columns->len; c++) {
					const struct matrix_cell *mc = matrix_at(m, r, c);

					if (mc && detail_wants(k, mc))
						cell_line(m, m->rows->pdata[r], c, mc, out);
				}
			continue;
		}
		for (guint r = 0; r < m->rows->len; r++) {
			const struct matrix_row *row = m->rows->pdata[r];
			g_autofree char *ctx = row_context(m, row);

			for (guint c = 0; c < m->columns->len; c++) {
				const struct matrix_cell *mc = matrix_at(m, r, c);
				g_autofree char *key = NULL;
				struct kdiff *d;

				if (!mc || !detail_wants(k, mc))
					continue;
				key = g_strdup_printf("%s\x1f%d\x1f%s\x1f%u\x1f%u", ctx, mc->cell->outcome,
						      mc->erratum ? erratum_id(mc->erratum) : "",
						      g->col_event[c], g->col_class[c]);
				d = g_hash_table_lookup(groups, key);
				if (!d) {
					g_autoptr(GString) head = g_string_new(NULL);

					g_string_append_printf(head, "%s %s", ctx,
							       outcome_name(mc->cell->outcome));
					if (mc->erratum) {
						g_string_append(head, " (known erratum ");
						esc(head, erratum_id(mc->erratum));
						g_string_append_c(head, ')');
					}
					d = kdiff_new(g_string_free(g_steal_pointer(&head), FALSE));
					pairs_add_unique(d->pairs, g->col_event[c] * MATRIX_MODCLASS_COUNT +
								   g->col_class[c]);
					g_hash_table_insert(groups, g_steal_pointer(&key), d);
					g_ptr_array_add(list1, d);
				}
				names_add_unique(d->profiles, row->profile);
				if (d->nspecs++ < VIEW_SAMPLE_SPECS)
					names_add_unique(d->specs, m->columns->pdata[c]);
			}
		}
		/* One line per context, outcome and profiles, naming the events and
		 * classes: a kernel crashing on every precise event is one finding. */
		for (guint i = 0; i < list1->len; i++)
			kdiff_merge(level2, list, list1->pdata[i]);
		for (guint i = 0; i < list->len && i < VIEW_MAX_DETAIL_GROUPS; i++) {
			const struct kdiff *d = list->pdata[i];
			struct colgroup cg = { .pairs = d->pairs };

			g_string_append_printf(out, "  %s: ", d->vector);
			colgroup_describe(g, &cg, out);
			g_string_append_printf(out, ": %u cell%s (", d->nspecs, d->nspecs == 1 ? "" : "s");
			names_join(out, d->specs, VIEW_SAMPLE_SPECS);
			if (d->nspecs > d->specs->len)
				g_string_append(out, ", ...");
			g_string_append(out, ") under ");
			names_join(out, d->profiles, 6);
			g_string_append_c(out, '\n');
		}
		if (list->len > VIEW_MAX_DETAIL_GROUPS)
			g_string_append_printf(out, "  ... %u more groups: narrow with --outcome, "
					       "--event, --kernel, or see --all\n",
					       list->len - VIEW_MAX_DETAIL_GROUPS);
	}
}

static const char *tile_color(const struct matrix_tile *t)
{
	if (!t || !t->cells)
		return NULL;
	if (codes_have_harm(t->codes, t->known))
		return ANSI_HARM;
	if (t->known)
		return ANSI_KNOWN;
	if (t->codes >> OUTCOME_INFRA & 1)
		return ANSI_INFRA;
	return NULL;
}

/* The grid: rows by the column groups whose rows do not all agree. */
static void format_view_grid(const struct matrix *m, const struct matrix_groups *g,
			     GPtrArray *shown, bool color, int width, GString *out)
{
	size_t kw, pw, ncols = shown->len, stride = g->events->len * MATRIX_MODCLASS_COUNT;
	g_autofree size_t *cw = g_new0(size_t, ncols + 1);
	g_autoptr(GString) label = g_string_new(NULL);

	/* Consecutive rows of one CPU and kernel that read the same in every
	 * shown column are one line: "perf-3.7..perf-3.12". */
	g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func(g_free);

	row_widths(m, &kw, &pw);
	pw = strlen("profile");
	for (guint r = 0; r < m->rows->len; r++) {
		const struct matrix_row *row = m->rows->pdata[r];
		guint end = r;
		g_autofree char *first = text_escape(row->profile);

		while (end + 1 < m->rows->len) {
			const struct matrix_row *next = m->rows->pdata[end + 1];
			bool same = next->group == row->group && !strcmp(next->kernel, row->kernel);

			for (size_t c = 0; same && c < ncols; c++) {
				size_t pair = GPOINTER_TO_SIZE(((struct colgroup *)shown->pdata[c])
								       ->pairs->pdata[0]);
				const struct matrix_tile *a = &g->tiles[r * stride + pair];
				const struct matrix_tile *b = &g->tiles[(end + 1) * stride + pair];

				same = a->codes == b->codes && a->known == b->known &&
				       !a->cells == !b->cells;
			}
			if (!same)
				break;
			end++;
		}
		if (end > r) {
			g_autofree char *last =
				text_escape(((struct matrix_row *)m->rows->pdata[end])->profile);

			g_ptr_array_add(labels, g_strdup_printf("%s..%s", first, last));
		} else {
			g_ptr_array_add(labels, g_steal_pointer(&first));
		}
		pw = MAX(pw, (size_t)g_utf8_strlen(labels->pdata[labels->len - 1], -1));
		for (; r < end; r++)
			g_ptr_array_add(labels, NULL);
	}
	for (size_t c = 0; c < ncols; c++) {
		const struct colgroup *cg = shown->pdata[c];
		size_t pair = GPOINTER_TO_SIZE(cg->pairs->pdata[0]);

		cw[c] = 3 + (c >= 9) + (c >= 99);
		for (size_t r = 0; r < g->rows; r++) {
			g_string_truncate(label, 0);
			tile_label(&g->tiles[r * stride + pair], label);
			cw[c] = MAX(cw[c], label->len);
		}
	}
	for (size_t first = 0; first < ncols;) {
		size_t used = kw + 2 + pw, last = first;

		do {
			used += 2 + cw[last];
			last++;
		} while (last < ncols && used + 2 + cw[last] <= (size_t)width);
		for (guint r = 0; r <= m->rows->len; r++) {
			const struct matrix_row *row = r ? m->rows->pdata[r - 1] : NULL;
			const char *plabel = row ? labels->pdata[r - 1] : "profile";

			if (row)
				cpu_header(m, r - 1, out);
			if (!plabel)
				continue;
			esc_pad(out, row ? row->kernel : "kernel", kw);
			g_string_append(out, "  ");
			g_string_append(out, plabel);
			pad(out, pw - (size_t)g_utf8_strlen(plabel, -1));
			for (size_t c = first; c < last; c++) {
				const struct colgroup *cg = shown->pdata[c];
				size_t pair = GPOINTER_TO_SIZE(cg->pairs->pdata[0]);
				const struct matrix_tile *t = row ? &g->tiles[(r - 1) * stride + pair] :
								    NULL;
				const char *ansi = color && t ? tile_color(t) : NULL;

				g_string_truncate(label, 0);
				if (row)
					tile_label(t, label);
				else
					g_string_append_printf(label, "c%zu", c + 1);
				g_string_append(out, "  ");
				if (ansi)
					g_string_append(out, ansi);
				g_string_append(out, label->str);
				if (ansi)
					g_string_append(out, ANSI_OFF);
				if (c + 1 < last)
					pad(out, cw[c] - label->len);
			}
			g_string_append_c(out, '\n');
		}
		first = last;
		if (first < ncols)
			g_string_append_c(out, '\n');
	}
}

/* Agreeing column groups with one outcome over the same events are one
 * line whatever profiles measured them (a modifier an old perf lacks is
 * absent from its row, not a difference). */
static GPtrArray *agreeing_merge(const struct matrix_groups *g, GPtrArray *agreeing)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(colgroup_free);
	g_autoptr(GHashTable) idx = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GString) key = g_string_new(NULL);
	g_autofree bool *ev = g_new0(bool, g->events->len + 1);

	for (guint i = 0; i < agreeing->len; i++) {
		const struct colgroup *cg = agreeing->pdata[i];
		struct colgroup *m;

		memset(ev, 0, g->events->len * sizeof(*ev));
		for (guint p = 0; p < cg->pairs->len; p++)
			ev[GPOINTER_TO_UINT(cg->pairs->pdata[p]) / MATRIX_MODCLASS_COUNT] = true;
		g_string_printf(key, "%" G_GINT64_MODIFIER "x/%" G_GINT64_MODIFIER "x/", cg->codes,
				cg->known);
		for (guint e = 0; e < g->events->len; e++)
			g_string_append_c(key, ev[e] ? '1' : '0');
		m = g_hash_table_lookup(idx, key->str);
		if (!m) {
			m = g_new0(struct colgroup, 1);
			m->pairs = g_ptr_array_new();
			m->codes = cg->codes;
			m->known = cg->known;
			m->agree = true;
			g_ptr_array_add(out, m);
			g_hash_table_insert(idx, g_strdup(key->str), m);
		}
		for (guint p = 0; p < cg->pairs->len; p++)
			g_ptr_array_add(m->pairs, cg->pairs->pdata[p]);
		m->specs += cg->specs;
		m->cells += cg->cells;
	}
	g_ptr_array_sort(out, colgroup_cmp);
	return out;
}

void matrix_format_text(const struct matrix *m, bool color, int width, GString *out)
{
	g_autoptr(matrix_groups) g = NULL;
	g_autoptr(GPtrArray) cgs = NULL;
	g_autoptr(GPtrArray) shown = g_ptr_array_new();
	g_autoptr(GPtrArray) agreeing = g_ptr_array_new();
	bool modclass_seen[MATRIX_MODCLASS_COUNT] = { false };
	unsigned int differing = 0, agree_cols = 0;

	format_header(m, out);
	if (matrix_groups_build(m, &g) < 0)
		return;
	for (size_t c = 0; c < m->columns->len; c++)
		modclass_seen[g->col_class[c]] = true;
	format_kernel_diffs(m, g, color, out);
	format_view_details(m, g, color, out);

	cgs = colgroups_build(m, g);
	for (guint i = 0; i < cgs->len; i++) {
		struct colgroup *cg = cgs->pdata[i];

		if (cg->agree && !cg->harm) {
			g_ptr_array_add(agreeing, cg);
			agree_cols += cg->specs;
			continue;
		}
		differing++;
		if (shown->len < VIEW_MAX_GRID_COLUMNS)
			g_ptr_array_add(shown, cg);
	}
	if (shown->len) {
		g_string_append_printf(out, "\nwhere rows differ: %u column group%s (event x modifier "
				       "class; a cell names the outcomes of its specs):\n",
				       differing, differing == 1 ? "" : "s");
		format_view_grid(m, g, shown, color, width > 40 ? width : 40, out);
		for (guint i = 0; i < shown->len; i++) {
			const struct colgroup *cg = shown->pdata[i];

			g_string_append_printf(out, "%s%-4s ", i ? "" : "columns:\n", "");
			g_string_truncate(out, out->len - 5);
			g_string_append_printf(out, "  c%-3u ", i + 1);
			colgroup_describe(g, cg, out);
			g_string_append_printf(out, ": %u spec%s, %u cell%s\n", cg->specs,
					       cg->specs == 1 ? "" : "s", cg->cells,
					       cg->cells == 1 ? "" : "s");
		}
		if (differing > shown->len)
			g_string_append_printf(out, "  ... %u more column groups differ: narrow "
					       "with --event, --profile, --kernel\n",
					       differing - shown->len);
	}
	if (agreeing->len) {
		g_autoptr(GString) label = g_string_new(NULL);
		g_autoptr(GPtrArray) merged = agreeing_merge(g, agreeing);

		g_string_append_printf(out, "\nwhere every row agrees: %u spec%s in %u column "
				       "group%s, collapsed:\n",
				       agree_cols, agree_cols == 1 ? "" : "s", agreeing->len,
				       agreeing->len == 1 ? "" : "s");
		for (guint i = 0; i < merged->len; i++) {
			const struct colgroup *cg = merged->pdata[i];
			struct matrix_tile t = { .codes = cg->codes, .known = cg->known, .cells = 1 };

			g_string_truncate(label, 0);
			tile_label(&t, label);
			g_string_append_printf(out, "  %-9s ", label->str);
			colgroup_describe(g, cg, out);
			g_string_append_printf(out, ": %u spec%s, %u cell%s\n", cg->specs,
					       cg->specs == 1 ? "" : "s", cg->cells,
					       cg->cells == 1 ? "" : "s");
		}
	}
	if (m->sources->len == 1)
		matrix_format_tries(((struct matrix_source *)m->sources->pdata[0])->set, false, out);
	format_counts(m, out);
	g_string_append(out, "(every cell: --all; narrow with --event, --profile, --kernel, "
			     "--outcome)\n\n");
	format_legend(m, modclass_seen, out);
	format_summary(m, out);
}
