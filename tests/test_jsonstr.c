/* Tests for lib/jsonstr: hand-written JSON strings read back as the text
 * they hold, match what jansson writes byte for byte, and (HTML-safe) can
 * not end the <script> element they sit in. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "jsonstr.h"

#include <jansson.h>
#include <string.h>

static void expect_json(const char *in, unsigned int flags, const char *want)
{
	g_autoptr(GString) out = g_string_new(NULL);

	jsonstr_append(out, in, flags);
	if (strcmp(out->str, want))
		fail_msg("wrote %s, want %s", out->str, want);
}

/* Every ASCII byte and some UTF-8: the same bytes json_dumps() writes. */
static void test_same_as_jansson(void **state)
{
	char in[160];
	size_t n = 0;

	for (int c = 1; c < 0x80; c++)
		in[n++] = (char)c;
	strcpy(in + n, "Gr\xc3\xbc\xc3\x9f \xe2\x80\xa8 \xf0\x9f\x90\xa7");
	{
		json_t *j = json_string(in);
		char *want = json_dumps(j, JSON_ENCODE_ANY);

		assert_non_null(want);
		expect_json(in, 0, want);
		expect_json(in, JSONSTR_REPLACE_INVALID, want);
		free(want);
		json_decref(j);
	}
}

static void test_invalid_utf8(void **state)
{
	expect_json("a\xff" "b\xc3", 0, "\"a\\\\xffb\\\\xc3\"");
	expect_json("a\xff" "b", JSONSTR_REPLACE_INVALID, "\"a\xef\xbf\xbd" "b\"");
	expect_json(NULL, 0, "\"\"");
}

static void test_html_safe(void **state)
{
	expect_json("</script><!--&", JSONSTR_HTML_SAFE,
		    "\"\\u003c/script\\u003e\\u003c!--\\u0026\"");
	expect_json("a\xe2\x80\xa8" "b\xe2\x80\xa9" "c\xe2\x80\xaa", JSONSTR_HTML_SAFE,
		    "\"a\\u2028b\\u2029c\xe2\x80\xaa\"");
	/* The noncharacters U+FFFE and U+FFFF (an HTML parser flags them);
	 * U+FFFD passes. */
	expect_json("r\xef\xbf\xbe" "s\xef\xbf\xbf" "t\xef\xbf\xbd", JSONSTR_HTML_SAFE,
		    "\"r\\ufffes\\uffff" "t\xef\xbf\xbd\"");
	/* Without the flag they pass as jansson writes them. */
	expect_json("<&>", 0, "\"<&>\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_jansson),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_html_safe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
