/* The result-file reader (run.json / probe.json, as diff and matrix read
 * files from other machines), through its public API results_read_json().
 * Property: what it accepts, results_to_json() writes back in a form it
 * accepts again, with the same cells; the readable matrix can be formatted. */
#include "fuzz.h"
#include "results.h"
#include <jansson.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *path = fuzz_file("fuzz.json", data, size);
	g_autoptr(result_set) set = NULL;
	g_autoptr(result_set) again = NULL;
	g_autoptr(GString) matrix = g_string_new(NULL);
	json_t *j;
	int ret;

	pc_errclear();
	ret = results_read_json(path, &set);
	FUZZ_ASSERT(ret <= 0);
	if (ret < 0) {
		FUZZ_ASSERT_MESSAGE();
		return 0;
	}
	j = results_to_json(set);
	FUZZ_ASSERT(j != NULL);
	ret = results_from_json(j, "rewritten", &again);
	if (ret < 0)
		fprintf(stderr, "rewritten: %s\n", pc_errmsg());
	FUZZ_ASSERT(ret == 0);
	FUZZ_ASSERT(again->cells->len == set->cells->len);
	json_decref(j);
	results_format_matrix(set, matrix);
	return 0;
}
