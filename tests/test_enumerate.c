/* Tests for lib/enumerate: exact counts of modifier strings, raw suffixes,
 * events and pairs for the fixture PMU set tests/data/sysfs-enum, the
 * narrowing options, and encoding into cells. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "enumerate.h"
#include "log.h"
#include "spec.h"

#include <errno.h>
#include <glib.h>
#include <string.h>

#define FIXTURE "tests/data/sysfs-enum"

static struct pmu_set *pmus;

static int setup(void **state)
{
	const char *top = g_getenv("PMUCANARY_TOP");
	g_autofree char *root = g_build_filename(top ? top : ".", FIXTURE, NULL);

	return pmu_set_load(root, &pmus) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	pmu_set_free(pmus);
	return 0;
}

/* Counts written out by hand, so that a bug shared by enumerate.c and
 * these tests cannot cancel out. Generic events, perf's tables
 * (event_symbols_hw/sw, evsel__hw_cache_stat):
 *   hardware 10: cpu-cycles instructions cache-references cache-misses
 *     branch-instructions branch-misses bus-cycles stalled-cycles-frontend
 *     stalled-cycles-backend ref-cycles
 *   software 12: cpu-clock task-clock page-faults context-switches
 *     cpu-migrations minor-faults major-faults alignment-faults
 *     emulation-faults dummy bpf-output cgroup-switches
 *   cache 32: ops per type L1-dcache 3 (load store prefetch), L1-icache 2
 *     (load prefetch), LLC 3, dTLB 3, iTLB 1, branch 1, node 3 = 16 ops,
 *     each as accesses and misses
 * The fixture tests/data/sysfs-enum adds 5: cpu/cpu-cycles/,
 * cpu/instructions/, cpu/mem-loads/, msr/aperf/, msr/tsc/. */
#define N_HW 10
#define N_SW 12
#define N_CACHE 32
#define N_EVENTS (N_HW + N_SW + N_CACHE + 5)

/* Modifier strings per event and profile (enumerate.h): base 128 = 8 u/k/h
 * subsets x 4 G/H subsets x 4 precise levels, G/H swept even where the
 * release lacks them; each later letter + 16 (alone, x 4 G/H x 4 p). raw:
 * 64 exclude-bit subsets x 4 precise_ip = 256. In profile table order. */
static const struct {
	const char *profile;
	size_t per_event;
} per_profile[] = {
	{ "perf-3.1", 128 },              /* ukhp */
	{ "perf-3.6", 128 },              /* ukhpGH */
	{ "perf-3.7", 128 },
	{ "perf-3.8", 128 },
	{ "perf-3.12", 128 + 2 * 16 },    /* + S D */
	{ "perf-4.8", 128 + 4 * 16 },     /* + P S D I */
	{ "perf-4.19", 128 + 5 * 16 },    /* + W */
	{ "perf-5.9", 128 + 5 * 16 },
	{ "perf-6.1", 128 + 7 * 16 },     /* + e b */
	{ "perf-6.10", 128 + 7 * 16 },
	{ "perf-6.13", 128 + 8 * 16 },    /* + R */
	{ "perf-modern", 128 + 9 * 16 },  /* + R X */
	{ "raw", 256 },
};

static GPtrArray *mods(const char *known, bool full)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

	enumerate_modifiers(known, full, out);
	return out;
}

static bool all_distinct(GPtrArray *a)
{
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

	for (unsigned int i = 0; i < a->len; i++)
		if (!g_hash_table_add(seen, a->pdata[i]))
			return false;
	return true;
}

static bool contains(GPtrArray *a, const char *s)
{
	return g_ptr_array_find_with_equal_func(a, s, g_str_equal, NULL);
}

static void test_modifier_counts(void **state)
{
	g_autoptr(GPtrArray) base = mods("ukhpGH", false);
	g_autoptr(GPtrArray) old = mods("ukhp", false);
	g_autoptr(GPtrArray) today = mods("ukhpPGHIDSWeb", false);
	g_autoptr(GPtrArray) full = mods("ukhpPGHIDSWeb", true);
	g_autoptr(GPtrArray) full_base = mods("ukhpGH", true);

	/* 8 (u/k/h) x 4 (G/H) x 4 (0-3 p) */
	assert_int_equal(base->len, 128);
	/* G/H are always swept: a release without them rejects the spec. */
	assert_int_equal(old->len, 128);
	/* + 7 later letters x 16 */
	assert_int_equal(today->len, 128 + 7 * 16);
	/* 2^12 x 4 */
	assert_int_equal(full->len, 4096 * 4);
	assert_int_equal(full_base->len, 128);
	assert_true(all_distinct(base));
	assert_true(all_distinct(today));
	assert_true(all_distinct(full));
	/* perf's letter order; "" is the bare event. */
	assert_true(contains(base, ""));
	assert_true(contains(base, "ukpG"));
	assert_true(contains(base, "ukhpppGH"));
	assert_false(contains(base, "Gu"));
	assert_true(contains(today, "I"));
	assert_true(contains(today, "ppPG"));
	assert_true(contains(today, "pppH") && contains(today, "HS"));
	assert_false(contains(today, "uI")); /* later letters: precise and G/H only */
	assert_true(contains(full, "ukhpppPGHIDSWeb"));
}

/* Later letters are letters, each counted once however often the
 * profile's list names it; anything else in the list adds nothing. */
static void test_modifier_extras_letters_once(void **state)
{
	g_autoptr(GPtrArray) twice = mods("ukhpGHII", false);
	g_autoptr(GPtrArray) nonletters = mods("ukhpGH1-:", false);
	g_autoptr(GPtrArray) full_twice = mods("ukhpGHII", true);

	assert_int_equal(twice->len, 128 + 16);
	assert_true(all_distinct(twice));
	assert_int_equal(nonletters->len, 128);
	assert_int_equal(full_twice->len, 64 * 4); /* u k h G H I: 2^6 x 4 */
	assert_true(all_distinct(full_twice));
}

/* An unknown --profile names every profile, in the table's order
 * (pmucanary encode --list-profiles), the first and the last included. */
static void test_profiles_unknown(void **state)
{
	const char *want[] = { "perf-6.1", "nope", NULL };
	struct enumerate_opts o = { .profiles = want };
	GPtrArray *out = (GPtrArray *)1;

	assert_int_equal(enumerate_profiles(&o, &out), -ENOENT);
	assert_string_equal(pc_errmsg(), "--profile nope: no such profile (known: perf-3.1, "
			    "perf-3.6, perf-3.7, perf-3.8, perf-3.12, perf-4.8, perf-4.19, perf-5.9, "
			    "perf-6.1, perf-6.10, perf-6.13, perf-modern, raw)");
}

static void test_raw_suffixes(void **state)
{
	g_autoptr(GPtrArray) raw = g_ptr_array_new_with_free_func(g_free);

	enumerate_raw_suffixes(raw);
	assert_int_equal(raw->len, 256);
	assert_true(all_distinct(raw));
	assert_true(contains(raw, ""));
	assert_true(contains(raw, "[exclude_user,exclude_guest,precise_ip=2]"));
	assert_true(contains(raw, "[exclude_user,exclude_kernel,exclude_hv,exclude_idle,"
				  "exclude_host,exclude_guest,precise_ip=3]"));
	assert_true(contains(raw, "[precise_ip=1]"));
}

static GPtrArray *events_with(const char *const *pmu, const char *const *ev, int *ret)
{
	struct enumerate_opts o = { .pmus = pmu, .events = ev };
	GPtrArray *out = NULL;

	*ret = enumerate_events(pmus, &o, &out);
	return out;
}

static bool has_event(GPtrArray *evs, const char *name)
{
	for (unsigned int i = 0; evs && i < evs->len; i++)
		if (strcmp(((struct enumerate_event *)evs->pdata[i])->name, name) == 0)
			return true;
	return false;
}

static void test_events(void **state)
{
	const char *msr[] = { "msr", NULL };
	const char *sw[] = { "software", NULL };
	const char *bogus[] = { "nopmu", NULL };
	const char *cyc[] = { "cpu-clock", "msr/tsc/", NULL };
	const char *badev[] = { "no-such-event", NULL };
	const char *modev[] = { "cpu-clock:u", NULL };
	int ret;
	g_autoptr(GPtrArray) all = events_with(NULL, NULL, &ret);
	g_autoptr(GPtrArray) m = NULL;
	g_autoptr(GPtrArray) s = NULL;
	g_autoptr(GPtrArray) c = NULL;
	GPtrArray *none;

	assert_int_equal(ret, 0);
	/* cpu: cpu-cycles, instructions, mem-loads (not .scale/.unit, not the
	 * '?' event); msr: aperf, tsc; nothing from tracepoint/uprobe/breakpoint. */
	assert_int_equal(all->len, N_EVENTS);
	assert_true(has_event(all, "cpu/mem-loads/"));
	assert_true(has_event(all, "msr/tsc/"));
	assert_false(has_event(all, "cpu/offcore-any/"));
	assert_false(has_event(all, "uprobe/fake/"));

	m = events_with(msr, NULL, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(m->len, 2);
	s = events_with(sw, NULL, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(s->len, N_SW);
	c = events_with(NULL, cyc, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(c->len, 2);

	{
		const char *twice[] = { "r003c", "cpu-clock", "r003c", "cpu-clock", NULL };
		g_autoptr(GPtrArray) t = events_with(NULL, twice, &ret);

		assert_int_equal(ret, 0);
		assert_int_equal(t->len, 2);
	}
	none = events_with(bogus, NULL, &ret);
	assert_int_equal(ret, -ENOENT);
	assert_null(none);
	assert_non_null(strstr(pc_errmsg(), "nopmu"));
	/* the known PMUs, each once: cpu and software (always there) first,
	 * then the other PMUs of the tree by name */
	assert_non_null(strstr(pc_errmsg(), "--pmu nopmu: no such PMU in "));
	assert_non_null(strstr(pc_errmsg(), "sysfs-enum (known: cpu, software, breakpoint, msr, "
				     "tracepoint, uprobe)"));
	none = events_with(NULL, badev, &ret);
	assert_true(ret < 0);
	assert_non_null(strstr(pc_errmsg(), "no-such-event"));
	none = events_with(NULL, modev, &ret);
	assert_int_equal(ret, -EINVAL);
}

static void test_pair_counts(void **state)
{
	struct enumerate_opts o = { 0 };
	g_autoptr(GPtrArray) pairs = NULL;
	size_t total = 0;

	assert_int_equal(profile_count(), G_N_ELEMENTS(per_profile));
	for (size_t i = 0; i < G_N_ELEMENTS(per_profile); i++) {
		assert_string_equal(profile_name(profile_at(i)), per_profile[i].profile);
		total += per_profile[i].per_event;
	}
	assert_int_equal(total, 2544);
	/* profile-major: each profile's pairs in one run, in table order */
	assert_int_equal(enumerate_pairs(pmus, &o, &pairs), 0);
	assert_int_equal(pairs->len, 2544 * N_EVENTS);
	for (size_t i = 0, at = 0; i < G_N_ELEMENTS(per_profile); i++) {
		size_t n = per_profile[i].per_event * N_EVENTS;

		for (size_t k = at; k < at + n; k++) {
			const struct enumerate_pair *pr = pairs->pdata[k];

			if (strcmp(profile_name(pr->profile), per_profile[i].profile))
				fail_msg("pair %zu: %s %s, want profile %s", k,
					 profile_name(pr->profile), pr->spec, per_profile[i].profile);
		}
		at += n;
	}
	g_clear_pointer(&pairs, g_ptr_array_unref);

	{
		const char *raw[] = { "raw", NULL };
		const char *ev[] = { "msr/tsc/", NULL };
		struct enumerate_opts r = { .profiles = raw, .events = ev };

		assert_int_equal(enumerate_pairs(pmus, &r, &pairs), 0);
		assert_int_equal(pairs->len, 256);
		assert_string_equal(((struct enumerate_pair *)pairs->pdata[0])->spec, "msr/tsc/");
		g_clear_pointer(&pairs, g_ptr_array_unref);
	}
	{
		/* full for perf-3.1: every subset of u k h G H x 4 p = 2^5 x 4 */
		const char *prof[] = { "perf-3.1", NULL };
		const char *ev[] = { "cpu-clock", NULL };
		struct enumerate_opts f = { .profiles = prof, .events = ev, .full = true };

		assert_int_equal(enumerate_pairs(pmus, &f, &pairs), 0);
		assert_int_equal(pairs->len, 128);
		g_clear_pointer(&pairs, g_ptr_array_unref);
	}
	{
		/* full for perf-6.1: u k h G H + 7 later letters = 12, 2^12 x 4 */
		const char *prof[] = { "perf-6.1", NULL };
		const char *ev[] = { "cpu-clock", NULL };
		struct enumerate_opts f = { .profiles = prof, .events = ev, .full = true };

		assert_int_equal(enumerate_pairs(pmus, &f, &pairs), 0);
		assert_int_equal(pairs->len, 4096 * 4);
		g_clear_pointer(&pairs, g_ptr_array_unref);
	}
	{
		const char *prof[] = { "perf-0.0-nope", NULL };
		struct enumerate_opts b = { .profiles = prof };

		assert_int_equal(enumerate_pairs(pmus, &b, &pairs), -ENOENT);
		assert_non_null(strstr(pc_errmsg(), "perf-0.0-nope"));
	}
}

static void test_cells(void **state)
{
	g_autoptr(GPtrArray) pairs = g_ptr_array_new_with_free_func(
		(GDestroyNotify)enumerate_pair_free);
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	struct enumerate_pair *ok = g_new0(struct enumerate_pair, 1);
	struct enumerate_pair *bad = g_new0(struct enumerate_pair, 1);
	const struct profile *p = profile_at(0);
	struct cell *c;

	if (profile_is_raw(p))
		p = profile_at(1);
	ok->profile = p;
	ok->spec = g_strdup("cpu-clock");
	bad->profile = p;
	bad->spec = g_strdup("cpu-clock:Z");
	g_ptr_array_add(pairs, ok);
	g_ptr_array_add(pairs, bad);
	enumerate_cells(pmus, pairs, "6.1.0-x", set);
	assert_int_equal(set->cells->len, 2);
	c = set->cells->pdata[0];
	assert_true(c->has_attr);
	assert_int_equal(c->attr.type, PERF_TYPE_SOFTWARE);
	assert_string_equal(c->kernel, "6.1.0-x");
	c = set->cells->pdata[1];
	assert_false(c->has_attr);
	assert_int_equal(c->outcome, OUTCOME_REJECTED);
	assert_non_null(c->error);
	assert_non_null(strstr(c->error, "cpu-clock:Z"));
	assert_int_equal(c->tries->len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modifier_counts),
		cmocka_unit_test(test_modifier_extras_letters_once),
		cmocka_unit_test(test_profiles_unknown),
		cmocka_unit_test(test_raw_suffixes),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_pair_counts),
		cmocka_unit_test(test_cells),
	};
	return test_run_group(tests, setup, teardown);
}
