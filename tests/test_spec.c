/* Spec parsing: perf's generic names and aliases, cache spelling rules,
 * sysfs events and terms (fixture tree), raw, modifiers, error positions. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "spec.h"
#include "log.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

static struct pmu_set *pmus;

static int setup(void **state)
{
	const char *top = getenv("PMUCANARY_TOP");
	g_autofree char *root = g_build_filename(top ? top : ".", "tests/data/sysfs", NULL);

	return pmu_set_load(root, &pmus);
}

static int teardown(void **state)
{
	pmu_set_free(pmus);
	return 0;
}

struct ok_case {
	const char *text;
	enum spec_kind kind;
	uint32_t type;
	uint64_t config, config1;
	const char *modifiers;
};

static void test_parse_ok(void **state)
{
	static const struct ok_case cases[] = {
		{ "cycles", SPEC_KIND_GENERIC_HW, 0, 0, 0, "" },
		{ "cpu-cycles:pp", SPEC_KIND_GENERIC_HW, 0, 0, 0, "pp" },
		{ "instructions:u", SPEC_KIND_GENERIC_HW, 0, 1, 0, "u" },
		{ "cache-references", SPEC_KIND_GENERIC_HW, 0, 2, 0, "" },
		{ "cache-misses", SPEC_KIND_GENERIC_HW, 0, 3, 0, "" },
		{ "branches", SPEC_KIND_GENERIC_HW, 0, 4, 0, "" },
		{ "branch-instructions", SPEC_KIND_GENERIC_HW, 0, 4, 0, "" },
		{ "branch-misses", SPEC_KIND_GENERIC_HW, 0, 5, 0, "" },
		{ "bus-cycles", SPEC_KIND_GENERIC_HW, 0, 6, 0, "" },
		{ "idle-cycles-frontend", SPEC_KIND_GENERIC_HW, 0, 7, 0, "" },
		{ "stalled-cycles-backend", SPEC_KIND_GENERIC_HW, 0, 8, 0, "" },
		{ "ref-cycles", SPEC_KIND_GENERIC_HW, 0, 9, 0, "" },
		{ "cpu-clock:GH", SPEC_KIND_SOFTWARE, 1, 0, 0, "GH" },
		{ "task-clock", SPEC_KIND_SOFTWARE, 1, 1, 0, "" },
		{ "faults", SPEC_KIND_SOFTWARE, 1, 2, 0, "" },
		{ "cs", SPEC_KIND_SOFTWARE, 1, 3, 0, "" },
		{ "migrations", SPEC_KIND_SOFTWARE, 1, 4, 0, "" },
		{ "minor-faults", SPEC_KIND_SOFTWARE, 1, 5, 0, "" },
		{ "major-faults", SPEC_KIND_SOFTWARE, 1, 6, 0, "" },
		{ "alignment-faults", SPEC_KIND_SOFTWARE, 1, 7, 0, "" },
		{ "emulation-faults", SPEC_KIND_SOFTWARE, 1, 8, 0, "" },
		{ "dummy", SPEC_KIND_SOFTWARE, 1, 9, 0, "" },
		{ "bpf-output", SPEC_KIND_SOFTWARE, 1, 10, 0, "" },
		{ "cgroup-switches", SPEC_KIND_SOFTWARE, 1, 11, 0, "" },
		/* cache: type | op << 8 | result << 16; op defaults to load,
		 * result to access; either order; aliases. */
		{ "L1-dcache-loads", SPEC_KIND_GENERIC_CACHE, 3, 0x00000, 0, "" },
		{ "L1-dcache-load-misses", SPEC_KIND_GENERIC_CACHE, 3, 0x10000, 0, "" },
		{ "L1-dcache-misses", SPEC_KIND_GENERIC_CACHE, 3, 0x10000, 0, "" },
		{ "l1d-store-miss", SPEC_KIND_GENERIC_CACHE, 3, 0x10100, 0, "" },
		{ "L1-dcache-prefetches", SPEC_KIND_GENERIC_CACHE, 3, 0x00200, 0, "" },
		{ "L1-icache-load-misses", SPEC_KIND_GENERIC_CACHE, 3, 0x10001, 0, "" },
		{ "LLC-loads", SPEC_KIND_GENERIC_CACHE, 3, 0x00002, 0, "" },
		{ "LLC-misses-load", SPEC_KIND_GENERIC_CACHE, 3, 0x10002, 0, "" },
		{ "LLC-store-misses:u", SPEC_KIND_GENERIC_CACHE, 3, 0x10102, 0, "u" },
		{ "dTLB-load-misses", SPEC_KIND_GENERIC_CACHE, 3, 0x10003, 0, "" },
		{ "iTLB-loads", SPEC_KIND_GENERIC_CACHE, 3, 0x00004, 0, "" },
		{ "branch-load-misses", SPEC_KIND_GENERIC_CACHE, 3, 0x10005, 0, "" },
		{ "node-prefetch-misses", SPEC_KIND_GENERIC_CACHE, 3, 0x10206, 0, "" },
		{ "L1-data-speculative-read-access", SPEC_KIND_GENERIC_CACHE, 3, 0x00200, 0, "" },
		/* raw and sysfs (fixture: cpu type 4, msr type 9) */
		{ "r01c2", SPEC_KIND_RAW, 4, 0x1c2, 0, "" },
		{ "rC0:ppp", SPEC_KIND_RAW, 4, 0xc0, 0, "ppp" },
		{ "msr/tsc/", SPEC_KIND_SYSFS_EVENT, 9, 0, 0, "" },
		{ "msr/aperf/u", SPEC_KIND_SYSFS_EVENT, 9, 1, 0, "u" },
		{ "cpu/cpu-cycles/pp", SPEC_KIND_SYSFS_EVENT, 4, 0x3c, 0, "pp" },
		{ "cpu/event=0x3c,umask=0x1/", SPEC_KIND_SYSFS_TERMS, 4, 0x13c, 0, "" },
		{ "cpu/event=0x1ab,inv,cmask=2/", SPEC_KIND_SYSFS_TERMS, 4,
		  0xab | (1ULL << 32) | (1 << 23) | (2 << 24), 0, "" },
		{ "cpu/mem-loads/p", SPEC_KIND_SYSFS_EVENT, 4, 0x1cd, 3, "p" },
		{ "cpu/config=0x1234,config1=7/", SPEC_KIND_SYSFS_TERMS, 4, 0x1234, 7, "" },
		/* perf's num_dec is base 10: "010" is ten, not octal eight. */
		{ "cpu/event=010/", SPEC_KIND_SYSFS_TERMS, 4, 10, 0, "" },
		{ "cpu/config=18446744073709551615/", SPEC_KIND_SYSFS_TERMS, 4, UINT64_MAX, 0, "" },
		{ "rffffffffffffffff", SPEC_KIND_RAW, 4, UINT64_MAX, 0, "" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct spec sp;
		int ret = spec_parse(cases[i].text, pmus, &sp);

		if (ret)
			print_error("%s: %s\n", cases[i].text, pc_errmsg());
		assert_int_equal(ret, 0);
		assert_int_equal(sp.kind, cases[i].kind);
		assert_int_equal(sp.type, cases[i].type);
		if (sp.config != cases[i].config)
			print_error("%s: config 0x%llx\n", cases[i].text, (unsigned long long)sp.config);
		assert_int_equal(sp.config, cases[i].config);
		assert_int_equal(sp.config1, cases[i].config1);
		assert_string_equal(sp.modifiers, cases[i].modifiers);
		assert_string_equal(sp.text, cases[i].text);
		if (*sp.modifiers)
			assert_int_equal(sp.text[sp.modifiers_pos - 1], sp.pmu ? '/' : ':');
		spec_clear(&sp);
	}
}

struct err_case {
	const char *text;
	int err;
	const char *needle; /* must appear in the message, with the position */
};

static void test_parse_errors(void **state)
{
	static const struct err_case cases[] = {
		{ "", -EINVAL, "empty" },
		{ "bogus", -ENOENT, "bogus: unknown event 'bogus' at 1" },
		{ "cycles:", -EINVAL, "at 8" },
		{ ":u", -EINVAL, "at 1" },
		{ "L1-icache-stores", -EINVAL, "at 1" },  /* L1I has no write op */
		{ "iTLB-prefetches", -EINVAL, "at 1" },
		{ "nopmu/tsc/", -ENOENT, "unknown PMU 'nopmu' at 1" },
		{ "msr/nope/", -ENOENT, "'nope' for PMU msr at 5" },
		{ "cpu/event=0x3c,bogus=1/", -ENOENT, "'bogus' for PMU cpu at 16" },
		{ "cpu/event=zz/", -EINVAL, "at 11" },
		{ "cpu/inv=2/", -ERANGE, "at 5" },
		{ "msr/tsc", -EINVAL, "missing closing '/' at 8" },
		{ "msr/tsc/:", -EINVAL, "empty modifier list at 10" },
		{ "rxyz", -ENOENT, "at 1" },
		/* Past 64 bits perf aborts (strtoull ERANGE); never saturate. */
		{ "r10000000000000000", -ERANGE,
		  "r10000000000000000: raw event 'r10000000000000000' does not fit 64 bits at 2" },
		{ "cpu/config=18446744073709551616/", -ERANGE,
		  "term config: '18446744073709551616' does not fit 64 bits at 12" },
		{ "cpu/umask=1,config1=0x10000000000000000/", -ERANGE, "does not fit 64 bits at 21" },
		/* Not numbers to perf's lexer: signs, spaces, quotes, 0X, octal-looking hex. */
		{ "cpu/event=-1/", -EINVAL, "term event: '-1' is not a number (decimal or 0x hex) at 11" },
		{ "cpu/config=\"-1\"/", -EINVAL, "'\"-1\"' is not a number (decimal or 0x hex) at 12" },
		{ "cpu/event= 1/", -EINVAL, "' 1' is not a number (decimal or 0x hex) at 11" },
		{ "cpu/event=+1/", -EINVAL, "at 11" },
		{ "cpu/event=0X3c/", -EINVAL, "at 11" },
		{ "cpu/event=0x/", -EINVAL, "at 11" },
		{ "cpu/event=08x/", -EINVAL, "at 11" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct spec sp;
		int ret = spec_parse(cases[i].text, pmus, &sp);

		if (ret != cases[i].err || !strstr(pc_errmsg(), cases[i].needle))
			print_error("'%s': ret %d msg '%s'\n", cases[i].text, ret, pc_errmsg());
		assert_int_equal(ret, cases[i].err);
		assert_non_null(strstr(pc_errmsg(), cases[i].needle));
	}
}

/* spec_parse_rules(): what each rule admits (perf's parse-events.l/.y),
 * and that rules 0 (spec_parse()) keeps the strict reading. */
static void test_rules(void **state)
{
	const unsigned int all = SPEC_RULE_SKIP_CHARS | SPEC_RULE_EMPTY_MODS |
				 SPEC_RULE_SYMBOL_TERMS | SPEC_RULE_EVENT_TERMS |
				 SPEC_RULE_SYMBOL_EMPTY_TERMS | SPEC_RULE_CACHE_FIRST_WINS |
				 SPEC_RULE_ALIAS_ANY_CASE | SPEC_RULE_ALIAS_ONCE |
				 SPEC_RULE_TERMS_FREQ_TIME | SPEC_RULE_TERM_PERCORE;
	struct spec sp;

	assert_int_equal(spec_parse_rules("cpu-clock/period=10,no-inherit,name=x/u", pmus, all,
					  &sp), 0);
	assert_int_equal(sp.kind, SPEC_KIND_SOFTWARE);
	assert_string_equal(sp.event, "cpu-clock/period=10,no-inherit,name=x/");
	assert_string_equal(sp.modifiers, "u");
	assert_int_equal(sp.terms->len, 3);
	assert_int_equal(g_array_index(sp.terms, struct spec_term, 0).kind, SPEC_TERM_PERIOD);
	assert_int_equal(g_array_index(sp.terms, struct spec_term, 0).value, 10);
	assert_int_equal(g_array_index(sp.terms, struct spec_term, 1).kind, SPEC_TERM_INHERIT);
	assert_int_equal(g_array_index(sp.terms, struct spec_term, 1).value, 0);
	assert_int_equal(sp.terms_given, (1u << SPEC_TERM_PERIOD) | (1u << SPEC_TERM_INHERIT) |
			 (1u << SPEC_TERM_NAME));
	spec_clear(&sp);
	/* the modifier letters of a spaced spec land after the ':' */
	assert_int_equal(spec_parse_rules("cpu-clock : u", pmus, all, &sp), 0);
	assert_string_equal(sp.modifiers, "u");
	spec_clear(&sp);
	assert_int_equal(spec_parse_rules("msr/Tsc/", pmus, all, &sp), 0);
	assert_int_equal(sp.kind, SPEC_KIND_SYSFS_EVENT);
	spec_clear(&sp);
	assert_int_equal(spec_parse_rules("msr/tsc,period=3/", pmus, all, &sp), 0);
	assert_int_equal(sp.kind, SPEC_KIND_SYSFS_TERMS);
	spec_clear(&sp);
	/* an unclosed term list after a symbol or a raw event: the position
	 * is one past the end, as for msr/tsc (test_parse_errors) */
	assert_int_equal(spec_parse_rules("cpu-clock/period=10", pmus, all, &sp), -EINVAL);
	assert_string_equal(pc_errmsg(), "cpu-clock/period=10: missing closing '/' at 20");
	assert_int_equal(spec_parse_rules("r3c/period=1", pmus, all, &sp), -EINVAL);
	assert_string_equal(pc_errmsg(), "r3c/period=1: missing closing '/' at 13");
	/* rules 0: none of it */
	assert_int_equal(spec_parse("cpu-clock/period=10/", pmus, &sp), -EINVAL);
	assert_int_equal(spec_parse(" cpu-clock", pmus, &sp), -ENOENT);
	assert_int_equal(spec_parse("msr/Tsc/", pmus, &sp), -ENOENT);
	assert_int_equal(spec_parse("L1-dcache-load-load", pmus, &sp), -ENOENT);
	assert_int_equal(spec_parse("msr/tsc,tsc/", pmus, &sp), 0);
	spec_clear(&sp);
}

static void test_sysfs_colon(void **state)
{
	struct spec sp;
	g_autofree char *a = spec_join("cycles", "pp");
	g_autofree char *b = spec_join("msr/tsc/", "u");
	g_autofree char *c = spec_join("msr/tsc/", "");

	assert_int_equal(spec_parse("msr/tsc/:u", pmus, &sp), 0);
	assert_true(sp.sysfs_colon);
	assert_string_equal(sp.modifiers, "u");
	assert_int_equal(sp.modifiers_pos, 9);
	spec_clear(&sp);
	assert_int_equal(spec_parse("msr/tsc/u", pmus, &sp), 0);
	assert_false(sp.sysfs_colon);
	spec_clear(&sp);
	assert_string_equal(a, "cycles:pp");
	assert_string_equal(b, "msr/tsc/u");
	assert_string_equal(c, "msr/tsc/");
}

static void test_no_pmus(void **state)
{
	struct spec sp;

	assert_int_equal(spec_parse("cycles:u", NULL, &sp), 0);
	spec_clear(&sp);
	assert_int_equal(spec_parse("msr/tsc/", NULL, &sp), -ENOENT);
	spec_clear(NULL);
}

static void test_generic_names(void **state)
{
	const char *const *hw = spec_generic_names(SPEC_KIND_GENERIC_HW);
	const char *const *sw = spec_generic_names(SPEC_KIND_SOFTWARE);
	const char *const *cache = spec_generic_names(SPEC_KIND_GENERIC_CACHE);
	size_t n = 0;

	assert_string_equal(hw[0], "cpu-cycles");
	assert_string_equal(sw[0], "cpu-clock");
	assert_string_equal(cache[0], "L1-dcache-loads");
	assert_string_equal(cache[1], "L1-dcache-load-misses");
	for (; cache[n]; n++) {
		struct spec sp;
		/* Every listed name parses back as itself. */
		assert_int_equal(spec_parse(cache[n], NULL, &sp), 0);
		assert_int_equal(sp.kind, SPEC_KIND_GENERIC_CACHE);
		spec_clear(&sp);
	}
	/* perf list: L1D 3 ops, L1I 2, LLC 3, dTLB 3, iTLB 1, branch 1, node 3. */
	assert_int_equal(n, 2 * (3 + 2 + 3 + 3 + 1 + 1 + 3));
	assert_null(spec_generic_names(SPEC_KIND_RAW)[0]);
	assert_string_equal(spec_kind_name(SPEC_KIND_SYSFS_TERMS), "sysfs-terms");
	assert_string_equal(spec_kind_name(SPEC_KIND_COUNT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_sysfs_colon),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_no_pmus),
		cmocka_unit_test(test_generic_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
