/* Shared by the cmocka suites: where the source tree is, and skips that
 * tests/run-tests can see. Include after <cmocka.h>. */
#ifndef PMUCANARY_TESTUTIL_H
#define PMUCANARY_TESTUTIL_H

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

/* $PMUCANARY_TOP (set by tests/run-tests), else two levels above the test
 * binary (build/tests/test_x -> the checkout). Caller g_free()s. */
static inline char *test_top_dir(void)
{
	const char *top = getenv("PMUCANARY_TOP");
	g_autofree char *exe = NULL, *dir = NULL;

	if (top)
		return g_strdup(top);
	exe = g_file_read_link("/proc/self/exe", NULL);
	dir = g_path_get_dirname(exe ? exe : ".");
	return g_build_filename(dir, "..", "..", NULL);
}

/* Tests skipped in this process (test_skip). */
static unsigned int test_skips __attribute__((unused));

/* Skips the running test for a missing environment (not root, no perf
 * binary, no msr PMU), never for a failure of our own code. cmocka 1.1.5's
 * skip() leaves the exit status 0, so the "SKIP: reason" line and
 * test_run_group()'s 77 are what tests/run-tests counts. */
#define test_skip(...)                                  \
	do {                                            \
		printf("SKIP: " __VA_ARGS__);           \
		printf("\n");                           \
		fflush(stdout);                         \
		test_skips++;                           \
		skip();                                 \
	} while (0)

/* main's exit status: failures first, then 77 (automake's skip) when any
 * test skipped, else 0. A failure count of 77 or above 255 would read as a
 * skip or a pass, so it is clamped to 1. */
static inline int test_exit_status(int failed)
{
	if (failed)
		return failed > 0 && failed < 77 ? failed : 1;
	return test_skips ? 77 : 0;
}

#define test_run_group(tests, setup, teardown) \
	test_exit_status(cmocka_run_group_tests(tests, setup, teardown))

#endif
