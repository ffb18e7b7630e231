/* Reproducers: one cell of a result file as a self-contained C program and
 * a syzbot-style README.txt, to hand to a kernel maintainer who has no
 * pmucanary (issue 26).
 *
 * repro.c opens the cell's final attr (the one its outcome belongs to) the
 * way the run did: an errno cell as the open phase (lib/host/prober.c: pid -1,
 * each online CPU in turn, closed at once; the first failure is the
 * verdict), an OK or harm cell as the load phase (lib/host/load.c: opened
 * disabled on every online CPU, a ring buffer of 1 + ring_pages pages
 * each, enabled together, drained while it dwells, disabled, drained,
 * closed). It exits 0 when the kernel does what the cell says (harm and OK
 * cells: it opened everywhere; errno cells: that errno), 1 when not, with
 * one line saying what it got. Only <linux/perf_event.h> and libc.
 *
 * Everything taken from the result file is untrusted: in repro.c it only
 * appears inside C string literals (every byte outside printable ASCII, and
 * " \ ?, as an octal escape) and comments (repro_c_comment_append), in the
 * README escaped as text (textesc.h) and bounded. */
#ifndef PMUCANARY_REPRO_H
#define PMUCANARY_REPRO_H

#include "results.h"

#include <glib.h>
#include <stdbool.h>

/* The scenario's default dwell, used when the result file has none (a
 * probe) and none is given. */
#define REPRO_DEFAULT_DWELL_MS 2000
/* Bounds on evidence text copied into README.txt. */
#define REPRO_EVIDENCE_STRING_MAX 8192   /* per string: its tail is kept */
#define REPRO_EVIDENCE_TOTAL_MAX 65536   /* the whole evidence section */

struct repro_opts {
	unsigned int dwell_ms;     /* 0: the file's, else REPRO_DEFAULT_DWELL_MS */
};

/* Whether a cell gets a reproducer by default: it has an attr and its
 * outcome is a harm or an errno. */
bool repro_cell_default(const struct cell *cell);

/* Whether a run writes the cell's reproducer itself (RUN/repro/, linked
 * from report.html): a harm with an attr that was armed alone, not judged
 * by a rule (a rule's class can be thousands of cells; its sample cells
 * are armed alone and get theirs). */
bool repro_cell_auto(const struct cell *cell);

/* The cell of set named "PROFILE:SPEC" (the profile is the part before the
 * first ':' that makes a cell's name match). 0 and *out, or -ENOENT (no
 * such cell) or -EINVAL (no attr, or an outcome that is no kernel verdict:
 * INFRA, REJECTED) with a message naming it. */
int repro_find_cell(const struct result_set *set, const char *name, const struct cell **out);

/* A directory name for the cell, safe on any file system: bytes other than
 * [A-Za-z0-9._-] of profile and spec as %XX, joined by "+", never starting
 * with '.', at most 200 bytes (longer: cut, plus a hash of the whole).
 * g_free() it. */
char *repro_dir_name(const struct cell *cell);

/* s as the inside of a C string literal (no quotes added). */
void repro_c_string_append(GString *out, const char *s);
/* s as text safe inside a C comment: printable ASCII but '*', '\\' and
 * '?' kept, everything else as \xNN. */
void repro_c_comment_append(GString *out, const char *s);

/* The attr as designated-initializer lines, one member per line, tab
 * indented: "\t.type = 1,\n". Members that are zero are left out but type
 * and size, always written. */
void repro_c_attr_append(GString *out, const struct perf_event_attr *attr);
/* The attr as perf -vv prints it (tools/perf/util/perf_event_attr_fprintf.c
 * in __open_attr__fprintf's "  %-32s %s" layout): non-zero members only,
 * perf's order and names. Read from a torvalds/linux version of that file
 * that prints type and config as bare numbers (later perf adds symbolic
 * names after them: not done here); read_format's LOST is named, and
 * bits perf has no name for are shown in hex instead of dropped. */
void repro_perf_attr_append(GString *out, const struct perf_event_attr *attr);

/* The duration the cell's program dwells: opts->dwell_ms, else the
 * scenario's [load] dwell_ms in the file, else REPRO_DEFAULT_DWELL_MS.
 * *from says which ("--dwell", "the run's scenario", "default"). */
unsigned int repro_dwell_ms(const struct result_set *set, const struct repro_opts *opts,
			    const char **from);

/* The whole repro.c and README.txt of a cell (that has an attr). */
GString *repro_c_source(const struct result_set *set, const struct cell *cell,
			const struct repro_opts *opts);
GString *repro_readme(const struct result_set *set, const char *result_name,
		      const struct cell *cell, const struct repro_opts *opts);

/* guest.sh for a harm cell of a run: boots the run's initramfs guest
 * (guest_kernel's path, initrd and cmdline in run.json, the scenario's
 * memory and vCPUs, the run's accel) with plain QEMU, its console and
 * heartbeat port to files, builds and runs ./repro beside it for the
 * dwell, then watches a grace time more. Exit 1 when the guest was harmed
 * (a panic on its console, a CORRUPT line, an oops count that grew, no
 * new heartbeat for the run's heartbeat timeout, QEMU gone), 0 when not,
 * 125 when the guest never sent a first heartbeat or QEMU, the kernel or
 * the initrd is missing. Its values from the file are shell-quoted, and
 * one that holds a control or non-ASCII byte is refused. NULL with *why
 * (static text) when the cell or the file cannot have one: not a harm, a
 * probe, disk guests, a run.json without the guest's recipe (older), an
 * unquotable value. */
GString *repro_guest_sh(const struct result_set *set, const struct cell *cell,
			const struct repro_opts *opts, const char **why);

/* Writes dir/<repro_dir_name>/repro.c and README.txt, and guest.sh (mode
 * 0755) when repro_guest_sh() gives one (directories made as
 * needed, files through outfile_write). *written (g_free) is the cell's
 * directory. 0 or a negative errno with a message. */
int repro_write(const struct result_set *set, const char *result_name,
		const struct cell *cell, const struct repro_opts *opts, const char *dir,
		char **written);

#endif
