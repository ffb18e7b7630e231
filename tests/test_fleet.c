/* Fleet without guests: the domain XML and kernel command line each guest
 * gets, and the configuration checks made before anything is booted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fleet.h"
#include "log.h"

#include <errno.h>
#include <string.h>

static const struct fleet_config base = {
	.run_id = "t1",
	.run_dir = "/tmp",
	.guests = 2,
	.vcpus = 3,
	.memory_mib = 256,
	.kernel = "/img/vmlinuz",
	.initrd = "/img/a&b.cpio",
	.hb_interval_ms = 50,
	.canary_mib = 4,
};

static void test_xml_kvm(void **state)
{
	g_autofree char *x = fleet_domain_xml(&base, FLEET_ACCEL_KVM, "pmucanary-t1-0",
					      "/run/x/pmucanary-t1-0.console", 0);

	assert_non_null(strstr(x, "<domain type='kvm'>"));
	assert_non_null(strstr(x, "<name>pmucanary-t1-0</name>"));
	assert_non_null(strstr(x, "<memory unit='MiB'>256</memory>"));
	assert_non_null(strstr(x, "<vcpu>3</vcpu>"));
	assert_non_null(strstr(x, "<kernel>/img/vmlinuz</kernel>"));
	assert_non_null(strstr(x, "<initrd>/img/a&amp;b.cpio</initrd>"));
	assert_non_null(strstr(x, "<features><acpi/></features>"));
	assert_non_null(strstr(x, "<panic model='isa'/>"));
	assert_non_null(strstr(x, "<cpu mode='host-passthrough'/>"));
	assert_non_null(strstr(x, "<on_crash>preserve</on_crash>"));
	assert_non_null(strstr(x, "<on_reboot>restart</on_reboot>"));
	assert_non_null(strstr(x, "<serial type='file'>"));
	assert_non_null(strstr(x, "<source path='/run/x/pmucanary-t1-0.console'"));
	assert_non_null(strstr(x, "name='org.pmucanary.hb'"));
	assert_non_null(strstr(x, "<channel type='unix'>"));
	assert_non_null(strstr(x, "<controller type='usb' model='none'/>"));
	assert_non_null(strstr(x, "<memballoon model='none'/>"));
	assert_non_null(strstr(x, "https://pmucanary.invalid/fleet/1"));
	assert_null(strstr(x, "<graphics"));
	assert_null(strstr(x, "<interface"));
	assert_null(strstr(x, "<disk"));
}

static void test_xml_tcg(void **state)
{
	g_autofree char *x = fleet_domain_xml(&base, FLEET_ACCEL_TCG, "pmucanary-t1-1", "/c", 1);

	assert_non_null(strstr(x, "<domain type='qemu'>"));
	assert_null(strstr(x, "host-passthrough"));
	assert_non_null(strstr(x, "guest='1'"));
}

/* A lab host: the host's root and its lab directory over 9p, QEMU as root,
 * a CPU that can run KVM guests (TCG: max without xsave; KVM: passthrough
 * with the vPMU). */
static void test_xml_lab_host(void **state)
{
	const struct fleet_share shares[] = {
		{ "/", "pcroot", true, false }, { "/r/lab-1/base", "pcrun", false, true },
	};
	struct fleet_config c = base;
	g_autofree char *t = NULL, *k = NULL;

	c.shares = shares;
	c.share_count = 2;
	c.qemu_as_root = true;
	c.nested = true;
	t = fleet_domain_xml(&c, FLEET_ACCEL_TCG, "pmucanary-lab-0", "/c", 0);
	assert_non_null(strstr(t, "<cpu mode='maximum'><feature policy='disable' name='xsave'/></cpu>"));
	assert_non_null(strstr(t, "<source dir='/'/>\n      <target dir='pcroot'/>\n      <readonly/>"));
	assert_non_null(strstr(t, "<source dir='/r/lab-1/base'/>\n      <target dir='pcrun'/>\n    </filesystem>"));
	assert_non_null(strstr(t, "accessmode='passthrough' multidevs='remap'>\n      <driver type='path'/>\n      <source dir='/'/>"));
	assert_non_null(strstr(t, "accessmode='mapped' multidevs='remap'>\n      <driver type='path'/>\n      <source dir='/r/lab-1/base'/>"));
	assert_non_null(strstr(t, "<seclabel type='static' model='dac' relabel='no'><label>+0:+0</label>"));
	assert_null(strstr(t, "<pmu"));
	k = fleet_domain_xml(&c, FLEET_ACCEL_KVM, "pmucanary-lab-0", "/c", 0);
	assert_non_null(strstr(k, "<pmu state='on'/>"));
	assert_non_null(strstr(k, "<cpu mode='host-passthrough' check='none' migratable='off'/>"));
	/* a plain guest gets none of it */
	{
		g_autofree char *plain = fleet_domain_xml(&base, FLEET_ACCEL_KVM, "g", "/c", 0);

		assert_null(strstr(plain, "seclabel"));
		assert_null(strstr(plain, "<filesystem"));
	}
}

static void test_share_checks(void **state)
{
	const struct fleet_share bad_tag[] = { { "/", "Root Tag", true, false } };
	const struct fleet_share no_dir[] = { { "/nonexistent-pmucanary", "pcroot", true, false } };
	struct fleet_config c = base;
	struct fleet *f = NULL;

	c.kernel = "/proc/self/exe"; /* readable: the checks come first */
	c.initrd = "/proc/self/exe";
	c.shares = bad_tag;
	c.share_count = 1;
	assert_int_equal(fleet_new(&c, &f), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "Root Tag"));
	c.shares = no_dir;
	assert_int_equal(fleet_new(&c, &f), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "/nonexistent-pmucanary"));
	assert_null(f);
}

static void test_cmdline(void **state)
{
	struct fleet_config c = base;
	g_autofree char *a = fleet_kernel_cmdline(&c);
	g_autofree char *b = NULL;

	for (const char *want = "console=ttyS0\0softlockup_panic=1\0hung_task_panic=1\0"
				"unknown_nmi_panic=1\0panic_on_oops=0\0pmucanary.interval=50\0"
				"pmucanary.work=on\0pmucanary.canary_mib=4\0";
	     *want; want += strlen(want) + 1)
		if (!strstr(a, want))
			fail_msg("'%s' not in '%s'", want, a);
	c.no_work = true;
	c.hb_interval_ms = 0;
	c.canary_mib = 0;
	c.extra_cmdline = "nokaslr";
	b = fleet_kernel_cmdline(&c);
	assert_non_null(strstr(b, "pmucanary.work=off"));
	assert_non_null(strstr(b, "pmucanary.interval=100"));
	assert_null(strstr(b, "canary_mib"));
	assert_non_null(strstr(b, " nokaslr"));
}

static void test_config_rejected(void **state)
{
	struct fleet *f = NULL;
	struct fleet_config c = base;

	c.guests = 0;
	assert_int_equal(fleet_new(&c, &f), -EINVAL);
	c = base;
	c.run_id = "bad id/..";
	assert_int_equal(fleet_new(&c, &f), -EINVAL);
	assert_non_null(strstr(pc_errmsg(), "run id"));
	c = base;
	c.hb_interval_ms = 5;
	assert_int_equal(fleet_new(&c, &f), -EINVAL);
	c = base; /* kernel does not exist */
	assert_int_equal(fleet_new(&c, &f), -ENOENT);
	assert_null(f);
}

static void test_names(void **state)
{
	assert_string_equal(fleet_accel_name(FLEET_ACCEL_KVM), "kvm");
	assert_string_equal(fleet_accel_name(FLEET_ACCEL_TCG), "tcg");
	assert_string_equal(fleet_accel_name(FLEET_ACCEL_COUNT), "?");
	for (int s = 0; s < GUEST_STATE_COUNT; s++)
		assert_string_not_equal(guest_state_name(s), "?");
	fleet_verdict_free(NULL);
	fleet_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_kvm),
		cmocka_unit_test(test_xml_tcg),
		cmocka_unit_test(test_xml_lab_host),
		cmocka_unit_test(test_share_checks),
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_config_rejected),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
