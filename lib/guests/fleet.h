/* A fleet of guests watched through their heartbeats (design.md "Fleet").
 *
 * Each guest is a transient libvirt domain named pmucanary-<run_id>-<n>,
 * started with VIR_DOMAIN_START_AUTODESTROY (a killed harness loses its
 * connection and libvirtd destroys the guests), booted straight into a
 * kernel + initramfs whose /init is the agent (lib/guests/hbproto.h). The fleet
 * turns what it sees into verdicts, each with a timestamp and evidence:
 *
 *   GUEST_CRASH       panic lifecycle event, or the domain stopped unasked
 *   GUEST_HANG        no heartbeat within hb_timeout (then an NMI is injected
 *                     and the console it provokes is the evidence), or
 *                     heartbeats whose work counter stalled ("stalled")
 *   GUEST_REBOOT      boot id changed or the sequence restarted
 *   GUEST_CORRUPTION  a CORRUPT line (offset, expected, actual)
 *   GUEST_OOPS        the oops count rose (KMSG text, console lines)
 *   INFRA             the guest never sent its first heartbeat: never a
 *                     kernel verdict
 *
 * A guest with a harm verdict stays HARMED (no further verdicts but the
 * evidence of what follows) until fleet_restart_guest().
 *
 * Lab hosts are guests of the same kind with shares (<filesystem> 9p,
 * accessmode passthrough, multidevs remap), QEMU running as root and a CPU
 * with virtualization extensions: see struct fleet_config.
 *
 * Domain XML (domxml.h, fleet_domain_xml_pure): type='kvm' with <cpu mode='host-passthrough'/>
 * when /dev/kvm is usable, kvm_intel or kvm_amd is loaded (kvm_pvm's
 * /dev/kvm cannot boot a stock kernel) and libvirt's domain capabilities
 * accept kvm; else type='qemu' (TCG, <cpu mode='maximum'/>). Machine 'pc',
 * direct kernel boot, <features><acpi/></features> + <panic model='isa'/>,
 * serial console to <run_dir>/<name>.console (libvirt opens the file as root
 * and passes the fd, so run_dir need not be reachable by libvirt-qemu; the
 * kernel and initrd must be), the heartbeat as a unix channel in bind mode
 * with no path (libvirt's own socket) read through virDomainOpenChannel and
 * a non-blocking stream, no USB/balloon/graphics/network, and no disk but
 * a disk guest's overlay (virtio-blk vda; the root= word on the cmdline).
 * on_crash=preserve (then the fleet resumes the guest for 0.4 s so that a
 * panic raised in NMI context flushes its console, and pauses it again),
 * on_reboot=restart (seen as a REBOOT event and a new boot id),
 * on_poweroff=destroy. Kernel command line: fleet_kernel_cmdline().
 * Metadata <pc:fleet pid= start=> lets fleet_new() destroy guests of dead
 * harnesses that AUTODESTROY missed.
 *
 * Thread safety: every function may be called from any thread; libvirt
 * events are handled on an internal event-loop thread. A lost libvirt
 * connection turns every live guest INFRA (never a hang). */
#ifndef PMUCANARY_FLEET_H
#define PMUCANARY_FLEET_H

#include "domxml.h"
#include "outcome.h"

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

enum guest_state {
	GUEST_STATE_OFF,      /* not started / stopped by the fleet */
	GUEST_STATE_BOOTING,  /* started, no heartbeat yet */
	GUEST_STATE_HEALTHY,  /* heartbeats arriving */
	GUEST_STATE_HARMED,   /* has a harm verdict; restart to clear */
	GUEST_STATE_INFRA,    /* never came up */
	GUEST_STATE_COUNT
};
const char *guest_state_name(enum guest_state s);

struct fleet_verdict {
	uint64_t id;          /* position in the fleet's timeline, from 1 */
	unsigned int guest;   /* index */
	enum outcome kind;    /* a GUEST_* harm or INFRA */
	int64_t t_us;         /* g_get_monotonic_time() when seen */
	double t_s;           /* seconds since fleet_new() */
	char *evidence;       /* one or more lines; console tail appended */
};
void fleet_verdict_free(struct fleet_verdict *v);

struct fleet_guest_status {
	char name[96];
	enum guest_state state;
	double first_heartbeat_s; /* since its (re)start; < 0: none yet */
	int64_t last_hb_us;   /* monotonic time of the last heartbeat, 0: none */
	uint64_t seq, work;
	unsigned int oops;
	unsigned int boots;   /* boot ids seen */
	unsigned int restarts;
	uint64_t lines_ok;
	uint64_t lines_bad;   /* malformed + oversized + truncated + out-of-order */
	char console_path[512];
	int64_t last_ack_us;  /* monotonic time of the last ACK line, 0: none */
	char last_ack[32];    /* its command word */
	char lab_step[16];    /* the last LAB line of a lab host ("" none) */
	unsigned int lab_code;
	int64_t lab_us;       /* monotonic time it arrived, 0: none */
	double started_s;     /* this incarnation's start, since fleet_new() */
	bool restored;        /* this incarnation came from the saved image */
	unsigned int restores;         /* restarts done by a restore */
	unsigned int restore_failures; /* saves or restores that failed (then a cold boot) */
	char restore_note[256];        /* the last failure, "" none */
	char save_path[512];           /* the saved image, "" none */
	bool disk;            /* a disk guest (else an initramfs guest) */
};

struct fleet;

/* Validates cfg (copied), connects, starts the event loop and destroys the
 * domains left by dead earlier runs. Nothing is booted yet. */
int fleet_new(const struct fleet_config *cfg, struct fleet **out);
/* Boots every guest (at most cfg.parallel booting at once) and waits for
 * each one's first heartbeat. 0 when all came up; -ETIMEDOUT when the
 * guests that are INFRA were all started and sent no first heartbeat in
 * time (their kernel or agent: a boot failure), -EIO when any is INFRA
 * otherwise (libvirt could not start it, the connection was lost). The
 * others keep running; see the verdicts. */
int fleet_start(struct fleet *f);
/* Destroys every guest (no verdicts for stops it asked for). */
int fleet_stop(struct fleet *f);
/* fleet_stop() + disconnect + free. NULL is fine. */
void fleet_free(struct fleet *f);

enum fleet_accel fleet_accel(const struct fleet *f);
unsigned int fleet_size(const struct fleet *f);
/* How many guests boot or restart at once (cfg.parallel or its default). */
unsigned int fleet_parallel(const struct fleet *f);
double fleet_elapsed_s(const struct fleet *f);

/* A point in the verdict timeline; verdicts_since(mark) returns only later
 * ones. *out: struct fleet_verdict * copies, owned by the array. A verdict's
 * evidence grows for about a second (console tail, what an NMI printed):
 * query again, or fleet_json(), for the full text. */
uint64_t fleet_mark(struct fleet *f);
int fleet_verdicts_since(struct fleet *f, uint64_t mark, GPtrArray **out);
/* Waits until a verdict after mark exists: 0, or -ETIMEDOUT. */
int fleet_wait_verdict(struct fleet *f, uint64_t mark, unsigned int timeout_ms);
/* Every guest has a verdict after mark and its evidence is whole (the
 * console tail read, no NMI pending): nothing more to watch until the
 * guests restart. */
bool fleet_all_harmed_since(struct fleet *f, uint64_t mark);
/* Waits (at most timeout_ms) until the evidence of every verdict after
 * mark is whole: its console tail read, no NMI pending. A verdict taken at
 * the end of a batch would otherwise go without the guest's console. */
void fleet_wait_evidence(struct fleet *f, uint64_t mark, unsigned int timeout_ms);
/* Waits until every guest is HEALTHY with a heartbeat within the timeout:
 * 0, -ETIMEDOUT, or -EIO when a guest is HARMED/INFRA/OFF. */
int fleet_wait_healthy(struct fleet *f, unsigned int timeout_ms);

/* Waits until every guest has sent count more heartbeats than it had when
 * called (proof that it ran on after a batch: one heartbeat may have been
 * on its way already) or is no longer HEALTHY (it has a verdict). 0: all
 * sent them; -EIO: they did, and some guest left HEALTHY; -ETIMEDOUT: a
 * healthy guest did not (a hang shows as a verdict only after its
 * heartbeat timeout); -EINTR: SIGINT/SIGTERM came first (fleet_signal_pending),
 * which says nothing about the guests. */
int fleet_wait_heartbeats(struct fleet *f, unsigned int count, unsigned int timeout_ms);

/* Destroys guest i and brings it back (clears HARMED); waits for its first
 * heartbeat. -EIO (and an INFRA verdict) when it does not come up.
 *
 * Restore instead of reboot (initramfs guests without shares, unless
 * cold_restart): the first restart of a guest boots it cold and, once it
 * sent its first heartbeat and before anything is sent to it, saves it
 * (virDomainSaveFlags, <run_dir>/<name>.<pid>-<start>.save) and restores it
 * from that image at once; later restarts restore it (virDomainRestoreFlags)
 * instead of booting. A restored guest's boot id and sequence are the
 * saved ones, below what the harmed incarnation sent: the heartbeat state
 * starts over as for a boot (never GUEST_REBOOT), and the events of the
 * replaced incarnation, which shares the UUID, are those before the
 * restored one's STARTED event or first heartbeat. A restore that fails,
 * or sends no heartbeat within twice hb_timeout (15 s at least), is logged
 * (pc_warn; restore_note), its image removed, and the guest booted cold;
 * after two failures a guest stays on cold boots. Restored domains are not
 * AUTODESTROY (libvirt has no such restore flag): fleet_new() destroys
 * those of dead harnesses, and removes their images in run_dir and its
 * sibling directories. Disk guests stay on cold boots: a fresh overlay
 * under restored memory is not the disk that memory knew. */
int fleet_restart_guest(struct fleet *f, unsigned int i);
/* Stops every harmed disk guest now (its overlay is locked while QEMU
 * runs), which reads its own logs into its verdict's evidence: call before
 * reading the verdicts that a cell keeps. fleet_restart_guest() boots it
 * again. Returns how many were stopped. */
int fleet_stop_harmed_disks(struct fleet *f);
/* Sends one host->guest line (lib/guests/hbproto.h), e.g. "selftest panic". */
int fleet_send_command(struct fleet *f, unsigned int i, const char *line);
int fleet_guest_status(struct fleet *f, unsigned int i, struct fleet_guest_status *st);
/* Domain name of guest i (static for the fleet's life). */
const char *fleet_guest_name(const struct fleet *f, unsigned int i);

/* {"guests": [{"name","boot":"initramfs"|"disk",
 * "disk_boot":"kernel"|"bootloader" (disk guests),"state","first_heartbeat_s",
 * "verdicts":[{"kind","t_s","evidence"}]}], "accel": "kvm"|"tcg",
 * "limitations": [...]} */
json_t *fleet_json(struct fleet *f);
/* Each guest's name, boot (and disk_boot), state, restarts, restores and
 * failed restores with the last one's reason: run.json's "guests". */
json_t *fleet_guests_summary(struct fleet *f);

/* The domain XML for guest n (exposed for the unit tests). */
char *fleet_domain_xml(const struct fleet_config *cfg, enum fleet_accel accel,
		       const char *name, const char *console_path, unsigned int n);

/* SIGINT/SIGTERM: the handler only records the signal and writes to a
 * self-pipe. Returns the pipe's read end (poll it) or -errno. */
int fleet_signals_install(void);
/* The signal received (SIGINT/SIGTERM) or 0. */
int fleet_signal_pending(void);

#endif
