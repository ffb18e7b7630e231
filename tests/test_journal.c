/* Journal: lines written are read back; a crash mid-write is tolerated at
 * the end only; the armed-never-judged batch is found. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "journal.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture {
	char *dir;
};

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);

	f->dir = g_dir_make_tmp("test_journal-XXXXXX", NULL);
	assert_non_null(f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, JOURNAL_FILE, NULL);

	unlink(path);
	rmdir(f->dir);
	g_free(f->dir);
	g_free(f);
	return 0;
}

static void write_run(const char *dir, bool judge_last)
{
	g_autoptr(journal) j = NULL;
	static const char *const k0[] = { "type=1 config=0", "type=1 config=1", NULL };
	static const char *const k1[] = { "type=0 config=0 precise_ip=1", NULL };
	json_t *sc = json_pack("{s:s}", "name", "smoke");
	json_t *res = json_pack("{s:i}", "EOPNOTSUPP", 3);
	json_t *verdicts = json_pack("[{s:s,s:s}]", "guest", "g0", "verdict", "crash");

	assert_int_equal(journal_create(dir, &j), 0);
	assert_int_equal(journal_start(j, sc, "abc123"), 0);
	assert_int_equal(journal_open_done(j, res), 0);
	assert_int_equal(journal_fleet_up(j, NULL), 0);
	assert_int_equal(journal_arm(j, 0, "screen", k0), 0);
	assert_int_equal(journal_judged(j, 0, "OK", NULL), 0);
	assert_int_equal(journal_arm(j, 1, "screen", k1), 0);
	if (judge_last)
		assert_int_equal(journal_judged(j, 1, "GUEST_CRASH", verdicts), 0);
	json_decref(sc);
	json_decref(res);
	json_decref(verdicts);
}

static void append_raw(const char *dir, const char *bytes, size_t len);

static void test_roundtrip(void **state)
{
	struct fixture *f = *state;
	g_autoptr(journal_replay) r = NULL;
	const struct journal_batch *b;

	write_run(f->dir, true);
	assert_int_equal(journal_read(f->dir, &r), 0);
	assert_int_equal(r->lines, 7);
	assert_false(r->truncated);
	assert_string_equal(json_string_value(json_object_get(r->start, "fingerprint")), "abc123");
	assert_non_null(r->open_done);
	assert_non_null(r->fleet_up);
	assert_null(r->done);
	assert_int_equal(r->batches->len, 2);
	b = journal_replay_batch(r, 0);
	assert_true(b->judged);
	assert_string_equal(b->outcome, "OK");
	assert_int_equal(b->keys->len, 2);
	b = journal_replay_batch(r, 1);
	assert_string_equal(b->outcome, "GUEST_CRASH");
	assert_string_equal(b->kind, "screen");
	assert_string_equal(b->boot_id, journal_boot_id());
	assert_int_equal(strlen(journal_boot_id()), 36);
	/* the boot is read from the line, not taken from this boot: an arm line
	 * of another boot, and one that names none (older journals) */
	{
		static const char other[] =
			"{\"step\":\"arm\",\"batch\":2,\"kind\":\"screen\",\"keys\":[\"k\"],"
			"\"boot\":\"00000000-1111-2222-3333-444444444444\",\"ts\":1,\"seq\":7}\n"
			"{\"step\":\"arm\",\"batch\":3,\"kind\":\"screen\",\"keys\":[\"k\"],"
			"\"ts\":1,\"seq\":8}\n";
		g_autoptr(journal_replay) r2 = NULL;

		append_raw(f->dir, other, sizeof(other) - 1);
		assert_int_equal(journal_read(f->dir, &r2), 0);
		assert_string_equal(journal_replay_batch(r2, 2)->boot_id,
				    "00000000-1111-2222-3333-444444444444");
		assert_string_equal(journal_replay_batch(r2, 3)->boot_id, "");
		assert_string_equal(journal_replay_batch(r2, 1)->boot_id, journal_boot_id());
	}
	/* batch 3 stopped by our own signal: not judged, not the open batch */
	{
		static const char stop[] = "{\"step\":\"interrupted\",\"batch\":3,\"signal\":15}\n";
		g_autoptr(journal_replay) r3 = NULL;

		append_raw(f->dir, stop, sizeof(stop) - 1);
		assert_int_equal(journal_read(f->dir, &r3), 0);
		assert_true(journal_replay_batch(r3, 3)->interrupted);
		assert_false(journal_replay_batch(r3, 3)->judged);
		assert_int_equal(journal_replay_open_batch(r3)->id, 2);
	}
	assert_int_equal(json_array_size(b->verdicts), 1);
	assert_null(journal_replay_open_batch(r));

	/* A second create on the same directory must not clobber the run. */
	g_autoptr(journal) j2 = NULL;
	assert_int_equal(journal_create(f->dir, &j2), -EEXIST);
}

static void append_raw(const char *dir, const char *bytes, size_t len)
{
	g_autofree char *path = g_build_filename(dir, JOURNAL_FILE, NULL);
	int fd = open(path, O_WRONLY | O_APPEND);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	close(fd);
}

static void test_open_batch_and_truncated(void **state)
{
	struct fixture *f = *state;
	g_autoptr(journal_replay) r = NULL;
	const struct journal_batch *b;
	static const char partial[] = "{\"step\":\"judged\",\"batch\":1,\"outc";

	write_run(f->dir, false);
	append_raw(f->dir, partial, strlen(partial));
	assert_int_equal(journal_read(f->dir, &r), 0);
	assert_true(r->truncated);
	assert_int_equal(r->lines, 6);
	b = journal_replay_open_batch(r);
	assert_non_null(b);
	assert_int_equal(b->id, 1);
	assert_false(b->judged);
	assert_string_equal(b->keys->pdata[0], "type=0 config=0 precise_ip=1");

	/* Resume: the partial line is cut, the next line starts clean. */
	g_autoptr(journal) j = NULL;
	g_autoptr(journal_replay) r2 = NULL;
	assert_int_equal(journal_reopen(f->dir, &j), 0);
	assert_int_equal(journal_judged(j, 1, "HOST_CRASH", NULL), 0);
	assert_int_equal(journal_read(f->dir, &r2), 0);
	assert_false(r2->truncated);
	assert_int_equal(r2->lines, 7);
	assert_null(journal_replay_open_batch(r2));
	assert_string_equal(journal_replay_batch(r2, 1)->outcome, "HOST_CRASH");
}

/* A lab host's outer harness says how the host went down (journal_host_down);
 * the open batch keeps that word for the resume, and nothing else does. */
static void test_host_down(void **state)
{
	struct fixture *f = *state;
	g_autoptr(journal_replay) r = NULL;
	g_autoptr(journal) j = NULL;
	const struct journal_batch *b;

	write_run(f->dir, false);
	assert_int_equal(journal_reopen(f->dir, &j), 0);
	assert_int_equal(journal_host_down(j, 1, "HOST_HANG", "no LAB line for 600 s"), 0);
	assert_int_equal(journal_host_down(j, 1, "GUEST_CRASH", "x"), -EINVAL);
	assert_int_equal(journal_read(f->dir, &r), 0);
	b = journal_replay_open_batch(r);
	assert_non_null(b);
	assert_int_equal(b->id, 1);
	assert_false(b->judged);
	assert_string_equal(b->down_outcome, "HOST_HANG");
	assert_string_equal(b->down_evidence, "no LAB line for 600 s");
	assert_null(journal_replay_batch(r, 0)->down_outcome);
	/* A console's bytes that are not UTF-8 are kept, as \xNN. */
	g_clear_pointer(&r, journal_replay_free);
	assert_int_equal(journal_host_down(j, 1, "HOST_CRASH", "Oops\xff\xfe at"), 0);
	assert_int_equal(journal_read(f->dir, &r), 0);
	b = journal_replay_open_batch(r);
	assert_string_equal(b->down_outcome, "HOST_CRASH");
	assert_string_equal(b->down_evidence, "Oops\\xff\\xfe at");
}

/* journal.h: a host-down line's outcome is HOST_CRASH or HOST_HANG; a file
 * that says anything else (another outcome, none, not a string) is refused
 * on replay, naming the line, never taken as how the host went down. */
static void test_host_down_bad_outcome(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, JOURNAL_FILE, NULL);
	static const char *const bad[] = {
		"{\"step\":\"host-down\",\"batch\":1,\"outcome\":\"GUEST_CRASH\"}\n",
		"{\"step\":\"host-down\",\"batch\":1,\"outcome\":\"OK\"}\n",
		"{\"step\":\"host-down\",\"batch\":1}\n",
		"{\"step\":\"host-down\",\"batch\":1,\"outcome\":7}\n",
	};
	g_autofree char *good = NULL;

	write_run(f->dir, false);
	assert_true(g_file_get_contents(path, &good, NULL, NULL));
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(journal_replay) r = NULL;

		assert_true(g_file_set_contents(path, good, -1, NULL));
		append_raw(f->dir, bad[i], strlen(bad[i]));
		assert_int_equal(journal_read(f->dir, &r), -EINVAL);
		assert_null(r);
		if (!strstr(pc_errmsg(), ":7: host-down: expected \"outcome\": HOST_CRASH or HOST_HANG"))
			fail_msg("line %zu: %s", i, pc_errmsg());
	}
}

/* Every kind of line journal.h lists reads back into its slot: baseline
 * and done too (a resumed run needs to know the baseline was taken and
 * that the run ended). */
static void test_baseline_and_done_lines(void **state)
{
	struct fixture *f = *state;
	g_autoptr(journal_replay) r = NULL;
	g_autoptr(journal) j = NULL;
	json_t *summary = json_pack("{s:i}", "cells", 3);

	write_run(f->dir, true);
	assert_int_equal(journal_reopen(f->dir, &j), 0);
	assert_int_equal(journal_baseline(j, "OK", NULL), 0);
	assert_int_equal(journal_done(j, summary), 0);
	json_decref(summary);
	assert_int_equal(journal_read(f->dir, &r), 0);
	assert_int_equal(r->lines, 9);
	assert_non_null(r->baseline);
	assert_string_equal(json_string_value(json_object_get(r->baseline, "outcome")), "OK");
	assert_non_null(r->done);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r->done, "summary"),
							    "cells")), 3);
}

/* A line's "batch" is a non-negative integer that fits 32 bits (journal.h
 * "batch":N): a string, a negative, a fraction or 2^32 is refused naming
 * the line; 2^32 - 1 is a batch. */
static void test_batch_ids(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, JOURNAL_FILE, NULL);
	static const char *const bad[] = { "\"1\"", "-1", "1.5", "4294967296", "null", "true" };

	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *line = g_strdup_printf("{\"step\":\"arm\",\"batch\":%s,\"kind\":"
							"\"screen\",\"keys\":[\"k\"]}\n", bad[i]);
		g_autoptr(journal_replay) r = NULL;

		assert_true(g_file_set_contents(path, line, -1, NULL));
		assert_int_equal(journal_read(f->dir, &r), -EINVAL);
		if (!strstr(pc_errmsg(), ":1: expected \"batch\": a non-negative integer"))
			fail_msg("batch %s: %s", bad[i], pc_errmsg());
	}
	{
		g_autoptr(journal_replay) r = NULL;

		assert_true(g_file_set_contents(path, "{\"step\":\"arm\",\"batch\":4294967295,"
						"\"kind\":\"screen\",\"keys\":[\"k\"]}\n", -1, NULL));
		assert_int_equal(journal_read(f->dir, &r), 0);
		assert_non_null(journal_replay_batch(r, 4294967295u));
	}
}

static void test_nul_tail(void **state)
{
	struct fixture *f = *state;
	g_autoptr(journal_replay) r = NULL;
	static const char zeros[64];

	write_run(f->dir, true);
	append_raw(f->dir, zeros, sizeof(zeros));
	assert_int_equal(journal_read(f->dir, &r), 0);
	assert_true(r->truncated);
	assert_int_equal(r->lines, 7);
}

static void test_garbage_in_middle(void **state)
{
	struct fixture *f = *state;
	g_autoptr(journal_replay) r = NULL;
	g_autofree char *path = g_build_filename(f->dir, JOURNAL_FILE, NULL);
	g_autofree char *want = g_strdup_printf("%s:4: not a journal line: ", path);
	static const char junk[] = "{\"step\":\"arm\",\"batch\":2,\"keys\":[\n";

	write_run(f->dir, false);
	append_raw(f->dir, junk, strlen(junk)); /* line 7, complete but bad */
	assert_int_equal(journal_read(f->dir, &r), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), ":7: not a journal line"));

	g_autofree char *text = NULL;
	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_free(lines[3]);
	lines[3] = g_strdup("garbage");
	g_free(text);
	text = g_strjoinv("\n", lines);
	assert_true(g_file_set_contents(path, text, -1, NULL));
	assert_int_equal(journal_read(f->dir, &r), -EINVAL);
	assert_true(g_str_has_prefix(pc_errmsg(), want));
}

/* A real short write: RLIMIT_FSIZE lets the file grow to the limit and then
 * fails (EFBIG), as a full disk does with ENOSPC. The line that did not fit
 * is cut off whole, so that the next one starts clean. */
static void test_failed_write_leaves_whole_lines(void **state)
{
	struct fixture *f = *state;
	g_autoptr(journal) j = NULL;
	g_autoptr(journal_replay) r = NULL;
	g_autofree char *path = g_build_filename(f->dir, JOURNAL_FILE, NULL);
	g_autofree char *big = g_malloc(4096);
	struct rlimit old, lim;
	struct stat st;
	json_t *line;
	int rc;

	write_run(f->dir, false);
	assert_int_equal(journal_reopen(f->dir, &j), 0);
	assert_int_equal(stat(path, &st), 0);
	memset(big, 'x', 4095);
	big[4095] = 0;
	line = json_pack("{s:s}", "evidence", big);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)st.st_size + 100;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = journal_judged(j, 1, "GUEST_CRASH", line);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	json_decref(line);
	assert_int_equal(rc, -EFBIG);
	assert_non_null(strstr(pc_errmsg(), path));
	struct stat after;
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(after.st_size, st.st_size);

	assert_int_equal(journal_judged(j, 1, "INFRA", NULL), 0);
	assert_int_equal(journal_read(f->dir, &r), 0);
	assert_false(r->truncated);
	assert_int_equal(r->lines, 7);
	assert_string_equal(journal_replay_batch(r, 1)->outcome, "INFRA");
}

/* The same at the journal's first line: nothing of it stays, and the start
 * written again is the journal's whole first line. */
static void test_failed_first_line(void **state)
{
	struct fixture *f = *state;
	g_autoptr(journal) j = NULL;
	g_autoptr(journal_replay) r = NULL;
	g_autofree char *path = g_build_filename(f->dir, JOURNAL_FILE, NULL);
	json_t *sc = json_pack("{s:s}", "name", "smoke");
	struct rlimit old, lim;
	struct stat st;
	int rc;

	assert_int_equal(journal_create(f->dir, &j), 0);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 10;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = journal_start(j, sc, "abc123");
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(rc, -EFBIG);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(journal_start(j, sc, "abc123"), 0);
	json_decref(sc);
	assert_int_equal(journal_read(f->dir, &r), 0);
	assert_false(r->truncated);
	assert_int_equal(r->lines, 1);
}

/* One process per run directory: while a journal is open (the run that
 * owns it lives), a second open for resume is refused without touching
 * it, and the journal is whole; closed, it opens again. Locks are per open
 * file: a second open in this process stands for another process. */
static void test_one_owner(void **state)
{
	struct fixture *f = *state;
	g_autofree char *path = g_build_filename(f->dir, JOURNAL_FILE, NULL);
	g_autofree char *before = NULL, *after = NULL;
	struct journal *owner = NULL, *second = NULL;
	static const char *const k[] = { "type=1 config=0", NULL };

	assert_int_equal(journal_create(f->dir, &owner), 0);
	assert_int_equal(journal_arm(owner, 0, "screen", k), 0);
	assert_true(g_file_get_contents(path, &before, NULL, NULL));
	/* a partial last line, as a crash would leave it: a resume would cut it */
	append_raw(f->dir, "{\"step\":\"judg", 13);
	assert_int_equal(journal_reopen(f->dir, &second), -EBUSY);
	assert_null(second);
	assert_non_null(strstr(pc_errmsg(), "in use: another pmucanary is running this run"));
	assert_non_null(strstr(pc_errmsg(), path));
	assert_true(g_file_get_contents(path, &after, NULL, NULL));
	assert_int_equal(strlen(after), strlen(before) + 13);
	journal_close(owner);
	assert_int_equal(journal_reopen(f->dir, &second), 0);
	journal_close(second);
	g_free(after);
	assert_true(g_file_get_contents(path, &after, NULL, NULL));
	assert_string_equal(after, before);
}

static void test_semantic_errors(void **state)
{
	struct fixture *f = *state;
	g_autoptr(journal_replay) r = NULL;
	g_autofree char *path = g_build_filename(f->dir, JOURNAL_FILE, NULL);

	assert_true(g_file_set_contents(path,
		"{\"step\":\"judged\",\"batch\":9,\"outcome\":\"OK\"}\n", -1, NULL));
	assert_int_equal(journal_read(f->dir, &r), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), ":1: judged: batch 9 was never armed"));
	assert_true(g_file_set_contents(path, "{\"step\":\"dance\"}\n", -1, NULL));
	assert_int_equal(journal_read(f->dir, &r), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), ":1: unknown step \"dance\""));
	assert_int_equal(journal_read("/nonexistent-dir", &r), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_batch_and_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_down, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_down_bad_outcome, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_and_done_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nul_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_in_middle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_semantic_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_write_leaves_whole_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_first_line, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
