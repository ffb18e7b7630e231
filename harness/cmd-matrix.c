/* pmucanary matrix RESULT...: merge result files from many kernels, hosts
 * and CPU steppings into one matrix; optional HTML, JUnit and KCIDB files. */
#include "commands.h"
#include "errata.h"
#include "log.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int cmd_matrix(int argc, char **argv)
{
	g_autofree char *html = NULL, *junit = NULL, *kcidb = NULL, *errata_path = NULL;
	g_autofree char *baseline = NULL, *origin = NULL, *color = NULL;
	GOptionEntry entries[] = {
		{ "html", 0, 0, G_OPTION_ARG_FILENAME, &html,
		  "write a self-contained HTML heatmap to FILE", "FILE" },
		{ "junit", 0, 0, G_OPTION_ARG_FILENAME, &junit,
		  "write JUnit XML (one testcase per cell) to FILE", "FILE" },
		{ "kcidb", 0, 0, G_OPTION_ARG_FILENAME, &kcidb,
		  "write KCIDB v5 JSON to FILE", "FILE" },
		{ "errata", 0, 0, G_OPTION_ARG_FILENAME, &errata_path,
		  "known errata (e.g. scenarios/errata.ini): matching harm is not a failure",
		  "FILE" },
		{ "baseline", 0, 0, G_OPTION_ARG_FILENAME, &baseline,
		  "a result file to compare against: regressions fail", "FILE" },
		{ "origin", 0, 0, G_OPTION_ARG_STRING, &origin,
		  "KCIDB origin name ([a-z0-9_]+, default pmucanary)", "NAME" },
		{ "color", 0, 0, G_OPTION_ARG_STRING, &color,
		  "colour harm on the terminal: auto (default), always, never", "WHEN" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("RESULT...");
	g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func((GDestroyNotify)result_set_free);
	g_autoptr(errata_set) errata = NULL;
	g_autoptr(result_set) base = NULL;
	g_autoptr(GString) text = g_string_new(NULL);
	struct report_options opts = { 0 };
	struct report_summary sum;

	g_option_context_set_summary(ctx,
		"Merges result files (run.json / probe.json) from many kernels, hosts and\n"
		"CPU steppings: rows kernel x profile grouped by CPU signature, columns\n"
		"specs. Exit: 0 no harm, 1 harm that no known erratum explains (or, with\n"
		"--baseline, a regression), 2 bad input or an output that could not be\n"
		"written, 125 every cell is INFRA.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!cli_parse(ctx, "matrix", &argc, &argv))
		return EXIT_USAGE;
	if (argc < 2) {
		fprintf(stderr, "pmucanary matrix: need at least one result file "
				"(see pmucanary matrix --help)\n");
		return EXIT_USAGE;
	}
	if (color && strcmp(color, "auto") && strcmp(color, "always") && strcmp(color, "never")) {
		fprintf(stderr, "pmucanary matrix: --color is auto, always or never, not '%s'\n",
			color);
		return EXIT_USAGE;
	}
	if (errata_path && errata_load(errata_path, &errata) < 0) {
		fprintf(stderr, "pmucanary matrix: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	if (baseline && results_read_json(baseline, &base) < 0) {
		fprintf(stderr, "pmucanary matrix: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++) {
		struct result_set *set = NULL;

		if (results_read_json(argv[i], &set) < 0) {
			fprintf(stderr, "pmucanary matrix: %s\n", pc_errmsg());
			return EXIT_USAGE;
		}
		g_ptr_array_add(sets, set);
	}

	opts.names = (const char *const *)argv + 1;
	opts.errata = errata;
	opts.base = base;
	opts.base_name = baseline;
	opts.origin = origin;
	opts.color = color ? !strcmp(color, "always") :
		     (isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
	opts.width = 120;

	/* After parsing: the option entries fill these pointers. */
	const struct {
		enum report_format fmt;
		const char *path;
	} files[] = { { REPORT_HTML, html }, { REPORT_JUNIT, junit }, { REPORT_KCIDB, kcidb } };

	for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
		if (!files[i].path)
			continue;
		if (report_write(files[i].fmt, (const struct result_set *const *)sets->pdata,
				 sets->len, &opts, files[i].path) < 0) {
			fprintf(stderr, "pmucanary matrix: --%s: %s\n",
				report_format_name(files[i].fmt), pc_errmsg());
			return EXIT_USAGE;
		}
		pc_info("wrote %s report %s", report_format_name(files[i].fmt), files[i].path);
	}
	if (report_render(REPORT_TEXT, (const struct result_set *const *)sets->pdata, sets->len,
			  &opts, text) < 0 ||
	    report_summarize((const struct result_set *const *)sets->pdata, sets->len, &opts,
			     &sum) < 0) {
		fprintf(stderr, "pmucanary matrix: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	fputs(text->str, stdout);
	if (base)
		printf("%u regression%s against the baseline %s\n", sum.regressions,
		       sum.regressions == 1 ? "" : "s", baseline);
	if (sum.harm || sum.regressions)
		return EXIT_HARM;
	/* Nothing but INFRA: no kernel verdict at all. */
	return sum.cells && sum.infra == sum.cells ? EXIT_INFRA : EXIT_CLEAN;
}
