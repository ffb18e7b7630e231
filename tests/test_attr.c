/* The attr model: JSON names, round trips, equality and hashing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "attr.h"
#include "log.h"
#include "outcome.h"

#include <errno.h>
#include <glib.h>
#include <string.h>

static void test_json_names_are_kernel_names(void **state)
{
	struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE, .config = 0 };
	a.precise_ip = 2;
	a.exclude_guest = 1;
	a.sample_period = 4000;
	a.freq = 1;
	json_t *j = attr_to_json(&a);

	assert_int_equal(json_integer_value(json_object_get(j, "precise_ip")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "exclude_guest")), 1);
	/* freq decides which union member name is shown. */
	assert_int_equal(json_integer_value(json_object_get(j, "sample_freq")), 4000);
	assert_null(json_object_get(j, "sample_period"));
	/* zero members are left out, type 0 included */
	assert_null(json_object_get(j, "type"));
	assert_null(json_object_get(j, "exclude_user"));
	json_decref(j);
}

static void test_json_round_trip(void **state)
{
	struct perf_event_attr a = { 0 }, b;

	a.type = PERF_TYPE_SOFTWARE;
	a.size = PERF_ATTR_SIZE_VER5;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
	a.exclude_user = a.exclude_hv = a.exclude_host = 1;
	a.clockid = -1;
	a.branch_sample_type = 0xffffffffffffffffULL; /* beyond JSON's int64 */
	json_t *j = attr_to_json(&a);
	assert_int_equal(attr_from_json(j, &b), 0);
	/* byte for byte, not only as attr_equal (under test here too) sees it */
	assert_memory_equal(&a, &b, sizeof(a));
	assert_true(attr_equal(&a, &b));
	assert_int_equal(attr_hash(&a), attr_hash(&b));
	json_decref(j);
}

static void test_json_rejects_bad_members(void **state)
{
	struct perf_event_attr a;
	json_t *j = json_pack("{s:i}", "exclude_nothing", 1);

	assert_int_equal(attr_from_json(j, &a), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "exclude_nothing"));
	json_decref(j);
	j = json_pack("{s:i}", "precise_ip", 4); /* a 2-bit field */
	assert_int_equal(attr_from_json(j, &a), -ERANGE);
	assert_non_null(strstr(pc_errmsg(), "precise_ip"));
	json_decref(j);
	j = json_pack("{s:s}", "config", "0xzz");
	assert_int_equal(attr_from_json(j, &a), -EINVAL);
	json_decref(j);
	/* A string member is 0x hex or decimal: strtoull would have taken
	 * "-1" as 0xffffffffffffffff, " 5" as 5 and "010" as octal 8. */
	j = json_pack("{s:s}", "config", "-1");
	assert_int_equal(attr_from_json(j, &a), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "attr: member \"config\" is not a number"));
	json_decref(j);
	j = json_pack("{s:s}", "config", " 5");
	assert_int_equal(attr_from_json(j, &a), -EINVAL);
	json_decref(j);
	j = json_pack("{s:s}", "config", "0x10000000000000000");
	assert_int_equal(attr_from_json(j, &a), -ERANGE);
	assert_non_null(strstr(pc_errmsg(), "attr: member \"config\" value 0x10000000000000000 does not fit"));
	json_decref(j);
	j = json_pack("{s:s}", "config", "010");
	assert_int_equal(attr_from_json(j, &a), 0);
	assert_int_equal(a.config, 10);
	json_decref(j);
}

static void test_equal_ignores_padding(void **state)
{
	struct perf_event_attr a, b;

	memset(&a, 0xaa, sizeof(a));
	memset(&b, 0x00, sizeof(b));
	/* Copy every member through the table; padding stays different. */
	for (int f = 0; f < ATTR_FIELD_COUNT; f++)
		attr_set(&b, f, attr_get(&a, f));
	assert_true(attr_equal(&a, &b));
	b.exclude_guest ^= 1;
	assert_false(attr_equal(&a, &b));
}

static void test_to_string(void **state)
{
	struct perf_event_attr a = { .type = 1, .config = 0 };
	a.exclude_guest = 1;
	a.precise_ip = 3;
	g_autofree char *s = attr_to_string(&a);
	assert_string_equal(s, "type=1 precise_ip=3 exclude_guest=1");
}

/* The masks and the config words print in hex as perf shows them
 * (config=0x3c), the counts and sizes in decimal; the header's example. */
static void test_to_string_hex_members(void **state)
{
	struct perf_event_attr a = { .type = 4, .config = 0x3c };

	a.sample_period = 4000;
	a.sample_type = 0x107;
	a.read_format = 0xf;
	a.wakeup_events = 16;
	a.config1 = 0x10;
	a.config2 = 0x20;
	a.branch_sample_type = 0x40;
	a.precise_ip = 2;
	g_autofree char *s = attr_to_string(&a);
	assert_string_equal(s, "type=4 config=0x3c sample_period=4000 sample_type=0x107 "
			       "read_format=0xf wakeup_events=16 config1=0x10 config2=0x20 "
			       "branch_sample_type=0x40 precise_ip=2");
}

/* attrs as GHashTable keys: equal attrs hash the same (above), and a hash
 * that drops a bit of a member would put every attr differing only there in
 * one bucket. Each bit of config, and each member set to 1, gives its own
 * hash, none that of the zero attr. */
static void test_hash_every_bit_counts(void **state)
{
	g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
	struct perf_event_attr zero = { 0 };

	g_hash_table_add(seen, GUINT_TO_POINTER(attr_hash(&zero)));
	for (int b = 0; b < 64; b++) {
		struct perf_event_attr a = { .config = 1ULL << b };

		if (!g_hash_table_add(seen, GUINT_TO_POINTER(attr_hash(&a))))
			fail_msg("config bit %d hashes as another attr", b);
	}
	for (int f = 0; f < ATTR_FIELD_COUNT; f++) {
		struct perf_event_attr a = { 0 };

		if (f == ATTR_F_config)
			continue; /* config=1 is bit 0 above */
		assert_int_equal(attr_set(&a, f, 1), 0);
		if (!g_hash_table_add(seen, GUINT_TO_POINTER(attr_hash(&a))))
			fail_msg("%s=1 hashes as another attr", attr_field_name(f));
	}
}

static void test_outcome_table(void **state)
{
	assert_int_equal(outcome_from_errno(EOPNOTSUPP), OUTCOME_EOPNOTSUPP);
	assert_int_equal(outcome_from_errno(0), OUTCOME_OK);
	assert_int_equal(outcome_from_errno(12345), OUTCOME_EUNKNOWN);
	assert_string_equal(outcome_name(OUTCOME_GUEST_CRASH), "GUEST_CRASH");
	assert_int_equal(outcome_from_name("GUEST_HANG"), OUTCOME_GUEST_HANG);
	assert_int_equal(outcome_from_name("NOPE"), OUTCOME_COUNT);
	assert_true(outcome_is_harm(OUTCOME_HOST_WARN));
	assert_false(outcome_is_harm(OUTCOME_INFRA));
	assert_int_equal(outcome_class(OUTCOME_INFRA), OUTCOME_CLASS_INFRA);
	for (int o = 0; o < OUTCOME_COUNT; o++)
		assert_int_equal(outcome_from_name(outcome_name(o)), o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_names_are_kernel_names),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_json_rejects_bad_members),
		cmocka_unit_test(test_equal_ignores_padding),
		cmocka_unit_test(test_to_string),
		cmocka_unit_test(test_to_string_hex_members),
		cmocka_unit_test(test_hash_every_bit_counts),
		cmocka_unit_test(test_outcome_table),
	};
	return cmocka_run_group_tests_name("attr", tests, NULL, NULL);
}
