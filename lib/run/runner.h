/* One `pmucanary run` (design.md "Flow of one run"):
 *
 *   fingerprint -> open phase (prober over the scenario's cells) -> fleet up
 *   -> baseline (a dwell with nothing armed: harm here is INFRA)
 *   -> load phase (isolate.h decides the batches; load.h arms them; the
 *      guests and host kmsg judge them; journal.h records every step)
 *   -> cells -> results/<run-id>/{run.json, matrix.txt, journal.jsonl}
 *
 * The guests are reached through struct runner_guests so that the logic can
 * run against a fake; runner_fleet_guests() (fleet_pool.h) is the real one
 * (libvirt). */
#ifndef PMUCANARY_RUNNER_H
#define PMUCANARY_RUNNER_H

#include "outcome.h"
#include "scenario.h"

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>

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

struct runner_guests {
	void *ctx;
	/* Boots the guests the scenario asks for, with consoles under run_dir,
	 * and waits for each one's first heartbeat. *info describes the fleet
	 * for the journal (new reference). */
	int (*start)(void *ctx, const struct scenario *s, const char *run_dir,
		     json_t **info);
	/* The start of a batch: verdicts are counted from here. */
	int (*mark)(void *ctx);
	/* What happened to the guests since the mark: *outcome is OK, a harm
	 * (the worst one) or INFRA; *verdicts (new reference) an array of
	 * objects for the evidence. */
	int (*judge)(void *ctx, enum outcome *outcome, json_t **verdicts);
	/* Restarts every guest harmed since the mark; waits for heartbeats.
	 * Called before the batch after a harmful one (none after the last). */
	int (*restart_harmed)(void *ctx);
	/* Self-test: make the guests harm themselves now. */
	int (*selftest)(void *ctx, enum runner_harm how);
	void (*stop)(void *ctx);
	/* Optional: how many guests are healthy right now, for progress. */
	void (*health)(void *ctx, unsigned int *healthy, unsigned int *total);
	/* Optional: every guest is harmed since the mark, its evidence
	 * complete. The dwell ends then: no guest is left to watch. */
	bool (*all_harmed)(void *ctx);
	/* Optional: what became of each guest by the end (new reference, an
	 * array): restarts, restores from the saved image, and restores that
	 * failed and why (the guest was booted cold instead). */
	json_t *(*summary)(void *ctx);
};

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
};

void runner_report_clear(struct runner_report *rep);

/* Whether this is a lab host (pmucanary.role=lab on the kernel command line
 * and the lab init's marker): the only place the host-crash self-test may
 * panic the kernel. */
bool runner_in_lab_host(void);

/* 0 with rep->verdict set (INFRA included, with pc_errmsg() saying why);
 * -EINVAL for bad input (scenario, options: exit 2); other -errno when the
 * run could not even be set up (exit 125). */
int runner_run(const struct runner_opts *opts, const struct runner_guests *guests,
	       struct runner_report *rep);

#endif
