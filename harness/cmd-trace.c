/* pmucanary trace: run a real perf binary and print its perf_event_open calls.
 *
 * Exit codes: 0 traced (the command's own status is printed, not returned),
 * 2 usage or the command cannot be run, 125 tracing itself failed or the
 * output could not be written. */
#include "commands.h"
#include "log.h"
#include "outfile.h"
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_text(FILE *out, const struct trace_result *res)
{
	for (guint i = 0; i < res->calls->len; i++) {
		g_autofree char *line = trace_call_to_string(res->calls->pdata[i]);
		fprintf(out, "%s\n", line);
	}
	if (res->term_signal)
		fprintf(out, "killed by signal %d (%s)\n", res->term_signal,
			strsignal(res->term_signal));
	else
		fprintf(out, "exit status %d\n", res->exit_code);
}

int cmd_trace(int argc, char **argv)
{
	g_autofree char *json_path = NULL, *method_name = NULL;
	int tail_lines = TRACE_STDERR_TAIL_DEFAULT;
	g_autofree char *tail_opt = NULL;
	GOptionEntry entries[] = {
		{ "json", 'j', 0, G_OPTION_ARG_FILENAME, &json_path,
		  "write the capture as JSON to FILE ('-' for stdout, instead of text)", "FILE" },
		{ "method", 'm', 0, G_OPTION_ARG_STRING, &method_name,
		  "seccomp (stop at perf_event_open only, default) or syscall (every syscall)",
		  "METHOD" },
		{ "tail", 0, 0, G_OPTION_ARG_STRING, &tail_opt,
		  "lines of the command's stderr to keep, 1..100000 (default 20)", "N" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("-- PERF_COMMAND [ARGS...]");
	struct trace_options opts = { .method = TRACE_METHOD_SECCOMP,
				      .stderr_passthrough_fd = STDERR_FILENO };
	g_autoptr(trace_result) res = NULL;

	g_option_context_set_summary(ctx,
		"Runs PERF_COMMAND (no shell) under ptrace and prints every perf_event_open\n"
		"it makes: the attr read from its memory, cpu, and the fd or errno.\n"
		"Its stderr still passes through. Exit: 0 traced, 2 usage or cannot run,\n"
		"125 tracing failed or the output could not be written.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	/* Stop at the first non-option so the command's options are its own. */
	g_option_context_set_strict_posix(ctx, TRUE);
	if (!cli_parse(ctx, "trace", &argc, &argv))
		return EXIT_USAGE;
	if (argc >= 2 && strcmp(argv[1], "--") == 0) {
		argc--;
		argv++;
	}
	if (argc < 2) {
		fprintf(stderr, "pmucanary trace: no command given (see pmucanary trace --help)\n");
		return EXIT_USAGE;
	}
	if (method_name) {
		opts.method = trace_method_from_name(method_name);
		if (opts.method == TRACE_METHOD_COUNT) {
			fprintf(stderr, "pmucanary trace: unknown method '%s' (seccomp, syscall)\n",
				method_name);
			return EXIT_USAGE;
		}
	}
	if (!cli_bounded_int("trace", "tail", tail_opt, 1, 100000, &tail_lines))
		return EXIT_USAGE;
	opts.stderr_tail_lines = tail_lines;
	/* A FILE that cannot be written fails before the command runs. */
	if (json_path && strcmp(json_path, "-") && outfile_check(json_path) < 0) {
		fprintf(stderr, "pmucanary trace: --json: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}

	int ret = trace_run(argv + 1, &opts, &res);
	if (ret < 0) {
		fprintf(stderr, "pmucanary trace: %s\n", pc_errmsg());
		return pc_errno_bad_path(ret) && ret != -EINVAL ? EXIT_USAGE : EXIT_INFRA;
	}

	pc_info("trace: %u calls, %lu ptrace stops (%s method), %lu stderr lines",
		res->calls->len, res->stops, trace_method_name(opts.method), res->stderr_lines);
	if (json_path) {
		json_t *j = trace_result_to_json(res, argv + 1);
		char *text = json_dumps(j, JSON_INDENT(2));
		g_autofree char *doc = text ? g_strconcat(text, "\n", NULL) : NULL;
		bool to_stdout = strcmp(json_path, "-") == 0;

		free(text);
		json_decref(j);
		if (!doc) {
			fprintf(stderr, "pmucanary trace: cannot build the JSON\n");
			return EXIT_INFRA;
		}
		/* stdout's own errors are caught at exit (main.c). */
		if (to_stdout) {
			fputs(doc, stdout);
			return EXIT_CLEAN;
		}
		if (outfile_write(json_path, doc, strlen(doc)) < 0) {
			fprintf(stderr, "pmucanary trace: --json: %s\n", pc_errmsg());
			return EXIT_INFRA;
		}
	}
	print_text(stdout, res);
	return EXIT_CLEAN;
}
