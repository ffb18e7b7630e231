/* Host kmsg: the classifier on real-looking records, a marker written to
 * /dev/kmsg read back without being flagged, and the mark skipping what
 * came before it (root only). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "kmsg.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *message;
	enum kmsg_class cls;
} table[] = {
	{ "WARNING: CPU: 1 PID: 2113 at arch/x86/events/intel/core.c:2101 intel_pmu_handle_irq+0x2e4/0x4a0", KMSG_CLASS_WARNING },
	{ "WARNING: CPU: 0 PID: 0 at kernel/events/core.c:7352 perf_prepare_sample+0x31f/0x7a0", KMSG_CLASS_WARNING },
	{ "BUG: unable to handle page fault for address: ffffc90000a3f000", KMSG_CLASS_BUG },
	{ "BUG: kernel NULL pointer dereference, address: 0000000000000018", KMSG_CLASS_BUG },
	{ "kernel BUG at arch/x86/kvm/x86.c:10462!", KMSG_CLASS_BUG },
	{ "BUG: scheduling while atomic: qemu-system-x86/4242/0x00000002", KMSG_CLASS_BUG },
	{ "Oops: 0000 [#1] PREEMPT SMP NOPTI", KMSG_CLASS_OOPS },
	{ "Oops: general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP", KMSG_CLASS_GPF },
	{ "general protection fault, probably for non-canonical address 0xdffffc0000000000: 0000 [#1] PREEMPT SMP KASAN", KMSG_CLASS_GPF },
	{ "general protection fault: 0000 [#1] SMP", KMSG_CLASS_GPF },
	{ "Kernel panic - not syncing: Fatal exception in interrupt", KMSG_CLASS_PANIC },
	{ "Kernel panic - not syncing: Hard LOCKUP", KMSG_CLASS_PANIC },
	{ "rcu: INFO: rcu_sched self-detected stall on CPU", KMSG_CLASS_RCU_STALL },
	{ "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:", KMSG_CLASS_RCU_STALL },
	{ "INFO: rcu_sched detected stalls on CPUs/tasks: { 1} (detected by 0, t=21002 jiffies)", KMSG_CLASS_RCU_STALL },
	{ "watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [qemu-system-x86:3171]", KMSG_CLASS_LOCKUP },
	{ "NMI watchdog: Watchdog detected hard LOCKUP on cpu 3", KMSG_CLASS_LOCKUP },
	{ "INFO: task kworker/u8:2:120 blocked for more than 120 seconds.", KMSG_CLASS_LOCKUP },
	{ "Uhhuh. NMI received for unknown reason 3d on CPU 0.", KMSG_CLASS_NMI },
	{ "Dazed and confused, but trying to continue", KMSG_CLASS_NMI },
	{ "unchecked MSR access error: WRMSR to 0x38f (tried to write 0x0000000f000000ff) at rIP: 0xffffffff8100a8c4 (native_write_msr+0x4/0x20)", KMSG_CLASS_MSR },
	{ "BUG: workqueue lockup - pool cpus=1 node=0 flags=0x0 nice=0 stuck for 32s!", KMSG_CLASS_LOCKUP },
	/* kernel/rcu/tree_exp.h, pr_fmt "rcu: " */
	{ "rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 1-... } 21 jiffies s: 113 root: 0x2/.", KMSG_CLASS_RCU_STALL },
	/* the patterns that must open the message (after a "subsystem: " tag)
	 * name nothing when quoted inside another message */
	{ "audit: type=1400 apparmor=\"DENIED\" name=\"BUG: workqueue lockup\"", KMSG_CLASS_NONE },
	{ "systemd[1]: foo.service: said BUG: soft lockup in its log", KMSG_CLASS_NONE },
	{ "audit: cmd=\"echo Dazed and confused, but trying to continue\"", KMSG_CLASS_NONE },
	{ "audit: cmd=\"echo Uhhuh. NMI received for unknown reason 3d\"", KMSG_CLASS_NONE },
	{ "sh[77]: grep unchecked MSR access error in dmesg", KMSG_CLASS_NONE },
	{ "sh[77]: grep Oops: in dmesg", KMSG_CLASS_NONE },
	{ "sh[77]: grep kernel BUG at in dmesg", KMSG_CLASS_NONE },
	{ "systemd[1]: printed INFO: task list refreshed", KMSG_CLASS_NONE },
	{ "ext4: quoting Kernel panic - not syncing in a file name", KMSG_CLASS_NONE },
	/* a tag is one word of a module's name (pr_fmt's KBUILD_MODNAME: letters,
	 * digits, _ and -); what user space writes to /dev/kmsg is no tag */
	{ "systemd[1]: BUG: soft lockup in a unit's name", KMSG_CLASS_NONE },
	{ "backup job: WARNING: disk almost full", KMSG_CLASS_NONE },
	/* ordinary traffic: not harm */
	{ "perf: interrupt took too long (2502 > 2500), lowering kernel.perf_event_max_sample_rate to 79750", KMSG_CLASS_NONE },
	{ "kvm: vcpu 0: requested 191999 ns lapic timer period limited to 200000 ns", KMSG_CLASS_NONE },
	{ "traps: a.out[1234] general protection fault ip:401126 sp:7ffd2c1f8f40 error:0 in a.out[401000+1000]", KMSG_CLASS_NONE },
	{ "a.out[4321]: segfault at 0 ip 0000000000401126 sp 00007ffc error 6 in a.out[401000+1000]", KMSG_CLASS_NONE },
	{ "virbr0: port 1(vnet0) entered forwarding state", KMSG_CLASS_NONE },
	{ "Call Trace:", KMSG_CLASS_NONE },
	{ "NMI watchdog: Enabled. Permanently consumes one hw-PMU counter.", KMSG_CLASS_NONE },
	{ "pmucanary: arm batch 7: cycles:pp (GUEST_CRASH expected, BUG: none)", KMSG_CLASS_NONE },
	{ "", KMSG_CLASS_NONE },
};

static void test_classify_table(void **state)
{
	for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
		enum kmsg_class got = kmsg_classify(table[i].message);

		if (got != table[i].cls)
			fail_msg("'%s': got %s, want %s", table[i].message, kmsg_class_name(got),
				 kmsg_class_name(table[i].cls));
	}
	assert_int_equal(kmsg_classify(NULL), KMSG_CLASS_NONE);
	assert_string_equal(kmsg_class_name(KMSG_CLASS_RCU_STALL), "rcu-stall");
	assert_string_equal(kmsg_class_name(KMSG_CLASS_COUNT), "?");
}

static void test_record_parse(void **state)
{
	static const char rec[] =
		"4,1342,98765432,-;WARNING: CPU: 1 PID: 7 at kernel/events/core.c:1 x+0x1/0x2\n"
		" SUBSYSTEM=cpu\n DEVICE=+cpu:cpu1\n";
	static const char user[] = "12,1343,98765500,-;pmucanary: WARNING: BUG: marker\n";
	struct kmsg_record r;

	assert_int_equal(kmsg_record_parse(rec, strlen(rec), &r), 0);
	assert_int_equal(r.facility, 0);
	assert_int_equal(r.level, 4);
	assert_int_equal(r.seq, 1342);
	assert_int_equal(r.ts_usec, 98765432);
	assert_string_equal(r.message, "WARNING: CPU: 1 PID: 7 at kernel/events/core.c:1 x+0x1/0x2");
	assert_int_equal(kmsg_record_classify(&r), KMSG_CLASS_WARNING);
	kmsg_record_clear(&r);

	/* LOG_USER (1 << 3 | 4 = 12): never flagged, whatever it says */
	assert_int_equal(kmsg_record_parse(user, strlen(user), &r), 0);
	assert_int_equal(r.facility, 1);
	assert_int_equal(kmsg_record_classify(&r), KMSG_CLASS_NONE);
	kmsg_record_clear(&r);

	assert_int_equal(kmsg_record_parse("garbage", 7, &r), -EINVAL);
	assert_int_equal(kmsg_record_parse("x,1,2,-;m", 9, &r), -EINVAL);
	/* The prefix is the kernel's decimal, bounded: never a wrapped or
	 * saturated number (strtoull took "-1" as 2^64 - 1). */
	static const char *const bad[] = {
		"-1,1,2,-;m", "+4,1,2,-;m", " 4,1,2,-;m", "4,-1,2,-;m", "4,1, 2,-;m",
		"2048,1,2,-;m", "4,18446744073709551616,2,-;m", "4,1,99999999999999999999,-;m",
		"4,,2,-;m", "4,1,2x;m", ",1,2;m",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
		if (kmsg_record_parse(bad[i], strlen(bad[i]), &r) != -EINVAL)
			fail_msg("kmsg record \"%s\" was accepted", bad[i]);
	assert_int_equal(kmsg_record_parse("2047,18446744073709551615,0;m", 29, &r), 0);
	assert_int_equal(r.facility, 255);
	assert_true(r.seq == G_MAXUINT64);
	kmsg_record_clear(&r);
	kmsg_record_clear(&r);
}

/* Reads every record from our fd looking for the marker. */
static bool find_marker(int fd, const char *marker, struct kmsg_record *out)
{
	char buf[8192];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EPIPE)) {
		if (n < 0)
			continue;
		if (kmsg_record_parse(buf, (size_t)n, out))
			continue;
		if (strstr(out->message, marker))
			return true;
		kmsg_record_clear(out);
	}
	return false;
}

/* Appends one record, as /dev/kmsg gives them to readers, to a private
 * file: between two reads of the watcher there is only ever one, so a
 * read(2) returns exactly it, as /dev/kmsg's do. */
static void append_record(const char *path, const char *record)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, record, strlen(record)), (ssize_t)strlen(record));
	close(fd);
}

/* The watcher through its path argument (kmsg_open's injection point), on
 * a private file: what was there before the open, or before a mark, is not
 * read; what comes after is, once, with its class. Nothing is written into
 * the host's kernel log, and other loggers cannot disturb the counts. */
static void test_watch_private_log(void **state)
{
	g_autofree char *dir = test_tmpdir("test_kmsg");
	g_autofree char *path = g_build_filename(dir, "kmsg", NULL);
	g_autoptr(kmsg_watch) w = NULL;
	g_autoptr(GPtrArray) hits = g_ptr_array_new_with_free_func((GDestroyNotify)kmsg_hit_free);
	unsigned int seen = 0;
	const struct kmsg_hit *h;

	/* a boot log with old harm in it */
	assert_true(g_file_set_contents(path,
		"6,1,100,-;Linux version 6.1.0\n"
		"4,2,200,-;WARNING: CPU: 0 PID: 1 at old.c:1 boot_warning+0x1/0x2\n"
		"0,3,300,-;Kernel panic - not syncing: an old one\n", -1, NULL));
	assert_int_equal(kmsg_open(path, &w), 0);
	assert_int_equal(kmsg_read_new(w, hits, &seen), 0);
	assert_int_equal(seen, 0);
	assert_int_equal(hits->len, 0);

	append_record(path, "4,4,400,-;WARNING: CPU: 1 PID: 7 at kernel/events/core.c:42 x+0x1/0x2\n");
	assert_int_equal(kmsg_read_new(w, hits, &seen), 0);
	assert_int_equal(seen, 1);
	assert_int_equal(hits->len, 1);
	h = hits->pdata[0];
	assert_int_equal(h->cls, KMSG_CLASS_WARNING);
	assert_true(h->seq == 4 && h->ts_usec == 400);
	assert_non_null(strstr(h->message, "kernel/events/core.c:42"));
	append_record(path, "6,5,500,-;an ordinary line\n");
	assert_int_equal(kmsg_read_new(w, hits, &seen), 0);
	assert_int_equal(seen, 2);
	assert_int_equal(hits->len, 1);
	/* the harness's own marker lines, whatever words they carry, are not
	 * the kernel's harm */
	assert_int_equal(kmsg_classify("pmucanary-test-1: WARNING: CPU: 0 PID: 1 at fake.c:1 "
				       "BUG: Oops: 0000"), KMSG_CLASS_NONE);
	append_record(path, "4,8,550,-;pmucanary: batch 7 armed: WARNING: CPU: 0 PID: 1 at x.c:1 "
				"BUG: Oops: crash\n");
	assert_int_equal(kmsg_read_new(w, hits, &seen), 0);
	assert_int_equal(seen, 3);
	assert_int_equal(hits->len, 1);

	/* a mark forgets the record before it */
	append_record(path, "4,6,600,-;BUG: unable to handle page fault before the mark\n");
	assert_int_equal(kmsg_mark(w), 0);
	append_record(path, "1,7,700,-;Oops: 0000 [#1] SMP after the mark\n");
	seen = 0;
	assert_int_equal(kmsg_read_new(w, hits, &seen), 0);
	assert_int_equal(seen, 1);
	assert_int_equal(hits->len, 2);
	h = hits->pdata[1];
	assert_int_equal(h->cls, KMSG_CLASS_OOPS);
	assert_true(h->seq == 7);
	/* and nothing is read twice */
	seen = 0;
	assert_int_equal(kmsg_read_new(w, hits, &seen), 0);
	assert_int_equal(seen, 0);
	assert_int_equal(kmsg_missed(w), 0);
	unlink(path);
	test_tmpdir_remove(dir);
}

/* The real /dev/kmsg, read and written as the runner does: a line of ours
 * (no harm words: other watchers of this host's log must not take it for
 * a kernel warning) arrives as a user-facility record after the open, and
 * the watcher does not flag it. Counts of other records are not asserted:
 * other loggers may write meanwhile (test_watch_private_log counts). */
static void test_marker_roundtrip(void **state)
{
	g_autoptr(kmsg_watch) w = NULL;
	g_autoptr(GPtrArray) hits = g_ptr_array_new_with_free_func((GDestroyNotify)kmsg_hit_free);
	g_autofree char *marker = g_strdup_printf("pmucanary-test-%d", (int)getpid());
	g_autofree char *line = g_strdup_printf("<6>%s: test_kmsg marker line\n", marker);
	struct kmsg_record rec = { 0 };
	unsigned int seen = 0;
	int fd, r;

	if (access(KMSG_PATH, F_OK) != 0)
		test_skip("no %s here", KMSG_PATH);
	r = kmsg_open(NULL, &w);
	if (r == -EACCES || r == -EPERM)
		test_skip("cannot read %s (%s): not root", KMSG_PATH, pc_errmsg());
	if (r)
		fail_msg("kmsg_open: %s", pc_errmsg());
	fd = open(KMSG_PATH, O_RDONLY | O_NONBLOCK);
	assert_true(fd >= 0);
	assert_true(lseek(fd, 0, SEEK_END) >= 0);
	r = kmsg_write(NULL, line);
	if (r == -EACCES || r == -EPERM) {
		close(fd);
		test_skip("cannot write %s (%s): not root", KMSG_PATH, pc_errmsg());
	}
	assert_int_equal(r, 0);
	assert_int_equal(kmsg_read_new(w, hits, &seen), 0);
	assert_true(seen >= 1);
	for (guint i = 0; i < hits->len; i++) {
		struct kmsg_hit *h = hits->pdata[i];

		assert_null(strstr(h->message, marker));
	}
	/* The record is there, as user facility, level 6 */
	assert_true(find_marker(fd, marker, &rec));
	close(fd);
	assert_int_equal(rec.facility, 1);
	assert_int_equal(rec.level, 6);
	assert_int_equal(kmsg_record_classify(&rec), KMSG_CLASS_NONE);
	kmsg_record_clear(&rec);
}

/* kmsg_write() writes the line as given to the log (a temp file here);
 * an empty line writes nothing and is no failure, a path that cannot be
 * opened fails naming it. */
static void test_write_file(void **state)
{
	g_autofree char *dir = g_dir_make_tmp("test_kmsg-XXXXXX", NULL);
	g_autofree char *path = g_build_filename(dir, "kmsg", NULL);
	g_autofree char *missing = g_build_filename(dir, "none", "kmsg", NULL);
	g_autofree char *text = NULL;

	assert_non_null(dir);
	assert_true(g_file_set_contents(path, "", 0, NULL));
	assert_int_equal(kmsg_write(path, ""), 0);
	assert_int_equal(kmsg_write(path, "<14>pmucanary: arm batch 7\n"), 0);
	assert_true(g_file_get_contents(path, &text, NULL, NULL));
	assert_string_equal(text, "<14>pmucanary: arm batch 7\n");
	assert_int_equal(kmsg_write(missing, "x\n"), -ENOENT);
	assert_non_null(strstr(pc_errmsg(), missing));
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_table),
		cmocka_unit_test(test_write_file),
		cmocka_unit_test(test_record_parse),
		cmocka_unit_test(test_watch_private_log),
		cmocka_unit_test(test_marker_roundtrip),
	};

	return test_run_group(tests, NULL, NULL);
}
