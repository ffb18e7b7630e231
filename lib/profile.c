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
 * Every release read (3.0-era, 3.6, the 3.8-3.10-era get_event_modifier(),
 * 6.1, today) starts the exclude bits from zero and assigns all of them, so
 * any modifier string replaces event_attr_init()'s defaults. */
enum {
	/* G and H exist (exclude_host/exclude_guest, 3.2). */
	MOD_GH = 1u << 0,
	/* 'p' sets exclude_guest unless G/H was given (1342798cc13e, 3.7). */
	MOD_P_SETS_EG = 1u << 1,
	/* 'u' sets exclude_guest unless G/H was given (Jin Yao 2020,
	 * "perf parse-events: Set exclude_guest for user-space counting"). */
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
};

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
};

enum {
	ERRS_ENOENT_ENXIO = 1,       /* 3.x builtin-record.c */
	ERRS_ENOENT_ENXIO_ENODEV,    /* evsel__fallback() */
};

/* What `perf record -a -g` puts around the event. */
enum record_style {
	RECORD_NONE,   /* raw: nothing */
	RECORD_V3,     /* 3.x: main event is the tracking event */
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
	bool raw;
};

/* The binary axis, oldest first. "Verified" names the source read for an
 * entry; everything else is marked unverified (see also the report). */
static const struct profile profiles[] = {
	{
		/* perf 3.0-3.1: the hand-written parse_event_modifier() of
		 * util/parse-events.c (read in a 3.0/3.1-era tree with
		 * perf_evlist, via the code index, not a tagged checkout):
		 * letters ukhp, no G/H, no event_attr_init() so no exclude_guest
		 * default, no "precise > 3" check (the count wraps in the 2-bit
		 * field), unknown letters end the modifier and fail the event.
		 * UNVERIFIED: attr size (assumed sizeof = VER1) and the
		 * record/stat members (assumed as 3.6). */
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
		 * no sample_id_all, ENOENT/ENXIO + hw cycles -> cpu-clock. 3.2-3.5
		 * assumed identical (G/H and event_attr_init arrived in 3.2):
		 * UNVERIFIED for 3.2-3.5. */
		.name = "perf-3.6",
		.releases = "perf 3.2 .. 3.6 (before 1342798cc13e)",
		.first = 302, .last = 306,
		.letters = "ukhpGH",
		.mods = MOD_GH,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL | FB_MISSING_EXCLUDE_GH,
		.cycles_errs = ERRS_ENOENT_ENXIO,
		.attr_size = PERF_ATTR_SIZE_VER2,
		.record = RECORD_V3,
	},
	{
		/* perf 3.7 .. 4.x: 1342798cc13e, 'p' sets exclude_guest unless
		 * G/H given ("use of precise requires exclude_guest", still in
		 * parse-events.c @v6.1 and observed in Debian's 6.1 binary).
		 * Size VER3 (sample_regs_user/stack_user, 3.7). Repeats allowed
		 * as in 3.6 (check_modifier() not yet there). UNVERIFIED against
		 * a 3.7 tree: 3.6 source plus the commit's described change. */
		.name = "perf-3.7",
		.releases = "perf 3.7 (1342798cc13e: p sets exclude_guest)",
		.first = 307, .last = 307,
		.letters = "ukhpGH",
		.mods = MOD_GH | MOD_P_SETS_EG,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL | FB_MISSING_EXCLUDE_GH,
		.cycles_errs = ERRS_ENOENT_ENXIO,
		.attr_size = PERF_ATTR_SIZE_VER3,
		.record = RECORD_V3,
	},
	{
		/* perf 3.8 .. 3.12: get_event_modifier() + check_modifier()
		 * ("ukhGHppp": no letter but p twice, at most 8 characters),
		 * 'p' still sets exclude_guest. Read in a 3.8-3.10-era
		 * util/parse-events.c found through the code index (it has
		 * group modifiers and nr_groups, no S letter); the exact release
		 * check_modifier() arrived in (assumed 3.8, with the event group
		 * syntax) is UNVERIFIED, as are the record/stat members (as 3.6)
		 * and the size (VER3 until sample_regs_intr in 3.19). */
		.name = "perf-3.8",
		.releases = "perf 3.8 .. 3.12 (repeated modifier letters rejected)",
		.first = 308, .last = 312,
		.letters = "ukhpGH",
		.mods = MOD_GH | MOD_P_SETS_EG | MOD_NO_REPEAT,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL | FB_MISSING_EXCLUDE_GH,
		.cycles_errs = ERRS_ENOENT_ENXIO,
		.attr_size = PERF_ATTR_SIZE_VER3,
		.record = RECORD_V3,
	},
	{
		/* perf 4.x .. 5.9: letters ukhpPGHSDIW, check_modifier() rejects
		 * repeated letters other than p, P (precise_max) fallback walks
		 * precise_ip down. Size VER5 (aux_watermark, 4.1). UNVERIFIED:
		 * letter arrival releases from memory, not from a tree. */
		.name = "perf-4.19",
		.releases = "perf 3.13 .. 5.9 (S/I/P/D/W letters, no repeats)",
		.first = 313, .last = 509,
		.letters = "ukhpPGHSDIW",
		.mods = MOD_GH | MOD_P_SETS_EG | MOD_NO_REPEAT,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_SAMPLE_ID_ALL | FB_MISSING_EXCLUDE_GH |
			     FB_PRECISE_MAX | FB_CLOEXEC,
		.cycles_errs = ERRS_ENOENT_ENXIO_ENODEV,
		.attr_size = PERF_ATTR_SIZE_VER5,
		.record = RECORD_V61,
	},
	{
		/* Debian 12's perf 6.1. Verified by running /usr/bin/perf
		 * 6.1.187 (`perf stat -vv -a`, `perf record -vv -a -g`) for every
		 * letter and combinations: default exclude_guest=1; 'u' and 'p'
		 * set exclude_guest unless G/H (Jin Yao 2020, "perf parse-events:
		 * Set exclude_guest for user-space counting", 5.10); 'k'/'h'
		 * alone clear it; repeated letters and pppp rejected; size 128
		 * (VER7); :P gives precise_ip=3 in record; :S adds SAMPLE_READ. */
		.name = "perf-6.1",
		.releases = "perf 5.10 .. 6.12 (Debian 12 perf 6.1)",
		.first = 510, .last = 612,
		.letters = "ukhpPGHSDIWeb",
		.mods = MOD_GH | MOD_P_SETS_EG | MOD_U_SETS_EG | MOD_NO_REPEAT | MOD_NO_SYSFS_COLON,
		.defaults = DEF_EXCLUDE_GUEST,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_EXCLUDE_GH | FB_PRECISE_MAX |
			     FB_MISSING_SAMPLE_ID_ALL | FB_CLOEXEC,
		.cycles_errs = ERRS_ENOENT_ENXIO_ENODEV,
		.attr_size = PERF_ATTR_SIZE_VER7,
		.record = RECORD_V61,
	},
	{
		/* Today's perf (6.13+, Namhyung Kim's exclude_GH_default series,
		 * and dcbe6e51a0bb). Verified in parse-events.c
		 * parse_events__modifier_list() (torvalds/linux as stored):
		 * exclude_GH_default is false outside perf kvm, so neither the
		 * default nor 'u'/'p' set exclude_guest; combined precise > 3 is
		 * an error. evsel__fallback() then retries EOPNOTSUPP with
		 * exclude_guest set (series v4 "handle EOPNOTSUPP error in
		 * compatible way"): fallback detail from the thread, UNVERIFIED
		 * in evsel.c. Size VER8 (config3, 6.3). Repeat check assumed
		 * kept (UNVERIFIED). */
		.name = "perf-modern",
		.releases = "perf 6.13 .. today (no default exclude_guest, EOPNOTSUPP retry)",
		.first = 613, .last = 9999,
		.letters = "ukhpPGHSDIWebRX",
		.mods = MOD_GH | MOD_NO_REPEAT | MOD_NO_SYSFS_COLON,
		.fallbacks = FB_CYCLES_TO_CPU_CLOCK | FB_MISSING_EXCLUDE_GH | FB_PRECISE_MAX |
			     FB_EOPNOTSUPP_SET_EG | FB_MISSING_SAMPLE_ID_ALL | FB_CLOEXEC,
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
		default: /* W, b: no attr member */
			break;
		}
	}
	if ((p->mods & MOD_NO_REPEAT) && strlen(str) > strlen(p->letters) + 2)
		return pc_fail(EINVAL, "%s: modifier string too long at %zu", sp->text,
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

static void mode_apply(const struct profile *p, enum profile_mode mode,
		       struct perf_event_attr *attr, const struct mod_extra *x)
{
	if (mode == PROFILE_MODE_STAT) {
		/* create_perf_stat_counter(): no evsel__config(); -a still
		 * marks counters disabled and inherited. */
		attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		attr->inherit = 1;
		if (p->record == RECORD_V61) {
			/* Observed from Debian's perf 6.1 stat -a. */
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
	if (p->record == RECORD_V61) {
		attr->sample_type |= PERF_SAMPLE_IDENTIFIER;
		attr->read_format = PERF_FORMAT_ID | (1u << 4) /* PERF_FORMAT_LOST */;
		if (x->precise_max)
			attr->precise_ip = 3;
		if (x->sample_read)
			attr->sample_type |= PERF_SAMPLE_READ;
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
			char *end;
			errno = 0;
			v = strtoull(eq + 1, &end, 0);
			if (errno || end == eq + 1 || *end)
				return pc_fail(EINVAL, "%s: '%s' is not a number at %zu", text, eq + 1,
					       pos + (eq - *m) + 1);
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
	ret = spec_parse(spec, pmus, &sp);
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
	spec_clear(&sp);
	if (ret)
		return ret;
	mode_apply(p, mode, attr, &x);
	return 0;
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
	if (spec_parse(spec, pmus, &sp) == 0) {
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

/* Order follows the release: __evsel__open() walks precise_ip down for :P
 * on any error, then (EINVAL only) detects one missing kernel feature per
 * retry; only when the open finally fails does the builtin try
 * evsel__fallback() (cycles -> cpu-clock, EACCES -> exclude_kernel, and in
 * today's perf EOPNOTSUPP -> exclude_guest, which it tries first). */
bool profile_fallback(const struct profile *p, struct profile_fallback_state *st,
		      struct perf_event_attr *attr, int err, const char **why)
{
	WHY("");
	if (!p || p->raw || !st || !attr)
		return false;
	if (st->done & PRECISE_MAX_ARMED) {
		/* evsel__precise_ip_fallback(): walk 3..0 on any error, then
		 * restore and let one other fallback act; the next failure
		 * walks again from the top (observed in perf 6.1 -vv). */
		if (!st->precise_start)
			st->precise_start = attr->precise_ip;
		if (attr->precise_ip) {
			attr->precise_ip--;
			WHY("P: decrease precise_ip by one");
			return true;
		}
		attr->precise_ip = st->precise_start;
	}
	/* evsel__fallback() today: EOPNOTSUPP && !exclude_guest &&
	 * !evsel->exclude_GH (G or H given; known exactly only after
	 * profile_fallback_begin(), else approximated by exclude_host). The
	 * same series routes perf stat's EOPNOTSUPP through it too. */
	if ((p->fallbacks & FB_EOPNOTSUPP_SET_EG) && err == EOPNOTSUPP &&
	    !(st->done & (DONE_SET_EG | SPEC_HAS_GH)) && !attr->exclude_guest && !attr->exclude_host) {
		st->done |= DONE_SET_EG;
		attr->exclude_guest = 1;
		WHY("EOPNOTSUPP: retry with exclude_guest");
		return true;
	}
	if (err == EINVAL) {
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
		    (st->mode != PROFILE_MODE_STAT || p->record == RECORD_V61)) {
			st->done |= DONE_SAMPLE_ID_ALL;
			attr->sample_id_all = 0;
			WHY("missing feature: clear sample_id_all (old kernel)");
			return true;
		}
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
	    !attr->exclude_kernel && !(st->done & DONE_EXCL_KERNEL)) {
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
