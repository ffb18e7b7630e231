/* lib/lab/replay.c: the replay patches' headers, the list a user sees, and how
 * `--kernel replay:LIST` names patches. The shipped patches are read as
 * they are in guest-images/replay; hostile headers are written here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "log.h"
#include "replay.h"
#include "testutil.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static char *shipped_dir(void)
{
	g_autofree char *top = test_top_dir();

	return g_build_filename(top, "guest-images", "replay", NULL);
}

static const char *const DIFF = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";

/* Writes DIR/NAME.patch with header text + a diff. */
static char *write_patch(const char *dir, const char *name, const char *header, bool diff)
{
	g_autofree char *file = g_strdup_printf("%s.patch", name);
	char *path = g_build_filename(dir, file, NULL);
	g_autofree char *text = g_strconcat(header, diff ? DIFF : "", NULL);

	assert_true(g_file_set_contents(path, text, -1, NULL));
	return path;
}

#define GOOD_HEADER(name)                                                        \
	"pmucanary replay kernel patch\nReplay: " name "\nReplays: commit abc\n"  \
	"Rule: precise_ip > 0\nHarm: GUEST_CRASH\n\nfree text\n\n"

/* The shipped set: these five names, each with every field, sorted. The
 * names are the ones README and the issue promise users. */
static void test_shipped_list(void **state)
{
	static const char *const want[] = { "guest-only-precise-2025", "host-hang", "host-panic",
					    "pebs-2012-fix", "pebs-2012-harm" };
	g_autofree char *dir = shipped_dir();
	g_autoptr(GPtrArray) list = NULL;

	assert_int_equal(replay_list(dir, &list), 0);
	assert_int_equal(list->len, G_N_ELEMENTS(want));
	for (guint i = 0; i < list->len; i++) {
		const struct replay *r = list->pdata[i];

		assert_string_equal(r->name, want[i]);
		assert_true(strlen(r->replays) > 10 && strlen(r->rule) > 10 && strlen(r->harm) > 3);
		assert_non_null(strstr(r->path, want[i]));
	}
}

/* Each shipped harm patch names the verdicts its test expects. */
static void test_shipped_harm_words(void **state)
{
	static const struct { const char *name, *word; } want[] = {
		{ "pebs-2012-harm", "GUEST_CORRUPTION" }, { "guest-only-precise-2025", "GUEST_CRASH" },
		{ "host-panic", "HOST_CRASH" },          { "host-hang", "HOST_HANG" },
		{ "pebs-2012-fix", "EOPNOTSUPP" },
	};
	g_autofree char *dir = shipped_dir();

	for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
		g_autofree char *file = g_strdup_printf("%s/%s.patch", dir, want[i].name);
		g_autoptr(replay) r = NULL;

		assert_int_equal(replay_read(file, &r), 0);
		assert_non_null(strstr(r->harm, want[i].word));
	}
}

static void expect_bad(const char *path, const char *msg)
{
	g_autoptr(replay) r = NULL;

	assert_int_equal(replay_read(path, &r), -EINVAL);
	assert_null(r);
	if (!strstr(pc_errmsg(), msg))
		fail_msg("error \"%s\" lacks \"%s\"", pc_errmsg(), msg);
}

static void test_bad_headers(void **state)
{
	g_autofree char *dir = test_tmpdir("test_replay");
	g_autofree char *p = NULL;

#define BAD(name, header, diff, msg)                                         \
	do {                                                                 \
		g_free(p);                                                   \
		p = write_patch(dir, name, header, diff);                    \
		g_autofree char *want = g_strdup_printf("%s" msg, p);       \
		expect_bad(p, want);                                         \
		unlink(p);                                                   \
	} while (0)

	BAD("a", "not a replay\n", true, ":1: not a replay patch");
	BAD("a", "pmucanary replay kernel patch\nReplay: a\nRule: r\nHarm: h\n\n", true,
	    ":5: Replays: missing from the header");
	BAD("a", "pmucanary replay kernel patch\nReplay: a\nReplays: x\nReplays: y\n", true,
	    ":4: Replays: given twice");
	BAD("a", "pmucanary replay kernel patch\nReplay: a\nColour: red\n", true,
	    ":3: Colour: unknown field");
	BAD("a", "pmucanary replay kernel patch\nReplay: a\nno colon here\n", true,
	    ":3: not a \"Field: value\" line");
	BAD("a", "pmucanary replay kernel patch\nReplay: a\nReplays:  \n", true, ":3: Replays: empty");
	BAD("b", GOOD_HEADER("a"), true, ":2: Replay: \"a\" is not the file's name");
	BAD("Upper", GOOD_HEADER("Upper"), true, ":2: Replay: \"Upper\": a name is");
	BAD("stock", GOOD_HEADER("stock"), true, ":2: Replay: \"stock\"");
	BAD("a", GOOD_HEADER("a"), false, ": no unified diff after the header");
	/* no blank line before the diff: the diff is not a header line */
	BAD("a", "pmucanary replay kernel patch\nReplay: a\nReplays: x\nRule: r\nHarm: h\n", true,
	    ":6: not a \"Field: value\" line");
	/* a name is at most 64 bytes: 64 is read, 65 is refused */
	{
		g_autofree char *n64 = g_strnfill(64, 'a'), *n65 = g_strnfill(65, 'a');
		g_autofree char *h64 = g_strdup_printf(GOOD_HEADER("%s"), n64);
		g_autofree char *h65 = g_strdup_printf(GOOD_HEADER("%s"), n65);
		g_autofree char *want = NULL;
		g_autoptr(replay) r = NULL;

		g_free(p);
		p = write_patch(dir, n64, h64, true);
		assert_int_equal(replay_read(p, &r), 0);
		assert_string_equal(r->name, n64);
		unlink(p);
		g_free(p);
		p = write_patch(dir, n65, h65, true);
		want = g_strdup_printf("%s:2: Replay: \"%s\": a name is 1..64 of [a-z0-9-]", p, n65);
		expect_bad(p, want);
		unlink(p);
	}
	/* a good one, for contrast: the same writer, the same directory */
	g_free(p);
	p = write_patch(dir, "good-one", GOOD_HEADER("good-one"), true);
	{
		g_autoptr(replay) r = NULL;

		assert_int_equal(replay_read(p, &r), 0);
		assert_string_equal(r->name, "good-one");
		assert_string_equal(r->replays, "commit abc");
		assert_string_equal(r->rule, "precise_ip > 0");
		assert_string_equal(r->harm, "GUEST_CRASH");
	}
	unlink(p);
	test_tmpdir_remove(dir);
#undef BAD
}

static void test_patches_of_a_list(void **state)
{
	g_autofree char *dir = shipped_dir();
	g_autoptr(GPtrArray) paths = NULL;

	/* in the order given, each once */
	assert_int_equal(replay_patches(dir, "pebs-2012-harm+pebs-2012-fix", &paths), 0);
	assert_int_equal(paths->len, 2);
	assert_true(g_str_has_suffix(paths->pdata[0], "/pebs-2012-harm.patch"));
	assert_true(g_str_has_suffix(paths->pdata[1], "/pebs-2012-fix.patch"));
	g_clear_pointer(&paths, g_ptr_array_unref);
	assert_int_equal(replay_patches(dir, "pebs-2012-fix+pebs-2012-harm", &paths), 0);
	assert_true(g_str_has_suffix(paths->pdata[0], "/pebs-2012-fix.patch"));
	g_clear_pointer(&paths, g_ptr_array_unref);
	/* stock: no patch at all */
	assert_int_equal(replay_patches(dir, "stock", &paths), 0);
	assert_int_equal(paths->len, 0);
	g_clear_pointer(&paths, g_ptr_array_unref);

	assert_int_equal(replay_patches(dir, "pebs-2013", &paths), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "no replay \"pebs-2013\" (there are: stock, "
					    "guest-only-precise-2025, host-hang"));
	assert_int_equal(replay_patches(dir, "host-hang+host-hang", &paths), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "host-hang given twice"));
	assert_int_equal(replay_patches(dir, "stock+host-hang", &paths), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "\"stock\" is the kernel without replays"));
	assert_int_equal(replay_patches(dir, "", &paths), -EINVAL);
	assert_int_equal(replay_patches(dir, "host-hang+", &paths), -EINVAL);
	assert_int_equal(replay_patches(dir, "a+b+c+d+e+f+g+h+i", &paths), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "at most 8 replays"));
	assert_null(paths);
}

static void test_missing_dir(void **state)
{
	g_autoptr(GPtrArray) list = NULL;

	assert_int_equal(replay_list("/nonexistent/replay", &list), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "/nonexistent/replay"));
	assert_null(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_list),
		cmocka_unit_test(test_shipped_harm_words),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_patches_of_a_list),
		cmocka_unit_test(test_missing_dir),
	};

	return test_run_group(tests, NULL, NULL);
}
