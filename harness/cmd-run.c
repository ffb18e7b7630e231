/* pmucanary run [SCENARIO]: the crash sweep (see lib/run/runner.h). */
#include "commands.h"
#include "lab.h"
#include "log.h"
#include "only.h"
#include "results.h"
#include "runner.h"
#include "scenario.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


static char *keys_help(void)
{
	GString *s = g_string_new("Scenario keys (INI; every key optional) and defaults:\n");
	const char *section = "";

	for (size_t i = 0; i < scenario_key_count(); i++) {
		const struct scenario_key_info *k = scenario_key_at(i);

		if (strcmp(section, k->section))
			g_string_append_printf(s, "  [%s]\n", section = k->section);
		g_string_append_printf(s, "    %-18s %-10s %s\n", k->key,
				       k->default_text[0] ? k->default_text : "\"\"", k->help);
	}
	g_string_append(s, "\nExit: 0 no harm, 1 harm found, 2 bad input, 125 could not test\n"
			   "(or could not write --junit/--kcidb or stdout).\n"
			   "Output: RESULTS/<run-id>/{run.json, matrix.txt, journal.jsonl, consoles}.");
	return g_string_free(s, FALSE);
}

/* One live line on a terminal; nothing in CI or when stderr is a file. */
static void show_progress(void *ctx, const struct runner_progress *p)
{
	char eta[32] = "?";

	if (p->eta_s >= 0)
		snprintf(eta, sizeof(eta), "%d:%02d", (int)p->eta_s / 60, (int)p->eta_s % 60);
	fprintf(stderr, "\r\033[K[%d:%02d] %-8s", (int)p->elapsed_s / 60,
		(int)p->elapsed_s % 60, p->phase);
	if (p->screening)
		fprintf(stderr, " batch %u (%u screening, %u isolating) ETA %s%s", p->batch,
			p->screening, p->isolating, eta, p->isolating ? "+" : "");
	if (p->guests)
		fprintf(stderr, "  guests %u/%u healthy", p->healthy, p->guests);
	if (!strcmp(p->phase, "report"))
		fputc('\n', stderr);
	fflush(stderr);
}


/* The matrix the run wrote (`pmucanary matrix` of its run.json), as the
 * terminal's final word; on a terminal its harm and SELF-TEST lines in red
 * so they stand out (indented lines: not the counts and the legend, which
 * name every outcome). */
static void print_matrix(const char *run_dir)
{
	g_autofree char *path = g_build_filename(run_dir, "matrix.txt", NULL);
	g_autofree char *text = NULL;
	bool color = isatty(STDOUT_FILENO);

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return;
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		bool harm = color && **l == ' ' &&
			    (strstr(*l, "GUEST_") || strstr(*l, "HOST_") || strstr(*l, "SELF-TEST"));

		if (!**l && !l[1])
			break;
		printf("%s%s%s\n", harm ? "\033[1;31m" : "", *l, harm ? "\033[0m" : "");
	}
	putchar('\n');
}

int cmd_run(int argc, char **argv)
{
	g_autofree char *resume = NULL, *selftest = NULL, *results = NULL, *uri = NULL;
	g_autofree char *scenario_path = NULL, *help = keys_help();
	g_autofree char *label = NULL, *lab_context = NULL, *only = NULL;
	json_t *lab_json = NULL;
	g_auto(GStrv) bins = NULL, cells = NULL;
	gboolean tcg = FALSE, keep = FALSE;
	GOptionEntry entries[] = {
		{ "resume", 0, 0, G_OPTION_ARG_FILENAME, &resume,
		  "continue the run in RUN_DIR from its journal (with its own scenario "
		  "and --selftest-harm unless given again)", "RUN_DIR" },
		{ "only", 0, 0, G_OPTION_ARG_FILENAME, &only,
		  "re-test just the cells of the result file RESULT (a run.json or probe "
		  "--json) that it marks harmed or failed with an errno, with the same "
		  "profiles and attrs: one cell that stays clean is one batch, not a sweep. "
		  "Default SCENARIO: "
		  "the scenario.ini beside RESULT when it is a run's run.json. Each cell "
		  "must encode here to RESULT's attr (the type of a dynamic PMU aside), "
		  "else exit 2 naming its members; cells of traced perf binaries are left "
		  "out. Not with --resume (a resumed --only run keeps its cells) or "
		  "--perf-binary", "RESULT" },
		{ "cell", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &cells,
		  "with --only: just this cell of RESULT (repeatable; any outcome but "
		  "INFRA and REJECTED); one not in RESULT is exit 2", "PROFILE:SPEC" },
		{ "selftest-harm", 0, 0, G_OPTION_ARG_STRING, &selftest,
		  "self-test: the guests harm themselves whenever SPEC's attr is armed "
		  "(HOW: crash, hang, corrupt, reboot, oops; default crash; host-crash panics "
		  "the host kernel itself and is only allowed inside a lab host)", "SPEC[=HOW]" },
		{ "results", 0, 0, G_OPTION_ARG_FILENAME, &results,
		  "where runs go (default: results)", "DIR" },
		{ "uri", 0, 0, G_OPTION_ARG_STRING, &uri,
		  "libvirt URI (default: qemu:///system)", "URI" },
		{ "perf-binary", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &bins,
		  "a real perf binary as a column, named bin:perf-<its --version> "
		  "(repeatable). Open phase: `PATH stat -e SPEC -a -- true` under the tracer "
		  "for each spec of the sweep. Load phase: the attr it opened last with "
		  "success is armed by the harness like a profile's (not `perf record` per "
		  "spec: group testing must arm, disarm and split sets of attrs, which one "
		  "perf process per spec cannot); an attr a profile also opened shares its "
		  "verdict. --resume reuses the run's binaries and refuses one whose "
		  "version changed", "PATH" },
		{ "tcg", 0, 0, G_OPTION_ARG_NONE, &tcg,
		  "boot guests under TCG even where /dev/kvm exists", NULL },
		{ "keep", 0, 0, G_OPTION_ARG_NONE, &keep,
		  "disk guests: keep each guest's overlay of its last incarnation "
		  "(<dir of the disk>/pmucanary-<run-id>-<n>.qcow2; removed with the guests "
		  "otherwise)", NULL },
		{ "kernel-label", 0, 0, G_OPTION_ARG_STRING, &label,
		  "the kernel name every cell carries instead of the release "
		  "(`pmucanary lab` passes \"NAME (RELEASE, SHA)\")", "LABEL" },
		{ "lab-context", 0, 0, G_OPTION_ARG_FILENAME, &lab_context,
		  "JSON written by `pmucanary lab`: run.json's \"lab\" object, its "
		  "limitations and the nested guests' timeouts", "FILE" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("[SCENARIO]");
	struct runner_opts o = { 0 };
	g_auto(cli_reports) reports = { 0 };
	struct runner_report rep;
	bool reports_failed = false;
	int e, code;

	g_option_context_set_summary(ctx,
		"Opens every attr of SCENARIO (default " DEFAULT_SCENARIO "), boots the\n"
		"fleet, arms the attrs that opened in batches while the guests work,\n"
		"isolates any attr that harms a guest or the host, and writes the matrix.\n"
		"With --only RESULT, just the cells RESULT marks harmed or failed with an\n"
		"errno (or --cell names) are opened and armed: a re-test, not a sweep.");
	g_option_context_set_description(ctx, help);
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_reports_add_entries(ctx, &reports);
	if (!cli_parse(ctx, "run", &argc, &argv))
		return EXIT_USAGE;
	if (argc > 2) {
		fprintf(stderr, "pmucanary run: one SCENARIO at most (see pmucanary run --help)\n");
		return EXIT_USAGE;
	}
	/* A FILE that cannot be written fails now, not after the sweep. */
	if (!cli_reports_check("run", &reports))
		return EXIT_USAGE;
	/* One line each, before anything is read: combinations that cannot mean
	 * anything. */
	if (only && resume) {
		fprintf(stderr, "pmucanary run: --only with --resume: a resumed run re-tests the "
			"cells it started with (its journal keeps them); drop --only\n");
		return EXIT_USAGE;
	}
	if (cells && !only) {
		fprintf(stderr, "pmucanary run: --cell without --only: --cell picks cells of the "
			"--only RESULT file\n");
		return EXIT_USAGE;
	}
	if (only && bins) {
		fprintf(stderr, "pmucanary run: --only with --perf-binary: --only re-tests the "
			"profiles' cells of RESULT; a traced binary's cells cannot be re-encoded\n");
		return EXIT_USAGE;
	}
	/* A resumed run reads the scenario it started with from RUN_DIR; an
	 * --only run takes the one RESULT's run kept, if any. */
	if (argc == 2)
		scenario_path = g_strdup(argv[1]);
	else if (only && (scenario_path = only_default_scenario(only)))
		fprintf(stderr, "pmucanary run: --only: scenario %s (the one RESULT's run used)\n",
			scenario_path);
	else if (!resume)
		scenario_path = cli_default_scenario();
	o.scenario = scenario_path;
	o.results_dir = results;
	o.resume_dir = resume;
	o.tcg = tcg;
	o.only_result = only;
	o.only_cells = (const char *const *)cells;
	o.only_cell_count = cells ? g_strv_length(cells) : 0;
	o.perf_binaries = (const char *const *)bins;
	o.perf_binary_count = bins ? g_strv_length(bins) : 0;
	if (selftest) {
		/* the last '=' unless it is inside a PMU spec (cpu/event=0x3c/) */
		char *eq = strrchr(selftest, '=');

		o.selftest_harm = RUNNER_HARM_CRASH;
		if (eq && strchr(eq, '/'))
			eq = NULL;
		if (eq) {
			*eq = '\0';
			o.selftest_harm = runner_harm_from_name(eq + 1);
			if (o.selftest_harm == RUNNER_HARM_COUNT) {
				fprintf(stderr, "pmucanary run: --selftest-harm %s=%s: expected crash, "
					"hang, corrupt, reboot, oops or host-crash\n", selftest, eq + 1);
				return EXIT_USAGE;
			}
		}
		if (!*selftest) {
			fprintf(stderr, "pmucanary run: --selftest-harm: no spec before '='\n");
			return EXIT_USAGE;
		}
		o.selftest_spec = selftest;
	}

	if (lab_context) {
		/* A field out of range is refused, never ignored: the run inside a
		 * lab host would judge nested guests with the wrong patience. */
		if (lab_context_read(lab_context, &lab_json) < 0) {
			fprintf(stderr, "pmucanary run: --lab-context %s\n", pc_errmsg());
			return EXIT_USAGE;
		}
		o.lab_context = lab_json;
	}
	o.kernel_label = label;
	if (cli_want_progress()) {
		o.progress = show_progress;
		o.progress_ctx = NULL;
	}
	o.pool_params.uri = uri;
	o.pool_params.tcg = tcg;
	o.pool_params.keep_disks = keep;
	e = runner_run(&o, &rep);
	json_decref(lab_json);
	if (e) {
		fprintf(stderr, "pmucanary run: %s\n", pc_errmsg());
		runner_report_clear(&rep);
		/* EBUSY: --resume of a run another pmucanary is running */
		return e == -EINVAL || e == -EBUSY ? EXIT_USAGE : EXIT_INFRA;
	}
	print_matrix(rep.run_dir);
	if (reports.junit || reports.kcidb) {
		g_autofree char *json_path = g_build_filename(rep.run_dir, "run.json", NULL);
		g_autoptr(result_set) set = NULL;

		if (results_read_json(json_path, &set) < 0) {
			fprintf(stderr, "pmucanary run: %s\n", pc_errmsg());
			reports_failed = true;
		} else if (!cli_reports_write("run", &reports, set, NULL, NULL)) {
			reports_failed = true;
		}
	}
	if (rep.selftest)
		printf("SELF-TEST RUN: harms below were injected by --selftest-harm%s%s\n",
		       selftest ? " " : "", selftest ? selftest : "");
	if (rep.only_cells)
		printf("ONLY: re-tested %u cell(s) of %s, not the scenario's sweep\n",
		       rep.only_cells, only ? only : "the run's --only RESULT");
	printf("run %s: %s (%u distinct attrs armed, %u batches, %u culprit(s))\n",
	       rep.run_id, runner_verdict_name(rep.verdict), rep.distinct_armed, rep.rounds,
	       rep.culprits);
	printf("  %s/run.json\n  %s/matrix.txt\n  %s/report.html\n  %s/junit.xml\n",
	       rep.run_dir, rep.run_dir, rep.run_dir, rep.run_dir);
	if (rep.verdict == RUNNER_VERDICT_INFRA)
		fprintf(stderr, "pmucanary run: could not test: %s\n", rep.why ? rep.why : "?");
	code = rep.verdict == RUNNER_VERDICT_CLEAN ? EXIT_CLEAN :
	       rep.verdict == RUNNER_VERDICT_HARM ? EXIT_HARM : EXIT_INFRA;
	/* A CI job reading --junit must not pass on a report that is not there;
	 * harm still says harm. */
	if (reports_failed && code == EXIT_CLEAN)
		code = EXIT_INFRA;
	runner_report_clear(&rep);
	return code;
}
