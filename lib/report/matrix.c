/* Merging many result files into one matrix (see matrix.h). */
#include "matrix.h"

#include "attr.h"
#include "log.h"
#include "textesc.h"

#include <errno.h>
#include <fnmatch.h>
#include <string.h>

bool matrix_cell_rejected(const struct cell *c)
{
	/* By name: the enum has no REJECTED before schema pmucanary/2. */
	static enum outcome rejected = OUTCOME_COUNT + 1;

	if (rejected == OUTCOME_COUNT + 1)
		rejected = outcome_from_name("REJECTED");
	return (c->error && !c->has_attr) || (rejected < OUTCOME_COUNT && c->outcome == rejected);
}

unsigned int matrix_cell_code(const struct matrix_cell *mc)
{
	return matrix_cell_rejected(mc->cell) ? MATRIX_CODE_REJECTED : (unsigned int)mc->cell->outcome;
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
	case OUTCOME_CLASS_INFRA: return 0;
	/* Not even tried: any input that reached the kernel says more. */
	case OUTCOME_CLASS_REJECTED: return -1;
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

/* Where each cell of one input goes. */
struct cell_place {
	struct matrix_row *row;
	guint32 col;
};

/* Cells of one file come in runs of one kernel and profile: remember the
 * last row so the (group, kernel, profile) key is built once per run, not
 * once per cell. */
struct row_finder {
	GHashTable *idx;            /* "group\x1flen(kernel):kernel profile" -> row */
	const char *kernel, *profile;
	size_t group;
	struct matrix_row *last;
};

static struct matrix_row *row_find(struct row_finder *f, size_t group, const char *kernel,
				   const char *profile)
{
	g_autofree char *key = NULL;

	if (f->last && f->group == group && !strcmp(f->kernel, kernel) &&
	    !strcmp(f->profile, profile))
		return f->last;
	key = g_strdup_printf("%zu\x1f%zu:%s%s", group, strlen(kernel), kernel, profile);
	f->last = g_hash_table_lookup(f->idx, key);
	if (f->last) {
		f->group = group;
		f->kernel = f->last->kernel;
		f->profile = f->last->profile;
	}
	return f->last;
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
	g_autoptr(GPtrArray) places = g_ptr_array_new_with_free_func(g_free);
	struct row_finder finder = { .idx = row_idx };

	*out = NULL;
	if (!n)
		return pc_fail(EINVAL, "no result files to merge");
	m->sources = g_ptr_array_new_with_free_func(source_free);
	m->groups = g_ptr_array_new_with_free_func(g_free);
	m->columns = g_ptr_array_new_with_free_func(g_free);
	m->rows = g_ptr_array_new_with_free_func(row_free);

	/* Pass 1: sources, groups, columns, rows; where each cell goes. */
	for (size_t i = 0; i < n; i++) {
		struct matrix_source *s = g_new0(struct matrix_source, 1);
		struct cell_place *place = g_new0(struct cell_place, sets[i]->cells->len + 1);
		size_t group;

		s->set = sets[i];
		s->name = g_strdup(names && names[i] ? names[i] : sets[i]->run_id);
		cpu_sig_from_host(sets[i]->host, &s->cpu);
		s->cpu_label = cpu_sig_to_string(&s->cpu);
		g_ptr_array_add(m->sources, s);
		g_ptr_array_add(places, place);
		group = index_of(m->groups, group_idx, s->cpu_label);
		/* index_of keys the table with the caller's string: re-key with ours. */
		g_hash_table_insert(group_idx, m->groups->pdata[group], GSIZE_TO_POINTER(group));

		for (guint c = 0; c < sets[i]->cells->len; c++) {
			const struct cell *cell = sets[i]->cells->pdata[c];
			const char *kernel = cell_kernel(sets[i], cell);
			size_t col = index_of(m->columns, col_idx, cell->spec);
			struct matrix_row *row;

			g_hash_table_insert(col_idx, m->columns->pdata[col], GSIZE_TO_POINTER(col));
			row = row_find(&finder, group, kernel, cell->profile);
			if (!row) {
				struct row_build *rb = g_new0(struct row_build, 1);
				size_t prof = index_of(profiles, profile_idx, cell->profile);

				g_hash_table_insert(profile_idx, profiles->pdata[prof],
						    GSIZE_TO_POINTER(prof));
				rb->row = row = g_new0(struct matrix_row, 1);
				row->group = group;
				row->kernel = g_strdup(kernel);
				row->profile = g_strdup(cell->profile);
				rb->profile_order = prof;
				g_ptr_array_add(builds, rb);
				g_hash_table_insert(row_idx,
						    g_strdup_printf("%zu\x1f%zu:%s%s", group, strlen(kernel),
								    kernel, cell->profile),
						    row);
			}
			place[c].row = row;
			place[c].col = (guint32)col;
		}
	}

	/* Pass 2: fill the cells, merging duplicates across inputs. */
	for (guint r = 0; r < builds->len; r++) {
		struct row_build *rb = builds->pdata[r];

		rb->row->cells = g_new0(struct matrix_cell *, m->columns->len + 1);
	}
	for (size_t i = 0; i < n; i++) {
		const struct cell_place *place = places->pdata[i];

		for (guint c = 0; c < sets[i]->cells->len; c++) {
			const struct cell *cell = sets[i]->cells->pdata[c];
			struct matrix_row *row = place[c].row;
			struct matrix_cell *mc = row->cells[place[c].col];

			if (!mc) {
				mc = row->cells[place[c].col] = g_new0(struct matrix_cell, 1);
				mc->cell = cell;
				mc->source = i;
				mc->last_source = i;
				mc->inputs = 1;
				continue;
			}
			if (mc->last_source == i) {
				/* As diff: one file saying two things of one cell is
				 * broken, not a second opinion to merge. */
				g_autofree char *name = text_escape(((struct matrix_source *)
								     m->sources->pdata[i])->name);
				g_autofree char *k = text_escape(row->kernel);
				g_autofree char *p = text_escape(cell->profile);
				g_autofree char *sp = text_escape(cell->spec);

				/* the rows own their cells from here: keep matrix_free sound */
				for (guint r = 0; r < builds->len; r++)
					g_ptr_array_add(m->rows,
							((struct row_build *)builds->pdata[r])->row);
				return pc_fail(EINVAL, "%s: cell %u: (%s, %s, %s) appears twice", name,
					       c, k, p, sp);
			}
			mc->last_source = i;
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
			mc->erratum = errata ? errata_match(errata, &s->cpu, row->kernel, mc->cell) :
					       NULL;
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

/* ---- modifier classes ---- */

#define MODCLASS_INFO(id, name, what) [MATRIX_MODCLASS_##id] = { name, what },
static const struct {
	const char *name, *what;
} modclasses[MATRIX_MODCLASS_COUNT] = {
	MATRIX_MODCLASS_TABLE(MODCLASS_INFO)
};
#undef MODCLASS_INFO

const char *matrix_modclass_name(enum matrix_modclass c)
{
	return c < MATRIX_MODCLASS_COUNT ? modclasses[c].name : "?";
}

const char *matrix_modclass_what(enum matrix_modclass c)
{
	return c < MATRIX_MODCLASS_COUNT ? modclasses[c].what : "?";
}

/* The class of a set of attr fields: a flag wins (it is what the spec is
 * about), then precise (with or without G/H), then G/H, then u/k/h. */
static enum matrix_modclass modclass_of(bool priv, bool virt, bool precise,
					enum matrix_modclass flag)
{
	if (flag != MATRIX_MODCLASS_NONE)
		return flag;
	if (precise)
		return virt ? MATRIX_MODCLASS_PRECISE_VIRT : MATRIX_MODCLASS_PRECISE;
	if (virt)
		return MATRIX_MODCLASS_VIRT;
	return priv ? MATRIX_MODCLASS_PRIV : MATRIX_MODCLASS_NONE;
}

static enum matrix_modclass raw_modclass(const char *terms)
{
	g_auto(GStrv) parts = g_strsplit(terms, ",", -1);
	bool priv = false, virt = false, precise = false;
	enum matrix_modclass flag = MATRIX_MODCLASS_NONE;

	for (char **t = parts; *t; t++) {
		if (!strcmp(*t, "exclude_user") || !strcmp(*t, "exclude_kernel") ||
		    !strcmp(*t, "exclude_hv"))
			priv = true;
		else if (!strcmp(*t, "exclude_host") || !strcmp(*t, "exclude_guest"))
			virt = true;
		else if (g_str_has_prefix(*t, "precise_ip="))
			precise = strcmp(*t, "precise_ip=0") != 0;
		else if (!strcmp(*t, "exclude_idle"))
			flag = flag == MATRIX_MODCLASS_NONE ? MATRIX_MODCLASS_I : flag;
		else if (**t)
			flag = MATRIX_MODCLASS_OTHER;
	}
	return modclass_of(priv, virt, precise, flag);
}

enum matrix_modclass matrix_spec_modclass(const char *spec)
{
	g_autofree char *event = results_spec_event(spec ? spec : "");
	const char *mods = spec + strlen(event);
	bool priv = false, virt = false, precise = false;
	enum matrix_modclass flag = MATRIX_MODCLASS_NONE;

	if (*mods == '[') {
		g_autofree char *terms = g_strndup(mods + 1, strlen(mods + 1) - 1);

		return raw_modclass(terms);
	}
	if (*mods == ':')
		mods++;
	for (const char *p = mods; *p; p++) {
		enum matrix_modclass f = MATRIX_MODCLASS_NONE;

		switch (*p) {
		case 'u': case 'k': case 'h': priv = true; break;
		case 'G': case 'H': virt = true; break;
		case 'p': case 'P': precise = true; break;
		case 'S': f = MATRIX_MODCLASS_S; break;
		case 'I': f = MATRIX_MODCLASS_I; break;
		case 'D': f = MATRIX_MODCLASS_D; break;
		case 'W': f = MATRIX_MODCLASS_W; break;
		case 'e': f = MATRIX_MODCLASS_E; break;
		case 'b': f = MATRIX_MODCLASS_B; break;
		case 'R': f = MATRIX_MODCLASS_R; break;
		case 'X': f = MATRIX_MODCLASS_X; break;
		default: f = MATRIX_MODCLASS_OTHER; break;
		}
		/* The first flag names the class; an unknown letter beats all. */
		if (f == MATRIX_MODCLASS_OTHER || (f != MATRIX_MODCLASS_NONE &&
						   flag == MATRIX_MODCLASS_NONE))
			flag = f;
	}
	return modclass_of(priv, virt, precise, flag);
}

/* ---- the grouped view: tiles of row x event x modifier class ---- */

void matrix_groups_free(struct matrix_groups *g)
{
	if (!g)
		return;
	if (g->events)
		g_ptr_array_unref(g->events);
	g_free(g->col_event);
	g_free(g->col_class);
	g_free(g->tiles);
	g_free(g);
}

static size_t tile_index(const struct matrix_groups *g, size_t row, size_t event, size_t cls)
{
	return (row * g->events->len + event) * MATRIX_MODCLASS_COUNT + cls;
}

const struct matrix_tile *matrix_groups_tile(const struct matrix_groups *g, size_t row,
					     size_t event, enum matrix_modclass cls)
{
	if (row >= g->rows || event >= g->events->len || cls >= MATRIX_MODCLASS_COUNT)
		return NULL;
	return &g->tiles[tile_index(g, row, event, cls)];
}

int matrix_groups_build(const struct matrix *m, struct matrix_groups **out)
{
	g_autoptr(matrix_groups) g = g_new0(struct matrix_groups, 1);
	g_autoptr(GHashTable) idx = g_hash_table_new(g_str_hash, g_str_equal);
	size_t ncols = m->columns->len;

	*out = NULL;
	g->events = g_ptr_array_new_with_free_func(g_free);
	g->col_event = g_new0(unsigned int, ncols + 1);
	g->col_class = g_new0(unsigned char, ncols + 1);
	g->rows = m->rows->len;
	/* Classify each spec once, not once per row. */
	for (size_t c = 0; c < ncols; c++) {
		const char *spec = m->columns->pdata[c];
		g_autofree char *event = results_spec_event(spec);
		gpointer v;

		if (!g_hash_table_lookup_extended(idx, event, NULL, &v)) {
			v = GSIZE_TO_POINTER(g->events->len);
			g_ptr_array_add(g->events, g_steal_pointer(&event));
			g_hash_table_insert(idx, g->events->pdata[g->events->len - 1], v);
		}
		g->col_event[c] = GPOINTER_TO_UINT(v);
		g->col_class[c] = (unsigned char)matrix_spec_modclass(spec);
	}
	g->tiles = g_new0(struct matrix_tile, g->rows * g->events->len * MATRIX_MODCLASS_COUNT + 1);
	for (size_t r = 0; r < g->rows; r++) {
		const struct matrix_row *row = m->rows->pdata[r];

		for (size_t c = 0; c < ncols; c++) {
			const struct matrix_cell *mc = row->cells[c];
			struct matrix_tile *t;
			unsigned int code;

			if (!mc)
				continue;
			t = &g->tiles[tile_index(g, r, g->col_event[c], g->col_class[c])];
			code = matrix_cell_code(mc);
			t->codes |= G_GUINT64_CONSTANT(1) << code;
			if (mc->erratum)
				t->known |= G_GUINT64_CONSTANT(1) << code;
			t->cells++;
		}
	}
	*out = g_steal_pointer(&g);
	return 0;
}

/* ---- filters ---- */

static bool glob_match(const char *pattern, const char *s)
{
	return !pattern || fnmatch(pattern, s ? s : "", 0) == 0;
}

static bool outcome_pattern_matches(const char *pattern, unsigned int code)
{
	const char *name = code == MATRIX_CODE_REJECTED ? "REJECTED" : outcome_name(code);

	if (!pattern)
		return true;
	if (glob_match(pattern, name))
		return true;
	if (code == MATRIX_CODE_REJECTED)
		return !g_ascii_strcasecmp(pattern, "rejected");
	return !g_ascii_strcasecmp(pattern, outcome_class_name(outcome_class(code)));
}

int matrix_filter_check(const struct matrix_filter *f)
{
	if (!f || !f->outcome)
		return 0;
	for (unsigned int code = 0; code < MATRIX_CODE_COUNT; code++)
		if (outcome_pattern_matches(f->outcome, code))
			return 0;
	{
		g_autofree char *e = text_escape(f->outcome);

		return pc_fail(EINVAL, "--outcome '%s' names no outcome (an outcome name such as "
			       "OK, EOPNOTSUPP or GUEST_CRASH, REJECTED, a glob, or a class: ok, "
			       "errno, harm, infra)", e);
	}
}

bool matrix_filter_match(const struct matrix_filter *f, const char *kernel, const struct cell *c)
{
	if (!f)
		return true;
	if (!glob_match(f->profile, c->profile) || !glob_match(f->kernel, kernel))
		return false;
	if (f->outcome) {
		unsigned int code = matrix_cell_rejected(c) ? MATRIX_CODE_REJECTED :
							      (unsigned int)c->outcome;

		if (!outcome_pattern_matches(f->outcome, code))
			return false;
	}
	if (f->event && !glob_match(f->event, c->spec)) {
		g_autofree char *event = results_spec_event(c->spec);

		return glob_match(f->event, event);
	}
	return true;
}

void matrix_views_free(GPtrArray *views)
{
	if (!views)
		return;
	for (guint i = 0; i < views->len; i++) {
		struct result_set *v = views->pdata[i];

		g_ptr_array_unref(v->cells);
		g_free(v);
	}
	g_ptr_array_unref(views);
}

int matrix_filter_sets(const struct result_set *const *sets, size_t n,
		       const struct matrix_filter *f, GPtrArray **views)
{
	g_autoptr(GPtrArray) out = g_ptr_array_new();
	/* Which option matched something on its own: a pattern that matches
	 * nothing is a typo, not an empty view. */
	bool seen[4] = { !f || !f->event, !f || !f->profile, !f || !f->kernel,
			 !f || !f->outcome };
	static const char *const opt[4] = { "--event", "--profile", "--kernel", "--outcome" };
	size_t total = 0;
	int rc = matrix_filter_check(f);

	*views = NULL;
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		struct result_set *v = g_new(struct result_set, 1);

		*v = *sets[i];
		v->cells = g_ptr_array_new();
		g_ptr_array_add(out, v);
		for (guint c = 0; c < sets[i]->cells->len; c++) {
			const struct cell *cell = sets[i]->cells->pdata[c];
			const char *kernel = cell_kernel(sets[i], cell);

			if (f) {
				struct matrix_filter one = { 0 };

				for (int k = 0; k < 4; k++) {
					if (seen[k])
						continue;
					one = (struct matrix_filter){ 0 };
					switch (k) {
					case 0: one.event = f->event; break;
					case 1: one.profile = f->profile; break;
					case 2: one.kernel = f->kernel; break;
					default: one.outcome = f->outcome; break;
					}
					seen[k] = matrix_filter_match(&one, kernel, cell);
				}
			}
			if (matrix_filter_match(f, kernel, cell)) {
				g_ptr_array_add(v->cells, (void *)cell);
				total++;
			}
		}
	}
	for (int k = 0; k < 4; k++)
		if (!seen[k]) {
			const char *pat = k == 0 ? f->event : k == 1 ? f->profile :
					  k == 2 ? f->kernel : f->outcome;
			g_autofree char *e = text_escape(pat);

			matrix_views_free(g_steal_pointer(&out));
			return pc_fail(EINVAL, "%s '%s' matches no cell of the inputs", opt[k], e);
		}
	if (!total) {
		matrix_views_free(g_steal_pointer(&out));
		return pc_fail(EINVAL, "the filters together match no cell of the inputs");
	}
	*views = g_steal_pointer(&out);
	return 0;
}

/* Console excerpts carry raw bytes: keep line breaks and tabs, escape the
 * rest (textesc.h) so no report can drive a terminal. */
static void append_clean(GString *s, const char *text)
{
	text_escape_append(s, text, TEXT_KEEP_NEWLINE | TEXT_KEEP_TAB);
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

			text_escape_append(s, kind, 0);
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
