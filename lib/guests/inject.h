/* Distribution disk images as canaries: the agent put into an existing
 * disk image with the libguestfs C API (issue 12).
 *
 * design.md files the injection under guest-images/, but everything here is
 * testable without a guest and style.md puts that in lib/: guest-images/
 * keeps the agent itself, this module is the host side that installs it.
 *
 * inject_disk() never writes the image it is given: it creates a qcow2
 * overlay backed by it (backing format recorded, so libvirt follows the
 * chain without probing), inspects the OS inside (libguestfs inspection),
 * refuses what it cannot handle (not a disk, no Linux root, an encrypted
 * root, an init it does not know), then installs into the overlay:
 *   /usr/local/sbin/pmucanary-agent    the static agent, run with --service
 *   /etc/pmucanary/modules             virtio/pvpanic modules for the booted
 *                                      kernel (the agent loads what udev did not)
 *   a start-up hook for the init found:
 *     systemd   /etc/systemd/system/pmucanary-agent.service, enabled by a
 *               symlink in multi-user.target.wants
 *     busybox   a "::once:" line in /etc/inittab (busybox's defaults kept
 *               when there was none)
 *     sysvinit  a "pmca:2345:once:" line in /etc/inittab
 * and copies the image's newest kernel and its initrd out next to the
 * overlay, for a direct kernel boot on virtio-blk:
 *   OUT               the overlay (qcow2, backing = the original)
 *   OUT.vmlinuz       the kernel, 0644
 *   OUT.initrd        its initrd, 0644 (absent: the kernel needs none)
 *   OUT.json          inject_report_json(): what was found and how to boot
 * On any failure none of these is left behind.
 *
 * libguestfs boots an appliance; on hosts where /dev/kvm cannot run a stock
 * guest (kvm_pvm: platform.md) it must use TCG. The choice is the fleet's
 * (fingerprint_accel_detect: KVM only with kvm_intel/kvm_amd loaded); the
 * appliance runs with the direct backend, so libvirt's opinion does not
 * enter. */
#ifndef PMUCANARY_INJECT_H
#define PMUCANARY_INJECT_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>

#define INJECT_AGENT_PATH "/usr/local/sbin/pmucanary-agent"
#define INJECT_AGENT_ARG "--service"
#define INJECT_UNIT_NAME "pmucanary-agent.service"
#define INJECT_MODULES_LIST "/etc/pmucanary/modules"

enum inject_init {
	INJECT_INIT_SYSTEMD,
	INJECT_INIT_BUSYBOX,
	INJECT_INIT_SYSVINIT,
	INJECT_INIT_COUNT
};
const char *inject_init_name(enum inject_init i); /* "systemd", "busybox", "sysvinit" */

/* What the injector looked at in the guest's root to choose the init. */
struct inject_init_facts {
	const char *sbin_init_link; /* readlink of /sbin/init, NULL: not a symlink */
	bool sbin_init_exists;      /* /sbin/init exists (file or link) */
	bool systemd_binary;        /* /lib/systemd/systemd or /usr/lib/systemd/systemd */
	bool systemd_dir;           /* /etc/systemd/system is a directory */
	bool inittab;               /* /etc/inittab is a file */
};
/* The init, or -ENOTSUP with "unknown init (...)" saying what was seen. */
int inject_init_detect(const struct inject_init_facts *f);

/* The systemd unit that starts the agent (text of the .service file). */
char *inject_systemd_unit(void);
/* /etc/inittab with the agent's line added (old NULL: no inittab; busybox
 * then keeps its built-in defaults). Unchanged copy when the line is there
 * already. init must be BUSYBOX or SYSVINIT. */
char *inject_inittab(enum inject_init init, const char *old);

/* From the names in /boot: the newest vmlinuz-<release> (version order) and
 * its initrd (initrd.img-<release>, initramfs-<release>.img, initrd-<release>
 * or initrd-<release>.img). *kernel, *release, *initrd (NULL when none)
 * are names inside /boot. -ENOENT when there is no kernel. */
int inject_pick_kernel(char *const *boot_names, char **kernel, char **release, char **initrd);

/* The device a guest sees the inspected root on: "/dev/sda2" -> "/dev/vda2"
 * (virtio-blk, one disk); other names unchanged. */
char *inject_guest_device(const char *dev);

/* Kernel words every guest boots with: console on the serial file; oops
 * stays an oops (GUEST_OOPS), but lockups, hung tasks and our NMI panic so
 * that they leave a backtrace and a pvpanic event; panic=0 keeps a
 * panicked guest for inspection; loglevel=5 keeps boot quiet but prints
 * backtraces (KERN_DEFAULT). A disk guest booted through its image's
 * bootloader gets them from the config inject_disk() edited. Here, not in
 * fleet.h: the fleet uses inject, never the other way round. */
#define GUEST_KERNEL_WORDS "console=ttyS0 loglevel=5 panic=0 panic_on_oops=0 " \
	"softlockup_panic=1 hung_task_panic=1 unknown_nmi_panic=1"

/* The bootloader inject_disk() found in the image. A fleet may boot a disk
 * guest through it (SeaBIOS, <boot dev='hd'/>) instead of the kernel copied
 * out: then the kernel command line is the bootloader config's, and the
 * words the fleet relies on (GUEST_KERNEL_WORDS: console=ttyS0 for the
 * console log, the panic settings the verdicts need) are added to each of
 * its kernel entries, in the overlay only. */
enum inject_bootloader {
	INJECT_BOOTLOADER_NONE,
	INJECT_BOOTLOADER_GRUB,      /* grub.cfg: linux/linux16/linuxefi lines */
	INJECT_BOOTLOADER_EXTLINUX,  /* extlinux.conf or syslinux.cfg: APPEND lines */
	INJECT_BOOTLOADER_COUNT
};
const char *inject_bootloader_name(enum inject_bootloader b); /* "none", "grub", "extlinux" */

/* How a fleet boots its disk guests. */
enum inject_disk_boot {
	INJECT_DISK_BOOT_KERNEL,     /* direct kernel boot of OVERLAY.vmlinuz (default) */
	INJECT_DISK_BOOT_BOOTLOADER, /* the image's own bootloader from the disk */
	INJECT_DISK_BOOT_COUNT
};
const char *inject_disk_boot_name(enum inject_disk_boot b); /* "kernel", "bootloader" */
/* "kernel" or "bootloader" -> the enum; -EINVAL otherwise (no message). */
int inject_disk_boot_parse(const char *s);

/* A bootloader config with every word of words (space-separated) that a
 * kernel entry lacks appended to it: grub's linux/linux16/linuxefi lines;
 * extlinux's APPEND lines, and an APPEND after the KERNEL/LINUX line of a
 * LABEL that has none. A grub `terminal_output ... gfxterm` line is
 * commented out (a guest has no video device: grub would park on it).
 * *entries: kernel entries seen (0: the config boots no Linux kernel);
 * *changed: those given words, and lines commented out (each starts with
 * INJECT_GFXTERM_MARK). */
#define INJECT_GFXTERM_MARK "# pmucanary: no video device for gfxterm: "
char *inject_bootloader_config_add(enum inject_bootloader b, const char *text, const char *words,
				   unsigned int *entries, unsigned int *changed);

/* A disk image's backing chain, read from the qcow2 headers alone (before
 * libguestfs or qemu-img open it): the image itself first, then each
 * backing file, as canonical paths appended to files (if not NULL). A chain
 * that loops back on itself (a file whose backing file is itself sent
 * qemu-img into an endless recursion), one deeper than 16, or a backing
 * file that cannot be opened is refused, naming the file: -errno. */
int inject_backing_chain(const char *disk, GPtrArray *files);

/* Cheap checks before any appliance boots: a regular file or block device
 * of at least 64 KiB (a partition table and a superblock). -EINVAL/-ENOENT
 * with "PATH: not a disk image (...)". */
int inject_precheck(const char *disk);

struct inject_options {
	const char *disk;      /* the image (raw, qcow2, ...): never written */
	const char *out;       /* NULL: <disk>.pmucanary.qcow2 */
	const char *agent;     /* NULL: image_default_agent() */
	bool force_tcg;        /* TCG for the appliance even where KVM works */
};

struct inject_report {
	char *disk, *disk_format, *overlay;
	char *kernel_path, *initrd_path, *manifest_path; /* on the host, next to overlay */
	char *os_type, *distro, *product_name;
	char *root;            /* inspected root device, e.g. /dev/sda1 */
	char *root_uuid;       /* its filesystem UUID ("" unknown) */
	char *cmdline_root;    /* root=UUID=... or root=/dev/vda1 */
	GPtrArray *kernels;    /* char *: every /boot/vmlinuz-* name */
	char *kernel, *release, *initrd; /* the one picked (names in /boot) */
	enum inject_init init;
	GPtrArray *hooks;      /* char *: files written/changed for the init */
	GPtrArray *modules;    /* char *: paths in INJECT_MODULES_LIST */
	enum inject_bootloader bootloader;
	char *bootloader_config; /* its config in the image, NULL for none */
	char *bootloader_note;   /* why none, or what was added to the config */
	unsigned int bootloader_entries; /* kernel entries in the config */
	char *accel, *accel_reason; /* the appliance's */
	char *backend;
	double launch_s, total_s;
};
void inject_report_free(struct inject_report *r);
typedef struct inject_report inject_report;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(inject_report, inject_report_free)

/* Does it all. Returns 0 and *out, or -errno with a one-line message:
 * -EINVAL/-ENOENT not a disk or no usable OS, -ENOTSUP an encrypted root,
 * a non-Linux OS or an unknown init, -EEXIST when OUT exists, -EIO when
 * libguestfs itself failed (appliance). */
int inject_disk(const struct inject_options *opt, struct inject_report **out);

/* {disk, disk_format, overlay, os:{type,distro,product_name,root,root_uuid},
 *  kernels:[...], boot:{kernel,initrd,release,kernel_path,initrd_path,
 *  cmdline_root}, bootloader:{kind,config,entries,note}, init, hooks:[...],
 *  modules:[...],
 *  appliance:{accel,accel_reason,backend,launch_s}, total_s} */
json_t *inject_report_json(const struct inject_report *r);
/* The report as `pmucanary image --inject` prints it, a few lines; what
 * came from the image (OS name, file names) escaped by text_escape(). */
GString *inject_report_text(const struct inject_report *r);

/* What a fleet needs to boot an injected overlay: reads OVERLAY.json (an
 * inject_disk() result). -ENOENT when the overlay was not injected by us. */
struct inject_boot {
	char *overlay, *kernel, *initrd, *cmdline_root;
	enum inject_bootloader bootloader; /* NONE in a manifest without one */
	char *bootloader_note;
};
void inject_boot_free(struct inject_boot *b);
typedef struct inject_boot inject_boot;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(inject_boot, inject_boot_free)
int inject_boot_load(const char *overlay, struct inject_boot **out);
/* 0 when b can boot as asked; -ENOTSUP with "OVERLAY: no bootloader to
 * boot through (...)" when bootloader mode meets an image without one. */
int inject_boot_check(const struct inject_boot *b, enum inject_disk_boot how);

/* A harmed disk guest's own logs, read (read-only) out of its overlay into
 * dest_dir (created 0755): every regular file directly under /var/log, and
 * /var/log/journal as journal.tar when there is one. *count: files copied.
 * One appliance launch (tens of seconds under TCG). */
int inject_pull_logs(const char *overlay, const char *dest_dir, unsigned int *count);

/* A fresh qcow2 overlay at path backed by base (a qcow2 written by
 * inject_disk()): each disk guest boots on its own, so that one harm cannot
 * leak into the next incarnation. 0644. */
int inject_overlay_create(const char *base, const char *path);

#endif
