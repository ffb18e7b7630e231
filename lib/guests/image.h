/* Guest images: a kernel plus an initramfs whose /init is the agent.
 *
 * image_build() resolves the guest kernel's modules (virtio_pci,
 * virtio_console, virtio_mmio, pvpanic, pvpanic_mmio and their
 * dependencies, from <modules_dir>/modules.dep, in load order; built-in ones
 * are skipped), writes a newc cpio with libarchive holding /init (the agent),
 * /etc/pmucanary/modules (module paths, one a line, in load order) and the
 * module files, and copies the kernel next to it (mode 0644: /boot/vmlinuz-*
 * is 0600 and QEMU runs as libvirt-qemu).
 *
 * The image directory is content-addressed: <out_dir>/<sha256 prefix> over
 * the kernel bytes, the agent binary, every module file and
 * IMAGE_BUILDER_VERSION. A second build with the same inputs finds the
 * directory and rewrites nothing. Layout:
 *   <dir>/vmlinuz          copy of the kernel, 0644
 *   <dir>/initramfs.cpio   (gzip-compressed when asked; name kept), 0644
 *   <dir>/manifest.json    see image_manifest_json()
 * Directories are 0755 so that libvirt-qemu can reach the files. */
#ifndef PMUCANARY_IMAGE_H
#define PMUCANARY_IMAGE_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Bumped whenever the image layout or the agent's expectations change. */
#define IMAGE_BUILDER_VERSION 1
#define IMAGE_MODULES_LIST "etc/pmucanary/modules" /* path inside the cpio */
#define IMAGE_KERNEL_NAME "vmlinuz"
#define IMAGE_INITRD_NAME "initramfs.cpio"
#define IMAGE_MANIFEST_NAME "manifest.json"

/* Module names the guest needs (modprobe spelling: '-' and '_' equal). */
extern const char *const image_default_modules[];

struct image_options {
	const char *kernel;      /* NULL: image_find_default() */
	const char *modules_dir; /* NULL: /lib/modules/<release>; missing dir = no modules */
	const char *agent;       /* NULL: image_default_agent() */
	const char *out_dir;     /* NULL: image_default_cache_dir() */
	bool compress;           /* gzip the cpio */
	const char *const *modules; /* NULL-terminated names; NULL: image_default_modules */
};

struct image_info {
	char *dir;           /* the content-addressed image directory */
	char *kernel_path;   /* <dir>/vmlinuz */
	char *initrd_path;   /* <dir>/initramfs.cpio */
	char *manifest_path; /* <dir>/manifest.json */
	char *release;       /* kernel release, e.g. 6.1.0-57-amd64 ("" unknown) */
	char *kernel_source; /* the kernel file the image was built from */
	char *agent_source;  /* the agent binary used */
	char *agent_sha256;
	GPtrArray *modules;  /* char *, paths relative to modules_dir, load order */
	char *kernel_sha256;
	uint64_t kernel_size, initrd_size, agent_size;
	bool compressed;     /* initrd is gzip */
	bool cached;         /* true: found an existing directory, nothing written */
};

/* Builds (or finds) the image. Returns 0 and *out, or -errno with a message
 * (a missing kernel or agent names the path). */
int image_build(const struct image_options *opt, struct image_info **out);
void image_info_free(struct image_info *info);
typedef struct image_info image_info;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(image_info, image_info_free)

/* The newest readable /boot/vmlinuz-* (by version order of the release).
 * Sets *kernel (and *release when not NULL). -ENOENT when there is none. */
int image_find_default(char **kernel, char **release);
/* Same, in a given directory (for tests). */
int image_find_default_in(const char *boot_dir, char **kernel, char **release);

/* What a kernel image is, from its first bytes (4 KiB are enough). */
enum image_kernel_kind {
	IMAGE_KERNEL_BZIMAGE, /* x86 boot header "HdrS" at 0x202, bzImage */
	IMAGE_KERNEL_ELF,     /* an x86-64 ELF executable (vmlinux) */
	IMAGE_KERNEL_KIND_COUNT
};
#define IMAGE_BOOT_PROTOCOL_MIN 0x0206
/* Returns an image_kernel_kind, or -EINVAL with "WHO: not a kernel image
 * (...)" for anything else (a text file, a module, a zImage, an old boot
 * protocol). */
int image_kernel_identify(const char *who, const void *data, size_t len);
/* The same for a file: -errno "WHO: ..." when it cannot be opened, -EINVAL
 * when it is not a regular file (never blocks on a FIFO). who NULL: path. */
int image_kernel_check(const char *path, const char *who);

/* The kernel release: from a "vmlinuz-<release>" file name, else from the
 * bzImage header's version string. Returns 0 and *release (possibly ""),
 * or image_kernel_check()'s error. */
int image_kernel_release(const char *kernel_path, char **release);

/* <dir of /proc/self/exe>/guest-images/pmucanary-agent. */
char *image_default_agent(void);
/* Where pmucanary caches what it builds (images/, kernels/, lab/):
 * $PMUCANARY_CACHE_DIR, else /var/cache/pmucanary as root, else
 * $XDG_CACHE_HOME/pmucanary. */
char *image_cache_root(void);
/* mkdir -p, every directory it creates 0755 whatever the umask: QEMU runs
 * as another user and must traverse the caches. */
int image_mkdir_public(const char *dir);
/* rm -rf that never follows a symlink. */
void image_remove_tree(const char *path);

/* <image_cache_root()>/images. */
char *image_default_cache_dir(void);

/* <dir of /proc/self/exe>/guest-images (the Makefile copies the agent,
 * kernel-build.sh, the kconfig fragments and the replay patches there);
 * NULL when /proc/self/exe cannot be read. */
char *image_guest_images_dir(void);
/* Builds, or finds in <image_cache_root()>/kernels, a kernel from Debian's
 * linux-source-6.1: guest-images/kernel-build.sh with
 * guest-images/kconfig/FRAGMENT and the patches in order (NULL-terminated,
 * may be NULL). who starts every message. Sets *path (the cached bzImage)
 * and returns 0, or -ENOENT (script or fragment missing) / -EIO (the build
 * failed, with the last line kernel-build.sh printed). A cold build takes
 * minutes (told through pc_info first). */
int image_build_kernel(const char *who, const char *fragment, const char *const *patches,
		       char **path);

/* The small guest kernel: what `[fleet] kernel = small` and `--kernel
 * small` name (a file called "small" is given as ./small). */
#define IMAGE_SMALL_KERNEL "small"
/* No module names: for a kernel with everything built in (small, lab). */
extern const char *const image_no_modules[];
/* Builds, or finds in <image_cache_root()>/kernels, the small guest kernel:
 * guest-images/kernel-build.sh with guest-images/kconfig/guest-small.config,
 * both beside the pmucanary binary (the Makefile copies them there).
 * A cache hit takes well under a second; a cold build several minutes
 * (told through pc_info first). Sets *path (the cached bzImage) and returns
 * 0, or -ENOENT (script or fragment missing) / -EIO (the build failed,
 * with the last line kernel-build.sh printed). */
int image_small_kernel(char **path);

/* What a guest kernel without modules must have built in (=y) for the agent
 * and the fleet: option without "CONFIG_", and why. Ends with option NULL. */
struct image_guest_need {
	const char *option;
	const char *why;
};
extern const struct image_guest_need image_guest_needs[];
/* Checks a .config (or a config fragment: the same line format) held in
 * text against image_guest_needs[]. Returns the number of needs that lack,
 * and sets *missing (when not NULL) to lines "CONFIG_X is not =y (why)". */
unsigned int image_guest_config_lacks(const char *text, GPtrArray **missing);

/* Resolves names (NULL-terminated) against <modules_dir>/modules.dep into
 * *paths (char *, relative to modules_dir), dependencies first, each once.
 * Names listed in modules.builtin are skipped. A name found in neither goes
 * to *missing when missing is not NULL, else it is -ENOENT. A modules_dir
 * without modules.dep gives an empty list. */
int image_modules_resolve(const char *modules_dir, const char *const *names,
			  GPtrArray **paths, GPtrArray **missing);

/* The manifest as JSON (new reference): dir, kernel {source, release,
 * sha256, size}, initrd {path, size, compressed}, agent {source, sha256,
 * size}, modules [paths], builder_version. */
json_t *image_manifest_json(const struct image_info *info);

#endif
