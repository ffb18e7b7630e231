/* Host side of the heartbeat protocol: reader, strict parser, state machine. */
#include "heartbeat.h"

#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const hb_kind_names[HB_KIND_COUNT] = { "HB", "CORRUPT", "KMSG", "ACK", "LAB" };
static const char *const hb_lab_steps[] = { HB_LAB_READY, HB_LAB_DONE, HB_LAB_FAILED };
static const char *const hb_reject_names[HB_REJECT_COUNT] = {
	"malformed", "oversized", "truncated", "out-of-order",
};

const char *hb_kind_name(enum hb_kind k)
{
	return k < HB_KIND_COUNT ? hb_kind_names[k] : "?";
}

const char *hb_reject_name(enum hb_reject r)
{
	return r < HB_REJECT_COUNT ? hb_reject_names[r] : "?";
}

/* ---- the strict parser ----
 * A cursor over the line; every step fails at the first byte that does not
 * fit. A failure exactly at the end of the line means the line was a
 * prefix of a valid one: truncated rather than malformed. */

struct cur {
	const char *s;
	size_t len, pos;
	bool bad;
};

static bool cur_lit(struct cur *c, const char *lit)
{
	for (; !c->bad && *lit; lit++) {
		if (c->pos >= c->len || c->s[c->pos] != *lit)
			c->bad = true;
		else
			c->pos++;
	}
	return !c->bad;
}

static bool cur_dec(struct cur *c, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t start = c->pos;

	if (c->bad)
		return false;
	while (c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9') {
		unsigned d = c->s[c->pos] - '0';

		/* no leading zeros: one spelling per number */
		if (c->pos > start && c->s[start] == '0')
			break;
		if (v > (max - d) / 10)
			break;
		v = v * 10 + d;
		c->pos++;
	}
	if (c->pos == start || (c->pos < c->len && c->s[c->pos] != ' ')) {
		c->bad = true;
		return false;
	}
	*out = v;
	return true;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* width 0: 1..16 digits; else exactly width digits */
static bool cur_hex(struct cur *c, unsigned width, uint64_t *out, char *copy)
{
	uint64_t v = 0;
	size_t start = c->pos;
	unsigned maxw = width ? width : 16;

	if (c->bad)
		return false;
	while (c->pos < c->len && c->pos - start < maxw && hexval(c->s[c->pos]) >= 0) {
		v = (v << 4) | (uint64_t)hexval(c->s[c->pos]);
		if (copy)
			copy[c->pos - start] = c->s[c->pos];
		c->pos++;
	}
	if (c->pos == start || (width && c->pos - start != width) ||
	    (c->pos < c->len && c->s[c->pos] != ' ')) {
		c->bad = true;
		return false;
	}
	if (copy)
		copy[c->pos - start] = 0;
	if (out)
		*out = v;
	return true;
}

static bool cur_end(struct cur *c)
{
	if (!c->bad && c->pos != c->len)
		c->bad = true;
	return !c->bad;
}

static bool cur_version_seq(struct cur *c, struct hb_msg *m)
{
	uint64_t v;

	cur_lit(c, "v=");
	if (cur_dec(c, UINT32_MAX, &v) && v != HB_PROTO_VERSION) {
		c->pos--; /* a wrong version is not a truncation */
		c->bad = true;
	}
	cur_lit(c, " seq=");
	return cur_dec(c, UINT64_MAX, &m->seq);
}

int hb_parse_line(const char *line, size_t len, struct hb_msg *m, enum hb_reject *why)
{
	struct cur c = { line, len, 0, false };
	uint64_t v;

	memset(m, 0, sizeof(*m));
	if (len >= HB_MAX_LINE) {
		c.bad = true;
	} else if (len > 0 && line[0] == 'H') {
		m->kind = HB_KIND_HB;
		cur_lit(&c, "HB ");
		cur_version_seq(&c, m);
		cur_lit(&c, " boot=");
		cur_hex(&c, HB_BOOT_ID_HEX, NULL, m->boot);
		cur_lit(&c, " mono=");
		cur_dec(&c, UINT64_MAX, &m->mono_ms);
		cur_lit(&c, " work=");
		cur_dec(&c, UINT64_MAX, &m->work);
		cur_lit(&c, " canary=");
		if (!c.bad && c.pos + 2 <= len && line[c.pos] == 'o' && line[c.pos + 1] == 'k') {
			m->canary_ok = true;
			cur_lit(&c, "ok");
		} else {
			cur_lit(&c, "bad");
		}
		cur_lit(&c, " oops=");
		if (cur_dec(&c, UINT32_MAX, &v))
			m->oops = (uint32_t)v;
		cur_end(&c);
	} else if (len > 0 && line[0] == 'C') {
		m->kind = HB_KIND_CORRUPT;
		cur_lit(&c, "CORRUPT ");
		cur_version_seq(&c, m);
		cur_lit(&c, " off=");
		cur_hex(&c, 0, &m->off, NULL);
		cur_lit(&c, " exp=");
		if (cur_hex(&c, 2, &v, NULL))
			m->exp = (unsigned)v;
		cur_lit(&c, " got=");
		if (cur_hex(&c, 2, &v, NULL))
			m->got = (unsigned)v;
		cur_end(&c);
	} else if (len > 0 && line[0] == 'K') {
		m->kind = HB_KIND_KMSG;
		cur_lit(&c, "KMSG ");
		cur_version_seq(&c, m);
		cur_lit(&c, " text=");
		if (!c.bad) {
			size_t n = len - c.pos;

			for (size_t i = c.pos; i < len; i++)
				if (line[i] < 0x20 || line[i] > 0x7e) {
					c.pos = i;
					c.bad = true;
					break;
				}
			if (!c.bad) {
				memcpy(m->text, line + c.pos, n);
				m->text[n] = 0;
				c.pos = len;
			}
		}
	} else if (len > 0 && line[0] == 'A') {
		size_t n = 0;

		m->kind = HB_KIND_ACK;
		cur_lit(&c, "ACK ");
		cur_version_seq(&c, m);
		cur_lit(&c, " cmd=");
		while (!c.bad && c.pos < len && n < HB_CMD_MAX - 1 &&
		       ((line[c.pos] >= 'a' && line[c.pos] <= 'z') || line[c.pos] == '_'))
			m->cmd[n++] = line[c.pos++];
		m->cmd[n] = 0;
		if (!c.bad && n == 0 && c.pos == len)
			c.bad = true; /* "cmd=" and nothing: truncated */
		else
			cur_end(&c);
	} else if (len > 0 && line[0] == 'L') {
		size_t n = 0, word;
		bool known = false, prefix = false;

		m->kind = HB_KIND_LAB;
		cur_lit(&c, "LAB ");
		cur_version_seq(&c, m);
		cur_lit(&c, " step=");
		word = c.pos;
		while (!c.bad && c.pos < len && n < HB_LAB_STEP_MAX - 1 &&
		       line[c.pos] >= 'a' && line[c.pos] <= 'z')
			m->step[n++] = line[c.pos++];
		m->step[n] = 0;
		for (size_t i = 0; i < G_N_ELEMENTS(hb_lab_steps); i++) {
			known |= !strcmp(m->step, hb_lab_steps[i]);
			prefix |= g_str_has_prefix(hb_lab_steps[i], m->step);
		}
		/* only the known words; a prefix of one at the end of the line is
		 * a truncation, anything else is malformed */
		if (!c.bad && !known && !(c.pos == len && prefix)) {
			c.pos = word;
			c.bad = true;
		}
		cur_lit(&c, " code=");
		if (cur_dec(&c, UINT32_MAX, &v))
			m->code = (uint32_t)v;
		cur_end(&c);
	} else {
		c.bad = true;
	}
	if (!c.bad)
		return 0;
	if (why)
		*why = (len > 0 && c.pos >= len && len < HB_MAX_LINE) ? HB_REJECT_TRUNCATED : HB_REJECT_MALFORMED;
	return -EINVAL;
}

/* ---- the line reader ---- */

void hb_reader_init(struct hb_reader *r)
{
	memset(r, 0, sizeof(*r));
}

void hb_reader_feed(struct hb_reader *r, const char *data, size_t n, hb_line_fn fn, void *opaque)
{
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t take = nl ? (size_t)(nl - data) : n;

		if (r->discarding) {
			/* the rest of an oversized line: drop it */
		} else if (r->len + take >= sizeof(r->buf)) {
			r->discarding = true;
			r->oversized++;
			r->len = 0;
		} else {
			memcpy(r->buf + r->len, data, take);
			r->len += take;
		}
		if (nl) {
			if (!r->discarding) {
				r->buf[r->len] = 0;
				fn(r->buf, r->len, opaque);
			}
			r->discarding = false;
			r->len = 0;
			take++;
		}
		data += take;
		n -= take;
	}
}

void hb_reader_eof(struct hb_reader *r)
{
	if (r->len > 0 && !r->discarding)
		r->truncated++;
	r->len = 0;
	r->discarding = false;
}

/* ---- the per-guest state machine ---- */

void hb_guest_init(struct hb_guest *g, int64_t timeout_us, bool work_on, int64_t now_us)
{
	memset(g, 0, sizeof(*g));
	g->timeout_us = timeout_us;
	g->work_on = work_on;
	g->grace_us = timeout_us;
	g->start_us = now_us;
}

uint64_t hb_guest_rejected_total(const struct hb_guest *g)
{
	uint64_t t = 0;

	for (int i = 0; i < HB_REJECT_COUNT; i++)
		t += g->rejected[i];
	return t;
}

void hb_guest_take_reader(struct hb_guest *g, struct hb_reader *r)
{
	g->rejected[HB_REJECT_OVERSIZED] += r->oversized;
	g->rejected[HB_REJECT_TRUNCATED] += r->truncated;
	r->oversized = r->truncated = 0;
}

static void verdict(hb_verdict_fn fn, void *opaque, enum outcome kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void verdict(hb_verdict_fn fn, void *opaque, enum outcome kind, const char *fmt, ...)
{
	va_list ap;
	g_autofree char *ev = NULL;

	va_start(ap, fmt);
	ev = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (fn)
		fn(kind, ev, opaque);
}

static void guest_new_boot(struct hb_guest *g, const struct hb_msg *m, int64_t now_us)
{
	memcpy(g->boot, m->boot, sizeof(g->boot));
	g->boots++;
	g->kmsg_boot = 0;
	g->corrupt_seen = false;
	g->canary_bad = !m->canary_ok;
	g->oops = m->oops;
	g->work = m->work;
	g->work_started = false;
	g->boot_hb_us = now_us;
	g->last_progress_us = now_us;
}

static int guest_hb(struct hb_guest *g, const struct hb_msg *m, int64_t now_us,
		    hb_verdict_fn fn, void *opaque)
{
	if (!g->seen_hb) {
		g->seen_hb = true;
		g->first_hb_us = now_us;
		guest_new_boot(g, m, now_us);
	} else if (strcmp(m->boot, g->boot) != 0) {
		verdict(fn, opaque, OUTCOME_GUEST_REBOOT, "boot id changed %s -> %s (seq %" PRIu64
			" -> %" PRIu64 ")", g->boot, m->boot, g->seq, m->seq);
		guest_new_boot(g, m, now_us);
	} else if (m->seq == 1 && g->seq > 1) {
		verdict(fn, opaque, OUTCOME_GUEST_REBOOT,
			"sequence restarted (seq %" PRIu64 " -> 1, same boot id %s)", g->seq, m->boot);
		guest_new_boot(g, m, now_us);
	} else if (m->seq <= g->seq || m->mono_ms < g->mono_ms) {
		g->rejected[HB_REJECT_OUT_OF_ORDER]++;
		return -EINVAL;
	} else {
		if (m->work != g->work) {
			g->last_progress_us = now_us;
			g->work_started = true;
		}
		if (m->oops > g->oops && m->oops > g->kmsg_boot)
			verdict(fn, opaque, OUTCOME_GUEST_OOPS, "oops count %u -> %u", g->oops, m->oops);
		g->oops = m->oops;
		if (!m->canary_ok && !g->canary_bad && !g->corrupt_seen)
			verdict(fn, opaque, OUTCOME_GUEST_CORRUPTION, "canary=bad (no CORRUPT line)");
		g->canary_bad = !m->canary_ok;
	}
	g->seq = m->seq;
	g->mono_ms = m->mono_ms;
	g->work = m->work;
	g->last_hb_us = now_us;
	return HB_KIND_HB;
}

int hb_guest_line(struct hb_guest *g, const char *line, size_t len, int64_t now_us,
		  hb_verdict_fn fn, void *opaque)
{
	struct hb_msg m;
	enum hb_reject why = HB_REJECT_MALFORMED;

	if (hb_parse_line(line, len, &m, &why) < 0) {
		g->rejected[why]++;
		return -EINVAL;
	}
	if (m.kind == HB_KIND_HB) {
		if (guest_hb(g, &m, now_us, fn, opaque) < 0)
			return -EINVAL;
		g->accepted[HB_KIND_HB]++;
		return HB_KIND_HB;
	}
	/* other lines carry the seq of the last heartbeat sent: never ahead */
	if (m.seq > g->seq) {
		g->rejected[HB_REJECT_OUT_OF_ORDER]++;
		return -EINVAL;
	}
	g->accepted[m.kind]++;
	switch (m.kind) {
	case HB_KIND_CORRUPT:
		g->corrupt_seen = true;
		verdict(fn, opaque, OUTCOME_GUEST_CORRUPTION,
			"canary mismatch at offset 0x%" PRIx64 ": expected 0x%02x, got 0x%02x",
			m.off, m.exp, m.got);
		break;
	case HB_KIND_KMSG:
		g_strlcpy(g->kmsg[g->kmsg_next], m.text, HB_MAX_LINE);
		g->kmsg_next = (g->kmsg_next + 1) % HB_KMSG_KEEP;
		g->kmsg_boot++;
		verdict(fn, opaque, OUTCOME_GUEST_OOPS, "kmsg: %s", m.text);
		break;
	case HB_KIND_ACK:
		g_strlcpy(g->last_ack, m.cmd, sizeof(g->last_ack));
		g->last_ack_seq = m.seq;
		g->last_ack_us = now_us;
		break;
	case HB_KIND_LAB:
		g_strlcpy(g->lab_step, m.step, sizeof(g->lab_step));
		g->lab_code = m.code;
		g->lab_us = now_us;
		break;
	default:
		break;
	}
	return m.kind;
}

int hb_guest_check(struct hb_guest *g, int64_t now_us, hb_verdict_fn fn, void *opaque)
{
	if (!g->seen_hb)
		return 0;
	if (now_us - g->last_hb_us > g->timeout_us) {
		verdict(fn, opaque, OUTCOME_GUEST_HANG,
			"no heartbeat for %" PRId64 " ms (last seq %" PRIu64 ")",
			(now_us - g->last_hb_us) / 1000, g->seq);
		return 1;
	}
	if (!g->work_on || g->accepted[HB_KIND_HB] < 2)
		return 0;
	if (g->work_started && now_us - g->last_progress_us > g->timeout_us) {
		verdict(fn, opaque, OUTCOME_GUEST_HANG,
			"stalled: heartbeats arrive (seq %" PRIu64 ") but work=%" PRIu64
			" unchanged for %" PRId64 " ms",
			g->seq, g->work, (now_us - g->last_progress_us) / 1000);
		return 1;
	}
	if (!g->work_started && now_us - g->boot_hb_us > g->grace_us + g->timeout_us) {
		verdict(fn, opaque, OUTCOME_GUEST_HANG,
			"stalled: heartbeats arrive (seq %" PRIu64 ") but work=%" PRIu64
			" never moved in the %" PRId64 " ms since this boot's first heartbeat "
			"(a boot may take %" PRId64 " ms to start it)",
			g->seq, g->work, (now_us - g->boot_hb_us) / 1000, g->grace_us / 1000);
		return 1;
	}
	return 0;
}
