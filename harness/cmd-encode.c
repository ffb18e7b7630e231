/* pmucanary encode: print the perf_event_attr a profile builds for each spec
 * (design.md "Contracts"). */
#include "attr.h"
#include "commands.h"
#include "log.h"
#include "outcome.h"
#include "pmu.h"
#include "profile.h"
#include "textesc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "EINVAL,2,ENOENT" -> errnos; false on a bad item. */
static bool errnos_parse(const char *text, GArray *out)
{
	g_auto(GStrv) items = g_strsplit(text, ",", -1);

	for (char **i = items; *i; i++) {
		guint64 v;
		/* An errno number is 1..4095 (MAX_ERRNO), decimal; "4294967318"
		 * is not EINVAL. */
		int e = g_ascii_isdigit(**i) ?
			(g_ascii_string_to_unsigned(*i, 10, 1, 4095, &v, NULL) ? (int)v : -1) :
			outcome_errno(outcome_from_name(*i));

		if (e <= 0)
			return false;
		g_array_append_val(out, e);
	}
	return true;
}

/* Walks the fallback chain for the given errnos, into o (JSON) or stdout. */
static void tries_add(const struct profile *p, const struct pmu_set *pmus, const char *spec,
		      enum profile_mode mode, const struct perf_event_attr *first, GArray *fails,
		      json_t *o, const char *text_spec)
{
	struct profile_fallback_state st;
	struct perf_event_attr attr = *first;
	json_t *tries = json_array();
	bool gave_up = false;

	profile_fallback_begin(p, pmus, spec, mode, &st);
	for (guint k = 0; k < fails->len; k++) {
		int err = g_array_index(fails, int, k);
		const char *why = "";

		if (!profile_fallback(p, &st, &attr, err, &why)) {
			gave_up = true;
			if (text_spec)
				printf("%s\tgives up after %s\n", text_spec,
				       outcome_name(outcome_from_errno(err)));
			break;
		}
		if (text_spec) {
			g_autofree char *s = attr_to_string(&attr);
			printf("%s\tretry %u (%s)\t%s\n", text_spec, k + 1, why, s);
		} else {
			json_t *t = attr_to_json(&attr);
			json_object_set_new(t, "why", json_string(why));
			json_array_append_new(tries, t);
		}
	}
	if (o) {
		json_object_set_new(o, "tries", tries);
		json_object_set_new(o, "gave_up", json_boolean(gave_up));
	} else {
		json_decref(tries);
	}
}

static void profiles_list(void)
{
	for (size_t i = 0; i < profile_count(); i++) {
		const struct profile *p = profile_at(i);
		printf("%-12s %-16s %s\n", profile_name(p),
		       profile_is_raw(p) ? "-" : profile_modifiers(p), profile_releases(p));
	}
}

int cmd_encode(int argc, char **argv)
{
	g_autofree char *profile_opt = NULL, *release_opt = NULL, *mode_opt = NULL;
	g_autofree char *sysfs_opt = NULL, *fail_opt = NULL;
	g_autoptr(GArray) fails = g_array_new(FALSE, FALSE, sizeof(int));
	gboolean json = FALSE, list = FALSE;
	GOptionEntry entries[] = {
		{ "profile", 'p', 0, G_OPTION_ARG_STRING, &profile_opt,
		  "the profile (perf release) to encode with; see --list-profiles", "P" },
		{ "release", 'r', 0, G_OPTION_ARG_STRING, &release_opt,
		  "pick the profile for a perf release as `perf --version` prints it "
		  "(\"6.1.187\", \"perf version 3.6.0\")", "VERSION" },
		{ "mode", 'm', 0, G_OPTION_ARG_STRING, &mode_opt,
		  "record: what `perf record -a -g` opens (default); stat: `perf stat -a`",
		  "record|stat" },
		{ "json", 'j', 0, G_OPTION_ARG_NONE, &json,
		  "print a JSON array, one object per spec: \"spec\" plus every non-zero "
		  "perf_event_attr member by its kernel name, or \"error\"", NULL },
		{ "list-profiles", 'l', 0, G_OPTION_ARG_NONE, &list,
		  "list the profiles: name, modifier letters, perf releases (with --release: "
		  "only the profile for that release)", NULL },
		{ "fail", 'f', 0, G_OPTION_ARG_STRING, &fail_opt,
		  "also show the profile's retry-on-error chain: pretend the kernel "
		  "refused each try with these errnos in turn (names or numbers, "
		  "\"EINVAL,EINVAL,ENOENT\"); JSON adds \"tries\" (each attr with "
		  "\"why\") and \"gave_up\" (the release stops retrying)", "ERRNO,..." },
		{ "sysfs", 0, 0, G_OPTION_ARG_FILENAME, &sysfs_opt,
		  "PMU directory to resolve pmu/event/ specs (default " PMU_SYSFS_ROOT ")", "DIR" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("SPEC...");
	g_autoptr(pmu_set) pmus = NULL;
	const struct profile *p = NULL;
	enum profile_mode mode = PROFILE_MODE_RECORD;
	json_t *arr = NULL;
	int rejected = 0;

	g_option_context_set_summary(ctx,
		"Prints the perf_event_attr that profile P builds for each SPEC, as\n"
		"perf spells it: cycles:ppH, cpu-clock:u, L1-dcache-load-misses, r01c2,\n"
		"msr/tsc/, msr/tsc/u (sysfs modifiers follow the '/'), cpu/event=0x3c/.\n"
		"The raw profile takes EVENT[member,member=value], e.g.\n"
		"cycles[exclude_guest,precise_ip=2]: no defaults, no modifiers, no\n"
		"fallbacks; in record mode it still carries perf 6.1's sampling members\n"
		"(freq 4000, callchain, ...), which [members] override.\n"
		"Text output: one line per spec, SPEC<TAB>attr.\n\n"
		"Exit: 0 every spec encoded; 2 bad usage (no/unknown profile, no spec)\n"
		"or, in text mode, any spec the profile rejects (the reason goes to\n"
		"stderr). With --json a rejected spec is data: its object carries\n"
		"\"error\" and the exit code stays 0.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!cli_parse(ctx, "encode", &argc, &argv))
		return EXIT_USAGE;
	if (list && release_opt) {
		/* Just the profile standing for that release. */
		p = profile_for_release(release_opt);
		if (!p) {
			fprintf(stderr, "pmucanary encode: no profile for perf release '%s'\n",
				release_opt);
			return EXIT_USAGE;
		}
		printf("%-12s %-16s %s\n", profile_name(p), profile_modifiers(p), profile_releases(p));
		return EXIT_CLEAN;
	}
	if (list) {
		profiles_list();
		return EXIT_CLEAN;
	}
	if (profile_opt && release_opt) {
		fprintf(stderr, "pmucanary encode: give --profile or --release, not both\n");
		return EXIT_USAGE;
	}
	if (release_opt) {
		p = profile_for_release(release_opt);
		if (!p) {
			fprintf(stderr, "pmucanary encode: no profile for perf release '%s'\n",
				release_opt);
			return EXIT_USAGE;
		}
	} else if (profile_opt) {
		p = profile_find(profile_opt);
		if (!p) {
			GString *known = g_string_new(NULL);
			for (size_t i = 0; i < profile_count(); i++)
				g_string_append_printf(known, "%s%s", i ? ", " : "",
						       profile_name(profile_at(i)));
			fprintf(stderr, "pmucanary encode: unknown profile '%s' (known: %s)\n",
				profile_opt, known->str);
			g_string_free(known, TRUE);
			return EXIT_USAGE;
		}
	} else {
		fprintf(stderr, "pmucanary encode: --profile is required (see pmucanary encode --list-profiles)\n");
		return EXIT_USAGE;
	}
	if (mode_opt) {
		if (strcmp(mode_opt, "record") == 0)
			mode = PROFILE_MODE_RECORD;
		else if (strcmp(mode_opt, "stat") == 0)
			mode = PROFILE_MODE_STAT;
		else {
			fprintf(stderr, "pmucanary encode: --mode must be record or stat, not '%s'\n",
				mode_opt);
			return EXIT_USAGE;
		}
	}
	if (fail_opt && !errnos_parse(fail_opt, fails)) {
		fprintf(stderr, "pmucanary encode: --fail: not an errno list: '%s'\n", fail_opt);
		return EXIT_USAGE;
	}
	if (argc < 2) {
		fprintf(stderr, "pmucanary encode: no SPEC given (see pmucanary encode --help)\n");
		return EXIT_USAGE;
	}
	/* Generic events need no sysfs; a host without it still encodes them. */
	if (pmu_set_load(sysfs_opt, &pmus) < 0) {
		if (sysfs_opt) {
			fprintf(stderr, "pmucanary encode: %s\n", pc_errmsg());
			return EXIT_USAGE;
		}
		pc_warn("no PMUs: %s", pc_errmsg());
	}

	/* A spec is text: bytes that are not UTF-8 would be dropped from the
	 * JSON (jansson refuses them) with the spec's error. */
	for (int i = 1; i < argc; i++)
		if (!g_utf8_validate(argv[i], -1, NULL)) {
			g_autofree char *esc = text_escape(argv[i]);

			fprintf(stderr, "pmucanary encode: spec '%s' is not valid UTF-8\n", esc);
			return EXIT_USAGE;
		}
	if (json)
		arr = json_array();
	for (int i = 1; i < argc; i++) {
		struct perf_event_attr attr;
		int ret = profile_encode(p, pmus, argv[i], mode, &attr);

		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "spec", json_string(argv[i]));
			if (ret < 0) {
				json_object_set_new(o, "error", json_string(pc_errmsg()));
			} else {
				json_t *a = attr_to_json(&attr);
				json_object_update(o, a);
				json_decref(a);
				if (fail_opt)
					tries_add(p, pmus, argv[i], mode, &attr, fails, o, NULL);
			}
			json_array_append_new(arr, o);
		} else if (ret < 0) {
			fprintf(stderr, "pmucanary encode: %s: %s\n", profile_name(p), pc_errmsg());
		} else {
			g_autofree char *s = attr_to_string(&attr);
			printf("%s\t%s\n", argv[i], s);
			if (fail_opt)
				tries_add(p, pmus, argv[i], mode, &attr, fails, NULL, argv[i]);
		}
		if (ret < 0)
			rejected++;
	}
	if (json) {
		json_dumpf(arr, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(arr);
		return EXIT_CLEAN;
	}
	return rejected ? EXIT_USAGE : EXIT_CLEAN;
}
