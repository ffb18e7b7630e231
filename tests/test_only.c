/* run --only RESULT (lib/run/only.h): a full run with fake guests that
 * crash whenever an armed attr excludes the kernel gives RESULT; --only
 * RESULT then arms just the attrs of its harm cells (counts of both runs
 * printed), --cell narrows that to one cell and one batch, a resumed --only
 * run keeps its cells, and a RESULT whose attr this binary no longer
 * encodes is refused naming the member. The fake guests are test_runner's
 * kind (a guest pool backend registered as "fake", no libvirtd); the attrs are armed on
 * this host's real perf_event_open (root or perf_event_paranoid <= 0). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "attr.h"
#include "journal.h"
#include "log.h"
#include "only.h"
#include "perfev.h"
#include "results.h"
#include "pool.h"
#include "runner.h"
#include "scenario.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The guests crash when a batch arms an attr whose key holds this. */
#define HARM_KEY "exclude_kernel=1"

/* The sweep of the fixture's scenario whose attrs exclude the kernel: the
 * `u` modifier, in both profiles (perf's `:u` is exclude_kernel=1 and
 * exclude_hv=1 in every release; `k` excludes the user side only). Written
 * by hand: these are the cells RESULT must mark GUEST_CRASH, and so the
 * ones --only re-tests. */
static const char *const harm_cells[] = {
	"perf-3.6:cpu-clock:u", "perf-3.6:task-clock:u", "perf-3.6:page-faults:u",
	"perf-3.6:context-switches:u", "perf-modern:cpu-clock:u", "perf-modern:task-clock:u",
	"perf-modern:page-faults:u", "perf-modern:context-switches:u",
};
#define N_HARM G_N_ELEMENTS(harm_cells)
/* 4 events x 3 modifiers x 2 profiles */
#define N_SWEEP 24

struct fake {
	unsigned int marks, judges, fail_judge_at;
	bool harmed;
	bool fixed;             /* the kernel is fixed: nothing harms any more */
	GHashTable *arms;       /* attr key -> times armed */
	unsigned int batches;
	char *run_dir;
};

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
	return last ? json_loads(last, 0, NULL) : NULL;
}

static int f_start(void *ctx, const struct pool_spec *s, const char *run_dir, json_t **info,
		   enum pool_failure *why)
{
	struct fake *f = ctx;

	g_free(f->run_dir);
	f->run_dir = g_strdup(run_dir);
	*info = json_pack("{s:i}", "guests", (int)s->guests);
	return 0;
}

/* What is armed, read where the runner writes it before arming: the
 * journal's "arm" line. */
static int f_mark(void *ctx)
{
	struct fake *f = ctx;
	json_t *line = journal_last_line(f->run_dir);
	size_t i;
	json_t *k;

	f->marks++;
	f->harmed = false;
	if (line && !g_strcmp0(json_string_value(json_object_get(line, "step")), "arm")) {
		f->batches++;
		json_array_foreach(json_object_get(line, "keys"), i, k) {
			const char *key = json_string_value(k);

			g_hash_table_replace(f->arms, g_strdup(key), GUINT_TO_POINTER(
				GPOINTER_TO_UINT(g_hash_table_lookup(f->arms, key)) + 1));
			if (strstr(key, HARM_KEY) && !f->fixed)
				f->harmed = true;
		}
	}
	json_decref(line);
	return 0;
}

static int f_judge(void *ctx, enum outcome *o, json_t **verdicts)
{
	struct fake *f = ctx;

	if (++f->judges == f->fail_judge_at)
		return pc_fail(ECONNRESET, "libvirt: connection reset (fake)");
	*o = f->harmed ? OUTCOME_GUEST_CRASH : OUTCOME_OK;
	*verdicts = json_pack("[{s:s,s:s}]", "guest", "g0", "verdict",
			      f->harmed ? "crashed" : "alive");
	return 0;
}

static int f_restart(void *ctx)
{
	return 0;
}

static int f_selftest(void *ctx, const char *word)
{
	return 0;
}

static void f_stop(void *ctx)
{
}

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->arms = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

static void fake_clear(struct fake *f)
{
	g_hash_table_unref(f->arms);
	g_free(f->run_dir);
}

/* The fake as a guest pool backend ("fake", registered in main), the
 * test's struct fake its context. */
static int fp_open(const struct pool_params *p, void **priv)
{
	*priv = p->user;
	return 0;
}

static void fp_close(void *priv)
{
}

static const struct pool_ops fake_pool_ops = {
	.name = "fake", .what = "test_only's fake guests",
	.open = fp_open, .close = fp_close, .start = f_start, .mark = f_mark, .judge = f_judge,
	.restart_harmed = f_restart, .selftest = f_selftest, .stop = f_stop,
};

static int fake_run(const struct runner_opts *o, struct fake *f, struct runner_report *rep)
{
	struct runner_opts with = *o;

	with.pool = "fake";
	with.pool_params.user = f;
	return runner_run(&with, rep);
}

struct fixture {
	char *dir, *scenario;
	char *refused;
	/* The full run: RESULT, and what it armed. */
	char *result;
	unsigned int full_rounds, full_distinct, full_batches;
};

static int setup(void **state)
{
	struct fixture *fx = g_new0(struct fixture, 1);
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 100000 };
	int fd = perfev_open(&a, -1, 0, -1, 0);

	if (fd == -EACCES || fd == -EPERM)
		fx->refused = g_strdup_printf("system-wide perf events refused (%s): not root "
					      "and perf_event_paranoid > 0", strerror(-fd));
	else if (fd < 0)
		fail_msg("system-wide cpu-clock: %s", strerror(-fd));
	else
		close(fd);
	fx->dir = g_dir_make_tmp("test_only-XXXXXX", NULL);
	assert_non_null(fx->dir);
	fx->scenario = g_build_filename(fx->dir, "tiny.ini", NULL);
	assert_true(g_file_set_contents(fx->scenario,
		"[sweep]\n"
		"events = cpu-clock, task-clock, page-faults, context-switches\n"
		"modifiers = -; u; k\n"
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
	g_free(fx->result);
	g_free(fx);
	return 0;
}

static struct runner_opts opts_for(struct fixture *fx)
{
	struct runner_opts o = { 0 };

	o.scenario = fx->scenario;
	o.results_dir = fx->dir;
	o.kmsg_path = "";
	return o;
}

static char *cell_name(const struct cell *c)
{
	return g_strdup_printf("%s:%s", c->profile, c->spec);
}

static bool is_harm_cell(const char *name)
{
	for (size_t i = 0; i < N_HARM; i++)
		if (!strcmp(name, harm_cells[i]))
			return true;
	return false;
}

static struct result_set *read_set(const char *path)
{
	struct result_set *set = NULL;

	if (results_read_json(path, &set))
		fail_msg("%s", pc_errmsg());
	return set;
}

/* The full run of the scenario: RESULT. Its harm cells must be exactly
 * harm_cells and every other cell OK (software events, root). */
static struct fixture *with_result(void **state)
{
	struct fixture *fx = *state;
	struct fake f;
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;
	g_autoptr(result_set) set = NULL;
	unsigned int harmed = 0;

	if (fx->refused)
		test_skip("%s", fx->refused);
	fake_init(&f);
	if (fake_run(&o, &f, &rep))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep.verdict, RUNNER_VERDICT_HARM);
	assert_int_equal(rep.only_cells, 0);
	fx->result = g_build_filename(rep.run_dir, "run.json", NULL);
	fx->full_rounds = rep.rounds;
	fx->full_distinct = rep.distinct_armed;
	fx->full_batches = f.batches;
	set = read_set(fx->result);
	assert_int_equal(set->cells->len, N_SWEEP);
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		g_autofree char *name = cell_name(c);

		if (is_harm_cell(name)) {
			assert_int_equal(c->outcome, OUTCOME_GUEST_CRASH);
			harmed++;
		} else if (c->outcome != OUTCOME_OK) {
			fail_msg("%s: %s in the full run (want OK)", name, outcome_name(c->outcome));
		}
	}
	assert_int_equal(harmed, N_HARM);
	runner_report_clear(&rep);
	fake_clear(&f);
	return fx;
}

/* The keys (attr_to_string of the final attr) RESULT's cells named by
 * names arm under. */
static GHashTable *keys_of(const char *result, const char *const *names, size_t n)
{
	g_autoptr(result_set) set = read_set(result);
	GHashTable *keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		g_autofree char *name = cell_name(c);

		for (size_t k = 0; k < n; k++)
			if (!strcmp(name, names[k]))
				g_hash_table_add(keys, attr_to_string(&c->attr));
	}
	return keys;
}

/* What the --only run armed is exactly the attrs of the cells it names. */
static void assert_armed_exactly(const struct fake *f, GHashTable *want)
{
	GHashTableIter it;
	gpointer key;

	g_hash_table_iter_init(&it, f->arms);
	while (g_hash_table_iter_next(&it, &key, NULL))
		if (!g_hash_table_contains(want, key))
			fail_msg("armed %s, which no selected cell has", (char *)key);
	g_hash_table_iter_init(&it, want);
	while (g_hash_table_iter_next(&it, &key, NULL))
		if (!g_hash_table_lookup(f->arms, key))
			fail_msg("%s of a selected cell was never armed", (char *)key);
}

/* run.json of an --only run: just the named cells, each saying it was
 * re-tested from RESULT, with an "only" object and the limitation. */
static void assert_only_json(const char *run_dir, const char *result,
			     const char *const *names, size_t n, enum outcome want)
{
	g_autofree char *path = g_build_filename(run_dir, "run.json", NULL);
	g_autoptr(result_set) set = read_set(path);
	g_autoptr(result_set) from = read_set(result);
	json_t *only = json_object_get(set->extra, "only");
	bool limited = false;

	assert_int_equal(set->cells->len, n);
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		g_autofree char *name = cell_name(c);
		bool named = false, said = false;
		size_t k;
		json_t *ev;

		for (k = 0; k < n; k++)
			named |= !strcmp(name, names[k]);
		if (!named)
			fail_msg("%s re-tested, not selected", name);
		if (c->outcome != want)
			fail_msg("%s: %s, want %s", name, outcome_name(c->outcome), outcome_name(want));
		json_array_foreach(c->evidence, k, ev)
			said |= !g_strcmp0(json_string_value(json_object_get(ev, "kind")), "only") &&
				!g_strcmp0(json_string_value(json_object_get(ev, "result")), result);
		if (!said)
			fail_msg("%s: no evidence that it was re-tested from RESULT", name);
	}
	assert_non_null(only);
	assert_string_equal(json_string_value(json_object_get(only, "result")), result);
	assert_string_equal(json_string_value(json_object_get(only, "run_id")), from->run_id);
	assert_int_equal(json_array_size(json_object_get(only, "cells")), n);
	for (guint i = 0; i < set->limitations->len; i++)
		limited |= strstr(set->limitations->pdata[i], "run --only: re-tested only") != NULL;
	assert_true(limited);
}

static void test_default_selection_arms_only_harm_attrs(void **state)
{
	struct fixture *fx = with_result(state);
	struct fake f;
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;
	g_autoptr(GHashTable) want = keys_of(fx->result, harm_cells, N_HARM);

	fake_init(&f);
	o.only_result = fx->result;
	if (fake_run(&o, &f, &rep))
		fail_msg("%s", pc_errmsg());
	print_message("full run: %u distinct attrs armed in %u batches; --only RESULT (%zu harm "
		      "cells): %u distinct attrs in %u batches\n", fx->full_distinct,
		      fx->full_rounds, N_HARM, rep.distinct_armed, rep.rounds);
	assert_int_equal(rep.verdict, RUNNER_VERDICT_HARM);
	assert_int_equal(rep.only_cells, N_HARM);
	assert_int_equal(rep.distinct_armed, g_hash_table_size(want));
	assert_true(rep.distinct_armed < fx->full_distinct);
	assert_true(rep.rounds < fx->full_rounds);
	assert_int_equal(f.batches, rep.rounds);
	assert_armed_exactly(&f, want);
	assert_only_json(rep.run_dir, fx->result, harm_cells, N_HARM, OUTCOME_GUEST_CRASH);

	/* The check after a fix: the same cells, nothing harms; 8 attrs in
	 * batches of 4 are 2 batches (the full sweep's 24 would be 6). */
	fake_clear(&f);
	fake_init(&f);
	f.fixed = true;
	runner_report_clear(&rep);
	if (fake_run(&o, &f, &rep))
		fail_msg("%s", pc_errmsg());
	print_message("--only RESULT on a fixed kernel: %u distinct attrs in %u batches\n",
		      rep.distinct_armed, rep.rounds);
	assert_int_equal(rep.verdict, RUNNER_VERDICT_CLEAN);
	assert_int_equal(rep.rounds, 2);
	assert_armed_exactly(&f, want);
	assert_only_json(rep.run_dir, fx->result, harm_cells, N_HARM, OUTCOME_OK);
	runner_report_clear(&rep);
	fake_clear(&f);
}

/* --cell: one OK cell of RESULT is one batch with one attr; a harm cell
 * is as many batches as [load] confirm says. */
static void test_cell_narrows(void **state)
{
	struct fixture *fx = with_result(state);
	/* the sweep's first cell: kept like any other */
	static const char *const ok_cell[] = { "perf-3.6:cpu-clock" };
	static const char *const harm_cell[] = { "perf-3.6:page-faults:u" };
	struct fake f, f2;
	struct runner_opts o = opts_for(fx);
	struct runner_report rep, rep2;
	g_autoptr(GHashTable) want = keys_of(fx->result, ok_cell, 1);
	g_autoptr(GHashTable) want2 = keys_of(fx->result, harm_cell, 1);
	g_autofree gpointer *keys2 = g_hash_table_get_keys_as_array(want2, NULL);
	const char *harm_key = keys2[0];

	fake_init(&f);
	fake_init(&f2);
	o.only_result = fx->result;
	o.only_cells = ok_cell;
	o.only_cell_count = 1;
	if (fake_run(&o, &f, &rep))
		fail_msg("%s", pc_errmsg());
	assert_int_equal(rep.verdict, RUNNER_VERDICT_CLEAN);
	assert_int_equal(rep.only_cells, 1);
	assert_int_equal(rep.distinct_armed, 1);
	assert_int_equal(rep.rounds, 1);
	assert_armed_exactly(&f, want);
	assert_only_json(rep.run_dir, fx->result, ok_cell, 1, OUTCOME_OK);

	o.only_cells = harm_cell;
	if (fake_run(&o, &f2, &rep2))
		fail_msg("%s", pc_errmsg());
	print_message("--cell %s (OK): %u batch; --cell %s (harm): %u batches (confirm = 2)\n",
		      ok_cell[0], rep.rounds, harm_cell[0], rep2.rounds);
	assert_int_equal(rep2.verdict, RUNNER_VERDICT_HARM);
	assert_int_equal(rep2.distinct_armed, 1);
	/* Its screening batch holds it alone, so that batch is its first
	 * confirm run: confirm = 2 batches in all, each arming just it. */
	assert_int_equal(rep2.rounds, 2);
	assert_int_equal(f2.batches, 2);
	assert_int_equal(g_hash_table_size(want2), 1);
	assert_int_equal(GPOINTER_TO_UINT(g_hash_table_lookup(f2.arms, harm_key)), 2);
	assert_armed_exactly(&f2, want2);
	assert_only_json(rep2.run_dir, fx->result, harm_cell, 1, OUTCOME_GUEST_CRASH);
	runner_report_clear(&rep);
	runner_report_clear(&rep2);
	fake_clear(&f);
	fake_clear(&f2);
}

/* An --only run that stopped as INFRA (libvirt lost at its second batch)
 * and is resumed without --only re-arms only its own cells' attrs. */
static void test_resume_keeps_selection(void **state)
{
	struct fixture *fx = with_result(state);
	struct fake f, f2;
	struct runner_opts o = opts_for(fx);
	struct runner_report rep, rep2;
	g_autoptr(GHashTable) want = keys_of(fx->result, harm_cells, N_HARM);

	fake_init(&f);
	fake_init(&f2);
	f.fail_judge_at = 3;   /* the baseline, batch 0, then batch 1 */
	o.only_result = fx->result;
	assert_int_equal(fake_run(&o, &f, &rep), 0);
	assert_int_equal(rep.verdict, RUNNER_VERDICT_INFRA);
	assert_int_equal(f.batches, 2);

	o.only_result = NULL;
	o.scenario = NULL;
	o.resume_dir = rep.run_dir;
	if (fake_run(&o, &f2, &rep2))
		fail_msg("%s", pc_errmsg());
	print_message("--only run cut at batch 1, resumed: %u batches armed again of %u\n",
		      f2.batches, rep2.rounds);
	assert_int_equal(rep2.verdict, RUNNER_VERDICT_HARM);
	assert_int_equal(rep2.only_cells, N_HARM);
	assert_int_equal(rep2.distinct_armed, g_hash_table_size(want));
	assert_true(f2.batches >= 1);
	/* batch 0 comes from the journal: every armed attr is a selected one */
	{
		GHashTableIter it;
		gpointer key;

		g_hash_table_iter_init(&it, f2.arms);
		while (g_hash_table_iter_next(&it, &key, NULL))
			if (!g_hash_table_contains(want, key))
				fail_msg("the resume armed %s, which no selected cell has", (char *)key);
	}
	assert_only_json(rep2.run_dir, fx->result, harm_cells, N_HARM, OUTCOME_GUEST_CRASH);
	runner_report_clear(&rep);
	runner_report_clear(&rep2);
	fake_clear(&f);
	fake_clear(&f2);
}

/* RESULT with one attr changed by hand: the cell's profile encodes
 * another attr here, refused naming the cell and the member; nothing is
 * created. */
static void test_attr_mismatch_refused(void **state)
{
	struct fixture *fx = with_result(state);
	struct fake f;
	struct runner_opts o = opts_for(fx);
	struct runner_report rep;
	g_autoptr(result_set) set = read_set(fx->result);
	g_autofree char *edited = g_build_filename(fx->dir, "edited.json", NULL);
	g_autofree char *results = g_build_filename(fx->dir, "none", NULL);
	static const char *const cell[] = { "perf-modern:task-clock:u" };

	fake_init(&f);
	for (guint i = 0; i < set->cells->len; i++) {
		struct cell *c = set->cells->pdata[i];
		g_autofree char *name = cell_name(c);

		if (strcmp(name, cell[0]))
			continue;
		/* the first try's attr is the encoding compared */
		assert_true(c->tries->len >= 1);
		g_array_index(c->tries, struct cell_try, 0).attr.precise_ip = 2;
	}
	assert_int_equal(results_write_json(set, edited), 0);
	o.results_dir = results;
	o.only_result = edited;
	o.only_cells = cell;
	o.only_cell_count = 1;
	assert_int_equal(fake_run(&o, &f, &rep), -EINVAL);
	if (!strstr(pc_errmsg(), "cell perf-modern:task-clock:u: profile perf-modern encodes "
			"another attr than RESULT's (RESULT -> this binary: precise_ip 0x2 -> 0)"))
		fail_msg("message: %s", pc_errmsg());
	assert_false(g_file_test(results, G_FILE_TEST_EXISTS));
	assert_int_equal(f.marks, 0);
	runner_report_clear(&rep);
	fake_clear(&f);
}

/* only_attr_diff on attrs written by hand: a dynamic PMU's type may
 * differ (both >= PERF_TYPE_MAX), a fixed one's may not. */
static void test_attr_diff(void **state)
{
	struct perf_event_attr a = { .size = 128, .type = 9, .config = 0x3c },
			       b = a;
	g_autofree char *d1 = NULL, *d2 = NULL, *d3 = NULL;

	b.type = 12;   /* msr on another host */
	assert_null(only_attr_diff(&a, &b));
	b.type = PERF_TYPE_RAW;   /* 4: not a dynamic PMU */
	d1 = only_attr_diff(&a, &b);
	assert_string_equal(d1, "type 0x9 -> 0x4");
	a.type = PERF_TYPE_HARDWARE;
	b.type = PERF_TYPE_SOFTWARE;
	d2 = only_attr_diff(&a, &b);
	assert_string_equal(d2, "type 0 -> 0x1");
	b = a;
	a.precise_ip = 3;
	b.exclude_guest = 1;
	d3 = only_attr_diff(&a, &b);
	assert_string_equal(d3, "precise_ip 0x3 -> 0, exclude_guest 0 -> 0x1");
}

/* The journal's copy of a selection reads back as it was. */
static void test_json_round_trip(void **state)
{
	g_autoptr(run_only) o = NULL, back = NULL, none = NULL;
	json_t *j, *bad;
	const struct only_cell *c;

	assert_int_equal(only_from_json(j = json_pack("{s:s,s:s,s:[{s:s,s:s,s:{s:i,s:i},s:s}],s:i}",
		"result", "r/run.json", "run_id", "20261205T000000Z-abcdef", "cells",
		"profile", "perf-3.6", "spec", "cycles:pp", "attr", "type", 0, "precise_ip", 2,
		"was", "GUEST_CRASH", "left_out", 1), "RUN", &o), 0);
	json_decref(j);
	j = only_to_json(o);
	assert_int_equal(only_from_json(j, "RUN", &back), 0);
	json_decref(j);
	assert_string_equal(back->result, "r/run.json");
	assert_string_equal(back->run_id, "20261205T000000Z-abcdef");
	assert_int_equal(back->cells->len, 1);
	assert_int_equal(back->left_out, 1);
	c = back->cells->pdata[0];
	assert_string_equal(c->profile, "perf-3.6");
	assert_string_equal(c->spec, "cycles:pp");
	assert_int_equal(c->attr.precise_ip, 2);
	assert_int_equal(c->was, OUTCOME_GUEST_CRASH);
	/* A result file without a run id ("") has none in the selection. */
	json_object_set_new(j = only_to_json(back), "run_id", json_string(""));
	assert_int_equal(only_from_json(j, "RUN", &none), 0);
	json_decref(j);
	assert_null(none->run_id);
	g_clear_pointer(&none, only_free);
	bad = json_pack("{s:s,s:[{s:s,s:s,s:{},s:s}]}", "result", "x", "cells", "profile", "p",
			"spec", "s", "attr", "was", "MELTED");
	assert_int_equal(only_from_json(bad, "RUN", &none), -EINVAL);
	assert_null(none);
	assert_string_equal(pc_errmsg(), "RUN: bad \"only\" in the start line: cells[0]");
	json_decref(bad);
}

/* only.h, README: SCENARIO defaults to the scenario.ini a run kept beside
 * its run.json: only for a run.json, and only when that file is there. */
static void test_default_scenario(void **state)
{
	g_autofree char *dir = test_tmpdir("test_only");
	g_autofree char *run = g_build_filename(dir, "run.json", NULL);
	g_autofree char *other = g_build_filename(dir, "old-run.json", NULL);
	g_autofree char *kept = g_build_filename(dir, SCENARIO_RUN_FILE, NULL);
	g_autofree char *got = NULL, *got_other = NULL;

	(void)state;
	assert_string_equal(SCENARIO_RUN_FILE, "scenario.ini");
	assert_true(g_file_set_contents(run, "{}", -1, NULL));
	assert_true(g_file_set_contents(other, "{}", -1, NULL));
	/* nothing kept: no default */
	assert_null(only_default_scenario(run));
	/* a directory of that name is no scenario either */
	assert_int_equal(mkdir(kept, 0755), 0);
	assert_null(only_default_scenario(run));
	assert_int_equal(rmdir(kept), 0);
	assert_true(g_file_set_contents(kept, "[sweep]\nevents = cpu-clock\n", -1, NULL));
	got = only_default_scenario(run);
	assert_non_null(got);
	assert_string_equal(got, kept);
	/* a result file that is not a run directory's run.json: none */
	got_other = only_default_scenario(other);
	assert_null(got_other);
	test_tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attr_diff),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_default_scenario),
		cmocka_unit_test_setup_teardown(test_default_selection_arms_only_harm_attrs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cell_narrows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_keeps_selection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attr_mismatch_refused, setup, teardown),
	};

	if (pool_register(&fake_pool_ops))
		fail_msg("%s", pc_errmsg());
	return cmocka_run_group_tests(tests, NULL, NULL);
}
