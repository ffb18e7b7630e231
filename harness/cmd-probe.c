/* pmucanary probe: the open phase alone. Enumerates (profile, spec) pairs,
 * encodes each through its profile, opens every distinct attr on every
 * online CPU, prints the matrix and optionally writes the result file. */
#include "commands.h"

#include "enumerate.h"
#include "fingerprint.h"
#include "log.h"
#include "pmu.h"
#include "prober.h"
#include "results.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void progress_tty(size_t done, size_t total, size_t distinct, void *data)
{
	fprintf(stderr, "\rprobe: %zu/%zu cells, %zu distinct attrs opened", done, total,
		distinct);
	if (done == total)
		fputc('\n', stderr);
}

/* Fails early on a --json path that cannot be written, before any work. */
static bool json_target_ok(const char *path)
{
	g_autofree char *dir = g_path_get_dirname(path);

	if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
		fprintf(stderr, "pmucanary probe: --json %s: is a directory\n", path);
		return false;
	}
	if (access(dir, W_OK | X_OK) < 0) {
		fprintf(stderr, "pmucanary probe: --json %s: cannot write in %s: %s\n", path,
			dir, g_strerror(errno));
		return false;
	}
	return true;
}

int cmd_probe(int argc, char **argv)
{
	g_autofree char *json_path = NULL;
	g_autofree char *sysfs = NULL;
	g_auto(GStrv) pmus_opt = NULL;
	g_auto(GStrv) events_opt = NULL;
	g_auto(GStrv) profiles_opt = NULL;
	gboolean full = FALSE, per_task = FALSE;
	GOptionEntry entries[] = {
		{ "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path,
		  "also write the result file (schema pmucanary/1, kind probe) to FILE; "
		  "written atomically, never left half-written", "FILE" },
		{ "pmu", 0, 0, G_OPTION_ARG_STRING_ARRAY, &pmus_opt,
		  "only events of PMU P (repeatable): a sysfs PMU such as msr, or "
		  "'cpu' for the generic hardware/cache events, 'software' for the "
		  "generic software events", "P" },
		{ "event", 0, 0, G_OPTION_ARG_STRING_ARRAY, &events_opt,
		  "only event E, without modifiers (repeatable): cycles, cpu-clock, "
		  "msr/tsc/, r003c; any spec the parser accepts", "E" },
		{ "profile", 0, 0, G_OPTION_ARG_STRING_ARRAY, &profiles_opt,
		  "only profile P (repeatable; see pmucanary encode --list-profiles)", "P" },
		{ "full", 0, 0, G_OPTION_ARG_NONE, &full,
		  "every combination of every modifier letter a profile knows (large: "
		  "the size is printed before it runs)", NULL },
		{ "sysfs", 0, 0, G_OPTION_ARG_FILENAME, &sysfs,
		  "read PMUs from DIR instead of " PMU_SYSFS_ROOT " (opens still go "
		  "to this host's kernel)", "DIR" },
		{ "per-task", 0, 0, G_OPTION_ARG_NONE, &per_task,
		  "open per task (pid 0, cpu -1) instead of system-wide on every CPU "
		  "(automatic when not root and perf_event_paranoid > 0)", NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- open every event x modifier "
							     "combination on this host");
	struct enumerate_opts eopts = { 0 };
	struct prober_opts popts = { 0 };
	g_autoptr(pmu_set) pmus = NULL;
	g_autoptr(GPtrArray) pairs = NULL;
	g_autoptr(result_set) set = NULL;
	g_autoptr(prober) pr = NULL;
	g_autoptr(GString) out = NULL;
	json_t *host = NULL;
	bool tty = isatty(STDERR_FILENO);
	int ret, rc = EXIT_CLEAN;

	g_option_context_set_summary(ctx,
		"Enumerates (profile, spec) pairs for every event this host offers, encodes\n"
		"each spec as the profile's perf release would for `perf record -a -g`, opens\n"
		"each distinct perf_event_attr on every online CPU and closes it, following\n"
		"each profile's fallback chain. Prints the outcome matrix.\n\n"
		"Events: the generic hardware, software and cache events and every sysfs\n"
		"PMU's events/. Tracepoint, kprobe, uprobe and breakpoint PMUs are not swept\n"
		"(their events need arguments); name one with --event to include it.\n"
		"Modifiers: u/k/h x G/H x 0-3 p (128 per event); each later letter the\n"
		"profile knows with the p and G/H variants (16 each); --full: every\n"
		"combination. Profile raw: exclude_* x precise_ip (256 per event).\n\n"
		"Exit: 0 probed, 2 bad input, 125 could not probe.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!cli_parse(ctx, "probe", &argc, &argv))
		return EXIT_USAGE;
	if (argc > 1) {
		fprintf(stderr, "pmucanary probe: unexpected argument '%s' (see pmucanary "
			"probe --help)\n", argv[1]);
		return EXIT_USAGE;
	}
	if (json_path && !json_target_ok(json_path))
		return EXIT_USAGE;

	ret = pmu_set_load(sysfs, &pmus);
	if (ret < 0) {
		fprintf(stderr, "pmucanary probe: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	eopts.pmus = (const char *const *)pmus_opt;
	eopts.events = (const char *const *)events_opt;
	eopts.profiles = (const char *const *)profiles_opt;
	eopts.full = full;
	ret = enumerate_pairs(pmus, &eopts, &pairs);
	if (ret < 0) {
		fprintf(stderr, "pmucanary probe: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	if (full || tty)
		fprintf(stderr, "probe: %u (profile, spec) pairs to encode and open\n",
			pairs->len);

	ret = fingerprint_collect(NULL, &host);
	if (ret < 0) {
		fprintf(stderr, "pmucanary probe: host fingerprint: %s\n", pc_errmsg());
		return EXIT_INFRA;
	}
	set = result_set_new(RESULTS_KIND_PROBE);
	results_set_host(set, host);
	if (sysfs)
		results_add_limitation(set, "PMUs and events read from %s, not from this "
				       "host's " PMU_SYSFS_ROOT "; opens went to this host's "
				       "kernel", sysfs);
	enumerate_cells(pmus, pairs, set->kernel, set);

	popts.per_task = per_task;
	if (tty) {
		popts.progress = progress_tty;
	}
	ret = prober_new(&popts, &pr);
	if (ret < 0) {
		fprintf(stderr, "pmucanary probe: %s\n", pc_errmsg());
		return EXIT_INFRA;
	}
	prober_run(pr, set);

	out = g_string_new(NULL);
	results_format_matrix(set, out);
	fputs(out->str, stdout);
	fflush(stdout);
	if (json_path) {
		ret = results_write_json(set, json_path);
		if (ret < 0) {
			fprintf(stderr, "pmucanary probe: %s\n", pc_errmsg());
			rc = EXIT_INFRA;
		}
	}
	return rc;
}
