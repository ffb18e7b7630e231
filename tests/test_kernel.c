/* Tests for lib/kernel: KERNEL[:NAME] resolution (image path, installed
 * release, .deb), the config sources including IKCONFIG inside a bzImage,
 * bad input, and the lab-host check. Every fixture (bzImages, .deb files,
 * modules) is built at run time under a g_dir_make_tmp() directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "image.h"
#include "kernel.h"
#include "log.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REL "6.6.6-fake"

/* A config with every lab-host need, built in. */
static const char full_config[] =
	"#\n# Automatically generated file; DO NOT EDIT.\n#\n"
	"CONFIG_LOCALVERSION=\"-fake\"\n"
	"CONFIG_VIRTIO_PCI=y\nCONFIG_VIRTIO_CONSOLE=y\nCONFIG_NET_9P=y\nCONFIG_NET_9P_VIRTIO=y\n"
	"CONFIG_9P_FS=y\nCONFIG_OVERLAY_FS=y\nCONFIG_KVM=y\nCONFIG_KVM_AMD=y\nCONFIG_KVM_INTEL=y\n"
	"CONFIG_PERF_EVENTS=y\nCONFIG_DEVTMPFS=y\nCONFIG_TMPFS=y\nCONFIG_BLK_DEV_INITRD=y\n"
	"CONFIG_SERIAL_8250_CONSOLE=y\nCONFIG_PROC_FS=y\nCONFIG_SYSFS=y\nCONFIG_UNIX=y\n"
	"CONFIG_MULTIUSER=y\nCONFIG_NAMESPACES=y\nCONFIG_BINFMT_ELF=y\n"
	"CONFIG_PVPANIC=y\nCONFIG_PVPANIC_MMIO=y\nCONFIG_MAGIC_SYSRQ=y\nCONFIG_TMPFS_XATTR=y\n"
	"CONFIG_SECCOMP_FILTER=y\nCONFIG_IKCONFIG=y\n"
	"# CONFIG_DEBUG_INFO is not set\n";

struct scratch {
	char *dir, *boot, *modroot, *cache;
};

static void write_file(const char *path, const void *data, gssize len)
{
	assert_true(g_file_set_contents(path, data, len, NULL));
}

static void mkdir_p(const char *dir)
{
	assert_int_equal(g_mkdir_with_parents(dir, 0755), 0);
}

static int scratch_setup(void **state)
{
	struct scratch *s = g_new0(struct scratch, 1);

	s->dir = g_dir_make_tmp("pmucanary-test-kernel-XXXXXX", NULL);
	assert_non_null(s->dir);
	s->boot = g_build_filename(s->dir, "boot", NULL);
	s->modroot = g_build_filename(s->dir, "lib-modules", NULL);
	s->cache = g_build_filename(s->dir, "cache", NULL);
	mkdir_p(s->boot);
	mkdir_p(s->modroot);
	*state = s;
	return 0;
}

static void rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
		const char *n;

		chmod(path, 0755);
		while (d && (n = g_dir_read_name(d))) {
			g_autofree char *p = g_build_filename(path, n, NULL);

			rm_rf(p);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

static int scratch_teardown(void **state)
{
	struct scratch *s = *state;

	rm_rf(s->dir);
	g_free(s->dir);
	g_free(s->boot);
	g_free(s->modroot);
	g_free(s->cache);
	g_free(s);
	return 0;
}

static struct kernel_opts scratch_opts(struct scratch *s)
{
	struct kernel_opts o = { .boot_dir = s->boot, .modules_root = s->modroot,
				 .cache_dir = s->cache };

	return o;
}

/* ---- fixtures: compression, bzImage, ELF modules, .deb ---- */

static la_ssize_t bytes_write(struct archive *a, void *ud, const void *buf, size_t n)
{
	g_byte_array_append(ud, buf, (guint)n);
	return (la_ssize_t)n;
}

/* data compressed with filter (ARCHIVE_FILTER_GZIP, _XZ, ...). */
static GByteArray *compress(const void *data, size_t len, int filter)
{
	GByteArray *out = g_byte_array_new();
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();

	assert_int_equal(archive_write_set_format_raw(a), ARCHIVE_OK);
	assert_int_equal(archive_write_add_filter(a, filter), ARCHIVE_OK);
	if (filter == ARCHIVE_FILTER_XZ)
		archive_write_set_filter_option(a, "xz", "compression-level", "1");
	archive_write_set_bytes_in_last_block(a, 1);
	assert_int_equal(archive_write_open(a, out, NULL, bytes_write, NULL), ARCHIVE_OK);
	archive_entry_set_pathname(e, "payload");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_size(e, (la_int64_t)len);
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	assert_int_equal(archive_write_data(a, data, len), (la_ssize_t)len);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_entry_free(e);
	archive_write_free(a);
	return out;
}

static void put16(guint8 *p, guint16 v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void put32(guint8 *p, guint32 v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (v >> (8 * i)) & 0xff;
}

static void put64(guint8 *p, guint64 v)
{
	put32(p, (guint32)v);
	put32(p + 4, (guint32)(v >> 32));
}

/* A fake bzImage: boot protocol 2.15, one setup sector, the kernel_version
 * string "<release> (me@host) #1 SMP" (none when release is NULL), and a
 * payload compressed with filter holding pad bytes of vmlinux, then, when
 * config is not NULL, "IKCFG_ST" + gzip(config) + "IKCFG_ED". */
static GByteArray *bzimage(const char *release, const char *config, int filter, size_t pad)
{
	GByteArray *img = g_byte_array_new();
	g_autoptr(GByteArray) blob = g_byte_array_new();
	g_autoptr(GByteArray) payload = NULL;
	guint8 hdr[0x420] = { 0 };

	for (size_t i = 0; i < pad; i++) {
		guint8 c = (guint8)("vmlinux"[i % 7] ^ (i * 2654435761u >> 24));

		g_byte_array_append(blob, &c, 1);
	}
	if (config) {
		g_autoptr(GByteArray) gz = compress(config, strlen(config), ARCHIVE_FILTER_GZIP);

		g_byte_array_append(blob, (guint8 *)"IKCFG_ST", 8);
		g_byte_array_append(blob, gz->data, gz->len);
		g_byte_array_append(blob, (guint8 *)"IKCFG_ED", 8);
	}
	g_byte_array_append(blob, (guint8 *)"tail of vmlinux", 15);
	payload = compress(blob->data, blob->len, filter);

	hdr[0x1f1] = 1;                /* setup_sects: payload area from 0x400 */
	put16(hdr + 0x1fe, 0xaa55);
	memcpy(hdr + 0x202, "HdrS", 4);
	put16(hdr + 0x206, 0x020f);
	hdr[0x211] = 1;                /* loadflags: LOADED_HIGH, a bzImage */
	if (release) {
		put16(hdr + 0x20e, 0x100); /* version string at 0x300 */
		snprintf((char *)hdr + 0x300, 0x100, "%s (me@host) #1 SMP", release);
	}
	put32(hdr + 0x248, 0x20);      /* payload_offset */
	put32(hdr + 0x24c, payload->len);
	g_byte_array_append(img, hdr, sizeof(hdr));
	g_byte_array_append(img, payload->data, payload->len);
	g_byte_array_append(img, (guint8 *)"\0\0\0\0", 4);
	return img;
}

/* A bzImage whose gzip payload inflates to mib MiB of zeros. */
static GByteArray *bzimage_inflating(unsigned int mib)
{
	GByteArray *img = g_byte_array_new();
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	g_autofree char *zeros = g_malloc0(1 << 20);
	guint8 hdr[0x420] = { 0 };

	hdr[0x1f1] = 1;
	put16(hdr + 0x1fe, 0xaa55);
	memcpy(hdr + 0x202, "HdrS", 4);
	put16(hdr + 0x206, 0x020f);
	hdr[0x211] = 1;                /* loadflags: LOADED_HIGH, a bzImage */
	put32(hdr + 0x248, 0x20);
	g_byte_array_append(img, hdr, sizeof(hdr));
	archive_write_set_format_raw(a);
	archive_write_add_filter(a, ARCHIVE_FILTER_GZIP);
	archive_write_set_filter_option(a, "gzip", "compression-level", "1");
	archive_write_set_bytes_in_last_block(a, 1);
	assert_int_equal(archive_write_open(a, img, NULL, bytes_write, NULL), ARCHIVE_OK);
	archive_entry_set_pathname(e, "payload");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_size(e, (la_int64_t)mib << 20);
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	for (unsigned int i = 0; i < mib; i++)
		assert_int_equal(archive_write_data(a, zeros, 1 << 20), 1 << 20);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_entry_free(e);
	archive_write_free(a);
	put32(img->data + 0x24c, img->len - sizeof(hdr));
	return img;
}

static char *write_bzimage(const char *dir, const char *name, const char *release,
			   const char *config)
{
	char *path = g_build_filename(dir, name, NULL);
	g_autoptr(GByteArray) img = bzimage(release, config, ARCHIVE_FILTER_GZIP, 64);

	write_file(path, img->data, img->len);
	return path;
}

static char *sha256_of(const char *path)
{
	g_autofree char *data = NULL;
	gsize len;

	assert_true(g_file_get_contents(path, &data, &len, NULL));
	return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (guchar *)data, len);
}

/* A minimal ELF64 relocatable with a .modinfo section, like a .ko. */
static GByteArray *fake_ko(const char *name, const char *depends)
{
	GByteArray *ko = g_byte_array_new();
	g_autoptr(GByteArray) info = g_byte_array_new();
	static const char shstr[] = "\0.modinfo\0.shstrtab";
	guint8 eh[64] = { 0 }, sh[3][64] = { { 0 } };
	g_autofree char *n = g_strdup_printf("name=%s", name);
	g_autofree char *d = g_strdup_printf("depends=%s", depends);
	guint64 info_off = 64, str_off, sh_off;

	g_byte_array_append(info, (guint8 *)"license=GPL", 12);
	g_byte_array_append(info, (guint8 *)d, (guint)strlen(d) + 1);
	g_byte_array_append(info, (guint8 *)n, (guint)strlen(n) + 1);
	str_off = info_off + info->len;
	sh_off = (str_off + sizeof(shstr) + 7) & ~7ull;

	memcpy(eh, "\177ELF", 4);
	eh[4] = 2;
	eh[5] = 1;
	eh[6] = 1;
	put16(eh + 0x10, 1);      /* ET_REL */
	put16(eh + 0x12, 62);     /* x86-64 */
	put64(eh + 0x28, sh_off);
	put16(eh + 0x34, 64);
	put16(eh + 0x3a, 64);
	put16(eh + 0x3c, 3);
	put16(eh + 0x3e, 2);
	put32(sh[1], 1);          /* ".modinfo" */
	put32(sh[1] + 4, 1);      /* SHT_PROGBITS */
	put64(sh[1] + 24, info_off);
	put64(sh[1] + 32, info->len);
	put32(sh[2], 10);         /* ".shstrtab" */
	put32(sh[2] + 4, 3);      /* SHT_STRTAB */
	put64(sh[2] + 24, str_off);
	put64(sh[2] + 32, sizeof(shstr));

	g_byte_array_append(ko, eh, sizeof(eh));
	g_byte_array_append(ko, info->data, info->len);
	g_byte_array_append(ko, (guint8 *)shstr, sizeof(shstr));
	g_byte_array_set_size(ko, (guint)sh_off);
	memset(ko->data + str_off + sizeof(shstr), 0, sh_off - str_off - sizeof(shstr));
	g_byte_array_append(ko, (guint8 *)sh, sizeof(sh));
	return ko;
}

struct deb_entry {
	const char *path;
	const void *data; /* NULL: text below */
	size_t len;
	const char *text;
	mode_t type;      /* 0: regular file */
	const char *link; /* symlink target */
};

/* A tar of entries, compressed with filter. */
static GByteArray *tar_of(const struct deb_entry *entries, int filter)
{
	GByteArray *out = g_byte_array_new();
	struct archive *a = archive_write_new();

	archive_write_set_format_pax_restricted(a);
	archive_write_add_filter(a, filter);
	if (filter == ARCHIVE_FILTER_XZ)
		archive_write_set_filter_option(a, "xz", "compression-level", "1");
	archive_write_set_bytes_in_last_block(a, 1);
	assert_int_equal(archive_write_open(a, out, NULL, bytes_write, NULL), ARCHIVE_OK);
	for (const struct deb_entry *d = entries; d && d->path; d++) {
		struct archive_entry *e = archive_entry_new();
		const void *data = d->data ? d->data : d->text;
		size_t len = d->data ? d->len : (d->text ? strlen(d->text) : 0);
		mode_t type = d->type ? d->type : AE_IFREG;

		archive_entry_set_pathname(e, d->path);
		archive_entry_set_filetype(e, type);
		archive_entry_set_perm(e, type == AE_IFDIR ? 0700 : 0600); /* fixed up on unpack */
		if (type == AE_IFLNK)
			archive_entry_set_symlink(e, d->link);
		archive_entry_set_size(e, type == AE_IFREG ? (la_int64_t)len : 0);
		assert_true(archive_write_header(a, e) >= ARCHIVE_WARN);
		if (type == AE_IFREG && len)
			assert_int_equal(archive_write_data(a, data, len), (la_ssize_t)len);
		archive_entry_free(e);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	return out;
}

static void ar_member(struct archive *a, const char *name, const void *data, size_t len)
{
	struct archive_entry *e = archive_entry_new();

	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)len);
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	assert_int_equal(archive_write_data(a, data, len), (la_ssize_t)len);
	archive_entry_free(e);
}

/* A .deb (ar: debian-binary, control.tar.gz, data.tar.xz of entries); no
 * data.tar member when entries is NULL; data.tar.xz is garbage when
 * garbage_data. */
static char *write_deb(const char *dir, const char *name, const struct deb_entry *entries,
		       bool garbage_data)
{
	char *path = g_build_filename(dir, name, NULL);
	const struct deb_entry control[] = {
		{ .path = "./control", .text = "Package: linux-image-fake\nVersion: 1\n" }, { 0 },
	};
	g_autoptr(GByteArray) ctl = tar_of(control, ARCHIVE_FILTER_GZIP);
	struct archive *a = archive_write_new();

	archive_write_set_format_ar_svr4(a);
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	ar_member(a, "debian-binary", "2.0\n", 4);
	ar_member(a, "control.tar.gz", ctl->data, ctl->len);
	if (garbage_data) {
		ar_member(a, "data.tar.xz", "\xfd" "7zXZ\0 this is not xz at all", 28);
	} else if (entries) {
		g_autoptr(GByteArray) data = tar_of(entries, ARCHIVE_FILTER_XZ);

		ar_member(a, "data.tar.xz", data->data, data->len);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	return path;
}

/* Resolves spec; asserts failure with -EINVAL and every needle in the message. */
static void assert_resolve_fails(const char *spec, const struct kernel_opts *o, ...)
{
	g_autoptr(kernel) k = NULL;
	va_list ap;
	const char *needle;
	int ret = kernel_resolve(spec, o, &k);

	if (ret != -EINVAL)
		fail_msg("%s: expected -EINVAL, got %d (%s)", spec, ret, ret ? pc_errmsg() : "ok");
	assert_null(k);
	va_start(ap, o);
	while ((needle = va_arg(ap, const char *)))
		if (!strstr(pc_errmsg(), needle))
			fail_msg("message \"%s\" lacks \"%s\"", pc_errmsg(), needle);
	va_end(ap);
}

/* ---- image path, release, names ---- */

static void test_image_path(void **state)
{
	struct scratch *s = *state;
	g_autofree char *img = write_bzimage(s->dir, "bzImage", REL, NULL);
	g_autofree char *sha = sha256_of(img);
	g_autofree char *label = NULL, *want = NULL, *cwd = g_get_current_dir();
	struct kernel_opts o = scratch_opts(s);
	g_autoptr(kernel) k = NULL, rel = NULL;

	assert_int_equal(kernel_resolve(img, &o, &k), 0);
	assert_int_equal(k->source, KERNEL_SOURCE_IMAGE);
	assert_string_equal(kernel_source_name(k->source), "image");
	assert_string_equal(k->arg, img);
	assert_string_equal(k->image, img);
	assert_string_equal(k->release, REL); /* from the header's version string */
	assert_string_equal(k->sha256, sha);
	assert_string_equal(k->name, REL);
	assert_false(k->name_given);
	assert_null(k->modules_dir);
	assert_null(k->config);
	assert_null(k->config_source);
	label = kernel_label(k);
	want = g_strdup_printf(REL " (%.12s)", sha);
	assert_string_equal(label, want);

	/* a relative path comes back absolute */
	assert_int_equal(chdir(s->dir), 0);
	assert_int_equal(kernel_resolve("./bzImage", &o, &rel), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_string_equal(rel->image, img);
	assert_string_equal(rel->arg, "./bzImage");

	/* no '/' but an existing file: an image too */
	g_autoptr(kernel) bare = NULL;
	assert_int_equal(chdir(s->dir), 0);
	assert_int_equal(kernel_resolve("bzImage", &o, &bare), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(bare->source, KERNEL_SOURCE_IMAGE);
	assert_string_equal(bare->image, img);

	/* an image that is there but unreadable is not bad input */
	if (geteuid() != 0) {
		g_autoptr(kernel) no = NULL;

		chmod(img, 0);
		assert_int_equal(kernel_resolve(img, &o, &no), -EACCES);
		assert_non_null(strstr(pc_errmsg(), img));
		chmod(img, 0644);
	}
}

static void test_image_release_from_name_and_modules(void **state)
{
	struct scratch *s = *state;
	g_autofree char *copy = g_build_filename(s->dir, "copy", NULL);
	g_autofree char *img = NULL, *mods = g_build_filename(s->modroot, "7.0.0-copied", NULL);
	g_autofree char *mine = g_build_filename(s->dir, "mymods", NULL);
	g_autofree char *nope = g_build_filename(s->dir, "nope", NULL);
	struct kernel_opts o = scratch_opts(s);
	g_autoptr(kernel) k = NULL, given = NULL, unknown = NULL;

	mkdir_p(copy);
	mkdir_p(mods);
	mkdir_p(mine);
	/* the file name wins over the header; modules from modules_root/<release> */
	img = write_bzimage(copy, "vmlinuz-7.0.0-copied", REL, NULL);
	assert_int_equal(kernel_resolve(img, &o, &k), 0);
	assert_string_equal(k->release, "7.0.0-copied");
	assert_string_equal(k->modules_dir, mods);

	o.modules_dir = mine;
	assert_int_equal(kernel_resolve(img, &o, &given), 0);
	assert_string_equal(given->modules_dir, mine);

	o.modules_dir = nope;
	assert_resolve_fails(img, &o, "--modules ", nope, ": no such directory", NULL);
	o.modules_dir = img;
	assert_resolve_fails(img, &o, "--modules ", "not a directory", NULL);

	/* no release anywhere: named after the file */
	o.modules_dir = NULL;
	g_autofree char *anon = write_bzimage(s->dir, "anon.img", NULL, NULL);
	assert_int_equal(kernel_resolve(anon, &o, &unknown), 0);
	assert_string_equal(unknown->release, "");
	assert_string_equal(unknown->name, "anon.img");
	g_autofree char *label = kernel_label(unknown);
	g_autofree char *want = g_strdup_printf("anon.img (%.12s)", unknown->sha256);
	assert_string_equal(label, want);
}

static void test_release_form(void **state)
{
	struct scratch *s = *state;
	g_autofree char *img = write_bzimage(s->boot, "vmlinuz-" REL, REL, NULL);
	g_autofree char *cfg = g_build_filename(s->boot, "config-" REL, NULL);
	g_autofree char *mods = g_build_filename(s->modroot, REL, NULL);
	g_autofree char *missing_msg = g_strdup_printf("no %s/vmlinuz-9.9.9", s->boot);
	struct kernel_opts o = scratch_opts(s);
	g_autoptr(kernel) k = NULL, nomods = NULL;

	write_file(cfg, full_config, -1);
	assert_int_equal(kernel_resolve(REL, &o, &nomods), 0);
	assert_null(nomods->modules_dir); /* no modules_root/R: none */
	mkdir_p(mods);
	assert_int_equal(kernel_resolve(REL, &o, &k), 0);
	assert_int_equal(k->source, KERNEL_SOURCE_RELEASE);
	assert_string_equal(kernel_source_name(k->source), "release");
	assert_string_equal(k->image, img);
	assert_string_equal(k->release, REL);
	assert_string_equal(k->modules_dir, mods);
	assert_string_equal(k->config_source, cfg);
	assert_string_equal(kernel_config_get(k, "CONFIG_KVM"), "y");
	assert_string_equal(kernel_config_get(k, "KVM"), "y");
	assert_string_equal(kernel_config_get(k, "LOCALVERSION"), "\"-fake\""); /* quotes kept */
	assert_null(kernel_config_get(k, "DEBUG_INFO"));                        /* is not set */
	assert_null(kernel_config_get(k, "NO_SUCH_OPTION"));

	assert_resolve_fails("9.9.9", &o, "--kernel 9.9.9: ", missing_msg, "installed: " REL, NULL);
}

static void test_names(void **state)
{
	struct scratch *s = *state;
	g_autofree char *img = write_bzimage(s->dir, "bzImage", REL, NULL);
	g_autofree char *bimg = write_bzimage(s->boot, "vmlinuz-" REL, REL, NULL);
	g_autofree char *colon_dir = g_build_filename(s->dir, "a:b", NULL);
	g_autofree char *colon_img = NULL;
	struct kernel_opts o = scratch_opts(s);
	g_autofree char *spec = NULL, *label = NULL, *want = NULL;
	char name64[65];
	g_autoptr(kernel) k = NULL, r = NULL, c = NULL, c2 = NULL, l = NULL;

	spec = g_strdup_printf("%s:base-1.2_x+y", img);
	assert_int_equal(kernel_resolve(spec, &o, &k), 0);
	assert_string_equal(k->arg, img);
	assert_string_equal(k->name, "base-1.2_x+y");
	assert_true(k->name_given);
	label = kernel_label(k);
	want = g_strdup_printf("base-1.2_x+y (" REL ", %.12s)", k->sha256);
	assert_string_equal(label, want);

	assert_int_equal(kernel_resolve(REL ":patched", &o, &r), 0);
	assert_int_equal(r->source, KERNEL_SOURCE_RELEASE);
	assert_string_equal(r->name, "patched");

	/* a ':' inside a path: the whole existing path is KERNEL, then :NAME on top */
	mkdir_p(colon_dir);
	colon_img = write_bzimage(colon_dir, "bzImage", REL, NULL);
	assert_int_equal(kernel_resolve(colon_img, &o, &c), 0);
	assert_string_equal(c->image, colon_img);
	assert_false(c->name_given);
	g_free(spec);
	spec = g_strdup_printf("%s:v2", colon_img);
	assert_int_equal(kernel_resolve(spec, &o, &c2), 0);
	assert_string_equal(c2->image, colon_img);
	assert_string_equal(c2->name, "v2");

	/* 64 characters is fine, 65 is not */
	memset(name64, 'n', 64);
	name64[64] = 0;
	g_free(spec);
	spec = g_strdup_printf("%s:%s", img, name64);
	assert_int_equal(kernel_resolve(spec, &o, &l), 0);
	assert_string_equal(l->name, name64);
	g_free(spec);
	spec = g_strdup_printf("%s:%sn", img, name64);
	assert_resolve_fails(spec, &o, "--kernel ", img, "bad NAME", NULL);

	/* bad names after an existing file or installed release are errors */
	g_free(spec);
	spec = g_strdup_printf("%s:bad name!", img);
	assert_resolve_fails(spec, &o, spec, "bad NAME \"bad name!\"", NULL);
	g_free(spec);
	spec = g_strdup_printf("%s:..", img);
	assert_resolve_fails(spec, &o, "bad NAME \"..\"", NULL);
	g_free(spec);
	spec = g_strdup_printf("%s:", img);
	assert_resolve_fails(spec, &o, "bad NAME \"\"", NULL);
	assert_resolve_fails(REL ":no/slash", &o, "bad NAME \"no/slash\"", NULL);
	/* else the whole string is KERNEL, and the error names it */
	assert_resolve_fails(":foo", &o, "--kernel :foo: no ", NULL);
	assert_resolve_fails("", &o, "--kernel", "empty", NULL);
	(void)bimg;
}

static void test_bad_images(void **state)
{
	struct scratch *s = *state;
	g_autofree char *nope = g_build_filename(s->dir, "nope", "bzImage", NULL);
	g_autofree char *text = g_build_filename(s->dir, "notes.txt", NULL);
	g_autofree char *small = g_build_filename(s->dir, "small", NULL);
	g_autofree char *no_hdrs = g_build_filename(s->dir, "vmlinuz-1.0", NULL);
	g_autofree char *boot_bad = g_build_filename(s->boot, "vmlinuz-2.0-bad", NULL);
	g_autofree char *want = NULL;
	struct kernel_opts o = scratch_opts(s);
	guint8 img[0x400] = { 0 };

	assert_resolve_fails(nope, &o, "--kernel ", nope, ": no such file", NULL);
	assert_resolve_fails(s->dir, &o, "--kernel ", s->dir, ": not a regular file", NULL);
	write_file(text, "hello\n", -1);
	want = g_strdup_printf("--kernel %s: not a kernel image (neither a bzImage with the x86 "
			       "boot header \"HdrS\" nor an ELF vmlinux)", text);
	assert_resolve_fails(text, &o, want, NULL);
	write_file(small, "", 0);
	assert_resolve_fails(small, &o, "not a kernel image", NULL);
	put16(img + 0x1fe, 0xaa55); /* boot sector magic but no "HdrS" */
	write_file(no_hdrs, img, sizeof(img));
	assert_resolve_fails(no_hdrs, &o, "not a kernel image", NULL);
	/* "HdrS" but boot protocol 2.05, and an old zImage: no lab host */
	memcpy(img + 0x202, "HdrS", 4);
	put16(img + 0x206, 0x0205);
	img[0x211] = 1;
	write_file(no_hdrs, img, sizeof(img));
	assert_resolve_fails(no_hdrs, &o, "not a usable kernel image (x86 boot protocol 2.05", NULL);
	put16(img + 0x206, 0x020f);
	img[0x211] = 0;
	write_file(no_hdrs, img, sizeof(img));
	assert_resolve_fails(no_hdrs, &o, "a zImage, not a bzImage", NULL);
	write_file(boot_bad, "junk", -1);
	assert_resolve_fails("2.0-bad", &o, "--kernel 2.0-bad: ", boot_bad, "not a kernel image", NULL);
}

/* ---- config sources ---- */

static void test_ikconfig(void **state)
{
	struct scratch *s = *state;
	static const char ik[] = "CONFIG_FROM_IKCONFIG=y\nCONFIG_KVM=m\nCONFIG_HZ=250\n";
	g_autofree char *gz = g_build_filename(s->boot, "vmlinuz-" REL, NULL);
	g_autofree char *xz = g_build_filename(s->dir, "bzImage.xz", NULL);
	g_autofree char *cfg = g_build_filename(s->boot, "config-" REL, NULL);
	g_autofree char *mine = g_build_filename(s->dir, "my.config", NULL);
	g_autofree char *want = NULL;
	g_autoptr(GByteArray) gzimg = bzimage(REL, ik, ARCHIVE_FILTER_GZIP, 100000);
	/* several MiB of payload: the markers come in a later chunk */
	g_autoptr(GByteArray) xzimg = bzimage(REL, ik, ARCHIVE_FILTER_XZ, 3 * 1024 * 1024 + 5);
	struct kernel_opts o = scratch_opts(s);
	g_autoptr(kernel) k = NULL, x = NULL, over = NULL;

	write_file(gz, gzimg->data, gzimg->len);
	write_file(xz, xzimg->data, xzimg->len);
	write_file(cfg, full_config, -1); /* stale file beside it: IKCONFIG wins */
	assert_int_equal(kernel_resolve(REL, &o, &k), 0);
	want = g_strdup_printf("IKCONFIG in %s", gz);
	assert_string_equal(k->config_source, want);
	assert_int_equal(g_hash_table_size(k->config), 3);
	assert_string_equal(kernel_config_get(k, "FROM_IKCONFIG"), "y");
	assert_string_equal(kernel_config_get(k, "KVM"), "m");
	assert_string_equal(kernel_config_get(k, "HZ"), "250");

	assert_int_equal(kernel_resolve(xz, &o, &x), 0);
	g_free(want);
	want = g_strdup_printf("IKCONFIG in %s", xz);
	assert_string_equal(x->config_source, want);
	assert_string_equal(kernel_config_get(x, "HZ"), "250");

	/* a payload that inflates beyond 512 MiB is refused, not swallowed */
	{
		g_autofree char *bomb = g_build_filename(s->dir, "bomb", NULL);
		g_autoptr(GByteArray) big = bzimage_inflating((KERNEL_PAYLOAD_MAX >> 20) + 1);

		write_file(bomb, big->data, big->len);
		assert_resolve_fails(bomb, &o, "--kernel ", bomb, "beyond 512 MiB", NULL);
	}

	/* --config beats everything */
	write_file(mine, "CONFIG_MINE=y\n", -1);
	o.config = mine;
	assert_int_equal(kernel_resolve(REL, &o, &over), 0);
	assert_string_equal(over->config_source, mine);
	assert_string_equal(kernel_config_get(over, "MINE"), "y");
	assert_null(kernel_config_get(over, "KVM"));
}

static void test_config_files(void **state)
{
	struct scratch *s = *state;
	g_autofree char *copy = g_build_filename(s->dir, "copy", NULL);
	g_autofree char *tree = g_build_filename(s->dir, "linux", NULL);
	g_autofree char *boot_dir = g_build_filename(tree, "arch", "x86", "boot", NULL);
	g_autofree char *mods = g_build_filename(s->dir, "mods", NULL);
	g_autofree char *build = g_build_filename(mods, "build", NULL);
	g_autofree char *beside = g_build_filename(copy, "config-" REL, NULL);
	g_autofree char *boot_cfg = g_build_filename(s->boot, "config-" REL, NULL);
	g_autofree char *dotconfig = g_build_filename(tree, ".config", NULL);
	g_autofree char *build_cfg = g_build_filename(build, ".config", NULL);
	g_autofree char *img = NULL, *tree_img = NULL, *anon = NULL;
	struct kernel_opts o = scratch_opts(s);
	g_autoptr(kernel) a = NULL, b = NULL, c = NULL, d = NULL;

	mkdir_p(copy);
	mkdir_p(boot_dir);
	mkdir_p(build);
	img = write_bzimage(copy, "bzImage", REL, NULL);
	/* an installed config for the same release */
	write_file(boot_cfg, "CONFIG_WHERE=\"boot\"\n", -1);
	assert_int_equal(kernel_resolve(img, &o, &a), 0);
	assert_string_equal(a->config_source, boot_cfg);
	/* a config beside the image comes first */
	write_file(beside, "CONFIG_WHERE=\"beside\"\n", -1);
	assert_int_equal(kernel_resolve(img, &o, &b), 0);
	assert_string_equal(b->config_source, beside);
	assert_string_equal(kernel_config_get(b, "WHERE"), "\"beside\"");

	/* a build tree's .config, three levels above arch/x86/boot/bzImage */
	tree_img = write_bzimage(boot_dir, "bzImage", "6.9.0-rc1+", NULL);
	write_file(dotconfig, "CONFIG_WHERE=\"tree\"\n", -1);
	assert_int_equal(kernel_resolve(tree_img, &o, &c), 0);
	assert_string_equal(c->config_source, dotconfig);

	/* <modules_dir>/build/.config */
	anon = write_bzimage(s->dir, "anon", NULL, NULL);
	write_file(build_cfg, "CONFIG_WHERE=\"build\"\n", -1);
	o.modules_dir = mods;
	assert_int_equal(kernel_resolve(anon, &o, &d), 0);
	assert_string_equal(d->config_source, build_cfg);
	assert_string_equal(kernel_config_get(d, "WHERE"), "\"build\"");
}

static void test_config_bad(void **state)
{
	struct scratch *s = *state;
	g_autofree char *img = write_bzimage(s->boot, "vmlinuz-" REL, REL, NULL);
	g_autofree char *cfg = g_build_filename(s->boot, "config-" REL, NULL);
	g_autofree char *nope = g_build_filename(s->dir, "nope.config", NULL);
	g_autofree char *line3 = NULL;
	struct kernel_opts o = scratch_opts(s);

	o.config = nope;
	assert_resolve_fails(REL, &o, "--config ", nope, ": no such file", NULL);
	o.config = s->dir;
	assert_resolve_fails(REL, &o, "--config ", "not a regular file", NULL);
	o.config = NULL;

	write_file(cfg, "CONFIG_A=y\n# comment\nthis is not a config\n", -1);
	line3 = g_strdup_printf("--kernel " REL ": config %s:3: not a kernel config line", cfg);
	assert_resolve_fails(REL, &o, line3, NULL);
	write_file(cfg, "CONFIG_A=y\n\0\1\2binary", 20);
	assert_resolve_fails(REL, &o, cfg, "binary", NULL);
	(void)img;
}

/* ---- .deb ---- */

static void test_deb(void **state)
{
	struct scratch *s = *state;
	g_autoptr(GByteArray) img = bzimage("6.1.0-99-amd64", NULL, ARCHIVE_FILTER_GZIP, 64);
	const struct deb_entry entries[] = {
		{ .path = "./", .type = AE_IFDIR },
		{ .path = "./boot/", .type = AE_IFDIR },
		{ .path = "./boot/vmlinuz-6.1.0-99-amd64", .data = img->data, .len = img->len },
		{ .path = "./boot/config-6.1.0-99-amd64", .text = full_config },
		{ .path = "./lib/modules/6.1.0-99-amd64/modules.dep",
		  .text = "kernel/fs/9p/9p.ko:\n" },
		{ .path = "./lib/modules/6.1.0-99-amd64/kernel/fs/9p/9p.ko", .text = "ko" },
		{ .path = "./usr/share/doc/linux-image/changelog.gz", .text = "not unpacked" },
		{ .path = "./lib/modules/6.1.0-99-amd64/build", .type = AE_IFLNK,
		  .link = "/usr/src/linux-headers" },
		{ 0 },
	};
	g_autofree char *deb = write_deb(s->dir, "linux-image-fake.deb", entries, false);
	g_autofree char *sha = sha256_of(deb);
	g_autofree char *want_dir = NULL, *want_img = NULL, *marker = NULL, *doc = NULL;
	g_autofree char *link = NULL, *label = NULL, *want_label = NULL, *vsha = NULL;
	struct kernel_opts o = scratch_opts(s);
	g_autoptr(kernel) k = NULL, again = NULL, named = NULL;
	g_autoptr(GPtrArray) missing = NULL, warnings = NULL;
	struct stat st;
	mode_t old = umask(077); /* the cache stays readable whatever the umask */

	assert_int_equal(kernel_resolve(deb, &o, &k), 0);
	umask(old);
	want_dir = g_strdup_printf("%s/deb-%.16s", s->cache, sha);
	want_img = g_strdup_printf("%s/boot/vmlinuz-6.1.0-99-amd64", want_dir);
	assert_int_equal(k->source, KERNEL_SOURCE_DEB);
	assert_string_equal(kernel_source_name(k->source), "deb");
	assert_string_equal(k->deb_dir, want_dir);
	assert_string_equal(k->image, want_img);
	assert_string_equal(k->release, "6.1.0-99-amd64");
	vsha = g_compute_checksum_for_data(G_CHECKSUM_SHA256, img->data, img->len);
	assert_string_equal(k->sha256, vsha); /* the image's hash, not the package's */
	label = kernel_label(k);
	want_label = g_strdup_printf("6.1.0-99-amd64 (%.12s)", vsha);
	assert_string_equal(label, want_label);
	assert_non_null(k->modules_dir);
	assert_true(g_str_has_prefix(k->modules_dir, want_dir));
	assert_true(g_str_has_suffix(k->modules_dir, "/lib/modules/6.1.0-99-amd64"));
	assert_string_equal(k->config_source, "config-6.1.0-99-amd64 in linux-image-fake.deb");
	assert_string_equal(kernel_config_get(k, "KVM"), "y");
	assert_int_equal(kernel_check_lab(k, NULL, &missing, &warnings), 0);

	/* QEMU runs as another user: 0755 directories, 0644 files */
	assert_int_equal(stat(want_dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat(k->modules_dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat(k->image, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* only boot/ and lib/modules/, no symlinks */
	doc = g_build_filename(want_dir, "usr", NULL);
	assert_false(g_file_test(doc, G_FILE_TEST_EXISTS));
	link = g_build_filename(k->modules_dir, "build", NULL);
	assert_false(g_file_test(link, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK));

	/* a second resolve finds the directory and unpacks nothing */
	marker = g_build_filename(want_dir, "marker", NULL);
	write_file(marker, "x", -1);
	assert_int_equal(kernel_resolve(deb, &o, &again), 0);
	assert_string_equal(again->deb_dir, want_dir);
	assert_true(g_file_test(marker, G_FILE_TEST_EXISTS));
	assert_string_equal(again->sha256, vsha);

	g_autofree char *spec = g_strdup_printf("%s:debkernel", deb);
	assert_int_equal(kernel_resolve(spec, &o, &named), 0);
	assert_string_equal(named->name, "debkernel");
	assert_int_equal(named->source, KERNEL_SOURCE_DEB);

	/* nothing else in the cache: no temporary directory left */
	g_autoptr(GDir) d = g_dir_open(s->cache, 0, NULL);
	const char *n;
	int count = 0;
	while ((n = g_dir_read_name(d))) {
		assert_true(g_str_has_prefix(n, "deb-"));
		count++;
	}
	assert_int_equal(count, 1);
}

/* Debian ships no modules.dep (depmod makes it at install): one is written
 * from the modules' .modinfo; a merged-/usr package lands in lib/modules. */
static void test_deb_modules_dep(void **state)
{
	struct scratch *s = *state;
	g_autoptr(GByteArray) img = bzimage("6.1.0-98-amd64", NULL, ARCHIVE_FILTER_GZIP, 64);
	g_autoptr(GByteArray) ko9p = fake_ko("9p", "9pnet,netfs");
	g_autoptr(GByteArray) ko9pnet = fake_ko("9pnet", "");
	g_autoptr(GByteArray) konetfs = fake_ko("netfs", "9pnet");
	g_autoptr(GByteArray) kovirt = fake_ko("9pnet_virtio", "9pnet,virtio-ring");
	g_autoptr(GByteArray) koring = fake_ko("virtio_ring", "");
	g_autoptr(GByteArray) koxz = NULL;
	const char *m = "./usr/lib/modules/6.1.0-98-amd64/kernel/";
	g_autofree char *p9p = g_strconcat(m, "fs/9p/9p.ko", NULL);
	g_autofree char *p9pnet = g_strconcat(m, "net/9p/9pnet.ko", NULL);
	g_autofree char *pnetfs = g_strconcat(m, "fs/netfs/netfs.ko", NULL);
	g_autofree char *pvirt = g_strconcat(m, "net/9p/9pnet_virtio.ko", NULL);
	g_autofree char *pring = g_strconcat(m, "drivers/virtio/virtio_ring.ko.xz", NULL);
	g_autofree char *dep = NULL, *text = NULL;
	g_autoptr(kernel) k = NULL;
	g_autoptr(GPtrArray) paths = NULL;
	struct kernel_opts o = scratch_opts(s);
	const char *names[] = { "9p", "9pnet_virtio", NULL };

	koxz = compress(koring->data, koring->len, ARCHIVE_FILTER_XZ);
	const struct deb_entry entries[] = {
		{ .path = "./boot/vmlinuz-6.1.0-98-amd64", .data = img->data, .len = img->len },
		{ .path = p9p, .data = ko9p->data, .len = ko9p->len },
		{ .path = p9pnet, .data = ko9pnet->data, .len = ko9pnet->len },
		{ .path = pnetfs, .data = konetfs->data, .len = konetfs->len },
		{ .path = pvirt, .data = kovirt->data, .len = kovirt->len },
		{ .path = pring, .data = koxz->data, .len = koxz->len },
		{ .path = "./usr/lib/modules/6.1.0-98-amd64/modules.builtin", .text = "" },
		{ 0 },
	};
	g_autofree char *deb = write_deb(s->dir, "merged.deb", entries, false);

	assert_int_equal(kernel_resolve(deb, &o, &k), 0);
	assert_true(g_str_has_suffix(k->modules_dir, "/lib/modules/6.1.0-98-amd64"));
	assert_null(k->config);
	dep = g_build_filename(k->modules_dir, "modules.dep", NULL);
	assert_true(g_file_get_contents(dep, &text, NULL, NULL));
	assert_string_equal(text,
			    "kernel/drivers/virtio/virtio_ring.ko.xz:\n"
			    "kernel/fs/9p/9p.ko: kernel/fs/netfs/netfs.ko kernel/net/9p/9pnet.ko\n"
			    "kernel/fs/netfs/netfs.ko: kernel/net/9p/9pnet.ko\n"
			    "kernel/net/9p/9pnet.ko:\n"
			    "kernel/net/9p/9pnet_virtio.ko: kernel/drivers/virtio/virtio_ring.ko.xz "
			    "kernel/net/9p/9pnet.ko\n");
	assert_int_equal(image_modules_resolve(k->modules_dir, names, &paths, NULL), 0);
	assert_int_equal(paths->len, 5);
	assert_string_equal(paths->pdata[0], "kernel/net/9p/9pnet.ko");
	assert_string_equal(paths->pdata[1], "kernel/fs/netfs/netfs.ko");
	assert_string_equal(paths->pdata[2], "kernel/fs/9p/9p.ko");
	assert_string_equal(paths->pdata[3], "kernel/drivers/virtio/virtio_ring.ko.xz");
	assert_string_equal(paths->pdata[4], "kernel/net/9p/9pnet_virtio.ko");
}

static void assert_cache_empty(struct scratch *s)
{
	g_autoptr(GDir) d = g_dir_open(s->cache, 0, NULL);
	const char *n = d ? g_dir_read_name(d) : NULL;

	if (n)
		fail_msg("a broken package left %s in the cache", n);
}

static void test_deb_broken(void **state)
{
	struct scratch *s = *state;
	g_autoptr(GByteArray) img = bzimage("6.1.0-97-amd64", NULL, ARCHIVE_FILTER_GZIP, 64);
	const struct deb_entry good[] = {
		{ .path = "./boot/vmlinuz-6.1.0-97-amd64", .data = img->data, .len = img->len },
		{ .path = "./boot/config-6.1.0-97-amd64", .text = full_config },
		{ 0 },
	};
	const struct deb_entry no_kernel[] = {
		{ .path = "./boot/config-6.1.0-97-amd64", .text = full_config }, { 0 },
	};
	const struct deb_entry two[] = {
		{ .path = "./boot/vmlinuz-6.1.0-97-amd64", .data = img->data, .len = img->len },
		{ .path = "./boot/vmlinuz-6.1.0-96-amd64", .data = img->data, .len = img->len },
		{ 0 },
	};
	const struct deb_entry dotdot[] = {
		{ .path = "./boot/vmlinuz-6.1.0-97-amd64", .data = img->data, .len = img->len },
		{ .path = "./boot/../../evil", .text = "x" },
		{ 0 },
	};
	const struct deb_entry absolute[] = {
		{ .path = "/boot/vmlinuz-6.1.0-97-amd64", .data = img->data, .len = img->len },
		{ 0 },
	};
	const struct deb_entry not_bz[] = {
		{ .path = "./boot/vmlinuz-6.1.0-97-amd64", .text = "not a kernel" }, { 0 },
	};
	g_autofree char *ok = write_deb(s->dir, "ok.deb", good, false);
	g_autofree char *nodata = write_deb(s->dir, "nodata.deb", NULL, false);
	g_autofree char *garbage = write_deb(s->dir, "garbage.deb", good, true);
	g_autofree char *nokernel = write_deb(s->dir, "nokernel.deb", no_kernel, false);
	g_autofree char *twok = write_deb(s->dir, "two.deb", two, false);
	g_autofree char *evil = write_deb(s->dir, "evil.deb", dotdot, false);
	g_autofree char *abs = write_deb(s->dir, "abs.deb", absolute, false);
	g_autofree char *notbz = write_deb(s->dir, "notbz.deb", not_bz, false);
	g_autofree char *text = g_build_filename(s->dir, "text.deb", NULL);
	g_autofree char *trunc = g_build_filename(s->dir, "truncated.deb", NULL);
	g_autofree char *missing = g_build_filename(s->dir, "missing.deb", NULL);
	g_autofree char *data = NULL;
	gsize len;
	struct kernel_opts o = scratch_opts(s);

	write_file(text, "!<arch> is what it should say\n", -1);
	assert_true(g_file_get_contents(ok, &data, &len, NULL));
	write_file(trunc, data, (gssize)(len - 40)); /* cut inside data.tar.xz */

	assert_resolve_fails(missing, &o, "--kernel ", missing, ": no such file", NULL);
	assert_resolve_fails(text, &o, "--kernel ", text, ": broken package: not an ar archive", NULL);
	assert_resolve_fails(nodata, &o, nodata, ": broken package: no data.tar member", NULL);
	assert_resolve_fails(garbage, &o, garbage, ": broken package: data.tar.xz", NULL);
	assert_resolve_fails(trunc, &o, trunc, ": broken package", NULL);
	assert_resolve_fails(nokernel, &o, nokernel, ": broken package: no boot/vmlinuz-*", NULL);
	assert_resolve_fails(twok, &o, twok, "broken package: 2 kernels", "vmlinuz-6.1.0-96-amd64",
			     NULL);
	assert_resolve_fails(evil, &o, evil, "broken package", "unsafe path \"./boot/../../evil\"",
			     NULL);
	assert_resolve_fails(abs, &o, abs, "broken package", "unsafe path \"/boot/vmlinuz", NULL);
	assert_resolve_fails(notbz, &o, notbz, "broken package", "not a bzImage", NULL);
	assert_cache_empty(s);
	g_autofree char *outside = g_build_filename(s->dir, "evil", NULL);
	assert_false(g_file_test(outside, G_FILE_TEST_EXISTS));
}

/* ---- the lab-host check ---- */

/* A kernel resolved from a fake image with --config holding config (NULL:
 * no config anywhere) and --modules modules_dir. */
static struct kernel *kernel_with(struct scratch *s, const char *release, const char *config,
				  const char *modules_dir)
{
	g_autofree char *name = g_strdup_printf("vmlinuz-%s", release);
	g_autofree char *img = write_bzimage(s->dir, name, release, NULL);
	g_autofree char *cfg = g_build_filename(s->dir, "lab.config", NULL);
	g_autofree char *none = g_build_filename(s->dir, "empty-modroot", NULL);
	struct kernel_opts o = scratch_opts(s);
	struct kernel *k = NULL;

	mkdir_p(none);
	o.modules_root = none;
	o.modules_dir = modules_dir;
	if (config) {
		write_file(cfg, config, -1);
		o.config = cfg;
	}
	if (kernel_resolve(img, &o, &k) < 0)
		fail_msg("%s", pc_errmsg());
	return k;
}

/* base with one option's line replaced (value NULL: removed). */
static char *config_edit(const char *base, const char *option, const char *value)
{
	g_autofree char *key = g_strdup_printf("CONFIG_%s=", option);
	g_auto(GStrv) lines = g_strsplit(base, "\n", -1);
	GString *out = g_string_new("");

	for (int i = 0; lines[i]; i++) {
		if (!lines[i][0])
			continue;
		if (g_str_has_prefix(lines[i], key)) {
			if (value)
				g_string_append_printf(out, "%s%s\n", key, value);
			continue;
		}
		g_string_append_printf(out, "%s\n", lines[i]);
	}
	return g_string_free(out, FALSE);
}

static char *config_with(const char *option, const char *value)
{
	return config_edit(full_config, option, value);
}

static void test_check_full_and_one_lack(void **state)
{
	struct scratch *s = *state;
	g_autoptr(kernel) full = kernel_with(s, REL, full_config, NULL);
	g_autofree char *no_kvm = config_with("KVM", NULL);
	g_autoptr(kernel) k = kernel_with(s, REL, no_kvm, NULL);
	g_autoptr(GPtrArray) missing = NULL, warnings = NULL;
	g_autofree char *label = kernel_label(k);
	g_autofree char *head = g_strdup_printf("kernel %s cannot be a lab host: ", label);

	assert_int_equal(kernel_check_lab(full, NULL, &missing, &warnings), 0);
	assert_int_equal(missing->len, 0);
	assert_int_equal(warnings->len, 0);
	g_clear_pointer(&missing, g_ptr_array_unref);
	g_clear_pointer(&warnings, g_ptr_array_unref);
	assert_int_equal(kernel_check_lab(full, "amd", NULL, NULL), 0);
	assert_int_equal(kernel_check_lab(full, "intel", NULL, NULL), 0);

	assert_int_equal(kernel_check_lab(k, NULL, &missing, &warnings), -EINVAL);
	assert_int_equal(missing->len, 1);
	assert_string_equal(missing->pdata[0],
			    "CONFIG_KVM is not set (the lab host runs its guests nested under its own KVM)");
	assert_true(g_str_has_prefix(pc_errmsg(), head));
	assert_non_null(strstr(pc_errmsg(), "CONFIG_KVM is not set"));
	assert_null(strstr(pc_errmsg(), "CONFIG_9P_FS"));
	assert_null(strstr(pc_errmsg(), "; "));
	assert_int_equal(warnings->len, 0);
	assert_int_equal(kernel_check_lab(k, "sparc", NULL, NULL), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "sparc"));
}

static void test_check_modules(void **state)
{
	struct scratch *s = *state;
	g_autofree char *m9p = config_with("9P_FS", "m");
	g_autofree char *mods = g_build_filename(s->dir, "mods", NULL);
	g_autofree char *dep = g_build_filename(mods, "modules.dep", NULL);
	g_autoptr(kernel) none = kernel_with(s, REL, m9p, NULL);
	g_autoptr(kernel) with = NULL;
	g_autoptr(GPtrArray) missing = NULL;

	assert_int_equal(kernel_check_lab(none, NULL, &missing, NULL), -EINVAL);
	assert_int_equal(missing->len, 1);
	assert_true(g_str_has_prefix(missing->pdata[0],
				     "CONFIG_9P_FS=m but no modules dir: give --modules DIR"));
	assert_non_null(strstr(pc_errmsg(), "CONFIG_9P_FS=m but no modules dir"));
	g_clear_pointer(&missing, g_ptr_array_unref);

	mkdir_p(mods);
	with = kernel_with(s, REL, m9p, mods);
	assert_int_equal(kernel_check_lab(with, NULL, &missing, NULL), -EINVAL);
	assert_non_null(strstr(missing->pdata[0], "has no modules.dep"));
	g_clear_pointer(&missing, g_ptr_array_unref);

	write_file(dep, "kernel/fs/overlayfs/overlay.ko:\n", -1);
	assert_int_equal(kernel_check_lab(with, NULL, &missing, NULL), -EINVAL);
	assert_int_equal(missing->len, 1);
	assert_true(g_str_has_prefix(missing->pdata[0], "CONFIG_9P_FS=m but module 9p is not in "));
	g_clear_pointer(&missing, g_ptr_array_unref);

	write_file(dep, "kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko\nkernel/net/9p/9pnet.ko:\n", -1);
	assert_int_equal(kernel_check_lab(with, NULL, &missing, NULL), 0);
	assert_int_equal(missing->len, 0);
}

static void test_check_values_and_kvm(void **state)
{
	struct scratch *s = *state;
	g_autofree char *devm = config_with("DEVTMPFS", "m");
	g_autofree char *no_amd = config_with("KVM_AMD", NULL);
	g_autofree char *no_vendor = config_edit(no_amd, "KVM_INTEL", NULL);
	g_autofree char *no_pvpanic = config_with("PVPANIC", NULL);
	g_autofree char *no_mmio = config_with("PVPANIC_MMIO", NULL);
	g_autoptr(kernel) k1 = kernel_with(s, REL, devm, NULL);
	g_autoptr(kernel) k2 = kernel_with(s, REL, no_amd, NULL);
	g_autoptr(kernel) k3 = NULL, k4 = NULL, k5 = NULL, k6 = NULL;
	g_autoptr(GPtrArray) missing = NULL, warnings = NULL;

	assert_int_equal(kernel_check_lab(k1, NULL, &missing, NULL), -EINVAL);
	assert_int_equal(missing->len, 1);
	assert_true(g_str_has_prefix(missing->pdata[0], "CONFIG_DEVTMPFS=m, needs =y ("));
	g_clear_pointer(&missing, g_ptr_array_unref);

	/* either vendor is enough unless one is asked for */
	assert_int_equal(kernel_check_lab(k2, NULL, NULL, NULL), 0);
	assert_int_equal(kernel_check_lab(k2, "intel", NULL, NULL), 0);
	assert_int_equal(kernel_check_lab(k2, "amd", &missing, NULL), -EINVAL);
	assert_int_equal(missing->len, 1);
	assert_true(g_str_has_prefix(missing->pdata[0], "CONFIG_KVM_AMD is not set"));
	g_clear_pointer(&missing, g_ptr_array_unref);

	k3 = kernel_with(s, REL, no_vendor, NULL);
	assert_int_equal(kernel_check_lab(k3, NULL, &missing, NULL), -EINVAL);
	assert_int_equal(missing->len, 1);
	assert_true(g_str_has_prefix(missing->pdata[0],
				     "neither CONFIG_KVM_AMD nor CONFIG_KVM_INTEL is set"));
	g_clear_pointer(&missing, g_ptr_array_unref);

	/* recommended options only warn */
	k4 = kernel_with(s, REL, no_pvpanic, NULL);
	assert_int_equal(kernel_check_lab(k4, NULL, &missing, &warnings), 0);
	assert_int_equal(missing->len, 0);
	assert_int_equal(warnings->len, 1);
	assert_string_equal(warnings->pdata[0], "CONFIG_PVPANIC is not set (without it a lab host "
			    "panic reads as a hang)");
	g_clear_pointer(&missing, g_ptr_array_unref);
	g_clear_pointer(&warnings, g_ptr_array_unref);

	/* PVPANIC_MMIO exists from 5.12 on */
	k5 = kernel_with(s, "5.10.0-old", no_mmio, NULL);
	assert_int_equal(kernel_check_lab(k5, NULL, NULL, &warnings), 0);
	assert_int_equal(warnings->len, 0);
	g_clear_pointer(&warnings, g_ptr_array_unref);
	k6 = kernel_with(s, "5.12.1", no_mmio, NULL);
	assert_int_equal(kernel_check_lab(k6, NULL, NULL, &warnings), 0);
	assert_int_equal(warnings->len, 1);
	assert_true(g_str_has_prefix(warnings->pdata[0], "CONFIG_PVPANIC_MMIO is not set"));
}

static void test_check_no_config_and_many_lacks(void **state)
{
	struct scratch *s = *state;
	g_autoptr(kernel) bare = kernel_with(s, REL, NULL, NULL);
	g_autoptr(kernel) empty = kernel_with(s, REL, "# nothing\n", NULL);
	g_autoptr(GPtrArray) missing = NULL, warnings = NULL;
	g_autofree char *label = kernel_label(bare);
	g_autofree char *want = g_strdup_printf("no config found for %s: cannot check", label);

	assert_null(bare->config);
	assert_int_equal(kernel_check_lab(bare, NULL, &missing, &warnings), 0);
	assert_int_equal(missing->len, 0);
	assert_int_equal(warnings->len, 1);
	assert_true(g_str_has_prefix(warnings->pdata[0], want));
	g_clear_pointer(&missing, g_ptr_array_unref);
	g_clear_pointer(&warnings, g_ptr_array_unref);

	/* everything lacks: one line still names every option */
	assert_int_equal(kernel_check_lab(empty, NULL, &missing, &warnings), -EINVAL);
	assert_int_equal(missing->len, 19); /* 18 options + "neither KVM_AMD nor KVM_INTEL" */
	for (const struct kernel_need *n = kernel_lab_needs; n->option; n++) {
		g_autofree char *opt = g_strdup_printf("CONFIG_%s ", n->option);

		if (n->required && !strstr(pc_errmsg(), opt))
			fail_msg("\"%s\" does not name %s", pc_errmsg(), n->option);
	}
	assert_null(strchr(pc_errmsg(), '\n'));
	assert_true(g_str_has_prefix(pc_errmsg(), "kernel "));
	assert_int_equal(warnings->len, 5); /* PVPANIC, PVPANIC_MMIO, MAGIC_SYSRQ, TMPFS_XATTR, SECCOMP_FILTER */
}

static void test_lab_modules(void **state)
{
	struct scratch *s = *state;
	g_autoptr(kernel) bare = kernel_with(s, REL, NULL, NULL);
	g_autoptr(kernel) k = NULL;
	g_autoptr(GPtrArray) all = kernel_lab_modules(bare);
	g_autoptr(GPtrArray) mods = NULL;
	g_autoptr(GString) cfg = g_string_new(full_config);
	static const char *const want_all[] = {
		"virtio_pci", "virtio_console", "9pnet", "9pnet_virtio", "9p", "overlay", "kvm",
		"kvm_amd", "kvm_intel", "unix", "pvpanic", "pvpanic_mmio",
	};

	assert_int_equal(all->len, G_N_ELEMENTS(want_all));
	for (guint i = 0; i < all->len; i++)
		assert_string_equal(all->pdata[i], want_all[i]);

	/* later lines win: these become modules */
	g_string_append(cfg, "CONFIG_9P_FS=m\nCONFIG_KVM=m\nCONFIG_KVM_INTEL=m\n"
			"CONFIG_PVPANIC_MMIO=m\nCONFIG_IKCONFIG=m\n");
	k = kernel_with(s, REL, cfg->str, NULL);
	mods = kernel_lab_modules(k);
	assert_int_equal(mods->len, 4);
	assert_string_equal(mods->pdata[0], "9p");
	assert_string_equal(mods->pdata[1], "kvm");
	assert_string_equal(mods->pdata[2], "kvm_intel");
	assert_string_equal(mods->pdata[3], "pvpanic_mmio");

	/* A release part past 32 bits is compared whole: sscanf("%u") cut
	 * 4294967301.4 to 5.4, older than pvpanic_mmio's 5.12. */
	g_autoptr(kernel) huge = kernel_with(s, "4294967301.4.0", cfg->str, NULL);
	g_autoptr(GPtrArray) huge_mods = kernel_lab_modules(huge);
	assert_int_equal(huge_mods->len, 4);
	assert_string_equal(huge_mods->pdata[3], "pvpanic_mmio");
	g_autoptr(kernel) old = kernel_with(s, "5.4.0", cfg->str, NULL);
	g_autoptr(GPtrArray) old_mods = kernel_lab_modules(old);
	assert_int_equal(old_mods->len, 3);
}

static void test_default_cache_dir(void **state)
{
	g_autofree char *saved = g_strdup(g_getenv("PMUCANARY_CACHE_DIR"));
	g_autofree char *d = NULL, *moved = NULL;

	g_unsetenv("PMUCANARY_CACHE_DIR");
	d = kernel_default_cache_dir();
	if (geteuid() == 0)
		assert_string_equal(d, "/var/cache/pmucanary/kernels");
	else
		assert_true(g_str_has_suffix(d, "/pmucanary/kernels"));
	/* tests and users can move every cache */
	g_setenv("PMUCANARY_CACHE_DIR", "/srv/pc-cache", TRUE);
	moved = kernel_default_cache_dir();
	assert_string_equal(moved, "/srv/pc-cache/kernels");
	if (saved)
		g_setenv("PMUCANARY_CACHE_DIR", saved, TRUE);
	else
		g_unsetenv("PMUCANARY_CACHE_DIR");
	assert_string_equal(kernel_source_name(KERNEL_SOURCE_COUNT), "?");
	(void)state;
}

/* ---- the real thing ---- */

static void test_real_debian_kernel(void **state)
{
	g_autofree char *path = NULL, *release = NULL, *cfg = NULL, *mods = NULL, *dep = NULL;
	g_autoptr(kernel) k = NULL;
	g_autoptr(GPtrArray) missing = NULL, warnings = NULL;
	int ret;

	g_autoptr(GPtrArray) readable = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GDir) boot = g_dir_open("/boot", 0, NULL);
	const char *n;

	/* Listed here without image.c: no readable kernel in /boot is the
	 * environment, image_find_default_in() missing one is a failure. */
	while (boot && (n = g_dir_read_name(boot))) {
		g_autofree char *p = g_build_filename("/boot", n, NULL);

		if (g_str_has_prefix(n, "vmlinuz-") && n[8] &&
		    g_file_test(p, G_FILE_TEST_IS_REGULAR) && access(p, R_OK) == 0)
			g_ptr_array_add(readable, g_steal_pointer(&p));
	}
	if (!readable->len)
		test_skip("no readable /boot/vmlinuz-*: the real kernel is not tested");
	if (image_find_default_in("/boot", &path, &release) < 0)
		fail_msg("image_find_default_in /boot: %s", pc_errmsg());
	assert_true(g_ptr_array_find_with_equal_func(readable, path, g_str_equal, NULL));
	assert_int_equal(kernel_resolve(release, NULL, &k), 0);
	assert_int_equal(k->source, KERNEL_SOURCE_RELEASE);
	assert_string_equal(k->image, path);
	assert_string_equal(k->release, release);
	assert_int_equal(strlen(k->sha256), 64);
	cfg = g_strdup_printf("/boot/config-%s", release);
	if (!g_str_has_prefix(k->config_source ? k->config_source : "", "IKCONFIG in ") &&
	    g_file_test(cfg, G_FILE_TEST_IS_REGULAR))
		assert_string_equal(k->config_source, cfg);
	mods = g_strdup_printf("/lib/modules/%s", release);
	if (g_file_test(mods, G_FILE_TEST_IS_DIR))
		assert_string_equal(k->modules_dir, mods);
	ret = kernel_check_lab(k, NULL, &missing, &warnings);
	{
		g_autofree char *label = kernel_label(k);

		print_message("note: %s, config %s: lab host check %s%s\n", label,
			      k->config_source ? k->config_source : "none",
			      ret ? "fails: " : "passes", ret ? pc_errmsg() : "");
	}
	dep = g_strdup_printf("%s/modules.dep", mods);
	/* Debian builds KVM, 9p, virtio as modules: with them installed it passes */
	if (k->config && g_file_test(dep, G_FILE_TEST_IS_REGULAR) &&
	    g_file_test("/etc/debian_version", G_FILE_TEST_EXISTS))
		assert_int_equal(ret, 0);
	(void)state;
}

/* The real package is 70 MB and unpacks to 400 MB: only when asked. */
static void test_real_deb(void **state)
{
	struct scratch *s = *state;
	const char *deb = getenv("PMUCANARY_TEST_DEB");
	struct kernel_opts o = { .cache_dir = s->cache };
	g_autoptr(kernel) k = NULL;
	g_autoptr(GPtrArray) missing = NULL;
	g_autoptr(GPtrArray) names = NULL, paths = NULL;

	if (!deb) {
		print_message("note: set PMUCANARY_TEST_DEB=linux-image-*.deb to test a real package\n");
		return;
	}
	assert_int_equal(kernel_resolve(deb, &o, &k), 0);
	assert_non_null(k->config);
	assert_non_null(k->modules_dir);
	if (kernel_check_lab(k, NULL, &missing, NULL) < 0)
		fail_msg("%s", pc_errmsg());
	names = kernel_lab_modules(k);
	g_ptr_array_add(names, NULL);
	assert_int_equal(image_modules_resolve(k->modules_dir, (const char *const *)names->pdata,
					       &paths, NULL), 0);
	print_message("note: %s: %u module files for the lab host\n", deb, paths->len);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, scratch_setup, scratch_teardown)
	const struct CMUnitTest tests[] = {
		T(test_image_path),
		T(test_image_release_from_name_and_modules),
		T(test_release_form),
		T(test_names),
		T(test_bad_images),
		T(test_ikconfig),
		T(test_config_files),
		T(test_config_bad),
		T(test_deb),
		T(test_deb_modules_dep),
		T(test_deb_broken),
		T(test_check_full_and_one_lack),
		T(test_check_modules),
		T(test_check_values_and_kvm),
		T(test_check_no_config_and_many_lacks),
		T(test_lab_modules),
		cmocka_unit_test(test_default_cache_dir),
		cmocka_unit_test(test_real_debian_kernel),
		T(test_real_deb),
	};
#undef T

	log_set_level(LOG_ERROR);
	return test_run_group(tests, NULL, NULL);
}
