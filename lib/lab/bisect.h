/* `pmucanary bisect`: the first bad commit of a kernel tree, found by
 * building each candidate and running the scenario (or just a result
 * file's red cells, lab --only) on it in a lab (lab.h) (issue 26).
 *
 * The driver keeps its state where git keeps a bisection (the tree's
 * refs/bisect/ and BISECT_LOG): `git bisect start BAD GOOD`, then for the
 * commit git checks out: build it (make bzImage in the tree, or O=DIR),
 * test it in a lab of one kernel, and mark it:
 *   the lab's exit 0 (clean)          good
 *   exit 1 (harm, or a regression)    bad
 *   exit 125 (could not test: its lab host did not boot, INFRA), or the
 *   build failed                      skip: never bad
 * until git names the first bad commit. That commit and its parent are
 * then tested once more; only when the commit is bad again and the parent
 * good is it reported (else: unreliable, exit 125). A killed bisect resumes
 * (--resume) at the commit git has checked out: the one whose test did
 * not finish. The tree is left as it was found (git bisect reset).
 *
 * Layout under RESULTS/bisect-<id>/: bisect.json (the steps, the answer),
 * bisect.log (git's), step-N/ (each step's build log and lab). */
#ifndef PMUCANARY_BISECT_H
#define PMUCANARY_BISECT_H

#include <glib.h>
#include <stdbool.h>

struct bisect_progress {
	unsigned int step;          /* 1-based */
	unsigned int left;          /* git's "roughly N steps" after this one */
	const char *commit;         /* 12 hex */
	const char *subject;
	const char *what;           /* "build", "lab", "verify" */
	double elapsed_s;
	double eta_s;               /* < 0: unknown */
};

struct bisect_opts {
	const char *tree;           /* a git work tree of Linux */
	const char *good, *bad;     /* revisions */
	const char *out;            /* O= build directory; NULL: in the tree */
	const char *config;         /* copied to .config, then olddefconfig, per
				     * step; NULL: the tree's (or O='s) .config */
	unsigned int jobs;          /* make -j; 0: online CPUs */
	const char *scenario;       /* the lab's */
	const char *only_result;    /* lab --only */
	const char *const *only_cells;
	size_t only_cell_count;
	const char *results_dir;    /* NULL: "results" */
	bool tcg;
	bool resume;                /* continue the bisection the tree is in */
	unsigned int boot_timeout_ms;
	void (*progress)(void *ctx, const struct bisect_progress *p);
	void *progress_ctx;
};

struct bisect_report {
	char *dir;                  /* RESULTS/bisect-<id> */
	char *first_bad;            /* full hash, NULL when none was found */
	char *subject;
	char *diffstat;
	bool verified;
	unsigned int steps, builds, skips;
	int exit_code;              /* 1 first bad found and verified, 125 not */
	char *summary;
};
void bisect_report_clear(struct bisect_report *r);

/* 0 with rep filled (exit_code 1 or 125); -EINVAL bad input (not a git
 * tree, unknown revisions, good not an ancestor of bad, a bisection under
 * way without --resume or none with it); -EINTR a signal (the bisection
 * stays for --resume); other -errno. */
int bisect_run(const struct bisect_opts *o, struct bisect_report *rep);

/* Exposed for tests: git's "(roughly N steps)" of `git bisect` output;
 * -1 when the text has none. And whether it says the bisection is done:
 * its first bad commit (g_free) or NULL. */
int bisect_parse_steps(const char *git_out);
char *bisect_parse_first_bad(const char *git_out);

#endif
