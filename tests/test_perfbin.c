/* Tests for lib/perfbin: turning a capture into a cell (feature probes
 * skipped, perf's own fallbacks as tries, parser rejections), and Debian's
 * real perf against the perf-6.1 profile (skipped without /usr/bin/perf). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "attr.h"
#include "log.h"
#include "outcome.h"
#include "perfbin.h"
#include "prober.h"
#include "profile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define PERF "/usr/bin/perf"

static struct pmu_set *host_pmus(void)
{
	struct pmu_set *pmus = NULL;

	assert_int_equal(pmu_set_load(NULL, &pmus), 0);
	return pmus;
}

static struct perfbin fake_bin(void)
{
	struct perfbin pb = { .path = "/nonexistent/perf", .version = "6.1.187",
			      .name = "bin:perf-6.1.187" };

	pb.like = profile_find("perf-6.1");
	return pb;
}

static void add_call(struct trace_result *res, uint32_t type, uint64_t config, int cpu,
		     unsigned long flags, int exclude_guest, int err)
{
	struct trace_call *c = g_new0(struct trace_call, 1);

	c->attr.type = type;
	c->attr.config = config;
	c->attr.exclude_guest = exclude_guest;
	c->cpu = cpu;
	c->pid = -1;
	c->group_fd = -1;
	c->flags = flags;
	c->err = err;
	c->ret_fd = err ? -1 : 3;
	g_ptr_array_add(res->calls, c);
}

static struct trace_result *fake_result(void)
{
	struct trace_result *res = g_new0(struct trace_result, 1);

	res->calls = g_ptr_array_new_with_free_func(g_free);
	res->stderr_tail = g_ptr_array_new_with_free_func(g_free);
	return res;
}

/* A feature probe (dummy) before the event is not the event's; the event's
 * retries on CPU 0 are tries; opens on every CPU of one attr are one try. */
static void test_cell_from_trace(void **state)
{
	struct perfbin pb = fake_bin();
	g_autoptr(pmu_set) pmus = host_pmus();
	g_autoptr(trace_result) res = fake_result();
	g_autoptr(results_cell) cell = cell_new("k", pb.name, "cpu-clock");
	const struct cell_try *t;

	add_call(res, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 0, 8, 0, EINVAL);
	add_call(res, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, 8, 1, EINVAL);
	add_call(res, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, 8, 0, 0);
	add_call(res, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1, 8, 0, 0);
	res->exit_code = 0;
	perfbin_cell_from_trace(&pb, pmus, res, cell);
	assert_int_equal(cell->outcome, OUTCOME_OK);
	assert_int_equal(cell->tries->len, 2);
	t = &g_array_index(cell->tries, struct cell_try, 0);
	assert_int_equal(t->outcome, OUTCOME_EINVAL);
	assert_int_equal(t->attr.exclude_guest, 1);
	t = &g_array_index(cell->tries, struct cell_try, 1);
	assert_int_equal(t->outcome, OUTCOME_OK);
	assert_non_null(strstr(t->why, "exclude_guest 0x1 -> 0"));
	assert_true(cell->has_attr);
	/* The cell's attr is the final one: the retry that opened. */
	assert_int_equal(cell->attr.exclude_guest, 0);
	assert_memory_equal(&cell->attr, &t->attr, sizeof(cell->attr));

	/* perf stat says "<not supported>" and exits 0: the last open failed. */
	g_ptr_array_set_size(res->calls, 0);
	add_call(res, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, 8, 1, ENOENT);
	perfbin_cell_from_trace(&pb, pmus, res, cell);
	assert_int_equal(cell->outcome, OUTCOME_ENOENT);
	assert_int_equal(cell->tries->len, 1);
}

/* Each try after the first says what perf changed: the open flags, then
 * each member that differs, joined by ", " (printf's %#x: 0 is "0"); a
 * retry of the same attr says so. */
static void test_try_why(void **state)
{
	static const struct {
		unsigned long flags2;
		int eg2;
		const char *why;
	} cases[] = {
		{ 0, 1, "perf retried: flags 0x8 -> 0" },
		{ 0, 0, "perf retried: flags 0x8 -> 0, exclude_guest 0x1 -> 0" },
		{ 8, 0, "perf retried: exclude_guest 0x1 -> 0" },
		{ 8, 1, "perf retried: the same attr again" },
	};
	struct perfbin pb = fake_bin();
	g_autoptr(pmu_set) pmus = host_pmus();

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(trace_result) res = fake_result();
		g_autoptr(results_cell) cell = cell_new("k", pb.name, "cpu-clock");
		const struct cell_try *t;

		add_call(res, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, 8, 1, EINVAL);
		add_call(res, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, cases[i].flags2,
			 cases[i].eg2, 0);
		res->exit_code = 0;
		perfbin_cell_from_trace(&pb, pmus, res, cell);
		assert_int_equal(cell->tries->len, 2);
		t = &g_array_index(cell->tries, struct cell_try, 1);
		if (!t->why || strcmp(t->why, cases[i].why))
			fail_msg("why '%s', want '%s'", t->why ? t->why : "(none)", cases[i].why);
	}
}

static void test_cell_rejected(void **state)
{
	struct perfbin pb = fake_bin();
	g_autoptr(pmu_set) pmus = host_pmus();
	g_autoptr(trace_result) res = fake_result();
	g_autoptr(results_cell) cell = cell_new("k", pb.name, "bogus:Z");

	g_ptr_array_add(res->stderr_tail, g_strdup("event syntax error: 'bogus:Z'"));
	g_ptr_array_add(res->stderr_tail, g_strdup("                     \\___ unknown tracepoint"));
	res->exit_code = 129;
	perfbin_cell_from_trace(&pb, pmus, res, cell);
	assert_non_null(cell->error);
	assert_non_null(strstr(cell->error, "event syntax error: 'bogus:Z'"));
	assert_int_equal(cell->outcome, OUTCOME_REJECTED);
	assert_false(cell->has_attr);

	/* Killed, no opens, no parser message: could not test. */
	g_ptr_array_set_size(res->stderr_tail, 0);
	res->exit_code = -1;
	res->term_signal = 9;
	g_clear_pointer(&cell, cell_free);
	cell = cell_new("k", pb.name, "cpu-clock");
	perfbin_cell_from_trace(&pb, pmus, res, cell);
	assert_int_equal(cell->outcome, OUTCOME_INFRA);
}

static void test_open_bad(void **state)
{
	struct perfbin *pb = NULL;

	assert_int_equal(perfbin_open("/nonexistent/perf", &pb), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "/nonexistent/perf"));
	assert_int_equal(perfbin_open("/bin/true", &pb), -EINVAL);
	assert_null(pb);
}

/* A perf whose --version never answers is killed after the timeout
 * (ETIMEDOUT naming it), and leaves no descriptor of ours open. */
static void test_open_hangs(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("pmucanary-perfbin-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "perf", NULL);
	static const char script[] = "#!/bin/sh\nexec sleep 30\n";
	struct perfbin *pb = NULL;
	unsigned int before;

	assert_true(g_file_set_contents(path, script, -1, NULL));
	assert_int_equal(chmod(path, 0755), 0);
	g_setenv(PERFBIN_TIMEOUT_ENV, "1", TRUE);
	before = test_open_fds();
	assert_int_equal(perfbin_open(path, &pb), -ETIMEDOUT);
	assert_int_equal(test_open_fds(), before);
	g_unsetenv(PERFBIN_TIMEOUT_ENV);
	assert_null(pb);
	assert_non_null(strstr(pc_errmsg(), path));
	unlink(path);
	rmdir(dir);
}

/* A fake perf: a version, a parser error for bogus:Z, a hang for cpu-clock. */
static void test_fake_perf(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("pmucanary-perfbin-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "perf", NULL);
	static const char script[] =
		"#!/bin/sh\n"
		"case \"$1\" in --version) echo 'perf version 3.6.0'; exit 0;; esac\n"
		"case \"$3\" in bogus:Z) echo \"event syntax error: 'bogus:Z'\" >&2; exit 129;; esac\n"
		"exec sleep 30\n";
	static const char *const specs[] = { "bogus:Z", "cpu-clock" };
	g_autoptr(perfbin) pb = NULL;
	g_autoptr(pmu_set) pmus = host_pmus();
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	struct perfbin_opts opts = { .jobs = 2, .timeout_s = 1 };
	const struct cell *c;
	g_autofree char *evidence = NULL;
	gint64 t0;

	assert_true(g_file_set_contents(path, script, -1, NULL));
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(perfbin_open(path, &pb), 0);
	assert_string_equal(pb->name, "bin:perf-3.6.0");
	assert_string_equal(profile_name(pb->like), "perf-3.6");
	t0 = g_get_monotonic_time();
	assert_int_equal(perfbin_probe_cells(pb, pmus, specs, 2, &opts, set), 0);
	assert_true(g_get_monotonic_time() - t0 < 10 * G_USEC_PER_SEC);
	assert_int_equal(set->cells->len, 2);
	c = set->cells->pdata[0];
	assert_string_equal(c->spec, "bogus:Z");
	assert_non_null(c->error);
	assert_non_null(strstr(c->error, "event syntax error: 'bogus:Z'"));
	c = set->cells->pdata[1];
	assert_string_equal(c->spec, "cpu-clock");
	assert_int_equal(c->outcome, OUTCOME_INFRA);
	evidence = json_dumps(c->evidence, 0);
	assert_non_null(strstr(evidence, "killed"));
	unlink(path);
	rmdir(dir);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A --version that prints the line but then fails is not a perf: its exit
 * status counts even when a signal interrupts the wait for it (the child
 * closed its output and still runs). */
static void test_open_version_fails(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("pmucanary-perfbin-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "perf", NULL);
	static const char script[] =
		"#!/bin/sh\n"
		"echo 'perf version 6.1.0'\n"
		"exec >&- 2>&-\n"
		"sleep 1\n"
		"exit 3\n";
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct itimerval it = { .it_value = { 0, 300000 } }, none = { 0 };
	struct perfbin *pb = NULL;
	int r;

	assert_true(g_file_set_contents(path, script, -1, NULL));
	assert_int_equal(chmod(path, 0755), 0);
	sigemptyset(&sa.sa_mask); /* no SA_RESTART: waitpid fails EINTR */
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	r = perfbin_open(path, &pb);
	setitimer(ITIMER_REAL, &none, NULL);
	sigaction(SIGALRM, &old, NULL);
	assert_int_equal(r, -EINVAL);
	assert_null(pb);
	assert_non_null(strstr(pc_errmsg(), "does not say"));
	unlink(path);
	rmdir(dir);
}

/* One worker at a time (--jobs 1): the first and only slot is killed at
 * the timeout like any other, its cell INFRA. */
static void test_one_job_timeout(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("pmucanary-perfbin-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "perf", NULL);
	static const char script[] =
		"#!/bin/sh\n"
		"case \"$1\" in --version) echo 'perf version 6.1.0'; exit 0;; esac\n"
		"exec sleep 30\n";
	static const char *const specs[] = { "cpu-clock" };
	g_autoptr(perfbin) pb = NULL;
	g_autoptr(pmu_set) pmus = host_pmus();
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	struct perfbin_opts opts = { .jobs = 1, .timeout_s = 1 };
	const struct cell *c;
	gint64 t0;

	assert_true(g_file_set_contents(path, script, -1, NULL));
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(perfbin_open(path, &pb), 0);
	t0 = g_get_monotonic_time();
	assert_int_equal(perfbin_probe_cells(pb, pmus, specs, 1, &opts, set), 0);
	assert_true(g_get_monotonic_time() - t0 < 20 * G_USEC_PER_SEC);
	assert_int_equal(set->cells->len, 1);
	c = set->cells->pdata[0];
	assert_int_equal(c->outcome, OUTCOME_INFRA);
	unlink(path);
	rmdir(dir);
}

/* The perf-6.1 profile's cell for spec in stat mode, through the prober,
 * with the profile's stat-mode fallbacks. */
static enum outcome profile_stat_outcome(struct prober *pr, const struct pmu_set *pmus,
					 const struct profile *p, const char *spec)
{
	struct profile_fallback_state st;
	struct perf_event_attr cur;
	const struct prober_result *r = NULL;
	const char *why;

	assert_int_equal(profile_encode(p, pmus, spec, PROFILE_MODE_STAT, &cur), 0);
	assert_int_equal(profile_fallback_begin(p, pmus, spec, PROFILE_MODE_STAT, &st), 0);
	for (int i = 0; i < PROBER_MAX_TRIES; i++) {
		r = prober_open(pr, &cur);
		if (r->outcome == OUTCOME_OK || !profile_fallback(p, &st, &cur, r->err, &why))
			break;
	}
	return r->outcome;
}

static int paranoid(void)
{
	g_autofree char *text = NULL;

	if (!g_file_get_contents("/proc/sys/kernel/perf_event_paranoid", &text, NULL, NULL))
		return 2;
	return atoi(text);
}

/* Debian's perf 6.1: what it builds is what the perf-6.1 profile encodes
 * for `perf stat`, and the kernel's answer agrees with the probe's. */
static void test_debian_perf(void **state)
{
	static const char *const specs[] = { "cpu-clock", "cpu-clock:u", "msr/tsc/", "cycles:pp" };
	static const enum attr_field members[] = {
		ATTR_F_type, ATTR_F_config, ATTR_F_precise_ip, ATTR_F_exclude_user,
		ATTR_F_exclude_kernel, ATTR_F_exclude_hv, ATTR_F_exclude_idle,
		ATTR_F_exclude_host, ATTR_F_exclude_guest,
	};
	g_autoptr(perfbin) pb = NULL;
	g_autoptr(pmu_set) pmus = NULL;
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	g_autoptr(prober) pr = NULL;
	struct prober_opts popts = { 0 };
	const struct profile *p61 = profile_find("perf-6.1");
	g_autofree char *name = NULL;

	if (access(PERF, X_OK) < 0)
		test_skip("no perf at %s", PERF);
	/* perfbin_open is under test: its failure is ours, not a skip */
	if (perfbin_open(PERF, &pb) < 0)
		fail_msg("perfbin_open %s: %s", PERF, pc_errmsg());
	if (!g_str_has_prefix(pb->version, "6.1."))
		test_skip("%s is perf %s, not Debian's 6.1", PERF, pb->version);
	if (access("/sys/bus/event_source/devices/msr", F_OK) < 0)
		test_skip("no msr PMU for msr/tsc/");
	/* perf stat -a gets EACCES where the prober falls back to per task */
	if (geteuid() != 0 && paranoid() > 0)
		test_skip("not root and perf_event_paranoid > 0: perf stat -a is refused");
	pmus = host_pmus();
	name = g_strconcat("bin:perf-", pb->version, NULL);
	assert_string_equal(pb->name, name);
	assert_ptr_equal(pb->like, p61);
	assert_int_equal(prober_new(&popts, &pr), 0);
	assert_int_equal(perfbin_probe_cells(pb, pmus, specs, G_N_ELEMENTS(specs), NULL, set), 0);
	assert_int_equal(set->cells->len, G_N_ELEMENTS(specs));
	for (size_t i = 0; i < G_N_ELEMENTS(specs); i++) {
		const struct cell *c = set->cells->pdata[i];
		struct perf_event_attr want;

		assert_string_equal(c->spec, specs[i]);
		assert_string_equal(c->profile, pb->name);
		assert_true(c->has_attr);
		assert_true(c->tries->len >= 1);
		assert_int_equal(profile_encode(p61, pmus, specs[i], PROFILE_MODE_STAT, &want), 0);
		for (size_t m = 0; m < G_N_ELEMENTS(members); m++) {
			/* What perf built first, before its own fallbacks. */
			uint64_t got = attr_get(cell_first_attr(c), members[m]);

			if (got != attr_get(&want, members[m]))
				fail_msg("%s: %s is %#llx, perf-6.1 encodes %#llx", specs[i],
					 attr_field_name(members[m]), (unsigned long long)got,
					 (unsigned long long)attr_get(&want, members[m]));
		}
		if (c->outcome != profile_stat_outcome(pr, pmus, p61, specs[i]))
			fail_msg("%s: perf gave %s, the perf-6.1 profile %s", specs[i],
				 outcome_name(c->outcome),
				 outcome_name(profile_stat_outcome(pr, pmus, p61, specs[i])));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cell_from_trace),
		cmocka_unit_test(test_cell_rejected),
		cmocka_unit_test(test_try_why),
		cmocka_unit_test(test_open_bad),
		cmocka_unit_test(test_open_hangs),
		cmocka_unit_test(test_fake_perf),
		cmocka_unit_test(test_one_job_timeout),
		cmocka_unit_test(test_open_version_fails),
		cmocka_unit_test(test_debian_perf),
	};
	return test_run_group(tests, NULL, NULL);
}
