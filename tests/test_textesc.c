/* Tests for lib/textesc: what a hostile result file could put on a
 * terminal (escape sequences, CR, newlines, C1 controls, bidi overrides,
 * bytes that are not UTF-8) comes out as visible escapes; ordinary text,
 * UTF-8 included, comes out unchanged. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "textesc.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void expect_escaped(const char *in, unsigned int flags, const char *want)
{
	g_autoptr(GString) out = g_string_new(NULL);

	text_escape_append(out, in, flags);
	if (strcmp(out->str, want))
		fail_msg("escaped '%s', want '%s'", out->str, want);
}

static void test_plain_unchanged(void **state)
{
	expect_escaped("cycles:ppH", 0, "cycles:ppH");
	expect_escaped("msr/tsc/ [exclude_guest,precise_ip=2]", 0,
		       "msr/tsc/ [exclude_guest,precise_ip=2]");
	expect_escaped("Gr\xc3\xbc\xc3\x9f \xe2\x9c\x93", 0, "Gr\xc3\xbc\xc3\x9f \xe2\x9c\x93");
	assert_true(text_is_clean("6.1.0-13-amd64"));
	expect_escaped(NULL, 0, "");
}

static void test_controls(void **state)
{
	expect_escaped("a\033[2Jb", 0, "a\\x1b[2Jb");
	expect_escaped("OK\rCRASH", 0, "OK\\x0dCRASH");
	expect_escaped("one\ntwo\tthree\x7f", 0, "one\\x0atwo\\x09three\\x7f");
	expect_escaped("one\ntwo\tthree", TEXT_KEEP_NEWLINE | TEXT_KEEP_TAB, "one\ntwo\tthree");
	expect_escaped("bell\007", TEXT_KEEP_NEWLINE, "bell\\x07");
	/* CSI as one C1 character (U+009B) and OSC (U+009D) */
	expect_escaped("\xc2\x9b" "2J\xc2\x9d", 0, "\\u{009b}2J\\u{009d}");
	assert_false(text_is_clean("a\033b"));
	/* every C1 control, U+0080..U+009F, both ends; U+00A0 (NBSP) is text */
	expect_escaped("\xc2\x80", 0, "\\u{0080}");
	expect_escaped("\xc2\x9f", 0, "\\u{009f}");
	expect_escaped("\xc2\xa0", 0, "\xc2\xa0");
}

static void test_bidi_and_invalid(void **state)
{
	/* RIGHT-TO-LEFT OVERRIDE, FIRST STRONG ISOLATE, POP DIRECTIONAL ISOLATE */
	expect_escaped("ok\xe2\x80\xae" "HSARC", 0, "ok\\u{202e}HSARC");
	expect_escaped("\xe2\x81\xa8x\xe2\x81\xa9", 0, "\\u{2068}x\\u{2069}");
	/* every bidi control of Unicode's list (UAX #9: embeddings and
	 * overrides U+202A..202E, isolates U+2066..2069, the marks LRM U+200E,
	 * RLM U+200F, ALM U+061C), each edge of each range, and the code
	 * points just outside them left alone */
	{
		static const gunichar bidi[] = { 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066,
						 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c };
		static const gunichar plain[] = { 0x2029, 0x202f, 0x2065, 0x206a, 0x200d, 0x2010,
						  0x061b, 0x061d };

		for (size_t i = 0; i < G_N_ELEMENTS(bidi) + G_N_ELEMENTS(plain); i++) {
			bool is_bidi = i < G_N_ELEMENTS(bidi);
			gunichar u = is_bidi ? bidi[i] : plain[i - G_N_ELEMENTS(bidi)];
			char in[8] = { 0 }, want[16];

			g_unichar_to_utf8(u, in);
			if (is_bidi)
				snprintf(want, sizeof(want), "\\u{%04x}", u);
			else
				memcpy(want, in, sizeof(in));
			expect_escaped(in, 0, want);
		}
	}
	/* not UTF-8: each bad byte on its own */
	expect_escaped("a\xff\xfe" "b", 0, "a\\xff\\xfeb");
	expect_escaped("cut \xe2\x80", 0, "cut \\xe2\\x80");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_unchanged),
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_bidi_and_invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
