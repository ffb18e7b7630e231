#include "infile.h"

#include "log.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static const struct {
	const char *name;
	size_t limit;
} kinds[INFILE_KIND_COUNT] = {
	[INFILE_CONFIG] = { "scenario or errata file", (size_t)1 << 20 },
	[INFILE_RESULTS] = { "result file", (size_t)512 << 20 },
	[INFILE_KERNEL] = { "kernel image", (size_t)256 << 20 },
};

const char *infile_kind_name(enum infile_kind kind)
{
	return kind < INFILE_KIND_COUNT ? kinds[kind].name : "file";
}

size_t infile_limit(enum infile_kind kind)
{
	return kind < INFILE_KIND_COUNT ? kinds[kind].limit : 0;
}

static const char *type_name(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" :
	       S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" :
	       S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* "1 MiB", "512 MiB", or bytes for a limit that is not whole MiB. */
static char *limit_str(size_t limit)
{
	if (limit && limit % (1 << 20) == 0)
		return g_strdup_printf("%zu MiB", limit >> 20);
	return g_strdup_printf("%zu bytes", limit);
}

int infile_check(const char *path, enum infile_kind kind)
{
	struct stat st;
	int fd, e;

	if (!path || !*path)
		return pc_fail(EINVAL, "cannot read an empty path");
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return pc_fail(pc_errno_bad_path(e) ? EINVAL : e, "%s: %s", path, g_strerror(e));
	}
	e = fstat(fd, &st) < 0 ? errno : 0;
	close(fd);
	if (e)
		return pc_fail(e, "%s: %s", path, g_strerror(e));
	if (!S_ISREG(st.st_mode))
		return pc_fail(EINVAL, "%s: %s, not a regular file (a %s is expected)", path,
			       type_name(st.st_mode), infile_kind_name(kind));
	if ((guint64)st.st_size > infile_limit(kind))
		return pc_fail(EINVAL, "%s: %lld bytes, more than the limit for a %s", path,
			       (long long)st.st_size, infile_kind_name(kind));
	return 0;
}

int infile_read_limit(const char *path, size_t limit, bool text, const char *what,
		      char **data, size_t *len)
{
	g_autofree char *buf = NULL;
	g_autofree char *lim = limit_str(limit);
	size_t have = 0, cap;
	struct stat st;
	int fd, e;

	*data = NULL;
	if (len)
		*len = 0;
	if (!what)
		what = "file";
	if (!path || !*path)
		return pc_fail(EINVAL, "cannot read an empty path");
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return pc_fail(errno, "%s: %s", path, g_strerror(errno));
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return pc_fail(e, "%s: %s", path, g_strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return pc_fail(EINVAL, "%s: %s, not a regular file (a %s is expected)", path,
			       type_name(st.st_mode), what);
	}
	if ((guint64)st.st_size > limit) {
		close(fd);
		return pc_fail(EINVAL, "%s: %lld bytes, more than %s, the limit for a %s", path,
			       (long long)st.st_size, lim, what);
	}
	/* The file may grow while read: never past limit + 1 bytes. */
	cap = MIN((size_t)st.st_size, limit) + 1;
	buf = g_malloc(cap + 1);
	for (;;) {
		ssize_t n;

		if (have == cap) {
			if (cap > limit)
				break;
			cap = MIN(cap * 2, limit + 1);
			buf = g_realloc(buf, cap + 1);
		}
		n = read(fd, buf + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			close(fd);
			return pc_fail(e, "%s: %s", path, g_strerror(e));
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	close(fd);
	if (have > limit)
		return pc_fail(EINVAL, "%s: more than %s, the limit for a %s", path, lim, what);
	buf[have] = '\0';
	if (text) {
		const char *nul = memchr(buf, '\0', have);

		if (nul) {
			unsigned int line = 1;

			for (const char *p = buf; p < nul; p++)
				line += *p == '\n';
			return pc_fail(EINVAL, "%s:%u: a NUL byte: not a text file", path, line);
		}
	}
	*data = g_steal_pointer(&buf);
	if (len)
		*len = have;
	return 0;
}

bool infile_is_gzip(const char *data, size_t len)
{
	return len >= 2 && (unsigned char)data[0] == 0x1f && (unsigned char)data[1] == 0x8b;
}

/* zlib checks what libarchive's gzip reader did not: each member's CRC-32
 * and length against what it inflated to (a flipped byte that still
 * inflates turned k=3 into k=1), and nothing may follow the last member but
 * another member (gzip's own concatenation). */
int infile_gunzip(const char *path, size_t limit, const char *what, char **data, size_t *len)
{
	g_autofree char *lim = limit_str(limit);
	g_autoptr(GString) out = NULL;
	unsigned char chunk[65536];
	z_stream z = { 0 };
	int zr, ret = 0;

	if (!infile_is_gzip(*data, *len))
		return 0;
	if (!what)
		what = "file";
	/* 16 + MAX_WBITS: gzip only (no zlib or raw deflate), trailer checked */
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return pc_fail(ENOMEM, "%s: cannot start zlib's inflate", path);
	out = g_string_sized_new(MIN(*len * 8, limit) + 1);
	z.next_in = (unsigned char *)*data;
	z.avail_in = 0;
	for (size_t left = *len;;) {
		if (!z.avail_in && left) {
			z.avail_in = (uInt)MIN(left, (size_t)UINT_MAX);
			left -= z.avail_in;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = inflate(&z, Z_NO_FLUSH);
		if (out->len + (sizeof(chunk) - z.avail_out) > limit) {
			ret = pc_fail(EINVAL, "%s: more than %s once decompressed, the limit for a %s",
				      path, lim, what);
			break;
		}
		g_string_append_len(out, (const char *)chunk, (gssize)(sizeof(chunk) - z.avail_out));
		if (zr == Z_STREAM_END) {
			size_t rest = z.avail_in + left;
			const char *at = (const char *)z.next_in;

			if (!rest)
				break;
			/* another member follows, or bytes that are none */
			if (!infile_is_gzip(at, rest)) {
				ret = pc_fail(EINVAL, "%s: not a whole gzip file: %zu byte(s) after "
					      "the gzip data", path, rest);
				break;
			}
			inflateReset(&z);
			continue;
		}
		if (zr == Z_BUF_ERROR && !z.avail_in && !left) {
			ret = pc_fail(EINVAL, "%s: not a whole gzip file: it ends before its data",
				      path);
			break;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			ret = pc_fail(EINVAL, "%s: not a whole gzip file: %s", path,
				      zr == Z_DATA_ERROR && z.msg ? z.msg : zError(zr));
			break;
		}
	}
	inflateEnd(&z);
	if (ret)
		return ret;
	g_free(*data);
	*len = out->len;
	*data = g_string_free(g_steal_pointer(&out), FALSE);
	return 0;
}

int infile_read(const char *path, enum infile_kind kind, char **data, size_t *len)
{
	return infile_read_limit(path, infile_limit(kind), kind == INFILE_CONFIG,
				 infile_kind_name(kind), data, len);
}
