/* The errata loader (INI from other people's machines). The input is an
 * errata file; what loads is matched against a few CPUs, kernels and
 * cells, the way matrix --errata uses it. Property: every entry has an id
 * and a match names one of the loaded entries. */
#include "errata.h"
#include "fuzz.h"
#include <linux/perf_event.h>

static struct cell *cells[3];
static const struct cpu_sig sigs[] = {
	{ "GenuineIntel", 6, 58, 9 },
	{ "AuthenticAMD", 25, 1, 1 },
	{ "", -1, -1, -1 },
};
static const char *const kernels[] = { "3.6.11", "3.7.0-rc1", "6.1.0-13-amd64", "", "x" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_HARDWARE, .size = sizeof(attr) };

	fuzz_quiet();
	attr.precise_ip = 2;
	cells[0] = cell_new("3.6", "perf-3.6", "cycles:pp");
	cell_set_attr(cells[0], &attr);
	cells[0]->outcome = OUTCOME_GUEST_CRASH;
	attr.exclude_guest = 1;
	cells[1] = cell_new("6.1", "perf-6.1", "cycles:ppH");
	cell_set_attr(cells[1], &attr);
	cells[1]->outcome = OUTCOME_GUEST_CORRUPTION;
	cells[2] = cell_new("6.1", "perf-6.1", "bogus");
	cell_set_error(cells[2], "event syntax error");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *text = fuzz_text(data, size);
	g_autoptr(errata_set) e = NULL;
	int ret;

	pc_errclear();
	ret = errata_parse(text, "fuzz.ini", &e);
	FUZZ_ASSERT(ret <= 0);
	if (ret < 0) {
		FUZZ_ASSERT_MESSAGE();
		return 0;
	}
	for (size_t i = 0; i < errata_count(e); i++) {
		const struct erratum *x = errata_get(e, i);

		FUZZ_ASSERT(erratum_id(x) && erratum_id(x)[0]);
		(void)erratum_title(x);
		(void)erratum_reference(x);
	}
	for (size_t s = 0; s < G_N_ELEMENTS(sigs); s++)
		for (size_t k = 0; k < G_N_ELEMENTS(kernels); k++)
			for (size_t c = 0; c < G_N_ELEMENTS(cells); c++) {
				const struct erratum *m = errata_match(e, &sigs[s], kernels[k], cells[c]);
				bool found = !m;

				for (size_t i = 0; i < errata_count(e) && !found; i++)
					found = errata_get(e, i) == m;
				FUZZ_ASSERT(found);
			}
	return 0;
}
