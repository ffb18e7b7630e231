/* One JSON string writer for the text this project writes by hand: the
 * results file (results_write.c), the KCIDB report (report.c) and the data in
 * the HTML heatmap (heatmap.c). Escapes are jansson's, so text written
 * here reads back, and compares, like text json_dumps() wrote; the flags
 * hold the few ways the three outputs differ. */
#ifndef PMUCANARY_JSONSTR_H
#define PMUCANARY_JSONSTR_H

#include <glib.h>

enum {
	/* '<', '>', '&', U+2028 and U+2029 as \u escapes: the string sits in
	 * a <script> element (no "</script", no "<!--") read by JavaScript
	 * parsers that end a line at U+2028/9; so are the noncharacters
	 * U+FFFE and U+FFFF, which an HTML parser flags in its input. */
	JSONSTR_HTML_SAFE = 1 << 0,
	/* Bytes that are not UTF-8 become U+FFFD; without it they become the
	 * text \xNN, as results_json_string() keeps them. */
	JSONSTR_REPLACE_INVALID = 1 << 1,
};

/* Appends s (NULL: "") to out as a quoted JSON string; flags: JSONSTR_*. */
void jsonstr_append(GString *out, const char *s, unsigned int flags);

#endif
