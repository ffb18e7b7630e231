/* `pmucanary run --only RESULT`: re-test just the cells a result file marks
 * harmed or failed with an errno, with the same attrs and profiles, so that
 * checking one cell costs one batch and not a sweep (issue 26).
 *
 * The selection is repro's (repro.h): by default every cell with an attr
 * whose outcome is a harm or an errno; --cell PROFILE:SPEC names cells
 * instead. The run still enumerates its scenario; only_apply() then keeps
 * just the selected cells, so only they reach the open and load phases,
 * and refuses a cell whose attr this binary's profile no longer encodes
 * the way RESULT recorded (it would re-test another attr under the same
 * name). The selection goes into the journal's start line (only_to_json),
 * so that `run --resume` re-arms the same cells. */
#ifndef PMUCANARY_ONLY_H
#define PMUCANARY_ONLY_H

#include "outcome.h"
#include "results.h"

#include <glib.h>
#include <jansson.h>
#include <linux/perf_event.h>

struct only_cell {
	char *profile;
	char *spec;
	/* RESULT's first attr: what the profile built before any fallback of
	 * the open phase (the fallbacks depend on the kernel and are redone). */
	struct perf_event_attr attr;
	enum outcome was;          /* RESULT's outcome */
};

struct run_only {
	char *result;              /* the RESULT path as given */
	char *run_id;              /* RESULT's run id, NULL when it has none */
	GPtrArray *cells;          /* struct only_cell *, in RESULT's order */
	unsigned int left_out;     /* cells of traced perf binaries left out */
};

void only_free(struct run_only *o);
typedef struct run_only run_only;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(run_only, only_free)

/* Reads RESULT and selects its cells: names (n of them, "PROFILE:SPEC"),
 * or with none every cell repro_cell_default() takes. A traced perf
 * binary's cell ("bin:" profile) cannot be re-encoded by this binary: left
 * out with a warning. -EINVAL with a message naming RESULT and the cell
 * for a name not in it (or without an attr, or INFRA), an unreadable
 * RESULT, or a selection that leaves nothing to re-test. */
int only_select(const char *result, const char *const *names, size_t n,
		struct run_only **out);

/* The members in which now differs from was, "precise_ip 3 -> 2, ..."
 * (g_free), or NULL when they agree. The type of a dynamic PMU (>=
 * PERF_TYPE_MAX on both sides) is not compared: the kernel numbers those
 * PMUs as they register, so msr/tsc/ is type 9 on one host and 12 on the
 * next while the event is the same. */
char *only_attr_diff(const struct perf_event_attr *was, const struct perf_event_attr *now);

/* Keeps of set's cells (the scenario's, not yet probed) just the selected
 * ones, each with an evidence entry saying it was re-tested from RESULT;
 * adds run.json's "only" object and a limitation line. -EINVAL, set
 * unchanged, naming the cell when a selected cell is not in the sweep, or
 * the profile now rejects its spec or encodes other members (named) than
 * RESULT's attr. */
int only_apply(const struct run_only *o, struct result_set *set);

/* The selection for the journal's start line, and back (-EINVAL naming
 * `where` for a bad object). */
json_t *only_to_json(const struct run_only *o);
int only_from_json(const json_t *j, const char *where, struct run_only **out);

/* The scenario RESULT's run used: SCENARIO_RUN_FILE beside it when RESULT
 * is a run directory's run.json and that file exists, else NULL (g_free). */
char *only_default_scenario(const char *result);

#endif
