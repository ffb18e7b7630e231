/* The registry of guest pool backends and the calls every one shares
 * (pool.h). */
#include "pool.h"

#include "log.h"

#include <errno.h>
#include <string.h>

static const struct pool_ops *backends[POOL_BACKENDS_MAX] = { &pool_libvirt_ops };

static const char *const failure_names[POOL_FAILURE_COUNT] = {
	[POOL_FAILURE_NONE] = "none",
	[POOL_FAILURE_BOOT] = "boot",
	[POOL_FAILURE_INFRA] = "infra",
};

const char *pool_failure_name(enum pool_failure f)
{
	return (unsigned int)f < POOL_FAILURE_COUNT ? failure_names[f] : "?";
}

static bool name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n < 1 || n > POOL_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_islower(name[i]) && !g_ascii_isdigit(name[i]) && name[i] != '_' &&
		    name[i] != '-')
			return false;
	return true;
}

int pool_register(const struct pool_ops *ops)
{
	size_t i;

	if (!ops || !name_ok(ops->name))
		return pc_fail(EINVAL, "guest pool name '%s': use 1..%d of [a-z0-9_-]",
			       ops && ops->name ? ops->name : "", POOL_NAME_MAX);
	if (!ops->open || !ops->close || !ops->start || !ops->mark || !ops->judge ||
	    !ops->restart_harmed || !ops->selftest || !ops->stop)
		return pc_fail(EINVAL, "guest pool %s: open, close, start, mark, judge, "
			       "restart_harmed, selftest and stop are required", ops->name);
	if (pool_backend(ops->name))
		return pc_fail(EEXIST, "guest pool %s is registered already", ops->name);
	for (i = 0; i < G_N_ELEMENTS(backends) && backends[i]; i++)
		;
	if (i == G_N_ELEMENTS(backends))
		return pc_fail(ENOSPC, "guest pool %s: %d backends at most", ops->name,
			       POOL_BACKENDS_MAX);
	backends[i] = ops;
	return 0;
}

const struct pool_ops *pool_backend(const char *name)
{
	for (size_t i = 0; name && i < G_N_ELEMENTS(backends) && backends[i]; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}

char *pool_backend_names(void)
{
	GString *s = g_string_new(NULL);

	for (size_t i = 0; i < G_N_ELEMENTS(backends) && backends[i]; i++)
		g_string_append_printf(s, "%s%s", i ? ", " : "", backends[i]->name);
	return g_string_free(s, FALSE);
}

int pool_open(const char *name, const struct pool_params *p, struct pool **out)
{
	const struct pool_ops *ops = pool_backend(name);
	struct pool *pl;
	int e;

	*out = NULL;
	if (!ops) {
		g_autofree char *known = pool_backend_names();

		return pc_fail(EINVAL, "no guest pool named '%s' (known: %s)", name ? name : "",
			       known);
	}
	pl = g_new0(struct pool, 1);
	pl->ops = ops;
	if ((e = ops->open(p, &pl->priv))) {
		g_free(pl);
		return e;
	}
	*out = pl;
	return 0;
}

void pool_free(struct pool *pl)
{
	if (!pl)
		return;
	pl->ops->close(pl->priv);
	g_free(pl);
}
