/* Lab hosts: the kernel axis on one machine (design.md "kernel",
 * `pmucanary lab`).
 *
 * For each kernel under test (kernel.h) lab_run() runs `pmucanary run
 * SCENARIO` on a machine booted with that kernel: a place a run executes
 * (place.h). The built-in place is the lab host (place_labhost.c): a
 * transient libvirt domain (a fleet of one, fleet.h) running that kernel
 * with nested virtualization, the host's root shared read-only over
 * virtio-9p under a tmpfs overlay, the kernel's lab directory shared
 * writable at its own path, and the agent as /init in its lab role
 * (guest-images/agent_lab.c): it starts libvirtd and runs the run inside,
 * whose guests are KVM guests of the lab kernel's KVM.
 *
 * The place watches its machine like a guest (console to a file,
 * heartbeats, LAB lines, the panic device) and says how an attempt ended;
 * the lab's policy is the same for every place. When the machine panics,
 * resets or stops answering while the inner run has a batch armed (its
 * journal lives on this host's disk), the lab appends a host-down line
 * (journal.h) naming that batch HOST_CRASH or HOST_HANG with the machine's
 * evidence and starts a fresh attempt that resumes the run (`run
 * --resume`), so isolation still finishes. A machine that never gets
 * ready, or that is lost twice in a row with no batch armed, makes the
 * kernel INFRA: "boot" when the kernel never brought it up, else "infra".
 *
 * Layout under RESULTS/<lab-id>/:
 *   lab.json            what ran, per kernel, the diffs, the exit code
 *   matrix.txt, report.html, junit.xml   every kernel's run merged (rows
 *                       kernel x profile); junit against the base kernel
 *   diff-BASE-vs-NAME.{txt,json}         pmucanary diff from the base kernel
 *   NAME/               one kernel: scenario.ini, lab-context.json, lab-argv,
 *                       inner.log, libvirtd.log, the lab host consoles
 *                       (lab-host-N.console) and <run-id>/ with run.json
 *
 * Every cell's kernel is kernel_label() ("NAME (RELEASE, SHA)") and every
 * run.json carries "lab": which layer ran what, the outer host's
 * fingerprint, and the limitations that come with nesting. */
#ifndef PMUCANARY_LAB_H
#define PMUCANARY_LAB_H

#include "kernel.h"
#include "place.h"
#include "pool.h"

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>

#define LAB_MAX_KERNELS 16

/* Where a lab is, for a live progress line (never for verdicts). */
struct lab_progress {
	unsigned int kernel, kernels;  /* 1-based */
	const char *name;
	const char *step;              /* "image", "booting", "libvirtd", "run",
					* "lost", "report" */
	unsigned int boot;             /* lab hosts booted for this kernel */
	unsigned int judged;           /* batches the inner run judged so far */
	double elapsed_s;
	double eta_s;                  /* < 0 when unknown */
};

struct lab_opts {
	const char *scenario;          /* the INI file run inside every lab host */
	struct kernel *const *kernels; /* resolved (kernel_resolve), borrowed */
	size_t kernel_count;           /* 1..LAB_MAX_KERNELS */
	size_t base;                   /* the kernel the others are compared with */
	const char *const *perf_binaries; /* --perf-binary, passed to every run */
	size_t perf_binary_count;
	const char *selftest;          /* --selftest-harm SPEC[=HOW], passed on */
	const char *only_result;       /* --only RESULT: every kernel re-tests just its
					* red cells (run --only; a copy in each kernel's
					* directory is what the run inside reads) */
	const char *const *only_cells; /* --cell PROFILE:SPEC of it */
	size_t only_cell_count;
	const char *results_dir;       /* NULL: "results" */
	const char *uri;               /* NULL: qemu:///system */
	bool tcg;                      /* lab hosts under TCG even where KVM works */
	unsigned int memory_mib;       /* per lab host; 0: from the scenario's fleet */
	unsigned int vcpus;            /* per lab host; 0: online CPUs, at least 2 */
	unsigned int max_boots;        /* lab hosts per kernel; 0: 64 (a lab host
					* lost with nothing armed twice in a row
					* ends the kernel as INFRA sooner) */
	unsigned int timeout_s;        /* per kernel, from its first boot; 0: 6 h */
	unsigned int boot_timeout_ms;  /* a lab host's first heartbeat; 0: 3 min
					* under TCG, 1 min under KVM */
	bool verbose;                  /* the inner runs log with -v */
	const struct place_ops *place; /* where the runs execute; NULL: a lab host
					* (place_labhost_ops) */
	const char *const *place_options; /* the place's KEY=VALUE (may be NULL) */
	void (*progress)(void *ctx, const struct lab_progress *p);
	void *progress_ctx;
};

enum lab_status {
	LAB_STATUS_CLEAN,      /* the run inside finished, no harm */
	LAB_STATUS_HARM,       /* ... and found harm */
	LAB_STATUS_INFRA,      /* could not test this kernel */
	LAB_STATUS_COUNT
};
const char *lab_status_name(enum lab_status s);

struct lab_kernel_report {
	char *name, *label;
	char *dir;             /* RESULTS/<lab-id>/NAME */
	char *run_json;        /* its run.json, NULL when there is none */
	enum lab_status status;
	char *why;             /* INFRA: what could not be done */
	enum pool_failure failure; /* INFRA: boot (the kernel never brought its lab
				  * host up: no first heartbeat, or lost before
				  * ready every time) or infra */
	unsigned int boots;    /* lab hosts booted */
	unsigned int host_down;/* batches judged HOST_CRASH/HOST_HANG by the lab */
	unsigned int tcg_silent_retries; /* lab hosts gone silent under TCG whose
				  * batch was armed again before any verdict */
	double boot_s;         /* first lab host: start to first heartbeat */
	double ready_s;        /* first lab host: start to "ready" (libvirtd up) */
	double total_s;        /* the whole kernel */
};

struct lab_report {
	char *dir;             /* RESULTS/<lab-id> */
	char *id;
	GPtrArray *kernels;    /* struct lab_kernel_report * */
	int exit_code;         /* 0, 1, 125: like diff (one kernel: like run) */
	char *summary;         /* the lines to print */
};
void lab_report_clear(struct lab_report *rep);

/* Checks everything a lab needs before anything boots or is created (root,
 * the scenario, unique names, the base, the kernels' configs, the binaries,
 * the selftest word, a results path a lab host can mount, with user
 * xattrs): -EINVAL with one line. Warnings (a kernel without a config to
 * check, recommended options it lacks) are logged. */
int lab_validate(const struct lab_opts *o);

/* Validates, then runs every kernel in turn and writes the reports.
 * Returns 0 with rep->exit_code set (0, 1 or 125), -EINVAL for bad input
 * (nothing booted), -EINTR when a signal stopped it (lab hosts destroyed),
 * other -errno when the lab could not even be set up. */
int lab_run(const struct lab_opts *o, struct lab_report *rep);

/* Reads a --lab-context file (what lab_run writes for `pmucanary run`
 * inside a lab host): a JSON object whose "guest_boot_timeout_ms"
 * (1..3600000) and "guest_heartbeat_timeout_ms" (100..3600000, the
 * scenario's bounds), when present, are integers in range and whose
 * "limitations" is an array of strings. Anything else is -EINVAL with
 * "PATH: \"FIELD\": ..." (a timeout out of range is never ignored); a path
 * that cannot be read is infile_read()'s error. */
int lab_context_read(const char *path, json_t **out);

/* The KVM vendor a lab host gets from this machine: "amd" under TCG (QEMU
 * emulates SVM only), else the CPU's vendor; NULL when unknown. */
const char *lab_kvm_vendor(bool tcg);

/* Exposed for tests: the lab host's memory for a scenario's fleet. */
unsigned int lab_memory_mib(unsigned int guests, unsigned int guest_mib);

#endif
