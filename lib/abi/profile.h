/* Profiles: how one perf release turns a spec into a perf_event_attr.
 *
 * One static table in profile.c, each entry citing the perf source it
 * reproduces. A profile decides the defaults for an event with no modifier,
 * what each modifier letter sets or resets, which letters exist, its
 * validation errors, the attr `perf record -a -g` (or `perf stat -a`) adds
 * around the event, the attr size that release passes, and the fallbacks it
 * tries when the kernel says no. `raw` applies nothing: its specs carry the
 * exact members, "cycles[exclude_user,exclude_guest,precise_ip=2]". */
#ifndef PMUCANARY_PROFILE_H
#define PMUCANARY_PROFILE_H

#include "pmu.h"

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

struct profile;

enum profile_mode {
	PROFILE_MODE_RECORD, /* perf record -a -g: sampling with callchains */
	PROFILE_MODE_STAT,   /* perf stat -a: counting */
	PROFILE_MODE_COUNT
};

size_t profile_count(void);
const struct profile *profile_at(size_t i);
/* By name ("perf-6.1"), or by a release as `perf --version` prints it
 * ("perf version 6.1.187", "3.6.0"; see profile_for_release()). */
const struct profile *profile_find(const char *name);
const char *profile_name(const struct profile *p);
/* The perf releases (and commits) a profile stands for, one line. */
const char *profile_releases(const struct profile *p);
/* Modifier letters this release's parser accepts, in the order perf lists
 * them ("ukhpGH" ...). */
const char *profile_modifiers(const struct profile *p);
bool profile_is_raw(const struct profile *p);

/* Builds the attr this release passes to perf_event_open for spec. 0 on
 * success; a negative errno when the release rejects the spec, with the
 * message (pc_errmsg) perf's parser would give, naming spec and position. */
int profile_encode(const struct profile *p, const struct pmu_set *pmus,
		   const char *spec, enum profile_mode mode,
		   struct perf_event_attr *attr);

/* The release's retry-on-error chain. Zero the state before the first try.
 * After a try with *attr failed with err (positive errno), rewrites *attr
 * into the next try and returns true, with *why a short description of the
 * change ("clear exclude_guest/exclude_host: old kernel"); false when this
 * release would give up. */
struct profile_fallback_state {
	unsigned int done; /* bit mask of fallbacks already applied */
	int precise_start; /* for precise_ip fallbacks */
	enum profile_mode mode; /* zero: PROFILE_MODE_RECORD */
};
bool profile_fallback(const struct profile *p, struct profile_fallback_state *st,
		      struct perf_event_attr *attr, int err, const char **why);

/* Optional but exact: zeroes *st, records the mode (perf stat gives up
 * where perf record falls back) and arms the spec-dependent fallbacks (the
 * :P precise_ip walk needs to know the spec said P). A zeroed state without
 * this call behaves as record mode without the :P walk. */
int profile_fallback_begin(const struct profile *p, const struct pmu_set *pmus, const char *spec,
			   enum profile_mode mode, struct profile_fallback_state *st);

/* The profile standing for a perf release as `perf --version` prints it
 * ("perf version 6.1.187", "6.1.187", "3.6.0-rc2"); NULL when unparsable. */
const struct profile *profile_for_release(const char *version);

#endif
