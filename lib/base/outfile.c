#include "outfile.h"

#include "log.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0 or an errno: write() may write less than asked, and 0 bytes for a
 * non-empty buffer would loop forever. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			return EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A device or FIFO: written to where it is, like the shell's `>` does;
 * renaming over it would put a regular file in place of the node. */
static int write_node(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	int e;

	if (fd < 0)
		return pc_fail(errno, "cannot write %s: %s", path, g_strerror(errno));
	e = write_all(fd, data, len);
	if (e) {
		close(fd);
		return pc_fail(e, "cannot write %s: %s", path, g_strerror(e));
	}
	if (close(fd) < 0)
		return pc_fail(errno, "cannot write %s: close: %s", path, g_strerror(errno));
	return 0;
}

/* A regular file that is this process's stdout or stderr (`--json
 * /dev/stdout >>log`, /proc/self/fd/1): renaming over it would drop what
 * the shell's redirection holds and what is printed after. Written through
 * the open descriptor instead, at its position, as the shell would. */
static int std_fd_of(const struct stat *st)
{
	for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
		struct stat fst;

		if (fstat(fd, &fst) == 0 && fst.st_dev == st->st_dev && fst.st_ino == st->st_ino)
			return fd;
	}
	return -1;
}

static int write_std(const char *path, int fd, const void *data, size_t len)
{
	int e;

	fflush(fd == STDOUT_FILENO ? stdout : stderr);
	if ((e = write_all(fd, data, len)))
		return pc_fail(e, "cannot write %s: %s", path, g_strerror(e));
	return 0;
}

/* The process umask without changing it: umask() can only be read by
 * setting it, which races with other threads creating files, so the
 * kernel's own copy (Linux 4.7+) first. */
static mode_t current_umask(void)
{
	g_autofree char *status = NULL;
	const char *p;
	mode_t m;

	if (g_file_get_contents("/proc/self/status", &status, NULL, NULL) &&
	    (p = strstr(status, "\nUmask:\t"))) {
		guint64 v;
		g_autofree char *digits = g_strndup(p + 8, strspn(p + 8, "01234567"));

		if (*digits && g_ascii_string_to_unsigned(digits, 8, 0, 0777, &v, NULL))
			return (mode_t)v;
	}
	m = umask(022);
	umask(m);
	return m;
}

/* target: the file to replace (path itself, or what a symlink at path
 * names); old: its stat, or NULL when there is none. Messages name path. */
static int write_atomic(const char *path, const char *target, const struct stat *old,
			const void *data, size_t len)
{
	g_autofree char *dir = g_path_get_dirname(target);
	g_autofree char *base = g_path_get_basename(target);
	g_autofree char *tmp = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
	int fd, dfd, e, ret = 0;

	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return pc_fail(errno, "cannot write %s: cannot create a temporary file in %s: %s",
			       path, dir, g_strerror(errno));
	if ((e = write_all(fd, data, len)))
		ret = pc_fail(e, "cannot write %s: %s", path, g_strerror(e));
	else if (fsync(fd) < 0)
		ret = pc_fail(errno, "cannot write %s: fsync: %s", path, g_strerror(errno));
	if (!ret && old) {
		/* Owner before mode: chown clears set-id bits. Not root: the
		 * owner stays ours. */
		if (fchown(fd, old->st_uid, old->st_gid) < 0)
			pc_debug("%s: keeping the owner: %s", path, g_strerror(errno));
		(void)fchmod(fd, old->st_mode & 07777);   /* setgid and sticky too */
	} else if (!ret) {
		/* A new file gets what open(O_CREAT, 0666) would give: the
		 * user's umask decides (mkostemp made it 0600). */
		(void)fchmod(fd, 0666 & ~current_umask());
	}
	if (close(fd) < 0 && !ret)
		ret = pc_fail(errno, "cannot write %s: close: %s", path, g_strerror(errno));
	if (!ret && rename(tmp, target) < 0)
		ret = pc_fail(errno, "cannot write %s: rename %s: %s", path, tmp, g_strerror(errno));
	if (ret) {
		unlink(tmp);
		return ret;
	}
	/* The rename itself survives a crash only once the directory is synced. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	return 0;
}

static la_ssize_t gzip_append(struct archive *a, void *out, const void *buf, size_t len)
{
	g_string_append_len(out, buf, (gssize)len);
	return (la_ssize_t)len;
}

/* The gzip file of data, or NULL with a message naming path. Level 1: a
 * full sweep's 30 MB of JSON becomes 1.8 MB in ~0.3 s (level 6: 1.3 MB in
 * ~0.5 s, too close to the 1 s a full write may take). No time stamp in
 * the header, so the same data gives the same bytes. */
static GString *gzip_of(const char *path, const void *data, size_t len)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	g_autoptr(GString) out = g_string_sized_new(len / 8 + 64);
	bool ok;

	ok = archive_write_add_filter_gzip(a) == ARCHIVE_OK &&
	     archive_write_set_filter_option(a, "gzip", "compression-level", "1") == ARCHIVE_OK &&
	     archive_write_set_filter_option(a, "gzip", "timestamp", NULL) == ARCHIVE_OK &&
	     archive_write_set_format_raw(a) == ARCHIVE_OK &&
	     archive_write_set_bytes_in_last_block(a, 1) == ARCHIVE_OK &&
	     archive_write_open2(a, out, NULL, gzip_append, NULL, NULL) == ARCHIVE_OK;
	if (ok) {
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_size(e, (la_int64_t)len);
		ok = archive_write_header(a, e) == ARCHIVE_OK &&
		     (!len || archive_write_data(a, data, len) == (la_ssize_t)len) &&
		     archive_write_close(a) == ARCHIVE_OK;
	}
	if (!ok)
		pc_fail(EIO, "cannot write %s: gzip: %s", path, archive_error_string(a));
	archive_entry_free(e);
	archive_write_free(a);
	return ok ? g_steal_pointer(&out) : NULL;
}

/* path does not resolve (stat said ENOENT): 0 when nothing is there, or
 * -EINVAL when it is a symlink to nothing. Writing would replace the link
 * by a regular file (/dev/stdout when stdout is closed: the system's link)
 * and never write what it names: bad input, like a missing directory. */
static int refuse_dangling(const char *path)
{
	struct stat lst;
	g_autofree char *to = NULL;

	if (lstat(path, &lst) < 0 || !S_ISLNK(lst.st_mode))
		return 0;
	to = g_file_read_link(path, NULL);
	return pc_fail(EINVAL, "cannot write %s: a symbolic link to %s, which does not exist",
		       path, to ? to : "a missing file");
}

/* outfile_write() once data is what goes to the file. */
static int outfile_write_plain(const char *path, const void *data, size_t len)
{
	struct stat st, lst;
	int fd, bad;

	if (stat(path, &st) < 0) {
		if (errno != ENOENT)
			return pc_fail(errno, "cannot write %s: %s", path, g_strerror(errno));
		if ((bad = refuse_dangling(path)))
			return bad;
		return write_atomic(path, path, NULL, data, len);
	}
	if (S_ISDIR(st.st_mode))
		return pc_fail(EISDIR, "cannot write %s: is a directory", path);
	if (!S_ISREG(st.st_mode))
		return write_node(path, data, len);
	if ((fd = std_fd_of(&st)) >= 0)
		return write_std(path, fd, data, len);
	/* A file we may not write stays as it is, as with the shell's `>`
	 * (the rename would only need the directory to be writable). */
	if (access(path, W_OK) < 0)
		return pc_fail(errno, "cannot write %s: %s", path, g_strerror(errno));
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		char *real = realpath(path, NULL);
		g_autofree char *target = NULL;
		int e = errno;

		if (!real)
			return pc_fail(e, "cannot write %s: %s", path, g_strerror(e));
		target = g_strdup(real);
		free(real);
		return write_atomic(path, target, &st, data, len);
	}
	return write_atomic(path, path, &st, data, len);
}

int outfile_write(const char *path, const void *data, size_t len)
{
	if (!path || !*path)
		return pc_fail(EINVAL, "cannot write an empty path");
	if (g_str_has_suffix(path, ".gz")) {
		g_autoptr(GString) gz = gzip_of(path, data, len);

		if (!gz)
			return -EIO;
		return outfile_write_plain(path, gz->str, gz->len);
	}
	return outfile_write_plain(path, data, len);
}

int outfile_check(const char *path)
{
	g_autofree char *dir = NULL;
	struct stat st;

	if (!path || !*path)
		return pc_fail(EINVAL, "cannot write an empty path");
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return pc_fail(EISDIR, "cannot write %s: is a directory", path);
		if (!S_ISREG(st.st_mode)) {
			if (access(path, W_OK) < 0)
				return pc_fail(errno, "cannot write %s: %s", path,
					       g_strerror(errno));
			return 0;
		}
		/* A symlink's target is what gets replaced, in its directory. */
		char *real = realpath(path, NULL);

		dir = g_path_get_dirname(real ? real : path);
		free(real);
	} else if (errno != ENOENT) {
		return pc_fail(errno, "cannot write %s: %s", path, g_strerror(errno));
	} else {
		int e = refuse_dangling(path);

		if (e)
			return e;
		dir = g_path_get_dirname(path);
	}
	if (access(dir, W_OK | X_OK) < 0)
		return pc_fail(errno, "cannot write %s: cannot create a file in %s: %s", path, dir,
			       g_strerror(errno));
	/* A removed directory (a deleted working directory) still passes
	 * access(); no file can be created in it, which the write would find
	 * only after the whole run. */
	if (stat(dir, &st) == 0 && st.st_nlink == 0)
		return pc_fail(ENOENT, "cannot write %s: its directory %s was removed", path, dir);
	return 0;
}
