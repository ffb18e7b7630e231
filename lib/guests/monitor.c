/* Watching the guests (fleet_priv.h; the fleet is in fleet.c): libvirt's
 * event loop (lib/guests/virt.c) delivers lifecycle events and heartbeat
 * stream data to the callbacks here; the monitor thread checks the
 * time-based conditions (hang, stall, boot timeout), injects NMIs, lets a
 * panicked guest flush its console and completes the evidence from the
 * console logs. Both take f->lock; libvirt is never called with it held. */
#include "fleet.h"
#include "fleet_priv.h"

#include "heartbeat.h"
#include "log.h"
#include "virt.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#define FLEET_TICK_US 10000

static void hb_verdict(enum outcome kind, const char *evidence, void *opaque)
{
	fleet_guest_verdict_locked(opaque, kind, evidence);
}

/* ---- libvirt callbacks (event-loop thread) ---- */

/* A guest booted through its image's bootloader has the config's command
 * line, without pmucanary.interval/work: tell its agent at its first
 * heartbeat (a few bytes into an idle channel). */
static void guest_configure_locked(struct guest *g)
{
	const struct fleet_config *cfg = &g->f->cfg;
	g_autofree char *msg = NULL;

	if (!cfg->disk_bootloader || !fleet_guest_is_disk(cfg, g->idx) || !g->st)
		return;
	msg = g_strdup_printf(HB_CMD_INTERVAL " %u\n" HB_CMD_WORK " %s\n",
			      cfg->hb_interval_ms ? cfg->hb_interval_ms : HB_DEFAULT_INTERVAL_MS,
			      cfg->no_work ? "off" : "on");
	if (virt_stream_send(g->st, msg, strlen(msg)) < 0)
		pc_warn("%s: cannot send its interval and work setting: %s", g->name, pc_errmsg());
}

static void hb_line(const char *line, size_t len, void *opaque)
{
	struct guest *g = opaque;
	int64_t now = g_get_monotonic_time();
	int kind = hb_guest_line(&g->hb, line, len, now, hb_verdict, g);

	if (kind == HB_KIND_HB)
		g->await_started = false; /* the old incarnation's events came before */
	if (kind == HB_KIND_HB && g->state == GUEST_STATE_BOOTING) {
		guest_configure_locked(g);
		g->state = GUEST_STATE_HEALTHY;
		g->first_hb_s = (now - g->started_us) / 1e6;
		g_cond_broadcast(&g->f->cond);
	}
}

void monitor_stream_event(virStreamPtr st, int events, void *opaque)
{
	struct guest *g = opaque;
	struct fleet *f = g->f;
	char buf[4096];
	bool end = (events & (VIR_STREAM_EVENT_ERROR | VIR_STREAM_EVENT_HANGUP)) != 0;

	g_mutex_lock(&f->lock);
	if (st != g->st) {
		g_mutex_unlock(&f->lock);
		return;
	}
	for (int rounds = 0; rounds < 64 && !end; rounds++) {
		int n = virt_stream_recv(st, buf, sizeof(buf));

		if (n == -EAGAIN)
			break;
		if (n <= 0) {
			end = true;
			break;
		}
		hb_reader_feed(&g->rd, buf, n, hb_line, g);
	}
	if (end) {
		hb_reader_eof(&g->rd);
		virt_stream_unwatch(st);
		g->st_hup = true;
	}
	hb_guest_take_reader(&g->hb, &g->rd);
	g_mutex_unlock(&f->lock);
}

static struct guest *guest_by_domain(struct fleet *f, virDomainPtr dom)
{
	char uuid[VIR_UUID_STRING_BUFLEN];
	const char *name = virt_domain_name(dom);

	virt_domain_uuid(dom, uuid);
	for (unsigned int i = 0; i < f->n; i++)
		if (!strcmp(f->g[i].name, name) && !strcmp(f->g[i].uuid, uuid))
			return &f->g[i];
	return NULL;
}

static const char *stopped_detail(int detail)
{
	switch (detail) {
	case VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN: return "guest shut down";
	case VIR_DOMAIN_EVENT_STOPPED_DESTROYED: return "destroyed from outside the harness";
	case VIR_DOMAIN_EVENT_STOPPED_CRASHED: return "QEMU crashed";
	case VIR_DOMAIN_EVENT_STOPPED_FAILED: return "QEMU failed";
	case VIR_DOMAIN_EVENT_STOPPED_MIGRATED: return "migrated";
	default: return "stopped";
	}
}

void monitor_lifecycle_event(virDomainPtr dom, int event, int detail, void *opaque)
{
	struct fleet *f = opaque;
	struct guest *g;
	g_autofree char *ev = NULL;

	g_mutex_lock(&f->lock);
	g = guest_by_domain(f, dom);
	if (g && g->await_started) {
		/* the replaced incarnation's stop, or the restored one's start */
		g->await_started = event != VIR_DOMAIN_EVENT_STARTED;
		g = NULL;
	}
	if (!g || g->stopping) {
		g_mutex_unlock(&f->lock);
		return;
	}
	if (event == VIR_DOMAIN_EVENT_CRASHED) {
		ev = g_strdup_printf("panic: lifecycle event CRASHED/%s (last heartbeat seq %" PRIu64
				     " %.0f ms before)",
				     detail == VIR_DOMAIN_EVENT_CRASHED_PANICKED ? "PANICKED" : "other",
				     g->hb.seq,
				     g->hb.last_hb_us ? (g_get_monotonic_time() - g->hb.last_hb_us) / 1e3 : -1.0);
		if (g->state == GUEST_STATE_BOOTING)
			g->state = GUEST_STATE_HEALTHY; /* a crash while booting is still a crash */
		fleet_guest_verdict_locked(g, OUTCOME_GUEST_CRASH, ev);
		g->flush_resume = true;
		g_cond_broadcast(&f->cond);
	} else if (event == VIR_DOMAIN_EVENT_STOPPED) {
		g->gone = true;
		ev = g_strdup_printf("domain stopped unasked: %s", stopped_detail(detail));
		if (g->state == GUEST_STATE_BOOTING)
			g->state = GUEST_STATE_HEALTHY;
		fleet_guest_verdict_locked(g, OUTCOME_GUEST_CRASH, ev);
	}
	g_mutex_unlock(&f->lock);
}

void monitor_reboot_event(virDomainPtr dom, void *opaque)
{
	struct fleet *f = opaque;
	struct guest *g;

	g_mutex_lock(&f->lock);
	g = guest_by_domain(f, dom);
	if (g && !g->stopping && !g->await_started && g->state == GUEST_STATE_HEALTHY)
		fleet_guest_verdict_locked(g, OUTCOME_GUEST_REBOOT, "reboot event (guest reset itself)");
	g_mutex_unlock(&f->lock);
}

void monitor_conn_closed(int reason, void *opaque)
{
	struct fleet *f = opaque;
	g_autofree char *ev = g_strdup_printf("libvirt connection lost (%s): cannot watch this guest",
					      reason == VIR_CONNECT_CLOSE_REASON_KEEPALIVE ? "keepalive" :
					      reason == VIR_CONNECT_CLOSE_REASON_EOF ? "libvirtd went away" :
					      "error");

	g_mutex_lock(&f->lock);
	f->conn_lost = true;
	for (unsigned int i = 0; i < f->n; i++) {
		struct guest *g = &f->g[i];

		if (g->state == GUEST_STATE_BOOTING || g->state == GUEST_STATE_HEALTHY) {
			fleet_guest_verdict_locked(g, OUTCOME_INFRA, ev);
			g->console_due_us = 0;
		}
	}
	g_mutex_unlock(&f->lock);
}

/* ---- the monitor thread ---- */

static void guest_check_locked(struct fleet *f, struct guest *g, int64_t now,
			       virDomainPtr *nmi, virDomainPtr *kill, virDomainPtr *resume,
			       virDomainPtr *pause)
{
	if (g->state == GUEST_STATE_HEALTHY) {
		if (hb_guest_check(&g->hb, now, hb_verdict, g) > 0) {
			g->nmi_pending = true;
			g->console_due_us = now + 2 * FLEET_CONSOLE_DELAY_US;
		}
	} else if (g->state == GUEST_STATE_BOOTING &&
		   now - g->started_us > (int64_t)f->cfg.boot_timeout_ms * 1000) {
		g_autofree char *tail = fleet_console_tail(g->console, 0, FLEET_CONSOLE_TAIL_LINES);
		g_autofree char *ev = g_strdup_printf(
			"no heartbeat within %u ms of start (lines ok %" PRIu64 ", rejected %" PRIu64
			")\n--- console tail (%s)\n%s",
			f->cfg.boot_timeout_ms, g->hb.accepted[HB_KIND_HB], hb_guest_rejected_total(&g->hb),
			g->console, tail);

		fleet_guest_verdict_locked(g, OUTCOME_INFRA, ev);
		g->boot_timed_out = true;
		g->console_due_us = 0;
		g->stopping = true;
		*kill = g->dom;
		g->dom = NULL;
	}
	if (g->flush_resume && g->dom) {
		g->flush_resume = false;
		g->flush_until_us = now + 400000;
		*resume = g->dom;
	} else if (g->flush_until_us && now >= g->flush_until_us && g->dom) {
		g->flush_until_us = 0;
		*pause = g->dom;
	}
	if (g->nmi_pending && g->dom) {
		g->nmi_pending = false;
		g->nmi_done = true;
		*nmi = g->dom;
	}
	if (g->harm && g->console_due_us && now >= g->console_due_us) {
		g_autofree char *tail = fleet_console_tail(g->console, g->nmi_done ? g->console_mark : 0,
						     FLEET_CONSOLE_TAIL_LINES);

		fleet_evidence_append(g->harm, "--- console %s(%s)\n%s",
				g->nmi_done ? "after NMI " : "tail ", g->console, tail);
		g->console_due_us = 0;
	}
}

gpointer monitor_main(gpointer data)
{
	struct fleet *f = data;

	g_mutex_lock(&f->lock);
	while (!f->quit) {
		int64_t now = g_get_monotonic_time();

		for (unsigned int i = 0; i < f->n; i++) {
			struct guest *g = &f->g[i];
			virDomainPtr nmi = NULL, kill = NULL, resume = NULL, pause = NULL;

			guest_check_locked(f, g, now, &nmi, &kill, &resume, &pause);
			if (nmi || kill || resume || pause) {
				/* libvirt outside the lock; the domain pointers are only
				 * freed by fleet threads after stopping = true under lock */
				int state = -1, reason = 0;
				int rc = 0;

				g_mutex_unlock(&f->lock);
				if (nmi) {
					state = virt_domain_state(nmi, &reason);
					rc = virt_domain_inject_nmi(nmi);
				}
				if (resume && virt_domain_resume(resume) < 0)
					pc_debug("%s: resume after panic: %s", g->name, pc_errmsg());
				if (pause && virt_domain_suspend(pause) < 0)
					pc_debug("%s: pause after panic: %s", g->name, pc_errmsg());
				if (kill) {
					virt_domain_destroy(kill);
					virt_domain_free(kill);
				}
				g_mutex_lock(&f->lock);
				if (nmi && g->harm)
					fleet_evidence_append(g->harm, "domain state %s (reason %d); NMI %s",
							state == VIR_DOMAIN_PAUSED ? "paused" :
							state == VIR_DOMAIN_RUNNING ? "running" : "other",
							reason, rc < 0 ? pc_errmsg() : "injected");
			}
		}
		g_cond_wait_until(&f->cond, &f->lock, g_get_monotonic_time() + FLEET_TICK_US);
	}
	g_mutex_unlock(&f->lock);
	return NULL;
}
