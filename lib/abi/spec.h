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
	/* Terms that act after parsing, in the order given (struct
	 * spec_term); config/config1/config2 are already in config*. */
	GArray *terms;
	unsigned int terms_given; /* 1u << SPEC_TERM_* of every term given */
};

/* Parser rules that differ by perf release; a profile passes its set to
 * spec_parse_rules() (profile.c says which release has which). Zero is the
 * strictest reading: the grammar pmucanary modelled before issue 23. */
enum {
	/* The lexer drops a character that starts no token (parse-events.l
	 * ".  { }"): "' cpu-clock'", "cpu-clock: u". */
	SPEC_RULE_SKIP_CHARS = 1u << 0,
	/* EVENT: with no letters is EVENT (sep_dc / sep_slash_dc: ':'). */
	SPEC_RULE_EMPTY_MODS = 1u << 1,
	/* hw/sw symbols take a term list: cycles/period=1000/ (value_sym
	 * '/' event_config '/'). */
	SPEC_RULE_SYMBOL_TERMS = 1u << 2,
	/* raw and cache events take a term list (opt_event_config), then
	 * ':' or not: r1a8/period=10/, L1-dcache-loads/name=x/:u. */
	SPEC_RULE_EVENT_TERMS = 1u << 3,
	/* cpu-clock// (sep_slash_slash_dc '/' '/'). */
	SPEC_RULE_SYMBOL_EMPTY_TERMS = 1u << 4,
	/* parse_events_add_cache(): the first op and the first result win;
	 * a part of a kind already seen is ignored (L1-dcache-load-load). */
	SPEC_RULE_CACHE_FIRST_WINS = 1u << 5,
	/* sysfs event aliases match in any case (pmu_find_alias(),
	 * strcasecmp): msr/TSC/. */
	SPEC_RULE_ALIAS_ANY_CASE = 1u << 6,
	/* At most one event alias per term list: each alias carries a scale
	 * and check_info_data() refuses a second (msr/tsc,tsc/). */
	SPEC_RULE_ALIAS_ONCE = 1u << 7,
	/* Terms freq, time, inherit, no-inherit exist. */
	SPEC_RULE_TERMS_FREQ_TIME = 1u << 8,
	/* Term percore exists. */
	SPEC_RULE_TERM_PERCORE = 1u << 9,
};

/* A term whose effect is applied after parsing (evsel__apply_config_terms()
 * in perf record; perf stat ignores them or refuses them, see profile.c). */
enum spec_term_kind {
	SPEC_TERM_PERIOD,
	SPEC_TERM_FREQ,
	SPEC_TERM_TIME,
	SPEC_TERM_INHERIT,   /* inherit=N, and no-inherit=N as !N */
	SPEC_TERM_NAME,      /* name=, no attr member */
	SPEC_TERM_PERCORE,   /* percore=0/1, no attr member */
	SPEC_TERM_CONFIG,    /* config/config1/config2 */
	SPEC_TERM_COUNT
};

struct spec_term {
	enum spec_term_kind kind;
	uint64_t value;
	const char *name; /* the term as perf spells it ("no-inherit") */
};

/* Parses text against pmus (may be NULL: generic events and raw only).
 * Errors return -EINVAL/-ENOENT with a message naming the spec and the
 * 1-based character position: "cycles:x: unknown modifier 'x' at 8". */
int spec_parse(const char *text, const struct pmu_set *pmus, struct spec *out);
/* The same under a release's rules (SPEC_RULE_*); spec_parse() is rules 0. */
int spec_parse_rules(const char *text, const struct pmu_set *pmus, unsigned int rules,
		     struct spec *out);
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
