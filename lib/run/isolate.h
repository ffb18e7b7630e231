/* Culprit isolation by adaptive group testing (design.md step 5).
 *
 * Pure logic. The N distinct attrs of a load phase are ids 0..N-1. The
 * caller's oracle arms a set of ids, dwells, judges the guests and host, and
 * restarts what was harmed; isolate decides which sets to test:
 *
 *   screen   consecutive batches of batch_size ids;
 *   split    binary search for one culprit in a harmful set: the first
 *            half is armed; a clean first half lets the second be
 *            inferred harmful, a harmful one is searched next;
 *   recheck  what the search did not clear (halves never armed), armed
 *            once: clean ends the batch, harm starts the next search;
 *   combine  harm that no half reproduces: ddmin finds the smallest
 *            combination that still harms (e.g. a pair);
 *   across   (isolate_cover_pairs) every two half-batches of different
 *            screening batches armed together, so that a pair that harms
 *            only together is found when screening put it apart;
 *   confirm  each culprit alone (or its combination), `confirm` times: k/n.
 *
 * With isolate_use_rule (`[load] isolate = rule`), a harm is explained by a
 * rule over attr fields (rule.h) before any culprit is searched: screening
 * runs over every batch first, then, up to ISOLATE_RULE_TRIES times, a rule
 * is learned from every verdict so far and tested like a hypothesis:
 *
 *   sample   every attr the rule matches when they are ISOLATE_RULE_SAMPLE
 *            or fewer, else up to that many chosen to cover distinct field
 *            values, each armed alone: each must harm;
 *   clear    the attrs it does not match and no clean test has armed yet,
 *            in batches: each batch must stay clean;
 *
 * a contradiction is one more verdict for the next rule. A proven rule's
 * sample is confirmed like a culprit (k/n); every other attr it matches is
 * a culprit `by_rule`, never armed alone. When no rule holds, what the tests
 * did not clear is searched as without a rule (split, recheck...).
 *
 * The sequence of tests is a function of the results alone, so a run is
 * resumed by calling isolate_run again with an oracle that answers the
 * already judged tests (by seq) from the journal without arming anything. */
#ifndef PMUCANARY_ISOLATE_H
#define PMUCANARY_ISOLATE_H

#include "outcome.h"
#include "rule.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

enum isolate_kind {
	ISOLATE_KIND_SCREEN,
	ISOLATE_KIND_SPLIT,
	ISOLATE_KIND_RECHECK,
	ISOLATE_KIND_COMBINE,
	ISOLATE_KIND_CONFIRM,
	ISOLATE_KIND_ACROSS,
	ISOLATE_KIND_SAMPLE,
	ISOLATE_KIND_CLEAR,
	ISOLATE_KIND_COUNT
};

const char *isolate_kind_name(enum isolate_kind k);

struct isolate_test {
	unsigned int seq;    /* 0, 1, 2... in the order asked: the journal batch id */
	enum isolate_kind kind;
	const size_t *ids;   /* ascending */
	size_t count;
};

/* Arms t->ids, judges, sets *result to OUTCOME_OK or a harm outcome.
 * Returns 0, or a negative errno to stop (INFRA); isolate_run returns it. */
typedef int (*isolate_test_fn)(void *ctx, const struct isolate_test *t,
			       enum outcome *result);

struct isolate_culprit {
	size_t *ids;         /* one attr, or the smallest harmful combination */
	size_t count;
	enum outcome outcome;/* first harm seen confirming it (or finding it) */
	unsigned int k, n;   /* harmful confirm runs out of n (0/0: by_rule) */
	bool by_rule;        /* matched by the proven rule, never armed alone */
	bool rule_sample;    /* armed alone to prove the rule (k/n its own) */
};

struct isolate;

struct isolate *isolate_new(size_t n_ids, size_t batch_size, unsigned int confirm);
void isolate_free(struct isolate *iso);
typedef struct isolate isolate;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(isolate, isolate_free)

/* After screening, also arm every two half-batches that belong to
 * different screening batches together (batch_size ids per test, one more
 * when it is odd): 2k(k-1) more rounds for k batches, since a pair split
 * across batches is otherwise never armed together. Off by default. */
void isolate_cover_pairs(struct isolate *iso, bool on);

/* Learn and prove a rule before searching culprits (see above); attrs holds
 * the n_ids attrs by id, borrowed until the isolate is freed. NULL: search
 * each culprit (the default). */
#define ISOLATE_RULE_TRIES 8
#define ISOLATE_RULE_SAMPLE 8
void isolate_use_rule(struct isolate *iso, const struct perf_event_attr *attrs);

/* Runs every test through fn. Starts over on each call (see resume above). */
int isolate_run(struct isolate *iso, isolate_test_fn fn, void *ctx);

/* Tests asked of the oracle by the last isolate_run (= load rounds). */
unsigned int isolate_rounds(const struct isolate *iso);
size_t isolate_culprit_count(const struct isolate *iso);
const struct isolate_culprit *isolate_culprit_at(const struct isolate *iso, size_t i);
/* The culprit that contains id, or NULL when id was judged harmless. */
const struct isolate_culprit *isolate_culprit_of(const struct isolate *iso, size_t id);
/* The rule the last isolate_run proved, or NULL; its sample (ids armed
 * alone, ascending) through *ids. */
const struct rule *isolate_rule(const struct isolate *iso, const size_t **ids, size_t *count);
/* Rules learned and then refuted by a test in the last isolate_run. */
unsigned int isolate_rules_refuted(const struct isolate *iso);

/* A run cut short (the oracle stopped it, `[load] budget`): what the tests
 * so far prove. isolate_stop makes every id that harmed alone a culprit
 * and gives each culprit not confirmed yet the k/n of its finding arm
 * (1/1). Then: an id some clean test armed is cleared; a culprit is harm;
 * every other id has no verdict, and isolate_unresolved lists the groups
 * the harm is known to be among: each harmful test that holds no culprit,
 * less its cleared ids, only the smallest (none holds another). Owned by
 * the caller: struct isolate_group *, free with g_free. */
void isolate_stop(struct isolate *iso);
bool isolate_cleared(const struct isolate *iso, size_t id);
struct isolate_group {
	size_t count;
	size_t ids[];   /* ascending */
};
GPtrArray *isolate_unresolved(const struct isolate *iso);

#endif
