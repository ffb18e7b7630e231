/* Logging and the last-error message.
 *
 * lib/ never prints to the user directly and never exits: it logs through
 * pc_log() and returns 0 or a negative errno, leaving a one-line message that
 * the caller reads with pc_errmsg(). */
#ifndef PMUCANARY_LOG_H
#define PMUCANARY_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_ERROR,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
	LOG_LEVEL_COUNT
};

const char *log_level_name(enum log_level level);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
void pc_log(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pc_error(...) pc_log(LOG_ERROR, __VA_ARGS__)
#define pc_warn(...)  pc_log(LOG_WARN, __VA_ARGS__)
#define pc_info(...)  pc_log(LOG_INFO, __VA_ARGS__)
#define pc_debug(...) pc_log(LOG_DEBUG, __VA_ARGS__)

/* Record a message for the caller and return -err (err is a positive errno).
 * The message is per thread and replaced by the next pc_fail(). */
int pc_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *pc_errmsg(void);
void pc_errclear(void);

/* Whether -err (or err) from opening a path the user named says the path
 * is wrong as given: missing, a dangling or looping symlink, a file where a
 * directory is needed ("file/"), too long, not permitted, a directory or a
 * node with nothing behind it. Such a path is bad input (exit 2), never a
 * failure of the system (exit 125). */
int pc_errno_bad_path(int err);

#endif
