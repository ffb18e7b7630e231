#include "attr.h"

#include "log.h"

#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <string.h>

#define ATTR_NAME(n) [ATTR_F_##n] = #n,
static const char *const field_names[ATTR_FIELD_COUNT] = {
	ATTR_SCALARS(ATTR_NAME)
	ATTR_BITS(ATTR_NAME)
};
#undef ATTR_NAME

const char *attr_field_name(enum attr_field f)
{
	return f < ATTR_FIELD_COUNT ? field_names[f] : "?";
}

const char *attr_field_display_name(const struct perf_event_attr *attr,
				    enum attr_field f)
{
	if (f == ATTR_F_sample_period && attr->freq)
		return "sample_freq";
	return attr_field_name(f);
}

enum attr_field attr_field_from_name(const char *name)
{
	if (!name)
		return ATTR_FIELD_COUNT;
	if (strcmp(name, "sample_freq") == 0)
		return ATTR_F_sample_period;
	for (int i = 0; i < ATTR_FIELD_COUNT; i++)
		if (strcmp(field_names[i], name) == 0)
			return i;
	return ATTR_FIELD_COUNT;
}

uint64_t attr_get(const struct perf_event_attr *attr, enum attr_field f)
{
	switch (f) {
#define GET(n) case ATTR_F_##n: return (uint64_t)attr->n;
	ATTR_SCALARS(GET)
	ATTR_BITS(GET)
#undef GET
	default:
		return 0;
	}
}

int attr_set(struct perf_event_attr *attr, enum attr_field f, uint64_t value)
{
	struct perf_event_attr tmp = *attr;

	switch (f) {
#define SET(n) case ATTR_F_##n: tmp.n = value; if ((uint64_t)tmp.n != value) return -ERANGE; break;
	ATTR_BITS(SET)
	ATTR_SCALARS(SET)
#undef SET
	default:
		return -EINVAL;
	}
	*attr = tmp;
	return 0;
}

json_t *attr_to_json(const struct perf_event_attr *attr)
{
	json_t *obj = json_object();

	for (int f = 0; f < ATTR_FIELD_COUNT; f++) {
		uint64_t v = attr_get(attr, f);

		if (!v)
			continue;
		/* clockid is signed; everything else is unsigned and JSON
		 * integers are signed 64-bit, so large masks go as strings. */
		json_t *val;
		if (f == ATTR_F_clockid)
			val = json_integer((int32_t)v);
		else if (v > (uint64_t)INT64_MAX)
			val = json_sprintf("0x%" PRIx64, v);
		else
			val = json_integer((json_int_t)v);
		json_object_set_new(obj, attr_field_display_name(attr, f), val);
	}
	return obj;
}

int attr_from_json(const json_t *obj, struct perf_event_attr *attr)
{
	const char *key;
	json_t *val;

	if (!json_is_object(obj))
		return pc_fail(EINVAL, "attr is not a JSON object");
	memset(attr, 0, sizeof(*attr));
	json_object_foreach((json_t *)obj, key, val) {
		enum attr_field f = attr_field_from_name(key);
		uint64_t v;

		if (f == ATTR_FIELD_COUNT)
			return pc_fail(EINVAL, "attr: unknown member \"%s\"", key);
		if (json_is_integer(val)) {
			json_int_t i = json_integer_value(val);
			/* attr_set() compares through the member's type, and
			 * clockid is the one signed member. */
			v = (uint64_t)i;
			if (i < 0 && f != ATTR_F_clockid)
				return pc_fail(EINVAL, "attr: member \"%s\" is negative", key);
		} else if (json_is_string(val)) {
			/* attr_to_json writes "0x.." past INT64_MAX; decimal is
			 * accepted too, nothing else ("-1", " 5", octal "010"). */
			const char *s = json_string_value(val);
			guint base = 10;
			guint64 n;

			if (s[0] == '0' && s[1] == 'x') {
				base = 16;
				s += 2;
			}
			if (!*s || strspn(s, base == 16 ? "0123456789abcdefABCDEF" : "0123456789") !=
			    strlen(s))
				return pc_fail(EINVAL, "attr: member \"%s\" is not a number", key);
			if (!g_ascii_string_to_unsigned(s, base, 0, G_MAXUINT64, &n, NULL))
				return pc_fail(ERANGE, "attr: member \"%s\" value %s does not fit",
					       key, json_string_value(val));
			v = n;
		} else {
			return pc_fail(EINVAL, "attr: member \"%s\" is not a number", key);
		}
		if (strcmp(key, "sample_freq") == 0)
			attr->freq = 1;
		if (attr_set(attr, f, v) < 0)
			return pc_fail(ERANGE, "attr: member \"%s\" value %" PRIu64 " does not fit", key, v);
	}
	return 0;
}

char *attr_to_string(const struct perf_event_attr *attr)
{
	GString *s = g_string_new(NULL);

	for (int f = 0; f < ATTR_FIELD_COUNT; f++) {
		uint64_t v = attr_get(attr, f);

		if (!v)
			continue;
		if (s->len)
			g_string_append_c(s, ' ');
		if (f == ATTR_F_config || f == ATTR_F_config1 || f == ATTR_F_config2 ||
		    f == ATTR_F_sample_type || f == ATTR_F_read_format ||
		    f == ATTR_F_branch_sample_type)
			g_string_append_printf(s, "%s=%#" PRIx64, attr_field_display_name(attr, f), v);
		else
			g_string_append_printf(s, "%s=%" PRIu64, attr_field_display_name(attr, f), v);
	}
	return g_string_free(s, FALSE);
}

bool attr_equal(const struct perf_event_attr *a, const struct perf_event_attr *b)
{
	for (int f = 0; f < ATTR_FIELD_COUNT; f++)
		if (attr_get(a, f) != attr_get(b, f))
			return false;
	return true;
}

unsigned int attr_hash(const struct perf_event_attr *attr)
{
	/* FNV-1a over the member values, so padding never matters. */
	uint64_t h = 1469598103934665603ULL;

	for (int f = 0; f < ATTR_FIELD_COUNT; f++) {
		uint64_t v = attr_get(attr, f);
		for (int i = 0; i < 8; i++) {
			h ^= (v >> (8 * i)) & 0xff;
			h *= 1099511628211ULL;
		}
	}
	return (unsigned int)(h ^ (h >> 32));
}

unsigned int attr_hash_func(const void *attr)
{
	return attr_hash(attr);
}

int attr_equal_func(const void *a, const void *b)
{
	return attr_equal(a, b);
}
