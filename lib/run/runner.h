/* One `pmucanary run` (design.md "Flow of one run"):
 *
 *   fingerprint -> open phase (prober over the scenario's cells) -> fleet up
 *   -> baseline (a dwell with nothing armed: harm here is INFRA)
 *   -> load phase (isolate.h decides the batches; load.h arms them; the
 *      guests and host kmsg judge them; journal.h records every step)
 *   -> cells -> results/<run-id>/{run.json, matrix.txt, journal.jsonl,
 *      report.html, junit.xml, repro/<cell>/ for every harm armed alone}
 *
 * The guests are a guest pool (pool.h), the backend the scenario's
 * `[fleet] pool` names ("libvirt" by default); a test registers a fake one
 * and drives the whole runner without libvirtd. */
#ifndef PMUCANARY_RUNNER_H
#define PMUCANARY_RUNNER_H

#include "outcome.h"
#include "pool.h"
#include "scenario.h"

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>

/* The run's reproducers (repro.h), one directory per harmed cell armed
 * alone, linked from its report.html. */
#define RUNNER_REPRO_DIR "repro"

/* How the guests harm themselves in a self-test (agent command
 * "selftest <how>"). */
enum runner_harm {
	RUNNER_HARM_CRASH,
	RUNNER_HARM_HANG,
	RUNNER_HARM_CORRUPT,
	RUNNER_HARM_REBOOT,
	RUNNER_HARM_OOPS,
	RUNNER_HARM_HOST_CRASH, /* the host kernel itself panics (sysrq c): only
				 * inside a lab host, whose outer harness watches it */
	RUNNER_HARM_COUNT
};

const char *runner_harm_name(enum runner_harm h);
/* RUNNER_HARM_COUNT when unknown. */
enum runner_harm runner_harm_from_name(const char *name);
/* The agent's word for a harm (hbproto.h: "selftest panic|hang|corrupt|reboot|oops");
 * NULL for host-crash, which the harness does itself. */
const char *runner_harm_agent_command(enum runner_harm h);

/* Where a run is, for a live progress line (never for verdicts). */
struct runner_progress {
	const char *phase;          /* "open", "fleet", "baseline", "load", "report" */
	unsigned int batch;         /* batches judged so far in the load phase */
	unsigned int screening;     /* screening batches the load phase starts with */
	unsigned int isolating;     /* culprit-isolation and confirm batches so far */
	double elapsed_s;
	double eta_s;               /* < 0 when unknown */
	unsigned int healthy, guests;
};

struct runner_opts {
	const char *scenario;        /* path of the INI file */
	const char *results_dir;     /* NULL: "results" */
	const char *resume_dir;      /* a results/<run-id> to resume, or NULL */
	const char *selftest_spec;   /* --selftest-harm SPEC, or NULL */
	enum runner_harm selftest_harm;
	bool tcg;                    /* force TCG: for the report's accel */
	/* Real perf binaries as columns (--perf-binary, repeatable): each spec
	 * of the sweep is traced as `PATH stat -e SPEC -a -- true` (perfbin.h)
	 * in the open phase, and the attr the binary opened last with success
	 * is armed in the load phase like a profile's. On --resume, none given
	 * means the run's own (from its journal). */
	const char *const *perf_binaries;
	size_t perf_binary_count;
	/* run --only RESULT (only.h): only the cells of the result file at
	 * only_result that only_cells names ("PROFILE:SPEC", only_cell_count
	 * of them), or with none its harm and errno cells, are opened and
	 * armed; each must encode to the attr RESULT has. Not with
	 * resume_dir: a resumed run keeps the selection it started with
	 * (its journal's start line). */
	const char *only_result;
	const char *const *only_cells;
	size_t only_cell_count;
	/* The guest pool: opened with pool_params from the backend pool names,
	 * NULL for the scenario's [fleet] pool. */
	const char *pool;
	struct pool_params pool_params;
	/* Overrides for tests; 0/NULL keep the scenario's. */
	unsigned int dwell_ms;
	const char *kmsg_path;       /* NULL: /dev/kmsg; "" to skip the host log */
	/* Inside a lab host (lib/lab/lab.h): the label every cell carries as its
	 * kernel ("NAME (RELEASE, SHA)") instead of the bare release, and the
	 * lab's context object, kept as run.json's "lab" with its
	 * "limitations" (strings) added to the run's and its
	 * "guest_boot_timeout_ms" / "guest_heartbeat_timeout_ms" (nested
	 * guests under an emulated lab host are slow) raising the scenario's. */
	const char *kernel_label;
	const json_t *lab_context;
	/* Called at each phase and batch; NULL for none. */
	void (*progress)(void *ctx, const struct runner_progress *p);
	void *progress_ctx;
};

enum runner_verdict {
	RUNNER_VERDICT_CLEAN,   /* ran, nothing harmful */
	RUNNER_VERDICT_HARM,    /* found harm */
	RUNNER_VERDICT_INFRA,   /* could not test */
	RUNNER_VERDICT_COUNT
};

const char *runner_verdict_name(enum runner_verdict v);

struct runner_report {
	char *run_dir;
	char *run_id;
	enum runner_verdict verdict;
	unsigned int distinct_armed;  /* distinct OK attrs in the load phase */
	unsigned int rounds;          /* batches armed (this invocation and before) */
	unsigned int culprits;
	bool selftest;
	unsigned int only_cells;      /* run --only: the cells re-tested (0: a full run) */
	char *why;                    /* INFRA: what could not be done */
	enum pool_failure failure;    /* INFRA because the guests did not start:
				       * boot (the guest image) or infra */
};

void runner_report_clear(struct runner_report *rep);

/* Whether this is a lab host (pmucanary.role=lab on the kernel command line
 * and the lab init's marker): the only place the host-crash self-test may
 * panic the kernel. */
bool runner_in_lab_host(void);

/* 0 with rep->verdict set (INFRA included, with pc_errmsg() saying why);
 * -EINVAL for bad input (scenario, options: exit 2); other -errno when the
 * run could not even be set up (exit 125). */
int runner_run(const struct runner_opts *opts, struct runner_report *rep);

#endif
