/* The result-file reader (run.json / probe.json, as diff and matrix read
 * files from other machines), through its public API results_read_json().
 * Property: what it accepts, results_to_json() and the file writer's text
 * (results_to_text, as results_write_json writes it) give back in a form it
 * accepts again, with the same cells, field by field (fuzz_cells.h); the
 * readable matrix can be formatted. */
#include "fuzz_cells.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *path = fuzz_file("fuzz.json", data, size);
	g_autoptr(result_set) set = NULL;
	g_autoptr(GString) matrix = g_string_new(NULL);
	int ret;

	pc_errclear();
	ret = results_read_json(path, &set);
	FUZZ_ASSERT(ret <= 0);
	if (ret < 0) {
		FUZZ_ASSERT_MESSAGE();
		return 0;
	}
	fuzz_check_round_trips(set);
	results_format_matrix(set, matrix);
	return 0;
}
