#include "spec.h"

#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[SPEC_KIND_COUNT] = {
	[SPEC_KIND_GENERIC_HW] = "hardware",
	[SPEC_KIND_GENERIC_CACHE] = "cache",
	[SPEC_KIND_SOFTWARE] = "software",
	[SPEC_KIND_SYSFS_EVENT] = "sysfs-event",
	[SPEC_KIND_SYSFS_TERMS] = "sysfs-terms",
	[SPEC_KIND_RAW] = "raw",
};

const char *spec_kind_name(enum spec_kind kind)
{
	return kind < SPEC_KIND_COUNT ? kind_names[kind] : "?";
}

/* perf's event_symbols_hw[] / event_symbols_sw[] (tools/perf/util/
 * parse-events.c): canonical name, then the alias the lexer also takes. */
struct symbol {
	const char *name;
	const char *alias;
	uint64_t config;
};

static const struct symbol hw_symbols[] = {
	{ "cpu-cycles", "cycles", PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", "idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", "idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", NULL, PERF_COUNT_HW_REF_CPU_CYCLES },
};

static const struct symbol sw_symbols[] = {
	{ "cpu-clock", NULL, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", NULL, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", NULL, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", NULL, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", NULL, PERF_COUNT_SW_DUMMY },
	{ "bpf-output", NULL, 10 /* PERF_COUNT_SW_BPF_OUTPUT */ },
	{ "cgroup-switches", NULL, 11 /* PERF_COUNT_SW_CGROUP_SWITCHES */ },
};

/* perf's evsel__hw_cache*[] alias tables and evsel__hw_cache_stat[]
 * (util/evsel.c; parse-events.c before 3.13). */
#define CACHE_ALIASES 5
static const char *const cache_types[][CACHE_ALIASES] = {
	{ "L1-dcache", "l1-d", "l1d", "L1-data" },
	{ "L1-icache", "l1-i", "l1i", "L1-instruction" },
	{ "LLC", "L2" },
	{ "dTLB", "d-tlb", "Data-TLB" },
	{ "iTLB", "i-tlb", "Instruction-TLB" },
	{ "branch", "branches", "bpu", "btb", "bpc" },
	{ "node" },
};
static const char *const cache_ops[][CACHE_ALIASES] = {
	{ "load", "loads", "read" },
	{ "store", "stores", "write" },
	{ "prefetch", "prefetches", "speculative-read", "speculative-load" },
};
static const char *const cache_results[][CACHE_ALIASES] = {
	{ "refs", "Reference", "ops", "access" },
	{ "misses", "miss" },
};
#define R (1u << PERF_COUNT_HW_CACHE_OP_READ)
#define W (1u << PERF_COUNT_HW_CACHE_OP_WRITE)
#define P (1u << PERF_COUNT_HW_CACHE_OP_PREFETCH)
static const unsigned int cache_stat[] = { R | W | P, R | P, R | W | P, R | W | P, R, R, R | W | P };
#undef R
#undef W
#undef P

static gpointer names_build(gpointer data)
{
	enum spec_kind kind = GPOINTER_TO_INT(data);
	GPtrArray *a = g_ptr_array_new();

	if (kind == SPEC_KIND_GENERIC_HW) {
		for (size_t i = 0; i < G_N_ELEMENTS(hw_symbols); i++)
			g_ptr_array_add(a, (void *)hw_symbols[i].name);
	} else if (kind == SPEC_KIND_SOFTWARE) {
		for (size_t i = 0; i < G_N_ELEMENTS(sw_symbols); i++)
			g_ptr_array_add(a, (void *)sw_symbols[i].name);
	} else if (kind == SPEC_KIND_GENERIC_CACHE) {
		/* perf list's spelling: "L1-dcache-loads", "L1-dcache-load-misses". */
		for (size_t t = 0; t < G_N_ELEMENTS(cache_types); t++)
			for (size_t o = 0; o < G_N_ELEMENTS(cache_ops); o++) {
				if (!(cache_stat[t] & (1u << o)))
					continue;
				for (size_t r = 0; r < G_N_ELEMENTS(cache_results); r++)
					g_ptr_array_add(a, r == 0
						? g_strdup_printf("%s-%s", cache_types[t][0], cache_ops[o][1])
						: g_strdup_printf("%s-%s-%s", cache_types[t][0],
								  cache_ops[o][0], cache_results[r][0]));
			}
	}
	g_ptr_array_add(a, NULL);
	/* Built once and kept for the life of the process. */
	return a->pdata;
}

const char *const *spec_generic_names(enum spec_kind kind)
{
	static GOnce once[SPEC_KIND_COUNT];
	static const char *const empty[] = { NULL };

	if (kind != SPEC_KIND_GENERIC_HW && kind != SPEC_KIND_SOFTWARE &&
	    kind != SPEC_KIND_GENERIC_CACHE)
		return empty;
	return g_once(&once[kind], names_build, GINT_TO_POINTER(kind));
}

void spec_clear(struct spec *spec)
{
	if (!spec)
		return;
	g_free(spec->text);
	g_free(spec->event);
	g_free(spec->pmu);
	g_free(spec->modifiers);
	if (spec->terms)
		g_array_unref(spec->terms);
	memset(spec, 0, sizeof(*spec));
}

/* Matches one alias of table row at s; returns its length (longest wins). */
static size_t alias_match(const char *const row[CACHE_ALIASES], const char *s)
{
	size_t best = 0;

	for (int i = 0; i < CACHE_ALIASES && row[i]; i++) {
		size_t n = strlen(row[i]);
		if (n > best && strncmp(s, row[i], n) == 0 && (s[n] == '-' || s[n] == 0))
			best = n;
	}
	return best;
}

/* perf's parse_events_add_cache(): TYPE[-OP|-RESULT]{0,2}; op defaults to
 * read, result to access; an op the cache cannot do is rejected. A second
 * op or result is not a cache event, or with SPEC_RULE_CACHE_FIRST_WINS
 * (the 6.1 loop: "if (cache_op == -1) ... if (cache_result == -1)") is
 * ignored: L1-dcache-load-load is L1-dcache-load. */
static int cache_parse(const char *ev, unsigned int rules, struct spec *out, bool *matched)
{
	int type = -1, op = -1, res = -1;
	size_t n = 0;
	const char *s;

	*matched = false;
	for (size_t t = 0; t < G_N_ELEMENTS(cache_types); t++) {
		size_t m = alias_match(cache_types[t], ev);
		if (m > n) {
			n = m;
			type = (int)t;
		}
	}
	if (type < 0)
		return 0;
	s = ev + n;
	for (int part = 0; *s == '-'; part++) {
		size_t best = 0;
		int is_op = 0, idx = -1;

		if (part == 2)
			return 0;
		s++;
		for (size_t o = 0; o < G_N_ELEMENTS(cache_ops); o++) {
			size_t m = alias_match(cache_ops[o], s);
			if (m > best) {
				best = m; idx = (int)o; is_op = 1;
			}
		}
		for (size_t r = 0; r < G_N_ELEMENTS(cache_results); r++) {
			size_t m = alias_match(cache_results[r], s);
			if (m > best) {
				best = m; idx = (int)r; is_op = 0;
			}
		}
		if (!best)
			return 0;
		if ((is_op && op >= 0) || (!is_op && res >= 0)) {
			if (!(rules & SPEC_RULE_CACHE_FIRST_WINS))
				return 0;
		} else if (is_op) {
			op = idx;
		} else {
			res = idx;
		}
		s += best;
	}
	if (*s)
		return 0;
	*matched = true;
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (res < 0)
		res = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	if (!(cache_stat[type] & (1u << op)))
		return pc_fail(EINVAL, "%s: %s cannot do %s (invalid cache event) at 1", out->text,
			       cache_types[type][0], cache_ops[op][0]);
	out->kind = SPEC_KIND_GENERIC_CACHE;
	out->type = PERF_TYPE_HW_CACHE;
	out->config = (uint64_t)type | ((uint64_t)op << 8) | ((uint64_t)res << 16);
	return 0;
}

/* A term value as perf's lexer reads it (parse-events.l: num_dec [0-9]+ is
 * base 10, so "010" is ten; num_hex 0x[a-fA-F0-9]+ is base 16; a value past
 * 64 bits is "Bad base N number"). */
int spec_number_parse(const char *s, uint64_t *v)
{
	g_autoptr(GError) err = NULL;
	guint base = 10;
	guint64 n;

	if (s[0] == '0' && s[1] == 'x') {
		base = 16;
		s += 2;
	}
	if (!*s || strspn(s, base == 16 ? "0123456789abcdefABCDEF" : "0123456789") != strlen(s))
		return -EINVAL;
	if (!g_ascii_string_to_unsigned(s, base, 0, G_MAXUINT64, &n, &err))
		return -ERANGE;
	*v = n;
	return 0;
}

/* perf's hardcoded term names (parse-events.l, <config> start condition):
 * a keyword only in the releases whose rules have it, else a plain name
 * (a sysfs format or alias, "unknown term" on a legacy event). kind < 0:
 * perf has it but pmucanary does not model its effect, refused. */
struct hard_term {
	const char *name;
	unsigned int rule; /* SPEC_RULE_* that makes it a keyword; 0: always (@3.6) */
	int kind;          /* enum spec_term_kind, or -1 */
	bool str;          /* takes a name, not a number */
	bool zero_one;     /* "expected 0 or 1" past 1 */
	bool invert;       /* no-inherit */
};

static const struct hard_term hard_terms[] = {
	{ "config", 0, SPEC_TERM_CONFIG, false, false, false },
	{ "config1", 0, SPEC_TERM_CONFIG, false, false, false },
	{ "config2", 0, SPEC_TERM_CONFIG, false, false, false },
	{ "name", 0, SPEC_TERM_NAME, true, false, false },
	{ "period", 0, SPEC_TERM_PERIOD, false, false, false },
	{ "branch_type", 0, -1, true, false, false },
	{ "freq", SPEC_RULE_TERMS_FREQ_TIME, SPEC_TERM_FREQ, false, false, false },
	{ "time", SPEC_RULE_TERMS_FREQ_TIME, SPEC_TERM_TIME, false, true, false },
	{ "inherit", SPEC_RULE_TERMS_FREQ_TIME, SPEC_TERM_INHERIT, false, false, false },
	{ "no-inherit", SPEC_RULE_TERMS_FREQ_TIME, SPEC_TERM_INHERIT, false, false, true },
	{ "call-graph", SPEC_RULE_TERMS_FREQ_TIME, -1, true, false, false },
	{ "stack-size", SPEC_RULE_TERMS_FREQ_TIME, -1, false, false, false },
	{ "max-stack", SPEC_RULE_TERMS_FREQ_TIME, -1, false, false, false },
	{ "overwrite", SPEC_RULE_TERMS_FREQ_TIME, -1, false, false, false },
	{ "no-overwrite", SPEC_RULE_TERMS_FREQ_TIME, -1, false, false, false },
	{ "percore", SPEC_RULE_TERM_PERCORE, SPEC_TERM_PERCORE, false, true, false },
	{ "nr", SPEC_RULE_TERM_PERCORE, -1, false, false, false },
	{ "aux-output", SPEC_RULE_TERM_PERCORE, -1, false, false, false },
	{ "aux-sample-size", SPEC_RULE_TERM_PERCORE, -1, false, false, false },
	{ "metric-id", SPEC_RULE_TERM_PERCORE, SPEC_TERM_NAME, true, false, false },
};

static const struct hard_term *hard_term_find(const char *name, unsigned int rules)
{
	for (size_t i = 0; i < G_N_ELEMENTS(hard_terms); i++)
		if (strcmp(hard_terms[i].name, name) == 0 &&
		    (!hard_terms[i].rule || (rules & hard_terms[i].rule)))
			return &hard_terms[i];
	return NULL;
}

/* One term of a term list, split: "name=value" or "name". */
struct term_text {
	char *name;
	char *value; /* NULL: no '=' */
	size_t pos;  /* 0-based offset of the term in the parsed text */
};

static void term_text_clear(gpointer p)
{
	struct term_text *t = p;

	g_free(t->name);
	g_free(t->value);
}

/* A hardcoded term: checks its value the way config_term_common() does
 * and records it. config[] gets config/config1/config2. */
static int hard_term_apply(struct spec *out, const char *text, const struct hard_term *h,
			   const struct term_text *t, uint64_t config[3])
{
	uint64_t value = 1;
	size_t vpos = t->pos + strlen(t->name) + 2;

	if (h->kind < 0)
		return pc_fail(EINVAL, "%s: term '%s' is not modelled by pmucanary (perf takes it) "
			       "at %zu", text, h->name, t->pos + 1);
	if (t->value) {
		/* {name_minus} starts [a-zA-Z_*?]: a string; else a number. */
		bool is_name = g_ascii_isalpha(t->value[0]) || strchr("_*?", t->value[0]);
		int rc;

		if (h->str && !is_name)
			return pc_fail(EINVAL, "%s: term %s: expected string value at %zu", text,
				       h->name, vpos);
		if (!h->str && is_name)
			return pc_fail(EINVAL, "%s: term %s: expected numeric value at %zu", text,
				       h->name, vpos);
		if (!h->str) {
			rc = spec_number_parse(t->value, &value);
			if (rc == -ERANGE)
				return pc_fail(ERANGE, "%s: term %s: '%s' does not fit 64 bits at %zu",
					       text, h->name, t->value, vpos);
			if (rc)
				return pc_fail(EINVAL, "%s: term %s: '%s' is not a number (decimal "
					       "or 0x hex) at %zu", text, h->name, t->value, vpos);
		}
	} else if (h->str) {
		/* PE_TERM alone is the number 1: CHECK_TYPE_VAL(STR) fails. */
		return pc_fail(EINVAL, "%s: term %s: expected string value at %zu", text, h->name,
			       t->pos + 1);
	}
	if (h->zero_one && value > 1)
		return pc_fail(EINVAL, "%s: term %s: expected 0 or 1 at %zu", text, h->name, vpos);
	out->terms_given |= 1u << h->kind;
	if (h->kind == SPEC_TERM_CONFIG) {
		config[h->name[6] ? h->name[6] - '0' : 0] = value;
		return 0;
	}
	struct spec_term st = { h->kind, h->invert ? !value : value, h->name };
	g_array_append_val(out->terms, st);
	return 0;
}

/* Splits body (the text between the slashes, at offset pos of text). */
static int terms_split(const char *text, const char *body, size_t pos, GArray **out)
{
	g_auto(GStrv) parts = g_strsplit(body, ",", -1);
	GArray *a = g_array_new(FALSE, TRUE, sizeof(struct term_text));

	g_array_set_clear_func(a, term_text_clear);
	for (char **t = parts; *t; pos += strlen(*t) + 1, t++) {
		const char *eq = strchr(*t, '=');
		struct term_text tt = { NULL, NULL, pos };

		if (!**t || eq == *t) {
			g_array_unref(a);
			return pc_fail(EINVAL, "%s: empty term at %zu", text, pos + 1);
		}
		tt.name = eq ? g_strndup(*t, eq - *t) : g_strdup(*t);
		tt.value = eq ? g_strdup(eq + 1) : NULL;
		g_array_append_val(a, tt);
	}
	*out = a;
	return 0;
}

/* The term list of a hw/sw, cache or raw event: only perf's hardcoded
 * terms (config_term_common(): anything else is "unknown term"). */
static int legacy_terms_parse(struct spec *out, const char *text, const char *body, size_t pos,
			      unsigned int rules)
{
	g_autoptr(GArray) terms = NULL;
	uint64_t config[3] = { out->config, out->config1, out->config2 };
	int ret = terms_split(text, body, pos, &terms);

	if (ret)
		return ret;
	for (guint i = 0; i < terms->len; i++) {
		const struct term_text *t = &g_array_index(terms, struct term_text, i);
		const struct hard_term *h = hard_term_find(t->name, rules);

		if (!h)
			return pc_fail(EINVAL, "%s: unknown term '%s' (a %s event takes only perf's "
				       "own terms) at %zu", text, t->name, spec_kind_name(out->kind),
				       t->pos + 1);
		ret = hard_term_apply(out, text, h, t, config);
		if (ret)
			return ret;
	}
	out->config = config[0];
	out->config1 = config[1];
	out->config2 = config[2];
	return 0;
}

static const struct pmu_event *alias_find(const struct pmu *pmu, const char *name,
					  unsigned int rules)
{
	if (!(rules & SPEC_RULE_ALIAS_ANY_CASE))
		return pmu_find_event(pmu, name);
	for (size_t i = 0; i < pmu->events->len; i++) {
		const struct pmu_event *e = pmu->events->pdata[i];

		if (g_ascii_strcasecmp(e->name, name) == 0)
			return e;
	}
	return NULL;
}

/* pmu/terms/ the way parse_events_add_pmu() builds it: event aliases are
 * replaced by their sysfs terms (perf_pmu__check_alias()), then perf's own
 * terms are applied (config_attr(), so config= is set before any format),
 * then the format terms in order (perf_pmu__config()). */
static int pmu_terms_parse(struct spec *out, const char *text, const struct pmu *pmu,
			   const char *body, size_t pos, unsigned int rules, bool *one_alias)
{
	g_autoptr(GArray) typed = NULL;
	g_autoptr(GArray) terms = g_array_new(FALSE, TRUE, sizeof(struct term_text));
	uint64_t config[3] = { 0, 0, 0 };
	unsigned int aliases = 0;
	int ret = terms_split(text, body, pos, &typed);

	if (ret)
		return ret;
	g_array_set_clear_func(terms, term_text_clear);
	for (guint i = 0; i < typed->len; i++) {
		struct term_text *t = &g_array_index(typed, struct term_text, i);
		const struct pmu_event *e = NULL;
		uint64_t v = 0;

		/* pmu_find_alias(): a name that is no hardcoded term and no
		 * format, alone or =1, names an event alias. */
		if (!hard_term_find(t->name, rules) && !pmu_find_format(pmu, t->name) &&
		    (!t->value || (spec_number_parse(t->value, &v) == 0 && v == 1)))
			e = alias_find(pmu, t->name, rules);
		if (!e) {
			struct term_text copy = { g_strdup(t->name), g_strdup(t->value), t->pos };

			g_array_append_val(terms, copy);
			continue;
		}
		if (aliases++ && (rules & SPEC_RULE_ALIAS_ONCE))
			return pc_fail(EINVAL, "%s: a second event alias '%s' in one term list "
				       "(perf's check_info_data() refuses it: every alias has a scale) "
				       "at %zu", text, t->name, t->pos + 1);
		g_auto(GStrv) sub = g_strsplit(e->terms, ",", -1);
		for (char **s = sub; *s; s++) {
			const char *st = g_strstrip(*s);
			const char *eq = strchr(st, '=');
			struct term_text at = { eq ? g_strndup(st, eq - st) : g_strdup(st),
						eq ? g_strdup(eq + 1) : NULL, t->pos };

			if (!*st) {
				term_text_clear(&at);
				continue;
			}
			g_array_append_val(terms, at);
		}
	}
	*one_alias = aliases == 1 && typed->len == 1;
	/* perf's own terms first. */
	for (guint i = 0; i < terms->len; i++) {
		const struct term_text *t = &g_array_index(terms, struct term_text, i);
		const struct hard_term *h = hard_term_find(t->name, rules);

		if (h && (ret = hard_term_apply(out, text, h, t, config)))
			return ret;
	}
	for (guint i = 0; i < terms->len; i++) {
		const struct term_text *t = &g_array_index(terms, struct term_text, i);
		const struct pmu_format *f;
		uint64_t value = 1;
		int rc = 0;

		if (hard_term_find(t->name, rules))
			continue;
		f = pmu_find_format(pmu, t->name);
		if (!f)
			return pc_fail(ENOENT, "%s: unknown term or event '%s' for PMU %s at %zu",
				       text, t->name, pmu->name, t->pos + 1);
		if (t->value)
			rc = spec_number_parse(t->value, &value);
		if (rc == -ERANGE)
			return pc_fail(ERANGE, "%s: term %s: '%s' does not fit 64 bits at %zu", text,
				       t->name, t->value, t->pos + strlen(t->name) + 2);
		if (rc)
			return pc_fail(EINVAL, "%s: term %s: '%s' is not a number (decimal or 0x "
				       "hex) at %zu", text, t->name, t->value,
				       t->pos + strlen(t->name) + 2);
		ret = pmu_format_apply(f, value, config);
		if (ret) {
			/* pc_errmsg()'s buffer is the one pc_fail() writes */
			g_autofree char *why = g_strdup(pc_errmsg());

			return pc_fail(-ret, "%s: %s at %zu", text, why, t->pos + 1);
		}
	}
	out->config = config[0];
	out->config1 = config[1];
	out->config2 = config[2];
	return 0;
}

static int sysfs_parse(const char *text, const struct pmu_set *pmus, unsigned int rules,
		       struct spec *out, size_t *consumed)
{
	const char *slash1 = strchr(text, '/');
	const char *slash2 = slash1 ? strchr(slash1 + 1, '/') : NULL;
	g_autofree char *pmu_name = g_strndup(text, slash1 - text);
	g_autofree char *body = NULL;
	const struct pmu *pmu;
	bool one_alias = false;
	int ret;

	if (!slash2)
		return pc_fail(EINVAL, "%s: missing closing '/' at %zu", text, strlen(text) + 1);
	pmu = pmu_set_find(pmus, pmu_name);
	if (!pmu)
		return pc_fail(ENOENT, "%s: unknown PMU '%s' at 1", text, pmu_name);
	body = g_strndup(slash1 + 1, slash2 - slash1 - 1);
	ret = pmu_terms_parse(out, text, pmu, body, slash1 + 1 - text, rules, &one_alias);
	if (ret)
		return ret;
	out->kind = one_alias ? SPEC_KIND_SYSFS_EVENT : SPEC_KIND_SYSFS_TERMS;
	out->pmu = g_strdup(pmu->name);
	out->type = pmu->type;
	*consumed = slash2 + 1 - text;
	return 0;
}

static bool symbol_find(const struct symbol *tab, size_t n, const char *ev, uint64_t *config)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(tab[i].name, ev) == 0 || (tab[i].alias && strcmp(tab[i].alias, ev) == 0)) {
			*config = tab[i].config;
			return true;
		}
	return false;
}

/* perf's lexer (parse-events.l, ".  { }" in INITIAL and <config>) drops a
 * character that starts no token. Only characters that cannot be part of
 * any token of the modelled grammar are dropped; a dropped run between two
 * characters of one would-be token (cpu -clock) splits it in perf, which
 * pmucanary does not model: refused. */
static int chars_skip(const char *text, char **clean)
{
	GString *s = g_string_new(NULL);
	size_t i = 0;

	while (text[i]) {
		unsigned char c = (unsigned char)text[i];

		if (g_ascii_isalnum(c) || (c < 0x80 && strchr("_*?[]/-,:{}=.!'@", c))) {
			g_string_append_c(s, (char)c);
			i++;
			continue;
		}
		size_t j = i;

		while (text[j] && !g_ascii_isalnum(text[j]) &&
		       !((unsigned char)text[j] < 0x80 && strchr("_*?[]/-,:{}=.!'@", text[j])))
			j++;
		if (s->len && text[j] && !strchr("/,:{}=", s->str[s->len - 1]) &&
		    !strchr("/,:{}=", text[j])) {
			g_string_free(s, TRUE);
			return pc_fail(EINVAL, "%s: a character perf's lexer drops splits a token "
				       "at %zu (not modelled)", text, i + 1);
		}
		i = j;
	}
	*clean = g_string_free(s, FALSE);
	return 0;
}

/* hw/sw symbol, raw or cache event named ev (the text before any '/' or
 * ':'): fills kind/type/config; *matched false when it is none of them. */
static int legacy_parse(const char *text, const char *ev, unsigned int rules, struct spec *out,
			bool *matched)
{
	*matched = true;
	if (symbol_find(hw_symbols, G_N_ELEMENTS(hw_symbols), ev, &out->config)) {
		out->kind = SPEC_KIND_GENERIC_HW;
		out->type = PERF_TYPE_HARDWARE;
		return 0;
	}
	if (symbol_find(sw_symbols, G_N_ELEMENTS(sw_symbols), ev, &out->config)) {
		out->kind = SPEC_KIND_SOFTWARE;
		out->type = PERF_TYPE_SOFTWARE;
		return 0;
	}
	if (ev[0] == 'r' && ev[1] && strspn(ev + 1, "0123456789abcdefABCDEF") == strlen(ev) - 1) {
		/* perf's PE_RAW: r followed by hex digits, no 0x. */
		guint64 raw;

		if (!g_ascii_string_to_unsigned(ev + 1, 16, 0, G_MAXUINT64, &raw, NULL))
			/* perf: strtoull()'s ERANGE aborts the parse. */
			return pc_fail(ERANGE, "%s: raw event '%s' does not fit 64 bits at 2", text,
				       ev);
		out->kind = SPEC_KIND_RAW;
		out->type = PERF_TYPE_RAW;
		out->config = raw;
		return 0;
	}
	return cache_parse(ev, rules, out, matched);
}

/* Specs of kinds pmucanary does not model, named so the refusal says so. */
static int unmodelled_check(const char *t, size_t n)
{
	const char *after = t + n + 1;

	if (g_str_has_prefix(t, "mem:"))
		return pc_fail(EINVAL, "%s: breakpoint events (mem:ADDR[/LEN][:rwx]) are not "
			       "modelled by pmucanary (perf takes them: type breakpoint) at 1", t);
	/* tracepoint_name: PE_NAME [- PE_NAME] ':' PE_NAME, where the second
	 * name is not all modifier letters (the lexer prefers those). */
	if (t[n] == ':' && n && (g_ascii_isalpha(t[0]) || t[0] == '_') &&
	    (g_ascii_isalpha(*after) || *after == '_' || *after == '*' || *after == '?') &&
	    strspn(after, "ukhpPGHSDIWebRX") < strcspn(after, ":/"))
		return pc_fail(EINVAL, "%s: tracepoint events (SUBSYS:EVENT) are not modelled by "
			       "pmucanary (perf takes them: type tracepoint, config the tracefs id) "
			       "at 1", t);
	return 0;
}

int spec_parse(const char *text, const struct pmu_set *pmus, struct spec *out)
{
	return spec_parse_rules(text, pmus, 0, out);
}

int spec_parse_rules(const char *text, const struct pmu_set *pmus, unsigned int rules,
		     struct spec *out)
{
	g_autofree char *clean = NULL;
	g_autofree char *ev = NULL;
	const char *t;
	size_t n, evlen = 0;
	bool matched, terms = false;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!text || !*text)
		return pc_fail(EINVAL, "empty event spec");
	out->text = g_strdup(text);
	out->terms = g_array_new(FALSE, TRUE, sizeof(struct spec_term));
	if (rules & SPEC_RULE_SKIP_CHARS) {
		ret = chars_skip(text, &clean);
		if (ret)
			goto fail;
		if (!*clean) {
			ret = pc_fail(EINVAL, "%s: empty event spec", text);
			goto fail;
		}
	} else {
		clean = g_strdup(text);
	}
	t = clean;
	n = strcspn(t, "/:");
	ev = g_strndup(t, n);
	if (!*ev) {
		ret = pc_fail(EINVAL, "%s: missing event name at 1", t);
		goto fail;
	}
	ret = legacy_parse(t, ev, rules, out, &matched);
	if (ret)
		goto fail;
	if (!matched && t[n] == '/') {
		ret = sysfs_parse(t, pmus, rules, out, &evlen);
		if (ret)
			goto fail;
	} else if (!matched) {
		ret = unmodelled_check(t, n);
		if (!ret)
			ret = pc_fail(ENOENT, "%s: unknown event '%s' at 1", t, ev);
		goto fail;
	} else if (t[n] == '/') {
		/* EVENT/terms/: value_sym '/' event_config '/' (hw/sw), or
		 * opt_event_config (raw, cache). */
		const char *close = strchr(t + n + 1, '/');
		bool sym = out->kind == SPEC_KIND_GENERIC_HW || out->kind == SPEC_KIND_SOFTWARE;
		unsigned int need = sym ? SPEC_RULE_SYMBOL_TERMS : SPEC_RULE_EVENT_TERMS;

		if (sym && close == t + n + 1)
			need = SPEC_RULE_SYMBOL_EMPTY_TERMS;
		if (!(rules & need)) {
			ret = pc_fail(EINVAL, "%s: a %s event takes no term list in this release "
				      "at %zu", t, spec_kind_name(out->kind), n + 1);
			goto fail;
		}
		if (!close) {
			ret = pc_fail(EINVAL, "%s: missing closing '/' at %zu", t, strlen(t) + 1);
			goto fail;
		}
		if (close > t + n + 1) {
			g_autofree char *body = g_strndup(t + n + 1, close - (t + n + 1));

			ret = legacy_terms_parse(out, t, body, n + 1, rules);
			if (ret)
				goto fail;
		}
		evlen = close + 1 - t;
		terms = true;
		if (sym && t[evlen] == ':') {
			/* value_sym '/' event_config '/' has no sep_dc. */
			ret = pc_fail(EINVAL, "%s: modifiers follow the closing '/' of a term list "
				      "directly, no ':', at %zu", t, evlen + 1);
			goto fail;
		}
	} else {
		evlen = n;
	}
	out->event = g_strndup(t, evlen);
	if ((out->pmu || terms) && t[evlen] != ':') {
		/* Modifiers follow the closing '/' directly (msr/tsc/u,
		 * r1a8/period=10/u). */
		out->modifiers = g_strdup(t + evlen);
		out->modifiers_pos = evlen;
	} else if (t[evlen] == ':') {
		/* "msr/tsc/:u" is kept (older tools build it) but marked: the
		 * profiles decide whether their perf accepted it. */
		out->sysfs_colon = out->pmu != NULL;
		out->modifiers = g_strdup(t + evlen + 1);
		out->modifiers_pos = evlen + 1;
		if (!*out->modifiers && (out->pmu || !(rules & SPEC_RULE_EMPTY_MODS))) {
			ret = pc_fail(EINVAL, "%s: empty modifier list at %zu", t, evlen + 2);
			goto fail;
		}
		if (strchr(out->modifiers, ':')) {
			ret = pc_fail(EINVAL, "%s: unexpected ':' at %zu", t,
				      evlen + 2 + (strchr(out->modifiers, ':') - out->modifiers));
			goto fail;
		}
	} else if (t[evlen]) {
		ret = pc_fail(EINVAL, "%s: unexpected '%c' at %zu", t, t[evlen], evlen + 1);
		goto fail;
	} else {
		out->modifiers = g_strdup("");
		out->modifiers_pos = evlen;
	}
	return 0;
fail:
	spec_clear(out);
	return ret;
}

char *spec_join(const char *event, const char *modifiers)
{
	size_t n = strlen(event);

	if (!modifiers || !*modifiers)
		return g_strdup(event);
	if (n && event[n - 1] == '/')
		return g_strconcat(event, modifiers, NULL);
	return g_strconcat(event, ":", modifiers, NULL);
}
