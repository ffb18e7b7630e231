/* Tests for lib/lab/bisect.c's reading of git's output (the words of
 * git-bisect.c's messages: "Bisecting: N revisions left to test after this
 * (roughly M steps)", "SHA is the first bad commit"). The driver itself
 * runs against real git in tests/cli_bisect.sh and over real kernels in
 * tests/slow_bisect.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "bisect.h"
#include "testutil.h"

#include <string.h>

static void test_steps(void **state)
{
	(void)state;
	assert_int_equal(bisect_parse_steps("Bisecting: 3 revisions left to test after this "
					    "(roughly 2 steps)\n[0123abc] x\n"), 2);
	assert_int_equal(bisect_parse_steps("Bisecting: 0 revisions left to test after this "
					    "(roughly 0 steps)\n"), 0);
	assert_int_equal(bisect_parse_steps("Bisecting: 1 revision left to test after this "
					    "(roughly 1 step)\n"), 1);
	assert_int_equal(bisect_parse_steps("(roughly 64 steps)"), 64);
	assert_int_equal(bisect_parse_steps("(roughly 65 steps)"), -1);
	assert_int_equal(bisect_parse_steps("(roughly -1 steps)"), -1);
	assert_int_equal(bisect_parse_steps("(roughly two steps)"), -1);
	assert_int_equal(bisect_parse_steps("(roughly 3 commits)"), -1);
	assert_int_equal(bisect_parse_steps("abc is the first bad commit\n"), -1);
	assert_int_equal(bisect_parse_steps(""), -1);
	assert_int_equal(bisect_parse_steps(NULL), -1);
}

static void test_first_bad(void **state)
{
	const char *sha = "a962a568b57b892f9c22b2de628c301923ba0599";
	g_autofree char *out = g_strdup_printf("%s is the first bad commit\ncommit %s\n", sha, sha);
	g_autofree char *later = g_strdup_printf("Bisecting: ...\n%s is the first bad commit\n", sha);
	g_autofree char *got = NULL, *got2 = NULL, *got3 = NULL;

	(void)state;
	got = bisect_parse_first_bad(out);
	assert_string_equal(got, sha);
	got2 = bisect_parse_first_bad(later);
	assert_string_equal(got2, sha);
	got3 = bisect_parse_first_bad("0123abc is the first bad commit\n");
	assert_string_equal(got3, "0123abc");
	/* not at the start of a line, too short, no hash, none at all */
	assert_null(bisect_parse_first_bad("see a962a568b57b is the first bad commit"));
	assert_null(bisect_parse_first_bad("x a962a568b57b is the first bad commit"));
	assert_null(bisect_parse_first_bad("0123ab is the first bad commit\n"));
	assert_null(bisect_parse_first_bad(" is the first bad commit\n"));
	assert_null(bisect_parse_first_bad("Bisecting: 3 revisions left to test\n"));
	assert_null(bisect_parse_first_bad(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_first_bad),
	};

	return test_run_group(tests, NULL, NULL);
}
