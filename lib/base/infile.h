/* Input files the user names (scenario and errata INI, result files for
 * diff and matrix, --lab-context, kernel images), and the journal.
 *
 * Every such path goes through infile_read(), so that a FIFO with no
 * writer, a device that never ends (/dev/zero) or a directory is one line
 * naming the path instead of a hang or unbounded memory. */
#ifndef PMUCANARY_INFILE_H
#define PMUCANARY_INFILE_H

#include <stdbool.h>
#include <stddef.h>

enum infile_kind {
	INFILE_CONFIG,   /* scenario, errata: text, 1 MiB */
	INFILE_RESULTS,  /* result sets, journal, --lab-context: 512 MiB */
	INFILE_KERNEL,   /* kernel images, modules, initrds: 256 MiB */
	INFILE_KIND_COUNT
};

/* "scenario or errata file", "result file", "kernel image". */
const char *infile_kind_name(enum infile_kind kind);
/* The size limit of a kind, in bytes. */
size_t infile_limit(enum infile_kind kind);

/* Reads all of path into *data (NUL-terminated, len bytes before the
 * terminator; len may be NULL) when path is a regular file of at most
 * limit bytes. The file is opened with O_NONBLOCK|O_NOCTTY and checked
 * with fstat() before any read, so a FIFO never blocks. Fails with one
 * message naming path:
 *  - a directory, FIFO, device or socket: -EINVAL;
 *  - larger than limit: -EINVAL (the limit is in the message);
 *  - text and a NUL byte in it: -EINVAL naming path:line.
 * -EINVAL is always the user's input, never the system: commands exit 2.
 * Otherwise open()'s or read()'s errno (-ENOENT, -EACCES). */
int infile_read_limit(const char *path, size_t limit, bool text, const char *what,
		      char **data, size_t *len);

/* Whether infile_read() could read path, without reading it: for paths
 * handed on to someone else (QEMU boots a guest's initrd). Every failure
 * that is about the path (missing, a directory, a FIFO, too large, a
 * dangling symlink, "file/") is -EINVAL with one message naming it. */
int infile_check(const char *path, enum infile_kind kind);

/* Whether data begins with gzip's magic bytes. */
bool infile_is_gzip(const char *data, size_t len);

/* Replaces *data (len bytes, read from path) by what it decompresses to,
 * NUL-terminated, when it is gzip (a result file written as NAME.gz); data
 * that is not gzip stays as it is. The output is bounded by limit, so that
 * a small hostile file cannot inflate into all of memory. Fails with one
 * message naming path, -EINVAL: not a whole gzip stream (truncated,
 * corrupt, a member whose CRC-32 or length does not match its data, bytes
 * after the last member), or more than limit bytes once decompressed.
 * Concatenated members (gzip a b > c) read as their data joined. */
int infile_gunzip(const char *path, size_t limit, const char *what, char **data, size_t *len);

/* infile_read_limit() with the limit of kind; INFILE_CONFIG is text. */
int infile_read(const char *path, enum infile_kind kind, char **data, size_t *len);

#endif
