/* Tests for lib/inject: the parts that need no appliance (init detection,
 * the hooks' text, kernel choice, the checks before a launch, the boot
 * manifest) and the disk guest's domain XML. Real images are in
 * tests/it_inject.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fleet.h"
#include "inject.h"
#include "log.h"
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void test_init_detect(void **state)
{
	struct inject_init_facts busybox = { .sbin_init_link = "/bin/busybox",
					     .sbin_init_exists = true, .inittab = true };
	struct inject_init_facts busybox_no_tab = { .sbin_init_link = "../bin/busybox",
						    .sbin_init_exists = true };
	struct inject_init_facts systemd = { .sbin_init_link = "/lib/systemd/systemd",
					     .sbin_init_exists = true, .systemd_binary = true,
					     .systemd_dir = true };
	/* usr-merged Debian: /sbin/init -> ../lib/systemd/systemd */
	struct inject_init_facts systemd_rel = { .sbin_init_link = "../lib/systemd/systemd",
						 .sbin_init_exists = true };
	struct inject_init_facts systemd_no_link = { .systemd_binary = true, .systemd_dir = true };
	struct inject_init_facts sysv = { .sbin_init_exists = true, .systemd_binary = true,
					  .inittab = true };
	struct inject_init_facts none = { 0 };
	struct inject_init_facts openrc = { .sbin_init_link = "/sbin/openrc-init",
					    .sbin_init_exists = true };

	(void)state;
	assert_int_equal(inject_init_detect(&busybox), INJECT_INIT_BUSYBOX);
	assert_int_equal(inject_init_detect(&busybox_no_tab), INJECT_INIT_BUSYBOX);
	assert_int_equal(inject_init_detect(&systemd), INJECT_INIT_SYSTEMD);
	assert_int_equal(inject_init_detect(&systemd_rel), INJECT_INIT_SYSTEMD);
	assert_int_equal(inject_init_detect(&systemd_no_link), INJECT_INIT_SYSTEMD);
	assert_int_equal(inject_init_detect(&sysv), INJECT_INIT_SYSVINIT);
	assert_int_equal(inject_init_detect(&none), -ENOTSUP);
	assert_non_null(strstr(pc_errmsg(), "unknown init"));
	assert_non_null(strstr(pc_errmsg(), "missing"));
	assert_int_equal(inject_init_detect(&openrc), -ENOTSUP);
	assert_non_null(strstr(pc_errmsg(), "openrc-init"));
	assert_string_equal(inject_init_name(INJECT_INIT_BUSYBOX), "busybox");
	assert_string_equal(inject_init_name(INJECT_INIT_COUNT), "?");
}

static void test_systemd_unit(void **state)
{
	g_autofree char *u = inject_systemd_unit();

	(void)state;
	assert_non_null(strstr(u, "\nExecStart=" INJECT_AGENT_PATH " --service\n"));
	/* a restarted agent restarts seq: a false GUEST_REBOOT */
	assert_non_null(strstr(u, "\nRestart=no\n"));
	assert_non_null(strstr(u, "\nWantedBy=multi-user.target\n"));
}

static void test_inittab(void **state)
{
	g_autofree char *bb_new = inject_inittab(INJECT_INIT_BUSYBOX, NULL);
	g_autofree char *bb_old = inject_inittab(INJECT_INIT_BUSYBOX, "::sysinit:/etc/init.d/rcS");
	g_autofree char *again = inject_inittab(INJECT_INIT_BUSYBOX, bb_old);
	g_autofree char *sysv = inject_inittab(INJECT_INIT_SYSVINIT, "id:2:initdefault:\n");

	(void)state;
	/* busybox's defaults survive an inittab that did not exist */
	assert_non_null(strstr(bb_new, "::sysinit:/etc/init.d/rcS\n"));
	assert_non_null(strstr(bb_new, "\n::once:" INJECT_AGENT_PATH " --service\n"));
	/* a line without its newline is finished, not glued to ours */
	assert_true(g_str_has_prefix(bb_old, "::sysinit:/etc/init.d/rcS\n# "));
	assert_non_null(strstr(bb_old, "\n::once:" INJECT_AGENT_PATH " --service\n"));
	assert_string_equal(again, bb_old);
	assert_true(g_str_has_prefix(sysv, "id:2:initdefault:\n"));
	assert_non_null(strstr(sysv, "\npmca:2345:once:" INJECT_AGENT_PATH " --service\n"));
	assert_null(strstr(sysv, "::once:"));
}

static void test_pick_kernel(void **state)
{
	char *deb[] = { "config-6.1.0-9-amd64", "initrd.img-6.1.0-10-amd64", "vmlinuz-6.1.0-9-amd64",
			"vmlinuz-6.1.0-10-amd64", "initrd.img-6.1.0-9-amd64", "System.map", NULL };
	char *fedora[] = { "vmlinuz-6.5.6-300.fc39.x86_64", "initramfs-6.5.6-300.fc39.x86_64.img",
			   "vmlinuz-0-rescue-abc", "grub2", NULL };
	char *bare[] = { "vmlinuz-6.1.0-1-amd64", NULL };
	char *none[] = { "grub", "vmlinuz-", "config-6.1", NULL };
	g_autofree char *k = NULL, *r = NULL, *i = NULL;

	(void)state;
	assert_int_equal(inject_pick_kernel(deb, &k, &r, &i), 0);
	/* version order: 10 after 9 */
	assert_string_equal(k, "vmlinuz-6.1.0-10-amd64");
	assert_string_equal(r, "6.1.0-10-amd64");
	assert_string_equal(i, "initrd.img-6.1.0-10-amd64");
	g_clear_pointer(&k, g_free);
	g_clear_pointer(&r, g_free);
	g_clear_pointer(&i, g_free);
	assert_int_equal(inject_pick_kernel(fedora, &k, &r, &i), 0);
	assert_string_equal(k, "vmlinuz-6.5.6-300.fc39.x86_64");
	assert_string_equal(i, "initramfs-6.5.6-300.fc39.x86_64.img");
	g_clear_pointer(&k, g_free);
	g_clear_pointer(&r, g_free);
	g_clear_pointer(&i, g_free);
	assert_int_equal(inject_pick_kernel(bare, &k, &r, &i), 0);
	assert_null(i);
	g_clear_pointer(&k, g_free);
	g_clear_pointer(&r, g_free);
	assert_int_equal(inject_pick_kernel(none, &k, &r, &i), -ENOENT);
}

static void test_guest_device(void **state)
{
	g_autofree char *a = inject_guest_device("/dev/sda1");
	g_autofree char *b = inject_guest_device("/dev/sda");
	g_autofree char *c = inject_guest_device("/dev/mapper/vg-root");

	(void)state;
	assert_string_equal(a, "/dev/vda1");
	assert_string_equal(b, "/dev/vda");
	assert_string_equal(c, "/dev/mapper/vg-root");
}

/* A qcow2 header (all precheck reads) naming backing (NULL: none), in a
 * file large enough to be a disk. */
static void write_qcow2(const char *path, const char *backing)
{
	g_autofree guint8 *b = g_malloc0(128 * 1024);
	size_t len = backing ? strlen(backing) : 0;

	memcpy(b, "QFI\xfb\0\0\0\3", 8);
	if (backing) {
		b[14] = 0x02;   /* offset 512 (0x200), big-endian */
		b[19] = (guint8)len;
		memcpy(b + 512, backing, len);
	}
	assert_true(g_file_set_contents(path, (const char *)b, 128 * 1024, NULL));
}

/* The backing chain is read from the headers before qemu-img sees it: a
 * loop (a file backed by itself, or a -> b -> a), a chain too deep, a
 * backing file missing are refused naming the image; a chain that ends
 * (in a raw file, or a qcow2 without backing) passes. */
static void test_precheck_backing_chain(void **state)
{
	g_autofree char *dir = test_tmpdir("test_inject");
	g_autofree char *self = g_build_filename(dir, "self.qcow2", NULL);
	g_autofree char *a = g_build_filename(dir, "a.qcow2", NULL);
	g_autofree char *b = g_build_filename(dir, "b.qcow2", NULL);
	g_autofree char *top = g_build_filename(dir, "top.qcow2", NULL);
	g_autofree char *raw = g_build_filename(dir, "base.raw", NULL);
	g_autofree char *lost = g_build_filename(dir, "lost.qcow2", NULL);
	g_autofree char *zeros = g_malloc0(128 * 1024);

	(void)state;
	write_qcow2(self, "self.qcow2");
	assert_int_equal(inject_precheck(self), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "self.qcow2: not a usable disk image: its backing chain loops"));
	write_qcow2(a, "b.qcow2");
	write_qcow2(b, "./a.qcow2");
	assert_int_equal(inject_precheck(a), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "loops back to"));
	/* 20 deep: c0 -> c1 -> ... -> c19 (a qcow2 without backing) */
	for (int i = 0; i < 20; i++) {
		g_autofree char *ci = g_strdup_printf("%s/c%d.qcow2", dir, i);
		g_autofree char *next = g_strdup_printf("c%d.qcow2", i + 1);

		write_qcow2(ci, i < 19 ? next : NULL);
	}
	{
		g_autofree char *c0 = g_build_filename(dir, "c0.qcow2", NULL);
		g_autofree char *c10 = g_build_filename(dir, "c10.qcow2", NULL);

		assert_int_equal(inject_precheck(c0), -EINVAL);
		assert_non_null(strstr(pc_errmsg(), "deeper than 16"));
		assert_int_equal(inject_precheck(c10), 0);   /* 9 deep */
	}
	write_qcow2(lost, "gone.raw");
	assert_int_equal(inject_precheck(lost), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "its backing file"));
	assert_non_null(strstr(pc_errmsg(), "gone.raw"));
	assert_true(g_file_set_contents(raw, zeros, 128 * 1024, NULL));
	write_qcow2(top, raw);   /* absolute */
	assert_int_equal(inject_precheck(top), 0);
	test_tmpdir_remove(dir);
}

static void test_precheck(void **state)
{
	g_autofree char *dir = test_tmpdir("test_inject");
	g_autofree char *small = g_build_filename(dir, "notes.txt", NULL);
	g_autofree char *big = g_build_filename(dir, "disk.img", NULL);
	g_autofree char *missing = g_build_filename(dir, "nope.img", NULL);
	g_autofree char *zeros = g_malloc0(128 * 1024);

	(void)state;
	assert_true(g_file_set_contents(small, "not a disk\n", -1, NULL));
	assert_true(g_file_set_contents(big, zeros, 128 * 1024, NULL));
	assert_int_equal(inject_precheck(small), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "notes.txt: not a disk image"));
	assert_int_equal(inject_precheck(dir), -EINVAL);
	assert_int_equal(inject_precheck(missing), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "nope.img"));
	assert_int_equal(inject_precheck(big), 0);
	test_tmpdir_remove(dir);
}

static void test_boot_load(void **state)
{
	g_autofree char *dir = test_tmpdir("test_inject");
	g_autofree char *ov = g_build_filename(dir, "g.qcow2", NULL);
	g_autofree char *man = g_strdup_printf("%s.json", ov);
	g_autoptr(inject_boot) b = NULL;
	struct inject_report r = { .disk = "/d.img", .overlay = ov, .kernel_path = "/k",
				   .initrd_path = "/i", .cmdline_root = "root=UUID=abc",
				   .init = INJECT_INIT_BUSYBOX };
	json_t *j;

	(void)state;
	assert_int_equal(inject_boot_load(ov, &b), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "image --inject"));
	/* what inject_disk() writes is what the fleet reads */
	j = inject_report_json(&r);
	assert_string_equal(json_string_value(json_object_get(j, "init")), "busybox");
	assert_int_equal(json_dump_file(j, man, 0), 0);
	json_decref(j);
	assert_int_equal(inject_boot_load(ov, &b), 0);
	assert_string_equal(b->kernel, "/k");
	assert_string_equal(b->initrd, "/i");
	assert_string_equal(b->cmdline_root, "root=UUID=abc");
	assert_string_equal(b->overlay, ov);
	g_clear_pointer(&b, inject_boot_free);
	assert_true(g_file_set_contents(man, "{\"boot\": {}}", -1, NULL));
	assert_int_equal(inject_boot_load(ov, &b), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "boot.kernel_path"));
	assert_true(g_file_set_contents(man, "{\"boot\":", -1, NULL));
	assert_int_equal(inject_boot_load(ov, &b), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "line 1"));
	test_tmpdir_remove(dir);
}

/* A disk guest boots its own overlay on virtio-blk with the image's root=;
 * an initramfs guest has no disk. */
static void test_disk_guest_xml(void **state)
{
	struct fleet_config cfg = { .guests = 1, .kernel = "/k", .initrd = "/i", .run_id = "r",
				    .disk = "/var/tmp/x/base.qcow2", .disk_root = "root=UUID=abc" };
	g_autofree char *xml = fleet_domain_xml(&cfg, FLEET_ACCEL_TCG, "pmucanary-r-0", "/c", 0);
	g_autofree char *plain = NULL;
	g_autofree char *disk = fleet_guest_disk(&cfg, "pmucanary-r-0");

	(void)state;
	assert_string_equal(disk, "/var/tmp/x/pmucanary-r-0.qcow2");
	assert_non_null(strstr(xml, "<source file='/var/tmp/x/pmucanary-r-0.qcow2'/>"));
	assert_non_null(strstr(xml, "<target dev='vda' bus='virtio'/>"));
	assert_non_null(strstr(xml, "type='qcow2'"));
	assert_non_null(strstr(xml, " root=UUID=abc ro"));
	cfg.disk = NULL;
	plain = fleet_domain_xml(&cfg, FLEET_ACCEL_TCG, "pmucanary-r-0", "/c", 0);
	assert_null(strstr(plain, "<disk"));
	assert_null(strstr(plain, "root="));
	assert_null(fleet_guest_disk(&cfg, "pmucanary-r-0"));
}

/* A mixed fleet: the last disk_guests guests boot the image's kernel on
 * their overlays, the others the initramfs with no disk. */
static void test_mixed_fleet_xml(void **state)
{
	struct fleet_config cfg = { .guests = 3, .kernel = "/k", .initrd = "/i", .run_id = "r",
				    .disk = "/var/tmp/x/base.qcow2", .disk_root = "root=UUID=abc",
				    .disk_guests = 1, .disk_kernel = "/dk", .disk_initrd = "" };
	const char *names[] = { "pmucanary-r-0", "pmucanary-r-1", "pmucanary-r-2" };

	(void)state;
	for (unsigned int n = 0; n < 3; n++) {
		g_autofree char *xml = fleet_domain_xml(&cfg, FLEET_ACCEL_TCG, names[n], "/c", n);
		bool disk = n == 2;

		assert_int_equal(fleet_guest_is_disk(&cfg, n), disk);
		assert_int_equal(strstr(xml, "<disk") != NULL, disk);
		assert_int_equal(strstr(xml, "root=UUID=abc") != NULL, disk);
		assert_non_null(strstr(xml, disk ? "<kernel>/dk</kernel>" : "<kernel>/k</kernel>"));
		/* the image's kernel needs no initrd here: none in the XML */
		assert_int_equal(strstr(xml, "<initrd>/i</initrd>") != NULL, !disk);
		assert_null(strstr(xml, "<initrd></initrd>"));
	}
	/* disk_guests 0: every guest boots the disk, as before mixed fleets */
	cfg.disk_guests = 0;
	for (unsigned int n = 0; n < 3; n++)
		assert_true(fleet_guest_is_disk(&cfg, n));
	cfg.disk = NULL;
	assert_false(fleet_guest_is_disk(&cfg, 2));
}

/* The fleet's kernel words go onto every kernel entry that lacks them, and
 * nowhere else; a LABEL without APPEND gets one. */
static void test_bootloader_config_add(void **state)
{
	const char *ext = "SERIAL 0 115200\nDEFAULT a\nLABEL a\n  KERNEL /boot/vmlinuz\n"
			  "  INITRD /boot/initrd\n  append root=UUID=x ro console=ttyS0\n"
			  "LABEL b\n  LINUX /boot/vmlinuz.old\nLABEL memtest\n  MENU LABEL x\n";
	const char *grub = "set timeout=5\nmenuentry 'Debian' {\n\tlinux\t/boot/vmlinuz-6.1 "
			   "root=UUID=x ro quiet\n\tinitrd\t/boot/initrd.img-6.1\n}\n"
			   "menuentry 'memtest' {\n\tlinux16 /boot/memtest86+.bin\n}\n";
	g_autofree char *e = NULL, *gr = NULL, *again = NULL, *none = NULL;
	unsigned int entries, changed;

	(void)state;
	e = inject_bootloader_config_add(INJECT_BOOTLOADER_EXTLINUX, ext, "console=ttyS0 panic=0",
					 &entries, &changed);
	assert_int_equal(entries, 2);
	assert_int_equal(changed, 2);
	assert_string_equal(e, "SERIAL 0 115200\nDEFAULT a\nLABEL a\n  KERNEL /boot/vmlinuz\n"
			    "  INITRD /boot/initrd\n  append root=UUID=x ro console=ttyS0 panic=0\n"
			    "LABEL b\n  LINUX /boot/vmlinuz.old\n  APPEND console=ttyS0 panic=0\n"
			    "LABEL memtest\n  MENU LABEL x\n");
	/* twice is once */
	again = inject_bootloader_config_add(INJECT_BOOTLOADER_EXTLINUX, e, "console=ttyS0 panic=0",
					     &entries, &changed);
	assert_int_equal(changed, 0);
	assert_string_equal(again, e);
	gr = inject_bootloader_config_add(INJECT_BOOTLOADER_GRUB, grub, "console=ttyS0 quiet",
					  &entries, &changed);
	assert_int_equal(entries, 2);
	assert_int_equal(changed, 2);
	assert_non_null(strstr(gr, "\tlinux\t/boot/vmlinuz-6.1 root=UUID=x ro quiet console=ttyS0\n"));
	assert_non_null(strstr(gr, "\tlinux16 /boot/memtest86+.bin console=ttyS0 quiet\n"));
	assert_non_null(strstr(gr, "set timeout=5\n"));
	/* console=ttyS0,115200 is the console already: not added twice; a
	 * console on another device, or a longer name, is not it */
	{
		g_autofree char *c = inject_bootloader_config_add(INJECT_BOOTLOADER_GRUB,
			"menuentry 'a' {\n\tlinux /v console=ttyS0,115200n8 ro\n}\n"
			"menuentry 'b' {\n\tlinux /v console=tty0 console=ttyS01 ro\n}\n",
			"console=ttyS0 panic=0", &entries, &changed);

		assert_int_equal(changed, 2);
		assert_non_null(strstr(c, "\tlinux /v console=ttyS0,115200n8 ro panic=0\n"));
		assert_non_null(strstr(c, "\tlinux /v console=tty0 console=ttyS01 ro console=ttyS0 panic=0\n"));
	}
	/* Debian's default grub terminal: gfxterm parks a guest without a
	 * video device; its line is commented out, the others stay */
	{
		g_autofree char *c = inject_bootloader_config_add(INJECT_BOOTLOADER_GRUB,
			"if loadfont $font ; then\n  insmod gfxterm\n  terminal_output gfxterm\nfi\n"
			"terminal_output console\nmenuentry 'a' {\n\tlinux /v ro\n}\n",
			"console=ttyS0", &entries, &changed);

		assert_int_equal(entries, 1);
		assert_int_equal(changed, 2);
		assert_non_null(strstr(c, "\n# pmucanary: no video device for gfxterm:   terminal_output gfxterm\n"));
		assert_non_null(strstr(c, "  insmod gfxterm\n"));
		assert_non_null(strstr(c, "\nterminal_output console\n"));
		assert_null(strstr(c, "\n  terminal_output gfxterm"));
	}
	/* a config that boots no Linux kernel */
	none = inject_bootloader_config_add(INJECT_BOOTLOADER_GRUB, "set timeout=5\n", "x",
					    &entries, &changed);
	assert_int_equal(entries, 0);
	assert_string_equal(none, "set timeout=5\n");
}

static void test_disk_boot_names(void **state)
{
	(void)state;
	assert_int_equal(inject_disk_boot_parse("kernel"), INJECT_DISK_BOOT_KERNEL);
	assert_int_equal(inject_disk_boot_parse("bootloader"), INJECT_DISK_BOOT_BOOTLOADER);
	assert_int_equal(inject_disk_boot_parse("grub"), -EINVAL);
	assert_int_equal(inject_disk_boot_parse(NULL), -EINVAL);
	for (int i = 0; i < INJECT_DISK_BOOT_COUNT; i++)
		assert_int_equal(inject_disk_boot_parse(inject_disk_boot_name(i)), i);
	assert_string_equal(inject_bootloader_name(INJECT_BOOTLOADER_EXTLINUX), "extlinux");
	assert_string_equal(inject_bootloader_name(INJECT_BOOTLOADER_COUNT), "?");
}

/* The manifest says which bootloader the image has; booting through one it
 * lacks is refused in one line naming the overlay. */
static void test_boot_bootloader(void **state)
{
	g_autofree char *dir = test_tmpdir("test_inject");
	g_autofree char *ov = g_build_filename(dir, "g.qcow2", NULL);
	g_autofree char *man = g_strdup_printf("%s.json", ov);
	g_autoptr(inject_boot) b = NULL;
	struct inject_report r = { .disk = "/d.img", .overlay = ov, .kernel_path = "/k",
				   .cmdline_root = "root=/dev/vda1", .init = INJECT_INIT_BUSYBOX,
				   .bootloader = INJECT_BOOTLOADER_EXTLINUX,
				   .bootloader_config = "/boot/extlinux/extlinux.conf",
				   .bootloader_entries = 1, .bootloader_note = "1 kernel entry" };
	json_t *j = inject_report_json(&r);
	GString *txt = inject_report_text(&r);

	(void)state;
	assert_non_null(strstr(txt->str, "\nbootloader extlinux (/boot/extlinux/extlinux.conf): "
			       "1 kernel entry\n"));
	g_string_free(txt, TRUE);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "bootloader"),
							       "kind")), "extlinux");
	assert_int_equal(json_dump_file(j, man, 0), 0);
	json_decref(j);
	assert_int_equal(inject_boot_load(ov, &b), 0);
	assert_int_equal(b->bootloader, INJECT_BOOTLOADER_EXTLINUX);
	assert_int_equal(inject_boot_check(b, INJECT_DISK_BOOT_BOOTLOADER), 0);
	g_clear_pointer(&b, inject_boot_free);
	r.bootloader = INJECT_BOOTLOADER_NONE;
	r.bootloader_config = NULL;
	r.bootloader_note = "no grub.cfg, extlinux.conf or syslinux.cfg";
	j = inject_report_json(&r);
	assert_int_equal(json_dump_file(j, man, 0), 0);
	json_decref(j);
	assert_int_equal(inject_boot_load(ov, &b), 0);
	assert_int_equal(inject_boot_check(b, INJECT_DISK_BOOT_KERNEL), 0);
	assert_int_equal(inject_boot_check(b, INJECT_DISK_BOOT_BOOTLOADER), -ENOTSUP);
	assert_non_null(strstr(pc_errmsg(), "g.qcow2: no bootloader to boot through (no grub.cfg"));
	assert_null(strchr(pc_errmsg(), '\n'));
	test_tmpdir_remove(dir);
}

/* Through the bootloader: no <kernel>, <initrd> or <cmdline>, SeaBIOS
 * boots the disk; an initramfs guest of a mixed fleet keeps its kernel. */
static void test_bootloader_guest_xml(void **state)
{
	struct fleet_config cfg = { .guests = 2, .kernel = "/k", .initrd = "/i", .run_id = "r",
				    .disk = "/var/tmp/x/base.qcow2", .disk_root = "root=UUID=abc",
				    .disk_guests = 1, .disk_kernel = "/dk", .disk_initrd = "/di",
				    .disk_bootloader = true };
	g_autofree char *x0 = fleet_domain_xml(&cfg, FLEET_ACCEL_TCG, "pmucanary-r-0", "/c", 0);
	g_autofree char *x1 = fleet_domain_xml(&cfg, FLEET_ACCEL_TCG, "pmucanary-r-1", "/c", 1);

	(void)state;
	assert_non_null(strstr(x1, "<boot dev='hd'/>"));
	assert_non_null(strstr(x1, "<source file='/var/tmp/x/pmucanary-r-1.qcow2'/>"));
	assert_null(strstr(x1, "<kernel>"));
	assert_null(strstr(x1, "<initrd>"));
	assert_null(strstr(x1, "<cmdline>"));
	assert_non_null(strstr(x1, "<serial type='file'>"));
	assert_non_null(strstr(x1, "<panic model='isa'/>"));
	assert_non_null(strstr(x0, "<kernel>/k</kernel>"));
	assert_null(strstr(x0, "<boot dev="));
}

/* A product name or module file that is not UTF-8 (an old image's
 * os-release in Latin-1) still gives a manifest, the bytes as \xNN. */
static void test_report_json_not_utf8(void **state)
{
	g_autoptr(GPtrArray) mods = g_ptr_array_new();
	struct inject_report r = { .disk = "/d.img", .product_name = "Caf\xe9 Linux",
				   .modules = mods, .launch_s = 1.5 };
	json_t *j;

	(void)state;
	g_ptr_array_add(mods, "virtio_\xff.ko");
	j = inject_report_json(&r);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "os"),
							      "product_name")),
			    "Caf\\xe9 Linux");
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "modules"), 0)),
			    "virtio_\\xff.ko");
	assert_true(json_is_null(json_object_get(json_object_get(j, "os"), "distro")));
	assert_true(json_real_value(json_object_get(json_object_get(j, "appliance"),
						    "launch_s")) == 1.5);
	json_decref(j);
}

/* What the image named (PRETTY_NAME, /boot file names) reaches the
 * terminal escaped: an image cannot clear the screen or forge a line. */
static void test_report_text_escaped(void **state)
{
	g_autoptr(GPtrArray) kernels = g_ptr_array_new();
	struct inject_report r = { .overlay = "/o.qcow2", .disk = "/d.img",
				   .product_name = "Debian\x1b[2J", .os_type = "linux",
				   .kernels = kernels, .init = INJECT_INIT_SYSTEMD };
	g_autoptr(GString) text = NULL;

	(void)state;
	g_ptr_array_add(kernels, "vmlinuz-6.1\nagent     forged");
	text = inject_report_text(&r);
	assert_null(strchr(text->str, '\x1b'));
	assert_non_null(strstr(text->str, "(Debian\\x1b[2J) on ?\n"));
	assert_non_null(strstr(text->str, "kernels   vmlinuz-6.1\\x0aagent     forged\n"));
	assert_null(strstr(text->str, "\nagent     forged"));
	assert_non_null(strstr(text->str, "\ninit      systemd:\nagent     "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_detect),
		cmocka_unit_test(test_report_json_not_utf8),
		cmocka_unit_test(test_report_text_escaped),
		cmocka_unit_test(test_systemd_unit),
		cmocka_unit_test(test_inittab),
		cmocka_unit_test(test_pick_kernel),
		cmocka_unit_test(test_guest_device),
		cmocka_unit_test(test_precheck),
		cmocka_unit_test(test_precheck_backing_chain),
		cmocka_unit_test(test_boot_load),
		cmocka_unit_test(test_disk_guest_xml),
		cmocka_unit_test(test_mixed_fleet_xml),
		cmocka_unit_test(test_bootloader_config_add),
		cmocka_unit_test(test_disk_boot_names),
		cmocka_unit_test(test_boot_bootloader),
		cmocka_unit_test(test_bootloader_guest_xml),
	};

	log_set_level(LOG_ERROR);
	return test_run_group(tests, NULL, NULL);
}
