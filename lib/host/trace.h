/* Trace mode: run a real perf binary and capture its perf_event_open calls.
 *
 * trace_run() forks, ptraces the child and every process or thread it
 * creates, and records each perf_event_open: the attr as read from the
 * tracee's memory (size first, then that many bytes, bounded), its
 * pid/cpu/group_fd/flags arguments and the result (fd or errno). The
 * child's stderr goes through a pipe: it is still passed through, and its
 * last lines are kept. No shell in between: argv is execvp()ed as given.
 *
 * The parser for perf's own `-vv` output (the "perf_event_attr:" blocks and
 * "sys_perf_event_open:" lines) lives here too, so that a capture can be
 * checked against what the binary says it did. */
#ifndef PMUCANARY_TRACE_H
#define PMUCANARY_TRACE_H

#include <glib.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* How the tracer stops the tracee. seccomp stops only at perf_event_open
 * (a BPF filter returns SECCOMP_RET_TRACE for it); syscall stops at every
 * system call's entry and exit (slower; for kernels without seccomp). */
enum trace_method {
	TRACE_METHOD_SECCOMP,
	TRACE_METHOD_SYSCALL,
	TRACE_METHOD_COUNT
};

const char *trace_method_name(enum trace_method m);
/* Returns TRACE_METHOD_COUNT when name is not a method. */
enum trace_method trace_method_from_name(const char *name);

#define TRACE_STDERR_TAIL_DEFAULT 20
#define TRACE_STDERR_LINE_MAX 512

struct trace_options {
	enum trace_method method;
	/* Lines of the child's stderr to keep (0: TRACE_STDERR_TAIL_DEFAULT). */
	unsigned int stderr_tail_lines;
	/* Where the child's stderr is passed through: 0 (the zero value)
	 * means STDERR_FILENO, -1 drops it. */
	int stderr_passthrough_fd;
};

/* One perf_event_open call. */
struct trace_call {
	struct perf_event_attr attr; /* bytes beyond sizeof(attr) are not kept */
	uint32_t attr_size;          /* attr.size as passed (0 means VER0) */
	int attr_read_err;           /* errno when the attr could not be read */
	pid_t tid;                   /* the thread that called */
	pid_t pid;                   /* the pid argument */
	int cpu;
	int group_fd;
	unsigned long flags;
	int ret_fd;                  /* >= 0 on success, else -1 */
	int err;                     /* positive errno on failure, else 0 */
};

struct trace_result {
	GPtrArray *calls;        /* struct trace_call *, in order of return */
	int exit_code;           /* exit status of the traced command, or -1 */
	int term_signal;         /* signal that killed it, or 0 */
	GPtrArray *stderr_tail;  /* char *, the last lines, oldest first */
	unsigned long stderr_lines; /* lines seen in total */
	unsigned long stops;     /* ptrace stops handled (for measurement) */
};

/* Runs argv[0] (found in PATH) with argv and traces it to completion.
 * It waits with waitpid(-1, __WALL): do not call it while the process has
 * other children that something else waits for (it would reap them).
 * Returns 0 and *out even when the command failed (see exit_code);
 * -ENOENT/-EACCES when it cannot be executed; other -errno when tracing
 * is impossible (ptrace or seccomp refused). */
int trace_run(char *const argv[], const struct trace_options *opts,
	      struct trace_result **out);
void trace_result_free(struct trace_result *res);
/* For g_autoptr(trace_result). */
typedef struct trace_result trace_result;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(trace_result, trace_result_free)

/* {"argv": [...], "method", "calls": [{"tid","pid","cpu","group_fd","flags",
 *  "attr": {non-zero members}, "attr_size", "outcome", "fd"|"errno"}],
 *  "exit_code"|"signal", "stderr_tail": [...]} (new reference). */
json_t *trace_result_to_json(const struct trace_result *res, char *const argv[]);
/* "cpu 0 pid -1 group_fd -1 flags 0x8 type=1 ... -> fd 5" / "-> ENOENT";
 * caller g_free()s. */
char *trace_call_to_string(const struct trace_call *call);

/* Decodes the bytes read at a call's attr pointer as the kernel would:
 * attr_size from the size member (0 when fewer than 8 bytes), at most that
 * many bytes (VER0 for 0) and at most sizeof(attr) kept, the rest zero. */
void trace_call_set_attr_bytes(struct trace_call *call, const void *bytes, size_t len);
json_t *trace_call_to_json(const struct trace_call *call);

/* Parses perf's -vv output: every "perf_event_attr:" block followed by its
 * "sys_perf_event_open: pid P  cpu C  group_fd G  flags F" lines, each
 * either "= FD" or followed by "sys_perf_event_open failed, error -E".
 * Appends one struct trace_call per open line (tid 0) to *calls (created
 * when NULL). Unknown attr lines fail with a message naming the line. */
int trace_parse_perf_verbose(const char *text, GPtrArray **calls);

/* True when a and b are the same call: attr, pid, cpu, group_fd, flags and
 * result (tid and attr_size are not compared). */
bool trace_call_equal(const struct trace_call *a, const struct trace_call *b);

/* Checks that every call in `expected` appears in `traced` in the same
 * order (traced may hold more: perf's feature probes print nothing).
 * Returns 0, or -ENOENT with a message naming the first missing call. */
int trace_calls_match(const GPtrArray *traced, const GPtrArray *expected);

#endif
