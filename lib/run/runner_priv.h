/* The runner's internals: struct run and the functions its files call
 * across. PRIVATE: only the files that implement runner.h include it --
 * runner.c (a run's state: setup, run directory, journal, report, and
 * runner_run's flow), runner_open.c (the open phase: the scenario's cells,
 * --perf-binary columns, the prober, the attrs to arm, --selftest-harm's
 * cell) and runner_load.c (the load phase: each batch armed, dwelt on and
 * judged as isolate.h's oracle, the baseline, the budget, and the verdicts
 * put into the cells). Everyone else uses runner.h.
 *
 * Include runner.h before it: an include of runner.h from here would be a
 * circle (runner -> runner_priv -> runner) for tests/cli_layers.sh. */
#ifndef PMUCANARY_RUNNER_PRIV_H
#define PMUCANARY_RUNNER_PRIV_H

#include "isolate.h"
#include "journal.h"
#include "kmsg.h"
#include "only.h"
#include "outcome.h"
#include "pmu.h"
#include "pool.h"
#include "results.h"
#include "scenario.h"

#include <glib.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

/* A harmful batch and what the guests and host said. */
struct harmful {
	unsigned int seq;
	size_t *ids;
	size_t count;
	json_t *verdicts;
};

/* Per distinct armed attr. */
struct armed {
	struct perf_event_attr attr;
	char *key;              /* attr_to_string: the journal's key */
	GPtrArray *cells;       /* struct cell * (borrowed from the set) */
	bool selftest;          /* arming it makes the guests harm themselves */
	uint64_t samples, lost, throttle;
	unsigned int batches;
	int arm_err, arm_cpu;
};

struct run {
	const struct runner_opts *opts;
	struct pool *pool;      /* the guests: [fleet] pool's backend */
	struct scenario *sc;
	struct pmu_set *pmus;
	struct result_set *set;
	char *run_dir;
	char *fp_hash;
	struct journal *j;
	struct journal_replay *replay;
	struct kmsg_watch *km;
	GPtrArray *armed;       /* struct armed * by id */
	GHashTable *index;      /* struct perf_event_attr * -> id + 1 */
	GPtrArray *harmful;     /* struct harmful * */
	GPtrArray *bins;        /* struct perfbin *: --perf-binary columns */
	unsigned int dwell_ms;
	unsigned int live_rounds;
	bool restart_due;       /* the last batch harmed a guest: bring it back before the next */
	bool guests_up;
	struct run_only *only;  /* run --only: the cells re-tested, or NULL */
	const char *selftest_spec;   /* the option's, or the resumed run's */
	enum runner_harm selftest_harm;
	/* progress */
	gint64 t0_us, load_t0_us;
	unsigned int batches_done, screening, isolating;
	bool budget_out;        /* [load] budget ran out: isolate_stop's partial answer */
};

void runner_harmful_free(gpointer p);
void runner_armed_free(gpointer p);

/* runner.c */
/* pc_fail with the current message behind a prefix. */
int runner_refail(int err, const char *prefix);
/* Tells opts->progress where the run is. */
void runner_progress(struct run *r, const char *phase);
/* The host-crash self-test: panics this (lab host) kernel. */
int runner_selftest_host_crash(void);

/* runner_open.c */
int runner_build_cells(struct run *r, const char *kernel);
int runner_selftest_in_sweep(struct run *r);
int runner_mark_selftest(struct run *r);
int runner_open_binaries(struct run *r);
json_t *runner_bins_json(const struct run *r);
int runner_open_phase(struct run *r);

/* runner_load.c */
int runner_baseline(struct run *r, bool *harmed);
int runner_oracle(void *ctx, const struct isolate_test *t, enum outcome *res);
guint runner_budget_apply(struct run *r, const struct isolate *iso, const char *why);
void runner_cells_apply(struct run *r, const struct isolate *iso);

#endif
