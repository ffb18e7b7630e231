/* pmucanary as a LAVA job (lava.h): case ids, the job definition, the
 * collector of a lava-run log. */
#include "lava.h"

#include "diff.h"
#include "errata.h"
#include "log.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <yaml.h>

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
	GString *id;

	if (!g_utf8_validate(profile, -1, NULL) || !g_utf8_validate(spec, -1, NULL))
		return NULL;
	id = g_string_new(NULL);
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
	/* A cell's profile and spec are UTF-8 (encode refuses others): an id
	 * escaping other bytes is not one of ours, and its spec could not be
	 * written back as the same string. */
	if (!g_utf8_validate(part[0]->str, -1, NULL) || !g_utf8_validate(part[1]->str, -1, NULL))
		return pc_fail(EINVAL, "case id '%s': its escapes decode to bytes that are not UTF-8",
			       id);
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
	key = results_cell_key(c->profile, c->spec);
	return g_hash_table_lookup(idx, key);
}

static bool rejected_msg_ok(const char *msg);

/* A case carries no text: the messages of REJECTED cells travel in the
 * header, each distinct message once with the ids of its cells. Messages
 * the collector would refuse (too long, control bytes) and those past
 * LAVA_REJECTED_BYTES_MAX stay out: *left_out counts their cells. */
static json_t *rejected_table(const struct result_set *set, size_t *left_out)
{
	g_autoptr(GHashTable) by_msg = g_hash_table_new(g_str_hash, g_str_equal);
	json_t *tab = json_array();
	size_t bytes = 0;

	*left_out = 0;
	for (guint i = 0; i < set->cells->len; i++) {
		const struct cell *c = g_ptr_array_index(set->cells, i);
		g_autofree char *id = NULL;
		json_t *ids;

		if (c->outcome != OUTCOME_REJECTED)
			continue;
		if (!c->error || !rejected_msg_ok(c->error) ||
		    !(id = lava_case_id(c->profile, c->spec))) {
			(*left_out)++;
			continue;
		}
		ids = g_hash_table_lookup(by_msg, c->error);
		/* what the entry adds to the JSON, quotes and commas counted */
		if (bytes + strlen(id) + 3 + (ids ? 0 : strlen(c->error) + 24) >
		    LAVA_REJECTED_BYTES_MAX) {
			(*left_out)++;
			continue;
		}
		if (!ids) {
			bytes += strlen(c->error) + 24;
			ids = json_array();
			json_array_append_new(tab, json_pack("{s:s,s:o}", "error", c->error,
							     "cases", ids));
			g_hash_table_insert(by_msg, c->error, ids);
		}
		bytes += strlen(id) + 3;
		json_array_append_new(ids, json_string(id));
	}
	return tab;
}

/* The header: run.json without its attrs and cells, with the REJECTED
 * cells' messages. */
static char *header_b64(const struct result_set *set)
{
	json_t *root = results_to_json(set);
	json_t *rej;
	g_autofree char *text = NULL;
	size_t left_out;

	if (!root)
		return NULL;
	json_object_del(root, "cells");
	json_object_del(root, "attrs");
	rej = rejected_table(set, &left_out);
	if (json_array_size(rej))
		json_object_set_new(root, "lava_rejected", rej);
	else
		json_decref(rej);
	if (left_out)
		json_object_set_new(root, "lava_rejected_left_out", json_integer((json_int_t)left_out));
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
	if (chunks > LAVA_HEADER_CHUNKS_MAX)
		return pc_fail(E2BIG, "the run's header is %zu lines of base64, more than the "
			       "collector takes (%d)", chunks, LAVA_HEADER_CHUNKS_MAX);
	for (size_t i = 0; i < chunks; i++)
		g_string_append_printf(out, "pmucanary-header %zu/%zu %.*s\n", i + 1, chunks,
				       LAVA_HEADER_CHUNK, b64 + i * LAVA_HEADER_CHUNK);
	if (base) {
		idx = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		for (guint i = 0; i < base->cells->len; i++) {
			const struct cell *c = g_ptr_array_index(base->cells, i);

			g_hash_table_replace(idx, results_cell_key(c->profile, c->spec), (gpointer)c);
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
		/* panic=-1 (or any panic=N but 0) reboots a panicked device:
		 * the panic is then only the job's timeout, never a verdict. */
		{
			g_auto(GStrv) words = g_strsplit_set(o->kernel_args, " \t", -1);

			for (char **w = words; *w; w++)
				if (g_str_has_prefix(*w, "panic=") && strcmp(*w, "panic=0"))
					return pc_fail(EINVAL, "kernel args: %s reboots a panicked "
						       "device and hides the panic (the job only "
						       "times out); leave panic= out", *w);
		}
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

/* What a case was reported as, for the agreement of an export and a log. */
struct case_seen {
	char *said;                 /* "RESULT K UNITS" */
	size_t line;
};

static void case_seen_free(struct case_seen *s)
{
	if (s) {
		g_free(s->said);
		g_free(s);
	}
}

struct collect {
	const char *name;
	size_t line;
	long item;                  /* a REST export's results[item]; -1: by line */
	bool is_export;             /* a server's results export: no console */
	bool with_export;           /* a log an export agreed with */
	GString *header;            /* base64 */
	size_t hdr_next, hdr_total;
	GPtrArray *cells;
	GPtrArray *order;           /* case ids as reported */
	GHashTable *ids;            /* case id -> struct case_seen */
	GHashTable *cell_of;        /* case id -> its cell (in cells) */
	char *job_error_type, *job_error_msg, *job_result_s;
	char *job_id;               /* an export's job */
	char *run_json_url;         /* the device's run.json, when it POSTed it */
	int exit_code;              /* -1: not reported */
	size_t failed_cases;        /* cases reported with result fail */
	json_int_t rejected_left_out; /* REJECTED cells the device sent no message of */
};

static void collect_init(struct collect *c, const char *name, bool is_export)
{
	*c = (struct collect){
		.name = name,
		.item = -1,
		.is_export = is_export,
		.header = g_string_new(NULL),
		.cells = g_ptr_array_new_with_free_func((GDestroyNotify)cell_free),
		.order = g_ptr_array_new_with_free_func(g_free),
		.ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					     (GDestroyNotify)case_seen_free),
		.cell_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
		.exit_code = -1,
	};
}

static void collect_clear(struct collect *c)
{
	g_string_free(c->header, TRUE);
	g_ptr_array_free(c->cells, TRUE);
	g_ptr_array_free(c->order, TRUE);
	g_hash_table_destroy(c->ids);
	g_hash_table_destroy(c->cell_of);
	g_free(c->job_result_s);
	g_free(c->job_error_type);
	g_free(c->job_error_msg);
	g_free(c->job_id);
	g_free(c->run_json_url);
}

static int cfail(struct collect *c, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int cfail(struct collect *c, const char *field, const char *fmt, ...)
{
	va_list ap;
	g_autofree char *why = NULL;

	va_start(ap, fmt);
	why = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (c->item >= 0)
		return pc_fail(EINVAL, "%s: results[%ld]: %s: %s", c->name, c->item, field, why);
	return pc_fail(EINVAL, "%s:%zu: %s: %s", c->name, c->line, field, why);
}

/* A case's field by the name its input gives it: lava-run's msg.units, an
 * export's unit (lava_results_app.utils.export_testcase). */
static const char *cfield(const struct collect *c, const char *f)
{
	static const char *const names[][3] = {
		{ "case", "msg.case", "name" },
		{ "units", "msg.units", "unit" },
		{ "result", "msg.result", "result" },
		{ "measurement", "msg.measurement", "measurement" },
		{ "reference", "msg.reference", "metadata.reference" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
		if (!strcmp(f, names[i][0]))
			return names[i][c->is_export ? 2 : 1];
	return f;
}

static int count_text(struct collect *c, const char *s, const char *field, long max, long *out)
{
	char *end;

	if (!g_ascii_isdigit(*s) || strlen(s) > 24)
		return cfail(c, field, "'%s' is not a count", s);
	*out = strtol(s, &end, 10);
	/* "2.0" in a log; a server stores a DecimalField(decimal_places=10):
	 * "2.0000000000", and str() of its zero is "0E-10" (the YAML export) */
	if (*end == '.' && end[1] && strspn(end + 1, "0") == strlen(end + 1))
		end += strlen(end);
	else if (*out == 0 && end == s + 1 && !strcmp(end, "E-10"))
		end += strlen(end);
	if (*end)
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
		double d = json_real_value(v);

		/* "%.1f" would round 1.96 into a count of 2 */
		if (d > -1e15 && d < 1e15 && d != (double)(long long)d)
			return cfail(c, field, "'%g' is not a whole count", d);
		g_snprintf(buf, sizeof(buf), "%.1f", d);
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

#define REJECTED_PLACEHOLDER "rejected by the profile's parser (its message stays in the device's run.json)"

static int collect_case(struct collect *c, json_t *msg, const char *id, const char *result)
{
	g_autofree char *profile = NULL, *spec = NULL;
	g_autoptr(results_cell) cell = NULL;
	const char *units = sget(msg, "units");
	g_auto(GStrv) u = NULL;
	enum lava_result r = lava_result_from_name(result);
	struct case_seen *seen;
	enum outcome oc;
	long k = 0, n = 0;
	int ret;

	if (r == LAVA_RESULT_COUNT)
		return cfail(c, cfield(c, "result"), "'%s' is not pass, fail or skip", result);
	if (!strcmp(id, "pmucanary-run-json")) {
		const char *ref = sget(msg, "reference");

		if (c->run_json_url)
			return cfail(c, cfield(c, "case"), "pmucanary-run-json reported twice");
		if (!ref || lava_url_check("reference", ref) < 0)
			return cfail(c, cfield(c, "reference"), "not a URL pmucanary would POST to");
		c->run_json_url = g_strdup(ref);
		return 0;
	}
	if (!strcmp(id, "pmucanary-exit")) {
		if (c->exit_code >= 0)
			return cfail(c, cfield(c, "case"), "pmucanary-exit reported twice");
		if ((ret = count_get(c, json_object_get(msg, "measurement"),
				     cfield(c, "measurement"), 255, &k)) < 0)
			return ret;
		c->exit_code = (int)k;
		return 0;
	}
	if (lava_case_id_parse(id, &profile, &spec) < 0)
		return cfail(c, cfield(c, "case"), "%s", pc_errmsg());
	if (g_hash_table_contains(c->ids, id))
		return cfail(c, cfield(c, "case"), "'%s' reported twice", id);
	if (!units)
		return cfail(c, cfield(c, "units"), "missing (the outcome)");
	u = g_strsplit(units, "/", 3);
	oc = outcome_from_name(u[0]);
	if (oc == OUTCOME_COUNT)
		return cfail(c, cfield(c, "units"), "'%s' is not an outcome", u[0]);
	if (u[1] && u[2])
		return cfail(c, cfield(c, "units"), "'%s' is not OUTCOME[/N]", units);
	if (u[1] && (ret = count_text(c, u[1], cfield(c, "units"), 1000000, &n)) < 0)
		return ret;
	if ((ret = count_get(c, json_object_get(msg, "measurement"), cfield(c, "measurement"),
			     1000000, &k)) < 0)
		return ret;
	if (k > n || (u[1] && n == 0))
		return cfail(c, cfield(c, "measurement"), "k=%ld of n=%ld", k, n);
	/* The result must be one this outcome can have (lava_case_result). */
	if (r != lava_case_result(oc, r == LAVA_RESULT_FAIL, r == LAVA_RESULT_SKIP))
		return cfail(c, cfield(c, "result"), "'%s' does not fit outcome %s", result,
			     outcome_name(oc));
	cell = cell_new(NULL, profile, spec);
	/* the device's message, when its header carries it, replaces this
	 * (collect_rejected) */
	if (oc == OUTCOME_REJECTED)
		cell_set_error(cell, REJECTED_PLACEHOLDER);
	cell->outcome = oc;
	cell->k = (int)k;
	cell->n = (int)n;
	c->failed_cases += r == LAVA_RESULT_FAIL;
	seen = g_new0(struct case_seen, 1);
	seen->said = g_strdup_printf("%s %ld %s", result, k, units);
	seen->line = c->item >= 0 ? (size_t)c->item : c->line;
	g_hash_table_insert(c->ids, g_strdup(id), seen);
	g_hash_table_insert(c->cell_of, g_strdup(id), cell);
	g_ptr_array_add(c->order, g_strdup(id));
	g_ptr_array_add(c->cells, g_steal_pointer(&cell));
	return 0;
}

static int collect_header(struct collect *c, const char *msg)
{
	unsigned long i, total;
	char *end;
	const char *p = msg + strlen("pmucanary-header ");

	/* As the device writes it: decimal digits, '/', digits, one space
	 * (strtoul would take " +1/ 2" too). */
	if (!g_ascii_isdigit(*p))
		return cfail(c, "msg", "header line without I/N");
	i = strtoul(p, &end, 10);
	if (end == p || *end != '/' || !g_ascii_isdigit(end[1]))
		return cfail(c, "msg", "header line without I/N");
	p = end + 1;
	total = strtoul(p, &end, 10);
	if (end == p || *end != ' ' || total == 0 || total > LAVA_HEADER_CHUNKS_MAX || i == 0 || i > total)
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

/* The case "job" of LAVA's own suite: the job's result, and its error type
 * and message when it failed (meta: the log's msg, or an export's metadata). */
static int collect_job_result(struct collect *c, const char *field, const char *result,
			      json_t *meta)
{
	if (c->job_result_s)
		return cfail(c, field, "the job's result twice");
	c->job_result_s = g_strdup(result);
	c->job_error_type = g_strdup(sget(meta, "error_type"));
	c->job_error_msg = g_strdup(sget(meta, "error_msg"));
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
		else if (!strcmp(def, "lava") && !strcmp(cs, "job"))
			ret = collect_job_result(c, "msg.case", res, msg);
		else if (strcmp(def, "lava") && g_str_has_suffix(def, "_pmucanary")) {
			/* The job's result is its last word: nothing of ours after it. */
			ret = c->job_result_s ? cfail(c, "msg.case", "'%s' after the job's result", cs)
					      : collect_case(c, msg, cs, res);
		}
	} else if (!strcmp(lvl, "target") && json_is_string(msg) &&
		   g_str_has_prefix(json_string_value(msg), "pmucanary-header ")) {
		ret = c->job_result_s ? cfail(c, "msg", "a header line after the job's result")
				      : collect_header(c, json_string_value(msg));
	}
	json_decref(root);
	return ret;
}

static bool rejected_msg_ok(const char *msg)
{
	size_t n = strlen(msg);

	if (!n || n > LAVA_REJECTED_MSG_MAX || !g_utf8_validate(msg, (gssize)n, NULL))
		return false;
	for (const char *p = msg; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return false;
	return true;
}

/* The device's messages of REJECTED cells (the header's lava_rejected:
 * [{error, cases: [ID...]}]). Untrusted: bounded, every id a REJECTED case
 * of this job, one message each. */
static int collect_rejected(struct collect *c, json_t *tab)
{
	g_autoptr(GHashTable) done = g_hash_table_new(g_str_hash, g_str_equal);
	json_t *e, *id;
	size_t i, j;

	/* the header's own bound (LAVA_HEADER_CHUNKS_MAX) bounds the table */
	if (!json_is_array(tab))
		return pc_fail(EINVAL, "%s: header: lava_rejected: not a list", c->name);
	json_array_foreach(tab, i, e) {
		const char *msg = sget(e, "error");
		json_t *ids = json_object_get(e, "cases");

		if (!json_is_object(e) || json_object_size(e) != 2 || !msg || !rejected_msg_ok(msg) ||
		    !json_is_array(ids) || !json_array_size(ids))
			return pc_fail(EINVAL, "%s: header: lava_rejected[%zu]: not {error: a "
				       "printable message of 1 to %d bytes, cases: [ID...]}",
				       c->name, i, LAVA_REJECTED_MSG_MAX);
		json_array_foreach(ids, j, id) {
			const char *s = json_string_value(id);
			struct cell *cell = s ? g_hash_table_lookup(c->cell_of, s) : NULL;

			if (!cell || cell->outcome != OUTCOME_REJECTED)
				return pc_fail(EINVAL, "%s: header: lava_rejected[%zu]: case %zu is "
					       "not a REJECTED case of the job", c->name, i, j);
			if (!g_hash_table_add(done, (gpointer)s))
				return pc_fail(EINVAL, "%s: header: lava_rejected[%zu]: '%s' has a "
					       "second message", c->name, i, s);
			cell_set_error(cell, msg);
		}
	}
	return 0;
}

/* The run's header from its base64 lines, and the REJECTED messages in it. */
static int collect_header_set(struct collect *c, struct result_set **set)
{
	gsize len = 0;
	g_autofree guchar *raw = g_base64_decode(c->header->str, &len);
	g_autofree char *txt = g_strndup((const char *)raw, len);
	g_autofree char *hname = g_strdup_printf("%s: header", c->name);
	json_error_t jerr;
	json_t *root = json_loads(txt, JSON_REJECT_DUPLICATES, &jerr);
	json_t *rej, *left;
	int ret;

	if (!root || !json_is_object(root)) {
		json_decref(root);
		return pc_fail(EINVAL, "%s: header: not JSON (%s)", c->name,
			       root ? "not an object" : jerr.text);
	}
	rej = json_incref(json_object_get(root, "lava_rejected"));
	json_object_del(root, "lava_rejected");
	left = json_object_get(root, "lava_rejected_left_out");
	if (left && (!json_is_integer(left) || json_integer_value(left) < 1 ||
		     json_integer_value(left) > (json_int_t)c->cells->len)) {
		json_decref(rej);
		json_decref(root);
		return pc_fail(EINVAL, "%s: header: lava_rejected_left_out: not a count of 1 to "
			       "%u cells", c->name, c->cells->len);
	}
	c->rejected_left_out = left ? json_integer_value(left) : 0;
	json_object_del(root, "lava_rejected_left_out");
	json_object_set_new(root, "attrs", json_array());
	json_object_set_new(root, "cells", json_array());
	ret = results_from_json(root, hname, set);
	json_decref(root);
	if (ret == 0 && rej)
		ret = collect_rejected(c, rej);
	json_decref(rej);
	return ret < 0 ? -EINVAL : 0;
}

static int collect_finish(struct collect *c, struct result_set **out, bool *infra)
{
	g_autoptr(result_set) set = NULL;
	json_t *lava;
	const char *why = NULL;

	if (!c->job_result_s) {
		if (c->is_export)
			return pc_fail(EINVAL, "%s: job: no case 'job' in suite 'lava' (the job's "
				       "result: not finished yet?)", c->name);
		return pc_fail(EINVAL, "%s:%zu: job: the log ends before the job's result "
			       "(truncated?)", c->name, c->line);
	}
	if (c->hdr_total && c->hdr_next != c->hdr_total)
		return pc_fail(EINVAL, "%s: header: %zu of %zu chunks", c->name, c->hdr_next,
			       c->hdr_total);
	if (c->hdr_total && collect_header_set(c, &set) < 0)
		return -EINVAL;
	if (strcmp(c->job_result_s, "pass"))
		why = "the LAVA job failed";
	else if (c->job_error_type && *c->job_error_type)
		why = "the LAVA job passed with an error type (canceled or cut short)";
	else if (c->exit_code < 0)
		why = "pmucanary on the device never reported its exit code";
	else if (c->exit_code > 1)
		why = "pmucanary on the device could not test (exit code >= 2)";
	else if (!set && !c->is_export)
		why = "the device printed no pmucanary header";
	else if (c->exit_code == 1 && !c->failed_cases)
		/* harm or a regression said, none shown: cases were lost (a
		 * case id LAVA could not take, a truncated log) */
		why = "pmucanary on the device exited 1 (harm or a regression) but no case it "
		      "reported failed";
	*infra = why != NULL;
	if (!set) {
		set = result_set_new(RESULTS_KIND_RUN);
		g_free(set->kernel);
		/* an export alone: which kernel and host ran is not in it */
		set->kernel = c->job_id ? g_strdup_printf("unknown (LAVA job %s)", c->job_id)
					: g_strdup("unknown");
	}
	lava = json_object();
	json_object_set_new(lava, "verdict", json_string(why ? "INFRA" : "collected"));
	json_object_set_new(lava, "source", json_string(c->with_export ? "results export and job log"
							: c->is_export ? "results export" : "job log"));
	if (c->job_id)
		json_object_set_new(lava, "job_id", results_json_string(c->job_id));
	json_object_set_new(lava, "job_result", results_json_string(c->job_result_s));
	if (c->job_error_type)
		json_object_set_new(lava, "error_type", results_json_string(c->job_error_type));
	if (c->job_error_msg)
		json_object_set_new(lava, "error_msg", results_json_string(c->job_error_msg));
	if (why)
		json_object_set_new(lava, "why", json_string(why));
	if (c->is_export)
		json_object_set_new(lava, "fingerprint",
				    json_string("unknown: a results export carries no console "
						"output; collect it with the job's log for the "
						"device's header"));
	if (c->exit_code >= 0)
		json_object_set_new(lava, "device_exit_code", json_integer(c->exit_code));
	json_object_set_new(lava, "cases_reported", json_integer(c->cells->len));
	if (c->run_json_url)
		json_object_set_new(lava, "run_json", json_string(c->run_json_url));
	if (c->rejected_left_out)
		json_object_set_new(lava, "rejected_messages_left_out",
				    json_integer(c->rejected_left_out));
	if (!set->extra)
		set->extra = json_object();
	json_object_set_new(set->extra, "lava", lava);
	if (why) {
		/* Never a kernel verdict: the cells it reported stay out. */
		results_add_limitation(set, "INFRA: %s%s%s", why,
				       c->job_error_type ? ": LAVA error type " : "",
				       c->job_error_type ? c->job_error_type : "");
	} else {
		if (c->is_export)
			results_add_limitation(set, "collected from a LAVA server's results export "
					       "alone: per cell the outcome and k/n; the device's "
					       "fingerprint (host, kernel, accel) and a rejected "
					       "spec's message are unknown; attrs, tries and "
					       "evidence stay in the device's run.json");
		else
			results_add_limitation(set, "collected from a LAVA job: per cell the outcome, "
					       "k/n and a rejected spec's message; attrs, tries "
					       "and evidence stay in the device's run.json");
		for (guint i = 0; i < c->cells->len; i++)
			results_add_cell(set, g_steal_pointer(&g_ptr_array_index(c->cells, i)));
	}
	*out = g_steal_pointer(&set);
	return 0;
}

static int collect_log(struct collect *c, const char *text, size_t len)
{
	size_t pos = 0;
	int ret = 0;

	while (pos < len && ret == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		c->line++;
		if (c->line > LAVA_LOG_LINES_MAX)
			ret = cfail(c, "line", "more than %d lines", LAVA_LOG_LINES_MAX);
		else if (n > LAVA_LOG_LINE_MAX)
			ret = cfail(c, "line", "longer than %d bytes", LAVA_LOG_LINE_MAX);
		else if (memchr(text + pos, '\0', n))
			ret = cfail(c, "line", "a NUL byte");
		else
			ret = collect_line(c, text + pos, n);
		pos += n + 1;
	}
	return ret;
}

int lava_collect(const char *text, size_t len, const char *name, struct result_set **out,
		 bool *infra)
{
	struct collect c;
	int ret;

	*out = NULL;
	*infra = false;
	collect_init(&c, name, false);
	ret = collect_log(&c, text, len);
	if (ret == 0)
		ret = collect_finish(&c, out, infra);
	collect_clear(&c);
	return ret;
}

/* ---- a LAVA server's results export ---- */

/* A YAML document as JSON, every scalar a string: LAVA writes the export's
 * values as strings (export_testcase: str(...)), and the metadata as it
 * came from the log. Bounded in depth and nodes; aliases are refused (an
 * export has none, and they are how a small file becomes a huge tree).
 * lines (may be NULL) gets the line of each item of a top-level sequence;
 * where names the input in messages ("FILE" gets ":LINE"). */
static int yaml_to_json(const char *text, size_t len, const char *where, bool with_line,
			json_t **out, GArray *lines)
{
	yaml_parser_t p;
	yaml_event_t ev;
	json_t *stack[LAVA_EXPORT_DEPTH_MAX];
	char *keys[LAVA_EXPORT_DEPTH_MAX] = { NULL };
	json_t *root = NULL;
	int depth = 0, docs = 0, ret = 0;
	size_t nodes = 0, line = 0;
	bool done = false;

#define YFAIL(...) do { \
		g_autofree char *why_ = g_strdup_printf(__VA_ARGS__); \
		ret = with_line ? pc_fail(EINVAL, "%s:%zu: %s", where, line, why_) \
				: pc_fail(EINVAL, "%s: %s", where, why_); \
	} while (0)

	*out = NULL;
	if (!yaml_parser_initialize(&p))
		return pc_fail(ENOMEM, "cannot start a YAML parser");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done && ret == 0) {
		json_t *node = NULL;

		if (!yaml_parser_parse(&p, &ev)) {
			line = p.problem_mark.line + 1;
			YFAIL("yaml: %s", p.problem ? p.problem : "does not parse");
			break;
		}
		line = ev.start_mark.line + 1;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1)
				YFAIL("yaml: a second document");
			break;
		case YAML_ALIAS_EVENT:
			YFAIL("yaml: an alias (a LAVA export has none)");
			break;
		case YAML_SCALAR_EVENT:
			/* "\0" passes the raw text's NUL check; sget() would cut
			 * the value there ("lava\0evil" read as lava) */
			if (memchr(ev.data.scalar.value, '\0', ev.data.scalar.length)) {
				YFAIL("%s: a NUL byte", depth > 0 && json_is_object(stack[depth - 1]) &&
				      keys[depth - 1] ? keys[depth - 1] : "yaml");
				break;
			}
			node = json_stringn((const char *)ev.data.scalar.value,
					    ev.data.scalar.length);
			if (!node)
				YFAIL("yaml: a scalar that is not UTF-8 text");
			break;
		case YAML_SEQUENCE_START_EVENT:
			node = json_array();
			break;
		case YAML_MAPPING_START_EVENT:
			node = json_object();
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (!node)
			continue;
		if (++nodes > LAVA_EXPORT_NODES_MAX) {
			YFAIL("yaml: more than %d nodes", LAVA_EXPORT_NODES_MAX);
			json_decref(node);
			break;
		}
		if (depth == 0) {
			root = node;
		} else if (json_is_array(stack[depth - 1])) {
			json_array_append_new(stack[depth - 1], node);
			if (lines && depth == 1)
				g_array_append_val(lines, line);
		} else if (!keys[depth - 1]) {
			if (!json_is_string(node)) {
				YFAIL("yaml: a key that is not a scalar");
				json_decref(node);
				break;
			}
			keys[depth - 1] = g_strdup(json_string_value(node));
			json_decref(node);
			continue;
		} else {
			g_autofree char *key = g_steal_pointer(&keys[depth - 1]);

			if (json_object_get(stack[depth - 1], key)) {
				YFAIL("%s: a key twice", key);
				json_decref(node);
				break;
			}
			json_object_set_new(stack[depth - 1], key, node);
		}
		if (json_is_array(node) || json_is_object(node)) {
			if (depth == LAVA_EXPORT_DEPTH_MAX) {
				YFAIL("yaml: nested deeper than %d", LAVA_EXPORT_DEPTH_MAX);
				break;
			}
			stack[depth++] = node;
		}
	}
#undef YFAIL
	yaml_parser_delete(&p);
	for (int i = 0; i < LAVA_EXPORT_DEPTH_MAX; i++)
		g_free(keys[i]);
	if (ret < 0 || !root) {
		json_decref(root);
		return ret < 0 ? ret : pc_fail(EINVAL, "%s: empty", where);
	}
	*out = root;
	return 0;
}

/* One test case of an export: export_testcase()'s mapping (the YAML) or
 * the REST API's TestCaseSerializer (lava_rest_app/v02/serializers.py:
 * "unit" for units, "result" its code, "suite" a number, "metadata" the
 * YAML text of the log's result line). */
static int export_case(struct collect *c, json_t *it, bool rest)
{
	const char *name = sget(it, "name"), *result = sget(it, "result"), *suite;
	json_t *meta = json_object_get(it, "metadata"), *owned = NULL, *msg, *m;
	int ret;

	if (!json_is_object(it))
		return cfail(c, "case", "not a mapping");
	if (!name || !result)
		return cfail(c, !name ? "name" : "result", "missing");
	if (rest && json_is_string(meta) && *json_string_value(meta)) {
		g_autofree char *where = g_strdup_printf("%s: results[%ld]: metadata", c->name,
							 c->item);
		const char *t = json_string_value(meta);

		if ((ret = yaml_to_json(t, strlen(t), where, false, &owned, NULL)) < 0)
			return ret;
		meta = owned;
	} else if (!meta || json_is_null(meta) || (json_is_string(meta) && rest)) {
		meta = owned = json_object();
	}
	if (!json_is_object(meta)) {
		json_decref(owned);
		return cfail(c, "metadata", "not a mapping");
	}
	/* The REST API names the suite by number; the metadata has its name. */
	suite = rest ? sget(meta, "definition") : sget(it, "suite");
	if (!suite) {
		json_decref(owned);
		return cfail(c, rest ? "metadata.definition" : "suite", "missing");
	}
	if (!rest) {
		const char *job = sget(it, "job");

		if (!job || !*job || strlen(job) > 32) {
			json_decref(owned);
			return cfail(c, "job", "missing or not a job id");
		}
		if (c->job_id && strcmp(c->job_id, job)) {
			json_decref(owned);
			return cfail(c, "job", "'%s' in an export of job %s", job, c->job_id);
		}
		if (!c->job_id)
			c->job_id = g_strdup(job);
	}
	if (!strcmp(suite, "lava")) {
		ret = 0;
		if (!strcmp(name, "job"))
			ret = collect_job_result(c, "name", result, meta);
		json_decref(owned);
		return ret;
	}
	if (!g_str_has_suffix(suite, "_pmucanary")) {
		json_decref(owned);
		return 0;
	}
	/* As the log's msg: what collect_case reads. */
	msg = json_object();
	if (sget(it, "unit") && *sget(it, "unit"))
		json_object_set(msg, "units", json_object_get(it, "unit"));
	m = json_object_get(it, "measurement");
	if (m && !json_is_null(m) && g_strcmp0(json_string_value(m), "None"))
		json_object_set(msg, "measurement", m);
	if (json_object_get(meta, "reference"))
		json_object_set(msg, "reference", json_object_get(meta, "reference"));
	ret = collect_case(c, msg, name, result);
	json_decref(msg);
	json_decref(owned);
	return ret;
}

/* How many values a JSON text makes at most: each is the root, the first
 * of a container or after a comma. json_loadb has no bound of its own
 * (30M items of {} took 6.9 GB before the case count was looked at). */
static size_t json_values_max(const char *text, size_t len)
{
	size_t n = 1;
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		if (in_string) {
			if (text[i] == '\\')
				i++;
			else if (text[i] == '"')
				in_string = false;
		} else if (text[i] == '"') {
			in_string = true;
		} else if (text[i] == '{' || text[i] == '[' || text[i] == ',') {
			n++;
		}
	}
	return n;
}

static int collect_export(struct collect *c, const char *text, size_t len)
{
	g_autoptr(GArray) lines = g_array_new(FALSE, FALSE, sizeof(size_t));
	size_t skip = 0;
	json_t *root = NULL, *items;
	bool rest;
	size_t i;
	json_t *it;
	int ret = 0;

	if (memchr(text, '\0', len))
		return pc_fail(EINVAL, "%s: a NUL byte (not a LAVA results export)", c->name);
	while (skip < len && g_ascii_isspace(text[skip]))
		skip++;
	rest = skip < len && (text[skip] == '{' || text[skip] == '[');

	/* The REST API answers JSON; the YAML export is a block sequence,
	 * which never starts with '{' or '['. */
	if (rest) {
		json_error_t jerr;

		if (json_values_max(text, len) > LAVA_EXPORT_NODES_MAX)
			return pc_fail(EINVAL, "%s: json: more than %d nodes", c->name,
				       LAVA_EXPORT_NODES_MAX);
		root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
		if (!root)
			return pc_fail(EINVAL, "%s:%d: json: %s", c->name, jerr.line, jerr.text);
	} else if ((ret = yaml_to_json(text, len, c->name, true, &root, lines)) < 0) {
		return ret;
	}
	items = root;
	if (rest && json_is_object(root)) {
		/* One page of LimitOffsetPagination: {count, next, previous, results}. */
		json_t *count = json_object_get(root, "count");

		items = json_object_get(root, "results");
		if (!json_is_array(items) || !json_is_integer(count))
			ret = pc_fail(EINVAL, "%s: not the REST API's {count, results} of a job's "
				      "tests", c->name);
		else if ((json_int_t)json_array_size(items) != json_integer_value(count))
			ret = pc_fail(EINVAL, "%s: results: %zu of the job's %" JSON_INTEGER_FORMAT
				      " cases (one page: ask for all, ?limit=%" JSON_INTEGER_FORMAT
				      ")", c->name, json_array_size(items), json_integer_value(count),
				      json_integer_value(count));
	}
	if (ret == 0 && !json_is_array(items))
		ret = pc_fail(EINVAL, "%s: not a list of test cases", c->name);
	if (ret == 0 && json_array_size(items) > LAVA_LOG_LINES_MAX)
		ret = pc_fail(EINVAL, "%s: more than %d test cases", c->name, LAVA_LOG_LINES_MAX);
	json_array_foreach(items, i, it) {
		if (ret < 0)
			break;
		if (rest)
			c->item = (long)i;
		else
			c->line = g_array_index(lines, size_t, i);
		ret = export_case(c, it, rest);
	}
	json_decref(root);
	c->item = -1;
	return ret;
}

/* The export and the log are the same job: every case the same. */
static int collect_agree(struct collect *e, struct collect *l)
{
	for (guint i = 0; i < e->order->len; i++) {
		const char *id = g_ptr_array_index(e->order, i);
		struct case_seen *a = g_hash_table_lookup(e->ids, id);
		struct case_seen *b = g_hash_table_lookup(l->ids, id);

		if (!b)
			return pc_fail(EINVAL, "%s: case %s: in the export, not in %s", e->name, id,
				       l->name);
		if (strcmp(a->said, b->said))
			return pc_fail(EINVAL, "%s: case %s: '%s' in the export, '%s' in %s:%zu",
				       e->name, id, a->said, b->said, l->name, b->line);
	}
	for (guint i = 0; i < l->order->len; i++) {
		const char *id = g_ptr_array_index(l->order, i);

		if (!g_hash_table_contains(e->ids, id))
			return pc_fail(EINVAL, "%s: case %s: in %s:%zu, not in the export", e->name,
				       id, l->name, ((struct case_seen *)g_hash_table_lookup(l->ids,
										id))->line);
	}
	if (!e->job_result_s || !l->job_result_s || strcmp(e->job_result_s, l->job_result_s) ||
	    g_strcmp0(e->job_error_type, l->job_error_type))
		return pc_fail(EINVAL, "%s: job: '%s' (%s) in the export, '%s' (%s) in %s", e->name,
			       e->job_result_s ? e->job_result_s : "none",
			       e->job_error_type ? e->job_error_type : "no error",
			       l->job_result_s ? l->job_result_s : "none",
			       l->job_error_type ? l->job_error_type : "no error", l->name);
	if (e->exit_code != l->exit_code)
		return pc_fail(EINVAL, "%s: case pmucanary-exit: %d in the export, %d in %s",
			       e->name, e->exit_code, l->exit_code, l->name);
	if (g_strcmp0(e->run_json_url, l->run_json_url))
		return pc_fail(EINVAL, "%s: case pmucanary-run-json: differs from %s", e->name,
			       l->name);
	return 0;
}

int lava_collect_export(const char *export, size_t export_len, const char *export_name,
			const char *log, size_t log_len, const char *log_name,
			struct result_set **out, bool *infra)
{
	struct collect e, l;
	int ret;

	*out = NULL;
	*infra = false;
	collect_init(&e, export_name, true);
	collect_init(&l, log_name ? log_name : "", false);
	ret = collect_export(&e, export, export_len);
	if (ret == 0 && log) {
		ret = collect_log(&l, log, log_len);
		if (ret == 0 && !l.job_result_s)
			ret = pc_fail(EINVAL, "%s:%zu: job: the log ends before the job's result "
				      "(truncated?)", l.name, l.line);
		if (ret == 0)
			ret = collect_agree(&e, &l);
		if (ret == 0) {
			/* The log's cells (its header names their messages); the
			 * export's job id. */
			l.with_export = true;
			l.job_id = g_strdup(e.job_id);
		}
	}
	if (ret == 0)
		ret = collect_finish(log ? &l : &e, out, infra);
	collect_clear(&e);
	collect_clear(&l);
	return ret;
}
