/* The "libvirt" guest pool (pool.h): the local libvirt fleet. Boots the
 * run's guests (initramfs or disk guests or both, the small or the
 * distribution's kernel), marks and judges each batch from the fleet's
 * verdicts, restarts or restores harmed guests side by side, and makes
 * them harm themselves on command (--selftest-harm). */
#include "pool.h"

#include "fleet.h"
#include "hbproto.h"
#include "image.h"
#include "inject.h"
#include "log.h"

#include <errno.h>
#include <string.h>

struct fleet_guests {
	char *uri;
	bool tcg;
	bool keep_disks;
	struct fleet *f;
	uint64_t mark;
	unsigned int hb_timeout_ms;
};

/* Worst first: what a reader must see when several guests differ. */
static const enum outcome harm_rank[] = {
	OUTCOME_GUEST_CORRUPTION, OUTCOME_GUEST_CRASH, OUTCOME_GUEST_OOPS,
	OUTCOME_GUEST_REBOOT, OUTCOME_GUEST_HANG,
};

static int rank_of(enum outcome o)
{
	for (size_t i = 0; i < G_N_ELEMENTS(harm_rank); i++)
		if (harm_rank[i] == o)
			return (int)i;
	return (int)G_N_ELEMENTS(harm_rank);
}

/* Which guest kernel ran, for run.json: where it came from (small,
 * distribution, scenario, disk), its path, and its release, sha256 and
 * module count when the harness built the image for it. */
static json_t *guest_kernel_json(const char *from, const char *path, const struct image_info *img)
{
	json_t *o = json_pack("{s:s,s:s}", "source", from, "path", path);

	if (img) {
		json_object_set_new(o, "release", json_string(img->release));
		json_object_set_new(o, "sha256", json_string(img->kernel_sha256));
		json_object_set_new(o, "modules",
				    json_integer(img->modules ? (json_int_t)img->modules->len : 0));
	}
	return o;
}

static int fg_start(void *ctx, const struct pool_spec *s, const char *run_dir, json_t **info,
		    enum pool_failure *why)
{
	struct fleet_guests *fg = ctx;
	g_autoptr(image_info) img = NULL;
	g_autofree char *run_id = g_path_get_basename(run_dir);
	struct fleet_config cfg = { 0 };
	const char *kernel = s->kernel, *initrd = s->initrd;
	g_autoptr(inject_boot) boot = NULL;
	g_autofree char *small = NULL;
	const char *kernel_from = kernel[0] ? "scenario" : "distribution";
	bool mixed = s->disk_guests && s->disk_guests < s->guests;
	int e;

	*why = POOL_FAILURE_INFRA;

	/* Disk guests boot the kernel and initrd copied out of their image; in
	 * a fleet of disk guests only, the scenario's kernel may replace it. */
	if (s->disk && s->disk[0]) {
		if ((e = inject_boot_load(s->disk, &boot)) ||
		    (e = inject_boot_check(boot, s->disk_boot)))
			return e;
		if (!kernel[0] && !mixed) {
			kernel = boot->kernel;
			initrd = boot->initrd ? boot->initrd : "";
			kernel_from = "disk";
		}
	}
	if (!strcmp(kernel, IMAGE_SMALL_KERNEL)) {
		if ((e = image_small_kernel(&small)))
			return e;
		kernel = small;
		kernel_from = "small";
	}
	/* The scenario's kernel with its initrd as given, or an image built
	 * (or found in the cache) for it or for the default kernel. */
	if (!kernel[0] || !initrd[0]) {
		struct image_options io = { 0 };

		io.kernel = kernel[0] ? kernel : NULL;
		/* everything the guest needs is built into the small kernel */
		io.modules = small ? image_no_modules : NULL;
		if ((e = image_build(&io, &img)))
			return e;
		kernel = img->kernel_path;
		initrd = img->initrd_path;
	}
	cfg.uri = fg->uri;
	cfg.run_id = run_id;
	cfg.run_dir = run_dir;
	cfg.guests = s->guests;
	cfg.vcpus = s->vcpus;
	cfg.memory_mib = s->memory_mib;
	cfg.kernel = kernel;
	cfg.initrd = initrd;
	cfg.hb_interval_ms = s->heartbeat_ms;
	cfg.hb_timeout_ms = s->heartbeat_timeout_ms;
	cfg.boot_timeout_ms = s->boot_timeout_ms;
	cfg.force_tcg = fg->tcg;
	cfg.cold_restart = !s->restore;
	if (boot) {
		cfg.disk = boot->overlay;
		cfg.disk_root = boot->cmdline_root;
		cfg.disk_guests = s->disk_guests;
		cfg.keep_disks = fg->keep_disks;
		cfg.disk_bootloader = s->disk_boot == INJECT_DISK_BOOT_BOOTLOADER;
		if (mixed) {
			cfg.disk_kernel = boot->kernel;
			cfg.disk_initrd = boot->initrd ? boot->initrd : "";
		}
	}
	fg->hb_timeout_ms = s->heartbeat_timeout_ms;
	fleet_signals_install();
	if ((e = fleet_new(&cfg, &fg->f)))
		return e;
	if ((e = fleet_start(fg->f))) {
		/* started, and their kernel or agent never answered */
		if (e == -ETIMEDOUT)
			*why = POOL_FAILURE_BOOT;
		return e;
	}
	/* a guest harmed before its first batch (a panic while booting) came
	 * up broken: the guest image's fault, not a verdict */
	for (unsigned int i = 0; i < fleet_size(fg->f); i++) {
		struct fleet_guest_status st;

		if ((e = fleet_guest_status(fg->f, i, &st)))
			return e;
		if (st.state != GUEST_STATE_HEALTHY) {
			*why = POOL_FAILURE_BOOT;
			return pc_fail(EIO, "guest %s is %s right after its boot", st.name,
				       guest_state_name(st.state));
		}
	}
	*why = POOL_FAILURE_NONE;
	*info = fleet_json(fg->f);
	{
		json_t *gk = guest_kernel_json(kernel_from, kernel, img);

		/* how an initramfs guest boots, for a reproducer's guest.sh
		 * (repro.h): its initrd and its whole command line */
		if (!cfg.disk || mixed) {
			g_autofree char *cmdline = fleet_kernel_cmdline(&(struct fleet_config){
				.hb_interval_ms = cfg.hb_interval_ms, .canary_mib = cfg.canary_mib });

			json_object_set_new(gk, "initrd", json_string(initrd));
			json_object_set_new(gk, "cmdline", json_string(cmdline));
		}
		json_object_set_new(*info, "guest_kernel", gk);
	}
	return 0;
}

static int fg_mark(void *ctx)
{
	struct fleet_guests *fg = ctx;

	if (fleet_signal_pending())
		return pc_fail(EINTR, "interrupted by a signal");
	/* A guest that is not healthy now could not report this batch's harm. */
	for (unsigned int i = 0; i < fleet_size(fg->f); i++) {
		struct fleet_guest_status st;
		int e = fleet_guest_status(fg->f, i, &st);

		if (e)
			return e;
		if (st.state != GUEST_STATE_HEALTHY)
			return pc_fail(EIO, "guest %s is %s before the batch: it could not report harm",
				       st.name, guest_state_name(st.state));
	}
	fg->mark = fleet_mark(fg->f);
	return 0;
}

static int fg_judge(void *ctx, enum outcome *o, json_t **verdicts)
{
	struct fleet_guests *fg = ctx;
	g_autoptr(GPtrArray) vs = NULL;
	int healthy, e;
	bool infra = false;

	/* A guest judged fine must have run on after the batch: two more
	 * heartbeats (one may have been on its way when the batch ended).
	 * Harm that lands at the end of the dwell, or a slow (nested) guest's
	 * panic, is seen here instead of after the judgement. A hang shows
	 * only once heartbeats are overdue: wait for that long. */
	healthy = fleet_wait_heartbeats(fg->f, 2, fg->hb_timeout_ms * 2 + 2000);
	if (healthy == -EINTR)
		return healthy; /* our shutdown: no verdict at all */
	if (healthy == -EIO)
		healthy = 0; /* verdicts: collected below */
	/* a harm seen just now gets its console tail (and what an NMI
	 * printed) before the evidence is kept below: a nested guest's
	 * late panic was kept as the lifecycle line alone (CI, 2026-12-06) */
	fleet_wait_evidence(fg->f, fg->mark, 3000);
	/* a harmed disk guest's own logs belong in the evidence kept below */
	fleet_stop_harmed_disks(fg->f);
	if ((e = fleet_verdicts_since(fg->f, fg->mark, &vs)))
		return e;
	*o = OUTCOME_OK;
	*verdicts = json_array();
	for (guint i = 0; i < vs->len; i++) {
		const struct fleet_verdict *v = vs->pdata[i];

		json_array_append_new(*verdicts, json_pack("{s:s,s:s,s:f,s:s}",
			"guest", fleet_guest_name(fg->f, v->guest), "verdict", outcome_name(v->kind),
			"t_s", v->t_s, "evidence", v->evidence ? v->evidence : ""));
		if (v->kind == OUTCOME_INFRA)
			infra = true;
		else if (outcome_is_harm(v->kind) && rank_of(v->kind) < rank_of(*o))
			*o = v->kind;
	}
	if (*o == OUTCOME_OK && healthy == -ETIMEDOUT) {
		*o = OUTCOME_GUEST_HANG;
		json_array_append_new(*verdicts, json_pack("{s:s,s:s}", "verdict", "GUEST_HANG",
			"evidence", "no guest-wide healthy heartbeat after the batch"));
	}
	if (*o == OUTCOME_OK && infra)
		*o = OUTCOME_INFRA;
	return 0;
}

struct fg_restart_job {
	struct fleet *f;
	unsigned int i;
	int rc;
	char err[512];
};

static gpointer fg_restart_one(gpointer p)
{
	struct fg_restart_job *j = p;

	if ((j->rc = fleet_restart_guest(j->f, j->i)))
		g_strlcpy(j->err, pc_errmsg(), sizeof(j->err));
	return NULL;
}

/* The guests that are not healthy, restarted side by side, as many at once
 * as fleet_start() boots (fleet_parallel(): twice the online CPUs unless
 * the fleet was told otherwise). */
static int fg_restart_unhealthy(struct fleet_guests *fg)
{
	unsigned int n = fleet_size(fg->f);
	unsigned int wave = MAX(1, fleet_parallel(fg->f));
	g_autofree struct fg_restart_job *jobs = g_new0(struct fg_restart_job, n);
	g_autofree GThread **th = g_new0(GThread *, n);
	int rc = 0;

	for (unsigned int first = 0; first < n && !rc; first += wave) {
		unsigned int last = MIN(n, first + wave);

		for (unsigned int i = first; i < last; i++) {
			struct fleet_guest_status st;

			if ((rc = fleet_guest_status(fg->f, i, &st)))
				break;
			if (st.state == GUEST_STATE_HEALTHY)
				continue;
			jobs[i] = (struct fg_restart_job){ .f = fg->f, .i = i };
			th[i] = g_thread_new("fg-restart", fg_restart_one, &jobs[i]);
		}
		for (unsigned int i = first; i < last; i++) {
			if (!th[i])
				continue;
			g_thread_join(th[i]);
			if (jobs[i].rc && !rc)
				rc = pc_fail(-jobs[i].rc, "%s", jobs[i].err);
		}
	}
	return rc;
}

static int fg_restart(void *ctx)
{
	struct fleet_guests *fg = ctx;

	/* A late verdict about the domain being replaced can mark a fresh guest
	 * harmed again: trust the heartbeats, not the restart's return value,
	 * and try a few times before calling it INFRA. */
	for (int attempt = 0; attempt < 3; attempt++) {
		int e;

		if ((e = fg_restart_unhealthy(fg)))
			return e;
		if (fleet_wait_healthy(fg->f, fg->hb_timeout_ms * 2 + 2000) == 0)
			return 0;
		pc_warn("guests not healthy after restart (attempt %d)", attempt + 1);
	}
	return pc_fail(EIO, "the guests are not all healthy after three restarts");
}

static int fg_selftest(void *ctx, const char *word)
{
	struct fleet_guests *fg = ctx;
	g_autofree char *line = NULL;

	if (!word || !*word || strchr(word, '\n'))
		return pc_fail(EINVAL, "self-test: no agent word");
	line = g_strdup_printf("%s %s", HB_CMD_SELFTEST, word);

	gint64 sent = g_get_monotonic_time();
	gint64 end = sent + (gint64)fg->hb_timeout_ms * 1000;

	for (unsigned int i = 0; i < fleet_size(fg->f); i++) {
		int e = fleet_send_command(fg->f, i, line);

		if (e)
			return e;
	}
	/* The harm must happen while the batch is armed, as an attr's would:
	 * wait for every guest's ACK (a nested guest takes a while to read). */
	for (unsigned int i = 0; i < fleet_size(fg->f); i++) {
		struct fleet_guest_status st;
		int e;

		while (!(e = fleet_guest_status(fg->f, i, &st)) && st.state == GUEST_STATE_HEALTHY &&
		       !(st.last_ack_us >= sent && !strcmp(st.last_ack, HB_CMD_SELFTEST)) &&
		       g_get_monotonic_time() < end)
			g_usleep(10000);
		if (e)
			return e;
	}
	return 0;
}

static bool fg_all_harmed(void *ctx)
{
	struct fleet_guests *fg = ctx;

	return fg->f && fleet_all_harmed_since(fg->f, fg->mark);
}

static void fg_health(void *ctx, unsigned int *healthy, unsigned int *total)
{
	struct fleet_guests *fg = ctx;
	struct fleet_guest_status st;

	*healthy = *total = 0;
	if (!fg->f)
		return;
	*total = fleet_size(fg->f);
	for (unsigned int i = 0; i < *total; i++)
		if (!fleet_guest_status(fg->f, i, &st) && st.state == GUEST_STATE_HEALTHY)
			(*healthy)++;
}

static json_t *fg_summary(void *ctx)
{
	struct fleet_guests *fg = ctx;

	return fg->f ? fleet_guests_summary(fg->f) : json_array();
}

static void fg_stop(void *ctx)
{
	struct fleet_guests *fg = ctx;

	fleet_free(fg->f);
	fg->f = NULL;
}

static int fg_open(const struct pool_params *p, void **priv)
{
	struct fleet_guests *fg = g_new0(struct fleet_guests, 1);

	fg->uri = g_strdup(p ? p->uri : NULL);
	fg->tcg = p && p->tcg;
	fg->keep_disks = p && p->keep_disks;
	*priv = fg;
	return 0;
}

static void fg_close(void *ctx)
{
	struct fleet_guests *fg = ctx;

	if (!fg)
		return;
	fleet_free(fg->f);
	g_free(fg->uri);
	g_free(fg);
}

const struct pool_ops pool_libvirt_ops = {
	.name = "libvirt",
	.what = "transient libvirt domains on this machine (KVM, or TCG without a usable "
		   "/dev/kvm): initramfs guests, disk guests or both",
	.open = fg_open,
	.close = fg_close,
	.start = fg_start,
	.mark = fg_mark,
	.judge = fg_judge,
	.restart_harmed = fg_restart,
	.selftest = fg_selftest,
	.stop = fg_stop,
	.health = fg_health,
	.all_harmed = fg_all_harmed,
	.summary = fg_summary,
};
