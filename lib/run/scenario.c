/* Scenario files. GKeyFile reads the values; a scan of the text of our own
 * finds line numbers (GKeyFile has none) and rejects what GKeyFile would
 * silently accept (keys outside a section, duplicate keys). */
#include "scenario.h"

#include "image.h"
#include "infile.h"
#include "inject.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const type_names[SCENARIO_TYPE_COUNT] = {
	[SCENARIO_TYPE_STRING] = "string",
	[SCENARIO_TYPE_PATH] = "path",
	[SCENARIO_TYPE_UINT] = "integer",
	[SCENARIO_TYPE_DURATION] = "duration",
	[SCENARIO_TYPE_MEMORY] = "memory size",
	[SCENARIO_TYPE_BOOL] = "boolean",
	[SCENARIO_TYPE_LIST] = "list",
	[SCENARIO_TYPE_MODIFIERS] = "modifier set",
	[SCENARIO_TYPE_MODE] = "mode",
	[SCENARIO_TYPE_DISK_BOOT] = "disk boot",
	[SCENARIO_TYPE_ISOLATE] = "isolation",
};

const char *scenario_type_name(enum scenario_type t)
{
	return t < SCENARIO_TYPE_COUNT ? type_names[t] : "?";
}

static const char *const isolate_names[SCENARIO_ISOLATE_COUNT] = {
	[SCENARIO_ISOLATE_RULE] = "rule",
	[SCENARIO_ISOLATE_EACH] = "each",
};

const char *scenario_isolate_name(enum scenario_isolate i)
{
	return i < SCENARIO_ISOLATE_COUNT ? isolate_names[i] : "?";
}

enum scenario_isolate scenario_isolate_from_name(const char *name)
{
	for (int i = 0; i < SCENARIO_ISOLATE_COUNT; i++)
		if (name && !strcmp(name, isolate_names[i]))
			return (enum scenario_isolate)i;
	return SCENARIO_ISOLATE_COUNT;
}

/* ---- built-in modifier sets ---------------------------------------------- */

static const char *const set_none[] = { "", NULL };

/* u/k/h x G/H x p: the modifiers a user of 2012 would type. */
static const char *const set_basic[] = {
	"", "u", "k", "h", "G", "H", "uG", "uH", "kG", "kH", "hG", "hH",
	"p", "up", "kp", "hp", "pG", "pH", "upG", "upH", "kpG", "kpH", "hpG", "hpH",
	NULL,
};

static const char *const *set_extended;
static const char *const *set_full;

/* priv x {p, pp, ppp} x host/guest, as <priv><p...><GH>. */
static const char *const *build_set(const char *const *privs, const char *const *hg)
{
	static const char *const precise[] = { "", "p", "pp", "ppp", NULL };
	GPtrArray *a = g_ptr_array_new();

	for (const char *const *pr = precise; *pr; pr++)
		for (const char *const *pv = privs; *pv; pv++)
			for (const char *const *h = hg; *h; h++)
				g_ptr_array_add(a, g_strconcat(*pv, *pr, *h, NULL));
	g_ptr_array_add(a, NULL);
	/* Built once, lives for the process like the static sets. */
	return (const char *const *)g_ptr_array_free(a, FALSE);
}

static gpointer build_sets(gpointer unused)
{
	static const char *const ext_privs[] = { "", "u", "k", "h", "uk", "uh", "kh", NULL };
	static const char *const ext_hg[] = { "", "G", "H", NULL };
	static const char *const full_privs[] = { "", "u", "k", "h", "uk", "uh", "kh", "ukh", NULL };
	static const char *const full_hg[] = { "", "G", "H", "GH", NULL };

	set_extended = build_set(ext_privs, ext_hg);
	set_full = build_set(full_privs, full_hg);
	return NULL;
}

const char *const *scenario_modifier_set(const char *name)
{
	static GOnce once = G_ONCE_INIT;

	g_once(&once, build_sets, NULL);
	if (!name)
		return NULL;
	if (!strcmp(name, "none"))
		return set_none;
	if (!strcmp(name, "basic"))
		return set_basic;
	if (!strcmp(name, "extended"))
		return set_extended;
	if (!strcmp(name, "full"))
		return set_full;
	return NULL;
}

/* ---- the key table ------------------------------------------------------- */

struct key_def {
	struct scenario_key_info info;
	size_t offset;             /* into struct scenario */
	unsigned int min, max;     /* UINT, DURATION, MEMORY bounds */
};

#define OFF(m) offsetof(struct scenario, m)

/* The one table of scenario keys and their defaults. */
static const struct key_def keys[] = {
	{ { "scenario", "name", SCENARIO_TYPE_STRING, "",
	    "short name used in run ids and reports (default: file name)" }, OFF(name), 0, 0 },
	{ { "scenario", "description", SCENARIO_TYPE_STRING, "",
	    "one line on what the scenario shows" }, OFF(description), 0, 0 },

	{ { "fleet", "guests", SCENARIO_TYPE_UINT, "2",
	    "number of guests booted for the load phase" }, OFF(guests), 1, 64 },
	{ { "fleet", "vcpus", SCENARIO_TYPE_UINT, "1",
	    "vCPUs per guest" }, OFF(vcpus), 1, 64 },
	{ { "fleet", "memory", SCENARIO_TYPE_MEMORY, "256M",
	    "memory per guest (256M, 1G)" }, OFF(memory_mib), 64, 1u << 20 },
	{ { "fleet", "kernel", SCENARIO_TYPE_PATH, "",
	    "guest kernel image; small: the small guest kernel (built once from "
	    "guest-images/kconfig/guest-small.config, cached); empty: the distribution's "
	    "kernel from /boot" }, OFF(kernel), 0, 0 },
	{ { "fleet", "initrd", SCENARIO_TYPE_PATH, "",
	    "guest initramfs; empty: the one `pmucanary image` built" }, OFF(initrd), 0, 0 },
	{ { "fleet", "disk", SCENARIO_TYPE_PATH, "",
	    "disk guests: an overlay `pmucanary image --inject` wrote; they boot its kernel and "
	    "initrd (in a fleet of disk guests only, kernel overrides it); empty: initramfs guests" },
	  OFF(disk), 0, 0 },
	{ { "fleet", "disk_guests", SCENARIO_TYPE_UINT, "0",
	    "a mixed fleet: how many of the guests boot the disk (the last ones; the others are "
	    "initramfs guests); 0: all of them when disk is given" }, OFF(disk_guests), 0, 64 },
	{ { "fleet", "disk_boot", SCENARIO_TYPE_DISK_BOOT, "kernel",
	    "how disk guests boot: kernel (direct boot of the kernel and initrd copied out of the "
	    "image) or bootloader (SeaBIOS runs the image's own grub or extlinux from the disk)" },
	  OFF(disk_boot), 0, 0 },
	{ { "fleet", "heartbeat", SCENARIO_TYPE_DURATION, "500ms",
	    "interval between guest heartbeats" }, OFF(heartbeat_ms), 10, 60000 },
	{ { "fleet", "heartbeat_timeout", SCENARIO_TYPE_DURATION, "10s",
	    "silence after which a guest counts as hung" }, OFF(heartbeat_timeout_ms), 100, 3600000 },
	{ { "fleet", "boot_timeout", SCENARIO_TYPE_DURATION, "0s",
	    "time a guest may take to its first heartbeat (INFRA after); 0s: 30s under KVM, 2m under TCG" },
	  OFF(boot_timeout_ms), 0, 3600000 },
	{ { "fleet", "restore", SCENARIO_TYPE_BOOL, "true",
	    "bring harmed guests back from a saved image of a fresh idle guest (taken at a guest's "
	    "first restart) instead of booting them; initramfs guests only; false: always boot" },
	  OFF(restore), 0, 0 },
	{ { "fleet", "pool", SCENARIO_TYPE_STRING, POOL_DEFAULT,
	    "the guest pool backend that boots and watches the guests (lib/guests/pool.h); "
	    POOL_DEFAULT ": transient libvirt domains on this machine" }, OFF(pool), 0, 0 },

	{ { "sweep", "pmus", SCENARIO_TYPE_LIST, "",
	    "PMUs whose sysfs events are swept; * for every PMU" }, OFF(pmus), 0, 0 },
	{ { "sweep", "events", SCENARIO_TYPE_LIST, "",
	    "events as perf spells them (cycles, cpu-clock, msr/tsc/); * for every event of the PMUs swept" }, OFF(events), 0, 0 },
	{ { "sweep", "modifiers", SCENARIO_TYPE_MODIFIERS, "basic",
	    "none, basic (u/k/h x G/H x p), extended, full, or a list such as p; pp; ppH" }, OFF(modifiers), 0, 0 },
	{ { "sweep", "specs", SCENARIO_TYPE_LIST, "",
	    "exact specs swept as written, not crossed with modifiers (separate with ;)" }, OFF(specs), 0, 0 },
	{ { "sweep", "profiles", SCENARIO_TYPE_LIST, "*",
	    "profiles (perf releases) to encode with; * for every built-in profile" }, OFF(profiles), 0, 0 },
	{ { "sweep", "raw_excludes", SCENARIO_TYPE_BOOL, "false",
	    "also sweep raw attrs: exclude_user/kernel/hv/idle/host/guest x precise_ip 0..3" }, OFF(raw_excludes), 0, 0 },
	{ { "sweep", "mode", SCENARIO_TYPE_MODE, "record",
	    "record (perf record -a -g, sampling) or stat (perf stat -a, counting)" }, OFF(mode), 0, 0 },

	{ { "load", "dwell", SCENARIO_TYPE_DURATION, "2s",
	    "how long a batch stays armed while the guests work" }, OFF(dwell_ms), 10, 3600000 },
	{ { "load", "batch_size", SCENARIO_TYPE_UINT, "32",
	    "distinct attrs armed together (each on every online CPU)" }, OFF(batch_size), 1, 4096 },
	{ { "load", "confirm", SCENARIO_TYPE_UINT, "3",
	    "times each isolated culprit is re-run alone to give k/n" }, OFF(confirm), 0, 100 },
	{ { "load", "ring_pages", SCENARIO_TYPE_UINT, "8",
	    "data pages per ring buffer (power of two)" }, OFF(ring_pages), 1, 1024 },
	{ { "load", "pairs_across_batches", SCENARIO_TYPE_BOOL, "false",
	    "also arm every two half-batches of different batches together, so that two attrs "
	    "that harm only together are found when screening put them apart "
	    "(2k(k-1) more rounds for k batches)" }, OFF(pairs_across_batches), 0, 0 },
	{ { "load", "isolate", SCENARIO_TYPE_ISOLATE, "rule",
	    "rule: after screening, learn the simplest rule over attr fields that explains the "
	    "harm and prove it (a sample armed alone confirm times, the attrs it predicts clean "
	    "armed in batches); cells it covers say so instead of k/n; what no rule explains is "
	    "isolated as with each. each: every culprit found and armed alone" },
	  OFF(isolate), 0, 0 },
	{ { "load", "budget", SCENARIO_TYPE_DURATION, "0s",
	    "time the load phase may take (screening and isolation); when it runs out nothing "
	    "more is armed and the run reports what it proved: cells cleared by a clean batch OK, "
	    "culprits and rules found, and the groups of attrs harm is known to be among (INFRA "
	    "cells, never OK); 0s: no limit" },
	  OFF(budget_ms), 0, 604800000 },
};

size_t scenario_key_count(void)
{
	return G_N_ELEMENTS(keys);
}

const struct scenario_key_info *scenario_key_at(size_t i)
{
	return i < G_N_ELEMENTS(keys) ? &keys[i].info : NULL;
}

static const struct key_def *key_find(const char *section, const char *key)
{
	for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
		if (!strcmp(keys[i].info.section, section) && !strcmp(keys[i].info.key, key))
			return &keys[i];
	return NULL;
}

static bool section_known(const char *section)
{
	for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
		if (!strcmp(keys[i].info.section, section))
			return true;
	return false;
}

/* ---- value parsers ------------------------------------------------------- */

/* Decimal digits only (no sign, space or 0x); -ERANGE past 64 bits. */
static int parse_uint(const char *text, unsigned long long *v)
{
	g_autoptr(GError) err = NULL;
	guint64 n;

	if (strspn(text, "0123456789") != strlen(text) || !*text)
		return -EINVAL;
	if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, &n, &err))
		return -ERANGE;
	*v = n;
	return 0;
}

/* A number with one of the units in the table, scaled; UINT_MAX at most. */
struct scaled_unit {
	const char *unit;
	unsigned long long scale;
};

/* -EINVAL unless decimal digits and a unit of the table; -ERANGE when the
 * scaled value passes UINT_MAX (never saturated or wrapped). */
static int parse_scaled(const char *text, const struct scaled_unit *units, size_t n_units,
			unsigned int *out)
{
	size_t len = text ? strspn(text, "0123456789") : 0;
	g_autofree char *digits = NULL;
	unsigned long long n;

	if (!len)
		return -EINVAL;
	digits = g_strndup(text, len);
	for (size_t i = 0; i < n_units; i++) {
		if (strcmp(text + len, units[i].unit))
			continue;
		if (parse_uint(digits, &n) < 0 || n > UINT_MAX / units[i].scale)
			return -ERANGE;
		*out = (unsigned int)(n * units[i].scale);
		return 0;
	}
	return -EINVAL;
}

int scenario_parse_duration(const char *text, unsigned int *ms)
{
	static const struct scaled_unit units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	};

	return parse_scaled(text, units, G_N_ELEMENTS(units), ms);
}

int scenario_parse_memory(const char *text, unsigned int *mib)
{
	static const struct scaled_unit units[] = {
		{ "", 1 }, { "M", 1 }, { "MiB", 1 }, { "G", 1024 }, { "GiB", 1024 },
	};

	return parse_scaled(text, units, G_N_ELEMENTS(units), mib);
}

static int parse_bool(const char *text, bool *v)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < G_N_ELEMENTS(yes); i++) {
		if (!g_ascii_strcasecmp(text, yes[i])) {
			*v = true;
			return 0;
		}
		if (!g_ascii_strcasecmp(text, no[i])) {
			*v = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Items separated by ';' or ','; a ',' inside pmu/term=1,term=2/ belongs to
 * the item. Items are trimmed; empty items are dropped. */
static GPtrArray *split_list(const char *text)
{
	GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
	GString *cur = g_string_new(NULL);
	bool in_slash = false;

	for (const char *p = text;; p++) {
		if (*p == '/')
			in_slash = !in_slash;
		if (!*p || *p == ';' || (*p == ',' && !in_slash)) {
			g_strstrip(cur->str);
			if (cur->str[0])
				g_ptr_array_add(a, g_strdup(cur->str));
			g_string_truncate(cur, 0);
			in_slash = false;
			if (!*p)
				break;
			continue;
		}
		g_string_append_c(cur, *p);
	}
	g_string_free(cur, TRUE);
	return a;
}

static GPtrArray *strv_to_array(const char *const *v)
{
	GPtrArray *a = g_ptr_array_new_with_free_func(g_free);

	for (; v && *v; v++)
		g_ptr_array_add(a, g_strdup(*v));
	return a;
}

/* ---- line finding -------------------------------------------------------- */

/* Splits "key = value" lines; returns the trimmed key or NULL. */
static char *line_key(const char *line)
{
	const char *eq = strchr(line, '=');

	if (!eq)
		return NULL;
	return g_strstrip(g_strndup(line, eq - line));
}

/* The 1-based line where key is set in section (key NULL: the header). */
static unsigned int find_line(const char *text, const char *section, const char *key)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autofree char *cur = NULL;

	for (unsigned int i = 0; lines[i]; i++) {
		g_autofree char *l = g_strstrip(g_strdup(lines[i]));

		if (l[0] == '[') {
			char *close = strchr(l, ']');

			g_free(cur);
			cur = g_strndup(l + 1, close ? (size_t)(close - l - 1) : strlen(l + 1));
			if (!key && !strcmp(cur, section))
				return i + 1;
			continue;
		}
		if (key && cur && !strcmp(cur, section)) {
			g_autofree char *k = line_key(l);

			if (k && !strcmp(k, key))
				return i + 1;
		}
	}
	return 0;
}

/* Structure checks with line numbers, before GKeyFile sees the text. */
static int scan_text(const char *path, const char *text)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree char *cur = NULL;

	for (unsigned int i = 0; lines[i]; i++) {
		g_autofree char *l = g_strstrip(g_strdup(lines[i]));
		unsigned int ln = i + 1;

		if (!l[0] || l[0] == '#' || l[0] == ';')
			continue;
		if (l[0] == '[') {
			size_t len = strlen(l);

			if (l[len - 1] != ']' || len < 3)
				return pc_fail(EINVAL, "%s:%u: expected a section header like [load]",
					       path, ln);
			g_free(cur);
			cur = g_strndup(l + 1, len - 2);
			if (!section_known(cur))
				return pc_fail(EINVAL,
					       "%s:%u: [%s]: unknown section (expected scenario, fleet, sweep or load)",
					       path, ln, cur);
			if (g_hash_table_contains(seen, cur))
				return pc_fail(EINVAL, "%s:%u: [%s]: section given twice", path, ln, cur);
			g_hash_table_add(seen, g_strdup(cur));
			continue;
		}
		g_autofree char *k = line_key(l);
		if (!k || !k[0])
			return pc_fail(EINVAL, "%s:%u: expected key = value, a [section] or a # comment",
				       path, ln);
		if (!cur)
			return pc_fail(EINVAL, "%s:%u: %s: key outside any section", path, ln, k);
		if (!key_find(cur, k))
			return pc_fail(EINVAL, "%s:%u: [%s] %s: unknown key", path, ln, cur, k);
		g_autofree char *sk = g_strdup_printf("%s\n%s", cur, k);
		if (g_hash_table_contains(seen, sk))
			return pc_fail(EINVAL, "%s:%u: [%s] %s: key given twice", path, ln, cur, k);
		g_hash_table_add(seen, g_steal_pointer(&sk));
	}
	return 0;
}

/* ---- load ------------------------------------------------------------------ */

static int bad_value(const char *path, const char *text, const struct key_def *d,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad_value(const char *path, const char *text, const struct key_def *d,
		     const char *fmt, ...)
{
	va_list ap;
	g_autofree char *msg = NULL;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	return pc_fail(EINVAL, "%s:%u: [%s] %s: %s", path,
		       find_line(text, d->info.section, d->info.key),
		       d->info.section, d->info.key, msg);
}

/* A disk is usable when `image --inject` wrote it (its boot manifest). */
static int disk_check(const char *overlay)
{
	g_autoptr(inject_boot) b = NULL;

	return inject_boot_load(overlay, &b);
}

static int set_value(struct scenario *s, const struct key_def *d, const char *value,
		     const char *path, const char *text)
{
	void *field = (char *)s + d->offset;
	unsigned long long u;
	unsigned int v;
	int r;

	switch (d->info.type) {
	case SCENARIO_TYPE_PATH:
		/* A kernel or initrd the run cannot use fails before anything
		 * runs or is created, not at the fleet after the open phase. */
		/* "small" is built (or found cached) when the fleet starts */
		if (*value && !(!strcmp(d->info.key, "kernel") && !strcmp(value, IMAGE_SMALL_KERNEL))) {
			/* a kernel is checked as one: a text file boots nothing */
			r = !strcmp(d->info.key, "kernel") ? image_kernel_check(value, value)
			    : !strcmp(d->info.key, "disk") ? disk_check(value)
							  : infile_check(value, INFILE_KERNEL);
			if (r < 0)
				return bad_value(path, text, d, "%s", pc_errmsg());
			if (access(value, R_OK) < 0)
				return bad_value(path, text, d, "%s: %s", value, g_strerror(errno));
		}
		/* fall through */
	case SCENARIO_TYPE_STRING:
		g_free(*(char **)field);
		*(char **)field = g_strdup(value);
		return 0;
	case SCENARIO_TYPE_MODE:
		if (strcmp(value, "record") && strcmp(value, "stat"))
			return bad_value(path, text, d, "expected record or stat, not '%s'", value);
		g_free(*(char **)field);
		*(char **)field = g_strdup(value);
		return 0;
	case SCENARIO_TYPE_DISK_BOOT:
		if ((r = inject_disk_boot_parse(value)) < 0)
			return bad_value(path, text, d, "expected kernel or bootloader, not '%s'", value);
		*(enum inject_disk_boot *)field = (enum inject_disk_boot)r;
		return 0;
	case SCENARIO_TYPE_ISOLATE: {
		enum scenario_isolate i = scenario_isolate_from_name(value);

		if (i == SCENARIO_ISOLATE_COUNT)
			return bad_value(path, text, d, "expected rule or each, not '%s'", value);
		*(enum scenario_isolate *)field = i;
		return 0;
	}
	case SCENARIO_TYPE_UINT:
		if (parse_uint(value, &u) || u < d->min || u > d->max)
			return bad_value(path, text, d, "expected an integer from %u to %u, not '%s'",
					 d->min, d->max, value);
		*(unsigned int *)field = (unsigned int)u;
		return 0;
	case SCENARIO_TYPE_DURATION:
		r = scenario_parse_duration(value, &v);
		if (r == -EINVAL)
			return bad_value(path, text, d, "expected a duration like 2s or 500ms, not '%s'",
					 value);
		if (r < 0 || v < d->min || v > d->max)
			return bad_value(path, text, d, "%s is out of range (%ums to %ums)",
					 value, d->min, d->max);
		*(unsigned int *)field = v;
		return 0;
	case SCENARIO_TYPE_MEMORY:
		r = scenario_parse_memory(value, &v);
		if (r == -EINVAL)
			return bad_value(path, text, d, "expected a size like 256M or 1G, not '%s'", value);
		if (r < 0 || v < d->min || v > d->max)
			return bad_value(path, text, d, "%s is out of range (%uM to %uM)",
					 value, d->min, d->max);
		*(unsigned int *)field = v;
		return 0;
	case SCENARIO_TYPE_BOOL:
		if (parse_bool(value, (bool *)field))
			return bad_value(path, text, d, "expected true or false, not '%s'", value);
		return 0;
	case SCENARIO_TYPE_LIST: {
		GPtrArray **a = field;

		g_ptr_array_unref(*a);
		*a = split_list(value);
		return 0;
	}
	case SCENARIO_TYPE_MODIFIERS: {
		const char *const *set = scenario_modifier_set(value);
		g_autoptr(GPtrArray) list = NULL;

		g_free(s->modifier_set);
		if (set) {
			s->modifier_set = g_strdup(value);
			list = strv_to_array(set);
		} else {
			s->modifier_set = g_strdup("list");
			list = split_list(value);
			for (guint i = 0; i < list->len; i++) {
				const char *m = list->pdata[i];

				if (!strcmp(m, "-")) { /* "-" stands for no modifier */
					g_free(list->pdata[i]);
					list->pdata[i] = g_strdup("");
					continue;
				}
				for (const char *c = m; *c; c++)
					if (!isalpha((unsigned char)*c))
						return bad_value(path, text, d,
								 "'%s' is neither a set (none, basic, extended, full) nor modifier letters",
								 m);
			}
			if (!list->len)
				return bad_value(path, text, d, "empty list (use none for no modifier)");
		}
		g_ptr_array_unref(s->modifiers);
		s->modifiers = g_steal_pointer(&list);
		return 0;
	}
	case SCENARIO_TYPE_COUNT:
		break;
	}
	return -EINVAL;
}

struct scenario *scenario_new_default(void)
{
	struct scenario *s = g_new0(struct scenario, 1);

	s->pmus = g_ptr_array_new_with_free_func(g_free);
	s->events = g_ptr_array_new_with_free_func(g_free);
	s->specs = g_ptr_array_new_with_free_func(g_free);
	s->profiles = g_ptr_array_new_with_free_func(g_free);
	s->modifiers = g_ptr_array_new_with_free_func(g_free);
	for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
		int r = set_value(s, &keys[i], keys[i].info.default_text, "(defaults)", "");

		/* The defaults are ours: a failure here is a bug in the table. */
		g_assert(r == 0);
	}
	return s;
}

void scenario_free(struct scenario *s)
{
	if (!s)
		return;
	g_free(s->path);
	g_free(s->name);
	g_free(s->description);
	g_free(s->kernel);
	g_free(s->initrd);
	g_free(s->disk);
	g_free(s->pool);
	g_free(s->modifier_set);
	g_free(s->mode);
	g_ptr_array_unref(s->pmus);
	g_ptr_array_unref(s->events);
	g_ptr_array_unref(s->modifiers);
	g_ptr_array_unref(s->specs);
	g_ptr_array_unref(s->profiles);
	g_free(s);
}

static char *name_from_path(const char *path)
{
	g_autofree char *base = g_path_get_basename(path);
	char *dot = strrchr(base, '.');

	if (dot && dot != base)
		*dot = '\0';
	return g_strdup(base);
}

int scenario_load_data(const char *path, const char *text, struct scenario **out)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) err = NULL;
	g_autoptr(scenario) s = scenario_new_default();
	int r;

	r = scan_text(path, text);
	if (r)
		return r;
	/* A line that starts with ';' is a comment here as in most INI
	 * dialects; GKeyFile knows only '#'. (After a value, ';' separates
	 * list items: no trailing comments.) */
	{
		g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

		for (char **l = lines; *l; l++) {
			char *c = *l + strspn(*l, " \t");

			if (*c == ';')
				*c = '#';
		}
		g_autofree char *hashed = g_strjoinv("\n", lines);

		if (!g_key_file_load_from_data(kf, hashed, (gsize)-1, G_KEY_FILE_NONE, &err))
			return pc_fail(EINVAL, "%s: %s", path, err->message);
	}

	for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
		const struct key_def *d = &keys[i];
		g_autofree char *raw = g_key_file_get_value(kf, d->info.section, d->info.key, NULL);
		g_autofree char *value = NULL;

		if (!raw)
			continue;
		/* Strings keep GKeyFile's escapes (\n, \s); the rest is taken as typed. */
		if (d->info.type == SCENARIO_TYPE_STRING || d->info.type == SCENARIO_TYPE_PATH)
			value = g_key_file_get_string(kf, d->info.section, d->info.key, NULL);
		else
			value = g_strdup(raw);
		if (!value)
			return bad_value(path, text, d, "not valid UTF-8 text");
		g_strstrip(value);
		r = set_value(s, d, value, path, text);
		if (r)
			return r;
	}

	if (!pool_backend(s->pool)) {
		g_autofree char *known = pool_backend_names();

		return bad_value(path, text, key_find("fleet", "pool"),
				 "no guest pool named '%s' (known: %s)", s->pool, known);
	}
	/* Checks across keys, reported at the later key. */
	if (s->disk_guests > s->guests)
		return bad_value(path, text, key_find("fleet", "disk_guests"),
				 "%u is more than guests (%u)", s->disk_guests, s->guests);
	if (s->disk_guests && !s->disk[0])
		return bad_value(path, text, key_find("fleet", "disk_guests"),
				 "needs disk = an injected overlay");
	if (s->disk_boot == INJECT_DISK_BOOT_BOOTLOADER) {
		g_autoptr(inject_boot) b = NULL;

		if (!s->disk[0])
			return bad_value(path, text, key_find("fleet", "disk_boot"),
					 "bootloader needs disk = an injected overlay");
		/* before anything boots: an image without one boots nothing */
		if (inject_boot_load(s->disk, &b) < 0 ||
		    inject_boot_check(b, INJECT_DISK_BOOT_BOOTLOADER) < 0)
			return bad_value(path, text, key_find("fleet", "disk_boot"), "%s", pc_errmsg());
	}
	if (s->heartbeat_timeout_ms <= s->heartbeat_ms)
		return bad_value(path, text, key_find("fleet", "heartbeat_timeout"),
				 "must be longer than heartbeat (%ums)", s->heartbeat_ms);
	if (s->ring_pages & (s->ring_pages - 1))
		return bad_value(path, text, key_find("load", "ring_pages"),
				 "expected a power of two, not %u", s->ring_pages);
	if (!s->pmus->len && !s->events->len && !s->specs->len && !s->raw_excludes) {
		unsigned int ln = find_line(text, "sweep", NULL);

		return pc_fail(EINVAL, "%s:%u: [sweep]: nothing to sweep: give events, pmus, specs or raw_excludes = true",
			       path, ln ? ln : 1);
	}
	if (!s->profiles->len)
		return bad_value(path, text, key_find("sweep", "profiles"),
				 "expected at least one profile (or * for all)");

	s->path = g_strdup(path);
	if (!s->name || !s->name[0]) {
		g_free(s->name);
		s->name = name_from_path(path);
	}
	*out = g_steal_pointer(&s);
	return 0;
}

int scenario_load(const char *path, struct scenario **out)
{
	g_autofree char *text = NULL;
	int e;

	if ((e = infile_read(path, INFILE_CONFIG, &text, NULL)))
		return e;
	return scenario_load_data(path, text, out);
}

static json_t *array_to_json(const GPtrArray *a)
{
	json_t *j = json_array();

	for (guint i = 0; i < a->len; i++)
		json_array_append_new(j, json_string(a->pdata[i]));
	return j;
}

json_t *scenario_to_json(const struct scenario *s)
{
	json_t *j = json_object();
	json_t *fleet = json_object(), *sweep = json_object(), *load = json_object();

	json_object_set_new(j, "name", json_string(s->name ? s->name : ""));
	json_object_set_new(j, "description", json_string(s->description ? s->description : ""));
	json_object_set_new(j, "path", s->path ? json_string(s->path) : json_null());
	json_object_set_new(fleet, "guests", json_integer(s->guests));
	json_object_set_new(fleet, "vcpus", json_integer(s->vcpus));
	json_object_set_new(fleet, "memory_mib", json_integer(s->memory_mib));
	json_object_set_new(fleet, "kernel", json_string(s->kernel ? s->kernel : ""));
	json_object_set_new(fleet, "initrd", json_string(s->initrd ? s->initrd : ""));
	json_object_set_new(fleet, "disk", json_string(s->disk ? s->disk : ""));
	json_object_set_new(fleet, "disk_guests", json_integer(s->disk_guests));
	json_object_set_new(fleet, "disk_boot", json_string(inject_disk_boot_name(s->disk_boot)));
	json_object_set_new(fleet, "heartbeat_ms", json_integer(s->heartbeat_ms));
	json_object_set_new(fleet, "heartbeat_timeout_ms", json_integer(s->heartbeat_timeout_ms));
	json_object_set_new(fleet, "boot_timeout_ms", json_integer(s->boot_timeout_ms));
	json_object_set_new(fleet, "restore", json_boolean(s->restore));
	json_object_set_new(fleet, "pool", json_string(s->pool ? s->pool : POOL_DEFAULT));
	json_object_set_new(sweep, "pmus", array_to_json(s->pmus));
	json_object_set_new(sweep, "events", array_to_json(s->events));
	json_object_set_new(sweep, "modifier_set", json_string(s->modifier_set));
	json_object_set_new(sweep, "modifiers", array_to_json(s->modifiers));
	json_object_set_new(sweep, "specs", array_to_json(s->specs));
	json_object_set_new(sweep, "profiles", array_to_json(s->profiles));
	json_object_set_new(sweep, "raw_excludes", json_boolean(s->raw_excludes));
	json_object_set_new(sweep, "mode", json_string(s->mode));
	json_object_set_new(load, "dwell_ms", json_integer(s->dwell_ms));
	json_object_set_new(load, "batch_size", json_integer(s->batch_size));
	json_object_set_new(load, "confirm", json_integer(s->confirm));
	json_object_set_new(load, "ring_pages", json_integer(s->ring_pages));
	json_object_set_new(load, "pairs_across_batches", json_boolean(s->pairs_across_batches));
	json_object_set_new(load, "isolate", json_string(scenario_isolate_name(s->isolate)));
	json_object_set_new(load, "budget_ms", json_integer(s->budget_ms));
	json_object_set_new(j, "fleet", fleet);
	json_object_set_new(j, "sweep", sweep);
	json_object_set_new(j, "load", load);
	return j;
}
