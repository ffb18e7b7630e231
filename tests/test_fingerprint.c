/* Tests for lib/fingerprint: the host's fingerprint matches what the host
 * says through other channels, the fixture's PMUs are described, and the
 * build-id note parser. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "fingerprint.h"
#include "log.h"

#include <fcntl.h>
#include <stdlib.h>
#include <glib.h>
#include <libvirt/libvirt.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

static void test_host(void **state)
{
	json_t *fp = NULL;
	struct utsname u;
	g_autofree char *paranoid = NULL;
	int fd;
	const char *accel;
	g_autofree char *expect_libvirt =
		g_strdup_printf("%d.%d.%d", LIBVIR_VERSION_NUMBER / 1000000,
				LIBVIR_VERSION_NUMBER / 1000 % 1000, LIBVIR_VERSION_NUMBER % 1000);

	assert_int_equal(fingerprint_collect(NULL, &fp), 0);
	assert_int_equal(uname(&u), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(fp, "kernel"),
							       "release")), u.release);
	assert_non_null(json_object_get(json_object_get(fp, "kernel"), "cmdline"));
	assert_true(json_is_array(json_object_get(fp, "pmus")));
	/* Every Linux host with perf has the software PMU, type 1. */
	{
		size_t i;
		json_t *p;
		bool sw = false;

		json_array_foreach(json_object_get(fp, "pmus"), i, p)
			sw |= !strcmp(json_string_value(json_object_get(p, "name")), "software") &&
			      json_integer_value(json_object_get(p, "type")) == 1;
		assert_true(sw);
	}
	assert_true(g_file_get_contents("/proc/sys/kernel/perf_event_paranoid", &paranoid,
					NULL, NULL));
	assert_int_equal(json_integer_value(json_object_get(fp, "perf_event_paranoid")),
			 atoi(paranoid));
	/* kvm only when /dev/kvm opens and a real KVM module is there: a
	 * kvm_pvm /dev/kvm cannot boot an ordinary guest. */
	fd = open("/dev/kvm", O_RDWR);
	accel = json_string_value(json_object_get(fp, "accel"));
	assert_string_equal(accel, fd >= 0 && (access("/sys/module/kvm_intel", F_OK) == 0 ||
						access("/sys/module/kvm_amd", F_OK) == 0)
					   ? "kvm" : "tcg");
	assert_true(json_is_string(json_object_get(fp, "accel_reason")));
	if (fd >= 0)
		close(fd);
	if (g_file_test("/sys/module/kvm/parameters/enable_pmu", G_FILE_TEST_EXISTS))
		assert_non_null(json_object_get(json_object_get(json_object_get(fp, "kvm"), "kvm"),
						"enable_pmu"));
	{
		g_autofree char *qemu = g_find_program_in_path("qemu-system-x86_64");
		json_t *qv = json_object_get(fp, "qemu_version");

		if (qemu)
			assert_true(json_is_string(qv) && g_ascii_isdigit(json_string_value(qv)[0]));
		else
			assert_true(json_is_null(qv));
	}
	{
		json_t *lv = json_object_get(fp, "libvirt_version");

		assert_true(json_is_string(lv));
		assert_true(g_regex_match_simple("^[0-9]+\\.[0-9]+\\.[0-9]+$",
						 json_string_value(lv), 0, 0));
		/* the library linked is the one the header names (one Debian
		 * package); libvirt numbers it major * 1000000 + minor * 1000 +
		 * micro (libvirt-common.h) */
		assert_string_equal(json_string_value(lv), expect_libvirt);
	}
	if (g_file_test("/proc/cpuinfo", G_FILE_TEST_EXISTS) &&
	    strstr(u.machine, "86"))
		assert_true(json_is_string(json_object_get(json_object_get(fp, "cpu"), "vendor")));
	json_decref(fp);
}

static void test_fixture_pmus(void **state)
{
	const char *top = g_getenv("PMUCANARY_TOP");
	g_autofree char *root = g_build_filename(top ? top : ".", "tests/data/sysfs-enum", NULL);
	struct pmu_set *pmus = NULL;
	json_t *fp = NULL, *p;
	size_t i;
	bool saw_cpu = false, saw_msr = false;

	assert_int_equal(pmu_set_load(root, &pmus), 0);
	assert_int_equal(fingerprint_collect(pmus, &fp), 0);
	assert_true(json_is_true(json_object_get(fp, "hw_pmu")));
	json_array_foreach(json_object_get(fp, "pmus"), i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));

		if (!strcmp(name, "cpu")) {
			saw_cpu = true;
			assert_int_equal(json_integer_value(json_object_get(p, "type")), 4);
			assert_string_equal(json_string_value(json_object_get(
				json_object_get(p, "caps"), "max_precise")), "3");
			assert_string_equal(json_string_value(json_object_get(
				json_object_get(p, "formats"), "umask")), "config:8-15");
		}
		if (!strcmp(name, "msr")) {
			saw_msr = true;
			assert_int_equal(json_integer_value(json_object_get(p, "events")), 2);
		}
	}
	assert_true(saw_cpu);
	assert_true(saw_msr);
	json_decref(fp);
	pmu_set_free(pmus);
}

/* A fake /sys/module: /dev/null stands for a /dev/kvm that opens. */
/* Numbers from /proc and /sys are decimal and bounded, else null
 * ("unknown"): never a wrong number. */
static void test_kernel_numbers(void **state)
{
	static const struct { const char *text; long long min, max, want; } good[] = {
		{ "2", G_MININT, G_MAXINT, 2 }, { "-1", G_MININT, G_MAXINT, -1 },
		{ "010", 0, 0xffff, 10 }, { "2147483647", G_MININT, G_MAXINT, 2147483647 },
	};
	static const char *const bad[] = {
		"", "abc", "2x", " 2", "+2", "0x10", "2147483648", "99999999999999999999", "1.5",
		"-", "--1",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
		json_t *v = fingerprint_number(good[i].text, good[i].min, good[i].max);

		assert_true(json_is_integer(v));
		assert_int_equal(json_integer_value(v), good[i].want);
		json_decref(v);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		json_t *v = fingerprint_number(bad[i], G_MININT, G_MAXINT);

		if (!json_is_null(v))
			fail_msg("\"%s\" read as a number", bad[i]);
	}
	assert_true(json_is_null(fingerprint_number(NULL, 0, 1)));
	assert_true(json_is_null(fingerprint_number("256", 0, 255)));
}

/* A cpuinfo of our own: family "010" is ten (base 0 read eight), a
 * model that is not a number is unknown (strtol read 0). */
static void test_cpuinfo(void **state)
{
	static const char *const cpu_members[] = {
		"vendor", "family", "model", "stepping", "microcode", "model_name",
	};
	g_autofree char *dir = g_dir_make_tmp("pmucanary-cpuinfo-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "cpuinfo", NULL);
	json_t *cpu;

	assert_true(g_file_set_contents(path,
		"processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 010\n"
		"model\t\t: garbage\nstepping\t: 99999999999999999999\nmicrocode\t: 0x42\n"
		"flags\t\t: fpu vme hypervisor lahf_lm\n\n"
		"processor\t: 1\ncpu family\t: 6\n", -1, NULL));
	cpu = fingerprint_cpu_json(path);
	assert_string_equal(json_string_value(json_object_get(cpu, "vendor")), "GenuineIntel");
	assert_int_equal(json_integer_value(json_object_get(cpu, "family")), 10);
	assert_true(json_is_null(json_object_get(cpu, "model")));
	assert_true(json_is_null(json_object_get(cpu, "stepping")));
	assert_string_equal(json_string_value(json_object_get(cpu, "microcode")), "0x42");
	assert_true(json_is_true(json_object_get(cpu, "hypervisor")));
	json_decref(cpu);
	/* bare metal: no hypervisor flag (a flag that merely contains the word
	 * is not it); no flags line at all: unknown */
	assert_true(g_file_set_contents(path, "processor\t: 0\nflags\t\t: fpu hypervisorx svm\n",
					-1, NULL));
	cpu = fingerprint_cpu_json(path);
	assert_true(json_is_false(json_object_get(cpu, "hypervisor")));
	json_decref(cpu);
	assert_true(g_file_set_contents(path, "processor\t: 0\n", -1, NULL));
	cpu = fingerprint_cpu_json(path);
	assert_true(json_is_null(json_object_get(cpu, "hypervisor")));
	/* every member fingerprint.h names is there, null when unknown */
	for (size_t i = 0; i < G_N_ELEMENTS(cpu_members); i++)
		if (!json_is_null(json_object_get(cpu, cpu_members[i])))
			fail_msg("cpu.%s: not null", cpu_members[i]);
	json_decref(cpu);
	unlink(path);
	rmdir(dir);
}

static void test_accel_detect(void **state)
{
	g_autofree char *root = g_dir_make_tmp("pmucanary-mod-XXXXXX", NULL);
	g_autofree char *kvm = g_build_filename(root, "kvm", NULL);
	g_autofree char *pvm = g_build_filename(root, "kvm_pvm", NULL);
	g_autofree char *amd = g_build_filename(root, "kvm_amd", NULL);
	g_autofree char *missing = g_build_filename(root, "no-such-kvm", NULL);
	g_autofree char *reason = NULL;

	assert_non_null(root);
	assert_int_equal(mkdir(kvm, 0755), 0);
	assert_int_equal(mkdir(pvm, 0755), 0);
	assert_string_equal(fingerprint_accel_detect("/dev/null", root, &reason), "tcg");
	assert_string_equal(reason, "/dev/null is kvm_pvm, no kvm_intel/kvm_amd");
	g_clear_pointer(&reason, g_free);

	assert_string_equal(fingerprint_accel_detect(missing, root, &reason), "tcg");
	assert_non_null(strstr(reason, "does not open"));
	g_clear_pointer(&reason, g_free);

	assert_int_equal(mkdir(amd, 0755), 0);
	assert_string_equal(fingerprint_accel_detect("/dev/null", root, &reason), "kvm");
	assert_non_null(strstr(reason, "kvm_amd"));
	assert_string_equal(fingerprint_accel_detect("/dev/null", root, NULL), "kvm");

	rmdir(amd);
	rmdir(pvm);
	assert_string_equal(fingerprint_accel_detect("/dev/null", root, NULL), "tcg");
	rmdir(kvm);
	rmdir(root);
}

/* Detecting the accelerator leaves no descriptor open, whichever answer
 * it gives (a fleet or lab asks once per host and lives on). A temp file
 * stands in for /dev/kvm. */
static void test_accel_detect_closes(void **state)
{
	g_autofree char *root = g_dir_make_tmp("pmucanary-mod-XXXXXX", NULL);
	g_autofree char *dev = g_build_filename(root, "kvm-node", NULL);
	g_autofree char *intel = g_build_filename(root, "kvm_intel", NULL);
	unsigned int before;

	assert_non_null(root);
	assert_true(g_file_set_contents(dev, "", 0, NULL));
	before = test_open_fds();
	for (int i = 0; i < 4; i++)
		assert_string_equal(fingerprint_accel_detect(dev, root, NULL), "tcg");
	assert_int_equal(test_open_fds(), before);
	assert_int_equal(mkdir(intel, 0755), 0);
	for (int i = 0; i < 4; i++)
		assert_string_equal(fingerprint_accel_detect(dev, root, NULL), "kvm");
	assert_int_equal(test_open_fds(), before);
	/* A harness started with stdin closed (`<&-`, a daemon): /dev/kvm
	 * may open as descriptor 0, and that is an open, not a failure. */
	{
		int saved = dup(0), fd;

		assert_true(saved >= 0);
		close(0);
		assert_string_equal(fingerprint_accel_detect(dev, root, NULL), "kvm");
		/* it was closed again: the next open takes 0 */
		fd = open(dev, O_RDONLY | O_CLOEXEC);
		assert_int_equal(dup2(saved, 0), 0);
		close(saved);
		assert_int_equal(fd, 0);
	}
	rmdir(intel);
	unlink(dev);
	rmdir(root);
}

static void test_pmu_is_hw(void **state)
{
	assert_true(fingerprint_pmu_is_hw("cpu", 4));
	assert_true(fingerprint_pmu_is_hw("cpu_core", 8));   /* hybrid: P-cores */
	assert_true(fingerprint_pmu_is_hw("cpu_atom", 10));  /* E-cores */
	assert_false(fingerprint_pmu_is_hw("cpu_cores", 11));
	assert_false(fingerprint_pmu_is_hw("cpux", 12));
	assert_true(fingerprint_pmu_is_hw("armv8_pmuv3_0", 8));
	assert_false(fingerprint_pmu_is_hw("software", 1));
	assert_false(fingerprint_pmu_is_hw("msr", 9));
}

static void test_build_id(void **state)
{
	/* namesz 4, descsz 4, type 3, "GNU\0", de ad be ef; after a type-1 note. */
	static const unsigned char notes[] = {
		4, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 'X', 'e', 'n', 0, 1, 2, 0, 0,
		4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 0xde, 0xad, 0xbe, 0xef,
	};
	g_autofree char *id = fingerprint_build_id(notes, sizeof(notes));

	assert_string_equal(id, "deadbeef");
	assert_null(fingerprint_build_id(notes, sizeof(notes) - 2));
	assert_null(fingerprint_build_id(notes, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_fixture_pmus),
		cmocka_unit_test(test_kernel_numbers),
		cmocka_unit_test(test_cpuinfo),
		cmocka_unit_test(test_accel_detect),
		cmocka_unit_test(test_accel_detect_closes),
		cmocka_unit_test(test_pmu_is_hw),
		cmocka_unit_test(test_build_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
