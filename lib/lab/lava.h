/* pmucanary as a LAVA job: the job definition, the test cases the device
 * reports, and the way back from a finished job's log to a result set.
 *
 * Case ids. LAVA splits a TESTCASE signal on whitespace and '=' and makes a
 * directory named after the id (lava-test-case), and names test
 * definitions by ^[-_a-zA-Z0-9.]+$; the ids keep to that set:
 *   ESC(profile) "__" ESC(spec)
 * ESC keeps [A-Za-z0-9.-] and writes every other byte as _XX (upper-case
 * hex), so '_' is always followed by two hex digits and "__" can only be
 * the separator. Ids that would pass LAVA_CASE_ID_MAX are not reported
 * (lava_cases_format() counts them).
 *
 * A case's result: pass for OK and errno cells, fail for harm and for a
 * regression against a baseline, skip for harm a known erratum explains and
 * for REJECTED/INFRA (no verdict). Its measurement is k (bad tries) and its
 * units the outcome, "OUTCOME" or "OUTCOME/N" when n > 0.
 *
 * Besides the cases the device prints the run's header (run.json without
 * attrs and cells: fingerprint, kernel, accel, limitations, scenario) as
 * "pmucanary-header I/N BASE64" lines, and its own exit code as the case
 * "pmucanary-exit". The header also holds the messages of REJECTED cells
 * ("lava_rejected": [{error, cases: [ID...]}], messages of at most
 * LAVA_REJECTED_MSG_MAX printable bytes, LAVA_REJECTED_BYTES_MAX of
 * messages and ids in all; "lava_rejected_left_out": how many REJECTED
 * cells come back without theirs), which a case cannot carry. With an
 * artifact URL it POSTs its whole run.json there and names it with
 * lava-test-reference "pmucanary-run-json". */
#ifndef PMUCANARY_LAVA_H
#define PMUCANARY_LAVA_H

#include "results.h"

#include <glib.h>
#include <stdbool.h>

#define LAVA_CASE_ID_MAX 255      /* a directory name in lava-test-case */
#define LAVA_HEADER_CHUNK 60      /* base64 characters per console line */
#define LAVA_LOG_LINE_MAX (1 << 20)
#define LAVA_LOG_LINES_MAX 10000000
#define LAVA_HEADER_CHUNKS_MAX 100000 /* 6 MB of base64 */
/* perf's messages name the spec: a default probe has ~6000 distinct ones
 * for ~8000 REJECTED cells, 0.7 MB with their ids */
#define LAVA_REJECTED_BYTES_MAX (2 << 20)
#define LAVA_REJECTED_MSG_MAX 1024
#define LAVA_EXPORT_DEPTH_MAX 32  /* YAML nesting in a results export */
/* ~30 a case: 250k cases (the default sweep is 140k). json_t costs up to
 * ~230 bytes a node: 8M nodes of "- [{},{},...]" (24 MB) peak at 1.85 GB;
 * a REST export's "{}" counts twice ('{' and ','), 4M of them 0.94 GB. */
#define LAVA_EXPORT_NODES_MAX 8000000

/* The case id of (profile, spec); NULL when longer than LAVA_CASE_ID_MAX or
 * when either is not UTF-8 (the parser refuses what such an id decodes to). */
char *lava_case_id(const char *profile, const char *spec);
/* The reverse: -EINVAL (message says why) when id is not one of ours. */
int lava_case_id_parse(const char *id, char **profile, char **spec);

enum lava_result {
	LAVA_RESULT_PASS,
	LAVA_RESULT_FAIL,
	LAVA_RESULT_SKIP,
	LAVA_RESULT_COUNT
};
const char *lava_result_name(enum lava_result r);
/* LAVA_RESULT_COUNT when name is none of pass/fail/skip. */
enum lava_result lava_result_from_name(const char *name);
/* The result of a cell: regression says the baseline had it better
 * (diff_group_fails), erratum that a known erratum explains its harm. */
enum lava_result lava_case_result(enum outcome outcome, bool regression, bool erratum);

/* The device's side: every cell of set as "case ID RESULT K UNITS" lines
 * after the header lines. base (may be NULL) is the baseline whose
 * regressions fail; errata (may be NULL) turns explained harm into skip.
 * *skipped counts cells whose id is too long. */
struct errata;
int lava_cases_format(const struct result_set *set, const struct result_set *base,
		      const struct errata *errata, GString *out, size_t *skipped);

/* The job definition. */
struct lava_job_opts {
	const char *device_type;      /* a name of lava_device_types */
	const char *job_name;         /* NULL: "pmucanary" */
	const char *kernel_url;
	const char *modules_url;      /* may be NULL */
	const char *ramdisk_url;      /* may be NULL for a device with a rootfs */
	const char *pmucanary_url;    /* tarball with pmucanary-lava/pmucanary, or NULL */
	const char *pmucanary_path;   /* on the device; default "pmucanary" */
	const char *scenario_text;    /* `run` this scenario; or NULL and: */
	char **probe_events;          /* `probe --event E...` (NULL-terminated) */
	char **probe_profiles;        /* `probe --profile P...` */
	const char *baseline_url;     /* run.json to fail regressions against */
	const char *errata_url;       /* errata.ini */
	const char *artifact_url;     /* the device POSTs its run.json here (NULL: no) */
	const char *kernel_args;      /* extra kernel command line, may be NULL */
	unsigned int timeout_min;     /* the test; 0: 60 (the job: 20 more) */
};
/* Known device types, NULL-terminated. */
extern const char *const lava_device_types[];
/* A URL a job may name: http(s)://, ftp:// or file://, printable ASCII
 * without spaces or quotes, at most 2048 bytes. -EINVAL naming what. */
int lava_url_check(const char *what, const char *url);
int lava_job_write(const struct lava_job_opts *opts, GString *out);

/* The collector: a lava-run log (its stdout: one YAML flow mapping per
 * line, {"dt", "lvl", "msg"}; a server's output.yaml has "- " before
 * each) read back into a result set (of the kind the device ran).
 * Strict and bounded: a line that does not parse, a case id or units that
 * are not ours, a result that does not fit its outcome, a header chunk out
 * of order, a log without the job's final result: -EINVAL "name:line:
 * field: why". A job that failed to boot, timed out or was canceled
 * (error_type Infrastructure, Job, Canceled, LAVATimeout, Bug,
 * Configuration) or whose pmucanary did not finish gives *infra true: the
 * set's "lava" object says why, and no case of it is a verdict. */
int lava_collect(const char *text, size_t len, const char *name, struct result_set **out,
		 bool *infra);

/* The same from a LAVA server's results export of the job, a list of test
 * cases {suite, name, result, measurement, unit, metadata}: the YAML of
 * /results/JOB/yaml (lava_results_app.views.testjob_yaml, one
 * export_testcase() each) or the JSON of /api/v0.2/jobs/JOB/tests/
 * (lava_rest_app v02 TestCaseSerializer; one page holding all: its count
 * must equal its results, or a JSON list of such cases); JSON when the
 * text starts with '{' or '['. The job's outcome is the case "job" of
 * suite "lava" (error_type in its metadata). An export has no console
 * lines, so no header: alone, the set's kernel and host are unknown (and
 * "lava"."fingerprint" says so) and REJECTED cells have no message. With
 * the job's log too (log may be NULL), every case, the job's result and
 * error type must be the same in both (-EINVAL naming the case), and the
 * set is the log's. Errors: "name:line: field: why" (YAML), "name:
 * results[i]: field: why" (JSON). */
int lava_collect_export(const char *export, size_t export_len, const char *export_name,
			const char *log, size_t log_len, const char *log_name,
			struct result_set **out, bool *infra);

#endif
