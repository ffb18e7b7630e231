/* pmucanary repro RESULT [--cell PROFILE:SPEC]... [--out DIR]: one
 * self-contained reproducer (repro.c + README.txt) per cell (lib/report/repro.h). */
#include "commands.h"
#include "log.h"
#include "outfile.h"
#include "repro.h"
#include "results.h"
#include "textesc.h"

#include <stdio.h>

int cmd_repro(int argc, char **argv)
{
	g_auto(GStrv) cells = NULL;
	g_autofree char *out = NULL;
	g_autofree char *dwell_text = NULL;
	GOptionEntry entries[] = {
		{ "cell", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &cells,
		  "only this cell (repeatable); default: every harm and errno cell", "PROFILE:SPEC" },
		{ "out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
		  "write the cells' directories here (default: repro/ next to RESULT)", "DIR" },
		{ "dwell", 0, 0, G_OPTION_ARG_STRING, &dwell_text,
		  "how long an armed cell stays armed (default: the run's [load] dwell, "
		  "else 2 s)", "SECONDS" },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("RESULT");
	g_autoptr(result_set) set = NULL;
	g_autoptr(GPtrArray) picked = g_ptr_array_new();
	struct repro_opts opts = { 0 };
	double dwell_s = 0;

	g_option_context_set_summary(ctx,
		"Writes one directory per cell of a result file (run.json or probe --json),\n"
		"named from its profile and spec (bytes other than [A-Za-z0-9._-] as %XX,\n"
		"joined by '+'), holding repro.c, a C program that opens the cell's final\n"
		"perf_event_attr as the run did with only <linux/perf_event.h> and libc, and\n"
		"README.txt, a syzbot-style report: title, the attr in perf -vv's layout,\n"
		"host, k/n, evidence, the commands to build and run it.\n"
		"An errno cell's program opens and closes it on each online CPU and exits 0\n"
		"when the kernel gives that errno; any other cell's program arms it on every\n"
		"CPU with drained ring buffers for the dwell and exits 0 when it opened.\n"
		"Exit: 0 written, 2 bad input (a missing or bad file, a --cell not in it or\n"
		"without an attr), 125 a file could not be written.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!cli_parse(ctx, "repro", &argc, &argv))
		return EXIT_USAGE;
	if (argc != 2) {
		fprintf(stderr, "pmucanary repro: need one RESULT file (see pmucanary repro --help)\n");
		return EXIT_USAGE;
	}
	if (!cli_bounded_seconds("repro", "dwell", dwell_text, 0.01, 3600, &dwell_s))
		return EXIT_USAGE;
	opts.dwell_ms = (unsigned int)(dwell_s * 1000 + 0.5);
	if (results_read_json(argv[1], &set) < 0) {
		fprintf(stderr, "pmucanary repro: %s\n", pc_errmsg());
		return EXIT_USAGE;
	}
	for (char **c = cells; c && *c; c++) {
		const struct cell *cell;

		if (repro_find_cell(set, *c, &cell) < 0) {
			g_autofree char *name = text_escape(argv[1]);

			fprintf(stderr, "pmucanary repro: %s: %s\n", name, pc_errmsg());
			return EXIT_USAGE;
		}
		g_ptr_array_add(picked, (gpointer)cell);
	}
	if (!cells)
		for (guint i = 0; i < set->cells->len; i++)
			if (repro_cell_default(set->cells->pdata[i]))
				g_ptr_array_add(picked, set->cells->pdata[i]);
	if (!out) {
		g_autofree char *dir = g_path_get_dirname(argv[1]);

		out = g_build_filename(dir, "repro", NULL);
	}
	/* A path that cannot be used as given is bad input (README "Commands"). */
	if (g_file_test(out, G_FILE_TEST_EXISTS) && !g_file_test(out, G_FILE_TEST_IS_DIR)) {
		g_autofree char *shown = text_escape(out);

		fprintf(stderr, "pmucanary repro: --out %s: not a directory\n", shown);
		return EXIT_USAGE;
	}
	if (!picked->len) {
		printf("no harm or errno cell in %s: nothing to write (--cell picks others)\n",
		       argv[1]);
		return EXIT_CLEAN;
	}
	for (guint i = 0; i < picked->len; i++) {
		g_autofree char *dir = NULL;

		if (repro_write(set, argv[1], picked->pdata[i], &opts, out, &dir) < 0) {
			fprintf(stderr, "pmucanary repro: %s\n", pc_errmsg());
			return EXIT_INFRA;
		}
		printf("%s\n", dir);
	}
	return EXIT_CLEAN;
}
