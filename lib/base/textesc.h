/* Text from result files, guests and perf binaries on its way to a terminal.
 *
 * A result file is written on another machine; a spec, a kernel name, a
 * perf message or a console excerpt in it may hold terminal escapes
 * (ESC [ 2 J clears the screen), carriage returns that overwrite a verdict,
 * newlines that forge a line of the report, or Unicode bidi overrides that
 * reorder it. Everything read from a file goes through text_escape() before
 * it reaches a terminal: control bytes (C0 but the allowed ones, DEL, C1)
 * and bytes that are not UTF-8 become "\xNN", bidi controls "\u{NNNN}". */
#ifndef PMUCANARY_TEXTESC_H
#define PMUCANARY_TEXTESC_H

#include <glib.h>

enum {
	TEXT_KEEP_NEWLINE = 1 << 0,  /* multi-line text (evidence): keep '\n' */
	TEXT_KEEP_TAB = 1 << 1,
};

/* Appends s (NULL: nothing) to out, escaped; flags: TEXT_KEEP_*. */
void text_escape_append(GString *out, const char *s, unsigned int flags);
/* s escaped as one line (no newline or tab kept); caller g_free()s. */
char *text_escape(const char *s);
/* True when s would come out of text_escape() unchanged. */
gboolean text_is_clean(const char *s);

#endif
