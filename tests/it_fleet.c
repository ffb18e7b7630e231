/* Fleet against real guests (libvirt qemu:///system, the real agent image):
 * boot, a panic in one guest while the others stay healthy, a guest paused
 * through libvirt, the agent's self-tests (garbage, reboot, corrupt, hang, oops), a
 * guest destroyed from outside the harness, and no domain left behind --
 * also after the CLI is SIGKILLed, SIGTERMed or SIGINTed.
 *
 * KVM where hardware KVM works, else TCG; PMUCANARY_ACCEL=tcg forces TCG.
 * Skips (exit 0) without a libvirt connection or a guest kernel. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fleet.h"
#include "hbproto.h"
#include "image.h"
#include "log.h"
#include "virt.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GUESTS 4

static struct fleet *fleet;
static virConnectPtr conn; /* the test's own connection: "outside the harness" */
static char run_id[32];
static char *run_dir, *kernel, *initrd;
static bool tcg;

static unsigned int prefix_count(const char *prefix)
{
	g_autoptr(GPtrArray) doms = NULL;

	assert_int_equal(virt_domains_list(conn, prefix, &doms), 0);
	return doms->len;
}

/* Waits for the next verdict after mark; asserts its guest and kind. */
static struct fleet_verdict *expect_verdict(uint64_t mark, unsigned int guest, enum outcome kind,
					    unsigned int timeout_ms)
{
	g_autoptr(GPtrArray) v = NULL;
	struct fleet_verdict *got;

	if (fleet_wait_verdict(fleet, mark, timeout_ms) < 0)
		fail_msg("no verdict for guest %u (%s) within %u ms", guest, outcome_name(kind), timeout_ms);
	fleet_verdicts_since(fleet, mark, &v);
	got = v->pdata[0];
	print_message("verdict %s on %s at %.3f s: %.200s\n", outcome_name(got->kind),
		      fleet_guest_name(fleet, got->guest), got->t_s, got->evidence);
	assert_int_equal(got->guest, guest);
	assert_string_equal(outcome_name(got->kind), outcome_name(kind));
	return g_ptr_array_steal_index(v, 0);
}

static void expect_state(unsigned int i, enum guest_state s)
{
	struct fleet_guest_status st;

	assert_int_equal(fleet_guest_status(fleet, i, &st), 0);
	if (st.state != s)
		fail_msg("%s is %s, expected %s", st.name, guest_state_name(st.state), guest_state_name(s));
}

static void send(unsigned int i, const char *line)
{
	if (fleet_send_command(fleet, i, line) < 0)
		fail_msg("send '%s' to %u: %s", line, i, pc_errmsg());
}

static void restart(unsigned int i)
{
	if (fleet_restart_guest(fleet, i) < 0)
		fail_msg("restart %u: %s", i, pc_errmsg());
	expect_state(i, GUEST_STATE_HEALTHY);
}

static int group_setup(void **state)
{
	g_autoptr(image_info) img = NULL;
	struct image_options opt = { 0 };
	const char *top = g_getenv("PMUCANARY_TOP");
	const char *acc = g_getenv("PMUCANARY_ACCEL");

	const char *build = g_getenv("PMUCANARY_BUILD");
	g_autofree char *agent = g_strdup_printf("%s/guest-images/pmucanary-agent",
						 build ? build : "build");

	tcg = acc && !strcmp(acc, "tcg");
	opt.agent = agent;
	if (virt_connect(FLEET_DEFAULT_URI, &conn) < 0) {
		print_message("SKIP: %s\n", pc_errmsg());
		exit(77);
	}
	if (image_build(&opt, &img) < 0) {
		/* building the image is our own code: a failure, not a skip */
		print_message("FAIL: no guest image: %s\n", pc_errmsg());
		exit(1);
	}
	kernel = g_strdup(img->kernel_path);
	initrd = g_strdup(img->initrd_path);
	snprintf(run_id, sizeof(run_id), "it%d", (int)getpid());
	run_dir = g_strdup_printf("%s/results/it_fleet-%d", top ? top : ".", (int)getpid());
	return 0;
}

/* Run directories hold only flat console files. */
static void rm_run_dir(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *n;

	if (!d)
		return;
	while ((n = g_dir_read_name(d))) {
		g_autofree char *p = g_build_filename(dir, n, NULL);

		unlink(p);
	}
	rmdir(dir);
}

static int group_teardown(void **state)
{
	static const int sigs[] = { SIGKILL, SIGTERM, SIGINT };

	g_autofree char *prefix = g_strdup_printf(FLEET_NAME_PREFIX "%s-", run_id);

	fleet_free(fleet);
	fleet = NULL;
	if (prefix_count(prefix) != 0)
		fail_msg("domains left behind");
	virt_close(conn);
	rm_run_dir(run_dir);
	{
		g_autofree char *d = g_strdup_printf("%s-json", run_dir);

		rm_run_dir(d);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++) {
		g_autofree char *d = g_strdup_printf("%s-s%d", run_dir, sigs[i]);

		rm_run_dir(d);
	}
	return 0;
}

static void test_boot(void **state)
{
	struct fleet_config cfg = {
		.run_id = run_id, .run_dir = run_dir, .guests = GUESTS, .kernel = kernel,
		.initrd = initrd, .force_tcg = tcg, .hb_timeout_ms = 3000,
		/* idle guests: TCG boots and restarts stay fast on small CI hosts */
		.no_work = true,
	};
	int64_t t0 = g_get_monotonic_time();

	if (fleet_new(&cfg, &fleet) < 0)
		fail_msg("fleet_new: %s", pc_errmsg());
	print_message("accel %s\n", fleet_accel_name(fleet_accel(fleet)));
	if (fleet_start(fleet) < 0)
		fail_msg("fleet_start: %s", pc_errmsg());
	print_message("%d guests up in %.1f s\n", GUESTS, (g_get_monotonic_time() - t0) / 1e6);
	for (unsigned int i = 0; i < GUESTS; i++) {
		struct fleet_guest_status st;

		fleet_guest_status(fleet, i, &st);
		assert_int_equal(st.state, GUEST_STATE_HEALTHY);
		assert_true(st.first_heartbeat_s > 0);
		assert_true(st.seq >= 1);
		assert_int_equal(st.lines_bad, 0);
	}
	assert_int_equal(fleet_wait_healthy(fleet, 10000), 0);
	assert_int_equal(fleet_mark(fleet), 0);
}

static long vm_rss_kib(void)
{
	g_autofree char *text = NULL;
	const char *p;

	if (!g_file_get_contents("/proc/self/status", &text, NULL, NULL) ||
	    !(p = strstr(text, "VmRSS:")))
		return -1;
	return strtol(p + 6, NULL, 10);
}

/* "selftest garbage" on the real port: every hostile line is rejected and
 * counted exactly once, the harness's memory stays put, the heartbeats in
 * between and after are accepted, no verdict, the other guests see nothing. */
static void test_selftest_garbage(void **state)
{
	struct fleet_guest_status before[GUESTS], st;
	uint64_t mark = fleet_mark(fleet);
	int64_t t0 = g_get_monotonic_time(), t_done;
	long rss0 = vm_rss_kib(), rss1;
	g_autoptr(GPtrArray) v = NULL;

	for (unsigned int i = 0; i < GUESTS; i++)
		assert_int_equal(fleet_guest_status(fleet, i, &before[i]), 0);
	send(1, "selftest garbage");
	do {
		g_usleep(100000);
		assert_int_equal(fleet_guest_status(fleet, 1, &st), 0);
	} while (st.lines_bad < before[1].lines_bad + HB_SELFTEST_GARBAGE_LINES &&
		 g_get_monotonic_time() - t0 < 60000000);
	t_done = g_get_monotonic_time();
	g_usleep(1000000); /* heartbeats after the burst; any stray rejection */
	assert_int_equal(fleet_guest_status(fleet, 1, &st), 0);
	rss1 = vm_rss_kib();
	print_message("garbage: %" PRIu64 " lines rejected in %.1f s, seq %" PRIu64 " -> %" PRIu64
		      ", RSS %ld -> %ld KiB\n", st.lines_bad - before[1].lines_bad,
		      (t_done - t0) / 1e6, before[1].seq, st.seq, rss0, rss1);
	assert_int_equal(st.lines_bad - before[1].lines_bad, HB_SELFTEST_GARBAGE_LINES);
	assert_string_equal(st.last_ack, "selftest");
#ifndef __SANITIZE_ADDRESS__
	assert_true(rss0 > 0 && rss1 - rss0 < 4096);
#else
	/* ASan's quarantine keeps every freed buffer of the 10 MB flood
	 * resident, so RSS says nothing about our bound here; the plain
	 * build checks it, and ASan itself checks for leaks and overflows. */
	print_message("RSS bound not checked under ASan (quarantine)\n");
#endif
	assert_int_equal(st.state, GUEST_STATE_HEALTHY);
	assert_int_equal(st.boots, before[1].boots);
	assert_true(st.seq > before[1].seq + 5);
	assert_true(st.lines_ok > before[1].lines_ok + 5);
	assert_int_equal(fleet_wait_healthy(fleet, 2000), 0);
	fleet_verdicts_since(fleet, mark, &v);
	assert_int_equal(v->len, 0);
	for (unsigned int i = 0; i < GUESTS; i++) {
		if (i == 1)
			continue;
		assert_int_equal(fleet_guest_status(fleet, i, &st), 0);
		assert_int_equal(st.lines_bad, before[i].lines_bad);
		assert_int_equal(st.state, GUEST_STATE_HEALTHY);
		assert_true(st.seq > before[i].seq);
	}
}

static void test_panic_is_crash_others_healthy(void **state)
{
	uint64_t mark = fleet_mark(fleet);
	int64_t t0 = g_get_monotonic_time();
	struct fleet_verdict *v;

	send(0, "selftest panic");
	v = expect_verdict(mark, 0, OUTCOME_GUEST_CRASH, 5000);
	print_message("panic command to verdict: %.0f ms\n", (v->t_us - t0) / 1e3);
	assert_true(v->t_us - t0 < 1000000);
	assert_non_null(strstr(v->evidence, "PANICKED"));
	fleet_verdict_free(v);
	g_usleep(1500000); /* console evidence and any stray verdict */
	{
		g_autoptr(GPtrArray) all = NULL;

		fleet_verdicts_since(fleet, mark, &all);
		assert_int_equal(all->len, 1);
		assert_non_null(strstr(((struct fleet_verdict *)all->pdata[0])->evidence, "sysrq"));
	}
	expect_state(0, GUEST_STATE_HARMED);
	for (unsigned int i = 1; i < GUESTS; i++)
		expect_state(i, GUEST_STATE_HEALTHY);
}

static void test_paused_is_hang(void **state)
{
	uint64_t mark = fleet_mark(fleet);
	virDomainPtr d = NULL;
	struct fleet_verdict *v;

	assert_int_equal(virt_domain_lookup(conn, fleet_guest_name(fleet, 1), &d), 0);
	assert_int_equal(virt_domain_suspend(d), 0);
	v = expect_verdict(mark, 1, OUTCOME_GUEST_HANG, 8000);
	assert_non_null(strstr(v->evidence, "no heartbeat"));
	g_usleep(1000000);
	fleet_verdict_free(v);
	{
		g_autoptr(GPtrArray) all = NULL;

		fleet_verdicts_since(fleet, mark, &all);
		assert_non_null(strstr(((struct fleet_verdict *)all->pdata[0])->evidence, "paused"));
	}
	virt_domain_free(d);
}

static void test_selftest_reboot(void **state)
{
	uint64_t mark = fleet_mark(fleet);
	struct fleet_verdict *v;

	send(2, "selftest reboot");
	v = expect_verdict(mark, 2, OUTCOME_GUEST_REBOOT, 60000);
	fleet_verdict_free(v);
}

static void test_selftest_corrupt(void **state)
{
	uint64_t mark = fleet_mark(fleet);
	struct fleet_verdict *v;

	send(3, "selftest corrupt");
	v = expect_verdict(mark, 3, OUTCOME_GUEST_CORRUPTION, 10000);
	assert_non_null(strstr(v->evidence, "offset 0x"));
	fleet_verdict_free(v);
}

static void test_selftest_hang_gets_nmi(void **state)
{
	uint64_t mark;
	struct fleet_verdict *v;

	restart(0);
	mark = fleet_mark(fleet);
	send(0, "selftest hang");
	v = expect_verdict(mark, 0, OUTCOME_GUEST_HANG, 10000);
	fleet_verdict_free(v);
	g_usleep(2000000); /* NMI, its panic, the console */
	{
		g_autoptr(GPtrArray) all = NULL;
		const char *ev;

		fleet_verdicts_since(fleet, mark, &all);
		assert_int_equal(all->len, 1); /* the NMI's panic is evidence, not a crash */
		ev = ((struct fleet_verdict *)all->pdata[0])->evidence;
		print_message("hang evidence:\n%.1500s\n", ev);
		assert_non_null(strstr(ev, "NMI injected"));
		assert_non_null(strstr(ev, "not syncing")); /* what the NMI made it print */
	}
}

static void test_selftest_oops(void **state)
{
	uint64_t mark;
	struct fleet_verdict *v;

	restart(2);
	mark = fleet_mark(fleet);
	send(2, "selftest oops");
	v = expect_verdict(mark, 2, OUTCOME_GUEST_OOPS, 10000);
	fleet_verdict_free(v);
}

static void test_destroyed_outside(void **state)
{
	uint64_t mark;
	virDomainPtr d = NULL;
	struct fleet_verdict *v;

	restart(3);
	mark = fleet_mark(fleet);
	assert_int_equal(virt_domain_lookup(conn, fleet_guest_name(fleet, 3), &d), 0);
	assert_int_equal(virt_domain_destroy(d), 0);
	virt_domain_free(d);
	v = expect_verdict(mark, 3, OUTCOME_GUEST_CRASH, 5000);
	assert_non_null(strstr(v->evidence, "destroyed from outside"));
	fleet_verdict_free(v);
}

static void test_stop_leaves_nothing(void **state)
{
	g_autofree char *prefix = g_strdup_printf(FLEET_NAME_PREFIX "%s-", run_id);
	json_t *j = fleet_json(fleet);

	assert_int_equal(json_array_size(json_object_get(j, "guests")), GUESTS);
	json_decref(j);
	assert_true(prefix_count(prefix) > 0);
	fleet_stop(fleet);
	assert_int_equal(prefix_count(prefix), 0);
}

/* The CLI killed by sig once its guest domain exists: nothing may remain. */
static void cli_killed(int sig)
{
	const char *bin = g_getenv("PMUCANARY_BIN");
	g_autofree char *id = g_strdup_printf("%ss%d", run_id, sig);
	g_autofree char *prefix = g_strdup_printf(FLEET_NAME_PREFIX "%s-", id);
	g_autofree char *dir = g_strdup_printf("%s-s%d", run_dir, sig);
	char *argv[] = { (char *)(bin ? bin : "build/pmucanary"), "fleet", "--guests", "1",
			 "--duration", "0", "--run-id", id, "--run-dir", dir,
			 tcg ? "--tcg" : "--quiet", NULL };
	GPid pid;
	int status;
	int i;

	assert_true(g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
				  NULL, NULL, &pid, NULL));
	for (i = 0; i < 600 && prefix_count(prefix) == 0; i++)
		g_usleep(50000);
	assert_true(prefix_count(prefix) == 1);
	if (sig == SIGINT) {
		/* this one while watching: after the first heartbeat */
		g_autofree char *console = g_strdup_printf("%s/%s0.console", dir, prefix);

		for (i = 0; i < 1200; i++) {
			g_autofree char *text = NULL;

			if (g_file_get_contents(console, &text, NULL, NULL) &&
			    strstr(text, "first heartbeat"))
				break;
			g_usleep(100000);
		}
		g_usleep(500000);
	}
	g_usleep(300000);
	kill(pid, sig);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (sig == SIGKILL)
		assert_true(WIFSIGNALED(status));
	else
		assert_true(WIFEXITED(status));
	for (i = 0; i < 100 && prefix_count(prefix) != 0; i++)
		g_usleep(100000);
	print_message("signal %d: domains gone %.1f s after the exit\n", sig, i / 10.0);
	assert_int_equal(prefix_count(prefix), 0);
}

static void test_cli_sigkill(void **state)
{
	cli_killed(SIGKILL);
}

static void test_cli_sigterm(void **state)
{
	cli_killed(SIGTERM);
}

static void test_cli_sigint(void **state)
{
	cli_killed(SIGINT);
}

/* A guest whose harness died without AUTODESTROY firing (made here as a
 * persistent-connection domain with a dead pid in its metadata) is destroyed
 * by the next fleet_new(). */
static void test_reap_stale(void **state)
{
	struct fleet_config cfg = {
		.run_id = "stale", .run_dir = run_dir, .guests = 1, .kernel = kernel,
		.initrd = initrd, .force_tcg = true, .no_work = true,
	};
	g_autofree char *name = g_strdup_printf(FLEET_NAME_PREFIX "%s-stale-0", run_id);
	g_autofree char *console = g_strdup_printf("%s/%s.console", run_dir, name);
	g_autofree char *xml = fleet_domain_xml(&cfg, FLEET_ACCEL_TCG, name, console, 0);
	g_autofree char *mine = g_strdup_printf("pid='%d'", (int)getpid());
	g_autofree char *prefix = g_strdup_printf("%s-", name);
	g_auto(GStrv) parts = g_strsplit(xml, mine, 2);
	g_autofree char *dead = NULL;
	virDomainPtr d = NULL;
	struct fleet *f2 = NULL;
	GPid pid;
	int status;
	char *argv[] = { "true", NULL };

	/* a pid that surely exited: a reaped child of ours */
	assert_true(g_spawn_async(NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD,
				  NULL, NULL, &pid, NULL));
	waitpid(pid, &status, 0);
	assert_non_null(parts[1]);
	dead = g_strdup_printf("%spid='%d'%s", parts[0], (int)pid, parts[1]);
	g_mkdir_with_parents(run_dir, 0755);
	if (virt_domain_create(conn, dead, false, &d) < 0)
		fail_msg("create: %s", pc_errmsg());
	assert_int_equal(prefix_count(name), 1);
	cfg.run_dir = run_dir;
	assert_int_equal(fleet_new(&cfg, &f2), 0);
	assert_int_equal(prefix_count(name), 0);
	fleet_free(f2);
	virt_domain_destroy(d);
	virt_domain_free(d);
}

/* The CLI contract: a self-test harm exits 1 and the JSON has its shape. */
static void test_cli_json(void **state)
{
	const char *bin = g_getenv("PMUCANARY_BIN");
	g_autofree char *id = g_strdup_printf("%sjson", run_id);
	g_autofree char *dir = g_strdup_printf("%s-json", run_dir);
	g_autofree char *json = g_strdup_printf("%s-json.json", run_dir);
	char *argv[] = { (char *)(bin ? bin : "build/pmucanary"), "fleet", "--guests", "2",
			 "--duration", "3", "--run-id", id, "--run-dir", dir, "--json", json,
			 "--selftest", "1=corrupt", "--no-work", tcg ? "--tcg" : "--quiet", NULL };
	int status = -1;
	json_error_t jerr;
	json_t *j, *g1, *v;

	assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL,
				 &status, NULL));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	j = json_load_file(json, 0, &jerr);
	assert_non_null(j);
	assert_true(json_is_string(json_object_get(j, "accel")));
	assert_true(json_is_array(json_object_get(j, "limitations")));
	assert_int_equal(json_array_size(json_object_get(j, "guests")), 2);
	assert_int_equal(json_array_size(json_object_get(json_array_get(json_object_get(j, "guests"), 0),
							 "verdicts")), 0);
	g1 = json_array_get(json_object_get(j, "guests"), 1);
	assert_true(json_is_number(json_object_get(g1, "first_heartbeat_s")));
	assert_string_equal(json_string_value(json_object_get(g1, "state")), "harmed");
	v = json_array_get(json_object_get(g1, "verdicts"), 0);
	assert_string_equal(json_string_value(json_object_get(v, "kind")), "GUEST_CORRUPTION");
	assert_true(json_is_number(json_object_get(v, "t_s")));
	assert_non_null(strstr(json_string_value(json_object_get(v, "evidence")), "offset"));
	json_decref(j);
	unlink(json);
	assert_int_equal(prefix_count(id), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot),
		cmocka_unit_test(test_selftest_garbage),
		cmocka_unit_test(test_panic_is_crash_others_healthy),
		cmocka_unit_test(test_paused_is_hang),
		cmocka_unit_test(test_selftest_reboot),
		cmocka_unit_test(test_selftest_corrupt),
		cmocka_unit_test(test_selftest_hang_gets_nmi),
		cmocka_unit_test(test_selftest_oops),
		cmocka_unit_test(test_destroyed_outside),
		cmocka_unit_test(test_stop_leaves_nothing),
		cmocka_unit_test(test_reap_stale),
		cmocka_unit_test(test_cli_json),
		cmocka_unit_test(test_cli_sigkill),
		cmocka_unit_test(test_cli_sigterm),
		cmocka_unit_test(test_cli_sigint),
	};
	log_set_level(LOG_WARN);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
