/* The HTML report (report.h "html"), the writer report.c's table calls for
 * REPORT_HTML. */
#ifndef PMUCANARY_HEATMAP_H
#define PMUCANARY_HEATMAP_H

#include "judge.h"

int heatmap_render(const struct report_ctx *ctx, const struct result_set *const *sets,
		   size_t n, GString *out);

#endif
