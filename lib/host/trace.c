#include "trace.h"

#include "attr.h"
#include "log.h"
#include "outcome.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#define TRACE_NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TRACE_NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

/* The kernel refuses attrs larger than a page (perf_copy_attr). */
#define TRACE_ATTR_MAX 4096

static const char *const method_names[TRACE_METHOD_COUNT] = {
	[TRACE_METHOD_SECCOMP] = "seccomp",
	[TRACE_METHOD_SYSCALL] = "syscall",
};

const char *trace_method_name(enum trace_method m)
{
	return m < TRACE_METHOD_COUNT ? method_names[m] : "?";
}

enum trace_method trace_method_from_name(const char *name)
{
	for (int m = 0; name && m < TRACE_METHOD_COUNT; m++)
		if (strcmp(method_names[m], name) == 0)
			return m;
	return TRACE_METHOD_COUNT;
}

void trace_result_free(struct trace_result *res)
{
	if (!res)
		return;
	if (res->calls)
		g_ptr_array_unref(res->calls);
	if (res->stderr_tail)
		g_ptr_array_unref(res->stderr_tail);
	g_free(res);
}

static struct trace_result *trace_result_new(void)
{
	struct trace_result *res = g_new0(struct trace_result, 1);

	res->calls = g_ptr_array_new_with_free_func(g_free);
	res->stderr_tail = g_ptr_array_new_with_free_func(g_free);
	res->exit_code = -1;
	return res;
}

/* ---- stderr: pass through, keep the tail ---------------------------- */

struct stderr_tail {
	int fd;                 /* read end of the child's stderr pipe */
	int passthrough_fd;
	unsigned int max_lines;
	GQueue lines;
	GString *partial;
	unsigned long total;
	atomic_bool stopping;
	pthread_t thread;
};

static void tail_push(struct stderr_tail *t, const char *line, size_t len)
{
	if (len > TRACE_STDERR_LINE_MAX)
		len = TRACE_STDERR_LINE_MAX;
	g_queue_push_tail(&t->lines, g_strndup(line, len));
	t->total++;
	while (g_queue_get_length(&t->lines) > t->max_lines)
		g_free(g_queue_pop_head(&t->lines));
}

static void tail_feed(struct stderr_tail *t, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			tail_push(t, t->partial->str, t->partial->len);
			g_string_truncate(t->partial, 0);
		} else if (t->partial->len < TRACE_STDERR_LINE_MAX) {
			g_string_append_c(t->partial, buf[i]);
		}
	}
}

static void write_all(int fd, const char *buf, size_t n)
{
	while (fd >= 0 && n) {
		ssize_t w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		n -= w;
	}
}

static void *tail_thread(void *arg)
{
	struct stderr_tail *t = arg;
	char buf[4096];

	for (;;) {
		struct pollfd p = { .fd = t->fd, .events = POLLIN };
		int r = poll(&p, 1, 100);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			/* The traced tree is gone but something (a daemon it
			 * left) still holds the pipe: stop waiting for EOF. */
			if (atomic_load(&t->stopping))
				break;
			continue;
		}
		ssize_t n = read(t->fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		write_all(t->passthrough_fd, buf, n);
		tail_feed(t, buf, n);
	}
	if (t->partial->len)
		tail_push(t, t->partial->str, t->partial->len);
	return NULL;
}

/* ---- reading the tracee ---------------------------------------------- */

static int tracee_read(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		return -EFAULT;
	if (errno != ENOSYS && errno != EPERM)
		return -errno;
	/* process_vm_readv may be compiled out or refused by an LSM; the
	 * word-at-a-time path needs only ptrace. */
	for (size_t off = 0; off < len; off += sizeof(long)) {
		long word;
		size_t chunk = MIN(sizeof(long), len - off);

		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, tid, (void *)(uintptr_t)(addr + off), NULL);
		if (word == -1 && errno)
			return -errno;
		memcpy((char *)buf + off, &word, chunk);
	}
	return 0;
}

/* How many attr bytes a call passes: its size member, 0 meaning VER0, as
 * the kernel reads it; bounded so that a lying tracee costs nothing. */
static size_t attr_want(uint32_t size)
{
	size_t want = size ? size : PERF_ATTR_SIZE_VER0;

	return MAX(MIN(want, TRACE_ATTR_MAX), 2 * sizeof(uint32_t));
}

void trace_call_set_attr_bytes(struct trace_call *call, const void *bytes, size_t len)
{
	uint32_t size = 0;

	memset(&call->attr, 0, sizeof(call->attr));
	if (len >= 2 * sizeof(uint32_t))
		memcpy(&size, (const char *)bytes + sizeof(uint32_t), sizeof(size));
	call->attr_size = size;
	memcpy(&call->attr, bytes, MIN(MIN(len, attr_want(size)), sizeof(call->attr)));
}

/* Reads `size` first, then that many bytes (bounded), as the kernel does. */
static void call_read_attr(struct trace_call *call, pid_t tid, uint64_t addr)
{
	uint32_t hdr[2];
	int ret = tracee_read(tid, addr, hdr, sizeof(hdr));

	if (ret < 0) {
		call->attr_read_err = -ret;
		return;
	}
	size_t want = attr_want(hdr[1]);
	g_autofree char *buf = g_malloc0(want);
	ret = tracee_read(tid, addr, buf, want);
	if (ret < 0) {
		call->attr_size = hdr[1];
		call->attr_read_err = -ret;
		return;
	}
	trace_call_set_attr_bytes(call, buf, want);
}

/* ---- the tracer ------------------------------------------------------ */

struct tracer {
	pid_t child;
	enum trace_method method;
	GHashTable *pending; /* tid -> struct trace_call *, between entry and exit */
	GHashTable *known;   /* tids already stopped once */
	struct trace_result *res;
};

static void tracer_syscall_stop(struct tracer *tr, pid_t tid)
{
	struct __ptrace_syscall_info info;
	uint64_t nr, *args;

	memset(&info, 0, sizeof(info));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(info), &info) <= 0)
		return;
	if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
		struct trace_call *call = g_hash_table_lookup(tr->pending, GINT_TO_POINTER(tid));

		if (!call)
			return;
		g_hash_table_steal(tr->pending, GINT_TO_POINTER(tid));
		if (info.exit.is_error) {
			call->err = (int)-info.exit.rval;
			call->ret_fd = -1;
		} else {
			call->ret_fd = (int)info.exit.rval;
		}
		g_ptr_array_add(tr->res->calls, call);
		return;
	}
	if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
		nr = info.entry.nr;
		args = info.entry.args;
	} else if (info.op == PTRACE_SYSCALL_INFO_SECCOMP) {
		nr = info.seccomp.nr;
		args = info.seccomp.args;
	} else {
		return;
	}
#ifdef TRACE_NATIVE_ARCH
	if (info.arch != TRACE_NATIVE_ARCH)
		return;
#endif
	if (nr != __NR_perf_event_open)
		return;

	struct trace_call *call = g_new0(struct trace_call, 1);
	call->tid = tid;
	call->pid = (pid_t)args[1];
	call->cpu = (int)args[2];
	call->group_fd = (int)args[3];
	call->flags = (unsigned long)args[4];
	call_read_attr(call, tid, args[0]);
	g_hash_table_replace(tr->pending, GINT_TO_POINTER(tid), call);
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static int tracer_loop(struct tracer *tr)
{
	for (;;) {
		int status, inject = 0;
		pid_t tid = waitpid(-1, &status, __WALL);

		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				return 0;
			return pc_fail(errno, "trace: waitpid: %s", g_strerror(errno));
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			/* A call whose caller died before returning has no
			 * result; it is dropped rather than invented. */
			g_hash_table_remove(tr->pending, GINT_TO_POINTER(tid));
			g_hash_table_remove(tr->known, GINT_TO_POINTER(tid));
			if (tid == tr->child) {
				if (WIFEXITED(status))
					tr->res->exit_code = WEXITSTATUS(status);
				else
					tr->res->term_signal = WTERMSIG(status);
			}
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		tr->res->stops++;

		int sig = WSTOPSIG(status), event = status >> 16;
		bool first = g_hash_table_add(tr->known, GINT_TO_POINTER(tid));

		if (sig == (SIGTRAP | 0x80)) {
			tracer_syscall_stop(tr, tid);
		} else if (sig == SIGTRAP && event) {
			if (event == PTRACE_EVENT_SECCOMP)
				tracer_syscall_stop(tr, tid);
			/* fork/vfork/clone/exec: the new tracee reports itself */
		} else if (first && sig == SIGSTOP) {
			/* the stop every auto-attached child starts with */
		} else if (is_stop_signal(sig)) {
			siginfo_t si;
			/* group-stop (GETSIGINFO fails) vs a signal to deliver */
			if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0)
				inject = sig;
		} else {
			inject = sig;
		}

		bool need_exit = g_hash_table_contains(tr->pending, GINT_TO_POINTER(tid));
		enum __ptrace_request req =
			tr->method == TRACE_METHOD_SYSCALL || need_exit ? PTRACE_SYSCALL : PTRACE_CONT;
		if (ptrace(req, tid, NULL, (void *)(long)inject) < 0 && errno != ESRCH)
			pc_warn("trace: resuming %d: %s", tid, g_strerror(errno));
	}
}

/* What the child reports through its close-on-exec pipe when it fails
 * before or at execvp. */
struct child_failure {
	int stage; /* 0 exec, 1 ptrace, 2 seccomp */
	int err;
};

static void child_fail(int fd, int stage, int err)
{
	struct child_failure f = { stage, err };

	write_all(fd, (const char *)&f, sizeof(f));
	_exit(127);
}

static int child_install_seccomp(void)
{
#ifdef TRACE_NATIVE_ARCH
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TRACE_NATIVE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = G_N_ELEMENTS(code), .filter = code };

	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0)
		return 0;
	if (errno != EACCES)
		return errno;
	/* Without CAP_SYS_ADMIN a filter needs no_new_privs. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return errno;
	return 0;
#else
	return EOPNOTSUPP;
#endif
}

static void child_run(char *const argv[], enum trace_method method, int err_fd, int stderr_fd)
{
	if (stderr_fd >= 0 && dup2(stderr_fd, STDERR_FILENO) < 0)
		child_fail(err_fd, 1, errno);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		child_fail(err_fd, 1, errno);
	/* Let the parent set the ptrace options before anything else. */
	raise(SIGSTOP);
	if (method == TRACE_METHOD_SECCOMP) {
		int err = child_install_seccomp();
		if (err)
			child_fail(err_fd, 2, err);
	}
	execvp(argv[0], argv);
	child_fail(err_fd, 0, errno);
}

int trace_run(char *const argv[], const struct trace_options *opts,
	      struct trace_result **out)
{
	struct trace_options defaults = { .method = TRACE_METHOD_SECCOMP };
	int errpipe[2], outpipe[2], ret = 0, status;
	struct stderr_tail tail = { .fd = -1 };
	bool tail_started = false;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if (!argv || !argv[0])
		return pc_fail(EINVAL, "trace: no command given");
	if (opts->method >= TRACE_METHOD_COUNT)
		return pc_fail(EINVAL, "trace: unknown method %d", opts->method);
#ifndef TRACE_NATIVE_ARCH
	if (opts->method == TRACE_METHOD_SECCOMP)
		return pc_fail(EOPNOTSUPP, "trace: seccomp method not built for this architecture");
#endif
	if (pipe2(errpipe, O_CLOEXEC) < 0)
		return pc_fail(errno, "trace: pipe: %s", g_strerror(errno));
	if (pipe2(outpipe, O_CLOEXEC) < 0) {
		ret = pc_fail(errno, "trace: pipe: %s", g_strerror(errno));
		close(errpipe[0]);
		close(errpipe[1]);
		return ret;
	}

	pid_t child = fork();
	if (child < 0) {
		ret = pc_fail(errno, "trace: fork: %s", g_strerror(errno));
		close(errpipe[0]);
		close(errpipe[1]);
		close(outpipe[0]);
		close(outpipe[1]);
		return ret;
	}
	if (child == 0)
		child_run(argv, opts->method, errpipe[1], outpipe[1]);
	close(errpipe[1]);
	close(outpipe[1]);

	g_autoptr(trace_result) res = trace_result_new();
	struct tracer tr = {
		.child = child,
		.method = opts->method,
		.pending = g_hash_table_new_full(NULL, NULL, NULL, g_free),
		.known = g_hash_table_new(NULL, NULL),
		.res = res,
	};

	tail.fd = outpipe[0];
	tail.passthrough_fd = opts->stderr_passthrough_fd ? opts->stderr_passthrough_fd : STDERR_FILENO;
	tail.max_lines = opts->stderr_tail_lines ? opts->stderr_tail_lines : TRACE_STDERR_TAIL_DEFAULT;
	tail.partial = g_string_new(NULL);
	g_queue_init(&tail.lines);
	atomic_init(&tail.stopping, false);
	if (pthread_create(&tail.thread, NULL, tail_thread, &tail) == 0)
		tail_started = true;
	else
		pc_warn("trace: cannot start the stderr reader; stderr tail will be empty");

	/* The child stops itself right after PTRACE_TRACEME. */
	pid_t w;
	while ((w = waitpid(child, &status, __WALL)) < 0 && errno == EINTR)
		;
	if (w < 0) {
		ret = pc_fail(errno, "trace: waitpid: %s", g_strerror(errno));
	} else if (WIFSTOPPED(status)) {
		long o = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
			 PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
		if (opts->method == TRACE_METHOD_SECCOMP)
			o |= PTRACE_O_TRACESECCOMP;
		g_hash_table_add(tr.known, GINT_TO_POINTER(child));
		if (ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)o) < 0) {
			ret = pc_fail(errno, "trace: PTRACE_SETOPTIONS: %s", g_strerror(errno));
			kill(child, SIGKILL);
		}
		enum __ptrace_request req =
			opts->method == TRACE_METHOD_SYSCALL ? PTRACE_SYSCALL : PTRACE_CONT;
		if (ret == 0 && ptrace(req, child, NULL, NULL) < 0)
			ret = pc_fail(errno, "trace: resuming the child: %s", g_strerror(errno));
		int loop_ret = tracer_loop(&tr);
		if (ret == 0)
			ret = loop_ret;
	} else if (WIFEXITED(status)) {
		res->exit_code = WEXITSTATUS(status);
	}

	if (tail_started) {
		atomic_store(&tail.stopping, true);
		pthread_join(tail.thread, NULL);
	}
	close(outpipe[0]);
	for (GList *l = tail.lines.head; l; l = l->next)
		g_ptr_array_add(res->stderr_tail, l->data);
	g_queue_clear(&tail.lines);
	g_string_free(tail.partial, TRUE);
	res->stderr_lines = tail.total;

	struct child_failure f;
	ssize_t n = read(errpipe[0], &f, sizeof(f));
	close(errpipe[0]);
	g_hash_table_unref(tr.pending);
	g_hash_table_unref(tr.known);
	if (n == (ssize_t)sizeof(f)) {
		static const char *const stage[] = { "cannot run", "cannot ptrace",
						     "cannot install the seccomp filter for" };
		return pc_fail(f.err, "trace: %s '%s': %s", stage[f.stage % 3], argv[0],
			       g_strerror(f.err));
	}
	if (ret < 0)
		return ret;
	*out = g_steal_pointer(&res);
	return 0;
}

/* ---- output ---------------------------------------------------------- */

json_t *trace_call_to_json(const struct trace_call *call)
{
	json_t *o = json_object();

	json_object_set_new(o, "tid", json_integer(call->tid));
	json_object_set_new(o, "pid", json_integer(call->pid));
	json_object_set_new(o, "cpu", json_integer(call->cpu));
	json_object_set_new(o, "group_fd", json_integer(call->group_fd));
	json_object_set_new(o, "flags", json_integer((json_int_t)call->flags));
	json_object_set_new(o, "attr", attr_to_json(&call->attr));
	json_object_set_new(o, "attr_size", json_integer(call->attr_size));
	if (call->attr_read_err)
		json_object_set_new(o, "attr_error", json_string(g_strerror(call->attr_read_err)));
	json_object_set_new(o, "outcome", json_string(outcome_name(outcome_from_errno(call->err))));
	if (call->err)
		json_object_set_new(o, "errno", json_integer(call->err));
	else
		json_object_set_new(o, "fd", json_integer(call->ret_fd));
	return o;
}

json_t *trace_result_to_json(const struct trace_result *res, char *const argv[])
{
	json_t *o = json_object(), *a = json_array();

	for (size_t i = 0; argv && argv[i]; i++)
		json_array_append_new(a, results_json_string(argv[i]));
	json_object_set_new(o, "argv", a);
	a = json_array();
	for (guint i = 0; i < res->calls->len; i++)
		json_array_append_new(a, trace_call_to_json(res->calls->pdata[i]));
	json_object_set_new(o, "calls", a);
	if (res->term_signal)
		json_object_set_new(o, "signal", json_integer(res->term_signal));
	else
		json_object_set_new(o, "exit_code", json_integer(res->exit_code));
	a = json_array();
	/* perf's own bytes: json_string() would drop a line that is not UTF-8. */
	for (guint i = 0; i < res->stderr_tail->len; i++)
		json_array_append_new(a, results_json_string(res->stderr_tail->pdata[i]));
	json_object_set_new(o, "stderr_tail", a);
	json_object_set_new(o, "stderr_lines", json_integer((json_int_t)res->stderr_lines));
	return o;
}

char *trace_call_to_string(const struct trace_call *call)
{
	g_autofree char *attr = attr_to_string(&call->attr);
	enum outcome o = outcome_from_errno(call->err);
	g_autofree char *result = !call->err ? g_strdup_printf("fd %d", call->ret_fd)
		: o == OUTCOME_EUNKNOWN ? g_strdup_printf("EUNKNOWN (errno %d)", call->err)
		: g_strdup(outcome_name(o));

	return g_strdup_printf("cpu %d pid %d group_fd %d flags %#lx: %s%s%s -> %s",
			       call->cpu, call->pid, call->group_fd, call->flags, attr,
			       call->attr_read_err ? " (attr unreadable: " : "",
			       call->attr_read_err ? g_strerror(call->attr_read_err) : "",
			       result);
}

/* ---- perf -vv ---------------------------------------------------------- */

struct bit_name {
	const char *name;
	uint64_t bit;
};

#define SB(n) { #n, PERF_SAMPLE_##n }
static const struct bit_name sample_type_bits[] = {
	SB(IP), SB(TID), SB(TIME), SB(ADDR), SB(READ), SB(CALLCHAIN), SB(ID),
	SB(CPU), SB(PERIOD), SB(STREAM_ID), SB(RAW), SB(BRANCH_STACK),
	SB(REGS_USER), SB(STACK_USER), SB(WEIGHT), SB(DATA_SRC), SB(IDENTIFIER),
	SB(TRANSACTION), SB(REGS_INTR), SB(PHYS_ADDR), SB(AUX), SB(CGROUP),
	SB(DATA_PAGE_SIZE), SB(CODE_PAGE_SIZE), SB(WEIGHT_STRUCT), { NULL, 0 }
};
#undef SB
#define RB(n) { #n, PERF_FORMAT_##n }
static const struct bit_name read_format_bits[] = {
	RB(TOTAL_TIME_ENABLED), RB(TOTAL_TIME_RUNNING), RB(ID), RB(GROUP),
	RB(LOST), { NULL, 0 }
};
#undef RB
#define BB(n) { #n, PERF_SAMPLE_BRANCH_##n }
static const struct bit_name branch_bits[] = {
	BB(USER), BB(KERNEL), BB(HV), BB(ANY), BB(ANY_CALL), BB(ANY_RETURN),
	BB(IND_CALL), BB(ABORT_TX), BB(IN_TX), BB(NO_TX), BB(COND),
	BB(CALL_STACK), BB(IND_JUMP), BB(CALL), BB(NO_FLAGS), BB(NO_CYCLES),
	BB(TYPE_SAVE), BB(HW_INDEX), BB(PRIV_SAVE), { NULL, 0 }
};
#undef BB

/* perf prints union members under both names. */
static const struct {
	const char *printed;
	enum attr_field field;
} union_names[] = {
	{ "{ sample_period, sample_freq }", ATTR_F_sample_period },
	{ "{ wakeup_events, wakeup_watermark }", ATTR_F_wakeup_events },
	{ "{ bp_addr, config1 }", ATTR_F_config1 },
	{ "{ bp_len, config2 }", ATTR_F_config2 },
};

static int parse_bits(const char *value, const struct bit_name *bits, uint64_t *out)
{
	g_auto(GStrv) parts = NULL;

	if (g_ascii_isdigit(value[0])) {
		char *end;

		errno = 0;
		*out = g_ascii_strtoull(value, &end, 0);
		if (errno == ERANGE)
			return -ERANGE;
		return end == value || (*end && !g_ascii_isspace(*end)) ? -EINVAL : 0;
	}
	*out = 0;
	parts = g_strsplit(value, "|", -1);
	for (int i = 0; parts[i]; i++) {
		const char *p = g_strstrip(parts[i]);
		int j;

		for (j = 0; bits[j].name; j++)
			if (strcmp(bits[j].name, p) == 0)
				break;
		if (!bits[j].name)
			return -EINVAL;
		*out |= bits[j].bit;
	}
	return 0;
}

static int parse_attr_line(const char *line, struct perf_event_attr *attr, unsigned int lineno)
{
	const char *p = line, *value;
	enum attr_field f = ATTR_FIELD_COUNT;
	g_autofree char *name = NULL;
	uint64_t v;

	while (*p == ' ')
		p++;
	if (*p == '{') {
		const char *close = strchr(p, '}');
		if (!close)
			return pc_fail(EINVAL, "perf -vv line %u: unterminated member name", lineno);
		name = g_strndup(p, close + 1 - p);
		value = close + 1;
		for (size_t i = 0; i < G_N_ELEMENTS(union_names); i++)
			if (strcmp(union_names[i].printed, name) == 0)
				f = union_names[i].field;
	} else {
		const char *end = p + strcspn(p, " \t");
		name = g_strndup(p, end - p);
		value = end;
		f = attr_field_from_name(name);
	}
	while (*value == ' ' || *value == '\t')
		value++;
	if (f == ATTR_FIELD_COUNT)
		return pc_fail(EINVAL, "perf -vv line %u: unknown attr member \"%s\"", lineno, name);

	int ret = 0;
	if (f == ATTR_F_sample_type)
		ret = parse_bits(value, sample_type_bits, &v);
	else if (f == ATTR_F_read_format)
		ret = parse_bits(value, read_format_bits, &v);
	else if (f == ATTR_F_branch_sample_type)
		ret = parse_bits(value, branch_bits, &v);
	else {
		char *end;
		/* Newer perf appends a symbolic name: "0 (PERF_TYPE_HARDWARE)".
		 * perf prints %PRIu64 or %#PRIx64; past 64 bits the value
		 * saturated, so it is an error, not UINT64_MAX. */
		errno = 0;
		if (value[0] == '-')
			v = (uint64_t)g_ascii_strtoll(value, &end, 0); /* attr_get sign-extends */
		else
			v = g_ascii_strtoull(value, &end, 0);
		if (errno == ERANGE)
			ret = -ERANGE;
		else if (end == value || (*end && !g_ascii_isspace(*end)))
			ret = -EINVAL;
	}
	if (ret == -ERANGE)
		return pc_fail(ERANGE, "perf -vv line %u: %s value \"%s\" does not fit", lineno,
			       name, value);
	if (ret < 0)
		return pc_fail(EINVAL, "perf -vv line %u: cannot parse %s value \"%s\"", lineno,
			       name, value);
	if (attr_set(attr, f, v) < 0)
		return pc_fail(ERANGE, "perf -vv line %u: %s value \"%s\" does not fit", lineno,
			       name, value);
	return 0;
}

int trace_parse_perf_verbose(const char *text, GPtrArray **calls)
{
	g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
	struct perf_event_attr attr;
	struct trace_call *open_call = NULL; /* awaiting "failed" or its result */
	bool in_block = false, have_attr = false;

	memset(&attr, 0, sizeof(attr));
	if (!*calls)
		*calls = g_ptr_array_new_with_free_func(g_free);
	for (unsigned int i = 0; lines[i]; i++) {
		const char *l = lines[i];
		unsigned int lineno = i + 1;
		int pid, cpu, group_fd, fd, e;
		unsigned long flags;
		int consumed = 0;

		if (strcmp(l, "perf_event_attr:") == 0) {
			memset(&attr, 0, sizeof(attr));
			in_block = have_attr = true;
			continue;
		}
		if (g_str_has_prefix(l, "----")) {
			in_block = false;
			continue;
		}
		if (in_block && l[0] == ' ') {
			int ret = parse_attr_line(l, &attr, lineno);
			if (ret < 0)
				return ret;
			continue;
		}
		in_block = false;
		if (sscanf(l, "sys_perf_event_open: pid %d cpu %d group_fd %d flags %li%n", &pid,
			   &cpu, &group_fd, (long *)&flags, &consumed) == 4) {
			if (!have_attr)
				return pc_fail(EINVAL, "perf -vv line %u: open without an attr block",
					       lineno);
			struct trace_call *c = g_new0(struct trace_call, 1);
			c->attr = attr;
			c->attr_size = attr.size;
			c->pid = pid;
			c->cpu = cpu;
			c->group_fd = group_fd;
			c->flags = flags;
			c->ret_fd = -1;
			g_ptr_array_add(*calls, c);
			open_call = c;
			if (sscanf(l + consumed, " = %d", &fd) == 1) {
				c->ret_fd = fd;
				open_call = NULL;
			}
			continue;
		}
		if (open_call && sscanf(l, "sys_perf_event_open failed, error %d", &e) == 1) {
			open_call->err = e < 0 ? -e : e;
			open_call = NULL;
			continue;
		}
	}
	return 0;
}

bool trace_call_equal(const struct trace_call *a, const struct trace_call *b)
{
	return attr_equal(&a->attr, &b->attr) && a->pid == b->pid && a->cpu == b->cpu &&
	       a->group_fd == b->group_fd && a->flags == b->flags && a->err == b->err &&
	       (a->err || a->ret_fd == b->ret_fd);
}

int trace_calls_match(const GPtrArray *traced, const GPtrArray *expected)
{
	guint t = 0;

	for (guint e = 0; e < expected->len; e++) {
		const struct trace_call *want = expected->pdata[e];

		while (t < traced->len && !trace_call_equal(traced->pdata[t], want))
			t++;
		if (t == traced->len) {
			g_autofree char *s = trace_call_to_string(want);
			return pc_fail(ENOENT, "call %u of %u not traced (in order): %s", e + 1,
				       expected->len, s);
		}
		t++;
	}
	return 0;
}
