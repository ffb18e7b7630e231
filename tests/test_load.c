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

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <inttypes.h>
#include <errno.h>
#include <string.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* The program's syscall() is the one lib/ (perfev_open) and GLib call: it
 * hands every call to libc's and, while `captured` is set, keeps the
 * descriptor of each perf_event_open that succeeds. */
static GArray *captured;

long syscall(long nr, ...)
{
	static long (*next)(long, ...);
	long a[6], r;
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!next)
		next = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	r = next(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (nr == __NR_perf_event_open && captured && r >= 0) {
		int fd = (int)r;

		g_array_append_val(captured, fd);
	}
	return r;
}

static void test_samples_and_no_leaks(void **state)
{
	struct perf_event_attr attrs[3] = {
		sw_sampling(PERF_COUNT_SW_CPU_CLOCK, 100000),    /* every 100 us */
		sw_sampling(PERF_COUNT_SW_PAGE_FAULTS, 1),
		/* no hardware PMU on CI hosts: ENOENT at arm time */
		sw_sampling(PERF_COUNT_SW_CPU_CLOCK, 100000),
	};
	unsigned int fds = test_open_fds(), maps = count_perf_maps();
	int *cpus = NULL, ncpu = 0;
	struct load *l = NULL;

	need_perf();
	assert_int_equal(perfev_online_cpus(&cpus, &ncpu), 0);
	g_free(cpus);
	attrs[2].type = PERF_TYPE_MAX + 100; /* no such PMU type */

	assert_int_equal(load_arm(attrs, 3, 8, &l), 0);
	assert_int_equal(load_open_events(l), 2 * (size_t)ncpu);
	assert_int_equal(test_open_fds(), fds + 2 * ncpu);
	assert_int_equal(count_perf_maps(), maps + 2 * ncpu);
	busy(300);
	{
		g_autofree char *junk = g_malloc(1 << 20);
		memset(junk, 1, 1 << 20); /* page faults */
	}
	assert_int_equal(load_disarm(l), 0);
	assert_int_equal(load_open_events(l), 0);
	assert_int_equal(test_open_fds(), fds);
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
	assert_int_equal(test_open_fds(), fds);
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
	unsigned int fds = test_open_fds();
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
	assert_int_equal(test_open_fds(), fds);
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
	/* disarming nothing, or twice, does nothing */
	assert_int_equal(load_disarm(NULL), 0);
}

/* load_disarm() "drains what is left" (load.h): every record the kernel
 * wrote is counted, the last one of each ring too. A second mapping of
 * each ring (the kernel shares a ring among mmaps of one size) outlives
 * load's and is read here by perf_event_open(2)'s rules: records from 0 to
 * data_head. sample_type 0 makes each sample a bare 8-byte header; 64
 * pages hold far more than the samples of 300 ms every 5 ms, so the ring
 * never wraps. */
static void test_disarm_counts_every_record(void **state)
{
	const unsigned int pages = 64;
	struct perf_event_attr a = sw_sampling(PERF_COUNT_SW_CPU_CLOCK, 5000000);
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (pages + 1) * page;
	g_autoptr(GArray) maps = g_array_new(FALSE, FALSE, sizeof(void *));
	struct load *l = NULL;
	uint64_t samples = 0, records = 0;
	const struct load_count *c;

	need_perf();
	a.sample_type = 0;
	captured = g_array_new(FALSE, FALSE, sizeof(int));
	assert_int_equal(load_arm(&a, 1, pages, &l), 0);
	for (guint i = 0; i < captured->len; i++) {
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       g_array_index(captured, int, i), 0);

		assert_true(m != MAP_FAILED);
		g_array_append_val(maps, m);
	}
	g_clear_pointer(&captured, g_array_unref);
	busy(300);
	assert_int_equal(load_disarm(l), 0);
	for (guint i = 0; i < maps->len; i++) {
		struct perf_event_mmap_page *pg = g_array_index(maps, void *, i);
		const unsigned char *data = (const unsigned char *)pg + page;
		uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), off = 0;

		assert_true(head <= pages * page);
		while (off + sizeof(struct perf_event_header) <= head) {
			const struct perf_event_header *h = (const void *)(data + off);

			assert_true(h->size >= sizeof(*h));
			samples += h->type == PERF_RECORD_SAMPLE;
			records++;
			off += h->size;
		}
		munmap(pg, len);
	}
	c = load_count_at(l, 0);
	print_message("%" PRIu64 " records in %u rings, %" PRIu64 " samples\n", records, maps->len,
		      samples);
	assert_true(samples > 0);
	assert_int_equal(c->samples, samples);
	assert_int_equal(c->samples + c->lost_records + c->throttle + c->unthrottle + c->other,
			 records);
	load_free(l);
}

/* Descriptor 0 is a descriptor like any other (open(2) returns the lowest
 * free one): with stdin closed the first event opens as fd 0 and is armed
 * on its CPU, not taken for a failure. */
static void test_fd_zero(void **state)
{
	struct perf_event_attr a = sw_sampling(PERF_COUNT_SW_CPU_CLOCK, 100000);
	int saved, ncpu = 0, *cpus = NULL;
	struct load *l = NULL;
	const struct load_count *c;
	size_t open_events;
	int r;

	need_perf();
	assert_int_equal(perfev_online_cpus(&cpus, &ncpu), 0);
	g_free(cpus);
	saved = dup(STDIN_FILENO);
	assert_true(saved > 0);
	close(STDIN_FILENO);
	r = load_arm(&a, 1, 1, &l);
	open_events = r == 0 ? load_open_events(l) : 0;
	if (r == 0)
		load_disarm(l);
	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);
	assert_int_equal(r, 0);
	c = load_count_at(l, 0);
	assert_int_equal(c->open_err, 0);
	assert_int_equal(c->cpus, (unsigned int)ncpu);
	assert_int_equal(open_events, (size_t)ncpu);
	load_free(l);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal does not cut the dwell short: load_dwell sleeps the whole time
 * asked (nanosleep(2) resumed with what remains after EINTR). */
static void test_dwell_whole(void **state)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct itimerval it = { .it_value = { 0, 50000 } }, none = { 0 };
	struct load *l = NULL;
	gint64 t0, slept;

	sigemptyset(&sa.sa_mask); /* no SA_RESTART: nanosleep fails EINTR */
	assert_int_equal(load_run(NULL, 0, 0, 0, &l), 0);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	t0 = g_get_monotonic_time();
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	load_dwell(l, 400);
	slept = g_get_monotonic_time() - t0;
	setitimer(ITIMER_REAL, &none, NULL);
	sigaction(SIGALRM, &old, NULL);
	load_free(l);
	if (slept < 400000)
		fail_msg("load_dwell(400 ms) returned after %" PRId64 " us", slept);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_and_no_leaks),
		cmocka_unit_test(test_small_ring_loses),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_disarm_counts_every_record),
		cmocka_unit_test(test_fd_zero),
		cmocka_unit_test(test_dwell_whole),
	};

	return test_run_group(tests, NULL, NULL);
}
