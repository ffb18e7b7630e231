/* The load phase of a run (runner.h, runner_priv.h): each batch isolate.h
 * asks for is journalled, armed, dwelt on and judged by the guest pool and
 * the host's kmsg (runner_oracle); the baseline before it; the budget; and
 * at the end the verdicts, culprits and proven rule put into the cells. */
#include "runner.h"
#include "runner_priv.h"

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

			e = runner_refail(e < 0 ? -e : EIO, prefix);
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
	    (e = runner_selftest_host_crash()))
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

		e = runner_refail(e < 0 ? -e : EIO, prefix);
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
guint runner_budget_apply(struct run *r, const struct isolate *iso, const char *why)
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

int runner_oracle(void *ctx, const struct isolate_test *t, enum outcome *res)
{
	struct run *r = ctx;
	int e;

	if (budget_spent(r, t)) {
		r->budget_out = true;
		return pc_fail(ETIME, "the load budget (%u ms) ran out after %u rounds",
			       r->sc->budget_ms, t->seq);
	}
	runner_progress(r, "load");
	e = run_batch(r, t, res);
	r->batches_done++;
	if (t->kind != ISOLATE_KIND_SCREEN)
		r->isolating++;
	runner_progress(r, "load");
	return e;
}

/* A dwell with nothing armed: guests that cannot survive it say nothing
 * about the kernel. */
int runner_baseline(struct run *r, bool *harmed)
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

void runner_cells_apply(struct run *r, const struct isolate *iso)
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
