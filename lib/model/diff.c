#include "diff.h"

#include "log.h"
#include "textesc.h"

#include <errno.h>
#include <string.h>

struct diff_group_info {
	const char *name, *title, *what;
	bool fails;
};

#define DIFF_GROUP_INFO(id, json, t, w, f) [DIFF_##id] = { json, t, w, f },
static const struct diff_group_info groups[DIFF_GROUP_COUNT] = {
	DIFF_GROUP_TABLE(DIFF_GROUP_INFO)
};
#undef DIFF_GROUP_INFO

const char *diff_group_name(enum diff_group g)
{
	return g < DIFF_GROUP_COUNT ? groups[g].name : "?";
}

const char *diff_group_title(enum diff_group g)
{
	return g < DIFF_GROUP_COUNT ? groups[g].title : "?";
}

const char *diff_group_what(enum diff_group g)
{
	return g < DIFF_GROUP_COUNT ? groups[g].what : "?";
}

bool diff_group_fails(enum diff_group g)
{
	return g < DIFF_GROUP_COUNT && groups[g].fails;
}

/* [base class][new class]; errno -> errno is split on equality below.
 * REJECTED (the profile's parser refused the spec, no syscall) on either
 * side is no kernel verdict: neither a regression nor "cannot tell". */
static const enum diff_group class_matrix[OUTCOME_CLASS_COUNT][OUTCOME_CLASS_COUNT] = {
	[OUTCOME_CLASS_OK] = {
		[OUTCOME_CLASS_OK] = DIFF_UNCHANGED,
		[OUTCOME_CLASS_ERRNO] = DIFF_ABI_REGRESSION,
		[OUTCOME_CLASS_HARM] = DIFF_HARM_REGRESSION,
		[OUTCOME_CLASS_INFRA] = DIFF_UNTESTED,
		[OUTCOME_CLASS_REJECTED] = DIFF_REJECTED,
	},
	[OUTCOME_CLASS_ERRNO] = {
		[OUTCOME_CLASS_OK] = DIFF_NEW_CAPABILITY,
		[OUTCOME_CLASS_ERRNO] = DIFF_CHANGED_ERRNO,
		[OUTCOME_CLASS_HARM] = DIFF_HARM_REGRESSION,
		[OUTCOME_CLASS_INFRA] = DIFF_UNTESTED,
		[OUTCOME_CLASS_REJECTED] = DIFF_REJECTED,
	},
	[OUTCOME_CLASS_HARM] = {
		[OUTCOME_CLASS_OK] = DIFF_FIXED,
		[OUTCOME_CLASS_ERRNO] = DIFF_FENCED,
		[OUTCOME_CLASS_HARM] = DIFF_STILL_HARMFUL,
		[OUTCOME_CLASS_INFRA] = DIFF_UNTESTED,
		[OUTCOME_CLASS_REJECTED] = DIFF_REJECTED,
	},
	[OUTCOME_CLASS_INFRA] = {
		[OUTCOME_CLASS_OK] = DIFF_UNTESTED,
		[OUTCOME_CLASS_ERRNO] = DIFF_UNTESTED,
		[OUTCOME_CLASS_HARM] = DIFF_UNTESTED,
		[OUTCOME_CLASS_INFRA] = DIFF_UNTESTED,
		[OUTCOME_CLASS_REJECTED] = DIFF_REJECTED,
	},
	[OUTCOME_CLASS_REJECTED] = {
		[OUTCOME_CLASS_OK] = DIFF_REJECTED,
		[OUTCOME_CLASS_ERRNO] = DIFF_REJECTED,
		[OUTCOME_CLASS_HARM] = DIFF_REJECTED,
		[OUTCOME_CLASS_INFRA] = DIFF_REJECTED,
		[OUTCOME_CLASS_REJECTED] = DIFF_UNCHANGED,
	},
};

enum diff_group diff_classify(enum outcome base, enum outcome new)
{
	/* A spec one side's profile rejected was never tested there: its
	 * absence on the other side loses nothing. */
	if (base >= OUTCOME_COUNT)
		return new == OUTCOME_REJECTED ? DIFF_REJECTED : DIFF_ONLY_NEW;
	if (new >= OUTCOME_COUNT)
		return base == OUTCOME_REJECTED ? DIFF_REJECTED : DIFF_ONLY_BASE;
	if (base == new && outcome_class(base) == OUTCOME_CLASS_ERRNO)
		return DIFF_UNCHANGED;
	return class_matrix[outcome_class(base)][outcome_class(new)];
}

static const char *const verdict_names[DIFF_VERDICT_COUNT] = {
	[DIFF_VERDICT_CLEAN] = "CLEAN",
	[DIFF_VERDICT_REGRESSION] = "REGRESSION",
	[DIFF_VERDICT_CANNOT_TELL] = "CANNOT_TELL",
};

const char *diff_verdict_name(enum diff_verdict v)
{
	return v < DIFF_VERDICT_COUNT ? verdict_names[v] : "?";
}

int diff_verdict_exit_code(enum diff_verdict v)
{
	switch (v) {
	case DIFF_VERDICT_CLEAN:
		return 0;
	case DIFF_VERDICT_REGRESSION:
		return 1;
	default:
		return 125;
	}
}

static void diff_cell_free(void *p)
{
	struct diff_cell *c = p;

	if (!c)
		return;
	g_free(c->profile);
	g_free(c->spec);
	g_free(c->new_rule);
	g_free(c);
}

static void diff_side_clear(struct diff_side *s)
{
	g_free(s->name);
	g_free(s->kind);
	g_free(s->kernel);
	g_free(s->run_id);
}

void diff_result_free(struct diff_result *res)
{
	if (!res)
		return;
	diff_side_clear(&res->base);
	diff_side_clear(&res->new);
	if (res->cells)
		g_ptr_array_unref(res->cells);
	json_decref(res->new_rules);
	if (res->new_rule_lines)
		g_ptr_array_unref(res->new_rule_lines);
	g_free(res);
}

/* One side's tested cell. */
struct side_cell {
	const char *profile, *spec;
	enum outcome outcome;
	int k, n;
	const char *rule;   /* results_cell_rule */
};

/* Reads one side's envelope and cells into a (results_cell_key) -> side_cell
 * table. */
static int side_read(const struct result_set *set, const char *name, struct diff_side *side,
		     GHashTable **cells_out)
{
	g_autoptr(GHashTable) cells = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	const json_t *verdict = set->extra ? json_object_get(set->extra, "verdict") : NULL;

	side->name = g_strdup(name);
	side->kind = g_strdup(results_kind_name(set->kind));
	side->kernel = g_strdup(set->kernel);
	side->run_id = g_strdup(set->run_id);
	side->infra_verdict = json_is_string(verdict) &&
			      g_ascii_strcasecmp(json_string_value(verdict), "INFRA") == 0;

	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *cell = set->cells->pdata[i];
		g_autofree char *key = results_cell_key(cell->profile, cell->spec);

		if (g_hash_table_contains(cells, key)) {
			g_autofree char *ename = text_escape(name);
			g_autofree char *profile = text_escape(cell->profile);
			g_autofree char *spec = text_escape(cell->spec);

			return pc_fail(EINVAL, "%s: cell %u: (%s, %s) appears twice", ename, i,
				       profile, spec);
		}
		struct side_cell *sc = g_new0(struct side_cell, 1);
		sc->profile = cell->profile;
		sc->spec = cell->spec;
		sc->outcome = cell->outcome;
		sc->k = cell->k;
		sc->n = cell->n;
		sc->rule = results_cell_rule(cell);
		/* The profile could not encode the spec: nothing was tested;
		 * the cell is compared only to show it in its own group. */
		if (outcome_class(cell->outcome) == OUTCOME_CLASS_REJECTED)
			side->rejected++;
		else
			side->cells++;
		if (outcome_class(cell->outcome) == OUTCOME_CLASS_INFRA)
			side->infra_cells++;
		g_hash_table_insert(cells, g_steal_pointer(&key), sc);
	}
	*cells_out = g_steal_pointer(&cells);
	return 0;
}

static struct diff_cell *diff_cell_new(const struct side_cell *b, const struct side_cell *n)
{
	struct diff_cell *c = g_new0(struct diff_cell, 1);
	const struct side_cell *any = b ? b : n;

	c->profile = g_strdup(any->profile);
	c->spec = g_strdup(any->spec);
	c->base = b ? b->outcome : OUTCOME_COUNT;
	c->new = n ? n->outcome : OUTCOME_COUNT;
	c->base_k = b ? b->k : -1;
	c->base_n = b ? b->n : -1;
	c->new_k = n ? n->k : -1;
	c->new_n = n ? n->n : -1;
	c->group = diff_classify(c->base, c->new);
	c->new_rule = n ? g_strdup(n->rule) : NULL;
	return c;
}

static int diff_cell_cmp(const void *pa, const void *pb)
{
	const struct diff_cell *a = *(struct diff_cell *const *)pa;
	const struct diff_cell *b = *(struct diff_cell *const *)pb;
	int r;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	r = strcmp(a->profile, b->profile);
	return r ? r : strcmp(a->spec, b->spec);
}

/* NEW's rules that BASE has not (by text): a class of attrs newly harmed. */
static void new_rules(struct diff_result *res, const struct result_set *base,
		      const struct result_set *new)
{
	json_t *brules = results_rules(base), *r, *b;
	size_t i, j;

	res->new_rules = json_array();
	res->new_rule_lines = g_ptr_array_new_with_free_func(g_free);
	json_array_foreach(results_rules(new), i, r) {
		const char *text = json_string_value(json_object_get(r, "text"));
		bool known = false;

		json_array_foreach(brules, j, b)
			known = known || (text && !g_strcmp0(text, json_string_value(
									json_object_get(b, "text"))));
		if (known)
			continue;
		json_array_append(res->new_rules, r);
		g_ptr_array_add(res->new_rule_lines, results_rule_describe(new, r));
	}
}

int diff_compare(const struct result_set *base, const char *base_name,
		 const struct result_set *new, const char *new_name,
		 struct diff_result **out)
{
	g_autoptr(diff_result) res = g_new0(struct diff_result, 1);
	g_autoptr(GHashTable) bcells = NULL;
	g_autoptr(GHashTable) ncells = NULL;
	GHashTableIter it;
	void *key, *val;
	int ret;

	*out = NULL;
	res->cells = g_ptr_array_new_with_free_func(diff_cell_free);
	ret = side_read(base, base_name, &res->base, &bcells);
	if (ret < 0)
		return ret;
	ret = side_read(new, new_name, &res->new, &ncells);
	if (ret < 0)
		return ret;
	res->kinds_differ = g_strcmp0(res->base.kind, res->new.kind) != 0;

	g_hash_table_iter_init(&it, bcells);
	while (g_hash_table_iter_next(&it, &key, &val))
		g_ptr_array_add(res->cells, diff_cell_new(val, g_hash_table_lookup(ncells, key)));
	g_hash_table_iter_init(&it, ncells);
	while (g_hash_table_iter_next(&it, &key, &val))
		if (!g_hash_table_contains(bcells, key))
			g_ptr_array_add(res->cells, diff_cell_new(NULL, val));
	g_ptr_array_sort(res->cells, diff_cell_cmp);
	new_rules(res, base, new);
	for (guint i = 0; i < res->cells->len; i++)
		res->count[((struct diff_cell *)res->cells->pdata[i])->group]++;
	*out = g_steal_pointer(&res);
	return 0;
}

enum diff_verdict diff_result_verdict(const struct diff_result *res)
{
	for (int g = 0; g < DIFF_GROUP_COUNT; g++)
		if (diff_group_fails(g) && res->count[g])
			return DIFF_VERDICT_REGRESSION;
	if (res->count[DIFF_UNTESTED] || res->count[DIFF_ONLY_BASE] || res->base.infra_verdict ||
	    res->new.infra_verdict || res->kinds_differ)
		return DIFF_VERDICT_CANNOT_TELL;
	return DIFF_VERDICT_CLEAN;
}

static char *outcome_label(enum outcome o, int k, int n)
{
	if (o >= OUTCOME_COUNT)
		return g_strdup("-");
	if (outcome_is_harm(o) && n > 0)
		return g_strdup_printf("%s (%d/%d)", outcome_name(o), k, n);
	return g_strdup(outcome_name(o));
}

static void side_text(GString *s, const char *label, const struct diff_side *side)
{
	/* Names come from the files: escaped, so that none drives a terminal. */
	g_autofree char *name = text_escape(side->name);
	g_autofree char *kernel = text_escape(side->kernel ? side->kernel : "?");
	g_autofree char *run_id = text_escape(side->run_id ? side->run_id : "?");

	g_string_append_printf(s, "%-4s %s: kernel %s, %s %s, %u cells tested", label, name,
			       kernel, side->kind ? side->kind : "?", run_id, side->cells);
	if (side->infra_cells)
		g_string_append_printf(s, ", %u INFRA", side->infra_cells);
	if (side->rejected)
		g_string_append_printf(s, ", %u rejected by their profile", side->rejected);
	if (side->infra_verdict)
		g_string_append(s, ", run verdict INFRA");
	g_string_append_c(s, '\n');
}

char *diff_result_to_text(const struct diff_result *res)
{
	GString *s = g_string_new(NULL);
	enum diff_verdict v = diff_result_verdict(res);
	guint i = 0;

	side_text(s, "BASE", &res->base);
	side_text(s, "NEW", &res->new);
	if (res->kinds_differ)
		g_string_append_printf(s, "note: comparing a %s with a %s; harms only show in runs\n",
				       res->base.kind, res->new.kind);
	if (res->new_rule_lines->len) {
		g_string_append_printf(s, "\nnew rules (%u): harm NEW explains by a rule over attr "
				       "fields that BASE has not; proven on a sample, each armed "
				       "alone, the other cells it covers were not\n",
				       res->new_rule_lines->len);
		for (i = 0; i < res->new_rule_lines->len; i++) {
			g_autofree char *line = text_escape(res->new_rule_lines->pdata[i]);

			g_string_append_printf(s, "  %s\n", line);
		}
	}
	for (int g = 0; g < DIFF_GROUP_COUNT; g++) {
		if (g == DIFF_UNCHANGED || !res->count[g])
			continue;
		g_string_append_printf(s, "\n%s (%u): %s\n", diff_group_title(g), res->count[g],
				       diff_group_what(g));
		for (i = 0; i < res->cells->len; i++) {
			const struct diff_cell *c = res->cells->pdata[i];
			if (c->group != (enum diff_group)g)
				continue;
			g_autofree char *b = outcome_label(c->base, c->base_k, c->base_n);
			g_autofree char *n = outcome_label(c->new, c->new_k, c->new_n);
			g_autofree char *profile = text_escape(c->profile);
			g_autofree char *spec = text_escape(c->spec);
			g_string_append_printf(s, "  %-12s %-24s %s -> %s", profile, spec, b, n);
			if (c->new_rule) {
				g_autofree char *rule = text_escape(c->new_rule);

				g_string_append_printf(s, " judged by rule %s (not armed alone)", rule);
			}
			g_string_append_c(s, '\n');
		}
	}
	g_string_append_printf(s, "\nunchanged: %u cells\n", res->count[DIFF_UNCHANGED]);
	g_string_append_printf(s, "verdict: %s (exit %d)", diff_verdict_name(v),
			       diff_verdict_exit_code(v));
	if (v == DIFF_VERDICT_CANNOT_TELL) {
		const char *sep = ": ";
		if (res->count[DIFF_UNTESTED]) {
			g_string_append_printf(s, "%s%u INFRA cells", sep, res->count[DIFF_UNTESTED]);
			sep = "; ";
		}
		if (res->count[DIFF_ONLY_BASE]) {
			g_string_append_printf(s, "%sNEW lacks %u cells", sep, res->count[DIFF_ONLY_BASE]);
			sep = "; ";
		}
		if (res->base.infra_verdict || res->new.infra_verdict) {
			g_string_append_printf(s, "%sa run verdict is INFRA", sep);
			sep = "; ";
		}
		if (res->kinds_differ)
			g_string_append_printf(s, "%sprobe vs run", sep);
	}
	g_string_append_c(s, '\n');
	return g_string_free(s, FALSE);
}

static json_t *side_json(const struct diff_side *side)
{
	return json_pack("{s:s, s:s?, s:s?, s:s?, s:b, s:i, s:i, s:i}", "file", side->name, "kind",
			 side->kind, "kernel", side->kernel, "run_id", side->run_id,
			 "infra_verdict", side->infra_verdict, "cells", side->cells, "infra_cells",
			 side->infra_cells, "rejected", side->rejected);
}

json_t *diff_result_to_json(const struct diff_result *res)
{
	enum diff_verdict v = diff_result_verdict(res);
	json_t *o = json_object(), *counts = json_object(), *grp = json_object();

	json_object_set_new(o, "schema", json_string("pmucanary-diff/1"));
	json_object_set_new(o, "base", side_json(&res->base));
	json_object_set_new(o, "new", side_json(&res->new));
	json_object_set_new(o, "kinds_differ", json_boolean(res->kinds_differ));
	json_object_set_new(o, "verdict", json_string(diff_verdict_name(v)));
	json_object_set_new(o, "exit_code", json_integer(diff_verdict_exit_code(v)));
	json_object_set(o, "new_rules", res->new_rules);
	for (int g = 0; g < DIFF_GROUP_COUNT; g++) {
		json_object_set_new(counts, diff_group_name(g), json_integer(res->count[g]));
		json_object_set_new(grp, diff_group_name(g), json_array());
	}
	for (guint i = 0; i < res->cells->len; i++) {
		const struct diff_cell *c = res->cells->pdata[i];
		json_t *j = json_pack("{s:s, s:s}", "profile", c->profile, "spec", c->spec);

		if (c->base < OUTCOME_COUNT)
			json_object_set_new(j, "base", json_string(outcome_name(c->base)));
		if (c->new < OUTCOME_COUNT)
			json_object_set_new(j, "new", json_string(outcome_name(c->new)));
		if (c->base_n > 0)
			json_object_set_new(j, "base_kn", json_pack("[ii]", c->base_k, c->base_n));
		if (c->new_n > 0)
			json_object_set_new(j, "new_kn", json_pack("[ii]", c->new_k, c->new_n));
		if (c->new_rule)
			json_object_set_new(j, "new_rule", json_string(c->new_rule));
		json_array_append_new(json_object_get(grp, diff_group_name(c->group)), j);
	}
	json_object_set_new(o, "counts", counts);
	json_object_set_new(o, "groups", grp);
	return o;
}
