/* The results model: one result file per probe or run, schema "pmucanary/2".
 *
 * {"schema": "pmucanary/2", "kind": "probe"|"run", "run_id", "created"
 *  (ISO-8601 UTC), "tool_version", "host": {fingerprint}, "kernel": release,
 *  "accel": "kvm"|"tcg"|"none", "limitations": [str], "selftest": bool,
 *  "scenario": object|null, "attrs": [attr], "cells": [cell]}
 *
 * attr: {non-zero perf_event_attr members, kernel names}; each distinct attr
 *  once, in order of first use. Cells and tries refer to it by index
 *  (jq: `.attrs as $a | .cells[] | .attr = $a[.attr]`).
 *
 * cell: {"kernel" (only when not the file's "kernel"), "profile", "spec",
 *  "attr": index of the FINAL attr, the one the outcome belongs to (after
 *  the profile's fallbacks; absent when the profile rejected the spec),
 *  "error" (perf's message; exactly when the outcome is REJECTED),
 *  "outcome", "tries": [{"attr": index, "outcome", "why"?}] every attempt
 *  in order, "per_cpu": {"<cpu>": outcome} (only when CPUs disagree),
 *  "k", "n" (both absent when 0: only harms repeat tries), "evidence":
 *  [object] (absent when empty)}
 *
 * Every string is valid UTF-8: bytes that are not are stored as the text
 * \xNN (results_json_string).
 *
 * pmucanary/1 (still read) had no "attrs": "attr" was an inline object and
 * the FIRST try's, every cell had "kernel", "k", "n" and "evidence", and a rejected
 * spec had outcome EINVAL with "error".
 *
 * Top-level and cell keys this module does not know are kept in `extra` and
 * written back unchanged, so a run can add its own ("verdict", ...). */
#ifndef PMUCANARY_RESULTS_H
#define PMUCANARY_RESULTS_H

#include "outcome.h"

#include <glib.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <stdbool.h>

#define RESULTS_SCHEMA "pmucanary/2"
#define RESULTS_SCHEMA_V1 "pmucanary/1"  /* still read */
#ifndef PMUCANARY_VERSION
#define PMUCANARY_VERSION "0.1.0"
#endif

/* The standard limitation lines (design.md: loud note under TCG). */
#define RESULTS_LIMIT_TCG                                                    \
	"accel is tcg: TCG cannot show hardware PMU/virtualization "          \
	"interactions (no VMX/SVM, no PMU in guests); harms seen under KVM "  \
	"cannot appear here"
#define RESULTS_LIMIT_NO_HW_PMU                                              \
	"no hardware PMU on this host: hardware and cache events cannot be " \
	"opened (ENOENT), precise/PEBS and guest-exclusion paths are not "    \
	"exercised"

enum results_kind {
	RESULTS_KIND_PROBE,
	RESULTS_KIND_RUN,
	RESULTS_KIND_COUNT
};

const char *results_kind_name(enum results_kind kind);
/* Returns RESULTS_KIND_COUNT when name is not a kind. */
enum results_kind results_kind_from_name(const char *name);

struct cell_try {
	struct perf_event_attr attr;
	enum outcome outcome;
	char *why;                 /* NULL when absent (the first try) */
};

struct cell_cpu {
	int cpu;
	enum outcome outcome;
};

struct cell {
	char *kernel;
	char *profile;
	char *spec;
	bool has_attr;             /* false: the profile rejected the spec */
	struct perf_event_attr attr;
	char *error;               /* the profile's message when rejected */
	enum outcome outcome;
	GArray *tries;             /* struct cell_try, in order */
	GArray *per_cpu;           /* struct cell_cpu; empty when CPUs agree */
	int k, n;                  /* bad tries of tries (harms); 0/0 otherwise */
	json_t *evidence;          /* JSON array of objects, owned */
	json_t *extra;             /* unknown keys, owned; NULL when none */
};

/* The key that names a cell of a set: its profile and spec, unambiguous
 * (a separator byte inside a name from a file could make two cells one).
 * g_free() it. */
char *results_cell_key(const char *profile, const char *spec);

struct cell *cell_new(const char *kernel, const char *profile, const char *spec);
void cell_free(struct cell *cell);
typedef struct cell results_cell;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(results_cell, cell_free)
void cell_set_attr(struct cell *cell, const struct perf_event_attr *attr);
/* Marks the cell rejected by its profile: outcome REJECTED, no attr, no
 * tries; message is perf's (or the profile's) own. */
void cell_set_error(struct cell *cell, const char *message);
/* The attr the profile built before any fallback: the first try's, or the
 * cell's attr while it has no tries; NULL when rejected. */
const struct perf_event_attr *cell_first_attr(const struct cell *cell);
void cell_add_try(struct cell *cell, const struct perf_event_attr *attr,
		  enum outcome outcome, const char *why);
void cell_add_cpu(struct cell *cell, int cpu, enum outcome outcome);
/* The text of the rule that judged the cell (its extra keys "judged":
 * "rule" and "rule", written by the runner under isolate = rule: a harm
 * inferred from a proven rule, not from arming the cell's attr alone), or
 * NULL. */
const char *results_cell_rule(const struct cell *cell);
/* Cells a proven rule covers say so in their extra keys: "rule" (its
 * text) and "judged": "rule" (by the rule alone) or "alone" (armed alone,
 * a sample that proved it). */
struct results_rule_cover {
	unsigned int by_rule;  /* judged by the rule, not armed alone */
	unsigned int alone;    /* armed alone as its sample */
};
/* The EVENT part of the cell's spec: "cycles" of "cycles:ppH", "msr/tsc/"
 * of "msr/tsc/:u", "cycles" of "cycles[exclude_guest]"; caller g_free()s. */
char *results_spec_event(const char *spec);

struct result_set {
	enum results_kind kind;
	char *run_id;
	char *created;             /* ISO-8601 UTC */
	char *tool_version;
	json_t *host;              /* fingerprint object, owned; NULL -> {} */
	char *kernel;              /* release */
	char *accel;               /* "kvm" | "tcg" | "none" */
	GPtrArray *limitations;    /* char * */
	bool selftest;
	json_t *scenario;          /* owned; NULL -> null */
	GPtrArray *cells;          /* struct cell * */
	json_t *extra;             /* unknown top-level keys, owned; NULL when none */
};

/* The run's proven rules: its top-level "rules" array (each {"text",
 * "literals", "outcome", "attrs", "sample": [{"attr", "outcome", "k",
 * "n"}], "refuted_before"}), borrowed; NULL when it has none. */
json_t *results_rules(const struct result_set *set);
/* How many of set's cells the rule whose text is rule_text covers. */
struct results_rule_cover results_rule_cover(const struct result_set *set,
					     const char *rule_text);
/* One rule in one line, unescaped (every caller escapes for its output):
 * "TEXT: OUTCOME on N attrs, C cells (B judged by the rule, not armed
 * alone; A armed alone); sample ATTR k/n=K/N; ...; R rules refuted before
 * it"; what the entry lacks is left out. Caller g_free()s. */
char *results_rule_describe(const struct result_set *set, const json_t *rule);

/* A new empty set: run_id "<yyyymmddThhmmssZ>-<6 hex>", created now,
 * tool_version PMUCANARY_VERSION, accel "none". */
struct result_set *result_set_new(enum results_kind kind);
void result_set_free(struct result_set *set);
typedef struct result_set result_set;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(result_set, result_set_free)

/* Takes ownership of cell. */
void results_add_cell(struct result_set *set, struct cell *cell);
/* Adds a limitation line unless the same line is there already. */
void results_add_limitation(struct result_set *set, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Sets host (takes the reference), kernel and accel from a fingerprint
 * (see fingerprint.h) and adds the standard limitation lines: TCG, and no
 * hardware PMU. */
void results_set_host(struct result_set *set, json_t *host);
#define RESULTS_LIMIT_NESTED_KVM                                             \
	"accel is kvm inside a virtual machine (the host's CPU has the "      \
	"hypervisor flag): the guests run under nested KVM on a CPU, PMU and " \
	"VMX/SVM that the outer hypervisor provides, not the hardware's; "   \
	"harms of hardware PMU/virtualization interactions may not appear here"
/* Adds RESULTS_LIMIT_TCG when accel is tcg (and drops
 * RESULTS_LIMIT_NESTED_KVM), RESULTS_LIMIT_NESTED_KVM when accel is kvm
 * on a host whose CPU has the hypervisor flag; RESULTS_LIMIT_NO_HW_PMU
 * when hw_pmu is false. */
void results_note_standard_limitations(struct result_set *set, bool hw_pmu);

json_t *results_to_json(const struct result_set *set);
/* A JSON string of s with each byte that is not valid UTF-8 written as the
 * four characters \xNN (a literal "\x" in valid text is not escaped, so
 * the mapping is for reading, not for reversing); json_null() for NULL. */
json_t *results_json_string(const char *s);
/* Reads pmucanary/2 and pmucanary/1. Strict: a wrong or missing schema, an
 * unknown kind or outcome, a cell without profile/spec/outcome, a bad attr,
 * an attr index that is not an integer in range of "attrs", "error" on a
 * cell that is not REJECTED (or REJECTED without "error") fail with -EINVAL
 * and a message naming `name` (the file) and the place
 * ("p.json: cells[12].tries[1].attr: index 999 out of range (attrs has 40)").
 * A /1 cell with "error" is read as REJECTED, and a /1 cell's attr becomes
 * its last try's (the final attr, as /2 stores it). */
int results_from_json(const json_t *root, const char *name, struct result_set **out);
/* The document results_write_json() writes (the same as results_to_json()
 * gives, built without jansson's tree); NULL when it cannot be built. */
GString *results_to_text(const struct result_set *set);
/* Writes through outfile_write(): a regular file atomically (a temp file in
 * the same directory, fsync, rename, fsync of the directory; a reader never
 * sees a partial file), a device or FIFO in place. */
int results_write_json(const struct result_set *set, const char *path);
/* Truncated or bad JSON fails with -EINVAL and "path:line:column: text". */
int results_read_json(const char *path, struct result_set **out);

#endif
