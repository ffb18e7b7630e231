/* infile: a regular file is read whole; a FIFO with no writer, a device
 * that never ends and a directory are refused at once naming the path; a
 * file over its limit fails naming the limit; a NUL byte in a text file
 * fails naming path:line. A result file written as NAME.gz (outfile)
 * reads back as what was written; a truncated one, or one that inflates past
 * the limit, is refused naming the path. Every node is made in the test's
 * own temp dir. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "infile.h"
#include "log.h"
#include "outfile.h"
#include "testutil.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char *dir;

static int setup(void **state)
{
	dir = test_tmpdir("test_infile");
	return 0;
}

static int teardown(void **state)
{
	test_tmpdir_remove(dir);
	g_clear_pointer(&dir, g_free);
	return 0;
}

static char *make_file(const char *name, const char *data, size_t len)
{
	char *p = g_build_filename(dir, name, NULL);

	assert_true(g_file_set_contents(p, data, (gssize)len, NULL));
	return p;
}

static void test_regular(void **state)
{
	g_autofree char *p = make_file("a.ini", "[fleet]\nguests = 1\n", 19);
	g_autofree char *empty = make_file("e.ini", "", 0);
	g_autofree char *data = NULL;
	size_t len = 99;

	assert_int_equal(infile_read(p, INFILE_CONFIG, &data, &len), 0);
	assert_int_equal(len, 19);
	assert_string_equal(data, "[fleet]\nguests = 1\n");
	g_clear_pointer(&data, g_free);
	assert_int_equal(infile_read(empty, INFILE_RESULTS, &data, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(data, "");
}

static void test_missing(void **state)
{
	g_autofree char *p = g_build_filename(dir, "none.ini", NULL);
	char *data = (char *)1;

	assert_int_equal(infile_read(p, INFILE_CONFIG, &data, NULL), -ENOENT);
	assert_null(data);
	assert_non_null(strstr(pc_errmsg(), p));
}

/* A FIFO with no writer: refused at once, not a read that waits forever. */
static void test_fifo(void **state)
{
	g_autofree char *p = g_build_filename(dir, "fifo", NULL);
	g_autofree char *data = NULL;

	assert_int_equal(mkfifo(p, 0600), 0);
	alarm(10);
	assert_int_equal(infile_read(p, INFILE_CONFIG, &data, NULL), -EINVAL);
	alarm(0);
	assert_null(data);
	assert_non_null(strstr(pc_errmsg(), p));
	assert_non_null(strstr(pc_errmsg(), "FIFO"));
	assert_null(strchr(pc_errmsg(), '\n'));
}

/* Our own /dev/zero: refused before a byte is read. */
static void test_device(void **state)
{
	g_autofree char *p = g_build_filename(dir, "zero", NULL);
	g_autofree char *data = NULL;

	if (mknod(p, S_IFCHR | 0600, makedev(1, 5)) < 0) {
		test_skip("mknod %s: %s (needs root)", p, g_strerror(errno));
		return;
	}
	assert_int_equal(infile_read(p, INFILE_KERNEL, &data, NULL), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), p));
	assert_non_null(strstr(pc_errmsg(), "character device"));
}

static void test_directory(void **state)
{
	g_autofree char *data = NULL;

	assert_int_equal(infile_read(dir, INFILE_RESULTS, &data, NULL), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), dir));
	assert_non_null(strstr(pc_errmsg(), "directory"));
}

static void test_limit(void **state)
{
	g_autofree char *p = make_file("big", "0123456789", 10);
	g_autofree char *data = NULL;

	assert_int_equal(infile_read_limit(p, 10, false, "thing", &data, NULL), 0);
	assert_string_equal(data, "0123456789");
	g_clear_pointer(&data, g_free);
	assert_int_equal(infile_read_limit(p, 9, false, "thing", &data, NULL), -EINVAL);
	assert_null(data);
	assert_non_null(strstr(pc_errmsg(), p));
	assert_non_null(strstr(pc_errmsg(), "9 bytes"));
	assert_non_null(strstr(pc_errmsg(), "thing"));
	/* The limits are generous for real files and said in MiB. */
	assert_int_equal(infile_limit(INFILE_CONFIG), 1 << 20);
	assert_int_equal(infile_limit(INFILE_RESULTS), 512 << 20);
	assert_int_equal(infile_limit(INFILE_KERNEL), 256 << 20);
	g_autofree char *over = g_build_filename(dir, "over.ini", NULL);
	g_autofree char *big = g_malloc0((1 << 20) + 1);

	memset(big, 'x', (1 << 20) + 1);
	assert_true(g_file_set_contents(over, big, (1 << 20) + 1, NULL));
	assert_int_equal(infile_read(over, INFILE_CONFIG, &data, NULL), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "1 MiB"));
}

/* A file whose size says 0 and that has more (procfs, or one growing as it
 * is read) is read to its end, on both sides of the limit: exactly the
 * limit is whole, one byte less refused; never cut short and taken. */
static void test_limit_unsized(void **state)
{
	g_autofree char *want = NULL, *data = NULL;
	size_t len = 0, got = 0;
	struct stat st;

	assert_true(g_file_get_contents("/proc/version", &want, &len, NULL));
	assert_int_equal(stat("/proc/version", &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_true(len > 8);
	for (size_t limit = 1; limit <= len; limit++) {
		int r = infile_read_limit("/proc/version", limit, false, "thing", &data, &got);

		if (limit < len) {
			if (r != -EINVAL)
				fail_msg("limit %zu of %zu bytes: %d, %zu bytes read", limit, len, r, got);
			assert_null(data);
			continue;
		}
		assert_int_equal(r, 0);
		assert_int_equal(got, len);
		assert_string_equal(data, want);
		g_clear_pointer(&data, g_free);
	}
}

/* An empty path is the user's input (-EINVAL, exit 2), never a file to
 * look for, for every reader. */
static void test_empty_path(void **state)
{
	char *data = (char *)1;

	assert_int_equal(infile_read_limit("", 10, false, "thing", &data, NULL), -EINVAL);
	assert_null(data);
	assert_string_equal(pc_errmsg(), "cannot read an empty path");
	assert_int_equal(infile_read(NULL, INFILE_CONFIG, &data, NULL), -EINVAL);
	assert_string_equal(pc_errmsg(), "cannot read an empty path");
	assert_int_equal(infile_check("", INFILE_KERNEL), -EINVAL);
	assert_string_equal(pc_errmsg(), "cannot read an empty path");
	assert_int_equal(infile_check(NULL, INFILE_KERNEL), -EINVAL);
}

/* A read that fails is read()'s errno naming the path, at once: our own
 * /proc/self/mem is a regular file whose first page is never mapped, so
 * reading it from offset 0 is EIO (proc(5)). */
static void test_read_error(void **state)
{
	char *data = (char *)1;
	int r;

	alarm(10);
	r = infile_read_limit("/proc/self/mem", 4096, false, "thing", &data, NULL);
	alarm(0);
	assert_int_equal(r, -EIO);
	assert_null(data);
	assert_non_null(strstr(pc_errmsg(), "/proc/self/mem"));
}

/* infile_check (infile.h): 0 for what infile_read() would read, and every
 * failure about the path -EINVAL with one message naming it, the size
 * limit of the kind on both sides included. */
static void test_check(void **state)
{
	g_autofree char *ok = make_file("initrd", "0123456789", 10);
	g_autofree char *empty = make_file("empty", "", 0);
	g_autofree char *missing = g_build_filename(dir, "none", NULL);
	g_autofree char *under_file = g_build_filename(ok, "x", NULL);
	g_autofree char *dangling = g_build_filename(dir, "dangling", NULL);
	g_autofree char *fifo = g_build_filename(dir, "check-fifo", NULL);
	g_autofree char *at = g_build_filename(dir, "at-limit.ini", NULL);
	g_autofree char *over = g_build_filename(dir, "over-limit.ini", NULL);
	g_autofree char *big = g_malloc0((1 << 20) + 1);
	const char *bad[] = { missing, under_file, dangling, fifo, dir, over };

	assert_int_equal(symlink(missing, dangling), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	memset(big, 'x', (1 << 20) + 1);
	assert_true(g_file_set_contents(at, big, 1 << 20, NULL));
	assert_true(g_file_set_contents(over, big, (1 << 20) + 1, NULL));

	assert_int_equal(infile_check(ok, INFILE_KERNEL), 0);
	assert_int_equal(infile_check(empty, INFILE_CONFIG), 0);
	assert_int_equal(infile_check(at, INFILE_CONFIG), 0);
	/* the same 1 MiB + 1 is well within a kernel image's limit */
	assert_int_equal(infile_check(over, INFILE_KERNEL), 0);
	alarm(10);
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		int r = infile_check(bad[i], INFILE_CONFIG);

		if (r != -EINVAL || !strstr(pc_errmsg(), bad[i]) || strchr(pc_errmsg(), '\n'))
			fail_msg("%s: %d '%s'", bad[i], r, pc_errmsg());
	}
	alarm(0);
	assert_int_equal(infile_check(over, INFILE_CONFIG), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "scenario or errata file"));
}

/* gzip is the two magic bytes 1f 8b, both: one alone is data. */
static void test_gzip_magic(void **state)
{
	assert_true(infile_is_gzip("\x1f\x8b\x08", 3));
	assert_false(infile_is_gzip("x\x8b\x08", 3));
	assert_false(infile_is_gzip("\x1fx\x08", 3));
	assert_false(infile_is_gzip("\x1f", 1));
	assert_false(infile_is_gzip("", 0));
}

static void test_nul(void **state)
{
	g_autofree char *p = make_file("nul.ini", "[fleet]\nguests = 1\nx\0y\n", 23);
	g_autofree char *data = NULL;
	g_autofree char *where = g_strdup_printf("%s:3:", p);
	size_t len;

	assert_int_equal(infile_read(p, INFILE_CONFIG, &data, NULL), -EINVAL);
	assert_null(data);
	assert_non_null(strstr(pc_errmsg(), where));
	/* Binary kinds keep their NULs. */
	assert_int_equal(infile_read(p, INFILE_KERNEL, &data, &len), 0);
	assert_int_equal(len, 23);
}

/* What outfile_write() wrote to dir/name, raw. */
static char *written_raw(const char *name, const char *data, size_t len, size_t *raw_len)
{
	g_autofree char *p = g_build_filename(dir, name, NULL);
	char *raw = NULL;

	assert_int_equal(outfile_write(p, data, len), 0);
	assert_int_equal(infile_read(p, INFILE_RESULTS, &raw, raw_len), 0);
	return raw;
}

static void test_gzip_round_trip(void **state)
{
	g_autoptr(GString) json = g_string_new("{\"schema\":\"pmucanary/2\",\"cells\":[");
	g_autofree char *raw = NULL, *again = NULL, *plain = NULL;
	g_autofree char *p = g_build_filename(dir, "r.json.gz", NULL);
	size_t len, len2, plain_len;

	for (int i = 0; i < 20000; i++)
		g_string_append_printf(json, "%s{\"spec\":\"cycles:%d\"}", i ? "," : "", i % 7);
	g_string_append(json, "]}\n");
	raw = written_raw("r.json.gz", json->str, json->len, &len);
	assert_true(infile_is_gzip(raw, len));
	assert_true(len < json->len / 10);
	/* No time stamp: the same data gives the same bytes. */
	again = written_raw("s.json.gz", json->str, json->len, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(raw, again, len);
	assert_int_equal(infile_gunzip(p, infile_limit(INFILE_RESULTS), "result file", &raw, &len), 0);
	assert_int_equal(len, json->len);
	assert_string_equal(raw, json->str);
	/* A name without .gz is written as it is, and read as it is. */
	plain = written_raw("r.json", json->str, json->len, &plain_len);
	assert_false(infile_is_gzip(plain, plain_len));
	assert_int_equal(infile_gunzip(p, 10, "result file", &plain, &plain_len), 0);
	assert_int_equal(plain_len, json->len);
	assert_string_equal(plain, json->str);
}

static void test_gzip_truncated(void **state)
{
	g_autofree char *zeros = g_malloc0(100000);
	g_autofree char *raw = NULL;
	g_autofree char *p = g_build_filename(dir, "t.json.gz", NULL);
	size_t len;

	raw = written_raw("t.json.gz", zeros, 100000, &len);
	for (size_t cut = 1; cut < len; cut += len / 5 + 1) {
		g_autofree char *part = g_memdup2(raw, len - cut);
		size_t plen = len - cut;

		assert_int_equal(infile_gunzip(p, 1 << 20, "result file", &part, &plen), -EINVAL);
		assert_non_null(strstr(pc_errmsg(), p));
		assert_non_null(strstr(pc_errmsg(), "not a whole gzip file"));
		assert_int_equal(plen, len - cut);
	}
}

/* Every byte of a gzip file matters: any one flipped (in the header, the
 * deflate data, the CRC-32 or the length) is refused, never read as other
 * data (a flipped byte read k=3 as k=1 and diff said 0); bytes after the
 * data are refused; two members (gzip a b >c) read as both. */
static void test_gzip_corrupt(void **state)
{
	static const char doc[] = "{\"cells\":[{\"spec\":\"cycles:pp\",\"outcome\":\"GUEST_CRASH\","
				  "\"k\":3,\"n\":3},{\"spec\":\"cpu-clock\",\"outcome\":\"OK\"}]}\n";
	g_autofree char *raw = NULL, *p = g_build_filename(dir, "c.json.gz", NULL);
	size_t len, refused = 0;

	raw = written_raw("c.json.gz", doc, sizeof(doc) - 1, &len);
	/* Bytes 0-1 are the magic (without it the file is read as plain
	 * text, for the JSON reader to refuse), bit 0 of byte 3 is FTEXT and
	 * bytes 4-9 the header's mtime, extra flags and OS: all informational. */
	for (size_t i = 0; i < len; i++) {
		g_autofree char *bad = g_memdup2(raw, len);
		size_t blen = len;
		int r;

		if (i < 2 || (i >= 3 && i < 10))
			continue;
		bad[i] ^= 0x01;
		r = infile_gunzip(p, 1 << 20, "result file", &bad, &blen);
		if (r == 0)
			fail_msg("byte %zu of %zu flipped: read as '%.*s'", i, len, (int)blen, bad);
		assert_int_equal(r, -EINVAL);
		assert_non_null(strstr(pc_errmsg(), "c.json.gz: not a whole gzip file"));
		refused++;
	}
	assert_int_equal(refused, len - 9);
	{
		g_autofree char *bad = g_memdup2(raw, len);
		size_t blen = len;

		bad[len - 8] ^= 0x40;
		assert_int_equal(infile_gunzip(p, 1 << 20, "result file", &bad, &blen), -EINVAL);
		assert_non_null(strstr(pc_errmsg(), "incorrect data check"));
		bad[len - 8] ^= 0x40;
		bad[len - 4] ^= 0x01;
		assert_int_equal(infile_gunzip(p, 1 << 20, "result file", &bad, &blen), -EINVAL);
		assert_non_null(strstr(pc_errmsg(), "incorrect length check"));
	}
	for (size_t extra = 1; extra <= 9; extra += 4) {
		g_autofree char *bad = g_malloc0(len + extra);
		size_t blen = len + extra;

		memcpy(bad, raw, len);
		assert_int_equal(infile_gunzip(p, 1 << 20, "result file", &bad, &blen), -EINVAL);
		assert_non_null(strstr(pc_errmsg(), "byte(s) after the gzip data"));
	}
	{
		g_autofree char *two = g_malloc(2 * len);
		g_autofree char *want = g_strconcat(doc, doc, NULL);
		size_t tlen = 2 * len;

		memcpy(two, raw, len);
		memcpy(two + len, raw, len);
		assert_int_equal(infile_gunzip(p, 1 << 20, "result file", &two, &tlen), 0);
		assert_int_equal(tlen, 2 * (sizeof(doc) - 1));
		assert_string_equal(two, want);
	}
}

/* A small file that inflates past the limit (1 MiB of zeros is ~5 KiB of
 * gzip) stops at the limit instead of filling memory. */
static void test_gzip_limit(void **state)
{
	g_autofree char *zeros = g_malloc0(1 << 20);
	g_autofree char *raw = NULL, *copy = NULL;
	g_autofree char *p = g_build_filename(dir, "z.json.gz", NULL);
	size_t len, clen;

	raw = written_raw("z.json.gz", zeros, 1 << 20, &len);
	assert_true(len < (1 << 20) / 64);
	copy = g_memdup2(raw, len);
	clen = len;
	assert_int_equal(infile_gunzip(p, (1 << 20) - 1, "result file", &copy, &clen), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), p));
	assert_non_null(strstr(pc_errmsg(), "once decompressed"));
	assert_int_equal(infile_gunzip(p, 1 << 20, "result file", &raw, &len), 0);
	assert_int_equal(len, 1 << 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limit, setup, teardown),
		cmocka_unit_test(test_limit_unsized),
		cmocka_unit_test(test_gzip_magic),
		cmocka_unit_test(test_empty_path),
		cmocka_unit_test(test_read_error),
		cmocka_unit_test_setup_teardown(test_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nul, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gzip_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gzip_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gzip_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gzip_limit, setup, teardown),
	};

	return test_run_group(tests, NULL, NULL);
}
