/* The pmucanary subcommands: one table in main.c, one file per command. */
#ifndef PMUCANARY_COMMANDS_H
#define PMUCANARY_COMMANDS_H

/* Exit codes shared by every command (design.md "Contracts"). */
enum {
	EXIT_CLEAN = 0,   /* ran, nothing harmful / no regression */
	EXIT_HARM = 1,    /* found harm / regression */
	EXIT_USAGE = 2,   /* usage or bad input */
	EXIT_INFRA = 125, /* could not test / cannot tell */
};

/* name, the exit code when its output cannot be written (a full disk or
 * device: stdout or a FILE option), help. */
#define COMMAND_LIST(X)                                                                       \
	X(encode, EXIT_INFRA, "print the perf_event_attr a profile builds for each spec")     \
	X(probe,  EXIT_INFRA, "open every event x modifier combination on this host")         \
	X(image,  EXIT_INFRA, "build the guest initramfs for a kernel")                       \
	X(fleet,  EXIT_INFRA, "boot a fleet of guests and watch their heartbeats")            \
	X(run,    EXIT_INFRA, "the crash sweep: open phase, fleet, load phase, report")       \
	X(lab,    EXIT_INFRA, "one lab host per kernel under test, the sweep inside, diffs")  \
	X(trace,  EXIT_INFRA, "run a real perf binary and capture its perf_event_open calls") \
	X(diff,   EXIT_INFRA, "compare two runs: exit 1 on any regression (git bisect run)")  \
	X(matrix, EXIT_USAGE, "merge runs from many kernels and hosts into one matrix")  \
	X(lava,   EXIT_INFRA, "a LAVA job: write it, collect its log into run.json")          \
	X(repro,  EXIT_INFRA, "write a self-contained C reproducer and report per cell")     \
	X(bisect, EXIT_INFRA, "the first bad commit of a kernel tree, each step in a lab")

#define COMMAND_DECL(name, out_fail, help) int cmd_##name(int argc, char **argv);
COMMAND_LIST(COMMAND_DECL)
#undef COMMAND_DECL

/* Parses a GOptionContext; on error prints "pmucanary CMD: message" and
 * returns false. Adds the common --verbose/--quiet options. */
#include <glib.h>
#include <stdbool.h>
bool cli_parse(GOptionContext *ctx, const char *cmd, int *argc, char ***argv);

/* Counts and durations on the command line (--jobs, --guests, --vcpus,
 * --duration, --timeout, ...) share one rule: taken as text
 * (G_OPTION_ARG_STRING, so that "not given" stays apart from 0), decimal
 * digits only, in min..max, else "pmucanary CMD: option --NAME: ..." and
 * false (exit 2). text NULL (not given) leaves *out as it is. */
bool cli_bounded_int(const char *cmd, const char *name, const char *text, int min, int max,
		     int *out);
/* The same for seconds with a fraction (--selftest-at 0.5). */
bool cli_bounded_seconds(const char *cmd, const char *name, const char *text, double min,
			 double max, double *out);

/* The scenario run and lab take by default: scenarios/smoke.ini here, or
 * next to the checkout's binary when not run from it. */
#define DEFAULT_SCENARIO "scenarios/smoke.ini"
char *cli_default_scenario(void);
/* A live progress line: stderr is a terminal, not CI, not --verbose/--debug. */
bool cli_want_progress(void);

/* --junit FILE / --kcidb FILE for run, probe and diff: the entries to add
 * to a command's options, and the writer (base: a baseline whose
 * regressions fail, or NULL). Prints its own error; false on failure. */
struct result_set;
struct cli_reports {
	char *junit;
	char *kcidb;
};
void cli_reports_add_entries(GOptionContext *ctx, struct cli_reports *r);
/* Before hours of work: false (message printed) when a FILE cannot be
 * written at all (a directory, no such directory). */
bool cli_reports_check(const char *cmd, const struct cli_reports *r);
bool cli_reports_write(const char *cmd, const struct cli_reports *r,
		       const struct result_set *set, const struct result_set *base,
		       const char *base_name);
void cli_reports_clear(struct cli_reports *r);
typedef struct cli_reports cli_reports;
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(cli_reports, cli_reports_clear)

#endif
