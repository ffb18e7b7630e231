/* Scenario files: the shipped ones load, every bad file names file:line:key. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "log.h"
#include "scenario.h"
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char *top_path(const char *rel)
{
	const char *top = getenv("PMUCANARY_TOP");

	return g_build_filename(top ? top : ".", rel, NULL);
}

static bool has(const GPtrArray *a, const char *s)
{
	for (guint i = 0; i < a->len; i++)
		if (!strcmp(a->pdata[i], s))
			return true;
	return false;
}

static void test_defaults(void **state)
{
	g_autoptr(scenario) s = scenario_new_default();

	assert_int_equal(s->guests, 2);
	assert_int_equal(s->dwell_ms, 2000);
	assert_int_equal(s->heartbeat_ms, 500);
	assert_int_equal(s->memory_mib, 256);
	assert_int_equal(s->batch_size, 32);
	assert_int_equal(s->confirm, 3);
	assert_string_equal(s->modifier_set, "basic");
	assert_int_equal(s->disk_boot, INJECT_DISK_BOOT_KERNEL);
	assert_int_equal(s->modifiers->len, 24);
	assert_true(has(s->profiles, "*"));
	assert_string_equal(s->mode, "record");
	assert_int_equal(s->isolate, SCENARIO_ISOLATE_RULE);
	/* Every row of the table is documented. */
	for (size_t i = 0; i < scenario_key_count(); i++) {
		assert_non_null(scenario_key_at(i)->help);
		assert_true(strlen(scenario_key_at(i)->help) > 5);
	}
	assert_null(scenario_key_at(scenario_key_count()));
}

static void test_smoke(void **state)
{
	g_autofree char *path = top_path("scenarios/smoke.ini");
	g_autoptr(scenario) s = NULL;

	assert_int_equal(scenario_load(path, &s), 0);
	assert_string_equal(s->name, "smoke");
	assert_int_equal(s->guests, 2);
	assert_int_equal(s->dwell_ms, 1000);
	assert_true(has(s->events, "cpu-clock"));
	assert_true(has(s->events, "page-faults"));
	assert_true(has(s->specs, "cycles:pp"));
	assert_true(has(s->specs, "cycles:ppH"));
	assert_true(has(s->profiles, "perf-3.6"));
	assert_true(has(s->profiles, "raw"));
	assert_string_equal(s->modifier_set, "list");
	assert_true(has(s->modifiers, ""));
	assert_true(has(s->modifiers, "pH"));
	assert_string_equal(s->kernel, "");
}

static void test_pebs(void **state)
{
	g_autofree char *path = top_path("scenarios/pebs-2012.ini");
	g_autoptr(scenario) s = NULL;
	static const char *const want[] = {
		"cycles:p", "cycles:pp", "cycles:ppp", "cycles:pH", "cycles:ppH",
		"cycles:pG", "cycles:G", "cycles:H",
	};

	assert_int_equal(scenario_load(path, &s), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
		assert_true(has(s->specs, want[i]));
	assert_int_equal(s->profiles->len, 3);
	assert_true(has(s->profiles, "perf-3.7"));
	assert_int_equal(s->events->len, 0);
	assert_int_equal(s->dwell_ms, 10000);
}

static void test_full(void **state)
{
	g_autofree char *path = top_path("scenarios/full.ini");
	g_autoptr(scenario) s = NULL;
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

	assert_int_equal(scenario_load(path, &s), 0);
	assert_true(s->raw_excludes);
	assert_true(has(s->pmus, "*"));
	assert_string_equal(s->modifier_set, "full");
	assert_int_equal(s->modifiers->len, 128);
	/* distinct strings */
	for (guint i = 0; i < s->modifiers->len; i++)
		assert_true(g_hash_table_add(seen, s->modifiers->pdata[i]));
	assert_true(has(s->modifiers, "ukhpppGH"));
}

static void test_lists_and_units(void **state)
{
	g_autoptr(scenario) s = NULL;
	const char *text =
		"[sweep]\n"
		"events = msr/tsc/, cpu/event=0x3c,umask=0x00/ ; cpu-clock\n"
		"modifiers = extended\n"
		"[fleet]\nmemory = 1G\nheartbeat = 100ms\nheartbeat_timeout = 1m\n"
		"[load]\ndwell = 500ms\n";

	assert_int_equal(scenario_load_data("inline.ini", text, &s), 0);
	assert_int_equal(s->events->len, 3);
	assert_string_equal(s->events->pdata[1], "cpu/event=0x3c,umask=0x00/");
	assert_int_equal(s->memory_mib, 1024);
	assert_int_equal(s->heartbeat_timeout_ms, 60000);
	assert_int_equal(s->dwell_ms, 500);
	assert_int_equal(s->modifiers->len, 84);
	assert_string_equal(s->name, "inline");

	json_t *j = scenario_to_json(s);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "load"), "dwell_ms")), 500);
	json_decref(j);
}

/* run.json's "scenario" is the scenario as read: every entry of every list
 * in the file's order, the first as much as the last. */
static void test_lists_to_json(void **state)
{
	static const char text[] = "[sweep]\npmus = cpu; msr\nevents = cycles; cpu-clock; instructions\n"
				   "specs = cycles:u; cpu-clock:k\nprofiles = perf-3.6; perf-6.1\n"
				   "modifiers = p; pp\n";
	static const struct {
		const char *key, *want;
	} lists[] = {
		{ "pmus", "[\"cpu\", \"msr\"]" },
		{ "events", "[\"cycles\", \"cpu-clock\", \"instructions\"]" },
		{ "specs", "[\"cycles:u\", \"cpu-clock:k\"]" },
		{ "profiles", "[\"perf-3.6\", \"perf-6.1\"]" },
		{ "modifiers", "[\"p\", \"pp\"]" },
	};
	g_autoptr(scenario) s = NULL;
	json_t *j, *sweep;

	(void)state;
	if (scenario_load_data("l.ini", text, &s) != 0)
		fail_msg("%s", pc_errmsg());
	j = scenario_to_json(s);
	sweep = json_object_get(j, "sweep");
	for (size_t i = 0; i < G_N_ELEMENTS(lists); i++) {
		g_autofree char *got = json_dumps(json_object_get(sweep, lists[i].key), JSON_ENCODE_ANY);

		if (!got || strcmp(got, lists[i].want))
			fail_msg("%s: %s, want %s", lists[i].key, got ? got : "(none)", lists[i].want);
	}
	json_decref(j);
}

static void test_isolate_key(void **state)
{
	static const char *const values[] = { "each", "rule" };

	for (size_t i = 0; i < G_N_ELEMENTS(values); i++) {
		g_autofree char *text = g_strdup_printf("[sweep]\nevents = cycles\n[load]\nisolate = %s\n",
							values[i]);
		g_autoptr(scenario) s = NULL;
		json_t *j;

		assert_int_equal(scenario_load_data("i.ini", text, &s), 0);
		assert_string_equal(scenario_isolate_name(s->isolate), values[i]);
		j = scenario_to_json(s);
		assert_string_equal(json_string_value(json_object_get(json_object_get(j, "load"), "isolate")),
				    values[i]);
		json_decref(j);
	}
	assert_int_equal(scenario_isolate_from_name("Rule"), SCENARIO_ISOLATE_COUNT);
	assert_int_equal(scenario_isolate_from_name(NULL), SCENARIO_ISOLATE_COUNT);
}

/* ';' starts a comment line as '#' does (indented too); after a value it
 * is the list separator, so a "comment" there is part of the value and a
 * bad one is an error naming its line. */
static void test_semicolon_comments(void **state)
{
	g_autoptr(scenario) s = NULL, t = NULL;

	assert_int_equal(scenario_load_data("c.ini", "; top\n[sweep]\n  ; indented\n"
					     "events = cpu-clock\n;events = cycles\n", &s), 0);
	assert_int_equal(s->events->len, 1);
	assert_string_equal(s->events->pdata[0], "cpu-clock");
	assert_int_equal(scenario_load_data("d.ini", "[sweep]\nevents = cpu-clock\n[load]\n"
					     "isolate = each   ; the default is rule\n", &t), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "d.ini:4: [load] isolate: expected rule or each"));
}

/* [load] budget: none by default; the edge of the range holds. */
static void test_budget_key(void **state)
{
	static const struct {
		const char *value;
		unsigned int ms;
	} ok[] = { { "0s", 0 }, { "90m", 5400000 }, { "1500ms", 1500 }, { "168h", 604800000 } };
	g_autoptr(scenario) d = NULL;

	assert_int_equal(scenario_load_data("d.ini", "[sweep]\nevents = cycles\n", &d), 0);
	assert_int_equal(d->budget_ms, 0);
	for (size_t i = 0; i < G_N_ELEMENTS(ok); i++) {
		g_autofree char *text = g_strdup_printf("[sweep]\nevents = cycles\n[load]\nbudget = %s\n",
							ok[i].value);
		g_autoptr(scenario) s = NULL;
		json_t *j;

		assert_int_equal(scenario_load_data("b.ini", text, &s), 0);
		assert_int_equal(s->budget_ms, ok[i].ms);
		j = scenario_to_json(s);
		assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "load"),
								    "budget_ms")), ok[i].ms);
		json_decref(j);
	}
}

static void test_duration_parser(void **state)
{
	unsigned int ms;

	assert_int_equal(scenario_parse_duration("2s", &ms), 0);
	assert_int_equal(ms, 2000);
	assert_int_equal(scenario_parse_duration("1h", &ms), 0);
	assert_int_equal(ms, 3600000);
	assert_int_equal(scenario_parse_duration("2", &ms), -EINVAL);
	assert_int_equal(scenario_parse_duration("s", &ms), -EINVAL);
	assert_int_equal(scenario_parse_duration("-1s", &ms), -EINVAL);
	assert_int_equal(scenario_parse_duration("2 s", &ms), -EINVAL);
	assert_int_equal(scenario_parse_duration("99999999999h", &ms), -ERANGE);
	/* Past 64 bits is out of range too, not "not a duration". */
	assert_int_equal(scenario_parse_duration("999999999999999999999h", &ms), -ERANGE);
	assert_int_equal(scenario_parse_duration("4294967296ms", &ms), -ERANGE);
	assert_int_equal(scenario_parse_duration("4294967295ms", &ms), 0);
	assert_int_equal(ms, 4294967295u);
	assert_int_equal(scenario_parse_duration("+2s", &ms), -EINVAL);
	assert_int_equal(scenario_parse_duration("0x10s", &ms), -EINVAL);
	assert_int_equal(scenario_parse_duration("010s", &ms), 0);
	assert_int_equal(ms, 10000);
	/* no text (an option not given) is no duration, nor a size */
	assert_int_equal(scenario_parse_duration(NULL, &ms), -EINVAL);
	assert_int_equal(scenario_parse_memory(NULL, &ms), -EINVAL);
	assert_int_equal(scenario_parse_memory("", &ms), -EINVAL);
}

static const struct {
	const char *file;
	const char *message; /* after "PATH" */
} bad_files[] = {
	{ "bad-duration.ini", ":7: [load] dwell: expected a duration like 2s or 500ms, not '2 seconds'" },
	{ "unknown-section.ini", ":3: [loda]: unknown section (expected scenario, fleet, sweep or load)" },
	{ "unknown-key.ini", ":2: [fleet] guest: unknown key" },
	{ "bad-uint.ini", ":2: [fleet] guests: expected an integer from 1 to 64, not '0'" },
	/* a mixed fleet needs a disk and at most guests disk guests */
	{ "disk-guests-too-many.ini", ":3: [fleet] disk_guests: 2 is more than guests (1)" },
	{ "disk-guests-no-disk.ini", ":3: [fleet] disk_guests: needs disk = an injected overlay" },
	{ "bad-bool.ini", ":3: [sweep] raw_excludes: expected true or false, not 'maybe'" },
	{ "bad-memory.ini", ":2: [fleet] memory: expected a size like 256M or 1G, not 'lots'" },
	{ "key-outside.ini", ":1: guests: key outside any section" },
	{ "duplicate-key.ini", ":4: [sweep] events: key given twice" },
	{ "nothing-to-sweep.ini", ":4: [sweep]: nothing to sweep: give events, pmus, specs or raw_excludes = true" },
	{ "bad-modifiers.ini", ":3: [sweep] modifiers: 'p+' is neither a set (none, basic, extended, full) nor modifier letters" },
	{ "bad-mode.ini", ":3: [sweep] mode: expected record or stat, not 'trace'" },
	{ "bad-isolate.ini", ":5: [load] isolate: expected rule or each, not 'bisect'" },
	{ "bad-disk-boot.ini", ":3: [fleet] disk_boot: expected kernel or bootloader, not 'grub'" },
	{ "disk-boot-no-disk.ini", ":3: [fleet] disk_boot: bootloader needs disk = an injected overlay" },
	{ "bad-heartbeat.ini", ":3: [fleet] heartbeat_timeout: must be longer than heartbeat (2000ms)" },
	{ "not-a-line.ini", ":3: expected key = value, a [section] or a # comment" },
	{ "bad-ring.ini", ":4: [load] ring_pages: expected a power of two, not 3" },
	{ "bad-header.ini", ":1: expected a section header like [load]" },
	{ "big-duration.ini", ":7: [load] dwell: 999999999999999999999h is out of range (10ms to 3600000ms)" },
	/* a week at most: 168h is 604800000 ms */
	{ "big-budget.ini", ":6: [load] budget: 169h is out of range (0ms to 604800000ms)" },
	{ "big-memory.ini", ":3: [fleet] memory: 4194304G is out of range (64M to 1048576M)" },
};

static void test_bad_files(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(bad_files); i++) {
		g_autofree char *rel = g_build_filename("tests/data/scenarios", bad_files[i].file, NULL);
		g_autofree char *path = top_path(rel);
		g_autofree char *want = g_strconcat(path, bad_files[i].message, NULL);
		g_autoptr(scenario) s = NULL;
		int r = scenario_load(path, &s);

		if (r != -EINVAL || strcmp(pc_errmsg(), want))
			fail_msg("%s: got %d '%s'\n want '%s'", bad_files[i].file, r, pc_errmsg(), want);
		assert_null(s);
	}
}

static void test_missing_file(void **state)
{
	g_autoptr(scenario) s = NULL;

	assert_int_equal(scenario_load("/nonexistent/x.ini", &s), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "/nonexistent/x.ini"));
}

/* disk_boot = bootloader on an overlay whose image has none is refused
 * when the scenario loads, before anything boots; kernel boots it. */
static void test_disk_boot_without_bootloader(void **state)
{
	g_autofree char *dir = test_tmpdir("test_scenario");
	g_autofree char *ov = g_build_filename(dir, "g.qcow2", NULL);
	g_autofree char *man = g_strdup_printf("%s.json", ov);
	g_autofree char *text = NULL, *want = NULL;
	g_autoptr(scenario) s = NULL;

	(void)state;
	assert_true(g_file_set_contents(ov, "", 0, NULL));
	assert_true(g_file_set_contents(man, "{\"boot\": {\"kernel_path\": \"/k\", "
					"\"cmdline_root\": \"root=/dev/vda1\"}, \"bootloader\": "
					"{\"kind\": \"none\", \"note\": \"no grub.cfg, "
					"extlinux.conf or syslinux.cfg\"}}", -1, NULL));
	text = g_strdup_printf("[fleet]\nguests = 1\ndisk = %s\ndisk_boot = bootloader\n"
			       "[sweep]\nevents = cpu-clock\n", ov);
	want = g_strdup_printf("x.ini:4: [fleet] disk_boot: %s: no bootloader to boot through (no "
			       "grub.cfg, extlinux.conf or syslinux.cfg): boot its kernel directly "
			       "(disk_boot = kernel, fleet --disk-boot kernel)", ov);
	assert_int_equal(scenario_load_data("x.ini", text, &s), -EINVAL);
	assert_string_equal(pc_errmsg(), want);
	g_free(text);
	text = g_strdup_printf("[fleet]\nguests = 1\ndisk = %s\ndisk_boot = kernel\n"
			       "[sweep]\nevents = cpu-clock\n", ov);
	assert_int_equal(scenario_load_data("x.ini", text, &s), 0);
	assert_int_equal(s->disk_boot, INJECT_DISK_BOOT_KERNEL);
	g_clear_pointer(&s, scenario_free);
	/* a mixed fleet: disk_guests of the guests boot the overlay given */
	g_free(text);
	text = g_strdup_printf("[fleet]\nguests = 3\ndisk = %s\ndisk_guests = 2\n"
			       "[sweep]\nevents = cpu-clock\n", ov);
	if (scenario_load_data("x.ini", text, &s) != 0)
		fail_msg("disk_guests with a disk refused: %s", pc_errmsg());
	assert_int_equal(s->disk_guests, 2);
	assert_int_equal(s->guests, 3);
	g_clear_pointer(&s, scenario_free);
	/* an image whose manifest found extlinux boots through it */
	assert_true(g_file_set_contents(man, "{\"boot\": {\"kernel_path\": \"/k\", "
					"\"cmdline_root\": \"root=/dev/vda1\"}, \"bootloader\": "
					"{\"kind\": \"extlinux\", \"config\": "
					"\"/boot/extlinux/extlinux.conf\"}}", -1, NULL));
	g_free(text);
	text = g_strdup_printf("[fleet]\nguests = 1\ndisk = %s\ndisk_boot = bootloader\n"
			       "[sweep]\nevents = cpu-clock\n", ov);
	if (scenario_load_data("x.ini", text, &s) != 0)
		fail_msg("bootloader on an extlinux image refused: %s", pc_errmsg());
	assert_int_equal(s->disk_boot, INJECT_DISK_BOOT_BOOTLOADER);
	test_tmpdir_remove(dir);
}

/* Every number a scenario gives is checked against both ends of its key's
 * range (the message states it), each end itself allowed. */
static void test_range_ends(void **state)
{
	static const struct {
		const char *section, *key, *value, *error; /* NULL: accepted */
	} cases[] = {
		{ "load", "dwell", "9ms", "[load] dwell: 9ms is out of range (10ms to 3600000ms)" },
		{ "load", "dwell", "10ms", NULL },
		{ "load", "dwell", "1h", NULL },
		{ "load", "dwell", "3600001ms", "[load] dwell: 3600001ms is out of range" },
		{ "fleet", "heartbeat", "9ms", "[fleet] heartbeat: 9ms is out of range (10ms to 60000ms)" },
		{ "fleet", "heartbeat", "10ms", NULL },
		{ "fleet", "heartbeat", "61s", "[fleet] heartbeat: 61s is out of range" },
		{ "fleet", "boot_timeout", "0s", NULL },
		{ "fleet", "boot_timeout", "61m", "[fleet] boot_timeout: 61m is out of range (0ms to 3600000ms)" },
		{ "load", "budget", "168h", NULL },
		{ "fleet", "memory", "63M", "[fleet] memory: 63M is out of range (64M to 1048576M)" },
		{ "fleet", "memory", "64M", NULL },
		{ "fleet", "memory", "1024G", NULL },
		{ "fleet", "memory", "1025G", "[fleet] memory: 1025G is out of range" },
		{ "fleet", "guests", "64", NULL },
		{ "fleet", "guests", "65", "[fleet] guests: expected an integer from 1 to 64, not '65'" },
		{ "load", "batch_size", "4097", "[load] batch_size: expected an integer from 1 to 4096" },
		{ "load", "confirm", "0", NULL },
		{ "load", "confirm", "101", "[load] confirm: expected an integer from 0 to 100" },
	};

	(void)state;
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *text = g_strdup_printf("[sweep]\nevents = cpu-clock\n[%s]\n%s = %s\n",
						       cases[i].section, cases[i].key, cases[i].value);
		g_autofree char *want = cases[i].error ? g_strdup_printf("x.ini:4: %s", cases[i].error) : NULL;
		g_autoptr(scenario) s = NULL;
		int r = scenario_load_data("x.ini", text, &s);

		if (!want && r != 0)
			fail_msg("%s = %s: refused: %s", cases[i].key, cases[i].value, pc_errmsg());
		if (want && (r != -EINVAL || !g_str_has_prefix(pc_errmsg(), want)))
			fail_msg("%s = %s: got %d '%s', want '%s'", cases[i].key, cases[i].value, r,
				 r ? pc_errmsg() : "", want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_smoke),
		cmocka_unit_test(test_pebs),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_lists_and_units),
		cmocka_unit_test(test_isolate_key),
		cmocka_unit_test(test_lists_to_json),
		cmocka_unit_test(test_budget_key),
		cmocka_unit_test(test_semicolon_comments),
		cmocka_unit_test(test_duration_parser),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_range_ends),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_disk_boot_without_bootloader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
