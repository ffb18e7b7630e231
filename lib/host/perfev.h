/* The one wrapper around perf_event_open(2). Every open in pmucanary goes
 * through perfev_open(), which returns the fd or the negative errno (never
 * -1 with errno), and counts calls for benchmarks. */
#ifndef PMUCANARY_PERFEV_H
#define PMUCANARY_PERFEV_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/types.h>

int perfev_open(const struct perf_event_attr *attr, pid_t pid, int cpu,
		int group_fd, unsigned long flags);
uint64_t perfev_open_calls(void);

/* Online CPUs from /sys/devices/system/cpu/online; caller g_free()s *cpus.
 * A list that is not the kernel's format is -EINVAL, never a wrong set. */
int perfev_online_cpus(int **cpus, int *count);

/* The most CPUs a list may name (x86 MAXSMP's NR_CPUS is 8192). */
#define PERFEV_MAX_CPUS 65536
/* Parses the kernel's cpu list ("0-3,5,7-8\n": ascending, decimal, each
 * below PERFEV_MAX_CPUS, one trailing newline at most): 0 and *cpus
 * (g_free()) and *count, or -EINVAL (no message). */
int perfev_cpulist_parse(const char *text, int **cpus, int *count);

#endif
