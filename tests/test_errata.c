/* Tests for lib/errata: the shipped scenarios/errata.ini, matching by CPU,
 * kernel release, attr and harm, and errors that name file, line and key. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "errata.h"
#include "log.h"
#include "results.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char top_dir[4096];

static struct cell *pebs_cell(enum outcome o, int precise_ip, int exclude_guest)
{
	struct cell *c = cell_new("3.6.11", "perf-3.6", "cycles:pp");
	struct perf_event_attr a = { .size = 96, .sample_period = 4000, .freq = 1 };

	a.precise_ip = precise_ip;
	a.exclude_guest = exclude_guest;
	cell_set_attr(c, &a);
	c->outcome = o;
	return c;
}

static const struct cpu_sig ivb = { "GenuineIntel", 6, 58, 9 };

static void test_shipped_file(void **state)
{
	g_autofree char *path = g_strdup_printf("%s/scenarios/errata.ini", top_dir);
	g_autoptr(errata_set) e = NULL;
	g_autoptr(results_cell) crash = pebs_cell(OUTCOME_GUEST_CRASH, 2, 0);
	g_autoptr(results_cell) corrupt = pebs_cell(OUTCOME_GUEST_CORRUPTION, 1, 0);
	g_autoptr(results_cell) fenced = pebs_cell(OUTCOME_GUEST_CRASH, 2, 1);
	g_autoptr(results_cell) hang = pebs_cell(OUTCOME_GUEST_HANG, 2, 0);
	g_autoptr(results_cell) not_precise = pebs_cell(OUTCOME_GUEST_CRASH, 0, 0);
	g_autoptr(results_cell) errno_cell = pebs_cell(OUTCOME_EOPNOTSUPP, 2, 0);
	const struct cpu_sig amd = { "AuthenticAMD", 6, 58, 9 };
	const struct cpu_sig p4 = { "GenuineIntel", 15, 4, 1 };
	const struct erratum *m;

	assert_int_equal(errata_load(path, &e), 0);
	assert_int_equal(errata_count(e), 1);
	m = errata_match(e, &ivb, "3.6.11", crash);
	assert_non_null(m);
	assert_string_equal(erratum_id(m), "intel-pebs-2012");
	assert_non_null(strstr(erratum_title(m), "PEBS"));
	assert_non_null(errata_match(e, &ivb, "3.6.11", corrupt));
	assert_non_null(errata_match(e, &ivb, "2.6.32", crash));
	/* From 3.7 the kernel fences this: a crash there is a regression. */
	assert_null(errata_match(e, &ivb, "3.7.0", crash));
	assert_null(errata_match(e, &ivb, "3.7.0-rc1", crash));
	assert_null(errata_match(e, &ivb, "6.1.0-18-amd64", crash));
	assert_null(errata_match(e, &amd, "3.6.11", crash));
	assert_null(errata_match(e, &p4, "3.6.11", crash));
	assert_null(errata_match(e, &ivb, "3.6.11", fenced));
	assert_null(errata_match(e, &ivb, "3.6.11", hang));
	assert_null(errata_match(e, &ivb, "3.6.11", not_precise));
	assert_null(errata_match(e, &ivb, "3.6.11", errno_cell));
	assert_null(errata_match(NULL, &ivb, "3.6.11", crash));
}

static void test_ranges_and_ops(void **state)
{
	const char *text =
		"# comment\n"
		"; also a comment\n"
		"[erratum a]\n"
		"vendor = *\n"
		"family = 0x6\n"
		"model = 60-63\n"
		"stepping = >=2\n"
		"kernel = >=4.0 <5.10\n"
		"attr = exclude_host!=1, precise_ip<3\n"
		"harm = HOST_WARN\n"
		"[erratum b]\n"
		"harm = GUEST_HANG\n";
	g_autoptr(errata_set) e = NULL;
	g_autoptr(results_cell) warn = pebs_cell(OUTCOME_HOST_WARN, 2, 0);
	g_autoptr(results_cell) hang = pebs_cell(OUTCOME_GUEST_HANG, 3, 1);
	struct cpu_sig hsw = { "GenuineIntel", 6, 63, 2 };
	struct cpu_sig unknown = { "", -1, -1, -1 };

	assert_int_equal(errata_parse(text, "t.ini", &e), 0);
	assert_int_equal(errata_count(e), 2);
	assert_string_equal(erratum_id(errata_get(e, 1)), "b");
	assert_non_null(errata_match(e, &hsw, "5.4.0-42-generic", warn));
	assert_null(errata_match(e, &hsw, "5.10", warn));
	assert_null(errata_match(e, &hsw, "3.19", warn));
	hsw.stepping = 1;
	assert_null(errata_match(e, &hsw, "5.4", warn));
	/* Unknown CPU parts never match a bounded range... */
	assert_null(errata_match(e, &unknown, "5.4", warn));
	/* ...but an entry with no bounds matches anything. */
	assert_string_equal(erratum_id(errata_match(e, &unknown, "", hang)), "b");
}

static void expect_error(const char *text, const char *want);

/* Every number in the file is range-checked and read as perf reads numbers:
 * 0x.. hex, else decimal. Before, ">9223372036854775807" overflowed to an
 * open range that explained every harm on every CPU. */
static void test_bad_numbers(void **state)
{
	expect_error("[erratum x]\nharm = GUEST_CRASH\nfamily = >9223372036854775807\n",
		     "bad.ini:3: key 'family': '>9223372036854775807' is out of range "
		     "(a CPU part is 0..2147483647)");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nfamily = 99999999999999999999\n",
		     "bad.ini:3: key 'family': '99999999999999999999' is out of range");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nmodel = >2147483647\n",
		     "bad.ini:3: key 'model': '>2147483647' is out of range");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nmodel = <0\n",
		     "bad.ini:3: key 'model': '<0' is out of range");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nstepping = 1-4294967297\n",
		     "bad.ini:3: key 'stepping': '1-4294967297' is out of range");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nstepping = +2\n",
		     "bad.ini:3: key 'stepping': '+2' is not N");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nstepping = >=-2\n",
		     "bad.ini:3: key 'stepping': '>=-2' is not N");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nfamily = 0x\n",
		     "bad.ini:3: key 'family': '0x' is not N");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nfamily = 0x0x6\n",
		     "bad.ini:3: key 'family': '0x0x6' is not N");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nattr = precise_ip>=4\n",
		     "bad.ini:3: key 'attr': 'precise_ip>=4': value does not fit "
		     "perf_event_attr.precise_ip");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nattr = config=18446744073709551616\n",
		     "bad.ini:3: key 'attr': 'config=18446744073709551616': value does not fit");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nattr = precise_ip>=-1\n",
		     "bad.ini:3: key 'attr': 'precise_ip>=-1' is not MEMBER OP NUMBER");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nkernel = <3.99999999999\n",
		     "bad.ini:3: key 'kernel': '<3.99999999999': a release is up to 4 decimal parts");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nkernel = <3.7x\n",
		     "bad.ini:3: key 'kernel': '<3.7x'");
	/* a space after the operator: the operator alone is the word the
	 * user is told about, as one that is not OP RELEASE (no release to
	 * have too many parts) */
	expect_error("[erratum x]\nharm = GUEST_CRASH\nkernel = < 3.7\n",
		     "bad.ini:3: key 'kernel': '<' is not OP RELEASE");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nkernel = >=v6.1\n",
		     "bad.ini:3: key 'kernel': '>=v6.1' is not OP RELEASE");
}

/* "010" is ten as perf reads it, not octal eight; 0x.. is hex; the largest
 * attr value fits and matches. */
static void test_number_bases(void **state)
{
	const char *text = "[erratum ten]\nharm = GUEST_CRASH\nfamily = 010\nmodel = 0x3A\n"
			   "kernel = <3.7-rc1\nattr = config=0xffffffffffffffff\n";
	g_autoptr(errata_set) e = NULL;
	g_autoptr(results_cell) crash = pebs_cell(OUTCOME_GUEST_CRASH, 2, 0);
	struct perf_event_attr a = crash->attr;
	struct cpu_sig fam10 = { "GenuineIntel", 10, 58, 9 };
	struct cpu_sig fam8 = { "GenuineIntel", 8, 58, 9 };

	a.config = UINT64_MAX;
	cell_set_attr(crash, &a);
	assert_int_equal(errata_parse(text, "t.ini", &e), 0);
	assert_non_null(errata_match(e, &fam10, "3.6", crash));
	assert_null(errata_match(e, &fam8, "3.6", crash));
}

static void test_kernel_compare(void **state)
{
	assert_true(kernel_release_compare("3.6.11", "3.7") < 0);
	assert_true(kernel_release_compare("3.10", "3.7") > 0);
	assert_int_equal(kernel_release_compare("3.7.0-rc1", "3.7"), 0);
	assert_int_equal(kernel_release_compare("6.1.0-18-amd64", "6.1"), 0);
	assert_true(kernel_release_compare("6.1.0-18-amd64", "6.1.1") < 0);
	/* Parts of any length compare as numbers, never saturated to one value. */
	assert_true(kernel_release_compare("3.18446744073709551616", "3.18446744073709551615") > 0);
	assert_true(kernel_release_compare("3.99999999999999999999999", "3.7") > 0);
	assert_int_equal(kernel_release_compare("3.007", "3.7"), 0);
}

static void expect_error(const char *text, const char *want)
{
	g_autoptr(errata_set) e = NULL;

	assert_int_equal(errata_parse(text, "bad.ini", &e), -EINVAL);
	assert_null(e);
	if (!strstr(pc_errmsg(), want))
		fail_msg("error '%s' lacks '%s'", pc_errmsg(), want);
}

static void test_bad_file(void **state)
{
	expect_error("[erratum x]\nharm = GUEST_CRASH\nfamily = six\n",
		     "bad.ini:3: key 'family'");
	expect_error("[erratum x]\nharm = GUEST_EXPLODED\n", "bad.ini:2: key 'harm'");
	expect_error("[erratum x]\nharm = EINVAL\n", "bad.ini:2: key 'harm'");
	expect_error("[erratum x]\nharm = GUEST_CRASH\n\nattr = precise_ipp>=1\n",
		     "bad.ini:4: key 'attr': unknown perf_event_attr member");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nattr = precise_ip>>1\n",
		     "bad.ini:3: key 'attr'");
	expect_error("[erratum x]\nharm = GUEST_CRASH\nkernel = 3.7\n", "bad.ini:3: key 'kernel'");
	expect_error("[erratum x]\nharm = GUEST_CRASH\ncolour = red\n",
		     "bad.ini:3: key 'colour': unknown key");
	expect_error("harm = GUEST_CRASH\n", "bad.ini:1: key 'harm': outside");
	expect_error("[erratum x]\ntitle = no harm\n[erratum y]\nharm = GUEST_HANG\n",
		     "bad.ini:1: key 'harm'");
	expect_error("[erratum x]\nharm = GUEST_CRASH\n[erratum x]\nharm = GUEST_CRASH\n",
		     "bad.ini:3: erratum 'x' defined twice");
	expect_error("[errata x]\n", "bad.ini:1: section");
	expect_error("[erratum x\n", "bad.ini:1: section");
	expect_error("[erratum x]\nno equals sign\n", "bad.ini:2:");
}

static void test_missing_file(void **state)
{
	g_autoptr(errata_set) e = NULL;

	assert_int_equal(errata_load("/nonexistent/errata.ini", &e), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "/nonexistent/errata.ini"));
}

static void test_cpu_sig_from_host(void **state)
{
	json_t *nested = json_pack("{s:{s:s,s:i,s:i,s:i}}", "cpu", "vendor", "GenuineIntel",
				   "family", 6, "model", 58, "stepping", 9);
	json_t *flat = json_pack("{s:s,s:i,s:i,s:i}", "cpu_vendor", "AuthenticAMD", "family", 23,
				 "model", 1, "stepping", 2);
	json_t *partial = json_pack("{s:{s:s,s:n}}", "cpu", "vendor", "GenuineIntel", "family");
	struct cpu_sig s;
	g_autofree char *a = NULL, *b = NULL, *c = NULL, *d = NULL;

	cpu_sig_from_host(nested, &s);
	a = cpu_sig_to_string(&s);
	assert_string_equal(a, "GenuineIntel 6/58/9");
	assert_true(cpu_sig_equal(&s, &ivb));
	cpu_sig_from_host(flat, &s);
	b = cpu_sig_to_string(&s);
	assert_string_equal(b, "AuthenticAMD 23/1/2");
	cpu_sig_from_host(partial, &s);
	c = cpu_sig_to_string(&s);
	assert_string_equal(c, "GenuineIntel ?/?/?");
	cpu_sig_from_host(NULL, &s);
	d = cpu_sig_to_string(&s);
	assert_string_equal(d, "? ?/?/?");
	json_decref(nested);
	json_decref(flat);
	json_decref(partial);
}

/* A part beyond int is unknown, not truncated: 2^32+6 is no family 6. */
static void test_cpu_sig_out_of_range(void **state)
{
	json_t *big = json_pack("{s:{s:s,s:I,s:s,s:s}}", "cpu", "vendor", "GenuineIntel",
				"family", (json_int_t)4294967302LL, "model", "010",
				"stepping", "-1");
	struct cpu_sig s;
	g_autofree char *a = NULL;

	cpu_sig_from_host(big, &s);
	a = cpu_sig_to_string(&s);
	assert_string_equal(a, "GenuineIntel ?/10/?");
	json_decref(big);
}

/* Two signatures are the same CPU only when vendor, family, model and
 * stepping all agree: each part on its own tells two CPUs apart. */
static void test_cpu_sig_equal_each_part(void **state)
{
	const struct cpu_sig same = { "GenuineIntel", 6, 58, 9 };
	const struct cpu_sig other[] = {
		{ "AuthenticAMD", 6, 58, 9 },
		{ "GenuineIntel", 15, 58, 9 },
		{ "GenuineIntel", 6, 62, 9 },
		{ "GenuineIntel", 6, 58, 4 },
	};

	(void)state;
	assert_true(cpu_sig_equal(&ivb, &same));
	for (size_t i = 0; i < G_N_ELEMENTS(other); i++) {
		assert_false(cpu_sig_equal(&ivb, &other[i]));
		assert_false(cpu_sig_equal(&other[i], &ivb));
	}
}

/* errata.h: a cell with no attr is never explained, even by an entry that
 * sets no attr condition (nothing says what was measured). */
static void test_no_attr_no_match(void **state)
{
	const char *text = "[erratum any]\nharm = GUEST_CRASH\n";
	g_autoptr(errata_set) e = NULL;
	g_autoptr(results_cell) bare = cell_new("3.6.11", "perf-3.6", "cycles:pp");
	g_autoptr(results_cell) with = pebs_cell(OUTCOME_GUEST_CRASH, 2, 0);

	(void)state;
	bare->outcome = OUTCOME_GUEST_CRASH;
	assert_int_equal(errata_parse(text, "t.ini", &e), 0);
	assert_false(bare->has_attr);
	assert_null(errata_match(e, &ivb, "3.6.11", bare));
	assert_null(errata_match(e, &ivb, "3.6.11", NULL));
	assert_non_null(errata_match(e, &ivb, "3.6.11", with));
}

int main(void)
{
	g_autofree char *top = test_top_dir();

	snprintf(top_dir, sizeof(top_dir), "%s", top);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_file),
		cmocka_unit_test(test_ranges_and_ops),
		cmocka_unit_test(test_kernel_compare),
		cmocka_unit_test(test_bad_numbers),
		cmocka_unit_test(test_number_bases),
		cmocka_unit_test(test_bad_file),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_cpu_sig_from_host),
		cmocka_unit_test(test_cpu_sig_out_of_range),
		cmocka_unit_test(test_cpu_sig_equal_each_part),
		cmocka_unit_test(test_no_attr_no_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
