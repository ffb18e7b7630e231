/* The open phase; see prober.h. */
#include "prober.h"

#include "attr.h"
#include "log.h"
#include "perfev.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define PARANOID_PATH "/proc/sys/kernel/perf_event_paranoid"
#define PROGRESS_EVERY 512

struct prober_entry {
	struct perf_event_attr attr; /* the hash key */
	struct prober_result res;
	enum outcome per_cpu[];
};

struct prober {
	struct prober_opts opts;
	int *cpus;
	int ncpu;
	pid_t pid;
	char *limitation;
	GHashTable *cache; /* struct perf_event_attr * (in entry) -> entry */
	struct prober_stats stats;
	bool nofile_raised;
};

int prober_paranoid_parse(const char *file_text)
{
	g_autofree char *text = g_strstrip(g_strdup(file_text ? file_text : ""));
	gint64 v;

	/* the kernel's default when unknown: atoi read "abc" as 0, "fully
	 * open", and wrapped what overflowed */
	if (!(g_ascii_isdigit(*text) || (*text == '-' && g_ascii_isdigit(text[1]))) ||
	    !g_ascii_string_to_signed(text, 10, G_MININT, G_MAXINT, &v, NULL))
		return 2;
	return (int)v;
}

static int paranoid_level(void)
{
	g_autofree char *text = NULL;

	g_file_get_contents(PARANOID_PATH, &text, NULL, NULL);
	return prober_paranoid_parse(text);
}

int prober_new(const struct prober_opts *opts, struct prober **out)
{
	struct prober *pr = g_new0(struct prober, 1);
	int paranoid = paranoid_level();

	if (opts)
		pr->opts = *opts;
	pr->cache = g_hash_table_new_full(attr_hash_func, attr_equal_func, NULL, g_free);
	if (!pr->opts.per_task && geteuid() != 0 && paranoid > 0) {
		pc_warn("not root and perf_event_paranoid=%d: opening per task "
			"(pid 0, cpu -1), not system-wide", paranoid);
		pr->limitation = g_strdup_printf(
			"not root and perf_event_paranoid=%d > 0: system-wide opens need "
			"CAP_PERFMON or CAP_SYS_ADMIN, so events were " PROBER_PER_TASK_TEXT
			" rather than on every CPU like perf record -a; "
			"kernel-mode events may give EACCES here and work as root",
			paranoid);
		pr->opts.per_task = true;
	} else if (pr->opts.per_task) {
		pr->limitation = g_strdup(
			PROBER_PER_TASK_TEXT " by request, not system-wide "
			"on every CPU like perf record -a");
	}
	if (pr->opts.per_task) {
		pr->cpus = g_new0(int, 1);
		pr->cpus[0] = -1;
		pr->ncpu = 1;
		pr->pid = 0;
	} else {
		int ret = perfev_online_cpus(&pr->cpus, &pr->ncpu);

		if (ret < 0) {
			prober_free(pr);
			return ret;
		}
		pr->pid = -1;
	}
	*out = pr;
	return 0;
}

void prober_free(struct prober *pr)
{
	if (!pr)
		return;
	g_hash_table_unref(pr->cache);
	g_free(pr->cpus);
	g_free(pr->limitation);
	g_free(pr);
}

bool prober_per_task(const struct prober *pr)
{
	return pr->opts.per_task;
}

const char *prober_limitation(const struct prober *pr)
{
	return pr->limitation;
}

const int *prober_cpus(const struct prober *pr, int *count)
{
	*count = pr->ncpu;
	return pr->cpus;
}

struct prober_stats prober_stats(const struct prober *pr)
{
	return pr->stats;
}

/* EMFILE with one fd open at a time means the process is near its limit:
 * raise the soft limit to the hard one once, then retry. */
static bool nofile_raise(struct prober *pr)
{
	struct rlimit rl;

	if (pr->nofile_raised || getrlimit(RLIMIT_NOFILE, &rl) < 0 ||
	    rl.rlim_cur >= rl.rlim_max)
		return false;
	pr->nofile_raised = true;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

static int open_close(struct prober *pr, const struct perf_event_attr *attr, int cpu)
{
	for (;;) {
		int fd = perfev_open(attr, pr->pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		pr->stats.opens++;
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (fd == -EMFILE && nofile_raise(pr)) {
			pr->stats.emfile_retries++;
			continue;
		}
		return -fd;
	}
}

const struct prober_result *prober_open(struct prober *pr,
					const struct perf_event_attr *attr)
{
	struct prober_entry *e = g_hash_table_lookup(pr->cache, attr);

	if (e) {
		pr->stats.cache_hits++;
		return &e->res;
	}
	e = g_malloc0(sizeof(*e) + sizeof(enum outcome) * pr->ncpu);
	e->attr = *attr;
	e->res.outcome = OUTCOME_OK;
	e->res.ncpu = pr->ncpu;
	e->res.cpus = pr->cpus;
	e->res.per_cpu = e->per_cpu;
	for (int i = 0; i < pr->ncpu; i++) {
		int err = open_close(pr, attr, pr->cpus[i]);

		/* Out of fds even after raising the limit: the harness could
		 * not test, not the kernel's verdict on this attr. */
		e->per_cpu[i] = err == EMFILE ? OUTCOME_INFRA : outcome_from_errno(err);
		if (i && e->per_cpu[i] != e->per_cpu[0])
			e->res.disagree = true;
		/* perf record -a fails when any CPU fails: the first failure
		 * is the cell's outcome. */
		if (err && !e->res.err) {
			e->res.err = err;
			e->res.outcome = e->per_cpu[i];
		}
	}
	g_hash_table_insert(pr->cache, &e->attr, e);
	pr->stats.distinct++;
	return &e->res;
}

void prober_probe_cell(struct prober *pr, const struct profile *p, struct cell *cell)
{
	struct profile_fallback_state st = { 0 };
	struct perf_event_attr cur;
	const struct prober_result *res = NULL;
	const char *why = NULL;

	if (!cell->has_attr)
		return;
	/* Probing again starts from what the profile built, not from where
	 * the last fallback chain ended. */
	cur = *cell_first_attr(cell);
	g_array_set_size(cell->tries, 0);
	g_array_set_size(cell->per_cpu, 0);
	if (p)
		profile_fallback_begin(p, pr->opts.pmus, cell->spec, pr->opts.mode, &st);
	for (int i = 0; i < PROBER_MAX_TRIES; i++) {
		res = prober_open(pr, &cur);
		cell_add_try(cell, &cur, res->outcome, why);
		if (res->outcome == OUTCOME_OK || !p ||
		    !profile_fallback(p, &st, &cur, res->err, &why))
			break;
	}
	/* The cell's attr is the one its outcome belongs to, the last try's
	 * (cur may hold a fallback never tried once the tries ran out): what
	 * the load phase arms and dedups on. */
	cell->attr = g_array_index(cell->tries, struct cell_try, cell->tries->len - 1).attr;
	cell->outcome = res->outcome;
	cell->k = cell->n = 0;
	if (res->disagree)
		for (int i = 0; i < res->ncpu; i++)
			cell_add_cpu(cell, res->cpus[i], res->per_cpu[i]);
}

int prober_run(struct prober *pr, struct result_set *set)
{
	const struct profile *p = NULL;
	const char *pname = NULL;

	if (pr->limitation)
		results_add_limitation(set, "%s", pr->limitation);
	for (unsigned int i = 0; i < set->cells->len; i++) {
		struct cell *cell = set->cells->pdata[i];

		if (!pname || strcmp(pname, cell->profile) != 0) {
			pname = cell->profile;
			p = profile_find(pname);
		}
		prober_probe_cell(pr, p, cell);
		if (pr->opts.progress && (i % PROGRESS_EVERY == 0 || i + 1 == set->cells->len))
			pr->opts.progress(i + 1, set->cells->len, pr->stats.distinct,
					  pr->opts.progress_data);
	}
	return 0;
}
