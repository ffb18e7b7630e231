/* Load rounds needed to isolate culprits among N distinct attrs, by group
 * testing versus arming one attr at a time. A round is one armed batch
 * (one dwell). Prints rounds, the ratio to one-at-a-time, and the ratio to
 * the information bound log2 C(N, d) + d*confirm (what any strategy that
 * knows d needs); aim: at most 1.15x with one screening batch. Not knowing
 * d costs one more round (arming the rest to see that nothing else harms),
 * and a batch limit B adds N/B - 1 screening rounds. */
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

/* log2 without libm (the bench links what the tests link): halve into
 * [1, 2), then ln by the atanh series, which converges fast there. */
static double lg(double x)
{
	double y, y2, term, ln = 0;
	int e = 0;

	while (x >= 2) {
		x /= 2;
		e++;
	}
	y = (x - 1) / (x + 1);
	y2 = y * y;
	term = y;
	for (int k = 1; k < 40; k += 2) {
		ln += term / k;
		term *= y2;
	}
	return e + 2 * ln / 0.69314718055994530942;
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
	GRand *rng = g_rand_new_with_seed(2012);

	printf("isolating culprits among %d distinct attrs, confirm=%d; bound = log2 C(N,d) + d*confirm\n",
	       N, CONFIRM);
	printf("%-9s %-6s %8s %6s %7s %9s %14s %8s\n", "culprits", "batch", "mean", "worst",
	       "bound", "vs bound", "one-at-a-time", "speedup");
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
			double bound = CONFIRM * (double)counts[ci];

			for (size_t k = 0; k < counts[ci]; k++)
				bound += lg((double)(N - k) / (double)(k + 1));
			printf("%-9zu %-6zu %8.1f %6u %7.1f %8.2fx %14u %7.1fx\n", counts[ci],
			       batches[bi], sum / trials, worst, bound, sum / trials / bound, single,
			       single / (sum / trials));
		}
	}
	g_rand_free(rng);
	return 0;
}
