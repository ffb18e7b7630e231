/* The results model (see results.h for the schema): the set and its
 * cells, the limitations, the lookups (cell keys, rules). The file is read
 * in results_read.c and written in results_write.c; its terminal view is
 * report/'s (matrix.h, matrix_format_text over one input). */
#include "results.h"
#include "results_priv.h"

#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const kind_names[RESULTS_KIND_COUNT] = {
	[RESULTS_KIND_PROBE] = "probe",
	[RESULTS_KIND_RUN] = "run",
};

/* The keys of the schema (results.h); the others are kept in `extra`. */
const char *const results_set_keys[] = {
	"schema", "kind", "run_id", "created", "tool_version", "host", "kernel",
	"accel", "limitations", "selftest", "scenario", "attrs", "cells", NULL
};
const char *const results_cell_keys[] = {
	"kernel", "profile", "spec", "attr", "error", "outcome", "tries",
	"per_cpu", "k", "n", "evidence", NULL
};

const char *results_kind_name(enum results_kind kind)
{
	return kind < RESULTS_KIND_COUNT ? kind_names[kind] : "?";
}

enum results_kind results_kind_from_name(const char *name)
{
	for (int i = 0; name && i < RESULTS_KIND_COUNT; i++)
		if (strcmp(kind_names[i], name) == 0)
			return i;
	return RESULTS_KIND_COUNT;
}

static void cell_try_clear(void *p)
{
	struct cell_try *t = p;

	g_free(t->why);
}

struct cell *cell_new(const char *kernel, const char *profile, const char *spec)
{
	struct cell *cell = g_new0(struct cell, 1);

	cell->kernel = g_strdup(kernel ? kernel : "");
	cell->profile = g_strdup(profile);
	cell->spec = g_strdup(spec);
	cell->outcome = OUTCOME_INFRA;
	cell->tries = g_array_new(FALSE, TRUE, sizeof(struct cell_try));
	g_array_set_clear_func(cell->tries, cell_try_clear);
	cell->per_cpu = g_array_new(FALSE, TRUE, sizeof(struct cell_cpu));
	cell->evidence = json_array();
	return cell;
}

void cell_free(struct cell *cell)
{
	if (!cell)
		return;
	g_free(cell->kernel);
	g_free(cell->profile);
	g_free(cell->spec);
	g_free(cell->error);
	g_array_unref(cell->tries);
	g_array_unref(cell->per_cpu);
	json_decref(cell->evidence);
	json_decref(cell->extra);
	g_free(cell);
}

void cell_set_attr(struct cell *cell, const struct perf_event_attr *attr)
{
	cell->has_attr = true;
	cell->attr = *attr;
	g_clear_pointer(&cell->error, g_free);
	/* An attr means the spec reached the kernel (or will): no longer a
	 * verdict of the profile's parser. */
	if (cell->outcome == OUTCOME_REJECTED)
		cell->outcome = OUTCOME_INFRA;
}

void cell_set_error(struct cell *cell, const char *message)
{
	cell->has_attr = false;
	memset(&cell->attr, 0, sizeof(cell->attr));
	g_free(cell->error);
	cell->error = g_strdup(message ? message : "rejected");
	cell->outcome = OUTCOME_REJECTED;
	g_array_set_size(cell->tries, 0);
	g_array_set_size(cell->per_cpu, 0);
}

const struct perf_event_attr *cell_first_attr(const struct cell *cell)
{
	if (cell->tries->len)
		return &g_array_index(cell->tries, struct cell_try, 0).attr;
	return cell->has_attr ? &cell->attr : NULL;
}

void cell_add_try(struct cell *cell, const struct perf_event_attr *attr,
		  enum outcome outcome, const char *why)
{
	struct cell_try t = { .attr = *attr, .outcome = outcome, .why = g_strdup(why) };

	g_array_append_val(cell->tries, t);
}

void cell_add_cpu(struct cell *cell, int cpu, enum outcome outcome)
{
	struct cell_cpu c = { .cpu = cpu, .outcome = outcome };

	g_array_append_val(cell->per_cpu, c);
}

char *results_spec_event(const char *spec)
{
	const char *br = strchr(spec, '[');
	const char *slash = strrchr(spec, '/');
	const char *colon;

	if (br && spec[strlen(spec) - 1] == ']')
		return g_strndup(spec, br - spec);
	/* pmu/terms/: the modifiers follow the closing slash, with or without
	 * a colon ("msr/tsc/u", "msr/tsc/:u"). */
	if (slash && slash != spec && strchr(spec, '/') != slash)
		return g_strndup(spec, slash + 1 - spec);
	colon = strchr(spec, ':');
	return colon ? g_strndup(spec, colon - spec) : g_strdup(spec);
}

struct result_set *result_set_new(enum results_kind kind)
{
	struct result_set *set = g_new0(struct result_set, 1);
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();
	g_autofree char *stamp = g_date_time_format(now, "%Y%m%dT%H%M%SZ");

	set->kind = kind;
	set->created = g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");
	set->run_id = g_strdup_printf("%s-%06x", stamp, g_random_int() & 0xffffff);
	set->tool_version = g_strdup(PMUCANARY_VERSION);
	set->kernel = g_strdup("");
	set->accel = g_strdup("none");
	set->limitations = g_ptr_array_new_with_free_func(g_free);
	set->cells = g_ptr_array_new_with_free_func((GDestroyNotify)cell_free);
	return set;
}

void result_set_free(struct result_set *set)
{
	if (!set)
		return;
	g_free(set->run_id);
	g_free(set->created);
	g_free(set->tool_version);
	json_decref(set->host);
	g_free(set->kernel);
	g_free(set->accel);
	g_ptr_array_unref(set->limitations);
	json_decref(set->scenario);
	g_ptr_array_unref(set->cells);
	json_decref(set->extra);
	g_free(set);
}

void results_add_cell(struct result_set *set, struct cell *cell)
{
	g_ptr_array_add(set->cells, cell);
}

static void limitation_add(struct result_set *set, char *line)
{
	for (unsigned int i = 0; i < set->limitations->len; i++)
		if (strcmp(set->limitations->pdata[i], line) == 0) {
			g_free(line);
			return;
		}
	g_ptr_array_add(set->limitations, line);
}

void results_add_limitation(struct result_set *set, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	limitation_add(set, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

void results_note_standard_limitations(struct result_set *set, bool hw_pmu)
{
	bool vm = json_is_true(json_object_get(json_object_get(set->host, "cpu"), "hypervisor"));

	if (set->accel && strcmp(set->accel, "tcg") == 0) {
		limitation_add(set, g_strdup(RESULTS_LIMIT_TCG));
		/* the run fell back to TCG (--tcg, or the fleet's own choice):
		 * its guests are not nested under KVM after all */
		for (guint i = 0; i < set->limitations->len; i++)
			if (!strcmp(set->limitations->pdata[i], RESULTS_LIMIT_NESTED_KVM))
				g_ptr_array_remove_index(set->limitations, i--);
	} else if (set->accel && strcmp(set->accel, "kvm") == 0 && vm) {
		limitation_add(set, g_strdup(RESULTS_LIMIT_NESTED_KVM));
	}
	if (!hw_pmu)
		limitation_add(set, g_strdup(RESULTS_LIMIT_NO_HW_PMU));
}

void results_set_host(struct result_set *set, json_t *host)
{
	const char *release = json_string_value(json_object_get(
		json_object_get(host, "kernel"), "release"));
	const char *accel = json_string_value(json_object_get(host, "accel"));

	json_decref(set->host);
	set->host = host;
	if (release) {
		g_free(set->kernel);
		set->kernel = g_strdup(release);
	}
	if (accel) {
		g_free(set->accel);
		set->accel = g_strdup(accel);
	}
	results_note_standard_limitations(
		set, json_is_true(json_object_get(host, "hw_pmu")));
}

const char *results_cell_rule(const struct cell *c)
{
	json_t *j = c->extra ? json_object_get(c->extra, "judged") : NULL;

	if (g_strcmp0(json_string_value(j), "rule"))
		return NULL;
	return json_string_value(json_object_get(c->extra, "rule"));
}

json_t *results_rules(const struct result_set *set)
{
	json_t *rules = set && set->extra ? json_object_get(set->extra, "rules") : NULL;

	return json_array_size(rules) ? rules : NULL;
}

struct results_rule_cover results_rule_cover(const struct result_set *set, const char *rule_text)
{
	struct results_rule_cover cov = { 0 };

	for (guint i = 0; rule_text && i < set->cells->len; i++) {
		const struct cell *c = set->cells->pdata[i];
		const char *judged, *text;

		if (!c->extra)
			continue;
		judged = json_string_value(json_object_get(c->extra, "judged"));
		text = json_string_value(json_object_get(c->extra, "rule"));
		if (!judged || g_strcmp0(text, rule_text))
			continue;
		if (!strcmp(judged, "rule"))
			cov.by_rule++;
		else if (!strcmp(judged, "alone"))
			cov.alone++;
	}
	return cov;
}

char *results_rule_describe(const struct result_set *set, const json_t *rule)
{
	const char *text = json_string_value(json_object_get(rule, "text"));
	const json_t *attrs = json_object_get(rule, "attrs");
	const json_t *refuted = json_object_get(rule, "refuted_before");
	const json_t *sample = json_object_get(rule, "sample");
	struct results_rule_cover cov = results_rule_cover(set, text);
	GString *s = g_string_new(text ? text : "?");
	size_t k;
	json_t *sa;

	g_string_append_printf(s, ": %s", json_string_value(json_object_get(rule, "outcome")) ?: "harm");
	if (json_is_integer(attrs))
		g_string_append_printf(s, " on %" JSON_INTEGER_FORMAT " attr%s",
				       json_integer_value(attrs),
				       json_integer_value(attrs) == 1 ? "" : "s");
	g_string_append_printf(s, ", %u cell%s (%u judged by the rule, not armed alone; %u armed "
			       "alone)", cov.by_rule + cov.alone,
			       cov.by_rule + cov.alone == 1 ? "" : "s", cov.by_rule, cov.alone);
	if (json_array_size(sample))
		g_string_append(s, "; sample");
	json_array_foreach(sample, k, sa)
		g_string_append_printf(s, "%s %s k/n=%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
				       k ? ";" : "",
				       json_string_value(json_object_get(sa, "attr")) ?: "?",
				       json_integer_value(json_object_get(sa, "k")),
				       json_integer_value(json_object_get(sa, "n")));
	if (json_is_integer(refuted))
		g_string_append_printf(s, "; %" JSON_INTEGER_FORMAT " rule%s refuted before it",
				       json_integer_value(refuted),
				       json_integer_value(refuted) == 1 ? "" : "s");
	return g_string_free(s, FALSE);
}

char *results_cell_key(const char *profile, const char *spec)
{
	return g_strdup_printf("%zu:%s%s", strlen(profile), profile, spec);
}
