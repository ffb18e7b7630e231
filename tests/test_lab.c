/* Tests for lib/lab: what lab_validate() refuses before anything boots, the
 * lab host's sizing, and the lab's policy over any place a run executes
 * (place.h), driven by a scripted place of this file's own: which failure
 * is the kernel's boot and which is infrastructure, when a lost machine's
 * armed batch becomes HOST_CRASH/HOST_HANG in the run's journal, when a
 * kernel is given up, what the run inside is told on each attempt. The
 * real lab hosts boot in tests/it_lab*.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fingerprint.h"
#include "journal.h"
#include "kernel.h"
#include "lab.h"
#include "log.h"
#include "place.h"
#include "results.h"
#include "testutil.h"

#include <jansson.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A kernel whose config has every required lab-host option built in. */
static struct kernel *fake_kernel(const char *name, const char *drop)
{
	struct kernel *k = g_new0(struct kernel, 1);

	k->arg = g_strdup_printf("/k/%s", name);
	k->name = g_strdup(name);
	k->image = g_strdup(k->arg);
	k->release = g_strdup("6.1.192");
	k->sha256 = g_strdup("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	k->config = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	k->config_source = g_strdup("test");
	for (const struct kernel_need *n = kernel_lab_needs; n->option; n++) {
		if (drop && !strcmp(n->option, drop))
			continue;
		g_hash_table_insert(k->config, g_strconcat("CONFIG_", n->option, NULL), g_strdup("y"));
	}
	return k;
}

struct fixture {
	char *scenario, *tmp;
	struct kernel *k[3];
	struct lab_opts o;
};

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);
	g_autofree char *top = test_top_dir();

	f->scenario = g_build_filename(top, "tests", "data", "lab", "harm.ini", NULL);
	f->tmp = g_dir_make_tmp("test_lab.XXXXXX", NULL);
	assert_non_null(f->tmp);
	f->k[0] = fake_kernel("base", NULL);
	f->k[1] = fake_kernel("patched", NULL);
	f->o.scenario = f->scenario;
	f->o.kernels = f->k;
	f->o.kernel_count = 2;
	f->o.results_dir = f->tmp;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	for (size_t i = 0; i < G_N_ELEMENTS(f->k); i++)
		kernel_free(f->k[i]);
	rmdir(f->tmp);
	g_free(f->tmp);
	g_free(f->scenario);
	g_free(f);
	return 0;
}

static void expect_bad(const struct lab_opts *o, const char *needle)
{
	int e = lab_validate(o);

	if (e != -EINVAL || !strstr(pc_errmsg(), needle))
		fail_msg("lab_validate: %d '%s', want -EINVAL naming '%s'", e, pc_errmsg(), needle);
}

/* lab_validate() refuses anyone but root first (a lab host's QEMU runs as
 * root): as another user that refusal is checked, and the test skips the
 * checks behind it. */
static struct fixture *root_fixture(void **state)
{
	struct fixture *f = *state;

	if (geteuid() != 0) {
		expect_bad(&f->o, "pmucanary lab needs root");
		test_skip("not root: lab_validate() refuses before its other checks (that much checked)");
	}
	return f;
}

static void test_valid(void **state)
{
	struct fixture *f = root_fixture(state);

	assert_int_equal(lab_validate(&f->o), 0);
	/* validation creates nothing */
	assert_true(g_file_test(f->tmp, G_FILE_TEST_IS_DIR));
	assert_int_equal(rmdir(f->tmp), 0);
	assert_int_equal(mkdir(f->tmp, 0700), 0);
}

static void test_refusals(void **state)
{
	struct fixture *f = root_fixture(state);
	struct lab_opts o = f->o;
	g_autofree char *long_dir = g_strnfill(200, 'd');

	o.kernel_count = 0;
	expect_bad(&o, "no --kernel");
	o = f->o;
	o.base = 2;
	expect_bad(&o, "--base");
	o = f->o;
	o.scenario = "/nonexistent/lab.ini";
	expect_bad(&o, "/nonexistent/lab.ini");
	o = f->o;
	g_free(f->k[1]->name);
	f->k[1]->name = g_strdup("base");
	expect_bad(&o, "both named 'base'");
	g_free(f->k[1]->name);
	f->k[1]->name = g_strdup("bad name");
	expect_bad(&o, "its name 'bad name'");
	g_free(f->k[1]->name);
	f->k[1]->name = g_strdup("patched");
	o.selftest = "cpu-clock:u=melt";
	expect_bad(&o, "--selftest-harm cpu-clock:u=melt");
	o.selftest = "=crash";
	expect_bad(&o, "no SPEC");
	o = f->o;
	o.results_dir = "/tmp/with space";
	expect_bad(&o, "[A-Za-z0-9/_.+-]");
	o.results_dir = "/run/pmucanary-results";
	expect_bad(&o, "has its own /run");
	o.results_dir = g_strconcat("/", long_dir, NULL);
	expect_bad(&o, "at most");
	g_free((char *)o.results_dir);
	o = f->o;
	{
		const char *bins[] = { "/nonexistent/perf" };

		o.perf_binaries = bins;
		o.perf_binary_count = 1;
		expect_bad(&o, "--perf-binary /nonexistent/perf");
	}
}

/* A kernel that lacks what a lab host needs is named with what it lacks. */
static void test_kernel_lacks(void **state)
{
	struct fixture *f = root_fixture(state);
	struct lab_opts o = f->o;

	f->k[2] = fake_kernel("nokvm", "KVM");
	o.kernels = f->k;
	o.kernel_count = 3;
	expect_bad(&o, "CONFIG_KVM is not set");
	assert_null(strstr(pc_errmsg(), "CONFIG_9P_FS"));
}

static void test_sizing(void **state)
{
	/* at least 1.5 GiB; each nested guest adds its memory and QEMU's */
	assert_int_equal(lab_memory_mib(1, 256), 1536);
	assert_int_equal(lab_memory_mib(2, 256), 1024 + 2 * (256 + 192));
	assert_int_equal(lab_memory_mib(8, 1024), 1024 + 8 * (1024 + 192));
	/* QEMU emulates SVM only: under TCG lab hosts need kvm_amd */
	assert_string_equal(lab_kvm_vendor(true), "amd");
	assert_string_equal(lab_status_name(LAB_STATUS_INFRA), "infra");
}


/* ---- the lab's policy over a scripted place ----------------------------------- */

/* What one attempt of the scripted place does before it reports. */
enum fake_act {
	ACT_NONE,
	ACT_ARM,         /* the run inside arms batch `batch` (a journal is made first) */
	ACT_DONE_FILES,  /* the run inside wrote its run.json (one OK cell) */
};

struct fake_step {
	enum fake_act act;
	unsigned int batch;
	enum place_end end;
	int code;
	enum outcome lost_as;
	bool before_ready;
};

struct fake_place {
	const struct fake_step *steps;
	size_t n;                    /* steps scripted, over every kernel */
	size_t next;
	bool prepare_fails;
	int attempt_error;           /* attempt returns this (< 0) */
	unsigned int opens, closes, prepares, finishes;
	struct place_params params;
	GPtrArray *argv;             /* char *: the argv file as each attempt found it */
	GPtrArray *kernels;          /* char *: the kernel each attempt was for */
};

static struct fake_place *fake;

static int fake_open(const struct place_params *p, void **priv)
{
	fake->opens++;
	fake->params = *p;
	*priv = fake;
	return 0;
}

static void fake_close(void *priv)
{
	assert_ptr_equal(priv, fake);
	fake->closes++;
}

static int fake_prepare(void *priv, const struct place_job *job)
{
	(void)priv;
	assert_non_null(job->kernel);
	fake->prepares++;
	if (fake->prepare_fails)
		return pc_fail(EIO, "no image for %s (scripted)", job->kernel->name);
	return 0;
}

static void fake_finish(void *priv, const struct place_job *job)
{
	(void)priv;
	(void)job;
	fake->finishes++;
}

/* The inner run's directory, as `pmucanary run --results DIR` makes it. */
static char *fake_run_dir(const struct place_job *job)
{
	g_autofree char *d = g_build_filename(job->dir, "run-1", NULL);

	if (!g_file_test(d, G_FILE_TEST_IS_DIR)) {
		g_autoptr(journal) j = NULL;

		assert_int_equal(g_mkdir_with_parents(d, 0755), 0);
		assert_int_equal(journal_create(d, &j), 0);
	}
	return g_steal_pointer(&d);
}

static int fake_attempt(void *priv, const struct place_job *job, unsigned int attempt,
			struct place_attempt *out)
{
	g_autofree char *argv_path = g_build_filename(job->dir, "lab-argv", NULL);
	g_autofree char *argv = NULL;
	const struct fake_step *s;

	(void)priv;
	memset(out, 0, sizeof(*out));
	out->first_hb_s = out->ready_s = -1;
	assert_true(g_file_get_contents(argv_path, &argv, NULL, NULL));
	g_ptr_array_add(fake->argv, g_steal_pointer(&argv));
	g_ptr_array_add(fake->kernels, g_strdup(job->kernel->name));
	assert_true(attempt >= 1);
	if (fake->attempt_error)
		return pc_fail(-fake->attempt_error, "the place broke (scripted)");
	if (fake->next >= fake->n)
		fail_msg("attempt %u on %s: the script has no step %zu", attempt, job->kernel->name,
			 fake->next);
	s = &fake->steps[fake->next++];
	if (s->act == ACT_ARM) {
		g_autofree char *d = fake_run_dir(job);
		g_autoptr(journal) j = NULL;
		const char *keys[] = { "cpu-clock", NULL };

		assert_int_equal(journal_reopen(d, &j), 0);
		assert_int_equal(journal_arm(j, s->batch, "screen", keys), 0);
	} else if (s->act == ACT_DONE_FILES) {
		g_autofree char *d = fake_run_dir(job);
		g_autofree char *rj = g_build_filename(d, "run.json", NULL);
		g_autoptr(result_set) set = result_set_new(RESULTS_KIND_RUN);
		struct cell *c = cell_new(job->label, "perf-modern", "cpu-clock");

		c->outcome = OUTCOME_OK;
		results_add_cell(set, c);
		g_free(set->kernel);
		set->kernel = g_strdup(job->kernel->release);
		assert_int_equal(results_write_json(set, rj), 0);
	}
	out->end = s->end;
	out->code = s->code;
	out->lost_as = s->lost_as;
	out->before_ready = s->before_ready;
	if (!s->before_ready)
		out->first_hb_s = out->ready_s = 0.5;
	if (s->end == PLACE_LOST || s->end == PLACE_FAILED)
		out->evidence = g_strdup_printf("scripted step %zu", fake->next - 1);
	return 0;
}

static const struct place_ops fake_ops = {
	.name = "fake", .what = "a scripted place (tests/test_lab.c)", .runs_argv = true,
	.open = fake_open, .close = fake_close, .prepare = fake_prepare,
	.attempt = fake_attempt, .finish = fake_finish,
};

struct lab_case {
	struct fixture *f;
	struct fake_place place;
	struct lab_report rep;
	struct lab_opts o;
	char *results;
	json_t *lab_json;
};

/* Runs a lab of the fixture's first `kernels` kernels over the script. */
static int lab_case_run(struct lab_case *c, void **state, const struct fake_step *steps,
			size_t n, size_t kernels)
{
	int e;

	c->f = root_fixture(state);
	c->place.steps = steps;
	c->place.n = n;
	c->place.argv = g_ptr_array_new_with_free_func(g_free);
	c->place.kernels = g_ptr_array_new_with_free_func(g_free);
	fake = &c->place;
	c->results = test_tmpdir("test_lab_place");
	if (!c->o.scenario)
		c->o = c->f->o;
	c->o.kernel_count = kernels;
	c->o.results_dir = c->results;
	c->o.place = &fake_ops;
	e = lab_run(&c->o, &c->rep);
	if (e)
		print_message("lab_run: %d %s\n", e, pc_errmsg());
	if (e == 0) {
		g_autofree char *path = g_build_filename(c->rep.dir, "lab.json", NULL);
		json_error_t jerr;

		c->lab_json = json_load_file(path, 0, &jerr);
		if (!c->lab_json)
			fail_msg("%s: %s", path, jerr.text);
	}
	/* every place opened is closed, every kernel prepared is finished */
	assert_int_equal(c->place.opens, 1);
	assert_int_equal(c->place.closes, 1);
	assert_int_equal(c->place.finishes, c->place.prepares);
	return e;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void lab_case_clear(struct lab_case *c)
{
	lab_report_clear(&c->rep);
	json_decref(c->lab_json);
	/* a lab's tree, under the test's own temporary directory */
	assert_int_equal(nftw(c->results, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	g_free(c->results);
	g_ptr_array_unref(c->place.argv);
	g_ptr_array_unref(c->place.kernels);
	fake = NULL;
}

static const struct lab_kernel_report *kernel_rep(const struct lab_case *c, guint i)
{
	assert_true(i < c->rep.kernels->len);
	return c->rep.kernels->pdata[i];
}

static const char *lab_json_kernel(const struct lab_case *c, size_t i, const char *key)
{
	json_t *v = json_object_get(json_array_get(json_object_get(c->lab_json, "kernels"), i), key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The batch a journal line named as the lab host's loss, from the file. */
static const struct journal_batch *journal_batch_of(const struct lab_case *c, size_t k,
						    unsigned int id, journal_replay **rp)
{
	g_autofree char *d = g_build_filename(kernel_rep(c, k)->dir, "run-1", NULL);

	assert_int_equal(journal_read(d, rp), 0);
	return journal_replay_batch(*rp, id);
}

/* One attempt, the run inside exits 0: the kernel is clean, the lab exits
 * 0, the run was told to start (not resume) under the kernel's label. */
static void test_place_clean(void **state)
{
	static const struct fake_step steps[] = { { .act = ACT_DONE_FILES, .end = PLACE_DONE } };
	struct lab_case c = { 0 };
	const struct lab_kernel_report *kr;

	assert_int_equal(lab_case_run(&c, state, steps, 1, 1), 0);
	kr = kernel_rep(&c, 0);
	assert_int_equal(kr->status, LAB_STATUS_CLEAN);
	assert_int_equal(kr->boots, 1);
	assert_int_equal(c.rep.exit_code, 0);
	assert_string_equal(lab_json_kernel(&c, 0, "status"), "clean");
	assert_null(lab_json_kernel(&c, 0, "failure"));
	assert_int_equal(c.place.argv->len, 1);
	assert_non_null(strstr(c.place.argv->pdata[0], "\nrun\n"));
	assert_non_null(strstr(c.place.argv->pdata[0], "\n--results\n"));
	assert_null(strstr(c.place.argv->pdata[0], "--resume"));
	assert_non_null(strstr(c.place.argv->pdata[0], kr->label));
	/* what the lab asks of the place: the scenario's one 256 MiB guest */
	assert_int_equal(c.place.params.memory_mib, lab_memory_mib(1, 256));
	lab_case_clear(&c);
}

/* Whose fault a failed attempt is: before the machine was ready it is the
 * kernel's boot, after it something else's; either way the kernel is INFRA
 * (exit 125, never a verdict) at once, with no second attempt. */
static void test_place_failed(void **state)
{
	for (int ready = 0; ready < 2; ready++) {
		const struct fake_step steps[] = { { .end = PLACE_FAILED, .before_ready = !ready } };
		struct lab_case c = { 0 };
		const struct lab_kernel_report *kr;

		assert_int_equal(lab_case_run(&c, state, steps, 1, 1), 0);
		kr = kernel_rep(&c, 0);
		assert_int_equal(kr->status, LAB_STATUS_INFRA);
		assert_int_equal(kr->failure, ready ? POOL_FAILURE_INFRA : POOL_FAILURE_BOOT);
		assert_string_equal(lab_json_kernel(&c, 0, "failure"), ready ? "infra" : "boot");
		assert_non_null(strstr(kr->why, "scripted step 0"));
		assert_int_equal(kr->boots, 1);
		assert_int_equal(c.rep.exit_code, 125);
		assert_int_equal(strstr(c.rep.summary, "did not boot to a lab host") != NULL, !ready);
		lab_case_clear(&c);
	}
}

/* Lost twice in a row with nothing armed: given up after exactly two
 * attempts; a boot failure only when both were lost before ready. */
static void test_place_lost_unarmed(void **state)
{
	static const struct { bool ready1, ready2; enum pool_failure want; } cases[] = {
		{ false, false, POOL_FAILURE_BOOT },
		{ true, true, POOL_FAILURE_INFRA },
		{ false, true, POOL_FAILURE_INFRA },
		{ true, false, POOL_FAILURE_INFRA },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		const struct fake_step steps[] = {
			{ .end = PLACE_LOST, .lost_as = OUTCOME_HOST_CRASH, .before_ready = !cases[i].ready1 },
			{ .end = PLACE_LOST, .lost_as = OUTCOME_HOST_CRASH, .before_ready = !cases[i].ready2 },
		};
		struct lab_case c = { 0 };
		const struct lab_kernel_report *kr;

		assert_int_equal(lab_case_run(&c, state, steps, 2, 1), 0);
		kr = kernel_rep(&c, 0);
		assert_int_equal(kr->status, LAB_STATUS_INFRA);
		assert_int_equal(kr->boots, 2);
		assert_int_equal(kr->host_down, 0);
		if (kr->failure != cases[i].want)
			fail_msg("case %zu: failure %s, want %s", i, pool_failure_name(kr->failure),
				 pool_failure_name(cases[i].want));
		assert_non_null(strstr(kr->why, "lost 2 times in a row"));
		lab_case_clear(&c);
	}
}

/* A machine lost with a batch armed: the batch is judged HOST_CRASH in the
 * run's own journal (evidence kept), the next attempt resumes that run, and
 * the kernel ends as harm (the run inside exits 1). */
static void test_place_lost_armed(void **state)
{
	static const struct fake_step steps[] = {
		{ .act = ACT_ARM, .batch = 3, .end = PLACE_LOST, .lost_as = OUTCOME_HOST_CRASH },
		{ .act = ACT_DONE_FILES, .end = PLACE_DONE, .code = 1 },
	};
	struct lab_case c = { 0 };
	g_autoptr(journal_replay) rp = NULL;
	const struct lab_kernel_report *kr;
	const struct journal_batch *b;
	g_autofree char *run_dir = NULL;

	assert_int_equal(lab_case_run(&c, state, steps, 2, 1), 0);
	kr = kernel_rep(&c, 0);
	assert_int_equal(kr->status, LAB_STATUS_HARM);
	assert_int_equal(kr->boots, 2);
	assert_int_equal(kr->host_down, 1);
	assert_int_equal(kr->tcg_silent_retries, 0);
	assert_int_equal(c.rep.exit_code, 1);
	b = journal_batch_of(&c, 0, 3, &rp);
	assert_non_null(b);
	assert_string_equal(b->down_outcome, "HOST_CRASH");
	assert_non_null(strstr(b->down_evidence, "scripted step 0"));
	run_dir = g_build_filename(kr->dir, "run-1", NULL);
	assert_null(strstr(c.place.argv->pdata[0], "--resume"));
	assert_non_null(strstr(c.place.argv->pdata[1], "\n--resume\n"));
	assert_non_null(strstr(c.place.argv->pdata[1], run_dir));
	lab_case_clear(&c);
}

/* Silence under TCG may be the emulator: the first silence of a batch gives
 * it back to the run (armed again on the next machine, no verdict), the
 * second of the same batch is HOST_HANG. A panic is judged at once. Not
 * under TCG, the first silence is HOST_HANG. */
static void test_place_tcg_silence(void **state)
{
	static const struct fake_step tcg[] = {
		{ .act = ACT_ARM, .batch = 2, .end = PLACE_LOST, .lost_as = OUTCOME_HOST_HANG },
		{ .act = ACT_ARM, .batch = 2, .end = PLACE_LOST, .lost_as = OUTCOME_HOST_HANG },
		{ .act = ACT_ARM, .batch = 5, .end = PLACE_LOST, .lost_as = OUTCOME_HOST_CRASH },
		{ .act = ACT_DONE_FILES, .end = PLACE_DONE, .code = 1 },
	};
	static const struct fake_step kvm[] = {
		{ .act = ACT_ARM, .batch = 2, .end = PLACE_LOST, .lost_as = OUTCOME_HOST_HANG },
		{ .act = ACT_DONE_FILES, .end = PLACE_DONE, .code = 1 },
	};

	for (int under_tcg = 1; under_tcg >= 0; under_tcg--) {
		struct lab_case c = { 0 };
		g_autoptr(journal_replay) rp = NULL;
		const struct lab_kernel_report *kr;
		const struct journal_batch *b;

		if (!under_tcg && strcmp(fingerprint_accel(), "kvm") != 0)
			continue; /* without KVM every lab runs its lab hosts under TCG */
		c.o = ((struct fixture *)*state)->o;
		c.o.tcg = under_tcg;
		assert_int_equal(lab_case_run(&c, state, under_tcg ? tcg : kvm,
					      under_tcg ? G_N_ELEMENTS(tcg) : G_N_ELEMENTS(kvm), 1), 0);
		kr = kernel_rep(&c, 0);
		assert_int_equal(kr->status, LAB_STATUS_HARM);
		assert_int_equal(kr->boots, under_tcg ? 4 : 2);
		assert_int_equal(kr->tcg_silent_retries, under_tcg ? 1 : 0);
		assert_int_equal(kr->host_down, under_tcg ? 2 : 1);
		b = journal_batch_of(&c, 0, 2, &rp);
		assert_non_null(b);
		assert_string_equal(b->down_outcome, "HOST_HANG");
		if (under_tcg) {
			assert_non_null(strstr(b->down_evidence, "silent twice"));
			b = journal_replay_batch(rp, 5);
			assert_non_null(b);
			assert_string_equal(b->down_outcome, "HOST_CRASH");
			/* the batch given back is an "interrupted" line: 2 armed twice */
			assert_int_equal(rp->batches->len, 3);
			assert_true(((struct journal_batch *)rp->batches->pdata[0])->interrupted);
		}
		lab_case_clear(&c);
	}
}

/* --max-boots bounds the machines a kernel may use, even when each one
 * judged a batch; the kernel is INFRA (its run never finished). */
static void test_place_max_boots(void **state)
{
	static const struct fake_step steps[] = {
		{ .act = ACT_ARM, .batch = 1, .end = PLACE_LOST, .lost_as = OUTCOME_HOST_CRASH },
		{ .act = ACT_ARM, .batch = 2, .end = PLACE_LOST, .lost_as = OUTCOME_HOST_CRASH },
		{ .act = ACT_ARM, .batch = 3, .end = PLACE_LOST, .lost_as = OUTCOME_HOST_CRASH },
		{ .act = ACT_DONE_FILES, .end = PLACE_DONE }, /* never reached */
	};
	struct lab_case c = { 0 };
	const struct lab_kernel_report *kr;

	c.o = ((struct fixture *)*state)->o;
	c.o.max_boots = 3;
	assert_int_equal(lab_case_run(&c, state, steps, G_N_ELEMENTS(steps), 1), 0);
	kr = kernel_rep(&c, 0);
	assert_int_equal(kr->boots, 3);
	assert_int_equal(kr->host_down, 3);
	assert_int_equal(kr->status, LAB_STATUS_INFRA);
	assert_int_equal(kr->failure, POOL_FAILURE_INFRA);
	assert_non_null(strstr(kr->why, "3 lab hosts booted"));
	assert_int_equal(c.place.next, 3);
	lab_case_clear(&c);
}

/* The run inside exits with something other than a verdict (2: it refused
 * its input; 125: it could not test): INFRA naming why; an exit 0 with no
 * run.json is INFRA too. */
static void test_place_inner_exit(void **state)
{
	static const struct { enum fake_act act; int code; const char *why; } cases[] = {
		{ ACT_DONE_FILES, 2, "it refused its input" },
		{ ACT_DONE_FILES, 125, "it could not test" },
		{ ACT_NONE, 0, "exited 0" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		const struct fake_step steps[] = { { .act = cases[i].act, .end = PLACE_DONE,
						     .code = cases[i].code } };
		struct lab_case c = { 0 };
		const struct lab_kernel_report *kr;

		assert_int_equal(lab_case_run(&c, state, steps, 1, 1), 0);
		kr = kernel_rep(&c, 0);
		assert_int_equal(kr->status, LAB_STATUS_INFRA);
		assert_int_equal(kr->failure, POOL_FAILURE_INFRA);
		if (!strstr(kr->why, cases[i].why))
			fail_msg("case %zu: why '%s', want '%s'", i, kr->why, cases[i].why);
		assert_int_equal(c.rep.exit_code, 125);
		lab_case_clear(&c);
	}
}

/* A place that cannot get ready for a kernel, or cannot even try, makes
 * that kernel INFRA and the lab goes on with the next; two kernels, one
 * untested, cannot be compared: CANNOT_TELL, exit 125. */
static void test_place_cannot(void **state)
{
	static const struct fake_step steps[] = {
		{ .act = ACT_DONE_FILES, .end = PLACE_DONE },
		{ .act = ACT_DONE_FILES, .end = PLACE_DONE },
	};

	for (int how = 0; how < 2; how++) {
		struct lab_case c = { 0 };
		const struct lab_kernel_report *kr;

		c.place.prepare_fails = how == 0;
		c.place.attempt_error = how == 1 ? -EIO : 0;
		assert_int_equal(lab_case_run(&c, state, steps, G_N_ELEMENTS(steps), 2), 0);
		assert_int_equal(c.place.prepares, 2);
		assert_int_equal(c.place.argv->len, how == 0 ? 0 : 2);
		for (guint k = 0; k < 2; k++) {
			kr = kernel_rep(&c, k);
			assert_int_equal(kr->status, LAB_STATUS_INFRA);
			assert_int_equal(kr->failure, POOL_FAILURE_INFRA);
			assert_non_null(strstr(kr->why, how == 0 ? "no image for" : "the place broke"));
		}
		assert_int_equal(c.rep.exit_code, 125);
		assert_non_null(strstr(c.rep.summary, "CANNOT_TELL"));
		lab_case_clear(&c);
	}
}

/* Two kernels, each attempt for its own kernel in order; both clean: the
 * diff from the base has nothing to say (exit 0). */
static void test_place_two_kernels(void **state)
{
	static const struct fake_step steps[] = {
		{ .act = ACT_DONE_FILES, .end = PLACE_DONE },
		{ .act = ACT_DONE_FILES, .end = PLACE_DONE },
	};
	struct lab_case c = { 0 };

	assert_int_equal(lab_case_run(&c, state, steps, 2, 2), 0);
	assert_int_equal(c.place.prepares, 2);
	assert_string_equal(c.place.kernels->pdata[0], "base");
	assert_string_equal(c.place.kernels->pdata[1], "patched");
	assert_int_equal(kernel_rep(&c, 0)->status, LAB_STATUS_CLEAN);
	assert_int_equal(kernel_rep(&c, 1)->status, LAB_STATUS_CLEAN);
	assert_int_equal(c.rep.exit_code, 0);
	assert_non_null(strstr(c.rep.summary, "diff base -> patched: "));
	lab_case_clear(&c);
}

/* A signal while an attempt runs: the lab stops with -EINTR, the place is
 * closed and the kernel's preparation finished. */
static void test_place_interrupted(void **state)
{
	static const struct fake_step steps[] = { { .end = PLACE_INTERRUPTED } };
	struct lab_case c = { 0 };

	assert_int_equal(lab_case_run(&c, state, steps, 1, 2), -EINTR);
	assert_int_equal(c.place.argv->len, 1);
	lab_case_clear(&c);
}

/* The places by name, and the options each takes. */
static void test_place_names_options(void **state)
{
	const char *ok[] = { "device=a", "timeout=5", NULL };
	const char *no_eq[] = { "device", NULL };
	const char *no_key[] = { "=x", NULL };
	const char *unknown[] = { "timeout=5", "colour=red", NULL };
	const char *twice[] = { "timeout=5", "device=a", "timeout=6", NULL };
	const char *known[] = { "device", "timeout", NULL };

	(void)state;
	assert_ptr_equal(place_backend("labhost"), &place_labhost_ops);
	assert_ptr_equal(place_backend("lava"), &place_lava_ops);
	assert_null(place_backend("Lava"));
	assert_null(place_backend(""));
	assert_null(place_backend(NULL));
	assert_string_equal(place_backend_names(), "labhost, lava");
	assert_true(place_labhost_ops.runs_argv);
	assert_false(place_lava_ops.runs_argv);

	assert_int_equal(place_options_check(&place_lava_ops, ok, known), 0);
	assert_int_equal(place_options_check(&place_lava_ops, NULL, known), 0);
	assert_int_equal(place_options_check(&place_lava_ops, no_eq, known), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "--place-opt device: expected KEY=VALUE"));
	assert_int_equal(place_options_check(&place_lava_ops, no_key, known), -EINVAL);
	assert_int_equal(place_options_check(&place_lava_ops, unknown, known), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "no option 'colour'"));
	assert_non_null(strstr(pc_errmsg(), "(it takes: device, timeout)"));
	assert_int_equal(place_options_check(&place_lava_ops, twice, known), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "--place-opt timeout given twice"));
	/* a key is matched whole: "time" is not "timeout", "device2" not "device" */
	assert_string_equal(place_option(ok, "timeout"), "5");
	assert_null(place_option(ok, "time"));
	assert_null(place_option((const char *[]){ "device2=x", NULL }, "device"));
	assert_string_equal(place_option((const char *[]){ "kernel_args=a=b c", NULL }, "kernel_args"),
			    "a=b c");
}

/* What the lava place refuses before anything starts: its required files,
 * its timeout's range (1..1440 minutes, both ends taken), a device type it
 * writes no jobs for; and what the lab refuses of a place that runs the
 * scenario alone. The lab-host kernel needs are a lab host's, not a
 * device's. */
static void test_place_lava_check(void **state)
{
	struct fixture *f = root_fixture(state);
	g_autofree char *dev = g_build_filename(f->tmp, "device.yaml", NULL);
	g_autofree char *rd = g_build_filename(f->tmp, "rd.cpio.gz", NULL);
	g_autofree char *o_dev = g_strconcat("device=", dev, NULL);
	g_autofree char *o_rd = g_strconcat("ramdisk=", rd, NULL);
	g_autofree char *lava_run = g_find_program_in_path("lava-run");
	bool have_lava = lava_run != NULL;
	static const struct { const char *extra; const char *want; } bad[] = {
		{ "timeout=0", "timeout=0: minutes, 1..1440" },
		{ "timeout=1441", "timeout=1441: minutes" },
		{ "timeout=+5", "timeout=+5: minutes" },
		{ "timeout=5m", "timeout=5m: minutes" },
		{ "device_type=bogus", "device_type=bogus: not a device type" },
		{ "dispatcher=/nonexistent/d.yaml", "dispatcher=/nonexistent/d.yaml: no such file" },
		{ "ramdisk2=x", "no option 'ramdisk2'" },
	};
	struct lab_opts o = f->o;

	assert_true(g_file_set_contents(dev, "device_type: qemu\n", -1, NULL));
	assert_true(g_file_set_contents(rd, "x", -1, NULL));
	o.place = &place_lava_ops;
	o.place_options = (const char *const[]){ NULL };
	expect_bad(&o, "needs --place-opt device=FILE");
	o.place_options = (const char *const[]){ "device=/nonexistent/dev.yaml", NULL };
	expect_bad(&o, "device=/nonexistent/dev.yaml: no such file");
	o.place_options = (const char *const[]){ o_dev, NULL };
	expect_bad(&o, "needs --place-opt ramdisk=FILE|URL");
	o.place_options = (const char *const[]){ o_dev, "ramdisk=/nonexistent/rd", NULL };
	expect_bad(&o, "ramdisk=/nonexistent/rd: no such file");
	o.place_options = (const char *const[]){ o_dev, "ramdisk=http://with space/rd", NULL };
	expect_bad(&o, "--place-opt ramdisk");
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		o.place_options = (const char *const[]){ o_dev, o_rd, bad[i].extra, NULL };
		expect_bad(&o, bad[i].want);
	}
	for (int t = 0; t < 2; t++) {
		o.place_options = (const char *const[]){ o_dev, o_rd, t ? "timeout=1440" : "timeout=1",
							  "device_type=qemu", NULL };
		if (have_lava)
			assert_int_equal(lab_validate(&o), 0);
		else
			expect_bad(&o, "lava-run");
	}
	/* the device runs the scenario, not the lab's argv */
	o.place_options = (const char *const[]){ o_dev, o_rd, NULL };
	o.selftest = "cpu-clock:u=crash";
	expect_bad(&o, "--selftest-harm: the place lava runs the scenario alone");
	o.selftest = NULL;
	o.perf_binaries = (const char *const[]){ "/bin/true" };
	o.perf_binary_count = 1;
	expect_bad(&o, "--perf-binary: the place lava");
	o.perf_binary_count = 0;
	/* a kernel without KVM cannot be a lab host; a device may carry it */
	f->k[2] = fake_kernel("nokvm", "KVM");
	o.kernels = f->k;
	o.kernel_count = 3;
	if (have_lava)
		assert_int_equal(lab_validate(&o), 0);
	o.place = NULL;
	o.place_options = NULL;
	expect_bad(&o, "CONFIG_KVM is not set");
	/* the lab host takes no options */
	o.kernel_count = 2;
	o.place_options = (const char *const[]){ "device=x", NULL };
	expect_bad(&o, "the place labhost takes no option 'device' (it takes: none)");
	unlink(dev);
	unlink(rd);
}

/* lab --only RESULT: each kernel's run is told to re-test RESULT's cells,
 * from a copy in the kernel's directory (the run inside reads that path),
 * with the --cell names; a resumed run keeps its cells and is not told
 * again. What the run inside would refuse is refused before anything
 * boots. */
static void test_place_only(void **state)
{
	static const struct fake_step steps[] = {
		{ .act = ACT_ARM, .batch = 1, .end = PLACE_LOST, .lost_as = OUTCOME_HOST_CRASH },
		{ .act = ACT_DONE_FILES, .end = PLACE_DONE, .code = 1 },
	};
	g_autofree char *top = test_top_dir();
	g_autofree char *result = g_build_filename(top, "tests/data/repro/run.json", NULL);
	g_autofree char *orig = NULL, *copy = NULL, *copy_path = NULL, *want = NULL;
	const char *cells[] = { "perf-3.6:cycles:pp" };
	struct lab_case c = { 0 };
	struct lab_opts o;

	c.o = ((struct fixture *)*state)->o;
	c.o.only_result = result;
	c.o.only_cells = cells;
	c.o.only_cell_count = 1;
	assert_int_equal(lab_case_run(&c, state, steps, G_N_ELEMENTS(steps), 1), 0);
	copy_path = g_build_filename(kernel_rep(&c, 0)->dir, "only-result.json", NULL);
	assert_true(g_file_get_contents(result, &orig, NULL, NULL));
	assert_true(g_file_get_contents(copy_path, &copy, NULL, NULL));
	assert_string_equal(orig, copy);
	want = g_strdup_printf("\n--only\n%s\n--cell\nperf-3.6:cycles:pp\n", copy_path);
	assert_non_null(strstr(c.place.argv->pdata[0], want));
	assert_non_null(strstr(c.place.argv->pdata[1], "\n--resume\n"));
	assert_null(strstr(c.place.argv->pdata[1], "--only"));
	lab_case_clear(&c);

	o = ((struct fixture *)*state)->o;
	o.only_cells = cells;
	o.only_cell_count = 1;
	expect_bad(&o, "--cell without --only");
	o.only_result = "/nonexistent/run.json";
	expect_bad(&o, "/nonexistent/run.json");
	o.only_result = result;
	o.only_cells = (const char *const[]){ "perf-3.6:cycles:ppp" };
	expect_bad(&o, "perf-3.6:cycles:ppp");
	o.only_cells = cells;
	o.perf_binaries = (const char *const[]){ "/bin/true" };
	o.perf_binary_count = 1;
	expect_bad(&o, "--only with --perf-binary");
	o.perf_binary_count = 0;
	assert_int_equal(lab_validate(&o), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_valid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_lacks, setup, teardown),
		cmocka_unit_test(test_sizing),
		cmocka_unit_test(test_place_names_options),
		cmocka_unit_test_setup_teardown(test_place_lava_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_lost_unarmed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_lost_armed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_tcg_silence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_max_boots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_inner_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_cannot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_two_kernels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_interrupted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_only, setup, teardown),
	};

	return test_run_group(tests, NULL, NULL);
}
