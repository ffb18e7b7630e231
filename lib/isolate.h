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
 * The sequence of tests is a function of the results alone, so a run is
 * resumed by calling isolate_run again with an oracle that answers the
 * already judged tests (by seq) from the journal without arming anything. */
#ifndef PMUCANARY_ISOLATE_H
#define PMUCANARY_ISOLATE_H

#include "outcome.h"

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
	unsigned int k, n;   /* harmful confirm runs out of n */
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

/* Runs every test through fn. Starts over on each call (see resume above). */
int isolate_run(struct isolate *iso, isolate_test_fn fn, void *ctx);

/* Tests asked of the oracle by the last isolate_run (= load rounds). */
unsigned int isolate_rounds(const struct isolate *iso);
size_t isolate_culprit_count(const struct isolate *iso);
const struct isolate_culprit *isolate_culprit_at(const struct isolate *iso, size_t i);
/* The culprit that contains id, or NULL when id was judged harmless. */
const struct isolate_culprit *isolate_culprit_of(const struct isolate *iso, size_t id);

#endif
