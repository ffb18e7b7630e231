/* The options a report is written with: what report_render() takes and
 * every writer reads (through struct report_ctx, judge.h). Its own header,
 * at the bottom of report/, so that the writers need not include report.h,
 * whose table calls them. */
#ifndef PMUCANARY_REPORT_OPTS_H
#define PMUCANARY_REPORT_OPTS_H

#include <stdbool.h>

struct errata;
struct result_set;

struct report_options {
	const char *const *names;        /* names[i] for sets[i]; NULL: run ids */
	const struct errata *errata;     /* known errata; NULL: none */
	const struct result_set *base;   /* baseline: regressions fail; NULL: none */
	const char *base_name;
	const char *origin;              /* KCIDB origin, [a-z0-9_]+; NULL: "pmucanary" */
	const char *const *repro_dirs;   /* repro_dirs[i]: where sets[i]'s reproducers
					  * are (repro_cell_auto cells), relative to
					  * the report; NULL or a NULL entry: none */
	bool color;                      /* text: ANSI colours */
	int width;                       /* text: columns; 0: 120 */
	bool all;                        /* text: every cell (matrix_format_text_all) */
};

#endif
