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

#include "attr.h"
#include "enumerate.h"
#include "log.h"
#include "prober.h"

#include <dirent.h>
#include <errno.h>
#include <glib.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Online CPUs, read here without perfev_online_cpus(). */
static GArray *cpus_online(void)
{
	GArray *cpus = g_array_new(FALSE, FALSE, sizeof(int));
	g_autofree char *text = NULL;
	g_auto(GStrv) parts = NULL;

	assert_true(g_file_get_contents("/sys/devices/system/cpu/online", &text, NULL, NULL));
	parts = g_strsplit(g_strstrip(text), ",", -1);
	for (char **p = parts; *p; p++) {
		int lo, hi;

		if (sscanf(*p, "%d-%d", &lo, &hi) != 2)
			hi = lo = atoi(*p);
		for (int c = lo; c <= hi; c++)
			g_array_append_val(cpus, c);
	}
	return cpus;
}

static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

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
	g_autoptr(GArray) cpus = cpus_online();
	g_autoptr(prober) pr = NULL;
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	g_autoptr(GPtrArray) pairs = NULL;
	g_autoptr(GPtrArray) extra = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) distinct = g_hash_table_new(attr_hash_func, attr_equal_func);
	g_autofree enum outcome *per = g_new0(enum outcome, cpus->len);
	struct pmu_set *pmus = NULL;
	struct enumerate_opts eo = { 0 };
	bool seen[OUTCOME_COUNT] = { false };
	int fds_before = fd_count();
	int ncpu;
	struct prober_stats st;

	if (geteuid() != 0)
		skip();
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
	assert_int_equal(fd_count(), fds_before);

	/* Every try of every cell, then the known attrs. */
	for (unsigned int i = 0; i < set->cells->len; i++) {
		struct cell *c = set->cells->pdata[i];

		if (!c->has_attr) {
			assert_int_equal(c->tries->len, 0);
			continue;
		}
		assert_true(c->tries->len >= 1);
		assert_true(attr_equal(&g_array_index(c->tries, struct cell_try, 0).attr,
				       &c->attr));
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

static void test_fallback_chain_recorded(void **state)
{
	g_autoptr(prober) pr = NULL;
	g_autoptr(GArray) cpus = cpus_online();
	g_autofree enum outcome *per = g_new0(enum outcome, cpus->len);
	size_t chains = 0;

	if (geteuid() != 0)
		skip();
	assert_int_equal(prober_new(NULL, &pr), 0);
	/* Every profile's chain, on an attr the kernel refuses everywhere. */
	for (size_t i = 0; i < profile_count(); i++) {
		const struct profile *p = profile_at(i);
		struct perf_event_attr a;
		g_autoptr(results_cell) c = cell_new("k", profile_name(p), "x");

		memset(&a, 0, sizeof(a));
		if (profile_encode(p, NULL, profile_is_raw(p) ? "cycles[exclude_guest,precise_ip=3]"
				   : "cycles:ppp", PROFILE_MODE_RECORD, &a) < 0)
			continue;
		a.sample_type |= PERF_SAMPLE_BRANCH_STACK; /* refused on any host */
		a.branch_sample_type = 1ull << 62;
		cell_set_attr(c, &a);
		prober_probe_cell(pr, p, c);
		assert_true(c->tries->len >= 1 && c->tries->len <= PROBER_MAX_TRIES);
		assert_null(g_array_index(c->tries, struct cell_try, 0).why);
		for (unsigned int t = 1; t < c->tries->len; t++) {
			const struct cell_try *tr = &g_array_index(c->tries, struct cell_try, t);

			assert_non_null(tr->why);
			assert_int_equal(tr->outcome, plain_open(&tr->attr, cpus, -1, per));
		}
		chains += c->tries->len > 1;
	}
	print_message("profiles with a fallback taken: %zu\n", chains);
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
		skip();
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agrees_with_plain_open),
		cmocka_unit_test(test_fallback_chain_recorded),
		cmocka_unit_test(test_per_task),
		cmocka_unit_test(test_emfile_raises_limit),
		cmocka_unit_test(test_emfile_is_infra),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
