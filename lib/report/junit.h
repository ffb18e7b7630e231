/* The JUnit XML writer (report.h "junit"), called from report.c's table. */
#ifndef PMUCANARY_JUNIT_H
#define PMUCANARY_JUNIT_H

#include "judge.h"

#include <glib.h>
#include <stddef.h>

int junit_render(const struct report_ctx *ctx, const struct result_set *const *sets,
		  size_t n, GString *out);

#endif
