/* The host fingerprint: what the kernel, CPU, PMUs and virtualization stack
 * of this host are, so that a result file says where it was measured. */
#include "fingerprint.h"

#include "log.h"
#include "perfev.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <libvirt/libvirt.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define NT_GNU_BUILD_ID_TYPE 3

/* A file's trimmed contents, or NULL. */
static char *file_text(const char *path)
{
	char *text = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return NULL;
	return g_strstrip(text);
}

static json_t *json_string_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *fingerprint_number(const char *text, long long min, long long max)
{
	gint64 v;

	/* Decimal as the kernel prints it: base 0 read cpuinfo's "010" as
	 * octal, strtol read "abc" as 0 and saturated what overflowed. */
	if (!text || !(g_ascii_isdigit(*text) || (*text == '-' && g_ascii_isdigit(text[1]))) ||
	    !g_ascii_string_to_signed(text, 10, min, max, &v, NULL))
		return json_null();
	return json_integer(v);
}

static json_t *int_file(const char *path, long long min, long long max)
{
	g_autofree char *text = file_text(path);

	return fingerprint_number(text, min, max);
}

char *fingerprint_build_id(const unsigned char *notes, size_t len)
{
	size_t off = 0;

	while (off + 12 <= len) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off;

		memcpy(&namesz, notes + off, 4);
		memcpy(&descsz, notes + off + 4, 4);
		memcpy(&type, notes + off + 8, 4);
		name_off = off + 12;
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (desc_off + descsz > len || desc_off < name_off)
			return NULL;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    memcmp(notes + name_off, "GNU", 4) == 0) {
			GString *hex = g_string_new(NULL);

			for (uint32_t i = 0; i < descsz; i++)
				g_string_append_printf(hex, "%02x", notes[desc_off + i]);
			return g_string_free(hex, FALSE);
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
	return NULL;
}

static json_t *kernel_json(void)
{
	json_t *k = json_object();
	struct utsname u;
	g_autofree char *cmdline = file_text("/proc/cmdline");
	g_autofree char *notes = NULL;
	g_autofree char *build_id = NULL;
	size_t len = 0;

	if (uname(&u) == 0) {
		json_object_set_new(k, "release", json_string(u.release));
		json_object_set_new(k, "version", json_string(u.version));
		json_object_set_new(k, "machine", json_string(u.machine));
	} else {
		json_object_set_new(k, "release", json_null());
		json_object_set_new(k, "version", json_null());
	}
	json_object_set_new(k, "cmdline", json_string_or_null(cmdline));
	if (g_file_get_contents("/sys/kernel/notes", &notes, &len, NULL))
		build_id = fingerprint_build_id((const unsigned char *)notes, len);
	json_object_set_new(k, "build_id", json_string_or_null(build_id));
	return k;
}

json_t *fingerprint_cpu_json(const char *cpuinfo_path)
{
	/* max 0: a string; else a decimal number up to max (family 0xf plus
	 * the extended family, model with the extended model, stepping). */
	static const struct { const char *key, *name; long long max; } fields[] = {
		{ "vendor_id", "vendor", 0 },
		{ "cpu family", "family", 0xffff },
		{ "model", "model", 0xffff },
		{ "stepping", "stepping", 0xff },
		{ "microcode", "microcode", 0 },
		{ "model name", "model_name", 0 },
	};
	json_t *cpu = json_object();
	g_autofree char *text = NULL;
	g_autofree int *cpus = NULL;
	int ncpu = 0;

	for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
		json_object_set_new(cpu, fields[i].name, json_null());
	json_object_set_new(cpu, "hypervisor", json_null());
	if (g_file_get_contents(cpuinfo_path, &text, NULL, NULL)) {
		g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

		/* The first processor block describes the host's CPUs. */
		for (char **l = lines; *l && **l; l++) {
			char *colon = strchr(*l, ':');
			g_autofree char *key = NULL;

			if (!colon)
				continue;
			key = g_strstrip(g_strndup(*l, colon - *l));
			/* CPUID.1:ECX[31]: this host is itself a virtual machine */
			if (!strcmp(key, "flags")) {
				g_auto(GStrv) flags = g_strsplit(colon + 1, " ", -1);

				json_object_set_new(cpu, "hypervisor",
						    json_boolean(g_strv_contains((const char *const *)flags,
										 "hypervisor")));
			}
			for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) {
				g_autofree char *val = NULL;

				if (strcmp(key, fields[i].key) != 0)
					continue;
				val = g_strstrip(g_strdup(colon + 1));
				json_object_set_new(cpu, fields[i].name,
						    fields[i].max ?
						    fingerprint_number(val, 0, fields[i].max) :
						    json_string(val));
			}
		}
	}
	if (perfev_online_cpus(&cpus, &ncpu) == 0)
		json_object_set_new(cpu, "online", json_integer(ncpu));
	else
		json_object_set_new(cpu, "online", json_null());
	return cpu;
}

bool fingerprint_pmu_is_hw(const char *name, uint32_t type)
{
	return type == PERF_TYPE_RAW || strcmp(name, "cpu") == 0 ||
	       strcmp(name, "cpu_core") == 0 || strcmp(name, "cpu_atom") == 0 ||
	       g_str_has_prefix(name, "armv8_") || g_str_has_prefix(name, "armv7_");
}

static json_t *pmus_json(const struct pmu_set *set, bool *hw)
{
	json_t *arr = json_array();

	*hw = false;
	for (unsigned int i = 0; i < set->pmus->len; i++) {
		const struct pmu *p = set->pmus->pdata[i];
		json_t *o = json_object();
		json_t *caps = json_object();
		json_t *formats = json_object();
		GHashTableIter it;
		void *k, *v;

		json_object_set_new(o, "name", json_string(p->name));
		json_object_set_new(o, "type", json_integer(p->type));
		if (p->caps) {
			g_hash_table_iter_init(&it, p->caps);
			while (g_hash_table_iter_next(&it, &k, &v))
				json_object_set_new(caps, k, json_string(v));
		}
		json_object_set_new(o, "caps", caps);
		json_object_set_new(o, "events", json_integer(p->events ? p->events->len : 0));
		for (unsigned int j = 0; p->formats && j < p->formats->len; j++) {
			const struct pmu_format *f = p->formats->pdata[j];

			json_object_set_new(formats, f->name, json_string(f->bits));
		}
		json_object_set_new(o, "formats", formats);
		json_array_append_new(arr, o);
		*hw |= fingerprint_pmu_is_hw(p->name, p->type);
	}
	return arr;
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static json_t *kvm_params_json(void)
{
	json_t *mods = json_object();
	g_autoptr(GDir) dir = g_dir_open("/sys/module", 0, NULL);
	const char *mod;

	if (!dir)
		return mods;
	while ((mod = g_dir_read_name(dir))) {
		g_autofree char *pdir_path = NULL;
		g_autoptr(GDir) pdir = NULL;
		g_autoptr(GPtrArray) names = NULL;
		const char *param;
		json_t *params;

		if (!g_str_has_prefix(mod, "kvm"))
			continue;
		pdir_path = g_build_filename("/sys/module", mod, "parameters", NULL);
		pdir = g_dir_open(pdir_path, 0, NULL);
		if (!pdir)
			continue;
		names = g_ptr_array_new_with_free_func(g_free);
		while ((param = g_dir_read_name(pdir)))
			g_ptr_array_add(names, g_strdup(param));
		g_ptr_array_sort(names, names_cmp);
		params = json_object();
		for (unsigned int i = 0; i < names->len; i++) {
			g_autofree char *path = g_build_filename(pdir_path, names->pdata[i], NULL);
			g_autofree char *val = file_text(path);

			json_object_set_new(params, names->pdata[i], json_string_or_null(val));
		}
		json_object_set_new(mods, mod, params);
	}
	return mods;
}

/* The kvm* modules other than kvm itself that are loaded, "a, b"; NULL when
 * none. Built-in modules appear in /sys/module too. */
static char *kvm_providers(const char *module_root)
{
	g_autoptr(GDir) dir = g_dir_open(module_root, 0, NULL);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	const char *mod;

	while (dir && (mod = g_dir_read_name(dir)))
		if (g_str_has_prefix(mod, "kvm_"))
			g_ptr_array_add(names, g_strdup(mod));
	if (!names->len)
		return NULL;
	g_ptr_array_sort(names, names_cmp);
	g_ptr_array_add(names, NULL);
	return g_strjoinv(", ", (char **)names->pdata);
}

const char *fingerprint_accel_detect(const char *dev_kvm, const char *module_root,
				     char **reason)
{
	g_autofree char *intel = g_build_filename(module_root, "kvm_intel", NULL);
	g_autofree char *amd = g_build_filename(module_root, "kvm_amd", NULL);
	g_autofree char *others = NULL;
	int fd = open(dev_kvm, O_RDWR | O_CLOEXEC);
	const char *accel = "tcg";
	char *why;

	if (fd < 0) {
		why = g_strdup_printf("%s does not open read-write: %s", dev_kvm,
				      g_strerror(errno));
	} else if (access(intel, F_OK) == 0 || access(amd, F_OK) == 0) {
		accel = "kvm";
		why = g_strdup_printf("%s opens and %s is loaded", dev_kvm,
				      access(intel, F_OK) == 0 ? "kvm_intel" : "kvm_amd");
	} else {
		/* kvm_pvm (and the like) register /dev/kvm but cannot run an
		 * ordinary guest: QEMU/libvirt must use TCG there. */
		others = kvm_providers(module_root);
		why = others ? g_strdup_printf("%s is %s, no kvm_intel/kvm_amd", dev_kvm, others)
			     : g_strdup_printf("%s opens but neither kvm_intel nor kvm_amd "
					       "is loaded", dev_kvm);
	}
	if (fd >= 0)
		close(fd);
	if (reason)
		*reason = why;
	else
		g_free(why);
	return accel;
}

const char *fingerprint_accel(void)
{
	return fingerprint_accel_detect("/dev/kvm", "/sys/module", NULL);
}

static json_t *libvirt_version_json(void)
{
	unsigned long v = 0;

	if (virGetVersion(&v, NULL, NULL) < 0 || !v)
		return json_null();
	return json_sprintf("%lu.%lu.%lu", v / 1000000, v / 1000 % 1000, v % 1000);
}

static json_t *qemu_version_json(void)
{
	char *argv[] = { "qemu-system-x86_64", "--version", NULL };
	g_autofree char *out = NULL;
	g_autofree char *errout = NULL;
	const char *prefix = "QEMU emulator version ";
	char *nl;
	int status;

	if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
			  &errout, &status, NULL) ||
	    !g_spawn_check_wait_status(status, NULL) || !out)
		return json_null();
	if ((nl = strchr(out, '\n')))
		*nl = '\0';
	if (g_str_has_prefix(out, prefix))
		return json_string(out + strlen(prefix));
	return json_string(g_strstrip(out));
}

int fingerprint_collect(const struct pmu_set *pmus, json_t **out)
{
	g_autoptr(pmu_set) own = NULL;
	json_t *fp;
	bool hw;

	if (!pmus) {
		int ret = pmu_set_load(NULL, &own);

		if (ret < 0)
			return ret;
		pmus = own;
	}
	fp = json_object();
	json_object_set_new(fp, "kernel", kernel_json());
	json_object_set_new(fp, "cpu", fingerprint_cpu_json("/proc/cpuinfo"));
	json_object_set_new(fp, "pmus", pmus_json(pmus, &hw));
	json_object_set_new(fp, "hw_pmu", json_boolean(hw));
	/* proc_dointvec: any int; null when the file says something else */
	json_object_set_new(fp, "perf_event_paranoid",
			    int_file("/proc/sys/kernel/perf_event_paranoid", G_MININT, G_MAXINT));
	json_object_set_new(fp, "nmi_watchdog",
			    int_file("/proc/sys/kernel/nmi_watchdog", G_MININT, G_MAXINT));
	json_object_set_new(fp, "kvm", kvm_params_json());
	{
		g_autofree char *reason = NULL;
		const char *accel = fingerprint_accel_detect("/dev/kvm", "/sys/module", &reason);

		json_object_set_new(fp, "accel", json_string(accel));
		json_object_set_new(fp, "accel_reason", json_string(reason));
	}
	json_object_set_new(fp, "libvirt_version", libvirt_version_json());
	json_object_set_new(fp, "qemu_version", qemu_version_json());
	*out = fp;
	return 0;
}
