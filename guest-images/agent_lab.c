/* The guest agent's lab role (see agent.h): a lab host's init. */
#include "agent.h"

/* ---- lab role ----
 * A lab host (pmucanary.role=lab, see lib/lab/lab.h) boots a kernel under test
 * with this agent as /init. The outer harness shares three directories
 * over virtio-9p: the host's root (tag LAB_TAG_ROOT, read-only), the
 * kernel's lab directory (LAB_TAG_RUN, writable, mounted at the same path
 * as on the host: pmucanary.lab_dir) and libvirt's QEMU capability cache
 * (LAB_TAG_CACHE, writable, optional). The lab thread:
 *   1. mounts the root read-only under a tmpfs overlay and switches into it
 *      (proc, sys, dev, dev/pts, dev/shm, run fresh; cgroup2 if it can);
 *   2. gives /dev/kvm to group kvm (QEMU runs as libvirt-qemu), writes
 *      LAB_MARKER, starts virtlogd and libvirtd and waits until
 *      `virsh version` answers;
 *   3. runs the command in <lab_dir>/lab-argv (one argument a line, the
 *      harness's `pmucanary run ...`) with output to <lab_dir>/inner.log.
 * It reports "LAB step=ready", then "done code=<exit status>", or "failed
 * code=<errno>" at the first step that fails, and repeats the latest line
 * every LAB_REPEAT_MS (a line dropped while the host was away is not lost).
 * It never powers off: the outer harness destroys the lab host. */

#define LAB_TAG_ROOT HB_LAB_TAG_ROOT
#define LAB_TAG_RUN HB_LAB_TAG_RUN
#define LAB_TAG_CACHE HB_LAB_TAG_CACHE
#define LAB_MARKER HB_LAB_MARKER
#define LAB_ARGV_FILE HB_LAB_ARGV_FILE
#define LAB_LOG_FILE HB_LAB_LOG_FILE
#define LAB_ARGS_MAX HB_LAB_ARGS_MAX
#define LAB_ARGV_BYTES HB_LAB_ARGV_BYTES
#define LAB_READY_TIMEOUT_MS 600000
#define LAB_9P_OPTS "trans=virtio,version=9p2000.L,msize=262144"

atomic_bool lab_reaps;      /* the lab thread reaps children, not run() */
static pthread_mutex_t lab_lock = PTHREAD_MUTEX_INITIALIZER;
static char lab_step[HB_LAB_STEP_MAX] = "";
static unsigned int lab_code;

static void lab_report(const char *step, unsigned int code)
{
	pthread_mutex_lock(&lab_lock);
	snprintf(lab_step, sizeof(lab_step), "%s", step);
	lab_code = code;
	pthread_mutex_unlock(&lab_lock);
	port_sendf("LAB v=%d seq=%llu step=%s code=%u", HB_PROTO_VERSION,
		   (unsigned long long)atomic_load(&hb_seq), step, code);
}

/* Called from run() every LAB_REPEAT_MS. */
void lab_repeat(void)
{
	char step[HB_LAB_STEP_MAX];
	unsigned int code;

	pthread_mutex_lock(&lab_lock);
	memcpy(step, lab_step, sizeof(step));
	code = lab_code;
	pthread_mutex_unlock(&lab_lock);
	if (step[0])
		port_sendf("LAB v=%d seq=%llu step=%s code=%u", HB_PROTO_VERSION,
			   (unsigned long long)atomic_load(&hb_seq), step, code);
}

/* Reports the failure and parks the thread: the outer harness decides. */
static void *lab_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void *lab_fail(int err, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("lab: FAILED: %s: %s", buf, strerror(err ? err : EIO));
	lab_report(HB_LAB_FAILED, (unsigned int)(err ? err : EIO));
	for (;;) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		sleep_ms(1000);
	}
	return NULL;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[512];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int lab_mount(const char *src, const char *dir, const char *type, unsigned long flags,
		     const char *opts)
{
	int e = mkdir_p(dir, 0755);

	if (e < 0)
		return e;
	if (mount(src, dir, type, flags, opts) < 0)
		return -errno;
	return 0;
}

/* The gid of group name in /etc/group, or -1. */
static long group_gid(const char *name)
{
	FILE *f = fopen("/etc/group", "re");
	char line[4096];
	size_t n = strlen(name);
	long gid = -1;

	if (!f)
		return -1;
	while (gid < 0 && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, n) && line[n] == ':') {
			char *p = strchr(line + n + 1, ':');

			gid = p ? strtol(p + 1, NULL, 10) : -1;
		}
	}
	fclose(f);
	return gid;
}

static char *const lab_env[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/root", "LANG=C.UTF-8", "CI=1", "PMUCANARY_LAB_HOST=1", NULL,
};

/* fork + exec with output to log_path (or /dev/null); returns the pid. */
static pid_t lab_spawn(char *const argv[], const char *log_path)
{
	pid_t pid = fork();

	if (pid == 0) {
		int out = open(log_path ? log_path : "/dev/null",
			       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (in >= 0)
			dup2(in, 0);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		setsid();
		execve(argv[0], argv, lab_env);
		_exit(127);
	}
	return pid;
}

/* Waits for pid, reaping every other child meanwhile (daemons reparent to
 * PID 1). Returns the exit status as the shell spells it (128+N: signal N),
 * or -1 after timeout_ms (0: none). */
static int lab_wait(pid_t pid, unsigned int timeout_ms)
{
	uint64_t end = mono_ms() + timeout_ms;

	if (pid <= 0) /* fork failed */
		return -1;

	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, timeout_ms ? WNOHANG : 0);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r > 0)
			continue;
		if (r < 0 && errno == ECHILD)
			return -1;
		if (timeout_ms) {
			if (mono_ms() >= end)
				return -1;
			sleep_ms(100);
		}
	}
}

/* Step 1: the shared root under a tmpfs overlay, then switch into it. */
static int lab_switch_root(void)
{
	char dir[LAB_DIR_MAX + 32];
	int e;

	if ((e = lab_mount(LAB_TAG_ROOT, "/lab/lower", "9p", MS_RDONLY, LAB_9P_OPTS ",ro")) < 0) {
		say("lab: mount 9p %s on /lab/lower: %s", LAB_TAG_ROOT, strerror(-e));
		return e;
	}
	if ((e = lab_mount("tmpfs", "/lab/rw", "tmpfs", 0, "mode=0755")) < 0 ||
	    (e = mkdir_p("/lab/rw/upper", 0755)) < 0 || (e = mkdir_p("/lab/rw/work", 0755)) < 0 ||
	    (e = lab_mount("overlay", "/lab/root", "overlay", 0,
			   "lowerdir=/lab/lower,upperdir=/lab/rw/upper,workdir=/lab/rw/work")) < 0) {
		say("lab: the overlay on /lab/root: %s", strerror(-e));
		return e;
	}
	if ((e = lab_mount("proc", "/lab/root/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) < 0 ||
	    (e = lab_mount("sysfs", "/lab/root/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) < 0 ||
	    (e = lab_mount("/dev", "/lab/root/dev", NULL, MS_MOVE, NULL)) < 0 ||
	    (e = lab_mount("devpts", "/lab/root/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
			   "gid=5,mode=0620,ptmxmode=0666")) < 0 ||
	    (e = lab_mount("tmpfs", "/lab/root/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")) < 0 ||
	    (e = lab_mount("tmpfs", "/lab/root/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")) < 0) {
		say("lab: mounting the new root's proc, sys, dev, run: %s", strerror(-e));
		return e;
	}
	/* /var/lock is /run/lock on Debian: libvirt locks character devices there */
	if ((e = mkdir_p("/lab/root/run/lock", 01777)) < 0 || chmod("/lab/root/run/lock", 01777) < 0) {
		say("lab: /run/lock: %s", strerror(e < 0 ? -e : errno));
		return e < 0 ? e : -errno;
	}
	e = lab_mount("cgroup2", "/lab/root/sys/fs/cgroup", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		      NULL);
	if (e < 0)
		say("lab: no cgroup2 (%s): libvirt runs QEMU without cgroups", strerror(-e));
	snprintf(dir, sizeof(dir), "/lab/root%s", cfg.lab_dir);
	if ((e = lab_mount(LAB_TAG_RUN, dir, "9p", 0, LAB_9P_OPTS)) < 0) {
		say("lab: mount 9p %s on %s: %s", LAB_TAG_RUN, cfg.lab_dir, strerror(-e));
		return e;
	}
	/* The host's libvirt config comes along; its autostart domains, networks
	 * and pools must not start inside the lab host. */
	{
		static const char *const autostart[] = {
			"/lab/root/etc/libvirt/qemu/autostart",
			"/lab/root/etc/libvirt/qemu/networks/autostart",
			"/lab/root/etc/libvirt/storage/autostart",
		};

		for (size_t i = 0; i < sizeof(autostart) / sizeof(autostart[0]); i++)
			if (access(autostart[i], F_OK) == 0 &&
			    mount("tmpfs", autostart[i], "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
				say("lab: hiding %s: %s", autostart[i] + 9, strerror(errno));
	}
	if (lab_mount(LAB_TAG_CACHE, "/lab/root/var/cache/libvirt/qemu", "9p", 0, LAB_9P_OPTS) < 0)
		say("lab: no %s share (%s): libvirtd probes QEMU from scratch", LAB_TAG_CACHE,
		    strerror(errno));
	if (chdir("/lab/root") < 0 || mount(".", "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 ||
	    chdir("/") < 0) {
		e = -errno;
		say("lab: switching to the new root: %s", strerror(errno));
		return e;
	}
	return 0;
}

/* Step 2: KVM for QEMU, the marker, virtlogd and libvirtd. */
static int lab_libvirtd(void)
{
	char *virtlogd[] = { "/usr/sbin/virtlogd", "--daemon", NULL };
	char *libvirtd[] = { "/usr/sbin/libvirtd", "--daemon", NULL };
	char *virsh[] = { "/usr/bin/virsh", "-c", "qemu:///system", "version", NULL };
	char log[LAB_DIR_MAX + 32];
	long kvm_gid = group_gid("kvm");
	uint64_t start = mono_ms();
	int st;

	if (access("/dev/kvm", F_OK) < 0) {
		say("lab: no /dev/kvm: the kernel's KVM (kvm_amd/kvm_intel) did not come up");
		return -ENODEV;
	}
	if (access("/sys/module/kvm_amd", F_OK) < 0 && access("/sys/module/kvm_intel", F_OK) < 0) {
		say("lab: /dev/kvm but neither kvm_amd nor kvm_intel");
		return -ENODEV;
	}
	/* devtmpfs makes it root 0600; QEMU runs as libvirt-qemu (group kvm) */
	if (kvm_gid < 0 || chown("/dev/kvm", 0, (gid_t)kvm_gid) < 0 || chmod("/dev/kvm", 0660) < 0)
		say("lab: /dev/kvm for group kvm (gid %ld): %s", kvm_gid, strerror(errno));
	if (write_file(LAB_MARKER, cfg.lab_dir) < 0) {
		int fd = open(LAB_MARKER, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0 || write(fd, cfg.lab_dir, strlen(cfg.lab_dir)) < 0)
			say("lab: %s: %s", LAB_MARKER, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	snprintf(log, sizeof(log), "%s/libvirtd.log", cfg.lab_dir);
	if (lab_wait(lab_spawn(virtlogd, log), 30000) != 0 ||
	    lab_wait(lab_spawn(libvirtd, log), 60000) != 0) {
		say("lab: virtlogd or libvirtd did not start (see %s)", log);
		return -ESRCH;
	}
	/* The first answer waits for libvirtd's QEMU capability probe. */
	for (;;) {
		st = lab_wait(lab_spawn(virsh, log), 120000);
		if (st == 0)
			break;
		if (mono_ms() - start > LAB_READY_TIMEOUT_MS) {
			say("lab: libvirtd does not answer `virsh version` (see %s)", log);
			return -ETIMEDOUT;
		}
		sleep_ms(500);
	}
	say("lab: libvirtd answers after %llu ms", (unsigned long long)(mono_ms() - start));
	return 0;
}

/* <lab_dir>/lab-argv: one argument a line, the first an absolute path. */
static int lab_read_argv(char *buf, size_t size, char **argv)
{
	char path[LAB_DIR_MAX + 32];
	ssize_t n;
	int argc = 0;
	char *p, *line;

	snprintf(path, sizeof(path), "%s/%s", cfg.lab_dir, LAB_ARGV_FILE);
	n = read_file(path, buf, size);
	if (n < 0)
		return (int)n;
	if ((size_t)n >= size - 1 || memchr(buf, 0, (size_t)n))
		return -E2BIG;
	for (p = buf; (line = strsep(&p, "\n"));) {
		if (!*line && !p)
			break;
		if (argc >= LAB_ARGS_MAX)
			return -E2BIG;
		argv[argc++] = line;
	}
	argv[argc] = NULL;
	return argc && argv[0][0] == '/' ? argc : -EINVAL;
}

static void *lab_main(void *arg)
{
	static char argv_buf[LAB_ARGV_BYTES];
	char *argv[LAB_ARGS_MAX + 1];
	char log[LAB_DIR_MAX + 32];
	uint64_t t0 = mono_ms();
	pid_t pid;
	int e, st;

	(void)arg;
	while (!atomic_load(&hb_seq)) /* LAB lines refer to a heartbeat */
		sleep_ms(10);
	if (!cfg.lab_dir[0])
		return lab_fail(EINVAL, "no pmucanary.lab_dir= on the command line");
	if ((e = lab_switch_root()) < 0)
		return lab_fail(-e, "the root overlay");
	say("lab: new root after %llu ms", (unsigned long long)(mono_ms() - t0));
	if ((e = lab_libvirtd()) < 0)
		return lab_fail(-e, "libvirtd");
	if ((e = lab_read_argv(argv_buf, sizeof(argv_buf), argv)) < 0)
		return lab_fail(-e, "%s/%s", cfg.lab_dir, LAB_ARGV_FILE);
	snprintf(log, sizeof(log), "%s/%s", cfg.lab_dir, LAB_LOG_FILE);
	pid = lab_spawn(argv, log);
	if (pid < 0)
		return lab_fail(errno, "fork");
	say("lab: ready after %llu ms: running %s (pid %d, output %s)",
	    (unsigned long long)(mono_ms() - t0), argv[0], (int)pid, log);
	lab_report(HB_LAB_READY, 0);
	st = lab_wait(pid, 0);
	sync();
	say("lab: %s exited with status %d", argv[0], st);
	lab_report(HB_LAB_DONE, st < 0 ? 255u : (unsigned int)st);
	for (;;) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		sleep_ms(1000);
	}
	return NULL;
}

void start_lab(void)
{
	pthread_t t;

	atomic_store(&lab_reaps, true);
	while (pthread_create(&t, NULL, lab_main, NULL) != 0) {
		say("lab: pthread_create failed; retrying");
		sleep_ms(1000);
	}
}
