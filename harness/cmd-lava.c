/* pmucanary lava job|cases|collect: pmucanary as an ordinary LAVA job, and
 * its results back into run.json (lib/lab/lava.c). */
#include "commands.h"
#include "errata.h"
#include "infile.h"
#include "lava.h"
#include "log.h"
#include "outfile.h"
#include "scenario.h"
#include "textesc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int lava_error(const char *sub, int ret)
{
	g_autofree char *msg = text_escape(pc_errmsg());

	fprintf(stderr, "pmucanary lava %s: %s\n", sub, msg);
	return ret == -EINVAL || pc_errno_bad_path(ret) ? EXIT_USAGE : EXIT_INFRA;
}

static int lava_job(int argc, char **argv)
{
	g_autofree char *dtype = NULL, *kernel = NULL, *modules = NULL, *ramdisk = NULL;
	g_autofree char *pc_url = NULL, *pc_path = NULL, *scen_path = NULL, *baseline = NULL;
	g_autofree char *errata = NULL, *kargs = NULL, *name = NULL, *output = NULL;
	g_autofree char *timeout_opt = NULL, *text = NULL, *artifact = NULL;
	g_auto(GStrv) events = NULL, profiles = NULL;
	GOptionEntry entries[] = {
		{ "device-type", 0, 0, G_OPTION_ARG_STRING, &dtype,
		  "LAVA device type: qemu (tmpfs deploy) or x86 (tftp + iPXE)", "TYPE" },
		{ "kernel", 0, 0, G_OPTION_ARG_STRING, &kernel, "URL of the kernel under test", "URL" },
		{ "modules", 0, 0, G_OPTION_ARG_STRING, &modules, "URL of its modules (tar)", "URL" },
		{ "ramdisk", 0, 0, G_OPTION_ARG_STRING, &ramdisk,
		  "URL of the ramdisk the device boots into (cpio)", "URL" },
		{ "pmucanary-url", 0, 0, G_OPTION_ARG_STRING, &pc_url,
		  "URL of a tar.gz whose pmucanary-lava/pmucanary runs pmucanary on the device",
		  "URL" },
		{ "pmucanary-path", 0, 0, G_OPTION_ARG_STRING, &pc_path,
		  "pmucanary already on the device (default: pmucanary in PATH)", "PATH" },
		{ "scenario", 0, 0, G_OPTION_ARG_FILENAME, &scen_path,
		  "the device runs `pmucanary run` on this scenario (carried in the job)", "FILE" },
		{ "probe-event", 0, 0, G_OPTION_ARG_STRING_ARRAY, &events,
		  "instead of a scenario: the open phase only, `pmucanary probe --event E`", "E" },
		{ "probe-profile", 0, 0, G_OPTION_ARG_STRING_ARRAY, &profiles,
		  "with --probe-event: the profiles (`probe --profile P`)", "P" },
		{ "baseline", 0, 0, G_OPTION_ARG_STRING, &baseline,
		  "URL of a run.json: cells that regressed against it are reported as fail", "URL" },
		{ "errata", 0, 0, G_OPTION_ARG_STRING, &errata,
		  "URL of an errata file: harm a known erratum explains is reported as skip", "URL" },
		{ "artifact-url", 0, 0, G_OPTION_ARG_STRING, &artifact,
		  "the device POSTs its run.json to URL (the lab's storage) and references it "
		  "(lava-test-reference)", "URL" },
		{ "kernel-args", 0, 0, G_OPTION_ARG_STRING, &kargs,
		  "more kernel command line (never panic=-1: the reboot hides the panic)", "ARGS" },
		{ "job-name", 0, 0, G_OPTION_ARG_STRING, &name, "job name (default pmucanary)", "NAME" },
		{ "timeout", 0, 0, G_OPTION_ARG_STRING, &timeout_opt,
		  "minutes for the test on the device (default 60; the job gets 20 more "
		  "for deploy and boot)", "MIN" },
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		  "write the job to FILE (default: stdout)", "FILE" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- write a LAVA job definition");
	g_autoptr(GString) out = g_string_new(NULL);
	int timeout = 60, ret;
	struct lava_job_opts o = { 0 };

	g_option_context_set_summary(ctx,
		"Writes a LAVA job (YAML, LAVA 2023.01) that deploys the kernel under test,\n"
		"boots the device into the ramdisk, runs pmucanary there and reports every\n"
		"cell as a lava-test-case: pass (OK, errno), fail (harm; regression against\n"
		"--baseline), skip (known erratum, REJECTED, INFRA); measurement k, units\n"
		"OUTCOME[/N]. `pmucanary lava collect` turns the job's log into run.json.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!cli_parse(ctx, "lava job", &argc, &argv))
		return EXIT_USAGE;
	if (argc != 1 || !dtype || !kernel || (!scen_path && !events)) {
		fprintf(stderr, "pmucanary lava job: need --device-type, --kernel, --ramdisk and "
				"--scenario or --probe-event (see pmucanary lava job --help)\n");
		return EXIT_USAGE;
	}
	if (scen_path && events) {
		fprintf(stderr, "pmucanary lava job: --scenario or --probe-event, not both\n");
		return EXIT_USAGE;
	}
	if (pc_url && pc_path) {
		fprintf(stderr, "pmucanary lava job: --pmucanary-url or --pmucanary-path, not both\n");
		return EXIT_USAGE;
	}
	if (!cli_bounded_int("lava job", "timeout", timeout_opt, 1, 7 * 24 * 60, &timeout))
		return EXIT_USAGE;
	if (scen_path) {
		struct scenario *s = NULL;

		/* The device would find a bad scenario hours later: check it here. */
		if ((ret = infile_read(scen_path, INFILE_CONFIG, &text, NULL)) < 0 ||
		    (ret = scenario_load_data(scen_path, text, &s)) < 0)
			return lava_error("job", ret);
		scenario_free(s);
	}
	o = (struct lava_job_opts){
		.device_type = dtype, .job_name = name, .kernel_url = kernel,
		.modules_url = modules, .ramdisk_url = ramdisk, .pmucanary_url = pc_url,
		.pmucanary_path = pc_path, .scenario_text = text, .probe_events = events,
		.probe_profiles = profiles, .baseline_url = baseline, .errata_url = errata,
		.artifact_url = artifact,
		.kernel_args = kargs, .timeout_min = (unsigned int)timeout,
	};
	if ((ret = lava_job_write(&o, out)) < 0)
		return lava_error("job", ret);
	if (!output) {
		if (fwrite(out->str, 1, out->len, stdout) != out->len || fflush(stdout)) {
			fprintf(stderr, "pmucanary lava job: cannot write stdout\n");
			return EXIT_INFRA;
		}
		return EXIT_CLEAN;
	}
	if ((ret = outfile_write(output, out->str, out->len)) < 0)
		return lava_error("job", ret);
	return EXIT_CLEAN;
}

/* On the device: the cells of a run.json as the lines the job's test turns
 * into lava-test-case calls. */
static int lava_cases(int argc, char **argv)
{
	g_autofree char *baseline = NULL, *errata_path = NULL;
	GOptionEntry entries[] = {
		{ "baseline", 0, 0, G_OPTION_ARG_FILENAME, &baseline,
		  "a result file: cells that regressed against it fail", "FILE" },
		{ "errata", 0, 0, G_OPTION_ARG_FILENAME, &errata_path,
		  "known errata: explained harm is skip", "FILE" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("RUN.json");
	g_autoptr(result_set) set = NULL, base = NULL;
	g_autoptr(errata_set) errata = NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	size_t skipped = 0;
	int ret;

	g_option_context_set_summary(ctx,
		"Prints the run's header (pmucanary-header I/N BASE64) and one line per cell:\n"
		"case ID RESULT K UNITS, for lava-test-case. Run by the job on the device.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!cli_parse(ctx, "lava cases", &argc, &argv))
		return EXIT_USAGE;
	if (argc != 2) {
		fprintf(stderr, "pmucanary lava cases: need RUN.json\n");
		return EXIT_USAGE;
	}
	if ((ret = results_read_json(argv[1], &set)) < 0 ||
	    (baseline && (ret = results_read_json(baseline, &base)) < 0) ||
	    (errata_path && (ret = errata_load(errata_path, &errata)) < 0) ||
	    (ret = lava_cases_format(set, base, errata, out, &skipped)) < 0)
		return lava_error("cases", ret);
	if (fwrite(out->str, 1, out->len, stdout) != out->len || fflush(stdout))
		return EXIT_INFRA;
	if (skipped)
		fprintf(stderr, "pmucanary lava cases: %zu cells not reported: their case id "
				"would pass %d bytes\n", skipped, LAVA_CASE_ID_MAX);
	return EXIT_CLEAN;
}

static int lava_collect_cmd(int argc, char **argv)
{
	g_autofree char *json = NULL, *text = NULL, *export = NULL, *etext = NULL;
	GOptionEntry entries[] = {
		{ "json", 0, 0, G_OPTION_ARG_FILENAME, &json,
		  "write the run.json to FILE (default: stdout)", "FILE" },
		{ "export", 0, 0, G_OPTION_ARG_FILENAME, &export,
		  "a LAVA server's results export of the job: /results/JOB/yaml or "
		  "/api/v0.2/jobs/JOB/tests/?limit=N (JSON); with JOB.log both must agree", "FILE" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("[JOB.log]");
	g_autoptr(result_set) set = NULL;
	size_t len = 0, elen = 0;
	bool infra = false;
	int ret;

	g_option_context_set_summary(ctx,
		"Reads the log of a finished pmucanary LAVA job (what lava-run prints on\n"
		"stdout: one {dt, lvl, msg} line each) and writes a pmucanary/2 run.json\n"
		"that matrix and diff merge with other runs. Exit: 0 collected, 1 a cell\n"
		"harmed, 125 INFRA (the job failed to boot, timed out, was canceled, or\n"
		"pmucanary on the device could not test), 2 bad input (file:line: field).\n"
		"--export reads the server's results export instead (the fingerprint is\n"
		"then unknown) or, with JOB.log, checks they agree case by case.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!cli_parse(ctx, "lava collect", &argc, &argv))
		return EXIT_USAGE;
	if (argc > 2 || (argc != 2 && !export)) {
		fprintf(stderr, "pmucanary lava collect: need JOB.log, --export FILE or both\n");
		return EXIT_USAGE;
	}
	if (json && (ret = outfile_check(json)) < 0)
		return lava_error("collect", ret);
	if ((argc == 2 && (ret = infile_read(argv[1], INFILE_RESULTS, &text, &len)) < 0) ||
	    (export && (ret = infile_read(export, INFILE_RESULTS, &etext, &elen)) < 0) ||
	    (ret = export ? lava_collect_export(etext, elen, export, text, len,
						argc == 2 ? argv[1] : NULL, &set, &infra)
			  : lava_collect(text, len, argv[1], &set, &infra)) < 0 ||
	    (ret = results_write_json(set, json ? json : "/dev/stdout")) < 0)
		return lava_error("collect", ret);
	if (infra) {
		json_t *lava = json_object_get(set->extra, "lava");
		const char *type = json_string_value(json_object_get(lava, "error_type"));
		const char *emsg = json_string_value(json_object_get(lava, "error_msg"));
		g_autoptr(GString) line = g_string_new(json_string_value(json_object_get(lava, "why")));
		g_autofree char *esc = NULL;

		/* The message's first line (a panic's message is its whole trace;
		 * run.json keeps all of it). */
		if (type)
			g_string_append_printf(line, " (LAVA error type %s%s%.*s)", type,
					       emsg ? ": " : "",
					       emsg ? (int)MIN(strcspn(emsg, "\r\n"), 200) : 0,
					       emsg ? emsg : "");
		esc = text_escape(line->str);
		fprintf(stderr, "pmucanary lava collect: INFRA, not a kernel verdict: %s\n", esc);
		return EXIT_INFRA;
	}
	for (guint i = 0; i < set->cells->len; i++)
		if (outcome_is_harm(((struct cell *)g_ptr_array_index(set->cells, i))->outcome))
			return EXIT_HARM;
	return EXIT_CLEAN;
}

int cmd_lava(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} subs[] = {
		{ "job", lava_job },
		{ "cases", lava_cases },
		{ "collect", lava_collect_cmd },
	};

	if (argc >= 2)
		for (size_t i = 0; i < G_N_ELEMENTS(subs); i++)
			if (!strcmp(argv[1], subs[i].name))
				return subs[i].fn(argc - 1, argv + 1);
	/* Asked for: the usage on stdout, exit 0 (like every other --help). */
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: pmucanary lava job|cases|collect [OPTIONS...]\n\n"
		       "  job      write a LAVA job definition that runs pmucanary on a device\n"
		       "  cases    print a result file as LAVA test cases (run on the device)\n"
		       "  collect  read a LAVA job log or results export into a result file\n\n"
		       "Run 'pmucanary lava SUBCOMMAND --help' for the options of one.\n");
		return EXIT_CLEAN;
	}
	fprintf(stderr, "usage: pmucanary lava job|cases|collect ... (pmucanary lava --help)\n");
	return EXIT_USAGE;
}
