/* pmucanary bisect: git bisect over a kernel tree, each candidate built and
 * tested in a lab (bisect.h). */
#include "bisect.h"

#include "fleet.h"
#include "kernel.h"
#include "lab.h"
#include "log.h"
#include "place.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BISECT_MAKE_GRACE_S 10

enum verdict { V_GOOD, V_BAD, V_SKIP, V_INTERRUPTED };
static const char *const verdict_words[] = { "good", "bad", "skip", "interrupted" };

struct bisect {
	const struct bisect_opts *o;
	struct bisect_report *rep;
	char *id;
	json_t *steps;
	gint64 t0_us;
	double step_s_sum;
	unsigned int timed_steps;
	int left;                   /* git's estimate; -1 unknown */
	int verify_left;            /* steps of the verification left; -1: bisecting */
};

void bisect_report_clear(struct bisect_report *r)
{
	g_free(r->dir);
	g_free(r->first_bad);
	g_free(r->subject);
	g_free(r->diffstat);
	g_free(r->summary);
	memset(r, 0, sizeof(*r));
}

int bisect_parse_steps(const char *out)
{
	const char *p = out ? strstr(out, "(roughly ") : NULL;
	char *end;
	long n;

	if (!p)
		return -1;
	n = strtol(p + 9, &end, 10);
	if (end == p + 9 || n < 0 || n > 64 || strncmp(end, " step", 5))
		return -1;
	return (int)n;
}

char *bisect_parse_first_bad(const char *out)
{
	const char *p = out ? strstr(out, " is the first bad commit") : NULL;
	const char *b;

	if (!p)
		return NULL;
	for (b = p; b > out && g_ascii_isxdigit(b[-1]); b--)
		;
	if (p - b < 7 || p - b > 64 || (b > out && b[-1] != '\n'))
		return NULL;
	return g_strndup(b, p - b);
}

/* git -C TREE ARGS...: 0 and *out (its stdout, then its stderr) when it
 * exits 0. */
static int git(const struct bisect *b, char **out, const char *first, ...)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autofree char *sout = NULL, *serr = NULL, *text = NULL;
	g_autoptr(GError) err = NULL;
	int status;
	va_list ap;

	g_ptr_array_add(argv, "git");
	g_ptr_array_add(argv, "-C");
	g_ptr_array_add(argv, (char *)b->o->tree);
	va_start(ap, first);
	for (const char *a = first; a; a = va_arg(ap, const char *))
		g_ptr_array_add(argv, (char *)a);
	va_end(ap);
	g_ptr_array_add(argv, NULL);
	if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &sout,
			  &serr, &status, &err))
		return pc_fail(EIO, "git: %s", err->message);
	text = g_strconcat(sout ? sout : "", serr ? serr : "", NULL);
	if (out)
		*out = g_strdup(text);
	if (!g_spawn_check_wait_status(status, NULL))
		return pc_fail(EINVAL, "git %s: exit %d%s%.300s", first,
			       WIFEXITED(status) ? WEXITSTATUS(status) : -1, *text ? ": " : "", text);
	return 0;
}

static char *git_line(const struct bisect *b, const char *a1, const char *a2, const char *a3)
{
	g_autofree char *out = NULL;

	if (git(b, &out, a1, a2, a3, NULL) < 0)
		return NULL;
	return g_strstrip(g_strdup(out));
}

static void progress(struct bisect *b, unsigned int step, const char *commit, const char *subject,
		     const char *what)
{
	struct bisect_progress p = { 0 };

	if (!b->o->progress)
		return;
	/* after this step: git's estimate and the verification's two */
	int left = b->verify_left >= 0 ? b->verify_left : b->left < 0 ? -1 : b->left + 2;

	p.step = step;
	p.left = left < 0 ? 0 : (unsigned int)left;
	p.commit = commit;
	p.subject = subject;
	p.what = what;
	p.elapsed_s = (g_get_monotonic_time() - b->t0_us) / 1e6;
	p.eta_s = b->timed_steps && left >= 0 ? b->step_s_sum / b->timed_steps * (left + 1) : -1;
	b->o->progress(b->o->progress_ctx, &p);
}

/* make in the tree (or O=), its output to dir/build.log. */
static int build(struct bisect *b, const char *dir, bool *built)
{
	const struct bisect_opts *o = b->o;
	g_autofree char *log = g_build_filename(dir, "build.log", NULL);
	g_autofree char *jobs = g_strdup_printf("-j%u", o->jobs ? o->jobs :
						(unsigned int)MAX(1, sysconf(_SC_NPROCESSORS_ONLN)));
	g_autofree char *objdir = g_strdup_printf("O=%s", o->out ? o->out : "");
	g_autofree char *cfg_dst = g_build_filename(o->out ? o->out : o->tree, ".config", NULL);
	static char olddefconfig[] = "olddefconfig", bzimage[] = "bzImage";
	char *const targets[] = { olddefconfig, bzimage };
	int status, e;
	bool stopped, interrupted;

	*built = false;
	if (o->config) {
		g_autofree char *text = NULL;
		gsize len;

		if (o->out && g_mkdir_with_parents(o->out, 0755) < 0)
			return pc_fail(errno, "%s: %s", o->out, g_strerror(errno));
		if (!g_file_get_contents(o->config, &text, &len, NULL) ||
		    !g_file_set_contents(cfg_dst, text, (gssize)len, NULL))
			return pc_fail(EIO, "--config %s to %s: cannot copy", o->config, cfg_dst);
	}
	for (size_t t = 0; t < G_N_ELEMENTS(targets); t++) {
		g_autofree char *tlog = g_strdup_printf("%s.%s", log, targets[t]);
		char *argv[] = { "make", "-C", (char *)o->tree, jobs, targets[t], NULL, NULL };

		if (o->out) {
			argv[4] = objdir;
			argv[5] = targets[t];
		}
		if ((e = place_run_logged(argv, tlog, 0, BISECT_MAKE_GRACE_S, &status, &stopped,
					  &interrupted)))
			return e;
		if (interrupted)
			return pc_fail(EINTR, "interrupted by signal %d", fleet_signal_pending());
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			g_autofree char *tail = place_file_tail(tlog, 1500);

			pc_warn("make %s failed (%s); the commit is skipped:\n%s", targets[t], tlog, tail);
			return 0;
		}
	}
	*built = true;
	return 0;
}

/* Builds and tests HEAD. *why says what decided a skip. */
static int test_head(struct bisect *b, unsigned int step, const char *what, enum verdict *v,
		     json_t *j)
{
	const struct bisect_opts *o = b->o;
	g_autofree char *sha = git_line(b, "rev-parse", "HEAD", NULL);
	g_autofree char *subject = git_line(b, "log", "-1", "--format=%s");
	g_autofree char *short_sha = NULL, *dir = NULL, *image = NULL, *spec = NULL;
	g_autofree char *config = NULL;
	g_autoptr(kernel) k = NULL;
	struct kernel_opts ko = { 0 };
	struct lab_opts lo = { 0 };
	struct lab_report lr = { 0 };
	gint64 t0 = g_get_monotonic_time();
	bool built;
	int e;

	*v = V_SKIP;
	if (!sha)
		return -EINVAL;
	short_sha = g_strndup(sha, 12);
	dir = g_strdup_printf("%s/step-%u-%s", b->rep->dir, step, short_sha);
	if (g_mkdir_with_parents(dir, 0755) < 0)
		return pc_fail(errno, "%s: %s", dir, g_strerror(errno));
	json_object_set_new(j, "commit", json_string(sha));
	json_object_set_new(j, "subject", json_string(subject ? subject : ""));
	json_object_set_new(j, "what", json_string(what));
	json_object_set_new(j, "dir", json_string(dir));
	pc_info("bisect step %u (%s): %s %s", step, what, short_sha, subject ? subject : "");
	progress(b, step, short_sha, subject, "build");
	if ((e = build(b, dir, &built)))
		return e;
	b->rep->builds++;
	json_object_set_new(j, "build_s", json_real((g_get_monotonic_time() - t0) / 1e6));
	if (!built) {
		json_object_set_new(j, "why", json_string("the build failed"));
		goto timed;
	}
	image = g_build_filename(o->out ? o->out : o->tree, "arch/x86/boot/bzImage", NULL);
	config = g_build_filename(o->out ? o->out : o->tree, ".config", NULL);
	spec = g_strdup_printf("%s:c-%s", image, short_sha);
	ko.config = config;
	if ((e = kernel_resolve(spec, &ko, &k))) {
		json_object_set_new(j, "why", json_string(pc_errmsg()));
		goto timed;
	}
	progress(b, step, short_sha, subject, "lab");
	lo.scenario = o->scenario;
	lo.kernels = &k;
	lo.kernel_count = 1;
	lo.only_result = o->only_result;
	lo.only_cells = o->only_cells;
	lo.only_cell_count = o->only_cell_count;
	lo.results_dir = dir;
	lo.tcg = o->tcg;
	lo.boot_timeout_ms = o->boot_timeout_ms;
	e = lab_run(&lo, &lr);
	if (e == -EINTR) {
		lab_report_clear(&lr);
		*v = V_INTERRUPTED;
		return e;
	}
	if (e) {
		/* this commit cannot be a lab host (its config lacks what one
		 * needs, ...): no verdict on it */
		json_object_set_new(j, "why", json_string(pc_errmsg()));
		lab_report_clear(&lr);
		goto timed;
	}
	json_object_set_new(j, "lab", json_string(lr.dir));
	json_object_set_new(j, "lab_exit", json_integer(lr.exit_code));
	if (lr.exit_code == 0)
		*v = V_GOOD;
	else if (lr.exit_code == 1)
		*v = V_BAD;
	else
		json_object_set_new(j, "why", json_string("the lab could not test it (INFRA: its lab "
							  "host did not boot, or could not be used)"));
	lab_report_clear(&lr);
timed:
	json_object_set_new(j, "verdict", json_string(verdict_words[*v]));
	json_object_set_new(j, "total_s", json_real((g_get_monotonic_time() - t0) / 1e6));
	b->step_s_sum += (g_get_monotonic_time() - t0) / 1e6;
	b->timed_steps++;
	b->rep->skips += *v == V_SKIP;
	pc_info("bisect step %u: %s is %s", step, short_sha, verdict_words[*v]);
	return 0;
}

static int finish(struct bisect *b, const char *state)
{
	g_autofree char *log = NULL, *log_path = g_build_filename(b->rep->dir, "bisect.log", NULL);
	g_autofree char *path = g_build_filename(b->rep->dir, "bisect.json", NULL);
	json_t *j;
	int e;

	if (git(b, &log, "bisect", "log", NULL) == 0)
		g_file_set_contents(log_path, log, -1, NULL);
	if (strcmp(state, "interrupted"))
		git(b, NULL, "bisect", "reset", NULL);
	j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:O,s:i,s:i,s:i,s:b,s:i}", "schema", "pmucanary-bisect/1",
		      "tree", b->o->tree, "good", b->o->good, "bad", b->o->bad, "state", state,
		      "steps", b->steps, "builds", (int)b->rep->builds, "skips", (int)b->rep->skips,
		      "tested", (int)b->rep->steps, "verified", b->rep->verified,
		      "exit_code", b->rep->exit_code);
	if (b->rep->first_bad)
		json_object_set_new(j, "first_bad", json_pack("{s:s,s:s,s:s}", "commit",
			b->rep->first_bad, "subject", b->rep->subject ? b->rep->subject : "",
			"diffstat", b->rep->diffstat ? b->rep->diffstat : ""));
	e = place_write_json(path, j);
	json_decref(j);
	return e;
}

static int mark(struct bisect *b, enum verdict v, char **out)
{
	g_autofree char *text = NULL;
	int e = git(b, &text, "bisect", verdict_words[v], NULL);

	/* git exits 2 when only skipped commits are left: an answer, not an error */
	if (e && text && strstr(text, "only 'skip'ped commits left"))
		e = 0;
	if (e)
		return e;
	b->left = bisect_parse_steps(text);
	*out = g_steal_pointer(&text);
	return 0;
}

static int verify(struct bisect *b, const char *first, unsigned int *step)
{
	g_autofree char *parent = g_strdup_printf("%s^", first);
	static const struct { bool parent; enum verdict want; } checks[] = {
		{ true, V_GOOD }, { false, V_BAD },
	};
	int e;

	b->rep->verified = true;
	for (size_t i = 0; i < G_N_ELEMENTS(checks); i++) {
		json_t *j = json_object();
		enum verdict v;

		if ((e = git(b, NULL, "checkout", "-q", "--detach", checks[i].parent ? parent : first,
			     NULL))) {
			json_decref(j);
			return e;
		}
		b->verify_left = (int)(G_N_ELEMENTS(checks) - 1 - i);
		e = test_head(b, ++*step, checks[i].parent ? "verify: its parent" :
			      "verify: the first bad commit again", &v, j);
		json_array_append_new(b->steps, j);
		if (e)
			return e;
		if (v != checks[i].want)
			b->rep->verified = false;
	}
	return 0;
}

int bisect_run(const struct bisect_opts *o, struct bisect_report *rep)
{
	struct bisect b = { .o = o, .rep = rep, .left = -1, .verify_left = -1 };
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();
	g_autofree char *stamp = g_date_time_format(now, "%Y%m%dT%H%M%SZ");
	g_autofree char *out = NULL, *top = NULL, *bisect_log = NULL, *state_path = NULL;
	g_autofree char *gsha = NULL, *bsha = NULL, *first = NULL;
	GString *sum;
	unsigned int step = 0;
	int e;

	memset(rep, 0, sizeof(*rep));
	rep->exit_code = 125;
	b.t0_us = g_get_monotonic_time();
	if (!o->tree || !o->good || !o->bad || !o->scenario)
		return pc_fail(EINVAL, "bisect needs a tree, --good, --bad and a scenario");
	if (git(&b, &top, "rev-parse", "--show-toplevel", NULL) < 0)
		return pc_fail(EINVAL, "--tree %s: not a git work tree", o->tree);
	if (git(&b, &state_path, "rev-parse", "--git-path", "BISECT_LOG", NULL) < 0)
		return -EINVAL;
	g_strstrip(state_path);
	bisect_log = g_path_is_absolute(state_path) ? g_strdup(state_path)
						    : g_build_filename(o->tree, state_path, NULL);
	if (!o->resume && g_file_test(bisect_log, G_FILE_TEST_EXISTS))
		return pc_fail(EINVAL, "--tree %s: a bisection is under way (%s): --resume it, or "
			       "`git bisect reset` first", o->tree, bisect_log);
	if (o->resume && !g_file_test(bisect_log, G_FILE_TEST_EXISTS))
		return pc_fail(EINVAL, "--resume: no bisection is under way in %s", o->tree);
	{
		g_autofree char *gr = g_strdup_printf("%s^{commit}", o->good);
		g_autofree char *br = g_strdup_printf("%s^{commit}", o->bad);

		gsha = git_line(&b, "rev-parse", "--verify", gr);
		bsha = git_line(&b, "rev-parse", "--verify", br);
	}
	if (!gsha || !bsha)
		return pc_fail(EINVAL, "--good %s / --bad %s: not commits of %s", o->good, o->bad,
			       o->tree);
	if (!strcmp(gsha, bsha) || git(&b, NULL, "merge-base", "--is-ancestor", gsha, bsha, NULL))
		return pc_fail(EINVAL, "--good %s is not an ancestor of --bad %s", o->good, o->bad);
	if (!o->out && !o->config) {
		g_autofree char *cfg = g_build_filename(o->tree, ".config", NULL);

		if (!g_file_test(cfg, G_FILE_TEST_IS_REGULAR))
			return pc_fail(EINVAL, "%s has no .config: give --config FILE", o->tree);
	}
	b.id = g_strdup_printf("bisect-%s-%06x", stamp, g_random_int() & 0xffffff);
	rep->dir = g_build_filename(o->results_dir ? o->results_dir : "results", b.id, NULL);
	if (g_mkdir_with_parents(rep->dir, 0755) < 0) {
		e = pc_fail(errno, "%s: %s", rep->dir, g_strerror(errno));
		g_free(b.id);
		return e;
	}
	b.steps = json_array();
	fleet_signals_install();
	if (!o->resume) {
		if ((e = git(&b, &out, "bisect", "start", bsha, gsha, NULL)))
			goto out;
		b.left = bisect_parse_steps(out);
	} else {
		/* killed after git named the first bad commit: BISECT_LOG says
		 * "# first bad commit: [SHA] subject" */
		g_autofree char *log = NULL;
		const char *p;

		if ((e = git(&b, &log, "bisect", "log", NULL)))
			goto out;
		if ((p = strstr(log, "# first bad commit: ["))) {
			g_autofree char *sha = g_strndup(p + 21, strcspn(p + 21, "]"));

			out = g_strdup_printf("%s is the first bad commit\n", sha);
		}
	}
	for (;;) {
		json_t *j;
		enum verdict v;
		g_autofree char *next = NULL;

		if ((first = bisect_parse_first_bad(out)))
			break;
		if (out && strstr(out, "only 'skip'ped commits left")) {
			pc_warn("only skipped commits are left: the first bad commit is one of them");
			rep->summary = g_strdup_printf("bisect %s: inconclusive: the first bad commit is "
						       "among commits that could not be tested\n%s",
						       b.id, out);
			e = finish(&b, "inconclusive");
			goto out;
		}
		j = json_object();
		e = test_head(&b, ++step, "bisect", &v, j);
		json_array_append_new(b.steps, j);
		rep->steps = step;
		if (e)
			goto interrupted;
		if ((e = mark(&b, v, &next)))
			goto out;
		g_free(out);
		out = g_steal_pointer(&next);
	}
	rep->first_bad = git_line(&b, "rev-parse", first, NULL);
	if (!rep->first_bad)
		rep->first_bad = g_strdup(first);
	{
		g_autofree char *stat = NULL;

		if (git(&b, &stat, "show", "--stat", "--format=", rep->first_bad, NULL) == 0)
			rep->diffstat = g_strstrip(g_steal_pointer(&stat));
	}
	{
		g_autofree char *fmt = NULL;

		git(&b, &fmt, "log", "-1", "--format=%s", rep->first_bad, NULL);
		rep->subject = g_strstrip(fmt ? g_steal_pointer(&fmt) : g_strdup(""));
	}
	if ((e = verify(&b, rep->first_bad, &step)))
		goto interrupted;
	rep->steps = step;
	rep->exit_code = rep->verified ? 1 : 125;
	sum = g_string_new(NULL);
	g_string_append_printf(sum, "bisect %s: %u steps, %u builds, %u skipped\n", b.id, step,
			       rep->builds, rep->skips);
	g_string_append_printf(sum, "first bad commit: %s %s\n%s\n", rep->first_bad, rep->subject,
			       rep->diffstat ? rep->diffstat : "");
	g_string_append(sum, rep->verified ? "verified: the commit is bad again, its parent good\n"
					   : "NOT verified: re-tested, the commit was not bad or its "
					     "parent not good (a flaky verdict): exit 125\n");
	g_string_append_printf(sum, "  %s/bisect.json\n  %s/bisect.log\n", rep->dir, rep->dir);
	rep->summary = g_string_free(sum, FALSE);
	e = finish(&b, rep->verified ? "found" : "unverified");
	goto out;
interrupted:
	if (e == -EINTR || fleet_signal_pending()) {
		finish(&b, "interrupted");
		e = pc_fail(EINTR, "interrupted by signal %d: `pmucanary bisect --resume` continues "
			    "at %s", fleet_signal_pending(), o->tree);
	} else {
		finish(&b, "error");
	}
out:
	json_decref(b.steps);
	g_free(b.id);
	return e;
}
