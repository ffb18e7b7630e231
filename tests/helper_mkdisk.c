/* helper_mkdisk: builds small real disk images for tests/it_inject.sh with
 * the libguestfs C API, all in one appliance launch (each launch costs
 * ~30 s under TCG).
 *
 *   helper_mkdisk DIR
 *
 * writes into DIR (raw images, MBR, one ext4 partition each):
 *   busybox.img   bootable: busybox init (no systemd), /etc/inittab, the
 *                 fleet's kernel (image_find_default) in /boot with an initrd
 *                 that loads virtio_blk + ext4 and switch_roots to root=, and
 *                 only the modules the guest needs under /lib/modules; and a
 *                 real bootloader: extlinux in /boot/extlinux (SERIAL 0, one
 *                 LABEL naming that kernel and initrd, root=UUID and the
 *                 marker pmucanary.test=extlinux-config), syslinux's mbr.bin
 *                 in the MBR, the partition active
 *   systemd.img   bootable the same way, but its init is the host's real
 *                 systemd (/sbin/init -> /lib/systemd/systemd, the libraries
 *                 ldd names, an empty /etc/machine-id) with two units of its
 *                 own: default.target -> multi-user.target, no other deps
 *                 (the distribution's units want udev, journald, gettys that
 *                 a 96 MiB image does not hold)
 *   noinit.img    a Linux root with no /sbin/init, no inittab, no systemd
 *   noos.img      an ext4 filesystem holding one file
 * Exit 0, or 1 with a message. */
#include "image.h"
#include "log.h"

#include <guestfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = { "busybox", "systemd", "noinit", "noos" };
#define NKINDS 4

static guestfs_h *g;

static void die(const char *what)
{
	fprintf(stderr, "helper_mkdisk: %s: %s\n", what, g ? guestfs_last_error(g) : "");
	exit(1);
}

#define OK(call, what) do { if ((call) < 0) die(what); } while (0)

static void put(const char *path, const char *text, int mode)
{
	OK(guestfs_write(g, path, text, strlen(text)), path);
	OK(guestfs_chmod(g, mode, path), path);
}

static const char *const initrd_init =
	"#!/bin/busybox sh\n"
	"/bin/busybox mkdir -p /proc /sys /dev /root\n"
	"/bin/busybox mount -t proc proc /proc\n"
	"/bin/busybox --install -s /bin\n"
	"mount -t sysfs sysfs /sys\n"
	"mount -t devtmpfs devtmpfs /dev\n"
	"for m in $(cat /modules); do insmod $m || echo \"initrd: insmod $m failed\"; done\n"
	"root=\n"
	"for w in $(cat /proc/cmdline); do case $w in root=*) root=${w#root=};; esac; done\n"
	"for i in $(seq 1 100); do\n"
	"  case $root in UUID=*) dev=$(findfs $root 2>/dev/null);; *) dev=$root;; esac\n"
	"  [ -n \"$dev\" ] && [ -b \"$dev\" ] && break\n"
	"  sleep 0.1\n"
	"done\n"
	"echo \"initrd: root $root is $dev\"\n"
	"mount -t ext4 -o ro \"$dev\" /root || { echo 'initrd: cannot mount root'; sleep 5; reboot -f; }\n"
	"mount --move /dev /root/dev\n"
	"umount /sys /proc\n"
	"exec switch_root /root /sbin/init\n";

static const char *const rcs =
	"#!/bin/busybox sh\n"
	"/bin/busybox mount -t proc proc /proc\n"
	"/bin/busybox mount -o remount,rw /\n"
	"/bin/busybox --install -s /bin\n"
	"mount -t sysfs sysfs /sys\n"
	"mkdir -p /var/log\n"
	"echo \"rcS: boot $(cat /proc/sys/kernel/random/boot_id)\" >> /var/log/messages\n"
	/* how it was booted: direct kernel boot or the bootloader's config */
	"echo \"rcS: cmdline $(cat /proc/cmdline)\"\n"
	/* on the disk before any self-test panic: the fleet reads it back */
	"sync\n"
	"echo 'rcS: done'\n";

/* The base of a Linux root on the drive's first partition, mounted on /. */
static void root_base(const char *pretty)
{
	const char *dirs[] = { "/bin", "/sbin", "/etc/init.d", "/proc", "/sys", "/dev", "/tmp",
			       "/boot", "/root", "/run", "/var/log", "/usr/local/sbin" };
	char osr[256];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		OK(guestfs_mkdir_p(g, dirs[i]), dirs[i]);
	OK(guestfs_upload(g, "/bin/busybox", "/bin/busybox"), "upload busybox");
	OK(guestfs_chmod(g, 0755, "/bin/busybox"), "chmod busybox");
	OK(guestfs_ln_s(g, "busybox", "/bin/sh"), "ln /bin/sh");
	put("/etc/fstab", "/dev/vda1 / ext4 defaults 0 1\n", 0644);
	put("/etc/hostname", "canary\n", 0644);
	snprintf(osr, sizeof(osr), "ID=debian\nVERSION_ID=\"12\"\nNAME=\"Debian GNU/Linux\"\n"
		 "PRETTY_NAME=\"%s\"\n", pretty);
	put("/etc/os-release", osr, 0644);
	put("/etc/init.d/rcS", rcs, 0755);
}

/* The host's systemd as the image's init: the binary and every library ldd
 * resolves for it, at the same paths. */
static void root_systemd(void)
{
	FILE *p = popen("ldd /lib/systemd/systemd", "r");
	char line[1024], dir[1024];
	int n = 0;

	if (!p)
		die("ldd");
	while (fgets(line, sizeof(line), p)) {
		/* "\tlibx.so => /path/libx.so (0x...)" or "\t/lib64/ld-linux... (0x...)" */
		char *path = strstr(line, "=> ");
		char *end, *slash;

		path = path ? path + 3 : line + strspn(line, " \t");
		if (*path != '/')
			continue;
		end = strchr(path, ' ');
		if (end)
			*end = 0;
		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		*slash = 0;
		OK(guestfs_mkdir_p(g, dir), dir);
		OK(guestfs_upload(g, path, path), path);
		OK(guestfs_chmod(g, 0755, path), path);
		n++;
	}
	if (pclose(p) != 0 || n < 3)
		die("ldd /lib/systemd/systemd");
	OK(guestfs_mkdir_p(g, "/lib/systemd/system"), "units dir");
	OK(guestfs_upload(g, "/lib/systemd/systemd", "/lib/systemd/systemd"), "systemd");
	OK(guestfs_chmod(g, 0755, "/lib/systemd/systemd"), "systemd");
	put("/lib/systemd/system/multi-user.target",
	    "[Unit]\nDescription=Multi-User System (pmucanary test image)\n", 0644);
	OK(guestfs_ln_s(g, "multi-user.target", "/lib/systemd/system/default.target"), "default.target");
	put("/etc/machine-id", "", 0444);
	OK(guestfs_mkdir_p(g, "/etc/systemd/system"), "units dir");
	OK(guestfs_ln_s(g, "/lib/systemd/systemd", "/sbin/init"), "ln init");
}

/* Kernel, its modules (only those listed, with modules.dep) and an initrd
 * built inside the image's /tmp and packed by the appliance's cpio. */
static void root_boot(const char *kernel, const char *release, const char *dir)
{
	static const char *const rootfs_mods[] = { "virtio_pci", "virtio_blk", "crc32c_generic", "ext4", NULL };
	static const char *const agent_mods[] = { "virtio_pci", "virtio_mmio", "virtio_console",
						  "pvpanic", "pvpanic_mmio", NULL };
	char moddir[256], path[512], host[512], list[16384] = "";
	GPtrArray *paths = NULL, *agent = NULL;

	snprintf(moddir, sizeof(moddir), "/lib/modules/%s", release);
	snprintf(path, sizeof(path), "/boot/vmlinuz-%s", release);
	OK(guestfs_upload(g, kernel, path), "upload kernel");
	if (image_modules_resolve(moddir, rootfs_mods, &paths, NULL) < 0 ||
	    image_modules_resolve(moddir, agent_mods, &agent, NULL) < 0) {
		fprintf(stderr, "helper_mkdisk: %s\n", pc_errmsg());
		exit(1);
	}
	OK(guestfs_mkdir_p(g, "/tmp/initrd/bin"), "initrd dir");
	for (guint i = 0; i < agent->len + paths->len; i++) {
		const char *rel = i < agent->len ? agent->pdata[i] : paths->pdata[i - agent->len];
		char *slash;

		snprintf(host, sizeof(host), "%s/%s", moddir, rel);
		snprintf(path, sizeof(path), "%s/%s", moddir, rel);
		slash = strrchr(path, '/');
		*slash = 0;
		OK(guestfs_mkdir_p(g, path), path);
		*slash = '/';
		OK(guestfs_upload(g, host, path), path);
		if (i >= agent->len) {
			char ipath[512], *base = strrchr(rel, '/');

			snprintf(ipath, sizeof(ipath), "/tmp/initrd/%s", base ? base + 1 : rel);
			OK(guestfs_cp(g, path, ipath), ipath);
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "/%s\n",
				 base ? base + 1 : rel);
		}
	}
	snprintf(host, sizeof(host), "%s/modules.dep", moddir);
	snprintf(path, sizeof(path), "%s/modules.dep", moddir);
	OK(guestfs_upload(g, host, path), "modules.dep");
	snprintf(host, sizeof(host), "%s/modules.builtin", moddir);
	snprintf(path, sizeof(path), "%s/modules.builtin", moddir);
	OK(guestfs_upload(g, host, path), "modules.builtin");
	OK(guestfs_cp(g, "/bin/busybox", "/tmp/initrd/bin/busybox"), "initrd busybox");
	put("/tmp/initrd/init", initrd_init, 0755);
	put("/tmp/initrd/modules", list, 0644);
	snprintf(host, sizeof(host), "%s/initrd.cpio", dir);
	OK(guestfs_cpio_out(g, "/tmp/initrd", host, -1), "cpio_out");
	snprintf(path, sizeof(path), "/boot/initrd.img-%s", release);
	OK(guestfs_upload(g, host, path), "upload initrd");
	remove(host);
	OK(guestfs_rm_rf(g, "/tmp/initrd"), "rm initrd dir");
	g_ptr_array_unref(paths);
	g_ptr_array_unref(agent);
}

/* extlinux, as a distribution installer would set it up: its files in
 * /boot/extlinux (the appliance's extlinux), a config booting the image's
 * kernel, the MBR code of the host's syslinux, the partition active. */
static void root_extlinux(const char *dev, const char *part, const char *release)
{
	static const char mbr_path[] = "/usr/lib/EXTLINUX/mbr.bin";
	const char *const feature[] = { "extlinux", NULL };
	char conf[1024], *uuid, *mbr = NULL;
	size_t len = 0;

	if (guestfs_feature_available(g, (char *const *)feature) <= 0)
		die("the libguestfs appliance has no extlinux (install extlinux)");
	if (!g_file_get_contents(mbr_path, &mbr, &len, NULL) || len < 400 || len > 440) {
		fprintf(stderr, "helper_mkdisk: %s: missing or not an MBR (install extlinux)\n",
			mbr_path);
		exit(1);
	}
	OK(guestfs_pwrite_device(g, dev, mbr, len, 0), "write mbr.bin");
	g_free(mbr);
	OK(guestfs_part_set_bootable(g, dev, 1, 1), "set bootable");
	uuid = guestfs_vfs_uuid(g, part);
	if (!uuid)
		die("vfs_uuid");
	snprintf(conf, sizeof(conf),
		 "# pmucanary test image: extlinux\n"
		 "SERIAL 0 115200\n"
		 "DEFAULT canary\n"
		 "PROMPT 0\n"
		 "TIMEOUT 0\n"
		 "LABEL canary\n"
		 "  KERNEL /boot/vmlinuz-%s\n"
		 "  INITRD /boot/initrd.img-%s\n"
		 "  APPEND root=UUID=%s ro pmucanary.test=extlinux-config\n",
		 release, release, uuid);
	free(uuid);
	OK(guestfs_mkdir_p(g, "/boot/extlinux"), "/boot/extlinux");
	put("/boot/extlinux/extlinux.conf", conf, 0644);
	OK(guestfs_extlinux(g, "/boot/extlinux"), "extlinux");
}

int main(int argc, char **argv)
{
	char *kernel = NULL, *release = NULL;
	char path[512], dev[16], part[16];

	if (argc != 2) {
		fprintf(stderr, "usage: helper_mkdisk DIR\n");
		return 2;
	}
	if (image_find_default(&kernel, &release) < 0) {
		fprintf(stderr, "helper_mkdisk: %s\n", pc_errmsg());
		return 1;
	}
	g = guestfs_create();
	if (!g)
		die("create");
	guestfs_set_error_handler(g, NULL, NULL);
	{
		char *tcg[] = { (char *)"force_tcg", NULL };

		OK(guestfs_set_backend(g, "direct"), "backend");
		OK(guestfs_set_backend_settings(g, tcg), "force_tcg");
	}
	for (int k = 0; k < NKINDS; k++) {
		snprintf(path, sizeof(path), "%s/%s.img", argv[1], kinds[k]);
		OK(guestfs_disk_create(g, path, "raw", (k < 2 ? 128 : 16) << 20, -1), path);
		OK(guestfs_add_drive_opts(g, path, GUESTFS_ADD_DRIVE_OPTS_FORMAT, "raw", -1), path);
	}
	OK(guestfs_launch(g), "launch");
	for (int k = 0; k < NKINDS; k++) {
		snprintf(dev, sizeof(dev), "/dev/sd%c", 'a' + k);
		snprintf(part, sizeof(part), "/dev/sd%c1", 'a' + k);
		OK(guestfs_part_disk(g, dev, "mbr"), dev);
		OK(guestfs_mkfs(g, "ext4", part), part);
		OK(guestfs_mount(g, part, "/"), part);
		if (!strcmp(kinds[k], "noos")) {
			put("/hello.txt", "no operating system here\n", 0644);
		} else {
			root_base(!strcmp(kinds[k], "busybox") ? "pmucanary test image (busybox init)"
				  : !strcmp(kinds[k], "systemd") ? "pmucanary test image (systemd init)"
				  : "pmucanary test image (no init)");
			if (!strcmp(kinds[k], "busybox")) {
				OK(guestfs_ln_s(g, "/bin/busybox", "/sbin/init"), "ln init");
				put("/etc/inittab", "::sysinit:/etc/init.d/rcS\n"
				    "::shutdown:/bin/busybox umount -a -r\n", 0644);
				root_boot(kernel, release, argv[1]);
				root_extlinux(dev, part, release);
			} else if (!strcmp(kinds[k], "systemd")) {
				root_systemd();
				root_boot(kernel, release, argv[1]);
			}
		}
		OK(guestfs_umount_all(g), "umount");
	}
	OK(guestfs_shutdown(g), "shutdown");
	guestfs_close(g);
	free(kernel);
	free(release);
	return 0;
}
