/* A rule over attr fields that explains the harm seen in batch verdicts.
 *
 * Pure logic. A real PMU bug harms a class of attrs ("precise events
 * without exclude_guest"), so instead of isolating each culprit the load
 * phase can learn the class from batch verdicts and then prove it
 * (isolate.h). The attrs of a load phase are ids 0..N-1; a verdict is a set
 * of ids armed together and whether it harmed. A rule is a conjunction of
 * at most RULE_LITS_MAX literals; it fits the verdicts when every harmful
 * set holds an attr it matches and no clean set does.
 *
 * Literals, in their canonical order (the order of the tie-break):
 *   event      type=T config=C (==, !=), type=T (==)
 *   precise_ip >0, ==v, !=v
 *   each bit-field member other than precise_ip (exclude_*, freq, ...) ==0/==1
 *   sample_type bit set / clear, branch_sample_type !=0 / ==0
 * Only literals that some attr meets and some does not are candidates, and
 * of literals that match the same attrs only the first is kept.
 *
 * rule_learn() takes the rule with the fewest literals; among those, the
 * one that matches the fewest attrs (the most specific: a too-specific rule
 * is refuted by the batches it predicts clean, a too-general one only by
 * luck of the sample); then the first in canonical order. */
#ifndef PMUCANARY_RULE_H
#define PMUCANARY_RULE_H

#include "attr.h"

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RULE_LITS_MAX 2

enum rule_op {
	RULE_OP_EQ,      /* field == a (event: type == a && config == b) */
	RULE_OP_NE,      /* field != a */
	RULE_OP_GT0,     /* field > 0 (precise_ip), != 0 (branch_sample_type) */
	RULE_OP_SET,     /* sample_type & a */
	RULE_OP_CLEAR,   /* !(sample_type & a) */
	RULE_OP_COUNT
};

const char *rule_op_name(enum rule_op op);

enum rule_subject {
	RULE_SUBJECT_EVENT,   /* type and config */
	RULE_SUBJECT_TYPE,
	RULE_SUBJECT_FIELD,   /* one attr_field */
	RULE_SUBJECT_COUNT
};

struct rule_lit {
	enum rule_subject subject;
	enum attr_field field;  /* RULE_SUBJECT_FIELD */
	enum rule_op op;
	uint64_t a, b;
};

struct rule {
	size_t count;
	struct rule_lit lits[RULE_LITS_MAX];
};

bool rule_lit_matches(const struct rule_lit *l, const struct perf_event_attr *attr);
bool rule_matches(const struct rule *r, const struct perf_event_attr *attr);
/* "type=software config=cpu-clock precise_ip>0 exclude_guest=0"; caller
 * g_free()s. */
char *rule_to_string(const struct rule *r);
/* {"text": rule_to_string, "literals": [{"field", "op", "value"|"type"+
 * "config"|"bit"}]}, literals in the rule's order (new reference). */
json_t *rule_to_json(const struct rule *r);

struct rule_learner;

/* attrs (n of them) are borrowed and must outlive the learner. */
struct rule_learner *rule_learner_new(const struct perf_event_attr *attrs, size_t n);
void rule_learner_free(struct rule_learner *l);
typedef struct rule_learner rule_learner;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(rule_learner, rule_learner_free)

/* Records one verdict (ids < n; duplicates are harmless). */
void rule_learner_add(struct rule_learner *l, const size_t *ids, size_t count, bool harmful);
size_t rule_learner_verdicts(const struct rule_learner *l);
/* The simplest rule that fits every verdict so far (see above): 0, or
 * -ENOENT with a message when no rule of RULE_LITS_MAX literals fits (or
 * no verdict harmed). */
int rule_learn(struct rule_learner *l, struct rule *out);

#endif
