#include "kmsg.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const class_names[KMSG_CLASS_COUNT] = {
	[KMSG_CLASS_NONE] = "none",
	[KMSG_CLASS_WARNING] = "warning",
	[KMSG_CLASS_BUG] = "bug",
	[KMSG_CLASS_OOPS] = "oops",
	[KMSG_CLASS_GPF] = "general-protection",
	[KMSG_CLASS_PANIC] = "panic",
	[KMSG_CLASS_RCU_STALL] = "rcu-stall",
	[KMSG_CLASS_LOCKUP] = "lockup",
	[KMSG_CLASS_NMI] = "unknown-nmi",
	[KMSG_CLASS_MSR] = "msr-error",
};

const char *kmsg_class_name(enum kmsg_class c)
{
	return c < KMSG_CLASS_COUNT ? class_names[c] : "?";
}

/* The one table of patterns, most specific first. `prefix` patterns match
 * at the start of the message (after an optional "subsystem: " tag such as
 * "watchdog: " or "rcu: "), the others anywhere. */
static const struct {
	const char *pattern;
	bool prefix;
	enum kmsg_class cls;
} patterns[] = {
	{ "Kernel panic - not syncing", true, KMSG_CLASS_PANIC },
	{ "BUG: soft lockup", true, KMSG_CLASS_LOCKUP },
	{ "Watchdog detected hard LOCKUP", false, KMSG_CLASS_LOCKUP },
	{ "INFO: task ", true, KMSG_CLASS_LOCKUP },           /* ... blocked for more than */
	{ "BUG: workqueue lockup", true, KMSG_CLASS_LOCKUP },
	{ "self-detected stall on CPU", false, KMSG_CLASS_RCU_STALL },
	{ "detected stalls on CPUs/tasks", false, KMSG_CLASS_RCU_STALL },
	{ "detected expedited stalls", false, KMSG_CLASS_RCU_STALL },
	{ "general protection fault", true, KMSG_CLASS_GPF },
	{ "Oops: general protection fault", true, KMSG_CLASS_GPF },
	{ "Oops:", true, KMSG_CLASS_OOPS },
	{ "kernel BUG at ", true, KMSG_CLASS_BUG },
	{ "BUG: ", true, KMSG_CLASS_BUG },
	{ "WARNING: ", true, KMSG_CLASS_WARNING },
	{ "Uhhuh. NMI received for unknown reason", true, KMSG_CLASS_NMI },
	{ "Dazed and confused, but trying to continue", true, KMSG_CLASS_NMI },
	{ "unchecked MSR access error", true, KMSG_CLASS_MSR },
};

/* "watchdog: BUG: soft lockup" and "rcu: INFO: ..." carry a tag. */
static const char *skip_tag(const char *m)
{
	const char *colon = strstr(m, ": ");

	if (!colon)
		return m;
	for (const char *p = m; p < colon; p++)
		if (!(g_ascii_isalnum(*p) || *p == '_' || *p == '-'))
			return m;
	return colon + 2;
}

enum kmsg_class kmsg_classify(const char *message)
{
	const char *tagged;

	if (!message)
		return KMSG_CLASS_NONE;
	while (*message == ' ' || *message == '\t')
		message++;
	/* Our own markers quote spec names and words like "crash". */
	if (g_str_has_prefix(message, "pmucanary"))
		return KMSG_CLASS_NONE;
	tagged = skip_tag(message);
	for (size_t i = 0; i < G_N_ELEMENTS(patterns); i++) {
		const char *p = patterns[i].pattern;

		if (patterns[i].prefix) {
			if (g_str_has_prefix(message, p) || g_str_has_prefix(tagged, p))
				return patterns[i].cls;
		} else if (strstr(message, p)) {
			return patterns[i].cls;
		}
	}
	return KMSG_CLASS_NONE;
}

/* One decimal field of a record's prefix, up to max, ending at one of
 * stops: strtoull took "-1" as 2^64 - 1, and " 5" and "+5". */
static bool kmsg_field(char **p, guint64 max, const char *stops, guint64 *out)
{
	guint64 v = 0;
	char *s = *p;

	if (!g_ascii_isdigit(*s))
		return false;
	for (; g_ascii_isdigit(*s); s++) {
		if (v > (max - (guint64)(*s - '0')) / 10)
			return false;
		v = v * 10 + (guint64)(*s - '0');
	}
	if (!strchr(stops, *s))
		return false;
	*out = v;
	*p = s;
	return true;
}

/* syslog's facility is 8 bits in the kernel's prefix: prio = fac << 3 | level */
#define KMSG_PRIO_MAX 2047

int kmsg_record_parse(const char *buf, size_t len, struct kmsg_record *out)
{
	g_autofree char *text = g_strndup(buf, len);
	char *semi = strchr(text, ';'), *nl, *p = text;
	guint64 prio, seq, ts;

	memset(out, 0, sizeof(*out));
	if (!semi)
		return -EINVAL;
	*semi = '\0';
	/* strchr's stops include the terminator: "" means "at the end" */
	if (!kmsg_field(&p, KMSG_PRIO_MAX, ",", &prio) || !*p++ ||
	    !kmsg_field(&p, G_MAXUINT64, ",", &seq) || !*p++ ||
	    !kmsg_field(&p, G_MAXUINT64, ",", &ts))
		return -EINVAL;
	nl = strchr(semi + 1, '\n');
	if (nl)
		*nl = '\0';
	out->facility = (unsigned int)(prio >> 3);
	out->level = (unsigned int)(prio & 7);
	out->seq = seq;
	out->ts_usec = ts;
	out->message = g_strdup(semi + 1);
	return 0;
}

void kmsg_record_clear(struct kmsg_record *rec)
{
	if (!rec)
		return;
	g_free(rec->message);
	rec->message = NULL;
}

enum kmsg_class kmsg_record_classify(const struct kmsg_record *rec)
{
	/* Facility 0 is the kernel; user-space writes are LOG_USER (1). */
	if (rec->facility != 0)
		return KMSG_CLASS_NONE;
	return kmsg_classify(rec->message);
}

void kmsg_hit_free(struct kmsg_hit *hit)
{
	if (!hit)
		return;
	g_free(hit->message);
	g_free(hit);
}

struct kmsg_watch {
	int fd;
	char *path;
	unsigned int missed;
};

int kmsg_open(const char *path, struct kmsg_watch **out)
{
	struct kmsg_watch *w;
	int fd, r;

	path = path ? path : KMSG_PATH;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return pc_fail(errno, "%s: %s", path, strerror(errno));
	w = g_new0(struct kmsg_watch, 1);
	w->fd = fd;
	w->path = g_strdup(path);
	r = kmsg_mark(w);
	if (r) {
		kmsg_close(w);
		return r;
	}
	*out = w;
	return 0;
}

void kmsg_close(struct kmsg_watch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	g_free(w->path);
	g_free(w);
}

int kmsg_mark(struct kmsg_watch *w)
{
	if (lseek(w->fd, 0, SEEK_END) < 0)
		return pc_fail(errno, "%s: seek to end: %s", w->path, strerror(errno));
	return 0;
}

int kmsg_read_new(struct kmsg_watch *w, GPtrArray *hits, unsigned int *seen)
{
	/* One record per read(2); the kernel's limit is about 8 KiB. */
	char buf[8192];

	for (;;) {
		struct kmsg_record rec;
		enum kmsg_class cls;
		ssize_t n = read(w->fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE) {
			/* Overwritten before we read it: the next read resumes. */
			w->missed++;
			continue;
		}
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return pc_fail(errno, "%s: read: %s", w->path, strerror(errno));
		if (n == 0)
			return 0;
		if (kmsg_record_parse(buf, (size_t)n, &rec))
			continue;
		if (seen)
			(*seen)++;
		cls = kmsg_record_classify(&rec);
		if (cls != KMSG_CLASS_NONE && hits) {
			struct kmsg_hit *h = g_new0(struct kmsg_hit, 1);

			h->cls = cls;
			h->seq = rec.seq;
			h->ts_usec = rec.ts_usec;
			h->message = g_steal_pointer(&rec.message);
			g_ptr_array_add(hits, h);
		}
		kmsg_record_clear(&rec);
	}
}

unsigned int kmsg_missed(const struct kmsg_watch *w)
{
	return w->missed;
}

int kmsg_write(const char *path, const char *line)
{
	int fd;
	ssize_t n;
	size_t len = strlen(line);

	path = path ? path : KMSG_PATH;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return pc_fail(errno, "%s: %s", path, strerror(errno));
	n = write(fd, line, len);
	if (n < 0) {
		int e = errno;

		close(fd);
		return pc_fail(e, "%s: write: %s", path, strerror(e));
	}
	close(fd);
	return 0;
}
