/* pmucanary bisect --tree LINUX --good REV --bad REV [SCENARIO]: the first
 * bad commit, each candidate built and tested in a lab (lib/lab/bisect.h). */
#include "bisect.h"
#include "commands.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void show_progress(void *ctx, const struct bisect_progress *p)
{
	char eta[32] = "?";

	(void)ctx;
	if (p->eta_s >= 0)
		snprintf(eta, sizeof(eta), "%d:%02d", (int)p->eta_s / 60, (int)p->eta_s % 60);
	fprintf(stderr, "\r\033[K[%d:%02d] step %u: %s %.50s: %s, about %u step%s left  ETA %s",
		(int)p->elapsed_s / 60, (int)p->elapsed_s % 60, p->step, p->commit,
		p->subject ? p->subject : "", p->what, p->left, p->left == 1 ? "" : "s", eta);
	fflush(stderr);
}

int cmd_bisect(int argc, char **argv)
{
	g_autofree char *tree = NULL, *good = NULL, *bad = NULL, *out = NULL, *config = NULL;
	g_autofree char *only = NULL, *results = NULL, *jobs_opt = NULL, *boot_timeout_opt = NULL;
	g_autofree char *scenario = NULL;
	g_auto(GStrv) cells = NULL;
	gboolean tcg = FALSE, resume = FALSE;
	int jobs = 0;
	double boot_timeout_s = 0;
	GOptionEntry entries[] = {
		{ "tree", 0, 0, G_OPTION_ARG_FILENAME, &tree,
		  "the kernel's git work tree (its checkout moves; restored at the end)", "DIR" },
		{ "good", 0, 0, G_OPTION_ARG_STRING, &good, "a commit the scenario passes on", "REV" },
		{ "bad", 0, 0, G_OPTION_ARG_STRING, &bad, "a later commit it fails on", "REV" },
		{ "out", 0, 0, G_OPTION_ARG_FILENAME, &out,
		  "build out of the tree, make O=DIR (default: in the tree)", "DIR" },
		{ "config", 0, 0, G_OPTION_ARG_FILENAME, &config,
		  "the .config of every candidate (then make olddefconfig; default: the "
		  "tree's, or O='s, as it is)", "FILE" },
		{ "jobs", 'j', 0, G_OPTION_ARG_STRING, &jobs_opt, "make -jN, 1..256 (default: "
		  "online CPUs)", "N" },
		{ "only", 0, 0, G_OPTION_ARG_FILENAME, &only,
		  "test just the cells RESULT marks harmed or failed with an errno (lab --only): "
		  "one batch per cell", "RESULT" },
		{ "cell", 0, 0, G_OPTION_ARG_STRING_ARRAY, &cells,
		  "with --only: just this cell (repeatable)", "PROFILE:SPEC" },
		{ "results", 0, 0, G_OPTION_ARG_FILENAME, &results,
		  "where bisect-<id>/ goes (default: results)", "DIR" },
		{ "tcg", 0, 0, G_OPTION_ARG_NONE, &tcg, "lab hosts under TCG", NULL },
		{ "boot-timeout", 0, 0, G_OPTION_ARG_STRING, &boot_timeout_opt,
		  "a lab host's first heartbeat, 1..3600 s (lab --boot-timeout)", "SECONDS" },
		{ "resume", 0, 0, G_OPTION_ARG_NONE, &resume,
		  "continue the bisection the tree is in (after a kill): the commit checked "
		  "out is tested again", NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("[SCENARIO]");
	struct bisect_opts o = { 0 };
	struct bisect_report rep = { 0 };
	int e;

	g_option_context_set_summary(ctx,
		"Finds the first bad commit of a kernel tree: git bisect, each candidate built\n"
		"(make bzImage, incremental) and booted as a lab host that runs SCENARIO (or\n"
		"just --only RESULT's red cells). The lab's exit decides: 0 good, 1 bad,\n"
		"125 (its lab host did not boot, INFRA) or a failed build: skip, never bad.\n"
		"The first bad commit and its parent are then tested once more. Default\n"
		"SCENARIO: " DEFAULT_SCENARIO ".");
	g_option_context_set_description(ctx,
		"Exit: 1 the first bad commit was found and verified (bad again, its parent\n"
		"good); 125 none could be named (only skipped commits left, or the re-test\n"
		"disagreed); 2 bad input; 130 interrupted (--resume continues).\n"
		"Output: RESULTS/bisect-<id>/{bisect.json, bisect.log, step-N-SHA/}.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!cli_parse(ctx, "bisect", &argc, &argv))
		return EXIT_USAGE;
	if (argc > 2) {
		fprintf(stderr, "pmucanary bisect: one SCENARIO at most\n");
		return EXIT_USAGE;
	}
	if (!tree || !good || !bad) {
		fprintf(stderr, "pmucanary bisect: give --tree, --good and --bad (see pmucanary "
			"bisect --help)\n");
		return EXIT_USAGE;
	}
	if (cells && !only) {
		fprintf(stderr, "pmucanary bisect: --cell without --only\n");
		return EXIT_USAGE;
	}
	if (!cli_bounded_int("bisect", "jobs", jobs_opt, 1, 256, &jobs) ||
	    !cli_bounded_seconds("bisect", "boot-timeout", boot_timeout_opt, 1, 3600,
				 &boot_timeout_s))
		return EXIT_USAGE;
	scenario = argc == 2 ? g_strdup(argv[1]) : cli_default_scenario();
	o.tree = tree;
	o.good = good;
	o.bad = bad;
	o.out = out;
	o.config = config;
	o.jobs = (unsigned int)jobs;
	o.scenario = scenario;
	o.only_result = only;
	o.only_cells = (const char *const *)cells;
	o.only_cell_count = cells ? g_strv_length(cells) : 0;
	o.results_dir = results;
	o.tcg = tcg;
	o.resume = resume;
	o.boot_timeout_ms = (unsigned int)(boot_timeout_s * 1000 + 0.5);
	if (cli_want_progress())
		o.progress = show_progress;
	e = bisect_run(&o, &rep);
	if (o.progress)
		fputc('\n', stderr);
	if (e) {
		fprintf(stderr, "pmucanary bisect: %s\n", pc_errmsg());
		bisect_report_clear(&rep);
		return e == -EINVAL ? EXIT_USAGE : e == -EINTR ? 130 : EXIT_INFRA;
	}
	fputs(rep.summary ? rep.summary : "", stdout);
	e = rep.exit_code;
	bisect_report_clear(&rep);
	return e;
}
