/* Guest pools: the machines a run watches, behind one ops table.
 *
 * A run asks a pool for guests (start), then for each batch marks the
 * start (mark), asks what happened since (judge) and has the harmed ones
 * brought back (restart_harmed). Backends are registered by name, the way
 * syzkaller's vm/vmimpl registers its VM types and libvirt its drivers:
 * "libvirt" (pool_libvirt.c: the local libvirt fleet of initramfs guests,
 * disk guests or both) is built in; a test registers its fake one and
 * drives the runner without libvirtd. A scenario picks one with
 * `[fleet] pool = NAME`.
 *
 * A start that fails says why, the way vmimpl tells a BootError from an
 * InfraError: POOL_FAILURE_BOOT when the guests were started and their
 * kernel or agent never came up (no first heartbeat, a panic while
 * booting): the guest image is at fault; POOL_FAILURE_INFRA when they
 * could not even be started (libvirt, QEMU, a missing image). Either way
 * the run is INFRA, never a verdict on the kernel under test. */
#ifndef PMUCANARY_POOL_H
#define PMUCANARY_POOL_H

#include "inject.h"
#include "outcome.h"

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>

#define POOL_DEFAULT "libvirt"
#define POOL_NAME_MAX 31       /* [a-z0-9_-], 1..31 characters */
#define POOL_BACKENDS_MAX 8

/* What a run asks of its guests (the scenario's [fleet] section). */
struct pool_spec {
	unsigned int guests, vcpus, memory_mib;
	const char *kernel;        /* "": the distribution's; IMAGE_SMALL_KERNEL */
	const char *initrd;        /* "": the one `pmucanary image` built */
	const char *disk;          /* "": initramfs guests; else an injected overlay */
	unsigned int disk_guests;  /* of guests, the disk guests; 0: all when disk */
	enum inject_disk_boot disk_boot;
	unsigned int heartbeat_ms, heartbeat_timeout_ms;
	unsigned int boot_timeout_ms; /* 0: the backend's default for its accel */
	bool restore;              /* restore harmed guests from a saved image */
};

/* How a pool is opened: the same for every backend, each taking what it
 * understands. */
struct pool_params {
	const char *uri;           /* libvirt: NULL for qemu:///system */
	bool tcg;                  /* libvirt: TCG even where /dev/kvm works */
	bool keep_disks;           /* libvirt: disk guests' overlays stay (run --keep) */
	void *user;                /* a backend's own context (a test's fake) */
};

enum pool_failure {
	POOL_FAILURE_NONE,
	POOL_FAILURE_BOOT,         /* started, never came up: the guest image */
	POOL_FAILURE_INFRA,        /* could not be started: the machine */
	POOL_FAILURE_COUNT
};
const char *pool_failure_name(enum pool_failure f);

struct pool_ops {
	const char *name;          /* [a-z0-9_-], 1..POOL_NAME_MAX */
	const char *what;          /* one line on what it drives */
	/* Required. close destroys any guest still up. */
	int (*open)(const struct pool_params *p, void **priv);
	void (*close)(void *priv);
	/* Boots the guests spec asks for, consoles under run_dir, and waits
	 * for each one's first heartbeat. *info (new reference) describes them
	 * for the journal; on failure *why says whose fault it was. */
	int (*start)(void *priv, const struct pool_spec *spec, const char *run_dir,
		     json_t **info, enum pool_failure *why);
	/* The start of a batch: verdicts are counted from here. -EINTR on a
	 * pending signal; an error when a guest could not report harm. */
	int (*mark)(void *priv);
	/* What happened since the mark: *outcome is OK, the worst harm or
	 * INFRA; *verdicts (new reference) an array of objects for the
	 * evidence. -EINTR: our own shutdown, no verdict at all. */
	int (*judge)(void *priv, enum outcome *outcome, json_t **verdicts);
	/* Brings back every guest harmed since the mark; waits for heartbeats. */
	int (*restart_harmed)(void *priv);
	/* Self-test: the guests harm themselves now, the agent's word for it
	 * (hbproto.h: panic, hang, corrupt, reboot, oops). */
	int (*selftest)(void *priv, const char *word);
	/* Destroys the guests (start may be called again). */
	void (*stop)(void *priv);
	/* Optional (NULL): how many guests are healthy now, for progress. */
	void (*health)(void *priv, unsigned int *healthy, unsigned int *total);
	/* Optional: every guest harmed since the mark, its evidence complete
	 * (the dwell ends then). */
	bool (*all_harmed)(void *priv);
	/* Optional: what became of each guest (new reference, an array), or
	 * NULL for nothing to say. */
	json_t *(*summary)(void *priv);
};

/* The built-in backend (pool_libvirt.c). */
extern const struct pool_ops pool_libvirt_ops;

/* Adds a backend. -EEXIST when its name is taken, -EINVAL for a bad name
 * or a required op missing, -ENOSPC past POOL_BACKENDS_MAX. Call before
 * any thread uses the registry (no lock). */
int pool_register(const struct pool_ops *ops);
/* The backend of that name (built-in or registered), or NULL. */
const struct pool_ops *pool_backend(const char *name);
/* Every backend's name, comma-separated (g_free): for messages. */
char *pool_backend_names(void);

struct pool {
	const struct pool_ops *ops;
	void *priv;
};

/* Opens the backend called name: -EINVAL "no guest pool named X (known:
 * ...)" for an unknown name, else what its open returns. */
int pool_open(const char *name, const struct pool_params *p, struct pool **out);
/* Closes it (its guests destroyed); NULL is fine. */
void pool_free(struct pool *pool);
typedef struct pool pool;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pool, pool_free)

#endif
