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

/* Online CPUs from /sys/devices/system/cpu/online; caller g_free()s *cpus. */
int perfev_online_cpus(int **cpus, int *count);

#endif
