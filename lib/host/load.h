/* The load phase's arming: a batch of attrs opened as system-wide sampling
 * events (pid -1) on every online CPU, each with a ring buffer that a drain
 * thread empties while the batch is armed, as `perf record -a` would.
 *
 *   load_arm()    open (disabled) + mmap on every CPU, start draining, enable
 *   load_dwell()  sleep while the guests work
 *   load_disarm() disable, drain the rest, stop the thread, close, unmap
 *
 * An attr that fails to open at arm time (it opened in the open phase) keeps
 * its errno in load_count.open_err; the others stay armed. */
#ifndef PMUCANARY_LOAD_H
#define PMUCANARY_LOAD_H

#include <glib.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOAD_DEFAULT_RING_PAGES 8

struct load_count {
	int open_err;          /* positive errno of the first CPU that refused, or 0 */
	int open_cpu;          /* that CPU, or -1 */
	unsigned int cpus;     /* CPUs where it is armed */
	uint64_t samples;      /* PERF_RECORD_SAMPLE */
	uint64_t lost;         /* events lost as PERF_RECORD_LOST says */
	uint64_t lost_records; /* PERF_RECORD_LOST records */
	uint64_t throttle;     /* PERF_RECORD_THROTTLE */
	uint64_t unthrottle;   /* PERF_RECORD_UNTHROTTLE */
	uint64_t other;        /* any other record */
};

struct load;

/* Arms attrs[0..n) (copied; `disabled` is set for the open, the rest is
 * the attr under test). ring_pages is the data size, a power of two (0:
 * LOAD_DEFAULT_RING_PAGES). Fails only when nothing could be set up (no
 * CPUs, no thread); per-attr failures land in the counts. */
int load_arm(const struct perf_event_attr *attrs, size_t n, unsigned int ring_pages,
	     struct load **out);
/* Sleeps ms while the drain thread works. */
void load_dwell(struct load *l, unsigned int ms);
/* Disables every event, drains what is left, closes and unmaps everything.
 * Counts stay readable until load_free. Idempotent. */
int load_disarm(struct load *l);
void load_free(struct load *l);
typedef struct load load;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(load, load_free)

size_t load_attr_count(const struct load *l);
const struct load_count *load_count_at(const struct load *l, size_t i);
/* Events open now (CPUs x attrs): 0 after load_disarm. */
size_t load_open_events(const struct load *l);

/* Convenience: arm, dwell, disarm. */
int load_run(const struct perf_event_attr *attrs, size_t n, unsigned int ring_pages,
	     unsigned int dwell_ms, struct load **out);

#endif
