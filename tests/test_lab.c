/* Tests for lib/lab: what lab_validate() refuses before anything boots, and
 * the lab host's sizing. The lab hosts themselves boot in tests/it_lab*.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "kernel.h"
#include "lab.h"
#include "log.h"
#include "testutil.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A kernel whose config has every required lab-host option built in. */
static struct kernel *fake_kernel(const char *name, const char *drop)
{
	struct kernel *k = g_new0(struct kernel, 1);

	k->arg = g_strdup_printf("/k/%s", name);
	k->name = g_strdup(name);
	k->image = g_strdup(k->arg);
	k->release = g_strdup("6.1.192");
	k->sha256 = g_strdup("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	k->config = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	k->config_source = g_strdup("test");
	for (const struct kernel_need *n = kernel_lab_needs; n->option; n++) {
		if (drop && !strcmp(n->option, drop))
			continue;
		g_hash_table_insert(k->config, g_strconcat("CONFIG_", n->option, NULL), g_strdup("y"));
	}
	return k;
}

struct fixture {
	char *scenario, *tmp;
	struct kernel *k[3];
	struct lab_opts o;
};

static int setup(void **state)
{
	struct fixture *f = g_new0(struct fixture, 1);
	g_autofree char *top = test_top_dir();

	f->scenario = g_build_filename(top, "tests", "data", "lab", "harm.ini", NULL);
	f->tmp = g_dir_make_tmp("test_lab.XXXXXX", NULL);
	assert_non_null(f->tmp);
	f->k[0] = fake_kernel("base", NULL);
	f->k[1] = fake_kernel("patched", NULL);
	f->o.scenario = f->scenario;
	f->o.kernels = f->k;
	f->o.kernel_count = 2;
	f->o.results_dir = f->tmp;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	for (size_t i = 0; i < G_N_ELEMENTS(f->k); i++)
		kernel_free(f->k[i]);
	rmdir(f->tmp);
	g_free(f->tmp);
	g_free(f->scenario);
	g_free(f);
	return 0;
}

static void expect_bad(const struct lab_opts *o, const char *needle)
{
	int e = lab_validate(o);

	if (e != -EINVAL || !strstr(pc_errmsg(), needle))
		fail_msg("lab_validate: %d '%s', want -EINVAL naming '%s'", e, pc_errmsg(), needle);
}

/* lab_validate() refuses anyone but root first (a lab host's QEMU runs as
 * root): as another user that refusal is checked, and the test skips the
 * checks behind it. */
static struct fixture *root_fixture(void **state)
{
	struct fixture *f = *state;

	if (geteuid() != 0) {
		expect_bad(&f->o, "pmucanary lab needs root");
		test_skip("not root: lab_validate() refuses before its other checks (that much checked)");
	}
	return f;
}

static void test_valid(void **state)
{
	struct fixture *f = root_fixture(state);

	assert_int_equal(lab_validate(&f->o), 0);
	/* validation creates nothing */
	assert_true(g_file_test(f->tmp, G_FILE_TEST_IS_DIR));
	assert_int_equal(rmdir(f->tmp), 0);
	assert_int_equal(mkdir(f->tmp, 0700), 0);
}

static void test_refusals(void **state)
{
	struct fixture *f = root_fixture(state);
	struct lab_opts o = f->o;
	g_autofree char *long_dir = g_strnfill(200, 'd');

	o.kernel_count = 0;
	expect_bad(&o, "no --kernel");
	o = f->o;
	o.base = 2;
	expect_bad(&o, "--base");
	o = f->o;
	o.scenario = "/nonexistent/lab.ini";
	expect_bad(&o, "/nonexistent/lab.ini");
	o = f->o;
	g_free(f->k[1]->name);
	f->k[1]->name = g_strdup("base");
	expect_bad(&o, "both named 'base'");
	g_free(f->k[1]->name);
	f->k[1]->name = g_strdup("bad name");
	expect_bad(&o, "its name 'bad name'");
	g_free(f->k[1]->name);
	f->k[1]->name = g_strdup("patched");
	o.selftest = "cpu-clock:u=melt";
	expect_bad(&o, "--selftest-harm cpu-clock:u=melt");
	o.selftest = "=crash";
	expect_bad(&o, "no SPEC");
	o = f->o;
	o.results_dir = "/tmp/with space";
	expect_bad(&o, "[A-Za-z0-9/_.+-]");
	o.results_dir = "/run/pmucanary-results";
	expect_bad(&o, "has its own /run");
	o.results_dir = g_strconcat("/", long_dir, NULL);
	expect_bad(&o, "at most");
	g_free((char *)o.results_dir);
	o = f->o;
	{
		const char *bins[] = { "/nonexistent/perf" };

		o.perf_binaries = bins;
		o.perf_binary_count = 1;
		expect_bad(&o, "--perf-binary /nonexistent/perf");
	}
}

/* A kernel that lacks what a lab host needs is named with what it lacks. */
static void test_kernel_lacks(void **state)
{
	struct fixture *f = root_fixture(state);
	struct lab_opts o = f->o;

	f->k[2] = fake_kernel("nokvm", "KVM");
	o.kernels = f->k;
	o.kernel_count = 3;
	expect_bad(&o, "CONFIG_KVM is not set");
	assert_null(strstr(pc_errmsg(), "CONFIG_9P_FS"));
}

static void test_sizing(void **state)
{
	/* at least 1.5 GiB; each nested guest adds its memory and QEMU's */
	assert_int_equal(lab_memory_mib(1, 256), 1536);
	assert_int_equal(lab_memory_mib(2, 256), 1024 + 2 * (256 + 192));
	assert_int_equal(lab_memory_mib(8, 1024), 1024 + 8 * (1024 + 192));
	/* QEMU emulates SVM only: under TCG lab hosts need kvm_amd */
	assert_string_equal(lab_kvm_vendor(true), "amd");
	assert_string_equal(lab_status_name(LAB_STATUS_INFRA), "infra");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_valid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_lacks, setup, teardown),
		cmocka_unit_test(test_sizing),
	};

	return test_run_group(tests, NULL, NULL);
}
