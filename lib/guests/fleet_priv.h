/* The fleet's internals: struct fleet, struct guest and the functions the
 * files of the fleet call across. PRIVATE: only the files that implement
 * fleet.h include it -- fleet.c (the fleet's lifecycle: new, start, stop,
 * free, boot, verdicts, the public queries), monitor.c (libvirt's
 * callbacks and the monitor thread), restore.c (save and restore of
 * guests, fleet_restart_guest) and reaper.c (what a killed run left, and
 * the watcher that cleans up after a SIGKILL). Everyone else uses fleet.h.
 *
 * Include fleet.h before it: it is the inside of fleet.h's module, and an
 * include of fleet.h from here would be a circle (fleet -> fleet_priv ->
 * fleet) for tests/cli_layers.sh.
 *
 * Locking: f->lock guards every field of struct fleet and struct guest
 * that the event-loop and monitor threads touch; a function named *_locked
 * is called with it held. libvirt is never called with it held. */
#ifndef PMUCANARY_FLEET_PRIV_H
#define PMUCANARY_FLEET_PRIV_H

#include "heartbeat.h"
#include "virt.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FLEET_CONSOLE_DELAY_US 600000 /* let the guest finish printing */
#define FLEET_CONSOLE_TAIL_LINES 80
/* A guest's saved image: <run_dir>/<name>.<pid>-<start>.save */
#define FLEET_SAVE_SUFFIX ".save"

struct guest {
	struct fleet *f;
	unsigned int idx;
	char name[96];
	char console[512];
	virDomainPtr dom;
	char uuid[VIR_UUID_STRING_BUFLEN]; /* events of an earlier incarnation are not ours */
	virStreamPtr st;
	bool st_hup;            /* stream ended; closed from normal context */
	enum guest_state state;
	struct hb_reader rd;
	struct hb_guest hb;
	int64_t started_us;
	double first_hb_s;
	unsigned int restarts;
	bool stopping;          /* the fleet asked for the stop */
	bool gone;              /* domain no longer running */
	/* the open harm verdict and its pending evidence */
	struct fleet_verdict *harm;
	int64_t console_due_us; /* append the console tail at this time; 0: none */
	off_t console_mark;     /* console size when harm was seen */
	bool nmi_pending;
	bool nmi_done;
	/* QEMU pauses at the pvpanic notifier, before the kernel flushes what
	 * it printed in NMI context: resume briefly, then pause again */
	int64_t flush_until_us;  /* 0: none; >0: pause at this time */
	bool flush_resume;       /* resume now */
	bool logs_pulled;        /* a harmed disk guest's own logs are read (once) */
	/* Restore instead of reboot (fleet.h): the saved image of this guest's
	 * first fresh, idle incarnation after a cold restart. Every restored
	 * incarnation has that one's UUID, so the events of the one it
	 * replaces are told apart by order: they come before its STARTED
	 * event (or its first heartbeat) on the one connection. */
	char snap[512];          /* "" none */
	char snap_uuid[VIR_UUID_STRING_BUFLEN];
	bool await_started;
	bool boot_timed_out;     /* INFRA: started, no first heartbeat in time */
	bool restored;           /* this incarnation came from snap */
	unsigned int restores, restore_failures;
	char restore_note[256];  /* the last failed restore */
};

struct fleet {
	struct fleet_config cfg;
	char *uri, *run_id, *run_dir, *kernel, *initrd, *extra;
	char *disk, *disk_root;       /* disk guests (fleet_config) */
	char *disk_kernel, *disk_initrd;
	struct fleet_share *shares;   /* deep copy of cfg->shares */
	virConnectPtr conn;
	int ev_ids[2];
	enum fleet_accel accel;
	GMutex lock;
	GCond cond;
	struct guest *g;
	unsigned int n;
	GPtrArray *verdicts;    /* struct fleet_verdict *, the timeline */
	int64_t t0_us;
	GThread *monitor;
	bool quit;
	bool conn_lost;
	bool close_cb;
	int watcher_fd;         /* socket to this fleet's watcher (fleet_watcher_start) */
	char cpu_mode[32];
	GPtrArray *disk_owners; /* struct disk_owner: the disk's chain before libvirt */
};

/* ---- fleet.c ---- */

/* The last max_lines lines of the console at path from offset `from` (or
 * its tail), printable; g_free() it. */
char *fleet_console_tail(const char *path, off_t from, unsigned int max_lines);
/* Adds a line to v's evidence, up to a bound. */
void fleet_evidence_append(struct fleet_verdict *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Records a verdict of guest g, or, while g is HARMED, evidence of its
 * harm (f->lock held). */
void fleet_guest_verdict_locked(struct guest *g, enum outcome kind, const char *evidence);
/* A new incarnation's watching starts from nothing (f->lock held). */
void fleet_guest_reset_locked(struct fleet *f, struct guest *g);
/* Starts guest g (state BOOTING) or records INFRA. Caller holds no lock. */
int fleet_guest_boot(struct fleet *f, struct guest *g);
/* Destroys guest g; no verdict for it. Caller holds no lock. */
void fleet_guest_stop(struct fleet *f, struct guest *g);

/* ---- monitor.c ---- */

/* libvirt's callbacks, on its event-loop thread: the heartbeat channel's
 * stream (opaque: the guest), lifecycle and reboot events and the
 * connection's close (opaque: the fleet). */
void monitor_stream_event(virStreamPtr st, int events, void *opaque);
void monitor_lifecycle_event(virDomainPtr dom, int event, int detail, void *opaque);
void monitor_reboot_event(virDomainPtr dom, void *opaque);
void monitor_conn_closed(int reason, void *opaque);
/* The monitor thread (data: the fleet), until f->quit. */
gpointer monitor_main(gpointer data);

/* ---- reaper.c ---- */

/* The start time of process pid (field 22 of /proc/PID/stat), 0 when it
 * cannot be read: with the pid, it names a harness (a pid is reused, the
 * pair is not). */
unsigned long long reaper_proc_starttime(pid_t pid);
/* Destroys the fleet guests whose harness is gone (libvirt's AUTODESTROY
 * missed them: a harness killed across a libvirtd restart). */
void fleet_reap_stale(struct fleet *f);
/* Removes the saved images of dead harnesses in f's run directory and its
 * siblings. */
void fleet_reap_saves(struct fleet *f);
/* After a lost connection: destroys f's own guests through a new one. */
void fleet_destroy_orphans(struct fleet *f);
/* Starts and stops f's watcher (reaper.c says what it does). */
void fleet_watcher_start(struct fleet *f);
void fleet_watcher_stop(struct fleet *f);

#endif
