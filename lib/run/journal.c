#include "journal.h"

#include "infile.h"
#include "log.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/file.h>
#include <unistd.h>

struct journal {
	int fd;
	char *path;
	unsigned int seq;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *journal_boot_id(void)
{
	static char *boot;

	if (!boot) {
		char *text = NULL;

		if (g_file_get_contents("/proc/sys/kernel/random/boot_id", &text, NULL, NULL))
			g_strstrip(text);
		/* Set once; a race between threads only leaks a copy. */
		boot = text ? text : g_strdup("");
	}
	return boot;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return pc_fail(errno, "%s: %s", dir, strerror(errno));
	if (fsync(fd) < 0)
		r = pc_fail(errno, "%s: fsync: %s", dir, strerror(errno));
	close(fd);
	return r;
}

/* run_dir may also name the .jsonl file itself. */
static char *journal_file(const char *run_dir)
{
	if (g_str_has_suffix(run_dir, ".jsonl"))
		return g_strdup(run_dir);
	return g_build_filename(run_dir, JOURNAL_FILE, NULL);
}

/* One process per run directory: the journal's fd holds an exclusive
 * lock for as long as the run has it open (a `run --resume DIR` while the
 * run that owns DIR lives would truncate and interleave its journal). The
 * lock goes with the process, however it ends. */
static int lock_journal(int fd, const char *path)
{
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		return pc_fail(EBUSY, "%s: in use: another pmucanary is running this run "
			       "(its journal is locked)", path);
	return pc_fail(errno, "%s: lock: %s", path, strerror(errno));
}

int journal_create(const char *run_dir, struct journal **out)
{
	g_autofree char *path = journal_file(run_dir);
	g_autofree char *dir = g_path_get_dirname(path);
	struct journal *j;
	int fd, r;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return pc_fail(errno, "%s: %s", path, strerror(errno));
	if ((r = lock_journal(fd, path))) {
		close(fd);
		return r;
	}
	r = fsync_dir(dir);
	if (r) {
		close(fd);
		return r;
	}
	j = g_new0(struct journal, 1);
	j->fd = fd;
	j->path = g_steal_pointer(&path);
	*out = j;
	return 0;
}

int journal_reopen(const char *run_dir, struct journal **out)
{
	g_autofree char *path = journal_file(run_dir);
	g_autofree char *text = NULL;
	size_t len = 0;
	struct journal *j;
	unsigned int lines = 0;
	int fd, r;

	/* A regular file, first: open() for writing would block on a FIFO. */
	if ((fd = infile_check(path, INFILE_RESULTS)))
		return fd;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return pc_fail(errno, "%s: %s", path, strerror(errno));
	/* Read under the lock: another process's lines are in or out whole. */
	if ((r = lock_journal(fd, path)) || (r = infile_read(path, INFILE_RESULTS, &text, &len))) {
		close(fd);
		return r;
	}
	/* Keep everything up to the last newline: a partial line is the one
	 * the crash interrupted (journal_read has reported it). */
	while (len > 0 && text[len - 1] != '\n')
		len--;
	for (gsize i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (ftruncate(fd, (off_t)len) < 0 || fsync(fd) < 0) {
		int e = errno;

		close(fd);
		return pc_fail(e, "%s: %s", path, strerror(e));
	}
	j = g_new0(struct journal, 1);
	j->fd = fd;
	j->path = g_steal_pointer(&path);
	j->seq = lines;
	*out = j;
	return 0;
}

void journal_close(struct journal *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	g_free(j->path);
	g_free(j);
}

const char *journal_path(const struct journal *j)
{
	return j->path;
}

/* A line is whole or absent. A failed write (ENOSPC on a full results
 * disk, EFBIG) may have written part of it; a later, shorter line could
 * then land after that part, and the reader rejects garbage before the
 * last line: the run could not be resumed. */
static void journal_undo(struct journal *j, off_t start)
{
	if (start >= 0 && ftruncate(j->fd, start) < 0)
		pc_warn("%s: cannot cut a failed line off: %s", j->path, strerror(errno));
}

int journal_append(struct journal *j, const char *step, json_t *line)
{
	g_autofree char *text = NULL;
	g_autofree char *buf = NULL;
	json_t *obj = json_object();
	size_t len, off = 0;
	off_t start;
	int e;

	json_object_set_new(obj, "step", json_string(step));
	json_object_set_new(obj, "seq", json_integer(j->seq));
	json_object_set_new(obj, "ts", json_integer(now_ms()));
	json_object_set_new(obj, "boot", json_string(journal_boot_id()));
	if (line)
		json_object_update(obj, line);
	text = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(obj);
	if (!text)
		return pc_fail(ENOMEM, "%s: cannot encode a %s line", j->path, step);
	buf = g_strconcat(text, "\n", NULL);
	len = strlen(buf);
	start = lseek(j->fd, 0, SEEK_END);
	/* One write: with O_APPEND a crash leaves at most one partial line. */
	while (off < len) {
		ssize_t n = write(j->fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			journal_undo(j, start);
			return pc_fail(e, "%s: write: %s", j->path, strerror(e));
		}
		off += (size_t)n;
	}
	if (fsync(j->fd) < 0) {
		e = errno;
		journal_undo(j, start);
		return pc_fail(e, "%s: fsync: %s", j->path, strerror(e));
	}
	j->seq++;
	return 0;
}

static int append_with(struct journal *j, const char *step, const char *key, json_t *value)
{
	json_t *line = json_object();
	int r;

	json_object_set(line, key, value ? value : json_null());
	r = journal_append(j, step, line);
	json_decref(line);
	return r;
}

int journal_start(struct journal *j, json_t *scenario, const char *fingerprint_hash)
{
	json_t *line = json_object();
	int r;

	json_object_set(line, "scenario", scenario ? scenario : json_null());
	json_object_set_new(line, "fingerprint", json_string(fingerprint_hash ? fingerprint_hash : ""));
	r = journal_append(j, "start", line);
	json_decref(line);
	return r;
}

int journal_open_done(struct journal *j, json_t *results)
{
	return append_with(j, "open-done", "results", results);
}

int journal_fleet_up(struct journal *j, json_t *fleet)
{
	return append_with(j, "fleet-up", "fleet", fleet);
}

int journal_arm(struct journal *j, unsigned int batch, const char *kind,
		const char *const *keys)
{
	json_t *line = json_object(), *a = json_array();
	int r;

	for (; keys && *keys; keys++)
		json_array_append_new(a, json_string(*keys));
	json_object_set_new(line, "batch", json_integer(batch));
	json_object_set_new(line, "kind", json_string(kind ? kind : ""));
	json_object_set_new(line, "keys", a);
	r = journal_append(j, "arm", line);
	json_decref(line);
	return r;
}

int journal_judged(struct journal *j, unsigned int batch, const char *outcome,
		   json_t *verdicts)
{
	json_t *line = json_object();
	int r;

	json_object_set_new(line, "batch", json_integer(batch));
	json_object_set_new(line, "outcome", json_string(outcome));
	json_object_set_new(line, "verdicts", verdicts ? json_incref(verdicts) : json_array());
	r = journal_append(j, "judged", line);
	json_decref(line);
	return r;
}

int journal_interrupted(struct journal *j, unsigned int batch, int signo)
{
	json_t *line = json_pack("{s:I,s:i}", "batch", (json_int_t)batch, "signal", signo);
	int r = journal_append(j, "interrupted", line);

	json_decref(line);
	return r;
}

int journal_baseline(struct journal *j, const char *outcome, json_t *verdicts)
{
	json_t *line = json_object();
	int r;

	json_object_set_new(line, "outcome", json_string(outcome));
	json_object_set_new(line, "verdicts", verdicts ? json_incref(verdicts) : json_null());
	r = journal_append(j, "baseline", line);
	json_decref(line);
	return r;
}

int journal_done(struct journal *j, json_t *summary)
{
	return append_with(j, "done", "summary", summary);
}

int journal_host_down(struct journal *j, unsigned int batch, const char *outcome,
		      const char *evidence)
{
	json_t *line = json_object();
	int r;

	if (strcmp(outcome, "HOST_CRASH") && strcmp(outcome, "HOST_HANG")) {
		json_decref(line);
		return pc_fail(EINVAL, "host-down: %s is not HOST_CRASH or HOST_HANG", outcome);
	}
	json_object_set_new(line, "batch", json_integer(batch));
	json_object_set_new(line, "outcome", json_string(outcome));
	/* A lab host's console is the guest's bytes: kept as \xNN, not dropped
	 * (json_string() refuses text that is not UTF-8). */
	json_object_set_new(line, "evidence", results_json_string(evidence ? evidence : ""));
	r = journal_append(j, "host-down", line);
	json_decref(line);
	return r;
}

/* ---- replay ---- */

static void batch_free(gpointer p)
{
	struct journal_batch *b = p;

	g_free(b->kind);
	g_free(b->boot_id);
	g_ptr_array_unref(b->keys);
	g_free(b->outcome);
	json_decref(b->verdicts);
	g_free(b->down_outcome);
	g_free(b->down_evidence);
	g_free(b);
}

void journal_replay_free(struct journal_replay *r)
{
	if (!r)
		return;
	json_decref(r->start);
	json_decref(r->open_done);
	json_decref(r->fleet_up);
	json_decref(r->baseline);
	json_decref(r->done);
	g_ptr_array_unref(r->batches);
	g_free(r);
}

static struct journal_batch *find_batch(const struct journal_replay *r, unsigned int id)
{
	/* Latest first: a batch armed again after a resume replaces the old. */
	for (guint i = r->batches->len; i-- > 0;) {
		struct journal_batch *b = r->batches->pdata[i];

		if (b->id == id)
			return b;
	}
	return NULL;
}

const struct journal_batch *journal_replay_batch(const struct journal_replay *r,
						 unsigned int id)
{
	return find_batch(r, id);
}

const struct journal_batch *journal_replay_open_batch(const struct journal_replay *r)
{
	for (guint i = r->batches->len; i-- > 0;) {
		struct journal_batch *b = r->batches->pdata[i];

		if (!b->judged && !b->interrupted)
			return b;
	}
	return NULL;
}

static int get_batch_id(const char *path, unsigned int ln, json_t *o, unsigned int *id)
{
	json_t *b = json_object_get(o, "batch");

	if (!json_is_integer(b) || json_integer_value(b) < 0 || json_integer_value(b) > UINT32_MAX)
		return pc_fail(EINVAL, "%s:%u: expected \"batch\": a non-negative integer", path, ln);
	*id = (unsigned int)json_integer_value(b);
	return 0;
}

static int replay_line(struct journal_replay *r, const char *path, unsigned int ln, json_t *o)
{
	const char *step = json_string_value(json_object_get(o, "step"));
	unsigned int id;
	int e;

	if (!step)
		return pc_fail(EINVAL, "%s:%u: no \"step\"", path, ln);
	if (!strcmp(step, "start") || !strcmp(step, "open-done") ||
	    !strcmp(step, "fleet-up") || !strcmp(step, "baseline") || !strcmp(step, "done")) {
		json_t **slot = !strcmp(step, "start") ? &r->start :
				!strcmp(step, "open-done") ? &r->open_done :
				!strcmp(step, "fleet-up") ? &r->fleet_up :
				!strcmp(step, "baseline") ? &r->baseline : &r->done;

		json_decref(*slot);
		*slot = json_incref(o);
		return 0;
	}
	if (!strcmp(step, "arm")) {
		json_t *keys = json_object_get(o, "keys"), *k;
		struct journal_batch *b;
		size_t i;

		if ((e = get_batch_id(path, ln, o, &id)))
			return e;
		if (!json_is_array(keys))
			return pc_fail(EINVAL, "%s:%u: arm: expected \"keys\": an array", path, ln);
		b = g_new0(struct journal_batch, 1);
		b->id = id;
		b->kind = g_strdup(json_string_value(json_object_get(o, "kind")));
		b->boot_id = g_strdup(json_string_value(json_object_get(o, "boot")));
		if (!b->boot_id)
			b->boot_id = g_strdup("");
		b->keys = g_ptr_array_new_with_free_func(g_free);
		g_ptr_array_add(r->batches, b);
		json_array_foreach(keys, i, k) {
			if (!json_is_string(k))
				return pc_fail(EINVAL, "%s:%u: arm: keys[%zu] is not a string", path, ln, i);
			g_ptr_array_add(b->keys, g_strdup(json_string_value(k)));
		}
		return 0;
	}
	if (!strcmp(step, "judged")) {
		const char *outcome = json_string_value(json_object_get(o, "outcome"));
		struct journal_batch *b;

		if ((e = get_batch_id(path, ln, o, &id)))
			return e;
		b = find_batch(r, id);
		if (!b)
			return pc_fail(EINVAL, "%s:%u: judged: batch %u was never armed", path, ln, id);
		if (!outcome)
			return pc_fail(EINVAL, "%s:%u: judged: expected \"outcome\"", path, ln);
		b->judged = true;
		g_free(b->outcome);
		b->outcome = g_strdup(outcome);
		json_decref(b->verdicts);
		b->verdicts = json_incref(json_object_get(o, "verdicts"));
		return 0;
	}
	if (!strcmp(step, "interrupted")) {
		struct journal_batch *b;

		if ((e = get_batch_id(path, ln, o, &id)))
			return e;
		b = find_batch(r, id);
		if (!b)
			return pc_fail(EINVAL, "%s:%u: interrupted: batch %u was never armed", path, ln, id);
		if (b->judged)
			return pc_fail(EINVAL, "%s:%u: interrupted: batch %u was judged already", path,
				       ln, id);
		b->interrupted = true;
		return 0;
	}
	if (!strcmp(step, "host-down")) {
		const char *outcome = json_string_value(json_object_get(o, "outcome"));
		const char *evidence = json_string_value(json_object_get(o, "evidence"));
		struct journal_batch *b;

		if ((e = get_batch_id(path, ln, o, &id)))
			return e;
		b = find_batch(r, id);
		if (!b)
			return pc_fail(EINVAL, "%s:%u: host-down: batch %u was never armed", path, ln, id);
		if (!outcome || (strcmp(outcome, "HOST_CRASH") && strcmp(outcome, "HOST_HANG")))
			return pc_fail(EINVAL, "%s:%u: host-down: expected \"outcome\": HOST_CRASH or "
				       "HOST_HANG", path, ln);
		g_free(b->down_outcome);
		g_free(b->down_evidence);
		b->down_outcome = g_strdup(outcome);
		b->down_evidence = g_strdup(evidence ? evidence : "");
		return 0;
	}
	return pc_fail(EINVAL, "%s:%u: unknown step \"%s\"", path, ln, step);
}

int journal_read(const char *run_dir, struct journal_replay **out)
{
	g_autofree char *path = journal_file(run_dir);
	g_autofree char *text = NULL;
	g_autoptr(journal_replay) r = g_new0(struct journal_replay, 1);
	size_t len = 0, pos = 0;
	unsigned int ln = 0;
	int rc;

	r->batches = g_ptr_array_new_with_free_func(batch_free);
	if ((rc = infile_read(path, INFILE_RESULTS, &text, &len)))
		return rc;
	/* A crash may leave a tail of NULs from the filesystem after the last
	 * complete line, or a partial line: both are the interrupted write. */
	while (len > 0 && text[len - 1] == '\0') {
		len--;
		r->truncated = true;
	}
	while (pos < len) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		json_error_t jerr;
		json_t *o;
		int e;

		ln++;
		pos += n + (nl ? 1 : 0);
		o = json_loadb(line, n, JSON_REJECT_DUPLICATES, &jerr);
		if (!o || !json_is_object(o)) {
			json_decref(o);
			if (!nl) {
				r->truncated = true;
				break;
			}
			return pc_fail(EINVAL, "%s:%u: not a journal line: %s", path, ln,
				       o ? "not a JSON object" : jerr.text);
		}
		e = replay_line(r, path, ln, o);
		json_decref(o);
		if (e)
			return e;
		r->lines++;
	}
	*out = g_steal_pointer(&r);
	return 0;
}
