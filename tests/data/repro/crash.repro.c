/* pmucanary reproducer: GUEST_CRASH with cycles:pp (perf-3.6 encoding) on 3.6.0-pebs
 *
 * Run 20261201T000000Z-abcdef, outcome GUEST_CRASH 3/3. See README.txt.
 *
 *   cc -Wall -o repro repro.c && ./repro [DWELL_MS]     (as root)
 *
 * Exit 0: the kernel did what the run recorded (the event opened on every CPU),
 * 1: it did not, 2: could not run. Needs only <linux/perf_event.h> and libc. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static const char cell_name[] = "perf-3.6:cycles:pp";
static const char expect_name[] = "GUEST_CRASH";
/* 1: checked as the open phase (open and close, the errno); 0: armed as
 * the load phase (the harm, if any, shows in the guests or the host log). */
#define ERRNO_CELL 0
#define EXPECT_ERRNO 0
/* 1: the run opened per task (pid 0, cpu -1), not system-wide. */
#define PER_TASK 0
#define DWELL_MS 1500
#define RING_PAGES 4

static const struct {
	int err;
	const char *name;
} errno_names[] = {
	{ EOPNOTSUPP, "EOPNOTSUPP" },
	{ EINVAL, "EINVAL" },
	{ ENOENT, "ENOENT" },
	{ EACCES, "EACCES" },
	{ EPERM, "EPERM" },
	{ ENODEV, "ENODEV" },
	{ EBUSY, "EBUSY" },
	{ E2BIG, "E2BIG" },
	{ EFAULT, "EFAULT" },
	{ ENOSPC, "ENOSPC" },
	{ EOVERFLOW, "EOVERFLOW" },
	{ ENOMEM, "ENOMEM" },
	{ ESRCH, "ESRCH" },
	{ ENOSYS, "ENOSYS" },
	{ EIO, "EIO" },
	{ EAGAIN, "EAGAIN" },
	{ EMFILE, "EMFILE" },
	{ EBADF, "EBADF" },
};

/* The cell's final attr, the one its outcome belongs to. The union pads
 * it with zeros: the kernel reads .size bytes, which may be more than
 * this header's struct (an attr from a newer perf). */
static union {
	struct perf_event_attr attr;
	unsigned char bytes[65536];
} u = { .attr = {
	.type = 0,
	.size = 64,
	.sample_freq = 4000,
	.sample_type = 0x107,
	.disabled = 1,
	.inherit = 1,
	.freq = 1,
	.precise_ip = 2,
} };

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			    int group_fd, unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static const char *errno_name(int err)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	return "an errno";
}

/* The online CPUs, from the kernel's list ("0-3,5"). */
static int online_cpus(int **out)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int n = 0, cap = 0, *cpus = NULL, c;
	long a, b;

	if (!f)
		return -1;
	while (fscanf(f, "%ld", &a) == 1) {
		b = a;
		c = fgetc(f);
		if (c == '-') {
			if (fscanf(f, "%ld", &b) != 1)
				break;
			c = fgetc(f);
		}
		for (long i = a; i <= b && i < 65536; i++) {
			if (n == cap) {
				int *more = realloc(cpus, (cap = cap ? 2 * cap : 64) * sizeof(*cpus));

				if (!more) {
					free(cpus);
					fclose(f);
					return -1;
				}
				cpus = more;
			}
			cpus[n++] = (int)i;
		}
		if (c != ',')
			break;
	}
	fclose(f);
	*out = cpus;
	return n;
}

/* The open phase: open and close on each CPU in turn; perf record -a
 * fails when any CPU fails, so the first failure is the verdict. */
static int check_errno(const int *cpus, int n)
{
	for (int i = 0; i < n; i++) {
		int fd = (int)perf_event_open(&u.attr, PER_TASK ? 0 : -1, cpus[i], -1,
					     PERF_FLAG_FD_CLOEXEC);
		int err = errno;

		if (fd >= 0) {
			close(fd);
			continue;
		}
		if (err == EXPECT_ERRNO || (EXPECT_ERRNO == -1 && !strcmp(errno_name(err), "an errno"))) {
			printf("repro: %s: perf_event_open on cpu %d: %s (%s), as recorded: reproduced\n",
			       cell_name, cpus[i], errno_name(err), strerror(err));
			return 0;
		}
		printf("repro: %s: perf_event_open on cpu %d: %s (%s), the run recorded %s: "
		       "not reproduced\n", cell_name, cpus[i], errno_name(err), strerror(err),
		       expect_name);
		return 1;
	}
	printf("repro: %s: opened on every CPU (%d), the run recorded %s: not reproduced\n",
	       cell_name, n, expect_name);
	return 1;
}

struct ring {
	int fd;
	void *base;
};

static size_t page_size, data_size;
static unsigned long long samples, lost, throttles;

static void ring_read(const unsigned char *data, unsigned long long off, void *dst, size_t len)
{
	size_t start = off % data_size, first = len < data_size - start ? len : data_size - start;

	memcpy(dst, data + start, first);
	if (first < len)
		memcpy((unsigned char *)dst + first, data, len - first);
}

/* Reads every complete record between data_tail and data_head, as
 * perf record does, so that the ring never stays full. */
static void ring_drain(struct ring *r)
{
	struct perf_event_mmap_page *pg = r->base;
	const unsigned char *data = (const unsigned char *)r->base + page_size;
	unsigned long long head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	unsigned long long tail = pg->data_tail;

	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;

		ring_read(data, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			samples++;
		} else if (h.type == PERF_RECORD_LOST) {
			unsigned long long n;

			ring_read(data, tail + sizeof(h) + 8, &n, sizeof(n));
			lost += n;
		} else if (h.type == PERF_RECORD_THROTTLE) {
			throttles++;
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The load phase: open disabled with a ring buffer on every CPU, enable
 * all together, drain while it dwells, disable, drain, close. */
static int arm(const int *cpus, int n, long long dwell_ms)
{
	struct ring *rings = calloc((size_t)n, sizeof(*rings));
	struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
	int armed = 0, rc = 0;

	if (!rings || !pfd) {
		fprintf(stderr, "repro: out of memory\n");
		return 2;
	}
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	data_size = page_size * RING_PAGES;
	u.attr.disabled = 1;
	for (; armed < n; armed++) {
		struct ring *r = &rings[armed];
		int err;

		r->fd = (int)perf_event_open(&u.attr, PER_TASK ? 0 : -1, cpus[armed], -1,
					     PERF_FLAG_FD_CLOEXEC);
		err = errno;
		if (r->fd < 0) {
			printf("repro: %s: perf_event_open on cpu %d: %s (%s), the run recorded %s "
			       "(it opened): not reproduced\n", cell_name, cpus[armed],
			       errno_name(err), strerror(err), expect_name);
			rc = 1;
			break;
		}
		r->base = mmap(NULL, page_size + data_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			       r->fd, 0);
		if (r->base == MAP_FAILED) {
			err = errno;
			printf("repro: %s: mmap of the ring buffer on cpu %d: %s (%s): not reproduced\n",
			       cell_name, cpus[armed], errno_name(err), strerror(err));
			close(r->fd);
			rc = 1;
			break;
		}
		pfd[armed].fd = r->fd;
		pfd[armed].events = POLLIN;
	}
	if (!rc) {
		long long end = now_ms() + dwell_ms, left;

		for (int i = 0; i < armed; i++)
			ioctl(rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
		/* Wakeups depend on the attr under test: a short poll drains anyway. */
		while ((left = end - now_ms()) > 0) {
			poll(pfd, (nfds_t)armed, left < 10 ? (int)left : 10);
			for (int i = 0; i < armed; i++)
				ring_drain(&rings[i]);
		}
		for (int i = 0; i < armed; i++)
			ioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		for (int i = 0; i < armed; i++)
			ring_drain(&rings[i]);
		printf("repro: %s: armed on %d CPU(s) for %lld ms: %llu samples, %llu lost, "
		       "%llu throttles; it opened, as recorded (the run saw %s)\n",
		       cell_name, armed, dwell_ms, samples, lost, throttles, expect_name);
	}
	for (int i = 0; i < armed; i++) {
		munmap(rings[i].base, page_size + data_size);
		close(rings[i].fd);
	}
	free(rings);
	free(pfd);
	return rc;
}

int main(int argc, char **argv)
{
	long long dwell_ms = DWELL_MS;
	int *cpus = NULL, n, rc;
	static int task_cpu = -1;

	if (argc > 2 || (argc == 2 && (!argv[1][0] ||
				       strspn(argv[1], "0123456789") != strlen(argv[1]) ||
				       strlen(argv[1]) > 9))) {
		fprintf(stderr, "usage: %s [DWELL_MS]\n", argv[0]);
		return 2;
	}
	if (argc == 2)
		dwell_ms = atoll(argv[1]);
	if (PER_TASK) {
		cpus = &task_cpu;
		n = 1;
	} else if ((n = online_cpus(&cpus)) <= 0) {
		fprintf(stderr, "repro: cannot read /sys/devices/system/cpu/online\n");
		return 2;
	}
	rc = ERRNO_CELL ? check_errno(cpus, n) : arm(cpus, n, dwell_ms);
	if (!PER_TASK)
		free(cpus);
	return rc;
}
