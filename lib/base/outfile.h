/* Output files the user names (--json, --html, --junit, --kcidb FILE).
 *
 * Every such path goes through outfile_write(), so that a device, a FIFO or
 * a symlink the user points at survives, and a failed write is an error
 * that leaves the previous file as it was. */
#ifndef PMUCANARY_OUTFILE_H
#define PMUCANARY_OUTFILE_H

#include <stddef.h>

/* Writes len bytes of data to path, gzip-compressed when path's name ends
 * in ".gz" (result files of a full sweep are 30 MB as JSON, 2 MB as gzip;
 * readers take both):
 *  - a regular file, or none: a temporary file in the same directory,
 *    fsync, rename over path, fsync of the directory. Readers see the old
 *    content or the new, never a part; an existing file keeps its mode and
 *    owner; a symlink to one stays a symlink and its target is replaced.
 *    A symlink to nothing (dangling; /dev/stdout with stdout closed) is
 *    -EINVAL: never replaced by a file, never followed into creating one.
 *    A regular file that is our stdout or stderr is written through that
 *    descriptor instead; one we may not write is -EACCES.
 *  - a character or block device, a FIFO: opened for writing as it is (no
 *    truncation, no creation, never renamed over) and written to.
 *  - a directory: -EISDIR.
 * Every write and the close are checked: a short write or ENOSPC fails.
 * Returns 0 or a negative errno with a message naming path. */
int outfile_write(const char *path, const void *data, size_t len);

/* The checks outfile_write() would fail on that cost nothing to make
 * before hours of work: path is a directory, a dangling symlink, a device
 * or FIFO that cannot be opened for writing, or a file whose directory is
 * not writable.
 * Returns 0 or a negative errno with a message naming path. */
int outfile_check(const char *path);

#endif
