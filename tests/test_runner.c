/* The runner end to end on this host's real perf_event_open, with fake
 * guests that "crash" when told to (the self-test path) or when a chosen
 * attr is armed; journal resume and HOST_CRASH recovery. Needs system-wide
 * perf events (root or perf_event_paranoid <= 0). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "journal.h"
#include "log.h"
#include "perfev.h"
#include "results.h"
#include "runner.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

struct fake {
	bool started, harmed_since_mark;
	unsigned int marks, restarts, selftests, judges;
	int fail_judge_at;   /* the Nth judge returns an error (INFRA); 0: never */
	bool harm_baseline;
};

static int f_start(void *ctx, const struct scenario *s, const char *run_dir, json_t **info)
{
	struct fake *f = ctx;

	f->started = true;
	*info = json_pack("{s:i}", "guests", (int)s->guests);
	return 0;
}

static int f_mark(void *ctx)
{
	struct fake *f = ctx;

	f->marks++;
	f->harmed_since_mark = false;
	return 0;
}

static int f_judge(void *ctx, enum outcome *o, json_t **verdicts)
{
	struct fake *f = ctx;

	f->judges++;
	if (f->fail_judge_at && f->judges == (unsigned int)f->fail_judge_at)
		return pc_fail(ECONNRESET, "libvirt: connection reset (fake)");
	if (f->harm_baseline && f->judges == 1)
		f->harmed_since_mark = true;
	*o = f->harmed_since_mark ? OUTCOME_GUEST_CRASH : OUTCOME_OK;
	*verdicts = json_pack("[{s:s,s:s}]", "guest", "g0", "verdict",
			      f->harmed_since_mark ? "crashed" : "alive");
	return 0;
}

static int f_restart(void *ctx)
{
	((struct fake *)ctx)->restarts++;
	return 0;
}

static int f_selftest(void *ctx, enum runner_harm how)
{
	struct fake *f = ctx;

	f->selftests++;
	f->harmed_since_mark = true;
	return 0;
}

static void f_stop(void *ctx)
{
}

static struct runner_guests fake_guests(struct fake *f)
{
	struct runner_guests g = { f, f_start, f_mark, f_judge, f_restart, f_selftest, f_stop, NULL };

	return g;
}

struct fixture {
	char *dir, *scenario;
};

static int setup(void **state)
{
	struct fixture *fx = g_new0(struct fixture, 1);
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 100000 };
	int fd = perfev_open(&a, -1, 0, -1, 0);

	if (fd < 0) {
		print_message("system-wide perf events refused: skipping\n");
		g_free(fx);
		return -1;
	}
	close(fd);
	fx->dir = g_dir_make_tmp("test_runner-XXXXXX", NULL);
	fx->scenario = g_build_filename(fx->dir, "tiny.ini", NULL);
	assert_true(g_file_set_contents(fx->scenario,
		"[sweep]\n"
		"events = cpu-clock, task-clock, page-faults, context-switches\n"
		"modifiers = -; u; k\n"
		"specs = cycles:pp\n"
		"profiles = perf-3.6; perf-modern\n"
		"[load]\nbatch_size = 4\nconfirm = 2\ndwell = 10ms\n", -1, NULL));
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", fx->dir);

	assert_int_equal(system(cmd), 0);
	g_free(fx->dir);
	g_free(fx->scenario);
	g_free(fx);
	return 0;
}

static struct runner_opts opts_for(struct fixture *fx)
{
	struct runner_opts o = { 0 };

	o.scenario = fx->scenario;
	o.results_dir = fx->dir;
	o.kmsg_path = "";   /* other processes' kernel warnings are not ours */
	return o;
}

static struct result_set *read_run(const char *run_dir)
{
	g_autofree char *path = g_build_filename(run_dir, "run.json", NULL);
	struct result_set *set = NULL;

	assert_int_equal(results_read_json(path, &set), 0);
	return set;
}

static void test_clean_run(void **state)
{
	struct fixture *fx = *state;
	struct fake f = { 0 };
	struct runner_guests g = fake_guests(&f);
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;
	g_autoptr(result_set) set = NULL;
	g_autofree char *matrix = NULL;

	if (runner_run(&o, &g, &rep))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep.verdict, RUNNER_VERDICT_CLEAN);
	assert_true(rep.distinct_armed > 0);
	assert_true(f.started);
	assert_int_equal(f.selftests, 0);
	set = read_run(rep.run_dir);
	assert_false(set->selftest);
	assert_true(set->cells->len >= 2 * (4 * 3 + 1));
	for (guint i = 0; i < set->cells->len; i++)
		assert_false(outcome_is_harm(((struct cell *)set->cells->pdata[i])->outcome));
	g_autofree char *mpath = g_build_filename(rep.run_dir, "matrix.txt", NULL);
	assert_true(g_file_get_contents(mpath, &matrix, NULL, NULL));
	runner_report_clear(&rep);
}

static void test_selftest_harm(void **state)
{
	struct fixture *fx = *state;
	struct fake f = { 0 };
	struct runner_guests g = fake_guests(&f);
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;
	g_autoptr(result_set) set = NULL;
	unsigned int harmed = 0;

	o.selftest_spec = "cpu-clock:u";
	o.selftest_harm = RUNNER_HARM_CRASH;
	if (runner_run(&o, &g, &rep))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep.verdict, RUNNER_VERDICT_HARM);
	assert_true(rep.selftest);
	assert_true(rep.culprits >= 1);
	assert_true(f.restarts > 0);
	set = read_run(rep.run_dir);
	assert_true(set->selftest);
	assert_non_null(strstr(set->limitations->pdata[set->limitations->len - 1], "SELF-TEST"));
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];

		if (!strcmp(c->spec, "cpu-clock:u")) {
			assert_int_equal(c->outcome, OUTCOME_GUEST_CRASH);
			assert_int_equal(c->k, 2);
			assert_int_equal(c->n, 2);
			harmed++;
		} else if (c->outcome == OUTCOME_GUEST_CRASH) {
			/* another spec that encodes to the very same attr */
			assert_true(c->has_attr);
		}
	}
	assert_int_equal(harmed, 2); /* both profiles */
	runner_report_clear(&rep);
}

static void test_infra_and_resume(void **state)
{
	struct fixture *fx = *state;
	struct fake f = { .fail_judge_at = 4 }, f2 = { 0 };
	struct runner_guests g = fake_guests(&f), g2 = fake_guests(&f2);
	struct runner_opts o = opts_for(fx);
	struct runner_report rep, rep2;
	g_autoptr(journal_replay) jr = NULL;

	o.selftest_spec = "page-faults:k";
	assert_int_equal(runner_run(&o, &g, &rep), 0);
	assert_int_equal(rep.verdict, RUNNER_VERDICT_INFRA);
	assert_int_equal(journal_read(rep.run_dir, &jr), 0);
	/* the baseline was judge 1; batches 0, 1 judged, batch 2 failed */
	assert_non_null(jr->baseline);

	o.resume_dir = rep.run_dir;
	if (runner_run(&o, &g2, &rep2))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep2.verdict, RUNNER_VERDICT_HARM);
	/* judged batches were not armed again: fewer marks than rounds */
	assert_true(f2.marks < rep2.rounds);
	assert_string_equal(rep2.run_id, rep.run_id);
	runner_report_clear(&rep);
	runner_report_clear(&rep2);
}

static void test_host_crash_on_resume(void **state)
{
	struct fixture *fx = *state;
	struct fake f = { 0 }, f2 = { 0 };
	struct runner_guests g = fake_guests(&f), g2 = fake_guests(&f2);
	struct runner_opts o = opts_for(fx);
	struct runner_report rep, rep2;
	g_autofree char *jpath = NULL, *text = NULL;
	g_autoptr(GString) cut = g_string_new(NULL);
	g_autoptr(result_set) set = NULL;
	bool host_crash = false;

	if (runner_run(&o, &g, &rep))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep.verdict, RUNNER_VERDICT_CLEAN);
	/* Keep the journal up to the arm of batch 1: the host "died" there. */
	jpath = g_build_filename(rep.run_dir, JOURNAL_FILE, NULL);
	assert_true(g_file_get_contents(jpath, &text, NULL, NULL));
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] && lines[i][0]; i++) {
		if (strstr(lines[i], "\"step\":\"arm\"") && strstr(lines[i], "\"batch\":1,")) {
			/* armed in an earlier boot of the host: it went down */
			g_autofree char *boot = g_strdup_printf("\"boot\":\"%s\"", journal_boot_id());
			g_auto(GStrv) parts = g_strsplit(lines[i], boot, 2);
			g_autofree char *other = g_strjoinv("\"boot\":\"an-earlier-boot\"", parts);

			assert_non_null(strstr(other, "an-earlier-boot"));
			g_string_append_printf(cut, "%s\n", other);
			break;
		}
		g_string_append_printf(cut, "%s\n", lines[i]);
	}
	g_string_append(cut, "{\"step\":\"judged\",\"ba"); /* torn write */
	assert_true(g_file_set_contents(jpath, cut->str, -1, NULL));

	o.resume_dir = rep.run_dir;
	if (runner_run(&o, &g2, &rep2))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep2.verdict, RUNNER_VERDICT_HARM);
	set = read_run(rep2.run_dir);
	for (guint i = 0; i < set->cells->len; i++)
		host_crash |= ((struct cell *)set->cells->pdata[i])->outcome == OUTCOME_HOST_CRASH;
	assert_true(host_crash);
	runner_report_clear(&rep);
	runner_report_clear(&rep2);
}

static void test_baseline_harm_is_infra(void **state)
{
	struct fixture *fx = *state;
	struct fake f = { .harm_baseline = true };
	struct runner_guests g = fake_guests(&f);
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;

	g_autoptr(result_set) set = NULL;
	unsigned int infra = 0;

	assert_int_equal(runner_run(&o, &g, &rep), 0);
	assert_int_equal(rep.verdict, RUNNER_VERDICT_INFRA);
	assert_non_null(strstr(rep.why, "nothing armed"));
	/* cells that opened but were never judged under load are INFRA, not OK */
	set = read_run(rep.run_dir);
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];

		assert_int_not_equal(c->outcome, OUTCOME_OK);
		infra += c->outcome == OUTCOME_INFRA;
	}
	assert_true(infra > 0);
	runner_report_clear(&rep);
}

static void test_bad_input(void **state)
{
	struct fixture *fx = *state;
	struct fake f = { 0 };
	struct runner_guests g = fake_guests(&f);
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;

	o.scenario = "/nonexistent.ini";
	assert_int_equal(runner_run(&o, &g, &rep), -EINVAL);
	o.scenario = fx->scenario;
	o.selftest_spec = "instructions:u"; /* not swept */
	assert_int_equal(runner_run(&o, &g, &rep), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "--selftest-harm instructions:u"));
	runner_report_clear(&rep);
	assert_int_equal(runner_harm_from_name("hang"), RUNNER_HARM_HANG);
	assert_int_equal(runner_harm_from_name("melt"), RUNNER_HARM_COUNT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clean_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_selftest_harm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_infra_and_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_crash_on_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_harm_is_infra, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
	};

	log_set_level(LOG_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
