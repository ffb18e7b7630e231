/* A kernel under test: KERNEL[:NAME] -> image, release, sha256, modules and
 * config; .deb packages unpacked with libarchive; the lab-host config check. */
#include "kernel.h"
#include "image.h"
#include "infile.h"
#include "log.h"
#include "replay.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct archive archive_reader;
typedef struct archive archive_writer;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(archive_reader, archive_read_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(archive_writer, archive_write_free)

#define DEB_UNPACK_MAX ((la_int64_t)4 << 30) /* bytes unpacked from one .deb */
#define IKCFG_GZ_MAX (16u << 20)             /* the gzip'ed config inside an image */
#define IKCFG_ST "IKCFG_ST\037\213\010"       /* marker + gzip magic, as extract-ikconfig */
#define IKCFG_ST_LEN 11
#define IKCFG_ED "IKCFG_ED"
#define IKCFG_ED_LEN 8

static const char *const source_names[KERNEL_SOURCE_COUNT] = {
	[KERNEL_SOURCE_IMAGE] = "image",
	[KERNEL_SOURCE_RELEASE] = "release",
	[KERNEL_SOURCE_DEB] = "deb",
	[KERNEL_SOURCE_REPLAY] = "replay",
};

const char *kernel_source_name(enum kernel_source s)
{
	return s < KERNEL_SOURCE_COUNT ? source_names[s] : "?";
}

void kernel_free(struct kernel *k)
{
	if (!k)
		return;
	g_free(k->arg);
	g_free(k->name);
	g_free(k->image);
	g_free(k->release);
	g_free(k->sha256);
	g_free(k->modules_dir);
	if (k->config)
		g_hash_table_unref(k->config);
	g_free(k->config_source);
	g_free(k->deb_dir);
	g_free(k);
}

char *kernel_label(const struct kernel *k)
{
	g_autofree char *sha = g_strndup(k->sha256 ? k->sha256 : "", 12);

	if (!k->release || !k->release[0] || !strcmp(k->name, k->release))
		return g_strdup_printf("%s (%s)", k->name, sha);
	return g_strdup_printf("%s (%s, %s)", k->name, k->release, sha);
}

const char *kernel_config_get(const struct kernel *k, const char *option)
{
	g_autofree char *key = NULL;

	if (!k->config)
		return NULL;
	if (g_str_has_prefix(option, "CONFIG_"))
		return g_hash_table_lookup(k->config, option);
	key = g_strconcat("CONFIG_", option, NULL);
	return g_hash_table_lookup(k->config, key);
}

char *kernel_default_cache_dir(void)
{
	g_autofree char *root = image_cache_root();

	return g_build_filename(root, "kernels", NULL);
}

/* ---- KERNEL[:NAME] ---- */

static bool name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > KERNEL_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isalnum(s[i]) && !strchr("_.+-", s[i]))
			return false;
	return true;
}

/* The rule is documented in kernel.h. */
static int spec_split(const char *spec, const char *boot_dir, char **arg, char **name)
{
	const char *colon = strrchr(spec, ':');
	g_autofree char *before = NULL;
	g_autofree char *vmlinuz = NULL;

	*name = NULL;
	if (!colon || colon == spec || g_file_test(spec, G_FILE_TEST_EXISTS)) {
		*arg = g_strdup(spec);
		return 0;
	}
	before = g_strndup(spec, (gsize)(colon - spec));
	if (name_valid(colon + 1)) {
		*arg = g_steal_pointer(&before);
		*name = g_strdup(colon + 1);
		return 0;
	}
	vmlinuz = g_strconcat(boot_dir, "/vmlinuz-", before, NULL);
	if (g_file_test(before, G_FILE_TEST_IS_REGULAR) ||
	    (!strchr(before, '/') && g_file_test(vmlinuz, G_FILE_TEST_IS_REGULAR)))
		return pc_fail(EINVAL, "--kernel %s: bad NAME \"%s\" (1..%d characters of "
			       "A-Z a-z 0-9 _ . + -, not . or ..)", spec, colon + 1, KERNEL_NAME_MAX);
	*arg = g_strdup(spec);
	return 0;
}

/* ---- the bzImage ---- */

static guint16 rd16(const guint8 *p)
{
	return (guint16)(p[0] | p[1] << 8);
}

static guint32 rd32(const guint8 *p)
{
	return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
}

static guint64 rd64(const guint8 *p)
{
	return (guint64)rd32(p) | (guint64)rd32(p + 4) << 32;
}

/* The header's kernel_version string: "<release> (<builder>) #1 ...". */
static char *bz_release(const guint8 *d, gsize n)
{
	gsize off, end;

	if (n < 0x210)
		return g_strdup("");
	off = 0x200 + (gsize)rd16(d + 0x20e);
	if (off == 0x200 || off >= n)
		return g_strdup("");
	for (end = off; end < n && end - off < 256 && d[end] > ' ' && d[end] < 0x7f; end++)
		;
	/* it becomes a path component (/lib/modules/R, config-R): a hostile
	 * header's "../x" is no release */
	if (memchr(d + off, '/', end - off) || (end - off >= 1 && d[off] == '.'))
		return g_strdup("");
	return g_strndup((const char *)d + off, end - off);
}

/* Reads an image and checks its header. who names it in messages. */
static int image_load(const char *who, const char *path, GBytes **out)
{
	struct stat st;
	char *data;
	size_t len;
	int e;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return pc_fail(EINVAL, "%s: no such file", who);
		if (pc_errno_bad_path(errno))
			return pc_fail(EINVAL, "%s: %s", who, g_strerror(errno));
		return pc_fail(errno, "%s: %s", who, g_strerror(errno));
	}
	if (!S_ISREG(st.st_mode))
		return pc_fail(EINVAL, "%s: not a regular file", who);
	if ((guint64)st.st_size > KERNEL_IMAGE_MAX)
		return pc_fail(EINVAL, "%s: not a kernel image (%lld bytes, more than %u MiB)", who,
			       (long long)st.st_size, KERNEL_IMAGE_MAX >> 20);
	if (access(path, R_OK) < 0)
		return pc_fail(EACCES, "%s: not readable%s: run as root or give a readable copy", who,
			       g_str_has_prefix(path, "/boot/") ? " (Debian installs it 0600)" : "");
	if ((e = infile_read(path, INFILE_KERNEL, &data, &len)))
		return e;
	/* The boot header, as image and fleet check it; a lab host boots
	 * a bzImage, whose payload also holds its config. */
	if ((e = image_kernel_identify(who, data, len)) != IMAGE_KERNEL_BZIMAGE) {
		g_free(data);
		return e < 0 ? e : pc_fail(EINVAL, "%s: an ELF vmlinux: a lab host boots a bzImage "
					   "(arch/x86/boot/bzImage)", who);
	}
	*out = g_bytes_new_take(data, len);
	return 0;
}

/* ---- decompression ---- */

/* Every compression a kernel payload or module may use that libarchive has
 * built in (no external programs). */
static struct archive *raw_reader_new(void)
{
	struct archive *a = archive_read_new();

	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_lz4(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_format_raw(a);
	return a;
}

/* Decompresses a memory buffer (or copies it when it is not compressed).
 * More than max bytes out is -E2BIG; anything else wrong is -EIO. */
static int decompress_mem(const void *data, size_t len, size_t max, GByteArray **out)
{
	g_autoptr(archive_reader) a = raw_reader_new();
	g_autoptr(GByteArray) buf = g_byte_array_new();
	struct archive_entry *e;
	g_autofree char *chunk = g_malloc(65536);
	la_ssize_t n;

	if (archive_read_open_memory(a, data, len) != ARCHIVE_OK ||
	    archive_read_next_header(a, &e) != ARCHIVE_OK)
		return pc_fail(EIO, "%s", archive_error_string(a) ? archive_error_string(a) : "empty");
	while ((n = archive_read_data(a, chunk, 65536)) > 0) {
		if (buf->len + (size_t)n > max)
			return pc_fail(E2BIG, "decompresses beyond %zu bytes", max);
		g_byte_array_append(buf, (guint8 *)chunk, (guint)n);
	}
	if (n < 0)
		return pc_fail(EIO, "%s", archive_error_string(a));
	*out = g_steal_pointer(&buf);
	return 0;
}

/* ---- config text ---- */

static bool config_key_valid(const char *s, size_t n)
{
	if (n <= 7 || strncmp(s, "CONFIG_", 7))
		return false;
	for (size_t i = 7; i < n; i++)
		if (!g_ascii_isalnum(s[i]) && s[i] != '_')
			return false;
	return true;
}

/* Strict parse (see kernel.h); what names the config in messages. */
static int config_parse(const char *text, gsize len, const char *what, GHashTable **out)
{
	g_autoptr(GHashTable) t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	const char *p = text, *end = text + len;
	int line = 0;

	if (len > KERNEL_CONFIG_MAX)
		return pc_fail(EINVAL, "%s: not a kernel config (more than %u MiB)", what,
			       KERNEL_CONFIG_MAX >> 20);
	if (memchr(text, 0, len))
		return pc_fail(EINVAL, "%s: not a kernel config (binary data)", what);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *eq;
		size_t n;

		line++;
		n = (size_t)(le - p);
		if (n && p[n - 1] == '\r')
			n--;
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n && p[0] != '#') {
			eq = memchr(p, '=', n);
			if (!eq || !config_key_valid(p, (size_t)(eq - p))) {
				g_autofree char *show = g_strndup(p, MIN(n, (size_t)40));
				g_autofree char *esc = g_strescape(show, NULL);

				return pc_fail(EINVAL, "%s:%d: not a kernel config line: \"%s\"", what,
					       line, esc);
			}
			g_hash_table_replace(t, g_strndup(p, (gsize)(eq - p)),
					     g_strndup(eq + 1, (gsize)(p + n - eq - 1)));
		}
		p = nl ? nl + 1 : end;
	}
	*out = g_steal_pointer(&t);
	return 0;
}

/* 1 and *out when path is a regular file holding a config; 0 when there is
 * no such file; -errno when it is there but unusable. */
static int config_load_file(const char *path, const char *what, GHashTable **out)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *text = NULL;
	struct stat st;
	gsize len;
	int ret;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if ((guint64)st.st_size > KERNEL_CONFIG_MAX)
		return pc_fail(EINVAL, "%s: not a kernel config (more than %u MiB)", what,
			       KERNEL_CONFIG_MAX >> 20);
	if (!g_file_get_contents(path, &text, &len, &err))
		return pc_fail(err->code == G_FILE_ERROR_ACCES ? EACCES : EIO, "%s: %s", what,
			       err->message);
	if ((ret = config_parse(text, len, what, out)) < 0)
		return ret;
	return 1;
}

/* ---- IKCONFIG ---- */

/* Streams the decompressed payload looking for "IKCFG_ST" + gzip ... "IKCFG_ED".
 * 1 and *gz when found, 0 when not (or the payload cannot be read), -E2BIG
 * past KERNEL_PAYLOAD_MAX. */
static int payload_find_ikconfig(const guint8 *p, gsize n, GByteArray **gz)
{
	g_autoptr(archive_reader) a = raw_reader_new();
	g_autoptr(GByteArray) win = g_byte_array_new();
	g_autoptr(GByteArray) found = NULL;
	struct archive_entry *e;
	const gsize chunk_len = 1 << 20;
	g_autofree guint8 *chunk = g_malloc(chunk_len);
	guint64 total = 0;
	la_ssize_t r;

	if (archive_read_open_memory(a, p, n) != ARCHIVE_OK ||
	    archive_read_next_header(a, &e) != ARCHIVE_OK) {
		pc_debug("kernel: cannot decompress the payload: %s", archive_error_string(a));
		return 0;
	}
	while ((r = archive_read_data(a, chunk, chunk_len)) > 0) {
		total += (guint64)r;
		if (total > KERNEL_PAYLOAD_MAX)
			return -E2BIG;
		if (!found) {
			/* keep the tail of the last chunk: a marker may straddle two */
			g_byte_array_append(win, chunk, (guint)r);
			guint8 *st = memmem(win->data, win->len, IKCFG_ST, IKCFG_ST_LEN);

			if (!st) {
				if (win->len > IKCFG_ST_LEN)
					g_byte_array_remove_range(win, 0, win->len - IKCFG_ST_LEN);
				continue;
			}
			found = g_byte_array_new();
			g_byte_array_append(found, st + 8, (guint)(win->data + win->len - st - 8));
			g_byte_array_set_size(win, 0);
		} else {
			g_byte_array_append(found, chunk, (guint)r);
		}
		gsize from = found->len > (guint)r + IKCFG_ED_LEN ? found->len - (guint)r - IKCFG_ED_LEN : 0;
		guint8 *ed = memmem(found->data + from, found->len - from, IKCFG_ED, IKCFG_ED_LEN);

		if (ed) {
			g_byte_array_set_size(found, (guint)(ed - found->data));
			*gz = g_steal_pointer(&found);
			return 1;
		}
		if (found->len > IKCFG_GZ_MAX) {
			pc_debug("kernel: IKCFG_ST without IKCFG_ED");
			return 0;
		}
	}
	if (r < 0)
		pc_debug("kernel: payload: %s", archive_error_string(a));
	return 0;
}

/* The config embedded in a bzImage (CONFIG_IKCONFIG): 1 and *out, 0 when
 * there is none, -errno. who/what name the image and the config in messages. */
static int ikconfig_load(GBytes *image, const char *who, const char *what, GHashTable **out)
{
	gsize n;
	const guint8 *d = g_bytes_get_data(image, &n);
	g_autoptr(GByteArray) gz = NULL, text = NULL;
	guint64 start, plen;
	unsigned int setup;
	int ret;

	if (n < 0x250 || rd16(d + 0x206) < 0x208)
		return 0; /* no payload fields before boot protocol 2.08 */
	setup = d[0x1f1] ? d[0x1f1] : 4;
	start = (guint64)(setup + 1) * 512 + rd32(d + 0x248);
	plen = rd32(d + 0x24c);
	if (!plen || start >= n || plen > n - start) {
		pc_debug("%s: payload outside the file", who);
		return 0;
	}
	ret = payload_find_ikconfig(d + start, (gsize)plen, &gz);
	if (ret == -E2BIG)
		return pc_fail(EINVAL, "%s: not a kernel image (payload decompresses beyond %u MiB)",
			       who, KERNEL_PAYLOAD_MAX >> 20);
	if (ret <= 0)
		return ret;
	if ((ret = decompress_mem(gz->data, gz->len, KERNEL_CONFIG_MAX, &text)) < 0) {
		pc_warn("%s: IKCONFIG found but not readable (%s): ignored", who, pc_errmsg());
		return 0;
	}
	if ((ret = config_parse((char *)text->data, text->len, what, out)) < 0)
		return ret;
	return 1;
}

/* ---- files ---- */


/* Directories 0755, files 0644: QEMU reads the image as another user. */
static int tree_fix_perms(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return pc_fail(errno, "%s: %s", path, g_strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
		const char *n;
		int ret;

		if (chmod(path, 0755) < 0)
			return pc_fail(errno, "chmod %s: %s", path, g_strerror(errno));
		while (d && (n = g_dir_read_name(d))) {
			g_autofree char *p = g_build_filename(path, n, NULL);

			if ((ret = tree_fix_perms(p)) < 0)
				return ret;
		}
	} else if (S_ISREG(st.st_mode) && chmod(path, 0644) < 0) {
		return pc_fail(errno, "chmod %s: %s", path, g_strerror(errno));
	}
	return 0;
}

static int file_sha256(const char *path, const char *who, char **hex)
{
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	g_autofree guchar *buf = g_malloc(1 << 20);
	FILE *f = fopen(path, "rbe");
	size_t n;

	if (!f)
		return pc_fail(errno, "%s: %s", who, g_strerror(errno));
	while ((n = fread(buf, 1, 1 << 20, f)) > 0)
		g_checksum_update(sum, buf, n);
	if (ferror(f)) {
		fclose(f);
		return pc_fail(EIO, "%s: read error", who);
	}
	fclose(f);
	*hex = g_strdup(g_checksum_get_string(sum));
	return 0;
}

/* ---- modules.dep from .modinfo ---- */

static gint strptr_cmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *const ko_exts[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz", NULL };

static bool is_module(const char *name)
{
	for (int i = 0; ko_exts[i]; i++)
		if (g_str_has_suffix(name, ko_exts[i]))
			return true;
	return false;
}

/* The .modinfo section of an ELF64 little-endian relocatable module. */
static bool elf_modinfo(const guint8 *d, gsize n, const char **info, gsize *info_len)
{
	guint64 shoff, stroff, strsize;
	guint16 shentsize, shnum, shstrndx;

	if (n < 64 || memcmp(d, "\177ELF", 4) || d[4] != 2 || d[5] != 1)
		return false;
	shoff = rd64(d + 0x28);
	shentsize = rd16(d + 0x3a);
	shnum = rd16(d + 0x3c);
	shstrndx = rd16(d + 0x3e);
	if (shentsize < 64 || shstrndx >= shnum || shoff > n ||
	    (guint64)shnum * shentsize > n - shoff)
		return false;
	stroff = rd64(d + shoff + (guint64)shstrndx * shentsize + 24);
	strsize = rd64(d + shoff + (guint64)shstrndx * shentsize + 32);
	if (stroff > n || strsize > n - stroff)
		return false;
	for (guint i = 0; i < shnum; i++) {
		const guint8 *sh = d + shoff + (guint64)i * shentsize;
		guint32 name = rd32(sh);
		guint64 off = rd64(sh + 24), size = rd64(sh + 32);

		if (name >= strsize || strnlen((const char *)d + stroff + name, strsize - name) != 8 ||
		    memcmp(d + stroff + name, ".modinfo", 8))
			continue;
		if (off > n || size > n - off)
			return false;
		*info = (const char *)d + off;
		*info_len = (gsize)size;
		return true;
	}
	return false;
}

struct module {
	char *rel;   /* path relative to the modules dir */
	char **deps; /* module names from "depends=" */
};

static void module_free(gpointer p)
{
	struct module *m = p;

	g_free(m->rel);
	g_strfreev(m->deps);
	g_free(m);
}

/* name from "name=" (else the file name, '-' as '_'), deps from "depends=". */
static int module_info(const char *path, const char *rel, char **name, char ***deps)
{
	g_autofree char *data = NULL;
	g_autoptr(GByteArray) plain = NULL;
	const guint8 *d;
	const char *info = NULL;
	size_t len, ilen = 0;
	int e;

	if ((e = infile_read(path, INFILE_KERNEL, &data, &len)))
		return e;
	d = (guint8 *)data;
	if (!g_str_has_suffix(path, ".ko")) {
		if (decompress_mem(data, len, KERNEL_IMAGE_MAX, &plain) < 0) {
			pc_debug("kernel: %s: %s", path, pc_errmsg());
			plain = g_byte_array_new();
		}
		d = plain->data;
		len = plain->len;
	}
	*name = NULL;
	*deps = NULL;
	if (elf_modinfo(d, len, &info, &ilen)) {
		for (gsize i = 0; i < ilen;) {
			gsize l = strnlen(info + i, ilen - i);

			if (l > 5 && !strncmp(info + i, "name=", 5) && !*name)
				*name = g_strdelimit(g_strndup(info + i + 5, l - 5), "-", '_');
			else if (l >= 8 && !strncmp(info + i, "depends=", 8) && !*deps) {
				g_autofree char *v = g_strndup(info + i + 8, l - 8);

				g_strdelimit(v, "-", '_'); /* depends= may spell names with '-' */
				*deps = g_strsplit(v, ",", -1);
			}
			i += l + 1;
		}
	}
	if (!*name) {
		g_autofree char *base = g_path_get_basename(rel);

		base[strcspn(base, ".")] = 0;
		*name = g_strdelimit(g_steal_pointer(&base), "-", '_');
	}
	if (!*deps)
		*deps = g_new0(char *, 1);
	return 0;
}

static int modules_scan(const char *top, const char *rel, GHashTable *mods)
{
	g_autofree char *dir = rel[0] ? g_build_filename(top, rel, NULL) : g_strdup(top);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *n;
	int ret;

	while (d && (n = g_dir_read_name(d))) {
		g_autofree char *r = rel[0] ? g_build_filename(rel, n, NULL) : g_strdup(n);
		g_autofree char *p = g_build_filename(top, r, NULL);
		struct module *m;
		char *name = NULL;

		if (g_file_test(p, G_FILE_TEST_IS_SYMLINK))
			continue;
		if (g_file_test(p, G_FILE_TEST_IS_DIR)) {
			if ((ret = modules_scan(top, r, mods)) < 0)
				return ret;
			continue;
		}
		if (!is_module(n))
			continue;
		m = g_new0(struct module, 1);
		m->rel = g_steal_pointer(&r);
		if ((ret = module_info(p, m->rel, &name, &m->deps)) < 0) {
			module_free(m);
			return ret;
		}
		g_hash_table_replace(mods, name, m);
	}
	return 0;
}

/* Real dependency chains are a few modules deep (kvm_amd -> kvm ->
 * irqbypass); a package's .modinfo is input, so the recursion is bounded. */
#define MODULE_DEPTH_MAX 64
#define MODULES_MAX 65536

/* Post-order: a module's dependencies before it, each once. false when the
 * chain nests deeper than MODULE_DEPTH_MAX. */
static bool module_closure(GHashTable *mods, const char *name, GHashTable *seen, GPtrArray *order,
			   unsigned int depth)
{
	struct module *m = g_hash_table_lookup(mods, name);

	if (!m || g_hash_table_contains(seen, name))
		return true;
	if (depth > MODULE_DEPTH_MAX)
		return false;
	g_hash_table_add(seen, (gpointer)name);
	for (int i = 0; m->deps[i]; i++)
		if (m->deps[i][0] && !module_closure(mods, m->deps[i], seen, order, depth + 1))
			return false;
	g_ptr_array_add(order, m->rel);
	return true;
}

/* Writes <mdir>/modules.dep in depmod's format: "rel: dep...", every
 * dependency (transitively) listed, the ones to load first last. */
static int modules_dep_write(const char *mdir)
{
	g_autoptr(GHashTable) mods = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, module_free);
	g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) out = g_string_new("");
	g_autoptr(GError) err = NULL;
	g_autofree char *path = g_build_filename(mdir, "modules.dep", NULL);
	GHashTableIter it;
	gpointer key, val;
	int ret;

	if ((ret = modules_scan(mdir, "", mods)) < 0)
		return ret;
	if (g_hash_table_size(mods) > MODULES_MAX)
		return pc_fail(EINVAL, "%u modules: more than %d", g_hash_table_size(mods), MODULES_MAX);
	g_hash_table_iter_init(&it, mods);
	while (g_hash_table_iter_next(&it, &key, &val)) {
		g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
		g_autoptr(GPtrArray) order = g_ptr_array_new();
		GString *l = g_string_new(((struct module *)val)->rel);

		g_string_append_c(l, ':');
		if (!module_closure(mods, key, seen, order, 0)) {
			g_string_free(l, TRUE);
			return pc_fail(EINVAL, "module %s: dependencies nest deeper than %d",
				       (const char *)key, MODULE_DEPTH_MAX);
		}
		/* order ends with the module itself; modprobe loads the list last-first */
		for (int i = (int)order->len - 2; i >= 0; i--)
			g_string_append_printf(l, " %s", (char *)order->pdata[i]);
		g_ptr_array_add(lines, g_string_free(l, FALSE));
	}
	g_ptr_array_sort(lines, strptr_cmp);
	for (guint i = 0; i < lines->len; i++)
		g_string_append_printf(out, "%s\n", (char *)lines->pdata[i]);
	if (!g_file_set_contents_full(path, out->str, (gssize)out->len, G_FILE_SET_CONTENTS_NONE,
				      0644, &err))
		return pc_fail(EIO, "%s", err->message);
	pc_debug("kernel: wrote %s (%u modules)", path, g_hash_table_size(mods));
	return 0;
}

/* ---- .deb ---- */

/* The one boot/vmlinuz-R of an unpack directory. */
static int deb_find_vmlinuz(const char *dir, const char *who, char **release)
{
	g_autofree char *boot = g_build_filename(dir, "boot", NULL);
	g_autoptr(GDir) d = g_dir_open(boot, 0, NULL);
	g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func(g_free);
	const char *n;

	while (d && (n = g_dir_read_name(d)))
		if (g_str_has_prefix(n, "vmlinuz-") && n[8])
			g_ptr_array_add(found, g_strdup(n));
	if (!found->len)
		return pc_fail(EINVAL, "%s: broken package: no boot/vmlinuz-* in it", who);
	if (found->len > 1) {
		g_ptr_array_sort(found, strptr_cmp);
		g_ptr_array_add(found, NULL);
		g_autofree char *all = g_strjoinv(", ", (char **)found->pdata);

		return pc_fail(EINVAL, "%s: broken package: %u kernels in it (%s): cannot tell which",
			       who, found->len - 1, all);
	}
	*release = g_strdup((char *)found->pdata[0] + 8);
	return 0;
}

/* "./lib/modules/R/x.ko" -> "lib/modules/R/x.ko"; NULL (and *bad) for an
 * absolute path or a ".." component. */
static char *deb_path_clean(const char *path, bool *bad)
{
	g_auto(GStrv) parts = NULL;
	g_autoptr(GPtrArray) keep = g_ptr_array_new();

	*bad = path[0] == '/' || !path[0];
	if (*bad)
		return NULL;
	parts = g_strsplit(path, "/", -1);
	for (int i = 0; parts[i]; i++) {
		if (!strcmp(parts[i], "..")) {
			*bad = true;
			return NULL;
		}
		if (parts[i][0] && strcmp(parts[i], "."))
			g_ptr_array_add(keep, parts[i]);
	}
	g_ptr_array_add(keep, NULL);
	return g_strjoinv("/", (char **)keep->pdata);
}

/* Where a package path goes in the unpack directory, NULL: not unpacked. */
static const char *deb_dest(const char *rel)
{
	if (g_str_has_prefix(rel, "boot/") || g_str_has_prefix(rel, "lib/modules/"))
		return rel;
	if (g_str_has_prefix(rel, "usr/lib/modules/"))
		return rel + 4; /* merged /usr: one layout in the cache */
	return NULL;
}

struct ar_member {
	struct archive *ar;
	char buf[65536];
};

static la_ssize_t ar_member_read(struct archive *a, void *ud, const void **buf)
{
	struct ar_member *m = ud;
	la_ssize_t n = archive_read_data(m->ar, m->buf, sizeof(m->buf));

	if (n < 0) {
		archive_set_error(a, EIO, "%s", archive_error_string(m->ar));
		return -1;
	}
	*buf = m->buf;
	return n;
}

/* Unpacks the data.tar member read from ar into dir. */
static int deb_unpack_data(struct archive *ar, const char *member, const char *who, const char *dir)
{
	g_autoptr(archive_reader) tar = archive_read_new();
	g_autoptr(archive_writer) disk = archive_write_disk_new();
	g_autofree struct ar_member *m = g_new0(struct ar_member, 1);
	g_autofree char *chunk = g_malloc(65536);
	struct archive_entry *e;
	la_int64_t total = 0;
	int r;

	/* SECURE_NOABSOLUTEPATHS is left out: it refuses our own absolute
	 * destination (chdir() would be process-wide); the package's paths are
	 * checked by deb_path_clean() instead. */
	archive_write_disk_set_options(disk, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
					     ARCHIVE_EXTRACT_SECURE_SYMLINKS);
	m->ar = ar;
	archive_read_support_filter_all(tar);
	archive_read_support_format_tar(tar);
	if (archive_read_open(tar, m, NULL, ar_member_read, NULL) != ARCHIVE_OK)
		return pc_fail(EINVAL, "%s: broken package: %s: %s", who, member,
			       archive_error_string(tar));
	while ((r = archive_read_next_header(tar, &e)) != ARCHIVE_EOF) {
		g_autofree char *rel = NULL, *dest = NULL;
		const char *to;
		bool bad;

		if (r < ARCHIVE_WARN)
			return pc_fail(EINVAL, "%s: broken package: %s: %s", who, member,
				       archive_error_string(tar));
		if (!archive_entry_pathname(e))
			return pc_fail(EINVAL, "%s: broken package: %s: entry without a name", who,
				       member);
		rel = deb_path_clean(archive_entry_pathname(e), &bad);
		if (bad)
			return pc_fail(EINVAL, "%s: broken package: %s: unsafe path \"%s\"", who,
				       member, archive_entry_pathname(e));
		if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e) ||
		    !(to = deb_dest(rel)))
			continue;
		total += archive_entry_size(e);
		if (total > DEB_UNPACK_MAX)
			return pc_fail(EINVAL, "%s: broken package: unpacks beyond %lld GiB", who,
				       (long long)(DEB_UNPACK_MAX >> 30));
		dest = g_build_filename(dir, to, NULL);
		archive_entry_set_pathname(e, dest);
		archive_entry_set_perm(e, 0644);
		if (archive_write_header(disk, e) < ARCHIVE_WARN)
			return pc_fail(EIO, "%s: unpacking %s: %s", who, rel,
				       archive_error_string(disk));
		la_ssize_t n;

		while ((n = archive_read_data(tar, chunk, 65536)) > 0)
			if (archive_write_data(disk, chunk, (size_t)n) != n)
				return pc_fail(EIO, "%s: unpacking %s: %s", who, rel,
					       archive_error_string(disk));
		if (n < 0)
			return pc_fail(EINVAL, "%s: broken package: %s: %s", who, member,
				       archive_error_string(tar));
		if (archive_write_finish_entry(disk) < ARCHIVE_WARN)
			return pc_fail(EIO, "%s: unpacking %s: %s", who, rel,
				       archive_error_string(disk));
	}
	if (archive_write_close(disk) < ARCHIVE_WARN)
		return pc_fail(EIO, "%s: unpacking: %s", who, archive_error_string(disk));
	return 0;
}

/* Unpacks deb's kernel and modules into dir (which exists and is empty). */
static int deb_unpack(const char *deb, const char *who, const char *dir)
{
	g_autoptr(archive_reader) ar = archive_read_new();
	struct archive_entry *e;
	bool first = true;
	int r;

	archive_read_support_format_ar(ar);
	/* the format is bid on at open; the file was just read whole for its hash */
	if (archive_read_open_filename(ar, deb, 65536) != ARCHIVE_OK)
		return pc_fail(EINVAL, "%s: broken package: not an ar archive (%s)", who,
			       archive_error_string(ar));
	while ((r = archive_read_next_header(ar, &e)) != ARCHIVE_EOF) {
		const char *name;

		if (r < ARCHIVE_WARN)
			return pc_fail(EINVAL, "%s: broken package: %s", who,
				       first ? "not an ar archive" : archive_error_string(ar));
		name = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
		if (first && strcmp(name, "debian-binary"))
			return pc_fail(EINVAL, "%s: broken package: first member is \"%s\", not "
				       "debian-binary", who, name);
		first = false;
		if (g_str_has_prefix(name, "data.tar"))
			return deb_unpack_data(ar, name, who, dir);
	}
	return pc_fail(EINVAL, "%s: broken package: %s", who,
		       first ? "not an ar archive" : "no data.tar member");
}

/* Finds or makes the unpack directory of deb; sets *dir and *release. */
static int deb_prepare(const char *deb, const char *who, const char *cache_dir, char **dir,
		       char **release)
{
	g_autofree char *sha = NULL, *cache = NULL, *final = NULL, *tmp = NULL, *rel = NULL;
	g_autofree char *image = NULL, *mdir = NULL, *dep = NULL;
	g_autoptr(GBytes) bytes = NULL;
	struct stat st;
	int ret;

	if (stat(deb, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? pc_fail(EINVAL, "%s: no such file", who) :
		       pc_fail(pc_errno_bad_path(errno) ? EINVAL : errno, "%s: %s", who,
			       g_strerror(errno));
	if (!S_ISREG(st.st_mode))
		return pc_fail(EINVAL, "%s: not a regular file", who);
	if ((ret = file_sha256(deb, who, &sha)) < 0)
		return ret;
	if ((ret = image_mkdir_public(cache_dir)) < 0)
		return ret;
	/* no symlink above the destination: SECURE_SYMLINKS would refuse it */
	if (!(cache = realpath(cache_dir, NULL)))
		return pc_fail(errno, "kernel cache %s: %s", cache_dir, g_strerror(errno));
	final = g_strdup_printf("%s/deb-%.16s", cache, sha);
	if (g_file_test(final, G_FILE_TEST_IS_DIR)) {
		pc_debug("kernel: %s: found %s", who, final);
		if ((ret = deb_find_vmlinuz(final, who, release)) < 0)
			return ret;
		*dir = g_steal_pointer(&final);
		return 0;
	}
	/* unique per call (threads share a pid); made 0755 by tree_fix_perms() */
	tmp = g_strdup_printf("%s/.tmp-deb-%.16s-XXXXXX", cache, sha);
	if (!mkdtemp(tmp))
		return pc_fail(errno, "kernel cache: cannot create %s: %s", tmp, g_strerror(errno));
	if ((ret = deb_unpack(deb, who, tmp)) < 0 || (ret = deb_find_vmlinuz(tmp, who, &rel)) < 0)
		goto fail;
	image = g_strdup_printf("%s/boot/vmlinuz-%s", tmp, rel);
	if ((ret = image_load(who, image, &bytes)) < 0) {
		ret = pc_fail(EINVAL, "%s: broken package: boot/vmlinuz-%s is not a bzImage", who, rel);
		goto fail;
	}
	mdir = g_strdup_printf("%s/lib/modules/%s", tmp, rel);
	dep = g_build_filename(mdir, "modules.dep", NULL);
	if (g_file_test(mdir, G_FILE_TEST_IS_DIR) && !g_file_test(dep, G_FILE_TEST_EXISTS) &&
	    (ret = modules_dep_write(mdir)) < 0) {
		if (ret == -EINVAL) {
			g_autofree char *why = g_strdup(pc_errmsg());

			ret = pc_fail(EINVAL, "%s: broken package: %s", who, why);
		}
		goto fail;
	}
	if ((ret = tree_fix_perms(tmp)) < 0)
		goto fail;
	if (rename(tmp, final) < 0) {
		int e = errno;

		image_remove_tree(tmp);
		/* a concurrent resolve of the same package won the race */
		if (!((e == EEXIST || e == ENOTEMPTY) && g_file_test(final, G_FILE_TEST_IS_DIR)))
			return pc_fail(e, "kernel cache: rename to %s: %s", final, g_strerror(e));
	} else {
		pc_info("kernel: unpacked %s into %s", deb, final);
	}
	*release = g_steal_pointer(&rel);
	*dir = g_steal_pointer(&final);
	return 0;
fail:
	image_remove_tree(tmp);
	return ret;
}

/* ---- finding the config ---- */

/* Tries one config file; 1 when it was there and became k's config. */
static int config_try(struct kernel *k, const char *who, const char *path, const char *source)
{
	g_autofree char *abs = g_canonicalize_filename(path, NULL);
	g_autofree char *what = g_strdup_printf("%s: config %s", who, abs);
	GHashTable *t = NULL;
	int ret = config_load_file(abs, what, &t);

	if (ret <= 0)
		return ret;
	k->config = t;
	k->config_source = g_strdup(source ? source : abs);
	return 1;
}

/* who: "--kernel SPEC"; image_who names the image in messages. */
static int config_find(struct kernel *k, const struct kernel_opts *o, const char *boot_dir,
		       GBytes *image, const char *who, const char *image_who)
{
	g_autofree char *dir = g_path_get_dirname(k->image);
	g_autofree char *what = NULL;
	int ret;

	if (o->config) {
		g_autofree char *label = g_strdup_printf("--config %s", o->config);
		GHashTable *t = NULL;
		g_autofree char *abs = g_canonicalize_filename(o->config, NULL);

		if (!g_file_test(o->config, G_FILE_TEST_IS_REGULAR))
			return pc_fail(EINVAL, "--config %s: %s", o->config,
				       g_file_test(o->config, G_FILE_TEST_EXISTS) ?
				       "not a regular file" : "no such file");
		if ((ret = config_load_file(abs, label, &t)) < 0)
			return ret;
		k->config = t;
		k->config_source = g_steal_pointer(&abs);
		return 0;
	}
	if (k->source == KERNEL_SOURCE_DEB) {
		g_autofree char *path = g_strdup_printf("%s/boot/config-%s", k->deb_dir, k->release);
		g_autofree char *deb = g_path_get_basename(k->arg);
		g_autofree char *src = g_strdup_printf("config-%s in %s", k->release, deb);

		if ((ret = config_try(k, who, path, src)) != 0)
			return ret < 0 ? ret : 0;
	}
	what = g_strdup_printf("%s: IKCONFIG", image_who);
	if ((ret = ikconfig_load(image, image_who, what, &k->config)) < 0)
		return ret;
	if (ret) {
		k->config_source = g_strdup_printf("IKCONFIG in %s", k->image);
		return 0;
	}
	if (k->release[0]) {
		g_autofree char *beside = g_strdup_printf("%s/config-%s", dir, k->release);
		g_autofree char *boot = g_strdup_printf("%s/config-%s", boot_dir, k->release);

		if ((ret = config_try(k, who, beside, NULL)) != 0 ||
		    (ret = config_try(k, who, boot, NULL)) != 0)
			return ret < 0 ? ret : 0;
	}
	if (g_str_has_suffix(k->image, "/arch/x86/boot/bzImage") ||
	    g_str_has_suffix(k->image, "/arch/x86_64/boot/bzImage")) {
		g_autofree char *a = g_path_get_dirname(dir);    /* arch/x86 */
		g_autofree char *b = g_path_get_dirname(a);      /* arch */
		g_autofree char *tree = g_path_get_dirname(b);
		g_autofree char *dotconfig = g_build_filename(tree, ".config", NULL);

		if ((ret = config_try(k, who, dotconfig, NULL)) != 0)
			return ret < 0 ? ret : 0;
	}
	if (k->modules_dir) {
		g_autofree char *build = g_build_filename(k->modules_dir, "build", ".config", NULL);

		if ((ret = config_try(k, who, build, NULL)) != 0)
			return ret < 0 ? ret : 0;
	}
	/* Said where a user sees it: what it needs (KVM, virtio, 9p) is only
	 * found out when it boots, as a lab host that never comes up. */
	pc_warn("%s: no kernel config found (%s%s, IKCONFIG, config-RELEASE beside it or in "
		"/boot, the tree's .config): its options are not checked before it boots",
		who, k->source == KERNEL_SOURCE_DEB ? "none in the package: " : "",
		k->source == KERNEL_SOURCE_DEB ? "boot/config-RELEASE" : "--config");
	return 0;
}

/* ---- resolve ---- */

static char *installed_releases(const char *boot_dir)
{
	g_autoptr(GDir) d = g_dir_open(boot_dir, 0, NULL);
	g_autoptr(GPtrArray) r = g_ptr_array_new_with_free_func(g_free);
	const char *n;

	while (d && (n = g_dir_read_name(d)))
		if (g_str_has_prefix(n, "vmlinuz-") && n[8])
			g_ptr_array_add(r, g_strdup(n + 8));
	if (!r->len)
		return g_strdup("none installed");
	g_ptr_array_sort(r, strptr_cmp);
	g_ptr_array_add(r, NULL);
	g_autofree char *list = g_strjoinv(", ", (char **)r->pdata);
	return g_strdup_printf("installed: %s", list);
}

int kernel_resolve(const char *spec, const struct kernel_opts *opts, struct kernel **out)
{
	static const struct kernel_opts defaults;
	const struct kernel_opts *o = opts ? opts : &defaults;
	const char *boot_dir = o->boot_dir ? o->boot_dir : "/boot";
	const char *modules_root = o->modules_root ? o->modules_root : "/lib/modules";
	g_autoptr(kernel) k = g_new0(struct kernel, 1);
	g_autofree char *who = NULL, *name = NULL, *image_who = NULL;
	g_autoptr(GBytes) bytes = NULL;
	int ret;

	if (!spec || !spec[0])
		return pc_fail(EINVAL, "--kernel: empty argument");
	who = g_strdup_printf("--kernel %s", spec);
	if (g_str_has_prefix(spec, REPLAY_PREFIX) && !g_file_test(spec, G_FILE_TEST_EXISTS)) {
		/* replay:LIST[:NAME]: LIST has no ':', so the NAME is what follows one */
		const char *list = spec + strlen(REPLAY_PREFIX), *colon = strchr(list, ':');

		k->arg = colon ? g_strndup(spec, (gsize)(colon - spec)) : g_strdup(spec);
		if (colon && !name_valid(colon + 1))
			return pc_fail(EINVAL, "--kernel %s: bad NAME \"%s\" (1..%d characters of "
				       "A-Z a-z 0-9 _ . + -, not . or ..)", spec, colon + 1,
				       KERNEL_NAME_MAX);
		name = g_strdup(colon ? colon + 1 : list);
		if (!name_valid(name)) /* the LIST itself; replay_kernel says what is wrong */
			g_clear_pointer(&name, g_free);
	} else if ((ret = spec_split(spec, boot_dir, &k->arg, &name)) < 0) {
		return ret;
	}
	if (o->modules_dir && !g_file_test(o->modules_dir, G_FILE_TEST_IS_DIR))
		return pc_fail(EINVAL, "--modules %s: %s", o->modules_dir,
			       g_file_test(o->modules_dir, G_FILE_TEST_EXISTS) ? "not a directory" :
			       "no such directory");

	if (g_str_has_prefix(k->arg, REPLAY_PREFIX) && !g_file_test(spec, G_FILE_TEST_EXISTS)) {
		k->source = KERNEL_SOURCE_REPLAY;
		if ((ret = replay_kernel(k->arg + strlen(REPLAY_PREFIX), &k->image)) < 0)
			return ret;
		image_who = g_strdup_printf("%s: %s", who, k->image);
	} else if (g_str_has_suffix(k->arg, ".deb")) {
		g_autofree char *cache = o->cache_dir ? g_strdup(o->cache_dir) :
						       kernel_default_cache_dir();
		g_autofree char *mdir = NULL;

		k->source = KERNEL_SOURCE_DEB;
		if ((ret = deb_prepare(k->arg, who, cache, &k->deb_dir, &k->release)) < 0)
			return ret;
		k->image = g_strdup_printf("%s/boot/vmlinuz-%s", k->deb_dir, k->release);
		mdir = g_strdup_printf("%s/lib/modules/%s", k->deb_dir, k->release);
		if (g_file_test(mdir, G_FILE_TEST_IS_DIR))
			k->modules_dir = g_steal_pointer(&mdir);
		image_who = g_strdup_printf("%s: boot/vmlinuz-%s", who, k->release);
	} else if (strchr(k->arg, '/') || g_file_test(k->arg, G_FILE_TEST_EXISTS)) {
		g_autofree char *base = g_path_get_basename(k->arg);

		k->source = KERNEL_SOURCE_IMAGE;
		k->image = g_canonicalize_filename(k->arg, NULL);
		image_who = g_strdup(who);
		if (g_str_has_prefix(base, "vmlinuz-") && base[8])
			k->release = g_strdup(base + 8);
	} else {
		g_autofree char *vmlinuz = g_strdup_printf("%s/vmlinuz-%s", boot_dir, k->arg);

		k->source = KERNEL_SOURCE_RELEASE;
		if (!g_file_test(vmlinuz, G_FILE_TEST_EXISTS)) {
			g_autofree char *have = installed_releases(boot_dir);

			return pc_fail(EINVAL, "%s: no %s (%s)", who, vmlinuz, have);
		}
		k->image = g_canonicalize_filename(vmlinuz, NULL);
		k->release = g_strdup(k->arg);
		image_who = g_strdup_printf("%s: %s", who, vmlinuz);
	}
	if ((ret = image_load(image_who, k->image, &bytes)) < 0)
		return ret;
	if (!k->release)
		k->release = bz_release(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
	k->sha256 = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, bytes);

	if (o->modules_dir) {
		k->modules_dir = g_canonicalize_filename(o->modules_dir, NULL);
	} else if (k->source != KERNEL_SOURCE_DEB && k->release[0]) {
		g_autofree char *mdir = g_build_filename(modules_root, k->release, NULL);

		if (g_file_test(mdir, G_FILE_TEST_IS_DIR))
			k->modules_dir = g_canonicalize_filename(mdir, NULL);
	}

	if ((ret = config_find(k, o, boot_dir, bytes, who, image_who)) < 0)
		return ret;

	k->name_given = name != NULL;
	if (name)
		k->name = g_steal_pointer(&name);
	else if (k->release[0])
		k->name = g_strdup(k->release);
	else
		k->name = g_path_get_basename(k->image);
	pc_debug("kernel: %s -> %s %s release %s config %s", spec, kernel_source_name(k->source),
		 k->image, k->release, k->config_source ? k->config_source : "none");
	*out = g_steal_pointer(&k);
	return 0;
}

/* ---- the lab-host check ---- */

const struct kernel_need kernel_lab_needs[] = {
	{ "VIRTIO_PCI", "ym", true, NULL, "virtio_pci", NULL,
	  "the lab host's devices are virtio PCI" },
	{ "VIRTIO_CONSOLE", "ym", true, NULL, "virtio_console", NULL,
	  "the harness talks to the lab host over virtio-serial" },
	{ "NET_9P", "ym", true, NULL, "9pnet", NULL,
	  "the host's root filesystem is shared over virtio-9p" },
	{ "NET_9P_VIRTIO", "ym", true, NULL, "9pnet_virtio", NULL,
	  "the virtio transport of 9p" },
	{ "9P_FS", "ym", true, NULL, "9p", NULL,
	  "the host's root filesystem is shared over virtio-9p" },
	{ "OVERLAY_FS", "ym", true, NULL, "overlay", NULL,
	  "a writable layer over the read-only shared root" },
	{ "KVM", "ym", true, NULL, "kvm", NULL,
	  "the lab host runs its guests nested under its own KVM" },
	{ "KVM_AMD", "ym", true, "amd", "kvm_amd", NULL, "KVM on AMD CPUs, nested SVM" },
	{ "KVM_INTEL", "ym", true, "intel", "kvm_intel", NULL, "KVM on Intel CPUs, nested VMX" },
	{ "PERF_EVENTS", "y", true, NULL, NULL, NULL, "perf_event_open is what is tested" },
	{ "DEVTMPFS", "y", true, NULL, NULL, NULL, "the lab host's /dev is devtmpfs" },
	{ "TMPFS", "y", true, NULL, NULL, NULL, "/run and /tmp are tmpfs" },
	{ "BLK_DEV_INITRD", "y", true, NULL, NULL, NULL, "the lab host boots an initramfs" },
	{ "SERIAL_8250_CONSOLE", "y", true, NULL, NULL, NULL,
	  "the lab host's console is its first serial port" },
	{ "PROC_FS", "y", true, NULL, NULL, NULL, "the harness reads /proc" },
	{ "SYSFS", "y", true, NULL, NULL, NULL, "PMUs are found in /sys/bus/event_source" },
	{ "UNIX", "ym", true, NULL, "unix", NULL, "libvirtd listens on a unix socket" },
	{ "MULTIUSER", "y", true, NULL, NULL, NULL, "QEMU runs as another user inside" },
	{ "NAMESPACES", "y", true, NULL, NULL, NULL, "libvirt runs QEMU in namespaces" },
	{ "BINFMT_ELF", "y", true, NULL, NULL, NULL, "the harness, libvirtd and QEMU are ELF" },
	{ "PVPANIC", "ym", false, NULL, "pvpanic", NULL,
	  "without it a lab host panic reads as a hang" },
	{ "PVPANIC_MMIO", "ym", false, NULL, "pvpanic_mmio", "5.12",
	  "the isa pvpanic device's driver: without it a lab host panic reads as a hang" },
	{ "MAGIC_SYSRQ", "y", false, NULL, NULL, NULL,
	  "sysrq shows where a hung lab host is stuck" },
	{ "TMPFS_XATTR", "y", false, NULL, NULL, NULL,
	  "libvirt remembers file owners in xattrs, also on tmpfs" },
	{ "SECCOMP_FILTER", "y", false, NULL, NULL, NULL, "QEMU's seccomp sandbox" },
	{ NULL, NULL, false, NULL, NULL, NULL, NULL },
};

/* "5.12..." -> 5, 12; false unless two decimal parts that fit 64 bits
 * (sscanf "%u" cut 4294967301 to 5). */
static bool release_major_minor(const char *r, guint64 *major, guint64 *minor)
{
	size_t la = strspn(r, "0123456789"), lb;
	g_autofree char *a = g_strndup(r, la);
	g_autofree char *b = NULL;

	if (!la || r[la] != '.')
		return false;
	lb = strspn(r + la + 1, "0123456789");
	b = g_strndup(r + la + 1, lb);
	return lb && g_ascii_string_to_unsigned(a, 10, 0, G_MAXUINT64, major, NULL) &&
	       g_ascii_string_to_unsigned(b, 10, 0, G_MAXUINT64, minor, NULL);
}

/* release >= since ("5.12"); an unparsable release is taken as new enough. */
static bool release_at_least(const char *release, const char *since)
{
	guint64 a, b, x, y;

	if (!since)
		return true;
	if (!release_major_minor(release, &a, &b) || !release_major_minor(since, &x, &y))
		return true;
	return a > x || (a == x && b >= y);
}

static bool need_applies(const struct kernel_need *n, const struct kernel *k)
{
	return release_at_least(k->release, n->since);
}

GPtrArray *kernel_lab_modules(const struct kernel *k)
{
	GPtrArray *mods = g_ptr_array_new_with_free_func(g_free);

	for (const struct kernel_need *n = kernel_lab_needs; n->option; n++) {
		const char *v = kernel_config_get(k, n->option);

		if (!n->module || !need_applies(n, k))
			continue;
		if (!k->config || (v && !strcmp(v, "m")))
			g_ptr_array_add(mods, g_strdup(n->module));
	}
	return mods;
}

struct lab_check {
	const struct kernel *k;
	bool have_dep;      /* modules_dir has a modules.dep */
	GHashTable *absent; /* module names in neither modules.dep nor modules.builtin */
	char *resolve_err;
};

/* What lacks for n, "CONFIG_X ..." without the reason; NULL: nothing. */
static char *need_lack(const struct kernel_need *n, const struct lab_check *c)
{
	const struct kernel *k = c->k;
	const char *v = kernel_config_get(k, n->option);

	if (!v)
		return g_strdup_printf("CONFIG_%s is not set", n->option);
	if (!strcmp(v, "y") && strchr(n->allowed, 'y'))
		return NULL;
	if (strcmp(v, "m"))
		return g_strdup_printf("CONFIG_%s=%s, needs =%s", n->option, v,
				       strchr(n->allowed, 'm') ? "y or =m" : "y");
	if (!strchr(n->allowed, 'm'))
		return g_strdup_printf("CONFIG_%s=m, needs =y", n->option);
	if (!n->module)
		return NULL;
	if (!k->modules_dir)
		return g_strdup_printf("CONFIG_%s=m but no modules dir: %s", n->option,
				       k->source == KERNEL_SOURCE_DEB ?
				       "the package has no lib/modules" : "give --modules DIR");
	if (!c->have_dep)
		return g_strdup_printf("CONFIG_%s=m but %s has no modules.dep (run depmod)",
				       n->option, k->modules_dir);
	if (c->resolve_err)
		return g_strdup_printf("CONFIG_%s=m but %s", n->option, c->resolve_err);
	if (g_hash_table_contains(c->absent, n->module))
		return g_strdup_printf("CONFIG_%s=m but module %s is not in %s/modules.dep",
				       n->option, n->module, k->modules_dir);
	return NULL;
}

/* Adds "lack (why)" to full and, when brief is not NULL, lack alone to brief. */
static void lack_add(GPtrArray *full, GPtrArray *brief, char *lack, const char *why)
{
	g_ptr_array_add(full, g_strdup_printf("%s (%s)", lack, why));
	if (brief)
		g_ptr_array_add(brief, lack);
	else
		g_free(lack);
}

int kernel_check_lab(const struct kernel *k, const char *kvm, GPtrArray **missing,
		     GPtrArray **warnings)
{
	g_autoptr(GPtrArray) miss = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) miss_brief = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) warn = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) absent = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GPtrArray) vendor_lacks = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) vendor_rows = g_ptr_array_new();
	g_autoptr(GString) vendor_names = g_string_new("");
	g_autofree char *label = kernel_label(k);
	g_autofree char *resolve_err = NULL;
	struct lab_check c = { k, false, absent, NULL };
	bool vendor_ok = false, vendor_any_set = false;

	if (kvm && strcmp(kvm, "amd") && strcmp(kvm, "intel"))
		return pc_fail(EINVAL, "kvm \"%s\": must be amd or intel", kvm);
	if (!k->config) {
		g_ptr_array_add(warn, g_strdup_printf("no config found for %s: cannot check that it "
						      "can be a lab host (give --config FILE)",
						      label));
		goto done;
	}
	if (k->modules_dir) {
		g_autofree char *dep = g_build_filename(k->modules_dir, "modules.dep", NULL);
		g_autoptr(GPtrArray) names = kernel_lab_modules(k);
		g_autoptr(GPtrArray) paths = NULL, gone = NULL;

		c.have_dep = g_file_test(dep, G_FILE_TEST_IS_REGULAR);
		g_ptr_array_add(names, NULL);
		if (c.have_dep && names->len > 1) {
			if (image_modules_resolve(k->modules_dir, (const char *const *)names->pdata,
						  &paths, &gone) < 0)
				c.resolve_err = resolve_err = g_strdup(pc_errmsg()); /* e.g. a cycle */
			for (guint i = 0; gone && i < gone->len; i++)
				g_hash_table_add(absent, g_strdup(gone->pdata[i]));
		}
	}
	for (const struct kernel_need *n = kernel_lab_needs; n->option; n++) {
		char *lack;

		if (!need_applies(n, k) || (n->kvm && kvm && strcmp(n->kvm, kvm)))
			continue;
		lack = need_lack(n, &c);
		if (n->kvm && !kvm) {
			/* either vendor module will do */
			g_string_append_printf(vendor_names, "%sCONFIG_%s",
					       vendor_names->len ? " nor " : "", n->option);
			if (!lack) {
				vendor_ok = true;
			} else if (kernel_config_get(k, n->option)) {
				vendor_any_set = true;
				g_ptr_array_add(vendor_lacks, lack);
				g_ptr_array_add(vendor_rows, (gpointer)n);
			} else {
				g_free(lack);
			}
			continue;
		}
		if (lack)
			lack_add(n->required ? miss : warn, n->required ? miss_brief : NULL, lack,
				 n->why);
	}
	if (!vendor_ok && vendor_names->len) {
		if (!vendor_any_set)
			lack_add(miss, miss_brief, g_strdup_printf("neither %s is set", vendor_names->str),
				 "KVM needs its AMD or Intel part");
		/* set but unusable (=m without modules): say why */
		for (guint i = 0; i < vendor_lacks->len; i++)
			lack_add(miss, miss_brief, g_strdup(vendor_lacks->pdata[i]),
				 ((const struct kernel_need *)vendor_rows->pdata[i])->why);
	}
done:
	if (miss->len) {
		g_ptr_array_add(miss, NULL);
		g_ptr_array_add(miss_brief, NULL);
		g_autofree char *all = g_strjoinv("; ", (char **)miss->pdata);
		g_autofree char *brief = g_strjoinv("; ", (char **)miss_brief->pdata);

		g_ptr_array_remove_index(miss, miss->len - 1);
		/* pc_fail() keeps 1 KiB: drop the reasons rather than lacks */
		pc_fail(EINVAL, "kernel %s cannot be a lab host: %s", label,
			strlen(all) + strlen(label) < 960 ? all : brief);
	}
	if (missing)
		*missing = g_ptr_array_ref(miss);
	if (warnings)
		*warnings = g_ptr_array_ref(warn);
	return miss->len ? -EINVAL : 0;
}
