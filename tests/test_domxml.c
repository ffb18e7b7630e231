/* The domain XML each kind of guest gets, whole, against golden files in
 * tests/data/domxml/ (written by hand from what libvirt's domain format
 * documents and what the fleet needs: see each case's comment), and each
 * golden file against libvirt's own schema (virt-xml-validate domain), so
 * that a golden file that libvirt would refuse cannot pass for right.
 *
 * A difference prints both texts. When the XML is meant to change, change
 * the golden file by hand and say why in the commit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "domxml.h"

#include <string.h>

static char *top;

static const struct fleet_domain_host kvm_host = {
	.cpu_mode = "host-passthrough", .pid = 4242, .start = 987654321ULL,
};
static const struct fleet_domain_host tcg_host = {
	.cpu_mode = "maximum", .pid = 4242, .start = 987654321ULL,
};
static const struct fleet_domain_host tcg_no_max = { .cpu_mode = NULL, .pid = 7, .start = 1 };

static const struct fleet_config initramfs = {
	.run_id = "r1",
	.guests = 2,
	.vcpus = 2,
	.memory_mib = 256,
	.kernel = "/img/vmlinuz",
	.initrd = "/img/pmucanary-initrd.img",
	.hb_interval_ms = 500,
};

static char *golden_path(const char *name)
{
	return g_strdup_printf("%s/tests/data/domxml/%s.xml", top, name);
}

static void check(const char *name, const struct fleet_config *cfg, enum fleet_accel accel,
		  const char *dom, const char *console, unsigned int n,
		  const struct fleet_domain_host *host)
{
	g_autofree char *path = golden_path(name);
	g_autofree char *want = NULL;
	g_autofree char *got = fleet_domain_xml_pure(cfg, accel, dom, console, n, host);

	if (!g_file_get_contents(path, &want, NULL, NULL))
		fail_msg("%s: cannot read", path);
	if (strcmp(got, want)) {
		print_message("%s differs.\n--- want\n%s--- got\n%s", path, want, got);
		fail();
	}
}

/* A guest of an initramfs fleet under KVM: direct kernel boot with the
 * fleet's command line (console, panic settings, the agent's interval and
 * work words), ACPI and the isa panic device, the host's CPU, the serial
 * console to a file and the heartbeat channel; nothing else. */
static void test_initramfs_kvm(void **state)
{
	check("initramfs-kvm", &initramfs, FLEET_ACCEL_KVM, "pmucanary-r1-0",
	      "/results/r1/pmucanary-r1-0.console", 0, &kvm_host);
}

/* The same guest under TCG (type qemu, cpu maximum), with the agent's
 * work off, a canary size and extra words. */
static void test_initramfs_tcg(void **state)
{
	struct fleet_config c = initramfs;

	c.no_work = true;
	c.canary_mib = 8;
	c.extra_cmdline = "nokaslr";
	check("initramfs-tcg", &c, FLEET_ACCEL_TCG, "pmucanary-r1-1",
	      "/results/r1/pmucanary-r1-1.console", 1, &tcg_host);
}

/* TCG where libvirt has no "maximum" CPU mode: no <cpu> at all. */
static void test_tcg_without_cpu_mode(void **state)
{
	check("tcg-no-cpu", &initramfs, FLEET_ACCEL_TCG, "pmucanary-r1-0",
	      "/results/r1/pmucanary-r1-0.console", 0, &tcg_no_max);
}

/* A mixed fleet (one disk guest of two): guest 1 boots the image's kernel
 * and initrd on its own overlay beside the injected one, with the image's
 * root= word; guest 0 of the same fleet stays an initramfs guest. */
static void test_mixed_fleet(void **state)
{
	struct fleet_config c = initramfs;

	c.disk = "/var/lib/images/debian.inject.qcow2";
	c.disk_root = "root=UUID=0f1e2d3c";
	c.disk_guests = 1;
	c.disk_kernel = "/var/lib/images/debian.vmlinuz";
	c.disk_initrd = "/var/lib/images/debian.initrd";
	check("disk-direct", &c, FLEET_ACCEL_KVM, "pmucanary-r1-1",
	      "/results/r1/pmucanary-r1-1.console", 1, &kvm_host);
	check("disk-mixed-initramfs", &c, FLEET_ACCEL_KVM, "pmucanary-r1-0",
	      "/results/r1/pmucanary-r1-0.console", 0, &kvm_host);
}

/* A disk guest through its image's bootloader: SeaBIOS boots the disk, no
 * <kernel>, no <cmdline> (inject put the words into grub.cfg). */
static void test_disk_bootloader(void **state)
{
	struct fleet_config c = initramfs;

	c.guests = 1;
	c.disk = "/var/lib/images/debian.inject.qcow2";
	c.disk_root = "root=UUID=0f1e2d3c";
	c.disk_bootloader = true;
	check("disk-bootloader", &c, FLEET_ACCEL_TCG, "pmucanary-r1-0",
	      "/results/r1/pmucanary-r1-0.console", 0, &tcg_host);
}

static const struct fleet_share lab_shares[] = {
	{ .source = "/var/cache/pmucanary/lab/k1", .tag = "pckernel", .readonly = true },
	{ .source = "/results/lab-1/k1", .tag = "pcresults", .mapped = true },
};

/* A lab host under TCG: 9p shares (read-only passthrough, mapped), QEMU
 * as root, a CPU with SVM but without xsave (nested KVM guests WARN on
 * TCG's xsave leaves). */
static void test_lab_host_tcg(void **state)
{
	struct fleet_config c = initramfs;

	c.guests = 1;
	c.vcpus = 2;
	c.memory_mib = 1536;
	c.shares = lab_shares;
	c.share_count = G_N_ELEMENTS(lab_shares);
	c.qemu_as_root = true;
	c.nested = true;
	c.extra_cmdline = "pmucanary.role=lab";
	check("lab-tcg", &c, FLEET_ACCEL_TCG, "pmucanary-lab-1-0",
	      "/results/lab-1/pmucanary-lab-1-0.console", 0, &tcg_host);
}

/* A lab host under KVM: the vPMU on and the host's CPU passed through
 * unchecked, so that the harness inside sees a PMU and VMX/SVM. */
static void test_lab_host_kvm(void **state)
{
	struct fleet_config c = initramfs;

	c.guests = 1;
	c.memory_mib = 1536;
	c.shares = lab_shares;
	c.share_count = 1;
	c.qemu_as_root = true;
	c.nested = true;
	check("lab-kvm", &c, FLEET_ACCEL_KVM, "pmucanary-lab-1-0",
	      "/results/lab-1/pmucanary-lab-1-0.console", 0, &kvm_host);
}

/* Text a user controls (paths, extra words) is escaped, never markup. */
static void test_escaped(void **state)
{
	struct fleet_config c = initramfs;

	c.kernel = "/img/a&b<c>/vmlinuz";
	c.initrd = "/img/'q\".img";
	c.extra_cmdline = "x=</cmdline><devices/>";
	check("escaped", &c, FLEET_ACCEL_KVM, "pmucanary-r1-0", "/results/r&1/c'o\"n<s>ole", 0,
	      &kvm_host);
}

/* Every golden file is a domain libvirt's schema accepts. */
static void test_golden_files_validate(void **state)
{
	g_autofree char *dir = g_strdup_printf("%s/tests/data/domxml", top);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	g_autofree char *tool = g_find_program_in_path("virt-xml-validate");
	g_autofree char *xmllint = g_find_program_in_path("xmllint");  /* what it runs */
	const char *name;
	unsigned int files = 0;

	assert_non_null(d);
	if (!tool || !xmllint)
		test_skip("virt-xml-validate (libvirt-clients) or xmllint (libxml2-utils) is "
			  "not installed");
	while ((name = g_dir_read_name(d))) {
		g_autofree char *path = g_build_filename(dir, name, NULL);
		const char *argv[] = { tool, path, "domain", NULL };
		g_autofree char *out = NULL, *err = NULL;
		int status = -1;

		if (!g_str_has_suffix(name, ".xml"))
			continue;
		files++;
		assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
					 &out, &err, &status, NULL));
		if (!g_spawn_check_wait_status(status, NULL))
			fail_msg("%s: libvirt's schema refuses it:\n%s%s", path, out, err);
	}
	assert_int_equal(files, 9);
}

/* domxml.h: a run id is 1..48 of [A-Za-z0-9_.-]; each side of each bound. */
static void test_run_id(void **state)
{
	static const char *const good[] = { "a", "Z", "0", "_", ".", "-", "r1", "run_2.x-y",
					    "pmucanary-20261205T235959" };
	static const char *const bad[] = { "", "a/b", "a b", "a:b", "a\nb", "\xc3\xa9", "a*", "../x" };
	char id[50];

	for (size_t i = 0; i < G_N_ELEMENTS(good); i++)
		if (!fleet_run_id_ok(good[i]))
			fail_msg("'%s' refused", good[i]);
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
		if (fleet_run_id_ok(bad[i]))
			fail_msg("'%s' taken", bad[i]);
	assert_false(fleet_run_id_ok(NULL));
	memset(id, 'a', sizeof(id));
	id[48] = '\0';
	assert_true(fleet_run_id_ok(id));
	id[47] = '-';
	assert_true(fleet_run_id_ok(id));
	id[48] = 'b';
	id[49] = '\0';
	assert_false(fleet_run_id_ok(id));
}

/* The root= word is a disk guest's: with a disk and its word, " WORD ro"
 * at the end of the words every guest gets; without either, nothing (an
 * initramfs guest told to mount a root would not boot). An empty extra
 * command line adds nothing either. */
static void test_cmdline_disk_words(void **state)
{
	struct fleet_config c = initramfs;
	g_autofree char *plain = fleet_kernel_cmdline(&c);
	g_autofree char *want = g_strdup_printf("%s root=UUID=1234 ro", plain);
	g_autofree char *root_only = NULL, *disk_only = NULL, *both = NULL, *empty = NULL;

	c.disk_root = "root=UUID=1234";
	root_only = fleet_kernel_cmdline(&c);
	assert_string_equal(root_only, plain);
	c.disk = "/img/overlay.qcow2";
	both = fleet_kernel_cmdline(&c);
	assert_string_equal(both, want);
	c.disk_root = NULL;
	disk_only = fleet_kernel_cmdline(&c);
	assert_string_equal(disk_only, plain);
	c = initramfs;
	c.extra_cmdline = "";
	empty = fleet_kernel_cmdline(&c);
	assert_string_equal(empty, plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_initramfs_kvm),
		cmocka_unit_test(test_initramfs_tcg),
		cmocka_unit_test(test_tcg_without_cpu_mode),
		cmocka_unit_test(test_mixed_fleet),
		cmocka_unit_test(test_disk_bootloader),
		cmocka_unit_test(test_lab_host_tcg),
		cmocka_unit_test(test_lab_host_kvm),
		cmocka_unit_test(test_escaped),
		cmocka_unit_test(test_golden_files_validate),
		cmocka_unit_test(test_run_id),
		cmocka_unit_test(test_cmdline_disk_words),
	};

	top = test_top_dir();
	return test_run_group(tests, NULL, NULL);
}
