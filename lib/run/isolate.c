#include "isolate.h"

#include "log.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[ISOLATE_KIND_COUNT] = {
	[ISOLATE_KIND_SCREEN] = "screen",
	[ISOLATE_KIND_SPLIT] = "split",
	[ISOLATE_KIND_RECHECK] = "recheck",
	[ISOLATE_KIND_COMBINE] = "combine",
	[ISOLATE_KIND_CONFIRM] = "confirm",
	[ISOLATE_KIND_ACROSS] = "across",
	[ISOLATE_KIND_SAMPLE] = "sample",
	[ISOLATE_KIND_CLEAR] = "clear",
};

const char *isolate_kind_name(enum isolate_kind k)
{
	return k < ISOLATE_KIND_COUNT ? kind_names[k] : "?";
}

struct isolate {
	size_t n_ids, batch_size;
	unsigned int confirm;
	bool cover_pairs;
	const struct perf_event_attr *attrs;   /* isolate_use_rule */
	/* per run */
	isolate_test_fn fn;
	void *ctx;
	unsigned int seq;
	GPtrArray *culprits;   /* struct isolate_culprit * */
	GHashTable *culprit_of;/* id + 1 -> the first culprit holding it (a rule names thousands) */
	GHashTable *memo;      /* "id,id,..." -> outcome + 1 */
	bool proven;           /* rule holds */
	struct rule rule;
	GArray *sample;        /* size_t: the proven rule's */
	unsigned int refuted;
	/* What the tests said, for a run cut short (isolate_stop). */
	bool *cleared;         /* id: in a test that stayed clean */
	enum outcome *alone;   /* id: first arm alone; OUTCOME_COUNT: never */
	GPtrArray *harmful;    /* struct set *: every harmful test, as armed */
	bool stopped;          /* isolate_stop ran */
};

/* A set of ids: a view (ids, count) into an array owned elsewhere or here. */
struct set {
	size_t *ids;
	size_t count;
};

static void set_free(gpointer p)
{
	struct set *st = p;

	g_free(st->ids);
	g_free(st);
}

static void culprit_free(gpointer p)
{
	struct isolate_culprit *c = p;

	g_free(c->ids);
	g_free(c);
}

struct isolate *isolate_new(size_t n_ids, size_t batch_size, unsigned int confirm)
{
	struct isolate *iso = g_new0(struct isolate, 1);

	iso->n_ids = n_ids;
	iso->batch_size = batch_size ? batch_size : 1;
	iso->confirm = confirm;
	iso->culprits = g_ptr_array_new_with_free_func(culprit_free);
	iso->culprit_of = g_hash_table_new(g_direct_hash, g_direct_equal);
	iso->memo = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	iso->sample = g_array_new(FALSE, FALSE, sizeof(size_t));
	iso->cleared = g_new0(bool, n_ids + 1);
	iso->alone = g_new(enum outcome, n_ids + 1);
	iso->harmful = g_ptr_array_new_with_free_func(set_free);
	return iso;
}

void isolate_free(struct isolate *iso)
{
	if (!iso)
		return;
	g_hash_table_unref(iso->culprit_of);
	g_ptr_array_unref(iso->culprits);
	g_hash_table_unref(iso->memo);
	g_array_unref(iso->sample);
	g_free(iso->cleared);
	g_free(iso->alone);
	g_ptr_array_unref(iso->harmful);
	g_free(iso);
}

static char *set_key(const size_t *ids, size_t count)
{
	GString *s = g_string_new(NULL);

	for (size_t i = 0; i < count; i++)
		g_string_append_printf(s, i ? ",%zu" : "%zu", ids[i]);
	return g_string_free(s, FALSE);
}

/* One test. Sets searched for structure (split, combine) are memoised so
 * ddmin does not re-arm halves already judged; screen, recheck and confirm
 * are deliberate repeats. */
static int test(struct isolate *iso, enum isolate_kind kind, const size_t *ids,
		size_t count, enum outcome *res)
{
	bool memo = kind == ISOLATE_KIND_SPLIT || kind == ISOLATE_KIND_COMBINE;
	g_autofree char *key = set_key(ids, count);
	struct isolate_test t = { iso->seq, kind, ids, count };
	gpointer v;
	int r;

	if (memo && g_hash_table_lookup_extended(iso->memo, key, NULL, &v)) {
		*res = (enum outcome)(GPOINTER_TO_UINT(v) - 1);
		return 0;
	}
	*res = OUTCOME_OK;
	r = iso->fn(iso->ctx, &t, res);
	if (r)
		return r;
	iso->seq++;
	if (*res != OUTCOME_OK && !outcome_is_harm(*res))
		return pc_fail(EINVAL, "isolate: test %u returned %s, not OK or a harm",
			       t.seq, outcome_name(*res));
	g_hash_table_replace(iso->memo, g_steal_pointer(&key), GUINT_TO_POINTER(*res + 1));
	if (*res == OUTCOME_OK) {
		for (size_t i = 0; i < count; i++)
			iso->cleared[ids[i]] = true;
	} else {
		struct set *st = g_new(struct set, 1);

		st->ids = g_memdup2(ids, count * sizeof(*ids));
		st->count = count;
		g_ptr_array_add(iso->harmful, st);
	}
	if (count == 1 && iso->alone[ids[0]] == OUTCOME_COUNT)
		iso->alone[ids[0]] = *res;
	return 0;
}

static void add_culprit(struct isolate *iso, const size_t *ids, size_t count, enum outcome o)
{
	struct isolate_culprit *c = g_new0(struct isolate_culprit, 1);

	c->ids = g_memdup2(ids, count * sizeof(*ids));
	c->count = count;
	c->outcome = o;
	g_ptr_array_add(iso->culprits, c);
	for (size_t i = 0; i < count; i++)
		if (!g_hash_table_contains(iso->culprit_of, GSIZE_TO_POINTER(ids[i] + 1)))
			g_hash_table_insert(iso->culprit_of, GSIZE_TO_POINTER(ids[i] + 1), c);
}

#define HARM(o) ((o) != OUTCOME_OK)

/* ddmin (Zeller): shrinks a harmful set to one where no chunk and no
 * complement of a chunk still harms. */
static int combine(struct isolate *iso, const size_t *ids, size_t count, enum outcome o)
{
	g_autofree size_t *cur = g_memdup2(ids, count * sizeof(*ids));
	g_autofree size_t *tmp = g_new(size_t, count);
	size_t n = 2;
	int r;

	while (count >= 2) {
		bool found = false;

		for (size_t c = 0; c < n && !found; c++) {
			size_t lo = count * c / n, hi = count * (c + 1) / n;
			enum outcome ro;

			if ((r = test(iso, ISOLATE_KIND_COMBINE, cur + lo, hi - lo, &ro)))
				return r;
			if (HARM(ro)) {
				memmove(cur, cur + lo, (hi - lo) * sizeof(*cur));
				count = hi - lo;
				o = ro;
				n = 2;
				found = true;
			}
		}
		/* With two chunks the complements are the chunks themselves. */
		for (size_t c = 0; c < n && !found && n > 2; c++) {
			size_t lo = count * c / n, hi = count * (c + 1) / n, m = 0;
			enum outcome ro;

			for (size_t i = 0; i < count; i++)
				if (i < lo || i >= hi)
					tmp[m++] = cur[i];
			if ((r = test(iso, ISOLATE_KIND_COMBINE, tmp, m, &ro)))
				return r;
			if (HARM(ro)) {
				memcpy(cur, tmp, m * sizeof(*cur));
				count = m;
				o = ro;
				n = n - 1 > 2 ? n - 1 : 2;
				found = true;
			}
		}
		if (found)
			continue;
		if (n >= count)
			break;
		n = 2 * n < count ? 2 * n : count;
	}
	add_culprit(iso, cur, count, o);
	return 0;
}

/* Finds one culprit in ids (tested harmful, outcome o) by binary search and
 * moves what the search did not clear into rest (ascending): the culprit's
 * ids are dropped, every half that tested clean is dropped, and the halves
 * never armed stay. An inferred half (its sibling was clean while their
 * parent harmed) is trusted all the way down, one test per level; a wrong
 * inference (the harm needs attrs from both halves) shows at the leaf,
 * which is always armed alone, and then ddmin runs on the anchor: the
 * nearest set on the path that did harm when armed. */
static int find_one(struct isolate *iso, const size_t *ids, size_t count, enum outcome o,
		    GArray *rest)
{
	const size_t *aids = ids, *cur = ids;
	size_t acount = count, n = count;
	enum outcome ao = o;
	bool tested = true;
	g_autoptr(GArray) unarmed = g_array_new(FALSE, FALSE, sizeof(size_t));
	int r;

	while (n > 1) {
		size_t half = n / 2;
		enum outcome ra;

		if ((r = test(iso, ISOLATE_KIND_SPLIT, cur, half, &ra)))
			return r;
		if (HARM(ra)) {
			g_array_append_vals(unarmed, cur + half, n - half);
			n = half;
			o = ra;
			tested = true;
			aids = cur;
			acount = n;
			ao = ra;
		} else {
			cur += half;
			n -= half;
			tested = false;
		}
	}
	if (!tested && (r = test(iso, ISOLATE_KIND_SPLIT, cur, 1, &o)))
		return r;
	if (HARM(o)) {
		add_culprit(iso, cur, 1, o);
	} else if ((r = combine(iso, aids, acount, ao))) {
		return r;
	} else {
		/* The combination came from the anchor: what the search left
		 * unarmed outside it stays to be tested. */
		for (size_t i = 0; i < acount; i++)
			if (aids[i] != cur[0])
				g_array_append_val(unarmed, aids[i]);
	}
	/* The sets searched never hold an earlier culprit (screening batches
	 * are disjoint, rest and the across unions leave culprits out), so a
	 * culprit found here is the only one unarmed ids can belong to. */
	for (guint i = 0; i < unarmed->len; i++) {
		size_t id = g_array_index(unarmed, size_t, i);

		if (!isolate_culprit_of(iso, id))
			g_array_append_val(rest, id);
	}
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* A screened batch harmed: find a culprit, then arm what is left of the
 * batch once; while that harms, search it too. With d culprits in a batch
 * of n this costs about d (log2 n + 1) + 1 rounds, the last one showing
 * that nothing else in the batch harms. */
static int search(struct isolate *iso, const size_t *ids, size_t count, enum outcome o)
{
	g_autoptr(GArray) cur = g_array_new(FALSE, FALSE, sizeof(size_t));
	int r;

	g_array_append_vals(cur, ids, count);
	for (;;) {
		g_autoptr(GArray) rest = g_array_new(FALSE, FALSE, sizeof(size_t));

		if ((r = find_one(iso, (size_t *)cur->data, cur->len, o, rest)))
			return r;
		if (!rest->len)
			return 0;
		g_array_sort(rest, cmp_id);
		if ((r = test(iso, ISOLATE_KIND_RECHECK, (size_t *)rest->data, rest->len, &o)))
			return r;
		if (!HARM(o))
			return 0;
		g_array_unref(cur);
		cur = g_steal_pointer(&rest);
	}
}

/* The arm that isolated a culprit armed exactly its ids and harmed, so it
 * is the first of its `confirm` runs: k/n counts every arm of the culprit
 * alone. */
static int confirm_culprit(struct isolate *iso, struct isolate_culprit *c)
{
	enum outcome first = c->outcome;
	int r;

	c->k = c->n = 1;
	for (unsigned int i = 1; i < iso->confirm; i++) {
		enum outcome o;

		if ((r = test(iso, ISOLATE_KIND_CONFIRM, c->ids, c->count, &o)))
			return r;
		c->n++;
		if (HARM(o))
			c->k++;
	}
	c->outcome = first;
	return 0;
}

void isolate_cover_pairs(struct isolate *iso, bool on)
{
	iso->cover_pairs = on;
}

/* The one id of ids that, armed with fixed (tmp holds room for both),
 * still harms: a binary search with inference; the caller arms the result. */
static int narrow(struct isolate *iso, const size_t *ids, size_t count, const size_t *fixed,
		  size_t nfixed, size_t *tmp, size_t *found)
{
	int r;

	while (count > 1) {
		size_t half = count / 2;
		enum outcome o;

		memcpy(tmp, fixed, nfixed * sizeof(*tmp));
		memcpy(tmp + nfixed, ids, half * sizeof(*tmp));
		if ((r = test(iso, ISOLATE_KIND_COMBINE, tmp, nfixed + half, &o)))
			return r;
		if (HARM(o)) {
			count = half;
		} else {
			ids += half;
			count -= half;
		}
	}
	*found = ids[0];
	return 0;
}

/* Arms the half-batches a and b (of different screening batches) together,
 * minus the culprits already named (they would harm on their own). Each
 * half alone was screened clean, so a harm needs ids of both: one id of a
 * is found with all of b armed, then one id of b with it. When that pair
 * does not harm (the harm needs more than two), ddmin runs on the union. */
static int across(struct isolate *iso, const size_t *a, size_t na, const size_t *b, size_t nb)
{
	g_autofree size_t *ua = g_new(size_t, na + 1), *ub = g_new(size_t, nb + 1);
	g_autofree size_t *u = g_new(size_t, na + nb), *tmp = g_new(size_t, na + nb);
	size_t ma = 0, mb = 0, pair[2];
	enum outcome o, ou;
	int r;

	for (size_t i = 0; i < na; i++)
		if (!isolate_culprit_of(iso, a[i]))
			ua[ma++] = a[i];
	for (size_t i = 0; i < nb; i++)
		if (!isolate_culprit_of(iso, b[i]))
			ub[mb++] = b[i];
	if (!ma || !mb)
		return 0;
	memcpy(u, ua, ma * sizeof(*u));
	memcpy(u + ma, ub, mb * sizeof(*u));
	if ((r = test(iso, ISOLATE_KIND_ACROSS, u, ma + mb, &ou)) || !HARM(ou))
		return r;
	if ((r = narrow(iso, ua, ma, ub, mb, tmp, &pair[0])) ||
	    (r = narrow(iso, ub, mb, &pair[0], 1, tmp, &pair[1])))
		return r;
	if (pair[0] > pair[1]) {
		size_t t = pair[0];

		pair[0] = pair[1];
		pair[1] = t;
	}
	if ((r = test(iso, ISOLATE_KIND_COMBINE, pair, 2, &o)))
		return r;
	if (HARM(o)) {
		add_culprit(iso, pair, 2, o);
		return 0;
	}
	return combine(iso, u, ma + mb, ou);
}

void isolate_use_rule(struct isolate *iso, const struct perf_event_attr *attrs)
{
	iso->attrs = attrs;
}

/* What the tests of rule mode said, for the learner and for the search
 * that follows when no rule holds (test() keeps the last two). */
struct evidence {
	struct rule_learner *learner;
	const bool *cleared;          /* in a test that stayed clean */
	const enum outcome *alone;    /* first arm alone; OUTCOME_COUNT: never */
};

/* A sample already armed alone (for a rule refuted since) is not armed
 * again: its verdict stands, and the sequence stays a function of results. */
static int rule_test(struct isolate *iso, struct evidence *ev, enum isolate_kind kind,
		     const size_t *ids, size_t count, enum outcome *o)
{
	int r;

	if (kind == ISOLATE_KIND_SAMPLE && ev->alone[ids[0]] != OUTCOME_COUNT) {
		*o = ev->alone[ids[0]];
		return 0;
	}
	if ((r = test(iso, kind, ids, count, o)))
		return r;
	rule_learner_add(ev->learner, ids, count, HARM(*o));
	return 0;
}

/* A (field, value) pair as a hash key; config counts with its type. */
static gpointer feature(const struct perf_event_attr *a, enum attr_field f)
{
	uint64_t v = attr_get(a, f);

	if (f == ATTR_F_config)
		v = v * 31 + a->type;
	return (gpointer)(uintptr_t)(v + 1);
}

/* Up to ISOLATE_RULE_SAMPLE ids of cover, spread over the attr space:
 * greedily the id that adds the most (field, value) pairs the sample does
 * not hold yet, a new config only breaking ties (the lowest id on the
 * rest), until none adds a pair but configs. Configs alone would ask for
 * every event of a sweep: each sample already brings a new type when
 * there is one. A class that fits in a sample is armed whole: every cell
 * then has its own k/n, for the rounds `each` would spend confirming it. */
static void pick_sample(const struct isolate *iso, const GArray *cover, GArray *out)
{
	GHashTable *seen[ATTR_FIELD_COUNT];
	g_autofree bool *taken = g_new0(bool, cover->len + 1);

	if (cover->len <= ISOLATE_RULE_SAMPLE) {
		g_array_append_vals(out, cover->data, cover->len);
		return;
	}

	for (int f = 0; f < ATTR_FIELD_COUNT; f++)
		seen[f] = g_hash_table_new(g_direct_hash, g_direct_equal);
	while (out->len < MIN((guint)ISOLATE_RULE_SAMPLE, cover->len)) {
		guint best = 0, best_score = 0;

		for (guint i = 0; i < cover->len; i++) {
			const struct perf_event_attr *a = &iso->attrs[g_array_index(cover, size_t, i)];
			guint fresh = 0, score;

			if (taken[i])
				continue;
			for (int f = 0; f < ATTR_FIELD_COUNT; f++)
				if (f != ATTR_F_config)
					fresh += !g_hash_table_contains(seen[f], feature(a, (enum attr_field)f));
			score = 2 * fresh + !g_hash_table_contains(seen[ATTR_F_config],
								    feature(a, ATTR_F_config));
			/* The first sample is taken whatever it adds. */
			if ((fresh || !out->len) && score > best_score) {
				best_score = score;
				best = i;
			}
		}
		if (!best_score)
			break;
		taken[best] = true;
		for (int f = 0; f < ATTR_FIELD_COUNT; f++)
			g_hash_table_add(seen[f], feature(&iso->attrs[g_array_index(cover, size_t, best)],
							  (enum attr_field)f));
		g_array_append_val(out, g_array_index(cover, size_t, best));
	}
	for (int f = 0; f < ATTR_FIELD_COUNT; f++)
		g_hash_table_unref(seen[f]);
	g_array_sort(out, cmp_id);
}

/* Learns a rule and tests it, up to ISOLATE_RULE_TRIES times; on success
 * the culprits are what it matches. */
static int prove_rule(struct isolate *iso, struct evidence *ev)
{
	for (unsigned int tries = 0; tries < ISOLATE_RULE_TRIES; tries++) {
		g_autoptr(GArray) cover = g_array_new(FALSE, FALSE, sizeof(size_t));
		g_autoptr(GArray) clear = g_array_new(FALSE, FALSE, sizeof(size_t));
		g_autoptr(GArray) sample = g_array_new(FALSE, FALSE, sizeof(size_t));
		bool refuted = false;
		struct rule rl;
		enum outcome o, first = OUTCOME_COUNT;
		int r;

		if (rule_learn(ev->learner, &rl)) {
			pc_debug("isolate: %s", pc_errmsg());
			return 0;
		}
		for (size_t id = 0; id < iso->n_ids; id++) {
			if (rule_matches(&rl, &iso->attrs[id]))
				g_array_append_val(cover, id);
			else if (!ev->cleared[id])
				g_array_append_val(clear, id);
		}
		pick_sample(iso, cover, sample);
		for (guint i = 0; i < sample->len && !refuted; i++) {
			size_t id = g_array_index(sample, size_t, i);

			if ((r = rule_test(iso, ev, ISOLATE_KIND_SAMPLE, &id, 1, &o)))
				return r;
			refuted = !HARM(o);
			if (first == OUTCOME_COUNT)
				first = o;
		}
		for (guint lo = 0; lo < clear->len && !refuted; lo += (guint)iso->batch_size) {
			guint n = MIN((guint)iso->batch_size, clear->len - lo);

			if ((r = rule_test(iso, ev, ISOLATE_KIND_CLEAR,
					   &g_array_index(clear, size_t, lo), n, &o)))
				return r;
			refuted = HARM(o);
		}
		if (refuted) {
			g_autofree char *text = rule_to_string(&rl);

			pc_info("isolate: rule \"%s\" refuted (%u rounds so far)", text, iso->seq);
			iso->refuted++;
			continue;
		}
		iso->proven = true;
		iso->rule = rl;
		g_array_append_vals(iso->sample, sample->data, sample->len);
		for (guint i = 0; i < cover->len; i++) {
			size_t id = g_array_index(cover, size_t, i);
			bool alone = ev->alone[id] != OUTCOME_COUNT;
			struct isolate_culprit *c;

			add_culprit(iso, &id, 1, alone ? ev->alone[id] : first);
			c = iso->culprits->pdata[iso->culprits->len - 1];
			c->by_rule = !alone;
			c->rule_sample = bsearch(&id, sample->data, sample->len, sizeof(size_t), cmp_id) != NULL;
		}
		return 0;
	}
	return 0;
}

/* No rule holds: what the tests left unexplained in each harmful screening
 * batch is searched as without a rule. Ids that harmed alone are culprits
 * already; ids a clean test armed are left out, unless nothing else in the
 * batch can explain its harm (then the whole batch, searched as screened). */
static int search_unexplained(struct isolate *iso, struct evidence *ev, const size_t *all,
			      const GArray *harmful, const GArray *screened)
{
	int r;

	for (size_t id = 0; id < iso->n_ids; id++)
		if (ev->alone[id] != OUTCOME_COUNT && HARM(ev->alone[id]))
			add_culprit(iso, &id, 1, ev->alone[id]);
	for (guint b = 0; b < harmful->len; b++) {
		size_t lo = g_array_index(harmful, size_t, b);
		size_t n = MIN(iso->batch_size, iso->n_ids - lo);
		g_autoptr(GArray) rest = g_array_new(FALSE, FALSE, sizeof(size_t));
		bool explained = false;
		enum outcome o;

		for (size_t i = lo; i < lo + n; i++) {
			if (isolate_culprit_of(iso, all[i]))
				explained = true;
			else if (!ev->cleared[all[i]])
				g_array_append_val(rest, all[i]);
		}
		if (rest->len) {
			if ((r = test(iso, ISOLATE_KIND_RECHECK, (size_t *)rest->data, rest->len, &o)))
				return r;
			if (HARM(o)) {
				if ((r = search(iso, (size_t *)rest->data, rest->len, o)))
					return r;
				continue;
			}
		}
		/* As without a rule: the screening verdict stands for the
		 * batch (a host that died under it does not die again). */
		if (!explained && (r = search(iso, all + lo, n, g_array_index(screened, enum outcome, b))))
			return r;
	}
	return 0;
}

/* Screening of every batch, then a rule, else the search. */
static int run_rule(struct isolate *iso, const size_t *all)
{
	g_autoptr(rule_learner) learner = rule_learner_new(iso->attrs, iso->n_ids);
	g_autoptr(GArray) harmful = g_array_new(FALSE, FALSE, sizeof(size_t));
	g_autoptr(GArray) screened = g_array_new(FALSE, FALSE, sizeof(enum outcome));
	struct evidence ev = { learner, iso->cleared, iso->alone };
	int r;

	for (size_t lo = 0; lo < iso->n_ids; lo += iso->batch_size) {
		size_t n = MIN(iso->batch_size, iso->n_ids - lo);
		enum outcome o;

		if ((r = rule_test(iso, &ev, ISOLATE_KIND_SCREEN, all + lo, n, &o)))
			return r;
		if (HARM(o)) {
			g_array_append_val(harmful, lo);
			g_array_append_val(screened, o);
		}
	}
	if (!harmful->len)
		return 0;
	if ((r = prove_rule(iso, &ev)))
		return r;
	if (iso->proven)
		return 0;
	return search_unexplained(iso, &ev, all, harmful, screened);
}

int isolate_run(struct isolate *iso, isolate_test_fn fn, void *ctx)
{
	g_autofree size_t *all = g_new(size_t, iso->n_ids ? iso->n_ids : 1);
	int r;

	iso->fn = fn;
	iso->ctx = ctx;
	iso->seq = 0;
	g_hash_table_remove_all(iso->culprit_of);
	g_ptr_array_set_size(iso->culprits, 0);
	g_hash_table_remove_all(iso->memo);
	iso->proven = false;
	iso->refuted = 0;
	g_array_set_size(iso->sample, 0);
	g_ptr_array_set_size(iso->harmful, 0);
	iso->stopped = false;
	for (size_t i = 0; i < iso->n_ids; i++) {
		all[i] = i;
		iso->cleared[i] = false;
		iso->alone[i] = OUTCOME_COUNT;
	}

	if (iso->attrs) {
		if ((r = run_rule(iso, all)))
			return r;
	} else {
		for (size_t lo = 0; lo < iso->n_ids; lo += iso->batch_size) {
			size_t n = MIN(iso->batch_size, iso->n_ids - lo);
			enum outcome o;

			if ((r = test(iso, ISOLATE_KIND_SCREEN, all + lo, n, &o)))
				return r;
			if (HARM(o) && (r = search(iso, all + lo, n, o)))
				return r;
		}
	}
	if (iso->cover_pairs && iso->n_ids > iso->batch_size) {
		/* Each screening batch in two halves (one when it holds a
		 * single id), so two halves fit in about one batch. */
		struct half {
			size_t lo, n, batch;
		};
		g_autoptr(GArray) halves = g_array_new(FALSE, FALSE, sizeof(struct half));

		for (size_t lo = 0; lo < iso->n_ids; lo += iso->batch_size) {
			size_t n = MIN(iso->batch_size, iso->n_ids - lo), first = (n + 1) / 2;
			struct half h1 = { lo, first, lo / iso->batch_size };
			struct half h2 = { lo + first, n - first, lo / iso->batch_size };

			g_array_append_val(halves, h1);
			if (h2.n)
				g_array_append_val(halves, h2);
		}
		for (guint i = 0; i < halves->len; i++)
			for (guint j = i + 1; j < halves->len; j++) {
				const struct half *a = &g_array_index(halves, struct half, i);
				const struct half *b = &g_array_index(halves, struct half, j);

				if (a->batch != b->batch &&
				    (r = across(iso, all + a->lo, a->n, all + b->lo, b->n)))
					return r;
			}
	}
	for (guint i = 0; i < iso->culprits->len; i++) {
		struct isolate_culprit *c = iso->culprits->pdata[i];

		if (!c->by_rule && (r = confirm_culprit(iso, c)))
			return r;
	}
	return 0;
}

unsigned int isolate_rounds(const struct isolate *iso)
{
	return iso->seq;
}

size_t isolate_culprit_count(const struct isolate *iso)
{
	return iso->culprits->len;
}

const struct isolate_culprit *isolate_culprit_at(const struct isolate *iso, size_t i)
{
	return i < iso->culprits->len ? iso->culprits->pdata[i] : NULL;
}

const struct isolate_culprit *isolate_culprit_of(const struct isolate *iso, size_t id)
{
	return g_hash_table_lookup(iso->culprit_of, GSIZE_TO_POINTER(id + 1));
}

const struct rule *isolate_rule(const struct isolate *iso, const size_t **ids, size_t *count)
{
	if (ids)
		*ids = iso->proven ? (const size_t *)iso->sample->data : NULL;
	if (count)
		*count = iso->proven ? iso->sample->len : 0;
	return iso->proven ? &iso->rule : NULL;
}

unsigned int isolate_rules_refuted(const struct isolate *iso)
{
	return iso->refuted;
}

/* Whether the smaller set's ids are all in the larger (both ascending). */
static bool set_within(const struct set *in, const struct set *of)
{
	size_t j = 0;

	for (size_t i = 0; i < in->count; i++) {
		while (j < of->count && of->ids[j] < in->ids[i])
			j++;
		if (j == of->count || of->ids[j] != in->ids[i])
			return false;
	}
	return true;
}

void isolate_stop(struct isolate *iso)
{
	if (iso->stopped)
		return;
	iso->stopped = true;
	/* An id that harmed alone is a culprit, found or not yet. */
	for (size_t id = 0; id < iso->n_ids; id++)
		if (iso->alone[id] != OUTCOME_COUNT && HARM(iso->alone[id]) &&
		    !isolate_culprit_of(iso, id))
			add_culprit(iso, &id, 1, iso->alone[id]);
	/* A culprit's finding arm (alone, or its combination together) was
	 * the first of its confirm runs. */
	for (guint i = 0; i < iso->culprits->len; i++) {
		struct isolate_culprit *c = iso->culprits->pdata[i];

		if (!c->by_rule && !c->n)
			c->k = c->n = 1;
	}
}

bool isolate_cleared(const struct isolate *iso, size_t id)
{
	return id < iso->n_ids && iso->cleared[id];
}

GPtrArray *isolate_unresolved(const struct isolate *iso)
{
	GPtrArray *rest = g_ptr_array_new_with_free_func(set_free), *out;

	/* A harmful test that holds a culprit may owe its harm to it alone:
	 * it says nothing of its other ids. One that holds none says the
	 * harm is among its ids that no clean test armed. */
	for (guint t = 0; t < iso->harmful->len; t++) {
		const struct set *h = iso->harmful->pdata[t];
		struct set *r = g_new0(struct set, 1);
		bool culprit = false;

		r->ids = g_new(size_t, h->count);
		for (size_t i = 0; i < h->count && !culprit; i++) {
			culprit = isolate_culprit_of(iso, h->ids[i]) != NULL;
			if (!iso->cleared[h->ids[i]])
				r->ids[r->count++] = h->ids[i];
		}
		if (culprit || !r->count) {
			set_free(r);
			continue;
		}
		qsort(r->ids, r->count, sizeof(*r->ids), cmp_id);
		g_ptr_array_add(rest, r);
	}
	/* Only the smallest: harm among a set implies harm among any set
	 * that holds it. Equal sets count once. */
	out = g_ptr_array_new_with_free_func(g_free);
	for (guint a = 0; a < rest->len; a++) {
		const struct set *x = rest->pdata[a];
		bool implied = false;

		for (guint b = 0; b < rest->len && !implied; b++) {
			const struct set *y = rest->pdata[b];

			if (a != b && set_within(y, x) && (y->count < x->count || b < a))
				implied = true;
		}
		if (!implied) {
			struct isolate_group *g = g_malloc(sizeof(*g) + x->count * sizeof(size_t));

			g->count = x->count;
			memcpy(g->ids, x->ids, x->count * sizeof(size_t));
			g_ptr_array_add(out, g);
		}
	}
	g_ptr_array_unref(rest);
	return out;
}
