/* Known CPU errata: the data file and matching (see errata.h). */
#include "errata.h"

#include "attr.h"
#include "infile.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum errata_op {
	ERRATA_OP_EQ,
	ERRATA_OP_NE,
	ERRATA_OP_LT,
	ERRATA_OP_LE,
	ERRATA_OP_GT,
	ERRATA_OP_GE,
	ERRATA_OP_COUNT
};

/* Longest first so "<=" is not read as "<". */
static const struct {
	const char *text;
	enum errata_op op;
} op_table[] = {
	{ "!=", ERRATA_OP_NE }, { "<=", ERRATA_OP_LE }, { ">=", ERRATA_OP_GE },
	{ "==", ERRATA_OP_EQ }, { "=", ERRATA_OP_EQ },  { "<", ERRATA_OP_LT },
	{ ">", ERRATA_OP_GT },
};

struct range {
	int64_t lo, hi;            /* inclusive; INT64_MIN/INT64_MAX open */
};

struct attr_cond {
	enum attr_field field;
	enum errata_op op;
	uint64_t value;
};

struct kernel_cond {
	enum errata_op op;
	char *release;
};

struct erratum {
	char *id;
	char *title;
	char *reference;
	char *vendor;              /* NULL: any */
	struct range family, model, stepping;
	GArray *kernel;            /* struct kernel_cond */
	GArray *attr;              /* struct attr_cond */
	bool harm[OUTCOME_COUNT];
	bool has_harm;
};

struct errata {
	GPtrArray *entries;        /* struct erratum * */
};

/* ---- CPU signature and kernel releases ---- */

/* The numbers perf's parser reads: 0x.. hex, else decimal ("010" is ten).
 * -ERANGE above max; -EINVAL for signs, spaces, other bases or garbage. */
static int number_parse(const char *s, guint64 max, guint64 *out)
{
	g_autoptr(GError) err = NULL;
	guint base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!g_ascii_isxdigit(*s) ||
	    !g_ascii_string_to_unsigned(s, base, 0, max, out, &err))
		return err && g_error_matches(err, G_NUMBER_PARSER_ERROR,
					      G_NUMBER_PARSER_ERROR_OUT_OF_BOUNDS) ? -ERANGE : -EINVAL;
	return 0;
}

/* A CPU part from run data; -1 (unknown) unless it is a number in int range,
 * so 2^32+6 never passes for family 6. */
static int json_int_or(const json_t *o, const char *key)
{
	json_t *v = o ? json_object_get(o, key) : NULL;
	guint64 n;

	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);

		return i >= 0 && i <= G_MAXINT ? (int)i : -1;
	}
	if (json_is_string(v) && number_parse(json_string_value(v), G_MAXINT, &n) == 0)
		return (int)n;
	return -1;
}

void cpu_sig_from_host(const json_t *host, struct cpu_sig *out)
{
	const json_t *cpu = host ? json_object_get(host, "cpu") : NULL;
	const char *vendor = NULL;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(cpu))
		cpu = NULL;
	if (cpu)
		vendor = json_string_value(json_object_get(cpu, "vendor"));
	if (!vendor && host)
		vendor = json_string_value(json_object_get(host, "cpu_vendor"));
	g_strlcpy(out->vendor, vendor ? vendor : "", sizeof(out->vendor));
	out->family = json_int_or(cpu ? cpu : host, "family");
	out->model = json_int_or(cpu ? cpu : host, "model");
	out->stepping = json_int_or(cpu ? cpu : host, "stepping");
}

static void sig_part(GString *s, int v)
{
	if (v < 0)
		g_string_append_c(s, '?');
	else
		g_string_append_printf(s, "%d", v);
}

char *cpu_sig_to_string(const struct cpu_sig *sig)
{
	GString *s = g_string_new(sig->vendor[0] ? sig->vendor : "?");

	g_string_append_c(s, ' ');
	sig_part(s, sig->family);
	g_string_append_c(s, '/');
	sig_part(s, sig->model);
	g_string_append_c(s, '/');
	sig_part(s, sig->stepping);
	return g_string_free(s, FALSE);
}

bool cpu_sig_equal(const struct cpu_sig *a, const struct cpu_sig *b)
{
	return !strcmp(a->vendor, b->vendor) && a->family == b->family &&
	       a->model == b->model && a->stepping == b->stepping;
}

/* Compares the digit runs at *a and *b as numbers of any length (no strtoul
 * saturation: 99999999999999999999 > 18446744073709551615) and steps past them. */
static int digits_compare(const char **a, const char **b)
{
	size_t la, lb;
	int cmp;

	while (**a == '0' && g_ascii_isdigit((*a)[1]))
		(*a)++;
	while (**b == '0' && g_ascii_isdigit((*b)[1]))
		(*b)++;
	la = strspn(*a, "0123456789");
	lb = strspn(*b, "0123456789");
	cmp = la != lb ? (la < lb ? -1 : 1) : memcmp(*a, *b, la);
	*a += la;
	*b += lb;
	return cmp < 0 ? -1 : cmp > 0;
}

int kernel_release_compare(const char *a, const char *b)
{
	for (int i = 0; i < 4; i++) {
		const char *x = (a && isdigit((unsigned char)*a)) ? a : "0";
		const char *y = (b && isdigit((unsigned char)*b)) ? b : "0";
		int cmp = digits_compare(&x, &y);

		if (cmp)
			return cmp;
		if (a && isdigit((unsigned char)*a))
			a = x;
		if (b && isdigit((unsigned char)*b))
			b = y;
		/* Only "." continues the numeric part: "-rc1", "+" end it. */
		a = (a && *a == '.') ? a + 1 : NULL;
		b = (b && *b == '.') ? b + 1 : NULL;
	}
	return 0;
}

static bool op_holds(enum errata_op op, int cmp)
{
	switch (op) {
	case ERRATA_OP_EQ: return cmp == 0;
	case ERRATA_OP_NE: return cmp != 0;
	case ERRATA_OP_LT: return cmp < 0;
	case ERRATA_OP_LE: return cmp <= 0;
	case ERRATA_OP_GT: return cmp > 0;
	case ERRATA_OP_GE: return cmp >= 0;
	default: return false;
	}
}

/* ---- the data file ---- */

static void erratum_free(void *p)
{
	struct erratum *e = p;

	if (!e)
		return;
	g_free(e->id);
	g_free(e->title);
	g_free(e->reference);
	g_free(e->vendor);
	for (guint i = 0; e->kernel && i < e->kernel->len; i++)
		g_free(g_array_index(e->kernel, struct kernel_cond, i).release);
	if (e->kernel)
		g_array_free(e->kernel, TRUE);
	if (e->attr)
		g_array_free(e->attr, TRUE);
	g_free(e);
}

static struct erratum *erratum_new(const char *id)
{
	struct erratum *e = g_new0(struct erratum, 1);
	const struct range any = { INT64_MIN, INT64_MAX };

	e->id = g_strdup(id);
	e->family = e->model = e->stepping = any;
	e->kernel = g_array_new(FALSE, TRUE, sizeof(struct kernel_cond));
	e->attr = g_array_new(FALSE, TRUE, sizeof(struct attr_cond));
	return e;
}

void errata_free(struct errata *errata)
{
	if (!errata)
		return;
	g_ptr_array_unref(errata->entries);
	g_free(errata);
}

/* Length of the operator at s, and which; 0 when none. */
static size_t op_parse(const char *s, enum errata_op *op)
{
	for (size_t i = 0; i < G_N_ELEMENTS(op_table); i++) {
		size_t len = strlen(op_table[i].text);

		if (!strncmp(s, op_table[i].text, len)) {
			*op = op_table[i].op;
			return len;
		}
	}
	return 0;
}

/* A CPU part bound: cpu_sig holds ints, so 0..G_MAXINT; computed in int64_t
 * so ">N" and "<N" never overflow. 0, -EINVAL (not a range) or -ERANGE. */
static int range_parse(const char *v, struct range *r)
{
	enum errata_op op;
	size_t n;
	const char *dash;
	guint64 a, b;
	int rc;

	r->lo = INT64_MIN;
	r->hi = INT64_MAX;
	if (!strcmp(v, "*"))
		return 0;
	n = op_parse(v, &op);
	if (n) {
		if (op == ERRATA_OP_NE)
			return -EINVAL;
		if ((rc = number_parse(v + n, G_MAXINT, &a)) < 0)
			return rc;
		switch (op) {
		case ERRATA_OP_EQ: r->lo = r->hi = (int64_t)a; break;
		case ERRATA_OP_LT: r->hi = (int64_t)a - 1; break;
		case ERRATA_OP_LE: r->hi = (int64_t)a; break;
		case ERRATA_OP_GT: r->lo = (int64_t)a + 1; break;
		case ERRATA_OP_GE: r->lo = (int64_t)a; break;
		default: return -EINVAL;
		}
		/* "<0" and ">2147483647" match no CPU: a typo, not an entry. */
		return r->lo > r->hi || r->lo > G_MAXINT || r->hi < 0 ? -ERANGE : 0;
	}
	dash = strchr(v, '-');
	if (dash) {
		g_autofree char *left = g_strndup(v, dash - v);

		if ((rc = number_parse(left, G_MAXINT, &a)) < 0 ||
		    (rc = number_parse(dash + 1, G_MAXINT, &b)) < 0)
			return rc;
		if (a > b)
			return -EINVAL;
		r->lo = (int64_t)a;
		r->hi = (int64_t)b;
		return 0;
	}
	if ((rc = number_parse(v, G_MAXINT, &a)) < 0)
		return rc;
	r->lo = r->hi = (int64_t)a;
	return 0;
}

static bool range_holds(const struct range *r, int v)
{
	if (r->lo == INT64_MIN && r->hi == INT64_MAX)
		return true;
	/* A bounded range never matches an unknown part: no guessing. */
	return v >= 0 && v >= r->lo && v <= r->hi;
}

static int key_fail(const char *name, int line, const char *key, const char *fmt,
		    const char *val)
{
	g_autofree char *what = g_strdup_printf(fmt, val);

	return pc_fail(EINVAL, "%s:%d: key '%s': %s", name, line, key, what);
}

/* "3.7", "2.6.32", "6.1.0-rc1": up to 4 dot-separated decimal parts, each
 * 0..G_MAXUINT32, then nothing or a "-"/"+" suffix. */
static int release_check(const char *r)
{
	for (int i = 0; i < 4; i++) {
		size_t len = strspn(r, "0123456789");
		g_autofree char *part = g_strndup(r, len);
		guint64 n;

		if (!len || !g_ascii_string_to_unsigned(part, 10, 0, G_MAXUINT32, &n, NULL))
			return -ERANGE;
		r += len;
		if (*r != '.')
			break;
		r++;
	}
	return !*r || *r == '-' || *r == '+' ? 0 : -EINVAL;
}

static int kernel_parse(struct erratum *e, const char *v, const char *name, int line)
{
	g_auto(GStrv) words = g_strsplit_set(v, " \t,", -1);

	for (char **w = words; *w; w++) {
		struct kernel_cond c;
		size_t n;

		if (!**w)
			continue;
		n = op_parse(*w, &c.op);
		if (!n || !isdigit((unsigned char)(*w)[n]))
			return key_fail(name, line, "kernel",
					"'%s' is not OP RELEASE (e.g. <3.7, >=2.6.32)", *w);
		if (release_check(*w + n) < 0)
			return key_fail(name, line, "kernel",
					"'%s': a release is up to 4 decimal parts of 0..4294967295 "
					"(e.g. <3.7, >=2.6.32, <6.1-rc1)", *w);
		c.release = g_strdup(*w + n);
		g_array_append_val(e->kernel, c);
	}
	return 0;
}

static int attr_parse(struct erratum *e, const char *v, const char *name, int line)
{
	g_auto(GStrv) words = g_strsplit_set(v, " \t,", -1);

	for (char **w = words; *w; w++) {
		struct attr_cond c;
		struct perf_event_attr probe = { 0 };
		size_t i = 0, n;
		int rc;

		if (!**w)
			continue;
		while ((*w)[i] && (isalnum((unsigned char)(*w)[i]) || (*w)[i] == '_'))
			i++;
		g_autofree char *member = g_strndup(*w, i);

		c.field = attr_field_from_name(member);
		if (c.field == ATTR_FIELD_COUNT)
			return key_fail(name, line, "attr",
					"unknown perf_event_attr member in '%s'", *w);
		n = op_parse(*w + i, &c.op);
		rc = n ? number_parse(*w + i + n, G_MAXUINT64, &c.value) : -EINVAL;
		if (rc == -ERANGE || (rc == 0 && attr_set(&probe, c.field, c.value) < 0))
			return pc_fail(EINVAL, "%s:%d: key 'attr': '%s': value does not fit "
				       "perf_event_attr.%s", name, line, *w, member);
		if (rc < 0)
			return key_fail(name, line, "attr",
					"'%s' is not MEMBER OP NUMBER (e.g. precise_ip>=1)", *w);
		g_array_append_val(e->attr, c);
	}
	return 0;
}

static int harm_parse(struct erratum *e, const char *v, const char *name, int line)
{
	g_auto(GStrv) words = g_strsplit_set(v, " \t,", -1);

	for (char **w = words; *w; w++) {
		enum outcome o;

		if (!**w)
			continue;
		o = outcome_from_name(*w);
		if (o == OUTCOME_COUNT || !outcome_is_harm(o))
			return key_fail(name, line, "harm",
					"'%s' is not a harm outcome (GUEST_CRASH, ...)", *w);
		e->harm[o] = true;
		e->has_harm = true;
	}
	return 0;
}

static int entry_set(struct erratum *e, const char *key, const char *v,
		     const char *name, int line)
{
	if (!strcmp(key, "title")) {
		g_free(e->title);
		e->title = g_strdup(v);
	} else if (!strcmp(key, "reference")) {
		g_free(e->reference);
		e->reference = g_strdup(v);
	} else if (!strcmp(key, "vendor")) {
		g_free(e->vendor);
		e->vendor = (!*v || !strcmp(v, "*")) ? NULL : g_strdup(v);
	} else if (!strcmp(key, "family") || !strcmp(key, "model") ||
		   !strcmp(key, "stepping")) {
		struct range *r = key[0] == 'f' ? &e->family :
				  key[0] == 'm' ? &e->model : &e->stepping;

		int rc = range_parse(v, r);

		if (rc == -ERANGE)
			return pc_fail(EINVAL, "%s:%d: key '%s': '%s' is out of range "
				       "(a CPU part is 0..%d)", name, line, key, v, G_MAXINT);
		if (rc < 0)
			return key_fail(name, line, key,
					"'%s' is not N, N-M, <N, >=N or * (N decimal or 0x hex)", v);
	} else if (!strcmp(key, "kernel")) {
		return kernel_parse(e, v, name, line);
	} else if (!strcmp(key, "attr")) {
		return attr_parse(e, v, name, line);
	} else if (!strcmp(key, "harm")) {
		return harm_parse(e, v, name, line);
	} else {
		return pc_fail(EINVAL, "%s:%d: key '%s': unknown key (title, vendor, "
			       "family, model, stepping, kernel, attr, harm, reference)",
			       name, line, key);
	}
	return 0;
}

static int entry_check(const struct erratum *e, const char *name, int line)
{
	if (!e->has_harm)
		return pc_fail(EINVAL, "%s:%d: key 'harm': erratum '%s' has no harm "
			       "outcome", name, line, e->id);
	return 0;
}

int errata_parse(const char *text, const char *name, struct errata **out)
{
	g_autoptr(errata_set) list = g_new0(struct errata, 1);
	g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
	struct erratum *cur = NULL;
	int cur_line = 0, rc;

	*out = NULL;
	list->entries = g_ptr_array_new_with_free_func(erratum_free);
	for (int i = 0; lines[i]; i++) {
		int line = i + 1;
		char *l = g_strstrip(lines[i]);
		char *eq;

		if (!*l || *l == '#' || *l == ';')
			continue;
		if (*l == '[') {
			char *end = strchr(l, ']');
			g_autofree char *id = NULL;

			if (!end || end[1])
				return pc_fail(EINVAL, "%s:%d: section header '%s' lacks its ']'",
					       name, line, l);
			*end = '\0';
			if (!g_str_has_prefix(l + 1, "erratum "))
				return pc_fail(EINVAL, "%s:%d: section '[%s]': want '[erratum ID]'",
					       name, line, l + 1);
			id = g_strstrip(g_strdup(l + 1 + strlen("erratum ")));
			if (!*id || strpbrk(id, " \t"))
				return pc_fail(EINVAL, "%s:%d: section '[%s]': the ID must be "
					       "one word", name, line, l + 1);
			for (guint j = 0; j < list->entries->len; j++)
				if (!strcmp(erratum_id(list->entries->pdata[j]), id))
					return pc_fail(EINVAL, "%s:%d: erratum '%s' defined twice",
						       name, line, id);
			if (cur && (rc = entry_check(cur, name, cur_line)) < 0)
				return rc;
			cur = erratum_new(id);
			cur_line = line;
			g_ptr_array_add(list->entries, cur);
			continue;
		}
		eq = strchr(l, '=');
		if (!eq)
			return pc_fail(EINVAL, "%s:%d: '%s' is not KEY = VALUE", name, line, l);
		*eq = '\0';
		g_strstrip(l);
		if (!cur)
			return pc_fail(EINVAL, "%s:%d: key '%s': outside an [erratum ID] section",
				       name, line, l);
		rc = entry_set(cur, l, g_strstrip(eq + 1), name, line);
		if (rc < 0)
			return rc;
	}
	if (cur && (rc = entry_check(cur, name, cur_line)) < 0)
		return rc;
	*out = g_steal_pointer(&list);
	return 0;
}

int errata_load(const char *path, struct errata **out)
{
	g_autofree char *text = NULL;
	int e;

	*out = NULL;
	if ((e = infile_read(path, INFILE_CONFIG, &text, NULL)))
		return e;
	return errata_parse(text, path, out);
}

size_t errata_count(const struct errata *errata)
{
	return errata ? errata->entries->len : 0;
}

const struct erratum *errata_get(const struct errata *errata, size_t i)
{
	return errata && i < errata->entries->len ? errata->entries->pdata[i] : NULL;
}

const char *erratum_id(const struct erratum *e)
{
	return e->id;
}

const char *erratum_title(const struct erratum *e)
{
	return e->title ? e->title : "";
}

const char *erratum_reference(const struct erratum *e)
{
	return e->reference ? e->reference : "";
}

static bool erratum_matches(const struct erratum *e, const struct cpu_sig *sig,
			    const char *kernel, const struct cell *cell)
{
	if (!e->harm[cell->outcome])
		return false;
	if (e->vendor && strcmp(e->vendor, sig->vendor))
		return false;
	if (!range_holds(&e->family, sig->family) || !range_holds(&e->model, sig->model) ||
	    !range_holds(&e->stepping, sig->stepping))
		return false;
	for (guint i = 0; i < e->kernel->len; i++) {
		const struct kernel_cond *c = &g_array_index(e->kernel, struct kernel_cond, i);

		if (!kernel || !*kernel ||
		    !op_holds(c->op, kernel_release_compare(kernel, c->release)))
			return false;
	}
	for (guint i = 0; i < e->attr->len; i++) {
		const struct attr_cond *c = &g_array_index(e->attr, struct attr_cond, i);
		uint64_t v = attr_get(&cell->attr, c->field);

		if (!op_holds(c->op, v < c->value ? -1 : v > c->value))
			return false;
	}
	return true;
}

const struct erratum *errata_match(const struct errata *errata,
				   const struct cpu_sig *sig, const char *kernel,
				   const struct cell *cell)
{
	if (!errata || !cell || !cell->has_attr || !outcome_is_harm(cell->outcome))
		return NULL;
	for (guint i = 0; i < errata->entries->len; i++) {
		const struct erratum *e = errata->entries->pdata[i];

		if (erratum_matches(e, sig, kernel, cell))
			return e;
	}
	return NULL;
}
