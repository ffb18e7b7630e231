/* PMU loading from the fixture tree (tests/data/sysfs) and the real sysfs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testutil.h"

#include "pmu.h"
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *fixture(void)
{
	static char *path;
	const char *top = getenv("PMUCANARY_TOP");

	if (!path)
		path = g_build_filename(top ? top : ".", "tests/data/sysfs", NULL);
	return path;
}
#define FIXTURE fixture()

static void test_fixture_loads(void **state)
{
	g_autoptr(pmu_set) set = NULL;
	const struct pmu *cpu, *msr;

	assert_int_equal(pmu_set_load(FIXTURE, &set), 0);
	assert_int_equal(set->pmus->len, 2);
	cpu = pmu_set_find(set, "cpu");
	assert_non_null(cpu);
	assert_int_equal(cpu->type, 4);
	/* mem-loads.scale is a companion file, not an event. */
	assert_int_equal(cpu->events->len, 3);
	assert_string_equal(pmu_find_event(cpu, "mem-loads")->terms, "event=0xcd,umask=0x1,ldlat=3");
	assert_null(pmu_find_event(cpu, "mem-loads.scale"));
	assert_string_equal(pmu_find_format(cpu, "event")->bits, "config:0-7,32-35");
	assert_string_equal(g_hash_table_lookup(cpu->caps, "max_precise"), "3");
	msr = pmu_set_find_type(set, 9);
	assert_ptr_equal(msr, pmu_set_find(set, "msr"));
	assert_null(pmu_set_find(set, "nope"));
	/* a spec with no PMU named (cycles, not cpu/cycles/) finds none */
	assert_null(pmu_set_find(set, NULL));
	assert_null(pmu_set_find(NULL, "cpu"));
}

/* Every file of the fixture (tests/data/sysfs, written by hand) is found
 * by its name with its text, the first and last of each sorted directory
 * included; a name that is not there is found nowhere. */
static void test_fixture_every_entry(void **state)
{
	static const struct { const char *pmu, *name, *text; } events[] = {
		{ "cpu", "cpu-cycles", "event=0x3c" },
		{ "cpu", "instructions", "event=0xc0" },
		{ "cpu", "mem-loads", "event=0xcd,umask=0x1,ldlat=3" },
		{ "msr", "aperf", "event=0x01" },
		{ "msr", "tsc", "event=0x00" },
	}, formats[] = {
		{ "cpu", "cmask", "config:24-31" },
		{ "cpu", "event", "config:0-7,32-35" },
		{ "cpu", "inv", "config:23" },
		{ "cpu", "ldlat", "config1:0-15" },
		{ "cpu", "umask", "config:8-15" },
		{ "msr", "event", "config:0-63" },
	};
	g_autoptr(pmu_set) set = NULL;

	assert_int_equal(pmu_set_load(FIXTURE, &set), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(events); i++) {
		const struct pmu_event *e = pmu_find_event(pmu_set_find(set, events[i].pmu),
							   events[i].name);

		if (!e || strcmp(e->terms, events[i].text))
			fail_msg("%s/%s: %s", events[i].pmu, events[i].name, e ? e->terms : "not found");
	}
	for (size_t i = 0; i < G_N_ELEMENTS(formats); i++) {
		const struct pmu_format *f = pmu_find_format(pmu_set_find(set, formats[i].pmu),
							     formats[i].name);

		if (!f || strcmp(f->bits, formats[i].text))
			fail_msg("%s format %s: %s", formats[i].pmu, formats[i].name,
				 f ? f->bits : "not found");
	}
	assert_int_equal(pmu_set_find_type(set, 4), pmu_set_find(set, "cpu"));
	assert_null(pmu_set_find_type(set, 5));
	assert_null(pmu_set_find_type(NULL, 4));
	assert_null(pmu_find_event(pmu_set_find(set, "msr"), "cpu-cycles"));
	assert_null(pmu_find_format(pmu_set_find(set, "msr"), "umask"));
	assert_null(pmu_find_event(NULL, "tsc"));
	assert_null(pmu_find_format(pmu_set_find(set, "cpu"), NULL));
	assert_null(pmu_find_event(pmu_set_find(set, "cpu"), NULL));
}

static void test_missing_root(void **state)
{
	struct pmu_set *set = (void *)1;

	assert_int_equal(pmu_set_load("/nonexistent/pmus", &set), -ENOENT);
	assert_null(set);
	assert_non_null(strstr(pc_errmsg(), "/nonexistent/pmus"));
	pmu_set_free(NULL);
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	g_autofree char *path = g_build_filename(dir, rel, NULL);
	g_autofree char *parent = g_path_get_dirname(path);

	assert_int_equal(g_mkdir_with_parents(parent, 0700), 0);
	assert_true(g_file_set_contents(path, text, -1, NULL));
}

static void rm_tree(const char *dir)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* A malformed file fails the load with a message naming its path. */
static void test_malformed(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("pmu-XXXXXX", NULL);
	struct pmu_set *set = NULL;

	assert_non_null(dir);
	write_file(dir, "bad/type", "zz\n");
	assert_int_equal(pmu_set_load(dir, &set), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "bad/type"));
	write_file(dir, "bad/type", "7\n");
	write_file(dir, "bad/format/event", "0-7\n");
	assert_int_equal(pmu_set_load(dir, &set), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "bad/format/event"));
	write_file(dir, "bad/format/event", "config:0-7\n");
	/* Decimal only, in u32: strtoull base 0 took "-18446744073709551615" as type 1
	 * and "010" as octal 8. */
	write_file(dir, "bad/type", "-18446744073709551615\n");
	assert_int_equal(pmu_set_load(dir, &set), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "bad/type: not a PMU type number (0..4294967295): '-18446744073709551615'"));
	write_file(dir, "bad/type", "4294967296\n");
	assert_int_equal(pmu_set_load(dir, &set), -EINVAL);
	write_file(dir, "bad/type", "0x7\n");
	assert_int_equal(pmu_set_load(dir, &set), -EINVAL);
	write_file(dir, "bad/type", "010\n");
	assert_int_equal(pmu_set_load(dir, &set), 0);
	assert_int_equal(pmu_set_find(set, "bad")->type, 10);
	pmu_set_free(set);
	write_file(dir, "bad/type", "7\n");
	assert_int_equal(pmu_set_load(dir, &set), 0);
	assert_int_equal(pmu_set_find(set, "bad")->type, 7);
	pmu_set_free(set);
	/* A FIFO where an event file should be is refused at once, named
	 * (it blocked the load until a writer came); a directory there is
	 * not an event, and skipped. */
	{
		g_autofree char *ev = g_build_filename(dir, "bad/events", NULL);
		g_autofree char *fifo = g_build_filename(ev, "cycles", NULL);
		g_autofree char *sub = g_build_filename(ev, "sub", NULL);

		assert_int_equal(g_mkdir_with_parents(ev, 0700), 0);
		assert_int_equal(mkfifo(fifo, 0600), 0);
		assert_int_equal(pmu_set_load(dir, &set), -EINVAL);
		assert_non_null(strstr(pc_errmsg(), fifo));
		unlink(fifo);
		assert_int_equal(mkdir(sub, 0700), 0);
		assert_int_equal(pmu_set_load(dir, &set), 0);
		pmu_set_free(set);
	}
	rm_tree(dir);
}

static void test_format_apply(void **state)
{
	struct pmu_format split = { "event", "config:0-7,32-35" };
	struct pmu_format one = { "inv", "config:23" };
	struct pmu_format c1 = { "ldlat", "config1:0-15" };
	struct pmu_format bad = { "x", "config3:0-7" };
	uint64_t c[3] = { 0, 0, 0 };

	assert_int_equal(pmu_format_apply(&split, 0xabc, c), 0);
	assert_int_equal(c[0], 0xbcULL | (0xaULL << 32));
	assert_int_equal(pmu_format_apply(&one, 1, c), 0);
	assert_int_equal(c[0] & (1 << 23), 1 << 23);
	assert_int_equal(pmu_format_apply(&c1, 3, c), 0);
	assert_int_equal(c[1], 3);
	assert_int_equal(pmu_format_apply(&one, 2, c), -ERANGE);
	assert_int_equal(pmu_format_apply(&bad, 1, c), -EINVAL);
	/* perf keeps a format as a bitmap (struct perf_pmu_format's
	 * DECLARE_BITMAP(bits, 64)) and pmu_format_value() walks it from bit
	 * 0: ranges out of order are the sorted ones, overlapping ranges hold
	 * each bit once, and a format of all 64 bits takes any value. */
	{
		static const struct { const char *bits; uint64_t value, want; int ret; } bitmap[] = {
			{ "config:32-35,0-7", 0xabc, 0xbcULL | (0xaULL << 32), 0 },
			{ "config:0-7,4-11", 0xfff, 0xfff, 0 },
			{ "config:0-7,4-11", 0x1000, 0, -ERANGE },
			{ "config:1-63,5,0", 1, 1, 0 },
			{ "config:1-63,5,0", ~0ULL, ~0ULL, 0 },
			{ "config:63,0-62", 1ULL << 63, 1ULL << 63, 0 },
			{ "config:8,8,8", 1, 1 << 8, 0 },
			{ "config:8,8,8", 2, 0, -ERANGE },
		};

		for (size_t i = 0; i < G_N_ELEMENTS(bitmap); i++) {
			struct pmu_format m = { "m", (char *)bitmap[i].bits };
			uint64_t got[3] = { 0, 0, 0 };
			int ret = pmu_format_apply(&m, bitmap[i].value, got);

			if (ret != bitmap[i].ret || (!ret && got[0] != bitmap[i].want))
				fail_msg("%s value %#" PRIx64 ": %d, config %#" PRIx64 ", want %d, %#" PRIx64,
					 bitmap[i].bits, bitmap[i].value, ret, got[0], bitmap[i].ret,
					 bitmap[i].want);
		}
	}
	/* Bit numbers are decimal 0..63, no sign or space. */
	static const char *const malformed[] = {
		"config:+3", "config: 3", "config:0-+7", "config:0-", "config:-1",
		"config:64", "config:0-18446744073709551616", "config:7-3", "config:3x",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(malformed); i++) {
		struct pmu_format m = { "m", (char *)malformed[i] };

		if (pmu_format_apply(&m, 1, c) != -EINVAL)
			fail_msg("'%s' was accepted", malformed[i]);
	}
}

static void test_real_sysfs(void **state)
{
	g_autoptr(pmu_set) set = NULL;
	const struct pmu *sw, *msr;

	/* No sysfs PMUs at all is the environment; failing to read them is
	 * pmu.c's failure. Every kernel with perf events has "software". */
	if (access("/sys/bus/event_source/devices/software", F_OK) != 0)
		test_skip("no /sys/bus/event_source/devices/software here");
	if (pmu_set_load(NULL, &set) < 0)
		fail_msg("pmu_set_load: %s", pc_errmsg());
	sw = pmu_set_find(set, "software");
	assert_non_null(sw);
	assert_int_equal(sw->type, PERF_TYPE_SOFTWARE);
	msr = pmu_set_find(set, "msr");
	if (!msr)
		test_skip("no msr PMU (x86 only)");
	assert_non_null(pmu_find_event(msr, "tsc"));
	assert_non_null(pmu_find_format(msr, "event"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_loads),
		cmocka_unit_test(test_fixture_every_entry),
		cmocka_unit_test(test_missing_root),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_format_apply),
		cmocka_unit_test(test_real_sysfs),
	};
	return test_run_group(tests, NULL, NULL);
}
