/* A place a run executes: the machine that boots one kernel under test and
 * runs `pmucanary run` inside it (design.md "lab host"; issue 24).
 *
 * The lab (lab.c) owns the policy that is the same wherever a run executes:
 * what the run inside is told (its argv and lab context in the kernel's
 * directory), when a lost machine's armed batch becomes HOST_CRASH or
 * HOST_HANG in the inner journal, how many machines a kernel may lose,
 * whose fault a failure is (boot or infra, pool.h's words), and the
 * reports. A place only does what differs: get ready for a kernel, boot
 * one machine on it, watch that machine until the run inside is done, the
 * machine is lost, or it cannot be used, and say which in a place_attempt.
 * One lab may try a kernel several times (an attempt resumes the run where
 * its journal stops), so a place keeps nothing of an attempt but what it
 * writes in the kernel's directory.
 *
 * Backends, by name (place_backend()):
 *   labhost  (place_labhost.c) a transient libvirt domain on this machine
 *            booted on the kernel with nested virtualization and the
 *            host's root shared read-only; it runs the lab's argv, so a
 *            lost one is resumed.
 *   lava     (place_lava.c) a LAVA device driven by the real dispatcher
 *            here (lava-run, a device dictionary): one job per attempt
 *            that boots the kernel and runs the scenario, its log
 *            collected (lava.h) into the kernel's run.json.
 * Each takes its own options as KEY=VALUE (`lab --place-opt`). The test
 * tree adds its own (tests/test_lab.c) to drive the lab's policy without
 * libvirtd. */
#ifndef PMUCANARY_PLACE_H
#define PMUCANARY_PLACE_H

#include "kernel.h"
#include "outcome.h"

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>

enum place_end {
	PLACE_DONE,        /* the inner run exited: code set */
	PLACE_LOST,        /* the machine died under the run: lost_as, evidence */
	PLACE_FAILED,      /* it never got ready, or could not be watched: evidence */
	PLACE_INTERRUPTED, /* a signal to this process stopped the attempt */
};

struct place_attempt {
	enum place_end end;
	int code;                  /* DONE: the run's exit code */
	enum outcome lost_as;      /* LOST: OUTCOME_HOST_CRASH or OUTCOME_HOST_HANG */
	char *evidence;            /* LOST/FAILED: what was seen (console tail, verdict) */
	double first_hb_s;         /* start to the machine's first sign of life; < 0: none */
	double ready_s;            /* start to "the run can start"; < 0: never */
	char *run_json;            /* DONE: the run's run.json when the place wrote it
				    * itself; NULL: the newest run directory in dir */
	bool before_ready;         /* LOST/FAILED before it was ready: the kernel under
				    * test never came up (a boot failure, not infra) */
};
void place_attempt_clear(struct place_attempt *a);

/* One kernel, as every attempt on it sees it (all borrowed). The run
 * inside finds its command line in dir/HB_LAB_ARGV_FILE, written by the
 * lab before each attempt. */
struct place_job {
	const struct kernel *kernel;
	const char *label;           /* kernel_label() */
	const char *dir;             /* RESULTS/<lab-id>/NAME, shared with the machine */
	const char *run_id;          /* unique per lab and kernel: names the machine */
	const char *scenario;        /* the scenario the run executes (its copy in dir) */
	gint64 deadline_us;          /* monotonic: the kernel's --timeout */
	unsigned int timeout_s;      /* the same, for messages */
	/* progress: steps "image", "booting", "libvirtd", "run" */
	void (*step)(void *ctx, const char *step, unsigned int attempt);
	void *step_ctx;
};

/* What the lab asks of every place it opens (borrowed). */
struct place_params {
	const char *uri;             /* NULL: qemu:///system */
	bool tcg;                    /* the machines run under TCG */
	unsigned int vcpus;          /* 0: online CPUs, at least 2 */
	unsigned int memory_mib;     /* per machine */
	unsigned int boot_timeout_ms;/* first sign of life; 0: the place's default */
	bool guest_image;            /* the nested guests use the default image: a
				      * place that shares this host's image cache
				      * builds it once, up front */
	const char *const *options;  /* the place's own, "KEY=VALUE", NULL-terminated
				      * (may be NULL) */
};

struct place_ops {
	const char *name;            /* [a-z0-9-]+ */
	const char *what;            /* one line for --help and errors */
	bool runs_argv;              /* the run inside is the lab's argv file: --resume,
				      * --perf-binary and --selftest-harm reach it */
	/* Before anything starts (lab_validate): the options (an unknown key,
	 * a missing file: -EINVAL naming it) and each kernel (what the machine
	 * needs of it; warnings appended as char *). Both optional. */
	int (*check)(const struct place_params *p);
	int (*check_kernel)(const struct place_params *p, const struct kernel *k,
			    GPtrArray *warnings);
	/* Once per lab, before any kernel: *priv is the place's own. */
	int (*open)(const struct place_params *p, void **priv);
	void (*close)(void *priv);
	/* Once per kernel, before its first attempt (e.g. the machine's image).
	 * < 0 with pc_errmsg(): the kernel cannot be tested here (INFRA). */
	int (*prepare)(void *priv, const struct place_job *job);
	/* Attempt `attempt` (1-based) on the kernel: boot, watch, stop. Fills
	 * *out (cleared first) and returns 0; < 0 with pc_errmsg() when it
	 * could not even try (INFRA). Nothing it started outlives the call. */
	int (*attempt)(void *priv, const struct place_job *job, unsigned int attempt,
		       struct place_attempt *out);
	/* After the kernel's last attempt (optional). */
	void (*finish)(void *priv, const struct place_job *job);
};

extern const struct place_ops place_labhost_ops;
extern const struct place_ops place_lava_ops;

/* The backend named name, or NULL; place_backend_names() lists them
 * ("labhost, lava"). */
const struct place_ops *place_backend(const char *name);
const char *place_backend_names(void);

/* The value of KEY in a place's options (NULL when absent). An option that
 * is not KEY=VALUE, or whose key is not one of known (NULL-terminated), or
 * that is given twice: -EINVAL "--place-opt ...: ..." naming the place. */
int place_options_check(const struct place_ops *ops, const char *const *options,
			const char *const *known);
const char *place_option(const char *const *options, const char *key);

/* The lab's own files (argv, context, job definitions, lab.json,
 * bisect.json): text written whole (g_file_set_contents, mode 0644), JSON
 * indented with sorted keys and a final newline. 0 or -errno with a
 * message naming path. */
int place_write_text(const char *path, const char *text);
int place_write_json(const char *path, json_t *j);

/* Runs argv (PATH searched) in its own process group, stdout and stderr
 * to log, until it exits, or until a signal to this process
 * (fleet_signal_pending) or the monotonic deadline_us (0: none) stops it:
 * SIGTERM, then after grace_s SIGKILL to its group. *status is its wait
 * status; *stopped says it was stopped, *interrupted by a signal. < 0 when
 * it could not be started. */
int place_run_logged(char **argv, const char *log, gint64 deadline_us, unsigned int grace_s,
		     int *status, bool *stopped, bool *interrupted);

/* The KVM vendor a lab host gets from this machine: "amd" under TCG (QEMU
 * emulates SVM only), else the CPU's vendor; NULL when unknown. */
const char *place_kvm_vendor(bool tcg);

/* The last max bytes of a text file, every byte that is not printable
 * ASCII or a newline shown as '?' ("(PATH: unreadable)" when it cannot be
 * read): for evidence taken from a machine's console or log. */
char *place_file_tail(const char *path, size_t max);

#endif
