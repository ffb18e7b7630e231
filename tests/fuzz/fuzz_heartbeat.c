/* The heartbeat protocol as an untrusted guest writes it: the input is the
 * byte stream of the virtio-serial port. Lines go through the reader (fed
 * in chunks whose size the first byte picks), the strict parser and one
 * guest's state machine, with a clock that advances 50 ms per line.
 * Property: every line the reader delivers is accepted or rejected exactly
 * once, and a flood never grows the reader past HB_MAX_LINE. */
#include "fuzz.h"
#include "heartbeat.h"

struct ctx {
	struct hb_guest g;
	int64_t now_us;
	uint64_t lines, verdicts;
};

static void on_verdict(enum outcome kind, const char *evidence, void *opaque)
{
	struct ctx *c = opaque;

	FUZZ_ASSERT(evidence && strlen(evidence) < 4096);
	(void)kind;
	c->verdicts++;
}

static void on_line(const char *line, size_t len, void *opaque)
{
	struct ctx *c = opaque;
	struct hb_msg m;
	enum hb_reject why = HB_REJECT_COUNT;

	FUZZ_ASSERT(len < HB_MAX_LINE && line[len] == 0);
	if (hb_parse_line(line, len, &m, &why) == 0)
		FUZZ_ASSERT(m.kind < HB_KIND_COUNT);
	else
		FUZZ_ASSERT(why == HB_REJECT_MALFORMED || why == HB_REJECT_TRUNCATED);
	c->lines++;
	c->now_us += 50000;
	hb_guest_line(&c->g, line, len, c->now_us, on_verdict, c);
	if (c->lines % 8 == 0)
		hb_guest_check(&c->g, c->now_us, on_verdict, c);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctx c = { .now_us = 1000000 };
	struct hb_reader r;
	size_t chunk, accepted = 0, rejected = 0, reader_rejects;
	bool work_on;

	/* The parser alone, on the exact bytes (it must not read past len). */
	{
		g_autofree char *exact = g_memdup2(data, size);
		struct hb_msg m;
		enum hb_reject why;

		hb_parse_line(exact, size, &m, &why);
	}
	if (size == 0)
		return 0;
	chunk = 1 + data[0] % 64;
	work_on = data[0] & 0x80;
	data++, size--;
	hb_guest_init(&c.g, 2000000, work_on, c.now_us);
	hb_reader_init(&r);
	for (size_t off = 0; off < size; off += chunk) {
		hb_reader_feed(&r, (const char *)data + off, MIN(chunk, size - off), on_line, &c);
		FUZZ_ASSERT(r.len <= sizeof(r.buf));
	}
	hb_reader_eof(&r);
	reader_rejects = r.oversized + r.truncated;
	hb_guest_take_reader(&c.g, &r);
	hb_guest_check(&c.g, c.now_us + 10000000, on_verdict, &c);
	for (int k = 0; k < HB_KIND_COUNT; k++)
		accepted += c.g.accepted[k];
	for (int k = 0; k < HB_REJECT_COUNT; k++)
		rejected += c.g.rejected[k];
	/* delivered lines + the reader's oversized/truncated ones */
	FUZZ_ASSERT(accepted + rejected == c.lines + reader_rejects);
	FUZZ_ASSERT(hb_guest_rejected_total(&c.g) == rejected);
	return 0;
}
