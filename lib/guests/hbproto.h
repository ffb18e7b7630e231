/* The heartbeat protocol between the guest agent and the host.
 *
 * Shared by lib/ (host side) and guest-images/agent.c (a static binary that
 * includes nothing else from lib/), so this header is self-contained.
 *
 * Transport: the virtio-serial port named HB_PORT_NAME. Both directions are
 * ASCII lines ending in '\n', at most HB_MAX_LINE bytes including the '\n'.
 * Fields are space-separated key=value pairs in the fixed order below; the
 * host parses strictly (exact order, decimal or lower-case hex only, no
 * extra fields) and counts anything else as malformed. Guests are untrusted.
 *
 * Guest -> host:
 *   HB v=1 seq=<u64> boot=<32 hex> mono=<u64 ms> work=<u64> canary=<ok|bad> oops=<u32>
 *       every interval. seq starts at 1 at each boot of the agent; boot is
 *       /proc/sys/kernel/random/boot_id without dashes; work grows with
 *       the busy workload's progress; oops counts kmsg lines that were an
 *       oops, WARNING, BUG or panic since boot.
 *   CORRUPT v=1 seq=<u64> off=<hex> exp=<hex byte> got=<hex byte>
 *       once per detected canary mismatch (at most HB_MAX_CORRUPT per boot).
 *   KMSG v=1 seq=<u64> text=<rest of line, printable ASCII>
 *       a kmsg line the agent counted in oops=, text truncated to fit.
 *   ACK v=1 seq=<u64> cmd=<command word>
 *       a command was accepted (sent before a self-test fault fires).
 *   LAB v=1 seq=<u64> step=<word> code=<u32>
 *       only from a lab host (pmucanary.role=lab): where its lab init is.
 *       step is one of HB_LAB_STEPS: "ready" (libvirtd answers and the inner
 *       harness was started; code 0), "done" (the inner harness exited with
 *       status code; 128+N for signal N), "failed" (the lab init could not
 *       set the lab host up; code is the errno, the console says what).
 *
 * Host -> guest:
 *   interval <ms>        heartbeat interval, HB_MIN_INTERVAL_MS..HB_MAX_INTERVAL_MS
 *   work <on|off>        busy workload on every vCPU
 *   selftest <panic|hang|corrupt|reboot|oops|garbage>
 *       panic:   crash the kernel (sysrq c)
 *       hang:    stop heartbeats, kernel stays alive
 *       corrupt: flip one canary byte (the checker must find it)
 *       reboot:  reboot the guest kernel (sysrq b)
 *       oops:    make the kernel print an oops-class line without dying
 *       garbage: after the ACK, write HB_SELFTEST_GARBAGE_LINES hostile
 *                lines (each one the host must reject exactly once, none a
 *                verdict): a 64 KiB line, lines one past and at the length
 *                limit, NUL and non-ASCII bytes, HB/CORRUPT/ACK lines cut
 *                mid-field, fields out of order, wrong versions, a duplicate
 *                HB (old seq, mono=1), KMSG/CORRUPT with a seq far ahead,
 *                numbers that overflow, empty lines, then a flood of 20000
 *                random-byte lines (about 10 MB, deterministic). Heartbeats
 *                keep flowing between the garbage writes.
 */
#ifndef PMUCANARY_HBPROTO_H
#define PMUCANARY_HBPROTO_H

#define HB_PORT_NAME "org.pmucanary.hb"
#define HB_PROTO_VERSION 1
#define HB_MAX_LINE 256
#define HB_BOOT_ID_HEX 32
#define HB_DEFAULT_INTERVAL_MS 100
#define HB_MIN_INTERVAL_MS 10
#define HB_MAX_INTERVAL_MS 10000
#define HB_MAX_CORRUPT 16
/* lines sent by "selftest garbage": 38 hostile + 20000 flood */
#define HB_SELFTEST_GARBAGE_LINES 20038

/* LAB steps, in the order a lab host goes through them. */
#define HB_LAB_READY "ready"
#define HB_LAB_DONE "done"
#define HB_LAB_FAILED "failed"
#define HB_LAB_STEP_MAX 16

/* What a lab host's init (the agent with pmucanary.role=lab) and the lab
 * (lib/lab/lab.h) agree on: virtio-9p mount tags, the files in the kernel's lab
 * directory, the marker that says "this kernel is a lab host". */
#define HB_LAB_TAG_ROOT "pcroot"     /* the host's /, read-only */
#define HB_LAB_TAG_RUN "pcrun"       /* the lab directory, writable, same path */
#define HB_LAB_TAG_CACHE "pccache"   /* libvirt's QEMU capability cache */
#define HB_LAB_MARKER "/run/pmucanary-lab"
#define HB_LAB_ARGV_FILE "lab-argv"  /* the command to run, one argument a line */
#define HB_LAB_LOG_FILE "inner.log"  /* its output */
#define HB_LAB_ARGS_MAX 64
#define HB_LAB_ARGV_BYTES 16384
#define HB_LAB_DIR_MAX 200           /* pmucanary.lab_dir=, [A-Za-z0-9/_.+-] */

#define HB_CMD_INTERVAL "interval"
#define HB_CMD_WORK "work"
#define HB_CMD_SELFTEST "selftest"
#define HB_CMD_BEAT "beat"   /* send a heartbeat now (a restored guest's first) */

#endif
