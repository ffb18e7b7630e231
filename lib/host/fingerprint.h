/* The host fingerprint (design.md "Flow of one run", step 1) as JSON:
 *
 * {"kernel": {"release", "version", "cmdline", "build_id": hex|null},
 *  "cpu": {"vendor", "family", "model", "stepping", "microcode",
 *          "model_name", "online": N},
 *  "pmus": [{"name", "type", "caps": {name: value}, "events": N,
 *            "formats": {name: bits}}],
 *  "hw_pmu": bool, "perf_event_paranoid": int|null, "nmi_watchdog": int|null,
 *  "kvm": {"<module>": {"<param>": "value"}}, "accel": "kvm"|"tcg",
 *  "accel_reason": "/dev/kvm is kvm_pvm, no kvm_intel/kvm_amd",
 *  "libvirt_version": "9.0.0"|null, "qemu_version": "7.2.22 (...)"|null}
 *
 * Anything the host does not expose is null, never an error: a fingerprint
 * describes, it does not judge. */
#ifndef PMUCANARY_FINGERPRINT_H
#define PMUCANARY_FINGERPRINT_H

#include "pmu.h"

#include <jansson.h>
#include <stdbool.h>

/* pmus may be NULL: the host's PMUs are loaded from PMU_SYSFS_ROOT. Only
 * failing to load those PMUs is an error. */
int fingerprint_collect(const struct pmu_set *pmus, json_t **out);

/* A hardware (CPU) PMU: one registered as PERF_TYPE_RAW or named cpu,
 * cpu_core, cpu_atom or armv8_* / armv7_*. */
bool fingerprint_pmu_is_hw(const char *name, uint32_t type);

/* "kvm" when dev_kvm opens read-write AND kvm_intel or kvm_amd is in
 * module_root (/sys/module; built-in modules appear there too), else "tcg":
 * a /dev/kvm from another module (kvm_pvm) cannot run ordinary guests.
 * *reason (may be NULL; caller g_free()s) says why, e.g. "/dev/kvm is
 * kvm_pvm, no kvm_intel/kvm_amd". */
const char *fingerprint_accel_detect(const char *dev_kvm, const char *module_root,
				     char **reason);
/* fingerprint_accel_detect("/dev/kvm", "/sys/module", NULL). */
const char *fingerprint_accel(void);

/* A number the kernel wrote (a /proc or /sys file, trimmed; a cpuinfo
 * field): a JSON integer when text is decimal (an optional '-') within
 * min..max, else null, "unknown": never a wrong number. */
json_t *fingerprint_number(const char *text, long long min, long long max);
/* The "cpu" object from a cpuinfo file (/proc/cpuinfo; tests give their
 * own): vendor, family, model, stepping, microcode, model_name, online. */
json_t *fingerprint_cpu_json(const char *cpuinfo_path);

/* The build id from an ELF note blob (/sys/kernel/notes); NULL if none. */
char *fingerprint_build_id(const unsigned char *notes, size_t len);

#endif
