/* Shared by the cmocka suites: where the source tree is. */
#ifndef PMUCANARY_TESTUTIL_H
#define PMUCANARY_TESTUTIL_H

#include <glib.h>
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

#endif
