/* The binary axis: how each perf release turns a spec into the
 * perf_event_attr it passes to perf_event_open, and how it retries. One
 * static table (profiles[]) of data; the engine below interprets it. */
#include "profile.h"

#include "attr.h"
#include "log.h"
#include "spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How a release's modifier parser behaves (tools/perf/util/parse-events.c).
 * Every release read (3.0-era, 3.6, the 3.8-3.10-era, 3.1x-era, 4.8 and 5.2
 * get_event_modifier(), 6.1, today's parse_events__modifier_list()) starts
 * an event's exclude bits from zero and assigns all of them, so any modifier
 * string replaces event_attr_init()'s defaults (only group modifiers start
 * from the events' bits; groups are not modelled). */
enum {
	/* G and H exist (exclude_host/exclude_guest, 3.2). */
	MOD_GH = 1u << 0,
	/* 'p' sets exclude_guest unless G/H was given (1342798cc13e, 3.7). */
	MOD_P_SETS_EG = 1u << 1,
	/* 'u' sets exclude_guest unless G/H was given (943b69ac1884, Jin Yao,
	 * "perf parse-events: Set exclude_guest=1 for user-space counting",
	 * merged for 5.9 through perf-tools-fixes-for-v5.9). */
	MOD_U_SETS_EG = 1u << 2,
	/* check_modifier(): every letter but 'p' at most once, and at most
	 * strlen("ukhGHppp" + the other letters) characters. */
	MOD_NO_REPEAT = 1u << 3,
	/* "pmu/ev/:mods" is an event syntax error (observed in perf 6.1;
	 * assumed for today's perf, UNVERIFIED; older grammars UNVERIFIED,
	 * accepted). */
	MOD_NO_SYSFS_COLON = 1u << 4,
	/* No "precise > 3" check: the count lands in the 2-bit precise_ip
	 * bit-field, so :pppp wraps to 0 (parse_event_modifier() <= 3.1). */
	MOD_PRECISE_WRAPS = 1u << 5,
	/* 'W' on a single event is an error, "Weak modifier is for use with
	 * groups" (parse_events__modifier_list(), e30a7912f498, merged for
	 * 6.10 with tag perf-tools-for-v6.10-1-2024-05-21). Before that a lone
	 * cycles:W was accepted and did nothing: the weak-group retry needs
	 * an event that is not its own leader. Groups are not modelled, so
	 * every W fails. */
	MOD_WEAK_GROUP_ONLY = 1u << 6,
	/* perf stat takes only config, config1, config2, name, metric-id,
	 * period and percore terms: "'freq' is not usable in 'perf stat'"
	 * (config_term_avail() after parse_events__shrink_config_terms(),
	 * read @6.1; UNVERIFIED before). */
	MOD_STAT_TERMS_SHRUNK = 1u << 7,
};

/* Spec grammar rules per release (SPEC_RULE_* in spec.h). Read in perf's
 * parse-events.l/.y at three points: @3.6 (New-B/Linux3.6 b5154d3e),
 * @4.9 (keenetic/kernel-49 11c510be) and @6.1 (Debian's linux-source-6.1
 * 6.1.192, the source of /usr/bin/perf here); @3.10 and @3.18 for the
 * lexer's skip rule. A rule is given to a profile whose anchor release has
 * it; where the introducing commit was not found, the releases of a
 * profile's range before the first tree that has it are UNVERIFIED. */
#define RULES_36 (SPEC_RULE_EMPTY_MODS | SPEC_RULE_SYMBOL_TERMS)
/* @4.9: opt_event_config on raw and cache events; freq/time/inherit/...
 * terms; the ".  { }" lexer rule (absent @3.10, present @3.18). */
#define RULES_49 (RULES_36 | SPEC_RULE_EVENT_TERMS | SPEC_RULE_TERMS_FREQ_TIME | \
		  SPEC_RULE_SKIP_CHARS)
/* @6.1: sep_slash_slash_dc (cpu-clock//; @4.9 was sep_slash_dc, one '/'),
 * percore, strcasecmp() alias lookup, check_info_data() against a second
 * alias, parse_events_add_cache()'s first-op/first-result loop. Given to
 * perf-6.1 and carried to perf-6.10 .. perf-modern unread (UNVERIFIED: the
 * 6.10+ lexer and parse-events.c were rewritten); 5.10 .. 6.0 UNVERIFIED. */
#define RULES_61 (RULES_49 | SPEC_RULE_SYMBOL_EMPTY_TERMS | SPEC_RULE_TERM_PERCORE | \
		  SPEC_RULE_ALIAS_ANY_CASE | SPEC_RULE_ALIAS_ONCE | SPEC_RULE_CACHE_FIRST_WINS)

/* Defaults applied to every event before modifiers (event_attr_init()). */
enum {
	DEF_EXCLUDE_GUEST = 1u << 0, /* perf_guest == false */
};

/* Retry-on-error chain (util/evsel.c, builtin-record.c). */
enum {
	FB_CYCLES_TO_CPU_CLOCK = 1u << 0, /* hw cycles: cycles_errs -> cpu-clock */
	FB_MISSING_EXCLUDE_GH = 1u << 1,  /* EINVAL: clear exclude_guest/host (pre-3.2 kernel) */
	FB_PRECISE_MAX = 1u << 2,         /* :P: precise_ip 3 -> 0, on any error */
	FB_EOPNOTSUPP_SET_EG = 1u << 3,   /* EOPNOTSUPP: set exclude_guest (today's perf) */
	FB_MISSING_SAMPLE_ID_ALL = 1u << 4, /* EINVAL: clear sample_id_all (pre-2.6.38 kernel) */
	/* EINVAL: retry without PERF_FLAG_FD_CLOEXEC; the attr is unchanged
	 * (observed in perf 6.1 between the LOST and exclude_guest steps). */
	FB_CLOEXEC = 1u << 5,
	/* EINVAL: kernel features are probed with a software event
	 * (evsel__detect_missing_features() since 3b193a57baf1, 6.13) instead
	 * of being guessed from the failing event, and the :P walk comes after
	 * that probe. Modelled as one retry without PERF_FORMAT_LOST (what a
	 * pre-5.19 kernel lacks); cloexec, exclude_guest/host and sample_id_all
	 * are only cleared on kernels older than 3.14/3.12, not modelled. */
	FB_PROBED_FEATURES = 1u << 6,
	/* EACCES -> exclude_kernel is skipped when the event excludes user
	 * ("If event has exclude user then don't exclude kernel", evsel.c). */
	FB_EACCES_UNLESS_USER = 1u << 7,
};

enum {
	ERRS_ENOENT_ENXIO = 1,       /* 3.x builtin-record.c */
	ERRS_ENOENT_ENXIO_ENODEV,    /* evsel__fallback() */
};

/* What `perf record -a -g` puts around the event. */
enum record_style {
	RECORD_NONE,   /* raw: nothing */
	RECORD_V3,     /* 3.x: main event is the tracking event */
	/* 4.x .. 5.x: as RECORD_V61 without PERF_FORMAT_LOST, which perf only
	 * asks for since 6.0 (kernel 5.19). UNVERIFIED beyond that difference. */
	RECORD_V4,
	RECORD_V61,    /* 6.1: dummy tracking event, main event samples only */
};

struct profile {
	const char *name;
	const char *releases;
	const char *letters;     /* modifier letters the parser accepts */
	unsigned int mods;       /* MOD_* */
	unsigned int defaults;   /* DEF_* */
	unsigned int fallbacks;  /* FB_* */
	uint32_t attr_size;      /* sizeof(struct perf_event_attr) it was built with */
	enum record_style record;
	unsigned int cycles_errs; /* errnos that trigger the cycles fallback */
	unsigned int first, last; /* release range, major*100+minor */
	unsigned int rules;      /* SPEC_RULE_*: the release's spec grammar */
	bool raw;
};

/* The binary axis, oldest first. "Verified" names the source read for an
 * entry (repo@commit, or the lore/linux-next mail a commit was merged by);
 * everything else is marked UNVERIFIED. One profile per release where the
 * modifier encoding, the accepted letters or the default exclude bits
 * changed. */
static const struct profile profiles[] = {
	{
		/* perf 3.0-3.1: the hand-written parse_event_modifier() of
		 * util/parse-events.c (read in a 3.0/3.1-era tree with
		 * perf_evlist, via the code index, not a tagged checkout):
		 * letters ukhp, no G/H, no event_attr_init() so no exclude_guest
		 * default, no "precise > 3" check (the count wraps in the 2-bit
		 * field), unknown letters end the modifier and fail the event.
		 * UNVERIFIED: attr size (assumed sizeof = VER1) and the
		 * record/stat members (assumed as 3.6); no 3.0/3.1 tree was
		 * found in the index to settle them. */
		.name = "perf-3.1",
		.releases = "perf 3.0 .. 3.1 (no G/H modifiers)",
		.first = 300, .last = 301,
		.letters = "ukhp",
		.mods = MOD_PRECISE_WRAPS,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL,
		.attr_size = PERF_ATTR_SIZE_VER1,
		.record = RECORD_V3,
	},
	{
		/* perf 3.2-3.6. Verified @v3.6 (New-B/Linux3.6 b5154d3e):
		 * util/util.c perf_guest = false, event_attr_init() sets
		 * exclude_guest on every event; parse-events.c
		 * parse_events_modifier() starts from eu=ek=eh=eH=eG=0 and
		 * assigns all of them, so ANY modifier string clears the default
		 * exclude_guest and 'p' does not set it (cycles:pp counts guests);
		 * precise > 3 is -EINVAL; repeats allowed. util/evsel.c
		 * perf_evsel__config(); builtin-record.c perf_record__open()
		 * fallbacks: EINVAL + exclude_guest/host -> clear both, EINVAL ->
		 * no sample_id_all, ENOENT/ENXIO + hw cycles -> cpu-clock. Every
		 * util.c of this era in the index (3.3-3.6 shapes) has perf_guest
		 * = false. UNVERIFIED: 3.2-3.5 assumed identical, and whether G/H
		 * and event_attr_init() arrived in 3.2 or 3.3 (the kernel bits
		 * are 3.2; the tool side may be 3.3, then 3.2 would be perf-3.1). */
		.name = "perf-3.6",
		.releases = "perf 3.2 .. 3.6 (before 1342798cc13e)",
		.first = 302, .last = 306,
		.letters = "ukhpGH",
		.rules = RULES_36,
		.mods = MOD_GH,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL | FB_MISSING_EXCLUDE_GH,
		.cycles_errs = ERRS_ENOENT_ENXIO,
		.attr_size = PERF_ATTR_SIZE_VER2,
		.record = RECORD_V3,
	},
	{
		/* perf 3.7: 1342798cc13e, 'p' sets exclude_guest unless G/H was
		 * given. The rule itself is verified in the 3.8-3.10-era
		 * get_event_modifier() (same "use of precise requires
		 * exclude_guest" branch, code index) and by the commit that
		 * removed it in 6.13 (88bc63d00eb6, "I found the commit
		 * 1342798cc13e set the exclude_guest for precise_ip in the
		 * tool", lkml 2024-09-05). Size VER3 (sample_regs_user/
		 * stack_user, 3.7). UNVERIFIED: no 3.7 tree is in the index (the
		 * parse_events_modifier() copies found all predate the commit),
		 * so the 3.7 parser (repeats allowed, no check_modifier()) and
		 * builtin-record.c fallbacks are 3.6's plus the commit. */
		.name = "perf-3.7",
		.releases = "perf 3.7 (1342798cc13e: p sets exclude_guest)",
		.first = 307, .last = 307,
		.letters = "ukhpGH",
		.rules = RULES_36,
		.mods = MOD_GH | MOD_P_SETS_EG,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL | FB_MISSING_EXCLUDE_GH,
		.cycles_errs = ERRS_ENOENT_ENXIO,
		.attr_size = PERF_ATTR_SIZE_VER3,
		.record = RECORD_V3,
	},
	{
		/* perf 3.8 .. 3.11: get_event_modifier() + check_modifier()
		 * ("ukhGHppp": no letter but p twice, at most 8 characters),
		 * 'p' still sets exclude_guest: the kernel's 20b279ddb38c was
		 * reverted, the tool's 1342798cc13e was not (it stayed until
		 * 6.13). Verified in a 3.8-3.10-era util/parse-events.c (code
		 * index: group modifiers, list_for_each_entry, no S letter).
		 * UNVERIFIED: check_modifier() arriving exactly in 3.8 (with the
		 * group syntax), S arriving in 3.12, record/stat members (as
		 * 3.6). */
		.name = "perf-3.8",
		.releases = "perf 3.8 .. 3.11 (repeated modifier letters rejected)",
		.first = 308, .last = 311,
		.letters = "ukhpGH",
		.rules = RULES_36,
		.mods = MOD_GH | MOD_P_SETS_EG | MOD_NO_REPEAT,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL | FB_MISSING_EXCLUDE_GH,
		.cycles_errs = ERRS_ENOENT_ENXIO,
		.attr_size = PERF_ATTR_SIZE_VER3,
		.record = RECORD_V3,
	},
	{
		/* perf 3.12 .. 4.0: S (sample_read) and D (pinned) exist,
		 * check_modifier("ukhGHpppSD"). Letter set verified in a
		 * 3.1x-era util/parse-events.c (code index: __evlist__for_each,
		 * perf_pmu_events_list, no I/P). End verified: 'I' arrived in
		 * 4.1 (a1e12da4796a, tag perf-core-for-mingo 2015-04-08, merged
		 * for 4.1). UNVERIFIED: S and D both from 3.12 (D may be later,
		 * then 3.12.. rejects :D), the cloexec retry (3.16?) left out,
		 * size VER3 (3.19 and 4.0 pass VER4), record members as 3.6. */
		.name = "perf-3.12",
		.releases = "perf 3.12 .. 4.0 (S, D letters)",
		.first = 312, .last = 400,
		.letters = "ukhpGHSD",
		.rules = RULES_36,
		.mods = MOD_GH | MOD_P_SETS_EG | MOD_NO_REPEAT,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL | FB_MISSING_EXCLUDE_GH,
		.cycles_errs = ERRS_ENOENT_ENXIO,
		.attr_size = PERF_ATTR_SIZE_VER3,
		.record = RECORD_V3,
	},
	{
		/* perf 4.1 .. 4.14: I (exclude_idle) and P (precise_max) exist,
		 * no W. Verified @4.8 (WindRiver-Labs/kernel-4.8.x 0731b7fa,
		 * util/parse-events.c get_event_modifier() letters
		 * ukhGHpIPSD, check_modifier("ukhGHpppPSDI"), 'p' sets
		 * exclude_guest unless G/H). I from 4.1 verified (above).
		 * UNVERIFIED: P from 4.1 (may be 4.4), W from 4.15, size VER5
		 * (aux_watermark, 4.1), record members and fallbacks taken from
		 * the 4.19-era entry (cloexec, :P walk, ENODEV). */
		.name = "perf-4.8",
		.releases = "perf 4.1 .. 4.14 (I, P letters; no W)",
		.first = 401, .last = 414,
		.letters = "ukhpPGHSDI",
		.rules = RULES_49,
		.mods = MOD_GH | MOD_P_SETS_EG | MOD_NO_REPEAT,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL | FB_MISSING_EXCLUDE_GH |
			     FB_PRECISE_MAX | FB_CLOEXEC,
		.cycles_errs = ERRS_ENOENT_ENXIO_ENODEV,
		.attr_size = PERF_ATTR_SIZE_VER5,
		.record = RECORD_V4,
	},
	{
		/* perf 4.15 .. 5.8: W (weak group) added; 'u' does not set
		 * exclude_guest yet. Verified @5.2 (WindRiver-Labs/
		 * linux-yocto-5.2 05d1e5e6, util/parse-events.c
		 * check_modifier("ukhGHpppPSDIW")). End verified: 'u' sets
		 * exclude_guest from 5.9 (below). UNVERIFIED: W from 4.15, size
		 * VER5 (5.5 .. 5.8 pass VER6), record members (no
		 * PERF_FORMAT_LOST before 6.0; the rest as 6.1). */
		.name = "perf-4.19",
		.releases = "perf 4.15 .. 5.8 (W letter, u leaves exclude_guest clear)",
		.first = 415, .last = 508,
		.letters = "ukhpPGHSDIW",
		.rules = RULES_49,
		.mods = MOD_GH | MOD_P_SETS_EG | MOD_NO_REPEAT,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL | FB_MISSING_EXCLUDE_GH |
			     FB_PRECISE_MAX | FB_CLOEXEC,
		.cycles_errs = ERRS_ENOENT_ENXIO_ENODEV,
		.attr_size = PERF_ATTR_SIZE_VER5,
		.record = RECORD_V4,
	},
	{
		/* perf 5.9: 'u' sets exclude_guest unless G/H (943b69ac1884,
		 * Jin Yao, in tags/perf-tools-fixes-for-v5.9-2020-09-01, so in
		 * 5.9 itself), before 'e' (0997a2662fa3, in the "perf tools
		 * changes for v5.10" pull, lkml 2020-10-15). Letters as 5.2.
		 * Size VER6 (aux_sample_size, 5.5). UNVERIFIED: record members
		 * (as perf-4.19). */
		.name = "perf-5.9",
		.releases = "perf 5.9 (943b69ac1884: u sets exclude_guest; no e/b)",
		.first = 509, .last = 509,
		.letters = "ukhpPGHSDIW",
		.rules = RULES_49,
		.mods = MOD_GH | MOD_P_SETS_EG | MOD_U_SETS_EG | MOD_NO_REPEAT,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL | FB_MISSING_EXCLUDE_GH |
			     FB_PRECISE_MAX | FB_CLOEXEC,
		.cycles_errs = ERRS_ENOENT_ENXIO_ENODEV,
		.attr_size = PERF_ATTR_SIZE_VER6,
		.record = RECORD_V4,
	},
	{
		/* Debian 12's perf 6.1. Verified by running /usr/bin/perf
		 * 6.1.187 (`perf stat -vv -a`, `perf record -vv -a -g`) for every
		 * letter and combinations: default exclude_guest=1; 'u' and 'p'
		 * set exclude_guest unless G/H (943b69ac1884, 5.9); 'k'/'h'
		 * alone clear it; repeated letters and pppp rejected; size 128
		 * (VER7); :P gives precise_ip=3 in record; :S adds SAMPLE_READ.
		 * End verified: the 6.10 modifier rewrite rejects a lone W
		 * (perf-6.10 below). UNVERIFIED for the rest of the range: 'b'
		 * (bperf, 01bd8efcec44) arrived in 5.13, so 5.10 .. 5.12 reject
		 * :b that this profile accepts; 5.10 .. 5.19 ask no
		 * PERF_FORMAT_LOST and pass size 120; 6.3 .. 6.9 pass 136
		 * (config3). */
		.name = "perf-6.1",
		.releases = "perf 5.10 .. 6.9 (Debian 12 perf 6.1)",
		.first = 510, .last = 609,
		.letters = "ukhpPGHSDIWeb",
		.rules = RULES_61,
		.mods = MOD_GH | MOD_P_SETS_EG | MOD_U_SETS_EG | MOD_NO_REPEAT | MOD_NO_SYSFS_COLON |
			MOD_STAT_TERMS_SHRUNK,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_EXCLUDE_GH | FB_PRECISE_MAX |
			     FB_MISSING_SAMPLE_ID_ALL | FB_CLOEXEC,
		.cycles_errs = ERRS_ENOENT_ENXIO_ENODEV,
		.attr_size = PERF_ATTR_SIZE_VER7,
		.record = RECORD_V61,
	},
	{
		/* perf 6.10 .. 6.12: Ian Rogers' rewrite of modifier parsing
		 * (e30a7912f498, "perf parse-events: Improvements to modifier
		 * parsing", merged for 6.10) rejects W outside a group with
		 * "Weak modifier is for use with groups"; everything else gives
		 * the bits of 6.1: 'p' is applied before G/H but the result is
		 * order-independent, repeats are rejected by the lexer, precise
		 * > 3 is still an error. Verified in the patch mail (lkml
		 * 2024-04-16, v2 13/16, the version applied) and in every later
		 * copy of parse-events.c in the code index; the v6.10 file itself
		 * was not read. Size 136 (config3 is in the uapi header perf
		 * builds with since 6.3). UNVERIFIED: 6.12 also accepts 'R'
		 * (33bbad5cd3a0, no attr member), not modelled: this profile
		 * rejects :R. */
		.name = "perf-6.10",
		.releases = "perf 6.10 .. 6.12 (W only on groups)",
		.first = 610, .last = 612,
		.letters = "ukhpPGHSDIWeb",
		.rules = RULES_61,
		.mods = MOD_GH | MOD_P_SETS_EG | MOD_U_SETS_EG | MOD_NO_REPEAT | MOD_NO_SYSFS_COLON |
			MOD_WEAK_GROUP_ONLY |
			MOD_STAT_TERMS_SHRUNK,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_EXCLUDE_GH | FB_PRECISE_MAX |
			     FB_MISSING_SAMPLE_ID_ALL | FB_CLOEXEC,
		.cycles_errs = ERRS_ENOENT_ENXIO_ENODEV,
		.attr_size = 136 /* PERF_ATTR_SIZE_VER8 */,
		.record = RECORD_V61,
	},
	{
		/* perf 6.13 .. 6.17: Namhyung Kim's series bb6e7cb11d97 ("Add
		 * fallback for exclude_guest"), 35c8d21371e9 ("Don't set
		 * attr.exclude_guest by default"), 88bc63d00eb6 ("Do not set
		 * exclude_guest for precise_ip"), 3b193a57baf1 ("Detect missing
		 * kernel features properly"), in linux-next 2024-10-24 among the
		 * for-6.13 branches, so 6.13; dcbe6e51a0bb (6.17, in 6.15/6.16
		 * stable) only moves exclude_GH_default, false outside perf kvm.
		 * Verified in util/parse-events.c parse_events__modifier_list()
		 * (post-dcbe6e51a0bb copy in the code index): no default and no
		 * letter sets exclude_guest, G/H as before, combined precise > 3
		 * is an error; util/util.c event_attr_init() returns before the
		 * exclude bits when !exclude_GH_default; util/evsel.c (a
		 * 6.14+ copy with hwmon/tool PMUs): evsel__fallback() keeps
		 * cycles -> cpu-clock on ENOENT/ENXIO/ENODEV, EACCES ->
		 * exclude_kernel unless exclude_user, and adds EOPNOTSUPP ->
		 * exclude_guest unless already set or G/H given; EINVAL only
		 * retries for features a software-event probe finds missing,
		 * then the :P walk. W only on groups (perf-6.10); R (retirement
		 * latency, 33bbad5cd3a0, 6.12) sets no attr member; no X before
		 * 6.18 (perf-modern). Size VER8 (config3, 6.3). UNVERIFIED: perf
		 * stat's EOPNOTSUPP path, pmu/ev/:mods rejection. */
		.name = "perf-6.13",
		.releases = "perf 6.13 .. 6.17 (no default exclude_guest, EOPNOTSUPP retry)",
		.first = 613, .last = 617,
		.letters = "ukhpPGHSDIWebR",
		.rules = RULES_61,
		.mods = MOD_GH | MOD_NO_REPEAT | MOD_NO_SYSFS_COLON | MOD_WEAK_GROUP_ONLY |
			MOD_STAT_TERMS_SHRUNK,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_PRECISE_MAX | FB_EOPNOTSUPP_SET_EG |
			     FB_PROBED_FEATURES | FB_EACCES_UNLESS_USER,
		.cycles_errs = ERRS_ENOENT_ENXIO_ENODEV,
		.attr_size = 136 /* PERF_ATTR_SIZE_VER8 */,
		.record = RECORD_V61,
	},
	{
		/* Today's perf: perf-6.13 plus the X letter (035c17893082,
		 * "perf parse-events: Add 'X' modifier to exclude an event from
		 * being regrouped", listed in the "perf tools changes for v6.18"
		 * pull, 2025-10-08). X only keeps the event out of topdown
		 * regrouping (evsel->dont_regroup): no attr member. */
		.name = "perf-modern",
		.releases = "perf 6.18 .. today (X letter)",
		.first = 618, .last = 9999,
		.letters = "ukhpPGHSDIWebRX",
		.rules = RULES_61,
		.mods = MOD_GH | MOD_NO_REPEAT | MOD_NO_SYSFS_COLON | MOD_WEAK_GROUP_ONLY |
			MOD_STAT_TERMS_SHRUNK,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_PRECISE_MAX | FB_EOPNOTSUPP_SET_EG |
			     FB_PROBED_FEATURES | FB_EACCES_UNLESS_USER,
		.cycles_errs = ERRS_ENOENT_ENXIO_ENODEV,
		.attr_size = 136 /* PERF_ATTR_SIZE_VER8 */,
		.record = RECORD_V61,
	},
	{
		/* The attr exactly as enumerated: no defaults, no modifiers, no
		 * fallbacks. In record mode it still carries perf-6.1's sampling
		 * members (freq 4000, callchain, ...) so the load phase samples;
		 * members given in [...] override them. */
		.name = "raw",
		.releases = "none: the attr exactly as enumerated, EVENT[member,member=value]",
		.letters = "",
		.attr_size = PERF_ATTR_SIZE_VER7,
		.record = RECORD_V61,
		.raw = true,
	},
};

size_t profile_count(void)
{
	return G_N_ELEMENTS(profiles);
}

const struct profile *profile_at(size_t i)
{
	return i < G_N_ELEMENTS(profiles) ? &profiles[i] : NULL;
}

const struct profile *profile_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < G_N_ELEMENTS(profiles); i++)
		if (strcmp(profiles[i].name, name) == 0)
			return &profiles[i];
	/* "perf version 6.1.187" or "6.1.187": the profile of that release. */
	if (g_str_has_prefix(name, "perf version ") || g_ascii_isdigit(name[0]))
		return profile_for_release(name);
	return NULL;
}

const char *profile_name(const struct profile *p)
{
	return p ? p->name : "?";
}

const char *profile_releases(const struct profile *p)
{
	return p ? p->releases : "";
}

const char *profile_modifiers(const struct profile *p)
{
	return p ? p->letters : "";
}

bool profile_is_raw(const struct profile *p)
{
	return p && p->raw;
}

/* The modifier state perf's parser keeps while reading the letters. */
struct mod_state {
	int eu, ek, eh, eH, eG, eI, precise, precise_max, pinned, exclusive, sample_read;
};

struct mod_extra {
	bool precise_max, sample_read;
};

static int modifiers_apply(const struct profile *p, const struct spec *sp,
			   struct perf_event_attr *attr, struct mod_extra *x)
{
	const char *str = sp->modifiers;
	struct mod_state m = { 0 };
	int exclude, exclude_GH;

	memset(x, 0, sizeof(*x));
	if (!*str)
		return 0;
	if (sp->sysfs_colon && (p->mods & MOD_NO_SYSFS_COLON))
		return pc_fail(EINVAL, "%s: %s wants modifiers right after '/', no ':', at %zu",
			       sp->text, p->name, sp->modifiers_pos);
	exclude = 0;
	exclude_GH = 0;
	for (const char *c = str; *c; c++) {
		size_t pos = sp->modifiers_pos + (c - str) + 1;

		if (!strchr(p->letters, *c))
			return pc_fail(EINVAL, "%s: unknown modifier '%c' at %zu (%s knows '%s')",
				       sp->text, *c, pos, p->name, p->letters);
		if ((p->mods & MOD_NO_REPEAT) && *c != 'p' && strchr(c + 1, *c))
			return pc_fail(EINVAL, "%s: repeated modifier '%c' at %zu", sp->text, *c,
				       sp->modifiers_pos + (strchr(c + 1, *c) - str) + 1);
		switch (*c) {
		case 'u':
			if (!exclude)
				exclude = m.eu = m.ek = m.eh = 1;
			if ((p->mods & MOD_U_SETS_EG) && !exclude_GH)
				m.eG = 1;
			m.eu = 0;
			break;
		case 'k':
			if (!exclude)
				exclude = m.eu = m.ek = m.eh = 1;
			m.ek = 0;
			break;
		case 'h':
			if (!exclude)
				exclude = m.eu = m.ek = m.eh = 1;
			m.eh = 0;
			break;
		case 'G':
			if (!exclude_GH)
				exclude_GH = m.eG = m.eH = 1;
			m.eG = 0;
			break;
		case 'H':
			if (!exclude_GH)
				exclude_GH = m.eG = m.eH = 1;
			m.eH = 0;
			break;
		case 'I':
			m.eI = 1;
			break;
		case 'p':
			m.precise++;
			if ((p->mods & MOD_P_SETS_EG) && !exclude_GH)
				m.eG = 1;
			break;
		case 'P':
			m.precise_max = 1;
			break;
		case 'S':
			m.sample_read = 1;
			break;
		case 'D':
			m.pinned = 1;
			break;
		case 'e':
			m.exclusive = 1;
			break;
		default: /* W, b, R, X: no attr member */
			break;
		}
	}
	if ((p->mods & MOD_NO_REPEAT) && strlen(str) > strlen(p->letters) + 2)
		return pc_fail(EINVAL, "%s: modifier string too long at %zu", sp->text,
			       sp->modifiers_pos + 1);
	if ((p->mods & MOD_WEAK_GROUP_ONLY) && strchr(str, 'W'))
		return pc_fail(EINVAL, "%s: Weak modifier is for use with groups at %zu", sp->text,
			       sp->modifiers_pos + 1);
	if (p->mods & MOD_PRECISE_WRAPS)
		m.precise &= 3;
	if (m.precise > 3)
		return pc_fail(EINVAL, "%s: precise_ip %d > 3 (too many 'p') at %zu", sp->text,
			       m.precise, sp->modifiers_pos + 4);
	attr->exclude_user = m.eu;
	attr->exclude_kernel = m.ek;
	attr->exclude_hv = m.eh;
	attr->exclude_idle = m.eI;
	attr->precise_ip = m.precise;
	if (p->mods & MOD_GH) {
		attr->exclude_host = m.eH;
		attr->exclude_guest = m.eG;
	}
	if (m.pinned)
		attr->pinned = 1;
	if (m.exclusive)
		attr->exclusive = 1;
	x->precise_max = m.precise_max;
	x->sample_read = m.sample_read;
	return 0;
}

/* The spec's terms in perf stat: config_term_avail() after
 * parse_events__shrink_config_terms() refuses all but a few; the rest have
 * no attr member there (create_perf_stat_counter() applies no config
 * terms). */
static int stat_terms_check(const struct profile *p, const struct spec *sp)
{
	if (!(p->mods & MOD_STAT_TERMS_SHRUNK))
		return 0;
	for (guint i = 0; i < sp->terms->len; i++) {
		const struct spec_term *t = &g_array_index(sp->terms, struct spec_term, i);

		if (t->kind == SPEC_TERM_FREQ || t->kind == SPEC_TERM_TIME ||
		    t->kind == SPEC_TERM_INHERIT)
			return pc_fail(EINVAL, "%s: '%s' is not usable in 'perf stat' (%s)", sp->text,
				       t->name, p->name);
	}
	return 0;
}

/* evsel__apply_config_terms() at the end of evsel__config() (perf record),
 * in the order the terms were given; then evlist__config() picks
 * PERF_SAMPLE_IDENTIFIER only when the event's sample_type differs from the
 * dummy tracking event's (IP|TID|TIME|CALLCHAIN|CPU), else PERF_SAMPLE_ID
 * (observed in perf 6.1: cpu-clock/period=1000/ samples ID). Older releases
 * UNVERIFIED: the same effects assumed, the ID choice only for 6.1. */
static void record_terms_apply(const struct profile *p, const struct spec *sp,
			       struct perf_event_attr *attr)
{
	const uint64_t dummy = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_CPU;

	if (!sp || !sp->terms->len)
		return;
	for (guint i = 0; i < sp->terms->len; i++) {
		const struct spec_term *t = &g_array_index(sp->terms, struct spec_term, i);

		switch (t->kind) {
		case SPEC_TERM_PERIOD:
			attr->sample_period = t->value;
			attr->freq = 0;
			attr->sample_type &= ~(uint64_t)PERF_SAMPLE_PERIOD;
			break;
		case SPEC_TERM_FREQ:
			attr->sample_freq = t->value;
			attr->freq = 1;
			attr->sample_type |= PERF_SAMPLE_PERIOD;
			break;
		case SPEC_TERM_TIME:
			if (t->value)
				attr->sample_type |= PERF_SAMPLE_TIME;
			else
				attr->sample_type &= ~(uint64_t)PERF_SAMPLE_TIME;
			break;
		case SPEC_TERM_INHERIT:
			attr->inherit = t->value ? 1 : 0;
			break;
		default: /* name, percore, config*: nothing here */
			break;
		}
	}
	if (p->record == RECORD_V61 &&
	    (attr->sample_type & ~(uint64_t)(PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) == dummy) {
		attr->sample_type &= ~(uint64_t)PERF_SAMPLE_IDENTIFIER;
		attr->sample_type |= PERF_SAMPLE_ID;
	}
}

static void mode_apply(const struct profile *p, enum profile_mode mode,
		       struct perf_event_attr *attr, const struct mod_extra *x)
{
	if (mode == PROFILE_MODE_STAT) {
		/* create_perf_stat_counter(): no evsel__config(); -a still
		 * marks counters disabled and inherited. */
		attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		attr->inherit = 1;
		if (p->record >= RECORD_V4) {
			/* Observed from Debian's perf 6.1 stat -a (4.x/5.x
			 * assumed the same, UNVERIFIED). */
			attr->disabled = 1;
			attr->sample_type = PERF_SAMPLE_IDENTIFIER;
		}
		/* 3.6 builtin-stat.c create_perf_stat_counter(): with -a (a
		 * CPU target) no disabled/enable_on_exec; scale gives the
		 * TOTAL_TIME read_format; inherit = !no_inherit. */
		return;
	}
	if (p->record == RECORD_NONE)
		return;
	attr->disabled = 1;
	attr->inherit = 1;
	attr->freq = 1;
	attr->sample_period = 4000; /* sample_freq */
	attr->sample_id_all = 1;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (x->sample_read) /* :S (3.12+) */
		attr->sample_type |= PERF_SAMPLE_READ;
	if (x->precise_max) /* :P (4.x+): the walk down starts at 3 */
		attr->precise_ip = 3;
	if (p->record >= RECORD_V4) {
		attr->sample_type |= PERF_SAMPLE_IDENTIFIER;
		attr->read_format = PERF_FORMAT_ID;
		if (p->record == RECORD_V61)
			attr->read_format |= 1u << 4 /* PERF_FORMAT_LOST */;
	} else {
		/* perf_evsel__config() @3.6: the first counter tracks. */
		attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
				    PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
		attr->mmap = 1;
		attr->comm = 1;
	}
}

static int raw_encode(const struct pmu_set *pmus, const char *text, enum profile_mode mode,
		      struct perf_event_attr *attr, const struct profile *p)
{
	const char *br = strchr(text, '[');
	g_autofree char *ev = br ? g_strndup(text, br - text) : g_strdup(text);
	struct spec sp;
	int ret;

	ret = spec_parse(ev, pmus, &sp);
	if (ret)
		return ret;
	if (*sp.modifiers) {
		ret = pc_fail(EINVAL, "%s: the raw profile takes members in [...], not modifiers, at %zu",
			      text, sp.modifiers_pos + 1);
		spec_clear(&sp);
		return ret;
	}
	memset(attr, 0, sizeof(*attr));
	attr->type = sp.type;
	attr->config = sp.config;
	attr->config1 = sp.config1;
	attr->config2 = sp.config2;
	attr->size = p->attr_size;
	spec_clear(&sp);
	struct mod_extra none = { 0 };
	mode_apply(p, mode, attr, &none);
	if (!br)
		return 0;
	size_t len = strlen(text);
	if (text[len - 1] != ']')
		return pc_fail(EINVAL, "%s: missing ']' at %zu", text, len + 1);
	g_autofree char *body = g_strndup(br + 1, text + len - 1 - (br + 1));
	g_auto(GStrv) members = g_strsplit(body, ",", -1);
	size_t pos = br - text + 2;
	for (char **m = members; *m; pos += strlen(*m) + 1, m++) {
		char *eq = strchr(*m, '=');
		g_autofree char *name = eq ? g_strndup(*m, eq - *m) : g_strdup(*m);
		uint64_t v = 1;
		enum attr_field f = attr_field_from_name(name);

		if (f == ATTR_FIELD_COUNT)
			return pc_fail(EINVAL, "%s: unknown attr member '%s' at %zu", text, name, pos);
		if (eq) {
			/* clockid is the one signed member (CLOCK_* or a negative
			 * dynamic clock); every other value is unsigned. */
			bool neg = f == ATTR_F_clockid && eq[1] == '-';
			int rc = spec_number_parse(eq + 1 + neg, &v);

			if (rc == -ERANGE)
				return pc_fail(ERANGE, "%s: %s=%s does not fit at %zu", text, name,
					       eq + 1, pos);
			if (rc)
				return pc_fail(EINVAL, "%s: '%s' is not a number (decimal or 0x hex) "
					       "at %zu", text, eq + 1, pos + (eq - *m) + 1);
			if (neg)
				v = -v;
		}
		if (strcmp(name, "sample_freq") == 0)
			attr->freq = 1;
		if (attr_set(attr, f, v) < 0)
			return pc_fail(ERANGE, "%s: %s=%s does not fit at %zu", text, name,
				       eq ? eq + 1 : "1", pos);
	}
	return 0;
}

int profile_encode(const struct profile *p, const struct pmu_set *pmus, const char *spec,
		   enum profile_mode mode, struct perf_event_attr *attr)
{
	struct spec sp;
	struct mod_extra x;
	int ret;

	if (!p || !spec || !attr)
		return pc_fail(EINVAL, "profile_encode: missing argument");
	if (mode >= PROFILE_MODE_COUNT)
		return pc_fail(EINVAL, "profile_encode: bad mode %d", mode);
	if (p->raw)
		return raw_encode(pmus, spec, mode, attr, p);
	ret = spec_parse_rules(spec, pmus, p->rules, &sp);
	if (ret)
		return ret;
	memset(attr, 0, sizeof(*attr));
	attr->type = sp.type;
	attr->config = sp.config;
	attr->config1 = sp.config1;
	attr->config2 = sp.config2;
	attr->size = p->attr_size;
	if ((p->mods & MOD_GH) && (p->defaults & DEF_EXCLUDE_GUEST))
		attr->exclude_guest = 1;
	ret = modifiers_apply(p, &sp, attr, &x);
	if (!ret && mode == PROFILE_MODE_STAT)
		ret = stat_terms_check(p, &sp);
	if (!ret) {
		mode_apply(p, mode, attr, &x);
		if (mode == PROFILE_MODE_RECORD && p->record != RECORD_NONE)
			record_terms_apply(p, &sp, attr);
	}
	spec_clear(&sp);
	return ret;
}

enum {
	DONE_CYCLES = 1u << 0,
	DONE_EXCLUDE_GH = 1u << 1,
	DONE_SAMPLE_ID_ALL = 1u << 2,
	DONE_SET_EG = 1u << 3,
	DONE_READ_LOST = 1u << 4,
	DONE_EXCL_KERNEL = 1u << 6,
	DONE_CLOEXEC = 1u << 7,
	PRECISE_MAX_ARMED = 1u << 16, /* set by profile_fallback_begin() for :P */
	SPEC_HAS_GH = 1u << 17,       /* the spec said G or H (evsel->exclude_GH) */
};

int profile_fallback_begin(const struct profile *p, const struct pmu_set *pmus, const char *spec,
			   enum profile_mode mode, struct profile_fallback_state *st)
{
	struct spec sp;

	memset(st, 0, sizeof(*st));
	st->mode = mode;
	if (!p || p->raw)
		return 0;
	if (spec_parse_rules(spec, pmus, p->rules, &sp) == 0) {
		if ((p->fallbacks & FB_PRECISE_MAX) && strchr(sp.modifiers, 'P') &&
		    strchr(p->letters, 'P'))
			st->done |= PRECISE_MAX_ARMED;
		if (strchr(sp.modifiers, 'G') || strchr(sp.modifiers, 'H'))
			st->done |= SPEC_HAS_GH;
		spec_clear(&sp);
	}
	return 0;
}

#define WHY(s) do { if (why) *why = (s); } while (0)

/* The :P walk (evsel__precise_ip_fallback()): 3..0 on any error, then
 * restore and let one other fallback act; the next failure walks again
 * from the top (observed in perf 6.1 -vv). */
static bool precise_walk(struct profile_fallback_state *st, struct perf_event_attr *attr,
			 const char **why)
{
	if (!st->precise_start)
		st->precise_start = attr->precise_ip;
	if (attr->precise_ip) {
		attr->precise_ip--;
		WHY("P: decrease precise_ip by one");
		return true;
	}
	attr->precise_ip = st->precise_start;
	return false;
}

/* Order follows the release: __evsel__open() walks precise_ip down for :P
 * on any error, then (EINVAL only) detects one missing kernel feature per
 * retry; only when the open finally fails does the builtin try
 * evsel__fallback() (cycles -> cpu-clock, EACCES -> exclude_kernel, and in
 * today's perf EOPNOTSUPP -> exclude_guest). Today's perf probes the
 * features first and walks :P after (evsel__open_cpu() @6.13+). */
bool profile_fallback(const struct profile *p, struct profile_fallback_state *st,
		      struct perf_event_attr *attr, int err, const char **why)
{
	bool probed;

	WHY("");
	if (!p || p->raw || !st || !attr)
		return false;
	probed = p->fallbacks & FB_PROBED_FEATURES;
	if (probed && err == EINVAL && (attr->read_format & (1u << 4)) &&
	    !(st->done & DONE_READ_LOST)) {
		st->done |= DONE_READ_LOST;
		attr->read_format &= ~(uint64_t)(1u << 4);
		WHY("missing feature (probed): PERF_FORMAT_LOST");
		return true;
	}
	if ((st->done & PRECISE_MAX_ARMED) && precise_walk(st, attr, why))
		return true;
	if (err == EINVAL && !probed) {
		if (p->record == RECORD_V61 && (attr->read_format & (1u << 4)) &&
		    !(st->done & DONE_READ_LOST)) {
			st->done |= DONE_READ_LOST;
			attr->read_format &= ~(uint64_t)(1u << 4);
			WHY("missing feature: PERF_FORMAT_LOST");
			return true;
		}
		if ((p->fallbacks & FB_CLOEXEC) && !(st->done & DONE_CLOEXEC)) {
			st->done |= DONE_CLOEXEC;
			WHY("missing feature: switch off cloexec flag (same attr)");
			return true;
		}
		if ((p->fallbacks & FB_MISSING_EXCLUDE_GH) && !(st->done & DONE_EXCLUDE_GH) &&
		    (attr->exclude_guest || attr->exclude_host)) {
			st->done |= DONE_EXCLUDE_GH;
			attr->exclude_guest = 0;
			attr->exclude_host = 0;
			WHY("missing feature: clear exclude_guest/exclude_host (old kernel)");
			return true;
		}
		/* The last resort on EINVAL in 3.6 record and 6.1, tried even
		 * when sample_id_all is already 0 (6.1 perf stat, observed);
		 * 3.6's builtin-stat.c only retries exclude_guest/host. */
		if ((p->fallbacks & FB_MISSING_SAMPLE_ID_ALL) && !(st->done & DONE_SAMPLE_ID_ALL) &&
		    (st->mode != PROFILE_MODE_STAT || p->record >= RECORD_V4)) {
			st->done |= DONE_SAMPLE_ID_ALL;
			attr->sample_id_all = 0;
			WHY("missing feature: clear sample_id_all (old kernel)");
			return true;
		}
	}
	/* evsel__fallback() today: EOPNOTSUPP && !exclude_guest &&
	 * !evsel->exclude_GH (G or H given; known exactly only after
	 * profile_fallback_begin(), else approximated by exclude_host). The
	 * same series routes perf stat's EOPNOTSUPP through it too
	 * (UNVERIFIED in builtin-stat.c). */
	if ((p->fallbacks & FB_EOPNOTSUPP_SET_EG) && err == EOPNOTSUPP &&
	    !(st->done & (DONE_SET_EG | SPEC_HAS_GH)) && !attr->exclude_guest && !attr->exclude_host) {
		st->done |= DONE_SET_EG;
		attr->exclude_guest = 1;
		WHY("EOPNOTSUPP: retry with exclude_guest");
		return true;
	}
	/* perf stat marks a counter "<not supported>" on ENOENT, EINVAL,
	 * ENXIO, EOPNOTSUPP instead of calling the builtin fallbacks
	 * (stat_handle_error() @6.1, observed); EACCES still goes there. */
	if (st->mode == PROFILE_MODE_STAT && err != EACCES)
		return false;
	if ((p->fallbacks & FB_CYCLES_TO_CPU_CLOCK) && !(st->done & DONE_CYCLES) &&
	    (err == ENOENT || err == ENXIO || (p->cycles_errs == ERRS_ENOENT_ENXIO_ENODEV && err == ENODEV)) &&
	    attr->type == PERF_TYPE_HARDWARE && attr->config == PERF_COUNT_HW_CPU_CYCLES) {
		st->done |= DONE_CYCLES;
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_CPU_CLOCK;
		WHY("cycles -> cpu-clock: no hardware cycles event");
		return true;
	}
	if (p->cycles_errs == ERRS_ENOENT_ENXIO_ENODEV && err == EACCES &&
	    !attr->exclude_kernel && !(st->done & DONE_EXCL_KERNEL) &&
	    !((p->fallbacks & FB_EACCES_UNLESS_USER) && attr->exclude_user)) {
		st->done |= DONE_EXCL_KERNEL;
		attr->exclude_kernel = 1;
		attr->exclude_hv = 1;
		WHY("EACCES: exclude kernel (perf_event_paranoid > 1)");
		return true;
	}
	return false;
}

const struct profile *profile_for_release(const char *version)
{
	unsigned int major, minor;
	const char *s = version;

	if (!s)
		return NULL;
	while (*s && !g_ascii_isdigit(*s))
		s++;
	if (sscanf(s, "%u.%u", &major, &minor) != 2)
		return NULL;
	for (size_t i = 0; i < G_N_ELEMENTS(profiles); i++) {
		unsigned int v = major * 100 + minor;
		if (!profiles[i].raw && v >= profiles[i].first && v <= profiles[i].last)
			return &profiles[i];
	}
	return NULL;
}
