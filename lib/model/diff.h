/* Comparing two result files cell by cell (`pmucanary diff BASE NEW`).
 *
 * Cells are keyed by (profile, spec): the kernel is what differs between
 * BASE and NEW by design. Each pair of outcomes falls in one group of
 * DIFF_GROUP_TABLE; the verdict follows design.md "Contracts", usable by
 * `git bisect run`:
 *   REGRESSION  (exit 1)   any cell OK -> anything else (errno or harm), or
 *                          any cell non-harm -> harm. A regression measured
 *                          on tested cells wins over the reasons below.
 *   CANNOT_TELL (exit 125) no regression, but INFRA cells on either side,
 *                          a run whose verdict is INFRA, tested cells BASE
 *                          had that NEW lacks, or a probe compared with a
 *                          run (harms only show in runs).
 *   CLEAN       (exit 0)   otherwise. Harm -> errno ("fenced") is a fix.
 * Cells whose profile rejected the spec (REJECTED) are not tested cells:
 * a cell REJECTED on either side goes to group "rejected", which neither
 * fails the diff nor makes it CANNOT_TELL.
 * Cells only in NEW are reported and never fail. */
#ifndef PMUCANARY_DIFF_H
#define PMUCANARY_DIFF_H

#include "outcome.h"
#include "results.h"

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>

/* X(ID, json name, title, what it means, fails the diff) */
#define DIFF_GROUP_TABLE(X)                                                           \
	X(ABI_REGRESSION, "abi_regression", "ABI regressions",                        \
	  "was OK, now an errno: an old binary that stopped working", true)           \
	X(HARM_REGRESSION, "harm_regression", "harm regressions",                     \
	  "now harms a guest or the host", true)                                      \
	X(FIXED, "fixed", "fixes", "harmed, now opens cleanly", false)                \
	X(FENCED, "fenced", "fenced", "harmed, now refused with an errno", false)     \
	X(NEW_CAPABILITY, "new_capability", "new capability",                        \
	  "was an errno, now OK", false)                                              \
	X(CHANGED_ERRNO, "changed_errno", "changed errno",                            \
	  "a different errno than before", false)                                     \
	X(STILL_HARMFUL, "still_harmful", "still harmful",                            \
	  "harmed before and still does", false)                                      \
	X(UNTESTED, "untested", "untested", "INFRA on one side: could not test", false) \
	X(ONLY_BASE, "only_base", "only in BASE", "NEW does not cover these cells", false) \
	X(ONLY_NEW, "only_new", "only in NEW", "new coverage", false)                 \
	X(REJECTED, "rejected", "rejected by a profile",                              \
	  "the profile's parser refused the spec on one side: no kernel verdict", false) \
	X(UNCHANGED, "unchanged", "unchanged", "same outcome", false)

#define DIFF_GROUP_ENUM(id, json, title, what, fails) DIFF_##id,
enum diff_group {
	DIFF_GROUP_TABLE(DIFF_GROUP_ENUM)
	DIFF_GROUP_COUNT
};
#undef DIFF_GROUP_ENUM

const char *diff_group_name(enum diff_group g);  /* "abi_regression" */
const char *diff_group_title(enum diff_group g); /* "ABI regressions" */
const char *diff_group_what(enum diff_group g);
bool diff_group_fails(enum diff_group g);
/* Group of a cell present on both sides. */
enum diff_group diff_classify(enum outcome base, enum outcome new);

enum diff_verdict {
	DIFF_VERDICT_CLEAN,
	DIFF_VERDICT_REGRESSION,
	DIFF_VERDICT_CANNOT_TELL,
	DIFF_VERDICT_COUNT
};

const char *diff_verdict_name(enum diff_verdict v); /* "CLEAN", ... */
int diff_verdict_exit_code(enum diff_verdict v);    /* 0, 1, 125 */

struct diff_side {
	char *name;          /* file name as given */
	char *kind;          /* "probe" | "run" */
	char *kernel;
	char *run_id;
	bool infra_verdict;  /* the run's own verdict is INFRA */
	unsigned int cells;  /* tested cells */
	unsigned int infra_cells;
	unsigned int rejected; /* cells the profile rejected */
};

struct diff_cell {
	char *profile;
	char *spec;
	enum outcome base;   /* OUTCOME_COUNT when absent */
	enum outcome new;
	int base_k, base_n, new_k, new_n;
	enum diff_group group;
	char *new_rule;      /* NEW's cell was judged by this proven rule, not
			      * armed alone (results_cell_rule); NULL else */
};

struct diff_result {
	struct diff_side base, new;
	GPtrArray *cells;    /* struct diff_cell *, by group then profile, spec */
	unsigned int count[DIFF_GROUP_COUNT];
	bool kinds_differ;
	/* NEW's proven rules whose text BASE has no rule for (its "rules"
	 * entries, owned references), and each one's line
	 * (results_rule_describe) */
	json_t *new_rules;
	GPtrArray *new_rule_lines;
};

/* Compares two result files read with results_read_json() (which rejects
 * bad JSON, another schema, unknown outcomes). Fails (-EINVAL, message
 * naming the file and the cell) when one (profile, spec) appears twice in
 * a file. A run's own verdict is its top-level "verdict" key (kept by the
 * reader in set->extra). */
int diff_compare(const struct result_set *base, const char *base_name,
		 const struct result_set *new, const char *new_name,
		 struct diff_result **out);
void diff_result_free(struct diff_result *res);
typedef struct diff_result diff_result;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(diff_result, diff_result_free)

enum diff_verdict diff_result_verdict(const struct diff_result *res);
/* The grouped report for people, NEW's new rules first; caller g_free()s. */
char *diff_result_to_text(const struct diff_result *res);
/* {"schema":"pmucanary-diff/1","base":{...},"new":{...},"verdict",
 *  "exit_code","new_rules":[NEW's "rules" entries BASE lacks],
 *  "counts":{group:n},"groups":{group:[cells]}}; a cell NEW's rule judged
 *  has "new_rule": its text. */
json_t *diff_result_to_json(const struct diff_result *res);

#endif
