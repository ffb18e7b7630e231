/* Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c, built by `make
 * fuzz`). Targets are deterministic: no clock, no real sysfs; the only
 * files they touch are under one temp dir of their own. */
#ifndef PMUCANARY_FUZZ_H
#define PMUCANARY_FUZZ_H
#include "log.h"
#include <glib.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as C text, the way every loader sees a file: cut at its first
 * NUL (infile_read refuses a NUL in text, so nothing after one matters). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = g_malloc(size + 1);

	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

static char *fuzz_dir;

static void fuzz_dir_remove(void)
{
	GDir *d = g_dir_open(fuzz_dir, 0, NULL);
	const char *n;

	while (d && (n = g_dir_read_name(d))) {
		g_autofree char *p = g_build_filename(fuzz_dir, n, NULL);
		g_unlink(p);
	}
	if (d)
		g_dir_close(d);
	g_rmdir(fuzz_dir);
}

/* A temp dir (under $TMPDIR) removed at exit; the loaders that take a path
 * read their input from there. */
static inline const char *fuzz_tmpdir(void)
{
	if (!fuzz_dir) {
		fuzz_dir = g_dir_make_tmp("pmucanary-fuzz-XXXXXX", NULL);
		if (!fuzz_dir)
			abort();
		atexit(fuzz_dir_remove);
	}
	return fuzz_dir;
}

/* Writes the input to fuzz_tmpdir()/name; returns the path (g_free).
 * The name is a symlink to a memfd, so that thousands of runs a second
 * never reach a disk; the loaders open it like any regular file. */
static inline char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	static GHashTable *fds; /* name -> fd + 1 */
	char *path = g_build_filename(fuzz_tmpdir(), name, NULL);
	int fd;

	if (!fds)
		fds = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	fd = GPOINTER_TO_INT(g_hash_table_lookup(fds, name)) - 1;
	if (fd < 0) {
		g_autofree char *target = NULL;

		fd = memfd_create(name, MFD_CLOEXEC);
		target = g_strdup_printf("/proc/self/fd/%d", fd);
		if (fd < 0 || symlink(target, path) < 0)
			abort();
		g_hash_table_insert(fds, g_strdup(name), GINT_TO_POINTER(fd + 1));
	}
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	return path;
}

/* Called from LLVMFuzzerInitialize: errors are what we fuzz, not news. */
static inline void fuzz_quiet(void)
{
	log_set_level(LOG_ERROR);
}

/* A property of the code under test that must hold for every input. */
#define FUZZ_ASSERT(cond)                                                       \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, \
				__LINE__, #cond);                               \
			abort();                                                \
		}                                                               \
	} while (0)

/* A failure leaves its one-line message for the user (pc_fail); call
 * pc_errclear() before the call under test. */
#define FUZZ_ASSERT_MESSAGE() FUZZ_ASSERT(strcmp(pc_errmsg(), "unknown error") != 0)

#endif
