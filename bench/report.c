/* Report writers at scale: reads result files once, then renders each format
 * (report_render, the same call `pmucanary matrix --html/--junit/--kcidb`
 * makes) and prints, per format, the wall time of the best of REPEAT rounds
 * and the size. With --out DIR it also writes each rendering there
 * (DIR/report.html, junit.xml, kcidb.json).
 *   build/bench/report [--repeat N] [--out DIR] RESULT...
 * Prints "FORMAT_s SECONDS" (wall), "FORMAT_cpu_s SECONDS" and "FORMAT_bytes N" lines, and
 * "cells N" (the input cells) and "FORMAT_cases N" (testcases / tests written,
 * which must equal the cells). */
#include "log.h"
#include "report.h"
#include "results.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time too: on a shared machine the wall time says more about the
 * neighbours than about the writer. */
static double cpu_s(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static unsigned long count(const char *hay, const char *needle)
{
	unsigned long n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

int main(int argc, char **argv)
{
	int repeat = 1;
	const char *dir = NULL;
	g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func((GDestroyNotify)result_set_free);
	static const struct {
		enum report_format f;
		const char *file, *unit;
	} formats[] = {
		{ REPORT_HTML, "report.html", NULL },
		{ REPORT_JUNIT, "junit.xml", "<testcase " },
		{ REPORT_KCIDB, "kcidb.json", "\"build_id\": " },
	};
	unsigned long cells = 0;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			dir = argv[++i];
		else
			break;
	}
	if (i >= argc || repeat < 1) {
		fprintf(stderr, "usage: report [--repeat N] [--out DIR] RESULT...\n");
		return 2;
	}
	for (double t = now_s(); i < argc; i++) {
		struct result_set *set = NULL;

		if (results_read_json(argv[i], &set) < 0) {
			fprintf(stderr, "report: %s\n", pc_errmsg());
			return 2;
		}
		cells += set->cells->len;
		g_ptr_array_add(sets, set);
		if (i == argc - 1)
			printf("read_s %.3f\n", now_s() - t);
	}
	printf("cells %lu\n", cells);
	for (size_t f = 0; f < G_N_ELEMENTS(formats); f++) {
		const char *name = report_format_name(formats[f].f);
		double best = 1e9, best_cpu = 1e9;
		g_autoptr(GString) out = NULL;

		for (int r = 0; r < repeat; r++) {
			double t = now_s(), c = cpu_s();

			if (out)
				g_string_free(out, TRUE);
			out = g_string_new(NULL);
			if (report_render(formats[f].f, (const struct result_set *const *)sets->pdata,
					  sets->len, NULL, out) < 0) {
				fprintf(stderr, "report: %s: %s\n", name, pc_errmsg());
				return 1;
			}
			if (now_s() - t < best)
				best = now_s() - t;
			if (cpu_s() - c < best_cpu)
				best_cpu = cpu_s() - c;
		}
		printf("%s_s %.3f\n%s_cpu_s %.3f\n%s_bytes %zu\n", name, best, name, best_cpu, name,
		       out->len);
		if (formats[f].unit)
			printf("%s_cases %lu\n", name, count(out->str, formats[f].unit));
		if (dir) {
			g_autofree char *path = g_build_filename(dir, formats[f].file, NULL);
			g_autoptr(GError) err = NULL;

			if (!g_file_set_contents(path, out->str, out->len, &err)) {
				fprintf(stderr, "report: %s\n", err->message);
				return 1;
			}
		}
	}
	return 0;
}
