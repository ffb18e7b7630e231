/* Writing JSON strings by hand (jsonstr.h). */
#include "jsonstr.h"

/* One byte below 0x80: jansson's short escapes, other controls as \u00XX
 * in upper case as jansson writes them. */
static void ascii_append(GString *out, unsigned char c, unsigned int flags)
{
	switch (c) {
	case '"': g_string_append(out, "\\\""); return;
	case '\\': g_string_append(out, "\\\\"); return;
	case '\b': g_string_append(out, "\\b"); return;
	case '\f': g_string_append(out, "\\f"); return;
	case '\n': g_string_append(out, "\\n"); return;
	case '\r': g_string_append(out, "\\r"); return;
	case '\t': g_string_append(out, "\\t"); return;
	}
	if ((flags & JSONSTR_HTML_SAFE) && (c == '<' || c == '>' || c == '&'))
		g_string_append_printf(out, "\\u%04x", c);
	else if (c < 0x20)
		g_string_append_printf(out, "\\u%04X", c);
	else
		g_string_append_c(out, (char)c);
}

void jsonstr_append(GString *out, const char *s, unsigned int flags)
{
	g_autofree char *valid = NULL;

	if (!s)
		s = "";
	if (flags & JSONSTR_REPLACE_INVALID)
		s = valid = g_utf8_make_valid(s, -1);
	g_string_append_c(out, '"');
	while (*s) {
		unsigned char c = (unsigned char)*s;
		gunichar u;
		const char *next;

		if (c < 0x80) {
			ascii_append(out, c, flags);
			s++;
			continue;
		}
		u = g_utf8_get_char_validated(s, -1);
		if (u == (gunichar)-1 || u == (gunichar)-2) {
			/* The text \xNN, its backslash escaped. */
			g_string_append_printf(out, "\\\\x%02x", c);
			s++;
			continue;
		}
		next = g_utf8_next_char(s);
		if ((flags & JSONSTR_HTML_SAFE) && (u == 0x2028 || u == 0x2029 || u == 0xfffe || u == 0xffff))
			g_string_append_printf(out, "\\u%04x", u);
		else
			g_string_append_len(out, s, next - s);
		s = next;
	}
	g_string_append_c(out, '"');
}
