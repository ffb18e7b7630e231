/* The LAVA collectors, each input through both: the log collector (a
 * lava-run log, or a server's output.yaml) and the results-export collector
 * (a server's /results/JOB/yaml, read with libyaml, or its REST API's
 * JSON) -- text a remote lab and its devices wrote. Properties: a failure
 * leaves its message; what is collected writes as a result file (both
 * writers) that reads back with the same cells, field by field; an INFRA job has no cell; every cell's case id
 * round-trips. */
#include "fuzz_cells.h"
#include "lava.h"

#include <errno.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

static void check(int ret, struct result_set *set, bool infra)
{
	FUZZ_ASSERT(ret == 0 || ret == -EINVAL);
	if (ret < 0) {
		FUZZ_ASSERT(set == NULL);
		FUZZ_ASSERT_MESSAGE();
		return;
	}
	FUZZ_ASSERT(set != NULL);
	FUZZ_ASSERT(!infra || set->cells->len == 0);
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = g_ptr_array_index(set->cells, i);
		g_autofree char *id = lava_case_id(c->profile, c->spec);
		g_autofree char *p = NULL, *s = NULL;

		FUZZ_ASSERT(id != NULL);
		FUZZ_ASSERT(lava_case_id_parse(id, &p, &s) == 0);
		FUZZ_ASSERT(!strcmp(p, c->profile) && !strcmp(s, c->spec));
	}
	fuzz_check_round_trips(set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(result_set) set = NULL;
	g_autoptr(result_set) eset = NULL;
	bool infra = false, einfra = false;
	int ret;

	pc_errclear();
	ret = lava_collect((const char *)data, size, "fuzz.log", &set, &infra);
	check(ret, set, infra);
	pc_errclear();
	ret = lava_collect_export((const char *)data, size, "fuzz.export", NULL, 0, NULL,
				  &eset, &einfra);
	check(ret, eset, einfra);
	return 0;
}
