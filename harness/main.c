/* pmucanary: dispatch to one subcommand from one table. */
#include "commands.h"
#include "log.h"
#include "outfile.h"
#include "report.h"
#include "results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	int out_fail; /* exit code when stdout or an output FILE fails */
	const char *help;
};

#define COMMAND_ENTRY(n, o, h) { #n, cmd_##n, o, h },
static const struct command commands[] = {
	COMMAND_LIST(COMMAND_ENTRY)
};
#undef COMMAND_ENTRY

static gboolean opt_verbose, opt_debug, opt_quiet;

static GOptionEntry common_entries[] = {
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opt_verbose, "log progress details", NULL },
	{ "debug", 0, 0, G_OPTION_ARG_NONE, &opt_debug, "log everything", NULL },
	{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "log errors only", NULL },
	{ NULL }
};

bool cli_parse(GOptionContext *ctx, const char *cmd, int *argc, char ***argv)
{
	g_autoptr(GError) err = NULL;

	g_option_context_add_main_entries(ctx, common_entries, NULL);
	if (!g_option_context_parse(ctx, argc, argv, &err)) {
		fprintf(stderr, "pmucanary %s: %s (see pmucanary %s --help)\n", cmd,
			err->message, cmd);
		return false;
	}
	if (opt_debug)
		log_set_level(LOG_DEBUG);
	else if (opt_verbose)
		log_set_level(LOG_INFO);
	else if (opt_quiet)
		log_set_level(LOG_ERROR);
	return true;
}

bool cli_bounded_int(const char *cmd, const char *name, const char *text, int min, int max,
		     int *out)
{
	gint64 v;

	if (!text)
		return true;
	/* g_ascii_string_to_signed takes "+5" and " 5"; a count is digits. */
	if (!*text || !g_ascii_isdigit(*text) || (text[0] == '0' && text[1]) ||
	    text[strspn(text, "0123456789")]) {
		fprintf(stderr, "pmucanary %s: option --%s: '%s' is not a decimal number "
			"(%d..%d)\n", cmd, name, text, min, max);
		return false;
	}
	/* Digits only: what does not fit in 64 bits is out of range too. */
	if (!g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, &v, NULL) ||
	    v < min || v > max) {
		fprintf(stderr, "pmucanary %s: option --%s: %s is out of range (%d..%d)\n", cmd,
			name, text, min, max);
		return false;
	}
	*out = (int)v;
	return true;
}

bool cli_bounded_seconds(const char *cmd, const char *name, const char *text, double min,
			 double max, double *out)
{
	char *end = NULL;
	double v;

	if (!text)
		return true;
	/* Decimal only: DIGITS[.DIGITS]; strtod would also take 0x10, 1e1, inf. */
	bool decimal = g_ascii_isdigit(*text);
	const char *p = text;

	while (g_ascii_isdigit(*p))
		p++;
	if (*p == '.' && g_ascii_isdigit(p[1]))
		for (p++; g_ascii_isdigit(*p); p++)
			;
	decimal = decimal && !*p;
	v = g_ascii_strtod(text, &end);
	if (!decimal || !end || *end || !isfinite(v)) {
		fprintf(stderr, "pmucanary %s: option --%s: '%s' is not a number of seconds "
			"(%g..%g)\n", cmd, name, text, min, max);
		return false;
	}
	if (v < min || v > max) {
		fprintf(stderr, "pmucanary %s: option --%s: %s is out of range (%g..%g)\n", cmd,
			name, text, min, max);
		return false;
	}
	*out = v;
	return true;
}

char *cli_default_scenario(void)
{
	g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
	g_autofree char *dir = exe ? g_path_get_dirname(exe) : NULL;

	if (g_file_test(DEFAULT_SCENARIO, G_FILE_TEST_EXISTS) || !dir)
		return g_strdup(DEFAULT_SCENARIO);
	return g_build_filename(dir, "..", DEFAULT_SCENARIO, NULL);
}

bool cli_want_progress(void)
{
	const char *ci = getenv("CI");

	return isatty(STDERR_FILENO) && !(ci && *ci) && log_get_level() <= LOG_WARN;
}

void cli_reports_add_entries(GOptionContext *ctx, struct cli_reports *r)
{
	GOptionEntry entries[] = {
		{ "junit", 0, 0, G_OPTION_ARG_FILENAME, &r->junit,
		  "also write JUnit XML: one testcase per cell, harm (or a regression "
		  "against the baseline) a failure, INFRA an error", "FILE" },
		{ "kcidb", 0, 0, G_OPTION_ARG_FILENAME, &r->kcidb,
		  "also write KCIDB v5 JSON (INFRA is ERROR, never FAIL)", "FILE" },
		{ NULL }
	};
	GOptionGroup *g = g_option_group_new("reports", "CI report options:",
					     "Show CI report options", NULL, NULL);

	g_option_group_add_entries(g, entries);
	g_option_context_add_group(ctx, g);
}

bool cli_reports_write(const char *cmd, const struct cli_reports *r,
		       const struct result_set *set, const struct result_set *base,
		       const char *base_name)
{
	const struct report_options opts = { .base = base, .base_name = base_name };
	const struct { enum report_format f; const char *path; } outs[] = {
		{ REPORT_JUNIT, r->junit }, { REPORT_KCIDB, r->kcidb },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(outs); i++) {
		if (outs[i].path && report_write(outs[i].f, &set, 1, &opts, outs[i].path) < 0) {
			fprintf(stderr, "pmucanary %s: --%s: %s\n", cmd, report_format_name(outs[i].f),
				pc_errmsg());
			return false;
		}
	}
	return true;
}

bool cli_reports_check(const char *cmd, const struct cli_reports *r)
{
	const struct { const char *opt, *path; } outs[] = {
		{ "junit", r->junit }, { "kcidb", r->kcidb },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(outs); i++) {
		if (outs[i].path && outfile_check(outs[i].path) < 0) {
			fprintf(stderr, "pmucanary %s: --%s: %s\n", cmd, outs[i].opt, pc_errmsg());
			return false;
		}
	}
	return true;
}

void cli_reports_clear(struct cli_reports *r)
{
	g_clear_pointer(&r->junit, g_free);
	g_clear_pointer(&r->kcidb, g_free);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: pmucanary COMMAND [OPTIONS...]\n\n"
		     "pmucanary finds which perf events harm KVM guests or stopped\n"
		     "working for older perf binaries.\n\ncommands:\n");
	for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\nRun 'pmucanary COMMAND --help' for the options of one command.\n"
		     "Exit codes: 0 clean, 1 harm or regression, 2 bad input, 125 could not test.\n");
}

/* The command running, for the stdout check at exit. */
static const struct command *running;
static bool stdout_checked;

/* A report printed to a full disk or device must not exit 0: stdio only
 * tells at the flush, and only if asked. Returns the exit code to use. */
static int stdout_finish(int rc)
{
	int err = 0;

	stdout_checked = true;
	if (fflush(stdout) != 0)
		err = errno;
	if (ferror(stdout) && !err)
		err = EIO;
	if (fclose(stdout) != 0 && !err)
		err = errno;
	if (!err)
		return rc;
	fprintf(stderr, "pmucanary%s%s: cannot write stdout: %s\n", running ? " " : "",
		running ? running->name : "", g_strerror(err));
	if (rc != EXIT_CLEAN)
		return rc;
	return running ? running->out_fail : EXIT_INFRA;
}

/* For exit() calls that bypass main's return: GOption's --help exits 0. */
static void stdout_at_exit(void)
{
	int rc;

	if (stdout_checked)
		return;
	rc = stdout_finish(EXIT_CLEAN);
	if (rc != EXIT_CLEAN)
		_exit(rc);
}

int main(int argc, char **argv)
{
	atexit(stdout_at_exit);
	if (argc < 2) {
		usage(stderr);
		return stdout_finish(EXIT_USAGE);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return stdout_finish(EXIT_CLEAN);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			running = &commands[i];
			return stdout_finish(commands[i].fn(argc - 1, argv + 1));
		}
	fprintf(stderr, "pmucanary: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return stdout_finish(EXIT_USAGE);
}
