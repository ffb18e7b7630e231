/* The result-file reader (run.json / probe.json, as diff and matrix read
 * files from other machines), through its public API results_read_json().
 * Property: what it accepts, results_to_json() and the file writer's text
 * (results_to_text, as results_write_json writes it) give back in a form it
 * accepts again, with the same cells, field by field (fuzz_cells.h); the
 * terminal views of it as one input (a run's matrix.txt, `matrix --all`)
 * can be formatted, or the matrix refuses it (a cell given twice). */
#include "fuzz_cells.h"
#include "matrix.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *path = fuzz_file("fuzz.json", data, size);
	g_autoptr(result_set) set = NULL;
	g_autoptr(GString) view = g_string_new(NULL);
	g_autoptr(matrix) m = NULL;
	const struct result_set *one;
	int ret;

	pc_errclear();
	ret = results_read_json(path, &set);
	FUZZ_ASSERT(ret <= 0);
	if (ret < 0) {
		FUZZ_ASSERT_MESSAGE();
		return 0;
	}
	fuzz_check_round_trips(set);
	one = set;
	if (matrix_build(&one, NULL, 1, NULL, &m) < 0) {
		FUZZ_ASSERT_MESSAGE();
		return 0;
	}
	matrix_format_text(m, false, 120, view);
	matrix_format_text_all(m, false, 120, view);
	return 0;
}
