/* The lab host as a place a run executes (place.h): a transient libvirt
 * domain (a fleet of one, fleet.h) booted on the kernel under test with
 * nested virtualization, the host's root shared read-only over virtio-9p
 * under a tmpfs overlay, the kernel's directory shared writable at its own
 * path, and the agent as /init in its lab role (guest-images/agent_lab.c):
 * it starts libvirtd and runs the argv the lab wrote. Watched like a guest:
 * console to a file, heartbeats, LAB lines (hbproto.h), the panic device. */
#include "place.h"

#include "fleet.h"
#include "hbproto.h"
#include "image.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LABHOST_TICK_US 200000
#define LABHOST_EVIDENCE_WAIT_US 1500000 /* the fleet completes a verdict's console tail */
#define LABHOST_CONSOLE_TAIL 6000

struct labhost {
	struct place_params p;
	char *uri;
	image_info *img;            /* the kernel under way's initramfs */
};

static void step(const struct place_job *job, const char *what, unsigned int attempt)
{
	if (job->step)
		job->step(job->step_ctx, what, attempt);
}

/* A kernel boots as a lab host only with what the lab host needs built in
 * or as modules (kernel_check_lab). */
static int labhost_check_kernel(const struct place_params *p, const struct kernel *k,
				GPtrArray *warnings)
{
	g_autoptr(GPtrArray) kw = NULL;
	int e = kernel_check_lab(k, place_kvm_vendor(p->tcg), NULL, &kw);

	for (guint w = 0; kw && w < kw->len; w++)
		g_ptr_array_add(warnings, g_strdup(kw->pdata[w]));
	return e;
}

static int labhost_check(const struct place_params *p)
{
	return place_options_check(&place_labhost_ops, p->options, (const char *const[]){ NULL });
}

static int labhost_open(const struct place_params *p, void **priv)
{
	struct labhost *h = g_new0(struct labhost, 1);

	h->p = *p;
	h->uri = g_strdup(p->uri);
	h->p.uri = h->uri;
	/* built here so that every lab host finds it in the shared cache
	 * instead of building it in its tmpfs */
	if (p->guest_image) {
		g_autoptr(image_info) guest = NULL;

		if (image_build(NULL, &guest) < 0)
			pc_warn("the nested guests' image: %s (each lab host builds its own)",
				pc_errmsg());
	}
	*priv = h;
	return 0;
}

static void labhost_close(void *priv)
{
	struct labhost *h = priv;

	if (!h)
		return;
	image_info_free(h->img);
	g_free(h->uri);
	g_free(h);
}

/* The lab host's initramfs: the agent, and the modules the kernel has as
 * =m of what a lab host needs (none when all is built in). */
static int labhost_prepare(void *priv, const struct place_job *job)
{
	struct labhost *h = priv;
	g_autoptr(GPtrArray) mods = kernel_lab_modules(job->kernel);
	struct image_options io = { 0 };

	g_clear_pointer(&h->img, image_info_free);
	step(job, "image", 0);
	for (const char *const *m = image_default_modules; *m; m++)
		g_ptr_array_add(mods, g_strdup(*m));
	g_ptr_array_add(mods, NULL);
	io.kernel = job->kernel->image;
	io.modules_dir = job->kernel->modules_dir;
	io.modules = (const char *const *)mods->pdata;
	if (image_build(&io, &h->img) < 0)
		return pc_fail(EIO, "cannot build the lab host's initramfs: %s", pc_errmsg());
	return 0;
}

static void labhost_finish(void *priv, const struct place_job *job)
{
	struct labhost *h = priv;

	(void)job;
	g_clear_pointer(&h->img, image_info_free);
}

static const char *harm_word(enum outcome o)
{
	return o == OUTCOME_HOST_HANG ? "hung" : "crashed";
}

/* Boots one lab host for the kernel and watches it until the run inside is
 * done, the lab host is lost, or it cannot be used. */
static int labhost_attempt(void *priv, const struct place_job *job, unsigned int boot,
			   struct place_attempt *res)
{
	struct labhost *h = priv;
	const struct kernel *k = job->kernel;
	g_autofree char *root = image_cache_root();
	g_autofree char *cache = g_build_filename(root, "lab", "libvirt-qemu", k->sha256, NULL);
	g_autofree char *cmdline = NULL, *console = NULL;
	/* The root read-only as it is; what the lab host writes, mapped: a
	 * hostile kernel under test plants no setuid file or device node here. */
	struct fleet_share shares[] = {
		{ "/", HB_LAB_TAG_ROOT, true, false },
		{ job->dir, HB_LAB_TAG_RUN, false, true },
		{ NULL, HB_LAB_TAG_CACHE, false, true },
	};
	struct fleet_config cfg = { 0 };
	struct fleet *f = NULL;
	uint64_t mark;
	gint64 start = g_get_monotonic_time(), ready_by;
	bool ready = false;
	int e;

	memset(res, 0, sizeof(*res));
	res->first_hb_s = res->ready_s = -1;
	if (!h->img)
		return pc_fail(EINVAL, "%s: no image prepared", k->name);
	if (g_mkdir_with_parents(cache, 0755) < 0)
		return pc_fail(errno, "%s: %s", cache, g_strerror(errno));
	shares[2].source = cache;
	/* A lab host is the kernel under test, not a canary: a soft lockup, a
	 * task blocked on 9p or an unknown NMI under an emulated CPU warns (the
	 * run inside sees HOST_WARN) instead of panicking into a HOST_CRASH
	 * bare metal would not have; later parameters win. */
	cmdline = g_strdup_printf("pmucanary.canary_mib=0 pmucanary.role=lab pmucanary.lab_dir=%s "
				  "kvm_amd.nested=1 kvm_intel.nested=1 softlockup_panic=0 "
				  "hung_task_panic=0 unknown_nmi_panic=0", job->dir);
	cfg.uri = h->p.uri;
	cfg.run_id = job->run_id;
	cfg.run_dir = job->dir;
	cfg.guests = 1;
	cfg.vcpus = h->p.vcpus ? h->p.vcpus : MAX(2u, (unsigned int)sysconf(_SC_NPROCESSORS_ONLN));
	cfg.memory_mib = h->p.memory_mib;
	cfg.kernel = h->img->kernel_path;
	cfg.initrd = h->img->initrd_path;
	cfg.hb_interval_ms = 500;
	/* an emulated lab host running nested guests is slow to schedule */
	cfg.hb_timeout_ms = h->p.tcg ? 30000 : 10000;
	cfg.boot_timeout_ms = h->p.boot_timeout_ms ? h->p.boot_timeout_ms :
			      h->p.tcg ? 180000 : 60000;
	cfg.force_tcg = h->p.tcg; /* the accel the configs were checked for */
	cfg.no_work = true;
	cfg.extra_cmdline = cmdline;
	cfg.shares = shares;
	cfg.share_count = G_N_ELEMENTS(shares);
	cfg.qemu_as_root = true;
	cfg.nested = true;

	step(job, "booting", boot);
	if ((e = fleet_new(&cfg, &f)))
		return e;
	console = g_strdup_printf("%s/" FLEET_NAME_PREFIX "%s-0.console", job->dir, job->run_id);
	mark = fleet_mark(f);
	if ((e = fleet_start(f))) {
		g_autoptr(GPtrArray) vs = NULL;

		if (fleet_signal_pending()) {
			res->end = PLACE_INTERRUPTED;
		} else {
			res->end = PLACE_FAILED;
			/* started, and the kernel under test never answered */
			res->before_ready = e == -ETIMEDOUT;
			fleet_verdicts_since(f, mark, &vs);
			res->evidence = vs && vs->len ? g_strdup(((struct fleet_verdict *)vs->pdata[0])->evidence)
						    : g_strdup(pc_errmsg());
		}
		e = 0; /* handled: the caller reads res */
		goto out;
	}
	res->first_hb_s = (g_get_monotonic_time() - start) / 1e6;
	step(job, "libvirtd", boot);
	/* libvirtd's QEMU probe is slow the first time under TCG */
	ready_by = start + (gint64)(h->p.tcg ? 600 : 300) * G_USEC_PER_SEC;
	for (;;) {
		struct fleet_guest_status st;
		g_autoptr(GPtrArray) vs = NULL;

		if (fleet_signal_pending()) {
			res->end = PLACE_INTERRUPTED;
			break;
		}
		if ((e = fleet_guest_status(f, 0, &st)))
			goto out;
		fleet_verdicts_since(f, mark, &vs);
		if (vs && vs->len) {
			const struct fleet_verdict *v = vs->pdata[0];
			enum outcome kind = v->kind;
			uint64_t id = v->id;
			g_autofree char *evidence = g_strdup(v->evidence);

			if (kind == OUTCOME_INFRA) {
				res->end = PLACE_FAILED;
				res->evidence = g_steal_pointer(&evidence);
				break;
			}
			/* panic, reset or silence: the lab host is lost. Let the
			 * fleet add the console and what an NMI printed. */
			res->end = PLACE_LOST;
			res->before_ready = !ready;
			res->lost_as = kind == OUTCOME_GUEST_HANG ? OUTCOME_HOST_HANG : OUTCOME_HOST_CRASH;
			g_usleep(LABHOST_EVIDENCE_WAIT_US);
			g_clear_pointer(&vs, g_ptr_array_unref);
			if (fleet_verdicts_since(f, id - 1, &vs) == 0 && vs->len) {
				g_free(evidence);
				evidence = g_strdup(((struct fleet_verdict *)vs->pdata[0])->evidence);
			}
			res->evidence = g_strdup_printf("lab host %s %s (%s, lab host boot %u, %s; its "
							"console is kept as lab-host-%u.console): %s",
							k->name, harm_word(res->lost_as),
							outcome_name(kind), boot, st.name, boot,
							evidence ? evidence : "");
			break;
		}
		if (!strcmp(st.lab_step, HB_LAB_FAILED)) {
			g_autofree char *tail = place_file_tail(console, LABHOST_CONSOLE_TAIL);

			res->end = PLACE_FAILED;
			res->evidence = g_strdup_printf("the lab init failed (%s); console %s:\n%s",
							g_strerror((int)st.lab_code), console, tail);
			break;
		}
		if (!ready && (!strcmp(st.lab_step, HB_LAB_READY) || !strcmp(st.lab_step, HB_LAB_DONE))) {
			ready = true;
			res->ready_s = (st.lab_us - start) / 1e6;
			step(job, "run", boot);
		}
		if (!strcmp(st.lab_step, HB_LAB_DONE)) {
			res->end = PLACE_DONE;
			res->code = (int)st.lab_code;
			break;
		}
		if (!ready && g_get_monotonic_time() > ready_by) {
			g_autofree char *tail = place_file_tail(console, LABHOST_CONSOLE_TAIL);

			res->end = PLACE_FAILED;
			res->evidence = g_strdup_printf("the lab host did not get ready (libvirtd) within "
							"%.0f s; console %s:\n%s",
							(ready_by - start) / 1e6, console, tail);
			break;
		}
		if (ready)
			step(job, "run", boot);
		if (g_get_monotonic_time() > job->deadline_us) {
			res->end = PLACE_FAILED;
			res->evidence = g_strdup_printf("the kernel's run did not finish within %u s "
							"(--timeout)", job->timeout_s);
			break;
		}
		g_usleep(LABHOST_TICK_US);
	}
	e = 0;
out:
	fleet_free(f);
	/* keep every lab host's console: the next boot writes a new one */
	if (console && g_file_test(console, G_FILE_TEST_EXISTS)) {
		g_autofree char *keep = g_strdup_printf("%s/lab-host-%u.console", job->dir, boot);

		if (rename(console, keep) < 0)
			pc_warn("%s: %s", keep, g_strerror(errno));
	}
	return e;
}

const struct place_ops place_labhost_ops = {
	.name = "labhost",
	.what = "a libvirt domain on this machine booted on the kernel under test, "
		"nested KVM inside",
	.runs_argv = true,
	.check = labhost_check,
	.check_kernel = labhost_check_kernel,
	.open = labhost_open,
	.close = labhost_close,
	.prepare = labhost_prepare,
	.attempt = labhost_attempt,
	.finish = labhost_finish,
};
