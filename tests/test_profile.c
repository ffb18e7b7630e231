/* Profiles: each release's encoding of a table of specs (from that
 * release's parse-events.c / util.c, and for perf-6.1 from Debian's
 * /usr/bin/perf 6.1.187 -vv output), record/stat members, fallback chains. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "attr.h"
#include "log.h"
#include "profile.h"

#include <errno.h>
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

/* Expected bits: exclude_user kernel hv host guest, precise_ip; or an error
 * whose message contains err. */
struct enc {
	const char *spec;
	const char *bits; /* "ukhHG p" as 0/1 and a digit, e.g. "00001 0" */
	const char *err;
};

static void check_table(const char *profile, const struct enc *t, size_t n)
{
	const struct profile *p = profile_find(profile);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		struct perf_event_attr a;
		int ret = profile_encode(p, pmus, t[i].spec, PROFILE_MODE_STAT, &a);
		char got[16];

		if (t[i].err) {
			if (ret == 0 || !strstr(pc_errmsg(), t[i].err))
				print_error("%s %s: want error '%s', got %d '%s'\n", profile,
					    t[i].spec, t[i].err, ret, ret ? pc_errmsg() : "");
			assert_int_not_equal(ret, 0);
			assert_non_null(strstr(pc_errmsg(), t[i].err));
			continue;
		}
		if (ret)
			print_error("%s %s: %s\n", profile, t[i].spec, pc_errmsg());
		assert_int_equal(ret, 0);
		snprintf(got, sizeof(got), "%d%d%d%d%d %d", a.exclude_user, a.exclude_kernel,
			 a.exclude_hv, a.exclude_host, a.exclude_guest, a.precise_ip);
		if (strcmp(got, t[i].bits))
			print_error("%s %s: got %s want %s\n", profile, t[i].spec, got, t[i].bits);
		assert_string_equal(got, t[i].bits);
	}
}

/* tools/perf/util/parse-events.c @v3.6 parse_events_modifier() and
 * util/util.c event_attr_init() (perf_guest = false). */
static void test_perf_3_6(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00001 0", NULL },   /* event_attr_init default */
		{ "cycles:u", "01100 0", NULL }, /* any modifier replaces it */
		{ "cycles:k", "10100 0", NULL },
		{ "cycles:h", "11000 0", NULL },
		{ "cycles:uk", "00100 0", NULL },
		{ "cycles:p", "00000 1", NULL }, /* the 2012 story: counts guests */
		{ "cycles:pp", "00000 2", NULL },
		{ "cycles:ppp", "00000 3", NULL },
		{ "cycles:ppH", "00001 2", NULL },
		{ "cycles:G", "00010 0", NULL },
		{ "cycles:pG", "00010 1", NULL },
		{ "cycles:GH", "00000 0", NULL },
		{ "cycles:uu", "01100 0", NULL }, /* repeats allowed */
		{ "cycles:pppp", NULL, "at 11" },
		{ "cycles:P", NULL, "unknown modifier 'P' at 8" },
		{ "cycles:x", NULL, "unknown modifier 'x' at 8" },
	};
	check_table("perf-3.6", t, G_N_ELEMENTS(t));
}

/* 1342798cc13e: 'p' sets exclude_guest unless G/H was given. */
static void test_perf_3_7(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00001 0", NULL },
		{ "cycles:u", "01100 0", NULL },
		{ "cycles:p", "00001 1", NULL },
		{ "cycles:pp", "00001 2", NULL },
		{ "cycles:ppH", "00001 2", NULL },
		{ "cycles:pG", "00010 1", NULL },
		{ "cycles:Gp", "00010 1", NULL },
		{ "cycles:GH", "00000 0", NULL },
		{ "cycles:uk", "00100 0", NULL },
		{ "cycles:pppp", NULL, "too many 'p'" },
		{ "cycles:S", NULL, "unknown modifier 'S'" },
		{ "cycles:uu", "01100 0", NULL }, /* no check_modifier() before 3.8 */
		{ "cycles:k", "10100 0", NULL },
		{ "cycles:ppp", "00001 3", NULL },
		{ "cycles:G", "00010 0", NULL },
		{ "cycles:H", "00001 0", NULL },
		{ "cycles:pu", "01101 1", NULL },
	};
	check_table("perf-3.7", t, G_N_ELEMENTS(t));
}

/* get_event_modifier() + check_modifier("ukhGHppp") in a 3.8-3.10-era
 * util/parse-events.c: 'p' still sets exclude_guest (the kernel revert of
 * 20b279ddb38c did not touch the tool), every letter but p at most once. */
static void test_perf_3_8(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00001 0", NULL },
		{ "cycles:u", "01100 0", NULL },
		{ "cycles:k", "10100 0", NULL },
		{ "cycles:p", "00001 1", NULL },
		{ "cycles:pp", "00001 2", NULL },
		{ "cycles:ppp", "00001 3", NULL },
		{ "cycles:ppH", "00001 2", NULL },
		{ "cycles:G", "00010 0", NULL },
		{ "cycles:pG", "00010 1", NULL },
		{ "cycles:GH", "00000 0", NULL },
		{ "cycles:ukhGHppp", "00000 3", NULL },
		{ "cycles:pppp", NULL, "too many 'p'" },
		{ "cycles:uu", NULL, "repeated modifier 'u' at 9" },
		{ "cycles:GG", NULL, "repeated modifier 'G'" },
		{ "cycles:S", NULL, "unknown modifier 'S'" },
		{ "cycles:D", NULL, "unknown modifier 'D'" },
	};
	check_table("perf-3.8", t, G_N_ELEMENTS(t));
}

/* check_modifier("ukhGHpppSD") in a 3.1x-era util/parse-events.c: S and D,
 * no I or P yet. */
static void test_perf_3_12(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00001 0", NULL },
		{ "cycles:u", "01100 0", NULL },
		{ "cycles:pp", "00001 2", NULL },
		{ "cycles:pG", "00010 1", NULL },
		{ "cycles:S", "00000 0", NULL },
		{ "cycles:D", "00000 0", NULL },
		{ "cycles:uS", "01100 0", NULL },
		{ "cycles:SS", NULL, "repeated modifier 'S'" },
		{ "cycles:I", NULL, "unknown modifier 'I'" },
		{ "cycles:P", NULL, "unknown modifier 'P'" },
		{ "cycles:pppp", NULL, "too many 'p'" },
	};
	const struct profile *p = profile_find("perf-3.12");
	struct perf_event_attr a;

	check_table("perf-3.12", t, G_N_ELEMENTS(t));
	assert_int_equal(profile_encode(p, pmus, "cycles:D", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.pinned, 1);
	assert_int_equal(profile_encode(p, pmus, "cycles:S", PROFILE_MODE_RECORD, &a), 0);
	assert_true(a.sample_type & PERF_SAMPLE_READ);
}

/* @4.8 (WindRiver-Labs/kernel-4.8.x): letters ukhGHpIPSD, no W. */
static void test_perf_4_8(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00001 0", NULL },
		{ "cycles:u", "01100 0", NULL },
		{ "cycles:pp", "00001 2", NULL },
		{ "cycles:I", "00000 0", NULL },
		{ "cycles:P", "00000 0", NULL },
		{ "cycles:Pu", "01100 0", NULL },
		{ "cycles:ukhGHpppPSDI", "00000 3", NULL },
		{ "cycles:W", NULL, "unknown modifier 'W'" },
		{ "cycles:II", NULL, "repeated modifier 'I'" },
	};
	const struct profile *p = profile_find("perf-4.8");
	struct perf_event_attr a;

	check_table("perf-4.8", t, G_N_ELEMENTS(t));
	assert_int_equal(profile_encode(p, pmus, "cycles:I", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.exclude_idle, 1);
	/* record: P starts the walk at 3; no PERF_FORMAT_LOST before perf 6.0. */
	assert_int_equal(profile_encode(p, pmus, "cycles:P", PROFILE_MODE_RECORD, &a), 0);
	assert_int_equal(a.precise_ip, 3);
	assert_int_equal(a.read_format, PERF_FORMAT_ID);
	assert_int_equal(a.size, PERF_ATTR_SIZE_VER5);
}

/* @5.2 (linux-yocto-5.2): check_modifier("ukhGHpppPSDIW"); 'u' leaves
 * exclude_guest clear until 5.9. */
static void test_perf_4_19(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00001 0", NULL },
		{ "cycles:u", "01100 0", NULL },
		{ "cycles:k", "10100 0", NULL },
		{ "cycles:pp", "00001 2", NULL },
		{ "cycles:pu", "01101 1", NULL },
		{ "cycles:P", "00000 0", NULL },
		{ "cycles:I", "00000 0", NULL },
		{ "cycles:W", "00000 0", NULL },
		{ "cycles:uu", NULL, "repeated modifier 'u' at 9" },
		{ "cycles:e", NULL, "unknown modifier 'e'" },
		{ "cycles:b", NULL, "unknown modifier 'b'" },
	};
	check_table("perf-4.19", t, G_N_ELEMENTS(t));
}

/* 943b69ac1884 (perf-tools-fixes-for-v5.9): 'u' sets exclude_guest unless
 * G/H; 'e' only from 5.10. */
static void test_perf_5_9(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00001 0", NULL },
		{ "cycles:u", "01101 0", NULL },
		{ "cycles:uG", "01110 0", NULL },
		{ "cycles:uH", "01101 0", NULL },
		{ "cycles:Gu", "01110 0", NULL },
		{ "cycles:k", "10100 0", NULL },
		{ "cycles:uk", "00101 0", NULL },
		{ "cycles:pp", "00001 2", NULL },
		{ "cycles:W", "00000 0", NULL },
		{ "cycles:e", NULL, "unknown modifier 'e'" },
		{ "cycles:uu", NULL, "repeated modifier 'u'" },
	};
	check_table("perf-5.9", t, G_N_ELEMENTS(t));
}

/* Every row observed with /usr/bin/perf 6.1.187 `perf stat -vv -a -e
 * cpu-clock:MODS` on Debian 12 (the modifier logic is event-independent). */
static void test_perf_6_1(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00001 0", NULL },
		{ "cycles:u", "01101 0", NULL },  /* u sets exclude_guest (5.10+) */
		{ "cycles:k", "10100 0", NULL },
		{ "cycles:h", "11000 0", NULL },
		{ "cycles:p", "00001 1", NULL },
		{ "cycles:pp", "00001 2", NULL },
		{ "cycles:ppp", "00001 3", NULL },
		{ "cycles:P", "00000 0", NULL },  /* stat: precise_max unused */
		{ "cycles:G", "00010 0", NULL },
		{ "cycles:H", "00001 0", NULL },
		{ "cycles:GH", "00000 0", NULL },
		{ "cycles:HG", "00000 0", NULL },
		{ "cycles:uG", "01110 0", NULL },
		{ "cycles:pG", "00010 1", NULL },
		{ "cycles:Gp", "00010 1", NULL },
		{ "cycles:ppH", "00001 2", NULL },
		{ "cycles:uk", "00101 0", NULL },
		{ "cycles:ku", "00101 0", NULL },
		{ "cycles:pu", "01101 1", NULL },
		{ "cycles:uH", "01101 0", NULL },
		{ "cycles:kG", "10110 0", NULL },
		{ "cycles:I", "00000 0", NULL },
		{ "cycles:D", "00000 0", NULL },
		{ "cycles:e", "00000 0", NULL },
		{ "cycles:W", "00000 0", NULL },
		{ "cycles:b", "00000 0", NULL },
		{ "cycles:S", "00000 0", NULL },
		{ "cycles:pppp", NULL, "at 11" },
		{ "cycles:uu", NULL, "repeated modifier 'u'" },
		{ "cycles:x", NULL, "unknown modifier 'x' at 8" },
		{ "msr/tsc/u", "01101 0", NULL },
		{ "msr/tsc/:u", NULL, "no ':', at 9" }, /* event syntax error in 6.1 */
		{ "cpu/event=0x3c/pp", "00001 2", NULL },
	};
	check_table("perf-6.1", t, G_N_ELEMENTS(t));
}

/* parse_events__modifier_list() today (post-dcbe6e51a0bb): exclude_GH_default
 * is false outside perf kvm, so neither the default, 'u' nor 'p' set
 * exclude_guest (35c8d21371e9, 88bc63d00eb6, 6.13). */
static void test_perf_modern(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00000 0", NULL },
		{ "cycles:u", "01100 0", NULL },
		{ "cycles:k", "10100 0", NULL },
		{ "cycles:h", "11000 0", NULL },
		{ "cycles:uk", "00100 0", NULL },
		{ "cycles:p", "00000 1", NULL },
		{ "cycles:pp", "00000 2", NULL },
		{ "cycles:ppp", "00000 3", NULL },
		{ "cycles:ppH", "00001 2", NULL },
		{ "cycles:H", "00001 0", NULL },
		{ "cycles:G", "00010 0", NULL },
		{ "cycles:pG", "00010 1", NULL },
		{ "cycles:GH", "00000 0", NULL },
		{ "cycles:uG", "01110 0", NULL },
		{ "cycles:e", "00000 0", NULL },
		{ "cycles:b", "00000 0", NULL },
		{ "cycles:R", "00000 0", NULL },
		{ "cycles:X", "00000 0", NULL },
		{ "cycles:pppp", NULL, "at 11" },
		{ "cycles:kuk", NULL, "repeated modifier 'k'" },
		{ "cycles:x", NULL, "unknown modifier 'x'" },
		/* e30a7912f498 (6.10): W only on a group; a lone event fails. */
		{ "cycles:W", NULL, "Weak modifier is for use with groups at 8" },
		{ "cycles:uW", NULL, "Weak modifier is for use with groups" },
		{ "cycles:WW", NULL, "repeated modifier 'W'" },
	};
	check_table("perf-modern", t, G_N_ELEMENTS(t));
}

/* perf 6.10 .. 6.12: 6.1's bits, but a lone W fails (e30a7912f498). */
static void test_perf_6_10(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00001 0", NULL },
		{ "cycles:u", "01101 0", NULL },
		{ "cycles:pp", "00001 2", NULL },
		{ "cycles:pG", "00010 1", NULL },
		{ "cycles:b", "00000 0", NULL },
		{ "cycles:W", NULL, "Weak modifier is for use with groups at 8" },
		{ "cycles:ppW", NULL, "Weak modifier is for use with groups" },
		{ "cycles:R", NULL, "unknown modifier 'R'" },
	};
	check_table("perf-6.10", t, G_N_ELEMENTS(t));
}

/* perf 6.13 .. 6.17: today's bits, R but no X (035c17893082 is 6.18). */
static void test_perf_6_13(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00000 0", NULL },
		{ "cycles:u", "01100 0", NULL },
		{ "cycles:pp", "00000 2", NULL },
		{ "cycles:R", "00000 0", NULL },
		{ "cycles:X", NULL, "unknown modifier 'X'" },
		{ "cycles:W", NULL, "Weak modifier is for use with groups" },
	};
	check_table("perf-6.13", t, G_N_ELEMENTS(t));
}

static void test_perf_3_1(void **state)
{
	static const struct enc t[] = {
		{ "cycles", "00000 0", NULL },
		{ "cycles:pp", "00000 2", NULL },
		{ "cycles:G", NULL, "unknown modifier 'G'" },
		{ "cycles:pppp", "00000 0", NULL }, /* no check: wraps in the bit-field */
		{ "cycles:uu", "01100 0", NULL },
		{ "cycles:u", "01100 0", NULL },
		{ "cycles:k", "10100 0", NULL },
		{ "cycles:p", "00000 1", NULL },
		{ "cycles:ppH", NULL, "unknown modifier 'H'" },
	};
	check_table("perf-3.1", t, G_N_ELEMENTS(t));
}

static void test_other_letters(void **state)
{
	const struct profile *p = profile_find("perf-6.1");
	struct perf_event_attr a;

	assert_int_equal(profile_encode(p, pmus, "cycles:I", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.exclude_idle, 1);
	assert_int_equal(profile_encode(p, pmus, "cycles:D", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.pinned, 1);
	assert_int_equal(profile_encode(p, pmus, "cycles:e", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.exclusive, 1);
	/* record: P is precise_ip 3, S adds PERF_SAMPLE_READ (observed). */
	assert_int_equal(profile_encode(p, pmus, "cycles:P", PROFILE_MODE_RECORD, &a), 0);
	assert_int_equal(a.precise_ip, 3);
	assert_int_equal(a.exclude_guest, 0);
	assert_int_equal(profile_encode(p, pmus, "cycles:S", PROFILE_MODE_RECORD, &a), 0);
	assert_true(a.sample_type & PERF_SAMPLE_READ);
}

/* perf record -vv -a -g -e cpu-clock:pp with perf 6.1.187 (observed). */
static void test_record_members_6_1(void **state)
{
	const struct profile *p = profile_find("perf-6.1");
	struct perf_event_attr a;

	assert_int_equal(profile_encode(p, pmus, "cpu-clock:pp", PROFILE_MODE_RECORD, &a), 0);
	assert_int_equal(a.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a.size, 128);
	assert_int_equal(a.sample_freq, 4000);
	assert_int_equal(a.freq, 1);
	assert_int_equal(a.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			 PERF_SAMPLE_IDENTIFIER);
	assert_int_equal(a.read_format, PERF_FORMAT_ID | (1 << 4));
	assert_int_equal(a.disabled, 1);
	assert_int_equal(a.inherit, 1);
	assert_int_equal(a.sample_id_all, 1);
	assert_int_equal(a.mmap, 0); /* tracking lives on a dummy event in 6.1 */
	assert_int_equal(profile_encode(p, pmus, "cpu-clock", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.sample_type, PERF_SAMPLE_IDENTIFIER);
	assert_int_equal(a.read_format, PERF_FORMAT_TOTAL_TIME_ENABLED |
			 PERF_FORMAT_TOTAL_TIME_RUNNING);
	assert_int_equal(a.disabled, 1);
	assert_int_equal(a.sample_freq, 0);
}

static void test_record_members_3_6(void **state)
{
	const struct profile *p = profile_find("perf-3.6");
	struct perf_event_attr a;

	assert_int_equal(profile_encode(p, pmus, "cycles", PROFILE_MODE_RECORD, &a), 0);
	assert_int_equal(a.size, PERF_ATTR_SIZE_VER2);
	assert_int_equal(a.mmap, 1);
	assert_int_equal(a.comm, 1);
	assert_int_equal(a.read_format, PERF_FORMAT_TOTAL_TIME_ENABLED |
			 PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID);
	assert_true(a.sample_type & PERF_SAMPLE_CALLCHAIN);
	assert_false(a.sample_type & PERF_SAMPLE_IDENTIFIER);
}

static void test_raw(void **state)
{
	const struct profile *p = profile_find("raw");
	struct perf_event_attr a;

	assert_true(profile_is_raw(p));
	assert_int_equal(profile_encode(p, pmus, "cycles[exclude_user,exclude_guest,precise_ip=2]",
					PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.exclude_user, 1);
	assert_int_equal(a.exclude_guest, 1);
	assert_int_equal(a.precise_ip, 2);
	assert_int_equal(a.exclude_kernel, 0);
	assert_int_equal(profile_encode(p, pmus, "cycles", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.exclude_guest, 0); /* no defaults */
	assert_int_equal(profile_encode(p, pmus, "msr/tsc/[sample_freq=0,freq=0]",
					PROFILE_MODE_RECORD, &a), 0);
	assert_int_equal(a.type, 9);
	assert_int_equal(a.freq, 0);
	assert_int_equal(a.sample_period, 0);
	assert_true(a.sample_type & PERF_SAMPLE_CALLCHAIN);
	assert_int_equal(profile_encode(p, pmus, "cycles:u", PROFILE_MODE_STAT, &a), -EINVAL);
	assert_int_equal(profile_encode(p, pmus, "cycles[nope]", PROFILE_MODE_STAT, &a), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "'nope' at 8"));
	assert_int_equal(profile_encode(p, pmus, "cycles[precise_ip=9]", PROFILE_MODE_STAT, &a), -ERANGE);
	assert_int_equal(profile_encode(p, pmus, "cycles[precise_ip=2", PROFILE_MODE_STAT, &a), -EINVAL);
	/* Numbers as perf reads them: decimal ("010" is ten) or 0x hex; no
	 * sign, space or saturation past 64 bits. */
	assert_int_equal(profile_encode(p, pmus, "cycles[config=010]", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.config, 10);
	assert_int_equal(profile_encode(p, pmus, "cycles[config=-1]", PROFILE_MODE_STAT, &a), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "cycles[config=-1]: '-1' is not a number (decimal or 0x hex) at 15"));
	assert_int_equal(profile_encode(p, pmus, "cycles[config= 1]", PROFILE_MODE_STAT, &a), -EINVAL);
	assert_int_equal(profile_encode(p, pmus, "cycles[config=18446744073709551616]",
					PROFILE_MODE_STAT, &a), -ERANGE);
	assert_non_null(strstr(pc_errmsg(), "config=18446744073709551616 does not fit at 8"));
	assert_int_equal(profile_encode(p, pmus, "cycles[use_clockid,clockid=-1]",
					PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.clockid, -1);
	assert_int_equal(profile_encode(p, pmus, "cycles[clockid=-2147483649]",
					PROFILE_MODE_STAT, &a), -ERANGE);
}

struct step {
	int err;
	const char *why; /* substring, NULL: gives up */
};

static void run_chain(const char *profile, const char *spec, enum profile_mode mode,
		      const struct step *steps, size_t n, struct perf_event_attr *a)
{
	const struct profile *p = profile_find(profile);
	struct profile_fallback_state st;

	assert_int_equal(profile_encode(p, pmus, spec, mode, a), 0);
	assert_int_equal(profile_fallback_begin(p, pmus, spec, mode, &st), 0);
	for (size_t i = 0; i < n; i++) {
		const char *why = NULL;
		bool more = profile_fallback(p, &st, a, steps[i].err, &why);

		if (more != (steps[i].why != NULL) || (more && !strstr(why, steps[i].why)))
			print_error("%s %s step %zu: got %d '%s'\n", profile, spec, i, more, why);
		assert_int_equal(more, steps[i].why != NULL);
		if (more)
			assert_non_null(strstr(why, steps[i].why));
	}
}

/* perf record -vv -a -g -e msr/tsc/u with perf 6.1.187: LOST, cloexec,
 * exclude_guest/host, sample_id_all, then "Error". */
static void test_fallback_6_1_record_einval(void **state)
{
	static const struct step s[] = {
		{ EINVAL, "PERF_FORMAT_LOST" }, { EINVAL, "cloexec" },
		{ EINVAL, "exclude_guest" }, { EINVAL, "sample_id_all" }, { EINVAL, NULL },
	};
	struct perf_event_attr a;

	run_chain("perf-6.1", "msr/tsc/u", PROFILE_MODE_RECORD, s, G_N_ELEMENTS(s), &a);
	assert_int_equal(a.exclude_guest, 0);
	assert_int_equal(a.exclude_kernel, 1);
	assert_int_equal(a.sample_id_all, 0);
	assert_int_equal(a.read_format, PERF_FORMAT_ID);
}

/* perf stat -vv -a -e msr/tsc/u: cloexec, exclude_guest/host, sample_id_all
 * (already 0: same attr), then "<not supported>" (observed). */
static void test_fallback_6_1_stat(void **state)
{
	static const struct step s[] = {
		{ EINVAL, "cloexec" }, { EINVAL, "exclude_guest" }, { EINVAL, "sample_id_all" },
		{ EINVAL, NULL },
	};
	static const struct step enoent[] = { { ENOENT, NULL } };
	struct perf_event_attr a;

	run_chain("perf-6.1", "msr/tsc/u", PROFILE_MODE_STAT, s, G_N_ELEMENTS(s), &a);
	assert_int_equal(a.exclude_kernel, 1);
	assert_int_equal(a.exclude_guest, 0);
	/* stat: "<not supported>", no cycles -> cpu-clock. */
	run_chain("perf-6.1", "cycles:u", PROFILE_MODE_STAT, enoent, 1, &a);
}

/* perf record -e cycles:pp on a host without hardware PMU: ENOENT ->
 * cpu-clock keeping precise_ip and exclude_guest (observed). */
static void test_fallback_cycles(void **state)
{
	static const struct step s[] = { { ENOENT, "cpu-clock" }, { ENOENT, NULL } };
	static const struct step s36[] = { { ENXIO, "cpu-clock" } };
	static const struct step notcycles[] = { { ENOENT, NULL } };
	struct perf_event_attr a;

	run_chain("perf-6.1", "cycles:pp", PROFILE_MODE_RECORD, s, G_N_ELEMENTS(s), &a);
	assert_int_equal(a.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(a.precise_ip, 2);
	assert_int_equal(a.exclude_guest, 1);
	run_chain("perf-3.6", "cycles", PROFILE_MODE_RECORD, s36, 1, &a);
	run_chain("perf-6.1", "instructions", PROFILE_MODE_RECORD, notcycles, 1, &a);
}

/* perf record -vv -e msr/tsc/P: the precise walk restarts after each
 * missing-feature step (observed). */
static void test_fallback_precise_max(void **state)
{
	static const struct step s[] = {
		{ EINVAL, "precise" }, { EINVAL, "precise" }, { EINVAL, "precise" },
		{ EINVAL, "PERF_FORMAT_LOST" },
		{ EINVAL, "precise" }, { EINVAL, "precise" }, { EINVAL, "precise" },
		{ EINVAL, "cloexec" },
	};
	struct perf_event_attr a;

	run_chain("perf-6.1", "msr/tsc/P", PROFILE_MODE_RECORD, s, G_N_ELEMENTS(s), &a);
	assert_int_equal(a.precise_ip, 3);
}

/* 3.6 builtin-record.c: EINVAL -> clear exclude_guest/host, then
 * sample_id_all; no cloexec step. */
static void test_fallback_3_6(void **state)
{
	static const struct step s[] = {
		{ EINVAL, "exclude_guest" }, { EINVAL, "sample_id_all" }, { EINVAL, NULL },
	};
	static const struct step eop[] = { { EOPNOTSUPP, NULL } };
	struct perf_event_attr a;

	static const struct step stat[] = { { EINVAL, "exclude_guest" }, { EINVAL, NULL } };

	run_chain("perf-3.6", "cycles", PROFILE_MODE_RECORD, s, G_N_ELEMENTS(s), &a);
	/* builtin-stat.c @3.6: only the exclude_guest/host retry. */
	run_chain("perf-3.6", "cycles", PROFILE_MODE_STAT, stat, G_N_ELEMENTS(stat), &a);
	assert_int_equal(a.disabled, 0);
	assert_int_equal(a.inherit, 1);
	/* The 2012 regression: 3.6 gives up on EOPNOTSUPP for cycles:pp. */
	run_chain("perf-3.6", "cycles:pp", PROFILE_MODE_RECORD, eop, 1, &a);
}

static void test_fallback_modern_eopnotsupp(void **state)
{
	static const struct step s[] = { { EOPNOTSUPP, "exclude_guest" }, { EOPNOTSUPP, NULL } };
	struct perf_event_attr a;

	static const struct step gh[] = { { EOPNOTSUPP, NULL } };

	run_chain("perf-modern", "cycles:pp", PROFILE_MODE_RECORD, s, G_N_ELEMENTS(s), &a);
	assert_int_equal(a.exclude_guest, 1);
	/* Not when the user chose with G/H (evsel->exclude_GH). */
	run_chain("perf-modern", "cycles:GH", PROFILE_MODE_RECORD, gh, 1, &a);
	/* perf 6.1 has no such retry: the 2012 regression shape again. */
	run_chain("perf-6.1", "cycles:G", PROFILE_MODE_RECORD, gh, 1, &a);
}

/* evsel__open_cpu() @6.13+: EINVAL only retries for what the feature probe
 * finds missing (modelled: PERF_FORMAT_LOST), then the :P walk; no blind
 * cloexec / exclude_guest / sample_id_all steps as in 6.1. */
static void test_fallback_modern_einval(void **state)
{
	static const struct step s[] = { { EINVAL, "PERF_FORMAT_LOST" }, { EINVAL, NULL } };
	static const struct step stat[] = { { EINVAL, NULL } };
	static const struct step pmax[] = {
		{ EINVAL, "PERF_FORMAT_LOST" }, { EINVAL, "precise" }, { EINVAL, "precise" },
		{ EINVAL, "precise" }, { EINVAL, NULL },
	};
	struct perf_event_attr a;

	run_chain("perf-modern", "msr/tsc/u", PROFILE_MODE_RECORD, s, G_N_ELEMENTS(s), &a);
	assert_int_equal(a.sample_id_all, 1);
	assert_int_equal(a.read_format, PERF_FORMAT_ID);
	run_chain("perf-modern", "msr/tsc/u", PROFILE_MODE_STAT, stat, 1, &a);
	run_chain("perf-modern", "msr/tsc/P", PROFILE_MODE_RECORD, pmax, G_N_ELEMENTS(pmax), &a);
	assert_int_equal(a.precise_ip, 3);
}

/* evsel__fallback() @6.13+: EACCES -> exclude_kernel, not when the event
 * already excludes user. */
static void test_fallback_modern_eacces(void **state)
{
	static const struct step s[] = { { EACCES, "exclude kernel" }, { EACCES, NULL } };
	static const struct step k[] = { { EACCES, NULL } };
	struct perf_event_attr a;

	run_chain("perf-modern", "cycles", PROFILE_MODE_RECORD, s, G_N_ELEMENTS(s), &a);
	assert_int_equal(a.exclude_kernel, 1);
	run_chain("perf-modern", "cycles:k", PROFILE_MODE_RECORD, k, 1, &a);
}

/* 4.x/5.x perf record asks no PERF_FORMAT_LOST (perf 6.0+), so its EINVAL
 * chain starts at cloexec. */
static void test_fallback_4_19_einval(void **state)
{
	static const struct step s[] = {
		{ EINVAL, "cloexec" }, { EINVAL, "exclude_guest" }, { EINVAL, "sample_id_all" },
		{ EINVAL, NULL },
	};
	struct perf_event_attr a;

	run_chain("perf-4.19", "cycles", PROFILE_MODE_RECORD, s, G_N_ELEMENTS(s), &a);
	assert_int_equal(a.read_format, PERF_FORMAT_ID);
	assert_int_equal(a.exclude_guest, 0);
}

/* One spec in one mode: 0 and the attr, or the error's text. */
static int enc1(const char *profile, const char *spec, enum profile_mode mode,
		struct perf_event_attr *a)
{
	const struct profile *p = profile_find(profile);

	assert_non_null(p);
	int ret = profile_encode(p, pmus, spec, mode, a);
	if (ret)
		print_message("%s %s: %s\n", profile, spec, pc_errmsg());
	return ret;
}

static void want_error(const char *profile, const char *spec, enum profile_mode mode,
		       const char *needle)
{
	struct perf_event_attr a;
	int ret = profile_encode(profile_find(profile), pmus, spec, mode, &a);

	if (ret == 0 || !strstr(pc_errmsg(), needle))
		print_error("%s '%s': want error '%s', got %d '%s'\n", profile, spec, needle, ret,
			    ret ? pc_errmsg() : "");
	assert_int_not_equal(ret, 0);
	assert_non_null(strstr(pc_errmsg(), needle));
}

/* perf 6.1's grammar (Debian linux-source-6.1 6.1.192 parse-events.l/.y,
 * parse-events.c, pmu.c): values from its rules, checked against
 * /usr/bin/perf by cli_perf_debian.sh. */
static void test_terms_6_1(void **state)
{
	struct perf_event_attr a;

	/* value_sym '/' event_config '/': config_term_common() sets config;
	 * period/name have no member in perf stat. */
	assert_int_equal(enc1("perf-6.1", "cycles/period=1000/", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.type, PERF_TYPE_HARDWARE);
	assert_int_equal(a.config, PERF_COUNT_HW_CPU_CYCLES);
	assert_int_equal(a.sample_period, 0);
	assert_int_equal(enc1("perf-6.1", "cpu-clock/config=1/", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a.config, 1);
	assert_int_equal(enc1("perf-6.1", "r1a8/period=10/", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.type, PERF_TYPE_RAW);
	assert_int_equal(a.config, 0x1a8);
	assert_int_equal(enc1("perf-6.1", "cpu-clock//", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(enc1("perf-6.1", "cycles/name=x/", PROFILE_MODE_STAT, &a), 0);
	/* raw and cache: opt_event_config then sep_dc, so ':' may come. */
	assert_int_equal(enc1("perf-6.1", "r1a8/name=x/:u", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.exclude_kernel, 1);
	/* perf's own terms on a PMU event: config_term_pmu(). */
	assert_int_equal(enc1("perf-6.1", "msr/period=1000/", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.type, 9);
	assert_int_equal(a.config, 0);
	assert_int_equal(enc1("perf-6.1", "msr/tsc,name=foo/", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(enc1("perf-6.1", "msr/tsc,percore/", PROFILE_MODE_STAT, &a), 0);
	/* pmu_find_alias(): strcasecmp. */
	assert_int_equal(enc1("perf-6.1", "msr/APERF/", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.config, 1);
	assert_int_equal(enc1("perf-6.1", "msr/TSC/", PROFILE_MODE_STAT, &a), 0);
	/* config_attr() before perf_pmu__config(): config= first, then the
	 * format terms OR their bits in, whatever the order typed. */
	assert_int_equal(enc1("perf-6.1", "cpu/event=0x3c,config=0/", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.config, 0x3c);
	/* sep_slash_slash_dc ':' with no letters: no modifier, defaults. */
	assert_int_equal(enc1("perf-6.1", "cycles:", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.exclude_guest, 1);
	assert_int_equal(a.exclude_user, 0);
	/* ".  { }": a character that starts no token is dropped. */
	assert_int_equal(enc1("perf-6.1", " cpu-clock", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(enc1("perf-6.1", "cpu-clock: u", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.exclude_user, 0);
	assert_int_equal(a.exclude_kernel, 1);
	assert_int_equal(a.exclude_hv, 1);
	assert_int_equal(a.exclude_guest, 1); /* 'u' sets it (5.9) */
	/* parse_events_add_cache(): first op, first result; later ones of a
	 * kind already set are ignored, not validated. */
	assert_int_equal(enc1("perf-6.1", "L1-dcache-load-load", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.type, PERF_TYPE_HW_CACHE);
	assert_int_equal(a.config, 0);
	assert_int_equal(enc1("perf-6.1", "L1-dcache-misses-misses", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.config, 0x10000);
	assert_int_equal(enc1("perf-6.1", "L1-dcache-misses-store", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.config, 0x10100);
	assert_int_equal(enc1("perf-6.1", "L1-icache-load-store", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.config, 1);
	want_error("perf-6.1", "L1-icache-store-load", PROFILE_MODE_STAT, "invalid cache event");

	/* check_info_data(): a second alias in one list. */
	want_error("perf-6.1", "msr/tsc,tsc/", PROFILE_MODE_STAT, "second event alias 'tsc'");
	want_error("perf-6.1", "msr/tsc,aperf/", PROFILE_MODE_STAT, "second event alias 'aperf'");
	/* config_term_avail() in perf stat. */
	want_error("perf-6.1", "cpu-clock/freq=100/", PROFILE_MODE_STAT,
		   "'freq' is not usable in 'perf stat'");
	want_error("perf-6.1", "cpu-clock/no-inherit/", PROFILE_MODE_STAT,
		   "'no-inherit' is not usable in 'perf stat'");
	want_error("perf-6.1", "cpu-clock/percore=2/", PROFILE_MODE_STAT, "expected 0 or 1");
	want_error("perf-6.1", "cpu-clock/period=x/", PROFILE_MODE_STAT, "expected numeric value");
	want_error("perf-6.1", "cpu-clock/name=1/", PROFILE_MODE_STAT, "expected string value");
	want_error("perf-6.1", "cpu-clock/bogus=1/", PROFILE_MODE_STAT, "unknown term 'bogus'");
	/* value_sym '/' event_config '/' has no sep_dc. */
	want_error("perf-6.1", "cycles/period=1/:u", PROFILE_MODE_STAT, "no ':'");
	want_error("perf-6.1", "cycles::u", PROFILE_MODE_STAT, "unexpected ':'");
	want_error("perf-6.1", "msr/tsc/:", PROFILE_MODE_STAT, "empty modifier list");
	/* a dropped character between two parts of one token: perf splits
	 * it (PE_NAME '-' PE_NAME, a syntax error); refused, not modelled. */
	want_error("perf-6.1", "cpu -clock", PROFILE_MODE_STAT, "splits a token");
	/* Not modelled, named as such (cli_perf_debian.sh lists them). */
	want_error("perf-6.1", "sched:sched_switch", PROFILE_MODE_STAT,
		   "tracepoint events (SUBSYS:EVENT) are not modelled");
	want_error("perf-6.1", "mem:0x1000:rw", PROFILE_MODE_STAT,
		   "breakpoint events (mem:ADDR[/LEN][:rwx]) are not modelled");
	want_error("perf-6.1", "cpu-clock/call-graph=fp/", PROFILE_MODE_RECORD,
		   "term 'call-graph' is not modelled");
}

/* evsel__apply_config_terms() in perf record, then evlist__config()'s
 * IDENTIFIER-or-ID choice against the dummy tracking event. */
static void test_terms_record_6_1(void **state)
{
	const uint64_t base = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			      PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_CPU;
	struct perf_event_attr a;

	assert_int_equal(enc1("perf-6.1", "cpu-clock/period=1000/", PROFILE_MODE_RECORD, &a), 0);
	assert_int_equal(a.sample_period, 1000);
	assert_int_equal(a.freq, 0);
	assert_int_equal(a.sample_type, base | PERF_SAMPLE_ID);
	assert_int_equal(enc1("perf-6.1", "msr/tsc,period=7/", PROFILE_MODE_RECORD, &a), 0);
	assert_int_equal(a.sample_period, 7);
	assert_int_equal(a.sample_type, base | PERF_SAMPLE_ID);
	assert_int_equal(enc1("perf-6.1", "cpu-clock/freq=100/", PROFILE_MODE_RECORD, &a), 0);
	assert_int_equal(a.sample_freq, 100);
	assert_int_equal(a.freq, 1);
	assert_int_equal(a.sample_type, base | PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER);
	assert_int_equal(enc1("perf-6.1", "cpu-clock/time=0/", PROFILE_MODE_RECORD, &a), 0);
	assert_int_equal(a.sample_type, (base & ~(uint64_t)PERF_SAMPLE_TIME) |
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER);
	assert_int_equal(enc1("perf-6.1", "cpu-clock/period=1000,time=0/", PROFILE_MODE_RECORD,
			      &a), 0);
	assert_int_equal(a.sample_type, (base & ~(uint64_t)PERF_SAMPLE_TIME) |
			 PERF_SAMPLE_IDENTIFIER);
	assert_int_equal(enc1("perf-6.1", "cpu-clock/no-inherit/", PROFILE_MODE_RECORD, &a), 0);
	assert_int_equal(a.inherit, 0);
	/* the last of period/freq wins, in the order typed */
	assert_int_equal(enc1("perf-6.1", "cpu-clock/period=5,freq=9/", PROFILE_MODE_RECORD, &a),
			 0);
	assert_int_equal(a.freq, 1);
	assert_int_equal(a.sample_freq, 9);
}

/* Older releases keep their grammar: @3.6 symbol term lists and 'EVENT:'
 * but no raw/cache term lists, no freq term, no skipped characters, exact
 * alias case, repeated aliases and cache parts as before; @4.9 adds raw and
 * cache term lists, freq/time/inherit and skipped characters; 3.0/3.1's
 * hand-written parser has none of them. */
static void test_terms_older(void **state)
{
	struct perf_event_attr a;

	want_error("perf-3.1", "cycles:", PROFILE_MODE_STAT, "empty modifier list");
	want_error("perf-3.1", "cycles/period=1000/", PROFILE_MODE_STAT, "takes no term list");
	want_error("perf-3.1", " cpu-clock", PROFILE_MODE_STAT, "unknown event");

	assert_int_equal(enc1("perf-3.6", "cycles/period=1000/", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(enc1("perf-3.6", "cycles:", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(enc1("perf-3.6", "msr/period=1000/", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(enc1("perf-3.6", "msr/tsc,tsc/", PROFILE_MODE_STAT, &a), 0);
	want_error("perf-3.6", "r1a8/period=10/", PROFILE_MODE_STAT, "takes no term list");
	want_error("perf-3.6", "cpu-clock//", PROFILE_MODE_STAT, "takes no term list");
	want_error("perf-3.6", " cpu-clock", PROFILE_MODE_STAT, "unknown event");
	want_error("perf-3.6", "msr/TSC/", PROFILE_MODE_STAT, "unknown term or event 'TSC'");
	want_error("perf-3.6", "cpu-clock/freq=100/", PROFILE_MODE_STAT, "unknown term 'freq'");
	want_error("perf-3.6", "L1-dcache-load-load", PROFILE_MODE_STAT, "unknown event");
	want_error("perf-3.12", " cpu-clock", PROFILE_MODE_STAT, "unknown event");

	assert_int_equal(enc1("perf-4.8", "r1a8/period=10/", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(a.config, 0x1a8);
	assert_int_equal(enc1("perf-4.8", " cpu-clock", PROFILE_MODE_STAT, &a), 0);
	/* no config_term_avail() shrink modelled before 6.1 */
	assert_int_equal(enc1("perf-4.19", "cpu-clock/freq=100/", PROFILE_MODE_STAT, &a), 0);
	assert_int_equal(enc1("perf-4.19", "cpu-clock/freq=100/", PROFILE_MODE_RECORD, &a), 0);
	assert_int_equal(a.sample_freq, 100);
	want_error("perf-4.19", "cpu-clock//", PROFILE_MODE_STAT, "takes no term list");
	want_error("perf-4.19", "msr/tsc,percore/", PROFILE_MODE_STAT,
		   "unknown term or event 'percore'");
}

static void test_table(void **state)
{
	const struct profile *prev = NULL;
	struct profile_fallback_state st = { 0 };
	struct perf_event_attr a = { 0 };
	const char *why;

	assert_true(profile_count() >= 6);
	for (size_t i = 0; i < profile_count(); i++) {
		const struct profile *p = profile_at(i);
		assert_ptr_equal(profile_find(profile_name(p)), p);
		assert_true(strlen(profile_releases(p)) > 0);
		assert_ptr_not_equal(p, prev);
		prev = p;
	}
	assert_null(profile_at(profile_count()));
	assert_null(profile_find("perf-0.1"));
	assert_string_equal(profile_name(profile_for_release("perf version 6.1.187")), "perf-6.1");
	assert_string_equal(profile_name(profile_for_release("3.6.0")), "perf-3.6");
	assert_string_equal(profile_name(profile_for_release("3.7.10")), "perf-3.7");
	assert_string_equal(profile_name(profile_for_release("3.10.0")), "perf-3.8");
	assert_string_equal(profile_name(profile_for_release("3.2")), "perf-3.6");
	assert_string_equal(profile_name(profile_for_release("4.19.0")), "perf-4.19");
	assert_string_equal(profile_name(profile_for_release("3.16.7")), "perf-3.12");
	assert_string_equal(profile_name(profile_for_release("4.8.0")), "perf-4.8");
	assert_string_equal(profile_name(profile_for_release("5.8.18")), "perf-4.19");
	assert_string_equal(profile_name(profile_for_release("5.9.16")), "perf-5.9");
	assert_string_equal(profile_name(profile_for_release("5.10.0")), "perf-6.1");
	assert_string_equal(profile_name(profile_for_release("6.9.12")), "perf-6.1");
	assert_string_equal(profile_name(profile_for_release("6.10.0")), "perf-6.10");
	assert_string_equal(profile_name(profile_for_release("6.12.9")), "perf-6.10");
	assert_string_equal(profile_name(profile_for_release("6.13.0")), "perf-6.13");
	assert_string_equal(profile_name(profile_for_release("6.18.0")), "perf-modern");
	assert_string_equal(profile_name(profile_for_release("3.0.101")), "perf-3.1");
	assert_string_equal(profile_name(profile_for_release("6.17.0")), "perf-6.13");
	assert_null(profile_for_release("banana"));
	assert_ptr_equal(profile_find("perf version 3.6.11"), profile_find("perf-3.6"));
	assert_ptr_equal(profile_find("6.1.187"), profile_find("perf-6.1"));
	assert_string_equal(profile_modifiers(profile_find("perf-3.6")), "ukhpGH");
	assert_false(profile_fallback(profile_find("raw"), &st, &a, EINVAL, &why));
	assert_int_equal(profile_encode(profile_find("perf-6.1"), pmus, "cycles", PROFILE_MODE_COUNT,
					&a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_3_1),
		cmocka_unit_test(test_perf_3_6),
		cmocka_unit_test(test_perf_3_7),
		cmocka_unit_test(test_perf_3_8),
		cmocka_unit_test(test_perf_3_12),
		cmocka_unit_test(test_perf_4_8),
		cmocka_unit_test(test_perf_4_19),
		cmocka_unit_test(test_perf_5_9),
		cmocka_unit_test(test_perf_6_1),
		cmocka_unit_test(test_perf_6_10),
		cmocka_unit_test(test_perf_6_13),
		cmocka_unit_test(test_perf_modern),
		cmocka_unit_test(test_other_letters),
		cmocka_unit_test(test_record_members_6_1),
		cmocka_unit_test(test_record_members_3_6),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_terms_6_1),
		cmocka_unit_test(test_terms_record_6_1),
		cmocka_unit_test(test_terms_older),
		cmocka_unit_test(test_fallback_6_1_record_einval),
		cmocka_unit_test(test_fallback_6_1_stat),
		cmocka_unit_test(test_fallback_cycles),
		cmocka_unit_test(test_fallback_precise_max),
		cmocka_unit_test(test_fallback_3_6),
		cmocka_unit_test(test_fallback_modern_eopnotsupp),
		cmocka_unit_test(test_fallback_modern_einval),
		cmocka_unit_test(test_fallback_modern_eacces),
		cmocka_unit_test(test_fallback_4_19_einval),
		cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
