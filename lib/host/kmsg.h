/* Host kernel log watcher: /dev/kmsg records written during a batch that
 * say the host kernel complained (HOST_WARN evidence).
 *
 * A /dev/kmsg record is "PRIO,SEQ,TS_USEC,FLAGS;MESSAGE\n" followed by
 * " KEY=VALUE" continuation lines. Only kernel-facility records are judged:
 * lines written from user space (our own markers included) have facility
 * LOG_USER and are never flagged. */
#ifndef PMUCANARY_KMSG_H
#define PMUCANARY_KMSG_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define KMSG_PATH "/dev/kmsg"

/* One table in kmsg.c maps message patterns to these. */
enum kmsg_class {
	KMSG_CLASS_NONE,       /* nothing to report */
	KMSG_CLASS_WARNING,    /* WARNING: CPU: 1 PID: 7 at ... */
	KMSG_CLASS_BUG,        /* BUG: ..., kernel BUG at ... */
	KMSG_CLASS_OOPS,       /* Oops: 0000 [#1] SMP */
	KMSG_CLASS_GPF,        /* general protection fault */
	KMSG_CLASS_PANIC,      /* Kernel panic - not syncing */
	KMSG_CLASS_RCU_STALL,  /* rcu: INFO: rcu_sched self-detected stall */
	KMSG_CLASS_LOCKUP,     /* soft/hard lockup, hung task */
	KMSG_CLASS_NMI,        /* Uhhuh. NMI received for unknown reason */
	KMSG_CLASS_MSR,        /* unchecked MSR access error */
	KMSG_CLASS_COUNT
};

const char *kmsg_class_name(enum kmsg_class c);

/* Classifies a message (the text after ';'). */
enum kmsg_class kmsg_classify(const char *message);

struct kmsg_record {
	unsigned int facility, level;
	uint64_t seq, ts_usec;
	char *message;          /* first line, without continuation lines */
};

/* Parses one record as read(2) returns it. -EINVAL if malformed. */
int kmsg_record_parse(const char *buf, size_t len, struct kmsg_record *out);
void kmsg_record_clear(struct kmsg_record *rec);
/* KMSG_CLASS_NONE for non-kernel facilities. */
enum kmsg_class kmsg_record_classify(const struct kmsg_record *rec);

struct kmsg_hit {
	enum kmsg_class cls;
	uint64_t seq, ts_usec;
	char *message;
};
void kmsg_hit_free(struct kmsg_hit *hit);

struct kmsg_watch;

/* Opens path (NULL: /dev/kmsg) positioned at its end. */
int kmsg_open(const char *path, struct kmsg_watch **out);
void kmsg_close(struct kmsg_watch *w);
typedef struct kmsg_watch kmsg_watch;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(kmsg_watch, kmsg_close)

/* Forgets everything before now (SEEK_END): call at batch start. */
int kmsg_mark(struct kmsg_watch *w);
/* Reads every record since the mark or the last read, without blocking.
 * Flagged records are appended to hits (struct kmsg_hit *, owned by hits:
 * create it with g_ptr_array_new_with_free_func(kmsg_hit_free)); records
 * seen is added to *seen if not NULL. Records overwritten before we read
 * them are skipped (counted in kmsg_missed). */
int kmsg_read_new(struct kmsg_watch *w, GPtrArray *hits, unsigned int *seen);
unsigned int kmsg_missed(const struct kmsg_watch *w);

/* Writes a user-space line to the kernel log (facility LOG_USER), e.g.
 * "pmucanary: arm batch 7", so the host log shows where batches began. */
int kmsg_write(const char *path, const char *line);

#endif
