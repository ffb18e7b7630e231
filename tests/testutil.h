/* Shared by the cmocka suites: where the source tree is, and skips that
 * tests/run-tests can see. Include after <cmocka.h>. */
#ifndef PMUCANARY_TESTUTIL_H
#define PMUCANARY_TESTUTIL_H

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

/* How many descriptors this process has open now (/proc/self/fd, less the
 * one reading it): compare two counts to see a leak. */
static inline unsigned int test_open_fds(void)
{
	GDir *d = g_dir_open("/proc/self/fd", 0, NULL);
	unsigned int n = 0;

	if (!d) {
		fprintf(stderr, "test_open_fds: cannot read /proc/self/fd\n");
		exit(1);
	}
	while (g_dir_read_name(d))
		n++;
	g_dir_close(d);
	return n;
}

/* Online CPUs from /sys/devices/system/cpu/online, read here rather than
 * with lib/'s parser (perfev_online_cpus), which is what some tests check. */
static inline GArray *test_online_cpus(void)
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

/* A fresh directory under $TMPDIR for one test ("name-XXXXXX"). */
static inline char *test_tmpdir(const char *name)
{
	g_autofree char *tmpl = g_strdup_printf("%s-XXXXXX", name);
	char *dir = g_dir_make_tmp(tmpl, NULL);

	assert_non_null(dir);
	return dir;
}

/* Empties dir (files, and subdirectories that are empty) and removes it. */
static inline void test_tmpdir_remove(const char *dir)
{
	g_autoptr(GDir) d = dir ? g_dir_open(dir, 0, NULL) : NULL;
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree char *p = g_build_filename(dir, name, NULL);

		if (unlink(p) < 0)
			rmdir(p);
	}
	if (dir)
		rmdir(dir);
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
