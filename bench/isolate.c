/* Load rounds needed to isolate culprits among N distinct attrs, by group
 * testing versus arming one attr at a time. A round is one armed batch
 * (one dwell). Prints rounds and the ratio; aim: one culprit in at most
 * 2*log2(N) + confirm rounds. */
#include "isolate.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#define N 256
#define CONFIRM 3

struct oracle {
	size_t culprits[8];
	size_t n;
};

static int oracle_fn(void *ctx, const struct isolate_test *t, enum outcome *res)
{
	const struct oracle *o = ctx;

	*res = OUTCOME_OK;
	for (size_t i = 0; i < t->count; i++)
		for (size_t c = 0; c < o->n; c++)
			if (t->ids[i] == o->culprits[c])
				*res = OUTCOME_GUEST_CRASH;
	return 0;
}

static unsigned int rounds_for(struct oracle *o, size_t batch)
{
	g_autoptr(isolate) iso = isolate_new(N, batch, CONFIRM);

	if (isolate_run(iso, oracle_fn, o) || isolate_culprit_count(iso) != o->n) {
		fprintf(stderr, "bench/isolate: wrong culprits\n");
		exit(1);
	}
	return isolate_rounds(iso);
}

int main(void)
{
	static const size_t batches[] = { N, 64, 32 };
	static const size_t counts[] = { 1, 2, 4 };
	unsigned int log2n = 0;
	GRand *rng = g_rand_new_with_seed(2012);

	while ((1u << (log2n + 1)) <= N)
		log2n++;

	printf("isolating culprits among %d distinct attrs, confirm=%d; target for one culprit: <= %u rounds\n",
	       N, CONFIRM, 2 * log2n + CONFIRM);
	printf("%-9s %-6s %10s %10s %14s %10s\n", "culprits", "batch", "mean", "worst",
	       "one-at-a-time", "ratio");
	for (size_t ci = 0; ci < G_N_ELEMENTS(counts); ci++) {
		for (size_t bi = 0; bi < G_N_ELEMENTS(batches); bi++) {
			unsigned int worst = 0, trials = 0;
			double sum = 0;
			/* one at a time: every attr armed alone, then each culprit confirmed */
			unsigned int single = N + CONFIRM * (unsigned int)counts[ci];

			for (unsigned int trial = 0; trial < N; trial++) {
				struct oracle o = { .n = counts[ci] };

				if (counts[ci] == 1) {
					o.culprits[0] = trial;
				} else {
					for (size_t c = 0; c < o.n; c++) {
						bool dup;

						do {
							o.culprits[c] = (size_t)g_rand_int_range(rng, 0, N);
							dup = false;
							for (size_t d = 0; d < c; d++)
								dup = dup || o.culprits[d] == o.culprits[c];
						} while (dup);
					}
				}
				unsigned int r = rounds_for(&o, batches[bi]);

				sum += r;
				worst = r > worst ? r : worst;
				trials++;
			}
			printf("%-9zu %-6zu %10.1f %10u %14u %9.1fx\n", counts[ci], batches[bi],
			       sum / trials, worst, single, single / (sum / trials));
		}
	}
	g_rand_free(rng);
	return 0;
}
