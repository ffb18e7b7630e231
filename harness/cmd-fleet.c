/* pmucanary fleet: boot a fleet, watch it, print the verdict timeline. */
#include "commands.h"
#include "fleet.h"
#include "hbproto.h"
#include "image.h"
#include "infile.h"
#include "inject.h"
#include "log.h"
#include "outfile.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct selftest {
	unsigned int guest;
	char what[16];
	bool sent;
};

static void status_print(struct fleet *f, bool redraw)
{
	unsigned int n = fleet_size(f);
	int64_t now = g_get_monotonic_time();

	if (redraw)
		printf("\033[%uA", n);
	for (unsigned int i = 0; i < n; i++) {
		struct fleet_guest_status s;

		fleet_guest_status(f, i, &s);
		printf("\033[2K%-28s %-8s seq %-8llu work %-12llu last hb %6.2f s ago  bad lines %llu\n",
		       s.name, guest_state_name(s.state), (unsigned long long)s.seq,
		       (unsigned long long)s.work, s.last_hb_us ? (now - s.last_hb_us) / 1e6 : -1.0,
		       (unsigned long long)s.lines_bad);
	}
	fflush(stdout);
}

static bool parse_selftests(char **specs, unsigned int guests, GArray *out)
{
	static const char *const kinds[] = { "panic", "hang", "corrupt", "reboot", "oops" };

	for (char **p = specs; p && *p; p++) {
		struct selftest st = { 0 };
		char *eq = strchr(*p, '=');
		g_autofree char *num = eq ? g_strndup(*p, eq - *p) : NULL;
		guint64 guest = 0;
		bool ok = false;

		/* Decimal, in range: strtoul took "4294967296=panic" as guest 0. */
		if (eq && g_ascii_isdigit(*num) &&
		    g_ascii_string_to_unsigned(num, 10, 0, guests ? guests - 1 : 0, &guest, NULL) &&
		    guests) {
			st.guest = (unsigned int)guest;
			for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++)
				ok |= !strcmp(eq + 1, kinds[k]);
		}
		if (!ok) {
			fprintf(stderr, "pmucanary fleet: --selftest %s: want GUEST=panic|hang|corrupt|reboot|oops "
				"with GUEST in 0..%u\n", *p, guests - 1);
			return false;
		}
		g_strlcpy(st.what, eq + 1, sizeof(st.what));
		g_array_append_val(out, st);
	}
	return true;
}

int cmd_fleet(int argc, char **argv)
{
	int guests = 2, duration = 10, vcpus = 1, memory = 0, interval = 0, timeout = 0, parallel = 0;
	int boot_timeout = 0;
	g_autofree char *boot_timeout_opt = NULL;
	g_autofree char *guests_opt = NULL, *duration_opt = NULL, *vcpus_opt = NULL;
	g_autofree char *memory_opt = NULL, *interval_opt = NULL, *timeout_opt = NULL;
	g_autofree char *parallel_opt = NULL, *selftest_at_opt = NULL, *disk_guests_opt = NULL;
	int disk_guests = 0;
	gboolean tcg = FALSE, no_work = FALSE;
	const char *kernel_from = NULL; /* NULL: as given, the disk's or the distribution's */
	double selftest_at = 1.0;
	g_autofree char *json_path = NULL, *uri = NULL, *kernel = NULL, *initrd = NULL;
	g_autofree char *run_dir = NULL, *run_id = NULL;
	g_autofree char *disk = NULL, *disk_boot_opt = NULL;
	int disk_boot = INJECT_DISK_BOOT_KERNEL;
	gboolean keep_disks = FALSE;
	g_autoptr(inject_boot) boot = NULL;
	g_auto(GStrv) selftests = NULL;
	GOptionEntry entries[] = {
		{ "guests", 'n', 0, G_OPTION_ARG_STRING, &guests_opt, "number of guests, 1..64 (2)", "N" },
		{ "duration", 'd', 0, G_OPTION_ARG_STRING, &duration_opt,
		  "watch for S seconds, at most a week; 0: until Ctrl-C (10)", "S" },
		{ "json", 'j', 0, G_OPTION_ARG_FILENAME, &json_path, "write the result as JSON", "FILE" },
		{ "uri", 0, 0, G_OPTION_ARG_STRING, &uri, "libvirt URI (" FLEET_DEFAULT_URI ")", "URI" },
		{ "tcg", 0, 0, G_OPTION_ARG_NONE, &tcg, "force TCG even where KVM works", NULL },
		{ "vcpus", 0, 0, G_OPTION_ARG_STRING, &vcpus_opt, "vCPUs per guest, 1..64 (1)", "N" },
		{ "memory", 0, 0, G_OPTION_ARG_STRING, &memory_opt, "MiB per guest, 64..1048576 (192)", "MIB" },
		{ "kernel", 0, 0, G_OPTION_ARG_FILENAME, &kernel,
		  "guest kernel (with --initrd), or small: the small guest kernel, built once and "
		  "cached (with its initramfs unless --initrd is given)", "K" },
		{ "initrd", 0, 0, G_OPTION_ARG_FILENAME, &initrd, "guest initramfs (with --kernel)", "I" },
		{ "interval", 0, 0, G_OPTION_ARG_STRING, &interval_opt,
		  "heartbeat interval, ms, 10..10000 (100)", "MS" },
		{ "timeout", 0, 0, G_OPTION_ARG_STRING, &timeout_opt,
		  "hang after this long without heartbeat, ms, 100..3600000", "MS" },
		{ "boot-timeout", 0, 0, G_OPTION_ARG_STRING, &boot_timeout_opt,
		  "time a guest may take to its first heartbeat, ms, 1000..3600000 (30000 under KVM, "
		  "120000 under TCG; a real distribution image on a loaded host may need more)", "MS" },
		{ "parallel", 0, 0, G_OPTION_ARG_STRING, &parallel_opt,
		  "guests booting at once, 1..64 (twice the online CPUs)", "N" },
		{ "no-work", 0, 0, G_OPTION_ARG_NONE, &no_work, "no busy workload in the guests", NULL },
		{ "run-dir", 0, 0, G_OPTION_ARG_FILENAME, &run_dir, "console logs (results/fleet-<pid>)", "DIR" },
		{ "run-id", 0, 0, G_OPTION_ARG_STRING, &run_id, "names guests pmucanary-<id>-<n> (pid)", "ID" },
		{ "selftest", 0, 0, G_OPTION_ARG_STRING_ARRAY, &selftests,
		  "make a guest misbehave: GUEST=panic|hang|corrupt|reboot|oops (repeatable)", "G=KIND" },
		{ "disk", 0, 0, G_OPTION_ARG_FILENAME, &disk,
		  "disk guests: boot each on a fresh overlay of this injected image "
		  "(pmucanary image --inject) with the kernel and initrd taken from it", "OVERLAY" },
		{ "disk-guests", 0, 0, G_OPTION_ARG_STRING, &disk_guests_opt,
		  "with --disk, a mixed fleet: the last N of the guests boot the disk, the others "
		  "the initramfs (--kernel/--initrd or the built one); default all", "N" },
		{ "disk-boot", 0, 0, G_OPTION_ARG_STRING, &disk_boot_opt,
		  "with --disk: kernel (direct boot of the kernel and initrd taken from the image, the "
		  "default) or bootloader (the image's own grub/extlinux from the disk)", "HOW" },
		{ "keep", 0, 0, G_OPTION_ARG_NONE, &keep_disks,
		  "with --disk: keep the guests' overlays (<dir of OVERLAY>/<guest>.qcow2)", NULL },
		{ "selftest-at", 0, 0, G_OPTION_ARG_STRING, &selftest_at_opt,
		  "seconds after boot to fire, 0..3600 (1)", "S" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- boot a fleet of guests and watch their heartbeats");
	g_autoptr(GArray) tests = g_array_new(FALSE, TRUE, sizeof(struct selftest));
	g_autoptr(image_info) img = NULL;
	struct fleet_config cfg = { 0 };
	struct fleet *f = NULL;
	g_autoptr(GPtrArray) verdicts = NULL;
	bool tty = isatty(STDOUT_FILENO);
	int sigfd, rc, ret;
	int64_t t_watch;

	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!cli_parse(ctx, "fleet", &argc, &argv))
		return EXIT_USAGE;
	/* One rule for every count and duration: the scenario's bounds. */
	if (!cli_bounded_int("fleet", "guests", guests_opt, 1, 64, &guests) ||
	    !cli_bounded_int("fleet", "duration", duration_opt, 0, 7 * 86400, &duration) ||
	    !cli_bounded_int("fleet", "vcpus", vcpus_opt, 1, 64, &vcpus) ||
	    !cli_bounded_int("fleet", "memory", memory_opt, 64, 1 << 20, &memory) ||
	    !cli_bounded_int("fleet", "interval", interval_opt, HB_MIN_INTERVAL_MS,
			     HB_MAX_INTERVAL_MS, &interval) ||
	    !cli_bounded_int("fleet", "timeout", timeout_opt, 100, 3600000, &timeout) ||
	    !cli_bounded_int("fleet", "boot-timeout", boot_timeout_opt, 1000, 3600000, &boot_timeout) ||
	    !cli_bounded_int("fleet", "parallel", parallel_opt, 1, 64, &parallel) ||
	    !cli_bounded_int("fleet", "disk-guests", disk_guests_opt, 1, guests, &disk_guests) ||
	    !cli_bounded_seconds("fleet", "selftest-at", selftest_at_opt, 0, 3600, &selftest_at))
		return EXIT_USAGE;
	if (kernel && !strcmp(kernel, IMAGE_SMALL_KERNEL)) {
		g_autofree char *small = NULL;

		if (image_small_kernel(&small) < 0) {
			fprintf(stderr, "pmucanary fleet: --kernel small: %s\n", pc_errmsg());
			return EXIT_INFRA;
		}
		g_free(kernel);
		kernel = g_steal_pointer(&small);
		kernel_from = "small";
		if (!initrd) {
			/* everything the guest needs is built into the small kernel */
			struct image_options opt = { .kernel = kernel, .modules = image_no_modules };

			if (image_build(&opt, &img) < 0) {
				fprintf(stderr, "pmucanary fleet: guest image: %s\n", pc_errmsg());
				return EXIT_INFRA;
			}
			initrd = g_strdup(img->initrd_path);
		}
	}
	if (!kernel != !initrd) {
		fprintf(stderr, "pmucanary fleet: --kernel needs --initrd and --initrd needs --kernel\n");
		return EXIT_USAGE;
	}
	/* Before any guest boots: QEMU would boot nothing, or block on a FIFO. */
	if (kernel && image_kernel_check(kernel, NULL) < 0) {
		fprintf(stderr, "pmucanary fleet: --kernel %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	if (initrd && infile_check(initrd, INFILE_KERNEL) < 0) {
		fprintf(stderr, "pmucanary fleet: --initrd %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	if (!parse_selftests(selftests, guests, tests))
		return EXIT_USAGE;
	/* Before any image is built or guest booted: it names domains and files. */
	if (run_id && !fleet_run_id_ok(run_id)) {
		fprintf(stderr, "pmucanary fleet: option --run-id: '%s': use 1..48 of [A-Za-z0-9_.-]\n",
			run_id);
		return EXIT_USAGE;
	}
	/* A FILE that cannot be written fails before any guest boots. */
	if (json_path && outfile_check(json_path) < 0) {
		fprintf(stderr, "pmucanary fleet: --json: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	if (disk && inject_boot_load(disk, &boot) < 0) {
		fprintf(stderr, "pmucanary fleet: --disk %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	if (disk_guests_opt && !disk) {
		fprintf(stderr, "pmucanary fleet: --disk-guests needs --disk\n");
		return EXIT_USAGE;
	}
	if (disk_boot_opt && (disk_boot = inject_disk_boot_parse(disk_boot_opt)) < 0) {
		fprintf(stderr, "pmucanary fleet: option --disk-boot: expected kernel or bootloader, "
			"not '%s'\n", disk_boot_opt);
		return EXIT_USAGE;
	}
	if (disk_boot_opt && !disk) {
		fprintf(stderr, "pmucanary fleet: --disk-boot needs --disk\n");
		return EXIT_USAGE;
	}
	/* before any guest boots: an image without a bootloader boots nothing */
	if (boot && inject_boot_check(boot, disk_boot) < 0) {
		fprintf(stderr, "pmucanary fleet: --disk-boot bootloader: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	if (boot && !kernel && (!disk_guests || disk_guests == guests)) {
		kernel = g_strdup(boot->kernel);
		initrd = g_strdup(boot->initrd);
	}
	if (!kernel) {
		struct image_options opt = { 0 };

		if (image_build(&opt, &img) < 0) {
			fprintf(stderr, "pmucanary fleet: guest image: %s\n", pc_errmsg());
			return EXIT_INFRA;
		}
		kernel = g_strdup(img->kernel_path);
		initrd = g_strdup(img->initrd_path);
	}
	if (!run_dir)
		run_dir = g_strdup_printf("results/fleet-%d", (int)getpid());

	sigfd = fleet_signals_install();
	cfg.uri = uri;
	cfg.run_id = run_id;
	cfg.run_dir = run_dir;
	cfg.guests = guests;
	cfg.vcpus = vcpus;
	cfg.memory_mib = memory;
	cfg.kernel = kernel;
	cfg.initrd = initrd;
	cfg.hb_interval_ms = interval;
	cfg.hb_timeout_ms = timeout;
	cfg.boot_timeout_ms = (unsigned int)boot_timeout;   /* 0: the accel's default */
	cfg.parallel = parallel;
	cfg.force_tcg = tcg;
	cfg.no_work = no_work;
	if (boot) {
		cfg.disk = boot->overlay;
		cfg.disk_root = boot->cmdline_root;
		cfg.keep_disks = keep_disks;
		cfg.disk_guests = disk_guests;
		cfg.disk_bootloader = disk_boot == INJECT_DISK_BOOT_BOOTLOADER;
		if (disk_guests && disk_guests < guests) {
			cfg.disk_kernel = boot->kernel;
			cfg.disk_initrd = boot->initrd ? boot->initrd : "";
		}
	}
	if (fleet_new(&cfg, &f) < 0) {
		fprintf(stderr, "pmucanary fleet: %s\n", pc_errmsg());
		return EXIT_INFRA;
	}
	if (fleet_accel(f) == FLEET_ACCEL_TCG)
		fprintf(stderr, "pmucanary fleet: NOTE: TCG guests: hardware PMU/VMX interactions cannot be shown\n");
	rc = fleet_start(f);
	if (rc < 0)
		fprintf(stderr, "pmucanary fleet: %s\n", pc_errmsg());

	t_watch = g_get_monotonic_time();
	if (tty)
		status_print(f, false);
	while (rc == 0 && !fleet_signal_pending()) {
		double t = (g_get_monotonic_time() - t_watch) / 1e6;
		struct pollfd pfd = { .fd = sigfd, .events = POLLIN };

		if (duration && t >= duration)
			break;
		for (guint k = 0; k < tests->len; k++) {
			struct selftest *st = &g_array_index(tests, struct selftest, k);
			g_autofree char *line = g_strdup_printf("selftest %s", st->what);

			if (st->sent || t < selftest_at)
				continue;
			st->sent = true;
			if (fleet_send_command(f, st->guest, line) < 0)
				fprintf(stderr, "pmucanary fleet: %s\n", pc_errmsg());
		}
		poll(&pfd, sigfd >= 0 ? 1 : 0, tty ? 500 : 100);
		if (tty)
			status_print(f, true);
	}
	if (fleet_signal_pending())
		fprintf(stderr, "pmucanary fleet: signal %d: stopping the fleet\n", fleet_signal_pending());

	/* disk guests stop before the verdicts are read: stopping a harmed one
	 * reads its own logs out of its overlay into the evidence */
	if (boot)
		fleet_stop(f);
	fleet_verdicts_since(f, 0, &verdicts);
	ret = rc < 0 ? EXIT_INFRA : EXIT_CLEAN;
	printf("accel %s; %u guests; %u verdicts\n", fleet_accel_name(fleet_accel(f)), fleet_size(f),
	       verdicts->len);
	for (guint k = 0; k < verdicts->len; k++) {
		const struct fleet_verdict *v = verdicts->pdata[k];
		const char *nl = v->evidence ? strchr(v->evidence, '\n') : NULL;

		printf("%9.3f s  %-24s %-16s %.*s\n", v->t_s, fleet_guest_name(f, v->guest),
		       outcome_name(v->kind), nl ? (int)(nl - v->evidence) : (int)strlen(v->evidence),
		       v->evidence);
		if (v->kind != OUTCOME_INFRA && ret == EXIT_CLEAN)
			ret = EXIT_HARM;
	}
	if (json_path) {
		json_t *j = fleet_json(f);

		/* which guest kernel ran */
		json_object_set_new(j, "guest_kernel", json_pack("{s:s,s:s}", "source",
			kernel_from ? kernel_from : img ? "distribution" : boot ? "disk" : "given",
			"path", kernel));
		char *text = json_dumps(j, JSON_INDENT(2));
		g_autofree char *doc = text ? g_strconcat(text, "\n", NULL) : NULL;

		free(text);
		json_decref(j);
		if (!doc || outfile_write(json_path, doc, strlen(doc)) < 0) {
			fprintf(stderr, "pmucanary fleet: --json: %s\n",
				doc ? pc_errmsg() : "cannot build the JSON");
			ret = ret == EXIT_CLEAN ? EXIT_INFRA : ret;
		}
	}
	fleet_free(f);
	return ret;
}
