/* The open phase of a run (runner.h, runner_priv.h): the scenario's
 * (profile, spec) pairs as cells, the --perf-binary columns traced, every
 * attr opened on every CPU by the prober, the distinct attrs that opened
 * collected for the load phase, and --selftest-harm's cell marked. */
#include "runner.h"
#include "runner_priv.h"

#include "attr.h"
#include "enumerate.h"
#include "fingerprint.h"
#include "fleet.h"
#include "hbproto.h"
#include "isolate.h"
#include "journal.h"
#include "kmsg.h"
#include "load.h"
#include "infile.h"
#include "log.h"
#include "only.h"
#include "pool.h"
#include "perfbin.h"
#include "perfev.h"
#include "prober.h"
#include "profile.h"
#include "report.h"
#include "results.h"
#include "spec.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- setup ---------------------------------------------------------------- */

static const char *const *strv_or_null(const GPtrArray *a)
{
	if (!a->len || (a->len == 1 && !strcmp(a->pdata[0], "*")))
		return NULL;
	return (const char *const *)a->pdata;
}

/* NULL-terminated view of a GPtrArray of strings (adds the terminator). */
static GPtrArray *strv_copy(const GPtrArray *a)
{
	GPtrArray *v = g_ptr_array_new();

	for (guint i = 0; i < a->len; i++)
		g_ptr_array_add(v, a->pdata[i]);
	g_ptr_array_add(v, NULL);
	return v;
}

static void add_cell(struct run *r, const struct profile *p, const char *spec,
		     enum profile_mode mode, const char *kernel)
{
	struct cell *cell = cell_new(kernel, profile_name(p), spec);
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	pc_errclear();
	if (profile_encode(p, r->pmus, spec, mode, &attr) < 0)
		cell_set_error(cell, pc_errmsg());
	else
		cell_set_attr(cell, &attr);
	results_add_cell(r->set, cell);
}

/* "path:line: [section] key: " for a message about a key whose value only
 * turns out bad once used (an unknown profile, event or PMU): bad input
 * names its line like the scenario parser's own messages. */
static char *key_where(const struct scenario *s, const char *section, const char *key)
{
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	bool in = false;

	if (s->path && g_file_get_contents(s->path, &text, NULL, NULL)) {
		lines = g_strsplit(text, "\n", -1);
		for (guint i = 0; lines[i]; i++) {
			g_autofree char *l = g_strstrip(g_strdup(lines[i]));
			size_t n = strlen(key);

			if (l[0] == '[')
				in = l[strlen(l) - 1] == ']' && strlen(l) == strlen(section) + 2 &&
				     !strncmp(l + 1, section, strlen(section));
			else if (in && !strncmp(l, key, n) && (l[n] == '=' || l[n] == ' ' || l[n] == '\t'))
				return g_strdup_printf("%s:%u: [%s] %s: ", s->path, i + 1, section, key);
		}
	}
	return g_strdup_printf("%s: [%s] %s: ", s->path ? s->path : "scenario", section, key);
}

/* The scenario's (profile, spec) pairs as cells of the set. */
int runner_build_cells(struct run *r, const char *kernel)
{
	const struct scenario *s = r->sc;
	g_autoptr(GPtrArray) pv = strv_copy(s->profiles);
	g_autoptr(GPtrArray) mv = strv_copy(s->pmus);
	g_autoptr(GPtrArray) ev = strv_copy(s->events);
	struct enumerate_opts eo = { 0 };
	g_autoptr(GPtrArray) profiles = NULL;
	g_autoptr(GPtrArray) events = NULL;
	g_autoptr(GPtrArray) raw = g_ptr_array_new_with_free_func(g_free);
	enum profile_mode mode = !strcmp(s->mode, "stat") ? PROFILE_MODE_STAT : PROFILE_MODE_RECORD;
	bool sweep_events = s->pmus->len || s->events->len;
	bool have_raw = false;

	eo.profiles = strv_or_null(s->profiles) ? (const char *const *)pv->pdata : NULL;
	eo.pmus = strv_or_null(s->pmus) ? (const char *const *)mv->pdata : NULL;
	eo.events = strv_or_null(s->events) ? (const char *const *)ev->pdata : NULL;
	eo.full = !strcmp(s->modifier_set, "full");
	if (enumerate_profiles(&eo, &profiles)) {
		g_autofree char *where = key_where(s, "sweep", "profiles");

		return runner_refail(EINVAL, where);
	}
	if (sweep_events && enumerate_events(r->pmus, &eo, &events)) {
		/* The message names the event or the PMU at fault. */
		g_autofree char *where = key_where(s, "sweep",
			strstr(pc_errmsg(), "--pmu") ? "pmus" : "events");

		return runner_refail(EINVAL, where);
	}
	enumerate_raw_suffixes(raw);

	for (guint i = 0; i < profiles->len; i++) {
		const struct profile *p = profiles->pdata[i];
		g_autoptr(GPtrArray) mods = g_ptr_array_new_with_free_func(g_free);
		bool is_raw = profile_is_raw(p);

		have_raw |= is_raw;
		if (is_raw) {
			if (s->raw_excludes)
				for (guint m = 0; m < raw->len; m++)
					g_ptr_array_add(mods, g_strdup(raw->pdata[m]));
			else
				g_ptr_array_add(mods, g_strdup(""));
		} else if (eo.full) {
			enumerate_modifiers(profile_modifiers(p), true, mods);
		} else {
			for (guint m = 0; m < s->modifiers->len; m++)
				g_ptr_array_add(mods, g_strdup(s->modifiers->pdata[m]));
		}
		for (guint k = 0; events && k < events->len; k++) {
			const char *name = ((struct enumerate_event *)events->pdata[k])->name;

			for (guint m = 0; m < mods->len; m++) {
				const char *mod = mods->pdata[m];
				/* Spelled as probe spells it (spec_join: "msr/tsc/u",
				 * "cpu-clock:u") so that runs and probes share cells. */
				g_autofree char *spec = !*mod ? g_strdup(name) :
					is_raw ? g_strconcat(name, mod, NULL) : spec_join(name, mod);

				add_cell(r, p, spec, mode, kernel);
			}
		}
		/* Exact specs; raw takes only its own syntax (no ':'). */
		for (guint k = 0; k < s->specs->len; k++)
			if (!is_raw || !strchr(s->specs->pdata[k], ':'))
				add_cell(r, p, s->specs->pdata[k], mode, kernel);
	}
	if (s->raw_excludes && !have_raw)
		pc_warn("%s: raw_excludes is set but profile raw is not swept", s->path);
	if (!r->set->cells->len)
		return pc_fail(EINVAL, "%s: the scenario gives no cells to sweep", s->path);
	return 0;
}

/* The attr the kernel accepted: an OK cell's attr is its final one, after
 * the profile's fallbacks (results.h). */
static const struct perf_event_attr *armed_attr(const struct cell *c)
{
	return &c->attr;
}

static void collect_armed(struct run *r)
{
	r->armed = g_ptr_array_new_with_free_func(runner_armed_free);
	r->index = g_hash_table_new(attr_hash_func, attr_equal_func);
	for (guint i = 0; i < r->set->cells->len; i++) {
		struct cell *c = r->set->cells->pdata[i];
		const struct perf_event_attr *a;
		struct armed *arm;
		gpointer v;

		if (!c->has_attr || c->outcome != OUTCOME_OK)
			continue;
		a = armed_attr(c);
		if (g_hash_table_lookup_extended(r->index, a, NULL, &v)) {
			arm = r->armed->pdata[GPOINTER_TO_UINT(v) - 1];
		} else {
			arm = g_new0(struct armed, 1);
			arm->attr = *a;
			arm->key = attr_to_string(a);
			arm->cells = g_ptr_array_new();
			arm->arm_cpu = -1;
			g_ptr_array_add(r->armed, arm);
			g_hash_table_insert(r->index, &arm->attr, GUINT_TO_POINTER(r->armed->len));
		}
		g_ptr_array_add(arm->cells, c);
	}
}

/* --selftest-harm's spec must be swept: a cell of that spec, or an attr
 * some profile encodes it to that a cell of the sweep has. Checked before
 * the run directory exists (mark_selftest then marks what opened). */
int runner_selftest_in_sweep(struct run *r)
{
	const char *spec = r->selftest_spec;
	enum profile_mode mode = !strcmp(r->sc->mode, "stat") ? PROFILE_MODE_STAT : PROFILE_MODE_RECORD;
	g_autoptr(GHashTable) attrs = NULL;

	if (!spec)
		return 0;
	attrs = g_hash_table_new(attr_hash_func, attr_equal_func);
	for (guint i = 0; i < r->set->cells->len; i++) {
		struct cell *c = r->set->cells->pdata[i];

		if (!strcmp(c->spec, spec))
			return 0;
		if (c->has_attr)
			g_hash_table_add(attrs, &c->attr);
	}
	for (guint i = 0; i < r->set->cells->len; i++) {
		const struct cell *c = r->set->cells->pdata[i];
		const struct profile *p = profile_find(c->profile);
		struct perf_event_attr attr;

		memset(&attr, 0, sizeof(attr));
		if (p && profile_encode(p, r->pmus, spec, mode, &attr) == 0 &&
		    g_hash_table_contains(attrs, &attr))
			return 0;
	}
	return pc_fail(EINVAL, "--selftest-harm %s: not in this run's sweep (no spec of the scenario "
		       "is it or encodes to the same attr)", spec);
}

int runner_mark_selftest(struct run *r)
{
	const char *spec = r->selftest_spec;
	unsigned int marked = 0;
	enum profile_mode mode = !strcmp(r->sc->mode, "stat") ? PROFILE_MODE_STAT : PROFILE_MODE_RECORD;

	if (!spec)
		return 0;
	/* Cells of that spec arm what their fallbacks reached... */
	for (guint i = 0; i < r->armed->len; i++) {
		struct armed *a = r->armed->pdata[i];

		for (guint k = 0; k < a->cells->len && !a->selftest; k++)
			if (!strcmp(((struct cell *)a->cells->pdata[k])->spec, spec))
				a->selftest = true;
	}
	/* ...and any profile's first encoding of it that is armed anyway. */
	for (guint i = 0; i < r->set->cells->len; i++) {
		const struct cell *c = r->set->cells->pdata[i];
		const struct profile *p = profile_find(c->profile);
		struct perf_event_attr attr;
		gpointer v;

		if (!p || (i && !strcmp(c->profile, ((struct cell *)r->set->cells->pdata[i - 1])->profile)))
			continue;
		memset(&attr, 0, sizeof(attr));
		if (profile_encode(p, r->pmus, spec, mode, &attr) == 0 &&
		    g_hash_table_lookup_extended(r->index, &attr, NULL, &v))
			((struct armed *)r->armed->pdata[GPOINTER_TO_UINT(v) - 1])->selftest = true;
	}
	for (guint i = 0; i < r->armed->len; i++)
		marked += ((struct armed *)r->armed->pdata[i])->selftest;
	if (!marked)
		return pc_fail(EINVAL, "--selftest-harm %s: no attr of this run encodes it "
			       "(it must be swept by the scenario and open OK)", spec);
	pc_info("self-test: %u armed attr(s) stand for %s", marked, spec);
	return 0;
}

/* Why a binary's column is load-tested through the harness: the evidence and
 * --help say the same. */
#define PERFBIN_LOAD_NOTE \
	"the load phase arms the attr this binary opened last with success " \
	"(captured from its perf_event_open calls) through the harness, like a " \
	"profile's attr, instead of running `perf record` per spec for the dwell: " \
	"group testing needs the harness to arm and disarm sets of attrs together " \
	"and split them, which one perf process per spec cannot do; an attr equal " \
	"to one a profile opened is armed once and shares its verdict"

json_t *runner_bins_json(const struct run *r)
{
	json_t *a = json_array();

	for (guint i = 0; i < r->bins->len; i++) {
		const struct perfbin *pb = r->bins->pdata[i];

		json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "name", pb->name,
						   "path", pb->path, "version", pb->version));
	}
	return a;
}

/* --perf-binary, or on --resume the binaries the run started with; a binary
 * whose version changed since would arm other attrs: refuse. */
int runner_open_binaries(struct run *r)
{
	const struct runner_opts *o = r->opts;
	json_t *old = r->replay ? json_object_get(r->replay->start, "perf_binaries") : NULL;
	g_autoptr(GPtrArray) paths = g_ptr_array_new();
	size_t i;
	json_t *b;
	int e;

	r->bins = g_ptr_array_new_with_free_func((GDestroyNotify)perfbin_free);
	for (i = 0; i < o->perf_binary_count; i++)
		g_ptr_array_add(paths, (gpointer)o->perf_binaries[i]);
	if (!paths->len)
		json_array_foreach(old, i, b)
			g_ptr_array_add(paths, (gpointer)json_string_value(json_object_get(b, "path")));
	if (r->replay && paths->len != json_array_size(old))
		return pc_fail(EINVAL, "--resume %s: the run started with %zu --perf-binary, "
			       "not %u: resume with the same ones (or none to reuse them)",
			       o->resume_dir, json_array_size(old), paths->len);
	for (guint k = 0; k < paths->len; k++) {
		const char *path = paths->pdata[k];
		struct perfbin *pb = NULL;

		if (!path)
			return pc_fail(EINVAL, "%s: bad \"perf_binaries\" in the start line",
				       o->resume_dir);
		if ((e = perfbin_open(path, &pb)))
			return pc_errno_bad_path(e) ? runner_refail(EINVAL, "--perf-binary: ") : e;
		g_ptr_array_add(r->bins, pb);
		if (r->replay) {
			json_t *ob = json_array_get(old, k);
			const char *op = json_string_value(json_object_get(ob, "path"));
			const char *ov = json_string_value(json_object_get(ob, "version"));

			if (g_strcmp0(op, path))
				return pc_fail(EINVAL, "--resume %s: --perf-binary %s: the run started "
					       "with %s there", o->resume_dir, path, op ? op : "?");
			if (g_strcmp0(ov, pb->version))
				return pc_fail(EINVAL, "--resume %s: %s is perf %s now; the run started "
					       "with perf %s, whose attrs it armed: start a new run",
					       o->resume_dir, path, pb->version, ov ? ov : "?");
		}
	}
	return 0;
}

/* Each binary's column: the sweep's specs (every non-raw profile's, once)
 * traced under perf stat; runs after the prober, whose cells these are not. */
static int probe_binaries(struct run *r)
{
	g_autoptr(GPtrArray) specs = g_ptr_array_new();
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
	guint nprofile = r->set->cells->len;
	int e;

	if (!r->bins->len)
		return 0;
	for (guint i = 0; i < nprofile; i++) {
		const struct cell *c = r->set->cells->pdata[i];
		const struct profile *p = profile_find(c->profile);

		if (p && !profile_is_raw(p) && g_hash_table_add(seen, c->spec))
			g_ptr_array_add(specs, c->spec);
	}
	for (guint i = 0; i < r->bins->len; i++) {
		struct perfbin *pb = r->bins->pdata[i];
		guint first = r->set->cells->len;

		perfbin_name_unique(pb, r->set);
		pc_info("open phase: tracing %s (%s) on %u spec(s)", pb->name, pb->path, specs->len);
		if ((e = perfbin_probe_cells(pb, r->pmus, (const char *const *)specs->pdata,
					     specs->len, NULL, r->set)) < 0) {
			g_autofree char *prefix = g_strdup_printf("--perf-binary %s: ", pb->path);

			return runner_refail(-e, prefix);
		}
		for (guint k = first; k < r->set->cells->len; k++) {
			struct cell *c = r->set->cells->pdata[k];

			json_array_append_new(c->evidence, json_pack("{s:s,s:s,s:s,s:s,s:s}",
				"kind", "perf-binary", "path", pb->path, "version", pb->version,
				"open", "`PATH stat -e SPEC -a -- true` under the tracer",
				"load", PERFBIN_LOAD_NOTE));
		}
		results_add_limitation(r->set, "%s (%s) ran `perf stat -e SPEC -a -- true` under "
				       "the tracer (counting); the built-in profiles encode `perf "
				       "record -a -g` (sampling): specs whose outcome depends on "
				       "sampling (msr/tsc/, ...) differ for that reason; %s",
				       pb->name, pb->path, PERFBIN_LOAD_NOTE);
	}
	json_object_set_new(r->set->extra ? r->set->extra : (r->set->extra = json_object()),
			    "perf_binaries", runner_bins_json(r));
	return 0;
}

int runner_open_phase(struct run *r)
{
	g_autoptr(prober) pr = NULL;
	struct prober_opts po = { 0 };
	json_t *counts = json_object();
	int e;

	po.mode = !strcmp(r->sc->mode, "stat") ? PROFILE_MODE_STAT : PROFILE_MODE_RECORD;
	po.pmus = r->pmus;
	if ((e = prober_new(&po, &pr)) || (e = prober_run(pr, r->set)) ||
	    (e = probe_binaries(r))) {
		json_decref(counts);
		return e;
	}
	for (guint i = 0; i < r->set->cells->len; i++) {
		const struct cell *c = r->set->cells->pdata[i];
		const char *name = outcome_name(c->outcome);

		json_object_set_new(counts, name,
				    json_integer(json_integer_value(json_object_get(counts, name)) + 1));
	}
	collect_armed(r);
	pc_info("open phase: %u cells, %u distinct attrs to arm", r->set->cells->len, r->armed->len);
	if (!r->replay || !r->replay->open_done)
		e = journal_open_done(r->j, counts);
	json_decref(counts);
	return e;
}
