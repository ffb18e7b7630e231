/* pmucanary diff BASE NEW: compare two result files; the exit code is the
 * `git bisect run` contract (0 good, 1 bad, 125 skip; 2 bad input). */
#include "commands.h"
#include "diff.h"
#include "log.h"
#include "results.h"

#include <stdio.h>

int cmd_diff(int argc, char **argv)
{
	gboolean json = FALSE;
	GOptionEntry entries[] = {
		{ "json", 'j', 0, G_OPTION_ARG_NONE, &json,
		  "print the grouped result as JSON (for machines)", NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("BASE NEW");
	g_autoptr(diff_result) res = NULL;
	g_autoptr(result_set) base = NULL;
	g_autoptr(result_set) new = NULL;
	g_auto(cli_reports) reports = { 0 };

	g_option_context_set_summary(ctx,
		"Compares two result files cell by cell, keyed by (profile, spec).\n"
		"Exit: 0 no regression, 1 regression (OK -> anything else, or newly\n"
		"harmful), 125 cannot tell (INFRA, NEW lacks cells BASE had, or a\n"
		"report could not be written), 2 bad input. Harm turning into an\n"
		"errno (fenced) does not fail.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_reports_add_entries(ctx, &reports);
	if (!cli_parse(ctx, "diff", &argc, &argv))
		return EXIT_USAGE;
	if (argc != 3) {
		fprintf(stderr, "pmucanary diff: need BASE and NEW (see pmucanary diff --help)\n");
		return EXIT_USAGE;
	}
	if (!cli_reports_check("diff", &reports))
		return EXIT_USAGE;
	if (results_read_json(argv[1], &base) < 0 || results_read_json(argv[2], &new) < 0 ||
	    diff_compare(base, argv[1], new, argv[2], &res) < 0) {
		fprintf(stderr, "pmucanary diff: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	/* The CI files say the same as the exit code: NEW's cells, with BASE
	 * as the baseline whose regressions fail. */
	/* A report that cannot be written is no verdict: 125, so that `git
	 * bisect run` skips rather than marks the commit bad (a path that is
	 * a directory was refused above, before reading anything, with 2). */
	if (!cli_reports_write("diff", &reports, new, base, argv[1]))
		return EXIT_INFRA;

	if (json) {
		json_t *j = diff_result_to_json(res);
		json_dumpf(j, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(j);
	} else {
		g_autofree char *text = diff_result_to_text(res);
		fputs(text, stdout);
	}
	return diff_verdict_exit_code(diff_result_verdict(res));
}
