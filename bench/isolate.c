/* Load rounds needed to isolate culprits among N distinct attrs, by group
 * testing versus arming one attr at a time. A round is one armed batch
 * (one dwell). Prints rounds, the ratio to one-at-a-time, and the ratio to
 * the information bound log2 C(N, d) + d*confirm (what any strategy that
 * knows d needs); aim: at most 1.15x with one screening batch. Not knowing
 * d costs one more round (arming the rest to see that nothing else harms),
 * and a batch limit B adds N/B - 1 screening rounds. */
#include "isolate.h"
#include "log.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- rule-shaped harm ------------------------------------------------------ */

/* A sweep's attr space: 64 events (16 configs of hardware, software,
 * hw-cache and raw) x precise_ip 0..3 x exclude_guest x exclude_host. */
#define RN 1024
static struct perf_event_attr space[RN];

static void space_init(void)
{
	static const uint32_t types[] = { PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE,
					  PERF_TYPE_HW_CACHE, PERF_TYPE_RAW };

	for (size_t i = 0; i < RN; i++) {
		struct perf_event_attr *a = &space[i];

		memset(a, 0, sizeof(*a));
		a->size = sizeof(*a);
		a->type = types[i / 256];
		a->config = (i / 16) % 16;
		a->precise_ip = (i / 4) % 4;
		a->exclude_guest = (i / 2) % 2;
		a->exclude_host = i % 2;
	}
}

/* The harm, written by hand (not learned). */
struct shape {
	const char *name;
	bool (*harms)(const struct perf_event_attr *a);
};

static bool p3(const struct perf_event_attr *a) { return a->precise_ip == 3; }
static bool p3_guest(const struct perf_event_attr *a) { return a->precise_ip == 3 && !a->exclude_guest; }
static bool sw_p3(const struct perf_event_attr *a) { return a->type == PERF_TYPE_SOFTWARE && a->precise_ip == 3; }
static bool sw_guest_p(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && a->precise_ip > 0 && !a->exclude_guest && !a->exclude_host;
}
static bool cpu_clock(const struct perf_event_attr *a) { return a->type == PERF_TYPE_SOFTWARE && a->config == 0; }
static bool clock_guest(const struct perf_event_attr *a) { return cpu_clock(a) && !a->exclude_guest; }
static bool clock_p3(const struct perf_event_attr *a) { return cpu_clock(a) && a->precise_ip == 3; }

struct rule_oracle {
	const struct shape *shape;
};

static int rule_oracle_fn(void *ctx, const struct isolate_test *t, enum outcome *res)
{
	const struct rule_oracle *o = ctx;

	*res = OUTCOME_OK;
	for (size_t i = 0; i < t->count; i++)
		if (o->shape->harms(&space[t->ids[i]]))
			*res = OUTCOME_GUEST_CRASH;
	return 0;
}

static unsigned int rule_rounds(const struct shape *sh, size_t batch, bool rule, size_t d,
				const char **how)
{
	g_autoptr(isolate) iso = isolate_new(RN, batch, CONFIRM);
	struct rule_oracle o = { sh };
	size_t found = 0;

	if (rule)
		isolate_use_rule(iso, space);
	if (isolate_run(iso, rule_oracle_fn, &o)) {
		fprintf(stderr, "bench/isolate: %s\n", pc_errmsg());
		exit(1);
	}
	for (size_t id = 0; id < RN; id++) {
		bool c = isolate_culprit_of(iso, id) != NULL;

		if (c != sh->harms(&space[id])) {
			fprintf(stderr, "bench/isolate: %s: id %zu judged wrongly\n", sh->name, id);
			exit(1);
		}
		found += c;
	}
	if (found != d)
		exit(1);
	*how = isolate_rule(iso, NULL, NULL) ? "rule" : "each";
	return isolate_rounds(iso);
}

static void rule_cases(void)
{
	static const struct shape shapes[] = {
		{ "precise_ip=3", p3 },
		{ "precise_ip=3 exclude_guest=0", p3_guest },
		{ "type=software precise_ip=3", sw_p3 },
		{ "software precise_ip>0 exclude_guest=0 exclude_host=0 (4 literals)", sw_guest_p },
		{ "type=software config=cpu-clock", cpu_clock },
		{ "cpu-clock exclude_guest=0", clock_guest },
		{ "cpu-clock precise_ip=3", clock_p3 },
	};
	static const size_t batches[] = { 32, 128 };

	space_init();
	if (getenv("BENCH_VERBOSE"))
		log_set_level(LOG_INFO);
	printf("\nrule-shaped harm among %d distinct attrs (64 events x precise_ip x exclude_guest x "
	       "exclude_host), confirm=%d\n", RN, CONFIRM);
	printf("%-8s %-5s %6s %6s %7s %7s %8s  %s\n", "d/N", "batch", "each", "rule", "bound",
	       "each/rule", "judged", "harm");
	for (size_t s = 0; s < G_N_ELEMENTS(shapes); s++) {
		size_t d = 0;

		for (size_t id = 0; id < RN; id++)
			d += shapes[s].harms(&space[id]);
		for (size_t bi = 0; bi < G_N_ELEMENTS(batches); bi++) {
			const char *how, *how_each;
			unsigned int each = rule_rounds(&shapes[s], batches[bi], false, d, &how_each);
			unsigned int rule = rule_rounds(&shapes[s], batches[bi], true, d, &how);
			double bound = CONFIRM * (double)d;

			for (size_t k = 0; k < d; k++)
				bound += lg((double)(RN - k) / (double)(k + 1));
			printf("1/%-6zu %-5zu %6u %6u %7.0f %8.1fx %8s  %s\n", RN / d, batches[bi], each,
			       rule, bound, (double)each / rule, how, shapes[s].name);
		}
	}
	printf("bound: log2 C(N,d) + d*confirm, what isolating every culprit alone needs\n");
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
	rule_cases();
	return 0;
}
