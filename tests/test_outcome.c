/* Tests for lib/outcome: the one vocabulary of the matrix (design.md
 * "outcome"), and the errno each errno outcome stands for: Linux's numbers
 * (asm-generic/errno-base.h, errno.h), as perf_event_open returns them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "outcome.h"

#include <string.h>

static void test_names(void **state)
{
	static const char *const harm[] = { "GUEST_CRASH", "GUEST_HANG", "GUEST_REBOOT",
					    "GUEST_CORRUPTION", "GUEST_OOPS", "HOST_WARN",
					    "HOST_CRASH", "HOST_HANG" };

	(void)state;
	for (int o = 0; o < OUTCOME_COUNT; o++)
		assert_int_equal(outcome_from_name(outcome_name(o)), o);
	assert_int_equal(outcome_from_name("GUEST_EXPLODED"), OUTCOME_COUNT);
	assert_int_equal(outcome_from_name(NULL), OUTCOME_COUNT);
	for (size_t i = 0; i < sizeof(harm) / sizeof(harm[0]); i++)
		assert_true(outcome_is_harm(outcome_from_name(harm[i])));
	/* neither is a kernel verdict, nor is OK or an errno harm */
	assert_false(outcome_is_harm(OUTCOME_INFRA));
	assert_false(outcome_is_harm(OUTCOME_REJECTED));
	assert_false(outcome_is_harm(OUTCOME_OK));
	assert_false(outcome_is_harm(OUTCOME_EOPNOTSUPP));
	/* the value for "no outcome" (a cell one run lacks) and past it:
	 * named "?", of the infra class (never a harm), no errno */
	for (int o = OUTCOME_COUNT; o <= OUTCOME_COUNT + 1; o++) {
		assert_string_equal(outcome_name(o), "?");
		assert_int_equal(outcome_class(o), OUTCOME_CLASS_INFRA);
		assert_false(outcome_is_harm(o));
	}
	/* and the last real outcome has its own name */
	assert_string_not_equal(outcome_name(OUTCOME_COUNT - 1), "?");
}

/* The class words `matrix --outcome` takes (README: `ok`, `errno`, `harm`,
 * `infra`) and `rejected`; no class past the table. */
static void test_class_names(void **state)
{
	(void)state;
	assert_string_equal(outcome_class_name(OUTCOME_CLASS_OK), "ok");
	assert_string_equal(outcome_class_name(OUTCOME_CLASS_ERRNO), "errno");
	assert_string_equal(outcome_class_name(OUTCOME_CLASS_HARM), "harm");
	assert_string_equal(outcome_class_name(OUTCOME_CLASS_INFRA), "infra");
	assert_string_equal(outcome_class_name(OUTCOME_CLASS_REJECTED), "rejected");
	assert_string_equal(outcome_class_name(OUTCOME_CLASS_COUNT), "?");
	assert_string_equal(outcome_class_name(OUTCOME_CLASS_COUNT + 1), "?");
}

static void test_errno(void **state)
{
	(void)state;
	/* x86-64 Linux: EPERM 1, ENOENT 2, EACCES 13, EINVAL 22, EOPNOTSUPP 95 */
	assert_int_equal(outcome_errno(outcome_from_name("EPERM")), 1);
	assert_int_equal(outcome_errno(outcome_from_name("ENOENT")), 2);
	assert_int_equal(outcome_errno(outcome_from_name("EACCES")), 13);
	assert_int_equal(outcome_errno(outcome_from_name("EINVAL")), 22);
	assert_int_equal(outcome_errno(outcome_from_name("EOPNOTSUPP")), 95);
	assert_int_equal(outcome_from_errno(95), OUTCOME_EOPNOTSUPP);
	assert_int_equal(outcome_from_errno(-22), OUTCOME_EINVAL);
	assert_int_equal(outcome_from_errno(0), OUTCOME_OK);
	assert_int_equal(outcome_from_errno(4095), OUTCOME_EUNKNOWN);
	/* what is no errno has none */
	assert_int_equal(outcome_errno(OUTCOME_EUNKNOWN), 0);
	assert_int_equal(outcome_errno(OUTCOME_OK), 0);
	assert_int_equal(outcome_errno(OUTCOME_GUEST_CRASH), 0);
	assert_int_equal(outcome_errno(OUTCOME_INFRA), 0);
	assert_int_equal(outcome_errno(OUTCOME_COUNT), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_errno),
		cmocka_unit_test(test_class_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
