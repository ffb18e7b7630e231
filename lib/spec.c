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
 * read, result to access; an op the cache cannot do is rejected. */
static int cache_parse(const char *ev, struct spec *out, bool *matched)
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
		if (!best || (is_op && op >= 0) || (!is_op && res >= 0))
			return 0;
		if (is_op)
			op = idx;
		else
			res = idx;
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

/* One term of pmu/t1,t2=v/ at offset pos (0-based) of the spec text. */
static int term_apply(struct spec *out, const struct pmu *pmu, const char *term, size_t pos,
		      uint64_t config[3], int depth)
{
	g_autofree char *name = NULL;
	const char *eq = strchr(term, '=');
	uint64_t value = 1;
	int rc = 0;

	if (!*term)
		return pc_fail(EINVAL, "%s: empty term at %zu", out->text, pos + 1);
	name = eq ? g_strndup(term, eq - term) : g_strdup(term);
	if (eq && (rc = spec_number_parse(eq + 1, &value)) == -ERANGE)
		return pc_fail(ERANGE, "%s: term %s: '%s' does not fit 64 bits at %zu", out->text,
			       name, eq + 1, pos + (eq - term) + 2);
	if (eq && rc)
		return pc_fail(EINVAL, "%s: term %s: '%s' is not a number (decimal or 0x hex) at %zu",
			       out->text, name, eq + 1, pos + (eq - term) + 2);
	if (strcmp(name, "config") == 0 || strcmp(name, "config1") == 0 ||
	    strcmp(name, "config2") == 0) {
		int idx = name[6] ? name[6] - '0' : 0;
		config[idx] = value;
		return 0;
	}
	const struct pmu_format *f = pmu_find_format(pmu, name);
	if (f) {
		int ret = pmu_format_apply(f, value, config);
		if (ret) {
			/* pc_errmsg()'s buffer is the one pc_fail() writes */
			g_autofree char *why = g_strdup(pc_errmsg());

			return pc_fail(-ret, "%s: %s at %zu", out->text, why, pos + 1);
		}
		return 0;
	}
	const struct pmu_event *e = eq ? NULL : pmu_find_event(pmu, name);
	if (e && depth == 0) {
		/* An alias expands to its sysfs terms, parsed like typed ones. */
		g_auto(GStrv) sub = g_strsplit(e->terms, ",", -1);
		for (char **t = sub; *t; t++) {
			int ret = term_apply(out, pmu, g_strstrip(*t), pos, config, 1);
			if (ret)
				return ret;
		}
		return 0;
	}
	return pc_fail(ENOENT, "%s: unknown term or event '%s' for PMU %s at %zu", out->text, name,
		       pmu->name, pos + 1);
}

static int sysfs_parse(const char *text, const struct pmu_set *pmus, struct spec *out,
		       size_t *consumed)
{
	const char *slash1 = strchr(text, '/');
	const char *slash2 = slash1 ? strchr(slash1 + 1, '/') : NULL;
	g_autofree char *pmu_name = g_strndup(text, slash1 - text);
	g_autofree char *body = NULL;
	const struct pmu *pmu;
	uint64_t config[3] = { 0, 0, 0 };
	size_t pos;

	if (!slash2)
		return pc_fail(EINVAL, "%s: missing closing '/' at %zu", text, strlen(text) + 1);
	pmu = pmu_set_find(pmus, pmu_name);
	if (!pmu)
		return pc_fail(ENOENT, "%s: unknown PMU '%s' at 1", text, pmu_name);
	body = g_strndup(slash1 + 1, slash2 - slash1 - 1);
	pos = slash1 + 1 - text;
	g_auto(GStrv) terms = g_strsplit(body, ",", -1);
	for (char **t = terms; *t; t++) {
		int ret = term_apply(out, pmu, *t, pos, config, 0);
		if (ret)
			return ret;
		pos += strlen(*t) + 1;
	}
	out->kind = (g_strv_length(terms) == 1 && !strchr(body, '=') && pmu_find_event(pmu, body))
		? SPEC_KIND_SYSFS_EVENT : SPEC_KIND_SYSFS_TERMS;
	out->pmu = g_strdup(pmu->name);
	out->type = pmu->type;
	out->config = config[0];
	out->config1 = config[1];
	out->config2 = config[2];
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

int spec_parse(const char *text, const struct pmu_set *pmus, struct spec *out)
{
	size_t evlen = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!text || !*text)
		return pc_fail(EINVAL, "empty event spec");
	out->text = g_strdup(text);

	if (strchr(text, '/') && (!strchr(text, ':') || strchr(text, '/') < strchr(text, ':'))) {
		ret = sysfs_parse(text, pmus, out, &evlen);
		if (ret)
			goto fail;
	} else {
		const char *colon = strchr(text, ':');
		g_autofree char *ev = colon ? g_strndup(text, colon - text) : g_strdup(text);
		bool matched;

		evlen = strlen(ev);
		if (!*ev) {
			ret = pc_fail(EINVAL, "%s: missing event name at 1", text);
			goto fail;
		}
		if (symbol_find(hw_symbols, G_N_ELEMENTS(hw_symbols), ev, &out->config)) {
			out->kind = SPEC_KIND_GENERIC_HW;
			out->type = PERF_TYPE_HARDWARE;
		} else if (symbol_find(sw_symbols, G_N_ELEMENTS(sw_symbols), ev, &out->config)) {
			out->kind = SPEC_KIND_SOFTWARE;
			out->type = PERF_TYPE_SOFTWARE;
		} else if (ev[0] == 'r' && ev[1] && strspn(ev + 1, "0123456789abcdefABCDEF") == evlen - 1) {
			/* perf's PE_RAW: r followed by hex digits, no 0x. */
			guint64 raw;

			if (!g_ascii_string_to_unsigned(ev + 1, 16, 0, G_MAXUINT64, &raw, NULL)) {
				/* perf: strtoull()'s ERANGE aborts the parse. */
				ret = pc_fail(ERANGE, "%s: raw event '%s' does not fit 64 bits at 2",
					      text, ev);
				goto fail;
			}
			out->kind = SPEC_KIND_RAW;
			out->type = PERF_TYPE_RAW;
			out->config = raw;
		} else {
			ret = cache_parse(ev, out, &matched);
			if (ret)
				goto fail;
			if (!matched) {
				ret = pc_fail(ENOENT, "%s: unknown event '%s' at 1", text, ev);
				goto fail;
			}
		}
	}
	out->event = g_strndup(text, evlen);
	if (out->pmu && text[evlen]) {
		/* perf's grammar: modifiers follow the closing '/' directly
		 * (msr/tsc/u); "msr/tsc/:u" is an event syntax error. */
		size_t at = evlen;

		/* "msr/tsc/:u" is kept (older tools build it) but marked: the
		 * profiles decide whether their perf accepted it. */
		if (text[evlen] == ':') {
			out->sysfs_colon = true;
			at++;
			if (!text[at]) {
				ret = pc_fail(EINVAL, "%s: empty modifier list at %zu", text, at + 1);
				goto fail;
			}
		}
		out->modifiers = g_strdup(text + at);
		out->modifiers_pos = at;
	} else if (text[evlen] == ':') {
		out->modifiers = g_strdup(text + evlen + 1);
		out->modifiers_pos = evlen + 1;
		if (!*out->modifiers) {
			ret = pc_fail(EINVAL, "%s: empty modifier list at %zu", text, evlen + 2);
			goto fail;
		}
	} else if (text[evlen]) {
		ret = pc_fail(EINVAL, "%s: unexpected '%c' at %zu", text, text[evlen], evlen + 1);
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
