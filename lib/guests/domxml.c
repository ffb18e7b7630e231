/* A guest's configuration and its libvirt domain XML, as pure functions
 * (see domxml.h). */
#include "domxml.h"

#include "hbproto.h"
#include "inject.h"

#include <string.h>

static const char *const accel_names[FLEET_ACCEL_COUNT] = { "kvm", "tcg" };

const char *fleet_accel_name(enum fleet_accel a)
{
	return a < FLEET_ACCEL_COUNT ? accel_names[a] : "?";
}

bool fleet_run_id_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 48)
		return false;
	for (; *s; s++)
		if (!g_ascii_isalnum(*s) && *s != '_' && *s != '.' && *s != '-')
			return false;
	return true;
}

char *fleet_kernel_cmdline(const struct fleet_config *cfg)
{
	GString *s = g_string_new(NULL);

	g_string_append(s, GUEST_KERNEL_WORDS);
	g_string_append_printf(s, " pmucanary.interval=%u pmucanary.work=%s",
			       cfg->hb_interval_ms ? cfg->hb_interval_ms : HB_DEFAULT_INTERVAL_MS,
			       cfg->no_work ? "off" : "on");
	if (cfg->canary_mib)
		g_string_append_printf(s, " pmucanary.canary_mib=%u", cfg->canary_mib);
	if (cfg->disk && cfg->disk_root)
		g_string_append_printf(s, " %s ro", cfg->disk_root);
	if (cfg->extra_cmdline && *cfg->extra_cmdline)
		g_string_append_printf(s, " %s", cfg->extra_cmdline);
	return g_string_free(s, FALSE);
}

char *fleet_guest_disk(const struct fleet_config *cfg, const char *name)
{
	g_autofree char *dir = NULL;

	if (!cfg->disk)
		return NULL;
	/* next to the injected overlay: QEMU reads that directory already */
	dir = g_path_get_dirname(cfg->disk);
	return g_strdup_printf("%s/%s.qcow2", dir, name);
}

bool fleet_guest_is_disk(const struct fleet_config *cfg, unsigned int n)
{
	unsigned int nd;

	if (!cfg->disk)
		return false;
	nd = cfg->disk_guests ? cfg->disk_guests : cfg->guests;
	/* the last nd: guest 0 stays an initramfs guest in a mixed fleet */
	return n + nd >= cfg->guests;
}

/* What guest n boots: a disk guest its image's kernel on its overlay, an
 * initramfs guest no disk at all. */
static struct fleet_config guest_config(const struct fleet_config *cfg, unsigned int n)
{
	struct fleet_config c = *cfg;

	if (!fleet_guest_is_disk(cfg, n)) {
		c.disk = c.disk_root = NULL;
	} else if (cfg->disk_kernel) {
		c.kernel = cfg->disk_kernel;
		c.initrd = cfg->disk_initrd;
	}
	return c;
}

char *fleet_domain_xml_pure(const struct fleet_config *fleet_cfg, enum fleet_accel accel,
			    const char *name, const char *console_path, unsigned int n,
			    const struct fleet_domain_host *host)
{
	const struct fleet_config guest_cfg = guest_config(fleet_cfg, n);
	const struct fleet_config *cfg = &guest_cfg;
	g_autofree char *cmdline = fleet_kernel_cmdline(cfg);
	g_autofree char *e_name = g_markup_escape_text(name, -1);
	g_autofree char *e_kernel = g_markup_escape_text(cfg->kernel ? cfg->kernel : "", -1);
	g_autofree char *e_initrd = g_markup_escape_text(cfg->initrd ? cfg->initrd : "", -1);
	g_autofree char *e_cmd = g_markup_escape_text(cmdline, -1);
	g_autofree char *e_console = g_markup_escape_text(console_path, -1);
	g_autofree char *e_run = g_markup_escape_text(cfg->run_id ? cfg->run_id : "", -1);
	const char *cpu_mode = host->cpu_mode;
	GString *x = g_string_new(NULL);

	g_string_append_printf(x, "<domain type='%s'>\n", accel == FLEET_ACCEL_KVM ? "kvm" : "qemu");
	g_string_append_printf(x, "  <name>%s</name>\n", e_name);
	g_string_append_printf(x,
		"  <metadata>\n"
		"    <" FLEET_META_PREFIX ":fleet xmlns:" FLEET_META_PREFIX "='" FLEET_META_URI "' "
		"run='%s' guest='%u' pid='%d' start='%llu'/>\n"
		"  </metadata>\n",
		e_run, n, host->pid, host->start);
	g_string_append_printf(x, "  <memory unit='MiB'>%u</memory>\n",
			       cfg->memory_mib ? cfg->memory_mib : 192);
	g_string_append_printf(x, "  <vcpu>%u</vcpu>\n", cfg->vcpus ? cfg->vcpus : 1);
	if (cfg->disk && cfg->disk_bootloader)
		/* SeaBIOS runs the disk's MBR: the image's own bootloader, its
		 * kernel, initrd and command line (inject_disk() gave that the
		 * fleet's kernel words) */
		g_string_append(x,
			"  <os>\n"
			"    <type arch='x86_64' machine='pc'>hvm</type>\n"
			"    <boot dev='hd'/>\n"
			"  </os>\n");
	else
		g_string_append_printf(x,
			"  <os>\n"
			"    <type arch='x86_64' machine='pc'>hvm</type>\n"
			"    <kernel>%s</kernel>\n"
			"%s%s%s"
			"    <cmdline>%s</cmdline>\n"
			"  </os>\n",
			e_kernel, *e_initrd ? "    <initrd>" : "", e_initrd,
			*e_initrd ? "</initrd>\n" : "", e_cmd);
	/* <acpi/> is what makes the isa panic device usable; a nested KVM
	 * host gets the vPMU so its harness sees a PMU */
	g_string_append_printf(x, "  <features><acpi/>%s</features>\n",
			       cfg->nested && accel == FLEET_ACCEL_KVM ? "<pmu state='on'/>" : "");
	if (cpu_mode && *cpu_mode && cfg->nested && accel == FLEET_ACCEL_KVM)
		/* host-passthrough carries vmx/svm when the outer KVM nests */
		g_string_append_printf(x, "  <cpu mode='%s' check='none' migratable='off'/>\n", cpu_mode);
	else if (cpu_mode && *cpu_mode && cfg->nested)
		/* TCG's max CPU has SVM. Its XSAVE leaves, passed through a nested
		 * KVM, make every nested guest WARN at boot ("XSAVE consistency
		 * problem", seen with kvm_amd of 6.1): no xsave in an emulated
		 * lab host. */
		g_string_append_printf(x, "  <cpu mode='%s'><feature policy='disable' name='xsave'/>"
				       "</cpu>\n", cpu_mode);
	else if (cpu_mode && *cpu_mode)
		g_string_append_printf(x, "  <cpu mode='%s'/>\n", cpu_mode);
	g_string_append(x,
		"  <clock offset='utc'/>\n"
		"  <on_poweroff>destroy</on_poweroff>\n"
		/* a reboot resets in place: seen as a new boot id and a REBOOT event */
		"  <on_reboot>restart</on_reboot>\n"
		/* a panicked guest stays (crashed) until the fleet destroys it */
		"  <on_crash>preserve</on_crash>\n"
		"  <devices>\n"
		"    <controller type='usb' model='none'/>\n"
		"    <controller type='virtio-serial' index='0'/>\n");
	if (cfg->disk) {
		g_autofree char *disk = fleet_guest_disk(cfg, name);
		g_autofree char *e_disk = g_markup_escape_text(disk, -1);

		g_string_append_printf(x,
			"    <disk type='file' device='disk'>\n"
			"      <driver name='qemu' type='qcow2' cache='unsafe'/>\n"
			"      <source file='%s'/>\n"
			"      <target dev='vda' bus='virtio'/>\n"
			"    </disk>\n", e_disk);
	}
	for (size_t i = 0; i < cfg->share_count; i++) {
		g_autofree char *src = g_markup_escape_text(cfg->shares[i].source, -1);
		g_autofree char *tag = g_markup_escape_text(cfg->shares[i].tag, -1);

		g_string_append_printf(x,
			"    <filesystem type='mount' accessmode='%s' multidevs='remap'>\n"
			"      <driver type='path'/>\n"
			"      <source dir='%s'/>\n"
			"      <target dir='%s'/>\n"
			"%s"
			"    </filesystem>\n",
			cfg->shares[i].mapped ? "mapped" : "passthrough", src, tag,
			cfg->shares[i].readonly ? "      <readonly/>\n" : "");
	}
	g_string_append_printf(x,
		"    <serial type='file'>\n"
		"      <source path='%s' append='off'/>\n"
		"      <target port='0'/>\n"
		"    </serial>\n",
		e_console);
	/* bind mode without a path: libvirt picks a socket under its own
	 * directory and we read it through virDomainOpenChannel */
	g_string_append(x,
		"    <channel type='unix'>\n"
		"      <source mode='bind'/>\n"
		"      <target type='virtio' name='" HB_PORT_NAME "'/>\n"
		"    </channel>\n"
		"    <memballoon model='none'/>\n"
		"    <panic model='isa'/>\n"
		"  </devices>\n");
	if (cfg->qemu_as_root)
		g_string_append(x, "  <seclabel type='static' model='dac' relabel='no'>"
				   "<label>+0:+0</label></seclabel>\n");
	g_string_append(x, "</domain>\n");
	return g_string_free(x, FALSE);
}
