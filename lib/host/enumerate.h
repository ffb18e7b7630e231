/* Enumeration: which (profile, spec) pairs a probe or run sweeps.
 *
 * Events: every generic hardware, software and cache event perf knows
 * (spec_generic_names) and every event in a sysfs PMU's events/ directory,
 * as "pmu/event/". Not swept by default, because an open needs arguments
 * the sweep cannot invent: tracepoint (thousands of ids, no PMU sampling
 * path of interest), kprobe/uprobe (need a probe target), breakpoint (needs
 * an address), and sysfs events whose terms carry a '?' parameter. Any of
 * them can still be given with --event.
 *
 * Modifiers, for a profile that is not raw (letters in perf's order u k h,
 * p..., then G H; "" is the bare event):
 *   base:   every subset of {u,k,h} x every subset of {G,H} x 0-3 p = 128
 *   extras: each later letter the profile knows (I, P, D, e, S, W, b, ...)
 *           alone and with 0-3 p x every subset of {G,H}   = 16 per letter
 *   full:   every subset of all known letters but p x 0-3 p (replaces the
 *           two above; 2^letters x 4)
 * For raw: every subset of exclude_user/kernel/hv/idle/host/guest x
 * precise_ip 0-3, as "EVENT[exclude_user,exclude_guest,precise_ip=2]"
 * (64 x 4 = 256 per event; the bare event when nothing is set). */
#ifndef PMUCANARY_ENUMERATE_H
#define PMUCANARY_ENUMERATE_H

#include "pmu.h"
#include "profile.h"
#include "results.h"

#include <glib.h>
#include <stdbool.h>

/* The generic hardware and cache events belong to the core PMU, which perf
 * calls "cpu"; generic software events to "software". --pmu uses these. */
#define ENUMERATE_CORE_PMU "cpu"
#define ENUMERATE_SOFTWARE_PMU "software"

struct enumerate_opts {
	const char *const *pmus;     /* NULL-terminated; NULL or empty: all */
	const char *const *events;   /* NULL-terminated; NULL or empty: all */
	const char *const *profiles; /* NULL-terminated; NULL or empty: all */
	bool full;
};

struct enumerate_event {
	char *name;  /* as a spec's EVENT part: "cycles", "msr/tsc/" */
	char *pmu;   /* "cpu", "software", or the sysfs PMU */
};

struct enumerate_pair {
	const struct profile *profile;
	char *spec;
};

/* The modifier strings for a profile that knows `known` letters; appends
 * char * to out (caller's free function). */
void enumerate_modifiers(const char *known, bool full, GPtrArray *out);
/* The raw suffixes: "", "[exclude_user]", ..., "[...,precise_ip=3]" (256). */
void enumerate_raw_suffixes(GPtrArray *out);

/* The events to sweep, narrowed by opts->pmus and opts->events. An unknown
 * --pmu or an --event that is neither listed nor parses fails with -ENOENT
 * and a message naming it. */
int enumerate_events(const struct pmu_set *pmus, const struct enumerate_opts *opts,
		     GPtrArray **out /* struct enumerate_event * */);
/* The profiles to sweep; an unknown name fails with -ENOENT. */
int enumerate_profiles(const struct enumerate_opts *opts,
		       GPtrArray **out /* const struct profile * */);
/* All (profile, spec) pairs, profile-major. */
int enumerate_pairs(const struct pmu_set *pmus, const struct enumerate_opts *opts,
		    GPtrArray **out /* struct enumerate_pair * */);
void enumerate_event_free(struct enumerate_event *ev);
void enumerate_pair_free(struct enumerate_pair *pair);

/* Encodes every pair (PROFILE_MODE_RECORD) into a cell of set: with its
 * attr, or rejected (outcome EINVAL, "error", no tries). */
void enumerate_cells(const struct pmu_set *pmus, GPtrArray *pairs,
		     const char *kernel, struct result_set *set);

/* A sweep where no cell reaches the kernel tested nothing, and that is not
 * a clean result: the filters selected no cell, or every profile rejected
 * every spec. -EINVAL with "WHERE: nothing to test: ..." (WHERE: the
 * scenario; NULL: no prefix) unless some cell has an attr or real perf
 * binaries are swept (perf_binaries > 0: traced later, they always reach
 * the kernel). run and probe share this rule. */
int enumerate_check_testable(const struct result_set *set, unsigned int perf_binaries,
			     const char *where);

#endif
