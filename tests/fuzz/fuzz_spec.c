/* The spec parser under every profile of the table. The first byte picks
 * record or stat mode (bit 0) and the PMUs (bit 1); the rest is the spec
 * as a user types it. The PMUs come from the fake sysfs trees in
 * tests/data (sysfs: cpu with split format bits, msr; sysfs-enum: also
 * software, tracepoint, uprobe, a '?' event term), never the host's. Property: an encode that fails leaves a
 * message; the retry-on-error chain of every release ends. */
#include "attr.h"
#include "fuzz.h"
#include "pmu.h"
#include "profile.h"
#include "spec.h"
#include <jansson.h>

static struct pmu_set *pmu_sets[2];
static const struct pmu_set *pmus;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const dirs[] = { "tests/data/sysfs", "tests/data/sysfs-enum" };

	fuzz_quiet();
	for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
		g_autofree char *root = g_build_filename(FUZZ_TOP, dirs[i], NULL);

		if (pmu_set_load(root, &pmu_sets[i]) < 0) {
			fprintf(stderr, "fuzz_spec: %s\n", pc_errmsg());
			abort();
		}
	}
	return 0;
}

static void walk_fallbacks(const struct profile *p, const char *text, enum profile_mode mode,
			   struct perf_event_attr attr)
{
	static const int errs[] = { EOPNOTSUPP, EINVAL, ENOENT, EACCES, E2BIG };

	for (size_t e = 0; e < G_N_ELEMENTS(errs); e++) {
		struct profile_fallback_state st;
		struct perf_event_attr a = attr;
		const char *why = NULL;
		int steps = 0;

		if (profile_fallback_begin(p, pmus, text, mode, &st) < 0)
			memset(&st, 0, sizeof(st));
		while (profile_fallback(p, &st, &a, errs[e], &why)) {
			FUZZ_ASSERT(why && why[0]);
			FUZZ_ASSERT(++steps < 64);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum profile_mode mode;
	g_autofree char *text = NULL;
	struct spec spec;

	if (size == 0)
		return 0;
	mode = data[0] & 1 ? PROFILE_MODE_STAT : PROFILE_MODE_RECORD;
	pmus = pmu_sets[(data[0] >> 1) & 1];
	text = fuzz_text(data + 1, size - 1);
	memset(&spec, 0, sizeof(spec));
	pc_errclear();
	if (spec_parse(text, pmus, &spec) < 0)
		FUZZ_ASSERT_MESSAGE();
	spec_clear(&spec);
	for (size_t i = 0; i < profile_count(); i++) {
		const struct profile *p = profile_at(i);
		struct perf_event_attr attr;

		memset(&attr, 0, sizeof(attr));
		pc_errclear();
		if (profile_encode(p, pmus, text, mode, &attr) < 0) {
			FUZZ_ASSERT_MESSAGE();
			continue;
		}
		g_free(attr_to_string(&attr));
		json_decref(attr_to_json(&attr));
		walk_fallbacks(p, text, mode, attr);
	}
	return 0;
}
