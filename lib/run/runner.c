/* One `pmucanary run` (runner.h): a run's state -- options checked, the
 * scenario, the run directory and its journal, the host fingerprint --, the
 * flow from the open phase (runner_open.c) through the guests and the load
 * phase (runner_load.c) to the report, and what they share (runner_priv.h). */
#include "runner.h"
#include "runner_priv.h"

#include "attr.h"
#include "enumerate.h"
#include "fingerprint.h"
#include "fleet.h"
#include "hbproto.h"
#include "isolate.h"
#include "journal.h"
#include "kmsg.h"
#include "load.h"
#include "infile.h"
#include "log.h"
#include "only.h"
#include "pool.h"
#include "perfbin.h"
#include "perfev.h"
#include "prober.h"
#include "profile.h"
#include "report.h"
#include "repro.h"
#include "results.h"
#include "spec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
	const char *name;
	const char *agent;   /* the agent's selftest word */
} harms[RUNNER_HARM_COUNT] = {
	[RUNNER_HARM_CRASH] = { "crash", "panic" },
	[RUNNER_HARM_HANG] = { "hang", "hang" },
	[RUNNER_HARM_CORRUPT] = { "corrupt", "corrupt" },
	[RUNNER_HARM_REBOOT] = { "reboot", "reboot" },
	[RUNNER_HARM_OOPS] = { "oops", "oops" },
	[RUNNER_HARM_HOST_CRASH] = { "host-crash", NULL },
};

bool runner_in_lab_host(void)
{
	g_autofree char *cmdline = NULL;

	if (!g_file_get_contents("/proc/cmdline", &cmdline, NULL, NULL))
		return false;
	return access(HB_LAB_MARKER, F_OK) == 0 && strstr(cmdline, "pmucanary.role=lab");
}

/* The host-crash self-test: this kernel panics now. The batch is in the
 * journal (fsync'd) and armed; the outer harness sees the lab host die. */
int runner_selftest_host_crash(void)
{
	int fd;

	if (!runner_in_lab_host())
		return pc_fail(EPERM, "host-crash self-test outside a lab host: refused");
	pc_warn("self-test: panicking this lab host (sysrq c)");
	sync();
	fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "c", 1) != 1) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return pc_fail(e, "/proc/sysrq-trigger: %s", g_strerror(e));
	}
	close(fd);
	g_usleep(10 * G_USEC_PER_SEC); /* not reached */
	return pc_fail(EIO, "sysrq c did not panic this lab host");
}

const char *runner_harm_name(enum runner_harm h)
{
	return h < RUNNER_HARM_COUNT ? harms[h].name : "?";
}

const char *runner_harm_agent_command(enum runner_harm h)
{
	return h < RUNNER_HARM_COUNT ? harms[h].agent : "?";
}

enum runner_harm runner_harm_from_name(const char *name)
{
	for (int i = 0; i < RUNNER_HARM_COUNT; i++)
		if (name && !strcmp(name, harms[i].name))
			return (enum runner_harm)i;
	return RUNNER_HARM_COUNT;
}

static const char *const verdict_names[RUNNER_VERDICT_COUNT] = {
	[RUNNER_VERDICT_CLEAN] = "clean",
	[RUNNER_VERDICT_HARM] = "harm",
	[RUNNER_VERDICT_INFRA] = "infra",
};

const char *runner_verdict_name(enum runner_verdict v)
{
	return v < RUNNER_VERDICT_COUNT ? verdict_names[v] : "?";
}

void runner_report_clear(struct runner_report *rep)
{
	if (!rep)
		return;
	g_free(rep->run_dir);
	g_free(rep->run_id);
	g_free(rep->why);
	memset(rep, 0, sizeof(*rep));
}

/* pc_fail with the current message behind a prefix (pc_errmsg's buffer is
 * the one pc_fail writes, so copy it first). */
int runner_refail(int err, const char *prefix)
{
	g_autofree char *msg = g_strdup(pc_errmsg());

	return pc_fail(err, "%s%s", prefix, msg);
}

void runner_progress(struct run *r, const char *phase)
{
	struct runner_progress p = { .phase = phase, .eta_s = -1 };
	gint64 now = g_get_monotonic_time();

	if (!r->opts->progress)
		return;
	p.batch = r->batches_done;
	p.screening = r->screening;
	p.isolating = r->isolating;
	p.elapsed_s = (double)(now - r->t0_us) / 1e6;
	/* Screening batches that remain, at the pace so far; isolation adds
	 * batches nobody can foresee, so the ETA is a lower bound then. */
	if (r->batches_done && r->screening && r->batches_done - r->isolating <= r->screening) {
		double per = (double)(now - r->load_t0_us) / 1e6 / r->batches_done;
		p.eta_s = per * (r->screening - (r->batches_done - r->isolating));
	}
	/* The budget ends the load phase whatever is left. */
	if (r->sc && r->sc->budget_ms && r->load_t0_us) {
		double left = r->sc->budget_ms / 1e3 - (double)(now - r->load_t0_us) / 1e6;

		if (left < 0)
			left = 0;
		if (p.eta_s < 0 || p.eta_s > left)
			p.eta_s = left;
	}
	if (r->pool && r->pool->ops->health && r->guests_up)
		r->pool->ops->health(r->pool->priv, &p.healthy, &p.guests);
	r->opts->progress(r->opts->progress_ctx, &p);
}

void runner_harmful_free(gpointer p)
{
	struct harmful *h = p;

	g_free(h->ids);
	json_decref(h->verdicts);
	g_free(h);
}

void runner_armed_free(gpointer p)
{
	struct armed *a = p;

	g_free(a->key);
	g_ptr_array_unref(a->cells);
	g_free(a);
}

static void run_clear(struct run *r)
{
	if (r->guests_up)
		r->pool->ops->stop(r->pool->priv);
	pool_free(r->pool);
	scenario_free(r->sc);
	pmu_set_free(r->pmus);
	result_set_free(r->set);
	g_free(r->run_dir);
	g_free(r->fp_hash);
	journal_close(r->j);
	journal_replay_free(r->replay);
	kmsg_close(r->km);
	if (r->index)
		g_hash_table_unref(r->index);
	if (r->armed)
		g_ptr_array_unref(r->armed);
	if (r->harmful)
		g_ptr_array_unref(r->harmful);
	if (r->bins)
		g_ptr_array_unref(r->bins);
	only_free(r->only);
}

/* ---- the run ----------------------------------------------------------------- */

static int make_dirs(const char *dir)
{
	if (g_mkdir_with_parents(dir, 0755) < 0)
		return pc_fail(errno, "%s: %s", dir, strerror(errno));
	/* QEMU runs as another user and writes consoles here. */
	chmod(dir, 0755);
	return 0;
}

static const struct {
	enum report_format format;
	const char *file;
} run_reports[] = {
	/* The terminal view: `matrix` over this one run, as `run` prints it. */
	{ REPORT_TEXT, "matrix.txt" },
	{ REPORT_JUNIT, "junit.xml" },
	{ REPORT_HTML, "report.html" },
};

static int write_outputs(struct run *r)
{
	g_autofree char *json_path = g_build_filename(r->run_dir, "run.json", NULL);
	g_autofree char *repro_path = NULL;
	const char *repro_dirs[1] = { NULL };
	int e;

	/* Every harm armed alone gets its reproducer, for the maintainer the
	 * report.html links it to (issue 26). */
	for (guint i = 0; i < r->set->cells->len; i++) {
		const struct cell *c = r->set->cells->pdata[i];
		struct repro_opts ro = { 0 };

		if (!repro_cell_auto(c))
			continue;
		if (!repro_path) {
			repro_path = g_build_filename(r->run_dir, RUNNER_REPRO_DIR, NULL);
			repro_dirs[0] = RUNNER_REPRO_DIR;
		}
		if ((e = repro_write(r->set, json_path, c, &ro, repro_path, NULL)))
			return e;
	}
	/* design.md "Report": the matrix, the CI view and the heatmap beside
	 * the data. */
	for (size_t i = 0; i < G_N_ELEMENTS(run_reports); i++) {
		g_autofree char *path = g_build_filename(r->run_dir, run_reports[i].file, NULL);
		const struct result_set *set = r->set;
		struct report_options opts = { .repro_dirs = repro_dirs };

		if ((e = report_write(run_reports[i].format, &set, 1, &opts, path)))
			return e;
	}
	/* Last: a run.json says the run's outputs are all there (a full disk
	 * that stops the reports after it would leave one that looks done). */
	return results_write_json(r->set, json_path);
}

static char *hash_json(json_t *j)
{
	g_autofree char *text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);

	return g_compute_checksum_for_string(G_CHECKSUM_SHA256, text ? text : "", -1);
}

static int setup(struct run *r, struct runner_report *rep)
{
	const struct runner_opts *o = r->opts;
	g_autofree char *kept = NULL;
	const char *scenario_path = o->scenario;
	json_t *fp = NULL;
	const char *kernel;
	int e;

	r->selftest_spec = o->selftest_spec;
	r->selftest_harm = o->selftest_harm;
	if (o->only_result && o->resume_dir)
		return pc_fail(EINVAL, "--only with --resume: a resumed run re-tests the cells "
			       "it started with");
	if (o->only_result && o->perf_binary_count)
		return pc_fail(EINVAL, "--only with --perf-binary: --only re-tests the profiles' "
			       "cells of a result file, a traced binary's cells cannot be selected");
	if (o->only_result &&
	    (e = only_select(o->only_result, o->only_cells, o->only_cell_count, &r->only)))
		return e;
	if (o->resume_dir) {
		json_t *st, *only;

		if ((e = journal_read(o->resume_dir, &r->replay)))
			return pc_errno_bad_path(e) ? runner_refail(EINVAL, "--resume: ") : e;
		/* Without SCENARIO or --selftest-harm, the run's own. */
		kept = g_build_filename(o->resume_dir, SCENARIO_RUN_FILE, NULL);
		if (!scenario_path)
			scenario_path = kept;
		/* A run started with --only re-arms only its own cells. */
		only = json_object_get(r->replay->start, "only");
		if (only && (e = only_from_json(only, o->resume_dir, &r->only)))
			return e;
		st = json_object_get(r->replay->start, "selftest");
		if (!r->selftest_spec && json_is_object(st)) {
			r->selftest_spec = json_string_value(json_object_get(st, "spec"));
			r->selftest_harm = runner_harm_from_name(
				json_string_value(json_object_get(st, "harm")));
			if (!r->selftest_spec || r->selftest_harm >= RUNNER_HARM_COUNT)
				return pc_fail(EINVAL, "%s: bad \"selftest\" in the start line",
					       o->resume_dir);
		}
	}
	if (!scenario_path)
		return pc_fail(EINVAL, "no scenario given");
	if ((e = runner_open_binaries(r)))
		return e;
	if ((e = scenario_load(scenario_path, &r->sc)))
		return pc_errno_bad_path(e) ? runner_refail(EINVAL, "") : e;
	r->dwell_ms = o->dwell_ms ? o->dwell_ms : r->sc->dwell_ms;
	if ((e = pmu_set_load(NULL, &r->pmus)))
		return e;
	if ((e = fingerprint_collect(r->pmus, &fp)))
		return e;
	r->fp_hash = hash_json(fp);
	r->set = result_set_new(RESULTS_KIND_RUN);
	results_set_host(r->set, fp);
	if (o->tcg) {
		g_free(r->set->accel);
		r->set->accel = g_strdup("tcg");
		results_note_standard_limitations(r->set,
			json_is_true(json_object_get(r->set->host, "hw_pmu")));
	}
	if (o->kernel_label) {
		g_free(r->set->kernel);
		r->set->kernel = g_strdup(o->kernel_label);
	}
	if (o->lab_context) {
		const json_t *ctx = o->lab_context;
		json_t *lim = json_object_get(ctx, "limitations"), *v;
		json_int_t boot = json_integer_value(json_object_get(ctx, "guest_boot_timeout_ms"));
		json_int_t hb = json_integer_value(json_object_get(ctx, "guest_heartbeat_timeout_ms"));
		size_t i;

		json_array_foreach(lim, i, v)
			if (json_is_string(v))
				results_add_limitation(r->set, "%s", json_string_value(v));
		json_object_set_new(r->set->extra ? r->set->extra : (r->set->extra = json_object()),
				    "lab", json_deep_copy(ctx));
		if (boot > 0 && boot <= 3600000 && (json_int_t)r->sc->boot_timeout_ms < boot)
			r->sc->boot_timeout_ms = (unsigned int)boot;
		if (hb > 0 && hb <= 3600000 && (json_int_t)r->sc->heartbeat_timeout_ms < hb)
			r->sc->heartbeat_timeout_ms = (unsigned int)hb;
	}
	if (r->selftest_harm == RUNNER_HARM_HOST_CRASH && r->selftest_spec && !runner_in_lab_host())
		return pc_fail(EINVAL, "--selftest-harm %s=host-crash panics the kernel it runs on: "
			       "only inside a lab host (pmucanary lab --selftest-harm)", r->selftest_spec);
	r->set->scenario = scenario_to_json(r->sc);
	if (r->selftest_spec) {
		r->set->selftest = true;
		if (r->selftest_harm == RUNNER_HARM_HOST_CRASH)
			results_add_limitation(r->set, "SELF-TEST: this lab host panicked itself (sysrq c) "
					       "whenever an attr of %s was armed; the HOST_CRASH below "
					       "is injected, not the kernel's", r->selftest_spec);
		else
			results_add_limitation(r->set, "SELF-TEST: the guests were told to harm themselves "
					       "(%s) whenever an attr of %s was armed; the harms below are "
					       "injected, not the kernel's", runner_harm_name(r->selftest_harm),
					       r->selftest_spec);
	}

	/* Before the run directory exists: bad input leaves nothing behind. */
	kernel = r->set->kernel ? r->set->kernel : "";
	if ((e = runner_build_cells(r, kernel)) || (r->only && (e = only_apply(r->only, r->set))) ||
	    (e = runner_selftest_in_sweep(r)))
		return e;
	if ((e = enumerate_check_testable(r->set, r->bins->len, scenario_path)))
		return e;

	if (o->resume_dir) {
		g_autofree char *base = g_path_get_basename(o->resume_dir);

		if ((e = journal_reopen(o->resume_dir, &r->j)))
			return e;
		r->run_dir = g_strdup(o->resume_dir);
		g_free(r->set->run_id);
		r->set->run_id = g_strdup(base);
		if (r->replay->start) {
			const char *old = json_string_value(json_object_get(r->replay->start, "fingerprint"));
			json_t *sc = json_object_get(r->replay->start, "scenario");

			if (old && strcmp(old, r->fp_hash))
				results_add_limitation(r->set, "resumed on a host whose fingerprint "
						       "differs from the one the run started on");
			/* The report describes the run as it was started. */
			if (json_is_object(sc)) {
				json_decref(r->set->scenario);
				r->set->scenario = json_incref(sc);
			}
		}
		if (r->replay->done)
			pc_warn("%s: this run was finished; its report is rewritten", r->run_dir);
	} else {
		g_autofree char *text = NULL;
		g_autoptr(GError) err = NULL;
		json_t *line;

		r->run_dir = g_build_filename(o->results_dir ? o->results_dir : "results",
					      r->set->run_id, NULL);
		/* --results naming a file, a dangling symlink...: the user's path */
		if ((e = make_dirs(r->run_dir)))
			return pc_errno_bad_path(e) ? runner_refail(EINVAL, "--results: ") : e;
		if ((e = journal_create(r->run_dir, &r->j)))
			return e;
		kept = g_build_filename(r->run_dir, SCENARIO_RUN_FILE, NULL);
		if ((e = infile_read(scenario_path, INFILE_CONFIG, &text, NULL)))
			return e;
		if (!g_file_set_contents(kept, text, -1, &err))
			return pc_fail(EIO, "%s", err->message);
		/* journal_start's line plus what --resume must arm the same way. */
		line = json_pack("{s:O,s:s}", "scenario", r->set->scenario,
				 "fingerprint", r->fp_hash);
		if (r->selftest_spec)
			json_object_set_new(line, "selftest", json_pack("{s:s,s:s}",
				"spec", r->selftest_spec, "harm", runner_harm_name(r->selftest_harm)));
		if (r->bins->len)
			json_object_set_new(line, "perf_binaries", runner_bins_json(r));
		if (r->only)
			json_object_set_new(line, "only", only_to_json(r->only));
		e = journal_append(r->j, "start", line);
		json_decref(line);
		if (e)
			return e;
	}
	rep->run_dir = g_strdup(r->run_dir);
	rep->run_id = g_strdup(r->set->run_id);
	rep->selftest = r->set->selftest;
	rep->only_cells = r->only ? r->only->cells->len : 0;
	return 0;
}

/* What the scenario's [fleet] asks of the pool. */
static struct pool_spec pool_spec_of(const struct scenario *sc)
{
	return (struct pool_spec){
		.guests = sc->guests, .vcpus = sc->vcpus, .memory_mib = sc->memory_mib,
		.kernel = sc->kernel, .initrd = sc->initrd, .disk = sc->disk,
		.disk_guests = sc->disk_guests, .disk_boot = sc->disk_boot,
		.heartbeat_ms = sc->heartbeat_ms, .heartbeat_timeout_ms = sc->heartbeat_timeout_ms,
		.boot_timeout_ms = sc->boot_timeout_ms, .restore = sc->restore,
	};
}

int runner_run(const struct runner_opts *opts, struct runner_report *rep)
{
	struct run r = { .opts = opts };
	g_autoptr(isolate) iso = NULL;
	/* After iso: freed first, and iso only reads it in isolate_run. */
	g_autofree struct perf_event_attr *rule_attrs = NULL;
	json_t *info = NULL;
	bool harmed = false;
	int e;

	memset(rep, 0, sizeof(*rep));
	r.t0_us = g_get_monotonic_time();
	r.harmful = g_ptr_array_new_with_free_func(runner_harmful_free);
	if (opts->selftest_spec && opts->selftest_harm >= RUNNER_HARM_COUNT) {
		e = pc_fail(EINVAL, "--selftest-harm: expected crash, hang, corrupt, reboot, oops or host-crash");
		goto out;
	}
	if ((e = setup(&r, rep)))
		goto out;
	/* the backend before anything is measured: a bad name is bad input */
	if ((e = pool_open(opts->pool ? opts->pool : r.sc->pool, &opts->pool_params, &r.pool)))
		goto out;
	json_object_set_new(r.set->extra ? r.set->extra : (r.set->extra = json_object()),
			    "pool", json_string(r.pool->ops->name));
	runner_progress(&r, "open");
	if ((e = runner_open_phase(&r)) || (e = runner_mark_selftest(&r)))
		goto out;
	rep->distinct_armed = r.armed->len;

	if (!opts->kmsg_path || opts->kmsg_path[0]) {
		if (kmsg_open(opts->kmsg_path, &r.km)) {
			results_add_limitation(r.set, "host kernel log not watched: %s", pc_errmsg());
			r.km = NULL;
		}
	}

	/* Guests: failing to boot them is INFRA, never a kernel verdict. */
	if (r.armed->len) {
		runner_progress(&r, "fleet");
		struct pool_spec spec = pool_spec_of(r.sc);
		enum pool_failure why = POOL_FAILURE_INFRA;

		if ((e = r.pool->ops->start(r.pool->priv, &spec, r.run_dir, &info, &why))) {
			/* the pool's own fault or the guest image's: never the kernel's */
			rep->failure = why == POOL_FAILURE_BOOT ? why : POOL_FAILURE_INFRA;
			rep->why = g_strdup_printf(rep->failure == POOL_FAILURE_BOOT ?
				"the guests did not boot: %s" : "the guests could not be started: %s",
				pc_errmsg());
			json_object_set_new(r.set->extra, "infra", json_pack("{s:s,s:s}",
				"stage", "guests", "failure", pool_failure_name(rep->failure)));
			results_add_limitation(r.set, "INFRA: %s", rep->why);
			rep->verdict = RUNNER_VERDICT_INFRA;
			goto report;
		}
		r.guests_up = true;
		if (!g_strcmp0(json_string_value(json_object_get(info, "accel")), "tcg") &&
		    g_strcmp0(r.set->accel, "tcg")) {
			g_free(r.set->accel);
			r.set->accel = g_strdup("tcg");
			results_note_standard_limitations(r.set,
				json_is_true(json_object_get(r.set->host, "hw_pmu")));
		}
		if (json_object_get(info, "guest_kernel"))
			json_object_set(r.set->extra ? r.set->extra : (r.set->extra = json_object()),
					"guest_kernel", json_object_get(info, "guest_kernel"));
		if (!r.replay || !r.replay->fleet_up)
			journal_fleet_up(r.j, info);
		json_decref(info);
		runner_progress(&r, "baseline");
		if ((e = runner_baseline(&r, &harmed)) || harmed) {
			rep->why = g_strdup(pc_errmsg());
			results_add_limitation(r.set, "INFRA: %s", rep->why);
			rep->verdict = RUNNER_VERDICT_INFRA;
			goto report;
		}
		iso = isolate_new(r.armed->len, r.sc->batch_size, r.sc->confirm);
		isolate_cover_pairs(iso, r.sc->pairs_across_batches);
		if (r.sc->isolate == SCENARIO_ISOLATE_RULE) {
			rule_attrs = g_new0(struct perf_event_attr, r.armed->len);
			for (guint i = 0; i < r.armed->len; i++)
				rule_attrs[i] = ((struct armed *)r.armed->pdata[i])->attr;
			isolate_use_rule(iso, rule_attrs);
		}
		r.screening = (r.armed->len + r.sc->batch_size - 1) / r.sc->batch_size;
		r.load_t0_us = g_get_monotonic_time();
		e = isolate_run(iso, runner_oracle, &r);
		rep->rounds = isolate_rounds(iso);
		if (e == -EINVAL)
			goto out;
		if (e == -ETIME && r.budget_out) {
			rep->why = g_strdup(pc_errmsg());
			isolate_stop(iso);
			runner_cells_apply(&r, iso);
			rep->culprits = (unsigned int)isolate_culprit_count(iso);
			rep->verdict = runner_budget_apply(&r, iso, rep->why) || rep->culprits ?
				RUNNER_VERDICT_HARM : RUNNER_VERDICT_INFRA;
			goto report;
		}
		if (e) {
			rep->why = g_strdup(pc_errmsg());
			results_add_limitation(r.set, "INFRA: %s", rep->why);
			rep->verdict = RUNNER_VERDICT_INFRA;
			goto report;
		}
		runner_cells_apply(&r, iso);
		rep->culprits = (unsigned int)isolate_culprit_count(iso);
	} else {
		results_add_limitation(r.set, "no attr opened: nothing was armed against guests");
	}
	rep->verdict = rep->culprits ? RUNNER_VERDICT_HARM : RUNNER_VERDICT_CLEAN;

report:
	runner_progress(&r, "report");
	if (rep->verdict == RUNNER_VERDICT_INFRA && r.armed && !r.budget_out) {
		/* Opened fine but never judged under load: not an OK verdict. */
		for (guint i = 0; i < r.armed->len; i++) {
			struct armed *a = r.armed->pdata[i];

			for (guint k = 0; k < a->cells->len; k++) {
				struct cell *c = a->cells->pdata[k];

				c->outcome = OUTCOME_INFRA;
				json_array_append_new(c->evidence, json_pack("{s:s,s:s}", "kind", "infra",
					"why", rep->why ? rep->why : "the load phase did not finish"));
			}
		}
	}
	{
		json_t *sum = json_pack("{s:s,s:I,s:I,s:I}", "verdict", runner_verdict_name(rep->verdict),
					"distinct_armed", (json_int_t)rep->distinct_armed,
					"rounds", (json_int_t)rep->rounds,
					"culprits", (json_int_t)rep->culprits);
		json_object_set_new(sum, "selftest", json_boolean(rep->selftest));
		json_object_set_new(r.set->extra ? r.set->extra : (r.set->extra = json_object()),
				    "verdict", json_string(runner_verdict_name(rep->verdict)));
		if (r.guests_up && r.pool->ops->summary) {
			json_t *sum_guests = r.pool->ops->summary(r.pool->priv);

			if (sum_guests)
				json_object_set_new(r.set->extra, "guests", sum_guests);
		}
		e = write_outputs(&r);
		if (e && rep->why) {
			/* A full results disk stops the run and then its report:
			 * say both. */
			g_autofree char *prefix = g_strdup_printf("could not test (%s), and then: ",
								  rep->why);

			e = runner_refail(-e, prefix);
		}
		if (!e)
			e = journal_done(r.j, sum);
		json_decref(sum);
	}
out:
	run_clear(&r);
	return e;
}
