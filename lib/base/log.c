#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static enum log_level current_level = LOG_WARN;
static __thread char last_error[1024];

static const char *const level_names[LOG_LEVEL_COUNT] = {
	[LOG_ERROR] = "error",
	[LOG_WARN] = "warning",
	[LOG_INFO] = "info",
	[LOG_DEBUG] = "debug",
};

const char *log_level_name(enum log_level level)
{
	return level < LOG_LEVEL_COUNT ? level_names[level] : "?";
}

void log_set_level(enum log_level level)
{
	current_level = level;
}

enum log_level log_get_level(void)
{
	return current_level;
}

void pc_log(enum log_level level, const char *fmt, ...)
{
	va_list ap;
	char buf[2048];

	if (level > current_level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One write per line so lines from threads do not interleave. */
	fprintf(stderr, "pmucanary: %s: %s\n", log_level_name(level), buf);
}

int pc_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err > 0 ? -err : (err < 0 ? err : -EINVAL);
}

const char *pc_errmsg(void)
{
	return last_error[0] ? last_error : "unknown error";
}

void pc_errclear(void)
{
	last_error[0] = '\0';
}

int pc_errno_bad_path(int err)
{
	switch (err < 0 ? -err : err) {
	case ENOENT: case ENOTDIR: case ELOOP: case ENAMETOOLONG: case EACCES:
	case EPERM: case EISDIR: case ENXIO: case ENODEV: case EINVAL:
		return 1;
	default:
		return 0;
	}
}
