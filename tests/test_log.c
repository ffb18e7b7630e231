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
#include <string.h>

/* lib/ returns 0 or a negative errno (style.md): a failure is never 0, and
 * a positive or a negative errno comes back negative, its message kept. */
static void test_fail(void **state)
{
	(void)state;
	assert_int_equal(pc_fail(ENOENT, "%s: gone", "a.ini"), -ENOENT);
	assert_string_equal(pc_errmsg(), "a.ini: gone");
	assert_int_equal(pc_fail(-EIO, "b"), -EIO);
	assert_string_equal(pc_errmsg(), "b");
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
				   ENXIO, ENODEV };
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fail),
		cmocka_unit_test(test_bad_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
