/* Restore instead of reboot (fleet.h): a guest restarted after a harm
 * comes back from the saved image of its first fresh, idle incarnation
 * instead of booting cold; an image that cannot be saved or restored sends
 * the guest back to cold boots (fleet_priv.h; the fleet is in fleet.c). */
#include "fleet.h"
#include "fleet_priv.h"

#include "log.h"
#include "virt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FLEET_RESTORE_TIMEOUT_MS 15000 /* at least: restored to first heartbeat */
#define FLEET_RESTORE_TRIES 2 /* failed saves or restores before a guest stays on cold boots */

/* Initramfs guests only: a disk guest's memory over its fresh overlay is
 * not the disk it booted from, and 9p shares (lab hosts) block saving. */
static bool fleet_restores(const struct fleet *f)
{
	return !f->cfg.cold_restart && !f->cfg.disk && !f->cfg.share_count;
}

/* <run_dir>/<name>.<pid>-<start>.save: the owner in the name lets a later
 * fleet remove what a killed harness left (fleet_reap_saves). */
static char *guest_save_path(const struct fleet *f, const struct guest *g)
{
	return g_strdup_printf("%s/%s.%d-%llu" FLEET_SAVE_SUFFIX, f->run_dir, g->name, (int)getpid(),
			       reaper_proc_starttime(getpid()));
}

/* Waits while g is BOOTING, at most timeout_ms (0: until the monitor's
 * boot timeout decides): 0 when it is HEALTHY. */
static int guest_wait_up(struct fleet *f, struct guest *g, unsigned int timeout_ms)
{
	int64_t end = timeout_ms ? g_get_monotonic_time() + (int64_t)timeout_ms * 1000 : INT64_MAX;
	int rc;

	g_mutex_lock(&f->lock);
	while (g->state == GUEST_STATE_BOOTING && !fleet_signal_pending() &&
	       g_get_monotonic_time() < end)
		g_cond_wait_until(&f->cond, &f->lock, MIN(end, g_get_monotonic_time() + 50000));
	rc = g->state == GUEST_STATE_HEALTHY ? 0 : -EIO;
	g_mutex_unlock(&f->lock);
	return rc;
}

/* Starts guest g from its saved image (BOOTING until its first heartbeat;
 * the heartbeat state starts over as for a boot). No verdict when the
 * restore fails: the caller boots the guest cold. */
static int guest_restore(struct fleet *f, struct guest *g)
{
	virDomainPtr dom = NULL;
	virStreamPtr st = NULL;
	int rc;

	g_mutex_lock(&f->lock);
	fleet_guest_reset_locked(f, g);
	g_strlcpy(g->uuid, g->snap_uuid, sizeof(g->uuid));
	g->await_started = true;
	g->restored = true;
	g_mutex_unlock(&f->lock);
	unlink(g->console);
	rc = virt_domain_restore(f->conn, g->snap, g->name, &dom);
	if (rc == 0)
		rc = virt_channel_open(f->conn, dom, HB_PORT_NAME, monitor_stream_event, g, &st);
	/* the saved agent sleeps out a heartbeat interval: wake it (an agent
	 * that does not know the word only logs it) */
	if (rc == 0 && virt_stream_send(st, HB_CMD_BEAT "\n", strlen(HB_CMD_BEAT) + 1) < 0)
		pc_debug("%s: %s: %s", g->name, HB_CMD_BEAT, pc_errmsg());
	g_mutex_lock(&f->lock);
	if (rc < 0) {
		g_strlcpy(g->restore_note, pc_errmsg(), sizeof(g->restore_note));
		g->stopping = true;
		g->state = GUEST_STATE_OFF;
		g_mutex_unlock(&f->lock);
		virt_domain_destroy(dom);
		virt_domain_free(dom);
		return rc;
	}
	g->dom = dom;
	g->st = st;
	g_mutex_unlock(&f->lock);
	return 0;
}

/* A restore that failed (or a restored guest that never sent a heartbeat)
 * is said in the log and the guest's status; its image goes. */
static void guest_restore_failed(struct fleet *f, struct guest *g, const char *why)
{
	g_mutex_lock(&f->lock);
	if (why)
		g_strlcpy(g->restore_note, why, sizeof(g->restore_note));
	g->restore_failures++;
	pc_warn("%s: restore from %s failed (%s): booting it cold", g->name, g->snap, g->restore_note);
	g_mutex_unlock(&f->lock);
	fleet_guest_stop(f, g);
	unlink(g->snap);
	g->snap[0] = 0;
}

/* A restored guest runs on from a heartbeat interval's sleep; a loaded
 * host slows it, and a cold boot after a false failure costs far more. */
static unsigned int restore_timeout_ms(const struct fleet *f)
{
	return MAX(2 * f->cfg.hb_timeout_ms, FLEET_RESTORE_TIMEOUT_MS);
}

/* Restores g and waits for its first heartbeat: 0, or <0 with g OFF and
 * its image gone. */
static int guest_restore_up(struct fleet *f, struct guest *g)
{
	int64_t t0 = g_get_monotonic_time();
	g_autofree char *why = NULL;
	int rc = guest_restore(f, g);

	if (rc == 0 && (rc = guest_wait_up(f, g, restore_timeout_ms(f))) < 0) {
		g_mutex_lock(&f->lock);
		why = g_strdup_printf("restored guest %s, no heartbeat within %u ms",
				      guest_state_name(g->state), restore_timeout_ms(f));
		g_mutex_unlock(&f->lock);
	}
	if (rc < 0) {
		guest_restore_failed(f, g, why);
		return -EIO;
	}
	g_mutex_lock(&f->lock);
	g->restores++;
	g_mutex_unlock(&f->lock);
	pc_info("%s: restored, first heartbeat %.0f ms after the restore began", g->name,
		 (g_get_monotonic_time() - t0) / 1e3);
	return 0;
}

/* Saves g, freshly booted and idle (nothing sent to it yet), and brings it
 * back from the image at once, so that an image that cannot restore is
 * known now. 0: g is HEALTHY again; <0: g is OFF. */
static int guest_save(struct fleet *f, struct guest *g)
{
	g_autofree char *path = guest_save_path(f, g);
	int64_t t0 = g_get_monotonic_time();
	virDomainPtr dom;
	virStreamPtr st;
	int rc;

	g_mutex_lock(&f->lock);
	g->stopping = true;
	dom = g->dom;
	st = g->st;
	g->dom = NULL;
	g->st = NULL;
	g_strlcpy(g->snap_uuid, g->uuid, sizeof(g->snap_uuid));
	g_mutex_unlock(&f->lock);
	virt_stream_close(st);
	rc = virt_domain_save(dom, path);
	if (rc < 0) {
		g_mutex_lock(&f->lock);
		g->restore_failures++;
		snprintf(g->restore_note, sizeof(g->restore_note), "cannot save: %s", pc_errmsg());
		pc_warn("%s: %s; its restarts are cold boots", g->name, g->restore_note);
		g->state = GUEST_STATE_OFF;
		g_mutex_unlock(&f->lock);
		virt_domain_destroy(dom);
		virt_domain_free(dom);
		unlink(path);
		return rc;
	}
	virt_domain_free(dom);
	g_strlcpy(g->snap, path, sizeof(g->snap));
	pc_info("%s: saved to %s in %.0f ms", g->name, path, (g_get_monotonic_time() - t0) / 1e3);
	return guest_restore_up(f, g);
}

int fleet_restart_guest(struct fleet *f, unsigned int i)
{
	struct guest *g;
	int rc;

	if (i >= f->n)
		return pc_fail(EINVAL, "no guest %u", i);
	g = &f->g[i];
	fleet_guest_stop(f, g);
	g_mutex_lock(&f->lock);
	g->state = GUEST_STATE_OFF;
	g->restarts++;
	g_mutex_unlock(&f->lock);
	if (g->snap[0] && guest_restore_up(f, g) == 0)
		return 0;
	rc = fleet_guest_boot(f, g);
	if (rc < 0)
		return rc;
	if (guest_wait_up(f, g, 0) < 0)
		return pc_fail(EIO, "%s did not come up again", g->name);
	/* The first cold restart pays for the image that the next ones
	 * restore; a guest whose images keep failing stays on cold boots. */
	if (fleet_restores(f) && g->restore_failures < FLEET_RESTORE_TRIES && guest_save(f, g) < 0) {
		if ((rc = fleet_guest_boot(f, g)) < 0)
			return rc;
		if (guest_wait_up(f, g, 0) < 0)
			return pc_fail(EIO, "%s did not come up again", g->name);
	}
	return 0;
}
