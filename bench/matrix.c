/* bench/matrix RESULT...: where `pmucanary matrix` spends its time and
 * memory: reading the files (results_read_json, not the matrix's), then
 * matrix_build, the grouped default view and the --all view, each with its
 * wall time and the process's peak RSS after it. */
#include "log.h"
#include "matrix.h"
#include "results.h"

#include <stdio.h>
#include <string.h>

static long peak_rss_kb(void)
{
	g_autofree char *status = NULL;
	const char *p;

	if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL))
		return -1;
	p = strstr(status, "VmHWM:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

static void stage(const char *name, gint64 start)
{
	printf("%-14s %8.3f s  peak RSS %7ld MB\n", name,
	       (g_get_monotonic_time() - start) / 1e6, peak_rss_kb() / 1024);
}

int main(int argc, char **argv)
{
	g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func((GDestroyNotify)result_set_free);
	g_autoptr(matrix) m = NULL;
	g_autoptr(GString) view = g_string_new(NULL);
	g_autoptr(GString) all = g_string_new(NULL);
	gint64 t;

	if (argc < 2) {
		fprintf(stderr, "usage: %s RESULT...\n", argv[0]);
		return 2;
	}
	stage("start", g_get_monotonic_time());
	t = g_get_monotonic_time();
	for (int i = 1; i < argc; i++) {
		struct result_set *set = NULL;

		if (results_read_json(argv[i], &set) < 0) {
			fprintf(stderr, "%s\n", pc_errmsg());
			return 2;
		}
		g_ptr_array_add(sets, set);
	}
	stage("read", t);
	t = g_get_monotonic_time();
	if (matrix_build((const struct result_set *const *)sets->pdata,
			 (const char *const *)argv + 1, sets->len, NULL, &m) < 0) {
		fprintf(stderr, "%s\n", pc_errmsg());
		return 2;
	}
	stage("matrix_build", t);
	t = g_get_monotonic_time();
	matrix_format_text(m, false, 120, view);
	stage("default view", t);
	t = g_get_monotonic_time();
	matrix_format_text_all(m, false, 120, all);
	stage("--all view", t);
	printf("default view %zu bytes, --all %zu bytes\n", view->len, all->len);
	return 0;
}
