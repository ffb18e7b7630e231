/* A LAVA device as a place a run executes (place.h): each attempt is one
 * LAVA job (lava.h's writer) that deploys the kernel under test and a
 * ramdisk, boots the device and runs `pmucanary run SCENARIO` there; the
 * real dispatcher here runs it (`lava-run` with a device dictionary, as a
 * LAVA worker does), and the job's log is collected (lava.h's collector)
 * into the kernel's run.json.
 *
 * What differs from a lab host: the device's pmucanary is started by the
 * job, not by the lab's argv (no --resume, --perf-binary or --selftest-harm
 * reach it), and its journal stays on the device; so a device that dies
 * under the run is a failed job, never a HOST_CRASH verdict (the lab says
 * INFRA), and a kernel gets one attempt's worth of cells. A job that never
 * got as far as pmucanary's header (the kernel did not boot, the ramdisk
 * had no shell) is a boot failure; the rest of a failed job is infra.
 *
 * Options (`lab --place lava --place-opt KEY=VALUE`):
 *   device=FILE         the device dictionary lava-run boots (required)
 *   ramdisk=FILE|URL    the ramdisk the job deploys with the kernel: it
 *                       must give the test shell pmucanary (required)
 *   dispatcher=FILE     lava-run's dispatcher config (default: one naming
 *                       127.0.0.1, written in the kernel's directory)
 *   device_type=NAME    the job's device type (default: qemu)
 *   pmucanary_path=PATH pmucanary on the device (default: pmucanary)
 *   timeout=MINUTES     the job's test timeout, 1..1440 (default: 60)
 *   kernel_args=ARGS    more kernel command line */
#include "place.h"

#include "image.h"
#include "infile.h"
#include "lava.h"
#include "log.h"
#include "results.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LAVA_STOP_GRACE_S 60        /* lava-run cleans up its job on SIGTERM */
#define LAVA_DISPATCHER_TMP "/var/lib/lava/dispatcher/tmp"

static const char *const lava_keys[] = {
	"device", "ramdisk", "dispatcher", "device_type", "pmucanary_path", "timeout",
	"kernel_args", NULL,
};

struct lavaplace {
	const char *const *options;  /* borrowed from the lab's opts */
	char *device, *dispatcher, *ramdisk_url;
	unsigned int timeout_min;
};

static unsigned int timeout_of(const char *v)
{
	char *end;
	unsigned long m;

	if (!v)
		return 60;
	errno = 0;
	m = strtoul(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || *v == '+' || m < 1 || m > 1440)
		return 0;
	return (unsigned int)m;
}

static int file_option(const char *key, const char *v)
{
	if (!g_file_test(v, G_FILE_TEST_IS_REGULAR))
		return pc_fail(EINVAL, "--place-opt %s=%s: no such file", key, v);
	return 0;
}

static int lava_check(const struct place_params *p)
{
	const char *const *o = p->options;
	const char *v;
	g_autofree char *run = NULL;
	int e;

	if ((e = place_options_check(&place_lava_ops, o, lava_keys)))
		return e;
	if (!(v = place_option(o, "device")))
		return pc_fail(EINVAL, "the place lava needs --place-opt device=FILE (a lava-run "
			       "device dictionary)");
	if ((e = file_option("device", v)))
		return e;
	if (!(v = place_option(o, "ramdisk")))
		return pc_fail(EINVAL, "the place lava needs --place-opt ramdisk=FILE|URL (with "
			       "pmucanary for the job's test shell)");
	if ((e = strstr(v, "://") ? lava_url_check("--place-opt ramdisk", v)
				  : file_option("ramdisk", v)))
		return e;
	if ((v = place_option(o, "dispatcher")) && (e = file_option("dispatcher", v)))
		return e;
	if ((v = place_option(o, "device_type"))) {
		const char *const *t;

		for (t = lava_device_types; *t && strcmp(*t, v); t++)
			;
		if (!*t)
			return pc_fail(EINVAL, "--place-opt device_type=%s: not a device type pmucanary "
				       "writes jobs for", v);
	}
	if (!timeout_of(place_option(o, "timeout")))
		return pc_fail(EINVAL, "--place-opt timeout=%s: minutes, 1..1440",
			       place_option(o, "timeout"));
	run = g_find_program_in_path("lava-run");
	if (!run)
		return pc_fail(EINVAL, "the place lava runs jobs with lava-run: it is not on PATH "
			       "(install lava-dispatcher)");
	return 0;
}

static int lava_open(const struct place_params *p, void **priv)
{
	struct lavaplace *l = g_new0(struct lavaplace, 1);
	const char *rd = place_option(p->options, "ramdisk");
	const char *disp = place_option(p->options, "dispatcher");

	l->options = p->options;
	l->device = g_canonicalize_filename(place_option(p->options, "device"), NULL);
	l->dispatcher = disp ? g_canonicalize_filename(disp, NULL) : NULL;
	if (strstr(rd, "://")) {
		l->ramdisk_url = g_strdup(rd);
	} else {
		g_autofree char *abs = g_canonicalize_filename(rd, NULL);

		l->ramdisk_url = g_strconcat("file://", abs, NULL);
	}
	l->timeout_min = timeout_of(place_option(p->options, "timeout"));
	*priv = l;
	return 0;
}

static void lava_close(void *priv)
{
	struct lavaplace *l = priv;

	if (!l)
		return;
	g_free(l->device);
	g_free(l->dispatcher);
	g_free(l->ramdisk_url);
	g_free(l);
}

static int lava_attempt(void *priv, const struct place_job *job, unsigned int attempt,
			struct place_attempt *res)
{
	struct lavaplace *l = priv;
	const struct kernel *k = job->kernel;
	g_autofree char *scenario = NULL, *kernel_url = NULL, *name = NULL;
	g_autofree char *job_path = g_strdup_printf("%s/lava-job-%u.yaml", job->dir, attempt);
	g_autofree char *log = g_strdup_printf("%s/lava-%u.log", job->dir, attempt);
	g_autofree char *out_dir = g_strdup_printf("%s/lava-%u.out", job->dir, attempt);
	g_autofree char *disp = NULL, *id = NULL, *tmp = NULL, *text = NULL;
	g_autoptr(GString) y = g_string_new(NULL);
	g_autoptr(result_set) set = NULL;
	struct lava_job_opts jo = { 0 };
	bool stopped, interrupted, infra = false;
	size_t len = 0;
	int status = 0, e;
	json_t *lava;

	memset(res, 0, sizeof(*res));
	res->first_hb_s = res->ready_s = -1;
	if ((e = infile_read(job->scenario, INFILE_CONFIG, &scenario, NULL)))
		return e;
	kernel_url = g_strconcat("file://", k->image, NULL);
	name = g_strdup_printf("pmucanary-lab-%s", k->name);
	jo.device_type = place_option(l->options, "device_type");
	if (!jo.device_type)
		jo.device_type = "qemu";
	jo.job_name = name;
	jo.kernel_url = kernel_url;
	jo.ramdisk_url = l->ramdisk_url;
	jo.pmucanary_path = place_option(l->options, "pmucanary_path");
	jo.scenario_text = scenario;
	jo.kernel_args = place_option(l->options, "kernel_args");
	jo.timeout_min = l->timeout_min;
	if ((e = lava_job_write(&jo, y)))
		return e;
	if ((e = place_write_text(job_path, y->str)))
		return e;
	disp = l->dispatcher ? g_strdup(l->dispatcher) : g_build_filename(job->dir, "dispatcher.yaml", NULL);
	if (!l->dispatcher && (e = place_write_text(disp, "dispatcher_ip: 127.0.0.1\n")))
		return e;
	/* lava-run keeps a job's downloads in LAVA_DISPATCHER_TMP/ID: an id of
	 * this process and attempt, removed afterwards */
	id = g_strdup_printf("%u", 3000000u + (unsigned int)(getpid() % 100000) * 20u + attempt % 20u);
	tmp = g_build_filename(LAVA_DISPATCHER_TMP, id, NULL);
	{
		char *argv[] = { "lava-run", "--job-id", id, "--output-dir", out_dir, "--device",
				 l->device, "--dispatcher", disp, job_path, NULL };
		gint64 t0 = g_get_monotonic_time();

		if (job->step)
			job->step(job->step_ctx, "lava job", attempt);
		e = place_run_logged(argv, log, job->deadline_us, LAVA_STOP_GRACE_S, &status,
				     &stopped, &interrupted);
		if (g_file_test(tmp, G_FILE_TEST_IS_DIR))
			image_remove_tree(tmp);
		if (e)
			return e;
		res->ready_s = (g_get_monotonic_time() - t0) / 1e6;
	}
	if (interrupted) {
		res->end = PLACE_INTERRUPTED;
		return 0;
	}
	if (stopped) {
		g_autofree char *tail = place_file_tail(log, 3000);

		res->end = PLACE_FAILED;
		res->evidence = g_strdup_printf("the LAVA job did not finish within %u s (--timeout); "
						"its log %s:\n%s", job->timeout_s, log, tail);
		return 0;
	}
	if ((e = infile_read(log, INFILE_RESULTS, &text, &len)) ||
	    lava_collect(text, len, log, &set, &infra) < 0) {
		g_autofree char *why = g_strdup(pc_errmsg());
		g_autofree char *tail = place_file_tail(log, 3000);

		res->end = PLACE_FAILED;
		res->evidence = g_strdup_printf("lava-run exited %d and its log cannot be collected: "
						"%s; its end:\n%s",
						WIFEXITED(status) ? WEXITSTATUS(status) : -1, why, tail);
		return 0;
	}
	lava = json_object_get(set->extra, "lava");
	if (infra) {
		res->end = PLACE_FAILED;
		/* no header: pmucanary never ran, the device never came up */
		res->before_ready = !set->host || !json_object_size(set->host);
		if (res->before_ready)
			res->ready_s = -1;
		res->evidence = g_strdup_printf("LAVA job (%s, log %s): %s%s%s%s%s",
			jo.device_type, log, json_string_value(json_object_get(lava, "why")),
			json_object_get(lava, "error_type") ? "; error type " : "",
			json_object_get(lava, "error_type") ?
			json_string_value(json_object_get(lava, "error_type")) : "",
			json_object_get(lava, "error_msg") ? ": " : "",
			json_object_get(lava, "error_msg") ?
			json_string_value(json_object_get(lava, "error_msg")) : "");
		return 0;
	}
	/* the device's cells under the lab's name for the kernel */
	for (guint i = 0; i < set->cells->len; i++) {
		struct cell *c = set->cells->pdata[i];

		g_free(c->kernel);
		c->kernel = g_strdup(job->label);
	}
	results_add_limitation(set, "lab: this run ran on a LAVA device (device type %s, lava-run "
			       "here) booted with kernel %s; its guests, if any, ran under the "
			       "device's KVM", jo.device_type, job->label);
	{
		g_autofree char *dir = g_strdup_printf("%s/lava-%u.run", job->dir, attempt);

		if (g_mkdir_with_parents(dir, 0755) < 0)
			return pc_fail(errno, "%s: %s", dir, g_strerror(errno));
		res->run_json = g_build_filename(dir, "run.json", NULL);
	}
	if ((e = results_write_json(set, res->run_json)))
		return e;
	res->end = PLACE_DONE;
	res->code = (int)json_integer_value(json_object_get(lava, "device_exit_code"));
	return 0;
}

const struct place_ops place_lava_ops = {
	.name = "lava",
	.what = "a LAVA device: one job per kernel, run by lava-run here and collected",
	.runs_argv = false,
	.check = lava_check,
	.open = lava_open,
	.close = lava_close,
	.attempt = lava_attempt,
};
