/* The KCIDB v5 JSON writer (report.h "kcidb"), called from report.c's table. */
#ifndef PMUCANARY_KCIDB_H
#define PMUCANARY_KCIDB_H

#include "judge.h"

#include <glib.h>
#include <stddef.h>

int kcidb_render(const struct report_ctx *ctx, const struct result_set *const *sets,
		  size_t n, GString *out);

/* A KCIDB test path component: runs of characters outside [A-Za-z0-9_-]
 * become one '_'; caller g_free()s. */
char *report_kcidb_component(const char *s);

#endif
