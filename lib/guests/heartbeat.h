/* Host side of the heartbeat protocol (lib/guests/hbproto.h).
 *
 * Three layers, each testable alone:
 *  - hb_reader: splits a byte stream into lines in a fixed buffer of
 *    HB_MAX_LINE bytes; an oversized line is dropped up to its '\n' and
 *    counted, a partial line at end of stream is counted as truncated. A
 *    flood of garbage never grows memory.
 *  - hb_parse_line(): the strict parser: exact field order, decimal or
 *    lower-case hex, fixed widths where the protocol fixes them, no extras.
 *  - hb_guest: the per-guest state machine: order checks (seq, boot id,
 *    mono), and the verdicts a line or the passing of time implies. */
#ifndef PMUCANARY_HEARTBEAT_H
#define PMUCANARY_HEARTBEAT_H

#include "hbproto.h"
#include "outcome.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hb_kind {
	HB_KIND_HB,
	HB_KIND_CORRUPT,
	HB_KIND_KMSG,
	HB_KIND_ACK,
	HB_KIND_LAB,
	HB_KIND_COUNT
};
const char *hb_kind_name(enum hb_kind k);

enum hb_reject {
	HB_REJECT_MALFORMED,    /* not a protocol line */
	HB_REJECT_OVERSIZED,    /* no '\n' within HB_MAX_LINE bytes */
	HB_REJECT_TRUNCATED,    /* a valid line cut short (fields or stream end) */
	HB_REJECT_OUT_OF_ORDER, /* seq/mono went backwards, or refers ahead */
	HB_REJECT_COUNT
};
const char *hb_reject_name(enum hb_reject r);

#define HB_CMD_MAX 32

struct hb_msg {
	enum hb_kind kind;
	uint64_t seq;
	/* HB */
	char boot[HB_BOOT_ID_HEX + 1];
	uint64_t mono_ms, work;
	bool canary_ok;
	uint32_t oops;
	/* CORRUPT */
	uint64_t off;
	unsigned int exp, got;
	/* KMSG */
	char text[HB_MAX_LINE];
	/* ACK */
	char cmd[HB_CMD_MAX];
	/* LAB */
	char step[HB_LAB_STEP_MAX];
	uint32_t code;
};

/* line: without its '\n'. Returns 0, or -EINVAL with *why set to
 * HB_REJECT_MALFORMED or HB_REJECT_TRUNCATED. */
int hb_parse_line(const char *line, size_t len, struct hb_msg *m, enum hb_reject *why);

struct hb_reader {
	char buf[HB_MAX_LINE];
	size_t len;
	bool discarding;        /* inside an oversized line */
	uint64_t oversized, truncated;
};
typedef void (*hb_line_fn)(const char *line, size_t len, void *opaque);
void hb_reader_init(struct hb_reader *r);
/* Calls fn for each complete line (without '\n', NUL-terminated copy). */
void hb_reader_feed(struct hb_reader *r, const char *data, size_t n, hb_line_fn fn, void *opaque);
/* End of stream: a partial line is counted as truncated and dropped. */
void hb_reader_eof(struct hb_reader *r);

#define HB_KMSG_KEEP 4

struct hb_guest {
	int64_t timeout_us;     /* hang after this long without a heartbeat */
	bool work_on;           /* the workload should be making progress */
	/* A boot's work counter that has not moved yet is a guest still
	 * booting (its worker competes with the rest of the boot): the stall
	 * clock starts at its first move, or grace_us after the boot's first
	 * heartbeat when it never moves (hb_guest_init: timeout_us). */
	int64_t grace_us;
	/* state */
	bool work_started;      /* work moved since this boot's first heartbeat */
	int64_t boot_hb_us;     /* this boot's first heartbeat */
	bool seen_hb;
	char boot[HB_BOOT_ID_HEX + 1];
	uint64_t seq, work, mono_ms;
	uint32_t oops;          /* last reported count */
	uint32_t kmsg_boot;     /* KMSG lines this boot */
	bool canary_bad, corrupt_seen;
	unsigned int boots;
	int64_t start_us, first_hb_us, last_hb_us, last_progress_us;
	uint64_t accepted[HB_KIND_COUNT];
	uint64_t rejected[HB_REJECT_COUNT];
	char kmsg[HB_KMSG_KEEP][HB_MAX_LINE]; /* last KMSG texts, ring */
	unsigned int kmsg_next;
	uint64_t last_ack_seq;
	char last_ack[HB_CMD_MAX];
	int64_t last_ack_us;
	/* the last LAB line (lab hosts only) */
	char lab_step[HB_LAB_STEP_MAX];
	uint32_t lab_code;
	int64_t lab_us;
};

typedef void (*hb_verdict_fn)(enum outcome kind, const char *evidence, void *opaque);

void hb_guest_init(struct hb_guest *g, int64_t timeout_us, bool work_on, int64_t now_us);
/* Feeds one raw line (no '\n'); parse errors and order violations are
 * counted in g->rejected and ignored. Verdicts go to fn. Returns the kind
 * accepted, or -EINVAL. */
int hb_guest_line(struct hb_guest *g, const char *line, size_t len, int64_t now_us,
		  hb_verdict_fn fn, void *opaque);
/* Counts the reader's oversized/truncated lines into g->rejected. */
void hb_guest_take_reader(struct hb_guest *g, struct hb_reader *r);
/* Time-based verdicts: GUEST_HANG for silence ("no heartbeat") or a work
 * counter that stopped while work is on ("stalled": timeout_us after its
 * last move, or grace_us + timeout_us after the boot's first heartbeat
 * when it never moved). At most one per call. */
int hb_guest_check(struct hb_guest *g, int64_t now_us, hb_verdict_fn fn, void *opaque);
uint64_t hb_guest_rejected_total(const struct hb_guest *g);

#endif
