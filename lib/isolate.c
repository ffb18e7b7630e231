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
};

const char *isolate_kind_name(enum isolate_kind k)
{
	return k < ISOLATE_KIND_COUNT ? kind_names[k] : "?";
}

struct isolate {
	size_t n_ids, batch_size;
	unsigned int confirm;
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

/* ids is harmful: tested so (tested) or inferred because its sibling was
 * clean while parent was harmful. */
static int search(struct isolate *iso, const size_t *ids, size_t count, enum outcome o,
		  bool tested, const size_t *pids, size_t pcount, enum outcome po)
{
	size_t half = count / 2;
	enum outcome ra, rb = OUTCOME_OK, rs;
	int r;

	if (count == 1) {
		if (!tested) {
			if ((r = test(iso, ISOLATE_KIND_SPLIT, ids, 1, &o)))
				return r;
			if (!HARM(o))
				return combine(iso, pids, pcount, po);
		}
		add_culprit(iso, ids, 1, o);
		return 0;
	}
	if ((r = test(iso, ISOLATE_KIND_SPLIT, ids, half, &ra)))
		return r;
	if (HARM(ra) && (r = search(iso, ids, half, ra, true, ids, count, o)))
		return r;
	if (!HARM(ra) && tested)
		return search(iso, ids + half, count - half, o, false, ids, count, o);
	if ((r = test(iso, ISOLATE_KIND_SPLIT, ids + half, count - half, &rb)))
		return r;
	if (HARM(rb) && (r = search(iso, ids + half, count - half, rb, true, ids, count, o)))
		return r;
	if (HARM(ra) || HARM(rb))
		return 0;
	/* Neither half harms alone. */
	if (tested)
		return combine(iso, ids, count, o);
	if ((r = test(iso, ISOLATE_KIND_RECHECK, ids, count, &rs)))
		return r;
	if (HARM(rs))
		return combine(iso, ids, count, rs);
	return combine(iso, pids, pcount, po);
}

static int confirm_culprit(struct isolate *iso, struct isolate_culprit *c)
{
	enum outcome first = OUTCOME_COUNT;
	int r;

	if (!iso->confirm) {
		c->k = c->n = 1; /* the run that isolated it */
		return 0;
	}
	c->k = c->n = 0;
	for (unsigned int i = 0; i < iso->confirm; i++) {
		enum outcome o;

		if ((r = test(iso, ISOLATE_KIND_CONFIRM, c->ids, c->count, &o)))
			return r;
		c->n++;
		if (HARM(o)) {
			c->k++;
			if (first == OUTCOME_COUNT)
				first = o;
		}
	}
	if (first != OUTCOME_COUNT)
		c->outcome = first;
	return 0;
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
		if (HARM(o) && (r = search(iso, all + lo, n, o, true, all + lo, n, o)))
			return r;
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
