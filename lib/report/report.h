/* Report writers: one static table (report.c `report_writers[]`) of the
 * formats a set of result files can be written in, usable by run, probe,
 * diff and matrix.
 *
 *   text   the terminal matrix (matrix_format_text; opts->all: _all); a
 *          run's matrix.txt and `probe` are this over their one set
 *   html   a self-contained page (inline CSS and JS, no network; lib/report/heatmap.c):
 *          the data once as JSON, drawn by the page's own script. Findings
 *          on top (harm, regressions, known errata, specs OK in one row and
 *          not in another), a heatmap per CPU signature (rows kernel x
 *          profile, tiles event x modifier class coloured by the worst
 *          outcome class and harm kind, with counts and a tooltip), the
 *          cells of a clicked tile with attr, tries and evidence, a filter,
 *          the view in the URL fragment; the inputs' limitation lines
 *   junit  one <testsuite> per CPU signature, one <testcase> per cell:
 *          classname "KERNEL.PROFILE", name SPEC. Harm is a <failure>;
 *          with a baseline, a regression (diff_classify) is a <failure>;
 *          INFRA is an <error>; a harm a known erratum explains is
 *          <skipped message="known erratum ID ...">; OK, errno and a spec
 *          the profile rejected pass. <system-out> holds the outcome,
 *          k/n, attr, tries and evidence.
 *   kcidb  KCIDB v5.0 JSON (kernelci/kcidb-io schema v05_00):
 *          {"version":{"major":5,"minor":0},"checkouts","builds","tests"}.
 *          One checkout per host kernel release ("ORIGIN:kernel-REL"), one
 *          build per input file ("ORIGIN:RUN_ID"), one test per cell of
 *          each input ("ORIGIN:RUN_ID:PROFILE:SPEC"), path
 *          "pmucanary.PROFILE.EVENT[.MODIFIERS]" with characters outside
 *          [A-Za-z0-9_-] turned into '_'. Status: OK and errno cells PASS
 *          (the kernel answered; the errno is in misc.outcome/misc.errno),
 *          harm FAIL, harm explained by a known erratum FAIL with
 *          "waived": true, a regression against the baseline FAIL, INFRA
 *          ERROR (never FAIL: no kernel verdict), a spec the profile
 *          rejected SKIP. Evidence goes to log_excerpt (<= 16384 bytes).
 *          No property is ever null (KCIDB forbids it). */
#ifndef PMUCANARY_REPORT_H
#define PMUCANARY_REPORT_H

#include "errata.h"
#include "report_opts.h"
#include "results.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

enum report_format {
	REPORT_TEXT,
	REPORT_HTML,
	REPORT_JUNIT,
	REPORT_KCIDB,
	REPORT_FORMAT_COUNT
};

const char *report_format_name(enum report_format f);
/* REPORT_FORMAT_COUNT when name is not a format. */
enum report_format report_format_from_name(const char *name);

/* Renders sets in format f into out. Fails (-EINVAL) with no sets or a bad
 * origin. opts may be NULL. */
int report_render(enum report_format f, const struct result_set *const *sets, size_t n,
		  const struct report_options *opts, GString *out);
/* Renders and writes path through outfile_write(): a regular file atomically,
 * a device or FIFO in place; a failed write fails with a message naming it. */
int report_write(enum report_format f, const struct result_set *const *sets, size_t n,
		 const struct report_options *opts, const char *path);

/* What a CI gate needs: cells, harm no erratum explains, harm a known
 * erratum explains, regressions against the baseline (not harm), INFRA. */
struct report_summary {
	unsigned int cells, harm, known, regressions, infra;
};

int report_summarize(const struct result_set *const *sets, size_t n,
		     const struct report_options *opts, struct report_summary *out);

#endif
