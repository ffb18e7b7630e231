#include "isolate.h"

#include "log.h"

#include <errno.h>
#include <string.h>

static const char *const kind_names[ISOLATE_KIND_COUNT] = {
	[ISOLATE_KIND_SCREEN] = "screen",
	[ISOLATE_KIND_SPLIT] = "split",
	[ISOLATE_KIND_RECHECK] = "recheck",
	[ISOLATE_KIND_COMBINE] = "combine",
	[ISOLATE_KIND_CONFIRM] = "confirm",
	[ISOLATE_KIND_ACROSS] = "across",
};

const char *isolate_kind_name(enum isolate_kind k)
{
	return k < ISOLATE_KIND_COUNT ? kind_names[k] : "?";
}

struct isolate {
	size_t n_ids, batch_size;
	unsigned int confirm;
	bool cover_pairs;
	/* per run */
	isolate_test_fn fn;
	void *ctx;
	unsigned int seq;
	GPtrArray *culprits;   /* struct isolate_culprit * */
	GHashTable *memo;      /* "id,id,..." -> outcome + 1 */
};

/* A set of ids: a view (ids, count) into an array owned elsewhere or here. */
struct set {
	size_t *ids;
	size_t count;
};

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
	iso->memo = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return iso;
}

void isolate_free(struct isolate *iso)
{
	if (!iso)
		return;
	g_ptr_array_unref(iso->culprits);
	g_hash_table_unref(iso->memo);
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
	return 0;
}

static void add_culprit(struct isolate *iso, const size_t *ids, size_t count, enum outcome o)
{
	struct isolate_culprit *c = g_new0(struct isolate_culprit, 1);

	c->ids = g_memdup2(ids, count * sizeof(*ids));
	c->count = count;
	c->outcome = o;
	g_ptr_array_add(iso->culprits, c);
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

int isolate_run(struct isolate *iso, isolate_test_fn fn, void *ctx)
{
	g_autofree size_t *all = g_new(size_t, iso->n_ids ? iso->n_ids : 1);
	int r;

	iso->fn = fn;
	iso->ctx = ctx;
	iso->seq = 0;
	g_ptr_array_set_size(iso->culprits, 0);
	g_hash_table_remove_all(iso->memo);
	for (size_t i = 0; i < iso->n_ids; i++)
		all[i] = i;

	for (size_t lo = 0; lo < iso->n_ids; lo += iso->batch_size) {
		size_t n = MIN(iso->batch_size, iso->n_ids - lo);
		enum outcome o;

		if ((r = test(iso, ISOLATE_KIND_SCREEN, all + lo, n, &o)))
			return r;
		if (HARM(o) && (r = search(iso, all + lo, n, o)))
			return r;
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
	for (guint i = 0; i < iso->culprits->len; i++)
		if ((r = confirm_culprit(iso, iso->culprits->pdata[i])))
			return r;
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
	for (guint i = 0; i < iso->culprits->len; i++) {
		const struct isolate_culprit *c = iso->culprits->pdata[i];

		for (size_t j = 0; j < c->count; j++)
			if (c->ids[j] == id)
				return c;
	}
	return NULL;
}
