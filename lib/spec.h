/* What a perf user types: EVENT[:MODIFIERS].
 *
 * EVENT is a generic hardware/cache/software name as perf spells it
 * (cycles, cpu-cycles, instructions, ref-cycles, cache-misses,
 * L1-dcache-load-misses, cpu-clock, page-faults, ...), a sysfs event
 * pmu/event/, a term list pmu/config=0x..,umask=0x../ resolved through the
 * PMU's format/, or raw rNNNN. MODIFIERS is kept as text: what the letters
 * mean is a property of the perf release (see profile.h). */
#ifndef PMUCANARY_SPEC_H
#define PMUCANARY_SPEC_H

#include "pmu.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

enum spec_kind {
	SPEC_KIND_GENERIC_HW,    /* PERF_TYPE_HARDWARE */
	SPEC_KIND_GENERIC_CACHE, /* PERF_TYPE_HW_CACHE */
	SPEC_KIND_SOFTWARE,      /* PERF_TYPE_SOFTWARE */
	SPEC_KIND_SYSFS_EVENT,   /* pmu/event/ */
	SPEC_KIND_SYSFS_TERMS,   /* pmu/term=val,.../ */
	SPEC_KIND_RAW,           /* rNNNN */
	SPEC_KIND_COUNT
};

const char *spec_kind_name(enum spec_kind kind);

struct spec {
	char *text;          /* the whole spec as typed */
	enum spec_kind kind;
	char *event;         /* the EVENT part as typed */
	char *pmu;           /* sysfs PMU name, NULL for generic/raw */
	uint32_t type;       /* perf_event_attr.type */
	uint64_t config, config1, config2;
	char *modifiers;     /* text after ':' ("" when none), not yet interpreted */
	size_t modifiers_pos; /* 0-based offset of modifiers in text */
	bool sysfs_colon;    /* "pmu/ev/:mods": perf 6.1 rejects it, see profile.c */
};

/* Parses text against pmus (may be NULL: generic events and raw only).
 * Errors return -EINVAL/-ENOENT with a message naming the spec and the
 * 1-based character position: "cycles:x: unknown modifier 'x' at 8". */
int spec_parse(const char *text, const struct pmu_set *pmus, struct spec *out);
void spec_clear(struct spec *spec);
/* A number as perf's event parser reads it: decimal, or 0x.. hex ("010" is
 * ten). 0, -EINVAL (sign, space, quotes, "0X", garbage) or -ERANGE (past
 * 64 bits); *v is set only on success. */
int spec_number_parse(const char *s, uint64_t *v);

/* EVENT plus MODIFIERS the way perf spells it: "cycles:u" but "msr/tsc/u"
 * (perf's grammar puts sysfs modifiers right after the closing '/'; perf
 * 6.1 rejects "msr/tsc/:u"). Caller g_free()s. */
char *spec_join(const char *event, const char *modifiers);

/* Canonical names of the generic events perf offers, in perf's table order:
 * hardware, then software, then every cache op x result. NULL-terminated. */
const char *const *spec_generic_names(enum spec_kind kind);

#endif
