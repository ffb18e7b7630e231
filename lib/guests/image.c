/* Guest images: kernel copy + initramfs (newc cpio via libarchive) with the
 * agent as /init and the modules it needs, content-addressed in a cache. */
#include "image.h"
#include "infile.h"
#include "log.h"

#include <archive.h>
#include <archive_entry.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

const char *const image_default_modules[] = {
	"virtio_pci", "virtio_mmio", "virtio_console", "pvpanic", "pvpanic_mmio", NULL,
};

typedef struct archive archive_writer;
typedef struct archive archive_reader;
typedef struct archive_entry archive_entry;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(archive_writer, archive_write_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(archive_reader, archive_read_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(archive_entry, archive_entry_free)

void image_info_free(struct image_info *info)
{
	if (!info)
		return;
	g_free(info->dir);
	g_free(info->kernel_path);
	g_free(info->initrd_path);
	g_free(info->manifest_path);
	g_free(info->release);
	g_free(info->kernel_source);
	g_free(info->agent_source);
	g_free(info->agent_sha256);
	g_free(info->kernel_sha256);
	if (info->modules)
		g_ptr_array_unref(info->modules);
	g_free(info);
}

/* ---- kernel ---- */

static unsigned int le16(const guint8 *p)
{
	return p[0] | p[1] << 8;
}

int image_kernel_identify(const char *who, const void *data, size_t len)
{
	const guint8 *d = data;
	unsigned int proto;

	if (len >= 20 && !memcmp(d, "\177ELF", 4)) {
		/* What QEMU's -kernel boots as ELF: a 64-bit x86 executable
		 * (a module or a shared object is not a kernel). */
		if (d[4] != 2 || d[5] != 1 || le16(d + 16) != 2 || le16(d + 18) != 62)
			return pc_fail(EINVAL, "%s: not a kernel image (an ELF file, but not an "
				       "x86-64 executable vmlinux)", who);
		return IMAGE_KERNEL_ELF;
	}
	if (len < 0x212 || le16(d + 0x1fe) != 0xaa55 || memcmp(d + 0x202, "HdrS", 4))
		return pc_fail(EINVAL, "%s: not a kernel image (neither a bzImage with the x86 "
			       "boot header \"HdrS\" nor an ELF vmlinux)", who);
	/* 2.06 (Linux 2.6.22) is the oldest protocol an x86-64 kernel has;
	 * loadflags bit 0 (LOADED_HIGH) tells a bzImage from an old zImage. */
	proto = le16(d + 0x206);
	if (proto < IMAGE_BOOT_PROTOCOL_MIN)
		return pc_fail(EINVAL, "%s: not a usable kernel image (x86 boot protocol %u.%02u, "
			       "older than %u.%02u)", who, proto >> 8, proto & 0xff,
			       IMAGE_BOOT_PROTOCOL_MIN >> 8, IMAGE_BOOT_PROTOCOL_MIN & 0xff);
	if (!(d[0x211] & 1))
		return pc_fail(EINVAL, "%s: not a usable kernel image (a zImage, not a bzImage)", who);
	return IMAGE_KERNEL_BZIMAGE;
}

/* XEN_ELFNOTE_PHYS32_ENTRY: the PVH entry point (CONFIG_PVH), which QEMU's
 * -kernel needs to boot an ELF vmlinux; a static executable without it
 * boots nothing. Looks through the PT_NOTE segments (bounded). */
#define PVH_NOTE_TYPE 18

static bool elf_has_pvh_note(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 256)
		return false;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		g_autofree guint8 *notes = NULL;
		size_t off = 0;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			return false;
		if (ph.p_type != PT_NOTE || ph.p_filesz == 0 || ph.p_filesz > 1 << 20)
			continue;
		notes = g_malloc(ph.p_filesz);
		if (pread(fd, notes, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			return false;
		while (off + sizeof(Elf64_Nhdr) <= ph.p_filesz) {
			Elf64_Nhdr nh;
			size_t name, desc;

			memcpy(&nh, notes + off, sizeof(nh));
			name = (nh.n_namesz + 3u) & ~3u;
			desc = (nh.n_descsz + 3u) & ~3u;
			off += sizeof(nh);
			if (name > ph.p_filesz - off || desc > ph.p_filesz - off - name)
				break;
			if (nh.n_type == PVH_NOTE_TYPE && nh.n_namesz == 4 && !memcmp(notes + off, "Xen", 4))
				return true;
			off += name + desc;
		}
	}
	return false;
}

int image_kernel_check(const char *path, const char *who)
{
	guint8 hdr[4096];
	struct stat st;
	ssize_t n;
	int fd;

	if (!who)
		who = path;
	/* Non-blocking and regular only: a FIFO never blocks the check. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return pc_fail(errno, "%s: %s", who, g_strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return pc_fail(EINVAL, "%s: not a regular file (a kernel image is expected)", who);
	}
	n = pread(fd, hdr, sizeof(hdr), 0);
	if (n < 0) {
		int err = errno;

		close(fd);
		return pc_fail(err, "%s: %s", who, g_strerror(err));
	}
	n = image_kernel_identify(who, hdr, (size_t)n);
	if (n == IMAGE_KERNEL_ELF && !elf_has_pvh_note(fd))
		n = pc_fail(EINVAL, "%s: not a bootable vmlinux (an x86-64 ELF executable without "
			    "the PVH entry note, which QEMU needs to boot it: a kernel built "
			    "without CONFIG_PVH; use its bzImage)", who);
	close(fd);
	return (int)n;
}

/* The bzImage header: "HdrS" at 0x202, kernel_version pointer at 0x20e
 * (offset from 0x200) to a string "<release> (<builder>) #1 ...". */
static char *bzimage_release(const char *path)
{
	FILE *f = fopen(path, "rbe");
	unsigned char hdr[0x210];
	char ver[256];
	size_t n;

	if (!f)
		return NULL;
	n = fread(hdr, 1, sizeof(hdr), f);
	if (n < sizeof(hdr) || memcmp(hdr + 0x202, "HdrS", 4)) {
		fclose(f);
		return NULL;
	}
	unsigned int off = hdr[0x20e] | (hdr[0x20f] << 8);
	if (!off || fseek(f, 0x200 + off, SEEK_SET) || !fgets(ver, sizeof(ver), f)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	ver[strcspn(ver, " \n")] = 0;
	return ver[0] ? g_strdup(ver) : NULL;
}

int image_kernel_release(const char *kernel_path, char **release)
{
	g_autofree char *base = g_path_get_basename(kernel_path);
	char *r;

	g_autofree char *who = g_strdup_printf("kernel %s", kernel_path);
	int kind;

	/* Before anything is built: a file that is no kernel is bad input. */
	if ((kind = image_kernel_check(kernel_path, who)) < 0)
		return kind;
	if (g_str_has_prefix(base, "vmlinuz-") && base[8]) {
		*release = g_strdup(base + 8);
		return 0;
	}
	r = kind == IMAGE_KERNEL_BZIMAGE ? bzimage_release(kernel_path) : NULL;
	*release = r ? r : g_strdup("");
	return 0;
}

int image_find_default_in(const char *boot_dir, char **kernel, char **release)
{
	g_autoptr(GDir) d = g_dir_open(boot_dir, 0, NULL);
	g_autofree char *best = NULL;
	g_autofree char *unreadable = NULL;
	const char *name;

	if (!d)
		return pc_fail(ENOENT, "no kernel: cannot read %s", boot_dir);
	while ((name = g_dir_read_name(d))) {
		g_autofree char *path = NULL;

		if (!g_str_has_prefix(name, "vmlinuz-") || !name[8])
			continue;
		path = g_build_filename(boot_dir, name, NULL);
		if (!g_file_test(path, G_FILE_TEST_IS_REGULAR))
			continue;
		if (access(path, R_OK) < 0) {
			if (!unreadable)
				unreadable = g_steal_pointer(&path);
			continue;
		}
		if (!best || strverscmp(name + 8, best + 8) > 0) {
			g_free(best);
			best = g_strdup(name);
		}
	}
	if (!best && unreadable)
		return pc_fail(EACCES, "%s is not readable (Debian installs it 0600): run as root "
			       "once to cache the image, or pass --kernel", unreadable);
	if (!best)
		return pc_fail(ENOENT, "no %s/vmlinuz-* kernel (use --kernel)", boot_dir);
	*kernel = g_build_filename(boot_dir, best, NULL);
	if (release)
		*release = g_strdup(best + 8);
	return 0;
}

int image_find_default(char **kernel, char **release)
{
	return image_find_default_in("/boot", kernel, release);
}

char *image_default_agent(void)
{
	g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
	g_autofree char *dir = NULL;

	if (!exe)
		return g_strdup("guest-images/pmucanary-agent");
	dir = g_path_get_dirname(exe);
	return g_build_filename(dir, "guest-images", "pmucanary-agent", NULL);
}

const char *const image_no_modules[] = { NULL };

const struct image_guest_need image_guest_needs[] = {
	{ "VIRTIO_PCI", "the heartbeat port's virtio-serial controller is a PCI device" },
	{ "VIRTIO_CONSOLE", "the heartbeat port (/sys/class/virtio-ports)" },
	{ "PVPANIC_MMIO", "binds the isa panic device: a panic is GUEST_CRASH, not a hang" },
	{ "ACPI", "the isa panic device is found through ACPI (QEMU0001)" },
	{ "SERIAL_8250_CONSOLE", "the console log the fleet keeps as evidence" },
	{ "BLK_DEV_INITRD", "the agent is the initramfs's /init" },
	{ "RD_GZIP", "the initramfs is gzip-compressed" },
	{ "DEVTMPFS", "/dev/console, /dev/kmsg and the port's device node" },
	{ "PROC_SYSCTL", "/proc/sys/kernel/random/boot_id (the heartbeat's boot id)" },
	{ "SYSFS", "/sys/class/virtio-ports/*/name finds the port" },
	{ "MAGIC_SYSRQ", "the crash and reboot self-tests (/proc/sysrq-trigger)" },
	{ "FUTEX", "the agent's threads (static glibc pthreads)" },
	{ "SMP", "one busy worker per vCPU" },
	{ "PERF_EVENTS", "perf events in guest context" },
	{ "SOFTLOCKUP_DETECTOR", "a kernel lockup panics (softlockup_panic=1) instead of a silent hang" },
	{ "DETECT_HUNG_TASK", "a hung task panics (hung_task_panic=1)" },
	{ NULL, NULL }
};

unsigned int image_guest_config_lacks(const char *text, GPtrArray **missing)
{
	g_autoptr(GHashTable) set = g_hash_table_new(g_str_hash, g_str_equal);
	g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
	g_autoptr(GPtrArray) m = g_ptr_array_new_with_free_func(g_free);

	for (char **l = lines; *l; l++)
		if (g_str_has_prefix(*l, "CONFIG_") && g_str_has_suffix(*l, "=y"))
			g_hash_table_add(set, *l);
	for (const struct image_guest_need *n = image_guest_needs; n->option; n++) {
		g_autofree char *line = g_strdup_printf("CONFIG_%s=y", n->option);

		if (!g_hash_table_contains(set, line))
			g_ptr_array_add(m, g_strdup_printf("CONFIG_%s is not =y (%s)", n->option, n->why));
	}
	if (missing)
		*missing = g_ptr_array_ref(m);
	return m->len;
}

char *image_guest_images_dir(void)
{
	g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
	g_autofree char *dir = NULL;

	if (!exe)
		return NULL;
	dir = g_path_get_dirname(exe);
	return g_build_filename(dir, "guest-images", NULL);
}

int image_build_kernel(const char *who, const char *fragment, const char *const *patches,
		       char **path)
{
	g_autofree char *gi = image_guest_images_dir();
	g_autofree char *script = NULL, *frag = NULL, *root = NULL, *cache = NULL;
	g_autofree char *out = NULL, *err = NULL;
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) gerr = NULL;
	int status = 0;
	bool tty;

	if (!gi)
		return pc_fail(ENOENT, "%s: cannot read /proc/self/exe", who);
	script = g_build_filename(gi, "kernel-build.sh", NULL);
	frag = g_build_filename(gi, "kconfig", fragment, NULL);
	if (access(script, R_OK) < 0 || access(frag, R_OK) < 0)
		return pc_fail(ENOENT, "%s: no %s or %s (make all puts them beside pmucanary)",
			       who, script, frag);
	root = image_cache_root();
	cache = g_build_filename(root, "kernels", NULL);
	g_ptr_array_add(argv, g_strdup("bash"));
	g_ptr_array_add(argv, g_strdup(script));
	g_ptr_array_add(argv, g_strdup("--cache"));
	g_ptr_array_add(argv, g_strdup(cache));
	for (size_t i = 0; patches && patches[i]; i++) {
		g_ptr_array_add(argv, g_strdup("--patch"));
		g_ptr_array_add(argv, g_strdup(patches[i]));
	}
	g_ptr_array_add(argv, g_strdup(frag));
	g_ptr_array_add(argv, NULL);

	pc_info("%s: kernel-build.sh %s (a cache hit is instant; a cold build takes minutes)",
		who, frag);
	/* On a terminal a cold build's minutes show kernel-build.sh's own
	 * progress lines; elsewhere (CI, logs) they are kept for the error. */
	tty = isatty(STDERR_FILENO);
	if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
			  tty ? NULL : &err, &status, &gerr))
		return pc_fail(EIO, "%s: cannot run bash: %s", who, gerr->message);
	if (!g_spawn_check_wait_status(status, NULL)) {
		/* kernel-build.sh ends with its reason ("error: ...") */
		g_auto(GStrv) lines = g_strsplit(err ? g_strstrip(err) : "", "\n", -1);
		guint n = g_strv_length(lines);

		return pc_fail(EIO, "%s: %s failed: %s", who, script,
			       n ? lines[n - 1] : "its messages are above");
	}
	g_strstrip(out);
	if (!*out || strchr(out, '\n'))
		return pc_fail(EIO, "%s: %s printed no single path", who, script);
	if (image_kernel_check(out, who) < 0)
		return -EIO;
	*path = g_steal_pointer(&out);
	return 0;
}

int image_small_kernel(char **path)
{
	g_autofree char *out = NULL;
	int e;

	if ((e = image_build_kernel("small guest kernel", "guest-small.config", NULL, &out)))
		return e;
	/* kernel-build.sh keeps the final .config beside the bzImage: a
	 * fragment edited without what the agent needs fails here, not as a
	 * guest that never sends a heartbeat */
	{
		g_autofree char *kdir = g_path_get_dirname(out);
		g_autofree char *cfg_path = g_build_filename(kdir, "config", NULL);
		g_autofree char *cfg = NULL;
		g_autoptr(GPtrArray) lacks = NULL;

		if (!g_file_get_contents(cfg_path, &cfg, NULL, NULL))
			return pc_fail(EIO, "small guest kernel: no %s beside it", cfg_path);
		if (image_guest_config_lacks(cfg, &lacks)) {
			g_ptr_array_add(lacks, NULL);
			g_autofree char *all = g_strjoinv("; ", (char **)lacks->pdata);

			return pc_fail(EIO, "small guest kernel %s lacks: %s", out, all);
		}
	}
	*path = g_steal_pointer(&out);
	return 0;
}

char *image_cache_root(void)
{
	const char *env = getenv("PMUCANARY_CACHE_DIR");

	if (env && *env)
		return g_canonicalize_filename(env, NULL);
	if (geteuid() == 0)
		return g_strdup("/var/cache/pmucanary");
	return g_build_filename(g_get_user_cache_dir(), "pmucanary", NULL);
}

char *image_default_cache_dir(void)
{
	g_autofree char *root = image_cache_root();

	return g_build_filename(root, "images", NULL);
}

/* ---- modules ---- */

static const char *const module_exts[] = { ".ko.xz", ".ko.zst", ".ko.gz", ".ko", NULL };

/* "kernel/drivers/misc/pvpanic/pvpanic-mmio.ko.xz" -> "pvpanic_mmio" */
static char *module_name(const char *path)
{
	const char *base = strrchr(path, '/');
	char *name;

	name = g_strdup(base ? base + 1 : path);
	for (int i = 0; module_exts[i]; i++)
		if (g_str_has_suffix(name, module_exts[i])) {
			name[strlen(name) - strlen(module_exts[i])] = 0;
			break;
		}
	g_strdelimit(name, "-", '_');
	return name;
}

struct moddep {
	char *path;
	char **deps; /* as listed in modules.dep */
};

static void moddep_free(gpointer p)
{
	struct moddep *m = p;

	g_free(m->path);
	g_strfreev(m->deps);
	g_free(m);
}

/* modprobe loads a module's listed dependencies last-first; resolving each
 * one's own dependencies first (post-order) gives a valid order either way. */
static int resolve_one(GHashTable *dep, GHashTable *builtin, const char *name, GHashTable *state,
		       GPtrArray *paths, GPtrArray *missing)
{
	struct moddep *m = g_hash_table_lookup(dep, name);
	gpointer st = g_hash_table_lookup(state, name);

	if (st == GINT_TO_POINTER(2))
		return 0;
	if (st == GINT_TO_POINTER(1))
		return pc_fail(ELOOP, "modules.dep: dependency cycle through %s", name);
	if (!m) {
		if (g_hash_table_contains(builtin, name))
			return 0;
		if (missing) {
			g_ptr_array_add(missing, g_strdup(name));
			g_hash_table_insert(state, g_strdup(name), GINT_TO_POINTER(2));
			return 0;
		}
		return pc_fail(ENOENT, "module %s: not in modules.dep nor modules.builtin", name);
	}
	g_hash_table_insert(state, g_strdup(name), GINT_TO_POINTER(1));
	for (int i = (int)g_strv_length(m->deps) - 1; i >= 0; i--) {
		g_autofree char *dn = module_name(m->deps[i]);
		int ret = resolve_one(dep, builtin, dn, state, paths, missing);

		if (ret < 0)
			return ret;
	}
	g_hash_table_insert(state, g_strdup(name), GINT_TO_POINTER(2));
	g_ptr_array_add(paths, g_strdup(m->path));
	return 0;
}

int image_modules_resolve(const char *modules_dir, const char *const *names,
			  GPtrArray **paths, GPtrArray **missing)
{
	g_autofree char *dep_path = g_build_filename(modules_dir, "modules.dep", NULL);
	g_autofree char *builtin_path = g_build_filename(modules_dir, "modules.builtin", NULL);
	g_autofree char *text = NULL, *btext = NULL;
	g_autoptr(GHashTable) dep = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, moddep_free);
	g_autoptr(GHashTable) builtin = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) state = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) miss = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) err = NULL;

	if (!g_file_get_contents(dep_path, &text, NULL, &err)) {
		if (!g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_NOENT))
			return pc_fail(EIO, "%s", err->message);
		/* no modules at all: a kernel with everything built in */
		*paths = g_steal_pointer(&out);
		if (missing)
			*missing = g_steal_pointer(&miss);
		return 0;
	}
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	for (int i = 0; lines[i]; i++) {
		char *colon = strchr(lines[i], ':');
		struct moddep *m;

		if (!colon)
			continue;
		*colon = 0;
		m = g_new0(struct moddep, 1);
		m->path = g_strdup(g_strstrip(lines[i]));
		m->deps = g_strsplit_set(g_strstrip(colon + 1), " \t", -1);
		/* drop empty tokens from repeated blanks */
		int k = 0;
		for (int j = 0; m->deps[j]; j++) {
			if (m->deps[j][0])
				m->deps[k++] = m->deps[j];
			else
				g_free(m->deps[j]);
		}
		m->deps[k] = NULL;
		g_hash_table_insert(dep, module_name(m->path), m);
	}
	if (g_file_get_contents(builtin_path, &btext, NULL, NULL)) {
		g_auto(GStrv) bl = g_strsplit(btext, "\n", -1);

		for (int i = 0; bl[i]; i++)
			if (bl[i][0])
				g_hash_table_add(builtin, module_name(g_strstrip(bl[i])));
	}
	for (int i = 0; names[i]; i++) {
		g_autofree char *n = g_strdelimit(g_strdup(names[i]), "-", '_');
		int ret = resolve_one(dep, builtin, n, state, out, missing ? miss : NULL);

		if (ret < 0)
			return ret;
	}
	*paths = g_steal_pointer(&out);
	if (missing)
		*missing = g_steal_pointer(&miss);
	return 0;
}

/* Reads a module file, decompressing .ko.xz/.ko.zst/.ko.gz (finit_module in
 * the guest wants plain ELF unless the kernel decompresses itself). */
static int module_read(const char *path, GBytes **out)
{
	char *data;
	size_t len;
	int rc;

	if ((rc = infile_read(path, INFILE_KERNEL, &data, &len)))
		return rc;
	if (g_str_has_suffix(path, ".ko")) {
		*out = g_bytes_new_take(data, len);
		return 0;
	}
	g_autofree char *raw = data;
	g_autoptr(archive_reader) a = archive_read_new();
	struct archive_entry *e;
	g_autoptr(GByteArray) buf = g_byte_array_new();
	char chunk[65536];
	la_ssize_t n;

	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	if (archive_read_open_memory(a, raw, len) != ARCHIVE_OK ||
	    archive_read_next_header(a, &e) != ARCHIVE_OK)
		return pc_fail(EIO, "module %s: cannot decompress: %s", path, archive_error_string(a));
	while ((n = archive_read_data(a, chunk, sizeof(chunk))) > 0)
		g_byte_array_append(buf, (guint8 *)chunk, (guint)n);
	if (n < 0)
		return pc_fail(EIO, "module %s: cannot decompress: %s", path, archive_error_string(a));
	*out = g_byte_array_free_to_bytes(g_steal_pointer(&buf));
	return 0;
}

/* kernel/x/y.ko.xz -> lib/modules/kernel/x/y.ko (path inside the cpio) */
static char *module_cpio_path(const char *rel)
{
	g_autofree char *plain = g_strdup(rel);

	for (int i = 0; module_exts[i]; i++)
		if (g_str_has_suffix(plain, module_exts[i])) {
			plain[strlen(plain) - strlen(module_exts[i])] = 0;
			break;
		}
	return g_strconcat("lib/modules/", plain, ".ko", NULL);
}

/* ---- the cpio ---- */

struct cpio {
	struct archive *a;
	GHashTable *dirs;
	unsigned int ino;
	const char *path;
};

static int cpio_entry(struct cpio *c, const char *name, mode_t mode, dev_t rdev,
		      const void *data, size_t len)
{
	g_autoptr(archive_entry) e = archive_entry_new();

	archive_entry_set_pathname(e, name);
	archive_entry_set_mode(e, mode);
	archive_entry_set_ino(e, ++c->ino);
	archive_entry_set_nlink(e, S_ISDIR(mode) ? 2 : 1);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_mtime(e, 0, 0); /* reproducible bytes */
	if (S_ISCHR(mode))
		archive_entry_set_rdev(e, rdev);
	archive_entry_set_size(e, S_ISREG(mode) ? (la_int64_t)len : 0);
	if (archive_write_header(c->a, e) != ARCHIVE_OK)
		return pc_fail(EIO, "%s: writing %s: %s", c->path, name, archive_error_string(c->a));
	if (S_ISREG(mode) && len &&
	    archive_write_data(c->a, data, len) != (la_ssize_t)len)
		return pc_fail(EIO, "%s: writing %s: %s", c->path, name, archive_error_string(c->a));
	return 0;
}

/* Adds every missing parent directory of name (0755). */
static int cpio_parents(struct cpio *c, const char *name)
{
	g_autofree char *dir = g_path_get_dirname(name);
	int ret;

	if (!strcmp(dir, ".") || g_hash_table_contains(c->dirs, dir))
		return 0;
	if ((ret = cpio_parents(c, dir)) < 0)
		return ret;
	g_hash_table_add(c->dirs, g_strdup(dir));
	return cpio_entry(c, dir, S_IFDIR | 0755, 0, NULL, 0);
}

static int cpio_file(struct cpio *c, const char *name, mode_t perm, const void *data, size_t len)
{
	int ret = cpio_parents(c, name);

	return ret < 0 ? ret : cpio_entry(c, name, S_IFREG | perm, 0, data, len);
}

static int cpio_dir(struct cpio *c, const char *name)
{
	g_autofree char *probe = g_build_filename(name, "x", NULL);

	return cpio_parents(c, probe);
}

static int initramfs_write(const char *path, bool compress, GBytes *agent, const char *modules_dir,
			   GPtrArray *modules, GPtrArray *module_data)
{
	g_autoptr(archive_writer) a = archive_write_new();
	g_autoptr(GHashTable) dirs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GString) list = g_string_new("");
	struct cpio c = { a, dirs, 0, path };
	int ret;

	archive_write_set_format_cpio_newc(a);
	if (compress)
		archive_write_add_filter_gzip(a);
	archive_write_set_bytes_in_last_block(a, 1);
	if (archive_write_open_filename(a, path) != ARCHIVE_OK)
		return pc_fail(EIO, "%s: %s", path, archive_error_string(a));
	/* the kernel opens /dev/console for init before devtmpfs is mounted */
	if ((ret = cpio_dir(&c, "dev")) < 0 ||
	    (ret = cpio_entry(&c, "dev/console", S_IFCHR | 0600, makedev(5, 1), NULL, 0)) < 0 ||
	    (ret = cpio_dir(&c, "proc")) < 0 || (ret = cpio_dir(&c, "sys")) < 0)
		return ret;
	if ((ret = cpio_file(&c, "init", 0755, g_bytes_get_data(agent, NULL),
			     g_bytes_get_size(agent))) < 0)
		return ret;
	for (guint i = 0; i < modules->len; i++) {
		g_autofree char *in = module_cpio_path(modules->pdata[i]);
		GBytes *b = module_data->pdata[i];

		if ((ret = cpio_file(&c, in, 0644, g_bytes_get_data(b, NULL), g_bytes_get_size(b))) < 0)
			return ret;
		g_string_append_printf(list, "/%s\n", in);
	}
	if ((ret = cpio_file(&c, IMAGE_MODULES_LIST, 0644, list->str, list->len)) < 0)
		return ret;
	(void)modules_dir;
	if (archive_write_close(a) != ARCHIVE_OK)
		return pc_fail(EIO, "%s: %s", path, archive_error_string(a));
	if (chmod(path, 0644) < 0)
		return pc_fail(errno, "chmod %s: %s", path, g_strerror(errno));
	return 0;
}

/* ---- the image ---- */

json_t *image_manifest_json(const struct image_info *info)
{
	json_t *mods = json_array();

	for (guint i = 0; info->modules && i < info->modules->len; i++)
		json_array_append_new(mods, json_string(info->modules->pdata[i]));
	return json_pack("{s:i, s:s, s:{s:s, s:s, s:s, s:s, s:I}, s:{s:s, s:I, s:b},"
			 " s:{s:s, s:s, s:I}, s:o}",
			 "builder_version", IMAGE_BUILDER_VERSION,
			 "dir", info->dir,
			 "kernel", "source", info->kernel_source, "path", info->kernel_path,
			 "release", info->release, "sha256", info->kernel_sha256,
			 "size", (json_int_t)info->kernel_size,
			 "initrd", "path", info->initrd_path, "size", (json_int_t)info->initrd_size,
			 "compressed", info->compressed,
			 "agent", "source", info->agent_source, "sha256", info->agent_sha256,
			 "size", (json_int_t)info->agent_size,
			 "modules", mods);
}

static int read_input(const char *what, const char *path, GBytes **out)
{
	char *data;
	size_t len;
	int e;

	if ((e = infile_read_limit(path, infile_limit(INFILE_KERNEL), false, what, &data, &len)))
		return e;
	*out = g_bytes_new_take(data, len);
	return 0;
}

/* QEMU runs as libvirt-qemu: warn when a parent of dir is not searchable. */
static void check_reachable(const char *dir)
{
	g_autofree char *d = g_canonicalize_filename(dir, NULL);

	while (strcmp(d, "/")) {
		struct stat st;
		char *parent;

		if (stat(d, &st) == 0 && !(st.st_mode & S_IXOTH)) {
			pc_warn("image: %s is not searchable by others: QEMU (libvirt-qemu) "
				"cannot read images under it", d);
			return;
		}
		parent = g_path_get_dirname(d);
		g_free(d);
		d = parent;
	}
}

int image_mkdir_public(const char *dir)
{
	g_autofree char *parent = NULL;
	int ret;

	if (g_file_test(dir, G_FILE_TEST_IS_DIR))
		return 0;
	parent = g_path_get_dirname(dir);
	if (strcmp(parent, dir) && (ret = image_mkdir_public(parent)) < 0)
		return ret;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return pc_fail(errno, "cannot create %s: %s", dir, g_strerror(errno));
	if (chmod(dir, 0755) < 0)
		return pc_fail(errno, "chmod %s: %s", dir, g_strerror(errno));
	return 0;
}

/* rm -rf that never follows a symlink. */
void image_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
		const char *n;

		while (d && (n = g_dir_read_name(d))) {
			g_autofree char *p = g_build_filename(path, n, NULL);

			image_remove_tree(p);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

static int write_manifest(const struct image_info *info, const char *path)
{
	g_autoptr(GError) err = NULL;
	json_t *j = image_manifest_json(info);
	char *s;

	if (!j)
		return pc_fail(ENOMEM, "manifest: cannot build JSON");
	s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(j);
	if (!s)
		return pc_fail(ENOMEM, "manifest: cannot dump JSON");
	g_autofree char *text = g_strconcat(s, "\n", NULL);
	free(s);
	if (!g_file_set_contents_full(path, text, -1, G_FILE_SET_CONTENTS_NONE, 0644, &err))
		return pc_fail(EIO, "%s", err->message);
	if (chmod(path, 0644) < 0) /* open() applied the umask */
		return pc_fail(errno, "chmod %s: %s", path, g_strerror(errno));
	return 0;
}

static void info_set_dir(struct image_info *info, const char *dir)
{
	g_free(info->dir);
	g_free(info->kernel_path);
	g_free(info->initrd_path);
	g_free(info->manifest_path);
	info->dir = g_strdup(dir);
	info->kernel_path = g_build_filename(dir, IMAGE_KERNEL_NAME, NULL);
	info->initrd_path = g_build_filename(dir, IMAGE_INITRD_NAME, NULL);
	info->manifest_path = g_build_filename(dir, IMAGE_MANIFEST_NAME, NULL);
}

static bool image_complete(const struct image_info *info)
{
	return g_file_test(info->kernel_path, G_FILE_TEST_IS_REGULAR) &&
	       g_file_test(info->initrd_path, G_FILE_TEST_IS_REGULAR) &&
	       g_file_test(info->manifest_path, G_FILE_TEST_IS_REGULAR);
}

int image_build(const struct image_options *opt, struct image_info **out)
{
	static const struct image_options defaults;
	g_autoptr(image_info) info = g_new0(struct image_info, 1);
	g_autofree char *kernel = NULL, *agent_path = NULL, *out_dir = NULL, *mod_dir = NULL;
	g_autoptr(GBytes) kbytes = NULL, abytes = NULL;
	g_autoptr(GPtrArray) mods = NULL, missing = NULL;
	g_autoptr(GPtrArray) mod_data = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	g_autofree char *hash = NULL, *final = NULL, *tmp = NULL, *cfg = NULL;
	struct stat st;
	int ret;

	if (!opt)
		opt = &defaults;
	if (opt->kernel)
		kernel = g_strdup(opt->kernel);
	else if ((ret = image_find_default(&kernel, NULL)) < 0)
		return ret;
	if ((ret = image_kernel_release(kernel, &info->release)) < 0)
		return ret;
	if ((ret = read_input("kernel", kernel, &kbytes)) < 0)
		return ret;
	agent_path = opt->agent ? g_strdup(opt->agent) : image_default_agent();
	if ((ret = read_input("agent", agent_path, &abytes)) < 0)
		return ret;
	if (opt->modules_dir)
		mod_dir = g_strdup(opt->modules_dir);
	else if (info->release[0])
		mod_dir = g_build_filename("/lib/modules", info->release, NULL);
	if (mod_dir) {
		if ((ret = image_modules_resolve(mod_dir, opt->modules ? opt->modules :
						 image_default_modules, &mods, &missing)) < 0)
			return ret;
		if (!g_file_test(mod_dir, G_FILE_TEST_IS_DIR))
			pc_info("image: no %s: image without modules", mod_dir);
		for (guint i = 0; i < missing->len; i++)
			pc_warn("image: module %s is not in %s (neither module nor built in)",
				(char *)missing->pdata[i], mod_dir);
	} else {
		pc_warn("image: kernel %s: release unknown, image without modules", kernel);
		mods = g_ptr_array_new_with_free_func(g_free);
	}

	info->kernel_source = g_canonicalize_filename(kernel, NULL);
	info->agent_source = g_canonicalize_filename(agent_path, NULL);
	info->agent_sha256 = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, abytes);
	info->kernel_sha256 = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, kbytes);
	info->kernel_size = g_bytes_get_size(kbytes);
	info->agent_size = g_bytes_get_size(abytes);
	info->compressed = opt->compress;
	info->modules = g_ptr_array_new_with_free_func(g_free);

	cfg = g_strdup_printf("pmucanary-image v%d compress=%d kernel=%s agent=%s\n",
			      IMAGE_BUILDER_VERSION, opt->compress, info->kernel_sha256,
			      info->agent_sha256);
	g_checksum_update(sum, (guchar *)cfg, -1);
	for (guint i = 0; i < mods->len; i++) {
		g_autofree char *p = g_build_filename(mod_dir, mods->pdata[i], NULL);
		GBytes *b;

		if ((ret = module_read(p, &b)) < 0)
			return ret;
		g_ptr_array_add(mod_data, b);
		g_ptr_array_add(info->modules, g_strdup(mods->pdata[i]));
		g_autofree char *mh = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, b);
		g_autofree char *line = g_strdup_printf("module %s %s\n", (char *)mods->pdata[i], mh);
		g_checksum_update(sum, (guchar *)line, -1);
	}
	hash = g_strndup(g_checksum_get_string(sum), 16);

	out_dir = opt->out_dir ? g_strdup(opt->out_dir) : image_default_cache_dir();
	final = g_build_filename(out_dir, hash, NULL);
	info_set_dir(info, final);
	if (image_complete(info)) {
		info->cached = true;
		if (stat(info->initrd_path, &st) == 0)
			info->initrd_size = (uint64_t)st.st_size;
		pc_debug("image: cache hit %s", final);
		*out = g_steal_pointer(&info);
		return 0;
	}

	if (g_file_test(final, G_FILE_TEST_IS_DIR)) {
		pc_warn("image: %s is incomplete: rebuilding it", final);
		image_remove_tree(final);
	}
	if ((ret = image_mkdir_public(out_dir)) < 0)
		return ret;
	check_reachable(out_dir);
	tmp = g_strdup_printf("%s/.tmp-%s-%d", out_dir, hash, (int)getpid());
	image_remove_tree(tmp);
	if (mkdir(tmp, 0755) < 0 || chmod(tmp, 0755) < 0)
		return pc_fail(errno, "image: cannot create %s: %s", tmp, g_strerror(errno));
	info_set_dir(info, tmp);
	{
		g_autoptr(GError) err = NULL;

		if (!g_file_set_contents_full(info->kernel_path, g_bytes_get_data(kbytes, NULL),
					      (gssize)g_bytes_get_size(kbytes),
					      G_FILE_SET_CONTENTS_NONE, 0644, &err)) {
			ret = pc_fail(EIO, "image: %s", err->message);
			goto fail;
		}
		if (chmod(info->kernel_path, 0644) < 0) {
			ret = pc_fail(errno, "chmod %s: %s", info->kernel_path, g_strerror(errno));
			goto fail;
		}
	}
	if ((ret = initramfs_write(info->initrd_path, opt->compress, abytes, mod_dir, info->modules,
				   mod_data)) < 0)
		goto fail;
	if (stat(info->initrd_path, &st) == 0)
		info->initrd_size = (uint64_t)st.st_size;
	info_set_dir(info, final); /* the manifest names the final paths */
	{
		g_autofree char *tmp_manifest = g_build_filename(tmp, IMAGE_MANIFEST_NAME, NULL);

		if ((ret = write_manifest(info, tmp_manifest)) < 0)
			goto fail;
	}
	if (rename(tmp, final) < 0) {
		int e = errno;

		image_remove_tree(tmp);
		info_set_dir(info, final);
		/* a concurrent build of the same inputs won the race */
		if ((e == EEXIST || e == ENOTEMPTY) && image_complete(info)) {
			info->cached = true;
			*out = g_steal_pointer(&info);
			return 0;
		}
		return pc_fail(e, "image: rename %s: %s", final, g_strerror(e));
	}
	pc_info("image: built %s", final);
	*out = g_steal_pointer(&info);
	return 0;
fail:
	image_remove_tree(tmp);
	return ret;
}
