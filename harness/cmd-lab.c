/* pmucanary lab [SCENARIO] --kernel KERNEL[:NAME]...: one lab host per kernel
 * under test, the harness inside, nested KVM guests (see lib/lab/lab.h). */
#include "commands.h"
#include "kernel.h"
#include "replay.h"
#include "lab.h"
#include "log.h"
#include "scenario.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* --kernel, --modules and --config in the order given: --modules and
 * --config belong to the --kernel before them. */
struct kernel_arg {
	char *spec, *modules, *config;
};

struct lab_args {
	GPtrArray *kernels; /* struct kernel_arg * */
	char *error;
};

static void kernel_arg_free(gpointer p)
{
	struct kernel_arg *k = p;

	g_free(k->spec);
	g_free(k->modules);
	g_free(k->config);
	g_free(k);
}

static gboolean on_kernel_opt(const char *name, const char *value, gpointer data, GError **err)
{
	struct lab_args *a = data;
	struct kernel_arg *last = a->kernels->len ? a->kernels->pdata[a->kernels->len - 1] : NULL;

	/* GLib passes the option as typed: "--kernel" or "-k" */
	if (!strcmp(name, "--kernel") || !strcmp(name, "-k")) {
		struct kernel_arg *k = g_new0(struct kernel_arg, 1);

		k->spec = g_strdup(value);
		g_ptr_array_add(a->kernels, k);
		return TRUE;
	}
	if (!last) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s %s: give it after the --kernel it belongs to", name, value);
		return FALSE;
	}
	if (!strcmp(name, "--modules")) {
		if (last->modules) {
			g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "--modules given twice for --kernel %s", last->spec);
			return FALSE;
		}
		last->modules = g_strdup(value);
	} else {
		if (last->config) {
			g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "--config given twice for --kernel %s", last->spec);
			return FALSE;
		}
		last->config = g_strdup(value);
	}
	return TRUE;
}


static void show_progress(void *ctx, const struct lab_progress *p)
{
	char eta[32] = "?";

	if (p->eta_s >= 0)
		snprintf(eta, sizeof(eta), "%d:%02d", (int)p->eta_s / 60, (int)p->eta_s % 60);
	fprintf(stderr, "\r\033[K[%d:%02d] kernel %u/%u %s: %s", (int)p->elapsed_s / 60,
		(int)p->elapsed_s % 60, p->kernel, p->kernels, p->name, p->step);
	if (p->boot > 1)
		fprintf(stderr, " (lab host %u)", p->boot);
	if (p->judged)
		fprintf(stderr, ", %u batch%s judged", p->judged, p->judged == 1 ? "" : "es");
	fprintf(stderr, "  ETA %s", eta);
	if (!strcmp(p->step, "report"))
		fputc('\n', stderr);
	fflush(stderr);
}

/* --list-replays: one block per replay kernel, from the patches' headers. */
static int print_replays(void)
{
	g_autofree char *dir = replay_dir();
	g_autoptr(GPtrArray) list = NULL;

	if (replay_list(dir, &list)) {
		fprintf(stderr, "pmucanary lab: %s\n", pc_errmsg());
		return EXIT_INFRA;
	}
	printf("Replay kernels: the lab-host kernel (Debian's linux-source-6.1) with one or\n"
	       "more of these patches; `--kernel replay:NAME[+NAME...][:LABEL]` builds one\n"
	       "(cached) and boots it as a lab host; replay:" REPLAY_STOCK " has none. From %s.\n", dir);
	for (guint i = 0; i < list->len; i++) {
		const struct replay *r = list->pdata[i];

		printf("\n%s\n  replays: %s\n  rule:    %s\n  harm:    %s\n", r->name, r->replays,
		       r->rule, r->harm);
	}
	return 0;
}

int cmd_lab(int argc, char **argv)
{
	struct lab_args args = { g_ptr_array_new_with_free_func(kernel_arg_free), NULL };
	g_autofree char *base = NULL, *results = NULL, *uri = NULL, *selftest = NULL;
	g_autofree char *scenario_path = NULL, *memory = NULL;
	g_auto(GStrv) bins = NULL, place_opts = NULL, cells = NULL;
	g_autofree char *only = NULL;
	g_autofree char *place = NULL;
	gboolean tcg = FALSE, verbose_inner = FALSE, list_replays = FALSE;
	g_autofree char *vcpus_opt = NULL, *boot_timeout_opt = NULL;
	int vcpus = 0;
	double boot_timeout_s = 0;
	GOptionEntry entries[] = {
		{ "kernel", 'k', 0, G_OPTION_ARG_CALLBACK, (void *)on_kernel_opt,
		  "a kernel under test (repeatable; the first is the base unless --base): a "
		  "bzImage/vmlinuz path, an installed release (/boot/vmlinuz-R with "
		  "/lib/modules/R), a linux-image-*.deb, or replay:NAME[+NAME...] (a replay "
		  "kernel, built and cached: see --list-replays; replay:stock has no replay); "
		  ":NAME names it (default: its release; for a replay, its list). Two builds "
		  "of one release need names", "KERNEL[:NAME]" },
		{ "modules", 0, 0, G_OPTION_ARG_CALLBACK, (void *)on_kernel_opt,
		  "the modules directory (lib/modules/R) of the --kernel before it", "DIR" },
		{ "config", 0, 0, G_OPTION_ARG_CALLBACK, (void *)on_kernel_opt,
		  "the .config of the --kernel before it (default: the package's, "
		  "IKCONFIG, config-R beside it or in /boot, the build tree's)", "FILE" },
		{ "base", 0, 0, G_OPTION_ARG_STRING, &base,
		  "the kernel every other one is diffed against (default: the first)", "NAME" },
		{ "perf-binary", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &bins,
		  "a real perf binary as a column in every kernel's run (see pmucanary run "
		  "--help; repeatable)", "PATH" },
		{ "selftest-harm", 0, 0, G_OPTION_ARG_STRING, &selftest,
		  "self-test inside every lab host (see pmucanary run --help); host-crash "
		  "panics the lab host itself while SPEC's attr is armed", "SPEC[=HOW]" },
		{ "only", 0, 0, G_OPTION_ARG_FILENAME, &only,
		  "every kernel re-tests just the cells RESULT (a run.json or probe --json) "
		  "marks harmed or failed with an errno, with the same attrs (pmucanary run "
		  "--only inside each lab host): one batch per cell, not a sweep", "RESULT" },
		{ "cell", 0, 0, G_OPTION_ARG_STRING_ARRAY, &cells,
		  "with --only: just this cell of RESULT (repeatable)", "PROFILE:SPEC" },
		{ "results", 0, 0, G_OPTION_ARG_FILENAME, &results,
		  "where labs go (default: results); lab hosts mount it by path", "DIR" },
		{ "uri", 0, 0, G_OPTION_ARG_STRING, &uri,
		  "libvirt URI for the lab hosts (default: qemu:///system)", "URI" },
		{ "tcg", 0, 0, G_OPTION_ARG_NONE, &tcg,
		  "boot lab hosts under TCG even where /dev/kvm works", NULL },
		{ "memory", 0, 0, G_OPTION_ARG_STRING, &memory,
		  "memory per lab host (default: 1 GiB + the scenario's guests + 192 MiB each)",
		  "SIZE" },
		{ "vcpus", 0, 0, G_OPTION_ARG_STRING, &vcpus_opt,
		  "vCPUs per lab host, 1..64 (default: online CPUs, at least 2)", "N" },
		{ "boot-timeout", 0, 0, G_OPTION_ARG_STRING, &boot_timeout_opt,
		  "how long a lab host may take to its first heartbeat, 1..3600 s (default: "
		  "180 under TCG, 60 under KVM); none by then: its kernel did not boot",
		  "SECONDS" },
		{ "place", 0, 0, G_OPTION_ARG_STRING, &place,
		  "where each kernel's run executes: labhost (default: a libvirt domain here "
		  "booted on the kernel, nested KVM inside) or lava (a LAVA device, one job per "
		  "kernel run by lava-run here; its --place-opt: device=FILE, ramdisk=FILE|URL, "
		  "dispatcher=FILE, device_type=NAME, pmucanary_path=PATH, timeout=MINUTES, "
		  "kernel_args=ARGS)", "NAME" },
		{ "place-opt", 0, 0, G_OPTION_ARG_STRING_ARRAY, &place_opts,
		  "an option of the --place (repeatable)", "KEY=VALUE" },
		{ "inner-verbose", 0, 0, G_OPTION_ARG_NONE, &verbose_inner,
		  "the runs inside log progress details to NAME/inner.log", NULL },
		{ "list-replays", 0, 0, G_OPTION_ARG_NONE, &list_replays,
		  "list the replay kernels (real PMU bugs' shapes on a software PMU) and exit",
		  NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("[SCENARIO]");
	GOptionGroup *main_group;
	g_autoptr(GPtrArray) kernels = g_ptr_array_new_with_free_func((GDestroyNotify)kernel_free);
	struct lab_opts o = { 0 };
	struct lab_report rep = { 0 };
	int e, code;

	g_option_context_set_summary(ctx,
		"Boots one lab host per kernel under test (a VM running that kernel with\n"
		"nested virtualization and the host's root shared read-only), runs\n"
		"`pmucanary run SCENARIO` inside it against KVM guests of that kernel's\n"
		"KVM, and diffs every kernel against the base. A lab host that panics or\n"
		"hangs with a batch armed makes that batch HOST_CRASH/HOST_HANG, and a\n"
		"fresh lab host resumes the run. Default SCENARIO: " DEFAULT_SCENARIO ".");
	g_option_context_set_description(ctx,
		"Exit: like `pmucanary diff` from the base to every other kernel: 0 no\n"
		"regression, 1 a regression, 125 cannot tell (a kernel could not be tested);\n"
		"with one kernel, like `pmucanary run`: 0 clean, 1 harm, 125 could not test.\n"
		"A kernel whose lab host never comes up (no first heartbeat by --boot-timeout,\n"
		"or lost before it was ready every time) is 'could not test (the kernel did\n"
		"not boot to a lab host)', lab.json \"failure\": \"boot\" (else \"infra\").\n"
		"2: bad input (a kernel that is not one, lacks what a lab host needs, a\n"
		"missing modules dir, a broken .deb...): one line, nothing booted.\n"
		"Output: RESULTS/lab-<id>/{lab.json, matrix.txt, report.html, junit.xml,\n"
		"diff-BASE-vs-NAME.{txt,json}, NAME/<run-id>/run.json, NAME/lab-host-N.console}.\n"
		"Under TCG (no usable /dev/kvm) the lab host's CPU is emulated; the\n"
		"kernel's KVM under the nested guests is real. Every report says so.");
	main_group = g_option_group_new(NULL, NULL, NULL, &args, NULL);
	g_option_group_add_entries(main_group, entries);
	g_option_context_set_main_group(ctx, main_group);
	if (!cli_parse(ctx, "lab", &argc, &argv)) {
		g_ptr_array_unref(args.kernels);
		return EXIT_USAGE;
	}
	code = EXIT_USAGE;
	if (list_replays) {
		code = print_replays();
		goto out;
	}
	if (argc > 2) {
		fprintf(stderr, "pmucanary lab: one SCENARIO at most (see pmucanary lab --help)\n");
		goto out;
	}
	if (!args.kernels->len) {
		fprintf(stderr, "pmucanary lab: give at least one --kernel (see pmucanary lab --help)\n");
		goto out;
	}
	if (!cli_bounded_int("lab", "vcpus", vcpus_opt, 1, 64, &vcpus))
		goto out;
	if (!cli_bounded_seconds("lab", "boot-timeout", boot_timeout_opt, 1, 3600, &boot_timeout_s))
		goto out;
	o.boot_timeout_ms = (unsigned int)(boot_timeout_s * 1000 + 0.5);
	if (place && !(o.place = place_backend(place))) {
		fprintf(stderr, "pmucanary lab: --place %s: no such place (known: %s)\n", place,
			place_backend_names());
		goto out;
	}
	if (memory) {
		unsigned int mib = 0;

		if (scenario_parse_memory(memory, &mib) < 0 || mib < 512) {
			fprintf(stderr, "pmucanary lab: --memory %s: a size of at least 512M (1536M, 2G)\n",
				memory);
			goto out;
		}
		o.memory_mib = mib;
	}
	for (guint i = 0; i < args.kernels->len; i++) {
		const struct kernel_arg *a = args.kernels->pdata[i];
		struct kernel_opts ko = { .modules_dir = a->modules, .config = a->config };
		struct kernel *k = NULL;

		if ((e = kernel_resolve(a->spec, &ko, &k))) {
			fprintf(stderr, "pmucanary lab: %s\n", pc_errmsg());
			code = e == -EINVAL ? EXIT_USAGE : EXIT_INFRA;
			goto out;
		}
		g_ptr_array_add(kernels, k);
	}
	if (base) {
		guint i;

		for (i = 0; i < kernels->len; i++)
			if (!strcmp(((struct kernel *)kernels->pdata[i])->name, base))
				break;
		if (i == kernels->len) {
			fprintf(stderr, "pmucanary lab: --base %s: no --kernel is named so\n", base);
			goto out;
		}
		o.base = i;
	}
	scenario_path = argc == 2 ? g_strdup(argv[1]) : cli_default_scenario();
	o.place_options = (const char *const *)place_opts;
	o.scenario = scenario_path;
	o.kernels = (struct kernel *const *)kernels->pdata;
	o.kernel_count = kernels->len;
	o.perf_binaries = (const char *const *)bins;
	o.perf_binary_count = bins ? g_strv_length(bins) : 0;
	o.selftest = selftest;
	o.only_result = only;
	o.only_cells = (const char *const *)cells;
	o.only_cell_count = cells ? g_strv_length(cells) : 0;
	o.results_dir = results;
	o.uri = uri;
	o.tcg = tcg;
	o.vcpus = (unsigned int)vcpus;
	o.verbose = verbose_inner;
	if (cli_want_progress()) {
		o.progress = show_progress;
		o.progress_ctx = NULL;
	}
	e = lab_run(&o, &rep);
	if (e) {
		fprintf(stderr, "pmucanary lab: %s\n", pc_errmsg());
		code = e == -EINVAL ? EXIT_USAGE : EXIT_INFRA;
		if (rep.summary)
			fputs(rep.summary, stdout);
		goto out;
	}
	fputs(rep.summary, stdout);
	code = rep.exit_code;
out:
	lab_report_clear(&rep);
	g_ptr_array_unref(args.kernels);
	return code;
}
