/* Escaping text read from files before it reaches a terminal (textesc.h). */
#include "textesc.h"

#include <string.h>

/* Bidi embedding/override/isolate controls: they reorder what follows on
 * the line, so a file could make "OK" read where "CRASH" is. */
static gboolean is_bidi(gunichar u)
{
	return (u >= 0x202a && u <= 0x202e) || (u >= 0x2066 && u <= 0x2069) ||
	       u == 0x200e || u == 0x200f || u == 0x061c;
}

static gboolean byte_allowed(unsigned char c, unsigned int flags)
{
	if (c == '\n')
		return flags & TEXT_KEEP_NEWLINE;
	if (c == '\t')
		return flags & TEXT_KEEP_TAB;
	return c >= 0x20 && c != 0x7f;
}

void text_escape_append(GString *out, const char *s, unsigned int flags)
{
	const char *p = s, *end;

	if (!s)
		return;
	end = s + strlen(s);
	while (p < end) {
		unsigned char c = (unsigned char)*p;
		gunichar u;

		if (c < 0x80) {
			if (byte_allowed(c, flags))
				g_string_append_c(out, (char)c);
			else
				g_string_append_printf(out, "\\x%02x", c);
			p++;
			continue;
		}
		u = g_utf8_get_char_validated(p, end - p);
		if (u == (gunichar)-1 || u == (gunichar)-2) {
			g_string_append_printf(out, "\\x%02x", c);
			p++;
			continue;
		}
		if ((u >= 0x80 && u <= 0x9f) || is_bidi(u))
			/* C1 controls include CSI (U+009B), an escape on its own. */
			g_string_append_printf(out, "\\u{%04x}", (unsigned int)u);
		else
			g_string_append_len(out, p, g_utf8_next_char(p) - p);
		p = g_utf8_next_char(p);
	}
}

char *text_escape(const char *s)
{
	GString *out = g_string_sized_new(s ? strlen(s) : 0);

	text_escape_append(out, s, 0);
	return g_string_free(out, FALSE);
}

gboolean text_is_clean(const char *s)
{
	g_autofree char *e = text_escape(s);

	return g_strcmp0(e, s ? s : "") == 0;
}
