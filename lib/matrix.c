/* Merging many result files into one matrix (see matrix.h). */
#include "matrix.h"

#include "attr.h"
#include "log.h"

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
	if (!mc->cell->has_attr && mc->cell->error)
		return CODE_REJECTED;
	if (mc->erratum && abbrevs[mc->cell->outcome].known)
		return abbrevs[mc->cell->outcome].known;
	return matrix_outcome_abbrev(mc->cell->outcome);
}

static void source_free(void *p)
{
	struct matrix_source *s = p;

	g_free(s->name);
	g_free(s->cpu_label);
	g_free(s);
}

static void row_free(void *p)
{
	struct matrix_row *r = p;

	/* The cells are freed by matrix_free(), which knows how many. */
	g_free(r->kernel);
	g_free(r->profile);
	g_free(r);
}

void matrix_free(struct matrix *m)
{
	if (!m)
		return;
	for (guint i = 0; m->rows && i < m->rows->len; i++) {
		struct matrix_row *r = m->rows->pdata[i];

		for (guint c = 0; c < m->columns->len; c++)
			g_free(r->cells[c]);
		g_free(r->cells);
	}
	if (m->rows)
		g_ptr_array_unref(m->rows);
	if (m->columns)
		g_ptr_array_unref(m->columns);
	if (m->groups)
		g_ptr_array_unref(m->groups);
	if (m->sources)
		g_ptr_array_unref(m->sources);
	g_free(m);
}

/* Which of two outcomes for one cell a merged matrix shows. */
static int outcome_severity(enum outcome o)
{
	switch (outcome_class(o)) {
	case OUTCOME_CLASS_HARM: return 3;
	case OUTCOME_CLASS_ERRNO: return 2;
	case OUTCOME_CLASS_OK: return 1;
	default: return 0;
	}
}

static size_t index_of(GPtrArray *names, GHashTable *idx, const char *name)
{
	gpointer v;

	if (g_hash_table_lookup_extended(idx, name, NULL, &v))
		return GPOINTER_TO_SIZE(v);
	g_ptr_array_add(names, g_strdup(name));
	g_hash_table_insert(idx, (char *)name, GSIZE_TO_POINTER(names->len - 1));
	return names->len - 1;
}

struct row_build {
	struct matrix_row *row;
	size_t profile_order;
};

static const char *cell_kernel(const struct result_set *set, const struct cell *c)
{
	if (c->kernel && *c->kernel)
		return c->kernel;
	return set->kernel ? set->kernel : "";
}

static int row_compare(const void *pa, const void *pb, void *data)
{
	const struct row_build *a = *(struct row_build *const *)pa;
	const struct row_build *b = *(struct row_build *const *)pb;
	int cmp;

	(void)data;
	if (a->row->group != b->row->group)
		return a->row->group < b->row->group ? -1 : 1;
	cmp = kernel_release_compare(a->row->kernel, b->row->kernel);
	if (!cmp)
		cmp = strcmp(a->row->kernel, b->row->kernel);
	if (cmp)
		return cmp;
	return a->profile_order < b->profile_order ? -1 : a->profile_order > b->profile_order;
}

int matrix_build(const struct result_set *const *sets, const char *const *names,
		 size_t n, const struct errata *errata, struct matrix **out)
{
	g_autoptr(matrix) m = g_new0(struct matrix, 1);
	g_autoptr(GHashTable) group_idx = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) col_idx = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) profile_idx = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) row_idx = g_hash_table_new_full(g_str_hash, g_str_equal,
							      g_free, NULL);
	g_autoptr(GPtrArray) profiles = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) builds = g_ptr_array_new_with_free_func(g_free);

	*out = NULL;
	if (!n)
		return pc_fail(EINVAL, "no result files to merge");
	m->sources = g_ptr_array_new_with_free_func(source_free);
	m->groups = g_ptr_array_new_with_free_func(g_free);
	m->columns = g_ptr_array_new_with_free_func(g_free);
	m->rows = g_ptr_array_new_with_free_func(row_free);

	/* Pass 1: sources, groups, columns, rows. */
	for (size_t i = 0; i < n; i++) {
		struct matrix_source *s = g_new0(struct matrix_source, 1);
		size_t group;

		s->set = sets[i];
		s->name = g_strdup(names && names[i] ? names[i] : sets[i]->run_id);
		cpu_sig_from_host(sets[i]->host, &s->cpu);
		s->cpu_label = cpu_sig_to_string(&s->cpu);
		g_ptr_array_add(m->sources, s);
		group = index_of(m->groups, group_idx, s->cpu_label);
		/* index_of keys the table with the caller's string: re-key with ours. */
		g_hash_table_insert(group_idx, m->groups->pdata[group], GSIZE_TO_POINTER(group));

		for (guint c = 0; c < sets[i]->cells->len; c++) {
			const struct cell *cell = sets[i]->cells->pdata[c];
			const char *kernel = cell_kernel(sets[i], cell);
			size_t col = index_of(m->columns, col_idx, cell->spec);
			size_t prof = index_of(profiles, profile_idx, cell->profile);
			char *key;

			g_hash_table_insert(col_idx, m->columns->pdata[col], GSIZE_TO_POINTER(col));
			g_hash_table_insert(profile_idx, profiles->pdata[prof], GSIZE_TO_POINTER(prof));
			key = g_strdup_printf("%zu\x1f%s\x1f%s", group, kernel, cell->profile);
			if (!g_hash_table_contains(row_idx, key)) {
				struct row_build *rb = g_new0(struct row_build, 1);

				rb->row = g_new0(struct matrix_row, 1);
				rb->row->group = group;
				rb->row->kernel = g_strdup(kernel);
				rb->row->profile = g_strdup(cell->profile);
				rb->profile_order = prof;
				g_ptr_array_add(builds, rb);
				g_hash_table_insert(row_idx, key, rb->row);
			} else {
				g_free(key);
			}
		}
	}

	/* Pass 2: fill the cells, merging duplicates. */
	for (guint r = 0; r < builds->len; r++) {
		struct row_build *rb = builds->pdata[r];

		rb->row->cells = g_new0(struct matrix_cell *, m->columns->len + 1);
	}
	for (size_t i = 0; i < n; i++) {
		const struct matrix_source *s = m->sources->pdata[i];
		size_t group = GPOINTER_TO_SIZE(g_hash_table_lookup(group_idx, s->cpu_label));

		for (guint c = 0; c < sets[i]->cells->len; c++) {
			const struct cell *cell = sets[i]->cells->pdata[c];
			g_autofree char *key = g_strdup_printf("%zu\x1f%s\x1f%s", group,
							       cell_kernel(sets[i], cell),
							       cell->profile);
			struct matrix_row *row = g_hash_table_lookup(row_idx, key);
			size_t col = GPOINTER_TO_SIZE(g_hash_table_lookup(col_idx, cell->spec));
			struct matrix_cell *mc = row->cells[col];

			if (!mc) {
				mc = row->cells[col] = g_new0(struct matrix_cell, 1);
				mc->cell = cell;
				mc->source = i;
				mc->inputs = 1;
				continue;
			}
			mc->inputs++;
			if (mc->cell->outcome != cell->outcome)
				mc->disagree = true;
			if (outcome_severity(cell->outcome) > outcome_severity(mc->cell->outcome)) {
				mc->cell = cell;
				mc->source = i;
			}
		}
	}

	g_ptr_array_sort_with_data(builds, row_compare, NULL);
	for (guint r = 0; r < builds->len; r++) {
		struct matrix_row *row = ((struct row_build *)builds->pdata[r])->row;

		g_ptr_array_add(m->rows, row);
		for (guint c = 0; c < m->columns->len; c++) {
			struct matrix_cell *mc = row->cells[c];
			const struct matrix_source *s;

			if (!mc)
				continue;
			s = m->sources->pdata[mc->source];
			mc->erratum = errata_match(errata, &s->cpu, row->kernel, mc->cell);
			m->count[mc->cell->outcome]++;
			if (mc->erratum)
				m->known_errata++;
			else if (outcome_is_harm(mc->cell->outcome))
				m->harm++;
			else if (mc->cell->outcome == OUTCOME_INFRA)
				m->infra++;
		}
	}
	*out = g_steal_pointer(&m);
	return 0;
}

const struct matrix_cell *matrix_at(const struct matrix *m, size_t row, size_t col)
{
	if (row >= m->rows->len || col >= m->columns->len)
		return NULL;
	return ((struct matrix_row *)m->rows->pdata[row])->cells[col];
}

const char *matrix_source_verdict(const struct matrix_source *s)
{
	return s->set->extra ? json_string_value(json_object_get(s->set->extra, "verdict")) :
			       NULL;
}

bool matrix_cpus_differ(const struct matrix *m)
{
	return m->groups->len > 1;
}

/* Console excerpts carry raw bytes: keep line breaks and tabs, show other
 * control characters (ESC above all) as \xNN so no report can drive a
 * terminal. */
static void append_clean(GString *s, const char *text)
{
	for (const char *p = text; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			g_string_append_printf(s, "\\x%02x", c);
		else
			g_string_append_c(s, (char)c);
	}
}

char *matrix_cell_evidence(const struct cell *cell)
{
	GString *s = g_string_new(NULL);
	size_t i;
	json_t *ev;

	json_array_foreach(cell->evidence, i, ev) {
		const char *kind = json_string_value(json_object_get(ev, "kind"));
		const char *excerpt = json_string_value(json_object_get(ev, "excerpt"));

		if (s->len)
			g_string_append_c(s, '\n');
		if (kind && excerpt) {
			json_t *guest = json_object_get(ev, "guest");

			g_string_append(s, kind);
			if (json_is_integer(guest))
				g_string_append_printf(s, " (guest %lld)",
						       (long long)json_integer_value(guest));
			g_string_append(s, ": ");
			append_clean(s, excerpt);
		} else {
			g_autofree char *dump = json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS);

			append_clean(s, dump ? dump : "?");
		}
	}
	return g_string_free(s, FALSE);
}

/* ---- text ---- */

#define ANSI_HARM "\033[1;31m"
#define ANSI_KNOWN "\033[33m"
#define ANSI_INFRA "\033[35m"
#define ANSI_OFF "\033[0m"

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

static void format_grid(const struct matrix *m, bool color, int width, GString *out)
{
	size_t kw = strlen("kernel"), pw = strlen("profile"), ncols = m->columns->len;
	g_autofree size_t *cw = g_new0(size_t, ncols + 1);

	for (guint r = 0; r < m->rows->len; r++) {
		const struct matrix_row *row = m->rows->pdata[r];

		kw = MAX(kw, strlen(row->kernel));
		pw = MAX(pw, strlen(row->profile));
	}
	for (size_t c = 0; c < ncols; c++) {
		cw[c] = strlen(m->columns->pdata[c]);
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

			if (row && matrix_cpus_differ(m) &&
			    (r == 1 || ((struct matrix_row *)m->rows->pdata[r - 2])->group != row->group))
				g_string_append_printf(out, "cpu %s:\n",
						       (char *)m->groups->pdata[row->group]);
			g_string_append_printf(out, "%-*s  %-*s", (int)kw, row ? row->kernel : "kernel",
					       (int)pw, row ? row->profile : "profile");
			for (size_t c = first; c < last; c++) {
				const struct matrix_cell *mc = row ? row->cells[c] : NULL;
				const char *text = row ? matrix_cell_abbrev(mc) : m->columns->pdata[c];
				const char *ansi = color && row ? cell_color(mc) : NULL;
				size_t len = strlen(text);

				g_string_append(out, "  ");
				if (ansi)
					g_string_append(out, ansi);
				g_string_append(out, text);
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

	g_string_append_printf(out, "  %s %s %s: %s", row->kernel, row->profile,
			       (char *)m->columns->pdata[col], outcome_name(mc->cell->outcome));
	if (mc->cell->n)
		g_string_append_printf(out, " %d/%d", mc->cell->k, mc->cell->n);
	if (mc->erratum)
		g_string_append_printf(out, " - known erratum %s (%s)", erratum_id(mc->erratum),
				       erratum_title(mc->erratum));
	g_string_append_printf(out, " [cpu %s, %s]", s->cpu_label, s->name);
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

static void format_legend(const struct matrix *m, GString *out)
{
	bool seen[OUTCOME_COUNT] = { false }, rejected = false, absent = false, disagree = false;
	bool known = false;

	for (guint r = 0; r < m->rows->len; r++)
		for (guint c = 0; c < m->columns->len; c++) {
			const struct matrix_cell *mc = matrix_at(m, r, c);

			if (!mc) {
				absent = true;
				continue;
			}
			if (!mc->cell->has_attr && mc->cell->error)
				rejected = true;
			else
				seen[mc->cell->outcome] = true;
			known |= mc->erratum != NULL;
			disagree |= mc->disagree;
		}
	g_string_append(out, "legend:");
	for (int o = 0; o < OUTCOME_COUNT; o++)
		if (seen[o])
			g_string_append_printf(out, " %s=%s", matrix_outcome_abbrev(o),
					       outcome_name(o));
	if (rejected)
		g_string_append(out, " " CODE_REJECTED "=the profile rejected the spec");
	if (absent)
		g_string_append(out, " " CODE_ABSENT "=not measured");
	g_string_append(out, "\n  X! = harm (guest or host hurt)");
	if (known)
		g_string_append(out, "; X~ = harm explained by a known erratum");
	if (disagree)
		g_string_append(out, "; * = inputs disagree, the worst is shown");
	g_string_append_c(out, '\n');
}

void matrix_format_text(const struct matrix *m, bool color, int width, GString *out)
{
	g_autoptr(GHashTable) kernels = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) profiles = g_hash_table_new(g_str_hash, g_str_equal);

	for (guint r = 0; r < m->rows->len; r++) {
		const struct matrix_row *row = m->rows->pdata[r];

		g_hash_table_add(kernels, row->kernel);
		g_hash_table_add(profiles, row->profile);
	}
	g_string_append_printf(out, "pmucanary matrix: %u input%s, %u CPU signature%s, "
			       "%u kernel%s, %u profile%s, %u spec%s\n",
			       m->sources->len, m->sources->len == 1 ? "" : "s",
			       m->groups->len, m->groups->len == 1 ? "" : "s",
			       g_hash_table_size(kernels), g_hash_table_size(kernels) == 1 ? "" : "s",
			       g_hash_table_size(profiles), g_hash_table_size(profiles) == 1 ? "" : "s",
			       m->columns->len, m->columns->len == 1 ? "" : "s");
	g_string_append(out, "inputs:\n");
	for (guint i = 0; i < m->sources->len; i++) {
		const struct matrix_source *s = m->sources->pdata[i];

		g_string_append_printf(out, "  [%u] %s: %s %s, kernel %s, accel %s, cpu %s\n",
				       i + 1, s->name, results_kind_name(s->set->kind),
				       s->set->run_id, s->set->kernel ? s->set->kernel : "?",
				       s->set->accel ? s->set->accel : "?", s->cpu_label);
		if (matrix_source_verdict(s))
			g_string_append_printf(out, "      run verdict: %s\n", matrix_source_verdict(s));
		for (guint l = 0; l < s->set->limitations->len; l++)
			g_string_append_printf(out, "      limitation: %s\n",
					       (char *)s->set->limitations->pdata[l]);
	}
	g_string_append_c(out, '\n');
	format_grid(m, color, width > 40 ? width : 40, out);

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
	g_string_append_c(out, '\n');
	format_legend(m, out);
	g_string_append_printf(out, "%u harmful cell%s, %u known errat%s, %u INFRA\n", m->harm,
			       m->harm == 1 ? "" : "s", m->known_errata,
			       m->known_errata == 1 ? "um" : "a", m->infra);
}
