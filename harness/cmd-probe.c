/* pmucanary probe: the open phase alone. Enumerates (profile, spec) pairs,
 * encodes each through its profile, opens every distinct attr on every
 * online CPU, prints the matrix and optionally writes the result file. */
#include "commands.h"

#include "enumerate.h"
#include "fingerprint.h"
#include "log.h"
#include "outfile.h"
#include "perfbin.h"
#include "pmu.h"
#include "prober.h"
#include "report.h"
#include "results.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void perfbin_progress_tty(size_t done, size_t total, void *data)
{
	fprintf(stderr, "\rprobe: %s: %zu/%zu specs traced", (const char *)data, done, total);
	if (done == total)
		fputc('\n', stderr);
}

/* Specs traced per binary before the size is worth a warning. */
#define PERFBIN_WARN_SPECS 3000

/* Adds the cells of one real perf binary: the specs its closest built-in
 * profile sweeps (narrowed like the rest by --pmu/--event/--full), each
 * traced as `PATH stat -e SPEC -a -- true`. */
static int probe_perf_binary(struct perfbin *pb, const struct pmu_set *pmus,
			     const struct enumerate_opts *base, unsigned int jobs, bool tty,
			     struct result_set *set)
{
	const char *path = pb->path;
	g_autoptr(GPtrArray) pairs = NULL;
	g_autoptr(GPtrArray) specs = g_ptr_array_new();
	struct enumerate_opts eopts = *base;
	struct perfbin_opts bopts = { .jobs = jobs };
	const char *prof[2] = { NULL, NULL };
	int ret;

	/* Two binaries of one release stay two columns. */
	perfbin_name_unique(pb, set);
	prof[0] = profile_name(pb->like);
	eopts.profiles = prof;
	ret = enumerate_pairs(pmus, &eopts, &pairs);
	if (ret < 0) {
		fprintf(stderr, "pmucanary probe: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	for (unsigned int i = 0; i < pairs->len; i++)
		g_ptr_array_add(specs, ((struct enumerate_pair *)pairs->pdata[i])->spec);
	if (specs->len > PERFBIN_WARN_SPECS || tty)
		fprintf(stderr, "probe: %s (%s): %u specs to trace (the sweep of %s)%s\n",
			pb->name, path, specs->len, profile_name(pb->like),
			specs->len > PERFBIN_WARN_SPECS
				? "; that takes a while: narrow it with --event/--pmu" : "");
	if (tty) {
		bopts.progress = perfbin_progress_tty;
		bopts.progress_data = pb->name;
	}
	ret = perfbin_probe_cells(pb, pmus, (const char *const *)specs->pdata, specs->len,
				  &bopts, set);
	if (ret < 0) {
		fprintf(stderr, "pmucanary probe: --perf-binary %s: %s\n", path, pc_errmsg());
		return EXIT_INFRA;
	}
	results_add_limitation(set, "%s (%s) ran `perf stat -e SPEC -a -- true` under the "
			       "tracer (counting); the built-in profiles encode `perf record "
			       "-a -g` (sampling): specs whose outcome depends on sampling "
			       "(msr/tsc/, ...) differ for that reason", pb->name, path);
	return EXIT_CLEAN;
}

static void progress_tty(size_t done, size_t total, size_t distinct, void *data)
{
	fprintf(stderr, "\rprobe: %zu/%zu cells, %zu distinct attrs opened", done, total,
		distinct);
	if (done == total)
		fputc('\n', stderr);
}

int cmd_probe(int argc, char **argv)
{
	g_autofree char *json_path = NULL;
	g_autofree char *sysfs = NULL;
	g_auto(GStrv) pmus_opt = NULL;
	g_auto(GStrv) events_opt = NULL;
	g_auto(GStrv) profiles_opt = NULL;
	g_auto(GStrv) perf_bins = NULL;
	g_autoptr(GPtrArray) bins = g_ptr_array_new_with_free_func((GDestroyNotify)perfbin_free);
	gboolean full = FALSE, per_task = FALSE, list_all = FALSE;
	g_autofree char *jobs_opt = NULL;
	int jobs = 0;
	GOptionEntry entries[] = {
		{ "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path,
		  "also write the result file (schema " RESULTS_SCHEMA ", kind probe) to FILE; "
		  "a regular file is replaced atomically, never left half-written; a "
		  "device or FIFO is written to", "FILE" },
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
		{ "perf-binary", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &perf_bins,
		  "also probe a real perf binary (repeatable): each spec of the sweep is "
		  "run as `PATH stat -e SPEC -a -- true` under the tracer; its column is "
		  "named bin:perf-<version>", "PATH" },
		{ "jobs", 0, 0, G_OPTION_ARG_STRING, &jobs_opt,
		  "traced perf processes at once for --perf-binary, 1..256 (default: "
		  "online CPUs x 2)", "N" },
		{ "list-all", 0, 0, G_OPTION_ARG_NONE, &list_all,
		  "every cell instead of the grouped view: the full grid (one column per "
		  "spec), then every non-OK cell on one line (as `matrix --all`)", NULL },
		{ "all", 0, 0, G_OPTION_ARG_NONE, &list_all, "the same as --list-all", NULL },
		{ NULL }
	};
	struct report_options ropts = { 0 };
	g_auto(cli_reports) reports = { 0 };
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
		"(their events need arguments), and the profiles do not parse tracepoint\n"
		"(SUBSYS:EVENT) or breakpoint (mem:ADDR) specs: --event refuses them.\n"
		"Modifiers: u/k/h x G/H x 0-3 p (128 per event); each later letter the\n"
		"profile knows with the p and G/H variants (16 each); --full: every\n"
		"combination. Profile raw: exclude_* x precise_ip (256 per event).\n\n"
		"Output: `pmucanary matrix` of this one probe: the header and limitations,\n"
		"the grid (rows profiles, columns event x modifier class where rows differ;\n"
		"'rej' = the profile's parser refused the spec, no syscall), the columns\n"
		"where every row agrees, the specs profiles disagree on, the errno and\n"
		"rejected cells grouped by outcome and tries, cells per outcome\n"
		"(--list-all: every cell).\n"
		"--perf-binary adds a real perf binary as a column, traced per spec.\n\n"
		"Exit: 0 probed, 2 bad input, 125 could not probe or write the output.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_reports_add_entries(ctx, &reports);
	if (!cli_parse(ctx, "probe", &argc, &argv))
		return EXIT_USAGE;
	if (argc > 1) {
		fprintf(stderr, "pmucanary probe: unexpected argument '%s' (see pmucanary "
			"probe --help)\n", argv[1]);
		return EXIT_USAGE;
	}
	if (!cli_bounded_int("probe", "jobs", jobs_opt, 1, PERFBIN_MAX_JOBS, &jobs))
		return EXIT_USAGE;
	/* Every binary must say its version before any work is done. */
	for (char **b = perf_bins; b && *b; b++) {
		struct perfbin *pb = NULL;

		if (access(*b, X_OK) < 0) {
			fprintf(stderr, "pmucanary probe: --perf-binary %s: %s\n", *b,
				g_strerror(errno));
			return EXIT_USAGE;
		}
		if (perfbin_open(*b, &pb) < 0) {
			fprintf(stderr, "pmucanary probe: --perf-binary %s\n", pc_errmsg());
			return EXIT_USAGE;
		}
		g_ptr_array_add(bins, pb);
	}
	/* A FILE that cannot be written fails now, not after the sweep. */
	if (json_path && outfile_check(json_path) < 0) {
		fprintf(stderr, "pmucanary probe: --json: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	if (!cli_reports_check("probe", &reports))
		return EXIT_USAGE;

	ret = pmu_set_load(sysfs, &pmus);
	if (ret < 0) {
		fprintf(stderr, "pmucanary probe: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	/* Every kernel with perf events has the software PMU there: an empty
	 * directory is a wrong path, not a machine without PMUs. */
	if (sysfs && !pmus->pmus->len) {
		fprintf(stderr, "pmucanary probe: --sysfs %s: no PMU directories in it (the layout "
			"of " PMU_SYSFS_ROOT " is expected)\n", sysfs);
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
	/* Nothing reaches the kernel: not a clean probe (the rule of run). */
	if (enumerate_check_testable(set, bins->len, NULL) < 0) {
		fprintf(stderr, "pmucanary probe: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}

	popts.per_task = per_task;
	popts.pmus = pmus; /* record mode, the zero default */
	if (tty) {
		popts.progress = progress_tty;
	}
	ret = prober_new(&popts, &pr);
	if (ret < 0) {
		fprintf(stderr, "pmucanary probe: %s\n", pc_errmsg());
		return EXIT_INFRA;
	}
	prober_run(pr, set);
	for (unsigned int i = 0; i < bins->len; i++) {
		rc = probe_perf_binary(bins->pdata[i], pmus, &eopts, (unsigned int)jobs, tty, set);
		if (rc != EXIT_CLEAN)
			return rc;
	}

	out = g_string_new(NULL);
	ropts.all = list_all;
	{
		const struct result_set *one = set;

		if (report_render(REPORT_TEXT, &one, 1, &ropts, out) < 0) {
			fprintf(stderr, "pmucanary probe: %s\n", pc_errmsg());
			return EXIT_INFRA;
		}
	}
	fputs(out->str, stdout);
	fflush(stdout);
	if (json_path) {
		ret = results_write_json(set, json_path);
		if (ret < 0) {
			fprintf(stderr, "pmucanary probe: --json: %s\n", pc_errmsg());
			rc = EXIT_INFRA;
		}
	}
	if (!cli_reports_write("probe", &reports, set, NULL, NULL))
		rc = EXIT_INFRA;
	return rc;
}
