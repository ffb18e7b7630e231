/* What every place shares (place.h): the backends by name, their options,
 * an attempt's result, evidence from a file's tail. */
#include "place.h"

#include "fleet.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PLACE_TICK_US 200000

static const struct place_ops *const backends[] = { &place_labhost_ops, &place_lava_ops };

const struct place_ops *place_backend(const char *name)
{
	for (size_t i = 0; name && i < G_N_ELEMENTS(backends); i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}

const char *place_backend_names(void)
{
	static char names[128];

	if (names[0])
		return names;
	for (size_t i = 0; i < G_N_ELEMENTS(backends); i++) {
		if (i)
			g_strlcat(names, ", ", sizeof(names));
		g_strlcat(names, backends[i]->name, sizeof(names));
	}
	return names;
}

void place_attempt_clear(struct place_attempt *a)
{
	g_free(a->evidence);
	g_free(a->run_json);
	memset(a, 0, sizeof(*a));
}

const char *place_option(const char *const *options, const char *key)
{
	size_t n = strlen(key);

	for (; options && *options; options++)
		if (!strncmp(*options, key, n) && (*options)[n] == '=')
			return *options + n + 1;
	return NULL;
}

int place_options_check(const struct place_ops *ops, const char *const *options,
			const char *const *known)
{
	g_autoptr(GString) keys = g_string_new(NULL);

	for (const char *const *k = known; *k; k++)
		g_string_append_printf(keys, "%s%s", keys->len ? ", " : "", *k);
	for (size_t i = 0; options && options[i]; i++) {
		const char *o = options[i], *eq = strchr(o, '=');
		const char *const *k;

		if (!eq || eq == o)
			return pc_fail(EINVAL, "--place-opt %s: expected KEY=VALUE", o);
		for (k = known; *k; k++)
			if (strlen(*k) == (size_t)(eq - o) && !strncmp(*k, o, eq - o))
				break;
		if (!*k)
			return pc_fail(EINVAL, "--place-opt %s: the place %s takes no option '%.*s' "
				       "(it takes: %s)", o, ops->name, (int)(eq - o), o,
				       keys->len ? keys->str : "none");
		for (size_t j = 0; j < i; j++)
			if (!strncmp(options[j], o, eq - o + 1))
				return pc_fail(EINVAL, "--place-opt %.*s given twice", (int)(eq - o), o);
	}
	return 0;
}

int place_write_text(const char *path, const char *text)
{
	g_autoptr(GError) err = NULL;

	if (!g_file_set_contents_full(path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, &err))
		return pc_fail(EIO, "%s", err->message);
	return 0;
}

int place_write_json(const char *path, json_t *j)
{
	g_autofree char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	g_autofree char *line = NULL;

	if (!text)
		return pc_fail(ENOMEM, "%s: cannot encode", path);
	line = g_strconcat(text, "\n", NULL);
	return place_write_text(path, line);
}

char *place_file_tail(const char *path, size_t max)
{
	g_autofree char *text = NULL;
	gsize len = 0;
	GString *out;

	if (!g_file_get_contents(path, &text, &len, NULL))
		return g_strdup_printf("(%s: unreadable)", path);
	out = g_string_new(NULL);
	for (gsize i = len > max ? len - max : 0; i < len; i++) {
		char c = text[i];

		if (c == '\r')
			continue;
		g_string_append_c(out, (c == '\n' || (c >= 0x20 && c < 0x7f)) ? c : '?');
	}
	return g_string_free(out, FALSE);
}

const char *place_kvm_vendor(bool tcg)
{
	g_autofree char *cpuinfo = NULL;

	if (tcg)
		return "amd";
	if (!g_file_get_contents("/proc/cpuinfo", &cpuinfo, NULL, NULL))
		return NULL;
	if (strstr(cpuinfo, "AuthenticAMD") || strstr(cpuinfo, "HygonGenuine"))
		return "amd";
	if (strstr(cpuinfo, "GenuineIntel"))
		return "intel";
	return NULL;
}

static void child_setup(gpointer data)
{
	(void)data;
	setpgid(0, 0);
}

int place_run_logged(char **argv, const char *log, gint64 deadline_us, unsigned int grace_s,
		     int *status, bool *stopped, bool *interrupted)
{
	g_autoptr(GError) err = NULL;
	GPid pid;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	gint64 stop_at = 0;

	*stopped = *interrupted = false;
	*status = 0;
	if (fd < 0)
		return pc_fail(errno, "%s: %s", log, g_strerror(errno));
	if (!g_spawn_async_with_pipes_and_fds(NULL, (const char *const *)argv, NULL,
					      G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD,
					      child_setup, NULL, -1, fd, fd, NULL, NULL, 0, &pid,
					      NULL, NULL, NULL, &err)) {
		close(fd);
		return pc_fail(EIO, "%s: %s", argv[0], err->message);
	}
	close(fd);
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return pc_fail(errno, "waitpid %s: %s", argv[0], g_strerror(errno));
		if (!stop_at && (fleet_signal_pending() ||
				 (deadline_us && g_get_monotonic_time() > deadline_us))) {
			*interrupted = fleet_signal_pending() != 0;
			*stopped = true;
			kill(pid, SIGTERM);
			stop_at = g_get_monotonic_time() + (gint64)grace_s * G_USEC_PER_SEC;
		}
		if (stop_at && g_get_monotonic_time() > stop_at) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			stop_at = G_MAXINT64;
		}
		g_usleep(PLACE_TICK_US);
	}
	return 0;
}
