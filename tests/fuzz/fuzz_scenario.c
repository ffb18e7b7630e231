/* The scenario loader (INI). The input is a scenario file; it is loaded
 * both from a buffer and from a temp file through infile_read.
 * Property: the two agree (same result, or the file has a NUL, which only
 * the file loader refuses), and a loaded scenario converts to JSON. */
#include "fuzz.h"
#include "scenario.h"
#include <jansson.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *text = fuzz_text(data, size);
	g_autofree char *path = fuzz_file("fuzz.ini", data, size);
	g_autoptr(scenario) a = NULL;
	g_autoptr(scenario) b = NULL;
	int ra, rb;

	pc_errclear();
	ra = scenario_load_data(path, text, &a);
	if (ra < 0)
		FUZZ_ASSERT_MESSAGE();
	pc_errclear();
	rb = scenario_load(path, &b);
	if (rb < 0)
		FUZZ_ASSERT_MESSAGE();

	FUZZ_ASSERT(ra <= 0 && rb <= 0);
	FUZZ_ASSERT((ra == 0) == (a != NULL));
	if (memchr(data, 0, size))
		FUZZ_ASSERT(rb == -EINVAL);
	else
		FUZZ_ASSERT(ra == rb);
	if (a) {
		json_t *j = scenario_to_json(a);
		char *s = json_dumps(j, JSON_COMPACT);

		FUZZ_ASSERT(s != NULL);
		free(s);
		json_decref(j);
	}
	return 0;
}
