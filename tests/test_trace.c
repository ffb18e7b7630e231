/* Tests for lib/trace: perf -vv parsing, JSON, the tracer on a child we
 * control, and the tracer against Debian's real perf (skipped without it). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "attr.h"
#include "log.h"
#include "outcome.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define PERF "/usr/bin/perf"

/* perf 6.1 `perf record -vv -e msr/tsc/ -a -- true` on a host without a
 * hardware PMU, cut to the interesting part, plus a stat block. */
static const char vv_fixture[] =
	"Using CPUID AuthenticAMD-26-2-1\n"
	"Attempting to add event pmu 'msr' with 'tsc,' that may result in non-fatal errors\n"
	"------------------------------------------------------------\n"
	"perf_event_attr:\n"
	"  type                             9\n"
	"  size                             128\n"
	"  { sample_period, sample_freq }   4000\n"
	"  sample_type                      IP|TID|TIME|CPU|PERIOD|IDENTIFIER\n"
	"  read_format                      ID|LOST\n"
	"  disabled                         1\n"
	"  inherit                          1\n"
	"  freq                             1\n"
	"  sample_id_all                    1\n"
	"  exclude_guest                    1\n"
	"------------------------------------------------------------\n"
	"sys_perf_event_open: pid -1  cpu 0  group_fd -1  flags 0x8\n"
	"sys_perf_event_open failed, error -22\n"
	"switching off PERF_FORMAT_LOST support\n"
	"------------------------------------------------------------\n"
	"perf_event_attr:\n"
	"  type                             9\n"
	"  size                             128\n"
	"  { sample_period, sample_freq }   4000\n"
	"  sample_type                      IP|TID|TIME|CPU|PERIOD|IDENTIFIER\n"
	"  read_format                      ID\n"
	"  disabled                         1\n"
	"  inherit                          1\n"
	"  freq                             1\n"
	"  sample_id_all                    1\n"
	"  exclude_guest                    1\n"
	"------------------------------------------------------------\n"
	"sys_perf_event_open: pid -1  cpu 0  group_fd -1  flags 0x8\n"
	"sys_perf_event_open failed, error -22\n"
	"switching off cloexec flag\n"
	"------------------------------------------------------------\n"
	"perf_event_attr:\n"
	"  type                             1\n"
	"  size                             128\n"
	"  config                           0x9\n"
	"  watermark                        1\n"
	"  sample_id_all                    1\n"
	"  bpf_event                        1\n"
	"  { wakeup_events, wakeup_watermark } 1\n"
	"------------------------------------------------------------\n"
	"sys_perf_event_open: pid -1  cpu 0  group_fd -1  flags 0 = 11\n"
	"sys_perf_event_open: pid -1  cpu 1  group_fd -1  flags 0 = 12\n"
	"mmap size 528384B\n";

static void test_parse_vv_fixture(void **state)
{
	g_autoptr(GPtrArray) calls = NULL;
	const struct trace_call *c;

	assert_int_equal(trace_parse_perf_verbose(vv_fixture, &calls), 0);
	assert_int_equal(calls->len, 4);

	c = calls->pdata[0];
	assert_int_equal(c->attr.type, 9);
	assert_int_equal(c->attr.size, 128);
	assert_int_equal(c->attr.sample_freq, 4000);
	assert_int_equal(c->attr.freq, 1);
	assert_int_equal(c->attr.sample_type,
			 PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER);
	assert_int_equal(c->attr.read_format, PERF_FORMAT_ID | PERF_FORMAT_LOST);
	assert_int_equal(c->attr.exclude_guest, 1);
	assert_int_equal(c->pid, -1);
	assert_int_equal(c->cpu, 0);
	assert_int_equal(c->group_fd, -1);
	assert_int_equal(c->flags, PERF_FLAG_FD_CLOEXEC);
	assert_int_equal(c->err, EINVAL);
	assert_int_equal(outcome_from_errno(c->err), OUTCOME_EINVAL);

	c = calls->pdata[1];
	assert_int_equal(c->attr.read_format, PERF_FORMAT_ID);
	assert_int_equal(c->err, EINVAL);

	c = calls->pdata[2];
	assert_int_equal(c->attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(c->attr.config, PERF_COUNT_SW_DUMMY);
	assert_int_equal(c->attr.wakeup_events, 1);
	assert_int_equal(c->attr.watermark, 1);
	assert_int_equal(c->flags, 0);
	assert_int_equal(c->err, 0);
	assert_int_equal(c->ret_fd, 11);
	c = calls->pdata[3];
	assert_int_equal(c->cpu, 1);
	assert_int_equal(c->ret_fd, 12);
}

static void test_parse_vv_newer_perf_names(void **state)
{
	/* Later perf prints symbolic names after the number. */
	const char *text = "perf_event_attr:\n"
			   "  type                             0 (PERF_TYPE_HARDWARE)\n"
			   "  config                           0x1 (PERF_COUNT_HW_INSTRUCTIONS)\n"
			   "  { bp_addr, config1 }             0x3\n"
			   "  branch_sample_type               ANY|USER\n"
			   "  clockid                          -1\n"
			   "------------------------------------------------------------\n"
			   "sys_perf_event_open: pid 0  cpu -1  group_fd -1  flags 0x8 = 3\n";
	g_autoptr(GPtrArray) calls = NULL;
	const struct trace_call *c;

	assert_int_equal(trace_parse_perf_verbose(text, &calls), 0);
	assert_int_equal(calls->len, 1);
	c = calls->pdata[0];
	assert_int_equal(c->attr.type, 0);
	assert_int_equal(c->attr.config, 1);
	assert_int_equal(c->attr.config1, 3);
	assert_int_equal(c->attr.branch_sample_type,
			 PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER);
	assert_int_equal(c->attr.clockid, -1);
	assert_int_equal(c->pid, 0);
	assert_int_equal(c->cpu, -1);
	assert_int_equal(c->ret_fd, 3);
}

static void test_parse_vv_rejects_unknown(void **state)
{
	const char *text = "perf_event_attr:\n  frobnicate   1\n";
	const char *bits = "perf_event_attr:\n  sample_type   IP|BOGUS\n";
	g_autoptr(GPtrArray) calls = NULL;

	assert_int_equal(trace_parse_perf_verbose(text, &calls), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "line 2"));
	assert_non_null(strstr(pc_errmsg(), "frobnicate"));
	assert_int_equal(trace_parse_perf_verbose(bits, &calls), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "BOGUS"));
	/* Past 64 bits g_ascii_strtoull saturated to UINT64_MAX silently. */
	assert_int_equal(trace_parse_perf_verbose("perf_event_attr:\n  config   18446744073709551616\n",
						  &calls), -ERANGE);
	assert_non_null(strstr(pc_errmsg(),
			       "line 2: config value \"18446744073709551616\" does not fit"));
	assert_int_equal(trace_parse_perf_verbose("perf_event_attr:\n  sample_type   0x10000000000000000\n",
						  &calls), -ERANGE);
	assert_int_equal(trace_parse_perf_verbose("perf_event_attr:\n  clockid   -9223372036854775809\n",
						  &calls), -ERANGE);
	/* A number glued to garbage is not a number. */
	assert_int_equal(trace_parse_perf_verbose("perf_event_attr:\n  config   12abc\n", &calls),
			 -EINVAL);
	assert_int_equal(trace_parse_perf_verbose("perf_event_attr:\n  sample_type   0x5zz\n", &calls),
			 -EINVAL);
}

static struct trace_call *call_new(uint32_t type, uint64_t config, int cpu, int fd, int err)
{
	struct trace_call *c = g_new0(struct trace_call, 1);

	c->attr.type = type;
	c->attr.config = config;
	c->attr.size = sizeof(c->attr);
	c->pid = -1;
	c->cpu = cpu;
	c->group_fd = -1;
	c->ret_fd = err ? -1 : fd;
	c->err = err;
	return c;
}

static void test_calls_match_in_order(void **state)
{
	g_autoptr(GPtrArray) traced = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) want = g_ptr_array_new_with_free_func(g_free);

	/* A feature probe perf does not print, then the two tries. */
	g_ptr_array_add(traced, call_new(1, 0, 0, 3, 0));
	g_ptr_array_add(traced, call_new(0, 0, 0, -1, ENOENT));
	g_ptr_array_add(traced, call_new(1, 0, 0, 5, 0));
	g_ptr_array_add(want, call_new(0, 0, 0, -1, ENOENT));
	g_ptr_array_add(want, call_new(1, 0, 0, 5, 0));
	assert_int_equal(trace_calls_match(traced, want), 0);

	/* Out of order is a mismatch. */
	g_ptr_array_add(want, call_new(0, 0, 0, -1, ENOENT));
	assert_int_equal(trace_calls_match(traced, want), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), "call 3 of 3"));
}

/* The bytes at a traced call's attr pointer are decoded as the kernel reads
 * them: a short size keeps only that many bytes (what follows is not the
 * attr), size 0 means VER0, and a size past ours keeps what we know. */
static void test_attr_bytes_decode(void **state)
{
	struct perf_event_attr a;
	unsigned char bytes[sizeof(a) + 64];
	struct trace_call call;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = PERF_ATTR_SIZE_VER0;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 4000;
	a.exclude_kernel = 1;
	a.config2 = 0x77; /* past VER0: not passed */
	memset(bytes, 0xff, sizeof(bytes));
	memcpy(bytes, &a, sizeof(a));
	memset(&call, 0, sizeof(call));
	trace_call_set_attr_bytes(&call, bytes, sizeof(bytes));
	assert_int_equal(call.attr_size, PERF_ATTR_SIZE_VER0);
	assert_int_equal(call.attr.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(call.attr.exclude_kernel, 1);
	assert_int_equal(call.attr.config2, 0);

	a.size = 0;
	memcpy(bytes, &a, sizeof(a));
	trace_call_set_attr_bytes(&call, bytes, sizeof(bytes));
	assert_int_equal(call.attr_size, 0);
	assert_int_equal(call.attr.sample_period, 4000);
	assert_int_equal(call.attr.config2, 0);

	a.size = 4000;
	memcpy(bytes, &a, sizeof(a));
	trace_call_set_attr_bytes(&call, bytes, sizeof(bytes));
	assert_int_equal(call.attr_size, 4000);
	assert_int_equal(call.attr.config2, 0x77);

	/* fewer bytes than the header: size unknown, nothing past them */
	trace_call_set_attr_bytes(&call, bytes, 4);
	assert_int_equal(call.attr_size, 0);
	assert_int_equal(call.attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(call.attr.config, 0);
}

static void test_call_json_and_text(void **state)
{
	g_autofree struct trace_call *ok = call_new(1, 0, 1, 7, 0);
	g_autofree struct trace_call *bad = call_new(0, 0, 0, -1, EOPNOTSUPP);
	json_t *j = trace_call_to_json(ok);
	g_autofree char *s_ok = trace_call_to_string(ok);
	g_autofree char *s_bad = trace_call_to_string(bad);
	struct perf_event_attr back;

	assert_string_equal(json_string_value(json_object_get(j, "outcome")), "OK");
	assert_int_equal(json_integer_value(json_object_get(j, "fd")), 7);
	assert_int_equal(json_integer_value(json_object_get(j, "cpu")), 1);
	assert_int_equal(attr_from_json(json_object_get(j, "attr"), &back), 0);
	assert_true(attr_equal(&back, &ok->attr));
	json_decref(j);

	j = trace_call_to_json(bad);
	assert_string_equal(json_string_value(json_object_get(j, "outcome")), "EOPNOTSUPP");
	assert_int_equal(json_integer_value(json_object_get(j, "errno")), EOPNOTSUPP);
	assert_null(json_object_get(j, "fd"));
	json_decref(j);

	assert_non_null(strstr(s_ok, "cpu 1"));
	assert_non_null(strstr(s_ok, "type=1"));
	assert_non_null(strstr(s_ok, "-> fd 7"));
	assert_non_null(strstr(s_bad, "-> EOPNOTSUPP"));
}

/* ---- the tracer on a child we control ---------------------------------- */

static char self_exe[4096];

/* The attrs the child passes, in order: task-clock:u; the same with a size
 * the kernel refuses as too small (E2BIG) and one it refuses as too large
 * (1 GiB, E2BIG: the tracer must not try to read that much); cpu-clock:u
 * from a forked child. */
static struct perf_event_attr child_attr(int n)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = n == 1 ? 8 : n == 2 ? 1u << 30 : sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = n == 3 ? PERF_COUNT_SW_CPU_CLOCK : PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	a.disabled = 1;
	return a;
}

/* Run as `test_trace --child-open`: opens events we know, from the process
 * and from a forked child, writes 30 stderr lines and exits 3. */
static int child_open_main(void)
{
	struct perf_event_attr a = child_attr(0);
	long page = sysconf(_SC_PAGESIZE);
	/* two pages: a bounded reader of the 1 GiB claim stays inside */
	void *big = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd;

	if (big == MAP_FAILED)
		_exit(4);
	fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0)
		close(fd);
	a = child_attr(1);
	syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
	a = child_attr(2);
	memcpy(big, &a, sizeof(a));
	syscall(__NR_perf_event_open, big, 0, -1, -1, 0);
	pid_t p = fork();
	if (p == 0) {
		a = child_attr(3);
		fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
		_exit(fd >= 0 ? 0 : 1);
	}
	waitpid(p, NULL, 0);
	for (int i = 1; i <= 30; i++)
		fprintf(stderr, "line %d\n", i);
	/* _exit: LeakSanitizer's exit check cannot run under ptrace. */
	_exit(3);
}

/* The whole attr, byte for byte (both sides zero-filled past what was
 * passed), not only the members a test happens to name. */
static void assert_attr_is(const struct perf_event_attr *got, const struct perf_event_attr *want,
			   const char *what)
{
	if (memcmp(got, want, sizeof(*got)) != 0) {
		g_autofree char *g = attr_to_string(got);
		g_autofree char *w = attr_to_string(want);

		fail_msg("%s: attr %s, want %s", what, g, w);
	}
}

static void run_child_open(enum trace_method method)
{
	char *argv[] = { self_exe, "--child-open", NULL };
	struct trace_options opts = { .method = method, .stderr_passthrough_fd = -1 };
	g_autoptr(trace_result) res = NULL;
	const struct trace_call *c;

	assert_int_equal(trace_run(argv, &opts, &res), 0);
	assert_int_equal(res->exit_code, 3);
	assert_int_equal(res->term_signal, 0);
	assert_int_equal(res->calls->len, 4);

	struct perf_event_attr want0 = child_attr(0), want1, want2 = child_attr(2);
	struct perf_event_attr want3 = child_attr(3);

	/* Only the 8 bytes passed are read: type and size. */
	memset(&want1, 0, sizeof(want1));
	memcpy(&want1, &(struct perf_event_attr){ .type = PERF_TYPE_SOFTWARE, .size = 8 }, 8);

	c = res->calls->pdata[0];
	assert_attr_is(&c->attr, &want0, "call 1");
	assert_int_equal(c->attr_size, sizeof(struct perf_event_attr));
	assert_int_equal(c->pid, 0);
	assert_int_equal(c->cpu, -1);
	assert_int_equal(c->flags, PERF_FLAG_FD_CLOEXEC);
	assert_true(c->ret_fd >= 0);
	assert_int_equal(c->err, 0);

	c = res->calls->pdata[1];
	assert_int_equal(c->attr_size, 8);
	assert_int_equal(c->err, E2BIG);
	assert_attr_is(&c->attr, &want1, "call 2");

	/* A 1 GiB claim: the kernel refuses it, the tracer reads its bounded
	 * share and still has the attr. */
	c = res->calls->pdata[2];
	assert_int_equal(c->attr_size, 1u << 30);
	assert_int_equal(c->attr_read_err, 0);
	assert_attr_is(&c->attr, &want2, "call 3");
	assert_int_equal(c->err, E2BIG);

	c = res->calls->pdata[3];
	assert_attr_is(&c->attr, &want3, "call 4");
	assert_int_equal(c->err, 0);
	assert_int_not_equal(c->tid, ((struct trace_call *)res->calls->pdata[0])->tid);

	assert_int_equal(res->stderr_lines, 30);
	assert_int_equal(res->stderr_tail->len, TRACE_STDERR_TAIL_DEFAULT);
	assert_string_equal(res->stderr_tail->pdata[0], "line 11");
	assert_string_equal(res->stderr_tail->pdata[res->stderr_tail->len - 1], "line 30");
}

/* The tracer's process_vm_readv() (lib/ calls the program's own): a test
 * can make it fail ENOSYS, as where it is compiled out, so the tracer reads
 * word by word with PTRACE_PEEKDATA. */
static bool vm_readv_enosys;

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nlocal,
			 const struct iovec *remote, unsigned long nremote, unsigned long flags)
{
	if (vm_readv_enosys) {
		errno = ENOSYS;
		return -1;
	}
	return syscall(SYS_process_vm_readv, pid, local, nlocal, remote, nremote, flags);
}

/* Run as `test_trace --child-ones`: one open whose config is all ones. */
static int child_ones_main(void)
{
	struct perf_event_attr a = child_attr(0);

	a.config = ~0ULL;
	a.sample_period = ~0ULL >> 1;
	syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
	_exit(0);
}

/* Word by word, a word that is all ones is data like any other (PEEKDATA
 * returns -1 for it with errno 0, ptrace(2)): the whole attr is read. */
static void test_run_peekdata(void **state)
{
	char *argv[] = { self_exe, "--child-ones", NULL };
	struct trace_options opts = { .method = TRACE_METHOD_SECCOMP, .stderr_passthrough_fd = -1 };
	g_autoptr(trace_result) res = NULL;
	struct perf_event_attr want = child_attr(0);
	const struct trace_call *c;
	int r;

	want.config = ~0ULL;
	want.sample_period = ~0ULL >> 1;
	vm_readv_enosys = true;
	r = trace_run(argv, &opts, &res);
	vm_readv_enosys = false;
	assert_int_equal(r, 0);
	assert_int_equal(res->calls->len, 1);
	c = res->calls->pdata[0];
	assert_int_equal(c->attr_read_err, 0);
	assert_attr_is(&c->attr, &want, "peekdata");
}

/* Two calls are the same call only with the same pid too (perf -a opens
 * pid -1, a per-task perf 0). */
static void test_call_equal_pid(void **state)
{
	struct trace_call a = { .pid = -1, .cpu = 0, .group_fd = -1, .ret_fd = 3 }, b;

	a.attr = child_attr(0);
	b = a;
	assert_true(trace_call_equal(&a, &b));
	b.pid = 0;
	assert_false(trace_call_equal(&a, &b));
	b = a;
	b.cpu = 1;
	assert_false(trace_call_equal(&a, &b));
	b = a;
	b.flags = PERF_FLAG_FD_CLOEXEC;
	assert_false(trace_call_equal(&a, &b));
}

static void test_run_seccomp(void **state)
{
	run_child_open(TRACE_METHOD_SECCOMP);
}

static void test_run_syscall(void **state)
{
	run_child_open(TRACE_METHOD_SYSCALL);
}

static void test_run_missing_command(void **state)
{
	char *argv[] = { "/nonexistent/perf", "stat", NULL };
	g_autoptr(trace_result) res = NULL;

	assert_int_equal(trace_run(argv, NULL, &res), -ENOENT);
	assert_null(res);
	assert_non_null(strstr(pc_errmsg(), "/nonexistent/perf"));
}

/* A method that is none of the enum's (TRACE_METHOD_COUNT is the
 * sentinel) is refused before anything runs. */
static void test_run_unknown_method(void **state)
{
	char *argv[] = { "/bin/true", NULL };
	struct trace_options opts = { .method = TRACE_METHOD_COUNT, .stderr_passthrough_fd = -1 };
	g_autoptr(trace_result) res = NULL;

	assert_int_equal(trace_run(argv, &opts, &res), -EINVAL);
	assert_null(res);
	assert_non_null(strstr(pc_errmsg(), "unknown method"));
}

static void test_result_json(void **state)
{
	char *argv[] = { self_exe, "--child-open", NULL };
	struct trace_options opts = { .stderr_passthrough_fd = -1 };
	g_autoptr(trace_result) res = NULL;
	json_t *j;

	assert_int_equal(trace_run(argv, &opts, &res), 0);
	j = trace_result_to_json(res, argv);
	assert_int_equal(json_array_size(json_object_get(j, "calls")), 4);
	assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 3);
	assert_int_equal(json_array_size(json_object_get(j, "stderr_tail")), 20);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "argv"), 1)),
			    "--child-open");
	json_decref(j);
}

/* ---- against Debian's perf --------------------------------------------- */

/* Traces `perf ARGS` with -vv, its stderr into a file, and checks that every
 * try perf reports is in the capture, in order, with the same attr. */
static GPtrArray *trace_perf_vv(char **argv, struct trace_result **res_out)
{
	char path[] = "/tmp/pmucanary-test-trace-XXXXXX";
	int fd = mkstemp(path);
	struct trace_options opts = { .stderr_passthrough_fd = fd, .method = TRACE_METHOD_SECCOMP };
	g_autofree char *text = NULL;
	GPtrArray *vv = NULL;

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(trace_run(argv, &opts, res_out), 0);
	off_t len = lseek(fd, 0, SEEK_END);
	text = g_malloc0(len + 1);
	assert_int_equal(pread(fd, text, len, 0), len);
	close(fd);
	if (trace_parse_perf_verbose(text, &vv) < 0)
		fail_msg("parsing perf -vv: %s", pc_errmsg());
	assert_true(vv->len > 0);
	if (trace_calls_match((*res_out)->calls, vv) < 0)
		fail_msg("%s", pc_errmsg());
	return vv;
}

/* The expectations below are Debian 12's perf 6.1 (`perf -vv` read by
 * hand on a host without a hardware PMU); another release passes other
 * attrs, so it skips. */
static void need_perf61(void)
{
	g_autofree char *out = NULL;
	char *argv[] = { PERF, "--version", NULL };

	if (access(PERF, X_OK) != 0)
		test_skip("%s missing", PERF);
	assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
				 &out, NULL, NULL, NULL));
	if (!g_str_has_prefix(out, "perf version 6.1."))
		test_skip("%s is %s, these expectations are Debian perf 6.1's", PERF,
			  g_strstrip(out));
}

static bool hw_pmu_present(void)
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
}

/* The msr PMU's type, from sysfs; skips without one. */
static uint32_t msr_type(void)
{
	g_autofree char *text = NULL;

	if (!g_file_get_contents("/sys/bus/event_source/devices/msr/type", &text, NULL, NULL))
		test_skip("no msr PMU");
	return (uint32_t)atoi(text);
}

/* perf 6.1 `perf stat -a -e EVENT`: counting, every CPU, exclude_guest by
 * default (event_attr_init()), size 128 (PERF_ATTR_SIZE_VER7). */
static struct perf_event_attr perf61_stat(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.size = 128;
	a.config = config;
	a.sample_type = PERF_SAMPLE_IDENTIFIER;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.disabled = 1;
	a.inherit = 1;
	a.exclude_guest = 1;
	return a;
}

/* perf 6.1 `perf record -a -e EVENT`: 4000 Hz, what -a samples. */
static struct perf_event_attr perf61_record(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.size = 128;
	a.config = config;
	a.sample_freq = 4000;
	a.freq = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER;
	a.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	a.disabled = 1;
	a.inherit = 1;
	a.sample_id_all = 1;
	a.exclude_guest = 1;
	return a;
}

/* perf record's dummy tracking event on every CPU (perf 6.1, -a). */
static struct perf_event_attr perf61_tracking(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = 128;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			PERF_SAMPLE_IDENTIFIER;
	a.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	a.inherit = 1;
	a.mmap = 1;
	a.comm = 1;
	a.task = 1;
	a.sample_id_all = 1;
	a.mmap2 = 1;
	a.comm_exec = 1;
	a.ksymbol = 1;
	a.bpf_event = 1;
	return a;
}

/* One perf_event_open as the test expects it. */
struct want_call {
	struct perf_event_attr attr;
	int cpu;
	unsigned long flags;
	int err;
};

static void want_add(GArray *w, const struct perf_event_attr *attr, int cpu,
		     unsigned long flags, int err)
{
	struct want_call c = { *attr, cpu, flags, err };

	g_array_append_val(w, c);
}

/* The same attr opened OK on every online CPU. */
static void want_every_cpu(GArray *w, const struct perf_event_attr *attr, unsigned long flags)
{
	g_autoptr(GArray) cpus = test_online_cpus();

	for (guint i = 0; i < cpus->len; i++)
		want_add(w, attr, g_array_index(cpus, int, i), flags, 0);
}

static bool call_is(const struct trace_call *c, const struct want_call *w)
{
	return !memcmp(&c->attr, &w->attr, sizeof(c->attr)) && c->pid == -1 &&
	       c->cpu == w->cpu && c->group_fd == -1 && c->flags == w->flags && c->err == w->err;
}

/* The first w->len calls perf -vv printed are the expected ones, and the
 * tracer saw each of them, in order (perf's unprinted feature probes in
 * between). Both sides are compared with the hand-written expectation,
 * not with each other. */
static void expect_calls(const GPtrArray *vv, const struct trace_result *res, const GArray *w)
{
	guint t = 0;

	if (vv->len < w->len)
		fail_msg("perf -vv printed %u calls, want at least %u", vv->len, w->len);
	for (guint i = 0; i < w->len; i++) {
		const struct want_call *want = &g_array_index(w, struct want_call, i);
		const struct trace_call *c = vv->pdata[i];
		g_autofree char *what = g_strdup_printf("perf -vv call %u", i + 1);

		assert_attr_is(&c->attr, &want->attr, what);
		assert_int_equal(c->cpu, want->cpu);
		assert_int_equal(c->flags, want->flags);
		assert_int_equal(c->err, want->err);
		while (t < res->calls->len && !call_is(res->calls->pdata[t], want))
			t++;
		if (t == res->calls->len) {
			g_autofree char *a = attr_to_string(&want->attr);

			fail_msg("expected call %u not traced (in order): cpu %d flags %#lx err %d %s",
				 i + 1, want->cpu, want->flags, want->err, a);
		}
		t++;
	}
}

static void test_perf_stat_cpu_clock_u(void **state)
{
	char *argv[] = { PERF, "stat", "-vv", "-e", "cpu-clock:u", "-a", "--", "true", NULL };
	g_autoptr(trace_result) res = NULL;
	g_autoptr(GArray) w = g_array_new(FALSE, FALSE, sizeof(struct want_call));
	struct perf_event_attr a = perf61_stat(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);

	need_perf61();
	g_autoptr(GPtrArray) vv = trace_perf_vv(argv, &res);

	assert_int_equal(res->exit_code, 0);
	/* u: exclude_kernel and exclude_hv; -a: one open per online CPU */
	a.exclude_kernel = a.exclude_hv = 1;
	want_every_cpu(w, &a, PERF_FLAG_FD_CLOEXEC);
	expect_calls(vv, res, w);
	assert_int_equal(vv->len, w->len);
}

static void test_perf_record_cpu_clock_u(void **state)
{
	g_autofree char *data = g_strdup_printf("/tmp/pmucanary-test-trace-%d.data", getpid());
	char *argv[] = { PERF, "record", "-vv", "-e", "cpu-clock:u", "-a", "-o", data,
			 "--", "true", NULL };
	g_autoptr(trace_result) res = NULL;
	g_autoptr(GArray) w = g_array_new(FALSE, FALSE, sizeof(struct want_call));
	struct perf_event_attr a = perf61_record(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	struct perf_event_attr track = perf61_tracking();

	need_perf61();
	g_autoptr(GPtrArray) vv = trace_perf_vv(argv, &res);

	unlink(data);
	assert_int_equal(res->exit_code, 0);
	a.exclude_kernel = a.exclude_hv = 1;
	want_every_cpu(w, &a, PERF_FLAG_FD_CLOEXEC);
	want_every_cpu(w, &track, PERF_FLAG_FD_CLOEXEC);
	expect_calls(vv, res, w);
}

static void test_perf_record_cycles_pp(void **state)
{
	g_autofree char *data = g_strdup_printf("/tmp/pmucanary-test-trace-%d.data", getpid());
	char *argv[] = { PERF, "record", "-vv", "-e", "cycles:pp", "-a", "-o", data,
			 "--", "true", NULL };
	g_autoptr(trace_result) res = NULL;
	g_autoptr(GArray) w = g_array_new(FALSE, FALSE, sizeof(struct want_call));
	struct perf_event_attr a = perf61_record(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);

	need_perf61();
	g_autoptr(GPtrArray) vv = trace_perf_vv(argv, &res);

	unlink(data);
	/* pp: precise_ip 2 (exclude_guest stays, the default) */
	a.precise_ip = 2;
	if (hw_pmu_present()) {
		/* what the kernel says depends on the PMU: the attr only */
		assert_attr_is(&((struct trace_call *)vv->pdata[0])->attr, &a, "perf -vv call 1");
		return;
	}
	/* No hardware PMU: ENOENT, then perf's fallback to cpu-clock, which
	 * keeps every other member, precise_ip included. */
	want_add(w, &a, 0, PERF_FLAG_FD_CLOEXEC, ENOENT);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	want_every_cpu(w, &a, PERF_FLAG_FD_CLOEXEC);
	expect_calls(vv, res, w);
	assert_int_equal(res->exit_code, 0);
}

static void test_perf_stat_cycles_pp(void **state)
{
	char *argv[] = { PERF, "stat", "-vv", "-e", "cycles:pp", "-a", "--", "true", NULL };
	g_autoptr(trace_result) res = NULL;
	g_autoptr(GArray) w = g_array_new(FALSE, FALSE, sizeof(struct want_call));
	struct perf_event_attr a = perf61_stat(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);

	need_perf61();
	g_autoptr(GPtrArray) vv = trace_perf_vv(argv, &res);

	a.precise_ip = 2;
	if (hw_pmu_present()) {
		assert_attr_is(&((struct trace_call *)vv->pdata[0])->attr, &a, "perf -vv call 1");
		return;
	}
	/* perf stat has no cycles fallback: <not supported> after one try */
	want_add(w, &a, 0, PERF_FLAG_FD_CLOEXEC, ENOENT);
	expect_calls(vv, res, w);
	assert_int_equal(vv->len, 1);
}

static void test_perf_record_msr_tsc(void **state)
{
	g_autofree char *data = g_strdup_printf("/tmp/pmucanary-test-trace-%d.data", getpid());
	char *argv[] = { PERF, "record", "-vv", "-e", "msr/tsc/", "-a", "-o", data,
			 "--", "true", NULL };
	g_autoptr(trace_result) res = NULL;
	g_autoptr(GArray) w = g_array_new(FALSE, FALSE, sizeof(struct want_call));
	struct perf_event_attr a;

	need_perf61();
	/* msr/tsc/ is event=0x00 (msr/events/tsc), config 0 */
	a = perf61_record(msr_type(), 0);
	g_autoptr(GPtrArray) vv = trace_perf_vv(argv, &res);

	unlink(data);
	/* msr events cannot sample: every try fails with EINVAL, each with
	 * one more "missing feature" switched off, and perf gives up. */
	want_add(w, &a, 0, PERF_FLAG_FD_CLOEXEC, EINVAL);
	a.read_format = PERF_FORMAT_ID;                 /* PERF_FORMAT_LOST */
	want_add(w, &a, 0, PERF_FLAG_FD_CLOEXEC, EINVAL);
	want_add(w, &a, 0, 0, EINVAL);                  /* cloexec */
	a.exclude_guest = 0;                            /* exclude_guest/host */
	want_add(w, &a, 0, 0, EINVAL);
	a.sample_id_all = 0;                            /* sample_id_all */
	want_add(w, &a, 0, 0, EINVAL);
	expect_calls(vv, res, w);
	assert_int_equal(vv->len, w->len);
	assert_int_not_equal(res->exit_code, 0);
	assert_true(res->stderr_tail->len > 0);
}

static void test_perf_stat_msr_tsc(void **state)
{
	char *argv[] = { PERF, "stat", "-vv", "-e", "msr/tsc/", "-a", "--", "true", NULL };
	g_autoptr(trace_result) res = NULL;
	g_autoptr(GArray) w = g_array_new(FALSE, FALSE, sizeof(struct want_call));
	struct perf_event_attr a;

	need_perf61();
	a = perf61_stat(msr_type(), 0);
	g_autoptr(GPtrArray) vv = trace_perf_vv(argv, &res);

	/* msr refuses exclude bits: cloexec off, then exclude_guest off, and
	 * the counter opens on every CPU. */
	want_add(w, &a, 0, PERF_FLAG_FD_CLOEXEC, EINVAL);
	want_add(w, &a, 0, 0, EINVAL);
	a.exclude_guest = 0;
	want_every_cpu(w, &a, 0);
	expect_calls(vv, res, w);
	assert_int_equal(vv->len, w->len);
	assert_int_equal(res->exit_code, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--child-open") == 0)
		return child_open_main();
	if (argc > 1 && strcmp(argv[1], "--child-ones") == 0)
		return child_ones_main();
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n > 0)
		self_exe[n] = '\0';

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_vv_fixture),
		cmocka_unit_test(test_parse_vv_newer_perf_names),
		cmocka_unit_test(test_parse_vv_rejects_unknown),
		cmocka_unit_test(test_calls_match_in_order),
		cmocka_unit_test(test_attr_bytes_decode),
		cmocka_unit_test(test_call_json_and_text),
		cmocka_unit_test(test_run_seccomp),
		cmocka_unit_test(test_run_syscall),
		cmocka_unit_test(test_run_peekdata),
		cmocka_unit_test(test_call_equal_pid),
		cmocka_unit_test(test_run_missing_command),
		cmocka_unit_test(test_run_unknown_method),
		cmocka_unit_test(test_result_json),
		cmocka_unit_test(test_perf_stat_cpu_clock_u),
		cmocka_unit_test(test_perf_stat_cycles_pp),
		cmocka_unit_test(test_perf_record_cpu_clock_u),
		cmocka_unit_test(test_perf_record_cycles_pp),
		cmocka_unit_test(test_perf_record_msr_tsc),
		cmocka_unit_test(test_perf_stat_msr_tsc),
	};
	return test_run_group(tests, NULL, NULL);
}
