/* Fleet benchmarks; every figure is printed with its ratio against a
 * baseline measured in the same run.
 *
 *  boot:    boot to first heartbeat through pmucanary (libvirt) vs a plain
 *           qemu-system-x86_64 -kernel/-initrd of the same image, same
 *           devices, same command line (aim <= 1.15x)
 *  fleet:   fleet_start of N guests vs 1 guest
 *  parallel: fleet_start of N guests, all N booting at once vs at most the
 *           online CPU count at once (the default)
 *  panic:   panic-to-verdict latency over >= 10 panics: from the guest's ACK
 *           of "selftest panic" (sent just before sysrq c) and from the
 *           command send (aim <= 50 ms, issue 14)
 *  rss:     the harness's resident memory with M guests vs before the
 *           fleet existed (aim <= 30 MiB)
 *  restore: a panicked guest back to its first heartbeat, restored from its
 *           saved image vs booted cold (fleet_restart_guest with and without
 *           cold_restart; median of R each; aim <= 0.2x); the one restart
 *           that boots cold and saves the image is shown apart
 *
 * Usage: build/bench/fleet [--tcg] [--runs R] [--guests N] [--panics P]
 *        [--rss-guests M] [--only boot|fleet|panic|rss|restore] */
#include "fleet.h"
#include "hbproto.h"
#include "image.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static gboolean opt_tcg;
static gint opt_runs = 3, opt_guests = 4, opt_panics = 10, opt_rss_guests = 8;
static gchar *opt_only;
static unsigned int cur_parallel; /* cfg.parallel of the next fleet (0: online CPUs) */
static char *kernel, *initrd, *work_dir;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double now_s(void)
{
	return g_get_monotonic_time() / 1e6;
}

static long rss_kib(void)
{
	g_autofree char *s = NULL;
	char *p;

	if (!g_file_get_contents("/proc/self/status", &s, NULL, NULL))
		return -1;
	p = strstr(s, "VmRSS:");
	return p ? atol(p + 6) : -1;
}

static struct fleet *fleet_make_cfg(unsigned int guests, const char *tag, bool cold)
{
	struct fleet_config cfg = {
		.run_dir = work_dir, .guests = guests, .kernel = kernel, .initrd = initrd,
		.force_tcg = opt_tcg, .cold_restart = cold, .parallel = cur_parallel,
	};
	g_autofree char *id = g_strdup_printf("bench%d%s", (int)getpid(), tag);
	struct fleet *f = NULL;

	cfg.run_id = id;
	if (fleet_new(&cfg, &f) < 0) {
		fprintf(stderr, "fleet_new: %s\n", pc_errmsg());
		exit(125);
	}
	return f;
}

static struct fleet *fleet_make(unsigned int guests, const char *tag)
{
	return fleet_make_cfg(guests, tag, false);
}

/* Plain QEMU with the same image, devices and command line; seconds from
 * spawn to the first HB line on the heartbeat socket, or < 0. */
static double qemu_plain_boot(bool kvm)
{
	struct fleet_config cfg = { .kernel = kernel, .initrd = initrd };
	g_autofree char *cmdline = fleet_kernel_cmdline(&cfg);
	g_autofree char *sock = g_strdup_printf("%s/plain-%d.sock", work_dir, (int)getpid());
	g_autofree char *console = g_strdup_printf("file:%s/plain.console", work_dir);
	g_autofree char *chardev = g_strdup_printf("socket,id=hb,path=%s,server=on,wait=off", sock);
	char *argv[] = {
		"qemu-system-x86_64", "-machine", kvm ? "pc,accel=kvm" : "pc,accel=tcg",
		"-cpu", kvm ? "host" : "max", "-m", "192", "-smp", "1",
		"-nodefaults", "-display", "none", "-no-user-config",
		"-kernel", kernel, "-initrd", initrd, "-append", cmdline,
		"-serial", console, "-device", "virtio-serial-pci",
		"-chardev", chardev,
		"-device", "virtserialport,chardev=hb,name=" HB_PORT_NAME,
		"-device", "pvpanic", NULL
	};
	GPid pid;
	double t0 = now_s(), t = -1;
	int fd = -1;
	char buf[4096];
	size_t have = 0;

	unlink(sock);
	if (!g_spawn_async(NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
			   G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &pid, NULL))
		return -1;
	while (now_s() - t0 < 180) {
		if (fd < 0) {
			struct sockaddr_un a = { .sun_family = AF_UNIX };

			g_strlcpy(a.sun_path, sock, sizeof(a.sun_path));
			fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
				close(fd);
				fd = -1;
				g_usleep(2000);
				continue;
			}
		}
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);

		if (n <= 0)
			break;
		have += n;
		buf[have] = 0;
		if (strstr(buf, "HB v=1")) {
			t = now_s() - t0;
			break;
		}
		if (have > sizeof(buf) / 2)
			have = 0;
	}
	if (fd >= 0)
		close(fd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	g_spawn_close_pid(pid);
	unlink(sock);
	return t;
}

static double fleet_boot_cfg(unsigned int guests, const char *tag, bool cold, struct fleet **keep)
{
	struct fleet *f = fleet_make_cfg(guests, tag, cold);
	double t0 = now_s(), t;

	if (fleet_start(f) < 0) {
		fprintf(stderr, "fleet_start: %s\n", pc_errmsg());
		fleet_free(f);
		return -1;
	}
	t = now_s() - t0;
	if (keep)
		*keep = f;
	else
		fleet_free(f);
	return t;
}

static double fleet_boot(unsigned int guests, const char *tag, struct fleet **keep)
{
	return fleet_boot_cfg(guests, tag, false, keep);
}

static void bench_boot(void)
{
	double plain[32], pc[32];
	struct fleet *probe = fleet_make(1, "p");
	bool kvm = fleet_accel(probe) == FLEET_ACCEL_KVM;
	int runs = MIN(opt_runs, 32);

	fleet_free(probe);
	for (int r = 0; r < runs; r++) {
		g_autofree char *tag = g_strdup_printf("b%d", r);

		plain[r] = qemu_plain_boot(kvm);
		pc[r] = fleet_boot(1, tag, NULL);
		printf("  run %d: plain qemu %.2f s, pmucanary %.2f s\n", r, plain[r], pc[r]);
	}
	double mp = median(plain, runs), mc = median(pc, runs);

	printf("boot to first heartbeat (%s, median of %d): plain qemu %.2f s, pmucanary %.2f s, "
	       "ratio %.2fx (aim <= 1.15x)\n", kvm ? "kvm" : "tcg", runs, mp, mc, mc / mp);
}

static void bench_fleet(void)
{
	double one = fleet_boot(1, "f1", NULL);
	double many = fleet_boot(opt_guests, "fN", NULL);

	printf("fleet_start: 1 guest %.2f s, %d guests %.2f s, ratio %.2fx (%ld online CPUs)\n",
	       one, opt_guests, many, many / one, sysconf(_SC_NPROCESSORS_ONLN));
}

/* N guests booting all at once against at most the online CPU count at
 * once (the default); runs alternate. */
static void bench_parallel(void)
{
	unsigned int cpus = MAX(1, (unsigned int)sysconf(_SC_NPROCESSORS_ONLN));
	int runs = MIN(opt_runs, 32);
	double base[32], all[32];

	if ((unsigned int)opt_guests <= cpus) {
		printf("parallel: --guests %d is not beyond the %u online CPUs: nothing to compare\n",
		       opt_guests, cpus);
		return;
	}
	for (int r = 0; r < runs; r++) {
		g_autofree char *t1 = g_strdup_printf("pc%d", r), *t2 = g_strdup_printf("pa%d", r);

		cur_parallel = cpus;
		base[r] = fleet_boot(opt_guests, t1, NULL);
		cur_parallel = opt_guests;
		all[r] = fleet_boot(opt_guests, t2, NULL);
		cur_parallel = 0;
		printf("  run %d: %d guests, %u at once %.2f s, all at once %.2f s\n", r, opt_guests,
		       cpus, base[r], all[r]);
	}
	double mb = median(base, runs), ma = median(all, runs);

	printf("fleet_start of %d guests (median of %d): parallel %u (online CPUs) %.2f s, "
	       "parallel %d %.2f s, ratio %.2fx\n", opt_guests, runs, cpus, mb, opt_guests, ma, ma / mb);
}

static void bench_panic(void)
{
	struct fleet *f = NULL;
	double from_ack[256], from_send[256];
	int n = 0;

	if (fleet_boot(1, "pn", &f) < 0)
		return;
	for (int i = 0; i < MIN(opt_panics, 256); i++) {
		uint64_t mark;
		int64_t t_send;
		g_autoptr(GPtrArray) v = NULL;
		struct fleet_guest_status st;

		if (i > 0 && fleet_restart_guest(f, 0) < 0) {
			fprintf(stderr, "restart: %s\n", pc_errmsg());
			break;
		}
		g_usleep(300000);
		mark = fleet_mark(f);
		t_send = g_get_monotonic_time();
		if (fleet_send_command(f, 0, "selftest panic") < 0 || fleet_wait_verdict(f, mark, 10000) < 0) {
			fprintf(stderr, "panic %d: %s\n", i, pc_errmsg());
			continue;
		}
		fleet_verdicts_since(f, mark, &v);
		fleet_guest_status(f, 0, &st);
		const struct fleet_verdict *vd = v->pdata[0];

		if (vd->kind != OUTCOME_GUEST_CRASH || st.last_ack_us < t_send) {
			fprintf(stderr, "panic %d: unexpected %s\n", i, outcome_name(vd->kind));
			continue;
		}
		from_ack[n] = (vd->t_us - st.last_ack_us) / 1e3;
		from_send[n] = (vd->t_us - t_send) / 1e3;
		printf("  panic %d: %.1f ms after the ACK, %.1f ms after the command\n", i, from_ack[n],
		       from_send[n]);
		n++;
	}
	if (n) {
		double mx = 0, mxs = 0;

		for (int i = 0; i < n; i++) {
			mx = MAX(mx, from_ack[i]);
			mxs = MAX(mxs, from_send[i]);
		}
		printf("panic to verdict (%s, %d panics): from ACK median %.1f ms max %.1f ms; "
		       "from command median %.1f ms max %.1f ms; median/aim(50 ms) %.2fx\n",
		       fleet_accel_name(fleet_accel(f)), n, median(from_ack, n), mx, median(from_send, n),
		       mxs, median(from_ack, n) / 50.0);
	}
	fleet_free(f);
}

/* Panics guest 0 and restarts it: seconds from the restart call to its
 * first heartbeat (fleet_restart_guest returns then), or < 0. */
static double panic_restart(struct fleet *f)
{
	uint64_t mark = fleet_mark(f);
	double t0;

	if (fleet_send_command(f, 0, "selftest panic") < 0 || fleet_wait_verdict(f, mark, 30000) < 0) {
		fprintf(stderr, "panic: %s\n", pc_errmsg());
		return -1;
	}
	t0 = now_s();
	if (fleet_restart_guest(f, 0) < 0) {
		fprintf(stderr, "restart: %s\n", pc_errmsg());
		return -1;
	}
	return now_s() - t0;
}

static void bench_restore(void)
{
	double cold[32], rest[32], first = -1;
	int runs = MIN(opt_runs, 32), nc = 0, nr = 0;
	struct fleet *fc = NULL, *fr = NULL;
	struct fleet_guest_status st;

	if (fleet_boot_cfg(1, "rc", true, &fc) < 0 || fleet_boot_cfg(1, "rr", false, &fr) < 0)
		goto out;
	/* the first restart of a restoring fleet boots cold and saves */
	first = panic_restart(fr);
	for (int r = 0; r < runs; r++) {
		double c = panic_restart(fc), x = panic_restart(fr);

		if (c > 0)
			cold[nc++] = c;
		if (x > 0)
			rest[nr++] = x;
		printf("  run %d: cold boot %.2f s, restore %.2f s\n", r, c, x);
	}
	fleet_guest_status(fr, 0, &st);
	if (nc && nr)
		printf("restart to first heartbeat (%s, median of %d/%d): cold boot %.2f s, restore %.2f s, "
		       "ratio %.2fx (aim <= 0.2x); first restart (cold boot + save + restore) %.2f s; "
		       "%u restores, %u failed\n", fleet_accel_name(fleet_accel(fr)), nc, nr,
		       median(cold, nc), median(rest, nr), median(rest, nr) / median(cold, nc), first,
		       st.restores, st.restore_failures);
out:
	fleet_free(fc);
	fleet_free(fr);
}

static void bench_rss(void)
{
	long before = rss_kib();
	struct fleet *f = NULL;
	long during;

	if (fleet_boot(opt_rss_guests, "rss", &f) < 0)
		return;
	g_usleep(3000000);
	during = rss_kib();
	printf("harness RSS: %ld KiB before the fleet, %ld KiB with %d guests (+%ld KiB); "
	       "%.1f MiB, ratio to aim(30 MiB) %.2fx\n", before, during, opt_rss_guests,
	       during - before, during / 1024.0, during / 1024.0 / 30.0);
	fleet_free(f);
}

int main(int argc, char **argv)
{
	GOptionEntry entries[] = {
		{ "tcg", 0, 0, G_OPTION_ARG_NONE, &opt_tcg, "force TCG", NULL },
		{ "runs", 0, 0, G_OPTION_ARG_INT, &opt_runs, "boot runs (3)", "R" },
		{ "guests", 0, 0, G_OPTION_ARG_INT, &opt_guests, "fleet size for the fleet bench (4)", "N" },
		{ "panics", 0, 0, G_OPTION_ARG_INT, &opt_panics, "panics (10)", "P" },
		{ "rss-guests", 0, 0, G_OPTION_ARG_INT, &opt_rss_guests, "guests for the RSS bench (8)", "M" },
		{ "only", 0, 0, G_OPTION_ARG_STRING, &opt_only, "boot|fleet|parallel|panic|rss|restore", "B" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- fleet benchmarks");
	g_autoptr(GError) err = NULL;
	g_autoptr(image_info) img = NULL;
	struct image_options opt = { 0 };
	g_autofree char *agent = NULL;
	const char *build = g_getenv("PMUCANARY_BUILD");

	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
		fprintf(stderr, "%s\n", err->message);
		return 2;
	}
	log_set_level(LOG_WARN);
	agent = g_strdup_printf("%s/guest-images/pmucanary-agent", build ? build : "build");
	opt.agent = agent;
	if (image_build(&opt, &img) < 0) {
		fprintf(stderr, "image: %s\n", pc_errmsg());
		return 125;
	}
	kernel = img->kernel_path;
	initrd = img->initrd_path;
	work_dir = g_strdup_printf("/tmp/pmucanary-bench-fleet-%d", (int)getpid());
	g_mkdir_with_parents(work_dir, 0755);
	printf("image %s\n", img->dir);
	if (!opt_only || !strcmp(opt_only, "boot"))
		bench_boot();
	if (!opt_only || !strcmp(opt_only, "fleet"))
		bench_fleet();
	if (!opt_only || !strcmp(opt_only, "parallel"))
		bench_parallel();
	if (!opt_only || !strcmp(opt_only, "panic"))
		bench_panic();
	if (!opt_only || !strcmp(opt_only, "rss"))
		bench_rss();
	if (!opt_only || !strcmp(opt_only, "restore"))
		bench_restore();
	image_remove_tree(work_dir); /* the fleets' console logs */
	return 0;
}
