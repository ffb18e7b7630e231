/* Tests for lib/log: the error a lib/ function leaves for its caller, and
 * which errnos of a path the user named are bad input (exit 2) rather than
 * a failure of the system (exit 125; README "Commands"). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "log.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* lib/ returns 0 or a negative errno (style.md): a failure is never 0, and
 * a positive or a negative errno comes back negative, its message kept. */
static void test_fail(void **state)
{
	(void)state;
	assert_int_equal(pc_fail(ENOENT, "%s: gone", "a.ini"), -ENOENT);
	assert_string_equal(pc_errmsg(), "a.ini: gone");
	assert_int_equal(pc_fail(-EIO, "b"), -EIO);
	assert_string_equal(pc_errmsg(), "b");
	/* errno 1 (EPERM) is an errno like any other */
	assert_int_equal(pc_fail(EPERM, "p"), -EPERM);
	assert_int_equal(pc_fail(-EPERM, "p"), -EPERM);
	/* errno read after a call that did not set it: still a failure */
	assert_true(pc_fail(0, "c") < 0);
	pc_errclear();
	assert_string_equal(pc_errmsg(), "unknown error");
}

/* The path as given is wrong: missing, a dangling or looping symlink,
 * "file/", too long, not permitted, a directory, a node with nothing behind
 * it. A full disk or quota, an I/O error, no memory, a file too big are the
 * system's. */
static void test_bad_path(void **state)
{
	static const int bad[] = { ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG, EACCES, EPERM, EISDIR,
				   ENXIO, ENODEV, EINVAL };
	static const int not_bad[] = { ENOSPC, EDQUOT, EIO, ENOMEM, EFBIG };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!pc_errno_bad_path(bad[i]) || !pc_errno_bad_path(-bad[i]))
			fail_msg("%s is not a bad path", strerror(bad[i]));
	}
	for (size_t i = 0; i < sizeof(not_bad) / sizeof(not_bad[0]); i++) {
		if (pc_errno_bad_path(not_bad[i]) || pc_errno_bad_path(-not_bad[i]))
			fail_msg("%s is a bad path", strerror(not_bad[i]));
	}
	assert_false(pc_errno_bad_path(0));
}

/* What pc_log() at `level` printed to stderr while the threshold was
 * `current` (a temporary file stands in for stderr). */
static char *logged(enum log_level current, enum log_level level)
{
	g_autofree char *path = NULL;
	int fd = g_file_open_tmp("test_log-XXXXXX", &path, NULL), saved = dup(2);
	enum log_level was = log_get_level();
	char *text = NULL;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fd, 2), 2);
	log_set_level(current);
	pc_log(level, "n=%d", 7);
	fflush(stderr);
	log_set_level(was);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	close(fd);
	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	unlink(path);
	return text;
}

/* A threshold prints its own level and the more severe ones, one line
 * each with the level's name; the less severe are dropped. */
static void test_levels(void **state)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };

	(void)state;
	assert_int_equal(log_get_level(), LOG_WARN); /* the default */
	for (int l = 0; l < LOG_LEVEL_COUNT; l++)
		assert_string_equal(log_level_name(l), names[l]);
	assert_string_equal(log_level_name(LOG_LEVEL_COUNT), "?");
	for (int cur = 0; cur < LOG_LEVEL_COUNT; cur++) {
		for (int l = 0; l < LOG_LEVEL_COUNT; l++) {
			g_autofree char *got = logged(cur, l);
			g_autofree char *want = l <= cur ? g_strdup_printf("pmucanary: %s: n=7\n", names[l])
							 : g_strdup("");

			if (strcmp(got, want))
				fail_msg("level %s at threshold %s printed '%s', want '%s'", names[l],
					 names[cur], got, want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fail),
		cmocka_unit_test(test_bad_path),
		cmocka_unit_test(test_levels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
