/* Enumeration of (profile, spec) pairs; see enumerate.h for what and why. */
#include "enumerate.h"

#include "log.h"
#include "spec.h"

#include <errno.h>
#include <string.h>

/* Letters are written in this order (perf's documentation order); letters
 * not listed follow in the order the profile gives them. */
#define MOD_ORDER "ukhpPGHIDSWeb"
#define MOD_BASE "ukhpGH"

/* PMUs whose events cannot be opened without arguments the sweep cannot
 * invent (see enumerate.h). */
static const char *const skipped_pmus[] = {
	"tracepoint", "kprobe", "uprobe", "breakpoint", NULL
};

static const char *const raw_bits[] = {
	"exclude_user", "exclude_kernel", "exclude_hv",
	"exclude_idle", "exclude_host", "exclude_guest",
};

/* Writes the letters of `set` (a string of distinct letters) followed by
 * np 'p's in MOD_ORDER. */
static char *modifier_build(const char *set, int np)
{
	GString *s = g_string_new(NULL);

	for (const char *o = MOD_ORDER; *o; o++) {
		if (*o == 'p') {
			for (int i = 0; i < np; i++)
				g_string_append_c(s, 'p');
		} else if (strchr(set, *o)) {
			g_string_append_c(s, *o);
		}
	}
	for (const char *c = set; *c; c++)
		if (!strchr(MOD_ORDER, *c))
			g_string_append_c(s, *c);
	return g_string_free(s, FALSE);
}

/* Appends to out every subset of letters (mask bit i = letters[i]) with
 * 0..3 p and the fixed letters `with`. */
static void modifier_product(const char *letters, const char *with, GPtrArray *out)
{
	size_t n = strlen(letters);

	for (int np = 0; np <= 3; np++)
		for (unsigned long mask = 0; mask < (1ul << n); mask++) {
			char set[64];
			size_t len = 0;

			for (size_t i = 0; i < n; i++)
				if (mask & (1ul << i))
					set[len++] = letters[i];
			for (const char *w = with; *w && len < sizeof(set) - 1; w++)
				set[len++] = *w;
			set[len] = '\0';
			g_ptr_array_add(out, modifier_build(set, np));
		}
}

void enumerate_modifiers(const char *known, bool full, GPtrArray *out)
{
	GString *extras = g_string_new(NULL);

	if (!known)
		known = "";
	for (const char *c = known; *c; c++)
		if (!strchr(MOD_BASE, *c) && !strchr(extras->str, *c) && g_ascii_isalpha(*c))
			g_string_append_c(extras, *c);
	if (full) {
		g_autofree char *all = g_strconcat("ukhGH", extras->str, NULL);

		modifier_product(all, "", out);
	} else {
		modifier_product("ukhGH", "", out);
		for (const char *x = extras->str; *x; x++) {
			char with[2] = { *x, '\0' };

			modifier_product("GH", with, out);
		}
	}
	g_string_free(extras, TRUE);
}

void enumerate_raw_suffixes(GPtrArray *out)
{
	for (int precise = 0; precise <= 3; precise++)
		for (unsigned int mask = 0; mask < 64; mask++) {
			GString *s = g_string_new(NULL);

			for (unsigned int i = 0; i < G_N_ELEMENTS(raw_bits); i++)
				if (mask & (1u << i))
					g_string_append_printf(s, "%s%s", s->len ? "," : "[",
							       raw_bits[i]);
			if (precise)
				g_string_append_printf(s, "%sprecise_ip=%d", s->len ? "," : "[",
						       precise);
			if (s->len)
				g_string_append_c(s, ']');
			g_ptr_array_add(out, g_string_free(s, FALSE));
		}
}

void enumerate_event_free(struct enumerate_event *ev)
{
	if (!ev)
		return;
	g_free(ev->name);
	g_free(ev->pmu);
	g_free(ev);
}

void enumerate_pair_free(struct enumerate_pair *pair)
{
	if (!pair)
		return;
	g_free(pair->spec);
	g_free(pair);
}

static void event_add(GPtrArray *out, const char *name, const char *pmu)
{
	struct enumerate_event *ev = g_new0(struct enumerate_event, 1);

	ev->name = g_strdup(name);
	ev->pmu = g_strdup(pmu);
	g_ptr_array_add(out, ev);
}

static bool strv_empty(const char *const *v)
{
	return !v || !v[0];
}

static bool pmu_known(const struct pmu_set *pmus, const char *name)
{
	return strcmp(name, ENUMERATE_CORE_PMU) == 0 ||
	       strcmp(name, ENUMERATE_SOFTWARE_PMU) == 0 ||
	       (pmus && pmu_set_find(pmus, name));
}

/* Every event the host offers, unfiltered. */
static void events_all(const struct pmu_set *pmus, GPtrArray *out)
{
	static const struct { enum spec_kind kind; const char *pmu; } generic[] = {
		{ SPEC_KIND_GENERIC_HW, ENUMERATE_CORE_PMU },
		{ SPEC_KIND_SOFTWARE, ENUMERATE_SOFTWARE_PMU },
		{ SPEC_KIND_GENERIC_CACHE, ENUMERATE_CORE_PMU },
	};

	for (size_t g = 0; g < G_N_ELEMENTS(generic); g++) {
		const char *const *names = spec_generic_names(generic[g].kind);

		for (; names && *names; names++)
			event_add(out, *names, generic[g].pmu);
	}
	for (unsigned int i = 0; pmus && i < pmus->pmus->len; i++) {
		const struct pmu *p = pmus->pmus->pdata[i];

		if (g_strv_contains(skipped_pmus, p->name))
			continue;
		for (unsigned int j = 0; p->events && j < p->events->len; j++) {
			const struct pmu_event *e = p->events->pdata[j];
			g_autofree char *name = NULL;

			/* .scale/.unit files; events that need a '?' parameter. */
			if (strchr(e->name, '.') || (e->terms && strchr(e->terms, '?')))
				continue;
			name = g_strdup_printf("%s/%s/", p->name, e->name);
			event_add(out, name, p->name);
		}
	}
}

int enumerate_events(const struct pmu_set *pmus, const struct enumerate_opts *opts,
		     GPtrArray **out)
{
	g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func(
		(GDestroyNotify)enumerate_event_free);
	g_autoptr(GPtrArray) res = g_ptr_array_new_with_free_func(
		(GDestroyNotify)enumerate_event_free);
	const char *const *want_pmus = opts ? opts->pmus : NULL;
	const char *const *want_events = opts ? opts->events : NULL;

	for (const char *const *p = want_pmus; p && *p; p++)
		if (!pmu_known(pmus, *p)) {
			g_autoptr(GString) names = g_string_new(ENUMERATE_CORE_PMU ", "
								ENUMERATE_SOFTWARE_PMU);

			for (unsigned int i = 0; pmus && i < pmus->pmus->len; i++) {
				const struct pmu *pm = pmus->pmus->pdata[i];

				/* cpu and software lead the list already */
				if (strcmp(pm->name, ENUMERATE_CORE_PMU) != 0 &&
				    strcmp(pm->name, ENUMERATE_SOFTWARE_PMU) != 0)
					g_string_append_printf(names, ", %s", pm->name);
			}
			return pc_fail(ENOENT, "--pmu %s: no such PMU in %s (known: %s)", *p,
				       pmus && pmus->root ? pmus->root : PMU_SYSFS_ROOT,
				       names->str);
		}
	events_all(pmus, all);

	/* Each --event must name an event the host offers or parse as one. */
	for (const char *const *e = want_events; e && *e; e++) {
		bool listed = false; /* also true for a custom event given twice */
		struct spec sp = { 0 };
		int ret;

		for (unsigned int i = 0; i < all->len && !listed; i++)
			listed = strcmp(((struct enumerate_event *)all->pdata[i])->name, *e) == 0;
		if (listed)
			continue;
		ret = spec_parse(*e, pmus, &sp);
		if (ret < 0) {
			g_autofree char *msg = g_strdup(pc_errmsg());

			return pc_fail(-ret, "--event %s: unknown event: %s", *e, msg);
		}
		if (sp.modifiers && *sp.modifiers) {
			spec_clear(&sp);
			return pc_fail(EINVAL, "--event %s: give the event without modifiers "
				       "(the sweep adds them)", *e);
		}
		event_add(all, *e, sp.pmu ? sp.pmu :
			  sp.kind == SPEC_KIND_SOFTWARE ? ENUMERATE_SOFTWARE_PMU :
			  ENUMERATE_CORE_PMU);
		spec_clear(&sp);
	}

	for (unsigned int i = 0; i < all->len; i++) {
		struct enumerate_event *ev = all->pdata[i];

		if (!strv_empty(want_pmus) && !g_strv_contains(want_pmus, ev->pmu))
			continue;
		if (!strv_empty(want_events) && !g_strv_contains(want_events, ev->name))
			continue;
		event_add(res, ev->name, ev->pmu);
	}
	*out = g_steal_pointer(&res);
	return 0;
}

int enumerate_profiles(const struct enumerate_opts *opts, GPtrArray **out)
{
	GPtrArray *res = g_ptr_array_new();
	const char *const *want = opts ? opts->profiles : NULL;

	if (strv_empty(want)) {
		for (size_t i = 0; i < profile_count(); i++)
			g_ptr_array_add(res, (void *)profile_at(i));
	} else {
		for (const char *const *w = want; *w; w++) {
			const struct profile *p = profile_find(*w);

			if (!p) {
				g_autoptr(GString) names = g_string_new(NULL);

				for (size_t i = 0; i < profile_count(); i++)
					g_string_append_printf(names, "%s%s", i ? ", " : "",
							       profile_name(profile_at(i)));
				g_ptr_array_unref(res);
				return pc_fail(ENOENT, "--profile %s: no such profile (known: %s)",
					       *w, names->str);
			}
			if (!g_ptr_array_find(res, p, NULL))
				g_ptr_array_add(res, (void *)p);
		}
	}
	*out = res;
	return 0;
}

int enumerate_pairs(const struct pmu_set *pmus, const struct enumerate_opts *opts,
		    GPtrArray **out)
{
	g_autoptr(GPtrArray) profiles = NULL;
	g_autoptr(GPtrArray) events = NULL;
	g_autoptr(GPtrArray) raw = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *res;
	int ret;

	if ((ret = enumerate_profiles(opts, &profiles)) < 0 ||
	    (ret = enumerate_events(pmus, opts, &events)) < 0)
		return ret;
	enumerate_raw_suffixes(raw);
	res = g_ptr_array_new_with_free_func((GDestroyNotify)enumerate_pair_free);
	for (unsigned int i = 0; i < profiles->len; i++) {
		const struct profile *p = profiles->pdata[i];
		g_autoptr(GPtrArray) mods = g_ptr_array_new_with_free_func(g_free);
		bool is_raw = profile_is_raw(p);

		if (!is_raw)
			enumerate_modifiers(profile_modifiers(p), opts && opts->full, mods);
		for (unsigned int e = 0; e < events->len; e++) {
			const char *ev = ((struct enumerate_event *)events->pdata[e])->name;
			GPtrArray *suffixes = is_raw ? raw : mods;

			for (unsigned int m = 0; m < suffixes->len; m++) {
				const char *mod = suffixes->pdata[m];
				struct enumerate_pair *pair = g_new0(struct enumerate_pair, 1);

				pair->profile = p;
				/* spec_join spells sysfs modifiers the way every
				 * release accepts ("msr/tsc/u"); raw suffixes are
				 * "[...]" and join as they are. */
				if (is_raw)
					pair->spec = g_strconcat(ev, mod, NULL);
				else
					pair->spec = spec_join(ev, mod);
				g_ptr_array_add(res, pair);
			}
		}
	}
	*out = res;
	return 0;
}

int enumerate_check_testable(const struct result_set *set, unsigned int perf_binaries,
			     const char *where)
{
	const char *why = "the filters select no event";

	if (perf_binaries)
		return 0;
	for (guint i = 0; i < set->cells->len; i++) {
		if (((const struct cell *)set->cells->pdata[i])->has_attr)
			return 0;
		why = "every spec was rejected by every profile";
	}
	return pc_fail(EINVAL, "%s%snothing to test: %s", where ? where : "", where ? ": " : "",
		       why);
}

void enumerate_cells(const struct pmu_set *pmus, GPtrArray *pairs,
		     const char *kernel, struct result_set *set)
{
	for (unsigned int i = 0; i < pairs->len; i++) {
		const struct enumerate_pair *pair = pairs->pdata[i];
		struct cell *cell = cell_new(kernel, profile_name(pair->profile), pair->spec);
		struct perf_event_attr attr;

		memset(&attr, 0, sizeof(attr));
		pc_errclear();
		if (profile_encode(pair->profile, pmus, pair->spec, PROFILE_MODE_RECORD,
				   &attr) < 0)
			cell_set_error(cell, pc_errmsg());
		else
			cell_set_attr(cell, &attr);
		results_add_cell(set, cell);
	}
}
