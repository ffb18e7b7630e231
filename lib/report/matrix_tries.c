/* One run's cells by what their tries show: the part of the terminal views
 * (matrix_text.c) that only a single input has, since it reads the tries,
 * per-CPU outcomes and perf's messages of one result set (matrix.h
 * matrix_format_tries). Everything read from the file is escaped. */
#include "matrix.h"

#include "textesc.h"

#include <string.h>

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

/* Appends text read from a file, escaped. */
static void esc(GString *out, const char *s)
{
	text_escape_append(out, s, 0);
}

/* Appends s escaped and padded to w columns. */
static void esc_pad(GString *out, const char *s, int w)
{
	g_autofree char *e = text_escape(s);

	g_string_append_printf(out, "%-*s", w, e);
}

static void cell_format_line(const struct cell *c, GString *out)
{
	g_string_append(out, "  ");
	esc_pad(out, c->profile, 12);
	g_string_append_c(out, ' ');
	esc_pad(out, c->spec, 40);
	g_string_append_printf(out, " %s", outcome_name(c->outcome));
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
	if (results_cell_rule(c)) {
		g_string_append(out, " by rule: ");
		esc(out, results_cell_rule(c));
	}
	if (c->error) {
		g_string_append(out, "  rejected: ");
		esc(out, c->error);
	}
	if (c->tries->len > 1) {
		g_string_append_printf(out, "  after %u tries:", c->tries->len);
		for (unsigned int i = 1; i < c->tries->len; i++) {
			const struct cell_try *t = &g_array_index(c->tries, struct cell_try, i);

			g_string_append(out, i > 1 ? "; " : " ");
			esc(out, t->why ? t->why : "retry");
			g_string_append_printf(out, " -> %s", outcome_name(t->outcome));
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
		g_string_append(out, i ? ", " : "");
		esc(out, mx->profiles->pdata[idx[i]]);
		if (j - i >= 2)
			g_string_append(out, "..");
		else if (j > i)
			g_string_append(out, ", ");
		if (j > i)
			esc(out, mx->profiles->pdata[idx[j]]);
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
		g_autofree char *word = text_escape(words[i]);
		size_t w = strlen(word) + 1;

		if (i && col + w > MATRIX_WIDTH) {
			g_string_append_printf(out, "\n%s", indent);
			col = strlen(indent);
		}
		g_string_append_printf(out, "%s%s", i && col > strlen(indent) ? " " : "", word);
		col += w;
	}
	if (n > max)
		g_string_append_printf(out, " (+%u more)", n - max);
	g_string_append_c(out, '\n');
}

/* Appends text (escaped already, its first indent included) wrapped at
 * spaces to MATRIX_WIDTH, continuation lines indented by cont, and a
 * newline: a long list of fallbacks or profiles stays on the screen. */
static void line_wrap(GString *out, const char *text, const char *cont)
{
	size_t col = 0;

	for (const char *p = text; *p;) {
		const char *sp = strchr(p + 1, ' ');
		size_t w = sp ? (size_t)(sp - p) : strlen(p);

		if (col && *p == ' ' && col + w > MATRIX_WIDTH) {
			g_string_append_c(out, '\n');
			g_string_append(out, cont);
			col = strlen(cont);
			p++;
			w--;
		}
		g_string_append_len(out, p, (gssize)w);
		col += w;
		p += w;
	}
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
		/* perf's :P walk repeats one fallback: "why -> X (3 times)". */
		for (unsigned int i = 1, same; i < c->tries->len; i += same) {
			const struct cell_try *tr = &g_array_index(c->tries, struct cell_try, i);

			for (same = 1; i + same < c->tries->len; same++) {
				const struct cell_try *n = &g_array_index(c->tries, struct cell_try,
									  i + same);

				if (n->outcome != tr->outcome || g_strcmp0(n->why, tr->why))
					break;
			}
			g_string_append_printf(t, "%s %s -> %s", i > 1 ? ";" : "",
					       tr->why ? tr->why : "retry", outcome_name(tr->outcome));
			if (same > 1)
				g_string_append_printf(t, " (%u times)", same);
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
#define GROUP_MAX_EVENTS 16
#define GROUP_LIST_CELLS 3

static void cell_format_line(const struct cell *c, GString *out);

static void group_format(const struct matrix_index *mx, const struct matrix_group *g,
			 GString *out)
{
	g_autofree unsigned int *gc = g_new0(unsigned int, (size_t)mx->ne * mx->np + 1);
	g_autoptr(GPtrArray) clusters = g_ptr_array_new_with_free_func(event_cluster_free);
	g_autoptr(GHashTable) by_sig = g_hash_table_new(g_str_hash, g_str_equal);
	unsigned int shown = 0;

	{
		g_autoptr(GString) head = g_string_new(NULL);

		esc(head, g->title);
		g_string_append_printf(head, ": %u cell%s", g->cells->len,
				       g->cells->len == 1 ? "" : "s");
		g_string_append_c(out, '\n');
		line_wrap(out, head->str, "    ");
	}
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
			g_autoptr(GString) line = g_string_new("  ");

			esc(line, ec->names->pdata[0]);
			g_string_append_printf(line, ", %u cell%s: %s", ec->cells,
					       ec->cells == 1 ? "" : "s", ec->sig);
			line_wrap(out, line->str, "      ");
			continue;
		}
		{
			g_autofree char *line = g_strdup_printf("  %u events, %u cells: %s:",
								ec->names->len, ec->cells, ec->sig);

			line_wrap(out, line, "      ");
		}
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
			g_string_append(out, "  ... more (--all prints every cell)\n");
			break;
		}
		{
			g_autofree char *line = g_strdup_printf("  %s (%u spec%s):",
								(char *)sigs->pdata[i], list->len,
								list->len == 1 ? "" : "s");

			line_wrap(out, line, "      ");
		}
		words_wrap(out, "      ", (char **)list->pdata, list->len, 40);
		lines += 2 + list->len / 8;
	}
	if (rejected_only)
		g_string_append_printf(out, "  and %u spec%s where the only difference is that a "
				       "profile's parser rejects %s (see the rejected groups)\n",
				       rejected_only, rejected_only == 1 ? "" : "s",
				       rejected_only == 1 ? "it" : "them");
}

/* A screen-sized view shows the largest groups; --all every one. */
#define TRIES_MAX_GROUPS 10
#define TRIES_MAX_OK_GROUPS 4

static void groups_format(const struct matrix_index *mx, GPtrArray *groups, unsigned int max,
			  GString *out)
{
	unsigned int rest = 0;

	for (unsigned int i = 0; i < groups->len; i++) {
		const struct matrix_group *g = groups->pdata[i];

		if (i < max)
			group_format(mx, g, out);
		else
			rest += g->cells->len;
	}
	if (groups->len > max)
		g_string_append_printf(out, "\n  ... %u more group%s (%u cell%s): --all lists every "
				       "group and every non-OK cell\n", groups->len - max,
				       groups->len - max == 1 ? "" : "s", rest, rest == 1 ? "" : "s");
}

void matrix_format_tries(const struct result_set *set, bool list_all, GString *out)
{
	g_autoptr(GPtrArray) profiles = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) pidx = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) eidx = g_hash_table_new(g_str_hash, g_str_equal);
	g_autofree unsigned int *cell_p = g_new0(unsigned int, set->cells->len + 1);
	g_autofree unsigned int *cell_e = g_new0(unsigned int, set->cells->len + 1);
	g_autofree unsigned int *tot = NULL;
	g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func(matrix_group_free);
	g_autoptr(GPtrArray) okgroups = g_ptr_array_new_with_free_func(matrix_group_free);
	g_autoptr(GHashTable) gidx = g_hash_table_new(g_str_hash, g_str_equal);
	unsigned int total[NCOL] = { 0 };
	unsigned int nonok = 0, grouped = 0, fellback = 0;
	struct matrix_index mx = { 0 };

	if (!set->cells->len)
		return;
	for (unsigned int i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		g_autofree char *ev = results_spec_event(c->spec);

		cell_p[i] = index_of(profiles, pidx, c->profile);
		cell_e[i] = index_of(events, eidx, ev);
		total[cell_col(c)]++;
		nonok += c->outcome != OUTCOME_OK;
	}
	mx.set = set;
	mx.profiles = profiles;
	mx.events = events;
	mx.cell_p = cell_p;
	mx.cell_e = cell_e;
	mx.np = profiles->len;
	mx.ne = events->len;
	tot = g_new0(unsigned int, (size_t)mx.ne * mx.np + 1);
	for (unsigned int i = 0; i < set->cells->len; i++)
		tot[(size_t)cell_e[i] * mx.np + cell_p[i]]++;
	mx.tot = tot;

	disagreements_format(&mx, 60, out);

	/* Harm and INFRA have their own lines (with evidence) in the view:
	 * here the errno and rejected cells, and the OK ones that needed a
	 * fallback, by what their tries show. */
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
		grouped += !ok;
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

	if (grouped) {
		g_string_append_printf(out, "\nerrno and rejected cells by outcome and tries: %u (",
				       grouped);
		for (unsigned int o = 1, first = 1; o < NCOL; o++)
			if (total[o] && !outcome_is_harm(o) && o != OUTCOME_INFRA) {
				g_string_append_printf(out, "%s%s %u", first ? "" : ", ",
						       o == COL_REJECTED ? "rejected by the profile"
								         : col_name(o),
						       total[o]);
				first = 0;
			}
		g_string_append_printf(out, ") in %u group%s\n", groups->len,
				       groups->len == 1 ? "" : "s");
	}
	groups_format(&mx, groups, list_all ? G_MAXUINT : TRIES_MAX_GROUPS, out);
	if (fellback) {
		g_string_append_printf(out, "\nOK only after a fallback: %u cell%s\n", fellback,
				       fellback == 1 ? "" : "s");
		groups_format(&mx, okgroups, list_all ? G_MAXUINT : TRIES_MAX_OK_GROUPS, out);
	}

	if (list_all && nonok) {
		g_string_append_printf(out, "\nevery non-OK cell (%u):\n", nonok);
		for (unsigned int i = 0; i < set->cells->len; i++) {
			const struct cell *c = set->cells->pdata[i];

			if (c->outcome != OUTCOME_OK)
				cell_format_line(c, out);
		}
	}
}
