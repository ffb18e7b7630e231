/* Real perf binaries on the binary axis (design.md "profile": a real perf
 * binary can be a profile, its attrs captured by tracing).
 *
 * For each spec, `PATH stat -e SPEC -a -- true` runs under the tracer
 * (trace.h). The cell's tries are the opens of that event in order, perf's
 * own fallbacks included; the cell is named "bin:perf-<version>" after the
 * binary's `--version`.
 *
 * Which opens belong to the event: perf may open other events first (feature
 * probes with dummy or software events). The event's opens start at the
 * first open whose type and config are those the closest built-in profile
 * encodes for the spec; everything after it is the event's (perf's own
 * fallbacks, cycles -> cpu-clock included). When no open matches (a PMU type
 * the profile cannot predict), every open counts.
 *
 * Outcome: OK when perf exited 0 and the event's last open succeeded; else
 * the errno of the last failed try. A spec perf's parser refused (no open of
 * the event, non-zero exit, "event syntax error" or "invalid or unsupported
 * event" on stderr) is a rejected cell (cell_set_error) with perf's line.
 * Anything else (killed, no opens and no parser message, perf still running
 * after the timeout) is INFRA.
 *
 * Each spec is traced in its own short-lived worker process (ptrace and
 * waitpid(-1) in trace_run() must not share a process), several at a time. */
#ifndef PMUCANARY_PERFBIN_H
#define PMUCANARY_PERFBIN_H

#include "pmu.h"
#include "profile.h"
#include "results.h"
#include "trace.h"

#include <glib.h>
#include <stddef.h>

struct perfbin {
	char *path;
	char *version;                 /* "6.1.187" */
	char *name;                    /* "bin:perf-6.1.187" */
	const struct profile *like;    /* closest built-in profile; never NULL */
};

/* Runs `path --version`. A path that does not run, or prints no
 * "perf version X", fails with -ENOENT/-EINVAL and a message naming it; one
 * that does not answer within perfbin_timeout_s(0) is killed (with its
 * process group): -ETIMEDOUT. */
int perfbin_open(const char *path, struct perfbin **out);
void perfbin_free(struct perfbin *pb);

/* For tests: a shorter wait for a perf binary that hangs, in seconds. */
#define PERFBIN_TIMEOUT_ENV "PMUCANARY_TEST_PERF_TIMEOUT_S"
/* asked when non-zero, else $PMUCANARY_TEST_PERF_TIMEOUT_S (1..86400),
 * else 60: how long one perf process may run before it is killed. */
unsigned int perfbin_timeout_s(unsigned int asked);
/* Two binaries of one release stay two columns: renames pb to
 * "bin:perf-<version>@<path>" when set already has cells named pb->name. */
void perfbin_name_unique(struct perfbin *pb, const struct result_set *set);
typedef struct perfbin perfbin;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(perfbin, perfbin_free)

/* More traced perf processes at once than this only thrash the machine
 * (each is a ptrace'd perf plus its tracer's slot). */
#define PERFBIN_MAX_JOBS 256

struct perfbin_opts {
	unsigned int jobs;   /* traced perf processes at once; 0: online CPUs x 2;
			      * callers keep it at most PERFBIN_MAX_JOBS */
	unsigned int timeout_s; /* per spec, then the worker is killed; 0: perfbin_timeout_s(0) */
	void (*progress)(size_t done, size_t total, void *data);
	void *progress_data;
};

/* Fills cell (profile pb->name, spec cell->spec) from one capture of
 * `perf stat -e SPEC`: tries, attr (the first try), outcome, or the
 * rejection; pmus is used to encode the spec for matching opens. */
void perfbin_cell_from_trace(const struct perfbin *pb, const struct pmu_set *pmus,
			     const struct trace_result *res, struct cell *cell);

/* Traces pb once per spec, jobs at a time, and adds one cell per spec to set
 * (kernel set->kernel), in the order of specs. Returns 0, or a negative
 * errno when workers cannot be started. */
int perfbin_probe_cells(const struct perfbin *pb, const struct pmu_set *pmus,
			const char *const *specs, size_t nspecs,
			const struct perfbin_opts *opts, struct result_set *set);

#endif
