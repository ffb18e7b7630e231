/* What every report writer shares, below them all: the context a writer is
 * given, the judging of one cell (harm, known erratum, rejected, regression
 * against a baseline, INFRA, pass) and the HTML/XML escaping. report.c
 * (text, JUnit, KCIDB, the writer table) and heatmap.c (HTML) use it; it
 * uses neither. */
#ifndef PMUCANARY_JUDGE_H
#define PMUCANARY_JUDGE_H

#include "diff.h"
#include "errata.h"
#include "matrix.h"
#include "report_opts.h"
#include "results.h"

#include <glib.h>
#include <stdbool.h>


enum cell_verdict {
	VERDICT_PASS,
	VERDICT_REJECTED,
	VERDICT_KNOWN,
	VERDICT_REGRESSION,
	VERDICT_HARM,
	VERDICT_INFRA,
	VERDICT_ABSENT,
	VERDICT_COUNT
};

const char *report_verdict_name(enum cell_verdict v);

/* What a writer is given: the merged matrix, its options (the judge does
 * not read them) and the baseline the judge compares with. */
struct report_ctx {
	const struct matrix *m;
	const struct report_options *opts;
	const struct result_set *base_set;  /* NULL: no baseline */
	const char *base_name;              /* its name; NULL: its run id */
	GHashTable *base;          /* results_cell_key() -> const struct cell * */
};

struct judged {
	const struct cell *cell;
	const struct matrix_source *src;
	const struct erratum *erratum;
	const struct cell *base;   /* NULL: no baseline cell */
	enum diff_group group;     /* valid when base */
	enum cell_verdict verdict;
	bool disagree;
	unsigned int inputs;
};

/* Judges one cell of input src: harm, known erratum, rejected, regression
 * against the baseline, INFRA or pass. */
void report_judge(const struct report_ctx *ctx, const struct cell *cell,
		  const struct matrix_source *src, const struct erratum *e, struct judged *j);
void report_judge_mc(const struct report_ctx *ctx, const struct matrix_cell *mc,
		     struct judged *j);
/* Everything a person wants to know about one cell, as plain lines;
 * caller g_free()s. */
char *report_judged_describe(const struct report_ctx *ctx, const struct judged *j);

/* Escaping: HTML text/attributes (& < > " ' and invalid UTF-8) and XML 1.0
 * (the same, plus control characters XML cannot carry, written as "\xNN"). */
void report_escape_html(GString *out, const char *s);
void report_escape_xml(GString *out, const char *s);

#endif
