/* Load on this host's real software events: samples arrive through the
 * ring buffers, a refused attr keeps its errno, nothing leaks. Needs
 * perf_event_paranoid <= 0 or root (system-wide events). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "load.h"
#include "log.h"
#include "perfev.h"

#include <dirent.h>
#include <inttypes.h>
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static unsigned int count_perf_maps(void)
{
	g_autofree char *text = NULL;
	unsigned int n = 0;

	assert_true(g_file_get_contents("/proc/self/maps", &text, NULL, NULL));
	for (char *p = text; (p = strstr(p, "anon_inode:[perf_event]")); p++)
		n++;
	return n;
}

static struct perf_event_attr sw_sampling(uint64_t config, uint64_t period)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD;
	return a;
}

/* Skips the test unless system-wide perf events are allowed here (root or
 * perf_event_paranoid <= 0); any other refusal of cpu-clock is a failure. */
static void need_perf(void)
{
	struct perf_event_attr a = sw_sampling(PERF_COUNT_SW_CPU_CLOCK, 100000);
	int fd = perfev_open(&a, -1, 0, -1, 0);

	if (fd == -EACCES || fd == -EPERM)
		test_skip("system-wide perf events refused (%s): not root and "
			  "perf_event_paranoid > 0", strerror(-fd));
	if (fd < 0)
		fail_msg("system-wide cpu-clock: %s", strerror(-fd));
	close(fd);
}

static void busy(unsigned int ms)
{
	gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;
	volatile uint64_t x = 0;

	while (g_get_monotonic_time() < end)
		x++;
}

static void test_samples_and_no_leaks(void **state)
{
	struct perf_event_attr attrs[3] = {
		sw_sampling(PERF_COUNT_SW_CPU_CLOCK, 100000),    /* every 100 us */
		sw_sampling(PERF_COUNT_SW_PAGE_FAULTS, 1),
		/* no hardware PMU on CI hosts: ENOENT at arm time */
		sw_sampling(PERF_COUNT_SW_CPU_CLOCK, 100000),
	};
	unsigned int fds = count_fds(), maps = count_perf_maps();
	int *cpus = NULL, ncpu = 0;
	struct load *l = NULL;

	need_perf();
	assert_int_equal(perfev_online_cpus(&cpus, &ncpu), 0);
	g_free(cpus);
	attrs[2].type = PERF_TYPE_MAX + 100; /* no such PMU type */

	assert_int_equal(load_arm(attrs, 3, 8, &l), 0);
	assert_int_equal(load_open_events(l), 2 * (size_t)ncpu);
	assert_int_equal(count_fds(), fds + 2 * ncpu);
	assert_int_equal(count_perf_maps(), maps + 2 * ncpu);
	busy(300);
	{
		g_autofree char *junk = g_malloc(1 << 20);
		memset(junk, 1, 1 << 20); /* page faults */
	}
	assert_int_equal(load_disarm(l), 0);
	assert_int_equal(load_open_events(l), 0);
	assert_int_equal(count_fds(), fds);
	assert_int_equal(count_perf_maps(), maps);

	const struct load_count *c0 = load_count_at(l, 0);
	assert_int_equal(c0->open_err, 0);
	assert_int_equal(c0->cpus, (unsigned int)ncpu);
	assert_true(c0->samples > 100);
	print_message("cpu-clock: %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64 " throttle\n",
		      c0->samples, c0->lost, c0->throttle);
	assert_true(load_count_at(l, 1)->samples > 0);
	assert_int_equal(load_count_at(l, 2)->open_err, ENOENT);
	assert_int_equal(load_count_at(l, 2)->cpus, 0);
	assert_null(load_count_at(l, 3));
	load_free(l);
	assert_int_equal(count_fds(), fds);
}

static void test_small_ring_loses(void **state)
{
	/* One data page and samples that cannot fit in it: every sample taken
	 * while a user thread runs carries sample_stack_user bytes of its
	 * stack, twice the ring, so the kernel must drop it and later say so
	 * in a PERF_RECORD_LOST record, however fast the drain thread is.
	 * Samples in the idle task have no user stack and still fit. */
	struct perf_event_attr a = sw_sampling(PERF_COUNT_SW_CPU_CLOCK, 10000);
	g_autoptr(load) l = NULL;
	unsigned int fds = count_fds();
	const struct load_count *c;

	need_perf();
	a.sample_type |= PERF_SAMPLE_RAW | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_STACK_USER;
	/* the kernel takes at most a u16 of stack, 8-byte aligned */
	a.sample_stack_user = MIN(2 * (uint32_t)sysconf(_SC_PAGESIZE), 65528u);
	/* Fork, exit and comm records are small: where every CPU runs user
	 * threads (a loaded CI machine) no sample fits, and the kernel writes
	 * its LOST record ahead of the next record that does. */
	a.task = a.comm = 1;
	assert_int_equal(load_arm(&a, 1, 1, &l), 0);
	c = load_count_at(l, 0);
	assert_int_equal(c->open_err, 0);
	busy(200);
	for (int i = 0; i < 16; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		assert_true(pid > 0);
		waitpid(pid, NULL, 0);
	}
	load_dwell(l, 100);
	assert_int_equal(load_disarm(l), 0);
	print_message("1-page ring: %" PRIu64 " samples, %" PRIu64 " lost in %" PRIu64
		      " LOST records\n", c->samples, c->lost, c->lost_records);
	assert_true(c->lost_records > 0);
	assert_true(c->lost >= c->lost_records);
	assert_int_equal(count_fds(), fds);
}

static void test_bad_args(void **state)
{
	struct load *l = NULL;
	struct perf_event_attr a = sw_sampling(PERF_COUNT_SW_CPU_CLOCK, 100000);

	assert_int_equal(load_arm(&a, 1, 3, &l), -EINVAL);
	assert_null(l);
	/* nothing to arm is fine: a run with no OK attrs */
	assert_int_equal(load_run(NULL, 0, 0, 10, &l), 0);
	assert_int_equal(load_attr_count(l), 0);
	load_free(l);
	load_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_and_no_leaks),
		cmocka_unit_test(test_small_ring_loses),
		cmocka_unit_test(test_bad_args),
	};

	return test_run_group(tests, NULL, NULL);
}
