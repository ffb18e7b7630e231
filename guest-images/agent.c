/* pmucanary-agent: /init (PID 1) of the guest initramfs, or with --service
 * a service of a distribution's init in a disk image (lib/guests/inject.h).
 *
 * Mounts proc, sys and devtmpfs, loads the modules listed in
 * /etc/pmucanary/modules, finds the virtio-serial port named HB_PORT_NAME
 * and speaks lib/guests/hbproto.h on it: a heartbeat every interval, CORRUPT lines
 * for canary mismatches, KMSG lines for oops-class kernel messages, ACK for
 * host commands. Meanwhile one pinned thread per online CPU runs a busy
 * integer + memory workload so that host PMU interrupts land in guest
 * context, and a checker verifies a memory canary continuously.
 *
 * With pmucanary.role=lab the agent is a lab host's init instead
 * (agent_lab.c): no workload and no canary; it mounts the host's root over
 * virtio-9p under a tmpfs overlay, switches into it, starts libvirtd and
 * runs the harness inside, reporting LAB lines.
 *
 * As a service (--service) the guest's own init has mounted /proc, /sys and
 * /dev and its udev may have loaded the virtio modules: the agent mounts
 * nothing, still loads the list (EEXIST counts as present), writes its
 * console lines to /dev/console all the same, and is never a lab host.
 *
 * PID 1 must never exit (the kernel would panic): every failure is printed
 * to the console and retried. Static glibc + pthreads only. */
#include "agent.h"

#define AGENT_VERSION "1"
#define MODULES_LIST "/etc/pmucanary/modules"
#define CANARY_MIB_DEFAULT 8
#define CANARY_MIB_MAX 1024
#define WORK_BUF_BYTES (2 * 1024 * 1024) /* past L2: real memory traffic */
#define PAGE 4096u
#define MAX_WORKERS 512

/* ---- configuration (cmdline) and shared state ---- */

struct agent_cfg cfg = { HB_DEFAULT_INTERVAL_MS, true, CANARY_MIB_DEFAULT, false, "" };

static int console_fd = -1;
static int port_fd = -1;
static pthread_mutex_t port_lock = PTHREAD_MUTEX_INITIALIZER;

static atomic_uint interval_ms;
static atomic_bool work_on;
static atomic_bool hung;          /* selftest hang: send nothing more */
static atomic_bool canary_bad;
static atomic_bool beat_now; /* HB_CMD_BEAT: the main loop sends a heartbeat now */
static atomic_uint oops_count;
static atomic_uint corrupt_reported;
atomic_ullong hb_seq;      /* seq of the last HB sent (0: none yet) */

static unsigned int nworkers;
static struct worker {
	_Atomic unsigned long long progress;
	unsigned int cpu;
	char pad[64];
} *workers;

static uint8_t *canary;
static size_t canary_len;
static char boot_id[HB_BOOT_ID_HEX + 1] = "00000000000000000000000000000000";

/* ---- console ---- */

void say(const char *fmt, ...)
{
	char buf[512];
	struct timespec ts;
	va_list ap;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	n = snprintf(buf, sizeof(buf), "[%5ld.%03ld] pmucanary-agent: ", (long)ts.tv_sec,
		     ts.tv_nsec / 1000000);
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(console_fd >= 0 ? console_fd : 2, buf, n) < 0) {
		/* nowhere else to complain */
	}
}

uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* Reads a small file into buf (NUL-terminated); returns length or -errno. */
ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, off = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)off < size - 1 && (n = read(fd, buf + off, size - 1 - off)) > 0)
		off += n;
	close(fd);
	buf[off] = 0;
	return off;
}

/* ---- early setup ---- */

static void mount_one(const char *src, const char *dir, const char *type, unsigned long flags)
{
	mkdir(dir, 0755);
	if (mount(src, dir, type, flags, NULL) < 0 && errno != EBUSY)
		say("mount %s on %s: %s", type, dir, strerror(errno));
}

/* The console for say(); as a service, /dev is the guest's. */
static void open_console(void)
{
	console_fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
}

static void setup_mounts(void)
{
	mkdir("/dev", 0755);
	if (mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, NULL) < 0 && errno != EBUSY) {
		/* no console yet: fall back to whatever fd 2 is */
		say("mount devtmpfs: %s", strerror(errno));
	}
	console_fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (console_fd >= 0) {
		int in = open("/dev/null", O_RDONLY);

		if (in >= 0 && in != 0) {
			dup2(in, 0);
			close(in);
		}
		dup2(console_fd, 1);
		dup2(console_fd, 2);
	}
	mount_one("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC);
	mount_one("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC);
}

static bool parse_uint(const char *s, unsigned long min, unsigned long max, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || (*end && !isspace((unsigned char)*end)) || v < min || v > max)
		return false;
	*out = (unsigned int)v;
	return true;
}

/* An absolute path of [A-Za-z0-9/_.+-] without "..": it is mounted on. */
static bool lab_dir_ok(const char *d)
{
	size_t n = strlen(d);

	if (d[0] != '/' || n < 2 || n > LAB_DIR_MAX || strstr(d, ".."))
		return false;
	for (; *d; d++)
		if (!isalnum((unsigned char)*d) && !strchr("/_.+-", *d))
			return false;
	return true;
}

/* pmucanary.interval=<ms> pmucanary.work=on|off pmucanary.canary_mib=<n>
 * pmucanary.role=lab pmucanary.lab_dir=<path> */
/* A disk guest boots its own way (its bootloader's config, or the words
 * the fleet gave): its console says with what. */
static void say_cmdline(void)
{
	char buf[1024];
	ssize_t n = read_file("/proc/cmdline", buf, sizeof(buf));

	if (n < 0)
		return;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	say("cmdline: %s%s", buf, (size_t)n == sizeof(buf) - 1 ? " [...]" : "");
}

static void parse_cmdline(void)
{
	char buf[4096];
	char *save = NULL, *tok;

	if (read_file("/proc/cmdline", buf, sizeof(buf)) < 0)
		return;
	for (tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		unsigned int v;

		if (!strncmp(tok, "pmucanary.interval=", 19)) {
			if (parse_uint(tok + 19, HB_MIN_INTERVAL_MS, HB_MAX_INTERVAL_MS, &v))
				cfg.interval_ms = v;
			else
				say("ignoring bad %s", tok);
		} else if (!strncmp(tok, "pmucanary.work=", 15)) {
			if (!strcmp(tok + 15, "on"))
				cfg.work = true;
			else if (!strcmp(tok + 15, "off"))
				cfg.work = false;
			else
				say("ignoring bad %s", tok);
		} else if (!strncmp(tok, "pmucanary.canary_mib=", 21)) {
			if (parse_uint(tok + 21, 0, CANARY_MIB_MAX, &v))
				cfg.canary_mib = v;
			else
				say("ignoring bad %s", tok);
		} else if (!strcmp(tok, "pmucanary.role=lab")) {
			cfg.lab = true;
		} else if (!strncmp(tok, "pmucanary.lab_dir=", 18)) {
			if (lab_dir_ok(tok + 18))
				strcpy(cfg.lab_dir, tok + 18);
			else
				say("ignoring bad %s", tok);
		}
	}
}

static void read_boot_id(void)
{
	char buf[64];
	size_t j = 0;

	if (read_file("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) < 0) {
		say("cannot read boot_id: %s", strerror(errno));
		return;
	}
	for (size_t i = 0; buf[i] && j < HB_BOOT_ID_HEX; i++)
		if (isxdigit((unsigned char)buf[i]))
			boot_id[j++] = (char)tolower((unsigned char)buf[i]);
	boot_id[HB_BOOT_ID_HEX] = 0;
}

/* modprobe applies "<module>.<param>=<value>" from the kernel command line
 * when it loads a module (kvm_amd.nested=1); finit_module does not, so the
 * agent does the same. name: the module's name with '_' for '-'. */
static void module_params(const char *name, char *out, size_t size)
{
	char buf[4096];
	char *save = NULL, *tok;
	size_t n = strlen(name), used = 0;

	out[0] = 0;
	if (read_file("/proc/cmdline", buf, sizeof(buf)) < 0)
		return;
	for (tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		char mod[128];
		size_t i;

		for (i = 0; tok[i] && tok[i] != '.' && i < sizeof(mod) - 1; i++)
			mod[i] = tok[i] == '-' ? '_' : tok[i];
		mod[i] = 0;
		if (tok[i] != '.' || strcmp(mod, name) || i != n || !strchr(tok + i, '='))
			continue;
		used += (size_t)snprintf(out + used, used < size ? size - used : 0, "%s%s",
					 used ? " " : "", tok + i + 1);
		if (used >= size) {
			out[0] = 0;
			return;
		}
	}
}

/* "/lib/modules/kernel/arch/x86/kvm/kvm-amd.ko" -> "kvm_amd" */
static void module_name(const char *path, char *out, size_t size)
{
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; base[i] && base[i] != '.' && i < size - 1; i++)
		out[i] = base[i] == '-' ? '_' : base[i];
	out[i] = 0;
}

static void load_modules(void)
{
	FILE *f = fopen(MODULES_LIST, "re");
	char line[512];
	int total = 0, loaded = 0, present = 0;

	if (!f) {
		say("no %s (%s): no modules to load", MODULES_LIST, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[128], params[1024];
		int fd;

		line[strcspn(line, "\r\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		total++;
		fd = open(line, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			say("module %s: open: %s", line, strerror(errno));
			continue;
		}
		module_name(line, name, sizeof(name));
		module_params(name, params, sizeof(params));
		if (params[0])
			say("module %s: %s", name, params);
		if (syscall(SYS_finit_module, fd, params, 0) == 0)
			loaded++;
		else if (errno == EEXIST)
			present++;
		else
			say("module %s: finit_module: %s", line, strerror(errno));
		close(fd);
	}
	fclose(f);
	say("modules: %d listed, %d loaded, %d already present", total, loaded, present);
}

/* Finds /dev/vportXpY whose sysfs name is HB_PORT_NAME; 0 and path or -1. */
static int find_port(char *path, size_t size)
{
	DIR *d = opendir("/sys/class/virtio-ports");
	struct dirent *e;
	int ret = -1;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char p[300], name[128];

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/sys/class/virtio-ports/%s/name", e->d_name);
		if (read_file(p, name, sizeof(name)) < 0)
			continue;
		name[strcspn(name, "\n")] = 0;
		if (!strcmp(name, HB_PORT_NAME)) {
			snprintf(path, size, "/dev/%s", e->d_name);
			ret = 0;
			break;
		}
	}
	closedir(d);
	return ret;
}

static void open_port(void)
{
	char path[300];
	uint64_t start = mono_ms(), last_note = start;

	for (;;) {
		if (find_port(path, sizeof(path)) == 0) {
			/* devtmpfs creates the node asynchronously */
			int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

			if (fd >= 0) {
				port_fd = fd;
				say("port %s at %s after %llu ms", HB_PORT_NAME, path,
				    (unsigned long long)(mono_ms() - start));
				return;
			}
		}
		if (mono_ms() - last_note >= 5000) {
			last_note = mono_ms();
			say("still waiting for virtio port %s (is virtio_console loaded and the "
			    "virtserialport named %s?)", HB_PORT_NAME, HB_PORT_NAME);
		}
		sleep_ms(20);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

/* ---- the port ---- */

/* One write per line so that lines never interleave. A line that cannot be
 * written now (host not connected, queue full) is dropped: the heartbeat
 * carries seq, and PID 1 must not block on the host. */
static void port_send(const char *line, size_t len)
{
	if (port_fd < 0 || atomic_load(&hung))
		return;
	pthread_mutex_lock(&port_lock);
	for (int tries = 0; tries < 50; tries++) {
		ssize_t n = write(port_fd, line, len);

		if (n == (ssize_t)len || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;
		if (n > 0) { /* partial: finish the line */
			line += n;
			len -= n;
			continue;
		}
		if (errno == EAGAIN) {
			struct pollfd p = { port_fd, POLLOUT, 0 };

			if (poll(&p, 1, 2) <= 0 || (p.revents & POLLHUP))
				break;
		}
	}
	pthread_mutex_unlock(&port_lock);
}

void port_sendf(const char *fmt, ...)
{
	char buf[HB_MAX_LINE + 1];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > HB_MAX_LINE - 1)
		n = HB_MAX_LINE - 1;
	buf[n++] = '\n';
	port_send(buf, n);
}

static unsigned long long work_total(void)
{
	unsigned long long sum = 0;

	for (unsigned int i = 0; i < nworkers; i++)
		sum += atomic_load_explicit(&workers[i].progress, memory_order_relaxed);
	return sum;
}

static void send_heartbeat(void)
{
	unsigned long long seq = atomic_load(&hb_seq) + 1;

	port_sendf("HB v=%d seq=%llu boot=%s mono=%llu work=%llu canary=%s oops=%u",
		   HB_PROTO_VERSION, seq, boot_id, (unsigned long long)mono_ms(), work_total(),
		   atomic_load(&canary_bad) ? "bad" : "ok", atomic_load(&oops_count));
	atomic_store(&hb_seq, seq);
}

/* ---- the workload ---- */

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t *buf = malloc(WORK_BUF_BYTES);
	uint64_t x = 0x9e3779b97f4a7c15ull ^ w->cpu, acc = 0;
	size_t words = WORK_BUF_BYTES / sizeof(uint64_t);

	/* nice 19: the heartbeat and the checker must get the CPU promptly */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	while (!buf) {
		sleep_ms(1000);
		buf = malloc(WORK_BUF_BYTES);
	}
	for (size_t i = 0; i < words; i++)
		buf[i] = i * 0x100000001b3ull;
	for (;;) {
		if (!atomic_load_explicit(&work_on, memory_order_relaxed)) {
			sleep_ms(20);
			continue;
		}
		/* integer chain plus random read-modify-write over the buffer */
		for (int round = 0; round < 4096; round++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			size_t idx = x % words;
			buf[idx] += x;
			acc += buf[(idx * 7 + 1) % words] * 3 + (x >> 3);
		}
		__asm__ volatile("" : : "r"(acc) : "memory");
		atomic_fetch_add_explicit(&w->progress, 1, memory_order_relaxed);
	}
	return NULL;
}

static void start_workers(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	if (n > MAX_WORKERS)
		n = MAX_WORKERS;
	workers = calloc((size_t)n, sizeof(*workers));
	if (!workers) {
		say("no memory for workers");
		return;
	}
	nworkers = (unsigned int)n;
	for (unsigned int i = 0; i < nworkers; i++) {
		pthread_t t;
		pthread_attr_t a;
		cpu_set_t set;

		workers[i].cpu = i;
		pthread_attr_init(&a);
		CPU_ZERO(&set);
		CPU_SET(i, &set);
		pthread_attr_setaffinity_np(&a, sizeof(set), &set);
		if (pthread_create(&t, &a, worker_main, &workers[i]) != 0) {
			/* unpinned retry: a CPU that went offline must not stop the work */
			if (pthread_create(&t, NULL, worker_main, &workers[i]) != 0)
				say("worker %u: pthread_create failed", i);
		}
		pthread_attr_destroy(&a);
	}
}

/* ---- the canary ---- */

static inline uint64_t canary_word(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

static inline uint64_t canary_seed(size_t page)
{
	return 0x2545f4914f6cdd1dull ^ ((uint64_t)(page + 1) * 0x9e3779b97f4a7c15ull);
}

static void canary_fill_page(size_t page)
{
	uint64_t s = canary_seed(page);
	uint64_t *p = (uint64_t *)(canary + page * PAGE);

	for (size_t i = 0; i < PAGE / 8; i++)
		p[i] = canary_word(&s);
}

static void canary_report(size_t off, uint8_t exp, uint8_t got)
{
	unsigned int n = atomic_fetch_add(&corrupt_reported, 1);

	say("canary mismatch at offset 0x%zx: expected 0x%02x, got 0x%02x", off, exp, got);
	if (n < HB_MAX_CORRUPT)
		port_sendf("CORRUPT v=%d seq=%llu off=%zx exp=%02x got=%02x", HB_PROTO_VERSION,
			   (unsigned long long)atomic_load(&hb_seq), off, exp, got);
	/*
	 * Only now: a heartbeat that says canary=bad is written after the
	 * CORRUPT line (port_lock orders the two), so the host never sees the
	 * bad canary without its offset.
	 */
	atomic_store(&canary_bad, true);
}

static void *canary_main(void *arg)
{
	size_t pages = canary_len / PAGE;

	(void)arg;
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 5);
	for (;;) {
		for (size_t pg = 0; pg < pages; pg++) {
			uint64_t s = canary_seed(pg);
			volatile uint64_t *p = (volatile uint64_t *)(canary + pg * PAGE);

			for (size_t i = 0; i < PAGE / 8; i++) {
				uint64_t want = canary_word(&s), got = p[i];

				if (got == want)
					continue;
				for (unsigned int b = 0; b < 8; b++) {
					uint8_t e = (uint8_t)(want >> (8 * b)), g = (uint8_t)(got >> (8 * b));

					if (e != g)
						canary_report(pg * PAGE + i * 8 + b, e, g);
				}
				/* repair, so one corruption is reported once; status stays bad */
				p[i] = want;
			}
		}
		sleep_ms(20);
	}
	return NULL;
}

static void start_canary(void)
{
	pthread_t t;

	struct sysinfo si;

	/* PID 1 cannot be OOM-killed: an oversized canary would panic the guest */
	if (sysinfo(&si) == 0 && si.mem_unit) {
		unsigned long long quarter_mib = (unsigned long long)si.totalram * si.mem_unit >> 22;

		if (cfg.canary_mib > quarter_mib) {
			say("canary: %u MiB is more than a quarter of RAM: using %llu MiB",
			    cfg.canary_mib, quarter_mib);
			cfg.canary_mib = (unsigned int)quarter_mib;
		}
	}
	canary_len = (size_t)cfg.canary_mib << 20;
	if (!canary_len)
		return;
	canary = mmap(NULL, canary_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		      -1, 0);
	if (canary == MAP_FAILED) {
		say("canary: mmap %u MiB: %s; running without canary", cfg.canary_mib, strerror(errno));
		canary = NULL;
		canary_len = 0;
		return;
	}
	for (size_t pg = 0; pg < canary_len / PAGE; pg++)
		canary_fill_page(pg);
	if (pthread_create(&t, NULL, canary_main, NULL) != 0)
		say("canary: pthread_create failed");
}

/* ---- kmsg ---- */

/* Lines the kernel prints when it oopses, warns, BUGs or panics. */
static bool kmsg_is_oops(const char *text)
{
	static const char *const marks[] = {
		"Oops:", "WARNING:", "BUG:", "kernel BUG at", "Kernel panic",
		"general protection fault", "Unable to handle kernel", NULL,
	};

	for (int i = 0; marks[i]; i++)
		if (strstr(text, marks[i]))
			return true;
	return false;
}

/* The selftest cannot make a stock kernel WARN without a test module (no
 * lkdtm in Debian 6.1), so it writes this user-facility line to /dev/kmsg.
 * Only this exact marker is counted from user space: a self-test of the
 * counting and KMSG path, not of the kernel. */
#define SELFTEST_OOPS_MARK "pmucanary-selftest: WARNING: simulated oops-class line"

static void *kmsg_main(void *arg)
{
	char rec[8192];
	int fd;

	(void)arg;
	while ((fd = open("/dev/kmsg", O_RDONLY | O_CLOEXEC)) < 0) {
		say("open /dev/kmsg: %s", strerror(errno));
		sleep_ms(1000);
	}
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		unsigned int pri;
		char *text, *nl;

		if (n < 0) {
			if (errno == EPIPE || errno == EINTR) /* overwritten records */
				continue;
			sleep_ms(100);
			continue;
		}
		rec[n] = 0;
		/* "<pri>,<seq>,<usec>,<flags>[,...];<text>\n[ KEY=value\n...]" */
		text = strchr(rec, ';');
		if (!text || sscanf(rec, "%u", &pri) != 1)
			continue;
		text++;
		nl = strchr(text, '\n');
		if (nl)
			*nl = 0;
		if ((pri >> 3) == 0 ? !kmsg_is_oops(text) : !strstr(text, SELFTEST_OOPS_MARK))
			continue;
		atomic_fetch_add(&oops_count, 1);
		{
			char clean[HB_MAX_LINE];
			size_t j = 0;

			for (size_t i = 0; text[i] && j < sizeof(clean) - 1; i++) {
				unsigned char c = (unsigned char)text[i];

				clean[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
			}
			clean[j] = 0;
			/* port_sendf truncates to HB_MAX_LINE including '\n' */
			port_sendf("KMSG v=%d seq=%llu text=%s", HB_PROTO_VERSION,
				   (unsigned long long)atomic_load(&hb_seq), clean);
		}
	}
	return NULL;
}

/* ---- selftest garbage ----
 * Hostile input for the host's parser on the real port: every line of the
 * burst must be rejected exactly once (HB_SELFTEST_GARBAGE_LINES in all) and
 * none may cause a verdict. Runs in its own thread so that heartbeats keep
 * flowing between its writes (each write ends on a line boundary, under
 * port_lock, so real lines never interleave with garbage). */

#define GARBAGE_OVERSIZED (64 * 1024)
#define GARBAGE_FLOOD_LINES 20000 /* random lengths 0..1023: about 10 MB */
#define GARBAGE_FLOOD_MAXLEN 1024
#define GARBAGE_BATCH (32 * 1024) /* virtio_console takes at most 32 KiB a write */

static atomic_bool garbage_running;

struct garbage {
	char *p;
	size_t len, cap;
	unsigned int lines;
};

/* One line of n raw bytes (NULs allowed) plus '\n'. */
static void garbage_add(struct garbage *g, const void *data, size_t n)
{
	if (g->len + n + 1 > g->cap)
		return; /* the host's exact count then fails loudly */
	memcpy(g->p + g->len, data, n);
	g->len += n;
	g->p[g->len++] = '\n';
	g->lines++;
}

static void garbage_addf(struct garbage *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void garbage_addf(struct garbage *g, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= 0)
		garbage_add(g, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* prefix, then fill bytes up to total length n (without the '\n') */
static void garbage_pad(struct garbage *g, const char *prefix, char fill, size_t n)
{
	char *buf = malloc(n);
	size_t pl = strlen(prefix);

	if (!buf)
		return;
	memset(buf, fill, n);
	memcpy(buf, prefix, pl < n ? pl : n);
	garbage_add(g, buf, n);
	free(buf);
}

/* Every write waits for the host (10 s per stall at most): the burst must
 * arrive whole for the host to count it exactly. Called with port_lock. */
static bool port_write_all(const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(port_fd, buf, len > GARBAGE_BATCH ? GARBAGE_BATCH : len);
		struct pollfd p = { port_fd, POLLOUT, 0 };

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || errno != EAGAIN || poll(&p, 1, 10000) <= 0 ||
		    (p.revents & (POLLHUP | POLLERR)))
			return false;
	}
	return true;
}

/* The fixed part: one line per kind of damage the host must survive. */
static void garbage_hostile(struct garbage *g)
{
	unsigned long long seq = atomic_load(&hb_seq);
	unsigned long long old = seq >= 2 ? seq : 2; /* seq=1 would mean "rebooted" */
	unsigned long long ahead = seq + 1000000;
	char hb[HB_MAX_LINE], upper[HB_BOOT_ID_HEX + 1];
	int n;

	/* a duplicate of the last heartbeat, with mono=1 so that it is out of
	 * order even if the host never saw the original */
	n = snprintf(hb, sizeof(hb), "HB v=%d seq=%llu boot=%s mono=1 work=0 canary=ok oops=0",
		     HB_PROTO_VERSION, old, boot_id);
	for (int i = 0; i <= HB_BOOT_ID_HEX; i++)
		upper[i] = (char)toupper((unsigned char)boot_id[i]);

	/* oversized */
	garbage_pad(g, "HB v=1 seq=", '9', GARBAGE_OVERSIZED);
	garbage_pad(g, "KMSG v=1 seq=1 text=", 'x', HB_MAX_LINE);      /* one past the limit */
	garbage_pad(g, hb, ' ', HB_MAX_LINE - 1);                      /* longest, trailing junk */
	/* NUL and non-ASCII bytes; as KMSG they would be a verdict if accepted */
	garbage_add(g, "KMSG v=1 seq=1 text=pmucanary-garbage\0WARNING: hidden", 53);
	{
		char nul[HB_MAX_LINE];

		memcpy(nul, hb, (size_t)n);
		nul[2] = 0; /* "HB\0v=1 ..." */
		garbage_add(g, nul, (size_t)n);
		garbage_add(g, "\0", 1);
	}
	garbage_addf(g, "KMSG v=1 seq=1 text=caf\xc3\xa9 \xff\xfe\x80 WARNING:");
	garbage_addf(g, "\xef\xbb\xbf%s", hb);
	garbage_addf(g, "HB v=1 seq=\xd9\xa3 boot=%s", boot_id);
	garbage_addf(g, "%s\r", hb);
	garbage_addf(g, "HB\tv=1 seq=%llu", old);
	/* truncated: valid lines cut mid-field */
	garbage_add(g, hb, 9);                                /* "HB v=1 se" */
	garbage_add(g, hb, (size_t)(strstr(hb, "boot=") - hb) + 5 + 10); /* mid boot id */
	garbage_add(g, hb, (size_t)(strstr(hb, "canary=") - hb) + 8);    /* "canary=o" */
	garbage_add(g, hb, (size_t)n - 1);                    /* "oops=" */
	garbage_add(g, "HB", 2);
	garbage_addf(g, "CORRUPT v=1 seq=%llu off=1f exp=a", old);
	garbage_addf(g, "ACK v=1 seq=%llu cmd=", old);
	/* fields out of order, wrong version */
	garbage_addf(g, "HB v=1 boot=%s seq=%llu mono=1 work=0 canary=ok oops=0", boot_id, old);
	garbage_addf(g, "HB seq=%llu v=1 boot=%s mono=1 work=0 canary=ok oops=0", old, boot_id);
	garbage_addf(g, "HB v=1 seq=%llu boot=%s work=0 mono=1 canary=ok oops=0", old, boot_id);
	garbage_addf(g, "HB v=2 seq=%llu boot=%s mono=1 work=0 canary=ok oops=0", old, boot_id);
	garbage_addf(g, "HB v=0 seq=%llu boot=%s mono=1 work=0 canary=ok oops=0", old, boot_id);
	garbage_addf(g, "HB v=01 seq=%llu boot=%s mono=1 work=0 canary=ok oops=0", old, boot_id);
	garbage_addf(g, "ACK v=2 seq=%llu cmd=selftest", old);
	/* duplicate / out-of-order seq */
	garbage_add(g, hb, (size_t)n);
	garbage_addf(g, "KMSG v=1 seq=%llu text=WARNING: from the future", ahead);
	garbage_addf(g, "CORRUPT v=1 seq=%llu off=0 exp=00 got=ff", ahead);
	/* numbers that overflow, signs, bad hex */
	garbage_addf(g, "HB v=1 seq=18446744073709551616 boot=%s mono=1 work=0 canary=ok oops=0", boot_id);
	garbage_addf(g, "HB v=1 seq=%llu boot=%s mono=99999999999999999999999999 work=0 canary=ok oops=0",
		     old, boot_id);
	garbage_addf(g, "HB v=4294967297 seq=%llu boot=%s mono=1 work=0 canary=ok oops=0", old, boot_id);
	garbage_addf(g, "HB v=1 seq=%llu boot=%s mono=1 work=0 canary=ok oops=4294967296", old, boot_id);
	garbage_addf(g, "HB v=1 seq=-%llu boot=%s mono=1 work=0 canary=ok oops=0", old, boot_id);
	garbage_addf(g, "HB v=1 seq=%llu boot=%s mono=1 work=0 canary=ok oops=0", old, upper);
	garbage_addf(g, "CORRUPT v=1 seq=%llu off=10000000000000000 exp=00 got=ff", old);
	/* empty, blank, unknown */
	garbage_add(g, "", 0);
	garbage_addf(g, "   ");
	garbage_addf(g, "hello host");
}

static void *garbage_main(void *arg)
{
	struct garbage g = { 0 };
	uint64_t x = 0x853c49e6748fea9bull, t0 = mono_ms(), bytes = 0;
	bool ok;

	(void)arg;
	g.cap = 2 * GARBAGE_OVERSIZED;
	g.p = malloc(g.cap);
	if (!g.p) {
		say("selftest garbage: no memory");
		atomic_store(&garbage_running, false);
		return NULL;
	}
	garbage_hostile(&g);
	pthread_mutex_lock(&port_lock);
	ok = port_write_all(g.p, g.len);
	pthread_mutex_unlock(&port_lock);
	bytes += g.len;

	/* the flood: random bytes in lines of random length, none starting with
	 * a protocol letter, in batches that end on a line boundary */
	for (unsigned int i = 0; ok && i < GARBAGE_FLOOD_LINES;) {
		char line[GARBAGE_FLOOD_MAXLEN];

		g.len = 0;
		while (i < GARBAGE_FLOOD_LINES && g.len + GARBAGE_FLOOD_MAXLEN + 1 <= GARBAGE_BATCH) {
			size_t len;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			len = x % GARBAGE_FLOOD_MAXLEN;
			for (size_t j = 0; j < len; j++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				line[j] = (char)(x >> 32);
				if (line[j] == '\n')
					line[j] = (char)0x8a;
			}
			if (len)
				line[0] |= (char)0x80;
			garbage_add(&g, line, len);
			i++;
		}
		pthread_mutex_lock(&port_lock);
		ok = port_write_all(g.p, g.len);
		pthread_mutex_unlock(&port_lock);
		bytes += g.len;
		sleep_ms(1); /* let the heartbeat have the lock */
	}
	if (!ok)
		say("selftest garbage: port write failed after %llu bytes: %s",
		    (unsigned long long)bytes, strerror(errno));
	say("selftest garbage: %u lines (%s %d), %llu bytes in %llu ms", g.lines,
	    g.lines == HB_SELFTEST_GARBAGE_LINES ? "as" : "NOT the", HB_SELFTEST_GARBAGE_LINES,
	    (unsigned long long)bytes, (unsigned long long)(mono_ms() - t0));
	free(g.p);
	atomic_store(&garbage_running, false);
	return NULL;
}

/* ---- commands ---- */

static void ack(const char *word)
{
	port_sendf("ACK v=%d seq=%llu cmd=%s", HB_PROTO_VERSION,
		   (unsigned long long)atomic_load(&hb_seq), word);
}

/* Lets the ACK leave the guest before a fault fires. */
static void drain_port(void)
{
	if (port_fd >= 0)
		fsync(port_fd);
	sleep_ms(50);
}

static void sysrq(char c)
{
	char s[2] = { c, 0 };

	write_file("/proc/sys/kernel/sysrq", "1");
	if (write_file("/proc/sysrq-trigger", s) < 0)
		say("sysrq %c: %s", c, strerror(errno));
}

static void selftest(const char *what)
{
	if (!strcmp(what, "panic")) {
		/* the ACK last, right before the panic: the host times panic to
		 * verdict from it (bench/fleet.c), and this drain is ours */
		say("selftest panic: sysrq c");
		drain_port();
		ack(HB_CMD_SELFTEST);
		sysrq('c');
	} else if (!strcmp(what, "hang")) {
		ack(HB_CMD_SELFTEST);
		drain_port();
		say("selftest hang: no more heartbeats until reboot");
		atomic_store(&hung, true);
	} else if (!strcmp(what, "corrupt")) {
		ack(HB_CMD_SELFTEST);
		if (!canary_len) {
			say("selftest corrupt: no canary (canary_mib=0)");
			return;
		}
		size_t off = ((size_t)mono_ms() * 2654435761u) % canary_len;
		say("selftest corrupt: flipping canary byte at 0x%zx", off);
		((volatile uint8_t *)canary)[off] ^= 0x5a;
	} else if (!strcmp(what, "reboot")) {
		ack(HB_CMD_SELFTEST);
		say("selftest reboot: sysrq b");
		drain_port();
		sysrq('b');
		sleep_ms(1000);
		reboot(RB_AUTOBOOT);
	} else if (!strcmp(what, "oops")) {
		ack(HB_CMD_SELFTEST);
		say("selftest oops: writing a marker line to /dev/kmsg (counting path only)");
		if (write_file("/dev/kmsg", "<4>" SELFTEST_OOPS_MARK "\n") < 0)
			say("selftest oops: /dev/kmsg: %s", strerror(errno));
	} else if (!strcmp(what, "garbage")) {
		pthread_t t;

		if (atomic_exchange(&garbage_running, true)) {
			say("selftest garbage: already running");
			return;
		}
		ack(HB_CMD_SELFTEST);
		say("selftest garbage: %d hostile lines to the host", HB_SELFTEST_GARBAGE_LINES);
		if (pthread_create(&t, NULL, garbage_main, NULL) != 0) {
			say("selftest garbage: pthread_create failed");
			atomic_store(&garbage_running, false);
		} else {
			pthread_detach(t);
		}
	} else {
		say("unknown selftest '%s'", what);
	}
}

static void handle_command(char *line)
{
	char *word = strtok(line, " \t\r");
	char *arg = strtok(NULL, " \t\r");
	unsigned int v;

	if (!word)
		return;
	if (!strcmp(word, HB_CMD_INTERVAL) && arg &&
	    parse_uint(arg, HB_MIN_INTERVAL_MS, HB_MAX_INTERVAL_MS, &v)) {
		atomic_store(&interval_ms, v);
		ack(HB_CMD_INTERVAL);
		say("interval %u ms", v);
	} else if (!strcmp(word, HB_CMD_WORK) && arg && (!strcmp(arg, "on") || !strcmp(arg, "off"))) {
		atomic_store(&work_on, !strcmp(arg, "on"));
		ack(HB_CMD_WORK);
		say("work %s", arg);
	} else if (!strcmp(word, HB_CMD_SELFTEST) && arg) {
		selftest(arg);
	} else if (!strcmp(word, HB_CMD_BEAT) && !arg) {
		atomic_store(&beat_now, true);
	} else {
		say("ignoring command '%s%s%s'", word, arg ? " " : "", arg ? arg : "");
	}
}

/* ---- main loop ---- */

static void run(void)
{
	char in[HB_MAX_LINE * 2];
	size_t inlen = 0;
	bool discarding = false;
	uint64_t next = mono_ms(), lab_next = next + LAB_REPEAT_MS;
	bool first = true;

	for (;;) {
		uint64_t now = mono_ms();

		if (now >= next) {
			if (!atomic_load(&hung)) {
				send_heartbeat();
				if (first) {
					say("first heartbeat sent");
					first = false;
				}
			}
			next += atomic_load(&interval_ms);
			if (next <= now) /* we were late: do not burst */
				next = now + atomic_load(&interval_ms);
			if (cfg.lab && now >= lab_next) {
				lab_repeat();
				lab_next = now + LAB_REPEAT_MS;
			}
			while (!atomic_load(&lab_reaps) && waitpid(-1, NULL, WNOHANG) > 0)
				;
			continue;
		}

		struct pollfd p = { port_fd, POLLIN, 0 };
		int r = poll(&p, 1, (int)(next - now));

		if (r <= 0)
			continue;
		if (!(p.revents & POLLIN)) {
			/* host side not connected: POLLHUP would spin, so just wait */
			uint64_t left = next - mono_ms();

			sleep_ms(left > 20 ? 20 : (unsigned int)left + 1);
			continue;
		}
		ssize_t n = read(port_fd, in + inlen, sizeof(in) - inlen);

		if (n <= 0) {
			sleep_ms(5);
			continue;
		}
		inlen += (size_t)n;
		for (;;) {
			char *nl = memchr(in, '\n', inlen);
			size_t used;

			if (!nl) {
				if (inlen == sizeof(in)) { /* overlong line: drop it */
					inlen = 0;
					discarding = true;
				}
				break;
			}
			*nl = 0;
			used = (size_t)(nl - in) + 1;
			if (!discarding)
				handle_command(in);
			discarding = false;
			memmove(in, in + used, inlen - used);
			inlen -= used;
		}
		/* asked for a heartbeat: the next one is due now, and the
		 * interval counts from it */
		if (atomic_exchange(&beat_now, false))
			next = mono_ms();
	}
}

int main(int argc, char **argv)
{
	/* as /init, argv holds the kernel's unknown boot words: ignore them,
	 * PID 1 must not exit */
	bool service = argc > 1 && !strcmp(argv[1], "--service");

	if (service)
		open_console();
	else
		setup_mounts();
	parse_cmdline();
	if (service && cfg.lab) {
		say("pmucanary.role=lab ignored: a service is never a lab host's init");
		cfg.lab = false;
	}
	atomic_store(&interval_ms, cfg.interval_ms);
	atomic_store(&work_on, cfg.work);
	say("version %s (protocol v%d) pid %d cpus %ld interval %u ms work %s canary %u MiB",
	    AGENT_VERSION, HB_PROTO_VERSION, (int)getpid(), sysconf(_SC_NPROCESSORS_ONLN),
	    cfg.interval_ms, cfg.work ? "on" : "off", cfg.canary_mib);
	if (service) {
		say("service mode: the guest's init mounted /proc, /sys and /dev");
		say_cmdline();
	} else if (getpid() != 1)
		say("not PID 1: running anyway (test mode)");
	read_boot_id();
	load_modules();

	pthread_t t;

	if (cfg.lab) {
		/* a lab host: the harness inside owns the CPUs and the host kmsg */
		say("lab role: lab dir %s", cfg.lab_dir[0] ? cfg.lab_dir : "(none)");
		open_port();
		start_lab();
		run();
	}
	start_canary();
	start_workers();
	open_port();
	/* after the port: /dev/kmsg starts at the oldest record, so lines from
	 * before the port existed are still counted and sent */
	while (pthread_create(&t, NULL, kmsg_main, NULL) != 0) {
		say("kmsg: pthread_create failed; retrying");
		sleep_ms(1000);
	}
	run();
	for (;;) /* not reached; PID 1 must never return */
		pause();
}
