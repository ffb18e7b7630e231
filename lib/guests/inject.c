/* The agent into distribution disk images, through libguestfs (inject.h). */
#include "inject.h"
#include "fingerprint.h"
#include "image.h"
#include "log.h"
#include "results.h"
#include "textesc.h"

#include <errno.h>
#include <fcntl.h>
#include <guestfs.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INJECT_MIN_DISK_BYTES (64 * 1024)
#define INITTAB_TAG "pmucanary-agent"

static const char *const init_names[INJECT_INIT_COUNT] = { "systemd", "busybox", "sysvinit" };

const char *inject_init_name(enum inject_init i)
{
	return i < INJECT_INIT_COUNT ? init_names[i] : "?";
}

/* ---- pure parts ---- */

int inject_init_detect(const struct inject_init_facts *f)
{
	const char *l = f->sbin_init_link;

	/* /sbin/init says it first: busybox images link it to busybox,
	 * systemd ones to systemd; a Debian sysvinit-core has a real file */
	if (l && strstr(l, "busybox"))
		return INJECT_INIT_BUSYBOX;
	if (l && strstr(l, "systemd"))
		return INJECT_INIT_SYSTEMD;
	if (f->systemd_binary && f->systemd_dir && (!f->sbin_init_exists || !f->inittab))
		return INJECT_INIT_SYSTEMD;
	if (f->sbin_init_exists && f->inittab)
		return INJECT_INIT_SYSVINIT;
	return pc_fail(ENOTSUP, "unknown init (/sbin/init %s%s%s, %s, %s): "
		       "only systemd, busybox init and sysvinit can start the agent",
		       l ? "-> " : "", l ? l : f->sbin_init_exists ? "a file" : "missing",
		       "", f->systemd_binary ? "systemd present" : "no systemd",
		       f->inittab ? "/etc/inittab present" : "no /etc/inittab");
}

char *inject_systemd_unit(void)
{
	/* Restart=no: an agent that dies is a guest that stops beating, and a
	 * restarted agent would restart seq (a false GUEST_REBOOT) */
	return g_strdup("# Installed by pmucanary image --inject: the heartbeat agent.\n"
			"[Unit]\n"
			"Description=pmucanary heartbeat agent\n"
			"After=systemd-modules-load.service systemd-udevd.service\n"
			"\n"
			"[Service]\n"
			"Type=simple\n"
			"ExecStart=" INJECT_AGENT_PATH " " INJECT_AGENT_ARG "\n"
			"Restart=no\n"
			"StandardOutput=journal+console\n"
			"StandardError=journal+console\n"
			"\n"
			"[Install]\n"
			"WantedBy=multi-user.target\n");
}

char *inject_inittab(enum inject_init init, const char *old)
{
	GString *s = g_string_new(old ? old : "");

	if (old && strstr(old, INJECT_AGENT_PATH))
		return g_string_free(s, FALSE);
	if (!old && init == INJECT_INIT_BUSYBOX)
		/* an inittab replaces busybox's built-in table: keep it */
		g_string_append(s, "::sysinit:/etc/init.d/rcS\n"
				   "::askfirst:-/bin/sh\n"
				   "::ctrlaltdel:/sbin/reboot\n"
				   "::shutdown:/sbin/swapoff -a\n"
				   "::shutdown:/bin/umount -a -r\n"
				   "::restart:/sbin/init\n");
	if (s->len && s->str[s->len - 1] != '\n')
		g_string_append_c(s, '\n');
	g_string_append(s, "# " INITTAB_TAG ": installed by pmucanary image --inject\n");
	/* busybox takes the first field as the tty: empty means the console;
	 * sysvinit needs an id of up to 4 characters and runlevels. once, not
	 * respawn: see inject_systemd_unit() */
	if (init == INJECT_INIT_BUSYBOX)
		g_string_append(s, "::once:" INJECT_AGENT_PATH " " INJECT_AGENT_ARG "\n");
	else
		g_string_append(s, "pmca:2345:once:" INJECT_AGENT_PATH " " INJECT_AGENT_ARG "\n");
	return g_string_free(s, FALSE);
}

static const char *const initrd_patterns[] = {
	"initrd.img-%s", "initramfs-%s.img", "initrd-%s", "initrd-%s.img", NULL,
};

int inject_pick_kernel(char *const *names, char **kernel, char **release, char **initrd)
{
	const char *best = NULL;

	for (size_t i = 0; names && names[i]; i++) {
		const char *n = names[i];

		if (strncmp(n, "vmlinuz-", 8) || !n[8] || strchr(n, '/'))
			continue;
		if (!best || strverscmp(n + 8, best + 8) > 0)
			best = n;
	}
	if (!best)
		return pc_fail(ENOENT, "no /boot/vmlinuz-* in the image");
	*kernel = g_strdup(best);
	*release = g_strdup(best + 8);
	*initrd = NULL;
	for (size_t p = 0; initrd_patterns[p] && !*initrd; p++) {
		g_autofree char *want = g_strdup_printf(initrd_patterns[p], best + 8);

		for (size_t i = 0; names[i]; i++)
			if (!strcmp(names[i], want)) {
				*initrd = g_steal_pointer(&want);
				break;
			}
	}
	return 0;
}

static const char *const bootloader_names[INJECT_BOOTLOADER_COUNT] = { "none", "grub", "extlinux" };
static const char *const disk_boot_names[INJECT_DISK_BOOT_COUNT] = { "kernel", "bootloader" };

const char *inject_bootloader_name(enum inject_bootloader b)
{
	return b < INJECT_BOOTLOADER_COUNT ? bootloader_names[b] : "?";
}

const char *inject_disk_boot_name(enum inject_disk_boot b)
{
	return b < INJECT_DISK_BOOT_COUNT ? disk_boot_names[b] : "?";
}

int inject_disk_boot_parse(const char *s)
{
	for (int i = 0; s && i < INJECT_DISK_BOOT_COUNT; i++)
		if (!strcmp(s, disk_boot_names[i]))
			return i;
	return -EINVAL;
}

/* The first word of line, lowercased, in buf. */
static const char *first_word(const char *line, char *buf, size_t size)
{
	size_t n = 0;

	line += strspn(line, " \t");
	while (line[n] && !g_ascii_isspace(line[n]) && n < size - 1) {
		buf[n] = g_ascii_tolower(line[n]);
		n++;
	}
	buf[n] = 0;
	return buf;
}

/* Whether line has word w; a console=DEV word is there when the line
 * names DEV with options (console=ttyS0,115200 holds console=ttyS0: a
 * second would register the console twice). */
static bool has_word(const char *line, const char *w)
{
	g_auto(GStrv) t = g_strsplit_set(line, " \t", -1);
	size_t n = strlen(w);

	for (size_t i = 0; t[i]; i++)
		if (!strcmp(t[i], w) ||
		    (g_str_has_prefix(w, "console=") && !strncmp(t[i], w, n) && t[i][n] == ','))
			return true;
	return false;
}

/* line with the words it lacks; true when any was added */
static bool line_add_words(GString *out, const char *line, char *const *words)
{
	size_t len = strlen(line);
	bool added = false;

	while (len && g_ascii_isspace(line[len - 1]))
		len--;
	g_string_append_len(out, line, (gssize)len);
	for (size_t i = 0; words[i]; i++)
		if (*words[i] && !has_word(line, words[i])) {
			g_string_append_printf(out, " %s", words[i]);
			added = true;
		}
	g_string_append_c(out, '\n');
	return added;
}

char *inject_bootloader_config_add(enum inject_bootloader b, const char *text, const char *words,
				   unsigned int *entries, unsigned int *changed)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_auto(GStrv) w = g_strsplit_set(words, " ", -1);
	GString *out = g_string_new(NULL);
	size_t n = g_strv_length(lines);
	char word[32];

	*entries = *changed = 0;
	/* the split leaves "" after a final newline */
	if (n && !*lines[n - 1])
		n--;
	for (size_t i = 0; i < n; i++) {
		const char *kw = first_word(lines[i], word, sizeof(word));

		if (b == INJECT_BOOTLOADER_GRUB && (!strcmp(kw, "linux") || !strcmp(kw, "linux16") ||
						    !strcmp(kw, "linuxefi"))) {
			(*entries)++;
			*changed += line_add_words(out, lines[i], w);
			continue;
		}
		/* Debian's default grub.cfg draws on a graphical terminal; a
		 * guest has no video device, and grub parks there with an
		 * empty console (issue 27). Its text console needs none. */
		if (b == INJECT_BOOTLOADER_GRUB && !strcmp(kw, "terminal_output") &&
		    strstr(lines[i], "gfxterm")) {
			g_string_append_printf(out, "%s%s\n", INJECT_GFXTERM_MARK, lines[i]);
			(*changed)++;
			continue;
		}
		if (b == INJECT_BOOTLOADER_EXTLINUX && (!strcmp(kw, "kernel") || !strcmp(kw, "linux"))) {
			bool append = false;

			/* this LABEL's APPEND, if any, before the next LABEL */
			for (size_t j = i + 1; j < n && !append; j++) {
				const char *k2 = first_word(lines[j], word, sizeof(word));

				if (!strcmp(k2, "label"))
					break;
				append = !strcmp(k2, "append");
			}
			(*entries)++;
			g_string_append_printf(out, "%s\n", lines[i]);
			if (!append) {
				g_autofree char *words_line = g_strjoinv(" ", w);

				g_string_append_printf(out, "  APPEND %s\n", words_line);
				(*changed)++;
			}
			continue;
		}
		if (b == INJECT_BOOTLOADER_EXTLINUX && !strcmp(kw, "append")) {
			*changed += line_add_words(out, lines[i], w);
			continue;
		}
		g_string_append_printf(out, "%s\n", lines[i]);
	}
	return g_string_free(out, FALSE);
}

char *inject_guest_device(const char *dev)
{
	/* libguestfs names its one drive sda, a libvirt virtio disk is vda */
	if (g_str_has_prefix(dev, "/dev/sda") || g_str_has_prefix(dev, "/dev/hda") ||
	    g_str_has_prefix(dev, "/dev/vda"))
		return g_strdup_printf("/dev/vda%s", dev + 8);
	return g_strdup(dev);
}

#define INJECT_MAX_BACKING 16

int inject_backing_chain(const char *disk, GPtrArray *files)
{
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree char *cur = g_canonicalize_filename(disk, NULL);

	for (unsigned int depth = 0;; depth++) {
		guint8 h[20];
		g_autofree char *name = NULL, *next = NULL, *dir = NULL;
		uint64_t off;
		uint32_t len;
		ssize_t n;
		int fd;

		if (g_hash_table_contains(seen, cur))
			return pc_fail(EINVAL, "%s: not a usable disk image: its backing chain loops "
				       "back to %s", disk, cur);
		if (depth > INJECT_MAX_BACKING)
			return pc_fail(EINVAL, "%s: not a usable disk image: a backing chain deeper "
				       "than %u", disk, INJECT_MAX_BACKING);
		g_hash_table_add(seen, g_strdup(cur));
		if (files)
			g_ptr_array_add(files, g_strdup(cur));
		fd = open(cur, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return pc_fail(errno == ENOENT ? EINVAL : errno, "%s: %s%s: %s", disk,
				       depth ? "its backing file " : "", cur, g_strerror(errno));
		n = pread(fd, h, sizeof(h), 0);
		if (n != (ssize_t)sizeof(h) || memcmp(h, "QFI\xfb", 4)) {
			close(fd);
			return 0;   /* not qcow2: no backing file of that kind */
		}
		off = (uint64_t)h[8] << 56 | (uint64_t)h[9] << 48 | (uint64_t)h[10] << 40 |
		      (uint64_t)h[11] << 32 | (uint64_t)h[12] << 24 | (uint64_t)h[13] << 16 |
		      (uint64_t)h[14] << 8 | h[15];
		len = (uint32_t)h[16] << 24 | (uint32_t)h[17] << 16 | (uint32_t)h[18] << 8 | h[19];
		if (!off) {
			close(fd);
			return 0;
		}
		if (len == 0 || len > 1023) {
			close(fd);
			return pc_fail(EINVAL, "%s: not a usable disk image: %s names a backing file of "
				       "%u bytes", disk, cur, len);
		}
		name = g_malloc0(len + 1);
		n = pread(fd, name, len, (off_t)off);
		close(fd);
		if (n != (ssize_t)len || memchr(name, 0, len))
			return pc_fail(EINVAL, "%s: not a usable disk image: %s: its backing file name "
				       "cannot be read", disk, cur);
		/* A relative name is relative to the image that names it. */
		dir = g_path_get_dirname(cur);
		next = g_canonicalize_filename(name, dir);
		g_free(cur);
		cur = g_steal_pointer(&next);
	}
}

int inject_precheck(const char *disk)
{
	struct stat st;

	if (stat(disk, &st) < 0)
		return pc_fail(errno, "%s: %s", disk, g_strerror(errno));
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return pc_fail(EINVAL, "%s: not a disk image (not a regular file or block device)",
			       disk);
	if (S_ISREG(st.st_mode) && st.st_size < INJECT_MIN_DISK_BYTES)
		return pc_fail(EINVAL, "%s: not a disk image (%lld bytes, too small for a "
			       "partition table and a filesystem)", disk, (long long)st.st_size);
	if (access(disk, R_OK) < 0)
		return pc_fail(errno, "%s: %s", disk, g_strerror(errno));
	if (S_ISREG(st.st_mode))
		return inject_backing_chain(disk, NULL);
	return 0;
}

/* ---- report ---- */

void inject_report_free(struct inject_report *r)
{
	if (!r)
		return;
	g_free(r->disk);
	g_free(r->disk_format);
	g_free(r->overlay);
	g_free(r->kernel_path);
	g_free(r->initrd_path);
	g_free(r->manifest_path);
	g_free(r->os_type);
	g_free(r->distro);
	g_free(r->product_name);
	g_free(r->root);
	g_free(r->root_uuid);
	g_free(r->cmdline_root);
	if (r->kernels)
		g_ptr_array_unref(r->kernels);
	g_free(r->kernel);
	g_free(r->release);
	g_free(r->initrd);
	if (r->hooks)
		g_ptr_array_unref(r->hooks);
	if (r->modules)
		g_ptr_array_unref(r->modules);
	g_free(r->bootloader_config);
	g_free(r->bootloader_note);
	g_free(r->accel);
	g_free(r->accel_reason);
	g_free(r->backend);
	g_free(r);
}

/* Names and paths come from the image (a product name, a module's file
 * name): json_string() refuses bytes that are not UTF-8, and one refused
 * string would lose the whole manifest, so they go in as \xNN text. */
static json_t *strs_json(const GPtrArray *a)
{
	json_t *j = json_array();

	for (guint i = 0; a && i < a->len; i++)
		json_array_append_new(j, results_json_string(a->pdata[i]));
	return j;
}

struct report_field {
	const char *key;
	const char *value;  /* NULL: null */
};

static json_t *fields_json(json_t *o, const struct report_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, f[i].key, results_json_string(f[i].value));
	return o;
}

json_t *inject_report_json(const struct inject_report *r)
{
	const struct report_field top[] = {
		{ "disk", r->disk }, { "disk_format", r->disk_format },
		{ "overlay", r->overlay },
	};
	const struct report_field os[] = {
		{ "type", r->os_type }, { "distro", r->distro },
		{ "product_name", r->product_name }, { "root", r->root },
		{ "root_uuid", r->root_uuid },
	};
	const struct report_field boot[] = {
		{ "kernel", r->kernel }, { "initrd", r->initrd }, { "release", r->release },
		{ "kernel_path", r->kernel_path }, { "initrd_path", r->initrd_path },
		{ "cmdline_root", r->cmdline_root },
	};
	const struct report_field appliance[] = {
		{ "accel", r->accel }, { "accel_reason", r->accel_reason },
		{ "backend", r->backend },
	};
	json_t *j = fields_json(json_object(), top, G_N_ELEMENTS(top));
	json_t *app = fields_json(json_object(), appliance, G_N_ELEMENTS(appliance));

	json_object_set_new(j, "os", fields_json(json_object(), os, G_N_ELEMENTS(os)));
	json_object_set_new(j, "kernels", strs_json(r->kernels));
	json_object_set_new(j, "boot", fields_json(json_object(), boot, G_N_ELEMENTS(boot)));
	{
		const struct report_field bl[] = {
			{ "kind", inject_bootloader_name(r->bootloader) },
			{ "config", r->bootloader_config }, { "note", r->bootloader_note },
		};
		json_t *o = fields_json(json_object(), bl, G_N_ELEMENTS(bl));

		json_object_set_new(o, "entries", json_integer(r->bootloader_entries));
		json_object_set_new(j, "bootloader", o);
	}
	json_object_set_new(j, "init", json_string(inject_init_name(r->init)));
	json_object_set_new(j, "hooks", strs_json(r->hooks));
	json_object_set_new(j, "modules", strs_json(r->modules));
	json_object_set_new(app, "launch_s", json_real(r->launch_s));
	json_object_set_new(j, "appliance", app);
	json_object_set_new(j, "total_s", json_real(r->total_s));
	return j;
}

/* Appends s escaped (the image chose it: an os-release PRETTY_NAME or a
 * file name may hold terminal escapes); NULL as "?". */
static void esc_append(GString *out, const char *s)
{
	text_escape_append(out, s ? s : "?", 0);
}

GString *inject_report_text(const struct inject_report *r)
{
	GString *out = g_string_new("overlay   ");

	esc_append(out, r->overlay);
	g_string_append(out, " (backing ");
	esc_append(out, r->disk);
	g_string_append(out, ", ");
	esc_append(out, r->disk_format);
	g_string_append(out, ")\nos        ");
	esc_append(out, r->os_type);
	g_string_append_c(out, ' ');
	esc_append(out, r->distro);
	g_string_append(out, " (");
	esc_append(out, r->product_name);
	g_string_append(out, ") on ");
	esc_append(out, r->root);
	g_string_append(out, "\nkernels   ");
	for (guint i = 0; r->kernels && i < r->kernels->len; i++) {
		if (i)
			g_string_append_c(out, ' ');
		esc_append(out, r->kernels->pdata[i]);
	}
	g_string_append(out, "\nboot      ");
	esc_append(out, r->kernel_path);
	g_string_append(out, " + ");
	esc_append(out, r->initrd_path ? r->initrd_path : "(no initrd)");
	g_string_append(out, ", ");
	esc_append(out, r->cmdline_root);
	g_string_append_printf(out, "\nbootloader %s", inject_bootloader_name(r->bootloader));
	if (r->bootloader_config) {
		g_string_append(out, " (");
		esc_append(out, r->bootloader_config);
		g_string_append_c(out, ')');
	}
	if (r->bootloader_note) {
		g_string_append(out, ": ");
		esc_append(out, r->bootloader_note);
	}
	g_string_append_printf(out, "\ninit      %s:", inject_init_name(r->init));
	for (guint i = 0; r->hooks && i < r->hooks->len; i++) {
		g_string_append_c(out, ' ');
		esc_append(out, r->hooks->pdata[i]);
	}
	g_string_append_printf(out, "\nagent     %s %s, %u modules listed in %s\n",
			       INJECT_AGENT_PATH, INJECT_AGENT_ARG,
			       r->modules ? r->modules->len : 0, INJECT_MODULES_LIST);
	g_string_append_printf(out, "appliance %s (%s), backend %s, launched in %.1f s; "
			       "%.1f s in all\n", r->accel ? r->accel : "?",
			       r->accel_reason ? r->accel_reason : "?",
			       r->backend ? r->backend : "?", r->launch_s, r->total_s);
	return out;
}

/* ---- libguestfs ---- */

typedef guestfs_h guestfs_handle;
static void handle_close(guestfs_handle *g)
{
	if (g)
		guestfs_close(g);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(guestfs_handle, handle_close)

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}
static int gfs_fail(guestfs_h *g, const char *what)
{
	const char *e = guestfs_last_error(g);

	return pc_fail(EIO, "libguestfs: %s: %s", what, e ? e : "failed");
}

/* A handle that prints nothing itself (errors come back through
 * guestfs_last_error) and whose appliance uses the fleet's accel. */
static guestfs_h *handle_new(bool force_tcg, struct inject_report *r)
{
	guestfs_h *g = guestfs_create();
	g_autofree char *reason = NULL;
	const char *accel;

	if (!g) {
		pc_fail(EIO, "libguestfs: cannot create a handle");
		return NULL;
	}
	guestfs_set_error_handler(g, NULL, NULL);
	accel = fingerprint_accel_detect("/dev/kvm", "/sys/module", &reason);
	if (force_tcg && strcmp(accel, "tcg")) {
		accel = "tcg";
		g_free(reason);
		reason = g_strdup("TCG asked for");
	}
	if (!getenv("LIBGUESTFS_BACKEND") && guestfs_set_backend(g, "direct") < 0) {
		gfs_fail(g, "set backend direct");
		guestfs_close(g);
		return NULL;
	}
	if (!strcmp(accel, "tcg")) {
		/* libguestfs picks KVM when /dev/kvm opens; kvm_pvm's does not
		 * boot its appliance (platform.md): an appliance that would try
		 * it anyway is not launched */
		char *settings[] = { (char *)"force_tcg", NULL };

		if (guestfs_set_backend_settings(g, settings) < 0) {
			gfs_fail(g, "set backend settings force_tcg");
			guestfs_close(g);
			return NULL;
		}
	}
	if (r) {
		g_autofree char *b = guestfs_get_backend(g);

		r->accel = g_strdup(accel);
		r->accel_reason = g_steal_pointer(&reason);
		r->backend = g_strdup(b ? b : "?");
	}
	return g;
}

int inject_overlay_create(const char *base, const char *path)
{
	g_autoptr(guestfs_handle) g = guestfs_create();
	g_autofree char *abs = g_canonicalize_filename(base, NULL);

	if (!g)
		return pc_fail(EIO, "libguestfs: cannot create a handle");
	guestfs_set_error_handler(g, NULL, NULL);
	/* qemu-img on the host; no appliance */
	if (guestfs_disk_create(g, path, "qcow2", -1, GUESTFS_DISK_CREATE_BACKINGFILE, abs,
				GUESTFS_DISK_CREATE_BACKINGFORMAT, "qcow2", -1) < 0)
		return gfs_fail(g, path);
	if (chmod(path, 0644) < 0)
		return pc_fail(errno, "%s: chmod: %s", path, g_strerror(errno));
	return 0;
}

static bool is_file(guestfs_h *g, const char *p)
{
	return guestfs_is_file_opts(g, p, GUESTFS_IS_FILE_OPTS_FOLLOWSYMLINKS, 1, -1) > 0;
}

static bool is_dir(guestfs_h *g, const char *p)
{
	return guestfs_is_dir_opts(g, p, GUESTFS_IS_DIR_OPTS_FOLLOWSYMLINKS, 1, -1) > 0;
}

static int mp_cmp(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;

	return (int)strlen(x[0]) - (int)strlen(y[0]);
}

/* Mounts the root's filesystems, shortest mount point first. */
static int mount_root(guestfs_h *g, const char *root)
{
	char **mps = guestfs_inspect_get_mountpoints(g, root);
	size_t n = 0;
	int ret = 0;

	if (!mps)
		return gfs_fail(g, "inspect_get_mountpoints");
	while (mps[n])
		n += 2;
	qsort(mps, n / 2, 2 * sizeof(char *), mp_cmp);
	for (size_t i = 0; i < n && !ret; i += 2)
		if (guestfs_mount(g, mps[i + 1], mps[i]) < 0 && !strcmp(mps[i], "/"))
			ret = gfs_fail(g, "mount /");
	strv_free(mps);
	return ret;
}

/* Refuses what is not a Linux disk: one line each. */
static int find_root(guestfs_h *g, const char *disk, struct inject_report *r)
{
	char **fs = guestfs_list_filesystems(g);
	char **roots;
	const char *luks = NULL;
	size_t nfs = 0;
	g_autoptr(GString) seen = g_string_new(NULL);

	if (!fs)
		return gfs_fail(g, "list_filesystems");
	for (size_t i = 0; fs[i]; i += 2) {
		if (!strcmp(fs[i + 1], "crypto_LUKS") && !luks)
			luks = fs[i];
		if (strcmp(fs[i + 1], "unknown") && strcmp(fs[i + 1], "swap")) {
			nfs++;
			g_string_append_printf(seen, "%s%s %s", seen->len ? ", " : "", fs[i],
					       fs[i + 1]);
		}
	}
	if (!nfs) {
		strv_free(fs);
		return pc_fail(EINVAL, "%s: not a disk image (no partition table or filesystem "
			       "found)", disk);
	}
	roots = guestfs_inspect_os(g);
	if (!roots) {
		strv_free(fs);
		return gfs_fail(g, "inspect_os");
	}
	if (!roots[0]) {
		int ret = luks ? pc_fail(ENOTSUP, "%s: encrypted root (LUKS on %s): cannot "
					 "inject without its key", disk, luks)
			       : pc_fail(EINVAL, "%s: no operating system found (filesystems: %s)",
					 disk, seen->str);

		strv_free(fs);
		strv_free(roots);
		return ret;
	}
	strv_free(fs);
	r->root = g_strdup(roots[0]);
	if (roots[1])
		pc_warn("inject: %s holds more than one OS; using the one on %s", disk, roots[0]);
	strv_free(roots);
	r->os_type = guestfs_inspect_get_type(g, r->root);
	r->distro = guestfs_inspect_get_distro(g, r->root);
	r->product_name = guestfs_inspect_get_product_name(g, r->root);
	if (!r->os_type || strcmp(r->os_type, "linux"))
		return pc_fail(ENOTSUP, "%s: the OS on %s is %s, not Linux: only Linux guests run "
			       "the agent", disk, r->root, r->os_type ? r->os_type : "unknown");
	return 0;
}

static int choose_init(guestfs_h *g, struct inject_report *r)
{
	struct inject_init_facts f = { 0 };
	g_autofree char *link = NULL;
	int ret;

	if (guestfs_is_symlink(g, "/sbin/init") > 0)
		link = guestfs_readlink(g, "/sbin/init");
	f.sbin_init_link = link;
	f.sbin_init_exists = link || guestfs_exists(g, "/sbin/init") > 0;
	f.systemd_binary = is_file(g, "/lib/systemd/systemd") || is_file(g, "/usr/lib/systemd/systemd");
	f.systemd_dir = is_dir(g, "/etc/systemd/system");
	f.inittab = is_file(g, "/etc/inittab");
	if ((ret = inject_init_detect(&f)) < 0)
		return ret;
	r->init = (enum inject_init)ret;
	return 0;
}

static int write_file(guestfs_h *g, const char *path, const char *text, int mode)
{
	if (guestfs_write(g, path, text, strlen(text)) < 0)
		return gfs_fail(g, path);
	if (guestfs_chmod(g, mode, path) < 0)
		return gfs_fail(g, path);
	return 0;
}

static int install_hook(guestfs_h *g, struct inject_report *r)
{
	r->hooks = g_ptr_array_new_with_free_func(g_free);
	if (r->init == INJECT_INIT_SYSTEMD) {
		g_autofree char *unit = inject_systemd_unit();
		const char *path = "/etc/systemd/system/" INJECT_UNIT_NAME;
		const char *wants = "/etc/systemd/system/multi-user.target.wants";
		g_autofree char *link = g_strdup_printf("%s/%s", wants, INJECT_UNIT_NAME);

		if (guestfs_mkdir_p(g, wants) < 0)
			return gfs_fail(g, wants);
		if (write_file(g, path, unit, 0644) < 0)
			return -EIO;
		/* what systemctl enable does, without running the guest's systemctl */
		if (guestfs_ln_sf(g, path, link) < 0)
			return gfs_fail(g, link);
		g_ptr_array_add(r->hooks, g_strdup(path));
		g_ptr_array_add(r->hooks, g_steal_pointer(&link));
		return 0;
	}
	g_autofree char *old = NULL;
	g_autofree char *tab = NULL;
	size_t len = 0;

	if (is_file(g, "/etc/inittab") && !(old = guestfs_read_file(g, "/etc/inittab", &len)))
		return gfs_fail(g, "read /etc/inittab");
	if (old && strlen(old) != len)
		return pc_fail(EINVAL, "/etc/inittab in the image holds a NUL byte");
	tab = inject_inittab(r->init, old);
	if (write_file(g, "/etc/inittab", tab, 0644) < 0)
		return -EIO;
	g_ptr_array_add(r->hooks, g_strdup("/etc/inittab"));
	return 0;
}

/* The modules the agent needs, resolved against the image's own
 * modules.dep (the guest's udev may load them first: the agent takes
 * EEXIST as loaded). */
static int install_modules(guestfs_h *g, const char *tmp, struct inject_report *r)
{
	g_autofree char *moddir = g_strdup_printf("/lib/modules/%s", r->release);
	g_autofree char *dep = g_strdup_printf("%s/modules.dep", moddir);
	g_autofree char *builtin = g_strdup_printf("%s/modules.builtin", moddir);
	g_autofree char *ldep = g_build_filename(tmp, "modules.dep", NULL);
	g_autofree char *lbuiltin = g_build_filename(tmp, "modules.builtin", NULL);
	g_autoptr(GPtrArray) paths = NULL, missing = NULL;
	g_autoptr(GString) list = g_string_new("# pmucanary-agent --service loads these, in order\n");
	int ret;

	r->modules = g_ptr_array_new_with_free_func(g_free);
	if (is_file(g, dep) && guestfs_download(g, dep, ldep) < 0)
		return gfs_fail(g, dep);
	if (is_file(g, builtin) && guestfs_download(g, builtin, lbuiltin) < 0)
		return gfs_fail(g, builtin);
	if ((ret = image_modules_resolve(tmp, image_default_modules, &paths, &missing)) < 0)
		return ret;
	for (guint i = 0; i < paths->len; i++) {
		g_autofree char *p = g_strdup_printf("%s/%s", moddir, (char *)paths->pdata[i]);

		if (guestfs_exists(g, p) <= 0) {
			pc_warn("inject: %s is in modules.dep but not in the image", p);
			continue;
		}
		g_string_append_printf(list, "%s\n", p);
		g_ptr_array_add(r->modules, g_steal_pointer(&p));
	}
	for (guint i = 0; i < missing->len; i++)
		pc_info("inject: module %s: neither a module nor built into %s",
			(char *)missing->pdata[i], r->release);
	if (guestfs_mkdir_p(g, "/etc/pmucanary") < 0)
		return gfs_fail(g, "/etc/pmucanary");
	return write_file(g, INJECT_MODULES_LIST, list->str, 0644);
}

static int install_agent(guestfs_h *g, const char *agent)
{
	if (guestfs_mkdir_p(g, "/usr/local/sbin") < 0)
		return gfs_fail(g, "/usr/local/sbin");
	if (guestfs_upload(g, agent, INJECT_AGENT_PATH) < 0)
		return gfs_fail(g, INJECT_AGENT_PATH);
	if (guestfs_chmod(g, 0755, INJECT_AGENT_PATH) < 0)
		return gfs_fail(g, INJECT_AGENT_PATH);
	return 0;
}

static int extract_boot(guestfs_h *g, struct inject_report *r)
{
	char **names = guestfs_ls(g, "/boot");
	g_autofree char *kpath = NULL, *ipath = NULL;
	int ret;

	if (!names)
		return pc_fail(ENOENT, "%s: no /boot in the image: nothing to boot", r->disk);
	r->kernels = g_ptr_array_new_with_free_func(g_free);
	for (size_t i = 0; names[i]; i++)
		if (g_str_has_prefix(names[i], "vmlinuz-"))
			g_ptr_array_add(r->kernels, g_strdup(names[i]));
	ret = inject_pick_kernel(names, &r->kernel, &r->release, &r->initrd);
	strv_free(names);
	if (ret < 0) {
		g_autofree char *msg = g_strdup(pc_errmsg());

		return pc_fail(-ret, "%s: %s", r->disk, msg);
	}
	kpath = g_strdup_printf("/boot/%s", r->kernel);
	if (guestfs_download(g, kpath, r->kernel_path) < 0)
		return gfs_fail(g, kpath);
	if (image_kernel_check(r->kernel_path, kpath) < 0) {
		g_autofree char *msg = g_strdup(pc_errmsg());

		return pc_fail(EINVAL, "%s: %s", r->disk, msg);
	}
	if (r->initrd) {
		ipath = g_strdup_printf("/boot/%s", r->initrd);
		if (guestfs_download(g, ipath, r->initrd_path) < 0)
			return gfs_fail(g, ipath);
		chmod(r->initrd_path, 0644);
	} else {
		g_clear_pointer(&r->initrd_path, g_free);
	}
	chmod(r->kernel_path, 0644);
	return 0;
}

/* Where each bootloader keeps its config, in the order looked at. */
static const struct {
	enum inject_bootloader kind;
	const char *path;
} bootloader_configs[] = {
	{ INJECT_BOOTLOADER_GRUB, "/boot/grub/grub.cfg" },
	{ INJECT_BOOTLOADER_GRUB, "/boot/grub2/grub.cfg" },
	{ INJECT_BOOTLOADER_EXTLINUX, "/boot/extlinux/extlinux.conf" },
	{ INJECT_BOOTLOADER_EXTLINUX, "/boot/extlinux.conf" },
	{ INJECT_BOOTLOADER_EXTLINUX, "/extlinux.conf" },
	{ INJECT_BOOTLOADER_EXTLINUX, "/boot/syslinux/syslinux.cfg" },
	{ INJECT_BOOTLOADER_EXTLINUX, "/boot/syslinux.cfg" },
	{ INJECT_BOOTLOADER_EXTLINUX, "/syslinux/syslinux.cfg" },
};

/* The marker a bootloader-booted guest's /proc/cmdline carries. */
#define INJECT_BOOTLOADER_MARK "pmucanary.boot=bootloader"

/* Finds the bootloader SeaBIOS would run and gives each of its kernel
 * entries the fleet's kernel words (in the overlay). None is not an error:
 * the image still boots by direct kernel boot. */
static int find_bootloader(guestfs_h *g, struct inject_report *r)
{
	const char *words = GUEST_KERNEL_WORDS " " INJECT_BOOTLOADER_MARK;
	g_autofree char *mbr = NULL, *old = NULL, *new = NULL;
	size_t len = 0;
	unsigned int changed = 0, gfx = 0;
	bool code = false;

	r->bootloader = INJECT_BOOTLOADER_NONE;
	for (size_t i = 0; i < G_N_ELEMENTS(bootloader_configs) && !r->bootloader_config; i++)
		if (is_file(g, bootloader_configs[i].path)) {
			r->bootloader = bootloader_configs[i].kind;
			r->bootloader_config = g_strdup(bootloader_configs[i].path);
		}
	if (!r->bootloader_config) {
		r->bootloader_note = g_strdup("no grub.cfg, extlinux.conf or syslinux.cfg");
		return 0;
	}
	/* SeaBIOS runs the MBR's code: without it the config boots nothing */
	mbr = guestfs_pread_device(g, "/dev/sda", 440, 0, &len);
	for (size_t i = 0; mbr && i < len && !code; i++)
		code = mbr[i] != 0;
	if (!code) {
		r->bootloader_note = g_strdup_printf("%s found, but no boot code in the MBR",
						     r->bootloader_config);
		r->bootloader = INJECT_BOOTLOADER_NONE;
		return 0;
	}
	if (!(old = guestfs_read_file(g, r->bootloader_config, &len)))
		return gfs_fail(g, r->bootloader_config);
	if (strlen(old) != len)
		return pc_fail(EINVAL, "%s in the image holds a NUL byte", r->bootloader_config);
	new = inject_bootloader_config_add(r->bootloader, old, words, &r->bootloader_entries,
					   &changed);
	if (!r->bootloader_entries) {
		r->bootloader_note = g_strdup_printf("%s boots no Linux kernel",
						     r->bootloader_config);
		r->bootloader = INJECT_BOOTLOADER_NONE;
		return 0;
	}
	if (changed && guestfs_write(g, r->bootloader_config, new, strlen(new)) < 0)
		return gfs_fail(g, r->bootloader_config);
	for (const char *m = new; (m = strstr(m, INJECT_GFXTERM_MARK)); m++)
		gfx++;
	r->bootloader_note = g_strdup_printf("%u kernel entr%s, %u given the fleet's kernel words "
					     "(%s)%s", r->bootloader_entries,
					     r->bootloader_entries == 1 ? "y" : "ies", changed - gfx,
					     words, gfx ? "; grub's terminal_output gfxterm commented "
					     "out: the guest has no video device" : "");
	return 0;
}

static void remove_outputs(const struct inject_report *r)
{
	const char *p[] = { r->overlay, r->kernel_path, r->initrd_path, r->manifest_path };

	for (size_t i = 0; i < G_N_ELEMENTS(p); i++)
		if (p[i])
			unlink(p[i]);
}

static int inject_in(guestfs_h *g, const struct inject_options *opt, const char *agent,
		     struct inject_report *r, const char *tmp)
{
	g_autofree char *fmt = NULL, *uuid = NULL, *dev = NULL;
	int64_t t0;
	int ret;

	fmt = guestfs_disk_format(g, opt->disk);
	if (!fmt)
		return gfs_fail(g, opt->disk);
	r->disk_format = g_strdup(fmt);
	if (!strcmp(fmt, "unknown"))
		return pc_fail(EINVAL, "%s: not a disk image (qemu-img does not know its format)",
			       opt->disk);
	if (guestfs_disk_create(g, r->overlay, "qcow2", -1, GUESTFS_DISK_CREATE_BACKINGFILE,
				r->disk, GUESTFS_DISK_CREATE_BACKINGFORMAT, fmt, -1) < 0)
		return gfs_fail(g, r->overlay);
	chmod(r->overlay, 0644);
	if (guestfs_add_drive_opts(g, r->overlay, GUESTFS_ADD_DRIVE_OPTS_FORMAT, "qcow2", -1) < 0)
		return gfs_fail(g, r->overlay);
	t0 = g_get_monotonic_time();
	if (guestfs_launch(g) < 0)
		return gfs_fail(g, "launch (the appliance did not boot)");
	r->launch_s = (g_get_monotonic_time() - t0) / 1e6;
	if ((ret = find_root(g, opt->disk, r)) < 0 || (ret = mount_root(g, r->root)) < 0)
		return ret;
	if ((ret = choose_init(g, r)) < 0) {
		g_autofree char *msg = g_strdup(pc_errmsg());

		return pc_fail(-ret, "%s: %s", opt->disk, msg);
	}
	if ((ret = extract_boot(g, r)) < 0 || (ret = find_bootloader(g, r)) < 0)
		return ret;
	if ((ret = install_agent(g, agent)) < 0 || (ret = install_modules(g, tmp, r)) < 0 ||
	    (ret = install_hook(g, r)) < 0)
		return ret;
	uuid = guestfs_vfs_uuid(g, r->root);
	r->root_uuid = g_strdup(uuid ? uuid : "");
	dev = inject_guest_device(r->root);
	r->cmdline_root = *r->root_uuid ? g_strdup_printf("root=UUID=%s", r->root_uuid)
					: g_strdup_printf("root=%s", dev);
	if (guestfs_umount_all(g) < 0 || guestfs_shutdown(g) < 0)
		return gfs_fail(g, "writing the overlay back");
	return 0;
}

int inject_disk(const struct inject_options *opt, struct inject_report **out)
{
	g_autoptr(inject_report) r = g_new0(struct inject_report, 1);
	g_autoptr(guestfs_handle) g = NULL;
	g_autofree char *agent = opt->agent ? g_strdup(opt->agent) : image_default_agent();
	g_autofree char *tmp = NULL;
	int64_t t0 = g_get_monotonic_time();
	int ret;

	if ((ret = inject_precheck(opt->disk)) < 0)
		return ret;
	if (access(agent, R_OK) < 0)
		return pc_fail(errno, "agent %s: %s (make builds it)", agent, g_strerror(errno));
	r->disk = g_canonicalize_filename(opt->disk, NULL);
	r->overlay = opt->out ? g_canonicalize_filename(opt->out, NULL)
			      : g_strdup_printf("%s.pmucanary.qcow2", r->disk);
	if (!strcmp(r->overlay, r->disk))
		return pc_fail(EINVAL, "%s: the overlay cannot be the image itself", r->overlay);
	if (g_file_test(r->overlay, G_FILE_TEST_EXISTS))
		return pc_fail(EEXIST, "%s exists: remove it or give another --out", r->overlay);
	r->kernel_path = g_strdup_printf("%s.vmlinuz", r->overlay);
	r->initrd_path = g_strdup_printf("%s.initrd", r->overlay);
	r->manifest_path = g_strdup_printf("%s.json", r->overlay);
	if (!(tmp = g_dir_make_tmp("pmucanary-inject-XXXXXX", NULL)))
		return pc_fail(errno ? errno : EIO, "cannot make a temporary directory");
	if (!(g = handle_new(opt->force_tcg, r))) {
		image_remove_tree(tmp);
		return -EIO;
	}
	pc_info("inject: %s: appliance accel %s (%s), backend %s", r->disk, r->accel,
		r->accel_reason, r->backend);
	ret = inject_in(g, opt, agent, r, tmp);
	image_remove_tree(tmp);
	if (ret == 0) {
		json_t *j;

		r->total_s = (g_get_monotonic_time() - t0) / 1e6;
		j = inject_report_json(r);
		if (json_dump_file(j, r->manifest_path, JSON_INDENT(2) | JSON_SORT_KEYS) < 0)
			ret = pc_fail(EIO, "%s: cannot write", r->manifest_path);
		json_decref(j);
		chmod(r->manifest_path, 0644);
	}
	if (ret < 0) {
		g_autofree char *msg = g_strdup(pc_errmsg());

		g_clear_pointer(&g, handle_close); /* qemu lets go of the overlay */
		remove_outputs(r);
		/* libguestfs's own words name no file: say which disk. */
		if (strstr(msg, r->disk))
			pc_fail(-ret, "%s", msg);
		else
			pc_fail(-ret, "%s: %s", r->disk, msg);
		return ret;
	}
	*out = g_steal_pointer(&r);
	return 0;
}

/* ---- booting an injected overlay ---- */

void inject_boot_free(struct inject_boot *b)
{
	if (!b)
		return;
	g_free(b->overlay);
	g_free(b->kernel);
	g_free(b->initrd);
	g_free(b->cmdline_root);
	g_free(b->bootloader_note);
	g_free(b);
}

int inject_boot_load(const char *overlay, struct inject_boot **out)
{
	g_autofree char *path = g_strdup_printf("%s.json", overlay);
	g_autoptr(inject_boot) b = g_new0(struct inject_boot, 1);
	json_error_t err;
	json_t *j, *boot;
	const char *k, *i, *c;

	if (!g_file_test(path, G_FILE_TEST_EXISTS))
		return pc_fail(ENOENT, "%s: not injected by pmucanary (no %s): run pmucanary "
			       "image --inject first", overlay, path);
	if (!(j = json_load_file(path, 0, &err)))
		return pc_fail(EINVAL, "%s: line %d: %s", path, err.line, err.text);
	boot = json_object_get(j, "boot");
	k = json_string_value(json_object_get(boot, "kernel_path"));
	i = json_string_value(json_object_get(boot, "initrd_path"));
	c = json_string_value(json_object_get(boot, "cmdline_root"));
	if (!k || !c) {
		json_decref(j);
		return pc_fail(EINVAL, "%s: field boot.kernel_path or boot.cmdline_root missing",
			       path);
	}
	b->overlay = g_canonicalize_filename(overlay, NULL);
	b->kernel = g_strdup(k);
	b->initrd = g_strdup(i);
	b->cmdline_root = g_strdup(c);
	{
		json_t *bl = json_object_get(j, "bootloader");
		const char *kind = json_string_value(json_object_get(bl, "kind"));
		const char *note = json_string_value(json_object_get(bl, "note"));

		/* a manifest from before bootloaders were looked for says none */
		b->bootloader = INJECT_BOOTLOADER_NONE;
		for (int n = 0; kind && n < INJECT_BOOTLOADER_COUNT; n++)
			if (!strcmp(kind, bootloader_names[n]))
				b->bootloader = (enum inject_bootloader)n;
		b->bootloader_note = g_strdup(bl ? note : "injected before bootloaders were looked for");
	}
	json_decref(j);
	*out = g_steal_pointer(&b);
	return 0;
}

int inject_boot_check(const struct inject_boot *b, enum inject_disk_boot how)
{
	if (how == INJECT_DISK_BOOT_BOOTLOADER && b->bootloader == INJECT_BOOTLOADER_NONE)
		return pc_fail(ENOTSUP, "%s: no bootloader to boot through (%s): boot its kernel "
			       "directly (disk_boot = kernel, fleet --disk-boot kernel)", b->overlay,
			       b->bootloader_note ? b->bootloader_note : "none found");
	return 0;
}

/* ---- a harmed guest's own logs ---- */

int inject_pull_logs(const char *overlay, const char *dest_dir, unsigned int *count)
{
	g_autoptr(guestfs_handle) g = handle_new(false, NULL);
	char **roots = NULL, **names = NULL;
	int ret = 0;

	*count = 0;
	if (!g)
		return -EIO;
	if (image_mkdir_public(dest_dir) < 0)
		return pc_fail(errno ? errno : EIO, "cannot create %s", dest_dir);
	if (guestfs_add_drive_opts(g, overlay, GUESTFS_ADD_DRIVE_OPTS_FORMAT, "qcow2",
				   GUESTFS_ADD_DRIVE_OPTS_READONLY, 1, -1) < 0 ||
	    guestfs_launch(g) < 0)
		return gfs_fail(g, overlay);
	if (!(roots = guestfs_inspect_os(g)) || !roots[0]) {
		strv_free(roots);
		return pc_fail(ENOENT, "%s: no operating system found", overlay);
	}
	if ((ret = mount_root(g, roots[0])) < 0)
		goto out;
	if (!is_dir(g, "/var/log") || !(names = guestfs_ls(g, "/var/log")))
		goto out;
	for (size_t i = 0; names[i]; i++) {
		g_autofree char *src = g_strdup_printf("/var/log/%s", names[i]);
		g_autofree char *dst = g_build_filename(dest_dir, names[i], NULL);

		if (!strcmp(names[i], "journal") && is_dir(g, src)) {
			g_free(dst);
			dst = g_build_filename(dest_dir, "journal.tar", NULL);
			if (guestfs_tar_out(g, src, dst) == 0)
				(*count)++;
			continue;
		}
		if (guestfs_is_file_opts(g, src, -1) > 0 && guestfs_download(g, src, dst) == 0) {
			chmod(dst, 0644);
			(*count)++;
		}
	}
out:
	strv_free(roots);
	strv_free(names);
	return ret;
}
