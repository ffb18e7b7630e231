/* bench/probe: distinct attrs opened per second on every online CPU, by the
 * prober and by a bare open+close syscall loop over the same attrs.
 * Best of N alternating rounds. Prints "key value" lines; bench/probe.sh adds the perf-stat loop and the
 * ratios. Usage: probe [--repeat N] [--specs-out FILE] */
#include "attr.h"
#include "enumerate.h"
#include "log.h"
#include "perfev.h"
#include "prober.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	g_autoptr(GPtrArray) pairs = NULL;
	g_autoptr(result_set) set = result_set_new(RESULTS_KIND_PROBE);
	g_autoptr(GHashTable) seen = g_hash_table_new(attr_hash_func, attr_equal_func);
	g_autoptr(GPtrArray) attrs = g_ptr_array_new();   /* distinct, in order */
	g_autoptr(GPtrArray) specs = g_ptr_array_new();   /* one spec each, for perf */
	g_autofree int *cpus = NULL;
	struct enumerate_opts eo = { 0 };
	struct pmu_set *pmus = NULL;
	const char *specs_out = NULL;
	int repeat = 5, ncpu = 0;
	double t0, bare, probe, run;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--specs-out") && i + 1 < argc)
			specs_out = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--repeat N] [--specs-out FILE]\n", argv[0]);
			return 2;
		}
	}
	if (pmu_set_load(NULL, &pmus) < 0 || enumerate_pairs(pmus, &eo, &pairs) < 0 ||
	    perfev_online_cpus(&cpus, &ncpu) < 0) {
		fprintf(stderr, "probe: %s\n", pc_errmsg());
		return 1;
	}
	enumerate_cells(pmus, pairs, "bench", set);
	for (unsigned int i = 0; i < set->cells->len; i++) {
		struct cell *c = set->cells->pdata[i];

		if (!c->has_attr || g_hash_table_contains(seen, &c->attr))
			continue;
		g_hash_table_add(seen, &c->attr);
		g_ptr_array_add(attrs, &c->attr);
		/* perf stat understands every profile's spec syntax but raw's. */
		if (strcmp(c->profile, "raw") != 0)
			g_ptr_array_add(specs, c->spec);
	}

	/* Rounds alternate bare and prober so that both see the same load from
	 * the rest of the machine; each keeps its best round. */
	bare = probe = 1e9;
	for (int r = 0; r < repeat; r++) {
		g_autoptr(prober) pr = NULL;
		double t;

		/* Bare: the syscall and the close, nothing else. */
		t0 = now();
		for (unsigned int i = 0; i < attrs->len; i++)
			for (int c = 0; c < ncpu; c++) {
				long fd = syscall(__NR_perf_event_open, attrs->pdata[i], -1,
						  cpus[c], -1, PERF_FLAG_FD_CLOEXEC);
				if (fd >= 0)
					close((int)fd);
			}
		t = now() - t0;
		bare = MIN(bare, t);

		/* The prober on the same attrs, a fresh cache each round. */
		if (prober_new(NULL, &pr) < 0) {
			fprintf(stderr, "probe: %s\n", pc_errmsg());
			return 1;
		}
		t0 = now();
		for (unsigned int i = 0; i < attrs->len; i++)
			prober_open(pr, attrs->pdata[i]);
		t = now() - t0;
		probe = MIN(probe, t);
	}

	/* The prober over every cell, fallbacks and cache hits included. */
	{
		g_autoptr(prober) pr = NULL;

		prober_new(NULL, &pr);
		t0 = now();
		prober_run(pr, set);
		run = now() - t0;
		printf("run_distinct %zu\n", prober_stats(pr).distinct);
	}
	printf("cells %u\n", set->cells->len);
	printf("distinct_attrs %u\n", attrs->len);
	printf("cpus %d\n", ncpu);
	printf("bare_attrs_per_s %.0f\n", attrs->len / bare);
	printf("prober_attrs_per_s %.0f\n", attrs->len / probe);
	printf("prober_over_bare_cost %.3f\n", probe / bare);
	printf("run_all_cells_s %.3f\n", run);
	printf("run_cells_per_s %.0f\n", set->cells->len / run);
	if (specs_out) {
		FILE *f = fopen(specs_out, "w");

		for (unsigned int i = 0; f && i < specs->len; i++)
			fprintf(f, "%s\n", (char *)specs->pdata[i]);
		if (f)
			fclose(f);
	}
	pmu_set_free(pmus);
	return 0;
}
