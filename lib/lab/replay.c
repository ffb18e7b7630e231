/* Replay kernels; see replay.h. */
#include "replay.h"

#include "image.h"
#include "infile.h"
#include "log.h"

#include <errno.h>
#include <string.h>

void replay_free(struct replay *r)
{
	if (!r)
		return;
	g_free(r->name);
	g_free(r->path);
	g_free(r->replays);
	g_free(r->rule);
	g_free(r->harm);
	g_free(r);
}

static bool name_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!g_ascii_islower(*s) && !g_ascii_isdigit(*s) && *s != '-')
			return false;
	return true;
}

int replay_read(const char *path, struct replay **out)
{
	g_autofree char *data = NULL, *base = g_path_get_basename(path);
	g_autoptr(replay) r = g_new0(struct replay, 1);
	g_auto(GStrv) lines = NULL;
	struct {
		const char *key;
		char **dst;
	} fields[] = {
		{ "Replay", &r->name }, { "Replays", &r->replays },
		{ "Rule", &r->rule },   { "Harm", &r->harm },
	};
	int e;
	guint i;

	if ((e = infile_read(path, INFILE_CONFIG, &data, NULL)))
		return e;
	lines = g_strsplit(data, "\n", -1);
	if (!lines[0] || strcmp(lines[0], REPLAY_HEADER_FIRST))
		return pc_fail(EINVAL, "%s:1: not a replay patch (its first line is not \"%s\")",
			       path, REPLAY_HEADER_FIRST);
	for (i = 1; lines[i] && lines[i][0]; i++) {
		const char *colon = strstr(lines[i], ": ");
		g_autofree char *key = NULL;
		size_t f;

		if (!colon)
			return pc_fail(EINVAL, "%s:%u: not a \"Field: value\" line", path, i + 1);
		key = g_strndup(lines[i], colon - lines[i]);
		for (f = 0; f < G_N_ELEMENTS(fields); f++)
			if (!strcmp(key, fields[f].key))
				break;
		if (f == G_N_ELEMENTS(fields))
			return pc_fail(EINVAL, "%s:%u: %s: unknown field (Replay, Replays, Rule, "
				       "Harm)", path, i + 1, key);
		if (*fields[f].dst)
			return pc_fail(EINVAL, "%s:%u: %s: given twice", path, i + 1, key);
		*fields[f].dst = g_strdup(g_strstrip((char *)colon + 2));
		if (!**fields[f].dst)
			return pc_fail(EINVAL, "%s:%u: %s: empty", path, i + 1, key);
	}
	for (size_t f = 0; f < G_N_ELEMENTS(fields); f++)
		if (!*fields[f].dst)
			return pc_fail(EINVAL, "%s:%u: %s: missing from the header", path, i + 1,
				       fields[f].key);
	if (!g_str_has_suffix(base, ".patch") ||
	    strlen(base) != strlen(r->name) + strlen(".patch") ||
	    strncmp(base, r->name, strlen(r->name)))
		return pc_fail(EINVAL, "%s:2: Replay: \"%s\" is not the file's name", path, r->name);
	if (!name_ok(r->name) || !strcmp(r->name, REPLAY_STOCK))
		return pc_fail(EINVAL, "%s:2: Replay: \"%s\": a name is 1..64 of [a-z0-9-], not "
			       "\"" REPLAY_STOCK "\"", path, r->name);
	if (!strstr(data, "\n--- ") || !strstr(data, "\n+++ "))
		return pc_fail(EINVAL, "%s: no unified diff after the header", path);
	r->path = g_strdup(path);
	*out = g_steal_pointer(&r);
	return 0;
}

char *replay_dir(void)
{
	g_autofree char *gi = image_guest_images_dir();

	return gi ? g_build_filename(gi, "replay", NULL) : NULL;
}

static gint by_name(gconstpointer a, gconstpointer b)
{
	const struct replay *x = *(struct replay *const *)a, *y = *(struct replay *const *)b;

	return strcmp(x->name, y->name);
}

int replay_list(const char *dir, GPtrArray **out)
{
	g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func((GDestroyNotify)replay_free);
	g_autoptr(GDir) d = NULL;
	g_autoptr(GError) gerr = NULL;
	const char *ent;

	if (!dir || !(d = g_dir_open(dir, 0, &gerr)))
		return pc_fail(ENOENT, "replay kernels: cannot read %s: %s (make all puts the "
			       "patches beside pmucanary)", dir ? dir : "guest-images/replay",
			       gerr ? gerr->message : "no directory");
	while ((ent = g_dir_read_name(d))) {
		g_autofree char *path = NULL;
		struct replay *r = NULL;
		int e;

		if (!g_str_has_suffix(ent, ".patch"))
			continue;
		path = g_build_filename(dir, ent, NULL);
		if ((e = replay_read(path, &r)))
			return e;
		g_ptr_array_add(list, r);
	}
	g_ptr_array_sort(list, by_name);
	*out = g_steal_pointer(&list);
	return 0;
}

/* "stock, a, b" (the names there are), for an error. */
static char *names_of(GPtrArray *list)
{
	g_autoptr(GString) s = g_string_new(REPLAY_STOCK);

	for (guint i = 0; i < list->len; i++)
		g_string_append_printf(s, ", %s", ((struct replay *)list->pdata[i])->name);
	return g_string_free(g_steal_pointer(&s), FALSE);
}

int replay_patches(const char *dir, const char *list, GPtrArray **paths)
{
	g_autoptr(GPtrArray) all = NULL, out = g_ptr_array_new_with_free_func(g_free);
	g_auto(GStrv) names = NULL;
	g_autofree char *have = NULL;
	int e;

	if ((e = replay_list(dir, &all)))
		return e;
	have = names_of(all);
	if (!list || !*list)
		return pc_fail(EINVAL, "--kernel " REPLAY_PREFIX ": name a replay (%s)", have);
	names = g_strsplit(list, "+", -1);
	if (!strcmp(list, REPLAY_STOCK)) {
		*paths = g_steal_pointer(&out);
		return 0;
	}
	if (g_strv_length(names) > REPLAY_MAX_PATCHES)
		return pc_fail(EINVAL, "--kernel " REPLAY_PREFIX "%s: at most %d replays in one kernel",
			       list, REPLAY_MAX_PATCHES);
	for (char **n = names; *n; n++) {
		const struct replay *found = NULL;

		if (!strcmp(*n, REPLAY_STOCK))
			return pc_fail(EINVAL, "--kernel " REPLAY_PREFIX "%s: \"" REPLAY_STOCK "\" is the "
				       "kernel without replays: it stands alone", list);
		for (char **m = names; m < n; m++)
			if (!strcmp(*m, *n))
				return pc_fail(EINVAL, "--kernel " REPLAY_PREFIX "%s: %s given twice",
					       list, *n);
		for (guint i = 0; i < all->len; i++)
			if (!strcmp(((struct replay *)all->pdata[i])->name, *n))
				found = all->pdata[i];
		if (!found)
			return pc_fail(EINVAL, "--kernel " REPLAY_PREFIX "%s: no replay \"%s\" (there "
				       "are: %s)", list, *n, have);
		g_ptr_array_add(out, g_strdup(found->path));
	}
	*paths = g_steal_pointer(&out);
	return 0;
}

int replay_kernel(const char *list, char **image)
{
	g_autofree char *dir = replay_dir(), *who = NULL;
	g_autoptr(GPtrArray) paths = NULL;
	int e;

	if ((e = replay_patches(dir, list, &paths)))
		return e;
	g_ptr_array_add(paths, NULL);
	who = g_strdup_printf("replay kernel %s", list);
	return image_build_kernel(who, "lab-host.config", (const char *const *)paths->pdata, image);
}
