/* A guest's configuration (struct fleet_config) and what follows from it
 * alone: the kernel command line, the disk overlay's path, which guests of
 * a mixed fleet boot the disk, and the libvirt domain XML. Pure: no libvirt,
 * no clock, no process state (the fleet passes its owner's pid and start
 * time), so tests compare the XML with golden files. fleet.h builds on it. */
#ifndef PMUCANARY_DOMXML_H
#define PMUCANARY_DOMXML_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

#define FLEET_DEFAULT_URI "qemu:///system"
#define FLEET_NAME_PREFIX "pmucanary-"
/* The domain metadata that names the run owning a domain (a restart reaps
 * what a killed run left by it). */
#define FLEET_META_URI "https://pmucanary.invalid/fleet/1"
#define FLEET_META_PREFIX "pc"

enum fleet_accel {
	FLEET_ACCEL_KVM,
	FLEET_ACCEL_TCG,
	FLEET_ACCEL_COUNT
};
const char *fleet_accel_name(enum fleet_accel a); /* "kvm", "tcg" */

/* A host directory shared with the guests over virtio-9p (lab hosts). */
struct fleet_share {
	const char *source;       /* absolute host directory */
	const char *tag;          /* the guest's mount tag */
	bool readonly;
	bool mapped;              /* accessmode mapped: the guest's owners and
				   * modes live in user xattrs, host files are
				   * QEMU's and 0600/0700 (no setuid files or
				   * device nodes from the guest); else passthrough */
};

struct fleet_config {
	const char *uri;          /* NULL: FLEET_DEFAULT_URI */
	const char *run_id;       /* NULL: "<pid>"; [A-Za-z0-9_.-] only */
	const char *run_dir;      /* console logs <run_dir>/<name>.console; made 0755 */
	unsigned int guests;      /* >= 1 */
	unsigned int vcpus;       /* 0: 1 */
	unsigned int memory_mib;  /* 0: 192 */
	const char *kernel;       /* bzImage, readable by the QEMU user */
	const char *initrd;       /* initramfs, readable by the QEMU user */
	unsigned int hb_interval_ms;  /* 0: HB_DEFAULT_INTERVAL_MS */
	unsigned int hb_timeout_ms;   /* 0: 2000 (kvm) / 5000 (tcg) */
	unsigned int boot_timeout_ms; /* 0: 30000 (kvm) / 120000 (tcg) */
	unsigned int parallel;    /* guests booting at once; 0: twice the online CPUs */
	bool force_tcg;           /* type='qemu' even where KVM works */
	bool no_work;             /* pmucanary.work=off */
	unsigned int canary_mib;  /* 0: the agent's default */
	const char *extra_cmdline;/* appended to the kernel command line */
	/* Machines that run the harness inside (lab hosts, lib/lab/lab.h): */
	const struct fleet_share *shares; /* 9p shares, passthrough access */
	size_t share_count;
	bool qemu_as_root;        /* <seclabel model='dac'> +0:+0: the shares read
				   * root-only files and create files as the guest's
				   * users; a deliberate choice for lab hosts only */
	bool nested;              /* expose the CPU's vmx/svm (and under KVM the
				   * vPMU) so that the guest can run KVM guests */
	/* Disk guests (lib/guests/inject.h): each incarnation of guest n boots on a
	 * fresh qcow2 <dir of disk>/<name>.qcow2 over disk, on virtio-blk
	 * (kernel and initrd are then the ones copied out of the image);
	 * removed when the guest stops unless keep_disks. */
	const char *disk;         /* an injected overlay; NULL: initramfs guests */
	const char *disk_root;    /* its root= word, e.g. "root=UUID=..." */
	/* A mixed fleet: the last disk_guests guests are disk guests (0: every
	 * guest when disk is set), the others initramfs guests on kernel and
	 * initrd. Disk guests boot disk_kernel and disk_initrd (NULL: kernel
	 * and initrd; "" initrd: none). */
	unsigned int disk_guests;
	const char *disk_kernel, *disk_initrd;
	bool keep_disks;          /* the last incarnation's overlays stay */
	/* Disk guests boot through the image's bootloader from the disk
	 * (SeaBIOS): no <kernel>; the agent gets the heartbeat interval and
	 * work setting as commands after its first heartbeat. */
	bool disk_bootloader;
	bool cold_restart;        /* restarts boot cold, never restore (fleet_restart_guest) */
};

/* What the host decides for every domain: the CPU mode libvirt offers
 * (host-passthrough under KVM, maximum under TCG where libvirt has it; NULL
 * or "": none), and the process that owns the domain, its pid and /proc
 * start time, for the domain's metadata. */
struct fleet_domain_host {
	const char *cpu_mode;
	int pid;
	unsigned long long start;
};

/* A run id names domains and files: 1..48 of [A-Za-z0-9_.-]. */
bool fleet_run_id_ok(const char *s);
/* The kernel command line the guests get. */
char *fleet_kernel_cmdline(const struct fleet_config *cfg);
/* Disk guests: the per-guest overlay of guest name (NULL without a disk). */
char *fleet_guest_disk(const struct fleet_config *cfg, const char *name);
/* Whether guest n boots the disk (cfg.disk, cfg.disk_guests). */
bool fleet_guest_is_disk(const struct fleet_config *cfg, unsigned int n);
/* Guest n's domain XML: type kvm or qemu, the kernel and initrd with the
 * fleet's command line (or <boot dev='hd'/> for a disk guest through its
 * bootloader), the owner in the metadata, the serial console to
 * console_path, the heartbeat channel, the isa panic device, and for lab
 * hosts the 9p shares, the nested CPU and the root seclabel. Caller
 * g_free()s. */
char *fleet_domain_xml_pure(const struct fleet_config *cfg, enum fleet_accel accel,
			    const char *name, const char *console_path, unsigned int n,
			    const struct fleet_domain_host *host);

#endif
