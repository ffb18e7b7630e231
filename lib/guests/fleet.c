/* A fleet of guests watched through their heartbeats (see fleet.h): its
 * lifecycle (new, start, stop, free), booting and stopping guests, the
 * verdicts and their evidence, and the public queries. The watching is in
 * monitor.c, restores in restore.c, what a killed run left in reaper.c;
 * what they share is fleet_priv.h. */
#include "fleet.h"
#include "fleet_priv.h"
#include "inject.h"
#include "heartbeat.h"
#include "log.h"
#include "results.h"
#include "virt.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FLEET_EVIDENCE_MAX 16384
#define FLEET_CONSOLE_TAIL_BYTES 8192
/* guests booting (or restoring) at once per online CPU: 4 TCG guests on 2
 * CPUs came up all at once in 0.73x the time of two waves of 2
 * (build/bench/fleet --only parallel), the serial parts of each boot
 * overlapping the others' CPU time */
#define FLEET_PARALLEL_PER_CPU 2

static const char *const state_names[GUEST_STATE_COUNT] = {
	"off", "booting", "healthy", "harmed", "infra",
};

const char *guest_state_name(enum guest_state s)
{
	return s < GUEST_STATE_COUNT ? state_names[s] : "?";
}

/* libvirt's DAC driver gives every file of a disk's backing chain to the
 * qemu user and, for the read-only backing files, never gives them back:
 * the user's base image stayed libvirt-qemu's after a run (issue 27). The
 * fleet notes each file's owner before its first guest and restores it
 * when its guests are gone. */
struct disk_owner {
	char *path;
	uid_t uid;
	gid_t gid;
};

static void disk_owner_free(struct disk_owner *o)
{
	g_free(o->path);
	g_free(o);
}

static GPtrArray *disk_owners_note(const char *disk)
{
	g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *owners = g_ptr_array_new_with_free_func((GDestroyNotify)disk_owner_free);

	if (inject_backing_chain(disk, files) < 0)
		pc_errclear();   /* booting it will say what is wrong */
	for (guint i = 0; i < files->len; i++) {
		struct disk_owner *o;
		struct stat st;

		if (stat(files->pdata[i], &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		o = g_new0(struct disk_owner, 1);
		o->path = g_strdup(files->pdata[i]);
		o->uid = st.st_uid;
		o->gid = st.st_gid;
		g_ptr_array_add(owners, o);
	}
	return owners;
}

static void disk_owners_restore(GPtrArray *owners)
{
	for (guint i = 0; owners && i < owners->len; i++) {
		const struct disk_owner *o = owners->pdata[i];
		struct stat st;

		if (stat(o->path, &st) < 0 || (st.st_uid == o->uid && st.st_gid == o->gid))
			continue;
		if (chown(o->path, o->uid, o->gid) < 0)
			pc_warn("%s: libvirt left it owned by %u:%u and it could not be given back to "
				"%u:%u: %s", o->path, (unsigned)st.st_uid, (unsigned)st.st_gid,
				(unsigned)o->uid, (unsigned)o->gid, g_strerror(errno));
		else
			pc_debug("%s: owner %u:%u given back (libvirt had made it %u:%u)", o->path,
				 (unsigned)o->uid, (unsigned)o->gid, (unsigned)st.st_uid,
				 (unsigned)st.st_gid);
	}
}

void fleet_verdict_free(struct fleet_verdict *v)
{
	if (!v)
		return;
	g_free(v->evidence);
	g_free(v);
}

static struct fleet_verdict *verdict_copy(const struct fleet_verdict *v)
{
	struct fleet_verdict *c = g_memdup2(v, sizeof(*v));

	c->evidence = g_strdup(v->evidence);
	return c;
}

/* ---- XML ---- */

char *fleet_domain_xml(const struct fleet_config *cfg, enum fleet_accel accel,
		       const char *name, const char *console_path, unsigned int n)
{
	const struct fleet_domain_host me = {
		.cpu_mode = accel == FLEET_ACCEL_KVM ? "host-passthrough" : cfg->nested ? "maximum" : NULL,
		.pid = (int)getpid(), .start = reaper_proc_starttime(getpid()),
	};

	return fleet_domain_xml_pure(cfg, accel, name, console_path, n, &me);
}

/* ---- console evidence ---- */

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : 0;
}

/* The last lines of the console from offset `from` (or the tail), printable. */
char *fleet_console_tail(const char *path, off_t from, unsigned int max_lines)
{
	g_autofree char *buf = NULL;
	off_t size = file_size(path);
	off_t start;
	ssize_t n;
	int fd;
	GString *out;

	if (from < 0 || from > size)
		from = 0;
	start = size - from > FLEET_CONSOLE_TAIL_BYTES ? size - FLEET_CONSOLE_TAIL_BYTES : from;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return g_strdup_printf("(console %s: %s)", path, g_strerror(errno));
	buf = g_malloc(size - start + 1);
	n = pread(fd, buf, size - start, start);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	/* keep the last max_lines lines */
	{
		char *p = buf + n;
		unsigned int lines = 0;

		while (p > buf && lines <= max_lines) {
			p--;
			if (*p == '\n')
				lines++;
		}
		if (lines > max_lines)
			p++;
		out = g_string_new(NULL);
		for (; *p; p++) {
			if (*p == '\r')
				continue;
			g_string_append_c(out, (*p == '\n' || (*p >= 0x20 && *p < 0x7f)) ? *p : '?');
		}
	}
	return g_string_free(out, FALSE);
}

void fleet_evidence_append(struct fleet_verdict *v, const char *fmt, ...)
{
	va_list ap;
	g_autofree char *add = NULL;
	size_t have = v->evidence ? strlen(v->evidence) : 0;
	char *nv;

	if (have >= FLEET_EVIDENCE_MAX)
		return;
	va_start(ap, fmt);
	add = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (have + strlen(add) > FLEET_EVIDENCE_MAX)
		add[FLEET_EVIDENCE_MAX - have] = 0;
	nv = g_strconcat(v->evidence ? v->evidence : "", have ? "\n" : "", add, NULL);
	g_free(v->evidence);
	v->evidence = nv;
}

/* ---- verdicts (f->lock held) ---- */

static double rel_s(const struct fleet *f, int64_t t_us)
{
	return (t_us - f->t0_us) / 1e6;
}

void fleet_guest_verdict_locked(struct guest *g, enum outcome kind, const char *evidence)
{
	struct fleet *f = g->f;
	int64_t now = g_get_monotonic_time();
	struct fleet_verdict *v;

	if (g->state == GUEST_STATE_HARMED && g->harm) {
		/* what follows a harm is evidence, not a new verdict */
		fleet_evidence_append(g->harm, "then at %.3f s: %s: %s", rel_s(f, now), outcome_name(kind),
				evidence);
		if (g->console_due_us)
			g->console_due_us = MAX(g->console_due_us, now + FLEET_CONSOLE_DELAY_US);
		return;
	}
	if (g->state == GUEST_STATE_OFF || g->state == GUEST_STATE_INFRA)
		return;
	v = g_new0(struct fleet_verdict, 1);
	v->id = f->verdicts->len + 1;
	v->guest = g->idx;
	v->kind = kind;
	v->t_us = now;
	v->t_s = rel_s(f, now);
	v->evidence = g_strdup(evidence);
	g_ptr_array_add(f->verdicts, v);
	g->harm = v;
	g->state = kind == OUTCOME_INFRA ? GUEST_STATE_INFRA : GUEST_STATE_HARMED;
	g->console_due_us = now + FLEET_CONSOLE_DELAY_US;
	g->console_mark = file_size(g->console);
	pc_info("%s: %s at %.3f s: %s", g->name, outcome_name(kind), v->t_s, evidence);
	g_cond_broadcast(&f->cond);
}

/* ---- lifecycle of the fleet ---- */

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t sig_seen;

/* /dev/kvm alone is not enough: kvm_pvm provides one that cannot run a
 * stock kernel (and rejects host-passthrough MSRs). Hardware KVM is
 * kvm_intel or kvm_amd. */
static bool fleet_kvm_usable(void)
{
	if (access("/dev/kvm", R_OK | W_OK) != 0)
		return false;
	return access("/sys/module/kvm_intel", F_OK) == 0 || access("/sys/module/kvm_amd", F_OK) == 0;
}

int fleet_new(const struct fleet_config *cfg, struct fleet **out)
{
	struct fleet *f;
	int rc;

	if (!cfg->guests || cfg->guests > 256)
		return pc_fail(EINVAL, "guests must be 1..256, not %u", cfg->guests);
	if (!cfg->kernel || !cfg->initrd)
		return pc_fail(EINVAL, "a guest kernel and initrd are needed");
	if (!cfg->run_dir)
		return pc_fail(EINVAL, "a run directory is needed");
	if (cfg->run_id && !fleet_run_id_ok(cfg->run_id))
		return pc_fail(EINVAL, "run id '%s': use 1..48 of [A-Za-z0-9_.-]", cfg->run_id);
	if (cfg->hb_interval_ms && (cfg->hb_interval_ms < HB_MIN_INTERVAL_MS ||
				    cfg->hb_interval_ms > HB_MAX_INTERVAL_MS))
		return pc_fail(EINVAL, "heartbeat interval must be %u..%u ms", HB_MIN_INTERVAL_MS,
			       HB_MAX_INTERVAL_MS);
	for (size_t i = 0; i < cfg->share_count; i++) {
		const struct fleet_share *sh = &cfg->shares[i];

		if (!sh->source || sh->source[0] != '/' || !g_file_test(sh->source, G_FILE_TEST_IS_DIR))
			return pc_fail(EINVAL, "share %s: not a directory", sh->source ? sh->source : "?");
		if (!sh->tag || !*sh->tag || strlen(sh->tag) > 31 || strspn(sh->tag,
		    "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(sh->tag))
			return pc_fail(EINVAL, "share tag '%s': use 1..31 of [a-z0-9_-]",
				       sh->tag ? sh->tag : "");
	}
	if (access(cfg->kernel, R_OK) < 0 || access(cfg->initrd, R_OK) < 0)
		return pc_fail(ENOENT, "cannot read %s", access(cfg->kernel, R_OK) < 0 ? cfg->kernel : cfg->initrd);
	if (cfg->disk_guests && (!cfg->disk || cfg->disk_guests > cfg->guests))
		return pc_fail(EINVAL, "%u disk guests: %s", cfg->disk_guests,
			       cfg->disk ? "more than the fleet's guests" : "no disk given");
	if (cfg->disk && cfg->disk_kernel && (access(cfg->disk_kernel, R_OK) < 0 ||
	    (cfg->disk_initrd && *cfg->disk_initrd && access(cfg->disk_initrd, R_OK) < 0)))
		return pc_fail(ENOENT, "cannot read %s", access(cfg->disk_kernel, R_OK) < 0
			       ? cfg->disk_kernel : cfg->disk_initrd);
	if (g_mkdir_with_parents(cfg->run_dir, 0755) < 0)
		return pc_fail(errno, "cannot create %s: %s", cfg->run_dir, g_strerror(errno));

	f = g_new0(struct fleet, 1);
	f->cfg = *cfg;
	f->uri = g_strdup(cfg->uri ? cfg->uri : FLEET_DEFAULT_URI);
	f->run_id = cfg->run_id ? g_strdup(cfg->run_id) : g_strdup_printf("%d", (int)getpid());
	f->run_dir = g_canonicalize_filename(cfg->run_dir, NULL);
	f->kernel = g_canonicalize_filename(cfg->kernel, NULL);
	f->initrd = g_canonicalize_filename(cfg->initrd, NULL);
	f->extra = g_strdup(cfg->extra_cmdline);
	f->disk = cfg->disk ? g_canonicalize_filename(cfg->disk, NULL) : NULL;
	f->disk_owners = f->disk ? disk_owners_note(f->disk) : NULL;
	f->disk_root = g_strdup(cfg->disk_root);
	f->cfg.disk = f->disk;
	f->cfg.disk_root = f->disk_root;
	f->disk_kernel = cfg->disk_kernel ? g_canonicalize_filename(cfg->disk_kernel, NULL) : NULL;
	f->disk_initrd = cfg->disk_initrd && *cfg->disk_initrd
		? g_canonicalize_filename(cfg->disk_initrd, NULL) : g_strdup(cfg->disk_initrd);
	f->cfg.disk_kernel = f->disk_kernel;
	f->cfg.disk_initrd = f->disk_initrd;
	f->cfg.uri = f->uri;
	f->cfg.run_id = f->run_id;
	f->cfg.run_dir = f->run_dir;
	f->cfg.kernel = f->kernel;
	f->cfg.initrd = f->initrd;
	f->cfg.extra_cmdline = f->extra;
	if (cfg->share_count) {
		f->shares = g_new0(struct fleet_share, cfg->share_count);
		for (size_t i = 0; i < cfg->share_count; i++) {
			f->shares[i].source = g_strdup(cfg->shares[i].source);
			f->shares[i].tag = g_strdup(cfg->shares[i].tag);
			f->shares[i].readonly = cfg->shares[i].readonly;
			f->shares[i].mapped = cfg->shares[i].mapped;
		}
	}
	f->cfg.shares = f->shares;
	if (!f->cfg.hb_interval_ms)
		f->cfg.hb_interval_ms = HB_DEFAULT_INTERVAL_MS;
	if (!f->cfg.parallel)
		f->cfg.parallel = FLEET_PARALLEL_PER_CPU *
				  MAX(1, (unsigned int)sysconf(_SC_NPROCESSORS_ONLN));
	g_mutex_init(&f->lock);
	g_cond_init(&f->cond);
	f->verdicts = g_ptr_array_new_with_free_func((GDestroyNotify)fleet_verdict_free);
	f->ev_ids[0] = f->ev_ids[1] = -1;
	f->watcher_fd = -1;
	f->t0_us = g_get_monotonic_time();

	rc = virt_connect(f->uri, &f->conn);
	if (rc < 0)
		goto fail;
	f->accel = (!cfg->force_tcg && fleet_kvm_usable() && virt_kvm_supported(f->conn))
		? FLEET_ACCEL_KVM : FLEET_ACCEL_TCG;
	if (f->accel == FLEET_ACCEL_KVM)
		g_strlcpy(f->cpu_mode, "host-passthrough", sizeof(f->cpu_mode));
	else if (virt_cpu_mode_supported(f->conn, "qemu", "maximum"))
		g_strlcpy(f->cpu_mode, "maximum", sizeof(f->cpu_mode));
	if (!f->cfg.hb_timeout_ms)
		f->cfg.hb_timeout_ms = MAX(f->accel == FLEET_ACCEL_KVM ? 2000u : 5000u,
					   10 * f->cfg.hb_interval_ms);
	if (!f->cfg.boot_timeout_ms)
		f->cfg.boot_timeout_ms = f->accel == FLEET_ACCEL_KVM ? 30000 : 120000;

	f->n = cfg->guests;
	f->g = g_new0(struct guest, f->n);
	for (unsigned int i = 0; i < f->n; i++) {
		struct guest *g = &f->g[i];

		g->f = f;
		g->idx = i;
		g->first_hb_s = -1;
		snprintf(g->name, sizeof(g->name), FLEET_NAME_PREFIX "%s-%u", f->run_id, i);
		snprintf(g->console, sizeof(g->console), "%s/%s.console", f->run_dir, g->name);
	}
	fleet_reap_stale(f);
	fleet_reap_saves(f);
	fleet_watcher_start(f);
	rc = virt_events_register(f->conn, monitor_lifecycle_event, monitor_reboot_event, f, f->ev_ids);
	if (rc < 0)
		goto fail;
	if (virt_on_close(f->conn, monitor_conn_closed, f) == 0)
		f->close_cb = true;
	f->monitor = g_thread_new("fleet-monitor", monitor_main, f);
	pc_info("fleet %s: %u guests (%u on disk%s), accel %s, uri %s", f->run_id, f->n,
		f->disk ? (f->cfg.disk_guests ? f->cfg.disk_guests : f->n) : 0,
		f->disk && f->cfg.disk_bootloader ? ", through its bootloader" : "",
		fleet_accel_name(f->accel), f->uri);
	*out = f;
	return 0;
fail:
	fleet_free(f);
	return rc;
}

/* A disk guest's incarnation starts from the injected image: one harm
 * cannot leak into the next batch. */
static int guest_disk_fresh(struct fleet *f, struct guest *g)
{
	g_autofree char *disk = fleet_guest_disk(&f->cfg, g->name);

	if (!fleet_guest_is_disk(&f->cfg, g->idx))
		return 0;
	unlink(disk);
	return inject_overlay_create(f->cfg.disk, disk);
}

/* A new incarnation's watching starts from nothing: its boot id and
 * sequence are its first heartbeat's, whatever the last one saw. */
void fleet_guest_reset_locked(struct fleet *f, struct guest *g)
{
	hb_reader_init(&g->rd);
	hb_guest_init(&g->hb, (int64_t)f->cfg.hb_timeout_ms * 1000, !f->cfg.no_work,
		      g_get_monotonic_time());
	/* A worker that has not started yet is a guest still booting
	 * (issue 27: systemd images on a loaded host): as long as a boot. */
	g->hb.grace_us = MAX(g->hb.grace_us, (int64_t)f->cfg.boot_timeout_ms * 1000);
	g->state = GUEST_STATE_BOOTING;
	g->started_us = g_get_monotonic_time();
	g->first_hb_s = -1;
	g->harm = NULL;
	g->console_due_us = 0;
	g->nmi_pending = g->nmi_done = false;
	g->flush_resume = false;
	g->flush_until_us = 0;
	g->uuid[0] = 0;
	g->stopping = false;
	g->gone = false;
	g->st_hup = false;
	g->logs_pulled = false;
	g->await_started = false;
	g->boot_timed_out = false;
	g->restored = false;
}

/* Starts guest g (state BOOTING) or records INFRA. Caller holds no lock. */
int fleet_guest_boot(struct fleet *f, struct guest *g)
{
	const struct fleet_domain_host me = {
		.cpu_mode = f->cpu_mode, .pid = (int)getpid(), .start = reaper_proc_starttime(getpid()),
	};
	g_autofree char *xml = fleet_domain_xml_pure(&f->cfg, f->accel, g->name, g->console, g->idx,
						     &me);
	virDomainPtr dom = NULL;
	virStreamPtr st = NULL;
	int rc;

	g_mutex_lock(&f->lock);
	fleet_guest_reset_locked(f, g);
	g_mutex_unlock(&f->lock);

	/* QEMU (user libvirt-qemu) may open the console file itself */
	unlink(g->console);
	rc = guest_disk_fresh(f, g);
	if (rc == 0)
		rc = virt_domain_create(f->conn, xml, true, &dom);
	pc_debug("%s: domain started in %.0f ms", g->name, (g_get_monotonic_time() - g->started_us) / 1e3);
	if (rc == 0)
		rc = virt_channel_open(f->conn, dom, HB_PORT_NAME, monitor_stream_event, g, &st);
	g_mutex_lock(&f->lock);
	if (rc < 0) {
		g_autofree char *ev = g_strdup_printf("cannot start: %s", pc_errmsg());

		fleet_guest_verdict_locked(g, OUTCOME_INFRA, ev);
		g->console_due_us = 0;
		g->stopping = true;
		g_mutex_unlock(&f->lock);
		virt_domain_destroy(dom);
		virt_domain_free(dom);
		return rc;
	}
	g->dom = dom;
	virt_domain_uuid(dom, g->uuid);
	g->st = st;
	g_mutex_unlock(&f->lock);
	return 0;
}

static unsigned int count_state_locked(struct fleet *f, enum guest_state s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < f->n; i++)
		n += f->g[i].state == s;
	return n;
}

int fleet_start(struct fleet *f)
{
	unsigned int next = 0, infra, timed_out = 0;

	for (;;) {
		g_mutex_lock(&f->lock);
		while (next < f->n && count_state_locked(f, GUEST_STATE_BOOTING) >= f->cfg.parallel &&
		       !fleet_signal_pending())
			g_cond_wait_until(&f->cond, &f->lock, g_get_monotonic_time() + 50000);
		if (fleet_signal_pending()) {
			g_mutex_unlock(&f->lock);
			return pc_fail(EINTR, "interrupted by signal %d while booting", fleet_signal_pending());
		}
		if (next >= f->n) {
			while (count_state_locked(f, GUEST_STATE_BOOTING) > 0 && !fleet_signal_pending())
				g_cond_wait_until(&f->cond, &f->lock, g_get_monotonic_time() + 50000);
			infra = count_state_locked(f, GUEST_STATE_INFRA);
			for (unsigned int i = 0; i < f->n; i++)
				timed_out += f->g[i].state == GUEST_STATE_INFRA && f->g[i].boot_timed_out;
			g_mutex_unlock(&f->lock);
			break;
		}
		g_mutex_unlock(&f->lock);
		fleet_guest_boot(f, &f->g[next++]);
	}
	if (infra && timed_out == infra)
		return pc_fail(ETIMEDOUT, "%u of %u guests started but sent no heartbeat within "
			       "%u ms (INFRA)", infra, f->n, f->cfg.boot_timeout_ms);
	if (infra)
		return pc_fail(EIO, "%u of %u guests did not come up (INFRA)", infra, f->n);
	return 0;
}

/* A harmed disk guest's own logs (its journal or /var/log) go to
 * <run_dir>/<name>.<verdict id>-<OUTCOME>.logs before its overlay is
 * removed: the evidence a distribution files upstream. One directory per
 * harmed incarnation, never one reused (issue 27: a later harm's logs
 * mixed into an earlier one's); a name a resumed run already used gets a
 * suffix. */
static void guest_pull_logs(struct fleet *f, struct guest *g, const char *disk)
{
	g_autofree char *base = NULL, *dest = NULL;
	unsigned int n = 0;
	int rc;

	g_mutex_lock(&f->lock);
	base = g->harm ? g_strdup_printf("%s/%s.%lu-%s", f->run_dir, g->name, (unsigned long)g->harm->id,
					 outcome_name(g->harm->kind))
		       : g_strdup_printf("%s/%s", f->run_dir, g->name);
	g_mutex_unlock(&f->lock);
	dest = g_strdup_printf("%s.logs", base);
	for (unsigned int i = 2; g_file_test(dest, G_FILE_TEST_EXISTS) && i < 1000; i++) {
		g_free(dest);
		dest = g_strdup_printf("%s.%u.logs", base, i);
	}
	rc = inject_pull_logs(disk, dest, &n);
	g_mutex_lock(&f->lock);
	if (g->harm && rc == 0)
		fleet_evidence_append(g->harm, "--- the guest's own logs: %s (%u files; what the guest had "
				"written to its disk, which may end before the harm: the console above "
				"is the record of it)\n", dest, n);
	else if (g->harm)
		fleet_evidence_append(g->harm, "--- the guest's own logs: not read (%s)\n", pc_errmsg());
	g_mutex_unlock(&f->lock);
}

/* Destroys guest g; no verdict for it. */
void fleet_guest_stop(struct fleet *f, struct guest *g)
{
	virDomainPtr dom;
	virStreamPtr st;
	bool lost;

	g_mutex_lock(&f->lock);
	g->stopping = true;
	if (g->harm && g->console_due_us) {
		/* the console is replaced at the next boot: take the evidence now */
		g_autofree char *tail = fleet_console_tail(g->console, g->nmi_done ? g->console_mark : 0,
						     FLEET_CONSOLE_TAIL_LINES);

		fleet_evidence_append(g->harm, "--- console at stop (%s)\n%s", g->console, tail);
		g->console_due_us = 0;
	}
	dom = g->dom;
	st = g->st;
	g->dom = NULL;
	g->st = NULL;
	lost = f->conn_lost;
	g_mutex_unlock(&f->lock);
	virt_stream_close(st);
	/* over a lost connection this cannot work: fleet_stop() reconnects */
	if (dom && !lost && virt_domain_destroy(dom) < 0)
		pc_warn("%s: %s", g->name, pc_errmsg());
	virt_domain_free(dom);
	if (fleet_guest_is_disk(&f->cfg, g->idx)) {
		g_autofree char *disk = fleet_guest_disk(&f->cfg, g->name);
		bool harmed;

		g_mutex_lock(&f->lock);
		harmed = g->harm != NULL && !g->logs_pulled;
		g->logs_pulled |= harmed;
		g_mutex_unlock(&f->lock);
		if (harmed)
			guest_pull_logs(f, g, disk);
		if (!f->cfg.keep_disks)
			unlink(disk);
	}
	g_mutex_lock(&f->lock);
	if (g->state != GUEST_STATE_INFRA)
		g->state = GUEST_STATE_OFF;
	g_mutex_unlock(&f->lock);
}

int fleet_stop_harmed_disks(struct fleet *f)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < f->n; i++) {
		struct guest *g = &f->g[i];
		bool harmed;

		if (!fleet_guest_is_disk(&f->cfg, i))
			continue;
		g_mutex_lock(&f->lock);
		harmed = g->harm != NULL && g->dom != NULL;
		g_mutex_unlock(&f->lock);
		if (harmed) {
			fleet_guest_stop(f, g);
			n++;
		}
	}
	return (int)n;
}

int fleet_stop(struct fleet *f)
{
	bool lost;

	if (!f)
		return 0;
	for (unsigned int i = 0; i < f->n; i++) {
		fleet_guest_stop(f, &f->g[i]);
		/* the saved images go with the guests */
		if (f->g[i].snap[0])
			unlink(f->g[i].snap);
		f->g[i].snap[0] = 0;
	}
	g_mutex_lock(&f->lock);
	lost = f->conn_lost;
	g_mutex_unlock(&f->lock);
	if (lost)
		fleet_destroy_orphans(f);
	disk_owners_restore(f->disk_owners);
	return 0;
}

void fleet_free(struct fleet *f)
{
	if (!f)
		return;
	if (f->g)
		fleet_stop(f);
	if (f->monitor) {
		g_mutex_lock(&f->lock);
		f->quit = true;
		g_cond_broadcast(&f->cond);
		g_mutex_unlock(&f->lock);
		g_thread_join(f->monitor);
	}
	if (f->conn) {
		if (f->close_cb)
			virt_on_close_clear(f->conn);
		virt_events_deregister(f->conn, f->ev_ids);
		virt_close(f->conn);
	}
	fleet_watcher_stop(f);
	g_ptr_array_unref(f->verdicts);
	g_mutex_clear(&f->lock);
	g_cond_clear(&f->cond);
	g_free(f->g);
	g_free(f->uri);
	g_free(f->run_id);
	g_free(f->run_dir);
	g_free(f->kernel);
	g_free(f->initrd);
	g_free(f->extra);
	g_free(f->disk);
	if (f->disk_owners)
		g_ptr_array_unref(f->disk_owners);
	g_free(f->disk_root);
	g_free(f->disk_kernel);
	g_free(f->disk_initrd);
	for (size_t i = 0; f->shares && i < f->cfg.share_count; i++) {
		g_free((char *)f->shares[i].source);
		g_free((char *)f->shares[i].tag);
	}
	g_free(f->shares);
	g_free(f);
}

enum fleet_accel fleet_accel(const struct fleet *f)
{
	return f->accel;
}

unsigned int fleet_size(const struct fleet *f)
{
	return f->n;
}

unsigned int fleet_parallel(const struct fleet *f)
{
	return f->cfg.parallel;
}

double fleet_elapsed_s(const struct fleet *f)
{
	return rel_s(f, g_get_monotonic_time());
}

const char *fleet_guest_name(const struct fleet *f, unsigned int i)
{
	return i < f->n ? f->g[i].name : NULL;
}

uint64_t fleet_mark(struct fleet *f)
{
	uint64_t m;

	g_mutex_lock(&f->lock);
	m = f->verdicts->len;
	g_mutex_unlock(&f->lock);
	return m;
}

int fleet_verdicts_since(struct fleet *f, uint64_t mark, GPtrArray **out)
{
	GPtrArray *a = g_ptr_array_new_with_free_func((GDestroyNotify)fleet_verdict_free);

	g_mutex_lock(&f->lock);
	for (guint i = mark; i < f->verdicts->len; i++)
		g_ptr_array_add(a, verdict_copy(f->verdicts->pdata[i]));
	g_mutex_unlock(&f->lock);
	*out = a;
	return 0;
}

int fleet_wait_verdict(struct fleet *f, uint64_t mark, unsigned int timeout_ms)
{
	int64_t end = g_get_monotonic_time() + (int64_t)timeout_ms * 1000;
	int rc = 0;

	g_mutex_lock(&f->lock);
	while (f->verdicts->len <= mark) {
		if (!g_cond_wait_until(&f->cond, &f->lock, end) && g_get_monotonic_time() >= end) {
			rc = f->verdicts->len > mark ? 0 : -ETIMEDOUT;
			break;
		}
	}
	g_mutex_unlock(&f->lock);
	return rc < 0 ? pc_fail(ETIMEDOUT, "no verdict within %u ms", timeout_ms) : 0;
}

/* Its harm's evidence still grows: the console tail is due, or the NMI's
 * output. Under f->lock. */
static bool evidence_due_locked(const struct guest *g)
{
	return g->console_due_us || g->nmi_pending;
}

bool fleet_all_harmed_since(struct fleet *f, uint64_t mark)
{
	bool all = f->n > 0;

	g_mutex_lock(&f->lock);
	for (unsigned int i = 0; i < f->n && all; i++) {
		const struct guest *g = &f->g[i];

		all = g->harm && g->harm->id > mark && !evidence_due_locked(g);
	}
	g_mutex_unlock(&f->lock);
	return all;
}

void fleet_wait_evidence(struct fleet *f, uint64_t mark, unsigned int timeout_ms)
{
	int64_t end = g_get_monotonic_time() + (int64_t)timeout_ms * 1000;

	g_mutex_lock(&f->lock);
	for (;;) {
		bool whole = true;

		for (unsigned int i = 0; i < f->n && whole; i++) {
			const struct guest *g = &f->g[i];

			whole = !(g->harm && g->harm->id > mark && evidence_due_locked(g));
		}
		if (whole || fleet_signal_pending() || g_get_monotonic_time() >= end)
			break;
		g_cond_wait_until(&f->cond, &f->lock, MIN(end, g_get_monotonic_time() + 50000));
	}
	g_mutex_unlock(&f->lock);
}

int fleet_wait_healthy(struct fleet *f, unsigned int timeout_ms)
{
	int64_t end = g_get_monotonic_time() + (int64_t)timeout_ms * 1000;

	g_mutex_lock(&f->lock);
	for (;;) {
		int64_t now = g_get_monotonic_time();
		bool all = true;

		for (unsigned int i = 0; i < f->n; i++) {
			struct guest *g = &f->g[i];

			if (g->state != GUEST_STATE_HEALTHY && g->state != GUEST_STATE_BOOTING) {
				g_mutex_unlock(&f->lock);
				return pc_fail(EIO, "%s is %s", g->name, guest_state_name(g->state));
			}
			if (g->state != GUEST_STATE_HEALTHY ||
			    now - g->hb.last_hb_us > (int64_t)f->cfg.hb_timeout_ms * 1000)
				all = false;
		}
		if (all)
			break;
		if (now >= end) {
			g_mutex_unlock(&f->lock);
			return pc_fail(ETIMEDOUT, "fleet not healthy within %u ms", timeout_ms);
		}
		g_cond_wait_until(&f->cond, &f->lock, MIN(end, now + 50000));
	}
	g_mutex_unlock(&f->lock);
	return 0;
}

int fleet_wait_heartbeats(struct fleet *f, unsigned int count, unsigned int timeout_ms)
{
	int64_t end = g_get_monotonic_time() + (int64_t)timeout_ms * 1000;
	g_autofree uint64_t *want = g_new0(uint64_t, f->n);
	const struct guest *left = NULL;
	int rc = 0;

	g_mutex_lock(&f->lock);
	for (unsigned int i = 0; i < f->n; i++)
		want[i] = f->g[i].hb.seq + count;
	for (;;) {
		bool all = true;

		/* a guest that left HEALTHY has its verdict; the others must
		 * still show they ran on, so that a second guest's late harm is
		 * not taken for the next batch's */
		left = NULL;
		for (unsigned int i = 0; i < f->n; i++) {
			const struct guest *g = &f->g[i];

			if (g->state != GUEST_STATE_HEALTHY)
				left = left ? left : g;
			else if (g->hb.seq < want[i])
				all = false;
		}
		if (all)
			break;
		/* Our own shutdown is no guest's silence: not a timeout. */
		if (fleet_signal_pending()) {
			rc = pc_fail(EINTR, "interrupted by signal %d while waiting for heartbeats",
				     fleet_signal_pending());
			break;
		}
		if (g_get_monotonic_time() >= end) {
			rc = pc_fail(ETIMEDOUT, "no %u heartbeats from every guest within %u ms", count,
				     timeout_ms);
			break;
		}
		g_cond_wait_until(&f->cond, &f->lock, MIN(end, g_get_monotonic_time() + 50000));
	}
	if (!rc && left)
		rc = pc_fail(EIO, "%s is %s", left->name, guest_state_name(left->state));
	g_mutex_unlock(&f->lock);
	return rc;
}

int fleet_send_command(struct fleet *f, unsigned int i, const char *line)
{
	g_autofree char *msg = NULL;
	virStreamPtr st;
	int rc;

	if (i >= f->n)
		return pc_fail(EINVAL, "no guest %u", i);
	if (!line || !*line || strlen(line) >= HB_MAX_LINE - 1 || strchr(line, '\n'))
		return pc_fail(EINVAL, "bad command line");
	msg = g_strdup_printf("%s\n", line);
	/* our own reference: a concurrent restart may close the guest's */
	g_mutex_lock(&f->lock);
	st = f->g[i].st_hup ? NULL : virt_stream_ref(f->g[i].st);
	if (!strcmp(line, "work off"))
		f->g[i].hb.work_on = false;
	else if (!strcmp(line, "work on"))
		f->g[i].hb.work_on = true;
	g_mutex_unlock(&f->lock);
	if (!st)
		return pc_fail(ENOTCONN, "%s: heartbeat channel closed", f->g[i].name);
	rc = virt_stream_send(st, msg, strlen(msg));
	virt_stream_unref(st);
	return rc;
}

int fleet_guest_status(struct fleet *f, unsigned int i, struct fleet_guest_status *s)
{
	struct guest *g;

	if (i >= f->n)
		return pc_fail(EINVAL, "no guest %u", i);
	g = &f->g[i];
	memset(s, 0, sizeof(*s));
	g_mutex_lock(&f->lock);
	g_strlcpy(s->name, g->name, sizeof(s->name));
	g_strlcpy(s->console_path, g->console, sizeof(s->console_path));
	s->state = g->state;
	s->first_heartbeat_s = g->first_hb_s;
	s->last_hb_us = g->hb.last_hb_us;
	s->seq = g->hb.seq;
	s->work = g->hb.work;
	s->oops = g->hb.oops;
	s->boots = g->hb.boots;
	s->restarts = g->restarts;
	for (int k = 0; k < HB_KIND_COUNT; k++)
		s->lines_ok += g->hb.accepted[k];
	s->lines_bad = hb_guest_rejected_total(&g->hb);
	s->last_ack_us = g->hb.last_ack_us;
	g_strlcpy(s->last_ack, g->hb.last_ack, sizeof(s->last_ack));
	g_strlcpy(s->lab_step, g->hb.lab_step, sizeof(s->lab_step));
	s->lab_code = g->hb.lab_code;
	s->lab_us = g->hb.lab_us;
	s->started_s = g->started_us ? rel_s(f, g->started_us) : -1;
	s->restored = g->restored;
	s->restores = g->restores;
	s->restore_failures = g->restore_failures;
	g_strlcpy(s->restore_note, g->restore_note, sizeof(s->restore_note));
	g_strlcpy(s->save_path, g->snap, sizeof(s->save_path));
	s->disk = fleet_guest_is_disk(&f->cfg, i);
	g_mutex_unlock(&f->lock);
	return 0;
}

/* What became of guest i: the keys run.json's "guests" and fleet_json()
 * share. f->lock held. */
static json_t *guest_summary_json(struct fleet *f, unsigned int i)
{
	struct guest *g = &f->g[i];
	json_t *jg = json_object();

	json_object_set_new(jg, "name", json_string(g->name));
	json_object_set_new(jg, "boot",
			    json_string(fleet_guest_is_disk(&f->cfg, i) ? "disk" : "initramfs"));
	if (fleet_guest_is_disk(&f->cfg, i))
		json_object_set_new(jg, "disk_boot",
				    json_string(inject_disk_boot_name(f->cfg.disk_bootloader
					? INJECT_DISK_BOOT_BOOTLOADER : INJECT_DISK_BOOT_KERNEL)));
	json_object_set_new(jg, "state", json_string(guest_state_name(g->state)));
	json_object_set_new(jg, "restarts", json_integer(g->restarts));
	json_object_set_new(jg, "restores", json_integer(g->restores));
	json_object_set_new(jg, "restore_failures", json_integer(g->restore_failures));
	if (g->restore_note[0])
		json_object_set_new(jg, "restore_note", results_json_string(g->restore_note));
	return jg;
}

json_t *fleet_guests_summary(struct fleet *f)
{
	json_t *arr = json_array();

	g_mutex_lock(&f->lock);
	for (unsigned int i = 0; i < f->n; i++)
		json_array_append_new(arr, guest_summary_json(f, i));
	g_mutex_unlock(&f->lock);
	return arr;
}

json_t *fleet_json(struct fleet *f)
{
	json_t *root = json_object();
	json_t *guests = json_array();
	json_t *lim = json_array();

	g_mutex_lock(&f->lock);
	for (unsigned int i = 0; i < f->n; i++) {
		struct guest *g = &f->g[i];
		json_t *jg = guest_summary_json(f, i);
		json_t *jv = json_array();
		json_t *rej = json_object();

		json_object_set_new(jg, "first_heartbeat_s",
				    g->first_hb_s >= 0 ? json_real(g->first_hb_s) : json_null());
		json_object_set_new(jg, "seq", json_integer((json_int_t)g->hb.seq));
		json_object_set_new(jg, "console", results_json_string(g->console));
		for (int r = 0; r < HB_REJECT_COUNT; r++)
			json_object_set_new(rej, hb_reject_name(r),
					    json_integer((json_int_t)g->hb.rejected[r]));
		json_object_set_new(jg, "rejected_lines", rej);
		for (guint k = 0; k < f->verdicts->len; k++) {
			const struct fleet_verdict *v = f->verdicts->pdata[k];
			json_t *o;

			if (v->guest != i)
				continue;
			o = json_object();
			json_object_set_new(o, "kind", json_string(outcome_name(v->kind)));
			json_object_set_new(o, "t_s", json_real(v->t_s));
			/* A guest's console as it printed it, never dropped. */
			json_object_set_new(o, "evidence", results_json_string(v->evidence ? v->evidence : ""));
			json_array_append_new(jv, o);
		}
		json_object_set_new(jg, "verdicts", jv);
		json_array_append_new(guests, jg);
	}
	g_mutex_unlock(&f->lock);
	json_object_set_new(root, "guests", guests);
	json_object_set_new(root, "accel", json_string(fleet_accel_name(f->accel)));
	if (f->accel == FLEET_ACCEL_TCG)
		json_array_append_new(lim, json_string(
			"TCG: guests are emulated (no /dev/kvm or forced): hardware PMU and VMX/SVM "
			"interactions with guests cannot be shown"));
	json_object_set_new(root, "limitations", lim);
	json_object_set_new(root, "uri", json_string(f->uri));
	json_object_set_new(root, "run_id", json_string(f->run_id));
	return root;
}

/* ---- signals ---- */


static void sig_handler(int signo)
{
	int saved = errno;
	char c = (char)signo;

	sig_seen = signo;
	if (sig_pipe[1] >= 0 && write(sig_pipe[1], &c, 1) < 0) {
		/* pipe full: the flag is enough */
	}
	errno = saved;
}

int fleet_signals_install(void)
{
	struct sigaction sa;

	if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return pc_fail(errno, "pipe: %s", g_strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
		return pc_fail(errno, "sigaction: %s", g_strerror(errno));
	return sig_pipe[0];
}

int fleet_signal_pending(void)
{
	return sig_seen;
}
