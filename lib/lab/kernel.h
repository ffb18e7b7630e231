/* A kernel under test (design.md "kernel", `pmucanary lab --kernel KERNEL[:NAME]`).
 *
 * kernel_resolve() turns what the user typed into a kernel with an identity
 * (name, release, sha256 of the image bytes: two builds of one release stay
 * apart) and, when one can be found, its config. KERNEL is one of:
 *
 *   foo.deb        a Debian linux-image package (KERNEL_SOURCE_DEB). Read with
 *                  libarchive (no dpkg): the ar members debian-binary and
 *                  data.tar.{xz,zst,gz,bz2,...}; regular files under ./boot/,
 *                  ./lib/modules/ and ./usr/lib/modules/ (stored as lib/modules/)
 *                  are unpacked into <cache_dir>/deb-<16 hex of the .deb's
 *                  sha256>/, built in a temporary directory beside it and
 *                  renamed into place, so a second resolve of the same .deb
 *                  unpacks nothing. Symlinks, hard links and devices are not
 *                  unpacked; an entry with an absolute path or a ".." component
 *                  makes the package broken. Directories are 0755 and files
 *                  0644 (QEMU runs as another user). The package must hold
 *                  exactly one boot/vmlinuz-R; modules_dir is lib/modules/R
 *                  when present. Debian ships no modules.dep (depmod makes it
 *                  at install time), so one is written from each module's
 *                  .modinfo "depends=" when the package lacks it, in depmod's
 *                  format, for image_modules_resolve() and modprobe.
 *   a path         anything with a '/' or naming an existing file: a bzImage
 *                  (KERNEL_SOURCE_IMAGE). Modules: opts->modules_dir, else
 *                  <modules_root>/<release> when that directory exists (an
 *                  image copied from /boot), else none.
 *   replay:LIST    a replay kernel (KERNEL_SOURCE_REPLAY, replay.h): the
 *                  lab-host kernel with guest-images/replay/NAME.patch for
 *                  each NAME of LIST (NAME+NAME..., or "stock" for none),
 *                  built or found cached by kernel-build.sh. Its NAME is
 *                  what follows the next ':', else LIST. A file of that
 *                  name wins (it is a path).
 *   R              an installed release (KERNEL_SOURCE_RELEASE):
 *                  <boot_dir>/vmlinuz-R, modules <modules_root>/R (none when
 *                  absent).
 * opts->modules_dir, when given, overrides the modules of every form.
 *
 * The ":NAME" suffix (the name every cell and report carries):
 *   - when the whole string names an existing file, it is KERNEL, no NAME
 *     (a path may contain ':');
 *   - else it is split at the LAST ':' when the part before is non-empty and
 *     the part after is a valid name: 1..64 of [A-Za-z0-9_.+-], not "." or "..";
 *   - else, when the part before names an existing regular file or an
 *     installed release, the NAME is bad: -EINVAL;
 *   - else the whole string is KERNEL (and usually fails to resolve, naming it).
 * Without a NAME the name is the release, or the image's file name when the
 * release is unknown.
 *
 * An image must be a regular file of at most 256 MiB with an x86 bzImage
 * header (0xAA55 at 0x1FE, "HdrS" at 0x202). Its release comes from a
 * "vmlinuz-R" file name, else from the header's kernel_version string.
 *
 * The config, first found wins (config_source says which, in words):
 *   1. opts->config (--config FILE; must exist);
 *   2. for a .deb, boot/config-R from the package;
 *   3. IKCONFIG embedded in the image (the bzImage payload, any compression
 *      libarchive reads, is decompressed up to the "IKCFG_ST" gzip stream;
 *      a payload that decompresses beyond 512 MiB is refused: -EINVAL);
 *      it comes before the files below because it cannot be stale;
 *   4. <dirname(image)>/config-<release>;
 *   5. <boot_dir>/config-<release>;
 *   6. <tree>/.config when the image is <tree>/arch/x86{,_64}/boot/bzImage;
 *   7. <modules_dir>/build/.config.
 * A config is parsed strictly: at most 4 MiB, no NUL byte, every line blank,
 * a comment, or CONFIG_<[A-Za-z0-9_]+>=<value>; anything else is -EINVAL
 * naming the file and line (a broken config is worth knowing about, not
 * worth guessing around). "# CONFIG_X is not set" and options that do not
 * appear at all are both "not set" (that is how Kconfig writes them).
 *
 * Errors: every bad input (missing file, not a bzImage, broken package, bad
 * NAME, missing --modules or --config) is -EINVAL with one line naming the
 * argument as given, e.g.
 *   --kernel /tmp/x: not a kernel image (no bzImage "HdrS" header)
 *   --kernel 9.9.9: no /boot/vmlinuz-9.9.9 (installed: 6.1.0-57-amd64)
 *   --kernel foo.deb: broken package: no data.tar member
 *   --modules /nope: no such directory
 * so that the CLI exits 2. An image that exists but cannot be read is -EACCES;
 * trouble writing the cache is the errno of the failing call. */
#ifndef PMUCANARY_KERNEL_H
#define PMUCANARY_KERNEL_H

#include <glib.h>
#include <stdbool.h>

#define KERNEL_NAME_MAX 64
#define KERNEL_IMAGE_MAX (256u << 20)     /* bytes of a bzImage */
#define KERNEL_CONFIG_MAX (4u << 20)      /* bytes of a .config */
#define KERNEL_PAYLOAD_MAX (512u << 20)   /* decompressed bzImage payload */

enum kernel_source {
	KERNEL_SOURCE_IMAGE,
	KERNEL_SOURCE_RELEASE,
	KERNEL_SOURCE_DEB,
	KERNEL_SOURCE_REPLAY,
	KERNEL_SOURCE_COUNT
};
const char *kernel_source_name(enum kernel_source s); /* "image", "release", "deb", "replay" */

struct kernel_opts {
	const char *modules_dir;  /* --modules DIR; NULL: per form, see above */
	const char *config;       /* --config FILE: overrides every other config source */
	const char *boot_dir;     /* NULL: "/boot" */
	const char *modules_root; /* NULL: "/lib/modules" */
	const char *cache_dir;    /* where .deb files are unpacked; NULL: kernel_default_cache_dir() */
};

struct kernel {
	char *arg;           /* KERNEL as given (without :NAME) */
	char *name;          /* NAME, else the release, else the image's file name */
	bool name_given;
	enum kernel_source source;
	char *image;         /* absolute path of the bzImage to boot */
	char *release;       /* "6.1.0-57-amd64"; "" when unknown */
	char *sha256;        /* hex sha256 of the image bytes */
	char *modules_dir;   /* absolute, or NULL when there is none */
	GHashTable *config;  /* "CONFIG_X" -> "y" | "m" | value (quotes kept); NULL: none found */
	char *config_source; /* "/boot/config-R", "IKCONFIG in /x/bzImage",
			      * "config-R in foo.deb"...; NULL when none */
	char *deb_dir;       /* KERNEL_SOURCE_DEB: the unpack directory; else NULL */
};

/* Resolves spec (KERNEL[:NAME]); opts may be NULL. Returns 0 and *out, or
 * -errno with a message (see the top of this file). */
int kernel_resolve(const char *spec, const struct kernel_opts *opts, struct kernel **out);
void kernel_free(struct kernel *k);
typedef struct kernel kernel;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(kernel, kernel_free)

/* "NAME (RELEASE, 0123456789ab)", or "NAME (0123456789ab)" when NAME is the
 * release or the release is unknown: the label every cell and report carries. */
char *kernel_label(const struct kernel *k);

/* The config value of option ("CONFIG_KVM" or "KVM"), NULL when not set or
 * when there is no config. */
const char *kernel_config_get(const struct kernel *k, const char *option);

/* <image_cache_root()>/kernels: $PMUCANARY_CACHE_DIR/kernels, else
 * /var/cache/pmucanary/kernels as root, else $XDG_CACHE_HOME/pmucanary/kernels. */
char *kernel_default_cache_dir(void);

/* ---- can it be a lab host? ---- */

/* One row of the lab-host needs (kernel_lab_needs[], ends with option NULL). */
struct kernel_need {
	const char *option;  /* without "CONFIG_" */
	const char *allowed; /* "y" (built in) or "ym" */
	bool required;       /* false: recommended, a warning when lacking */
	const char *kvm;     /* "amd"/"intel": the KVM vendor module; NULL: always */
	const char *module;  /* modprobe name when =m; NULL: never needs loading */
	const char *since;   /* "5.12": only for releases from this version on; NULL: all */
	const char *why;
};
extern const struct kernel_need kernel_lab_needs[];

/* Checks k's config against kernel_lab_needs[]. kvm is "amd", "intel" or
 * NULL (then CONFIG_KVM_AMD or CONFIG_KVM_INTEL is enough). Sets *missing
 * (when not NULL) to the lacks, char * lines such as
 *   "CONFIG_9P_FS is not set (the host's root filesystem is shared over virtio-9p)"
 *   "CONFIG_DEVTMPFS=m, needs =y (...)"
 *   "CONFIG_9P_FS=m but no modules dir: give --modules DIR"
 *   "CONFIG_9P_FS=m but module 9p is not in DIR/modules.dep"
 * and *warnings (when not NULL) to the same for recommended options.
 * Returns 0 when k can be a lab host, else -EINVAL with the message
 * "kernel LABEL cannot be a lab host: LACK; LACK..." (every lack, one line;
 * the reasons are left out when they would not fit). Without a config it
 * returns 0 with the warning "no config found for LABEL: cannot check ...":
 * the boot will tell. A kvm other than "amd", "intel" or NULL is -EINVAL. */
int kernel_check_lab(const struct kernel *k, const char *kvm, GPtrArray **missing,
		     GPtrArray **warnings);

/* The modules (modprobe names, char *) a lab host loads from modules_dir, in
 * table order: those of kernel_lab_needs[] that k's config has =m (both KVM
 * vendor modules when both are =m: the one for the other vendor fails to
 * load, harmlessly). Without a config, every candidate: the caller resolves
 * them with image_modules_resolve(), which skips built-in ones. Never NULL. */
GPtrArray *kernel_lab_modules(const struct kernel *k);

#endif
