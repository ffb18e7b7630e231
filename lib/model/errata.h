/* Known CPU errata: harm that is expected on some CPUs and kernels.
 *
 * A data file (scenarios/errata.ini) lists entries; a harmful cell that
 * matches one is shown as "known erratum <id>" instead of a regression.
 *
 *   [erratum intel-pebs-2012]      section name: "erratum ID"
 *   title    = free text
 *   vendor   = GenuineIntel        (or AuthenticAMD, ...; "*" or absent: any)
 *   family   = 6                   ranges: N, N-M, >=N, <N, "*" (dec or 0x hex)
 *   model    = *
 *   stepping = *
 *   kernel   = <3.7                release range, one or more of <V <=V >V
 *                                  >=V =V, space separated (all must hold)
 *   attr     = precise_ip>=1 exclude_guest=0
 *                                  perf_event_attr members (attr.h names),
 *                                  ops = != < <= > >=, all must hold
 *   harm     = GUEST_CRASH GUEST_CORRUPTION   harm outcomes it explains
 *   reference = free text (commit, URL)
 *
 * Kernel releases compare by their leading numeric parts ("3.6.11" <
 * "3.7" == "3.7.0-rc1"): errata are about release lines, not -rc builds. */
#ifndef PMUCANARY_ERRATA_H
#define PMUCANARY_ERRATA_H

#include "outcome.h"
#include "results.h"

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>

/* A CPU signature from a result file's host fingerprint. -1: unknown. */
struct cpu_sig {
	char vendor[32];           /* "" when unknown */
	int family, model, stepping;
};

/* Reads host.cpu.{vendor,family,model,stepping} (fingerprint.h), or the
 * flat host.{cpu_vendor,family,model,stepping}. Never fails: missing parts
 * stay unknown. */
void cpu_sig_from_host(const json_t *host, struct cpu_sig *out);
/* "GenuineIntel 6/58/9" ("?" for unknown parts); caller g_free()s. */
char *cpu_sig_to_string(const struct cpu_sig *sig);
bool cpu_sig_equal(const struct cpu_sig *a, const struct cpu_sig *b);

/* <0, 0, >0 like strcmp, on the leading numeric parts of two releases. */
int kernel_release_compare(const char *a, const char *b);

struct erratum;

const char *erratum_id(const struct erratum *e);
const char *erratum_title(const struct erratum *e);
const char *erratum_reference(const struct erratum *e);

struct errata;

/* Parses errata text; `name` is used in messages. Errors (-EINVAL) name
 * the file, the line and the key: "errata.ini:12: key 'family': ...". */
int errata_parse(const char *text, const char *name, struct errata **out);
int errata_load(const char *path, struct errata **out);
void errata_free(struct errata *errata);
typedef struct errata errata_set;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(errata_set, errata_free)

size_t errata_count(const struct errata *errata);
const struct erratum *errata_get(const struct errata *errata, size_t i);

/* The first entry that explains this harmful cell measured on a CPU with
 * signature sig under kernel release `kernel`; NULL when none (or when the
 * cell is not harm, or has no attr). errata may be NULL. */
const struct erratum *errata_match(const struct errata *errata,
				   const struct cpu_sig *sig, const char *kernel,
				   const struct cell *cell);

#endif
