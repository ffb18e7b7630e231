/* The rule learner on recorded batch verdicts. The attr space: two software
 * events (cpu-clock, task-clock) x precise_ip 0..3 x exclude_guest x
 * exclude_host, id = event*16 + precise_ip*4 + exclude_guest*2 +
 * exclude_host. Expected rules are written by hand from that layout. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "rule.h"
#include "log.h"

#include <errno.h>
#include <string.h>

#define N 32

static struct perf_event_attr attrs[N];

static size_t id_of(unsigned int ev, unsigned int p, unsigned int eg, unsigned int eh)
{
	return ev * 16 + p * 4 + eg * 2 + eh;
}

static int setup(void **state)
{
	memset(attrs, 0, sizeof(attrs));
	for (unsigned int ev = 0; ev < 2; ev++)
		for (unsigned int p = 0; p < 4; p++)
			for (unsigned int eg = 0; eg < 2; eg++)
				for (unsigned int eh = 0; eh < 2; eh++) {
					struct perf_event_attr *a = &attrs[id_of(ev, p, eg, eh)];

					a->type = PERF_TYPE_SOFTWARE;
					a->config = ev ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_CPU_CLOCK;
					a->size = sizeof(*a);
					a->precise_ip = p;
					a->exclude_guest = eg;
					a->exclude_host = eh;
				}
	return 0;
}

/* The four screening batches of 8 ids. */
static void add_screening(struct rule_learner *l, const bool harmful[4])
{
	for (size_t b = 0; b < 4; b++) {
		size_t ids[8];

		for (size_t i = 0; i < 8; i++)
			ids[i] = b * 8 + i;
		rule_learner_add(l, ids, 8, harmful[b]);
	}
}

static void add_where(struct rule_learner *l, bool harmful, bool (*pick)(unsigned int ev, unsigned int p,
									      unsigned int eg, unsigned int eh))
{
	size_t ids[N], n = 0;

	for (unsigned int ev = 0; ev < 2; ev++)
		for (unsigned int p = 0; p < 4; p++)
			for (unsigned int eg = 0; eg < 2; eg++)
				for (unsigned int eh = 0; eh < 2; eh++)
					if (pick(ev, p, eg, eh))
						ids[n++] = id_of(ev, p, eg, eh);
	rule_learner_add(l, ids, n, harmful);
}

static bool guest_excluded(unsigned int ev, unsigned int p, unsigned int eg, unsigned int eh)
{
	return eg;
}

static bool not_precise(unsigned int ev, unsigned int p, unsigned int eg, unsigned int eh)
{
	return !p;
}

static void assert_rule(struct rule_learner *l, const char *text)
{
	struct rule r;
	g_autofree char *got = NULL;

	assert_int_equal(rule_learn(l, &r), 0);
	got = rule_to_string(&r);
	assert_string_equal(got, text);
}

static void test_single_field(void **state)
{
	static const bool all[4] = { true, true, true, true };
	g_autoptr(rule_learner) l = rule_learner_new(attrs, N);
	struct rule r;

	/* Harm: every attr without exclude_guest. Every screening batch holds
	 * one, and the 16 guest-excluded attrs armed together stayed clean. */
	add_screening(l, all);
	add_where(l, false, guest_excluded);
	assert_rule(l, "exclude_guest=0");
	assert_int_equal(rule_learn(l, &r), 0);
	assert_int_equal(r.count, 1);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(rule_matches(&r, &attrs[i]), !attrs[i].exclude_guest);
}

static void test_two_field_conjunction(void **state)
{
	static const bool all[4] = { true, true, true, true };
	g_autoptr(rule_learner) l = rule_learner_new(attrs, N);
	size_t one = id_of(1, 2, 0, 1);
	struct rule r;
	json_t *j;

	/* 2012: precise events without exclude_guest. */
	add_screening(l, all);
	add_where(l, false, guest_excluded);
	add_where(l, false, not_precise);
	rule_learner_add(l, &one, 1, true);
	assert_rule(l, "precise_ip>0 exclude_guest=0");
	assert_int_equal(rule_learn(l, &r), 0);
	j = rule_to_json(&r);
	{
		g_autofree char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);

		assert_string_equal(s, "{\"literals\":[{\"field\":\"precise_ip\",\"op\":\"nonzero\"},"
				       "{\"field\":\"exclude_guest\",\"op\":\"==\",\"value\":0}],"
				       "\"text\":\"precise_ip>0 exclude_guest=0\"}");
	}
	json_decref(j);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(rule_matches(&r, &attrs[i]),
				 attrs[i].precise_ip > 0 && !attrs[i].exclude_guest);
}

static void test_clean_batch_refutes(void **state)
{
	static const bool first_only[4] = { true, false, false, false };
	g_autoptr(rule_learner) l = rule_learner_new(attrs, N);
	size_t bad = id_of(0, 1, 0, 0), clean[2] = { id_of(0, 0, 0, 0), id_of(0, 0, 0, 1) };
	size_t ids_seen = 0;
	struct rule r;

	/* Batch 0 (cpu-clock, precise_ip 0 and 1) harmed; the rest is clean:
	 * the most specific fitting rule is precise_ip=0 on cpu-clock... */
	add_screening(l, first_only);
	assert_rule(l, "type=software config=cpu-clock precise_ip=0");
	/* ...until precise_ip=0 without exclusions is armed clean: then
	 * no fitting rule may match those, and the one harmful attr still fits. */
	rule_learner_add(l, clean, 2, false);
	rule_learner_add(l, &bad, 1, true);
	assert_int_equal(rule_learn(l, &r), 0);
	for (size_t i = 0; i < 2; i++)
		assert_false(rule_matches(&r, &attrs[clean[i]]));
	assert_true(rule_matches(&r, &attrs[bad]));
	for (size_t i = 8; i < N; i++)
		ids_seen += rule_matches(&r, &attrs[i]);
	assert_int_equal(ids_seen, 0);
	/* A clean batch holding the only harmful set leaves nothing. */
	rule_learner_add(l, &bad, 1, false);
	assert_int_equal(rule_learn(l, &r), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "no rule"));
}

static void test_no_short_rule(void **state)
{
	g_autoptr(rule_learner) l = rule_learner_new(attrs, N);
	size_t bad = id_of(1, 2, 1, 0), rest[N - 1], n = 0;
	size_t a = id_of(0, 0, 0, 0), b = id_of(1, 3, 1, 1);
	struct rule r;

	/* One attr alone harms: naming it takes four literals. */
	for (size_t i = 0; i < N; i++)
		if (i != bad)
			rest[n++] = i;
	rule_learner_add(l, &bad, 1, true);
	rule_learner_add(l, rest, n, false);
	assert_int_equal(rule_learn(l, &r), -ENOENT);

	/* Two unrelated attrs that share no literal the others lack. */
	g_autoptr(rule_learner) l2 = rule_learner_new(attrs, N);
	n = 0;
	for (size_t i = 0; i < N; i++)
		if (i != a && i != b)
			rest[n++] = i;
	rule_learner_add(l2, &a, 1, true);
	rule_learner_add(l2, &b, 1, true);
	rule_learner_add(l2, rest, n, false);
	assert_int_equal(rule_learn(l2, &r), -ENOENT);

	/* And nothing harmful: nothing to explain. */
	g_autoptr(rule_learner) l3 = rule_learner_new(attrs, N);
	rule_learner_add(l3, rest, n, false);
	assert_int_equal(rule_learn(l3, &r), -ENOENT);
}

static void test_tie_break(void **state)
{
	size_t harm = id_of(0, 0, 0, 0), clean = id_of(1, 0, 1, 1);
	struct perf_event_attr rev[N];

	/* cpu-clock, exclude_guest=0 and exclude_host=0 each match 16 attrs
	 * including the harmful one and not the clean one: the event comes
	 * first in canonical order. */
	for (int round = 0; round < 2; round++) {
		g_autoptr(rule_learner) l = rule_learner_new(attrs, N);

		if (round) {
			rule_learner_add(l, &clean, 1, false);
			rule_learner_add(l, &harm, 1, true);
		} else {
			rule_learner_add(l, &harm, 1, true);
			rule_learner_add(l, &clean, 1, false);
		}
		assert_rule(l, "type=software config=cpu-clock");
		assert_rule(l, "type=software config=cpu-clock");
	}
	/* Ids in another order: the same rule. */
	for (size_t i = 0; i < N; i++)
		rev[N - 1 - i] = attrs[i];
	{
		g_autoptr(rule_learner) l = rule_learner_new(rev, N);
		size_t h = N - 1 - harm, c = N - 1 - clean;

		rule_learner_add(l, &h, 1, true);
		rule_learner_add(l, &c, 1, false);
		assert_rule(l, "type=software config=cpu-clock");
	}
}

static void test_text_forms(void **state)
{
	struct rule r = { 2, { { RULE_SUBJECT_EVENT, 0, RULE_OP_NE, PERF_TYPE_HARDWARE, 0 },
			       { RULE_SUBJECT_FIELD, ATTR_F_sample_type, RULE_OP_SET,
				 PERF_SAMPLE_CALLCHAIN, 0 } } };
	g_autofree char *s = rule_to_string(&r);

	assert_string_equal(s, "not(type=hardware config=cpu-cycles) sample_type&CALLCHAIN");
	/* rule.h: a sample_type literal is given in JSON by its "bit" (the
	 * name the text uses), not as a "value" */
	{
		json_t *j = rule_to_json(&r);
		json_t *lit = json_array_get(json_object_get(j, "literals"), 1);

		assert_string_equal(json_string_value(json_object_get(lit, "field")), "sample_type");
		assert_string_equal(json_string_value(json_object_get(lit, "bit")), "CALLCHAIN");
		assert_null(json_object_get(lit, "value"));
		r.lits[1].op = RULE_OP_CLEAR;
		json_decref(j);
		j = rule_to_json(&r);
		lit = json_array_get(json_object_get(j, "literals"), 1);
		assert_string_equal(json_string_value(json_object_get(lit, "bit")), "CALLCHAIN");
		assert_null(json_object_get(lit, "value"));
		json_decref(j);
	}

	/* bit 0 of sample_type is PERF_SAMPLE_IP (uapi perf_event.h) */
	{
		struct rule ip = { 1, { { RULE_SUBJECT_FIELD, ATTR_F_sample_type, RULE_OP_SET,
					  PERF_SAMPLE_IP, 0 } } };
		g_autofree char *t = rule_to_string(&ip);

		assert_string_equal(t, "sample_type&IP");
	}
	/* An event's config by perf's name only within its own type's table
	 * (uapi perf_event.h: PERF_COUNT_HW_CACHE_MISSES 3,
	 * PERF_COUNT_SW_CPU_MIGRATIONS 4); any other type's config, or one
	 * past the table, is a number. */
	{
		static const struct {
			uint64_t type, config;
			const char *text;
		} ev[] = {
			{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "type=hardware config=cache-misses" },
			{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "type=software config=cpu-migrations" },
			{ PERF_TYPE_SOFTWARE, 12, "type=software config=0xc" },
			{ PERF_TYPE_RAW, 3, "type=raw config=0x3" },
			{ PERF_TYPE_HW_CACHE, 4, "type=hw-cache config=0x4" },
			{ PERF_TYPE_BREAKPOINT, 1, "type=breakpoint config=0x1" },
		};

		for (size_t i = 0; i < G_N_ELEMENTS(ev); i++) {
			struct rule e = { 1, { { RULE_SUBJECT_EVENT, 0, RULE_OP_EQ, ev[i].type,
						 ev[i].config } } };
			g_autofree char *t = rule_to_string(&e);

			assert_string_equal(t, ev[i].text);
		}
	}
}

/* rule.h: only literals that some attr meets and some does not are
 * candidates. Harm in every corner of the space (each precise_ip, both
 * events, both values of each exclusion) shares no such literal: a rule
 * matching every attr ("type=software") would call every cell harmful
 * without a clean one to tell it apart, so there is none. */
static void test_no_rule_matches_everything(void **state)
{
	size_t corners[4] = { id_of(0, 0, 0, 0), id_of(1, 1, 1, 1), id_of(0, 2, 1, 0),
			      id_of(1, 3, 0, 1) };
	g_autoptr(rule_learner) l = rule_learner_new(attrs, N);
	struct rule r;

	for (size_t i = 0; i < 4; i++)
		rule_learner_add(l, &corners[i], 1, true);
	assert_int_equal(rule_learn(l, &r), -ENOENT);
	/* A clean attr beside them changes nothing: still no literal meets
	 * all four that the others lack. */
	{
		size_t clean = id_of(0, 1, 0, 0);

		rule_learner_add(l, &clean, 1, false);
		assert_int_equal(rule_learn(l, &r), -ENOENT);
	}
}

/* rule.h: sample_type bit set / clear are literals. The layout again, with
 * PERF_SAMPLE_IP on every attr (no literal: all have it) and
 * PERF_SAMPLE_CALLCHAIN (bit 5, as perf -g sets it) on every third id,
 * a pattern no other field follows. */
static void test_sample_type_bit(void **state)
{
	struct perf_event_attr st[N];
	size_t with[N], without[N], nw = 0, nwo = 0;

	for (size_t i = 0; i < N; i++) {
		st[i] = attrs[i];
		st[i].sample_type = PERF_SAMPLE_IP | (i % 3 ? 0 : PERF_SAMPLE_CALLCHAIN);
		if (i % 3)
			without[nwo++] = i;
		else
			with[nw++] = i;
	}
	/* Harm with the callchain: the callchain attrs armed together harmed,
	 * the others stayed clean. */
	{
		g_autoptr(rule_learner) l = rule_learner_new(st, N);
		struct rule r;

		rule_learner_add(l, with, nw, true);
		rule_learner_add(l, without, nwo, false);
		assert_rule(l, "sample_type&CALLCHAIN");
		assert_int_equal(rule_learn(l, &r), 0);
		for (size_t i = 0; i < N; i++)
			assert_int_equal(rule_matches(&r, &st[i]), i % 3 == 0);
	}
	/* Bit 0 (PERF_SAMPLE_IP) is a bit like any: on every third id alone,
	 * the harm with it is the rule. */
	{
		struct perf_event_attr ip[N];
		g_autoptr(rule_learner) l = NULL;

		for (size_t i = 0; i < N; i++) {
			ip[i] = attrs[i];
			ip[i].sample_type = i % 3 ? PERF_SAMPLE_TID : PERF_SAMPLE_IP | PERF_SAMPLE_TID;
		}
		l = rule_learner_new(ip, N);
		rule_learner_add(l, with, nw, true);
		rule_learner_add(l, without, nwo, false);
		assert_rule(l, "sample_type&IP");
	}
	/* The other side: harm without it. */
	{
		g_autoptr(rule_learner) l = rule_learner_new(st, N);
		struct rule r;

		rule_learner_add(l, without, nwo, true);
		rule_learner_add(l, with, nw, false);
		assert_rule(l, "!sample_type&CALLCHAIN");
		assert_int_equal(rule_learn(l, &r), 0);
		for (size_t i = 0; i < N; i++)
			assert_int_equal(rule_matches(&r, &st[i]), i % 3 != 0);
	}
}

/* The first and the last id are attrs like any: one hardware event among
 * the software ones, at id 0 or at id N-1, harming alone, is named by its
 * event wherever it sits. */
static void test_odd_event_at_either_end(void **state)
{
	for (int end = 0; end < 2; end++) {
		struct perf_event_attr at[N];
		size_t odd = end ? N - 1 : 0, rest[N - 1], n = 0;
		g_autoptr(rule_learner) l = NULL;

		for (size_t i = 0; i < N; i++) {
			at[i] = attrs[i];
			if (i != odd)
				rest[n++] = i;
		}
		at[odd].type = PERF_TYPE_HARDWARE;
		at[odd].config = PERF_COUNT_HW_CPU_CYCLES;
		l = rule_learner_new(at, N);
		rule_learner_add(l, &odd, 1, true);
		rule_learner_add(l, rest, n, false);
		assert_rule(l, "type=hardware config=cpu-cycles");
	}
}

/* rule.h: ids < n. One past the end (n = 64: the first id of a word the
 * learner does not have) is no attr, and changes nothing. */
static void test_id_past_the_end(void **state)
{
	struct perf_event_attr two[2 * N];
	size_t harm[2] = { id_of(0, 1, 0, 0), 2 * N }, clean[2] = { id_of(0, 0, 0, 0), 2 * N };
	g_autoptr(rule_learner) l = NULL;

	for (size_t i = 0; i < 2 * N; i++)
		two[i] = attrs[i % N];
	l = rule_learner_new(two, 2 * N);
	rule_learner_add(l, harm, 2, true);
	rule_learner_add(l, clean, 2, false);
	assert_int_equal(rule_learner_verdicts(l), 2);
	/* the one literal that holds the harmful attr and not the clean one,
	 * matching the fewest: precise_ip=1 (16 of 64) before precise_ip>0 */
	assert_rule(l, "precise_ip=1");
}

/* Each literal form of rule.h on an attr that meets it and one that does
 * not: ==, != and >0 of precise_ip, a sample_type bit set and clear, the
 * event == and != and the type alone. */
static void test_literal_forms_match(void **state)
{
	static const struct {
		struct rule_lit lit;
		bool on_pp2, on_pp0; /* cpu-clock with precise_ip 2 / 0 */
	} cases[] = {
		{ { RULE_SUBJECT_FIELD, ATTR_F_precise_ip, RULE_OP_EQ, 2, 0 }, true, false },
		{ { RULE_SUBJECT_FIELD, ATTR_F_precise_ip, RULE_OP_NE, 2, 0 }, false, true },
		{ { RULE_SUBJECT_FIELD, ATTR_F_precise_ip, RULE_OP_NE, 0, 0 }, true, false },
		{ { RULE_SUBJECT_FIELD, ATTR_F_precise_ip, RULE_OP_GT0, 0, 0 }, true, false },
		{ { RULE_SUBJECT_FIELD, ATTR_F_sample_type, RULE_OP_SET, PERF_SAMPLE_CALLCHAIN, 0 },
		  true, false },
		{ { RULE_SUBJECT_FIELD, ATTR_F_sample_type, RULE_OP_CLEAR, PERF_SAMPLE_CALLCHAIN, 0 },
		  false, true },
		{ { RULE_SUBJECT_EVENT, 0, RULE_OP_EQ, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		  true, true },
		{ { RULE_SUBJECT_EVENT, 0, RULE_OP_NE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		  false, false },
		{ { RULE_SUBJECT_TYPE, 0, RULE_OP_EQ, PERF_TYPE_SOFTWARE, 0 }, true, true },
		{ { RULE_SUBJECT_TYPE, 0, RULE_OP_EQ, PERF_TYPE_HARDWARE, 0 }, false, false },
	};
	struct perf_event_attr pp2 = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				       .precise_ip = 2, .sample_type = PERF_SAMPLE_IP |
				       PERF_SAMPLE_CALLCHAIN };
	struct perf_event_attr pp0 = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				       .sample_type = PERF_SAMPLE_IP };

	(void)state;
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct rule r = { 1, { cases[i].lit } };
		g_autofree char *text = rule_to_string(&r);

		if (rule_lit_matches(&cases[i].lit, &pp2) != cases[i].on_pp2 ||
		    rule_lit_matches(&cases[i].lit, &pp0) != cases[i].on_pp0 ||
		    rule_matches(&r, &pp2) != cases[i].on_pp2)
			fail_msg("%s: matches precise_ip=2 %d (want %d), precise_ip=0 %d (want %d)",
				 text, rule_lit_matches(&cases[i].lit, &pp2), cases[i].on_pp2,
				 rule_lit_matches(&cases[i].lit, &pp0), cases[i].on_pp0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literal_forms_match),
		cmocka_unit_test(test_single_field),
		cmocka_unit_test(test_two_field_conjunction),
		cmocka_unit_test(test_clean_batch_refutes),
		cmocka_unit_test(test_no_short_rule),
		cmocka_unit_test(test_tie_break),
		cmocka_unit_test(test_text_forms),
		cmocka_unit_test(test_no_rule_matches_everything),
		cmocka_unit_test(test_sample_type_bit),
		cmocka_unit_test(test_odd_event_at_either_end),
		cmocka_unit_test(test_id_past_the_end),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
