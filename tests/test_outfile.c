/* outfile: a regular target is replaced whole (mode, symlink kept); a FIFO
 * or device is written to in place, never replaced; a directory and a
 * failed write are errors naming the path that leave the old file as it
 * was. Every node is made in the test's own temp dir. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "log.h"
#include "outfile.h"
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char *dir;

/* Faults and witnesses: the test program's write() and umask() are the ones
 * lib/ calls (libc's are in a shared object, and a definition in the
 * program comes first), so a test can make write() stall or see whether
 * umask() was called. Both do the system call itself otherwise. */
static int write_stalls; /* writes to come that return 0, errno EINTR */
static int umask_calls;

ssize_t write(int fd, const void *buf, size_t n)
{
	if (write_stalls > 0 && fd > STDERR_FILENO) {
		write_stalls--;
		errno = EINTR; /* what an earlier interrupted call could leave */
		return 0;
	}
	return syscall(SYS_write, fd, buf, n);
}

mode_t umask(mode_t mask)
{
	umask_calls++;
	return (mode_t)syscall(SYS_umask, mask);
}

static int setup(void **state)
{
	dir = test_tmpdir("test_outfile");
	return 0;
}

static int teardown(void **state)
{
	test_tmpdir_remove(dir);
	g_clear_pointer(&dir, g_free);
	return 0;
}

static gint name_cmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir, sorted, space-separated: no temporary file beside. */
static char *entries(void)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	GString *s = g_string_new(NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d)))
		g_ptr_array_add(names, g_strdup(name));
	g_ptr_array_sort(names, name_cmp);
	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(s, "%s%s", i ? " " : "", (char *)names->pdata[i]);
	return g_string_free(s, FALSE);
}

static char *contents(const char *path)
{
	char *text = NULL;

	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

static void test_regular(void **state)
{
	g_autofree char *path = g_build_filename(dir, "out.json", NULL);
	g_autofree char *text = NULL, *names = NULL;
	struct stat st;

	mode_t old = umask(022);

	assert_int_equal(outfile_write(path, "first\n", 6), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(outfile_write(path, "second\n", 7), 0);
	text = contents(path);
	assert_string_equal(text, "second\n");
	names = entries();
	assert_string_equal(names, "out.json");
}

/* A new file is 0666 less the umask, like open(O_CREAT, 0666) (it was 0644
 * whatever the umask: results leaked under umask 077); an existing file
 * keeps its mode under any umask. */
static void test_new_file_umask(void **state)
{
	static const struct { mode_t umask, want; } cases[] = {
		{ 077, 0600 }, { 002, 0664 }, { 027, 0640 }, { 0, 0666 },
	};
	g_autofree char *path = g_build_filename(dir, "out.json", NULL);
	struct stat st;

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		mode_t old = umask(cases[i].umask);
		int r;

		unlink(path);
		r = outfile_write(path, "x\n", 2);
		umask(old);
		assert_int_equal(r, 0);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 0777, cases[i].want);
	}
	assert_int_equal(chmod(path, 0640), 0);
	mode_t old = umask(0);
	assert_int_equal(outfile_write(path, "y\n", 2), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	/* the whole mode: setgid (a group's shared results) and sticky */
	assert_int_equal(chmod(path, 02640 | 01000), 0);
	assert_int_equal(outfile_write(path, "z\n", 2), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 03640);
}

/* write() that writes nothing for a non-empty buffer would be retried
 * forever (outfile.c's write_all): it is an I/O error naming the path,
 * whatever errno an earlier call left, and the old file stays. */
static void test_write_no_progress(void **state)
{
	g_autofree char *path = g_build_filename(dir, "out", NULL);
	g_autofree char *text = NULL, *names = NULL;
	int r;

	assert_true(g_file_set_contents(path, "previous\n", -1, NULL));
	write_stalls = 3;
	r = outfile_write(path, "new\n", 4);
	write_stalls = 0;
	assert_int_equal(r, -EIO);
	assert_non_null(strstr(pc_errmsg(), path));
	text = contents(path);
	assert_string_equal(text, "previous\n");
	names = entries();
	assert_string_equal(names, "out");
}

/* The umask is read from the kernel's copy (/proc/self/status, Linux
 * 4.7+), never by setting it: umask() changes it for every thread, and a
 * file another thread creates meanwhile would get the wrong mode. */
static void test_umask_not_set(void **state)
{
	g_autofree char *path = g_build_filename(dir, "new.json", NULL);
	g_autofree char *status = NULL;
	struct stat st;
	mode_t old;

	if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL) ||
	    !strstr(status, "\nUmask:\t")) {
		test_skip("no Umask line in /proc/self/status (Linux before 4.7)");
		return;
	}
	old = umask(027);
	umask_calls = 0;
	assert_int_equal(outfile_write(path, "x\n", 2), 0);
	assert_int_equal(umask_calls, 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
}

/* An empty path is the user's input (-EINVAL, exit 2), never a file made
 * in the working directory. */
static void test_empty_path(void **state)
{
	assert_int_equal(outfile_write("", "x\n", 2), -EINVAL);
	assert_string_equal(pc_errmsg(), "cannot write an empty path");
	assert_int_equal(outfile_write(NULL, "x\n", 2), -EINVAL);
	assert_string_equal(pc_errmsg(), "cannot write an empty path");
	assert_int_equal(outfile_check(""), -EINVAL);
	assert_string_equal(pc_errmsg(), "cannot write an empty path");
	assert_int_equal(outfile_check(NULL), -EINVAL);
}

/* The user's file keeps its mode; a symlink to it stays a symlink. */
static void test_existing_and_symlink(void **state)
{
	g_autofree char *path = g_build_filename(dir, "out", NULL);
	g_autofree char *link = g_build_filename(dir, "link", NULL);
	g_autofree char *text = NULL, *names = NULL;
	struct stat st;

	assert_true(g_file_set_contents(path, "old\n", -1, NULL));
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(symlink("out", link), 0);
	assert_int_equal(outfile_write(link, "new\n", 4), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	text = contents(path);
	assert_string_equal(text, "new\n");
	names = entries();
	assert_string_equal(names, "link out");
}

/* A symlink to nothing is bad input (-EINVAL naming it and its target),
 * for the check and the write: the link stays, nothing is created where it
 * points, no temporary file is left. /dev/stdout with stdout closed is such
 * a link (/proc/self/fd/1); ours here points at a missing file of our own
 * directory, and at one in a missing directory. */
static void test_dangling_symlink(void **state)
{
	g_autofree char *link = g_build_filename(dir, "link", NULL);
	g_autofree char *link2 = g_build_filename(dir, "link2", NULL);
	g_autofree char *gz = g_build_filename(dir, "link.gz", NULL);
	g_autofree char *names = NULL, *to = NULL;
	struct stat st;

	assert_int_equal(symlink("missing", link), 0);
	assert_int_equal(symlink("nodir/missing", link2), 0);
	assert_int_equal(symlink("missing.gz", gz), 0);
	assert_int_equal(outfile_check(link), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "link: a symbolic link to missing, which does not exist"));
	assert_int_equal(outfile_write(link, "x\n", 2), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "a symbolic link to missing"));
	assert_int_equal(outfile_check(link2), -EINVAL);
	assert_int_equal(outfile_write(link2, "x\n", 2), -EINVAL);
	assert_int_equal(outfile_write(gz, "x\n", 2), -EINVAL);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	to = g_file_read_link(link, NULL);
	assert_string_equal(to, "missing");
	names = entries();
	assert_string_equal(names, "link link.gz link2");
}

/* A FIFO gets the bytes and stays a FIFO. */
static void test_fifo(void **state)
{
	g_autofree char *path = g_build_filename(dir, "fifo", NULL);
	g_autofree char *names = NULL;
	char buf[64] = { 0 };
	struct stat st;
	int rfd;

	assert_int_equal(mkfifo(path, 0600), 0);
	/* A reader first, so that the writer's open does not block. */
	rfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd >= 0);
	assert_int_equal(outfile_write(path, "through\n", 8), 0);
	assert_int_equal(read(rfd, buf, sizeof(buf) - 1), 8);
	assert_string_equal(buf, "through\n");
	close(rfd);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	names = entries();
	assert_string_equal(names, "fifo");
}

/* Descriptor 0 is a descriptor like any other (open(2) and mkstemp(3)
 * give the lowest free one): with stdin closed, a new file's temporary and
 * a FIFO's open are fd 0, and the writes go through. */
static void test_fd_zero(void **state)
{
	g_autofree char *path = g_build_filename(dir, "new.json", NULL);
	g_autofree char *fifo = g_build_filename(dir, "fifo0", NULL);
	g_autofree char *text = NULL;
	char buf[64] = { 0 };
	int saved, rfd, r1, r2;

	assert_int_equal(mkfifo(fifo, 0600), 0);
	rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd > 0);
	saved = dup(STDIN_FILENO);
	assert_true(saved > 0);
	close(STDIN_FILENO);
	r1 = outfile_write(path, "new\n", 4);
	r2 = outfile_write(fifo, "through\n", 8);
	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);
	assert_int_equal(r1, 0);
	assert_int_equal(r2, 0);
	text = contents(path);
	assert_string_equal(text, "new\n");
	assert_int_equal(read(rfd, buf, sizeof(buf) - 1), 8);
	assert_string_equal(buf, "through\n");
	close(rfd);
}

static void test_directory(void **state)
{
	g_autofree char *path = g_build_filename(dir, "sub", NULL);

	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(outfile_write(path, "x", 1), -EISDIR);
	assert_non_null(strstr(pc_errmsg(), path));
	assert_int_equal(outfile_check(path), -EISDIR);
	assert_non_null(strstr(pc_errmsg(), path));
	assert_int_equal(rmdir(path), 0);
}

/* A write that fails part-way (here RLIMIT_FSIZE, as a full disk would)
 * leaves the previous file as it was, and no file where there was none. */
static void test_failed_write(void **state)
{
	g_autofree char *path = g_build_filename(dir, "out", NULL);
	g_autofree char *fresh = g_build_filename(dir, "fresh", NULL);
	g_autofree char *big = g_malloc(8192), *text = NULL, *names = NULL;
	struct rlimit old, lim = { 4096, 0 };
	int e1, e2;

	memset(big, 'x', 8192);
	assert_true(g_file_set_contents(path, "previous\n", -1, NULL));
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	e1 = outfile_write(path, big, 8192);
	e2 = outfile_write(fresh, big, 8192);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(e1, -EFBIG);
	assert_int_equal(e2, -EFBIG);
	assert_non_null(strstr(pc_errmsg(), fresh));
	text = contents(path);
	assert_string_equal(text, "previous\n");
	names = entries();
	assert_string_equal(names, "out");
}

/* Root only: a full device of our own (major 1, minor 7, as /dev/full). */
static void test_full_device(void **state)
{
	g_autofree char *path = g_build_filename(dir, "full", NULL);
	struct stat st;

	if (mknod(path, S_IFCHR | 0600, makedev(1, 7)) < 0) {
		test_skip("mknod %s: %s (needs root)", path, g_strerror(errno));
		return;
	}
	assert_int_equal(outfile_write(path, "x\n", 2), -ENOSPC);
	assert_non_null(strstr(pc_errmsg(), path));
	assert_int_equal(outfile_check(path), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

static void test_check(void **state)
{
	g_autofree char *missing = g_build_filename(dir, "no", "such", "x.json", NULL);
	g_autofree char *fresh = g_build_filename(dir, "x.json", NULL);

	assert_int_equal(outfile_check(missing), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), missing));
	assert_int_equal(outfile_write(missing, "x", 1), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), missing));
	assert_int_equal(outfile_check(fresh), 0);
	assert_int_equal(access(fresh, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_file_umask, setup, teardown),
		cmocka_unit_test_setup_teardown(test_umask_not_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_no_progress, setup, teardown),
		cmocka_unit_test(test_empty_path),
		cmocka_unit_test_setup_teardown(test_fd_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_and_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dangling_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check, setup, teardown),
	};

	return test_run_group(tests, NULL, NULL);
}
