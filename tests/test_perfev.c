/* Tests for lib/perfev: the perf_event_open wrapper and the online CPUs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "perfev.h"

#include <errno.h>
#include <glib.h>
#include <string.h>
#include <unistd.h>

static void test_software_event_opens(void **state)
{
	struct perf_event_attr attr;
	uint64_t before = perfev_open_calls();
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.exclude_kernel = 1; /* allowed at any paranoid level for pid 0 */
	fd = perfev_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(perfev_open_calls(), before + 1);
}

/* Descriptor 0 is a descriptor (open(2) gives the lowest free one): with
 * stdin closed the event opens as fd 0, returned as such. */
static void test_fd_zero(void **state)
{
	struct perf_event_attr attr;
	int saved = dup(STDIN_FILENO), fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.exclude_kernel = 1;
	assert_true(saved > 0);
	close(STDIN_FILENO);
	fd = perfev_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0)
		close(fd);
	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);
	assert_int_equal(fd, 0);
}

static void test_error_is_negative_errno(void **state)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = 0xffffff; /* no such software event */
	assert_int_equal(perfev_open(&attr, 0, -1, -1, 0), -ENOENT);
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.size = 1; /* smaller than PERF_ATTR_SIZE_VER0 */
	assert_int_equal(perfev_open(&attr, 0, -1, -1, 0), -E2BIG);
}

/* A newer perf's attr size (up to a page) past this build's struct: the
 * kernel must read zeros there, and its E2BIG write-back of size must not
 * reach the caller (found inside a 6.1 lab host: perf-modern's size 136
 * gave E2BIG on the first CPU only). */
static void test_larger_size_reads_zeros(void **state)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.exclude_kernel = 1;
	attr.size = 4096;
	fd = perfev_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(attr.size, 4096);
	/* beyond a page the kernel refuses and writes its size back: not ours */
	attr.size = 8192;
	assert_int_equal(perfev_open(&attr, 0, -1, -1, 0), -E2BIG);
	assert_int_equal(attr.size, 8192);
}

static void test_online_cpus(void **state)
{
	g_autofree int *cpus = NULL;
	int count = 0;

	assert_int_equal(perfev_online_cpus(&cpus, &count), 0);
	assert_int_equal(count, sysconf(_SC_NPROCESSORS_ONLN));
	for (int i = 1; i < count; i++)
		assert_true(cpus[i] > cpus[i - 1]);
}

/* The list is the kernel's, parsed strictly: a bad one is an error, never
 * a wrong set of CPUs (a huge range once grew memory without bound). */
static void test_cpulist(void **state)
{
	static const struct { const char *text; int count, last; } good[] = {
		{ "0\n", 1, 0 }, { "0-3\n", 4, 3 }, { "0-3,5,7-8", 7, 8 }, { "65535", 1, 65535 },
		/* a range of one CPU, as the kernel's bitmap_parselist() takes it */
		{ "2-2", 1, 2 }, { "0,4-4,6", 3, 6 },
	};
	static const char *const bad[] = {
		"", "\n", " 0", "+1", "-1", "0-", "0,,1", "0,", "3-1", "1,0", "0-3,2",
		"0-4294967295", "65536", "99999999999999999999", "0x1", "0\n\n", "0 1", "1-2a",
		/* a range that runs backwards after a good one */
		"0,3-1", "0,3-2,5",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
		g_autofree int *cpus = NULL;
		int count = 0;

		assert_int_equal(perfev_cpulist_parse(good[i].text, &cpus, &count), 0);
		assert_int_equal(count, good[i].count);
		assert_int_equal(cpus[count - 1], good[i].last);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		int *cpus = NULL, count = -1;

		if (perfev_cpulist_parse(bad[i], &cpus, &count) != -EINVAL)
			fail_msg("cpu list \"%s\" was accepted (%d CPUs)", bad[i], count);
		assert_null(cpus);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_software_event_opens),
		cmocka_unit_test(test_larger_size_reads_zeros),
		cmocka_unit_test(test_fd_zero),
		cmocka_unit_test(test_error_is_negative_errno),
		cmocka_unit_test(test_online_cpus),
		cmocka_unit_test(test_cpulist),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
