/* The run journal: results/<run-id>/journal.jsonl, one JSON object a line,
 * each line fsync'd before the call returns. If the host dies while a batch
 * is armed, the journal still says which batch it was (design.md step 6).
 *
 * Lines ("step" names the kind; "ts" is Unix time in ms; "seq" counts lines):
 *   {"step":"start","scenario":{...},"fingerprint":"<hash>"}
 *                        (the runner adds "selftest", "perf_binaries" and
 *                        "only", run --only's selection (only.h), that
 *                        --resume arms the same way)
 *   {"step":"open-done","results":{...}}        errno results of the open phase
 *   {"step":"fleet-up","fleet":{...}}
 *   {"step":"baseline","outcome":"OK"|harm,"verdicts":...}  a dwell, nothing armed
 *   {"step":"arm","batch":N,"kind":"screen","keys":["<attr key>",...]}
 *   {"step":"judged","batch":N,"outcome":"OK"|harm,"verdicts":[...]}
 *   {"step":"interrupted","batch":N,"signal":S}  our own shutdown (SIGINT,
 *                        SIGTERM) came while batch N was armed: never
 *                        judged, --resume arms it again
 *   {"step":"done","summary":{...}}
 *   {"step":"host-down","batch":N,"outcome":"HOST_CRASH"|"HOST_HANG",
 *    "evidence":"..."}   written by whoever watched the host from outside
 *                        (a lab's outer harness, lib/lab/lab.h) when the host
 *                        died with batch N armed; --resume judges N with it
 */
#ifndef PMUCANARY_JOURNAL_H
#define PMUCANARY_JOURNAL_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>

#define JOURNAL_FILE "journal.jsonl"

struct journal;

/* Creates run_dir/journal.jsonl (run_dir must exist; the file must not) and
 * fsyncs run_dir so the file survives a crash. */
int journal_create(const char *run_dir, struct journal **out);
/* Opens an existing journal to append to it (--resume). A truncated last
 * line left by a crash is cut off first so new lines start clean. */
int journal_reopen(const char *run_dir, struct journal **out);
void journal_close(struct journal *j);
typedef struct journal journal;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(journal, journal_close)

const char *journal_path(const struct journal *j);
/* This boot's id (/proc/sys/kernel/random/boot_id), "" when unknown. */
const char *journal_boot_id(void);

/* Adds "step", "ts" and "seq" to line (borrowed), writes it with its newline
 * in one write(2) and fsyncs the file. */
int journal_append(struct journal *j, const char *step, json_t *line);

int journal_start(struct journal *j, json_t *scenario, const char *fingerprint_hash);
int journal_open_done(struct journal *j, json_t *results);
int journal_fleet_up(struct journal *j, json_t *fleet);
/* keys: NULL-terminated attr keys (the runner's canonical attr strings). */
int journal_arm(struct journal *j, unsigned int batch, const char *kind,
		const char *const *keys);
int journal_judged(struct journal *j, unsigned int batch, const char *outcome,
		   json_t *verdicts);
int journal_baseline(struct journal *j, const char *outcome, json_t *verdicts);
int journal_done(struct journal *j, json_t *summary);
/* Batch batch was armed when signal signo asked the harness to stop: it
 * stays unjudged (a hasty judgement would be a false verdict) and a resume
 * arms it again, in any boot of the host. */
int journal_interrupted(struct journal *j, unsigned int batch, int signo);
/* outcome: "HOST_CRASH" or "HOST_HANG"; evidence: what the watcher saw. */
int journal_host_down(struct journal *j, unsigned int batch, const char *outcome,
		      const char *evidence);

/* ---- replay ---- */

struct journal_batch {
	unsigned int id;
	char *kind;
	char *boot_id;        /* the host's boot when it was armed ("" unknown) */
	GPtrArray *keys;      /* char * */
	bool judged;
	bool interrupted;     /* an "interrupted" line: our shutdown, not the host's */
	char *outcome;        /* outcome name once judged, else NULL */
	json_t *verdicts;     /* once judged, else NULL */
	char *down_outcome;   /* a host-down line named it: HOST_CRASH/HOST_HANG */
	char *down_evidence;
};

struct journal_replay {
	json_t *start;        /* the lines as written, or NULL if absent */
	json_t *open_done;
	json_t *fleet_up;
	json_t *baseline;
	json_t *done;
	GPtrArray *batches;   /* struct journal_batch *, in arm order */
	unsigned int lines;   /* complete lines read */
	bool truncated;       /* the last line was cut short (crash mid-write) */
};

/* Reads run_dir/journal.jsonl (or a path ending in .jsonl). Garbage on any
 * line but a truncated last one fails with -EINVAL, "path:line: message". */
int journal_read(const char *path, struct journal_replay **out);
void journal_replay_free(struct journal_replay *r);
typedef struct journal_replay journal_replay;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(journal_replay, journal_replay_free)

const struct journal_batch *journal_replay_batch(const struct journal_replay *r,
						 unsigned int id);
/* The last batch armed and never judged nor interrupted (suspected
 * HOST_CRASH), or NULL. */
const struct journal_batch *journal_replay_open_batch(const struct journal_replay *r);

#endif
