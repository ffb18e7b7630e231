/* Heartbeat protocol, host side: the strict parser over a table of good and
 * bad lines, the bounded line reader under floods, and the verdicts the
 * per-guest state machine draws. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "heartbeat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOOT_A "0123456789abcdef0123456789abcdef"
#define BOOT_B "fedcba9876543210fedcba9876543210"

static const struct {
	const char *line;
	int ok;                 /* 1 parses */
	enum hb_reject why;     /* when !ok */
} table[] = {
	{ "HB v=1 seq=1 boot=" BOOT_A " mono=2851 work=0 canary=ok oops=0", 1, 0 },
	{ "HB v=1 seq=18446744073709551615 boot=" BOOT_A " mono=1 work=5 canary=bad oops=4294967295", 1, 0 },
	{ "CORRUPT v=1 seq=7 off=1a2b exp=00 got=5a", 1, 0 },
	{ "KMSG v=1 seq=3 text=WARNING: CPU: 0 PID: 1 at kernel/events/core.c:1 x", 1, 0 },
	{ "KMSG v=1 seq=3 text=", 1, 0 },
	{ "ACK v=1 seq=0 cmd=selftest", 1, 0 },
	/* truncated: a prefix of a valid line */
	{ "HB v=1 seq=1 boot=" BOOT_A " mono=2851 work=0 canary=ok", 0, HB_REJECT_TRUNCATED },
	{ "HB v=1 seq=1 boot=0123", 0, HB_REJECT_TRUNCATED },
	{ "HB v=1 seq=", 0, HB_REJECT_TRUNCATED },
	{ "HB", 0, HB_REJECT_TRUNCATED },
	{ "CORRUPT v=1 seq=7 off=1a2b exp=00 got=5", 0, HB_REJECT_TRUNCATED },
	{ "ACK v=1 seq=0 cmd=", 0, HB_REJECT_TRUNCATED },
	/* malformed */
	{ "", 0, HB_REJECT_MALFORMED },
	{ "hello", 0, HB_REJECT_MALFORMED },
	{ "HB v=2 seq=1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=01 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=-1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=18446744073709551616 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=1 boot=0123456789ABCDEF0123456789abcdef mono=1 work=0 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=1 boot=" BOOT_A "00 mono=1 work=0 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=1 boot=" BOOT_A " mono=1 work=0 canary=maybe oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0 extra=1", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0 ", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=1 boot=" BOOT_A " work=0 mono=1 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB  v=1 seq=1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=4294967296", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=1\r", 0, HB_REJECT_MALFORMED },
	{ "CORRUPT v=1 seq=7 off=1A2B exp=00 got=5a", 0, HB_REJECT_MALFORMED },
	{ "CORRUPT v=1 seq=7 off=1a2b exp=000 got=5a", 0, HB_REJECT_MALFORMED },
	{ "CORRUPT v=1 seq=7 off=11112222333344445 exp=00 got=5a", 0, HB_REJECT_MALFORMED },
	{ "KMSG v=1 seq=3 text=bell\a", 0, HB_REJECT_MALFORMED },
	{ "ACK v=1 seq=0 cmd=Selftest", 0, HB_REJECT_MALFORMED },
	{ "ACK v=1 seq=0 cmd=a b", 0, HB_REJECT_MALFORMED },
	{ "HBX v=1", 0, HB_REJECT_MALFORMED },
	/* from the agent's "selftest garbage" burst */
	{ "HB v=01 seq=1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB v=0 seq=1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB v=4294967297 seq=1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "\xef\xbb\xbfHB v=1 seq=1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0", 0, HB_REJECT_MALFORMED },
	{ "HB v=1 seq=\xd9\xa3 boot=" BOOT_A, 0, HB_REJECT_MALFORMED },
	{ "KMSG v=1 seq=1 text=caf\xc3\xa9 \xff\xfe\x80 WARNING:", 0, HB_REJECT_MALFORMED },
	{ "HB\tv=1 seq=1", 0, HB_REJECT_MALFORMED },
	/* LAB lines: only the known steps, a decimal u32 code */
	{ "LAB v=1 seq=3 step=ready code=0", 1, 0 },
	{ "LAB v=1 seq=3 step=done code=125", 1, 0 },
	{ "LAB v=1 seq=3 step=failed code=4294967295", 1, 0 },
	{ "LAB v=1 seq=3 step=failed code=4294967296", 0, HB_REJECT_MALFORMED },
	{ "LAB v=1 seq=3 step=rebooted code=0", 0, HB_REJECT_MALFORMED },
	{ "LAB v=1 seq=3 step=Ready code=0", 0, HB_REJECT_MALFORMED },
	{ "LAB v=1 seq=3 step=ready code=0 extra=1", 0, HB_REJECT_MALFORMED },
	{ "LAB v=1 seq=3 step=ready code=-1", 0, HB_REJECT_MALFORMED },
	{ "LAB v=1 seq=3 step=xyz", 0, HB_REJECT_MALFORMED },
	{ "LAB v=1 seq=3 step=rea", 0, HB_REJECT_TRUNCATED },
	{ "LAB v=1 seq=3 step=", 0, HB_REJECT_TRUNCATED },
	{ "LAB v=1 seq=3 step=done code=", 0, HB_REJECT_TRUNCATED },
	{ "LAB v=2 seq=3 step=done code=0", 0, HB_REJECT_MALFORMED },
};

static void test_parse_table(void **state)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct hb_msg m;
		enum hb_reject why = HB_REJECT_COUNT;
		int rc = hb_parse_line(table[i].line, strlen(table[i].line), &m, &why);

		if ((rc == 0) != table[i].ok || (!table[i].ok && why != table[i].why))
			fail_msg("line %zu '%s': rc %d why %s", i, table[i].line, rc, hb_reject_name(why));
	}
}

/* NUL bytes inside a line: the parser goes by length, never by strlen, so a
 * valid prefix before a NUL is no line. */
static void test_parse_nul(void **state)
{
	static const char kmsg[] = "KMSG v=1 seq=1 text=garbage\0WARNING: hidden";
	static const char hb[] = "HB v=1 seq=1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0\0x";
	static const char lead[] = "\0HB v=1 seq=1 boot=" BOOT_A " mono=1 work=0 canary=ok oops=0";
	struct hb_msg m;
	enum hb_reject why = HB_REJECT_COUNT;

	assert_int_equal(hb_parse_line(kmsg, sizeof(kmsg) - 1, &m, &why), -EINVAL);
	assert_int_equal(why, HB_REJECT_MALFORMED);
	assert_int_equal(hb_parse_line(hb, sizeof(hb) - 1, &m, &why), -EINVAL);
	assert_int_equal(why, HB_REJECT_MALFORMED);
	assert_int_equal(hb_parse_line(lead, sizeof(lead) - 1, &m, &why), -EINVAL);
	assert_int_equal(hb_parse_line("\0", 1, &m, &why), -EINVAL);
}

/* What follows len is not the line: a LAB step cut inside a known word is
 * truncated, even when the buffer goes on with letters. */
static void test_parse_by_length(void **state)
{
	static const char buf[] = "LAB v=1 seq=3 step=readyx code=0";
	struct hb_msg m;
	enum hb_reject why = HB_REJECT_COUNT;

	assert_int_equal(hb_parse_line(buf, strlen("LAB v=1 seq=3 step=rea"), &m, &why), -EINVAL);
	assert_int_equal(why, HB_REJECT_TRUNCATED);
}

/* The bound is the whole line: HB_MAX_LINE - 1 bytes of KMSG parse (the
 * reader adds the '\n'), HB_MAX_LINE bytes are too long for the text buffer. */
static void test_parse_length_bound(void **state)
{
	char line[HB_MAX_LINE + 1];
	const char *head = "KMSG v=1 seq=1 text=";
	struct hb_msg m;
	enum hb_reject why = HB_REJECT_COUNT;

	memset(line, 'x', sizeof(line));
	memcpy(line, head, strlen(head));
	assert_int_equal(hb_parse_line(line, HB_MAX_LINE - 1, &m, &why), 0);
	assert_int_equal(strlen(m.text), HB_MAX_LINE - 1 - strlen(head));
	assert_int_equal(hb_parse_line(line, HB_MAX_LINE, &m, &why), -EINVAL);
	assert_int_equal(hb_parse_line(line, HB_MAX_LINE + 1, &m, &why), -EINVAL);
}

static void test_parse_fields(void **state)
{
	struct hb_msg m;
	const char *l = "HB v=1 seq=42 boot=" BOOT_A " mono=2851 work=99 canary=bad oops=3";
	const char *c = "CORRUPT v=1 seq=7 off=1a2b exp=00 got=5a";

	assert_int_equal(hb_parse_line(l, strlen(l), &m, NULL), 0);
	assert_int_equal(m.kind, HB_KIND_HB);
	assert_int_equal(m.seq, 42);
	assert_string_equal(m.boot, BOOT_A);
	assert_int_equal(m.mono_ms, 2851);
	assert_int_equal(m.work, 99);
	assert_false(m.canary_ok);
	assert_int_equal(m.oops, 3);
	assert_int_equal(hb_parse_line(c, strlen(c), &m, NULL), 0);
	assert_int_equal(m.off, 0x1a2b);
	assert_int_equal(m.exp, 0);
	assert_int_equal(m.got, 0x5a);
	l = "LAB v=1 seq=9 step=done code=125";
	assert_int_equal(hb_parse_line(l, strlen(l), &m, NULL), 0);
	assert_int_equal(m.kind, HB_KIND_LAB);
	assert_int_equal(m.seq, 9);
	assert_string_equal(m.step, "done");
	assert_int_equal(m.code, 125);
	/* an ACK's command, exactly: a later, shorter one leaves nothing of
	 * the earlier behind */
	memset(&m, 0x7a, sizeof(m));
	l = "ACK v=1 seq=3 cmd=selftest";
	assert_int_equal(hb_parse_line(l, strlen(l), &m, NULL), 0);
	assert_int_equal(m.kind, HB_KIND_ACK);
	assert_string_equal(m.cmd, "selftest");
	l = "ACK v=1 seq=4 cmd=beat";
	assert_int_equal(hb_parse_line(l, strlen(l), &m, NULL), 0);
	assert_string_equal(m.cmd, "beat");
}

/* A lab host's LAB line is remembered, never a verdict, and never ahead of
 * the heartbeats (like every non-HB line). */
static void test_guest_lab_line(void **state)
{
	struct hb_guest g;
	const char *hb = "HB v=1 seq=2 boot=" BOOT_A " mono=20 work=0 canary=ok oops=0";
	const char *ahead = "LAB v=1 seq=3 step=ready code=0";
	const char *ready = "LAB v=1 seq=2 step=ready code=0";
	const char *done = "LAB v=1 seq=2 step=done code=1";

	hb_guest_init(&g, 1000000, false, 0);
	assert_int_equal(hb_guest_line(&g, hb, strlen(hb), 10, NULL, NULL), HB_KIND_HB);
	assert_int_equal(hb_guest_line(&g, ahead, strlen(ahead), 11, NULL, NULL), -EINVAL);
	assert_int_equal(g.lab_step[0], 0);
	assert_int_equal(hb_guest_line(&g, ready, strlen(ready), 12, NULL, NULL), HB_KIND_LAB);
	assert_string_equal(g.lab_step, "ready");
	assert_int_equal(g.lab_us, 12);
	assert_int_equal(hb_guest_line(&g, done, strlen(done), 13, NULL, NULL), HB_KIND_LAB);
	assert_string_equal(g.lab_step, "done");
	assert_int_equal(g.lab_code, 1);
	assert_int_equal(g.accepted[HB_KIND_LAB], 2);
}

struct lines {
	int n;
	char last[HB_MAX_LINE];
};

static void count_line(const char *line, size_t len, void *opaque)
{
	struct lines *l = opaque;

	assert_true(len < HB_MAX_LINE);
	assert_int_equal(strlen(line), len);
	l->n++;
	memcpy(l->last, line, len + 1);
}

static void test_reader_split_and_oversize(void **state)
{
	struct hb_reader r;
	struct lines l = { 0 };
	char big[5000];

	hb_reader_init(&r);
	/* one line delivered byte by byte, then two in one chunk */
	const char *a = "ACK v=1 seq=0 cmd=work\n";
	for (const char *p = a; *p; p++)
		hb_reader_feed(&r, p, 1, count_line, &l);
	assert_int_equal(l.n, 1);
	hb_reader_feed(&r, "x\ny\n", 4, count_line, &l);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.last, "y");
	/* an oversized line is dropped whole, the next one survives */
	memset(big, 'A', sizeof(big));
	hb_reader_feed(&r, big, sizeof(big), count_line, &l);
	hb_reader_feed(&r, big, sizeof(big), count_line, &l);
	hb_reader_feed(&r, "tail\nok\n", 8, count_line, &l);
	assert_int_equal(r.oversized, 1);
	assert_int_equal(l.n, 4);
	assert_string_equal(l.last, "ok");
	/* exactly HB_MAX_LINE - 1 bytes + '\n' fits */
	memset(big, 'B', HB_MAX_LINE - 1);
	big[HB_MAX_LINE - 1] = '\n';
	hb_reader_feed(&r, big, HB_MAX_LINE, count_line, &l);
	assert_int_equal(l.n, 5);
	assert_int_equal(r.oversized, 1);
	/* a partial line at end of stream is truncated */
	hb_reader_feed(&r, "HB v=1", 6, count_line, &l);
	hb_reader_eof(&r);
	assert_int_equal(r.truncated, 1);
	assert_int_equal(l.n, 5);
}

static void flood_line(const char *line, size_t len, void *opaque)
{
	hb_guest_line(opaque, line, len, 0, NULL, NULL);
}

static void test_reader_flood_bounded(void **state)
{
	struct hb_reader r;
	struct hb_guest g;
	char junk[65536];
	unsigned int seed = 1;

	hb_reader_init(&r);
	hb_guest_init(&g, 1000000, true, 0);
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(junk); i++) {
			seed = seed * 1103515245 + 12345;
			junk[i] = (char)(seed >> 16);
		}
		hb_reader_feed(&r, junk, sizeof(junk), flood_line, &g);
	}
	/* nothing leaked past the fixed buffer; only counters moved */
	assert_true(r.len < sizeof(r.buf));
	assert_true(r.oversized > 0);
	hb_guest_take_reader(&g, &r);
	assert_true(g.rejected[HB_REJECT_OVERSIZED] > 0);
	assert_true(g.rejected[HB_REJECT_MALFORMED] > 0);
	assert_int_equal(g.accepted[HB_KIND_HB], 0);
	assert_int_equal(r.oversized, 0);
}

struct got {
	int n;
	enum outcome kind[8];
	char ev[8][512];
};

static void on_verdict(enum outcome kind, const char *evidence, void *opaque)
{
	struct got *g = opaque;

	if (g->n < 8) {
		g->kind[g->n] = kind;
		snprintf(g->ev[g->n], sizeof(g->ev[0]), "%s", evidence);
	}
	g->n++;
}

static int feed(struct hb_guest *g, int64_t now, struct got *v, const char *fmt, ...)
{
	char line[HB_MAX_LINE * 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return hb_guest_line(g, line, strlen(line), now, on_verdict, v);
}

#define HB(seq, boot, mono, work, canary, oops) \
	"HB v=1 seq=" #seq " boot=" boot " mono=" #mono " work=" #work " canary=" canary " oops=" #oops

static void test_guest_order(void **state)
{
	struct hb_guest g;
	struct got v = { 0 };

	hb_guest_init(&g, 500000, true, 0);
	assert_int_equal(feed(&g, 100, &v, HB(1, BOOT_A, 10, 1, "ok", 0)), HB_KIND_HB);
	assert_int_equal(feed(&g, 200, &v, HB(2, BOOT_A, 20, 2, "ok", 0)), HB_KIND_HB);
	/* repeated and older seq: out of order, not a verdict */
	assert_int_equal(feed(&g, 300, &v, HB(2, BOOT_A, 30, 3, "ok", 0)), -EINVAL);
	assert_int_equal(feed(&g, 300, &v, HB(3, BOOT_A, 5, 3, "ok", 0)), -EINVAL); /* mono went back */
	/* a CORRUPT/KMSG/ACK line from the future */
	assert_int_equal(feed(&g, 300, &v, "ACK v=1 seq=9 cmd=work"), -EINVAL);
	assert_int_equal(g.rejected[HB_REJECT_OUT_OF_ORDER], 3);
	assert_int_equal(feed(&g, 300, &v, "garbage"), -EINVAL);
	assert_int_equal(g.rejected[HB_REJECT_MALFORMED], 1);
	assert_int_equal(v.n, 0);
	assert_int_equal(g.seq, 2);
	assert_int_equal(g.accepted[HB_KIND_HB], 2);
}

static void test_guest_verdicts(void **state)
{
	struct hb_guest g;
	struct got v = { 0 };

	hb_guest_init(&g, 500000, true, 0);
	feed(&g, 100, &v, HB(1, BOOT_A, 10, 1, "ok", 0));
	feed(&g, 200, &v, HB(2, BOOT_A, 20, 2, "ok", 0));
	/* reboot: boot id changes; its first heartbeats may be lost, so the
	 * sequence number need not restart at 1 */
	feed(&g, 300, &v, HB(3, BOOT_B, 5, 0, "ok", 0));
	assert_int_equal(v.n, 1);
	assert_int_equal(v.kind[0], OUTCOME_GUEST_REBOOT);
	assert_non_null(strstr(v.ev[0], "boot id changed"));
	assert_non_null(strstr(v.ev[0], BOOT_B));
	/* same boot id, seq back to 1: the agent restarted */
	feed(&g, 400, &v, HB(2, BOOT_B, 6, 1, "ok", 0));
	feed(&g, 500, &v, HB(1, BOOT_B, 7, 1, "ok", 0));
	assert_int_equal(v.n, 2);
	assert_int_equal(v.kind[1], OUTCOME_GUEST_REBOOT);
	/* corruption with its offset */
	feed(&g, 600, &v, "CORRUPT v=1 seq=1 off=beef exp=a5 got=ff");
	assert_int_equal(v.kind[2], OUTCOME_GUEST_CORRUPTION);
	assert_non_null(strstr(v.ev[2], "0xbeef"));
	assert_non_null(strstr(v.ev[2], "0xa5"));
	/* canary=bad after a CORRUPT line: no second verdict */
	feed(&g, 700, &v, HB(2, BOOT_B, 8, 2, "bad", 0));
	assert_int_equal(v.n, 3);
	/* oops: the KMSG text, then the count that reflects it: one verdict */
	feed(&g, 800, &v, "KMSG v=1 seq=2 text=BUG: kernel NULL pointer dereference");
	feed(&g, 900, &v, HB(3, BOOT_B, 9, 3, "bad", 1));
	assert_int_equal(v.n, 4);
	assert_int_equal(v.kind[3], OUTCOME_GUEST_OOPS);
	assert_non_null(strstr(v.ev[3], "NULL pointer"));
	/* a count that rose without text */
	feed(&g, 1000, &v, HB(4, BOOT_B, 10, 4, "bad", 3));
	assert_int_equal(v.n, 5);
	assert_int_equal(v.kind[4], OUTCOME_GUEST_OOPS);
}

static void test_guest_canary_without_line(void **state)
{
	struct hb_guest g;
	struct got v = { 0 };

	hb_guest_init(&g, 500000, true, 0);
	feed(&g, 100, &v, HB(1, BOOT_A, 10, 1, "ok", 0));
	feed(&g, 200, &v, HB(2, BOOT_A, 20, 2, "bad", 0));
	assert_int_equal(v.n, 1);
	assert_int_equal(v.kind[0], OUTCOME_GUEST_CORRUPTION);
}

static void test_guest_hang_and_stall(void **state)
{
	struct hb_guest g;
	struct got v = { 0 };

	hb_guest_init(&g, 500000, true, 0);
	/* no verdict before the first heartbeat: booting is the fleet's business */
	assert_int_equal(hb_guest_check(&g, 10000000, on_verdict, &v), 0);
	feed(&g, 1000000, &v, HB(1, BOOT_A, 10, 1, "ok", 0));
	feed(&g, 1100000, &v, HB(2, BOOT_A, 20, 2, "ok", 0));
	assert_int_equal(hb_guest_check(&g, 1500000, on_verdict, &v), 0);
	assert_int_equal(hb_guest_check(&g, 1700000, on_verdict, &v), 1);
	assert_int_equal(v.kind[0], OUTCOME_GUEST_HANG);
	assert_non_null(strstr(v.ev[0], "no heartbeat"));

	/* heartbeats keep coming, work moved once and then does not */
	hb_guest_init(&g, 500000, true, 0);
	v.n = 0;
	for (int i = 1; i <= 10; i++) {
		char line[256];

		snprintf(line, sizeof(line), "HB v=1 seq=%d boot=" BOOT_A " mono=%d work=%d canary=ok oops=0",
			 i, i * 100, i == 1 ? 6 : 7);
		hb_guest_line(&g, line, strlen(line), i * 100000, on_verdict, &v);
	}
	/* the move was at 0.2 s: 0.5 s later is the edge */
	assert_int_equal(hb_guest_check(&g, 700000, on_verdict, &v), 0);
	assert_int_equal(hb_guest_check(&g, 1000000, on_verdict, &v), 1);
	assert_int_equal(v.kind[0], OUTCOME_GUEST_HANG);
	assert_non_null(strstr(v.ev[0], "stalled"));
	assert_non_null(strstr(v.ev[0], "work=7 unchanged"));

	/* the same with work off is healthy */
	g.work_on = false;
	v.n = 0;
	assert_int_equal(hb_guest_check(&g, 1000000, on_verdict, &v), 0);
}

/* Issue 27: a guest whose worker has not started is still booting (a
 * systemd image on a loaded host): no stall until it starts, or until a
 * boot's grace has passed with the work never moving. A new boot starts
 * over. */
static void test_guest_stall_waits_for_work(void **state)
{
	struct hb_guest g;
	struct got v = { 0 };
	char line[256];
	int seq = 0;

#define BEAT(t_ms, boot, work)                                                                   \
	do {                                                                                     \
		seq++;                                                                           \
		snprintf(line, sizeof(line), "HB v=1 seq=%d boot=%s mono=%d work=%d canary=ok oops=0", \
			 seq, boot, (t_ms), (work));                                             \
		hb_guest_line(&g, line, strlen(line), (int64_t)(t_ms) * 1000, on_verdict, &v);   \
	} while (0)

	/* timeout 0.5 s, grace 10 s: work=0 for 9 s of heartbeats is a boot */
	hb_guest_init(&g, 500000, true, 0);
	g.grace_us = 10000000;
	for (int t = 100; t <= 9000; t += 100)
		BEAT(t, BOOT_A, 0);
	assert_int_equal(hb_guest_check(&g, 9000000, on_verdict, &v), 0);
	/* it starts at 9.1 s; a stop 0.5 s after its last move is a stall */
	BEAT(9100, BOOT_A, 1);
	BEAT(9200, BOOT_A, 2);
	BEAT(9300, BOOT_A, 2);
	BEAT(9600, BOOT_A, 2);
	assert_int_equal(hb_guest_check(&g, 9600000, on_verdict, &v), 0);
	BEAT(9750, BOOT_A, 2);
	assert_int_equal(hb_guest_check(&g, 9750000, on_verdict, &v), 1);
	assert_int_equal(v.n, 1);
	assert_non_null(strstr(v.ev[0], "work=2 unchanged"));

	/* never moving: a stall once grace + timeout have passed since the
	 * boot's first heartbeat (0.1 s): 10.6 s, not before */
	hb_guest_init(&g, 500000, true, 0);
	g.grace_us = 10000000;
	v.n = 0;
	seq = 0;
	for (int t = 100; t <= 10600; t += 100)
		BEAT(t, BOOT_A, 0);
	assert_int_equal(hb_guest_check(&g, 10600000, on_verdict, &v), 0);
	BEAT(10700, BOOT_A, 0);
	assert_int_equal(hb_guest_check(&g, 10700000, on_verdict, &v), 1);
	assert_non_null(strstr(v.ev[0], "never moved"));

	/* a reboot (new boot id) is a boot again: its work=0 is not a stall */
	hb_guest_init(&g, 500000, true, 0);
	g.grace_us = 10000000;
	v.n = 0;
	seq = 0;
	BEAT(100, BOOT_A, 5);
	BEAT(200, BOOT_A, 6);
	seq = 0;
	BEAT(300, BOOT_B, 0);
	assert_int_equal(v.n, 1);
	assert_int_equal(v.kind[0], OUTCOME_GUEST_REBOOT);
	for (int t = 400; t <= 5000; t += 100)
		BEAT(t, BOOT_B, 0);
	assert_int_equal(hb_guest_check(&g, 5000000, on_verdict, &v), 0);
	assert_int_equal(v.n, 1);
#undef BEAT
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_nul),
		cmocka_unit_test(test_parse_by_length),
		cmocka_unit_test(test_parse_length_bound),
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_guest_lab_line),
		cmocka_unit_test(test_reader_split_and_oversize),
		cmocka_unit_test(test_reader_flood_bounded),
		cmocka_unit_test(test_guest_order),
		cmocka_unit_test(test_guest_verdicts),
		cmocka_unit_test(test_guest_canary_without_line),
		cmocka_unit_test(test_guest_hang_and_stall),
		cmocka_unit_test(test_guest_stall_waits_for_work),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
