/* PMUs as sysfs describes them: /sys/bus/event_source/devices/<pmu>/
 * {type, events/, format/, caps/}. The root is a parameter so tests can use
 * a fixture tree. */
#ifndef PMUCANARY_PMU_H
#define PMUCANARY_PMU_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define PMU_SYSFS_ROOT "/sys/bus/event_source/devices"

struct pmu_event {
	char *name;  /* "tsc", "cpu-cycles" */
	char *terms; /* the file's text, trimmed: "event=0x00", "event=0x3c,umask=0" */
};

struct pmu_format {
	char *name; /* "event", "umask" */
	char *bits; /* "config:0-7", "config1:0-63", "config:0-7,32-35" */
};

struct pmu {
	char *name;          /* directory name */
	uint32_t type;       /* contents of type */
	GPtrArray *events;   /* struct pmu_event *, sorted by name */
	GPtrArray *formats;  /* struct pmu_format *, sorted by name */
	GHashTable *caps;    /* char *name -> char *value (trimmed) */
};

struct pmu_set {
	char *root;
	GPtrArray *pmus;     /* struct pmu *, sorted by name */
};

/* Loads every PMU under root (NULL: PMU_SYSFS_ROOT). An unreadable or
 * malformed file fails with a message naming the path. */
int pmu_set_load(const char *root, struct pmu_set **out);
void pmu_set_free(struct pmu_set *set);
typedef struct pmu_set pmu_set;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(pmu_set, pmu_set_free)

const struct pmu *pmu_set_find(const struct pmu_set *set, const char *name);
const struct pmu *pmu_set_find_type(const struct pmu_set *set, uint32_t type);

const struct pmu_event *pmu_find_event(const struct pmu *pmu, const char *name);
const struct pmu_format *pmu_find_format(const struct pmu *pmu, const char *name);
/* Deposits value into config[0..2] (config, config1, config2) through the
 * format's bits, low value bits into low format bits, like perf's
 * pmu_format_value() (the ranges as one bitmap: order and overlap do not
 * matter).
 * -ERANGE when value has bits the ranges cannot hold. */
int pmu_format_apply(const struct pmu_format *f, uint64_t value, uint64_t config[3]);

#endif
