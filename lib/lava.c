/* pmucanary as a LAVA job (lava.h): case ids, the job definition, the
 * collector of a lava-run log. */
#include "lava.h"

#include "diff.h"
#include "errata.h"
#include "log.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

static bool id_keeps(unsigned char c)
{
	return g_ascii_isalnum(c) || c == '.' || c == '-';
}

static void id_escape(GString *out, const char *s)
{
	for (; *s; s++) {
		if (id_keeps((unsigned char)*s))
			g_string_append_c(out, *s);
		else
			g_string_append_printf(out, "_%02X", (unsigned char)*s);
	}
}

char *lava_case_id(const char *profile, const char *spec)
{
	GString *id = g_string_new(NULL);

	id_escape(id, profile);
	g_string_append(id, "__");
	id_escape(id, spec);
	if (id->len > LAVA_CASE_ID_MAX) {
		g_string_free(id, TRUE);
		return NULL;
	}
	return g_string_free(id, FALSE);
}

int lava_case_id_parse(const char *id, char **profile, char **spec)
{
	g_autoptr(GString) p0 = g_string_new(NULL);
	g_autoptr(GString) p1 = g_string_new(NULL);
	GString *part[2] = { p0, p1 };
	int which = 0;
	size_t n = strlen(id);

	if (n > LAVA_CASE_ID_MAX)
		return pc_fail(EINVAL, "case id longer than %d bytes", LAVA_CASE_ID_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)id[i];

		if (id_keeps(c)) {
			g_string_append_c(part[which], (char)c);
		} else if (c == '_' && id[i + 1] == '_' && which == 0) {
			which = 1;
			i++;
		} else if (c == '_' && g_ascii_isxdigit(id[i + 1]) && g_ascii_isxdigit(id[i + 2]) &&
			   !g_ascii_islower(id[i + 1]) && !g_ascii_islower(id[i + 2])) {
			int v = g_ascii_xdigit_value(id[i + 1]) * 16 + g_ascii_xdigit_value(id[i + 2]);

			/* Only bytes ESC escapes: one id per cell, and no NUL. */
			if (v == 0 || id_keeps((unsigned char)v))
				return pc_fail(EINVAL, "case id '%s': _%c%c is not an escape",
					       id, id[i + 1], id[i + 2]);
			g_string_append_c(part[which], (char)v);
			i += 2;
		} else {
			return pc_fail(EINVAL, "case id '%s': byte %zu is not ours", id, i);
		}
	}
	if (which != 1 || !part[0]->len || !part[1]->len)
		return pc_fail(EINVAL, "case id '%s' is not PROFILE__SPEC", id);
	*profile = g_strdup(part[0]->str);
	*spec = g_strdup(part[1]->str);
	return 0;
}

static const char *const result_names[LAVA_RESULT_COUNT] = { "pass", "fail", "skip" };

const char *lava_result_name(enum lava_result r)
{
	return r < LAVA_RESULT_COUNT ? result_names[r] : "?";
}

enum lava_result lava_result_from_name(const char *name)
{
	for (int r = 0; r < LAVA_RESULT_COUNT; r++)
		if (!strcmp(name, result_names[r]))
			return r;
	return LAVA_RESULT_COUNT;
}

enum lava_result lava_case_result(enum outcome outcome, bool regression, bool erratum)
{
	switch (outcome_class(outcome)) {
	case OUTCOME_CLASS_OK:
	case OUTCOME_CLASS_ERRNO:
		return regression ? LAVA_RESULT_FAIL : LAVA_RESULT_PASS;
	case OUTCOME_CLASS_HARM:
		return erratum ? LAVA_RESULT_SKIP : LAVA_RESULT_FAIL;
	default:
		/* INFRA and REJECTED: no kernel verdict either way. */
		return LAVA_RESULT_SKIP;
	}
}

static const struct cell *base_find(GHashTable *idx, const struct cell *c)
{
	g_autofree char *key = NULL;

	if (!idx)
		return NULL;
	key = g_strdup_printf("%s%c%s", c->profile, 0x1f, c->spec);
	return g_hash_table_lookup(idx, key);
}

/* The header: run.json without its attrs and cells. */
static char *header_b64(const struct result_set *set)
{
	json_t *root = results_to_json(set);
	g_autofree char *text = NULL;

	if (!root)
		return NULL;
	json_object_del(root, "cells");
	json_object_del(root, "attrs");
	text = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(root);
	return text ? g_base64_encode((const guchar *)text, strlen(text)) : NULL;
}

int lava_cases_format(const struct result_set *set, const struct result_set *base,
		      const struct errata *errata, GString *out, size_t *skipped)
{
	g_autoptr(GHashTable) idx = NULL;
	g_autofree char *b64 = header_b64(set);
	struct cpu_sig sig;
	size_t len, chunks;

	if (!b64)
		return pc_fail(ENOMEM, "cannot encode the run's header");
	len = strlen(b64);
	chunks = (len + LAVA_HEADER_CHUNK - 1) / LAVA_HEADER_CHUNK;
	for (size_t i = 0; i < chunks; i++)
		g_string_append_printf(out, "pmucanary-header %zu/%zu %.*s\n", i + 1, chunks,
				       LAVA_HEADER_CHUNK, b64 + i * LAVA_HEADER_CHUNK);
	if (base) {
		idx = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		for (guint i = 0; i < base->cells->len; i++) {
			const struct cell *c = g_ptr_array_index(base->cells, i);

			g_hash_table_replace(idx, g_strdup_printf("%s%c%s", c->profile, 0x1f,
								  c->spec), (gpointer)c);
		}
	}
	cpu_sig_from_host(set->host, &sig);
	*skipped = 0;
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = g_ptr_array_index(set->cells, i);
		const struct cell *b = base_find(idx, c);
		g_autofree char *id = lava_case_id(c->profile, c->spec);
		bool regression = b && diff_group_fails(diff_classify(b->outcome, c->outcome));
		bool erratum = errata && errata_match(errata, &sig,
						      c->kernel && *c->kernel ? c->kernel : set->kernel, c);

		if (!id) {
			(*skipped)++;
			continue;
		}
		g_string_append_printf(out, "case %s %s %d %s", id,
				       lava_result_name(lava_case_result(c->outcome, regression,
									 erratum)),
				       c->k, outcome_name(c->outcome));
		if (c->n > 0)
			g_string_append_printf(out, "/%d", c->n);
		g_string_append_c(out, '\n');
	}
	return 0;
}

/* ---- the job definition ---- */

struct device_type {
	const char *name;
	const char *deploy_to;   /* "tmpfs" (qemu) or "tftp" */
	const char *boot_method; /* "qemu" or "ipxe" */
};

/* qemu: LAVA's own qemu device type; x86: LAVA's x86 device type (iPXE
 * over the network, as x86 boards in LAVA labs boot). */
static const struct device_type device_types[] = {
	{ "qemu", "tmpfs", "qemu" },
	{ "x86", "tftp", "ipxe" },
};

const char *const lava_device_types[] = { "qemu", "x86", NULL };

int lava_url_check(const char *what, const char *url)
{
	static const char *const schemes[] = { "http://", "https://", "ftp://", "file:///" };
	bool ok = false;
	size_t n = strlen(url);

	for (size_t i = 0; i < G_N_ELEMENTS(schemes); i++)
		ok |= g_str_has_prefix(url, schemes[i]) && n > strlen(schemes[i]);
	if (!ok)
		return pc_fail(EINVAL, "%s '%s': not an http://, https://, ftp:// or file:/// URL",
			       what, url);
	if (n > 2048)
		return pc_fail(EINVAL, "%s: URL longer than 2048 bytes", what);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)url[i];

		/* It lands in YAML and in a shell word on the device. */
		if (c <= ' ' || c >= 0x7f || strchr("'\"`\\{}<>$", c))
			return pc_fail(EINVAL, "%s: byte %zu of the URL (0x%02x) is not allowed",
				       what, i, c);
	}
	return 0;
}

/* YAML double-quoted scalars take JSON's escapes. */
static void yq(GString *out, const char *s)
{
	json_t *j = json_string(s);
	char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	g_string_append(out, t ? t : "\"\"");
	free(t);
	json_decref(j);
}

static void shq(GString *out, const char *s)
{
	g_string_append_c(out, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			g_string_append(out, "'\\''");
		else
			g_string_append_c(out, *s);
	}
	g_string_append_c(out, '\'');
}

static void step(GString *out, const char *cmd)
{
	g_string_append(out, "          - ");
	yq(out, cmd);
	g_string_append_c(out, '\n');
}

static int word_check(const char *what, const char *s)
{
	if (!*s || strlen(s) > 256)
		return pc_fail(EINVAL, "%s: empty or longer than 256 bytes", what);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			return pc_fail(EINVAL, "%s '%s': spaces or control bytes", what, s);
	return 0;
}

/* One image of a deploy; ind is its indent. tmpfs ramdisks get LAVA's
 * overlay appended to the cpio (tftp deploys add it themselves). */
static void image(GString *out, int ind, const char *label, const char *url, const char *arg,
		  bool overlay)
{
	g_string_append_printf(out, "%*s%s:\n", ind, "", label);
	if (arg) {
		g_string_append_printf(out, "%*simage_arg: ", ind + 2, "");
		yq(out, arg);
		g_string_append_c(out, '\n');
	}
	g_string_append_printf(out, "%*surl: ", ind + 2, "");
	yq(out, url);
	g_string_append_c(out, '\n');
	if (g_str_has_suffix(url, ".gz"))
		g_string_append_printf(out, "%*scompression: gz\n", ind + 2, "");
	else if (g_str_has_suffix(url, ".xz"))
		g_string_append_printf(out, "%*scompression: xz\n", ind + 2, "");
	if (overlay)
		g_string_append_printf(out, "%*sformat: cpio.newc\n%*soverlays:\n%*slava: true\n",
				       ind + 2, "", ind + 2, "", ind + 4, "");
}

static void device_steps(const struct lava_job_opts *o, GString *out)
{
	g_autoptr(GString) cmd = g_string_new(NULL);

	/* How pmucanary reaches the device: a tarball whose
	 * pmucanary-lava/pmucanary runs it with its own libraries, or a
	 * binary the ramdisk or rootfs already has. */
	if (o->pmucanary_url) {
		g_string_assign(cmd, "mkdir -p /tmp/pmucanary && cd /tmp/pmucanary && wget -q -O pc.tgz ");
		shq(cmd, o->pmucanary_url);
		g_string_append(cmd, " && tar -xzf pc.tgz && cd / && PC=/tmp/pmucanary/pmucanary-lava/pmucanary");
	} else {
		g_string_assign(cmd, "PC=");
		shq(cmd, o->pmucanary_path ? o->pmucanary_path : "pmucanary");
	}
	step(out, cmd->str);
	step(out, "mkdir -p /tmp/pmucanary/res && CASEOPTS=");
	if (o->baseline_url) {
		g_string_assign(cmd, "wget -q -O /tmp/pmucanary/base.json ");
		shq(cmd, o->baseline_url);
		g_string_append(cmd, " && CASEOPTS=\"$CASEOPTS --baseline /tmp/pmucanary/base.json\"");
		step(out, cmd->str);
	}
	if (o->errata_url) {
		g_string_assign(cmd, "wget -q -O /tmp/pmucanary/errata.ini ");
		shq(cmd, o->errata_url);
		g_string_append(cmd, " && CASEOPTS=\"$CASEOPTS --errata /tmp/pmucanary/errata.ini\"");
		step(out, cmd->str);
	}
	if (o->scenario_text) {
		g_autofree char *b64 = g_base64_encode((const guchar *)o->scenario_text,
						       strlen(o->scenario_text));

		g_string_printf(cmd, "echo %s | base64 -d > /tmp/pmucanary/scenario.ini", b64);
		step(out, cmd->str);
		/* LAVA's run.sh has `set -e`: a verdict of harm (exit 1) must not
		 * end the test before its cases are reported */
		step(out, "RC=0; \"$PC\" run /tmp/pmucanary/scenario.ini --results /tmp/pmucanary/res "
			  "|| RC=$?; RJ=$(ls /tmp/pmucanary/res/*/run.json 2>/dev/null | head -n 1)");
	} else {
		g_string_assign(cmd, "RC=0; \"$PC\" probe --json /tmp/pmucanary/res/run.json");
		for (char **e = o->probe_events; e && *e; e++) {
			g_string_append(cmd, " --event ");
			shq(cmd, *e);
		}
		for (char **p = o->probe_profiles; p && *p; p++) {
			g_string_append(cmd, " --profile ");
			shq(cmd, *p);
		}
		g_string_append(cmd, " >/dev/null || RC=$?; RJ=/tmp/pmucanary/res/run.json");
		step(out, cmd->str);
	}
	/* 0 and 1 are verdicts; 2 and 125 mean the device could not test. */
	step(out, "if [ \"$RC\" -le 1 ]; then R=pass; else R=fail; fi; "
		  "lava-test-case pmucanary-exit --result $R --measurement \"$RC\" --units exit-code");
	step(out, "[ -f \"$RJ\" ] && \"$PC\" lava cases \"$RJ\" $CASEOPTS | while read K A B C D; do "
		  "if [ \"$K\" = case ]; then lava-test-case \"$A\" --result \"$B\" "
		  "--measurement \"$C\" --units \"$D\"; else echo \"$K $A $B\"; fi; done");
	/* run.json as an artifact: LAVA stores none itself; a lab's storage
	 * takes the POST and the job references it. */
	if (o->artifact_url) {
		g_string_assign(cmd, "[ -f \"$RJ\" ] && wget -q -O /dev/null --post-file \"$RJ\" ");
		shq(cmd, o->artifact_url);
		g_string_append(cmd, " && lava-test-reference pmucanary-run-json --result pass --reference ");
		shq(cmd, o->artifact_url);
		step(out, cmd->str);
	}
}

int lava_job_write(const struct lava_job_opts *o, GString *out)
{
	const struct device_type *dt = NULL;
	unsigned int timeout = o->timeout_min ? o->timeout_min : 60;
	g_autoptr(GString) kargs = g_string_new("console=ttyS0,115200");
	int ret;

	for (size_t i = 0; i < G_N_ELEMENTS(device_types); i++)
		if (!strcmp(o->device_type, device_types[i].name))
			dt = &device_types[i];
	if (!dt)
		return pc_fail(EINVAL, "device type '%s' is not one pmucanary knows (qemu, x86)",
			       o->device_type);
	if ((ret = lava_url_check("kernel", o->kernel_url)) < 0 ||
	    (o->modules_url && (ret = lava_url_check("modules", o->modules_url)) < 0) ||
	    (o->ramdisk_url && (ret = lava_url_check("ramdisk", o->ramdisk_url)) < 0) ||
	    (o->pmucanary_url && (ret = lava_url_check("pmucanary", o->pmucanary_url)) < 0) ||
	    (o->baseline_url && (ret = lava_url_check("baseline", o->baseline_url)) < 0) ||
	    (o->errata_url && (ret = lava_url_check("errata", o->errata_url)) < 0) ||
	    (o->artifact_url && (ret = lava_url_check("artifact", o->artifact_url)) < 0))
		return ret;
	if (!o->ramdisk_url)
		return pc_fail(EINVAL, "the job needs a ramdisk URL (the device boots into it)");
	if (o->modules_url && !strcmp(dt->deploy_to, "tmpfs"))
		return pc_fail(EINVAL, "modules: the qemu device type boots a kernel and a "
			       "ramdisk; put the modules into the ramdisk");
	if (!o->scenario_text && !(o->probe_events && *o->probe_events))
		return pc_fail(EINVAL, "the job needs a scenario or probe events");
	for (char **e = o->probe_events; e && *e; e++)
		if ((ret = word_check("probe event", *e)) < 0)
			return ret;
	for (char **p = o->probe_profiles; p && *p; p++)
		if ((ret = word_check("probe profile", *p)) < 0)
			return ret;
	if (o->pmucanary_path && (ret = word_check("pmucanary path", o->pmucanary_path)) < 0)
		return ret;
	if (o->job_name && (ret = word_check("job name", o->job_name)) < 0)
		return ret;
	if (o->kernel_args) {
		for (const char *p = o->kernel_args; *p; p++)
			if ((unsigned char)*p < ' ' || (unsigned char)*p >= 0x7f ||
			    strchr("'\"`\\{}$", *p))
				return pc_fail(EINVAL, "kernel args: byte 0x%02x is not allowed",
					       (unsigned char)*p);
		g_string_append_printf(kargs, " %s", o->kernel_args);
	}

	g_string_append(out, "# pmucanary LAVA job (LAVA 2023.01 job schema)\n");
	g_string_append(out, "device_type: ");
	yq(out, dt->name);
	g_string_append(out, "\njob_name: ");
	yq(out, o->job_name ? o->job_name : "pmucanary");
	/* The job outlives its actions: deploy and boot get 10 minutes each. */
	g_string_append_printf(out, "\npriority: medium\nvisibility: public\n"
				    "timeouts:\n  job: {minutes: %u}\n  action: {minutes: %u}\n"
				    "  connection: {minutes: 2}\n", timeout + 20, timeout);
	if (!strcmp(dt->name, "qemu")) {
		g_string_append(out, "context:\n  arch: amd64\n");
	} else if (o->kernel_args) {
		g_string_append(out, "context:\n  extra_kernel_args: ");
		yq(out, o->kernel_args);
		g_string_append_c(out, '\n');
	}
	g_string_append(out, "actions:\n- deploy:\n");
	g_string_append_printf(out, "    to: %s\n    timeout: {minutes: 10}\n", dt->deploy_to);
	if (!strcmp(dt->deploy_to, "tmpfs")) {
		g_autofree char *arg = g_strdup_printf("-kernel {kernel} -append \"%s\"", kargs->str);

		g_string_append(out, "    images:\n");
		image(out, 6, "kernel", o->kernel_url, arg, false);
		image(out, 6, "ramdisk", o->ramdisk_url, "-initrd {ramdisk}", true);
	} else {
		g_string_append(out, "    os: oe\n");
		image(out, 4, "kernel", o->kernel_url, NULL, false);
		g_string_append(out, "      type: bzimage\n");
		image(out, 4, "ramdisk", o->ramdisk_url, NULL, false);
		if (o->modules_url)
			image(out, 4, "modules", o->modules_url, NULL, false);
	}
	g_string_append_printf(out, "- boot:\n    method: %s\n", dt->boot_method);
	if (!strcmp(dt->boot_method, "qemu"))
		g_string_append(out, "    media: tmpfs\n");
	else
		g_string_append(out, "    commands: ramdisk\n");
	g_string_append_printf(out, "    timeout: {minutes: 10}\n    prompts: [\"/ # \", \"# \"]\n"
				    "- test:\n    timeout: {minutes: %u}\n    definitions:\n"
				    "    - from: inline\n      name: pmucanary\n"
				    "      path: inline/pmucanary.yaml\n      repository:\n"
				    "        metadata:\n          format: Lava-Test Test Definition 1.0\n"
				    "          name: pmucanary\n"
				    "          description: pmucanary cells as test cases\n"
				    "        run:\n          steps:\n", timeout);
	device_steps(o, out);
	return 0;
}

/* ---- the collector ---- */

/* lava-run's log lines are YAML flow mappings in double-quoted style
 * (lava_common.log.dump: yaml.dump(default_flow_style=True,
 * default_style='"')): JSON but for the non-specific tag "! " before some
 * strings ("size": ! "8247232") and YAML's own escapes (\e, \xHH, \N,
 * \UHHHHHHHH, ...). Rewrite those as JSON and let jansson judge the rest. */
static void unyaml_escape(GString *s, const char *line, size_t n, size_t *i)
{
	static const struct {
		char c;
		const char *json;
	} simple[] = {
		{ 'e', "\\u001b" }, { '0', "\\u0000" }, { 'a', "\\u0007" }, { 'v', "\\u000b" },
		{ 'N', "\\u0085" }, { '_', "\\u00a0" }, { 'L', "\\u2028" }, { 'P', "\\u2029" },
		{ ' ', " " }, { '\t', "\\t" },
	};
	char c = *i + 1 < n ? line[*i + 1] : '\0';

	for (size_t k = 0; k < G_N_ELEMENTS(simple); k++) {
		if (c == simple[k].c) {
			g_string_append(s, simple[k].json);
			*i += 1;
			return;
		}
	}
	if (c == 'x' && *i + 3 < n && g_ascii_isxdigit(line[*i + 2]) &&
	    g_ascii_isxdigit(line[*i + 3])) {
		g_string_append_printf(s, "\\u00%c%c", line[*i + 2], line[*i + 3]);
		*i += 3;
		return;
	}
	if (c == 'U' && *i + 9 < n) {
		char hex[9];
		guint64 cp;

		memcpy(hex, line + *i + 2, 8);
		hex[8] = '\0';
		if (g_ascii_string_to_unsigned(hex, 16, 0x10000, 0x10ffff, &cp, NULL)) {
			cp -= 0x10000;
			g_string_append_printf(s, "\\u%04x\\u%04x", (unsigned)(0xd800 + (cp >> 10)),
					       (unsigned)(0xdc00 + (cp & 0x3ff)));
			*i += 9;
			return;
		}
	}
	/* JSON's own (\" \\ \/ \b \f \n \r \t \uHHHH) or not valid: jansson says. */
	g_string_append_c(s, '\\');
	if (c) {
		g_string_append_c(s, c);
		*i += 1;
	}
}

static char *untag(const char *line, size_t n)
{
	GString *s = g_string_sized_new(n);
	bool in = false;

	for (size_t i = 0; i < n; i++) {
		char c = line[i];

		if (in) {
			if (c == '\\')
				unyaml_escape(s, line, n, &i);
			else
				g_string_append_c(s, c);
			if (c == '"')
				in = false;
		} else if (c == '!' && i + 1 < n && line[i + 1] == ' ') {
			i++;
		} else {
			if (c == '"')
				in = true;
			g_string_append_c(s, c);
		}
	}
	return g_string_free(s, FALSE);
}

struct collect {
	const char *name;
	size_t line;
	GString *header;            /* base64 */
	size_t hdr_next, hdr_total;
	GPtrArray *cells;
	GHashTable *ids;
	char *job_error_type, *job_error_msg, *job_result_s;
	char *run_json_url;         /* the device's run.json, when it POSTed it */
	int exit_code;              /* -1: not reported */
};

static int cfail(struct collect *c, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int cfail(struct collect *c, const char *field, const char *fmt, ...)
{
	va_list ap;
	g_autofree char *why = NULL;

	va_start(ap, fmt);
	why = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	return pc_fail(EINVAL, "%s:%zu: %s: %s", c->name, c->line, field, why);
}

static int count_text(struct collect *c, const char *s, const char *field, long max, long *out)
{
	char *end;

	if (!g_ascii_isdigit(*s) || strlen(s) > 12)
		return cfail(c, field, "'%s' is not a count", s);
	*out = strtol(s, &end, 10);
	if (*end && strcmp(end, ".0"))
		return cfail(c, field, "'%s' is not a whole count", s);
	if (*out > max)
		return cfail(c, field, "%ld is out of range (at most %ld)", *out, max);
	return 0;
}

/* A decimal count as LAVA writes a measurement: "2", "2.0", 2 or 2.0. */
static int count_get(struct collect *c, json_t *v, const char *field, long max, long *out)
{
	const char *s;
	char buf[32];

	if (json_is_integer(v)) {
		g_snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		s = buf;
	} else if (json_is_real(v)) {
		g_snprintf(buf, sizeof(buf), "%.1f", json_real_value(v));
		s = buf;
	} else if (json_is_string(v)) {
		s = json_string_value(v);
	} else {
		return cfail(c, field, "not a number");
	}
	return count_text(c, s, field, max, out);
}

static const char *sget(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int collect_case(struct collect *c, json_t *msg, const char *id, const char *result)
{
	g_autofree char *profile = NULL, *spec = NULL;
	g_autoptr(results_cell) cell = NULL;
	const char *units = sget(msg, "units");
	g_auto(GStrv) u = NULL;
	enum lava_result r = lava_result_from_name(result);
	enum outcome oc;
	long k = 0, n = 0;
	int ret;

	if (r == LAVA_RESULT_COUNT)
		return cfail(c, "msg.result", "'%s' is not pass, fail or skip", result);
	if (!strcmp(id, "pmucanary-run-json")) {
		const char *ref = sget(msg, "reference");

		if (c->run_json_url)
			return cfail(c, "msg.case", "pmucanary-run-json reported twice");
		if (!ref || lava_url_check("msg.reference", ref) < 0)
			return cfail(c, "msg.reference", "not a URL pmucanary would POST to");
		c->run_json_url = g_strdup(ref);
		return 0;
	}
		if (!strcmp(id, "pmucanary-exit")) {
		if (c->exit_code >= 0)
			return cfail(c, "msg.case", "pmucanary-exit reported twice");
		if ((ret = count_get(c, json_object_get(msg, "measurement"), "msg.measurement",
				     255, &k)) < 0)
			return ret;
		c->exit_code = (int)k;
		return 0;
	}
	if (lava_case_id_parse(id, &profile, &spec) < 0)
		return cfail(c, "msg.case", "%s", pc_errmsg());
	if (g_hash_table_contains(c->ids, id))
		return cfail(c, "msg.case", "'%s' reported twice", id);
	if (!units)
		return cfail(c, "msg.units", "missing (the outcome)");
	u = g_strsplit(units, "/", 3);
	oc = outcome_from_name(u[0]);
	if (oc == OUTCOME_COUNT)
		return cfail(c, "msg.units", "'%s' is not an outcome", u[0]);
	if (u[1] && u[2])
		return cfail(c, "msg.units", "'%s' is not OUTCOME[/N]", units);
	if (u[1] && (ret = count_text(c, u[1], "msg.units", 1000000, &n)) < 0)
		return ret;
	if ((ret = count_get(c, json_object_get(msg, "measurement"), "msg.measurement",
			     1000000, &k)) < 0)
		return ret;
	if (k > n || (u[1] && n == 0))
		return cfail(c, "msg.measurement", "k=%ld of n=%ld", k, n);
	/* The result must be one this outcome can have (lava_case_result). */
	if (r != lava_case_result(oc, r == LAVA_RESULT_FAIL, r == LAVA_RESULT_SKIP))
		return cfail(c, "msg.result", "'%s' does not fit outcome %s", result,
			     outcome_name(oc));
	cell = cell_new(NULL, profile, spec);
	if (oc == OUTCOME_REJECTED)
		cell_set_error(cell, "rejected by the profile's parser (perf's message stays "
				     "in the device's run.json)");
	cell->outcome = oc;
	cell->k = (int)k;
	cell->n = (int)n;
	g_hash_table_add(c->ids, g_strdup(id));
	g_ptr_array_add(c->cells, g_steal_pointer(&cell));
	return 0;
}

static int collect_header(struct collect *c, const char *msg)
{
	unsigned long i, total;
	char *end;
	const char *p = msg + strlen("pmucanary-header ");

	i = strtoul(p, &end, 10);
	if (end == p || *end != '/')
		return cfail(c, "msg", "header line without I/N");
	p = end + 1;
	total = strtoul(p, &end, 10);
	if (end == p || *end != ' ' || total == 0 || total > 100000 || i == 0 || i > total)
		return cfail(c, "msg", "header chunk %lu/%lu out of range", i, total);
	if (c->hdr_total && total != c->hdr_total)
		return cfail(c, "msg", "header chunk count %lu, was %zu", total, c->hdr_total);
	if (i != c->hdr_next + 1)
		return cfail(c, "msg", "header chunk %lu where %zu was next", i, c->hdr_next + 1);
	p = end + 1;
	if (strlen(p) > LAVA_HEADER_CHUNK || (i < total && strlen(p) != LAVA_HEADER_CHUNK))
		return cfail(c, "msg", "header chunk %lu has %zu characters", i, strlen(p));
	for (const char *q = p; *q; q++)
		if (!g_ascii_isalnum(*q) && !strchr("+/=", *q))
			return cfail(c, "msg", "header chunk %lu is not base64", i);
	c->hdr_total = total;
	c->hdr_next = i;
	g_string_append(c->header, p);
	return 0;
}

static int collect_line(struct collect *c, const char *line, size_t n)
{
	g_autofree char *text = NULL;
	json_error_t jerr;
	json_t *root, *msg;
	const char *lvl;
	int ret = 0;

	/* A LAVA server's output.yaml holds the same mappings as a YAML
	 * sequence: "- {...}" per line. */
	if (n >= 2 && line[0] == '-' && line[1] == ' ') {
		line += 2;
		n -= 2;
	}
	text = untag(line, n);
	root = json_loads(text, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);

	if (!root)
		return cfail(c, "line", "not a lava-run log line (%s)", jerr.text);
	if (!json_is_object(root) || !(lvl = sget(root, "lvl")) || !sget(root, "dt") ||
	    !(msg = json_object_get(root, "msg"))) {
		json_decref(root);
		return cfail(c, "line", "not a {dt, lvl, msg} mapping");
	}
	if (!strcmp(lvl, "results")) {
		const char *def = sget(msg, "definition"), *cs = sget(msg, "case"),
			   *res = sget(msg, "result");

		if (!json_is_object(msg) || !def || !cs || !res)
			ret = cfail(c, "msg", "a result without definition, case or result");
		else if (!strcmp(def, "lava") && !strcmp(cs, "job")) {
			if (c->job_result_s) {
				json_decref(root);
				return cfail(c, "msg.case", "the job's result twice");
			}
			c->job_result_s = g_strdup(res);
			c->job_error_type = g_strdup(sget(msg, "error_type"));
			c->job_error_msg = g_strdup(sget(msg, "error_msg"));
		} else if (strcmp(def, "lava") && g_str_has_suffix(def, "_pmucanary")) {
			ret = collect_case(c, msg, cs, res);
		}
	} else if (!strcmp(lvl, "target") && json_is_string(msg) &&
		   g_str_has_prefix(json_string_value(msg), "pmucanary-header ")) {
		ret = collect_header(c, json_string_value(msg));
	}
	json_decref(root);
	return ret;
}

static int collect_finish(struct collect *c, struct result_set **out, bool *infra)
{
	g_autoptr(result_set) set = NULL;
	json_t *lava = json_object();
	const char *why = NULL;

	if (!c->job_result_s) {
		json_decref(lava);
		return pc_fail(EINVAL, "%s:%zu: job: the log ends before the job's result "
			       "(truncated?)", c->name, c->line);
	}
	if (c->hdr_total && c->hdr_next != c->hdr_total) {
		json_decref(lava);
		return pc_fail(EINVAL, "%s: header: %zu of %zu chunks", c->name, c->hdr_next,
			       c->hdr_total);
	}
	if (c->hdr_total) {
		gsize len = 0;
		g_autofree guchar *raw = g_base64_decode(c->header->str, &len);
		g_autofree char *txt = g_strndup((const char *)raw, len);
		json_error_t jerr;
		json_t *root = json_loads(txt, JSON_REJECT_DUPLICATES, &jerr);
		g_autofree char *hname = g_strdup_printf("%s: header", c->name);

		if (!root || !json_is_object(root)) {
			json_decref(root);
			json_decref(lava);
			return pc_fail(EINVAL, "%s: header: not JSON (%s)", c->name,
				       root ? "not an object" : jerr.text);
		}
		json_object_set_new(root, "attrs", json_array());
		json_object_set_new(root, "cells", json_array());
		if (results_from_json(root, hname, &set) < 0) {
			json_decref(root);
			json_decref(lava);
			return -EINVAL;
		}
		json_decref(root);
	}
	if (strcmp(c->job_result_s, "pass"))
		why = "the LAVA job failed";
	else if (c->exit_code < 0)
		why = "pmucanary on the device never reported its exit code";
	else if (c->exit_code > 1)
		why = "pmucanary on the device could not test (exit code >= 2)";
	else if (!set)
		why = "the device printed no pmucanary header";
	*infra = why != NULL;
	if (!set) {
		set = result_set_new(RESULTS_KIND_RUN);
		g_free(set->kernel);
		set->kernel = g_strdup("unknown");
	}
	json_object_set_new(lava, "verdict", json_string(why ? "INFRA" : "collected"));
	json_object_set_new(lava, "job_result", json_string(c->job_result_s));
	if (c->job_error_type)
		json_object_set_new(lava, "error_type", results_json_string(c->job_error_type));
	if (c->job_error_msg)
		json_object_set_new(lava, "error_msg", results_json_string(c->job_error_msg));
	if (why)
		json_object_set_new(lava, "why", json_string(why));
	if (c->exit_code >= 0)
		json_object_set_new(lava, "device_exit_code", json_integer(c->exit_code));
	json_object_set_new(lava, "cases_reported", json_integer(c->cells->len));
	if (c->run_json_url)
		json_object_set_new(lava, "run_json", json_string(c->run_json_url));
	if (!set->extra)
		set->extra = json_object();
	json_object_set_new(set->extra, "lava", lava);
	if (why) {
		/* Never a kernel verdict: the cells it reported stay out. */
		results_add_limitation(set, "INFRA: %s%s%s", why,
				       c->job_error_type ? ": LAVA error type " : "",
				       c->job_error_type ? c->job_error_type : "");
	} else {
		results_add_limitation(set, "collected from a LAVA job log: per cell the "
				       "outcome and k/n; attrs, tries, evidence and perf's "
				       "messages stay in the device's run.json");
		for (guint i = 0; i < c->cells->len; i++)
			results_add_cell(set, g_steal_pointer(&g_ptr_array_index(c->cells, i)));
	}
	*out = g_steal_pointer(&set);
	return 0;
}

int lava_collect(const char *text, size_t len, const char *name, struct result_set **out,
		 bool *infra)
{
	struct collect c = {
		.name = name,
		.header = g_string_new(NULL),
		.cells = g_ptr_array_new_with_free_func((GDestroyNotify)cell_free),
		.ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
		.exit_code = -1,
	};
	size_t pos = 0;
	int ret = 0;

	*out = NULL;
	*infra = false;
	while (pos < len && ret == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		c.line++;
		if (c.line > LAVA_LOG_LINES_MAX)
			ret = cfail(&c, "line", "more than %d lines", LAVA_LOG_LINES_MAX);
		else if (n > LAVA_LOG_LINE_MAX)
			ret = cfail(&c, "line", "longer than %d bytes", LAVA_LOG_LINE_MAX);
		else if (memchr(text + pos, '\0', n))
			ret = cfail(&c, "line", "a NUL byte");
		else
			ret = collect_line(&c, text + pos, n);
		pos += n + 1;
	}
	if (ret == 0)
		ret = collect_finish(&c, out, infra);
	g_string_free(c.header, TRUE);
	g_ptr_array_free(c.cells, TRUE);
	g_hash_table_destroy(c.ids);
	g_free(c.job_result_s);
	g_free(c.job_error_type);
	g_free(c.job_error_msg);
	g_free(c.run_json_url);
	return ret;
}
