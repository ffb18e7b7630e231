/* Lab hosts: one kernel under test per lab host, the harness inside (lab.h). */
#include "lab.h"

#include "diff.h"
#include "fingerprint.h"
#include "fleet.h"
#include "hbproto.h"
#include "image.h"
#include "place.h"
#include "journal.h"
#include "infile.h"
#include "log.h"
#include "only.h"
#include "report.h"
#include "results.h"
#include "runner.h"
#include "scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define LAB_DEFAULT_MAX_BOOTS 64
#define LAB_DEFAULT_TIMEOUT_S (6 * 3600)
#define LAB_LOST_IN_A_ROW 2             /* lost with no batch armed: then INFRA */

static const char *const status_names[LAB_STATUS_COUNT] = { "clean", "harm", "infra" };

const char *lab_status_name(enum lab_status s)
{
	return s < LAB_STATUS_COUNT ? status_names[s] : "?";
}

static void kernel_report_free(gpointer p)
{
	struct lab_kernel_report *k = p;

	g_free(k->name);
	g_free(k->label);
	g_free(k->dir);
	g_free(k->run_json);
	g_free(k->why);
	g_free(k);
}

void lab_report_clear(struct lab_report *rep)
{
	if (!rep)
		return;
	g_free(rep->dir);
	g_free(rep->id);
	if (rep->kernels)
		g_ptr_array_unref(rep->kernels);
	g_free(rep->summary);
	memset(rep, 0, sizeof(*rep));
}

unsigned int lab_memory_mib(unsigned int guests, unsigned int guest_mib)
{
	/* libvirtd, QEMU per guest (~192 MiB under nested KVM), the harness and
	 * the overlay's tmpfs upper */
	unsigned int m = 1024 + guests * (guest_mib + 192);

	return MAX(m, 1536u);
}

const char *lab_kvm_vendor(bool tcg)
{
	return place_kvm_vendor(tcg);
}

/* Whether lab hosts boot under TCG here (the fleet decides the same way:
 * KVM needs kvm_intel/kvm_amd behind /dev/kvm). */
static bool lab_tcg(const struct lab_opts *o)
{
	return o->tcg || strcmp(fingerprint_accel(), "kvm") != 0;
}

/* ---- validation: before anything boots ------------------------------------- */

/* The current message, now as bad input (pc_errmsg()'s buffer is the one
 * pc_fail() writes: copy it first). */
static int as_bad_input(void)
{
	g_autofree char *msg = g_strdup(pc_errmsg());

	return pc_fail(EINVAL, "%s", msg);
}

/* "/lab-YYYYMMDDTHHMMSSZ-xxxxxx": the lab's own component under RESULTS. */
#define LAB_ID_COMPONENT_LEN 28

/* The lab host mounts the lab directory at its own path (pmucanary.lab_dir=
 * on the kernel command line, mounted over the shared root): absolute,
 * without symlinks (resolved by results_root), in characters the kernel
 * command line and the agent take. */
static int lab_dir_ok(const char *dir)
{
	static const char *const hidden[] = { "/proc", "/sys", "/dev", "/run", "/lab", "/var/run" };
	const int max = HB_LAB_DIR_MAX - LAB_ID_COMPONENT_LEN - 1 - KERNEL_NAME_MAX;
	size_t n = strlen(dir);

	if (dir[0] != '/' || n > (size_t)max || strstr(dir, ".."))
		return pc_fail(EINVAL, "--results %s: a lab host mounts it by path: it must be "
			       "absolute, without \"..\", at most %d characters", dir, max);
	if (strspn(dir, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/_.+-") != n)
		return pc_fail(EINVAL, "--results %s: a lab host mounts it by path: use only "
			       "[A-Za-z0-9/_.+-]", dir);
	for (size_t i = 0; i < G_N_ELEMENTS(hidden); i++)
		if (g_str_has_prefix(dir, hidden[i]) &&
		    (dir[strlen(hidden[i])] == '/' || !dir[strlen(hidden[i])]))
			return pc_fail(EINVAL, "--results %s: a lab host has its own %s", dir, hidden[i]);
	return 0;
}

/* RESULTS, absolute and with symlinks resolved as far as it exists (the lab
 * host resolves its path against its own root, before any symlink of the
 * host's would apply). */
static char *results_root(const struct lab_opts *o)
{
	g_autofree char *abs = g_canonicalize_filename(o->results_dir ? o->results_dir : "results", NULL);
	g_autofree char *head = g_strdup(abs);
	GString *tail = g_string_new(NULL);
	char *real = NULL;

	/* the longest existing prefix, resolved; the rest appended */
	while (!(real = realpath(head, NULL)) && strcmp(head, "/")) {
		g_autofree char *base = g_path_get_basename(head);
		char *parent = g_path_get_dirname(head);

		g_string_prepend(tail, base);
		g_string_prepend_c(tail, '/');
		g_free(head);
		head = parent;
	}
	if (!real)
		real = g_strdup("/");
	{
		g_autofree char *r = real;
		char *out = g_strconcat(strcmp(r, "/") ? r : "", tail->str, NULL);

		g_string_free(tail, TRUE);
		return *out ? out : g_strdup("/");
	}
}

/* The writable shares keep the guest's owners and modes in user xattrs
 * (9p mapped-xattr): a hostile kernel under test cannot plant setuid files
 * or device nodes on this host. The results' filesystem must take them. */
static int results_xattr_ok(const char *root)
{
	g_autofree char *dir = g_strdup(root);
	g_autofree char *probe = NULL;
	int fd, e = 0;

	while (!g_file_test(dir, G_FILE_TEST_IS_DIR) && strcmp(dir, "/")) {
		char *parent = g_path_get_dirname(dir);

		g_free(dir);
		dir = parent;
	}
	probe = g_strdup_printf("%s/.pmucanary-xattr-%d", dir, (int)getpid());
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return pc_fail(EINVAL, "--results %s: cannot write in %s: %s", root, dir, g_strerror(errno));
	if (fsetxattr(fd, "user.pmucanary", "1", 1, 0) < 0)
		e = errno;
	close(fd);
	unlink(probe);
	if (e)
		return pc_fail(EINVAL, "--results %s: its filesystem keeps no user xattrs (%s): lab "
			       "hosts store their files' owners in them; use a directory on ext4, "
			       "xfs or btrfs", root, g_strerror(e));
	return 0;
}
/* What the lab asks of its place. */
static void place_params_of(const struct lab_opts *o, const struct scenario *sc,
			    struct place_params *pp)
{
	memset(pp, 0, sizeof(*pp));
	pp->uri = o->uri;
	pp->tcg = lab_tcg(o);
	pp->vcpus = o->vcpus;
	pp->memory_mib = o->memory_mib ? o->memory_mib : lab_memory_mib(sc->guests, sc->memory_mib);
	pp->boot_timeout_ms = o->boot_timeout_ms;
	pp->guest_image = !sc->kernel[0];
	pp->options = o->place_options;
}

int lab_validate(const struct lab_opts *o)
{
	g_autoptr(scenario) sc = NULL;
	g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *root = results_root(o);
	const struct place_ops *place = o->place ? o->place : &place_labhost_ops;
	struct place_params pp;
	int e;

	if (geteuid() != 0)
		return pc_fail(EINVAL, "pmucanary lab needs root: a lab host's QEMU runs as root "
			       "to share the host's root filesystem (run as root, or use pmucanary run)");
	if (!o->kernel_count)
		return pc_fail(EINVAL, "no --kernel given");
	if (o->kernel_count > LAB_MAX_KERNELS)
		return pc_fail(EINVAL, "%zu kernels: at most %d in one lab", o->kernel_count,
			       LAB_MAX_KERNELS);
	if (o->base >= o->kernel_count)
		return pc_fail(EINVAL, "--base: no such kernel");
	if (!o->scenario)
		return pc_fail(EINVAL, "no scenario given");
	if ((e = scenario_load(o->scenario, &sc)))
		return pc_errno_bad_path(e) ? as_bad_input() : e;
	place_params_of(o, sc, &pp);
	if (place->check && (e = place->check(&pp)))
		return e == -EINVAL ? e : as_bad_input();
	if (!place->runs_argv && (o->perf_binary_count || o->selftest || o->verbose ||
				  o->only_result))
		return pc_fail(EINVAL, "%s: the place %s runs the scenario alone (no --perf-binary, "
			       "--selftest-harm, --inner-verbose or --only)",
			       o->perf_binary_count ? "--perf-binary" : o->selftest ?
			       "--selftest-harm" : o->verbose ? "--inner-verbose" : "--only",
			       place->name);
	if (o->only_cell_count && !o->only_result)
		return pc_fail(EINVAL, "--cell without --only: --cell picks cells of the --only "
			       "RESULT file");
	if (o->only_result && o->perf_binary_count)
		return pc_fail(EINVAL, "--only with --perf-binary: --only re-tests the profiles' "
			       "cells of RESULT; a traced binary's cells cannot be re-encoded");
	if (o->only_result) {
		g_autoptr(run_only) sel = NULL;

		/* the run inside would refuse it on every kernel: refuse it once */
		if ((e = only_select(o->only_result, o->only_cells, o->only_cell_count, &sel)))
			return e == -EINVAL ? e : as_bad_input();
	}
	for (size_t i = 0; i < o->kernel_count; i++) {
		const struct kernel *k = o->kernels[i];

		for (size_t j = 0; j < i; j++)
			if (!strcmp(o->kernels[j]->name, k->name))
				return pc_fail(EINVAL, "--kernel %s and --kernel %s are both named '%s': "
					       "name them (KERNEL:NAME)", o->kernels[j]->arg, k->arg,
					       k->name);
		if (!strcmp(k->name, ".") || !strcmp(k->name, "..") || strchr(k->name, '/') ||
		    strspn(k->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-") !=
		    strlen(k->name))
			return pc_fail(EINVAL, "--kernel %s: its name '%s' is a directory name here: "
				       "give one of [A-Za-z0-9_.+-] (KERNEL:NAME)", k->arg, k->name);
		if (place->check_kernel) {
			g_autoptr(GPtrArray) kw = g_ptr_array_new_with_free_func(g_free);

			if ((e = place->check_kernel(&pp, k, kw)))
				return e == -EINVAL ? e : as_bad_input();
			for (guint w = 0; w < kw->len; w++)
				g_ptr_array_add(warnings, g_strdup_printf("--kernel %s: %s", k->arg,
									  (char *)kw->pdata[w]));
		}
	}
	for (size_t i = 0; i < o->perf_binary_count; i++) {
		if (o->perf_binaries[i][0] != '/')
			return pc_fail(EINVAL, "--perf-binary %s: give an absolute path (the lab host "
				       "runs it from its own /)", o->perf_binaries[i]);
		if (access(o->perf_binaries[i], X_OK) < 0)
			return pc_fail(EINVAL, "--perf-binary %s: %s", o->perf_binaries[i],
				       g_strerror(errno));
		if (strchr(o->perf_binaries[i], '\n'))
			return pc_fail(EINVAL, "--perf-binary: a path with a newline");
	}
	if (o->selftest) {
		/* the last '=': a PMU spec has its own (cpu/event=0x3c/=crash) */
		const char *eq = strrchr(o->selftest, '=');

		if (eq && runner_harm_from_name(eq + 1) == RUNNER_HARM_COUNT && !strchr(eq, '/'))
			return pc_fail(EINVAL, "--selftest-harm %s: expected crash, hang, corrupt, "
				       "reboot, oops or host-crash after '='", o->selftest);
		if (eq == o->selftest)
			return pc_fail(EINVAL, "--selftest-harm %s: no SPEC", o->selftest);
	}
	if (o->selftest && strchr(o->selftest, '\n'))
		return pc_fail(EINVAL, "--selftest-harm: a newline");
	if ((e = lab_dir_ok(root)) || (e = results_xattr_ok(root)))
		return e;
	/* only for a lab that will run: bad input is one line */
	for (guint w = 0; w < warnings->len; w++)
		pc_warn("%s", (char *)warnings->pdata[w]);
	return 0;
}

/* ---- one lab host ----------------------------------------------------------- */

struct lab {
	const struct lab_opts *o;
	char *dir, *id;
	json_t *outer;              /* the outer host's fingerprint */
	bool tcg;
	const struct place_ops *place;
	void *place_priv;
	char *only_copy;            /* the kernel under way's copy of --only RESULT */
	char *self;                 /* this pmucanary, run inside by path */
	gint64 t0_us;
	double first_kernel_s;      /* for the ETA */
	unsigned int kernels_done;
	/* the kernel under way */
	size_t ki;
	struct lab_kernel_report *kr;
	char *run_dir;
	GHashTable *kr_silent_batches; /* batch id + 1: given back once after a TCG silence */
	unsigned int judged;
	gint64 judged_checked_us;
	gint64 deadline_us;         /* the kernel's --timeout */
	gint64 kernel_t0_us;        /* when the kernel under way started */
};

static void progress(struct lab *l, const char *step, unsigned int boot)
{
	struct lab_progress p = { 0 };
	double now = (g_get_monotonic_time() - l->t0_us) / 1e6;

	if (!l->o->progress)
		return;
	p.kernel = (unsigned int)l->ki + 1;
	p.kernels = (unsigned int)l->o->kernel_count;
	p.name = l->kr ? l->kr->name : "";
	p.step = step;
	p.boot = boot;
	p.judged = l->judged;
	p.elapsed_s = now;
	p.eta_s = -1;
	if (l->kernels_done) {
		double per = l->first_kernel_s;
		double started = l->kernel_t0_us ? (g_get_monotonic_time() - l->kernel_t0_us) / 1e6 : 0;

		p.eta_s = per * (double)(l->o->kernel_count - l->kernels_done) - started;
		if (p.eta_s < 0)
			p.eta_s = 0;
	}
	l->o->progress(l->o->progress_ctx, &p);
}

/* The inner run's directory: the newest RUN_ID/ with a journal. */
static char *find_run_dir(const char *kdir)
{
	g_autoptr(GDir) d = g_dir_open(kdir, 0, NULL);
	g_autofree char *best = NULL;
	const char *n;

	while (d && (n = g_dir_read_name(d))) {
		g_autofree char *j = g_build_filename(kdir, n, JOURNAL_FILE, NULL);

		if (g_file_test(j, G_FILE_TEST_IS_REGULAR) && (!best || strcmp(n, best) > 0)) {
			g_free(best);
			best = g_strdup(n);
		}
	}
	return best ? g_build_filename(kdir, best, NULL) : NULL;
}

/* Judged batches so far, for the progress line (cheap: every 2 s). */
static void count_judged(struct lab *l)
{
	g_autofree char *text = NULL, *path = NULL;
	gint64 now = g_get_monotonic_time();
	unsigned int n = 0;

	if (now - l->judged_checked_us < 2 * G_USEC_PER_SEC)
		return;
	l->judged_checked_us = now;
	if (!l->run_dir) {
		l->run_dir = find_run_dir(l->kr->dir);
		if (!l->run_dir)
			return;
	}
	path = g_build_filename(l->run_dir, JOURNAL_FILE, NULL);
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return;
	for (const char *p = text; (p = strstr(p, "\"step\":\"judged\"")); p++)
		n++;
	l->judged = n;
}

static const char *harm_word(enum outcome o)
{
	return o == OUTCOME_HOST_HANG ? "hung" : "crashed";
}

/* What the lab host wrote through the mapped share is root's and 0600 on
 * this host: readable by everyone once the lab host is gone (regular files
 * and directories only; nothing the guest made is setuid or a device). */
static void make_readable(const char *dir, unsigned int depth)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *n;

	if (chmod(dir, 0755) < 0)
		pc_debug("chmod %s: %s", dir, g_strerror(errno));
	while (d && depth < 16 && (n = g_dir_read_name(d))) {
		g_autofree char *p = g_build_filename(dir, n, NULL);
		struct stat st;

		if (lstat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			make_readable(p, depth + 1);
		else if (S_ISREG(st.st_mode) && chmod(p, 0644) < 0)
			pc_debug("chmod %s: %s", p, g_strerror(errno));
	}
}

/* ---- one kernel --------------------------------------------------------------- */

/* The timeouts run.json's "lab" hands to the run inside, with their bounds. */
static const struct {
	const char *key;
	json_int_t min, max;
} lab_context_timeouts[] = {
	{ "guest_boot_timeout_ms", 1, 3600000 },
	{ "guest_heartbeat_timeout_ms", 100, 3600000 },
};

int lab_context_read(const char *path, json_t **out)
{
	g_autofree char *text = NULL;
	json_error_t jerr;
	json_t *j, *lim, *v;
	size_t len, i;
	int e;

	*out = NULL;
	if ((e = infile_read(path, INFILE_RESULTS, &text, &len)))
		return e;
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(j)) {
		e = pc_fail(EINVAL, "%s:%d:%d: %s", path, jerr.line, jerr.column,
			    j ? "not a JSON object" : jerr.text);
		json_decref(j);
		return e;
	}
	for (i = 0; i < G_N_ELEMENTS(lab_context_timeouts); i++) {
		const char *key = lab_context_timeouts[i].key;

		v = json_object_get(j, key);
		if (!v)
			continue;
		if (!json_is_integer(v) || json_integer_value(v) < lab_context_timeouts[i].min ||
		    json_integer_value(v) > lab_context_timeouts[i].max) {
			g_autofree char *shown = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

			json_decref(j);
			return pc_fail(EINVAL, "%s: \"%s\": %.40s is not an integer from %lld to %lld "
				       "(ms)", path, key, shown ? shown : "?",
				       (long long)lab_context_timeouts[i].min,
				       (long long)lab_context_timeouts[i].max);
		}
	}
	lim = json_object_get(j, "limitations");
	json_array_foreach(lim, i, v)
		if (!json_is_string(v))
			break;
	if (lim && (!json_is_array(lim) || i < json_array_size(lim))) {
		json_decref(j);
		return pc_fail(EINVAL, "%s: \"limitations\": not an array of strings", path);
	}
	*out = j;
	return 0;
}

/* What run.json's "lab" says: the layers, the kernel, the outer host. */
static json_t *lab_context(struct lab *l, const struct kernel *k)
{
	const char *kvm = lab_kvm_vendor(l->tcg);
	json_t *ctx = json_object(), *lim = json_array(), *layers = json_array();
	g_autofree char *first = g_strdup_printf(
		"lab: this run ran inside a lab host booted with kernel %s by the outer host (%s); "
		"its guests ran nested under that kernel's KVM (kvm_%s)", l->kr->label,
		l->tcg ? "QEMU TCG" : "KVM", kvm ? kvm : "amd/intel");

	json_object_set_new(ctx, "lab_id", json_string(l->id));
	json_object_set_new(ctx, "kernel", json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s?,s:s?}",
		"name", k->name, "label", l->kr->label, "release", k->release, "sha256", k->sha256,
		"image", k->image, "source", kernel_source_name(k->source),
		"config_source", k->config_source, "modules_dir", k->modules_dir));
	json_object_set_new(ctx, "nested", json_true());
	json_object_set_new(ctx, "outer", json_pack("{s:s,s:O}", "accel", l->tcg ? "tcg" : "kvm",
						    "host", l->outer));
	json_array_append_new(layers, json_pack("{s:s,s:s}", "layer", "outer host",
		"ran", l->tcg ? "the lab host under QEMU TCG (emulated CPU 'max' without xsave, "
			        "emulated SVM)"
			      : "the lab host under KVM (host-passthrough CPU, vPMU on)"));
	json_array_append_new(layers, json_pack("{s:s,s:s}", "layer", "lab host",
		"ran", "this harness (open and load phases) and libvirtd, on the kernel under test"));
	json_array_append_new(layers, json_pack("{s:s,s:s}", "layer", "nested guests",
		"ran", "the canary guests, as KVM guests of the kernel under test"));
	json_object_set_new(ctx, "layers", layers);
	json_array_append_new(lim, json_string(first));
	json_array_append_new(lim, json_string(
		"lab: nested guests cannot show the PEBS/hardware-PMU harm that a bare-metal host "
		"would: the harness here sees the lab host's vPMU, not the CPU's PMU"));
	if (l->tcg)
		json_array_append_new(lim, json_string(
			"lab: the outer host ran the lab host under TCG: its CPU, SVM and timing are "
			"emulated and it has no PMU; the kernel's KVM code is real, the hardware is not"));
	json_object_set_new(ctx, "limitations", lim);
	/* nested guests under an emulated lab host boot and answer slowly */
	json_object_set_new(ctx, "guest_boot_timeout_ms", json_integer(l->tcg ? 240000 : 60000));
	json_object_set_new(ctx, "guest_heartbeat_timeout_ms", json_integer(l->tcg ? 20000 : 5000));
	return ctx;
}

static int write_argv(struct lab *l, const char *scenario_copy, const char *ctx_path)
{
	const struct lab_opts *o = l->o;
	g_autoptr(GString) s = g_string_new(NULL);
	g_autofree char *argv_path = g_build_filename(l->kr->dir, HB_LAB_ARGV_FILE, NULL);
	const char *a[HB_LAB_ARGS_MAX];
	size_t n = 0;

	a[n++] = l->self;
	a[n++] = "run";
	if (l->run_dir) {
		a[n++] = "--resume";
		a[n++] = l->run_dir;
	} else {
		a[n++] = scenario_copy;
		a[n++] = "--results";
		a[n++] = l->kr->dir;
	}
	a[n++] = "--kernel-label";
	a[n++] = l->kr->label;
	a[n++] = "--lab-context";
	a[n++] = ctx_path;
	if (o->verbose)
		a[n++] = "-v";
	if (o->selftest) {
		a[n++] = "--selftest-harm";
		a[n++] = o->selftest;
	}
	/* a resumed run keeps the cells it started with */
	if (o->only_result && !l->run_dir) {
		a[n++] = "--only";
		a[n++] = l->only_copy;
		for (size_t i = 0; i < o->only_cell_count; i++) {
			if (n + 2 > HB_LAB_ARGS_MAX)
				return pc_fail(E2BIG, "%zu --cell: more than a lab host's command line "
					       "takes (%d arguments)", o->only_cell_count,
					       HB_LAB_ARGS_MAX);
			a[n++] = "--cell";
			a[n++] = o->only_cells[i];
		}
	}
	for (size_t i = 0; i < o->perf_binary_count; i++) {
		if (n + 2 > HB_LAB_ARGS_MAX)
			return pc_fail(E2BIG, "%zu --perf-binary: more than a lab host's command "
				       "line takes (%d arguments)", o->perf_binary_count, HB_LAB_ARGS_MAX);
		a[n++] = "--perf-binary";
		a[n++] = o->perf_binaries[i];
	}
	for (size_t i = 0; i < n; i++) {
		if (strchr(a[i], '\n'))
			return pc_fail(EINVAL, "argument '%s' holds a newline", a[i]);
		g_string_append_printf(s, "%s\n", a[i]);
	}
	if (s->len >= HB_LAB_ARGV_BYTES - 1) /* the agent reads at most ARGV_BYTES - 2 */
		return pc_fail(E2BIG, "%s: the command line is too long", argv_path);
	return place_write_text(argv_path, s->str);
}

/* A lost lab host had a batch armed: that batch is HOST_CRASH/HOST_HANG.
 *
 * But under TCG a lab host also goes silent on its own: QEMU's emulated
 * nested SVM now and then leaves a vCPU inside the nested guest for good,
 * deaf to IPIs, and the CPU that waits for it soft-locks (seen with kernels
 * that cannot harm the attr armed; platform.md: one freeze in nine nested
 * starts). So a lab host gone silent under TCG gives its batch back
 * ("interrupted", signal 0: a resume arms it again) once; only a second
 * silence of the same batch is HOST_HANG, its evidence saying so. A panic
 * or a reset is judged at once: the emulator does not make those up. */
static int note_host_down(struct lab *l, const struct place_attempt *b, bool *noted,
			  bool *retried)
{
	g_autoptr(journal_replay) rp = NULL;
	g_autoptr(journal) j = NULL;
	g_autofree char *evidence = NULL;
	const struct journal_batch *open;
	gpointer key;
	int e;

	*noted = *retried = false;
	if (!l->run_dir)
		l->run_dir = find_run_dir(l->kr->dir);
	if (!l->run_dir)
		return 0;
	if ((e = journal_read(l->run_dir, &rp)))
		return e;
	open = journal_replay_open_batch(rp);
	if (!open || open->down_outcome)
		return 0;
	if ((e = journal_reopen(l->run_dir, &j)))
		return e;
	key = GUINT_TO_POINTER(open->id + 1);
	if (b->lost_as == OUTCOME_HOST_HANG && l->tcg &&
	    !g_hash_table_contains(l->kr_silent_batches, key)) {
		if ((e = journal_interrupted(j, open->id, 0)))
			return e;
		g_hash_table_add(l->kr_silent_batches, key);
		l->kr->tcg_silent_retries++;
		pc_warn("%s: the lab host went silent with batch %u armed: under TCG that may be the "
			"emulator, not the kernel; the batch is armed again on a fresh lab host and "
			"judged HOST_HANG only if it goes silent again", l->kr->name, open->id);
		*retried = true;
		return 0;
	}
	if (g_hash_table_contains(l->kr_silent_batches, key))
		evidence = g_strdup_printf("silent twice with this batch armed, on two lab hosts "
					   "(under TCG the first is not judged alone); the second: %s",
					   b->evidence);
	if ((e = journal_host_down(j, open->id, outcome_name(b->lost_as),
				   evidence ? evidence : b->evidence)))
		return e;
	pc_warn("%s: batch %u was armed when the lab host %s: %s", l->kr->name, open->id,
		harm_word(b->lost_as), outcome_name(b->lost_as));
	*noted = true;
	return 0;
}

static void kernel_infra_as(struct lab_kernel_report *kr, enum pool_failure failure,
			    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The kernel could not be tested: its lab host's kernel did not boot
 * (POOL_FAILURE_BOOT), or something else (POOL_FAILURE_INFRA). */
static void kernel_infra_as(struct lab_kernel_report *kr, enum pool_failure failure,
			    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	g_free(kr->why);
	kr->why = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	kr->status = LAB_STATUS_INFRA;
	kr->failure = failure;
	pc_warn("%s: INFRA (%s): %s", kr->name, pool_failure_name(failure), kr->why);
}

#define kernel_infra(kr, ...) kernel_infra_as(kr, POOL_FAILURE_INFRA, __VA_ARGS__)

/* The place's progress steps; "run" also counts the inner run's judged
 * batches for the line. */
static void place_step(void *ctx, const char *step, unsigned int attempt)
{
	struct lab *l = ctx;

	if (!strcmp(step, "run"))
		count_judged(l);
	progress(l, step, attempt);
}

static int run_kernel(struct lab *l, const struct kernel *k)
{
	const struct lab_opts *o = l->o;
	struct lab_kernel_report *kr = l->kr;
	g_autofree char *scenario_copy = g_build_filename(kr->dir, "scenario.ini", NULL);
	g_autofree char *ctx_path = g_build_filename(kr->dir, "lab-context.json", NULL);
	g_autofree char *text = NULL;
	g_autofree char *run_id = g_strdup_printf("%s-k%zu", l->id, l->ki);
	unsigned int lost_in_a_row = 0, lost_unready = 0;
	g_autoptr(GHashTable) silent = g_hash_table_new(g_direct_hash, g_direct_equal);
	unsigned int max_boots = o->max_boots ? o->max_boots : LAB_DEFAULT_MAX_BOOTS;
	gint64 t0 = g_get_monotonic_time();
	struct place_job job = { 0 };
	json_t *ctx;
	int e;

	l->kernel_t0_us = t0;
	l->kr_silent_batches = silent;
	l->deadline_us = t0 + (gint64)(o->timeout_s ? o->timeout_s : LAB_DEFAULT_TIMEOUT_S) *
			      G_USEC_PER_SEC;
	if (g_mkdir_with_parents(kr->dir, 0755) < 0)
		return pc_fail(errno, "%s: %s", kr->dir, g_strerror(errno));
	if ((e = infile_read(o->scenario, INFILE_CONFIG, &text, NULL)))
		return e;
	if ((e = place_write_text(scenario_copy, text)))
		return e;
	ctx = lab_context(l, k);
	e = place_write_json(ctx_path, ctx);
	json_decref(ctx);
	if (e)
		return e;
	/* --only RESULT where the run inside can read it: the kernel's
	 * directory is shared with the lab host at its own path */
	g_clear_pointer(&l->only_copy, g_free);
	if (o->only_result) {
		g_autofree char *only = NULL;
		gsize only_len = 0;

		if ((e = infile_read(o->only_result, INFILE_RESULTS, &only, &only_len)))
			return e;
		l->only_copy = g_build_filename(kr->dir, "only-result.json", NULL);
		if ((e = place_write_text(l->only_copy, only)))
			return e;
	}

	job.kernel = k;
	job.label = kr->label;
	job.dir = kr->dir;
	job.run_id = run_id;
	job.scenario = scenario_copy;
	job.deadline_us = l->deadline_us;
	job.timeout_s = o->timeout_s ? o->timeout_s : LAB_DEFAULT_TIMEOUT_S;
	job.step = place_step;
	job.step_ctx = l;
	if (l->place->prepare && l->place->prepare(l->place_priv, &job) < 0) {
		kernel_infra(kr, "%s", pc_errmsg());
		goto done;
	}

	for (unsigned int boot = 1;; boot++) {
		struct place_attempt b;
		bool noted = false, retried = false;

		if ((e = write_argv(l, scenario_copy, ctx_path)))
			return e;
		e = l->place->attempt(l->place_priv, &job, boot, &b);
		kr->boots = boot;
		if (boot == 1) {
			kr->boot_s = b.first_hb_s;
			kr->ready_s = b.ready_s;
		}
		if (e) {
			kernel_infra(kr, "lab host %u: %s", boot, pc_errmsg());
			place_attempt_clear(&b);
			break;
		}
		if (b.end == PLACE_INTERRUPTED) {
			place_attempt_clear(&b);
			if (l->place->finish)
				l->place->finish(l->place_priv, &job);
			return pc_fail(EINTR, "interrupted by signal %d", fleet_signal_pending());
		}
		if (b.end == PLACE_FAILED) {
			kernel_infra_as(kr, b.before_ready ? POOL_FAILURE_BOOT : POOL_FAILURE_INFRA,
					"lab host %u did not come up: %s", boot, b.evidence);
			place_attempt_clear(&b);
			break;
		}
		if (b.end == PLACE_DONE) {
			g_autofree char *log = g_build_filename(kr->dir, HB_LAB_LOG_FILE, NULL);

			g_clear_pointer(&l->run_dir, g_free);
			l->run_dir = find_run_dir(kr->dir);
			if (b.run_json)
				kr->run_json = g_strdup(b.run_json);
			else if (l->run_dir)
				kr->run_json = g_build_filename(l->run_dir, "run.json", NULL);
			if ((b.code == 0 || b.code == 1) && kr->run_json &&
			    g_file_test(kr->run_json, G_FILE_TEST_IS_REGULAR)) {
				kr->status = b.code ? LAB_STATUS_HARM : LAB_STATUS_CLEAN;
			} else {
				g_autofree char *tail = place_file_tail(log, 2000);

				kernel_infra(kr, "the run inside the lab host exited %d (%s); %s:\n%s",
					     b.code, b.code == 2 ? "it refused its input" :
					     b.code == 125 ? "it could not test" : "unexpected", log, tail);
			}
			place_attempt_clear(&b);
			break;
		}
		/* PLACE_LOST */
		if ((e = note_host_down(l, &b, &noted, &retried))) {
			kernel_infra(kr, "cannot record the lost lab host in the journal: %s", pc_errmsg());
			place_attempt_clear(&b);
			break;
		}
		progress(l, "lost", boot);
		lost_unready = b.before_ready ? lost_unready + 1 : 0;
		if (noted) {
			kr->host_down++;
			lost_in_a_row = 0;
		} else if (retried) {
			lost_in_a_row = 0;
		} else if (++lost_in_a_row >= LAB_LOST_IN_A_ROW) {
			/* every one of them lost before it was ready: the kernel
			 * under test does not boot to a working lab host */
			kernel_infra_as(kr, lost_unready >= lost_in_a_row ? POOL_FAILURE_BOOT :
					POOL_FAILURE_INFRA, "the lab host was lost %u times in a row with "
					"no batch armed (last: %s)", lost_in_a_row, b.evidence);
			place_attempt_clear(&b);
			break;
		}
		if (boot >= max_boots) {
			kernel_infra(kr, "%u lab hosts booted and the run is not finished (last lost: %s)",
				     boot, b.evidence);
			place_attempt_clear(&b);
			break;
		}
		place_attempt_clear(&b);
		/* a fresh lab host resumes the run where its journal stops */
		if (!l->run_dir)
			l->run_dir = find_run_dir(kr->dir);
	}
done:
	if (l->place->finish)
		l->place->finish(l->place_priv, &job);
	kr->total_s = (g_get_monotonic_time() - t0) / 1e6;
	make_readable(kr->dir, 0);
	return 0;
}

/* ---- reports ------------------------------------------------------------------ */

static char *diff_base_path(const char *dir, const char *base, const char *name, const char *ext)
{
	return g_strdup_printf("%s/diff-%s-vs-%s.%s", dir, base, name, ext);
}

/* Matrix, HTML, JUnit, diffs, lab.json; sets the exit code. */
static int write_reports(struct lab *l, struct lab_report *rep)
{
	const struct lab_opts *o = l->o;
	g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func((GDestroyNotify)result_set_free);
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	/* each run's reproducers, relative to the lab's reports (NULL: none) */
	g_autoptr(GPtrArray) repros = g_ptr_array_new_with_free_func(g_free);
	struct result_set *base_set = NULL;
	/* each kernel's run.json, read once (NULL: INFRA); sets owns them */
	g_autofree struct result_set **by_kernel = g_new0(struct result_set *, rep->kernels->len);
	const struct lab_kernel_report *base = rep->kernels->pdata[o->base];
	json_t *lab = json_object(), *jk = json_array(), *jd = json_array();
	GString *sum = g_string_new(NULL);
	bool regression = false, cannot_tell = false, harm = false;
	int e = 0;

	progress(l, "report", 0);
	g_string_append_printf(sum, "lab %s: %u kernel%s, outer accel %s\n", l->id,
			       rep->kernels->len, rep->kernels->len == 1 ? "" : "s",
			       l->tcg ? "tcg" : "kvm");
	/* the run.json files first: one that cannot be read makes its kernel
	 * INFRA before anything reports its status */
	for (guint i = 0; i < rep->kernels->len; i++) {
		struct lab_kernel_report *kr = rep->kernels->pdata[i];
		struct result_set *set = NULL;

		if (kr->status == LAB_STATUS_INFRA || !kr->run_json)
			continue;
		if (results_read_json(kr->run_json, &set) < 0) {
			kernel_infra(kr, "its run.json: %s", pc_errmsg());
			continue;
		}
		g_ptr_array_add(sets, set);
		g_ptr_array_add(names, kr->name);
		{
			g_autofree char *run_dir = g_path_get_dirname(kr->run_json);
			g_autofree char *repro = g_build_filename(run_dir, RUNNER_REPRO_DIR, NULL);
			size_t dl = strlen(rep->dir);

			g_ptr_array_add(repros, g_file_test(repro, G_FILE_TEST_IS_DIR) &&
					!strncmp(repro, rep->dir, dl) && repro[dl] == '/' ?
					g_strdup(repro + dl + 1) : NULL);
		}
		by_kernel[i] = set;
		if (i == o->base)
			base_set = set;
	}
	for (guint i = 0; i < rep->kernels->len; i++) {
		struct lab_kernel_report *kr = rep->kernels->pdata[i];

		g_string_append_printf(sum, "  %-24s %-6s %u lab host boot%s%s", kr->label,
				       lab_status_name(kr->status), kr->boots, kr->boots == 1 ? "" : "s",
				       kr->host_down ? "" : "\n");
		if (kr->host_down)
			g_string_append_printf(sum, ", %u batch%s lost the lab host\n", kr->host_down,
					       kr->host_down == 1 ? "" : "es");
		if (kr->status == LAB_STATUS_INFRA)
			g_string_append_printf(sum, "    could not test%s: %.300s\n",
					       kr->failure == POOL_FAILURE_BOOT ?
					       " (the kernel did not boot to a lab host)" : "", kr->why);
		harm |= kr->status == LAB_STATUS_HARM;
		json_array_append_new(jk, json_pack("{s:s,s:s,s:s,s:s?,s:s?,s:i,s:i,s:f,s:f,s:f}",
			"name", kr->name, "label", kr->label, "status", lab_status_name(kr->status),
			"why", kr->why, "run_json", kr->run_json, "boots", (int)kr->boots,
			"host_down", (int)kr->host_down, "boot_s", kr->boot_s, "ready_s", kr->ready_s,
			"total_s", kr->total_s));
		json_object_set_new(json_array_get(jk, json_array_size(jk) - 1), "tcg_silent_retries",
				    json_integer(kr->tcg_silent_retries));
		if (kr->status == LAB_STATUS_INFRA)
			json_object_set_new(json_array_get(jk, json_array_size(jk) - 1), "failure",
					    json_string(pool_failure_name(kr->failure)));
	}
	if (sets->len) {
		struct report_options ro = { 0 };
		static const struct { enum report_format f; const char *file; } outs[] = {
			{ REPORT_TEXT, "matrix.txt" }, { REPORT_HTML, "report.html" },
			{ REPORT_JUNIT, "junit.xml" },
		};

		ro.names = (const char *const *)names->pdata;
		ro.repro_dirs = (const char *const *)repros->pdata;
		ro.width = 120;
		ro.base = o->kernel_count > 1 ? base_set : NULL;
		ro.base_name = base->name;
		for (size_t i = 0; i < G_N_ELEMENTS(outs) && !e; i++) {
			g_autofree char *path = g_build_filename(rep->dir, outs[i].file, NULL);

			e = report_write(outs[i].f, (const struct result_set *const *)sets->pdata,
					 sets->len, &ro, path);
		}
		if (e)
			goto out;
	}
	/* diffs from the base kernel to every other */
	for (guint i = 0; i < rep->kernels->len && o->kernel_count > 1; i++) {
		struct lab_kernel_report *kr = rep->kernels->pdata[i];
		g_autoptr(diff_result) res = NULL;
		const struct result_set *new = by_kernel[i];
		g_autofree char *txt = NULL, *jpath = NULL, *tpath = NULL;
		enum diff_verdict v;
		json_t *dj;

		if (i == o->base)
			continue;
		if (!base_set || !new) {
			cannot_tell = true;
			g_string_append_printf(sum, "  diff %s -> %s: CANNOT_TELL (%s could not be tested)\n",
					       base->name, kr->name, base_set ? kr->name : base->name);
			json_array_append_new(jd, json_pack("{s:s,s:s,s:s,s:i}", "base", base->name,
							    "new", kr->name, "verdict", "CANNOT_TELL",
							    "exit_code", 125));
			continue;
		}
		if ((e = diff_compare(base_set, base->run_json, new, kr->run_json, &res)) < 0)
			goto out;
		v = diff_result_verdict(res);
		regression |= v == DIFF_VERDICT_REGRESSION;
		cannot_tell |= v == DIFF_VERDICT_CANNOT_TELL;
		tpath = diff_base_path(rep->dir, base->name, kr->name, "txt");
		jpath = diff_base_path(rep->dir, base->name, kr->name, "json");
		txt = diff_result_to_text(res);
		dj = diff_result_to_json(res);
		if (!e)
			e = place_write_text(tpath, txt);
		if (!e)
			e = place_write_json(jpath, dj);
		json_decref(dj);
		if (e)
			goto out;
		g_string_append_printf(sum, "  diff %s -> %s: %s (%u ABI regression%s, %u harm "
				       "regression%s, %u fenced, %u fixed)\n    %s\n",
				       base->name, kr->name, diff_verdict_name(v),
				       res->count[DIFF_ABI_REGRESSION],
				       res->count[DIFF_ABI_REGRESSION] == 1 ? "" : "s",
				       res->count[DIFF_HARM_REGRESSION],
				       res->count[DIFF_HARM_REGRESSION] == 1 ? "" : "s",
				       res->count[DIFF_FENCED], res->count[DIFF_FIXED], tpath);
		json_array_append_new(jd, json_pack("{s:s,s:s,s:s,s:i,s:s}", "base", base->name,
						    "new", kr->name, "verdict", diff_verdict_name(v),
						    "exit_code", diff_verdict_exit_code(v), "file", jpath));
	}
	if (o->kernel_count > 1)
		rep->exit_code = regression ? 1 : cannot_tell ? 125 : 0;
	else
		rep->exit_code = base->status == LAB_STATUS_INFRA ? 125 : harm ? 1 : 0;
	if (sets->len)
		g_string_append_printf(sum, "  %s/matrix.txt\n  %s/report.html\n  %s/junit.xml\n",
				       rep->dir, rep->dir, rep->dir);
	g_string_append_printf(sum, "  %s/lab.json\n", rep->dir);
	json_object_set_new(lab, "schema", json_string("pmucanary-lab/1"));
	json_object_set_new(lab, "lab_id", json_string(l->id));
	json_object_set_new(lab, "outer", json_pack("{s:s,s:O}", "accel", l->tcg ? "tcg" : "kvm",
						    "host", l->outer));
	json_object_set_new(lab, "base", json_string(base->name));
	json_object_set_new(lab, "kernels", jk);
	json_object_set_new(lab, "diffs", jd);
	json_object_set_new(lab, "exit_code", json_integer(rep->exit_code));
	jk = jd = NULL;
	{
		g_autofree char *path = g_build_filename(rep->dir, "lab.json", NULL);

		e = place_write_json(path, lab);
	}
out:
	json_decref(jk);
	json_decref(jd);
	json_decref(lab);
	rep->summary = g_string_free(sum, FALSE);
	return e;
}

/* ---- the lab --------------------------------------------------------------------- */

int lab_run(const struct lab_opts *o, struct lab_report *rep)
{
	struct lab l = { .o = o };
	g_autoptr(scenario) sc = NULL;
	struct place_params pp = { 0 };
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();
	g_autofree char *stamp = g_date_time_format(now, "%Y%m%dT%H%M%SZ");
	g_autofree char *root = results_root(o);
	g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
	int e;

	memset(rep, 0, sizeof(*rep));
	if ((e = lab_validate(o)))
		return e;
	if ((e = scenario_load(o->scenario, &sc)))
		return e;
	l.tcg = lab_tcg(o);
	l.t0_us = g_get_monotonic_time();
	l.self = exe ? g_strdup(exe) : NULL;
	if (!l.self)
		return pc_fail(ENOENT, "cannot find this program's path (/proc/self/exe)");
	if ((e = fingerprint_collect(NULL, &l.outer)))
		return e;
	l.place = o->place ? o->place : &place_labhost_ops;
	place_params_of(o, sc, &pp);
	if ((e = l.place->open(&pp, &l.place_priv)) < 0) {
		l.place_priv = NULL;
		goto out;
	}

	l.id = g_strdup_printf("lab-%s-%06x", stamp, g_random_int() & 0xffffff);
	l.dir = g_build_filename(root, l.id, NULL);
	if (g_mkdir_with_parents(l.dir, 0755) < 0) {
		e = pc_fail(errno, "%s: %s", l.dir, g_strerror(errno));
		goto out;
	}
	rep->dir = g_strdup(l.dir);
	rep->id = g_strdup(l.id);
	rep->kernels = g_ptr_array_new_with_free_func(kernel_report_free);
	fleet_signals_install();
	for (l.ki = 0; l.ki < o->kernel_count; l.ki++) {
		const struct kernel *k = o->kernels[l.ki];
		struct lab_kernel_report *kr = g_new0(struct lab_kernel_report, 1);

		kr->name = g_strdup(k->name);
		kr->label = kernel_label(k);
		kr->dir = g_build_filename(l.dir, k->name, NULL);
		kr->boot_s = kr->ready_s = -1;
		g_ptr_array_add(rep->kernels, kr);
		l.kr = kr;
		l.judged = 0;
		g_clear_pointer(&l.run_dir, g_free);
		pc_info("kernel %zu/%zu: %s", l.ki + 1, o->kernel_count, kr->label);
		if ((e = run_kernel(&l, k)))
			goto out;
		if (!l.kernels_done)
			l.first_kernel_s = kr->total_s;
		l.kernels_done++;
	}
	l.kr = NULL;
	e = write_reports(&l, rep);
out:
	json_decref(l.outer);
	g_free(l.dir);
	g_free(l.id);
	g_free(l.self);
	g_free(l.run_dir);
	g_free(l.only_copy);
	if (l.place_priv)
		l.place->close(l.place_priv);
	return e;
}
