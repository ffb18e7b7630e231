#include "runner.h"

#include "attr.h"
#include "enumerate.h"
#include "fingerprint.h"
#include "fleet.h"
#include "hbproto.h"
#include "isolate.h"
#include "journal.h"
#include "kmsg.h"
#include "load.h"
#include "infile.h"
#include "log.h"
#include "only.h"
#include "pool.h"
#include "perfbin.h"
#include "perfev.h"
#include "prober.h"
#include "profile.h"
#include "report.h"
#include "results.h"
#include "spec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
	const char *name;
	const char *agent;   /* the agent's selftest word */
} harms[RUNNER_HARM_COUNT] = {
	[RUNNER_HARM_CRASH] = { "crash", "panic" },
	[RUNNER_HARM_HANG] = { "hang", "hang" },
	[RUNNER_HARM_CORRUPT] = { "corrupt", "corrupt" },
	[RUNNER_HARM_REBOOT] = { "reboot", "reboot" },
	[RUNNER_HARM_OOPS] = { "oops", "oops" },
	[RUNNER_HARM_HOST_CRASH] = { "host-crash", NULL },
};

bool runner_in_lab_host(void)
{
	g_autofree char *cmdline = NULL;

	if (!g_file_get_contents("/proc/cmdline", &cmdline, NULL, NULL))
		return false;
	return access(HB_LAB_MARKER, F_OK) == 0 && strstr(cmdline, "pmucanary.role=lab");
}

/* The host-crash self-test: this kernel panics now. The batch is in the
 * journal (fsync'd) and armed; the outer harness sees the lab host die. */
static int selftest_host_crash(void)
{
	int fd;

	if (!runner_in_lab_host())
		return pc_fail(EPERM, "host-crash self-test outside a lab host: refused");
	pc_warn("self-test: panicking this lab host (sysrq c)");
	sync();
	fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "c", 1) != 1) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return pc_fail(e, "/proc/sysrq-trigger: %s", g_strerror(e));
	}
	close(fd);
	g_usleep(10 * G_USEC_PER_SEC); /* not reached */
	return pc_fail(EIO, "sysrq c did not panic this lab host");
}

const char *runner_harm_name(enum runner_harm h)
{
	return h < RUNNER_HARM_COUNT ? harms[h].name : "?";
}

const char *runner_harm_agent_command(enum runner_harm h)
{
	return h < RUNNER_HARM_COUNT ? harms[h].agent : "?";
}

enum runner_harm runner_harm_from_name(const char *name)
{
	for (int i = 0; i < RUNNER_HARM_COUNT; i++)
		if (name && !strcmp(name, harms[i].name))
			return (enum runner_harm)i;
	return RUNNER_HARM_COUNT;
}

static const char *const verdict_names[RUNNER_VERDICT_COUNT] = {
	[RUNNER_VERDICT_CLEAN] = "clean",
	[RUNNER_VERDICT_HARM] = "harm",
	[RUNNER_VERDICT_INFRA] = "infra",
};

const char *runner_verdict_name(enum runner_verdict v)
{
	return v < RUNNER_VERDICT_COUNT ? verdict_names[v] : "?";
}

void runner_report_clear(struct runner_report *rep)
{
	if (!rep)
		return;
	g_free(rep->run_dir);
	g_free(rep->run_id);
	g_free(rep->why);
	memset(rep, 0, sizeof(*rep));
}

/* pc_fail with the current message behind a prefix (pc_errmsg's buffer is
 * the one pc_fail writes, so copy it first). */
static int refail(int err, const char *prefix)
{
	g_autofree char *msg = g_strdup(pc_errmsg());

	return pc_fail(err, "%s%s", prefix, msg);
}

/* A harmful batch and what the guests and host said. */
struct harmful {
	unsigned int seq;
	size_t *ids;
	size_t count;
	json_t *verdicts;
};

static void harmful_free(gpointer p)
{
	struct harmful *h = p;

	g_free(h->ids);
	json_decref(h->verdicts);
	g_free(h);
}

/* Per distinct armed attr. */
struct armed {
	struct perf_event_attr attr;
	char *key;              /* attr_to_string: the journal's key */
	GPtrArray *cells;       /* struct cell * (borrowed from the set) */
	bool selftest;          /* arming it makes the guests harm themselves */
	uint64_t samples, lost, throttle;
	unsigned int batches;
	int arm_err, arm_cpu;
};

static void armed_free(gpointer p)
{
	struct armed *a = p;

	g_free(a->key);
	g_ptr_array_unref(a->cells);
	g_free(a);
}

struct run {
	const struct runner_opts *opts;
	struct pool *pool;      /* the guests: [fleet] pool's backend */
	struct scenario *sc;
	struct pmu_set *pmus;
	struct result_set *set;
	char *run_dir;
	char *fp_hash;
	struct journal *j;
	struct journal_replay *replay;
	struct kmsg_watch *km;
	GPtrArray *armed;       /* struct armed * by id */
	GHashTable *index;      /* struct perf_event_attr * -> id + 1 */
	GPtrArray *harmful;     /* struct harmful * */
	GPtrArray *bins;        /* struct perfbin *: --perf-binary columns */
	unsigned int dwell_ms;
	unsigned int live_rounds;
	bool restart_due;       /* the last batch harmed a guest: bring it back before the next */
	bool guests_up;
	struct run_only *only;  /* run --only: the cells re-tested, or NULL */
	const char *selftest_spec;   /* the option's, or the resumed run's */
	enum runner_harm selftest_harm;
	/* progress */
	gint64 t0_us, load_t0_us;
	unsigned int batches_done, screening, isolating;
	bool budget_out;        /* [load] budget ran out: isolate_stop's partial answer */
};

static void progress(struct run *r, const char *phase)
{
	struct runner_progress p = { .phase = phase, .eta_s = -1 };
	gint64 now = g_get_monotonic_time();

	if (!r->opts->progress)
		return;
	p.batch = r->batches_done;
	p.screening = r->screening;
	p.isolating = r->isolating;
	p.elapsed_s = (double)(now - r->t0_us) / 1e6;
	/* Screening batches that remain, at the pace so far; isolation adds
	 * batches nobody can foresee, so the ETA is a lower bound then. */
	if (r->batches_done && r->screening && r->batches_done - r->isolating <= r->screening) {
		double per = (double)(now - r->load_t0_us) / 1e6 / r->batches_done;
		p.eta_s = per * (r->screening - (r->batches_done - r->isolating));
	}
	/* The budget ends the load phase whatever is left. */
	if (r->sc && r->sc->budget_ms && r->load_t0_us) {
		double left = r->sc->budget_ms / 1e3 - (double)(now - r->load_t0_us) / 1e6;

		if (left < 0)
			left = 0;
		if (p.eta_s < 0 || p.eta_s > left)
			p.eta_s = left;
	}
	if (r->pool && r->pool->ops->health && r->guests_up)
		r->pool->ops->health(r->pool->priv, &p.healthy, &p.guests);
	r->opts->progress(r->opts->progress_ctx, &p);
}

static void run_clear(struct run *r)
{
	if (r->guests_up)
		r->pool->ops->stop(r->pool->priv);
	pool_free(r->pool);
	scenario_free(r->sc);
	pmu_set_free(r->pmus);
	result_set_free(r->set);
	g_free(r->run_dir);
	g_free(r->fp_hash);
	journal_close(r->j);
	journal_replay_free(r->replay);
	kmsg_close(r->km);
	if (r->index)
		g_hash_table_unref(r->index);
	if (r->armed)
		g_ptr_array_unref(r->armed);
	if (r->harmful)
		g_ptr_array_unref(r->harmful);
	if (r->bins)
		g_ptr_array_unref(r->bins);
	only_free(r->only);
}

/* ---- setup ---------------------------------------------------------------- */

static const char *const *strv_or_null(const GPtrArray *a)
{
	if (!a->len || (a->len == 1 && !strcmp(a->pdata[0], "*")))
		return NULL;
	return (const char *const *)a->pdata;
}

/* NULL-terminated view of a GPtrArray of strings (adds the terminator). */
static GPtrArray *strv_copy(const GPtrArray *a)
{
	GPtrArray *v = g_ptr_array_new();

	for (guint i = 0; i < a->len; i++)
		g_ptr_array_add(v, a->pdata[i]);
	g_ptr_array_add(v, NULL);
	return v;
}

static void add_cell(struct run *r, const struct profile *p, const char *spec,
		     enum profile_mode mode, const char *kernel)
{
	struct cell *cell = cell_new(kernel, profile_name(p), spec);
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	pc_errclear();
	if (profile_encode(p, r->pmus, spec, mode, &attr) < 0)
		cell_set_error(cell, pc_errmsg());
	else
		cell_set_attr(cell, &attr);
	results_add_cell(r->set, cell);
}

/* "path:line: [section] key: " for a message about a key whose value only
 * turns out bad once used (an unknown profile, event or PMU): bad input
 * names its line like the scenario parser's own messages. */
static char *key_where(const struct scenario *s, const char *section, const char *key)
{
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	bool in = false;

	if (s->path && g_file_get_contents(s->path, &text, NULL, NULL)) {
		lines = g_strsplit(text, "\n", -1);
		for (guint i = 0; lines[i]; i++) {
			g_autofree char *l = g_strstrip(g_strdup(lines[i]));
			size_t n = strlen(key);

			if (l[0] == '[')
				in = l[strlen(l) - 1] == ']' && strlen(l) == strlen(section) + 2 &&
				     !strncmp(l + 1, section, strlen(section));
			else if (in && !strncmp(l, key, n) && (l[n] == '=' || l[n] == ' ' || l[n] == '\t'))
				return g_strdup_printf("%s:%u: [%s] %s: ", s->path, i + 1, section, key);
		}
	}
	return g_strdup_printf("%s: [%s] %s: ", s->path ? s->path : "scenario", section, key);
}

/* The scenario's (profile, spec) pairs as cells of the set. */
static int build_cells(struct run *r, const char *kernel)
{
	const struct scenario *s = r->sc;
	g_autoptr(GPtrArray) pv = strv_copy(s->profiles);
	g_autoptr(GPtrArray) mv = strv_copy(s->pmus);
	g_autoptr(GPtrArray) ev = strv_copy(s->events);
	struct enumerate_opts eo = { 0 };
	g_autoptr(GPtrArray) profiles = NULL;
	g_autoptr(GPtrArray) events = NULL;
	g_autoptr(GPtrArray) raw = g_ptr_array_new_with_free_func(g_free);
	enum profile_mode mode = !strcmp(s->mode, "stat") ? PROFILE_MODE_STAT : PROFILE_MODE_RECORD;
	bool sweep_events = s->pmus->len || s->events->len;
	bool have_raw = false;

	eo.profiles = strv_or_null(s->profiles) ? (const char *const *)pv->pdata : NULL;
	eo.pmus = strv_or_null(s->pmus) ? (const char *const *)mv->pdata : NULL;
	eo.events = strv_or_null(s->events) ? (const char *const *)ev->pdata : NULL;
	eo.full = !strcmp(s->modifier_set, "full");
	if (enumerate_profiles(&eo, &profiles)) {
		g_autofree char *where = key_where(s, "sweep", "profiles");

		return refail(EINVAL, where);
	}
	if (sweep_events && enumerate_events(r->pmus, &eo, &events)) {
		/* The message names the event or the PMU at fault. */
		g_autofree char *where = key_where(s, "sweep",
			strstr(pc_errmsg(), "--pmu") ? "pmus" : "events");

		return refail(EINVAL, where);
	}
	enumerate_raw_suffixes(raw);

	for (guint i = 0; i < profiles->len; i++) {
		const struct profile *p = profiles->pdata[i];
		g_autoptr(GPtrArray) mods = g_ptr_array_new_with_free_func(g_free);
		bool is_raw = profile_is_raw(p);

		have_raw |= is_raw;
		if (is_raw) {
			if (s->raw_excludes)
				for (guint m = 0; m < raw->len; m++)
					g_ptr_array_add(mods, g_strdup(raw->pdata[m]));
			else
				g_ptr_array_add(mods, g_strdup(""));
		} else if (eo.full) {
			enumerate_modifiers(profile_modifiers(p), true, mods);
		} else {
			for (guint m = 0; m < s->modifiers->len; m++)
				g_ptr_array_add(mods, g_strdup(s->modifiers->pdata[m]));
		}
		for (guint k = 0; events && k < events->len; k++) {
			const char *name = ((struct enumerate_event *)events->pdata[k])->name;

			for (guint m = 0; m < mods->len; m++) {
				const char *mod = mods->pdata[m];
				/* Spelled as probe spells it (spec_join: "msr/tsc/u",
				 * "cpu-clock:u") so that runs and probes share cells. */
				g_autofree char *spec = !*mod ? g_strdup(name) :
					is_raw ? g_strconcat(name, mod, NULL) : spec_join(name, mod);

				add_cell(r, p, spec, mode, kernel);
			}
		}
		/* Exact specs; raw takes only its own syntax (no ':'). */
		for (guint k = 0; k < s->specs->len; k++)
			if (!is_raw || !strchr(s->specs->pdata[k], ':'))
				add_cell(r, p, s->specs->pdata[k], mode, kernel);
	}
	if (s->raw_excludes && !have_raw)
		pc_warn("%s: raw_excludes is set but profile raw is not swept", s->path);
	if (!r->set->cells->len)
		return pc_fail(EINVAL, "%s: the scenario gives no cells to sweep", s->path);
	return 0;
}

/* The attr the kernel accepted: an OK cell's attr is its final one, after
 * the profile's fallbacks (results.h). */
static const struct perf_event_attr *armed_attr(const struct cell *c)
{
	return &c->attr;
}

static void collect_armed(struct run *r)
{
	r->armed = g_ptr_array_new_with_free_func(armed_free);
	r->index = g_hash_table_new(attr_hash_func, attr_equal_func);
	for (guint i = 0; i < r->set->cells->len; i++) {
		struct cell *c = r->set->cells->pdata[i];
		const struct perf_event_attr *a;
		struct armed *arm;
		gpointer v;

		if (!c->has_attr || c->outcome != OUTCOME_OK)
			continue;
		a = armed_attr(c);
		if (g_hash_table_lookup_extended(r->index, a, NULL, &v)) {
			arm = r->armed->pdata[GPOINTER_TO_UINT(v) - 1];
		} else {
			arm = g_new0(struct armed, 1);
			arm->attr = *a;
			arm->key = attr_to_string(a);
			arm->cells = g_ptr_array_new();
			arm->arm_cpu = -1;
			g_ptr_array_add(r->armed, arm);
			g_hash_table_insert(r->index, &arm->attr, GUINT_TO_POINTER(r->armed->len));
		}
		g_ptr_array_add(arm->cells, c);
	}
}

/* --selftest-harm's spec must be swept: a cell of that spec, or an attr
 * some profile encodes it to that a cell of the sweep has. Checked before
 * the run directory exists (mark_selftest then marks what opened). */
static int selftest_in_sweep(struct run *r)
{
	const char *spec = r->selftest_spec;
	enum profile_mode mode = !strcmp(r->sc->mode, "stat") ? PROFILE_MODE_STAT : PROFILE_MODE_RECORD;
	g_autoptr(GHashTable) attrs = NULL;

	if (!spec)
		return 0;
	attrs = g_hash_table_new(attr_hash_func, attr_equal_func);
	for (guint i = 0; i < r->set->cells->len; i++) {
		struct cell *c = r->set->cells->pdata[i];

		if (!strcmp(c->spec, spec))
			return 0;
		if (c->has_attr)
			g_hash_table_add(attrs, &c->attr);
	}
	for (guint i = 0; i < r->set->cells->len; i++) {
		const struct cell *c = r->set->cells->pdata[i];
		const struct profile *p = profile_find(c->profile);
		struct perf_event_attr attr;

		memset(&attr, 0, sizeof(attr));
		if (p && profile_encode(p, r->pmus, spec, mode, &attr) == 0 &&
		    g_hash_table_contains(attrs, &attr))
			return 0;
	}
	return pc_fail(EINVAL, "--selftest-harm %s: not in this run's sweep (no spec of the scenario "
		       "is it or encodes to the same attr)", spec);
}

static int mark_selftest(struct run *r)
{
	const char *spec = r->selftest_spec;
	unsigned int marked = 0;
	enum profile_mode mode = !strcmp(r->sc->mode, "stat") ? PROFILE_MODE_STAT : PROFILE_MODE_RECORD;

	if (!spec)
		return 0;
	/* Cells of that spec arm what their fallbacks reached... */
	for (guint i = 0; i < r->armed->len; i++) {
		struct armed *a = r->armed->pdata[i];

		for (guint k = 0; k < a->cells->len && !a->selftest; k++)
			if (!strcmp(((struct cell *)a->cells->pdata[k])->spec, spec))
				a->selftest = true;
	}
	/* ...and any profile's first encoding of it that is armed anyway. */
	for (guint i = 0; i < r->set->cells->len; i++) {
		const struct cell *c = r->set->cells->pdata[i];
		const struct profile *p = profile_find(c->profile);
		struct perf_event_attr attr;
		gpointer v;

		if (!p || (i && !strcmp(c->profile, ((struct cell *)r->set->cells->pdata[i - 1])->profile)))
			continue;
		memset(&attr, 0, sizeof(attr));
		if (profile_encode(p, r->pmus, spec, mode, &attr) == 0 &&
		    g_hash_table_lookup_extended(r->index, &attr, NULL, &v))
			((struct armed *)r->armed->pdata[GPOINTER_TO_UINT(v) - 1])->selftest = true;
	}
	for (guint i = 0; i < r->armed->len; i++)
		marked += ((struct armed *)r->armed->pdata[i])->selftest;
	if (!marked)
		return pc_fail(EINVAL, "--selftest-harm %s: no attr of this run encodes it "
			       "(it must be swept by the scenario and open OK)", spec);
	pc_info("self-test: %u armed attr(s) stand for %s", marked, spec);
	return 0;
}

/* ---- the load phase ------------------------------------------------------- */

static json_t *hits_to_json(GPtrArray *hits)
{
	json_t *a = json_array();

	for (guint i = 0; i < hits->len; i++) {
		const struct kmsg_hit *h = hits->pdata[i];

		/* The kernel's text as it printed it: json_pack would refuse
		 * (and drop) a line that is not UTF-8. */
		json_array_append_new(a, json_pack("{s:s,s:I,s:o}", "class", kmsg_class_name(h->cls),
						   "ts_usec", (json_int_t)h->ts_usec,
						   "message", results_json_string(h->message)));
	}
	return a;
}

/* Load counts are the kernel's u64s, jansson's integers int64s: a count
 * past INT64_MAX (a corrupt LOST record) is capped, never negative. */
static json_int_t count_json(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v;
}

/* A count read back from the journal: a negative or non-integer one is
 * 0, never a huge u64; sums saturate instead of wrapping. */
static uint64_t count_add(uint64_t sum, json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));

	if (v <= 0)
		return sum;
	return sum > UINT64_MAX - (uint64_t)v ? UINT64_MAX : sum + (uint64_t)v;
}

/* counts: one object per attr of the batch, in ids' order (count of them);
 * a journal's array that is longer names attrs the batch did not arm. */
static void load_stats_apply(struct run *r, const size_t *ids, size_t count, json_t *counts)
{
	size_t i;
	json_t *o;

	json_array_foreach(counts, i, o) {
		struct armed *a;
		const char *err = json_string_value(json_object_get(o, "arm_error"));
		json_int_t cpu = json_integer_value(json_object_get(o, "cpu"));

		if (i >= count || ids[i] >= r->armed->len)
			break;
		a = r->armed->pdata[ids[i]];
		if (a->batches < UINT_MAX)
			a->batches++;
		a->samples = count_add(a->samples, o, "samples");
		a->lost = count_add(a->lost, o, "lost");
		a->throttle = count_add(a->throttle, o, "throttle");
		if (err && !a->arm_err) {
			enum outcome eo = outcome_from_name(err);

			a->arm_err = eo < OUTCOME_COUNT ? outcome_errno(eo) : EIO;
			a->arm_cpu = cpu >= 0 && cpu < PERFEV_MAX_CPUS ? (int)cpu : -1;
		}
	}
}

static void note_harmful(struct run *r, const struct isolate_test *t, json_t *verdicts)
{
	struct harmful *h = g_new0(struct harmful, 1);

	h->seq = t->seq;
	h->ids = g_memdup2(t->ids, t->count * sizeof(*t->ids));
	h->count = t->count;
	h->verdicts = json_incref(verdicts);
	g_ptr_array_add(r->harmful, h);
}

/* The first line of the first INFRA verdict's evidence (the lost libvirt
 * connection, a guest that did not come up): what the user must fix. */
static const char *infra_why(json_t *verdicts)
{
	static __thread char why[256];
	size_t i;
	json_t *v;

	json_array_foreach(verdicts, i, v) {
		const char *ev = json_string_value(json_object_get(v, "evidence"));

		if (g_strcmp0(json_string_value(json_object_get(v, "verdict")), "INFRA") || !ev)
			continue;
		g_strlcpy(why, ev, sizeof(why));
		why[strcspn(why, "\n")] = 0;
		return why;
	}
	return "no guest could report";
}

#define RUNNER_DWELL_POLL_MS 20

/* The batch's dwell, in ms: the scenario's, or less when every guest is
 * harmed (and its evidence whole) before it ends, since no guest is left
 * to watch. */
static unsigned int runner_dwell(struct run *r, struct load *l)
{
	int64_t t0 = g_get_monotonic_time(), end = t0 + (int64_t)r->dwell_ms * 1000;

	for (;;) {
		int64_t now = g_get_monotonic_time();

		if (now >= end)
			return r->dwell_ms;
		/* a stop asked for (the batch is not judged) or no guest left */
		if (fleet_signal_pending() || (r->pool->ops->all_harmed && r->pool->ops->all_harmed(r->pool->priv)))
			return (unsigned int)((now - t0) / 1000);
		load_dwell(l, (unsigned int)MIN(RUNNER_DWELL_POLL_MS, (end - now + 999) / 1000));
	}
}

/* Arms, dwells, judges one batch; the isolate oracle. */
static int run_batch(struct run *r, const struct isolate_test *t, enum outcome *res)
{
	g_autofree const char **keys = g_new0(const char *, t->count + 1);
	g_autofree struct perf_event_attr *attrs = g_new0(struct perf_event_attr, t->count ? t->count : 1);
	g_autoptr(load) l = NULL;
	g_autoptr(GPtrArray) hits = g_ptr_array_new_with_free_func((GDestroyNotify)kmsg_hit_free);
	json_t *verdicts = json_object(), *guests = NULL, *loadj = json_array();
	enum outcome o = OUTCOME_OK;
	bool selftest = false, judged = false;
	unsigned int dwelt;
	int e;

	for (size_t i = 0; i < t->count; i++) {
		struct armed *a = r->armed->pdata[t->ids[i]];

		keys[i] = a->key;
		attrs[i] = a->attr;
		selftest |= a->selftest;
	}

	if (r->replay) {
		const struct journal_batch *b = journal_replay_batch(r->replay, t->seq);

		/* Re-arm batches the harness itself gave up on (INFRA) or that
		 * were interrupted while this very boot of the host lived on. */
		if (b && ((b->judged && !strcmp(b->outcome, outcome_name(OUTCOME_INFRA))) ||
			  (!b->judged && b->interrupted) ||
			  (!b->judged && !b->down_outcome && b->boot_id[0] &&
			   !strcmp(b->boot_id, journal_boot_id())))) {
			pc_info("batch %u: %s, arming it again", t->seq,
				b->judged ? "given up as INFRA" :
				b->interrupted ? "stopped unjudged (a signal, or a lab host gone silent under TCG)" :
				"interrupted (same host boot)");
			b = NULL;
		}
		if (b) {
			bool same = b->keys->len == t->count;

			for (size_t i = 0; same && i < t->count; i++)
				same = !strcmp(b->keys->pdata[i], keys[i]);
			if (!same) {
				json_decref(verdicts);
				json_decref(loadj);
				return pc_fail(EINVAL, "%s: batch %u armed other attrs than this run would: "
					       "the scenario or the host changed; start a new run",
					       journal_path(r->j), t->seq);
			}
			if (b->judged) {
				*res = outcome_from_name(b->outcome);
				if (*res == OUTCOME_COUNT)
					*res = OUTCOME_HOST_CRASH;
				if (b->verdicts && json_is_object(b->verdicts))
					load_stats_apply(r, t->ids, t->count,
							 json_object_get(b->verdicts, "load"));
				if (*res != OUTCOME_OK && b->verdicts)
					note_harmful(r, t, b->verdicts);
				json_decref(verdicts);
				json_decref(loadj);
				return 0;
			}
			/* Armed, never judged: the host died under this batch. Its
			 * watcher (a lab's outer harness) may have said how. */
			*res = b->down_outcome && !strcmp(b->down_outcome, "HOST_HANG") ?
			       OUTCOME_HOST_HANG : OUTCOME_HOST_CRASH;
			if (b->down_outcome)
				json_object_set_new(verdicts, "host", json_pack("[{s:s,s:o}]",
					"class", *res == OUTCOME_HOST_HANG ? "host-hang" : "host-crash",
					"message", results_json_string(b->down_evidence)));
			else
				json_object_set_new(verdicts, "host", json_pack("[{s:s,s:s}]",
					"class", "host-crash", "message",
					"the host went down while this batch was armed (found on --resume)"));
			json_object_set_new(verdicts, "load", loadj);
			e = journal_judged(r->j, t->seq, outcome_name(*res), verdicts);
			note_harmful(r, t, verdicts);
			json_decref(verdicts);
			pc_warn("batch %u was armed when the host went down: %s", t->seq, outcome_name(*res));
			return e;
		}
	}

	/* Harmed guests come back when a batch needs them, so that no run
	 * ends waiting for guests that only its fleet_stop() sees. */
	if (r->restart_due) {
		if ((e = r->pool->ops->restart_harmed(r->pool->priv))) {
			g_autofree char *prefix = g_strdup_printf("before batch %u: ", t->seq);

			e = refail(e < 0 ? -e : EIO, prefix);
			goto out;
		}
		r->restart_due = false;
	}
	/* A stop asked for (SIGINT, SIGTERM) before this batch: not armed. */
	if (fleet_signal_pending()) {
		e = pc_fail(EINTR, "interrupted by signal %d before batch %u: stopping; --resume "
			    "goes on from there", fleet_signal_pending(), t->seq);
		goto out;
	}
	if ((e = journal_arm(r->j, t->seq, isolate_kind_name(t->kind), keys)))
		goto out;
	r->live_rounds++;
	pc_info("batch %u (%s): arming %zu attr(s) for %u ms", t->seq, isolate_kind_name(t->kind),
		t->count, r->dwell_ms);
	if (r->km)
		kmsg_mark(r->km);
	if ((e = r->pool->ops->mark(r->pool->priv)))
		goto infra;
	if ((e = load_arm(attrs, t->count, r->sc->ring_pages, &l)))
		goto infra;
	if (selftest && r->selftest_harm == RUNNER_HARM_HOST_CRASH &&
	    (e = selftest_host_crash()))
		goto infra;
	if (selftest && r->selftest_harm != RUNNER_HARM_HOST_CRASH &&
	    (e = r->pool->ops->selftest(r->pool->priv, runner_harm_agent_command(r->selftest_harm))))
		goto infra;
	dwelt = runner_dwell(r, l);
	load_disarm(l);
	for (size_t i = 0; i < t->count; i++) {
		const struct load_count *c = load_count_at(l, i);
		json_t *lo = json_pack("{s:I,s:I,s:I,s:I}", "samples", count_json(c->samples),
				       "lost", count_json(c->lost),
				       "throttle", count_json(c->throttle), "cpus", (json_int_t)c->cpus);

		if (c->open_err) {
			json_object_set_new(lo, "arm_error", json_string(outcome_name(outcome_from_errno(c->open_err))));
			json_object_set_new(lo, "cpu", json_integer(c->open_cpu));
		}
		json_array_append_new(loadj, lo);
	}
	if (r->km)
		kmsg_read_new(r->km, hits, NULL);
	e = r->pool->ops->judge(r->pool->priv, &o, &guests);
	/* Our own shutdown came while the batch was armed: whatever the
	 * judgement says was cut short (a guest's silence is ours). */
	if (fleet_signal_pending()) {
		json_decref(guests);
		goto interrupted;
	}
	if (e)
		goto infra;
	if (o == OUTCOME_OK && hits->len)
		o = OUTCOME_HOST_WARN;
	json_object_set_new(verdicts, "guests", guests ? guests : json_array());
	json_object_set_new(verdicts, "host", hits_to_json(hits));
	json_object_set_new(verdicts, "load", json_incref(loadj));
	if (dwelt < r->dwell_ms)
		json_object_set_new(verdicts, "dwell_ms", json_integer(dwelt));
	load_stats_apply(r, t->ids, t->count, loadj);
	if (o == OUTCOME_INFRA) {
		journal_judged(r->j, t->seq, outcome_name(o), verdicts);
		e = pc_fail(EIO, "batch %u: the guests could not be judged (INFRA): %s", t->seq,
			    infra_why(guests));
		goto out;
	}
	if ((e = journal_judged(r->j, t->seq, outcome_name(o), verdicts)))
		goto out;
	judged = true;
	if (o != OUTCOME_OK) {
		pc_warn("batch %u: %s", t->seq, outcome_name(o));
		note_harmful(r, t, verdicts);
		r->restart_due = true;
	}
	*res = o;
	goto out;
interrupted:
	{
		int signo = fleet_signal_pending();

		e = journal_interrupted(r->j, t->seq, signo);
		if (!e)
			e = pc_fail(EINTR, "batch %u: interrupted by signal %d while armed: not "
				    "judged; --resume arms it again", t->seq, signo);
		goto out;
	}
infra:
	if (!judged && fleet_signal_pending())
		goto interrupted;
	/* Not a kernel verdict: stop the run as INFRA with the cause. */
	{
		g_autofree char *prefix = g_strdup_printf("batch %u: ", t->seq);

		e = refail(e < 0 ? -e : EIO, prefix);
		/* Best effort: a resume must not take this for a host crash (a
		 * batch already judged keeps its verdict; only the restart failed). */
		if (!judged) {
			json_object_set_new(verdicts, "infra", json_string(pc_errmsg()));
			journal_judged(r->j, t->seq, outcome_name(OUTCOME_INFRA), verdicts);
		}
	}
out:
	json_decref(verdicts);
	json_decref(loadj);
	return e;
}

/* Whether the budget is spent: checked before arming a test, never before
 * answering one from the journal of a resumed run (that arms nothing). */
static bool budget_spent(struct run *r, const struct isolate_test *t)
{
	const struct journal_batch *b = r->replay ? journal_replay_batch(r->replay, t->seq) : NULL;

	if (!r->sc->budget_ms)
		return false;
	if (b && ((b->judged && strcmp(b->outcome, outcome_name(OUTCOME_INFRA))) || b->down_outcome))
		return false;
	return g_get_monotonic_time() - r->load_t0_us >= (gint64)r->sc->budget_ms * 1000;
}

/* The budget ran out (isolate_stop ran, cells_apply gave the culprits
 * their cells): every other attr no clean test armed gets no verdict
 * (INFRA, never OK), those of a group the harm is known to be among
 * saying so; run.json's "budget" and the limitations say what is left.
 * Returns the number of such groups. */
static guint budget_apply(struct run *r, const struct isolate *iso, const char *why)
{
	g_autoptr(GPtrArray) groups = isolate_unresolved(iso);
	g_autofree guint *group_of = g_new0(guint, r->armed->len + 1);
	json_t *gj = json_array(), *budget;
	size_t unjudged = 0;

	for (guint g = 0; g < groups->len; g++) {
		const struct isolate_group *grp = groups->pdata[g];
		json_t *keys = json_array();

		for (size_t i = 0; i < grp->count; i++) {
			if (!group_of[grp->ids[i]])
				group_of[grp->ids[i]] = g + 1;
			json_array_append_new(keys, json_string(
				((struct armed *)r->armed->pdata[grp->ids[i]])->key));
		}
		json_array_append_new(gj, json_pack("{s:I,s:o}", "attrs", (json_int_t)grp->count,
						    "keys", keys));
		results_add_limitation(r->set, "harm somewhere among these %zu attrs, not isolated "
				       "(the load budget ran out): run.json budget.unresolved[%u]",
				       grp->count, g);
	}
	for (guint id = 0; id < r->armed->len; id++) {
		struct armed *a = r->armed->pdata[id];

		if (isolate_culprit_of(iso, id) || isolate_cleared(iso, id))
			continue;
		unjudged++;
		for (guint k = 0; k < a->cells->len; k++) {
			struct cell *c = a->cells->pdata[k];
			json_t *ev = json_pack("{s:s,s:s}", "kind", "budget", "why", why);

			c->outcome = OUTCOME_INFRA;
			if (group_of[id]) {
				const struct isolate_group *grp = groups->pdata[group_of[id] - 1];

				json_object_set_new(ev, "harm_among", json_integer((json_int_t)grp->count));
				json_object_set_new(ev, "group", json_integer(group_of[id] - 1));
			}
			json_array_append_new(c->evidence, ev);
		}
	}
	results_add_limitation(r->set, "INFRA: %s: %zu of %u attrs not cleared and not isolated "
			       "have no verdict", why, unjudged, r->armed->len);
	budget = json_pack("{s:I,s:I,s:I,s:o}", "budget_ms", (json_int_t)r->sc->budget_ms,
			   "rounds", (json_int_t)isolate_rounds(iso),
			   "unjudged_attrs", (json_int_t)unjudged, "unresolved", gj);
	json_object_set_new(r->set->extra ? r->set->extra : (r->set->extra = json_object()),
			    "budget", budget);
	return groups->len;
}

static int oracle(void *ctx, const struct isolate_test *t, enum outcome *res)
{
	struct run *r = ctx;
	int e;

	if (budget_spent(r, t)) {
		r->budget_out = true;
		return pc_fail(ETIME, "the load budget (%u ms) ran out after %u rounds",
			       r->sc->budget_ms, t->seq);
	}
	progress(r, "load");
	e = run_batch(r, t, res);
	r->batches_done++;
	if (t->kind != ISOLATE_KIND_SCREEN)
		r->isolating++;
	progress(r, "load");
	return e;
}

/* A dwell with nothing armed: guests that cannot survive it say nothing
 * about the kernel. */
static int baseline(struct run *r, bool *harmed)
{
	json_t *guests = NULL;
	enum outcome o = OUTCOME_OK;
	int e;

	*harmed = false;
	if (r->replay && r->replay->baseline)
		return 0;
	if ((e = r->pool->ops->mark(r->pool->priv)))
		return e;
	g_usleep((gulong)r->dwell_ms * 1000);
	if ((e = r->pool->ops->judge(r->pool->priv, &o, &guests)))
		return e;
	e = journal_baseline(r->j, outcome_name(o), guests);
	json_decref(guests);
	*harmed = o != OUTCOME_OK;
	if (*harmed)
		pc_fail(EIO, "guests were harmed (%s) with nothing armed: cannot test",
			outcome_name(o));
	return e;
}

/* ---- cells ----------------------------------------------------------------- */

static gint harmful_by_size(gconstpointer a, gconstpointer b)
{
	const struct harmful *x = *(struct harmful *const *)a, *y = *(struct harmful *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The proven rule as run.json's "rules" entry: its text and literals, what
 * it harmed, how many attrs it covers, and each sample attr with its own
 * k/n (NULL when no rule was proven). */
static json_t *rule_json(struct run *r, const struct isolate *iso)
{
	const size_t *ids;
	size_t n_ids, covered = 0;
	const struct rule *rl = isolate_rule(iso, &ids, &n_ids);
	json_t *j, *sample;

	if (!rl)
		return NULL;
	j = rule_to_json(rl);
	sample = json_array();
	for (size_t i = 0; i < n_ids; i++) {
		const struct isolate_culprit *cu = isolate_culprit_of(iso, ids[i]);

		json_array_append_new(sample, json_pack("{s:s,s:s,s:i,s:i}",
			"attr", ((struct armed *)r->armed->pdata[ids[i]])->key,
			"outcome", outcome_name(cu ? cu->outcome : OUTCOME_OK),
			"k", cu ? (int)cu->k : 0, "n", cu ? (int)cu->n : 0));
	}
	for (guint id = 0; id < r->armed->len; id++) {
		const struct isolate_culprit *cu = isolate_culprit_of(iso, id);

		covered += cu && (cu->by_rule || cu->rule_sample);
	}
	if (n_ids)
		json_object_set_new(j, "outcome", json_string(outcome_name(
			isolate_culprit_of(iso, ids[0])->outcome)));
	json_object_set_new(j, "attrs", json_integer((json_int_t)covered));
	json_object_set_new(j, "sample", sample);
	json_object_set_new(j, "refuted_before", json_integer(isolate_rules_refuted(iso)));
	return j;
}

static void cells_apply(struct run *r, const struct isolate *iso)
{
	json_t *rule = rule_json(r, iso);

	for (guint id = 0; id < r->armed->len; id++) {
		struct armed *a = r->armed->pdata[id];
		const struct isolate_culprit *cu = isolate_culprit_of(iso, id);

		for (guint k = 0; k < a->cells->len; k++) {
			struct cell *c = a->cells->pdata[k];
			json_t *ev = json_pack("{s:s,s:I,s:I,s:I,s:I}", "kind", "load",
					       "samples", count_json(a->samples),
					       "lost", count_json(a->lost),
					       "throttle", count_json(a->throttle),
					       "batches", (json_int_t)a->batches);

			if (a->arm_err) {
				/* It opened in the open phase and not when armed. */
				json_object_set_new(ev, "arm_error",
						    json_string(outcome_name(outcome_from_errno(a->arm_err))));
				json_object_set_new(ev, "arm_cpu", json_integer(a->arm_cpu));
			}
			if (a->selftest)
				json_object_set_new(ev, "selftest", json_true());
			json_array_append_new(c->evidence, ev);
			if (!cu)
				continue;
			c->outcome = cu->outcome;
			c->k = (int)cu->k;
			c->n = (int)cu->n;
			if (rule && (cu->by_rule || cu->rule_sample)) {
				/* Judged by the rule, not (or not only) by its own arms:
				 * the cell says so, with the rule and the sample. */
				if (!c->extra)
					c->extra = json_object();
				json_object_set_new(c->extra, "judged",
						    json_string(cu->by_rule ? "rule" : "alone"));
				json_object_set(c->extra, "rule", json_object_get(rule, "text"));
				json_array_append_new(c->evidence, json_pack("{s:s,s:O,s:O,s:O}",
					"kind", "rule", "rule", json_object_get(rule, "text"),
					"literals", json_object_get(rule, "literals"),
					"sample", json_object_get(rule, "sample")));
				if (cu->by_rule)
					continue;
			}
			json_t *iso_ev = json_pack("{s:s,s:i,s:i}", "kind", "isolation",
						   "k", (int)cu->k, "n", (int)cu->n);
			json_t *with = json_array();

			for (size_t m = 0; m < cu->count; m++)
				if (cu->ids[m] != id)
					json_array_append_new(with, json_string(
						((struct armed *)r->armed->pdata[cu->ids[m]])->key));
			json_object_set_new(iso_ev, "attrs", json_integer((json_int_t)cu->count));
			if (json_array_size(with))
				json_object_set_new(iso_ev, "only_together_with", with);
			else
				json_decref(with);
			json_array_append_new(c->evidence, iso_ev);
		}
	}
	if (rule) {
		json_t *rules = json_array();

		json_array_append_new(rules, rule);
		json_object_set_new(r->set->extra ? r->set->extra : (r->set->extra = json_object()),
				    "rules", rules);
	}
	/* The verdicts of the smallest harmful batches holding a culprit. */
	for (size_t i = 0; i < isolate_culprit_count(iso); i++) {
		const struct isolate_culprit *cu = isolate_culprit_at(iso, i);
		g_autoptr(GPtrArray) mine = g_ptr_array_new();

		for (guint h = 0; h < r->harmful->len; h++) {
			struct harmful *hb = r->harmful->pdata[h];

			for (size_t k = 0; k < hb->count; k++)
				if (hb->ids[k] == cu->ids[0]) {
					g_ptr_array_add(mine, hb);
					break;
				}
		}
		g_ptr_array_sort(mine, harmful_by_size);
		for (size_t m = 0; m < cu->count; m++) {
			struct armed *a = r->armed->pdata[cu->ids[m]];

			for (guint k = 0; k < a->cells->len; k++) {
				struct cell *c = a->cells->pdata[k];

				/* A few batches: the evidence must stay readable. */
				for (guint h = 0; h < mine->len && h < 3; h++) {
					struct harmful *hb = mine->pdata[h];

					json_array_append_new(c->evidence, json_pack("{s:s,s:I,s:I,s:O}",
						"kind", "verdicts", "batch", (json_int_t)hb->seq,
						"armed", (json_int_t)hb->count, "verdicts", hb->verdicts));
				}
			}
		}
	}
}

/* ---- the run ----------------------------------------------------------------- */

static int make_dirs(const char *dir)
{
	if (g_mkdir_with_parents(dir, 0755) < 0)
		return pc_fail(errno, "%s: %s", dir, strerror(errno));
	/* QEMU runs as another user and writes consoles here. */
	chmod(dir, 0755);
	return 0;
}

static const struct {
	enum report_format format;
	const char *file;
} run_reports[] = {
	{ REPORT_JUNIT, "junit.xml" },
	{ REPORT_HTML, "report.html" },
};

static int write_outputs(struct run *r)
{
	g_autofree char *json_path = g_build_filename(r->run_dir, "run.json", NULL);
	g_autofree char *matrix_path = g_build_filename(r->run_dir, "matrix.txt", NULL);
	g_autoptr(GString) matrix = g_string_new(NULL);
	g_autoptr(GError) err = NULL;
	int e;

	results_format_matrix(r->set, matrix);
	if (!g_file_set_contents(matrix_path, matrix->str, (gssize)matrix->len, &err))
		return pc_fail(EIO, "%s: %s", matrix_path, err->message);
	/* design.md "Report": the CI view and the heatmap beside the data. */
	for (size_t i = 0; i < G_N_ELEMENTS(run_reports); i++) {
		g_autofree char *path = g_build_filename(r->run_dir, run_reports[i].file, NULL);
		const struct result_set *set = r->set;

		if ((e = report_write(run_reports[i].format, &set, 1, NULL, path)))
			return e;
	}
	/* Last: a run.json says the run's outputs are all there (a full disk
	 * that stops the reports after it would leave one that looks done). */
	return results_write_json(r->set, json_path);
}

static char *hash_json(json_t *j)
{
	g_autofree char *text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);

	return g_compute_checksum_for_string(G_CHECKSUM_SHA256, text ? text : "", -1);
}

/* Why a binary's column is load-tested through the harness: the evidence and
 * --help say the same. */
#define PERFBIN_LOAD_NOTE \
	"the load phase arms the attr this binary opened last with success " \
	"(captured from its perf_event_open calls) through the harness, like a " \
	"profile's attr, instead of running `perf record` per spec for the dwell: " \
	"group testing needs the harness to arm and disarm sets of attrs together " \
	"and split them, which one perf process per spec cannot do; an attr equal " \
	"to one a profile opened is armed once and shares its verdict"

static json_t *bins_to_json(const struct run *r)
{
	json_t *a = json_array();

	for (guint i = 0; i < r->bins->len; i++) {
		const struct perfbin *pb = r->bins->pdata[i];

		json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "name", pb->name,
						   "path", pb->path, "version", pb->version));
	}
	return a;
}

/* --perf-binary, or on --resume the binaries the run started with; a binary
 * whose version changed since would arm other attrs: refuse. */
static int open_binaries(struct run *r)
{
	const struct runner_opts *o = r->opts;
	json_t *old = r->replay ? json_object_get(r->replay->start, "perf_binaries") : NULL;
	g_autoptr(GPtrArray) paths = g_ptr_array_new();
	size_t i;
	json_t *b;
	int e;

	r->bins = g_ptr_array_new_with_free_func((GDestroyNotify)perfbin_free);
	for (i = 0; i < o->perf_binary_count; i++)
		g_ptr_array_add(paths, (gpointer)o->perf_binaries[i]);
	if (!paths->len)
		json_array_foreach(old, i, b)
			g_ptr_array_add(paths, (gpointer)json_string_value(json_object_get(b, "path")));
	if (r->replay && paths->len != json_array_size(old))
		return pc_fail(EINVAL, "--resume %s: the run started with %zu --perf-binary, "
			       "not %u: resume with the same ones (or none to reuse them)",
			       o->resume_dir, json_array_size(old), paths->len);
	for (guint k = 0; k < paths->len; k++) {
		const char *path = paths->pdata[k];
		struct perfbin *pb = NULL;

		if (!path)
			return pc_fail(EINVAL, "%s: bad \"perf_binaries\" in the start line",
				       o->resume_dir);
		if ((e = perfbin_open(path, &pb)))
			return pc_errno_bad_path(e) ? refail(EINVAL, "--perf-binary: ") : e;
		g_ptr_array_add(r->bins, pb);
		if (r->replay) {
			json_t *ob = json_array_get(old, k);
			const char *op = json_string_value(json_object_get(ob, "path"));
			const char *ov = json_string_value(json_object_get(ob, "version"));

			if (g_strcmp0(op, path))
				return pc_fail(EINVAL, "--resume %s: --perf-binary %s: the run started "
					       "with %s there", o->resume_dir, path, op ? op : "?");
			if (g_strcmp0(ov, pb->version))
				return pc_fail(EINVAL, "--resume %s: %s is perf %s now; the run started "
					       "with perf %s, whose attrs it armed: start a new run",
					       o->resume_dir, path, pb->version, ov ? ov : "?");
		}
	}
	return 0;
}

/* Each binary's column: the sweep's specs (every non-raw profile's, once)
 * traced under perf stat; runs after the prober, whose cells these are not. */
static int probe_binaries(struct run *r)
{
	g_autoptr(GPtrArray) specs = g_ptr_array_new();
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
	guint nprofile = r->set->cells->len;
	int e;

	if (!r->bins->len)
		return 0;
	for (guint i = 0; i < nprofile; i++) {
		const struct cell *c = r->set->cells->pdata[i];
		const struct profile *p = profile_find(c->profile);

		if (p && !profile_is_raw(p) && g_hash_table_add(seen, c->spec))
			g_ptr_array_add(specs, c->spec);
	}
	for (guint i = 0; i < r->bins->len; i++) {
		struct perfbin *pb = r->bins->pdata[i];
		guint first = r->set->cells->len;

		perfbin_name_unique(pb, r->set);
		pc_info("open phase: tracing %s (%s) on %u spec(s)", pb->name, pb->path, specs->len);
		if ((e = perfbin_probe_cells(pb, r->pmus, (const char *const *)specs->pdata,
					     specs->len, NULL, r->set)) < 0) {
			g_autofree char *prefix = g_strdup_printf("--perf-binary %s: ", pb->path);

			return refail(-e, prefix);
		}
		for (guint k = first; k < r->set->cells->len; k++) {
			struct cell *c = r->set->cells->pdata[k];

			json_array_append_new(c->evidence, json_pack("{s:s,s:s,s:s,s:s,s:s}",
				"kind", "perf-binary", "path", pb->path, "version", pb->version,
				"open", "`PATH stat -e SPEC -a -- true` under the tracer",
				"load", PERFBIN_LOAD_NOTE));
		}
		results_add_limitation(r->set, "%s (%s) ran `perf stat -e SPEC -a -- true` under "
				       "the tracer (counting); the built-in profiles encode `perf "
				       "record -a -g` (sampling): specs whose outcome depends on "
				       "sampling (msr/tsc/, ...) differ for that reason; %s",
				       pb->name, pb->path, PERFBIN_LOAD_NOTE);
	}
	json_object_set_new(r->set->extra ? r->set->extra : (r->set->extra = json_object()),
			    "perf_binaries", bins_to_json(r));
	return 0;
}

static int setup(struct run *r, struct runner_report *rep)
{
	const struct runner_opts *o = r->opts;
	g_autofree char *kept = NULL;
	const char *scenario_path = o->scenario;
	json_t *fp = NULL;
	const char *kernel;
	int e;

	r->selftest_spec = o->selftest_spec;
	r->selftest_harm = o->selftest_harm;
	if (o->only_result && o->resume_dir)
		return pc_fail(EINVAL, "--only with --resume: a resumed run re-tests the cells "
			       "it started with");
	if (o->only_result && o->perf_binary_count)
		return pc_fail(EINVAL, "--only with --perf-binary: --only re-tests the profiles' "
			       "cells of a result file, a traced binary's cells cannot be selected");
	if (o->only_result &&
	    (e = only_select(o->only_result, o->only_cells, o->only_cell_count, &r->only)))
		return e;
	if (o->resume_dir) {
		json_t *st, *only;

		if ((e = journal_read(o->resume_dir, &r->replay)))
			return pc_errno_bad_path(e) ? refail(EINVAL, "--resume: ") : e;
		/* Without SCENARIO or --selftest-harm, the run's own. */
		kept = g_build_filename(o->resume_dir, SCENARIO_RUN_FILE, NULL);
		if (!scenario_path)
			scenario_path = kept;
		/* A run started with --only re-arms only its own cells. */
		only = json_object_get(r->replay->start, "only");
		if (only && (e = only_from_json(only, o->resume_dir, &r->only)))
			return e;
		st = json_object_get(r->replay->start, "selftest");
		if (!r->selftest_spec && json_is_object(st)) {
			r->selftest_spec = json_string_value(json_object_get(st, "spec"));
			r->selftest_harm = runner_harm_from_name(
				json_string_value(json_object_get(st, "harm")));
			if (!r->selftest_spec || r->selftest_harm >= RUNNER_HARM_COUNT)
				return pc_fail(EINVAL, "%s: bad \"selftest\" in the start line",
					       o->resume_dir);
		}
	}
	if (!scenario_path)
		return pc_fail(EINVAL, "no scenario given");
	if ((e = open_binaries(r)))
		return e;
	if ((e = scenario_load(scenario_path, &r->sc)))
		return pc_errno_bad_path(e) ? refail(EINVAL, "") : e;
	r->dwell_ms = o->dwell_ms ? o->dwell_ms : r->sc->dwell_ms;
	if ((e = pmu_set_load(NULL, &r->pmus)))
		return e;
	if ((e = fingerprint_collect(r->pmus, &fp)))
		return e;
	r->fp_hash = hash_json(fp);
	r->set = result_set_new(RESULTS_KIND_RUN);
	results_set_host(r->set, fp);
	if (o->tcg) {
		g_free(r->set->accel);
		r->set->accel = g_strdup("tcg");
		results_note_standard_limitations(r->set,
			json_is_true(json_object_get(r->set->host, "hw_pmu")));
	}
	if (o->kernel_label) {
		g_free(r->set->kernel);
		r->set->kernel = g_strdup(o->kernel_label);
	}
	if (o->lab_context) {
		const json_t *ctx = o->lab_context;
		json_t *lim = json_object_get(ctx, "limitations"), *v;
		json_int_t boot = json_integer_value(json_object_get(ctx, "guest_boot_timeout_ms"));
		json_int_t hb = json_integer_value(json_object_get(ctx, "guest_heartbeat_timeout_ms"));
		size_t i;

		json_array_foreach(lim, i, v)
			if (json_is_string(v))
				results_add_limitation(r->set, "%s", json_string_value(v));
		json_object_set_new(r->set->extra ? r->set->extra : (r->set->extra = json_object()),
				    "lab", json_deep_copy(ctx));
		if (boot > 0 && boot <= 3600000 && (json_int_t)r->sc->boot_timeout_ms < boot)
			r->sc->boot_timeout_ms = (unsigned int)boot;
		if (hb > 0 && hb <= 3600000 && (json_int_t)r->sc->heartbeat_timeout_ms < hb)
			r->sc->heartbeat_timeout_ms = (unsigned int)hb;
	}
	if (r->selftest_harm == RUNNER_HARM_HOST_CRASH && r->selftest_spec && !runner_in_lab_host())
		return pc_fail(EINVAL, "--selftest-harm %s=host-crash panics the kernel it runs on: "
			       "only inside a lab host (pmucanary lab --selftest-harm)", r->selftest_spec);
	r->set->scenario = scenario_to_json(r->sc);
	if (r->selftest_spec) {
		r->set->selftest = true;
		if (r->selftest_harm == RUNNER_HARM_HOST_CRASH)
			results_add_limitation(r->set, "SELF-TEST: this lab host panicked itself (sysrq c) "
					       "whenever an attr of %s was armed; the HOST_CRASH below "
					       "is injected, not the kernel's", r->selftest_spec);
		else
			results_add_limitation(r->set, "SELF-TEST: the guests were told to harm themselves "
					       "(%s) whenever an attr of %s was armed; the harms below are "
					       "injected, not the kernel's", runner_harm_name(r->selftest_harm),
					       r->selftest_spec);
	}

	/* Before the run directory exists: bad input leaves nothing behind. */
	kernel = r->set->kernel ? r->set->kernel : "";
	if ((e = build_cells(r, kernel)) || (r->only && (e = only_apply(r->only, r->set))) ||
	    (e = selftest_in_sweep(r)))
		return e;
	if ((e = enumerate_check_testable(r->set, r->bins->len, scenario_path)))
		return e;

	if (o->resume_dir) {
		g_autofree char *base = g_path_get_basename(o->resume_dir);

		if ((e = journal_reopen(o->resume_dir, &r->j)))
			return e;
		r->run_dir = g_strdup(o->resume_dir);
		g_free(r->set->run_id);
		r->set->run_id = g_strdup(base);
		if (r->replay->start) {
			const char *old = json_string_value(json_object_get(r->replay->start, "fingerprint"));
			json_t *sc = json_object_get(r->replay->start, "scenario");

			if (old && strcmp(old, r->fp_hash))
				results_add_limitation(r->set, "resumed on a host whose fingerprint "
						       "differs from the one the run started on");
			/* The report describes the run as it was started. */
			if (json_is_object(sc)) {
				json_decref(r->set->scenario);
				r->set->scenario = json_incref(sc);
			}
		}
		if (r->replay->done)
			pc_warn("%s: this run was finished; its report is rewritten", r->run_dir);
	} else {
		g_autofree char *text = NULL;
		g_autoptr(GError) err = NULL;
		json_t *line;

		r->run_dir = g_build_filename(o->results_dir ? o->results_dir : "results",
					      r->set->run_id, NULL);
		/* --results naming a file, a dangling symlink...: the user's path */
		if ((e = make_dirs(r->run_dir)))
			return pc_errno_bad_path(e) ? refail(EINVAL, "--results: ") : e;
		if ((e = journal_create(r->run_dir, &r->j)))
			return e;
		kept = g_build_filename(r->run_dir, SCENARIO_RUN_FILE, NULL);
		if ((e = infile_read(scenario_path, INFILE_CONFIG, &text, NULL)))
			return e;
		if (!g_file_set_contents(kept, text, -1, &err))
			return pc_fail(EIO, "%s", err->message);
		/* journal_start's line plus what --resume must arm the same way. */
		line = json_pack("{s:O,s:s}", "scenario", r->set->scenario,
				 "fingerprint", r->fp_hash);
		if (r->selftest_spec)
			json_object_set_new(line, "selftest", json_pack("{s:s,s:s}",
				"spec", r->selftest_spec, "harm", runner_harm_name(r->selftest_harm)));
		if (r->bins->len)
			json_object_set_new(line, "perf_binaries", bins_to_json(r));
		if (r->only)
			json_object_set_new(line, "only", only_to_json(r->only));
		e = journal_append(r->j, "start", line);
		json_decref(line);
		if (e)
			return e;
	}
	rep->run_dir = g_strdup(r->run_dir);
	rep->run_id = g_strdup(r->set->run_id);
	rep->selftest = r->set->selftest;
	rep->only_cells = r->only ? r->only->cells->len : 0;
	return 0;
}

static int open_phase(struct run *r)
{
	g_autoptr(prober) pr = NULL;
	struct prober_opts po = { 0 };
	json_t *counts = json_object();
	int e;

	po.mode = !strcmp(r->sc->mode, "stat") ? PROFILE_MODE_STAT : PROFILE_MODE_RECORD;
	po.pmus = r->pmus;
	if ((e = prober_new(&po, &pr)) || (e = prober_run(pr, r->set)) ||
	    (e = probe_binaries(r))) {
		json_decref(counts);
		return e;
	}
	for (guint i = 0; i < r->set->cells->len; i++) {
		const struct cell *c = r->set->cells->pdata[i];
		const char *name = outcome_name(c->outcome);

		json_object_set_new(counts, name,
				    json_integer(json_integer_value(json_object_get(counts, name)) + 1));
	}
	collect_armed(r);
	pc_info("open phase: %u cells, %u distinct attrs to arm", r->set->cells->len, r->armed->len);
	if (!r->replay || !r->replay->open_done)
		e = journal_open_done(r->j, counts);
	json_decref(counts);
	return e;
}

/* What the scenario's [fleet] asks of the pool. */
static struct pool_spec pool_spec_of(const struct scenario *sc)
{
	return (struct pool_spec){
		.guests = sc->guests, .vcpus = sc->vcpus, .memory_mib = sc->memory_mib,
		.kernel = sc->kernel, .initrd = sc->initrd, .disk = sc->disk,
		.disk_guests = sc->disk_guests, .disk_boot = sc->disk_boot,
		.heartbeat_ms = sc->heartbeat_ms, .heartbeat_timeout_ms = sc->heartbeat_timeout_ms,
		.boot_timeout_ms = sc->boot_timeout_ms, .restore = sc->restore,
	};
}

int runner_run(const struct runner_opts *opts, struct runner_report *rep)
{
	struct run r = { .opts = opts };
	g_autoptr(isolate) iso = NULL;
	/* After iso: freed first, and iso only reads it in isolate_run. */
	g_autofree struct perf_event_attr *rule_attrs = NULL;
	json_t *info = NULL;
	bool harmed = false;
	int e;

	memset(rep, 0, sizeof(*rep));
	r.t0_us = g_get_monotonic_time();
	r.harmful = g_ptr_array_new_with_free_func(harmful_free);
	if (opts->selftest_spec && opts->selftest_harm >= RUNNER_HARM_COUNT) {
		e = pc_fail(EINVAL, "--selftest-harm: expected crash, hang, corrupt, reboot, oops or host-crash");
		goto out;
	}
	if ((e = setup(&r, rep)))
		goto out;
	/* the backend before anything is measured: a bad name is bad input */
	if ((e = pool_open(opts->pool ? opts->pool : r.sc->pool, &opts->pool_params, &r.pool)))
		goto out;
	json_object_set_new(r.set->extra ? r.set->extra : (r.set->extra = json_object()),
			    "pool", json_string(r.pool->ops->name));
	progress(&r, "open");
	if ((e = open_phase(&r)) || (e = mark_selftest(&r)))
		goto out;
	rep->distinct_armed = r.armed->len;

	if (!opts->kmsg_path || opts->kmsg_path[0]) {
		if (kmsg_open(opts->kmsg_path, &r.km)) {
			results_add_limitation(r.set, "host kernel log not watched: %s", pc_errmsg());
			r.km = NULL;
		}
	}

	/* Guests: failing to boot them is INFRA, never a kernel verdict. */
	if (r.armed->len) {
		progress(&r, "fleet");
		struct pool_spec spec = pool_spec_of(r.sc);
		enum pool_failure why = POOL_FAILURE_INFRA;

		if ((e = r.pool->ops->start(r.pool->priv, &spec, r.run_dir, &info, &why))) {
			/* the pool's own fault or the guest image's: never the kernel's */
			rep->failure = why == POOL_FAILURE_BOOT ? why : POOL_FAILURE_INFRA;
			rep->why = g_strdup_printf(rep->failure == POOL_FAILURE_BOOT ?
				"the guests did not boot: %s" : "the guests could not be started: %s",
				pc_errmsg());
			json_object_set_new(r.set->extra, "infra", json_pack("{s:s,s:s}",
				"stage", "guests", "failure", pool_failure_name(rep->failure)));
			results_add_limitation(r.set, "INFRA: %s", rep->why);
			rep->verdict = RUNNER_VERDICT_INFRA;
			goto report;
		}
		r.guests_up = true;
		if (!g_strcmp0(json_string_value(json_object_get(info, "accel")), "tcg") &&
		    g_strcmp0(r.set->accel, "tcg")) {
			g_free(r.set->accel);
			r.set->accel = g_strdup("tcg");
			results_note_standard_limitations(r.set,
				json_is_true(json_object_get(r.set->host, "hw_pmu")));
		}
		if (json_object_get(info, "guest_kernel"))
			json_object_set(r.set->extra ? r.set->extra : (r.set->extra = json_object()),
					"guest_kernel", json_object_get(info, "guest_kernel"));
		if (!r.replay || !r.replay->fleet_up)
			journal_fleet_up(r.j, info);
		json_decref(info);
		progress(&r, "baseline");
		if ((e = baseline(&r, &harmed)) || harmed) {
			rep->why = g_strdup(pc_errmsg());
			results_add_limitation(r.set, "INFRA: %s", rep->why);
			rep->verdict = RUNNER_VERDICT_INFRA;
			goto report;
		}
		iso = isolate_new(r.armed->len, r.sc->batch_size, r.sc->confirm);
		isolate_cover_pairs(iso, r.sc->pairs_across_batches);
		if (r.sc->isolate == SCENARIO_ISOLATE_RULE) {
			rule_attrs = g_new0(struct perf_event_attr, r.armed->len);
			for (guint i = 0; i < r.armed->len; i++)
				rule_attrs[i] = ((struct armed *)r.armed->pdata[i])->attr;
			isolate_use_rule(iso, rule_attrs);
		}
		r.screening = (r.armed->len + r.sc->batch_size - 1) / r.sc->batch_size;
		r.load_t0_us = g_get_monotonic_time();
		e = isolate_run(iso, oracle, &r);
		rep->rounds = isolate_rounds(iso);
		if (e == -EINVAL)
			goto out;
		if (e == -ETIME && r.budget_out) {
			rep->why = g_strdup(pc_errmsg());
			isolate_stop(iso);
			cells_apply(&r, iso);
			rep->culprits = (unsigned int)isolate_culprit_count(iso);
			rep->verdict = budget_apply(&r, iso, rep->why) || rep->culprits ?
				RUNNER_VERDICT_HARM : RUNNER_VERDICT_INFRA;
			goto report;
		}
		if (e) {
			rep->why = g_strdup(pc_errmsg());
			results_add_limitation(r.set, "INFRA: %s", rep->why);
			rep->verdict = RUNNER_VERDICT_INFRA;
			goto report;
		}
		cells_apply(&r, iso);
		rep->culprits = (unsigned int)isolate_culprit_count(iso);
	} else {
		results_add_limitation(r.set, "no attr opened: nothing was armed against guests");
	}
	rep->verdict = rep->culprits ? RUNNER_VERDICT_HARM : RUNNER_VERDICT_CLEAN;

report:
	progress(&r, "report");
	if (rep->verdict == RUNNER_VERDICT_INFRA && r.armed && !r.budget_out) {
		/* Opened fine but never judged under load: not an OK verdict. */
		for (guint i = 0; i < r.armed->len; i++) {
			struct armed *a = r.armed->pdata[i];

			for (guint k = 0; k < a->cells->len; k++) {
				struct cell *c = a->cells->pdata[k];

				c->outcome = OUTCOME_INFRA;
				json_array_append_new(c->evidence, json_pack("{s:s,s:s}", "kind", "infra",
					"why", rep->why ? rep->why : "the load phase did not finish"));
			}
		}
	}
	{
		json_t *sum = json_pack("{s:s,s:I,s:I,s:I}", "verdict", runner_verdict_name(rep->verdict),
					"distinct_armed", (json_int_t)rep->distinct_armed,
					"rounds", (json_int_t)rep->rounds,
					"culprits", (json_int_t)rep->culprits);
		json_object_set_new(sum, "selftest", json_boolean(rep->selftest));
		json_object_set_new(r.set->extra ? r.set->extra : (r.set->extra = json_object()),
				    "verdict", json_string(runner_verdict_name(rep->verdict)));
		if (r.guests_up && r.pool->ops->summary) {
			json_t *sum_guests = r.pool->ops->summary(r.pool->priv);

			if (sum_guests)
				json_object_set_new(r.set->extra, "guests", sum_guests);
		}
		e = write_outputs(&r);
		if (e && rep->why) {
			/* A full results disk stops the run and then its report:
			 * say both. */
			g_autofree char *prefix = g_strdup_printf("could not test (%s), and then: ",
								  rep->why);

			e = refail(-e, prefix);
		}
		if (!e)
			e = journal_done(r.j, sum);
		json_decref(sum);
	}
out:
	run_clear(&r);
	return e;
}
