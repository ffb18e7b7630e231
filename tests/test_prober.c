/* Tests for lib/prober against this host's kernel.
 *
 * The independent check: every distinct attr the prober tried (the whole
 * default enumeration plus attrs built to give OK, ENOENT, EINVAL and
 * EOPNOTSUPP on any x86/arm host) is opened again here with a plain
 * syscall(__NR_perf_event_open) on every online CPU, and the outcome must be
 * the prober's. Nothing here assumes hardware events fail, so the suite also
 * passes on a host with a real PMU. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "attr.h"
#include "enumerate.h"
#include "log.h"
#include "prober.h"

#include <dlfcn.h>
#include <errno.h>
#include <glib.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The outcome perf record -a would see: the first CPU's failure, else OK;
 * per[] gets every CPU's. */
static enum outcome plain_open(const struct perf_event_attr *attr, GArray *cpus,
			       pid_t pid, enum outcome *per)
{
	enum outcome first = OUTCOME_OK;

	for (unsigned int i = 0; i < cpus->len; i++) {
		int cpu = g_array_index(cpus, int, i);
		long fd = syscall(__NR_perf_event_open, attr, pid, cpu, -1, 0);

		if (fd >= 0) {
			close((int)fd);
			per[i] = OUTCOME_OK;
		} else {
			per[i] = outcome_from_errno(errno);
			if (first == OUTCOME_OK)
				first = per[i];
		}
	}
	return first;
}

static struct perf_event_attr sw_sampling(uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.sample_period = 4000;
	a.freq = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	a.disabled = 1;
	return a;
}

/* Attrs whose outcome does not depend on the host's PMU. */
static void known_attrs(GPtrArray *out)
{
	struct perf_event_attr a;

	a = sw_sampling(PERF_COUNT_SW_CPU_CLOCK);           /* OK */
	g_ptr_array_add(out, g_memdup2(&a, sizeof(a)));
	a = sw_sampling(0xfffff);                            /* ENOENT: no such sw event */
	g_ptr_array_add(out, g_memdup2(&a, sizeof(a)));
	a = sw_sampling(PERF_COUNT_SW_CPU_CLOCK);
	a.read_format = 1ull << 40;                          /* EINVAL: unknown format bit */
	g_ptr_array_add(out, g_memdup2(&a, sizeof(a)));
	a = sw_sampling(PERF_COUNT_SW_TASK_CLOCK);
	a.sample_type |= PERF_SAMPLE_BRANCH_STACK;           /* EOPNOTSUPP: software */
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	g_ptr_array_add(out, g_memdup2(&a, sizeof(a)));
}

static void test_agrees_with_plain_open(void **state)
{
	g_autoptr(GArray) cpus = test_online_cpus();
	g_autoptr(prober) pr = NULL;
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	g_autoptr(GPtrArray) pairs = NULL;
	g_autoptr(GPtrArray) extra = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) distinct = g_hash_table_new(attr_hash_func, attr_equal_func);
	g_autofree enum outcome *per = g_new0(enum outcome, cpus->len);
	struct pmu_set *pmus = NULL;
	struct enumerate_opts eo = { 0 };
	bool seen[OUTCOME_COUNT] = { false };
	unsigned int fds_before = test_open_fds();
	int ncpu;
	struct prober_stats st;

	if (geteuid() != 0)
		test_skip("not root: system-wide opens need CAP_PERFMON");
	assert_int_equal(pmu_set_load(NULL, &pmus), 0);
	assert_int_equal(enumerate_pairs(pmus, &eo, &pairs), 0);
	enumerate_cells(pmus, pairs, "k", set);
	assert_int_equal(prober_new(NULL, &pr), 0);
	assert_false(prober_per_task(pr));
	prober_cpus(pr, &ncpu);
	assert_int_equal(ncpu, cpus->len);
	assert_int_equal(prober_run(pr, set), 0);
	known_attrs(extra);
	for (unsigned int i = 0; i < extra->len; i++)
		prober_open(pr, extra->pdata[i]);
	assert_int_equal(test_open_fds(), fds_before);

	/* Every try of every cell, then the known attrs. */
	for (unsigned int i = 0; i < set->cells->len; i++) {
		struct cell *c = set->cells->pdata[i];

		if (!c->has_attr) {
			assert_int_equal(c->tries->len, 0);
			continue;
		}
		assert_true(c->tries->len >= 1);
		/* The cell's attr is the final one: the last try's. */
		assert_true(attr_equal(&g_array_index(c->tries, struct cell_try,
						      c->tries->len - 1).attr, &c->attr));
		assert_int_equal(c->outcome,
				 g_array_index(c->tries, struct cell_try, c->tries->len - 1).outcome);
		for (unsigned int t = 0; t < c->tries->len; t++)
			g_hash_table_add(distinct, &g_array_index(c->tries, struct cell_try, t).attr);
	}
	for (unsigned int i = 0; i < extra->len; i++)
		g_hash_table_add(distinct, extra->pdata[i]);

	{
		GHashTableIter it;
		void *key;

		g_hash_table_iter_init(&it, distinct);
		while (g_hash_table_iter_next(&it, &key, NULL)) {
			const struct perf_event_attr *a = key;
			const struct prober_result *r = prober_open(pr, a);
			enum outcome want = plain_open(a, cpus, -1, per);

			if (r->outcome != want) {
				g_autofree char *s = attr_to_string(a);

				fail_msg("%s: prober %s, plain open %s", s,
					 outcome_name(r->outcome), outcome_name(want));
			}
			for (unsigned int i = 0; i < cpus->len; i++)
				assert_int_equal(r->per_cpu[i], per[i]);
			seen[r->outcome] = true;
		}
	}
	assert_true(seen[OUTCOME_OK]);
	assert_true(seen[OUTCOME_ENOENT]);
	assert_true(seen[OUTCOME_EINVAL]);
	assert_true(seen[OUTCOME_EOPNOTSUPP]);

	/* Each distinct attr was opened once per CPU, however many cells. */
	st = prober_stats(pr);
	assert_int_equal(st.distinct, g_hash_table_size(distinct));
	assert_int_equal(st.opens, st.distinct * cpus->len);
	assert_true(st.cache_hits > 0);
	pmu_set_free(pmus);
}

/* Every profile's chain on an attr the kernel refuses everywhere: an
 * undefined branch_sample_type bit is EINVAL in perf_copy_attr(), before
 * any PMU looks at it, so the outcome does not depend on the host. */
static void test_fallback_every_profile(void **state)
{
	g_autoptr(prober) pr = NULL;
	g_autoptr(GArray) cpus = test_online_cpus();
	g_autofree enum outcome *per = g_new0(enum outcome, cpus->len);
	size_t chains = 0, encoded = 0;

	if (geteuid() != 0)
		test_skip("not root: system-wide opens need CAP_PERFMON");
	assert_int_equal(prober_new(NULL, &pr), 0);
	for (size_t i = 0; i < profile_count(); i++) {
		const struct profile *p = profile_at(i);
		struct perf_event_attr a;
		g_autoptr(results_cell) c = cell_new("k", profile_name(p), "x");

		memset(&a, 0, sizeof(a));
		/* every profile knows p; perf-3.1 has no G/H, so no H here */
		assert_int_equal(profile_encode(p, NULL, profile_is_raw(p) ?
						"cycles[exclude_guest,precise_ip=3]" : "cycles:ppp",
						PROFILE_MODE_RECORD, &a), 0);
		encoded++;
		a.sample_type |= PERF_SAMPLE_BRANCH_STACK;
		a.branch_sample_type = 1ull << 62;
		cell_set_attr(c, &a);
		prober_probe_cell(pr, p, c);
		assert_true(c->tries->len >= 1 && c->tries->len <= PROBER_MAX_TRIES);
		assert_null(g_array_index(c->tries, struct cell_try, 0).why);
		for (unsigned int t = 0; t < c->tries->len; t++) {
			const struct cell_try *tr = &g_array_index(c->tries, struct cell_try, t);

			assert_int_equal(tr->outcome, OUTCOME_EINVAL);
			assert_int_equal(tr->outcome, plain_open(&tr->attr, cpus, -1, per));
			if (t)
				assert_non_null(tr->why);
		}
		assert_int_equal(c->outcome, OUTCOME_EINVAL);
		/* raw has no fallbacks; every release retries EINVAL at least
		 * once (sample_id_all, PERF_FORMAT_LOST or cloexec). */
		if (profile_is_raw(p))
			assert_int_equal(c->tries->len, 1);
		else if (c->tries->len < 2)
			fail_msg("%s: no fallback taken on EINVAL", profile_name(p));
		chains += c->tries->len > 1;
	}
	assert_int_equal(encoded, profile_count());
	assert_int_equal(chains, profile_count() - 1);
}

/* One try as this test expects it, written out by hand from the perf
 * release the profile stands for. */
struct chain_step {
	struct perf_event_attr attr;
	const char *why;          /* NULL for the first try */
	enum outcome outcome;
};

/* Probes want[0].attr under profile and checks every try: attr byte for
 * byte, why, outcome, and the outcome against a plain open. */
#define check_chain(pr, cpus, profile, want, n) check_chain_spec(pr, cpus, profile, "x", want, n)

static void check_chain_spec(struct prober *pr, GArray *cpus, const char *profile,
			     const char *spec, const struct chain_step *want, size_t n)
{
	g_autoptr(results_cell) c = cell_new("k", profile, spec);
	g_autofree enum outcome *per = g_new0(enum outcome, cpus->len);
	const struct profile *p = profile_find(profile);

	assert_non_null(p);
	cell_set_attr(c, &want[0].attr);
	prober_probe_cell(pr, p, c);
	if (c->tries->len != n)
		fail_msg("%s: %u tries, want %zu", profile, c->tries->len, n);
	for (size_t i = 0; i < n; i++) {
		const struct cell_try *tr = &g_array_index(c->tries, struct cell_try, i);

		if (memcmp(&tr->attr, &want[i].attr, sizeof(tr->attr)) != 0) {
			g_autofree char *got = attr_to_string(&tr->attr);
			g_autofree char *exp = attr_to_string(&want[i].attr);

			fail_msg("%s try %zu: attr %s, want %s", profile, i, got, exp);
		}
		assert_string_equal(tr->why ? tr->why : "(first)",
				    want[i].why ? want[i].why : "(first)");
		assert_int_equal(tr->outcome, want[i].outcome);
		assert_int_equal(plain_open(&want[i].attr, cpus, -1, per), want[i].outcome);
	}
	assert_int_equal(c->outcome, want[n - 1].outcome);
	/* The cell's attr is the final one, the attr its outcome belongs to
	 * (what the load phase arms), and probing again starts over from the
	 * first: the same tries in the same order. */
	if (memcmp(&c->attr, &want[n - 1].attr, sizeof(c->attr)) != 0) {
		g_autofree char *got = attr_to_string(&c->attr);
		g_autofree char *exp = attr_to_string(&want[n - 1].attr);

		fail_msg("%s: cell attr %s, want the last try's %s", profile, got, exp);
	}
	prober_probe_cell(pr, p, c);
	assert_int_equal(c->tries->len, n);
	assert_memory_equal(&g_array_index(c->tries, struct cell_try, 0).attr, &want[0].attr,
			    sizeof(want[0].attr));
	assert_memory_equal(&c->attr, &want[n - 1].attr, sizeof(c->attr));
}

/* The chains themselves, on software events whose errnos are the same on
 * every host. */
static void test_fallback_chains_exact(void **state)
{
	g_autoptr(prober) pr = NULL;
	g_autoptr(GArray) cpus = test_online_cpus();
	struct perf_event_attr nosup = sw_sampling(PERF_COUNT_SW_TASK_CLOCK);
	struct perf_event_attr inval = sw_sampling(PERF_COUNT_SW_CPU_CLOCK);
	struct perf_event_attr cycles = sw_sampling(PERF_COUNT_SW_CPU_CLOCK);
	g_autofree enum outcome *per = g_new0(enum outcome, cpus->len);
	struct chain_step s[5];
	long fd;
	int cycles_err;

	if (geteuid() != 0)
		test_skip("not root: system-wide opens need CAP_PERFMON");
	assert_int_equal(prober_new(NULL, &pr), 0);

	/* EOPNOTSUPP (software events have no branch stack). Today's perf
	 * retries once with exclude_guest (evsel__fallback(), 6.13+). */
	nosup.sample_type |= PERF_SAMPLE_BRANCH_STACK;
	nosup.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	s[0] = (struct chain_step){ nosup, NULL, OUTCOME_EOPNOTSUPP };
	s[1] = s[0];
	s[1].attr.exclude_guest = 1;
	s[1].why = "EOPNOTSUPP: retry with exclude_guest";
	check_chain(pr, cpus, "perf-modern", s, 2);
	/* ... not when H (exclude_host) was given, and perf 6.1 never does:
	 * the old binary's EOPNOTSUPP stands. */
	s[0].attr.exclude_host = 1;
	check_chain(pr, cpus, "perf-modern", s, 1);
	s[0].attr.exclude_host = 0;
	check_chain(pr, cpus, "perf-6.1", s, 1);

	/* EINVAL (an undefined read_format bit) with exclude_guest set: perf
	 * 3.6 record clears exclude_guest/host, then sample_id_all. */
	inval.read_format = 1ull << 40;
	inval.exclude_guest = 1;
	inval.sample_id_all = 1;
	s[0] = (struct chain_step){ inval, NULL, OUTCOME_EINVAL };
	s[1] = s[0];
	s[1].attr.exclude_guest = 0;
	s[1].why = "missing feature: clear exclude_guest/exclude_host (old kernel)";
	s[2] = s[1];
	s[2].attr.sample_id_all = 0;
	s[2].why = "missing feature: clear sample_id_all (old kernel)";
	check_chain(pr, cpus, "perf-3.6", s, 3);

	/* Perf 6.1 first drops PERF_FORMAT_LOST, then cloexec (the same attr
	 * again), then exclude_guest/host, then sample_id_all: the order its
	 * -vv prints for `perf record -e msr/tsc/` (tests/test_trace.c). */
	inval.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST | 1ull << 40;
	s[0] = (struct chain_step){ inval, NULL, OUTCOME_EINVAL };
	s[1] = s[0];
	s[1].attr.read_format = PERF_FORMAT_ID | 1ull << 40;
	s[1].why = "missing feature: PERF_FORMAT_LOST";
	s[2] = s[1];
	s[2].why = "missing feature: switch off cloexec flag (same attr)";
	s[3] = s[2];
	s[3].attr.exclude_guest = 0;
	s[3].why = "missing feature: clear exclude_guest/exclude_host (old kernel)";
	s[4] = s[3];
	s[4].attr.sample_id_all = 0;
	s[4].why = "missing feature: clear sample_id_all (old kernel)";
	check_chain(pr, cpus, "perf-6.1", s, 5);

	/* Today's perf probes features with a software event: only
	 * PERF_FORMAT_LOST is retried. raw retries nothing. */
	s[1].why = "missing feature (probed): PERF_FORMAT_LOST";
	check_chain(pr, cpus, "perf-modern", s, 2);
	check_chain(pr, cpus, "raw", s, 1);

	/* Hardware cycles that the host cannot count (ENOENT without a
	 * hardware PMU, like the CI hosts; ENXIO, ENODEV) become cpu-clock,
	 * every other member kept. Where they open (a hardware PMU), the
	 * first try is the answer. */
	cycles.type = PERF_TYPE_HARDWARE;
	cycles.config = PERF_COUNT_HW_CPU_CYCLES;
	fd = syscall(__NR_perf_event_open, &cycles, -1, g_array_index(cpus, int, 0), -1, 0);
	cycles_err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close((int)fd);
	s[0] = (struct chain_step){ cycles, NULL, plain_open(&cycles, cpus, -1, per) };
	if (cycles_err == ENOENT || cycles_err == ENXIO || cycles_err == ENODEV) {
		s[1] = (struct chain_step){ cycles, "cycles -> cpu-clock: no hardware cycles event",
					    OUTCOME_OK };
		s[1].attr.type = PERF_TYPE_SOFTWARE;
		s[1].attr.config = PERF_COUNT_SW_CPU_CLOCK;
		check_chain(pr, cpus, "perf-6.1", s, 2);
	} else {
		check_chain(pr, cpus, "perf-6.1", s, 1);
	}
}

/* The chain depends on the spec and on the perf command. `perf record -e
 * EV:P` walks precise_ip down from 3 on any error before its other
 * fallbacks (evsel__precise_ip_fallback() in __evsel__open()); `perf stat`
 * takes no builtin fallbacks for ENOENT/EINVAL/EOPNOTSUPP
 * (stat_handle_error() @6.1), and 3.6's stat retries exclude_guest/host
 * only. The first part holds on every host; the cycles part needs a host
 * without hardware cycles (these machines). */
static void test_fallback_precise_walk_and_stat(void **state)
{
	g_autoptr(prober) rec = NULL, stat = NULL;
	g_autoptr(GArray) cpus = test_online_cpus();
	struct prober_opts so = { .mode = PROFILE_MODE_STAT };
	struct perf_event_attr nosup = sw_sampling(PERF_COUNT_SW_CPU_CLOCK);
	struct perf_event_attr inval = sw_sampling(PERF_COUNT_SW_CPU_CLOCK);
	struct perf_event_attr cycles = sw_sampling(PERF_COUNT_SW_CPU_CLOCK);
	struct chain_step s[5];
	long fd;

	if (geteuid() != 0)
		test_skip("not root: system-wide opens need CAP_PERFMON");
	assert_int_equal(prober_new(NULL, &rec), 0);
	assert_int_equal(prober_new(&so, &stat), 0);

	/* cpu-clock:P with a branch stack: EOPNOTSUPP at every precise_ip;
	 * perf 6.1 walks 3, 2, 1, 0 and has nothing else for EOPNOTSUPP. */
	nosup.sample_type |= PERF_SAMPLE_BRANCH_STACK;
	nosup.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	nosup.precise_ip = 3;
	for (int i = 0; i < 4; i++) {
		s[i] = (struct chain_step){ nosup, i ? "P: decrease precise_ip by one" : NULL,
					    OUTCOME_EOPNOTSUPP };
		s[i].attr.precise_ip = 3 - i;
	}
	check_chain_spec(rec, cpus, "perf-6.1", "cpu-clock:P", s, 4);
	/* :ppp asks for exactly 3: no walk */
	check_chain_spec(rec, cpus, "perf-6.1", "cpu-clock:ppp", s, 1);

	/* perf 3.6 on EINVAL: record clears exclude_guest/host, then
	 * sample_id_all; stat only the first. */
	inval.read_format = 1ull << 40;
	inval.exclude_guest = 1;
	inval.sample_id_all = 1;
	s[0] = (struct chain_step){ inval, NULL, OUTCOME_EINVAL };
	s[1] = s[0];
	s[1].attr.exclude_guest = 0;
	s[1].why = "missing feature: clear exclude_guest/exclude_host (old kernel)";
	check_chain_spec(stat, cpus, "perf-3.6", "cpu-clock", s, 2);

	cycles.type = PERF_TYPE_HARDWARE;
	cycles.config = PERF_COUNT_HW_CPU_CYCLES;
	fd = syscall(__NR_perf_event_open, &cycles, -1, g_array_index(cpus, int, 0), -1, 0);
	if (fd >= 0 || errno != ENOENT) {
		if (fd >= 0)
			close((int)fd);
		print_message("note: hardware cycles open here (or not with ENOENT): "
			      "the cycles chains are not shown on this host\n");
		return;
	}
	/* cycles:P: the walk, then cycles -> cpu-clock at precise_ip 3 */
	cycles.precise_ip = 3;
	for (int i = 0; i < 4; i++) {
		s[i] = (struct chain_step){ cycles, i ? "P: decrease precise_ip by one" : NULL,
					    OUTCOME_ENOENT };
		s[i].attr.precise_ip = 3 - i;
	}
	s[4] = (struct chain_step){ cycles, "cycles -> cpu-clock: no hardware cycles event",
				    OUTCOME_OK };
	s[4].attr.type = PERF_TYPE_SOFTWARE;
	s[4].attr.config = PERF_COUNT_SW_CPU_CLOCK;
	check_chain_spec(rec, cpus, "perf-6.1", "cycles:P", s, 5);
	/* perf stat -e cycles: "<not supported>", no cpu-clock */
	cycles.precise_ip = 0;
	s[0] = (struct chain_step){ cycles, NULL, OUTCOME_ENOENT };
	check_chain_spec(stat, cpus, "perf-6.1", "cycles", s, 1);
}

static void test_per_task(void **state)
{
	g_autoptr(prober) pr = NULL;
	struct prober_opts o = { .per_task = true };
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	struct perf_event_attr a = sw_sampling(PERF_COUNT_SW_CPU_CLOCK);
	struct cell *c = cell_new("k", "nosuchprofile", "cpu-clock");
	int n;

	a.exclude_kernel = 1;
	assert_int_equal(prober_new(&o, &pr), 0);
	assert_true(prober_per_task(pr));
	assert_int_equal(prober_cpus(pr, &n)[0], -1);
	assert_int_equal(n, 1);
	cell_set_attr(c, &a);
	results_add_cell(set, c);
	assert_int_equal(prober_run(pr, set), 0);
	assert_int_equal(c->outcome, OUTCOME_OK);
	assert_int_equal(c->tries->len, 1);
	assert_int_equal(set->limitations->len, 1);
	assert_non_null(strstr(set->limitations->pdata[0], "per task"));
}

/* A run over cells of several profiles gives each cell its own profile's
 * fallback chain, the same tries as probing that cell alone, whatever
 * profile the cell before it had (perf-4.8's EINVAL chain has the cloexec
 * step that perf-3.6's lacks). The attr's unknown read_format bit is EINVAL
 * on every kernel, for every try. */
static void test_run_each_cell_its_profile(void **state)
{
	static const char *const order[] = { "perf-4.8", "perf-3.6", "perf-4.8", "perf-6.1",
					     "perf-3.6", "perf-3.6" };
	g_autoptr(prober) pr = NULL;
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	struct perf_event_attr a = sw_sampling(PERF_COUNT_SW_CPU_CLOCK);

	a.read_format = 1ull << 40;
	a.exclude_guest = 1;
	assert_int_equal(prober_new(NULL, &pr), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(order); i++) {
		struct cell *c = cell_new("k", order[i], "cpu-clock");

		cell_set_attr(c, &a);
		results_add_cell(set, c);
	}
	assert_int_equal(prober_run(pr, set), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(order); i++) {
		struct cell *c = set->cells->pdata[i];
		g_autoptr(results_cell) alone = cell_new("k", order[i], "cpu-clock");

		cell_set_attr(alone, &a);
		prober_probe_cell(pr, profile_find(order[i]), alone);
		if (c->tries->len != alone->tries->len)
			fail_msg("cell %zu (%s): %u tries in the run, %u alone", i, order[i],
				 c->tries->len, alone->tries->len);
		for (guint t = 0; t < c->tries->len; t++) {
			const struct cell_try *x = &g_array_index(c->tries, struct cell_try, t);
			const struct cell_try *y = &g_array_index(alone->tries, struct cell_try, t);

			assert_memory_equal(&x->attr, &y->attr, sizeof(x->attr));
			assert_string_equal(x->why ? x->why : "", y->why ? y->why : "");
		}
	}
	/* the two chains do differ, so the check above can tell them apart */
	assert_int_not_equal(((struct cell *)set->cells->pdata[0])->tries->len,
			     ((struct cell *)set->cells->pdata[1])->tries->len);
}

/* The program's syscall() is the one lib/ (perfev_open) and GLib call: it
 * hands every call to libc's, except perf_event_open of an attr whose
 * config is FAKE_CONFIG while fake_errs is set: that fails with
 * fake_errs[0] on the first online CPU and fake_errs[1] on the others, as a
 * hybrid host's core-only event would. */
#define FAKE_CONFIG 0x7ff00ULL
static const int *fake_errs;
static int fake_first_cpu;

long syscall(long nr, ...)
{
	static long (*next)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == __NR_perf_event_open && fake_errs &&
	    ((const struct perf_event_attr *)a[0])->config == FAKE_CONFIG) {
		errno = (int)a[2] == fake_first_cpu ? fake_errs[0] : fake_errs[1];
		return -1;
	}
	if (!next)
		next = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return next(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* CPUs that disagree: the result is the first failure's (prober.h; perf
 * record -a stops at the first CPU that fails), each CPU keeps its own. */
static void test_cpus_disagree_first_failure(void **state)
{
	static const int errs[] = { EINVAL, ENODEV };
	g_autoptr(prober) pr = NULL;
	struct prober_opts o = { 0 };
	struct perf_event_attr a = sw_sampling(FAKE_CONFIG);
	const struct prober_result *r;
	const int *cpus;
	int n;

	assert_int_equal(prober_new(&o, &pr), 0);
	cpus = prober_cpus(pr, &n);
	if (n < 2)
		test_skip("one CPU here (%d): no CPUs to disagree", cpus[0]);
	fake_first_cpu = cpus[0];
	fake_errs = errs;
	r = prober_open(pr, &a);
	fake_errs = NULL;
	assert_true(r->disagree);
	assert_int_equal(r->err, EINVAL);
	assert_int_equal(r->outcome, OUTCOME_EINVAL);
	assert_int_equal(r->per_cpu[0], OUTCOME_EINVAL);
	for (int i = 1; i < n; i++)
		assert_int_equal(r->per_cpu[i], OUTCOME_ENODEV);
}

static void test_emfile_raises_limit(void **state)
{
	g_autoptr(prober) pr = NULL;
	struct perf_event_attr a = sw_sampling(PERF_COUNT_SW_TASK_CLOCK);
	struct rlimit saved, rl;
	const struct prober_result *r;
	struct prober_opts o = { .per_task = true };
	int lowest;

	a.exclude_kernel = 1;
	assert_int_equal(prober_new(&o, &pr), 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	/* The soft limit at the lowest free fd: the next open gives EMFILE. */
	lowest = dup(0);
	assert_true(lowest >= 0);
	close(lowest);
	if (saved.rlim_max <= (rlim_t)lowest + 1)
		test_skip("RLIMIT_NOFILE hard limit %llu leaves no room to raise",
			  (unsigned long long)saved.rlim_max);
	rl = saved;
	rl.rlim_cur = lowest;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	r = prober_open(pr, &a);
	getrlimit(RLIMIT_NOFILE, &rl);
	setrlimit(RLIMIT_NOFILE, &saved);
	assert_int_equal(r->outcome, OUTCOME_OK);
	assert_int_equal(prober_stats(pr).emfile_retries, 1);
	assert_int_equal(rl.rlim_cur, saved.rlim_max);
}

/* No way to raise the limit: INFRA, never an errno verdict. In a child, so
 * the lowered hard limit does not outlive the test. */
static void test_emfile_is_infra(void **state)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct prober *pr = NULL;
		struct prober_opts o = { .per_task = true };
		struct perf_event_attr a = sw_sampling(PERF_COUNT_SW_TASK_CLOCK);
		struct rlimit rl;
		int lowest;

		a.exclude_kernel = 1;
		if (prober_new(&o, &pr) < 0)
			_exit(10);
		lowest = dup(0);
		close(lowest);
		rl.rlim_cur = rl.rlim_max = lowest;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(11);
		_exit(prober_open(pr, &a)->outcome == OUTCOME_INFRA ? 0 : 12);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* perf_event_paranoid as the kernel writes it (Documentation/admin-guide/
 * sysctl/kernel.rst: -1 allows (almost) everything, 2 is the default, a
 * distribution may set more); what is not one decimal int is the
 * default, never 0 or a wrapped number. */
static void test_paranoid_parse(void **state)
{
	assert_int_equal(prober_paranoid_parse("-1\n"), -1);
	assert_int_equal(prober_paranoid_parse("0\n"), 0);
	assert_int_equal(prober_paranoid_parse("1\n"), 1);
	assert_int_equal(prober_paranoid_parse("2\n"), 2);
	assert_int_equal(prober_paranoid_parse(" 4 \n"), 4);
	assert_int_equal(prober_paranoid_parse(NULL), 2);
	assert_int_equal(prober_paranoid_parse(""), 2);
	assert_int_equal(prober_paranoid_parse("abc"), 2);
	assert_int_equal(prober_paranoid_parse("-"), 2);
	assert_int_equal(prober_paranoid_parse("--1"), 2);
	assert_int_equal(prober_paranoid_parse("+1"), 2);
	assert_int_equal(prober_paranoid_parse("1x"), 2);
	assert_int_equal(prober_paranoid_parse("4294967296"), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agrees_with_plain_open),
		cmocka_unit_test(test_fallback_every_profile),
		cmocka_unit_test(test_fallback_chains_exact),
		cmocka_unit_test(test_fallback_precise_walk_and_stat),
		cmocka_unit_test(test_per_task),
		cmocka_unit_test(test_run_each_cell_its_profile),
		cmocka_unit_test(test_cpus_disagree_first_failure),
		cmocka_unit_test(test_emfile_raises_limit),
		cmocka_unit_test(test_emfile_is_infra),
		cmocka_unit_test(test_paranoid_parse),
	};
	return test_run_group(tests, NULL, NULL);
}
