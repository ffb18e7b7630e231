/* What a report writer sees (report.c's table calls them): the merged
 * matrix, the options, the baseline, and one judged cell. Internal to lib/:
 * report.c and the writers split out of it (heatmap.c) share it. */
#ifndef PMUCANARY_REPORT_WRITER_H
#define PMUCANARY_REPORT_WRITER_H

#include "diff.h"
#include "errata.h"
#include "matrix.h"
#include "report.h"

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

struct report_ctx {
	const struct matrix *m;
	const struct report_options *opts;
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

#endif
