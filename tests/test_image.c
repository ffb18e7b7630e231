/* Tests for lib/image: module resolution on a fixture tree, the cpio read
 * back with libarchive, the content-addressed cache, bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "image.h"
#include "log.h"

#include <archive.h>
#include <archive_entry.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char *fixture_dir(void)
{
	const char *top = getenv("PMUCANARY_TOP");

	return g_build_filename(top ? top : ".", "tests", "data", "modules", NULL);
}

/* A scratch directory with a fake kernel and agent. */
struct scratch {
	char *dir, *kernel, *agent, *out;
};

static void write_file(const char *path, const char *text)
{
	assert_true(g_file_set_contents(path, text, -1, NULL));
}

/* The smallest file the x86 boot header check takes for a bzImage:
 * 0xaa55, "HdrS", protocol 2.15, LOADED_HIGH; release at 0x300. */
#define FAKE_BZ_SIZE 0x400
static void fake_bzimage(char img[FAKE_BZ_SIZE], const char *release)
{
	memset(img, 0, FAKE_BZ_SIZE);
	img[0x1fe] = 0x55;
	img[0x1ff] = (char)0xaa;
	memcpy(img + 0x202, "HdrS", 4);
	img[0x206] = 0x0f;
	img[0x207] = 0x02;
	img[0x211] = 1;
	img[0x20e] = 0x00; /* version string at 0x200 + 0x100 */
	img[0x20f] = 0x01;
	if (release)
		snprintf(img + 0x300, 0x100, "%s (me@host) #1 SMP", release);
}

static int scratch_setup(void **state)
{
	struct scratch *s = g_new0(struct scratch, 1);

	s->dir = g_dir_make_tmp("pmucanary-test-image-XXXXXX", NULL);
	assert_non_null(s->dir);
	s->kernel = g_build_filename(s->dir, "vmlinuz-9.9.9-test", NULL);
	s->agent = g_build_filename(s->dir, "agent", NULL);
	s->out = g_build_filename(s->dir, "images", NULL);
	char img[FAKE_BZ_SIZE];

	fake_bzimage(img, NULL);
	assert_true(g_file_set_contents(s->kernel, img, sizeof(img), NULL));
	write_file(s->agent, "#!/bin/agent\n");
	chmod(s->kernel, 0600);
	*state = s;
	return 0;
}

static void rm_rf(const char *path)
{
	g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
	const char *n;

	while (d && (n = g_dir_read_name(d))) {
		g_autofree char *p = g_build_filename(path, n, NULL);

		if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
			rm_rf(p);
		else
			unlink(p);
	}
	rmdir(path);
}

static int scratch_teardown(void **state)
{
	struct scratch *s = *state;

	rm_rf(s->dir);
	g_free(s->dir);
	g_free(s->kernel);
	g_free(s->agent);
	g_free(s->out);
	g_free(s);
	return 0;
}

static struct image_options scratch_options(struct scratch *s, const char *mods)
{
	struct image_options o = {
		.kernel = s->kernel, .modules_dir = mods, .agent = s->agent, .out_dir = s->out,
	};

	return o;
}

/* ---- modules.dep ---- */

static void test_resolve_dependency_order(void **state)
{
	g_autofree char *dir = fixture_dir();
	g_autoptr(GPtrArray) paths = NULL;
	static const char *const want[] = {
		"kernel/drivers/virtio/virtio_ring.ko",
		"kernel/drivers/virtio/virtio.ko",
		"kernel/drivers/virtio/virtio_pci_modern_dev.ko",
		"kernel/drivers/virtio/virtio_pci_legacy_dev.ko",
		"kernel/drivers/virtio/virtio_pci.ko",
		"kernel/drivers/virtio/virtio_mmio.ko.xz",
		"kernel/drivers/char/virtio_console.ko",
		"kernel/drivers/misc/pvpanic/pvpanic.ko",
		"kernel/drivers/misc/pvpanic/pvpanic-mmio.ko",
	};

	assert_int_equal(image_modules_resolve(dir, image_default_modules, &paths, NULL), 0);
	assert_int_equal(paths->len, G_N_ELEMENTS(want));
	for (guint i = 0; i < paths->len; i++)
		assert_string_equal(paths->pdata[i], want[i]);
}

static void test_resolve_dash_and_single(void **state)
{
	g_autofree char *dir = fixture_dir();
	g_autoptr(GPtrArray) paths = NULL;
	const char *names[] = { "pvpanic-mmio", "virtio_console", NULL };

	assert_int_equal(image_modules_resolve(dir, names, &paths, NULL), 0);
	assert_int_equal(paths->len, 5);
	assert_string_equal(paths->pdata[0], "kernel/drivers/misc/pvpanic/pvpanic.ko");
	assert_string_equal(paths->pdata[1], "kernel/drivers/misc/pvpanic/pvpanic-mmio.ko");
	assert_string_equal(paths->pdata[2], "kernel/drivers/virtio/virtio_ring.ko");
	assert_string_equal(paths->pdata[3], "kernel/drivers/virtio/virtio.ko");
	assert_string_equal(paths->pdata[4], "kernel/drivers/char/virtio_console.ko");
	(void)state;
}

static void test_resolve_builtin_and_missing(void **state)
{
	g_autofree char *dir = fixture_dir();
	g_autoptr(GPtrArray) paths = NULL, missing = NULL;
	const char *builtin[] = { "virtio_blk", "some_builtin", NULL };
	const char *bad[] = { "virtio_ring", "no_such_module", NULL };

	assert_int_equal(image_modules_resolve(dir, builtin, &paths, NULL), 0);
	assert_int_equal(paths->len, 0);
	g_clear_pointer(&paths, g_ptr_array_unref);

	assert_int_equal(image_modules_resolve(dir, bad, &paths, NULL), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "no_such_module"));

	assert_int_equal(image_modules_resolve(dir, bad, &paths, &missing), 0);
	assert_int_equal(paths->len, 1);
	assert_int_equal(missing->len, 1);
	assert_string_equal(missing->pdata[0], "no_such_module");
}

static void test_resolve_no_modules_dir(void **state)
{
	g_autoptr(GPtrArray) paths = NULL;

	assert_int_equal(image_modules_resolve("/nonexistent/modules", image_default_modules,
					       &paths, NULL), 0);
	assert_int_equal(paths->len, 0);
}

/* ---- kernel discovery ---- */

static void test_find_default_newest(void **state)
{
	struct scratch *s = *state;
	g_autofree char *boot = g_build_filename(s->dir, "boot", NULL);
	g_autofree char *k9 = g_build_filename(boot, "vmlinuz-6.1.0-9-amd64", NULL);
	g_autofree char *k10 = g_build_filename(boot, "vmlinuz-6.1.0-10-amd64", NULL);
	g_autofree char *cfg = g_build_filename(boot, "config-6.1.0-11-amd64", NULL);
	g_autofree char *kernel = NULL, *release = NULL;

	mkdir(boot, 0755);
	assert_int_equal(image_find_default_in(boot, &kernel, &release), -ENOENT);
	write_file(k9, "x");
	write_file(k10, "x");
	write_file(cfg, "x");
	assert_int_equal(image_find_default_in(boot, &kernel, &release), 0);
	assert_string_equal(kernel, k10);
	assert_string_equal(release, "6.1.0-10-amd64");
}

static void test_release_from_bzimage_header(void **state)
{
	struct scratch *s = *state;
	g_autofree char *path = g_build_filename(s->dir, "bzImage", NULL);
	g_autofree char *release = NULL;
	char img[FAKE_BZ_SIZE];

	fake_bzimage(img, "6.6.6-fake");
	assert_true(g_file_set_contents(path, img, sizeof(img), NULL));
	assert_int_equal(image_kernel_release(path, &release), 0);
	assert_string_equal(release, "6.6.6-fake");
	g_clear_pointer(&release, g_free);
	assert_int_equal(image_kernel_release(s->kernel, &release), 0);
	assert_string_equal(release, "9.9.9-test");
}

/* Files that are no kernel are bad input before anything is built: the
 * image would boot nothing and the fleet would call it INFRA. */
static void test_not_a_kernel(void **state)
{
	struct scratch *s = *state;
	g_autofree char *path = g_build_filename(s->dir, "k", NULL);
	g_autofree char *fifo = g_build_filename(s->dir, "fifo", NULL);
	g_autofree char *release = NULL;
	struct image_options o = scratch_options(s, NULL);
	g_autoptr(image_info) info = NULL;
	char img[FAKE_BZ_SIZE];
	char elf[64] = "\177ELF\2\1\1";

	write_file(path, "#!/bin/sh\necho not a kernel\n");
	assert_int_equal(image_kernel_check(path, "--kernel k"), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "--kernel k: not a kernel image"));
	o.kernel = path;
	assert_int_equal(image_build(&o, &info), -EINVAL);
	assert_null(info);
	assert_non_null(strstr(pc_errmsg(), path));
	assert_non_null(strstr(pc_errmsg(), "not a kernel image"));
	assert_int_equal(image_kernel_release(path, &release), -EINVAL);

	/* A bzImage of boot protocol 2.05, and an old zImage. */
	fake_bzimage(img, NULL);
	img[0x206] = 0x05;
	assert_int_equal(image_kernel_identify("old", img, sizeof(img)), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "old: not a usable kernel image (x86 boot protocol 2.05, older than 2.06)"));
	fake_bzimage(img, NULL);
	img[0x211] = 0;
	assert_int_equal(image_kernel_identify("z", img, sizeof(img)), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "zImage"));
	fake_bzimage(img, NULL);
	assert_int_equal(image_kernel_identify("bz", img, sizeof(img)), IMAGE_KERNEL_BZIMAGE);
	/* Cut before the header ends. */
	assert_int_equal(image_kernel_identify("cut", img, 0x205), -EINVAL);

	/* ELF: an x86-64 executable is a vmlinux; a module (ET_REL) is not. */
	elf[16] = 2;
	elf[18] = 62;
	assert_int_equal(image_kernel_identify("vmlinux", elf, sizeof(elf)), IMAGE_KERNEL_ELF);
	elf[16] = 1;
	assert_int_equal(image_kernel_identify("mod.ko", elf, sizeof(elf)), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "mod.ko: not a kernel image (an ELF file"));

	/* A static x86-64 executable boots under QEMU only with the PVH
	 * note (a kernel with CONFIG_PVH): with it, a vmlinux; without it,
	 * or with the note under another name or type, refused. */
	{
		static const struct {
			const char *name;
			unsigned int type;
			bool ok;
		} notes[] = { { "Xen", 18, true }, { "Xen", 17, false }, { "GNU", 18, false },
			      { NULL, 0, false } };

		for (size_t i = 0; i < G_N_ELEMENTS(notes); i++) {
			g_autofree char *vm = g_strdup_printf("%s/vmlinux%zu", s->dir, i);
			guint8 f[512] = { 0 };
			Elf64_Ehdr *eh = (Elf64_Ehdr *)f;
			Elf64_Phdr *ph = (Elf64_Phdr *)(f + sizeof(*eh));
			Elf64_Nhdr *nh = (Elf64_Nhdr *)(f + 256);

			memcpy(eh->e_ident, ELFMAG, SELFMAG);
			eh->e_ident[EI_CLASS] = ELFCLASS64;
			eh->e_ident[EI_DATA] = ELFDATA2LSB;
			eh->e_type = ET_EXEC;
			eh->e_machine = EM_X86_64;
			eh->e_phoff = sizeof(*eh);
			eh->e_phentsize = sizeof(*ph);
			eh->e_phnum = 2;
			ph[0].p_type = PT_LOAD;
			if (notes[i].name) {
				ph[1].p_type = PT_NOTE;
				ph[1].p_offset = 256;
				ph[1].p_filesz = sizeof(*nh) + 4 + 8;
				nh->n_namesz = 4;
				nh->n_descsz = 8;
				nh->n_type = notes[i].type;
				memcpy(nh + 1, notes[i].name, 4);
			}
			assert_true(g_file_set_contents(vm, (const char *)f, sizeof(f), NULL));
			if (notes[i].ok) {
				assert_int_equal(image_kernel_check(vm, NULL), IMAGE_KERNEL_ELF);
				continue;
			}
			assert_int_equal(image_kernel_check(vm, "--kernel v"), -EINVAL);
			assert_non_null(strstr(pc_errmsg(), "--kernel v: not a bootable vmlinux"));
			assert_non_null(strstr(pc_errmsg(), "PVH"));
		}
	}

	/* A FIFO is refused without blocking. */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(image_kernel_check(fifo, NULL), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "not a regular file"));
}

/* ---- the image ---- */

struct cpio_entry {
	mode_t mode;
	dev_t rdev;
	GBytes *data;
};

static void cpio_entry_free(gpointer p)
{
	struct cpio_entry *e = p;

	g_bytes_unref(e->data);
	g_free(e);
}

/* Reads the cpio (any filter) into a name -> entry table. */
static GHashTable *cpio_read(const char *path, const char **format)
{
	GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, cpio_entry_free);
	struct archive *a = archive_read_new();
	struct archive_entry *ae;

	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	assert_int_equal(archive_read_open_filename(a, path, 65536), ARCHIVE_OK);
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
		struct cpio_entry *e = g_new0(struct cpio_entry, 1);
		GByteArray *b = g_byte_array_new();
		char buf[4096];
		la_ssize_t n;

		e->mode = archive_entry_mode(ae);
		e->rdev = archive_entry_rdev(ae);
		while ((n = archive_read_data(a, buf, sizeof(buf))) > 0)
			g_byte_array_append(b, (guint8 *)buf, (guint)n);
		e->data = g_byte_array_free_to_bytes(b);
		g_hash_table_insert(t, g_strdup(archive_entry_pathname(ae)), e);
	}
	if (format)
		*format = archive_filter_code(a, 0) == ARCHIVE_FILTER_GZIP ? "gzip" : "none";
	archive_read_free(a);
	return t;
}

static void assert_entry_text(GHashTable *t, const char *name, mode_t mode, const char *text)
{
	struct cpio_entry *e = g_hash_table_lookup(t, name);

	if (!e)
		fail_msg("no %s in the cpio", name);
	assert_int_equal(e->mode, mode);
	assert_int_equal(g_bytes_get_size(e->data), strlen(text));
	assert_memory_equal(g_bytes_get_data(e->data, NULL), text, strlen(text));
}

static void test_build_cpio_contents(void **state)
{
	struct scratch *s = *state;
	g_autofree char *mods = fixture_dir();
	struct image_options o = scratch_options(s, mods);
	g_autoptr(image_info) info = NULL;
	g_autoptr(GHashTable) t = NULL;
	struct stat st;
	const char *filter;

	assert_int_equal(image_build(&o, &info), 0);
	assert_false(info->cached);
	assert_string_equal(info->release, "9.9.9-test");
	assert_true(g_str_has_prefix(info->dir, s->out));
	assert_int_equal(info->modules->len, 9);

	/* QEMU runs as another user: everything world-readable */
	assert_int_equal(stat(info->dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat(info->kernel_path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(stat(info->initrd_path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(stat(info->manifest_path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);

	t = cpio_read(info->initrd_path, &filter);
	assert_string_equal(filter, "none");
	assert_entry_text(t, "init", S_IFREG | 0755, "#!/bin/agent\n");
	assert_entry_text(t, IMAGE_MODULES_LIST, S_IFREG | 0644,
			  "/lib/modules/kernel/drivers/virtio/virtio_ring.ko\n"
			  "/lib/modules/kernel/drivers/virtio/virtio.ko\n"
			  "/lib/modules/kernel/drivers/virtio/virtio_pci_modern_dev.ko\n"
			  "/lib/modules/kernel/drivers/virtio/virtio_pci_legacy_dev.ko\n"
			  "/lib/modules/kernel/drivers/virtio/virtio_pci.ko\n"
			  "/lib/modules/kernel/drivers/virtio/virtio_mmio.ko\n"
			  "/lib/modules/kernel/drivers/char/virtio_console.ko\n"
			  "/lib/modules/kernel/drivers/misc/pvpanic/pvpanic.ko\n"
			  "/lib/modules/kernel/drivers/misc/pvpanic/pvpanic-mmio.ko\n");
	assert_entry_text(t, "lib/modules/kernel/drivers/misc/pvpanic/pvpanic-mmio.ko",
			  S_IFREG | 0644, "fake module pvpanic-mmio\n");
	/* the .ko.xz went in decompressed */
	assert_entry_text(t, "lib/modules/kernel/drivers/virtio/virtio_mmio.ko", S_IFREG | 0644,
			  "fake module virtio_mmio\n");
	struct cpio_entry *con = g_hash_table_lookup(t, "dev/console");
	assert_non_null(con);
	assert_int_equal(con->mode & S_IFMT, S_IFCHR);
	assert_int_equal(major(con->rdev), 5);
	assert_int_equal(minor(con->rdev), 1);
	assert_non_null(g_hash_table_lookup(t, "proc"));
	assert_non_null(g_hash_table_lookup(t, "sys"));

	/* the kernel copy and the manifest */
	g_autofree char *kcopy = NULL;
	gsize klen = 0;
	assert_true(g_file_get_contents(info->kernel_path, &kcopy, &klen, NULL));
	assert_int_equal(klen, FAKE_BZ_SIZE);
	assert_memory_equal(kcopy + 0x202, "HdrS", 4);
	json_error_t jerr;
	json_t *m = json_load_file(info->manifest_path, 0, &jerr);
	assert_non_null(m);
	assert_string_equal(json_string_value(json_object_get(json_object_get(m, "kernel"), "release")),
			    "9.9.9-test");
	assert_int_equal(json_array_size(json_object_get(m, "modules")), 9);
	assert_string_equal(json_string_value(json_array_get(json_object_get(m, "modules"), 0)),
			    "kernel/drivers/virtio/virtio_ring.ko");
	json_decref(m);
}

static void test_build_cache_hit(void **state)
{
	struct scratch *s = *state;
	g_autofree char *mods = fixture_dir();
	struct image_options o = scratch_options(s, mods);
	g_autoptr(image_info) first = NULL, second = NULL, other = NULL;
	struct stat st1, st2;

	assert_int_equal(image_build(&o, &first), 0);
	assert_int_equal(stat(first->initrd_path, &st1), 0);
	usleep(20000);
	assert_int_equal(image_build(&o, &second), 0);
	assert_true(second->cached);
	assert_string_equal(first->dir, second->dir);
	assert_int_equal(stat(second->initrd_path, &st2), 0);
	assert_int_equal(st1.st_mtim.tv_sec, st2.st_mtim.tv_sec);
	assert_int_equal(st1.st_mtim.tv_nsec, st2.st_mtim.tv_nsec);
	assert_int_equal(st1.st_ino, st2.st_ino);

	/* another agent is another image */
	write_file(s->agent, "#!/bin/agent v2\n");
	assert_int_equal(image_build(&o, &other), 0);
	assert_false(other->cached);
	assert_string_not_equal(other->dir, first->dir);
}

/* An image directory left incomplete (a build killed before its manifest
 * was written) is no cache hit: it is removed and built again in place. */
static void test_build_incomplete_rebuilt(void **state)
{
	struct scratch *s = *state;
	g_autofree char *mods = fixture_dir();
	struct image_options o = scratch_options(s, mods);
	g_autoptr(image_info) first = NULL, second = NULL;
	g_autofree char *manifest = NULL, *stray = NULL;

	alarm(20); /* removing the old tree must end: SIGALRM fails the suite */
	assert_int_equal(image_build(&o, &first), 0);
	manifest = g_build_filename(first->dir, IMAGE_MANIFEST_NAME, NULL);
	stray = g_build_filename(first->dir, "stray", NULL);
	assert_int_equal(unlink(manifest), 0);
	write_file(stray, "left by the killed build\n");
	assert_int_equal(image_build(&o, &second), 0);
	assert_false(second->cached);
	assert_string_equal(first->dir, second->dir);
	assert_true(g_file_test(manifest, G_FILE_TEST_IS_REGULAR));
	assert_false(g_file_test(stray, G_FILE_TEST_EXISTS));
	alarm(0);
}

static void test_build_compressed(void **state)
{
	struct scratch *s = *state;
	g_autofree char *mods = fixture_dir();
	struct image_options o = scratch_options(s, mods);
	g_autoptr(image_info) plain = NULL, gz = NULL;
	g_autoptr(GHashTable) t = NULL;
	const char *filter;

	assert_int_equal(image_build(&o, &plain), 0);
	o.compress = true;
	assert_int_equal(image_build(&o, &gz), 0);
	assert_string_not_equal(plain->dir, gz->dir);
	assert_true(gz->compressed);
	t = cpio_read(gz->initrd_path, &filter);
	assert_string_equal(filter, "gzip");
	assert_entry_text(t, "init", S_IFREG | 0755, "#!/bin/agent\n");
}

static void test_build_without_modules(void **state)
{
	struct scratch *s = *state;
	g_autofree char *none = g_build_filename(s->dir, "no-modules", NULL);
	struct image_options o = scratch_options(s, none);
	g_autoptr(image_info) info = NULL;
	g_autoptr(GHashTable) t = NULL;

	assert_int_equal(image_build(&o, &info), 0);
	assert_int_equal(info->modules->len, 0);
	t = cpio_read(info->initrd_path, NULL);
	assert_entry_text(t, IMAGE_MODULES_LIST, S_IFREG | 0644, "");
	assert_entry_text(t, "init", S_IFREG | 0755, "#!/bin/agent\n");
}

static void test_build_bad_input(void **state)
{
	struct scratch *s = *state;
	g_autofree char *mods = fixture_dir();
	g_autofree char *nokernel = g_build_filename(s->dir, "vmlinuz-missing", NULL);
	g_autofree char *noagent = g_build_filename(s->dir, "no-agent", NULL);
	struct image_options o = scratch_options(s, mods);
	g_autoptr(image_info) info = NULL;

	o.kernel = nokernel;
	assert_int_equal(image_build(&o, &info), -ENOENT);
	assert_null(info);
	assert_non_null(strstr(pc_errmsg(), nokernel));
	assert_non_null(strstr(pc_errmsg(), "kernel"));

	o.kernel = s->kernel;
	o.agent = noagent;
	assert_int_equal(image_build(&o, &info), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), noagent));
	assert_non_null(strstr(pc_errmsg(), "agent"));
}

/* The small guest kernel's fragment (allnoconfig: anything it does not
 * list is off) lists everything the agent and the fleet need built in; a
 * fragment missing one is told by name. */
static void test_small_fragment_guest_needs(void **state)
{
	const char *top = getenv("PMUCANARY_TOP");
	g_autofree char *path = g_build_filename(top ? top : ".", "guest-images", "kconfig",
						 "guest-small.config", NULL);
	g_autofree char *text = NULL, *cut = NULL;
	g_autoptr(GPtrArray) lacks = NULL;
	unsigned int needs = 0;
	char *p;

	(void)state;
	while (image_guest_needs[needs].option)
		needs++;
	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	assert_int_equal(image_guest_config_lacks(text, &lacks), 0);
	g_clear_pointer(&lacks, g_ptr_array_unref);
	/* the line dropped: the lack names it and why */
	cut = g_strdup(text);
	p = strstr(cut, "CONFIG_PVPANIC_MMIO=y\n");
	assert_non_null(p);
	memmove(p, p + strlen("CONFIG_PVPANIC_MMIO=y\n"), strlen(p + strlen("CONFIG_PVPANIC_MMIO=y\n")) + 1);
	assert_int_equal(image_guest_config_lacks(cut, &lacks), 1);
	assert_non_null(strstr(lacks->pdata[0], "CONFIG_PVPANIC_MMIO"));
	assert_non_null(strstr(lacks->pdata[0], "GUEST_CRASH"));
	/* =m is not built in; nothing at all lacks everything */
	assert_int_equal(image_guest_config_lacks("CONFIG_VIRTIO_CONSOLE=m\n", NULL),
			 needs);
	assert_int_equal(image_guest_config_lacks(NULL, NULL), needs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_fragment_guest_needs),
		cmocka_unit_test(test_resolve_dependency_order),
		cmocka_unit_test(test_resolve_dash_and_single),
		cmocka_unit_test(test_resolve_builtin_and_missing),
		cmocka_unit_test(test_resolve_no_modules_dir),
		cmocka_unit_test_setup_teardown(test_find_default_newest, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_release_from_bzimage_header, scratch_setup,
						scratch_teardown),
		cmocka_unit_test_setup_teardown(test_not_a_kernel, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_build_cpio_contents, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_build_cache_hit, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_build_compressed, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_build_incomplete_rebuilt, scratch_setup,
						scratch_teardown),
		cmocka_unit_test_setup_teardown(test_build_without_modules, scratch_setup,
						scratch_teardown),
		cmocka_unit_test_setup_teardown(test_build_bad_input, scratch_setup, scratch_teardown),
	};

	log_set_level(LOG_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
