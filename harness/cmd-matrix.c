/* pmucanary matrix RESULT...: merge result files from many kernels, hosts
 * and CPU steppings into one matrix; optional HTML, JUnit and KCIDB files. */
#include "commands.h"
#include "errata.h"
#include "log.h"
#include "matrix.h"
#include "report.h"
#include "textesc.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* lib's message, which may quote a file (a spec, an outcome name): escaped
 * before it reaches the terminal. */
static void matrix_error(const char *option)
{
	g_autofree char *msg = text_escape(pc_errmsg());

	if (option)
		fprintf(stderr, "pmucanary matrix: --%s: %s\n", option, msg);
	else
		fprintf(stderr, "pmucanary matrix: %s\n", msg);
}

int cmd_matrix(int argc, char **argv)
{
	g_autofree char *html = NULL, *junit = NULL, *kcidb = NULL, *errata_path = NULL;
	g_autofree char *baseline = NULL, *origin = NULL, *color = NULL;
	g_autofree char *f_event = NULL, *f_profile = NULL, *f_kernel = NULL, *f_outcome = NULL;
	gboolean all = FALSE;
	GOptionEntry entries[] = {
		{ "all", 0, 0, G_OPTION_ARG_NONE, &all,
		  "print every cell (one column per spec) instead of the grouped view", NULL },
		{ "event", 0, 0, G_OPTION_ARG_STRING, &f_event,
		  "show only cells whose event or spec matches GLOB (cycles, 'cpu-*', cycles:pp)",
		  "GLOB" },
		{ "profile", 0, 0, G_OPTION_ARG_STRING, &f_profile,
		  "show only cells of profiles matching GLOB", "GLOB" },
		{ "kernel", 0, 0, G_OPTION_ARG_STRING, &f_kernel,
		  "show only cells of kernels matching GLOB", "GLOB" },
		{ "outcome", 0, 0, G_OPTION_ARG_STRING, &f_outcome,
		  "show only cells whose outcome matches GLOB (EOPNOTSUPP, 'GUEST_*', REJECTED) "
		  "or class (ok, errno, harm, infra)", "GLOB" },
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
	g_autoptr(matrix) shown = NULL;
	GPtrArray *views = NULL;
	struct matrix_filter filter = { 0 };
	struct report_options opts = { 0 };
	struct report_summary sum;

	g_option_context_set_summary(ctx,
		"Merges result files (run.json / probe.json) from many kernels, hosts and\n"
		"CPU steppings: rows kernel x profile grouped by CPU signature. The default\n"
		"view shows first what differs between kernels (by name), every harm,\n"
		"known erratum and INFRA, then a grid of the column groups (event x modifier\n"
		"class) whose rows differ, then the groups where every row agrees as counts.\n"
		"--all prints every cell. Filters take a shell glob or an exact name; they\n"
		"narrow what is printed, not the exit code, the HTML, JUnit or KCIDB files.\n"
		"Exit: 0 no harm, 1 harm that no known erratum explains (or, with\n"
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
	filter = (struct matrix_filter){ f_event, f_profile, f_kernel, f_outcome };
	{
		const struct { const char *option, *value; } globs[] = {
			{ "event", f_event }, { "profile", f_profile },
			{ "kernel", f_kernel }, { "outcome", f_outcome },
		};

		for (size_t i = 0; i < G_N_ELEMENTS(globs); i++)
			if (globs[i].value && !*globs[i].value) {
				fprintf(stderr, "pmucanary matrix: --%s needs a name or a glob, "
					"not ''\n", globs[i].option);
				return EXIT_USAGE;
			}
	}
	if (matrix_filter_check(&filter) < 0) {
		matrix_error(NULL);
		return EXIT_USAGE;
	}
	if (errata_path && errata_load(errata_path, &errata) < 0) {
		matrix_error(NULL);
		return EXIT_USAGE;
	}
	if (baseline && results_read_json(baseline, &base) < 0) {
		matrix_error(NULL);
		return EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++) {
		struct result_set *set = NULL;

		if (results_read_json(argv[i], &set) < 0) {
			matrix_error(NULL);
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
			matrix_error(report_format_name(files[i].fmt));
			return EXIT_USAGE;
		}
		pc_info("wrote %s report %s", report_format_name(files[i].fmt), files[i].path);
	}
	/* The terminal view: filtered, grouped or every cell. The files above
	 * and the exit code below always hold every cell. */
	if (matrix_filter_sets((const struct result_set *const *)sets->pdata, sets->len, &filter,
			       &views) < 0) {
		matrix_error(NULL);
		return EXIT_USAGE;
	}
	if (matrix_build((const struct result_set *const *)views->pdata, opts.names, views->len,
			 errata, &shown) < 0) {
		matrix_views_free(views);
		matrix_error(NULL);
		return EXIT_USAGE;
	}
	if (all)
		matrix_format_text_all(shown, opts.color, opts.width, text);
	else
		matrix_format_text(shown, opts.color, opts.width, text);
	if (base) {
		/* The regression list is report.c's text writer's; take that part. */
		g_autoptr(GString) rep = g_string_new(NULL);
		const char *tail;

		if (report_render(REPORT_TEXT, (const struct result_set *const *)views->pdata,
				  views->len, &opts, rep) < 0) {
			matrix_views_free(views);
			matrix_error(NULL);
			return EXIT_USAGE;
		}
		tail = strstr(rep->str, "\nregressions against the baseline ");
		if (tail)
			text_escape_append(text, tail, TEXT_KEEP_NEWLINE);
	}
	matrix_views_free(views);
	if (!base && !f_event && !f_profile && !f_kernel && !f_outcome) {
		/* The view holds every cell: judge from it rather than build the
		 * matrix of the full sweep a second time. */
		memset(&sum, 0, sizeof(sum));
		for (int o = 0; o < OUTCOME_COUNT; o++)
			sum.cells += shown->count[o];
		sum.harm = shown->harm;
		sum.known = shown->known_errata;
		sum.infra = shown->infra;
	} else if (report_summarize((const struct result_set *const *)sets->pdata, sets->len,
				    &opts, &sum) < 0) {
		matrix_error(NULL);
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
