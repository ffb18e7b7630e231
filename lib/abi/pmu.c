#include "pmu.h"

#include "infile.h"
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void pmu_event_free(void *p)
{
	struct pmu_event *e = p;

	if (!e)
		return;
	g_free(e->name);
	g_free(e->terms);
	g_free(e);
}

static void pmu_format_free(void *p)
{
	struct pmu_format *f = p;

	if (!f)
		return;
	g_free(f->name);
	g_free(f->bits);
	g_free(f);
}

static void pmu_free(void *p)
{
	struct pmu *pmu = p;

	if (!pmu)
		return;
	g_free(pmu->name);
	if (pmu->events)
		g_ptr_array_unref(pmu->events);
	if (pmu->formats)
		g_ptr_array_unref(pmu->formats);
	if (pmu->caps)
		g_hash_table_unref(pmu->caps);
	g_free(pmu);
}

void pmu_set_free(struct pmu_set *set)
{
	if (!set)
		return;
	g_free(set->root);
	if (set->pmus)
		g_ptr_array_unref(set->pmus);
	g_free(set);
}

/* A sysfs attribute is a small regular file: a FIFO or a device in a
 * --sysfs tree is refused at once (-EINVAL naming it), never read until
 * it ends; a missing one is -ENOENT. */
#define PMU_FILE_MAX (64 * 1024)

static int read_trimmed(const char *path, char **out)
{
	char *text = NULL;
	int r = infile_read_limit(path, PMU_FILE_MAX, true, "sysfs file", &text, NULL);

	if (r)
		return r;
	*out = g_strstrip(text);
	return 0;
}

/* The entries of dir sorted by name; a missing directory is empty (not
 * every PMU has events/ or caps/). */
static GPtrArray *dir_names(const char *dir)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *n;

	if (!d)
		return names;
	while ((n = g_dir_read_name(d)))
		g_ptr_array_add(names, g_strdup(n));
	return names;
}

static int cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* events/ also holds perf's "<event>.scale", ".unit", ".per-pkg" and
 * ".snapshot" companions: they describe an event, they are not events. */
static bool event_file_is_companion(const char *name)
{
	static const char *const suffixes[] = { ".scale", ".unit", ".per-pkg", ".snapshot" };

	for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++)
		if (g_str_has_suffix(name, suffixes[i]))
			return true;
	return false;
}

static int pmu_load(const char *root, const char *name, struct pmu **out)
{
	g_autofree char *dir = g_build_filename(root, name, NULL);
	g_autofree char *type_path = g_build_filename(dir, "type", NULL);
	g_autofree char *type_text = NULL;
	struct pmu *pmu;
	guint64 type;
	int ret;

	ret = read_trimmed(type_path, &type_text);
	if (ret)
		return ret;
	/* The kernel writes %d and perf reads it with "%u": decimal only, so
	 * "010" is ten, and "-18446744073709551615" is no type 1. */
	if (!*type_text || strspn(type_text, "0123456789") != strlen(type_text) ||
	    !g_ascii_string_to_unsigned(type_text, 10, 0, UINT32_MAX, &type, NULL))
		return pc_fail(EINVAL, "%s: not a PMU type number (0..%u): '%s'", type_path,
			       UINT32_MAX, type_text);

	pmu = g_new0(struct pmu, 1);
	pmu->name = g_strdup(name);
	pmu->type = (uint32_t)type;
	pmu->events = g_ptr_array_new_with_free_func(pmu_event_free);
	pmu->formats = g_ptr_array_new_with_free_func(pmu_format_free);
	pmu->caps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

	static const char *const subdirs[] = { "events", "format", "caps" };
	for (size_t s = 0; s < G_N_ELEMENTS(subdirs); s++) {
		g_autofree char *sub = g_build_filename(dir, subdirs[s], NULL);
		g_autoptr(GPtrArray) names = dir_names(sub);

		g_ptr_array_sort(names, cmp_str_ptr);
		for (size_t i = 0; i < names->len; i++) {
			const char *n = names->pdata[i];
			g_autofree char *path = g_build_filename(sub, n, NULL);
			char *text = NULL;

			if (s == 0 && event_file_is_companion(n))
				continue;
			if (g_file_test(path, G_FILE_TEST_IS_DIR))
				continue;
			ret = read_trimmed(path, &text);
			if (ret) {
				pmu_free(pmu);
				return ret;
			}
			if (s == 0) {
				struct pmu_event *e = g_new0(struct pmu_event, 1);
				e->name = g_strdup(n);
				e->terms = text;
				g_ptr_array_add(pmu->events, e);
			} else if (s == 1) {
				struct pmu_format *f = g_new0(struct pmu_format, 1);
				if (!strchr(text, ':')) {
					g_free(f);
					pmu_free(pmu);
					ret = pc_fail(EINVAL, "%s: malformed format '%s' (want config:0-7)",
						      path, text);
					g_free(text);
					return ret;
				}
				f->name = g_strdup(n);
				f->bits = text;
				g_ptr_array_add(pmu->formats, f);
			} else {
				g_hash_table_insert(pmu->caps, g_strdup(n), text);
			}
		}
	}
	*out = pmu;
	return 0;
}

static int cmp_pmu(const void *a, const void *b)
{
	const struct pmu *x = *(struct pmu *const *)a, *y = *(struct pmu *const *)b;

	return strcmp(x->name, y->name);
}

int pmu_set_load(const char *root, struct pmu_set **out)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(pmu_set) set = NULL;
	GDir *d;
	const char *n;

	*out = NULL;
	if (!root)
		root = PMU_SYSFS_ROOT;
	d = g_dir_open(root, 0, &err);
	if (!d)
		return pc_fail(ENOENT, "%s: %s", root, err->message);
	set = g_new0(struct pmu_set, 1);
	set->root = g_strdup(root);
	set->pmus = g_ptr_array_new_with_free_func(pmu_free);
	while ((n = g_dir_read_name(d))) {
		struct pmu *pmu = NULL;
		int ret = pmu_load(root, n, &pmu);

		if (ret) {
			g_dir_close(d);
			return ret;
		}
		g_ptr_array_add(set->pmus, pmu);
	}
	g_dir_close(d);
	g_ptr_array_sort(set->pmus, cmp_pmu);
	*out = g_steal_pointer(&set);
	return 0;
}

const struct pmu *pmu_set_find(const struct pmu_set *set, const char *name)
{
	if (!set || !name)
		return NULL;
	for (size_t i = 0; i < set->pmus->len; i++) {
		const struct pmu *p = set->pmus->pdata[i];
		if (strcmp(p->name, name) == 0)
			return p;
	}
	return NULL;
}

const struct pmu *pmu_set_find_type(const struct pmu_set *set, uint32_t type)
{
	if (!set)
		return NULL;
	for (size_t i = 0; i < set->pmus->len; i++) {
		const struct pmu *p = set->pmus->pdata[i];
		if (p->type == type)
			return p;
	}
	return NULL;
}

const struct pmu_event *pmu_find_event(const struct pmu *pmu, const char *name)
{
	if (!pmu || !name)
		return NULL;
	for (size_t i = 0; i < pmu->events->len; i++) {
		const struct pmu_event *e = pmu->events->pdata[i];
		if (strcmp(e->name, name) == 0)
			return e;
	}
	return NULL;
}

const struct pmu_format *pmu_find_format(const struct pmu *pmu, const char *name)
{
	if (!pmu || !name)
		return NULL;
	for (size_t i = 0; i < pmu->formats->len; i++) {
		const struct pmu_format *f = pmu->formats->pdata[i];
		if (strcmp(f->name, name) == 0)
			return f;
	}
	return NULL;
}

/* "config:0-7,32-35": deposit value's low bits into the format's bits,
 * lowest first, like perf's pmu_format_value(). perf keeps a format as a
 * bitmap (DECLARE_BITMAP(bits, 64)): ranges listed out of order or
 * overlapping give the same bits as sorted and merged ones. */
int pmu_format_apply(const struct pmu_format *f, uint64_t value, uint64_t config[3])
{
	const char *colon = strchr(f->bits, ':');
	g_autofree char *field = NULL;
	g_auto(GStrv) ranges = NULL;
	uint64_t mask = 0;
	int idx, vbit = 0;

	if (!colon)
		return pc_fail(EINVAL, "format %s: malformed '%s'", f->name, f->bits);
	field = g_strndup(f->bits, colon - f->bits);
	if (strcmp(field, "config") == 0)
		idx = 0;
	else if (strcmp(field, "config1") == 0)
		idx = 1;
	else if (strcmp(field, "config2") == 0)
		idx = 2;
	else
		return pc_fail(EINVAL, "format %s: unsupported field '%s'", f->name, field);
	ranges = g_strsplit(colon + 1, ",", -1);
	for (char **r = ranges; *r; r++) {
		/* Bits as perf's format lexer reads them (pmu.l: num [0-9]+):
		 * N or N-M, decimal, 0..63; no sign or space. */
		size_t len = strspn(*r, "0123456789");
		g_autofree char *lo_text = g_strndup(*r, len);
		const char *rest = *r + len;
		guint64 lo, hi;

		if (!g_ascii_string_to_unsigned(lo_text, 10, 0, 63, &lo, NULL))
			return pc_fail(EINVAL, "format %s: malformed '%s'", f->name, f->bits);
		hi = lo;
		if (*rest == '-' && !g_ascii_string_to_unsigned(rest + 1, 10, 0, 63, &hi, NULL))
			return pc_fail(EINVAL, "format %s: malformed '%s'", f->name, f->bits);
		if ((*rest && *rest != '-') || (*rest == '-' && !g_ascii_isdigit(rest[1])) || hi < lo)
			return pc_fail(EINVAL, "format %s: malformed '%s'", f->name, f->bits);
		for (guint64 b = lo; b <= hi; b++)
			mask |= 1ULL << b;
	}
	for (int b = 0; b < 64; b++) {
		if (!((mask >> b) & 1))
			continue;
		if ((value >> vbit) & 1)
			config[idx] |= 1ULL << b;
		vbit++;
	}
	if (vbit < 64 && (value >> vbit))
		return pc_fail(ERANGE, "value 0x%" PRIx64 " too big for format %s (%s)", value,
			       f->name, f->bits);
	return 0;
}
