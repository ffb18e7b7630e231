#include "rule.h"

#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static const char *const op_names[RULE_OP_COUNT] = {
	[RULE_OP_EQ] = "==",
	[RULE_OP_NE] = "!=",
	[RULE_OP_GT0] = "nonzero",
	[RULE_OP_SET] = "set",
	[RULE_OP_CLEAR] = "clear",
};

const char *rule_op_name(enum rule_op op)
{
	return op < RULE_OP_COUNT ? op_names[op] : "?";
}

bool rule_lit_matches(const struct rule_lit *l, const struct perf_event_attr *attr)
{
	uint64_t v;

	switch (l->subject) {
	case RULE_SUBJECT_EVENT: {
		bool eq = attr->type == l->a && attr->config == l->b;

		return l->op == RULE_OP_NE ? !eq : eq;
	}
	case RULE_SUBJECT_TYPE:
		return attr->type == l->a;
	case RULE_SUBJECT_FIELD:
		v = attr_get(attr, l->field);
		switch (l->op) {
		case RULE_OP_EQ:
			return v == l->a;
		case RULE_OP_NE:
			return v != l->a;
		case RULE_OP_GT0:
			return v != 0;
		case RULE_OP_SET:
			return (v & l->a) != 0;
		case RULE_OP_CLEAR:
			return (v & l->a) == 0;
		default:
			return false;
		}
	default:
		return false;
	}
}

bool rule_matches(const struct rule *r, const struct perf_event_attr *attr)
{
	for (size_t i = 0; i < r->count; i++)
		if (!rule_lit_matches(&r->lits[i], attr))
			return false;
	return true;
}

/* ---- text ---------------------------------------------------------------- */

static const char *const type_names[] = {
	[PERF_TYPE_HARDWARE] = "hardware",
	[PERF_TYPE_SOFTWARE] = "software",
	[PERF_TYPE_TRACEPOINT] = "tracepoint",
	[PERF_TYPE_HW_CACHE] = "hw-cache",
	[PERF_TYPE_RAW] = "raw",
	[PERF_TYPE_BREAKPOINT] = "breakpoint",
};

/* perf's names (tools/perf/util/parse-events.c event_symbols_*). */
static const char *const hw_names[] = {
	"cpu-cycles", "instructions", "cache-references", "cache-misses",
	"branch-instructions", "branch-misses", "bus-cycles",
	"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches",
	"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
	"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
};

/* PERF_SAMPLE_* by bit, as perf prints them. */
static const char *const sample_names[] = {
	"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD",
	"STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT",
	"DATA_SRC", "IDENTIFIER", "TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX",
	"CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
};

static void append_type(GString *s, uint64_t type)
{
	if (type < G_N_ELEMENTS(type_names))
		g_string_append(s, type_names[type]);
	else
		g_string_append_printf(s, "%" PRIu64, type);
}

static void append_config(GString *s, uint64_t type, uint64_t config)
{
	if (type == PERF_TYPE_HARDWARE && config < G_N_ELEMENTS(hw_names))
		g_string_append(s, hw_names[config]);
	else if (type == PERF_TYPE_SOFTWARE && config < G_N_ELEMENTS(sw_names))
		g_string_append(s, sw_names[config]);
	else
		g_string_append_printf(s, "%#" PRIx64, config);
}

static int mask_bit(uint64_t mask)
{
	return mask ? __builtin_ctzll(mask) : -1;
}

static void append_sample_bit(GString *s, uint64_t mask)
{
	int b = mask_bit(mask);

	if (b >= 0 && (size_t)b < G_N_ELEMENTS(sample_names))
		g_string_append(s, sample_names[b]);
	else
		g_string_append_printf(s, "bit%d", b);
}

static void append_lit(GString *s, const struct rule_lit *l)
{
	const char *f = l->subject == RULE_SUBJECT_FIELD ? attr_field_name(l->field) : "";

	switch (l->subject) {
	case RULE_SUBJECT_EVENT:
		g_string_append(s, l->op == RULE_OP_NE ? "not(type=" : "type=");
		append_type(s, l->a);
		g_string_append(s, " config=");
		append_config(s, l->a, l->b);
		if (l->op == RULE_OP_NE)
			g_string_append_c(s, ')');
		return;
	case RULE_SUBJECT_TYPE:
		g_string_append(s, "type=");
		append_type(s, l->a);
		return;
	default:
		break;
	}
	switch (l->op) {
	case RULE_OP_EQ:
		g_string_append_printf(s, "%s=%" PRIu64, f, l->a);
		break;
	case RULE_OP_NE:
		g_string_append_printf(s, "%s!=%" PRIu64, f, l->a);
		break;
	case RULE_OP_GT0:
		g_string_append_printf(s, l->field == ATTR_F_precise_ip ? "%s>0" : "%s!=0", f);
		break;
	case RULE_OP_SET:
	case RULE_OP_CLEAR:
		g_string_append_printf(s, "%s%s&", l->op == RULE_OP_CLEAR ? "!" : "", f);
		append_sample_bit(s, l->a);
		break;
	default:
		g_string_append(s, "?");
	}
}

char *rule_to_string(const struct rule *r)
{
	GString *s = g_string_new(NULL);

	for (size_t i = 0; i < r->count; i++) {
		if (i)
			g_string_append_c(s, ' ');
		append_lit(s, &r->lits[i]);
	}
	return g_string_free(s, FALSE);
}

json_t *rule_to_json(const struct rule *r)
{
	g_autofree char *text = rule_to_string(r);
	json_t *lits = json_array();

	for (size_t i = 0; i < r->count; i++) {
		const struct rule_lit *l = &r->lits[i];
		json_t *o;

		switch (l->subject) {
		case RULE_SUBJECT_EVENT:
			o = json_pack("{s:s,s:s,s:I,s:I}", "field", "event", "op", rule_op_name(l->op),
				      "type", (json_int_t)l->a, "config", (json_int_t)l->b);
			break;
		case RULE_SUBJECT_TYPE:
			o = json_pack("{s:s,s:s,s:I}", "field", "type", "op", rule_op_name(l->op),
				      "value", (json_int_t)l->a);
			break;
		default:
			o = json_pack("{s:s,s:s}", "field", attr_field_name(l->field),
				      "op", rule_op_name(l->op));
			if (l->op == RULE_OP_SET || l->op == RULE_OP_CLEAR) {
				g_autoptr(GString) b = g_string_new(NULL);

				append_sample_bit(b, l->a);
				json_object_set_new(o, "bit", json_string(b->str));
			} else if (l->op != RULE_OP_GT0) {
				json_object_set_new(o, "value", json_integer((json_int_t)l->a));
			}
		}
		json_array_append_new(lits, o);
	}
	return json_pack("{s:s,s:o}", "text", text, "literals", lits);
}

/* ---- learning ------------------------------------------------------------- */

/* Sets of ids as bitsets of n bits: the learner ANDs literals and checks
 * them against every verdict, thousands of times per learn. */
struct verdict {
	guint64 *bits;
	bool harmful;
};

struct rule_learner {
	const struct perf_event_attr *attrs;
	size_t n, words;
	GArray *verdicts;   /* struct verdict */
};

static void verdict_clear(gpointer p)
{
	g_free(((struct verdict *)p)->bits);
}

struct rule_learner *rule_learner_new(const struct perf_event_attr *attrs, size_t n)
{
	struct rule_learner *l = g_new0(struct rule_learner, 1);

	l->attrs = attrs;
	l->n = n;
	l->words = (n + 63) / 64 ? (n + 63) / 64 : 1;
	l->verdicts = g_array_new(FALSE, FALSE, sizeof(struct verdict));
	g_array_set_clear_func(l->verdicts, verdict_clear);
	return l;
}

void rule_learner_free(struct rule_learner *l)
{
	if (!l)
		return;
	g_array_unref(l->verdicts);
	g_free(l);
}

void rule_learner_add(struct rule_learner *l, const size_t *ids, size_t count, bool harmful)
{
	struct verdict v = { g_new0(guint64, l->words), harmful };

	for (size_t i = 0; i < count; i++)
		if (ids[i] < l->n)
			v.bits[ids[i] / 64] |= 1ull << (ids[i] % 64);
	g_array_append_val(l->verdicts, v);
}

size_t rule_learner_verdicts(const struct rule_learner *l)
{
	return l->verdicts->len;
}

struct cand {
	struct rule_lit lit;
	guint64 *bits;
	size_t pop;
};

static void cand_clear(gpointer p)
{
	g_free(((struct cand *)p)->bits);
}

struct gen {
	const struct rule_learner *l;
	GArray *cands;        /* struct cand */
	GHashTable *seen;     /* GBytes of bits (owned by the key) */
};

/* Adds lit when some attr meets it and some does not, and no earlier
 * literal matches the same attrs. */
static void gen_add(struct gen *g, struct rule_lit lit)
{
	const struct rule_learner *l = g->l;
	struct cand c = { lit, g_new0(guint64, l->words), 0 };
	GBytes *key;

	for (size_t i = 0; i < l->n; i++)
		if (rule_lit_matches(&lit, &l->attrs[i])) {
			c.bits[i / 64] |= 1ull << (i % 64);
			c.pop++;
		}
	if (!c.pop || c.pop == l->n) {
		g_free(c.bits);
		return;
	}
	key = g_bytes_new(c.bits, l->words * sizeof(guint64));
	if (g_hash_table_contains(g->seen, key)) {
		g_bytes_unref(key);
		g_free(c.bits);
		return;
	}
	g_hash_table_add(g->seen, key);
	g_array_append_val(g->cands, c);
}

static gint cmp_u64_pair(gconstpointer a, gconstpointer b)
{
	const uint64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Every candidate literal, in canonical order (rule.h). */
static GArray *candidates(const struct rule_learner *l)
{
	struct gen g = { l, g_array_new(FALSE, FALSE, sizeof(struct cand)),
			 g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
					       (GDestroyNotify)g_bytes_unref, NULL) };
	g_autoptr(GArray) events = g_array_new(FALSE, FALSE, 2 * sizeof(uint64_t));
	uint64_t sample_bits = 0, precise = 0;

	g_array_set_clear_func(g.cands, cand_clear);
	for (size_t i = 0; i < l->n; i++) {
		uint64_t ev[2] = { l->attrs[i].type, l->attrs[i].config };

		g_array_append_val(events, ev);
		sample_bits |= l->attrs[i].sample_type;
		precise |= 1ull << (l->attrs[i].precise_ip & 3);
	}
	g_array_sort(events, cmp_u64_pair);
	for (guint i = 0; i < events->len; i++) {
		const uint64_t *ev = &g_array_index(events, uint64_t, 2 * i);

		if (i && !cmp_u64_pair(ev, &g_array_index(events, uint64_t, 2 * (i - 1))))
			continue;
		gen_add(&g, (struct rule_lit){ RULE_SUBJECT_EVENT, 0, RULE_OP_EQ, ev[0], ev[1] });
		gen_add(&g, (struct rule_lit){ RULE_SUBJECT_EVENT, 0, RULE_OP_NE, ev[0], ev[1] });
	}
	for (guint i = 0; i < events->len; i++) {
		const uint64_t *ev = &g_array_index(events, uint64_t, 2 * i);

		if (!i || ev[0] != g_array_index(events, uint64_t, 2 * (i - 1)))
			gen_add(&g, (struct rule_lit){ RULE_SUBJECT_TYPE, 0, RULE_OP_EQ, ev[0], 0 });
	}
	/* >0 first: it reads better than the !=0 it equals. */
	gen_add(&g, (struct rule_lit){ RULE_SUBJECT_FIELD, ATTR_F_precise_ip, RULE_OP_GT0, 0, 0 });
	for (uint64_t v = 0; v < 4; v++)
		if (precise & (1ull << v)) {
			gen_add(&g, (struct rule_lit){ RULE_SUBJECT_FIELD, ATTR_F_precise_ip, RULE_OP_EQ, v, 0 });
			gen_add(&g, (struct rule_lit){ RULE_SUBJECT_FIELD, ATTR_F_precise_ip, RULE_OP_NE, v, 0 });
		}
#define BIT_LITS(name)                                                                      \
	if (ATTR_F_##name != ATTR_F_precise_ip) {                                           \
		gen_add(&g, (struct rule_lit){ RULE_SUBJECT_FIELD, ATTR_F_##name, RULE_OP_EQ, 0, 0 }); \
		gen_add(&g, (struct rule_lit){ RULE_SUBJECT_FIELD, ATTR_F_##name, RULE_OP_EQ, 1, 0 }); \
	}
	ATTR_BITS(BIT_LITS)
#undef BIT_LITS
	for (int b = 0; b < 64; b++)
		if (sample_bits & (1ull << b)) {
			gen_add(&g, (struct rule_lit){ RULE_SUBJECT_FIELD, ATTR_F_sample_type, RULE_OP_SET, 1ull << b, 0 });
			gen_add(&g, (struct rule_lit){ RULE_SUBJECT_FIELD, ATTR_F_sample_type, RULE_OP_CLEAR, 1ull << b, 0 });
		}
	gen_add(&g, (struct rule_lit){ RULE_SUBJECT_FIELD, ATTR_F_branch_sample_type, RULE_OP_GT0, 0, 0 });
	gen_add(&g, (struct rule_lit){ RULE_SUBJECT_FIELD, ATTR_F_branch_sample_type, RULE_OP_EQ, 0, 0 });
	g_hash_table_unref(g.seen);
	return g.cands;
}

static bool meets(const guint64 *a, const guint64 *b, size_t words)
{
	for (size_t w = 0; w < words; w++)
		if (a[w] & b[w])
			return true;
	return false;
}

/* Whether the attrs in cover explain the verdicts: `harmful_only` checks
 * only harmful ones (what a single literal must pass to be worth ANDing). */
static bool fits(const struct rule_learner *l, const guint64 *cover, bool harmful_only)
{
	for (guint i = 0; i < l->verdicts->len; i++) {
		const struct verdict *v = &g_array_index(l->verdicts, struct verdict, i);

		if (harmful_only && !v->harmful)
			continue;
		if (meets(cover, v->bits, l->words) != v->harmful)
			return false;
	}
	return true;
}

static size_t popcount(const guint64 *b, size_t words)
{
	size_t n = 0;

	for (size_t w = 0; w < words; w++)
		n += (size_t)__builtin_popcountll(b[w]);
	return n;
}

int rule_learn(struct rule_learner *l, struct rule *out)
{
	g_autoptr(GArray) cands = candidates(l);
	g_autofree guint64 *and = g_new0(guint64, l->words);
	g_autoptr(GArray) useful = g_array_new(FALSE, FALSE, sizeof(guint));
	size_t best_pop = SIZE_MAX;
	bool any_harm = false;

	for (guint i = 0; i < l->verdicts->len; i++)
		any_harm |= g_array_index(l->verdicts, struct verdict, i).harmful;
	if (!any_harm)
		return pc_fail(ENOENT, "rule: no harmful verdict to explain");

	memset(out, 0, sizeof(*out));
	/* A conjunction matches a subset of each literal's attrs, so a
	 * literal that misses a harmful set cannot be part of any rule. */
	for (guint i = 0; i < cands->len; i++) {
		const struct cand *c = &g_array_index(cands, struct cand, i);

		if (!fits(l, c->bits, true))
			continue;
		g_array_append_val(useful, i);
		if (c->pop < best_pop && fits(l, c->bits, false)) {
			best_pop = c->pop;
			out->count = 1;
			out->lits[0] = c->lit;
		}
	}
	if (out->count)
		return 0;
	for (guint i = 0; i < useful->len; i++) {
		const struct cand *a = &g_array_index(cands, struct cand, g_array_index(useful, guint, i));

		for (guint j = i + 1; j < useful->len; j++) {
			const struct cand *b = &g_array_index(cands, struct cand,
							      g_array_index(useful, guint, j));
			size_t pop;

			for (size_t w = 0; w < l->words; w++)
				and[w] = a->bits[w] & b->bits[w];
			pop = popcount(and, l->words);
			/* Equal to one literal: that literal alone was tried. */
			if (!pop || pop == a->pop || pop == b->pop || pop >= best_pop)
				continue;
			if (!fits(l, and, false))
				continue;
			best_pop = pop;
			out->count = 2;
			out->lits[0] = a->lit;
			out->lits[1] = b->lit;
		}
	}
	if (out->count)
		return 0;
	return pc_fail(ENOENT, "rule: no rule of at most %d literals fits the %u verdicts",
		       RULE_LITS_MAX, l->verdicts->len);
}
