/* What a killed run leaves, and the watcher that cleans up after a
 * SIGKILL (fleet_priv.h; the fleet is in fleet.c).
 *
 * Every guest carries its harness in its metadata (<pc:fleet pid= start=>)
 * and every saved image in its name (<name>.<pid>-<start>.save): a harness
 * whose pid no longer runs with that start time is dead, and what it owned
 * is destroyed or removed by the next fleet (fleet_reap_stale,
 * fleet_reap_saves), by this fleet over a new connection when libvirtd
 * went away (fleet_destroy_orphans), or by its watcher when it was killed.
 *
 * fleet_new() calls into this file, which is what links it into a program
 * from the static library: the watcher's constructor is here. */
#include "fleet.h"
#include "fleet_priv.h"

#include "log.h"
#include "virt.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FLEET_RECONNECT_US (30 * G_USEC_PER_SEC) /* a restarted libvirtd answers in ~1 s */
#define FLEET_WATCHER_ENV "PMUCANARY_FLEET_WATCHER"
#define FLEET_WATCHER_LINGER_US (6 * G_USEC_PER_SEC) /* a restore in flight lands */
#define FLEET_WATCHER_MAX_S 60

unsigned long long reaper_proc_starttime(pid_t pid)
{
	g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
	g_autofree char *buf = NULL;
	unsigned long long st = 0;
	char *p;

	if (!g_file_get_contents(path, &buf, NULL, NULL))
		return 0;
	p = strrchr(buf, ')'); /* comm may hold spaces */
	if (!p)
		return 0;
	/* field 22 is starttime; after ')' come fields 3.. */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		st = g_ascii_strtoull(p + 1, NULL, 10);
	return st;
}

/* ---- stale domains of dead runs ---- */

/* The harness that started d (its <pc:fleet pid= start=>): false when d
 * carries no fleet metadata. */
static bool domain_owner(virDomainPtr d, int *pid, unsigned long long *start)
{
	g_autofree char *meta = virt_domain_metadata(d, FLEET_META_URI);
	const char *p, *s;

	if (!meta)
		return false;
	p = strstr(meta, "pid='");
	s = strstr(meta, "start='");
	if (!p)
		p = strstr(meta, "pid=\"");
	if (!s)
		s = strstr(meta, "start=\"");
	if (!p || !s)
		return false;
	*pid = atoi(p + 5);
	*start = g_ascii_strtoull(s + 7, NULL, 10);
	return true;
}

void fleet_reap_stale(struct fleet *f)
{
	g_autoptr(GPtrArray) doms = NULL;

	if (virt_domains_list(f->conn, FLEET_NAME_PREFIX, &doms) < 0) {
		pc_warn("cannot look for stale guests: %s", pc_errmsg());
		return;
	}
	for (unsigned int i = 0; i < doms->len; i++) {
		virDomainPtr d = doms->pdata[i];
		int pid;
		unsigned long long start;

		if (!domain_owner(d, &pid, &start))
			continue; /* not a running fleet guest: not ours to judge */
		if (pid > 0 && reaper_proc_starttime(pid) == start && start != 0)
			continue; /* its harness is alive */
		pc_warn("destroying %s left by dead run (pid %d)", virt_domain_name(d), pid);
		if (virt_domain_destroy(d) < 0)
			pc_warn("%s", pc_errmsg());
	}
}

/* A saved image <name>.<pid>-<start>.save in dir whose harness is gone: a
 * killed run's. */
static void reap_saves_in(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *e;

	while (d && (e = g_dir_read_name(d))) {
		const char *dot, *suffix = g_str_has_suffix(e, FLEET_SAVE_SUFFIX) ?
			e + strlen(e) - strlen(FLEET_SAVE_SUFFIX) : NULL;
		g_autofree char *owner = NULL, *path = NULL;
		unsigned long long start = 0;
		int pid = 0;
		char tail;

		if (!suffix || !g_str_has_prefix(e, FLEET_NAME_PREFIX))
			continue;
		owner = g_strndup(e, suffix - e);
		dot = strrchr(owner, '.');
		if (!dot || sscanf(dot + 1, "%d-%llu%c", &pid, &start, &tail) != 2)
			continue;
		if (pid > 0 && start != 0 && reaper_proc_starttime(pid) == start)
			continue; /* its harness is alive */
		path = g_build_filename(dir, e, NULL);
		pc_warn("removing %s left by a dead run (pid %d)", path, pid);
		unlink(path);
	}
}

/* Saved images live in run directories: this one (a resumed run's) and its
 * siblings (the other runs under the same results directory). */
void fleet_reap_saves(struct fleet *f)
{
	g_autofree char *parent = g_path_get_dirname(f->run_dir);
	g_autoptr(GDir) d = g_dir_open(parent, 0, NULL);
	const char *e;

	reap_saves_in(f->run_dir);
	while (d && (e = g_dir_read_name(d))) {
		g_autofree char *sub = g_build_filename(parent, e, NULL);

		if (strcmp(sub, f->run_dir) && g_file_test(sub, G_FILE_TEST_IS_DIR) &&
		    !g_file_test(sub, G_FILE_TEST_IS_SYMLINK))
			reap_saves_in(sub);
	}
}

/* libvirtd died under us: AUTODESTROY was a promise of the lost connection,
 * and a restarted libvirtd takes the running guests back. Destroy ours
 * (this fleet's names, started by this process) through a new connection,
 * waiting a while for libvirtd to return; else the next run's
 * fleet_reap_stale() is all that is left. */
void fleet_destroy_orphans(struct fleet *f)
{
	int64_t end = g_get_monotonic_time() + FLEET_RECONNECT_US;
	unsigned long long self = reaper_proc_starttime(getpid());
	g_autoptr(GPtrArray) doms = NULL;
	virConnectPtr c = NULL;

	while (virt_connect(f->uri, &c) < 0) {
		if (g_get_monotonic_time() >= end) {
			pc_warn("libvirt connection lost and %s not back within %d s: the guests of "
				"run %s are left to the next run's cleanup", f->uri,
				(int)(FLEET_RECONNECT_US / G_USEC_PER_SEC), f->run_id);
			return;
		}
		g_usleep(200000);
	}
	if (virt_domains_list(c, FLEET_NAME_PREFIX, &doms) < 0) {
		pc_warn("cannot look for the guests of run %s: %s", f->run_id, pc_errmsg());
		virt_close(c);
		return;
	}
	for (unsigned int i = 0; i < doms->len; i++) {
		virDomainPtr d = doms->pdata[i];
		const char *name = virt_domain_name(d);
		bool mine = false;
		int pid;
		unsigned long long start;

		for (unsigned int k = 0; k < f->n && !mine; k++)
			mine = !strcmp(name, f->g[k].name);
		if (!mine || !domain_owner(d, &pid, &start) || pid != (int)getpid() || start != self)
			continue;
		pc_info("%s: destroyed through a new connection (the first one was lost)", name);
		if (virt_domain_destroy(d) < 0)
			pc_warn("%s", pc_errmsg());
	}
	virt_close(c); /* the domains in doms hold their own references */
}

/* ---- the watcher: what a SIGKILLed harness leaves ----
 *
 * AUTODESTROY ties a domain that virDomainCreateXML started to the
 * harness's connection, but libvirt has no such flag for
 * virDomainRestoreFlags: a restored guest outlives a harness killed with
 * SIGKILL. So each fleet starts a watcher, a copy of this same executable
 * (fleet_watcher_ctor runs before main) holding one end of a socket pair as
 * its stdin. fleet_free() says "q" on it after its own cleanup; EOF without
 * "q" means the harness died, and the watcher destroys the domains of this
 * run that the dead harness owned (their <pc:fleet pid= start=>), its
 * saved images and its disk guests' overlays (unless keep_disks). It
 * ignores the terminal's signals: the harness handles them and then says
 * "q". */

static void watcher_destroy(const char *uri, const char *prefix, int pid, unsigned long long start,
			    const char *run_dir, const char *disk_dir, unsigned int guests)
{
	int64_t t0 = g_get_monotonic_time(), last_seen = t0;
	virConnectPtr c = NULL;

	if (virt_connect(uri, &c) < 0) {
		pc_warn("watcher of pid %d: %s: the next run cleans up", pid, pc_errmsg());
		return;
	}
	/* a restore the harness began may land after its death: look again */
	while (g_get_monotonic_time() - last_seen < FLEET_WATCHER_LINGER_US) {
		g_autoptr(GPtrArray) doms = NULL;

		if (virt_domains_list(c, prefix, &doms) < 0)
			break;
		for (unsigned int i = 0; i < doms->len; i++) {
			virDomainPtr d = doms->pdata[i];
			int owner;
			unsigned long long owner_start;

			if (!domain_owner(d, &owner, &owner_start) || owner != pid || owner_start != start)
				continue;
			last_seen = g_get_monotonic_time();
			if (virt_domain_destroy(d) < 0)
				pc_warn("%s", pc_errmsg());
			else
				pc_warn("destroyed %s: its harness (pid %d) was killed", virt_domain_name(d), pid);
		}
		g_usleep(300000);
	}
	virt_close(c);
	reap_saves_in(run_dir);
	/* disk guests' overlays (fleet_guest_disk()), unless the run keeps them */
	for (unsigned int i = 0; *disk_dir && i < guests; i++) {
		g_autofree char *path = g_strdup_printf("%s/%s%u.qcow2", disk_dir, prefix, i);

		if (unlink(path) == 0)
			pc_warn("removed %s: its harness (pid %d) was killed", path, pid);
	}
}

__attribute__((constructor)) static void fleet_watcher_ctor(void)
{
	const char *env = getenv(FLEET_WATCHER_ENV);
	g_auto(GStrv) part = NULL;
	char c;
	ssize_t n;

	if (!env)
		return;
	/* uri, name prefix, pid, start, run dir, overlay dir (or ""), guests */
	part = g_strsplit(env, "\n", 7);
	if (g_strv_length(part) != 7)
		_exit(2);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	do
		n = read(STDIN_FILENO, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 && c == 'q')
		_exit(0);
	alarm(FLEET_WATCHER_MAX_S); /* a libvirtd that does not answer */
	watcher_destroy(part[0], part[1], atoi(part[2]), g_ascii_strtoull(part[3], NULL, 10), part[4],
			part[5], (unsigned int)atoi(part[6]));
	_exit(0);
}

/* Starts the watcher of f; -1 in f->watcher_fd (and a warning) when it
 * cannot: the run goes on, with the next run's cleanup as before. */
void fleet_watcher_start(struct fleet *f)
{
	g_autofree char *spec = NULL, *prefix = g_strdup_printf(FLEET_NAME_PREFIX "%s-", f->run_id);
	g_autofree char *disk_dir = f->disk && !f->cfg.keep_disks ? g_path_get_dirname(f->disk)
								   : g_strdup("");
	g_auto(GStrv) envp = g_get_environ();
	g_autoptr(GError) err = NULL;
	/* argv[0] a name ps and pkill -f can find: "pmucanary-watcher RUN_ID" */
	char *argv[] = { "/proc/self/exe", "pmucanary-watcher", f->run_id, NULL };
	int sv[2];

	f->watcher_fd = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		pc_warn("no watcher for run %s: %s", f->run_id, g_strerror(errno));
		return;
	}
	spec = g_strdup_printf("%s\n%s\n%d\n%llu\n%s\n%s\n%u", f->uri, prefix, (int)getpid(),
			       reaper_proc_starttime(getpid()), f->run_dir, disk_dir, f->n);
	envp = g_environ_setenv(envp, FLEET_WATCHER_ENV, spec, TRUE);
	/* without G_SPAWN_DO_NOT_REAP_CHILD GLib forks twice: the watcher is
	 * not our child, and trace_run()'s waitpid(-1) never sees it */
	if (!g_spawn_async_with_pipes_and_fds(NULL, (const char *const *)argv,
					      (const char *const *)envp,
					      G_SPAWN_FILE_AND_ARGV_ZERO | G_SPAWN_STDOUT_TO_DEV_NULL,
					      NULL, NULL, sv[1], -1, -1, NULL, NULL, 0, NULL,
					      NULL, NULL, NULL, &err)) {
		pc_warn("no watcher for run %s: %s", f->run_id, err->message);
		close(sv[0]);
		close(sv[1]);
		return;
	}
	close(sv[1]);
	f->watcher_fd = sv[0];
}

/* f cleaned up after itself: its watcher goes without looking. */
void fleet_watcher_stop(struct fleet *f)
{
	if (f->watcher_fd < 0)
		return;
	if (send(f->watcher_fd, "q", 1, MSG_NOSIGNAL) != 1)
		pc_debug("watcher of run %s: %s", f->run_id, g_strerror(errno));
	close(f->watcher_fd);
	f->watcher_fd = -1;
}
