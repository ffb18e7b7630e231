/* helper_mkdebian: turns a Debian root filesystem tarball (mmdebstrap's
 * output) into a bootable disk image the way a distribution installer
 * would, with the libguestfs C API, for tests/it_distro.sh.
 *
 *   helper_mkdebian ROOTFS.tar OUT.img SIZE_MIB
 *
 * OUT.img: raw, MBR, one ext4 partition holding the tarball; an fstab
 * naming it by UUID; a hostname; grub-pc installed into the MBR by the
 * image's own grub-install and its grub.cfg written by the image's own
 * update-grub, with Debian's /etc/default/grub untouched (so the config
 * has Debian's default terminal: gfxterm, which a domain without a video
 * device cannot show). Exit 0, or 1 with a message. */
#include <guestfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static guestfs_h *g;

static void die(const char *what)
{
	fprintf(stderr, "helper_mkdebian: %s: %s\n", what, g ? guestfs_last_error(g) : "");
	exit(1);
}

#define OK(call, what) do { if ((call) < 0) die(what); } while (0)

static void put(const char *path, const char *text)
{
	OK(guestfs_write(g, path, text, strlen(text)), path);
}

/* Runs argv in the image's root (libguestfs binds /dev, /proc and /sys). */
static void in_image(const char *const *argv)
{
	char *out = guestfs_command(g, (char *const *)argv);

	if (!out)
		die(argv[0]);
	free(out);
}

int main(int argc, char **argv)
{
	const char *const grub_install[] = { "grub-install", "--target=i386-pc", "/dev/sda",
					      NULL };
	const char *const update_grub[] = { "update-grub", NULL };
	char fstab[256], *uuid, *end;
	long mib;

	if (argc != 4) {
		fprintf(stderr, "usage: helper_mkdebian ROOTFS.tar OUT.img SIZE_MIB\n");
		return 2;
	}
	mib = strtol(argv[3], &end, 10);
	if (*end || mib < 256 || mib > 65536) {
		fprintf(stderr, "helper_mkdebian: SIZE_MIB: '%s' is not 256..65536\n", argv[3]);
		return 2;
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
	OK(guestfs_disk_create(g, argv[2], "raw", (int64_t)mib << 20, -1), argv[2]);
	OK(guestfs_add_drive_opts(g, argv[2], GUESTFS_ADD_DRIVE_OPTS_FORMAT, "raw", -1), argv[2]);
	OK(guestfs_launch(g), "launch");
	OK(guestfs_part_disk(g, "/dev/sda", "mbr"), "partition");
	OK(guestfs_part_set_bootable(g, "/dev/sda", 1, 1), "set bootable");
	OK(guestfs_mkfs(g, "ext4", "/dev/sda1"), "mkfs");
	OK(guestfs_mount(g, "/dev/sda1", "/"), "mount");
	OK(guestfs_tar_in(g, argv[1], "/"), "tar-in");
	uuid = guestfs_vfs_uuid(g, "/dev/sda1");
	if (!uuid)
		die("vfs_uuid");
	snprintf(fstab, sizeof(fstab), "UUID=%s / ext4 errors=remount-ro 0 1\n", uuid);
	free(uuid);
	put("/etc/fstab", fstab);
	put("/etc/hostname", "debian-canary\n");
	/* grub-install reads the device through the page cache: what tar-in
	 * just wrote must be on it first. */
	OK(guestfs_sync(g), "sync");
	OK(guestfs_drop_caches(g, 3), "drop caches");
	in_image(grub_install);
	in_image(update_grub);
	OK(guestfs_umount_all(g), "umount");
	OK(guestfs_shutdown(g), "shutdown");
	guestfs_close(g);
	return 0;
}
