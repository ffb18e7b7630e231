/* The runner end to end on this host's real perf_event_open, with fake
 * guests that "crash" when told to (the self-test path) or when a chosen
 * attr is armed; journal resume and HOST_CRASH recovery. Needs system-wide
 * perf events (root or perf_event_paranoid <= 0). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "attr.h"
#include "fleet.h"
#include "journal.h"
#include "log.h"
#include "matrix.h"
#include "perfev.h"
#include "report.h"
#include "repro.h"
#include "results.h"
#include "pool.h"
#include "runner.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct fake {
	bool started, harmed_since_mark;
	bool summary, all_harmed; /* the pool's optional ops answer */
	enum pool_failure start_fails; /* start fails, blaming this */
	unsigned int stops;
	unsigned int marks, restarts, selftests, judges;
	int fail_judge_at;   /* the Nth judge returns an error (INFRA); 0: never */
	/* The Nth judge gets SIGTERM (fleet_signals_install'd) and judges in
	 * haste, as a heartbeat wait cut short by it would: GUEST_HANG. */
	int signal_at_judge;
	bool signal_at_restart; /* the restart before a batch gets SIGTERM */
	bool harm_baseline;
	const char *harm_key;   /* a batch harms when an armed attr's key holds this */
	unsigned int slow_judge;/* the Nth judge takes slow_ms more (a budget runs out) */
	unsigned int slow_ms;
	/* What was armed, seen from outside the runner: at each mark the
	 * journal's last line must be the batch's "arm" line (the journal is
	 * written before arming). */
	char *run_dir;
	unsigned int arm_marks;
	GArray *batches;     /* unsigned int: batch ids armed, in order */
	GHashTable *arms;    /* attr key -> times armed (GUINT_TO_POINTER) */
};

static void fake_init(struct fake *f)
{
	f->batches = g_array_new(FALSE, FALSE, sizeof(unsigned int));
	f->arms = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

static void fake_clear(struct fake *f)
{
	g_free(f->run_dir);
	if (f->batches)
		g_array_unref(f->batches);
	if (f->arms)
		g_hash_table_unref(f->arms);
}

static unsigned int arms_of(const struct fake *f, const char *key)
{
	return GPOINTER_TO_UINT(g_hash_table_lookup(f->arms, key));
}

static bool batch_armed(const struct fake *f, unsigned int id)
{
	for (guint i = 0; i < f->batches->len; i++)
		if (g_array_index(f->batches, unsigned int, i) == id)
			return true;
	return false;
}

static int f_start(void *ctx, const struct pool_spec *s, const char *run_dir, json_t **info,
		   enum pool_failure *why)
{
	struct fake *f = ctx;

	if (f->start_fails) {
		*why = f->start_fails;
		return pc_fail(EIO, "fake-0: %s", f->start_fails == POOL_FAILURE_BOOT ?
			       "no heartbeat within 1000 ms of start" : "libvirt: cannot connect");
	}
	f->started = true;
	if (f->arms) {  /* tracking arms (fake_init) */
		g_free(f->run_dir);
		f->run_dir = g_strdup(run_dir);
	}
	*info = json_pack("{s:i}", "guests", (int)s->guests);
	return 0;
}

/* The journal's last complete line, parsed. */
static json_t *journal_last_line(const char *run_dir)
{
	g_autofree char *path = g_build_filename(run_dir, JOURNAL_FILE, NULL);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	const char *last = NULL;

	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++)
		if (**l)
			last = *l;
	assert_non_null(last);
	return json_loads(last, 0, NULL);
}

static int f_mark(void *ctx)
{
	struct fake *f = ctx;
	json_t *line = f->arms && f->run_dir ? journal_last_line(f->run_dir) : NULL;

	f->marks++;
	f->harmed_since_mark = false;
	if (line && !g_strcmp0(json_string_value(json_object_get(line, "step")), "arm")) {
		unsigned int id = (unsigned int)json_integer_value(json_object_get(line, "batch"));
		size_t i;
		json_t *k;

		f->arm_marks++;
		g_array_append_val(f->batches, id);
		json_array_foreach(json_object_get(line, "keys"), i, k) {
			g_hash_table_replace(f->arms, g_strdup(json_string_value(k)),
					     GUINT_TO_POINTER(arms_of(f, json_string_value(k)) + 1));
			if (f->harm_key && strstr(json_string_value(k), f->harm_key))
				f->harmed_since_mark = true;
		}
	}
	json_decref(line);
	return 0;
}

static int f_judge(void *ctx, enum outcome *o, json_t **verdicts)
{
	struct fake *f = ctx;

	f->judges++;
	if (f->fail_judge_at && f->judges == (unsigned int)f->fail_judge_at)
		return pc_fail(ECONNRESET, "libvirt: connection reset (fake)");
	if (f->signal_at_judge && f->judges == (unsigned int)f->signal_at_judge) {
		raise(SIGTERM);
		*o = OUTCOME_GUEST_HANG;
		*verdicts = json_pack("[{s:s}]", "verdict", "GUEST_HANG");
		return 0;
	}
	if (f->harm_baseline && f->judges == 1)
		f->harmed_since_mark = true;
	if (f->slow_judge && f->judges == f->slow_judge)
		g_usleep((gulong)f->slow_ms * 1000);
	*o = f->harmed_since_mark ? OUTCOME_GUEST_CRASH : OUTCOME_OK;
	*verdicts = json_pack("[{s:s,s:s}]", "guest", "g0", "verdict",
			      f->harmed_since_mark ? "crashed" : "alive");
	return 0;
}

static int f_restart(void *ctx)
{
	struct fake *f = ctx;

	f->restarts++;
	if (f->signal_at_restart)
		raise(SIGTERM);
	return 0;
}

static int f_selftest(void *ctx, const char *word)
{
	struct fake *f = ctx;

	f->selftests++;
	f->harmed_since_mark = true;
	return 0;
}

static void f_stop(void *ctx)
{
	((struct fake *)ctx)->stops++;
}

/* A fleet whose one guest's restore failed once. */
static json_t *f_summary(void *ctx)
{
	return json_pack("[{s:s,s:i,s:i,s:i,s:s}]", "name", "fake-0", "restarts", 2, "restores", 1,
			 "restore_failures", 1, "restore_note", "restore: image truncated");
}

/* The fake as a guest pool backend ("fake", registered in main): the
 * runner opens it by name like the libvirt one, the test's struct fake
 * being its context (pool_params.user). */
static int fp_open(const struct pool_params *p, void **priv)
{
	*priv = p->user;
	return 0;
}

static void fp_close(void *priv)
{
}

static json_t *f_summary(void *ctx);
static bool f_all_harmed(void *ctx);

static json_t *fp_summary(void *ctx)
{
	return ((struct fake *)ctx)->summary ? f_summary(ctx) : NULL;
}

static bool fp_all_harmed(void *ctx)
{
	return ((struct fake *)ctx)->all_harmed && f_all_harmed(ctx);
}

static const struct pool_ops fake_pool_ops = {
	.name = "fake", .what = "test_runner's fake guests",
	.open = fp_open, .close = fp_close, .start = f_start, .mark = f_mark, .judge = f_judge,
	.restart_harmed = f_restart, .selftest = f_selftest, .stop = f_stop,
	.all_harmed = fp_all_harmed, .summary = fp_summary,
};

static int fake_run(const struct runner_opts *o, struct fake *f, struct runner_report *rep)
{
	struct runner_opts with = *o;

	with.pool = "fake";
	with.pool_params.user = f;
	return runner_run(&with, rep);
}

/* Every (fake) guest is harmed as soon as the self-test told it to be. */
static bool f_all_harmed(void *ctx)
{
	return ((struct fake *)ctx)->harmed_since_mark;
}

struct fixture {
	char *dir, *scenario;
	char *refused;   /* why system-wide perf events are refused here, or NULL */
};

static int setup(void **state)
{
	struct fixture *fx = g_new0(struct fixture, 1);
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 100000 };
	int fd = perfev_open(&a, -1, 0, -1, 0);

	/* Not root and perf_event_paranoid > 0: the tests that arm skip (a
	 * setup cannot skip in cmocka 1.1.5, it can only fail). */
	if (fd == -EACCES || fd == -EPERM)
		fx->refused = g_strdup_printf("system-wide perf events refused (%s): not root "
					      "and perf_event_paranoid > 0", strerror(-fd));
	else if (fd < 0)
		fail_msg("system-wide cpu-clock: %s", strerror(-fd));
	else
		close(fd);
	fx->dir = g_dir_make_tmp("test_runner-XXXXXX", NULL);
	assert_non_null(fx->dir);
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
	g_free(fx->refused);
	g_free(fx);
	return 0;
}

/* The fixture of a test that arms events: skips where that is refused. */
static struct fixture *armed_fixture(void **state)
{
	struct fixture *fx = *state;

	if (fx->refused)
		test_skip("%s", fx->refused);
	return fx;
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

/* The key the runner arms a cell's attr under: the last try's attr (the
 * one that opened after fallbacks), as the journal spells it. */
static char *cell_key(const struct cell *c)
{
	const struct perf_event_attr *a = c->tries->len ?
		&g_array_index(c->tries, struct cell_try, c->tries->len - 1).attr : &c->attr;

	return attr_to_string(a);
}

static void test_clean_run(void **state)
{
	struct fixture *fx = armed_fixture(state);
	struct fake f = { 0 };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;
	g_autoptr(result_set) set = NULL;
	g_autofree char *mtext = NULL;
	json_t *want = f_summary(NULL);

	f.summary = true;
	if (fake_run(&o, &f, &rep))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep.verdict, RUNNER_VERDICT_CLEAN);
	assert_true(rep.distinct_armed > 0);
	assert_true(f.started);
	assert_int_equal(f.selftests, 0);
	set = read_run(rep.run_dir);
	assert_false(set->selftest);
	/* what became of the guests, a failed restore with its reason */
	assert_true(json_equal(json_object_get(set->extra, "guests"), want));
	json_decref(want);
	assert_true(set->cells->len >= 2 * (4 * 3 + 1));
	for (guint i = 0; i < set->cells->len; i++)
		assert_false(outcome_is_harm(((struct cell *)set->cells->pdata[i])->outcome));
	g_autofree char *mpath = g_build_filename(rep.run_dir, "matrix.txt", NULL);
	assert_true(g_file_get_contents(mpath, &mtext, NULL, NULL));
	/* matrix.txt is `pmucanary matrix` of this one run.json (the input
	 * named by its run id), byte for byte: one terminal view. */
	{
		g_autoptr(GString) view = g_string_new(NULL);
		const struct result_set *one = set;

		assert_int_equal(report_render(REPORT_TEXT, &one, 1, NULL, view), 0);
		assert_string_equal(mtext, view->str);
		assert_true(g_str_has_prefix(mtext, "pmucanary matrix: 1 input, "));
	}
	/* no harm, no reproducer */
	g_autofree char *repro = g_build_filename(rep.run_dir, "repro", NULL);
	assert_false(g_file_test(repro, G_FILE_TEST_EXISTS));
	runner_report_clear(&rep);
}

/* A batch whose guests are all harmed ends its dwell then: the judged line
 * says how long it dwelt; a batch that harmed nothing dwells in full. */
static void test_dwell_ends_when_all_harmed(void **state)
{
	struct fixture *fx = armed_fixture(state);
	struct fake f = { 0 };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;
	g_autofree char *ini = g_build_filename(fx->dir, "long.ini", NULL), *text = NULL;
	g_autofree char *jpath = NULL;
	g_auto(GStrv) lines = NULL;
	unsigned int harmed = 0, clean = 0;
	int64_t t0 = g_get_monotonic_time();

	assert_true(g_file_set_contents(ini,
		"[sweep]\nevents = cpu-clock\nmodifiers = -; u; k\nprofiles = perf-modern\n"
		"[load]\nbatch_size = 4\nconfirm = 2\ndwell = 1500ms\n", -1, NULL));
	o.scenario = ini;
	o.selftest_spec = "cpu-clock:u";
	o.selftest_harm = RUNNER_HARM_CRASH;
	f.all_harmed = true;
	if (fake_run(&o, &f, &rep))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep.verdict, RUNNER_VERDICT_HARM);
	jpath = g_build_filename(rep.run_dir, JOURNAL_FILE, NULL);
	assert_true(g_file_get_contents(jpath, &text, NULL, NULL));
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		json_t *j = **l ? json_loads(*l, 0, NULL) : NULL;
		json_t *dw;

		if (!j || g_strcmp0(json_string_value(json_object_get(j, "step")), "judged")) {
			json_decref(j);
			continue;
		}
		dw = json_object_get(json_object_get(j, "verdicts"), "dwell_ms");
		if (!g_strcmp0(json_string_value(json_object_get(j, "outcome")), "GUEST_CRASH")) {
			assert_true(json_is_integer(dw));
			assert_true(json_integer_value(dw) < 500);
			harmed++;
		} else {
			assert_null(dw);
			clean++;
		}
		json_decref(j);
	}
	print_message("%u harmful batches cut short, %u clean ones dwelt 1.5 s: %.1f s\n", harmed,
		      clean, (g_get_monotonic_time() - t0) / 1e6);
	assert_true(harmed >= 2);
	/* the harmful ones did not dwell: well under 1.5 s each */
	assert_true(g_get_monotonic_time() - t0 < (int64_t)(clean * 1500 + harmed * 500 + 3000) * 1000);
	runner_report_clear(&rep);
}

static void test_selftest_harm(void **state)
{
	struct fixture *fx = armed_fixture(state);
	struct fake f = { 0 };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;
	g_autoptr(result_set) set = NULL;
	g_autoptr(GHashTable) selftest_keys = g_hash_table_new_full(g_str_hash, g_str_equal,
								     g_free, NULL);
	unsigned int harmed = 0;

	o.selftest_spec = "cpu-clock:u";
	o.selftest_harm = RUNNER_HARM_CRASH;
	if (fake_run(&o, &f, &rep))
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
			json_int_t last = 0;
			unsigned int shown = 0;
			size_t k;
			json_t *ev;

			assert_int_equal(c->outcome, OUTCOME_GUEST_CRASH);
			assert_int_equal(c->k, 2);
			assert_int_equal(c->n, 2);
			/* the verdicts of the smallest harmful batches that held
			 * it: first those of it alone (confirmed twice), none
			 * larger before a smaller */
			json_array_foreach(c->evidence, k, ev) {
				json_int_t armed = json_integer_value(json_object_get(ev, "armed"));

				if (g_strcmp0(json_string_value(json_object_get(ev, "kind")), "verdicts"))
					continue;
				if (armed < last || (!shown && armed != 1))
					fail_msg("%s: verdicts of a batch of %lld after one of %lld",
						 c->profile, (long long)armed, (long long)last);
				last = armed;
				shown++;
			}
			assert_true(shown >= 2);
			g_hash_table_add(selftest_keys, cell_key(c));
			harmed++;
		}
	}
	assert_int_equal(harmed, 2); /* both profiles */
	/* Other specs crash only where they arm the very same attr. */
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		g_autofree char *key = c->has_attr ? cell_key(c) : NULL;
		bool same = key && g_hash_table_contains(selftest_keys, key);

		if (same != (c->outcome == OUTCOME_GUEST_CRASH))
			fail_msg("%s %s: %s", c->profile, c->spec, outcome_name(c->outcome));
	}
	runner_report_clear(&rep);
}

/* A harm that is a class of attrs (every exclude_kernel=1 attr, the `:u`
 * specs) under isolate = rule: the cells are exactly that class, each says
 * how it was judged, and run.json carries the rule and reads back. */
static void run_class_harm(struct fixture *fx, const char *isolate, const char *harm_key,
			   struct result_set **out,
			   unsigned int *rounds, char **run_dir)
{
	g_autofree char *ini = g_build_filename(fx->dir, "class.ini", NULL);
	g_autofree char *text = NULL;
	struct fake f = { .harm_key = harm_key };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;

	fake_init(&f);
	assert_true(g_file_get_contents(fx->scenario, &text, NULL, NULL));
	{
		/* more modifiers: classes larger than a sample */
		g_auto(GStrv) parts = g_strsplit(text, "modifiers = -; u; k\n", 2);
		g_autofree char *more = g_strjoinv("modifiers = -; u; k; G; H; uG; kH; p; up\n", parts);

		g_free(text);
		text = g_strconcat(more, "isolate = ", isolate, "\n", NULL);
	}
	assert_true(g_file_set_contents(ini, text, -1, NULL));
	o.scenario = ini;
	if (fake_run(&o, &f, &rep))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep.verdict, RUNNER_VERDICT_HARM);
	*rounds = rep.rounds;
	*out = read_run(rep.run_dir);
	if (run_dir)
		*run_dir = g_strdup(rep.run_dir);
	runner_report_clear(&rep);
	fake_clear(&f);
}

/* The run's reproducer directory for a cell, and whether it holds both
 * files (repro.h). */
static bool has_repro(const char *run_dir, const struct cell *c)
{
	g_autofree char *name = repro_dir_name(c);
	g_autofree char *src = g_build_filename(run_dir, "repro", name, "repro.c", NULL);
	g_autofree char *readme = g_build_filename(run_dir, "repro", name, "README.txt", NULL);

	return g_file_test(src, G_FILE_TEST_IS_REGULAR) && g_file_test(readme, G_FILE_TEST_IS_REGULAR);
}

static unsigned int count_entries(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	unsigned int n = 0;

	while (d && g_dir_read_name(d))
		n++;
	return n;
}

static void check_class(struct fixture *fx, const char *harm_key, unsigned int *by_rule,
			unsigned int *alone)
{
	g_autoptr(result_set) set = NULL, each = NULL;
	unsigned int rounds, each_rounds;
	json_t *rules, *rule;
	g_autoptr(GString) mtext = g_string_new(NULL);
	g_autofree char *run_dir = NULL, *repro = NULL, *html_path = NULL, *html = NULL;
	g_autoptr(GHashTable) class = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	*by_rule = *alone = 0;
	run_class_harm(fx, "rule", harm_key, &set, &rounds, &run_dir);
	run_class_harm(fx, "each", harm_key, &each, &each_rounds, NULL);
	repro = g_build_filename(run_dir, "repro", NULL);
	html_path = g_build_filename(run_dir, "report.html", NULL);
	assert_true(g_file_get_contents(html_path, &html, NULL, NULL));
	rules = json_object_get(set->extra, "rules");
	assert_int_equal(json_array_size(rules), 1);
	rule = json_array_get(rules, 0);
	assert_non_null(json_string_value(json_object_get(rule, "text")));
	assert_true(json_array_size(json_object_get(rule, "sample")) >= 1);
	assert_null(json_object_get(each->extra, "rules"));
	assert_int_equal(set->cells->len, each->cells->len);
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i], *e = each->cells->pdata[i];
		g_autofree char *key = c->has_attr ? cell_key(c) : NULL;
		bool harm = key && c->outcome != OUTCOME_REJECTED && strstr(key, harm_key);
		const char *judged = json_string_value(json_object_get(c->extra, "judged"));

		/* the same verdicts as each, from the hand-written class */
		if (harm != (c->outcome == OUTCOME_GUEST_CRASH) || c->outcome != e->outcome)
			fail_msg("%s %s (%s): %s, each %s", c->profile, c->spec, key ? key : "-",
				 outcome_name(c->outcome), outcome_name(e->outcome));
		assert_null(json_object_get(e->extra, "judged"));
		if (!harm) {
			assert_null(judged);
			if (c->has_attr)
				assert_false(has_repro(run_dir, c));
			continue;
		}
		assert_non_null(judged);
		g_hash_table_add(class, g_strdup(key));
		assert_string_equal(json_string_value(json_object_get(c->extra, "rule")),
				    json_string_value(json_object_get(rule, "text")));
		if (!strcmp(judged, "rule")) {
			(*by_rule)++;
			assert_int_equal(c->n, 0);
			assert_string_equal(results_cell_rule(c),
					    json_string_value(json_object_get(rule, "text")));
			/* a rule's class has no reproducer per cell */
			assert_false(has_repro(run_dir, c));
		} else {
			assert_string_equal(judged, "alone");
			(*alone)++;
			assert_int_equal(c->k, 2);
			assert_int_equal(c->n, 2);
			assert_null(results_cell_rule(c));
			/* a harm armed alone: its reproducer, linked from report.html */
			{
				g_autofree char *name = repro_dir_name(c);
				g_autofree char *esc = g_uri_escape_string(name, NULL, FALSE);
				g_autofree char *link = g_strdup_printf("\"p\":\"repro/%s/\"", esc);

				assert_true(has_repro(run_dir, c));
				if (!strstr(html, link))
					fail_msg("report.html has no link %s", link);
			}
		}
	}
	assert_true(*alone >= 1);
	/* nothing else in repro/ */
	assert_int_equal(count_entries(repro), *alone);
	/* the rule's "attrs": every attr it covers, sampled or not */
	assert_int_equal(json_integer_value(json_object_get(rule, "attrs")),
			 g_hash_table_size(class));
	print_message("harm %s: rule \"%s\": %u cells by rule, %u armed alone; %u rounds (each: %u)\n",
		      harm_key, json_string_value(json_object_get(rule, "text")), *by_rule, *alone,
		      rounds, each_rounds);
	/* The matrix names the rule before the cells, and each cell the rule
	 * judged says so (every cell: the --all view). */
	{
		g_autoptr(matrix) m = NULL;
		const struct result_set *one = set;

		assert_int_equal(matrix_build(&one, NULL, 1, NULL, &m), 0);
		matrix_format_text_all(m, false, 120, mtext);
	}
	assert_non_null(strstr(mtext->str, "harm explained by a rule over attr fields"));
	assert_non_null(strstr(mtext->str, json_string_value(json_object_get(rule, "text"))));
	if (*by_rule)
		assert_non_null(strstr(mtext->str, " judged by rule "));
}

/* A run's own reproducers: one per harm armed alone, none for an errno
 * cell (a default sweep has tens of thousands) or an OK one. r1a8 opens
 * with ENOENT on a host without a hardware PMU (these machines); where it
 * opens, the errno half has nothing to check and says so. */
static void test_repro_only_harm(void **state)
{
	struct fixture *fx = armed_fixture(state);
	struct fake f = { 0 };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;
	g_autoptr(result_set) set = NULL;
	g_autofree char *ini = g_build_filename(fx->dir, "repro.ini", NULL);
	g_autofree char *repro = NULL;
	unsigned int harm = 0, errno_cells = 0;

	assert_true(g_file_set_contents(ini,
		"[sweep]\nevents = cpu-clock\nmodifiers = -; u\nspecs = r1a8\n"
		"profiles = perf-modern\n[load]\nbatch_size = 4\nconfirm = 2\ndwell = 10ms\n", -1, NULL));
	o.scenario = ini;
	o.selftest_spec = "cpu-clock:u";
	o.selftest_harm = RUNNER_HARM_CRASH;
	if (fake_run(&o, &f, &rep))
		fail_msg("%s", pc_errmsg());
	set = read_run(rep.run_dir);
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		enum outcome_class k = outcome_class(c->outcome);

		if (!c->has_attr)
			continue;
		if (k == OUTCOME_CLASS_HARM)
			harm++;
		errno_cells += k == OUTCOME_CLASS_ERRNO;
		if (has_repro(rep.run_dir, c) != (k == OUTCOME_CLASS_HARM))
			fail_msg("%s %s (%s): reproducer %s", c->profile, c->spec,
				 outcome_name(c->outcome), has_repro(rep.run_dir, c) ? "written" : "missing");
	}
	assert_int_equal(harm, 1);
	repro = g_build_filename(rep.run_dir, "repro", NULL);
	assert_int_equal(count_entries(repro), harm);
	if (!errno_cells)
		print_message("r1a8 opened here (a hardware PMU): no errno cell to check\n");
	runner_report_clear(&rep);
}

static void test_rule_cells(void **state)
{
	struct fixture *fx = armed_fixture(state);
	unsigned int by_rule, alone;

	/* The cycles:pp attrs: a class small enough to be armed whole. */
	check_class(fx, "precise_ip=2", &by_rule, &alone);
	assert_int_equal(by_rule, 0);
	/* Every task-clock attr: more than a sample, the rest by the rule. */
	check_class(fx, "config=0x1 ", &by_rule, &alone);
	assert_true(by_rule >= 1);
}

/* The first progress of the load phase, as a live progress line sees it. */
struct load_seen {
	bool seen;
	double eta_s;
};

static void load_progress(void *ctx, const struct runner_progress *p)
{
	struct load_seen *ls = ctx;

	if (!ls->seen && !strcmp(p->phase, "load")) {
		ls->seen = true;
		ls->eta_s = p->eta_s;
	}
}

/* [load] budget: the judge of load round `rounds` (the baseline is judge
 * 1) outlasts a 400 ms budget, so exactly `rounds` rounds are armed and
 * the run reports what they proved. harm_key "" harms every batch, NULL
 * none. */
static void run_budget(struct fixture *fx, const char *isolate, const char *harm_key,
		       unsigned int rounds, struct fake *f, struct runner_report *rep,
		       struct result_set **out)
{
	g_autofree char *ini = g_build_filename(fx->dir, "budget.ini", NULL);
	g_autofree char *text = NULL, *more = NULL;
	struct runner_opts o = opts_for(fx);
	struct load_seen ls = { 0 };

	memset(f, 0, sizeof(*f));
	fake_init(f);
	f->harm_key = harm_key;
	f->slow_judge = rounds + 1;
	f->slow_ms = 600;
	assert_true(g_file_get_contents(fx->scenario, &text, NULL, NULL));
	more = g_strconcat(text, "budget = 400ms\nisolate = ", isolate, "\n", NULL);
	assert_true(g_file_set_contents(ini, more, -1, NULL));
	o.scenario = ini;
	o.progress = load_progress;
	o.progress_ctx = &ls;
	if (fake_run(&o, f, rep))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep->rounds, rounds);
	assert_int_equal(f->arm_marks, rounds);
	/* Before the first batch no pace is known, but the budget ends the
	 * load phase: the ETA is what is left of its 400 ms, not unknown and
	 * not zero. */
	assert_true(ls.seen);
	if (!(ls.eta_s > 0 && ls.eta_s <= 0.4))
		fail_msg("the load phase's first ETA: %g s", ls.eta_s);
	*out = read_run(rep->run_dir);
}

/* The cells of a budget run: how many are OK, harm, INFRA in a group the
 * harm is known to be among, INFRA with no verdict at all. Every armed
 * cell is one of these; none is OK unless its attr was armed (in a clean
 * batch: the fakes here harm every batch or none). */
static void budget_cells(const struct result_set *set, const struct fake *f, unsigned int *ok,
			 unsigned int *harm, unsigned int *grouped, unsigned int *none)
{
	*ok = *harm = *grouped = *none = 0;
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		g_autofree char *key = c->has_attr ? cell_key(c) : NULL;
		json_t *ev = NULL, *x;
		size_t k;

		if (c->outcome != OUTCOME_OK && c->outcome != OUTCOME_INFRA && !outcome_is_harm(c->outcome))
			continue;   /* the open phase's verdict: never armed */
		json_array_foreach(c->evidence, k, x)
			if (!g_strcmp0(json_string_value(json_object_get(x, "kind")), "budget"))
				ev = x;
		if (c->outcome == OUTCOME_OK) {
			assert_null(ev);
			assert_true(arms_of(f, key) >= 1);
			(*ok)++;
		} else if (outcome_is_harm(c->outcome)) {
			assert_null(ev);
			assert_true(c->n >= 1 && c->k == c->n);
			(*harm)++;
		} else {
			assert_non_null(ev);
			assert_non_null(strstr(json_string_value(json_object_get(ev, "why")), "budget"));
			if (json_object_get(ev, "harm_among"))
				(*grouped)++;
			else
				(*none)++;
		}
	}
}

static bool has_limitation(const struct result_set *set, const char *part)
{
	for (guint i = 0; i < set->limitations->len; i++)
		if (strstr(set->limitations->pdata[i], part))
			return true;
	return false;
}

static void test_budget(void **state)
{
	struct fixture *fx = armed_fixture(state);
	unsigned int ok, harm, grouped, none;

	/* Nothing harms, 2 rounds of 4 attrs: those 8 are OK, the rest have
	 * no verdict, and the run is INFRA (it could not test them all). */
	{
		struct fake f;
		struct runner_report rep;
		g_autoptr(result_set) set = NULL;
		json_t *b;

		run_budget(fx, "rule", NULL, 2, &f, &rep, &set);
		assert_int_equal(rep.verdict, RUNNER_VERDICT_INFRA);
		assert_int_equal(rep.culprits, 0);
		budget_cells(set, &f, &ok, &harm, &grouped, &none);
		assert_int_equal(g_hash_table_size(f.arms), 8);
		assert_true(ok >= 8);   /* profiles share attrs: cells >= attrs */
		assert_int_equal(harm + grouped, 0);
		assert_true(none >= rep.distinct_armed - 8);
		b = json_object_get(set->extra, "budget");
		assert_int_equal(json_integer_value(json_object_get(b, "budget_ms")), 400);
		assert_int_equal(json_integer_value(json_object_get(b, "rounds")), 2);
		assert_int_equal(json_integer_value(json_object_get(b, "unjudged_attrs")),
				 rep.distinct_armed - 8);
		assert_int_equal(json_array_size(json_object_get(b, "unresolved")), 0);
		assert_true(has_limitation(set, "budget"));
		runner_report_clear(&rep);
		fake_clear(&f);
	}
	/* Every batch harms; rule mode screens first: two harmful batches,
	 * two groups of 4 the harm is among, nothing OK, the run HARM. */
	{
		struct fake f;
		struct runner_report rep;
		g_autoptr(result_set) set = NULL;
		json_t *groups;

		run_budget(fx, "rule", "", 2, &f, &rep, &set);
		assert_int_equal(rep.verdict, RUNNER_VERDICT_HARM);
		assert_int_equal(rep.culprits, 0);
		budget_cells(set, &f, &ok, &harm, &grouped, &none);
		assert_int_equal(ok + harm, 0);
		assert_true(grouped >= 8);
		groups = json_object_get(json_object_get(set->extra, "budget"), "unresolved");
		assert_int_equal(json_array_size(groups), 2);
		for (size_t i = 0; i < 2; i++)
			assert_int_equal(json_integer_value(json_object_get(json_array_get(groups, i),
									    "attrs")), 4);
		assert_true(has_limitation(set, "harm somewhere among these 4 attrs, not isolated"));
		runner_report_clear(&rep);
		fake_clear(&f);
	}
	/* Every batch harms; each mode: screen 4 (harm), split 2 (harm),
	 * split 1 (harm): the first attr is a culprit at 1/1, its batch
	 * holds it so no group, and the rest have no verdict. */
	{
		struct fake f;
		struct runner_report rep;
		g_autoptr(result_set) set = NULL;

		run_budget(fx, "each", "", 3, &f, &rep, &set);
		assert_int_equal(rep.verdict, RUNNER_VERDICT_HARM);
		assert_int_equal(rep.culprits, 1);
		budget_cells(set, &f, &ok, &harm, &grouped, &none);
		assert_int_equal(ok + grouped, 0);
		assert_true(harm >= 1);
		assert_true(none >= rep.distinct_armed - 1);
		assert_int_equal(json_array_size(json_object_get(json_object_get(set->extra, "budget"),
								 "unresolved")), 0);
		runner_report_clear(&rep);
		fake_clear(&f);
	}
}

static void test_infra_and_resume(void **state)
{
	struct fixture *fx = armed_fixture(state);
	struct fake f = { .fail_judge_at = 4 }, f2 = { 0 };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep, rep2;
	g_autoptr(journal_replay) jr = NULL;
	unsigned int judged = 0, judged_ok = 0;

	fake_init(&f2);
	o.selftest_spec = "page-faults:k";
	assert_int_equal(fake_run(&o, &f, &rep), 0);
	assert_int_equal(rep.verdict, RUNNER_VERDICT_INFRA);
	assert_int_equal(journal_read(rep.run_dir, &jr), 0);
	/* the baseline was judge 1; batches 0, 1 judged, batch 2 failed */
	assert_non_null(jr->baseline);
	assert_int_equal(jr->batches->len, 3);

	o.resume_dir = rep.run_dir;
	if (fake_run(&o, &f2, &rep2))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep2.verdict, RUNNER_VERDICT_HARM);
	assert_string_equal(rep2.run_id, rep.run_id);
	/* Judged batches are answered from the journal: neither the batch
	 * nor, when it was clean, any of its attrs is armed again. The one
	 * given up as INFRA is. No baseline either: the journal has it. */
	for (guint i = 0; i < jr->batches->len; i++) {
		const struct journal_batch *b = jr->batches->pdata[i];

		assert_int_equal(b->id, i);
		if (!b->judged || !strcmp(b->outcome, "INFRA")) {
			assert_int_equal(b->id, 2);
			assert_true(batch_armed(&f2, b->id));
			continue;
		}
		judged++;
		if (batch_armed(&f2, b->id))
			fail_msg("batch %u, judged %s before the resume, armed again", b->id,
				 b->outcome);
		if (strcmp(b->outcome, "OK"))
			continue;
		judged_ok++;
		for (guint k = 0; k < b->keys->len; k++)
			if (arms_of(&f2, b->keys->pdata[k]))
				fail_msg("%s of clean batch %u armed %u times on resume",
					 (char *)b->keys->pdata[k], b->id,
					 arms_of(&f2, b->keys->pdata[k]));
	}
	assert_int_equal(judged, 2);
	assert_true(judged_ok >= 1);
	assert_int_equal(f2.marks, f2.arm_marks);
	/* every round was either replayed or armed, never both */
	assert_int_equal(rep2.rounds, judged + f2.batches->len);
	runner_report_clear(&rep);
	runner_report_clear(&rep2);
	fake_clear(&f2);
}

/* How the run that left batch 1 armed ended. */
enum cut_how {
	CUT_HOST_DIED,      /* armed in an earlier boot of the host */
	CUT_HOST_HUNG,      /* the same, and a lab's watcher said HOST_HANG */
	CUT_HARNESS_KILLED, /* armed in this very boot: only the harness died */
};

/* A clean run, its journal cut at the arm of batch 1 (plus a torn line),
 * then resumed. */
static void resume_after_cut(void **state, enum cut_how how)
{
	struct fixture *fx = armed_fixture(state);
	struct fake f = { 0 }, f2 = { 0 };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep, rep2;
	g_autofree char *jpath = NULL, *text = NULL;
	g_autoptr(GString) cut = g_string_new(NULL);
	g_autoptr(result_set) set = NULL;
	g_autoptr(GHashTable) open_keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GPtrArray) clean_keys = g_ptr_array_new_with_free_func(g_free);
	enum outcome want = how == CUT_HOST_HUNG ? OUTCOME_HOST_HANG : OUTCOME_HOST_CRASH;
	unsigned int harmed = 0;

	fake_init(&f2);
	if (fake_run(&o, &f, &rep))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep.verdict, RUNNER_VERDICT_CLEAN);
	jpath = g_build_filename(rep.run_dir, JOURNAL_FILE, NULL);
	assert_true(g_file_get_contents(jpath, &text, NULL, NULL));
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] && lines[i][0]; i++) {
		json_t *line = json_loads(lines[i], 0, NULL);
		const char *step = json_string_value(json_object_get(line, "step"));
		json_int_t batch = json_integer_value(json_object_get(line, "batch"));
		size_t k;
		json_t *key;

		assert_non_null(line);
		if (!g_strcmp0(step, "arm") && batch == 0)
			json_array_foreach(json_object_get(line, "keys"), k, key)
				g_ptr_array_add(clean_keys, g_strdup(json_string_value(key)));
		if (!g_strcmp0(step, "arm") && batch == 1) {
			g_autofree char *boot = g_strdup_printf("\"boot\":\"%s\"", journal_boot_id());
			g_auto(GStrv) parts = g_strsplit(lines[i], boot, 2);
			g_autofree char *other = g_strjoinv("\"boot\":\"an-earlier-boot\"", parts);

			json_array_foreach(json_object_get(line, "keys"), k, key)
				g_hash_table_add(open_keys, g_strdup(json_string_value(key)));
			json_decref(line);
			assert_non_null(strstr(other, "an-earlier-boot"));
			g_string_append_printf(cut, "%s\n", how == CUT_HARNESS_KILLED ? lines[i] : other);
			break;
		}
		json_decref(line);
		g_string_append_printf(cut, "%s\n", lines[i]);
	}
	assert_true(clean_keys->len > 0);
	assert_true(g_hash_table_size(open_keys) > 0);
	g_string_append(cut, "{\"step\":\"judged\",\"ba"); /* torn write */
	assert_true(g_file_set_contents(jpath, cut->str, -1, NULL));
	if (how == CUT_HOST_HUNG) {
		g_autoptr(journal) j = NULL;

		assert_int_equal(journal_reopen(rep.run_dir, &j), 0);
		assert_int_equal(journal_host_down(j, 1, "HOST_HANG", "no LAB line for 600 s"), 0);
	}

	o.resume_dir = rep.run_dir;
	if (fake_run(&o, &f2, &rep2))
		fail_msg("%s", pc_errmsg());
	set = read_run(rep2.run_dir);
	/* batch 0, judged clean before, is not armed again in any case */
	assert_false(batch_armed(&f2, 0));
	for (guint k = 0; k < clean_keys->len; k++)
		assert_int_equal(arms_of(&f2, clean_keys->pdata[k]), 0);
	assert_int_equal(f2.marks, f2.arm_marks);
	if (how == CUT_HARNESS_KILLED) {
		/* The host lived on: batch 1 is armed again, and nothing harms. */
		assert_int_equal(rep2.verdict, RUNNER_VERDICT_CLEAN);
		assert_true(batch_armed(&f2, 1));
		for (guint i = 0; i < set->cells->len; i++)
			assert_false(outcome_is_harm(((struct cell *)set->cells->pdata[i])->outcome));
		goto out;
	}
	assert_int_equal(rep2.verdict, RUNNER_VERDICT_HARM);
	assert_false(batch_armed(&f2, 1));
	/* The open batch is the culprit: its attrs together, since no part of
	 * it harms again with the host up. */
	assert_int_equal(rep2.culprits, 1);
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		g_autofree char *key = c->has_attr ? cell_key(c) : NULL;
		bool in_open = key && g_hash_table_contains(open_keys, key);

		/* exactly the cells whose attr was in the open batch */
		if (in_open != (c->outcome == want))
			fail_msg("%s %s (%s): %s", c->profile, c->spec, key ? key : "no attr",
				 outcome_name(c->outcome));
		if (in_open && how == CUT_HOST_HUNG) {
			g_autofree char *ev = json_dumps(c->evidence, 0);

			assert_non_null(strstr(ev, "no LAB line for 600 s"));
		}
		harmed += c->outcome == want;
	}
	assert_true(harmed >= g_hash_table_size(open_keys));
out:
	runner_report_clear(&rep);
	runner_report_clear(&rep2);
	fake_clear(&f2);
}

static void test_host_crash_on_resume(void **state)
{
	resume_after_cut(state, CUT_HOST_DIED);
}

/* A lab host's outer harness saw it hang: HOST_HANG, with its evidence. */
static void test_host_hang_on_resume(void **state)
{
	resume_after_cut(state, CUT_HOST_HUNG);
}

/* Only the harness died (same host boot): no HOST_CRASH, the batch is
 * armed again. */
static void test_harness_killed_rearms(void **state)
{
	resume_after_cut(state, CUT_HARNESS_KILLED);
}

static void test_baseline_harm_is_infra(void **state)
{
	struct fixture *fx = armed_fixture(state);
	struct fake f = { .harm_baseline = true };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;

	g_autoptr(result_set) set = NULL;
	unsigned int infra = 0;

	assert_int_equal(fake_run(&o, &f, &rep), 0);
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

/* A journal's load counts are read back on resume: a negative count, one
 * past INT64_MAX and more entries than the batch armed (the last indexed
 * past the batch's attrs) leave every count in run.json a non-negative
 * number and every batch count what was armed. */
static void test_resume_hostile_load_counts(void **state)
{
	struct fixture *fx = armed_fixture(state);
	struct fake f = { 0 }, f2 = { 0 };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep, rep2;
	g_autofree char *jpath = NULL, *text = NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(result_set) set = NULL;
	unsigned int judged = 0, loads = 0, arm_errors = 0;

	fake_init(&f2);
	if (fake_run(&o, &f, &rep))
		fail_msg("%s", pc_errmsg());
	jpath = g_build_filename(rep.run_dir, JOURNAL_FILE, NULL);
	assert_true(g_file_get_contents(jpath, &text, NULL, NULL));
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] && lines[i][0]; i++) {
		json_t *line = json_loads(lines[i], 0, NULL);
		json_t *load = json_object_get(json_object_get(line, "verdicts"), "load");
		char *s;

		assert_non_null(line);
		if (!g_strcmp0(json_string_value(json_object_get(line, "step")), "judged") &&
		    json_array_size(load)) {
			json_t *first = json_array_get(load, 0);

			json_object_set_new(first, "samples", json_integer(-5));
			json_object_set_new(first, "lost", json_integer(INT64_MAX));
			/* an arm error by a name this build does not know (a
			 * newer one's journal, an edit): still an error */
			json_object_set_new(first, "arm_error", json_string("E_NOT_AN_OUTCOME"));
			json_object_set_new(first, "cpu", json_integer(0));
			for (int k = 0; k < 64; k++)
				json_array_append_new(load, json_pack("{s:I,s:I}", "samples",
					(json_int_t)INT64_MAX, "lost", (json_int_t)INT64_MAX));
			judged++;
		}
		s = json_dumps(line, JSON_COMPACT);
		g_string_append_printf(out, "%s\n", s);
		free(s);
		json_decref(line);
	}
	assert_true(judged > 0);
	assert_true(g_file_set_contents(jpath, out->str, -1, NULL));

	o.resume_dir = rep.run_dir;
	if (fake_run(&o, &f2, &rep2))
		fail_msg("%s", pc_errmsg());
	assert_string_equal(rep2.run_dir, rep.run_dir);
	assert_int_equal(g_hash_table_size(f2.arms), 0); /* all answered from the journal */
	set = read_run(rep2.run_dir);
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		size_t k;
		json_t *ev;

		json_array_foreach(c->evidence, k, ev) {
			if (g_strcmp0(json_string_value(json_object_get(ev, "kind")), "load"))
				continue;
			loads++;
			/* -5 samples is no sample, not 2^64 - 5 */
			if (json_integer_value(json_object_get(ev, "samples")) < 0 ||
			    json_integer_value(json_object_get(ev, "samples")) > ((json_int_t)1 << 40) ||
			    json_integer_value(json_object_get(ev, "lost")) < 0)
				fail_msg("%s %s: load counts %lld samples, %lld lost", c->profile,
					 c->spec, json_integer_value(json_object_get(ev, "samples")),
					 json_integer_value(json_object_get(ev, "lost")));
			assert_int_equal(json_integer_value(json_object_get(ev, "batches")), 1);
			if (json_string_value(json_object_get(ev, "arm_error"))) {
				arm_errors++;
				assert_int_equal(json_integer_value(json_object_get(ev, "arm_cpu")), 0);
			}
		}
	}
	assert_true(loads > 0);
	assert_true(arm_errors > 0);
	runner_report_clear(&rep);
	runner_report_clear(&rep2);
	fake_clear(&f2);
}

/* A report that cannot be written (here report.html is a directory; a full
 * disk does the same) fails the run before run.json is written: run.json is
 * written last, so that one on disk says every output is there. */
static void test_unwritable_report_leaves_no_run_json(void **state)
{
	struct fixture *fx = armed_fixture(state);
	struct fake f = { 0 }, f2 = { 0 };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep, rep2;
	g_autofree char *json = NULL, *html = NULL;

	fake_init(&f2);
	if (fake_run(&o, &f, &rep))
		fail_msg("%s", pc_errmsg());
	json = g_build_filename(rep.run_dir, "run.json", NULL);
	html = g_build_filename(rep.run_dir, "report.html", NULL);
	assert_int_equal(unlink(json), 0);
	assert_int_equal(unlink(html), 0);
	assert_int_equal(mkdir(html, 0755), 0);
	o.resume_dir = rep.run_dir;
	assert_true(fake_run(&o, &f2, &rep2) < 0);
	assert_non_null(strstr(pc_errmsg(), "report.html"));
	/* the run itself tested everything: only the report failed */
	assert_null(strstr(pc_errmsg(), "could not test"));
	assert_false(g_file_test(json, G_FILE_TEST_EXISTS));
	runner_report_clear(&rep);
	runner_report_clear(&rep2);
	fake_clear(&f2);
}

/* The run directory the child of test_signal_leaves_batch_unjudged made. */
static char *only_run_dir(const char *results)
{
	g_autoptr(GDir) d = g_dir_open(results, 0, NULL);
	const char *name;
	char *found = NULL;

	assert_non_null(d);
	while ((name = g_dir_read_name(d))) {
		g_autofree char *p = g_build_filename(results, name, JOURNAL_FILE, NULL);

		if (g_file_test(p, G_FILE_TEST_EXISTS)) {
			assert_null(found);
			found = g_build_filename(results, name, NULL);
		}
	}
	assert_non_null(found);
	return found;
}

/* SIGTERM while batch 0 is armed (Ctrl-C, a CI timeout, a service stop):
 * the batch is never judged, nothing is armed after it, and --resume arms
 * it again and ends clean. The signal flag is process-wide and sticky, so
 * the interrupted run is a child's. */
static void test_signal_leaves_batch_unjudged(void **state)
{
	struct fixture *fx = armed_fixture(state);
	struct fake f = { .signal_at_judge = 2 }, f2 = { 0 };  /* judge 1: the baseline */
	struct runner_opts o = opts_for(fx);
	struct runner_report rep2;
	g_autoptr(journal_replay) jr = NULL;
	g_autoptr(result_set) set = NULL;
	g_autofree char *run_dir = NULL;
	const struct journal_batch *b;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct runner_report rep;
		int rc;

		fleet_signals_install();
		rc = fake_run(&o, &f, &rep);
		if (rc)
			_exit(3);
		if (rep.verdict != RUNNER_VERDICT_INFRA || !rep.why || !strstr(rep.why, "signal 15")) {
			fprintf(stderr, "verdict %s: %s\n", runner_verdict_name(rep.verdict),
				rep.why ? rep.why : "");
			_exit(4);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	run_dir = only_run_dir(fx->dir);
	assert_int_equal(journal_read(run_dir, &jr), 0);
	/* batch 0 only: no batch armed once the signal was seen */
	assert_int_equal(jr->batches->len, 1);
	b = jr->batches->pdata[0];
	assert_int_equal(b->id, 0);
	if (b->judged)
		fail_msg("batch 0, cut short by our own SIGTERM, was judged %s", b->outcome);
	assert_true(b->interrupted);
	assert_null(journal_replay_open_batch(jr));

	fake_init(&f2);
	o.resume_dir = run_dir;
	if (fake_run(&o, &f2, &rep2))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep2.verdict, RUNNER_VERDICT_CLEAN);
	assert_true(batch_armed(&f2, 0));
	set = read_run(run_dir);
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];

		if (outcome_is_harm(c->outcome) || c->outcome == OUTCOME_INFRA)
			fail_msg("%s %s: %s after the resume", c->profile, c->spec,
				 outcome_name(c->outcome));
	}
	runner_report_clear(&rep2);
	fake_clear(&f2);
}

/* SIGTERM between batches (during the restart after a harmful one): the
 * next batch is not armed at all, and the run stops saying why. */
static void test_signal_before_batch_arms_nothing(void **state)
{
	struct fixture *fx = armed_fixture(state);
	struct fake f = { .signal_at_restart = true };
	struct runner_opts o = opts_for(fx);
	g_autoptr(journal_replay) jr = NULL;
	g_autofree char *run_dir = NULL;
	const struct journal_batch *b;
	int status;
	pid_t pid;

	o.selftest_spec = "page-faults:k";
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct runner_report rep;

		fleet_signals_install();
		if (fake_run(&o, &f, &rep))
			_exit(3);
		if (rep.verdict != RUNNER_VERDICT_INFRA || !rep.why ||
		    !strstr(rep.why, "interrupted by signal 15 before batch")) {
			fprintf(stderr, "verdict %s: %s\n", runner_verdict_name(rep.verdict),
				rep.why ? rep.why : "");
			_exit(4);
		}
		_exit(f.restarts == 1 ? 0 : 5);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	run_dir = only_run_dir(fx->dir);
	assert_int_equal(journal_read(run_dir, &jr), 0);
	/* the harmful batch was judged before the signal; nothing after it */
	assert_true(jr->batches->len >= 1);
	b = jr->batches->pdata[jr->batches->len - 1];
	if (!b->judged || !strcmp(b->outcome, "OK"))
		fail_msg("the last batch armed, %u, is %s: want the harmful one before the signal",
			 b->id, b->judged ? b->outcome : "not judged");
	assert_null(journal_replay_open_batch(jr));
}

static void test_bad_input(void **state)
{
	struct fixture *fx = *state;
	struct fake f = { 0 };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;

	o.scenario = "/nonexistent.ini";
	assert_int_equal(fake_run(&o, &f, &rep), -EINVAL);
	o.scenario = fx->scenario;
	o.selftest_spec = "instructions:u"; /* not swept */
	assert_int_equal(fake_run(&o, &f, &rep), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "--selftest-harm instructions:u"));
	runner_report_clear(&rep);
	assert_int_equal(runner_harm_from_name("hang"), RUNNER_HARM_HANG);
	assert_int_equal(runner_harm_from_name("melt"), RUNNER_HARM_COUNT);
}

/* Guests that do not start make the run INFRA whoever is to blame, and
 * the run says who (pool.h): a guest image that does not boot, or a
 * machine that cannot start guests. No cell is OK (none was armed), no
 * batch is armed, and the run names its pool. */
static void test_guests_fail_to_start(void **state)
{
	struct fixture *fx = armed_fixture(state);
	static const struct {
		enum pool_failure blame;
		const char *failure, *why;
	} cases[] = {
		{ POOL_FAILURE_BOOT, "boot", "the guests did not boot: fake-0: no heartbeat" },
		{ POOL_FAILURE_INFRA, "infra", "the guests could not be started: fake-0: libvirt" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct fake f = { .start_fails = cases[i].blame };
		struct runner_opts o = opts_for(fx);
		struct runner_report rep;
		g_autoptr(result_set) set = NULL;
		json_t *infra;
		bool limitation = false;

		fake_init(&f);
		assert_int_equal(fake_run(&o, &f, &rep), 0);
		assert_int_equal(rep.verdict, RUNNER_VERDICT_INFRA);
		assert_int_equal(rep.failure, cases[i].blame);
		assert_non_null(rep.why);
		assert_true(g_str_has_prefix(rep.why, cases[i].why));
		assert_int_equal(f.marks, 0);
		assert_int_equal(f.batches->len, 0);
		assert_int_equal(f.stops, 0); /* never up: nothing to stop */
		set = read_run(rep.run_dir);
		assert_string_equal(json_string_value(json_object_get(set->extra, "pool")), "fake");
		infra = json_object_get(set->extra, "infra");
		assert_string_equal(json_string_value(json_object_get(infra, "failure")),
				    cases[i].failure);
		assert_string_equal(json_string_value(json_object_get(infra, "stage")), "guests");
		for (guint k = 0; k < set->limitations->len; k++)
			limitation |= strstr(set->limitations->pdata[k], cases[i].why) != NULL;
		assert_true(limitation);
		for (guint k = 0; k < set->cells->len; k++) {
			const struct cell *c = set->cells->pdata[k];

			assert_int_not_equal(c->outcome, OUTCOME_OK);
			assert_false(outcome_is_harm(c->outcome));
		}
		runner_report_clear(&rep);
		fake_clear(&f);
	}
}

/* [fleet] pool names the backend; an unknown one is bad input at its line
 * before anything is measured, and opts->pool overrides the scenario. */
static void test_pool_by_name(void **state)
{
	struct fixture *fx = armed_fixture(state);
	g_autofree char *ini = g_build_filename(fx->dir, "pool.ini", NULL);
	g_autofree char *bad = g_build_filename(fx->dir, "nopool.ini", NULL);
	g_autofree char *text = NULL, *with = NULL, *without = NULL;
	g_autofree char *runs_before = NULL, *runs_after = NULL;
	struct fake f = { 0 };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;

	fake_init(&f);
	assert_true(g_file_get_contents(fx->scenario, &text, NULL, NULL));
	with = g_strconcat("[fleet]\npool = fake\n", text, NULL);
	assert_true(g_file_set_contents(ini, with, -1, NULL));
	without = g_strconcat("[fleet]\nguests = 1\npool = nosuch\n", text, NULL);
	assert_true(g_file_set_contents(bad, without, -1, NULL));

	/* the scenario's pool, no override */
	o.scenario = ini;
	o.pool_params.user = &f;
	if (runner_run(&o, &rep))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep.verdict, RUNNER_VERDICT_CLEAN);
	assert_true(f.started);
	assert_int_equal(f.stops, 1);
	runner_report_clear(&rep);

	o.scenario = bad;
	assert_int_equal(runner_run(&o, &rep), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "nopool.ini:3: [fleet] pool:"));
	assert_non_null(strstr(pc_errmsg(), "'nosuch'"));
	assert_non_null(strstr(pc_errmsg(), "libvirt"));
	assert_non_null(strstr(pc_errmsg(), "fake"));
	runner_report_clear(&rep);

	/* an override naming no backend: refused the same way */
	o.scenario = ini;
	o.pool = "nosuch";
	assert_int_equal(runner_run(&o, &rep), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "no guest pool named 'nosuch'"));
	runner_report_clear(&rep);
	fake_clear(&f);
}

/* Every enum's _name() says "?" past its last value (style.md). */
static void test_verdict_names(void **state)
{
	assert_string_equal(runner_verdict_name(RUNNER_VERDICT_COUNT), "?");
	assert_string_equal(runner_verdict_name(RUNNER_VERDICT_COUNT + 1), "?");
}

/* A results directory that does not exist yet is made with its parents,
 * each one others can enter and read (QEMU runs as another user and
 * writes the consoles into the run's directory; a user lists results/). */
static void test_results_dir_made(void **state)
{
	struct fixture *fx = armed_fixture(state);
	g_autofree char *top = g_build_filename(fx->dir, "new", NULL);
	g_autofree char *results = g_build_filename(top, "results", NULL);
	struct fake f = { 0 };
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;
	mode_t old = umask(022);
	struct stat st;
	int ret;

	o.results_dir = results;
	ret = fake_run(&o, &f, &rep);
	umask(old);
	if (ret)
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep.verdict, RUNNER_VERDICT_CLEAN);
	assert_true(g_str_has_prefix(rep.run_dir, results));
	assert_int_equal(stat(top, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat(results, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat(rep.run_dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	runner_report_clear(&rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clean_run, setup, teardown),
		cmocka_unit_test(test_verdict_names),
		cmocka_unit_test_setup_teardown(test_results_dir_made, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guests_fail_to_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_by_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rule_cells, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repro_only_harm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_selftest_harm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dwell_ends_when_all_harmed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_infra_and_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritable_report_leaves_no_run_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_crash_on_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_hang_on_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_harness_killed_rearms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_harm_is_infra, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_hostile_load_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signal_leaves_batch_unjudged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signal_before_batch_arms_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
	};

	log_set_level(LOG_ERROR);
	if (pool_register(&fake_pool_ops))
		fail_msg("%s", pc_errmsg());
	return test_run_group(tests, NULL, NULL);
}
