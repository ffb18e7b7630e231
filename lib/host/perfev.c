/* The one wrapper around perf_event_open(2). */
#include "perfev.h"

#include "log.h"

#include <errno.h>
#include <glib.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PERFEV_ONLINE_PATH "/sys/devices/system/cpu/online"

/* The kernel reads attr->size bytes (at most a page) and writes its own
 * size back on E2BIG. */
#define PERFEV_ATTR_MAX 4096

static atomic_uint_fast64_t open_calls;

int perfev_open(const struct perf_event_attr *attr, pid_t pid, int cpu,
		int group_fd, unsigned long flags)
{
	/* A profile of a newer perf passes a larger size than this build's
	 * struct (136 from perf 6.3 against 6.1 headers): the kernel must read
	 * zeros past our struct, not the stack, and its write-back of size
	 * must not change the caller's attr for the next CPU. */
	union {
		struct perf_event_attr attr;
		unsigned char bytes[PERFEV_ATTR_MAX];
	} buf;
	long fd;

	memset(&buf, 0, sizeof(buf));
	buf.attr = *attr;
	atomic_fetch_add_explicit(&open_calls, 1, memory_order_relaxed);
	fd = syscall(__NR_perf_event_open, &buf.attr, pid, cpu, group_fd, flags);
	if (fd < 0)
		return errno ? -errno : -EIO;
	return (int)fd;
}

uint64_t perfev_open_calls(void)
{
	return atomic_load_explicit(&open_calls, memory_order_relaxed);
}

/* One CPU number of a list: decimal digits only (strtol took " 3", "+3"
 * and "-0"), below PERFEV_MAX_CPUS. */
static bool cpu_number(const char **p, long *out)
{
	long v = 0;

	if (!g_ascii_isdigit(**p))
		return false;
	for (; g_ascii_isdigit(**p); (*p)++) {
		v = v * 10 + (**p - '0');
		if (v >= PERFEV_MAX_CPUS)
			return false;
	}
	*out = v;
	return true;
}

/* The kernel's cpu list format: "0-3,5,7-8", ascending. A range such as
 * "0-4294967295" once made four billion entries. */
static int cpulist_parse(const char *text, GArray *cpus)
{
	const char *p = text;
	long prev = -1;

	while (*p && *p != '\n') {
		long lo, hi;

		if (!cpu_number(&p, &lo) || lo <= prev)
			return -EINVAL;
		hi = lo;
		if (*p == '-') {
			p++;
			if (!cpu_number(&p, &hi) || hi < lo)
				return -EINVAL;
		}
		for (long c = lo; c <= hi; c++) {
			int v = (int)c;
			g_array_append_val(cpus, v);
		}
		prev = hi;
		if (*p == ',' && p[1] && p[1] != '\n')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return cpus->len && (!*p || !p[1]) ? 0 : -EINVAL;
}

int perfev_cpulist_parse(const char *text, int **cpus, int *count)
{
	g_autoptr(GArray) arr = g_array_new(FALSE, FALSE, sizeof(int));

	if (cpulist_parse(text, arr) < 0)
		return -EINVAL;
	*count = (int)arr->len;
	*cpus = (int *)(void *)g_array_free(g_steal_pointer(&arr), FALSE);
	return 0;
}

int perfev_online_cpus(int **cpus, int *count)
{
	g_autofree char *text = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(GArray) arr = g_array_new(FALSE, FALSE, sizeof(int));

	if (!g_file_get_contents(PERFEV_ONLINE_PATH, &text, NULL, &err))
		return pc_fail(EIO, "%s: %s", PERFEV_ONLINE_PATH, err->message);
	if (cpulist_parse(text, arr) < 0)
		return pc_fail(EINVAL, "%s: cannot parse cpu list '%s'",
			       PERFEV_ONLINE_PATH, g_strstrip(text));
	*count = (int)arr->len;
	*cpus = (int *)(void *)g_array_free(g_steal_pointer(&arr), FALSE);
	return 0;
}
