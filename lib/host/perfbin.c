/* Real perf binaries as profiles: trace `perf stat -e SPEC -a -- true` and
 * turn the captured opens into cells (see perfbin.h). */
#include "perfbin.h"

#include "attr.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void perfbin_free(struct perfbin *pb)
{
	if (!pb)
		return;
	g_free(pb->path);
	g_free(pb->version);
	g_free(pb->name);
	g_free(pb);
}

/* `perf stat -a -- true` takes tens of milliseconds. */
#define PERFBIN_TIMEOUT_S 60

unsigned int perfbin_timeout_s(unsigned int asked)
{
	const char *env = getenv(PERFBIN_TIMEOUT_ENV);
	char *end;
	unsigned long v;

	if (asked)
		return asked;
	if (env && *env) {
		v = strtoul(env, &end, 10);
		if (!*end && v > 0 && v <= 24 * 3600)
			return (unsigned int)v;
	}
	return PERFBIN_TIMEOUT_S;
}

static void child_own_group(gpointer data)
{
	(void)data;
	setpgid(0, 0);
}

/* Runs argv with stdout and stderr read into out (at most 64 KiB), for at
 * most timeout_s: a binary that hangs is killed with its process group.
 * *status is the wait status; returns 0, -ETIMEDOUT or -errno. */
static int run_bounded(char **argv, unsigned int timeout_s, GString *out, int *status)
{
	g_autoptr(GError) gerr = NULL;
	gint64 deadline = g_get_monotonic_time() + (gint64)timeout_s * G_USEC_PER_SEC;
	int fds[2] = { -1, -1 }, open_fds = 2, ret = 0;
	GPid pid;

	if (!g_spawn_async_with_pipes(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
				      child_own_group, NULL, &pid, NULL, &fds[0], &fds[1], &gerr))
		return pc_fail(ENOENT, "%s: cannot run: %s", argv[0], gerr->message);
	while (open_fds) {
		struct pollfd p[2] = { { .fd = fds[0], .events = POLLIN },
				       { .fd = fds[1], .events = POLLIN } };
		gint64 left = deadline - g_get_monotonic_time();
		int r;

		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		r = poll(p, 2, (int)MIN(left / 1000 + 1, 1000));
		if (r < 0 && errno != EINTR) {
			ret = pc_fail(errno, "%s: poll: %s", argv[0], g_strerror(errno));
			break;
		}
		for (int i = 0; r > 0 && i < 2; i++) {
			char buf[4096];
			ssize_t n;

			if (fds[i] < 0 || !p[i].revents)
				continue;
			n = read(fds[i], buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n > 0) {
				if (out->len < 65536)
					g_string_append_len(out, buf, n);
				continue;
			}
			close(fds[i]);
			fds[i] = -1;
			open_fds--;
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (ret) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	if (ret == -ETIMEDOUT)
		return pc_fail(ETIMEDOUT, "%s --version: no answer in %u s: killed", argv[0],
			       timeout_s);
	return ret;
}

int perfbin_open(const char *path, struct perfbin **out)
{
	char *argv[] = { (char *)path, "--version", NULL };
	g_autoptr(GString) said_all = g_string_new(NULL);
	g_autoptr(perfbin) pb = NULL;
	const char *prefix = "perf version ";
	char *v;
	int status = 0, e;

	if ((e = run_bounded(argv, perfbin_timeout_s(0), said_all, &status)))
		return e;
	v = strstr(said_all->str, prefix);
	if (!g_spawn_check_wait_status(status, NULL) || !v) {
		char *said = g_strstrip(said_all->str);

		said[strcspn(said, "\n")] = '\0';
		return pc_fail(EINVAL, "%s --version: does not say \"perf version X\" "
			       "(said '%s')", path, said);
	}
	v += strlen(prefix);
	v[strcspn(v, " \n")] = '\0';
	pb = g_new0(struct perfbin, 1);
	pb->path = g_strdup(path);
	pb->version = g_strdup(v);
	pb->name = g_strdup_printf("bin:perf-%s", v);
	pb->like = profile_for_release(v);
	if (!pb->like)
		pb->like = profile_find("perf-modern");
	if (!pb->like)
		return pc_fail(EINVAL, "%s: no built-in profile for perf %s", path, v);
	*out = g_steal_pointer(&pb);
	return 0;
}

/* "flags 0x8 -> 0x0, exclude_guest 1 -> 0": what perf changed between two
 * consecutive tries. */
static char *try_why(const struct trace_call *prev, const struct trace_call *cur)
{
	GString *w = g_string_new("perf retried:");
	bool any = false;

	if (prev->flags != cur->flags) {
		g_string_append_printf(w, " flags %#lx -> %#lx", prev->flags, cur->flags);
		any = true;
	}
	for (int f = 0; f < ATTR_FIELD_COUNT; f++) {
		uint64_t a = attr_get(&prev->attr, f), b = attr_get(&cur->attr, f);

		if (a == b)
			continue;
		g_string_append_printf(w, "%s %s %#llx -> %#llx", any ? "," : "",
				       attr_field_name(f), (unsigned long long)a,
				       (unsigned long long)b);
		any = true;
	}
	if (!any)
		g_string_append(w, " the same attr again");
	return g_string_free(w, FALSE);
}

static bool call_same_try(const struct trace_call *a, const struct trace_call *b)
{
	return a->flags == b->flags && attr_equal(&a->attr, &b->attr);
}

/* The stderr line saying perf's parser refused the spec, or NULL. */
static const char *parser_error_line(const struct trace_result *res)
{
	for (unsigned int i = 0; res->stderr_tail && i < res->stderr_tail->len; i++) {
		const char *l = res->stderr_tail->pdata[i];

		if (strstr(l, "event syntax error") || strstr(l, "invalid or unsupported event") ||
		    strstr(l, "Unknown event") || strstr(l, "unknown event"))
			return l;
	}
	return NULL;
}

struct try_span {
	const struct trace_call *head;
	enum outcome outcome;      /* the first failure among its opens, else OK */
};

void perfbin_cell_from_trace(const struct perfbin *pb, const struct pmu_set *pmus,
			     const struct trace_result *res, struct cell *cell)
{
	g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(struct try_span));
	struct perf_event_attr want;
	unsigned int first = 0, ncalls = res->calls ? res->calls->len : 0;
	enum outcome last_fail = OUTCOME_COUNT;
	bool last_ok = false;
	const char *perr;

	g_array_set_size(cell->tries, 0);
	g_array_set_size(cell->per_cpu, 0);
	cell->k = cell->n = 0;
	cell->outcome = OUTCOME_INFRA;
	if (profile_encode(pb->like, pmus, cell->spec, PROFILE_MODE_STAT, &want) == 0) {
		unsigned int i;

		for (i = 0; i < ncalls; i++) {
			const struct trace_call *c = res->calls->pdata[i];

			if (c->attr.type == want.type && c->attr.config == want.config)
				break;
		}
		first = i < ncalls ? i : 0;
	}
	/* One try per run of identical (attr, flags) opens over the CPUs; a
	 * failure ends it (perf retries on the CPU that failed). */
	for (unsigned int i = first; i < ncalls; i++) {
		const struct trace_call *c = res->calls->pdata[i];
		enum outcome oc = c->err ? outcome_from_errno(c->err) : OUTCOME_OK;
		struct try_span *cur = spans->len ? &g_array_index(spans, struct try_span,
								     spans->len - 1) : NULL;

		if (!cur || cur->outcome != OUTCOME_OK || !call_same_try(cur->head, c)) {
			struct try_span sp = { .head = c, .outcome = OUTCOME_OK };

			g_array_append_val(spans, sp);
			cur = &g_array_index(spans, struct try_span, spans->len - 1);
		}
		if (oc != OUTCOME_OK) {
			cur->outcome = oc;
			last_fail = oc;
		}
		last_ok = oc == OUTCOME_OK;
	}
	for (unsigned int i = 0; i < spans->len; i++) {
		const struct try_span *sp = &g_array_index(spans, struct try_span, i);
		g_autofree char *why = i ? try_why(g_array_index(spans, struct try_span,
								  i - 1).head, sp->head) : NULL;

		cell_add_try(cell, &sp->head->attr, sp->outcome, why);
	}
	if (spans->len) {
		/* The final attr: the last call perf made, which its outcome
		 * belongs to. */
		cell_set_attr(cell, &g_array_index(cell->tries, struct cell_try,
						   cell->tries->len - 1).attr);
		if (res->term_signal)
			cell->outcome = OUTCOME_INFRA;
		else if (res->exit_code == 0 && last_ok)
			cell->outcome = OUTCOME_OK;
		else if (last_fail != OUTCOME_COUNT)
			cell->outcome = last_fail;
		return;
	}
	perr = parser_error_line(res);
	if (res->exit_code != 0 && !res->term_signal && perr) {
		g_autofree char *line = g_strstrip(g_strdup(perr));
		g_autofree char *msg = g_strdup_printf("%s (%s)", line, pb->name);

		cell_set_error(cell, msg);
	}
}

/* ---- workers ---- */

/* In the worker: trace one spec, build its cell, write it to fd as a
 * one-cell result set in JSON. Never returns. */
static void worker_run(const struct perfbin *pb, const struct pmu_set *pmus,
		       const char *spec, const char *kernel, int fd)
{
	char *argv[] = { pb->path, "stat", "-e", (char *)spec, "-a", "--", "true", NULL };
	struct trace_options topts = { .method = TRACE_METHOD_SECCOMP,
				       .stderr_tail_lines = 20,
				       .stderr_passthrough_fd = -1 };
	g_autoptr(trace_result) res = NULL;
	g_autoptr(result_set) one = result_set_new(RESULTS_KIND_PROBE);
	struct cell *cell = cell_new(kernel, pb->name, spec);
	g_autofree char *text = NULL;
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int ret;

	/* perf stat's counts go to stderr, but nothing of perf's may reach the
	 * matrix on our stdout. */
	if (devnull >= 0)
		dup2(devnull, STDOUT_FILENO);
	ret = trace_run(argv, &topts, &res);
	if (ret < 0) {
		json_array_append_new(cell->evidence,
				      json_pack("{s:s}", "trace_error", pc_errmsg()));
	} else {
		perfbin_cell_from_trace(pb, pmus, res, cell);
		if (cell->outcome == OUTCOME_INFRA || cell->error)
			json_array_append_new(cell->evidence,
					      trace_result_to_json(res, argv));
	}
	results_add_cell(one, cell);
	{
		json_t *root = results_to_json(one);

		text = json_dumps(root, JSON_COMPACT);
		json_decref(root);
	}
	for (size_t off = 0, len = text ? strlen(text) : 0; off < len;) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(1);
		off += n;
	}
	_exit(0);
}

struct slot {
	pid_t pid;
	int fd;
	size_t spec;
	GString *buf;
	gint64 started;            /* monotonic, us */
	bool killed;
};

static int slot_start(struct slot *sl, const struct perfbin *pb, const struct pmu_set *pmus,
		      const char *spec, size_t idx, const char *kernel)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return pc_fail(errno, "perfbin: pipe: %s", g_strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return pc_fail(errno, "perfbin: fork: %s", g_strerror(errno));
	}
	if (pid == 0) {
		close(p[0]);
		worker_run(pb, pmus, spec, kernel, p[1]);
	}
	close(p[1]);
	sl->pid = pid;
	sl->fd = p[0];
	sl->spec = idx;
	sl->started = g_get_monotonic_time();
	sl->killed = false;
	g_string_truncate(sl->buf, 0);
	return 0;
}

/* The worker is done (EOF): reap it and turn its output into the cell. */
static struct cell *slot_finish(struct slot *sl, const struct perfbin *pb, const char *spec,
				const char *kernel)
{
	g_autoptr(result_set) one = NULL;
	json_error_t jerr;
	json_t *root;
	int status = 0;
	struct cell *cell = NULL;

	close(sl->fd);
	sl->fd = -1;
	while (waitpid(sl->pid, &status, 0) < 0 && errno == EINTR)
		;
	sl->pid = 0;
	root = json_loadb(sl->buf->str, sl->buf->len, 0, &jerr);
	if (root && results_from_json(root, "perfbin worker", &one) == 0 &&
	    one->cells->len == 1)
		cell = g_ptr_array_steal_index(one->cells, 0);
	json_decref(root);
	if (!cell) {
		cell = cell_new(kernel, pb->name, spec);
		json_array_append_new(cell->evidence,
				      json_pack("{s:s,s:i}", "worker_error",
						sl->killed ? "perf did not finish in time: killed"
							   : "the tracing worker gave no result",
						"wait_status", status));
	}
	return cell;
}

void perfbin_name_unique(struct perfbin *pb, const struct result_set *set)
{
	for (unsigned int i = 0; i < set->cells->len; i++)
		if (strcmp(((struct cell *)set->cells->pdata[i])->profile, pb->name) == 0) {
			char *name = g_strdup_printf("%s@%s", pb->name, pb->path);

			g_free(pb->name);
			pb->name = name;
			return;
		}
}

int perfbin_probe_cells(const struct perfbin *pb, const struct pmu_set *pmus,
			const char *const *specs, size_t nspecs,
			const struct perfbin_opts *opts, struct result_set *set)
{
	static const struct perfbin_opts defaults = { 0 };
	unsigned int jobs, timeout_s;
	g_autofree struct slot *slots = NULL;
	g_autofree struct pollfd *pfd = NULL;
	g_autofree struct cell **cells = g_new0(struct cell *, nspecs + 1);
	size_t next = 0, done = 0;
	int ret = 0;

	if (!opts)
		opts = &defaults;
	jobs = opts->jobs ? opts->jobs : 2 * (unsigned int)MAX(1L, sysconf(_SC_NPROCESSORS_ONLN));
	timeout_s = perfbin_timeout_s(opts->timeout_s);
	jobs = MAX(1u, MIN(jobs, (unsigned int)MAX((size_t)1, nspecs)));
	slots = g_new0(struct slot, jobs);
	pfd = g_new0(struct pollfd, jobs);
	for (unsigned int j = 0; j < jobs; j++) {
		slots[j].fd = -1;
		slots[j].buf = g_string_new(NULL);
	}
	while (done < nspecs) {
		unsigned int n = 0;

		for (unsigned int j = 0; j < jobs && next < nspecs && ret == 0; j++)
			if (slots[j].fd < 0) {
				ret = slot_start(&slots[j], pb, pmus, specs[next], next, set->kernel);
				if (ret == 0)
					next++;
			}
		for (unsigned int j = 0; j < jobs; j++) {
			pfd[j].fd = slots[j].fd;
			pfd[j].events = POLLIN;
			pfd[j].revents = 0;
			n += slots[j].fd >= 0;
		}
		if (!n)
			break; /* could not start any worker */
		for (unsigned int j = 0; j < jobs; j++)
			/* A perf that hangs must not hang the probe: killing the
			 * worker kills its tracees (PTRACE_O_EXITKILL); INFRA. */
			if (slots[j].fd >= 0 && !slots[j].killed &&
			    g_get_monotonic_time() - slots[j].started >
				    (gint64)timeout_s * G_USEC_PER_SEC) {
				kill(slots[j].pid, SIGKILL);
				slots[j].killed = true;
			}
		if (poll(pfd, jobs, 1000) < 0) {
			if (errno == EINTR)
				continue;
			ret = pc_fail(errno, "perfbin: poll: %s", g_strerror(errno));
			break;
		}
		for (unsigned int j = 0; j < jobs; j++) {
			char buf[65536];
			ssize_t r;

			if (slots[j].fd < 0 || !pfd[j].revents)
				continue;
			r = read(slots[j].fd, buf, sizeof(buf));
			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r > 0) {
				g_string_append_len(slots[j].buf, buf, r);
				continue;
			}
			cells[slots[j].spec] = slot_finish(&slots[j], pb, specs[slots[j].spec],
							   set->kernel);
			done++;
			if (opts->progress)
				opts->progress(done, nspecs, opts->progress_data);
		}
	}
	/* On an error, let the running workers finish: they are reaped, their
	 * cells dropped. */
	for (unsigned int j = 0; j < jobs; j++) {
		if (slots[j].fd >= 0) {
			close(slots[j].fd);
			while (waitpid(slots[j].pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
		g_string_free(slots[j].buf, TRUE);
	}
	for (size_t i = 0; i < nspecs; i++)
		if (cells[i]) {
			if (ret == 0)
				results_add_cell(set, cells[i]);
			else
				cell_free(cells[i]);
		}
	return ret;
}
