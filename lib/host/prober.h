/* The open phase (design.md "Flow of one run", step 3): every distinct attr
 * is opened as a sampling event system-wide (pid -1) on every online CPU and
 * closed again at once; the errno per CPU is the outcome.
 *
 * Many cells share one attr: results are cached per distinct attr
 * (attr_hash/attr_equal), so an attr is opened once per CPU however many
 * (profile, spec) pairs and fallback tries reach it. A cell's tries follow
 * its own profile's fallback chain (profile_fallback), since chains differ
 * between perf releases.
 *
 * Without root and with perf_event_paranoid > 0, system-wide opens are not
 * allowed: the prober opens per task (pid 0, cpu -1) and says so in the
 * result set's limitations. */
#ifndef PMUCANARY_PROBER_H
#define PMUCANARY_PROBER_H

#include "outcome.h"
#include "profile.h"
#include "results.h"

#include <glib.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

/* Every limitation line of a per-task prober holds this text (repro.c
 * finds it there to open per task as the run did). */
#define PROBER_PER_TASK_TEXT "opened per task (pid 0, cpu -1)"

/* A profile's chain is finite, but a buggy one must not loop forever. */
#define PROBER_MAX_TRIES 16

struct prober_opts {
	bool per_task;  /* force pid 0, cpu -1 even when system-wide works */
	/* The perf command the cells model and the PMUs their specs name: a
	 * chain depends on both (perf stat takes no builtin fallbacks; :P
	 * walks precise_ip down). Zero: perf record; NULL: generic specs only
	 * are parsed for the chain. */
	enum profile_mode mode;
	const struct pmu_set *pmus;
	/* Called now and then with distinct attrs opened so far and the cells
	 * done out of total; NULL for none. */
	void (*progress)(size_t cells_done, size_t cells_total, size_t distinct,
			 void *data);
	void *progress_data;
};

/* The result of opening one attr everywhere. */
struct prober_result {
	enum outcome outcome; /* all CPUs agree: theirs; else the first failure's */
	int err;              /* positive errno of that failure, 0 when OK */
	bool disagree;        /* CPUs gave different outcomes */
	int ncpu;
	const int *cpus;      /* ncpu entries; -1 in per-task mode */
	const enum outcome *per_cpu;
};

struct prober_stats {
	size_t distinct;      /* distinct attrs opened */
	size_t opens;         /* perf_event_open calls made */
	size_t cache_hits;    /* opens avoided by the cache */
	size_t emfile_retries;
};

struct prober;

/* The level a perf_event_paranoid file's text gives (-1..2 and beyond,
 * as the kernel wrote it); 2, the kernel's default, when the text is
 * NULL (no file) or not one decimal int. */
int prober_paranoid_parse(const char *text);

int prober_new(const struct prober_opts *opts, struct prober **out);
void prober_free(struct prober *pr);
typedef struct prober prober;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(prober, prober_free)

bool prober_per_task(const struct prober *pr);
/* Why the prober is limited (per-task mode), or NULL. */
const char *prober_limitation(const struct prober *pr);
const int *prober_cpus(const struct prober *pr, int *count);
struct prober_stats prober_stats(const struct prober *pr);

/* Opens attr on every CPU (once; later calls return the cached result,
 * owned by the prober). Never leaves an fd open. EMFILE raises
 * RLIMIT_NOFILE to its hard limit once and retries; EMFILE after that is
 * INFRA (the harness could not test), never an errno verdict. */
const struct prober_result *prober_open(struct prober *pr,
					const struct perf_event_attr *attr);

/* Probes one cell with an attr: its attr, then p's fallbacks (p may be NULL:
 * no fallbacks). Fills tries, outcome, per_cpu; k/n stay 0/0. Cells the
 * profile rejected are left alone. */
void prober_probe_cell(struct prober *pr, const struct profile *p, struct cell *cell);

/* Probes every cell of set, finding each cell's profile by name, and adds
 * the prober's limitation to set. */
int prober_run(struct prober *pr, struct result_set *set);

#endif
