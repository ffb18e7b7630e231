/* What the guest agent's files share (agent.c: the heartbeat, the workload,
 * the commands, the main loop; agent_lab.c: the lab role). Static binary,
 * no library but libc and pthreads; the protocol is lib/guests/hbproto.h. */
#ifndef PMUCANARY_AGENT_H
#define PMUCANARY_AGENT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "hbproto.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LAB_DIR_MAX HB_LAB_DIR_MAX
#define LAB_REPEAT_MS 2000

/* The kernel command line's settings (agent.c parses them). */
struct agent_cfg {
	unsigned int interval_ms;
	bool work;
	unsigned int canary_mib;
	bool lab;                 /* pmucanary.role=lab */
	char lab_dir[LAB_DIR_MAX + 1];
};
extern struct agent_cfg cfg;
extern atomic_ullong hb_seq;      /* seq of the last HB sent (0: none yet) */

/* agent.c */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t mono_ms(void);
/* Small files: writes s into an existing file (0 or -errno); reads up to
 * size - 1 bytes, NUL-terminated (the length or -errno). */
int write_file(const char *path, const char *s);
ssize_t read_file(const char *path, char *buf, size_t size);
void sleep_ms(unsigned int ms);
/* One line on the heartbeat port (serialized with the heartbeats). */
void port_sendf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* agent_lab.c: the lab role */
extern atomic_bool lab_reaps;     /* the lab thread reaps children, not run() */
void start_lab(void);
/* Repeats the lab's latest state line; run() calls it every LAB_REPEAT_MS. */
void lab_repeat(void);

#endif
