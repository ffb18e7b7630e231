/* The journal replay (`run --resume` reads what a crashed host left). The
 * input is a journal.jsonl in a run dir of our own. Property: a replay that
 * loads has at most one open batch, the last armed one unjudged, never one
 * our own signal stopped ("interrupted"). */
#include "fuzz.h"
#include "journal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(journal_replay) r = NULL;
	const struct journal_batch *open;
	int ret;

	g_free(fuzz_file("journal.jsonl", data, size));
	pc_errclear();
	ret = journal_read(fuzz_tmpdir(), &r);

	FUZZ_ASSERT(ret <= 0);
	if (ret < 0) {
		FUZZ_ASSERT_MESSAGE();
		return 0;
	}
	for (guint i = 0; i < r->batches->len; i++) {
		const struct journal_batch *b = r->batches->pdata[i];

		FUZZ_ASSERT(journal_replay_batch(r, b->id) != NULL);
		FUZZ_ASSERT(!b->judged || b->outcome);
	}
	open = journal_replay_open_batch(r);
	FUZZ_ASSERT(!open || (!open->judged && !open->interrupted));
	return 0;
}
