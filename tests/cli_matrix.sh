#!/usr/bin/env bash
# CLI tests for `pmucanary matrix RESULT... [--html F] [--junit F] [--kcidb F]
# [--errata F] [--baseline F]`.
#
# Exit codes: 0 no harm (or only harm that a known erratum explains),
# 1 harm no erratum explains (or, with --baseline, a regression), 2 bad
# input (unreadable, truncated or other-schema result file, no inputs, a
# bad errata file: the message names file, line and key).
# Also runs tests/html_check.sh (headless Chromium) for the HTML heatmap.
# Needs $PMUCANARY_BIN and $PMUCANARY_TOP (tests/run-tests sets both).
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
export PMUCANARY_TOP=$top PMUCANARY_BIN=$bin
d=$top/tests/data/diff
m=$top/tests/data/matrix
errata=$top/scenarios/errata.ini
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0 n=0 skips=()

# expect RC PATTERN ARGS... : exit code RC and PATTERN (grep -E) in stdout+stderr.
expect() {
	local want=$1 pat=$2 out rc; shift 2
	n=$((n + 1))
	out=$("$bin" matrix "$@" 2>&1); rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: matrix $*: exit $rc, want $want"; echo "$out" | sed 's/^/    /'
		fails=$((fails + 1)); return
	fi
	if [ -n "$pat" ] && ! grep -Eq -- "$pat" <<<"$out"; then
		echo "FAIL: matrix $*: no /$pat/ in output"; echo "$out" | sed 's/^/    /'
		fails=$((fails + 1)); return
	fi
	echo "ok: matrix $(echo "$*" | sed "s|$top/||g") -> $rc"
}
check() { # check DESCRIPTION COMMAND...
	n=$((n + 1))
	if "${@:2}"; then echo "ok: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi
}

# The 2012 story over three kernels: crash, EOPNOTSUPP, fix, in one matrix.
# The default view names what differs between kernels first, then the grid
# of column groups (event x modifier class) whose rows differ.
expect 1 '^  cycles x p: 3\.6\.11 CRASH! \| 3\.7\.0 NOSUP \| 3\.8\.0 ok$' \
	"$d/run-3.8.json" "$d/run-3.6.json" "$d/run-3.7.json"
expect 1 '^      cycles:pp, cycles\[precise_ip=2\] under perf-3\.6, raw$' \
	"$d/run-3.8.json" "$d/run-3.6.json" "$d/run-3.7.json"
expect 1 '^3\.7\.0   perf-3\.6  NOSUP$' "$d/run-3.6.json" "$d/run-3.7.json"
# --all: every cell, one column per spec (the view before the grouped one).
expect 1 '^3\.6\.11  perf-3\.6  CRASH!     ok      ok           -                     INVAL             rej$' \
	--all "$d/run-3.8.json" "$d/run-3.6.json" "$d/run-3.7.json"
expect 0 '^0 harmful cells' "$d/run-3.7.json" "$d/run-3.8.json"
# With the errata file the 2012 crash on Intel is a known erratum, not harm.
expect 0 'known erratum intel-pebs-2012' --errata "$errata" "$d/run-3.6.json" "$d/run-3.8.json"
expect 1 'HARM \(no known erratum explains it\)' --errata "$errata" "$d/run-3.8-harm.json"
# Two CPU steppings and an AMD host: grouped by CPU signature.
expect 1 '^cpu GenuineIntel 6/63/2:$' --errata "$errata" "$m/ivb-3.6.json" "$m/hsw-3.6.json" "$m/amd-3.6.json"
expect 0 '2 known errata, 1 INFRA' --errata "$errata" "$m/ivb-3.6.json" "$m/hsw-3.6.json"
expect 0 'limitation: accel is tcg: TCG cannot show' "$m/tcg-6.1.json"
# The header counts every cell of the input, OK ones too: run-3.8.json holds 7.
expect 0 '^pmucanary matrix: 1 input, 1 CPU signature, 1 kernel, 3 profiles, 6 specs, 7 cells$' \
	"$d/run-3.8.json"
# Every column group that differs is shown: no "... 0 more" line.
n=$((n + 1))
if "$bin" matrix "$d/run-3.8.json" "$d/run-3.6.json" "$d/run-3.7.json" | grep -q 'more column groups differ'; then
	echo "FAIL: '... more column groups differ' when all are shown"; fails=$((fails + 1))
else echo "ok: all differing column groups shown, none 'more'"; fi
# A run with nothing but INFRA cells has no kernel verdict: 125, filtered or not.
jq '.cells |= map(select(.spec != "cycles:S") | .outcome = "INFRA")' "$d/run-3.8.json" >"$tmp/all-infra.json"
expect 125 'could not test \(INFRA, no kernel verdict\): 6 cells' "$tmp/all-infra.json"
expect 125 '' --profile 'perf-*' "$tmp/all-infra.json"
# No colour when stdout is not a terminal; --color=always forces it.
n=$((n + 1))
if "$bin" matrix "$m/amd-3.6.json" | grep -q $'\033'; then echo "FAIL: colour on a pipe"; fails=$((fails + 1))
else echo "ok: no colour on a pipe"; fi
expect 1 $'\033\\[1;31mCRASH!' --color=always "$m/amd-3.6.json"
# A baseline turns regressions into failures (diff's contract).
expect 1 '3\.7\.0 perf-3\.6 cycles:pp: OK -> EOPNOTSUPP \(ABI regressions\)' --baseline "$d/probe-3.6.json" "$d/probe-3.7.json"
expect 1 '2 regressions against the baseline' --baseline "$d/probe-3.6.json" "$d/probe-3.7.json"
expect 0 '0 regressions against the baseline' --baseline "$d/probe-3.7.json" "$d/probe-3.8.json"

# Filters narrow the printed view (globs or exact names), not the exit code.
n=$((n + 1))
out=$("$bin" matrix --all --event cpu-clock "$d/run-3.6.json" "$d/run-3.7.json" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q 'cpu-clock:u' <<<"$out" && ! grep -q 'cycles' <<<"$out"; then
	echo "ok: --event cpu-clock shows cpu-clock only (exit still 1: harm elsewhere)"
else echo "FAIL: --event cpu-clock (exit $rc)"; echo "$out" | sed 's/^/    /'; fails=$((fails + 1)); fi
n=$((n + 1))
out=$("$bin" matrix --all --outcome harm --kernel '3.6*' "$d/run-3.6.json" "$d/run-3.7.json" 2>&1)
if [ "$(grep -c '^  3\.6\.11 .*: GUEST_CRASH 3/3 ' <<<"$out")" -eq 2 ] && ! grep -q 'NOSUP\|^ *3\.7\.0 ' <<<"$out" &&
   grep -q '^cells by outcome: GUEST_CRASH 2$' <<<"$out"; then
	echo "ok: --outcome harm --kernel '3.6*': the two crashes of 3.6.11 only"
else echo "FAIL: --outcome harm --kernel"; echo "$out" | sed 's/^/    /'; fails=$((fails + 1)); fi
expect 1 '^  3\.6\.11 perf-3\.6 cycles:pp: GUEST_CRASH 3/3' --profile perf-3.6 --event 'cycles:pp' \
	"$d/run-3.6.json" "$d/run-3.7.json"
expect 2 "--profile 'perf-9\*' matches no cell of the inputs" --profile 'perf-9*' "$d/run-3.6.json"
expect 2 "--outcome 'GUEST_EXPLODED' names no outcome" --outcome GUEST_EXPLODED "$d/run-3.6.json"
expect 2 "--kernel needs a name or a glob" --kernel '' "$d/run-3.6.json"
expect 2 "--outcome needs a name or a glob" --outcome '' "$d/run-3.6.json"
expect 2 "the filters together match no cell" --kernel 3.7.0 --outcome harm "$d/run-3.6.json" "$d/run-3.7.json"
# One input holding a cell twice is bad input, as in diff.
expect 2 'duplicate-cell\.json: cell 7: \(3\.8\.0, perf-3\.6, cycles:pp\) appears twice' \
	"$d/duplicate-cell.json"
# Terminal escapes, carriage returns and newlines from a file are escaped.
jq '.kernel = "3.6.11\u001b[2J" | .cells[0].spec = "cycles:pp\r\u001b]0;x\u0007\nforged: OK" |
    .cells[0].evidence[0].excerpt = "BUG\u001b[31m\rok"' "$d/run-3.6.json" >"$tmp/hostile.json"
for view in "" --all; do
	n=$((n + 1))
	out=$("$bin" matrix $view "$tmp/hostile.json" 2>&1)
	if ! grep -q $'[\033\r\007]' <<<"$out" && ! grep -q '^forged' <<<"$out" &&
	   grep -q 'BUG\\x1b\[31m\\x0dok' <<<"$out"; then
		echo "ok: matrix $view escapes ESC, CR, BEL and newlines from the file"
	else echo "FAIL: matrix $view hostile strings"; echo "$out" | cat -v | sed 's/^/    /'; fails=$((fails + 1)); fi
done

# A message quoting the file (an unknown outcome) is escaped too.
jq '.cells[0].outcome = "GUEST_\u001b[2JEXPLODED"' "$d/run-3.6.json" >"$tmp/hostile-outcome.json"
n=$((n + 1))
out=$("$bin" matrix "$tmp/hostile-outcome.json" 2>&1); rc=$?
if [ $rc -eq 2 ] && ! grep -q $'\033' <<<"$out" && grep -q 'GUEST_\\x1b\[2JEXPLODED' <<<"$out"; then
	echo "ok: matrix escapes a bad outcome name in its error"
else echo "FAIL: matrix error escaping (exit $rc)"; echo "$out" | cat -v | sed 's/^/    /'; fails=$((fails + 1)); fi

# diff's text shares the escaping (lib/base/textesc.c).
n=$((n + 1))
jq '.cells[0].outcome = "OK"' "$tmp/hostile.json" >"$tmp/hostile-base.json"
out=$("$bin" diff "$tmp/hostile-base.json" "$tmp/hostile.json" 2>&1)
if ! grep -q $'[\033\r\007]' <<<"$out" && ! grep -q '^forged' <<<"$out" &&
   grep -q 'kernel 3\.6\.11\\x1b\[2J' <<<"$out" && grep -q 'cycles:pp\\x0d\\x1b\]0;x\\x07\\x0aforged: OK' <<<"$out"; then
	echo "ok: diff escapes ESC, CR, BEL and newlines from the files"
else echo "FAIL: diff hostile strings"; echo "$out" | cat -v | sed 's/^/    /'; fails=$((fails + 1)); fi

# Bad input: exit 2 and a message naming the problem.
expect 2 'need at least one result file'
expect 2 'pmucanary/3' "$d/run-3.6.json" "$d/schema-3.json"
expect 2 'truncated\.json:[0-9]+:' "$d/truncated.json"
expect 2 'no-such\.json' "$d/no-such.json"
expect 2 'GUEST_EXPLODED' "$d/bad-outcome.json"
# An attr member string is 0x hex or decimal: "-1" is no 0xffffffffffffffff.
sed '0,/"size": 96,/s//"config": "-1", "size": 96,/' "$d/run-3.6.json" >"$tmp/neg-config.json"
expect 2 'neg-config\.json.*member "config" is not a number' "$tmp/neg-config.json"
printf '[erratum x]\nharm = GUEST_CRASH\nfamily = six\n' >"$tmp/bad.ini"
expect 2 'bad\.ini:3: key .family.' --errata "$tmp/bad.ini" "$d/run-3.6.json"
printf '[erratum x]\nharm = GUEST_CRASH\nstepping = 1\nwhatever = 1\n' >"$tmp/bad2.ini"
expect 2 'bad2\.ini:4: key .whatever.: unknown key' --errata "$tmp/bad2.ini" "$d/run-3.6.json"
# A number out of range is an error, never an open range that waives every harm.
printf '[erratum x]\nharm = GUEST_CRASH GUEST_CORRUPTION\nfamily = >9223372036854775807\n' >"$tmp/bad3.ini"
expect 2 'bad3\.ini:3: key .family.: .>9223372036854775807. is out of range' --errata "$tmp/bad3.ini" "$d/run-3.6.json"
expect 2 'nope\.ini' --errata "$tmp/nope.ini" "$d/run-3.6.json"
expect 2 'origin' --kcidb "$tmp/k.json" --origin 'Not Valid' "$d/run-3.6.json"
expect 2 '' --bogus "$d/run-3.6.json"
expect 2 'cannot write' --junit "$tmp/no/dir/j.xml" "$d/run-3.6.json"

# CI files.
expect 0 '' --errata "$errata" --junit "$tmp/j.xml" --kcidb "$tmp/k.json" --html "$tmp/r.html" \
	"$m/ivb-3.6.json" "$m/hsw-3.6.json" "$m/tcg-6.1.json"
check "junit written" test -s "$tmp/j.xml"
check "junit: known erratum is skipped, not failed" \
	grep -q '<skipped message="known erratum intel-pebs-2012' "$tmp/j.xml"
check "junit: INFRA is an error" grep -q '<error message="INFRA' "$tmp/j.xml"
check "junit: totals" grep -q 'tests="10" failures="0" errors="1" skipped="3"' "$tmp/j.xml"
check "junit: a rejected spec is skipped with perf's message" \
	grep -q "<skipped message=\"rejected by the profile: unknown modifier &#39;S&#39;" "$tmp/j.xml"
if command -v xmllint >/dev/null; then
	check "junit is well-formed (xmllint)" xmllint --noout "$tmp/j.xml"
else
	skips+=("no xmllint (libxml2-utils): junit.xml not checked by a validating parser")
fi
check "kcidb: version 5" grep -q '"major": 5' "$tmp/k.json"
check "kcidb: tests" grep -q '"path": "pmucanary.perf-3_6.cycles.pp"' "$tmp/k.json"
check "kcidb: a rejected spec is SKIP (not run)" jq -e '[.tests[]
	| select(.path == "pmucanary.perf-6_1.cycles.S")] | length == 1 and all(.status == "SKIP")' "$tmp/k.json"
check "html written, self-contained" bash -c "grep -q '<style>' '$tmp/r.html' && ! grep -q 'src=\"http' '$tmp/r.html'"

# A run whose harm a proven rule explains (a runner's run.json under
# isolate = rule): the rule comes before any cell in the text, the HTML,
# JUnit and KCIDB; the gate fails on its harm as on any harm.
expect 1 'judged by rule type=software config=task-clock \(not armed alone\)' \
	--html "$tmp/rule.html" --junit "$tmp/rule.xml" --kcidb "$tmp/rule.json" "$m/rule-6.18.json"
"$bin" matrix "$m/rule-6.18.json" >"$tmp/rule.txt" 2>&1
check "text: the rule's line comes before the harmful cells" bash -c "
	r=\$(grep -n '^  \[1\] type=software config=task-clock: GUEST_CRASH on 17 attrs, 18 cells' '$tmp/rule.txt' | cut -d: -f1)
	h=\$(grep -n '^HARM' '$tmp/rule.txt' | cut -d: -f1)
	[ -n \"\$r\" ] && [ -n \"\$h\" ] && [ \"\$r\" -lt \"\$h\" ]"
check "html: the rule section comes before the heat map" bash -c "
	r=\$(grep -bo '<div id=\"rules\">' '$tmp/rule.html' | cut -d: -f1)
	h=\$(grep -bo '<div id=\"heatmap\">' '$tmp/rule.html' | cut -d: -f1)
	[ -n \"\$r\" ] && [ -n \"\$h\" ] && [ \"\$r\" -lt \"\$h\" ]"
check "junit: 13 failures say the rule judged them" \
	test "$(grep -c '<failure message="GUEST_CRASH by rule type=software config=task-clock"' "$tmp/rule.xml")" = 13
check "kcidb: the build lists the rule with its cells" jq -e '.builds[0].misc.rules[0]
	| .text == "type=software config=task-clock" and .cells == 18 and .judged_by_rule == 13' "$tmp/rule.json"
# The same run with a hostile rule text: escaped wherever it is shown.
jq --arg r $'<script>alert(8)</script> "q" \'a\' \ufffe' '.rules[0].text = $r
	| .cells |= map(if .rule then .rule = $r else . end)' "$m/rule-6.18.json" >"$tmp/evil-rule.json"
expect 1 '' --html "$tmp/evil.html" --junit "$tmp/evil.xml" "$tmp/evil-rule.json"
check "html: a hostile rule text is escaped" bash -c "
	grep -qF '<code class=\"rule-text\">&lt;script&gt;alert(8)&lt;/script&gt; &quot;q&quot; &#39;a&#39; &#xfffd;</code>' '$tmp/evil.html' &&
	! grep -qF '<script>alert(8)' '$tmp/evil.html' && ! grep -q \$'\xef\xbf\xbe' '$tmp/evil.html'"
check "junit: a hostile rule text is escaped" bash -c "
	grep -qF 'value=\"&lt;script&gt;alert(8)&lt;/script&gt; &quot;q&quot; &#39;a&#39; \\u{fffe}: GUEST_CRASH' '$tmp/evil.xml' &&
	! grep -qF '<script>' '$tmp/evil.xml'"

# The heatmap in a real browser.
n=$((n + 1))
bash "$top/tests/html_check.sh" >"$tmp/html.log" 2>&1
rc=$?
if [ $rc = 0 ]; then
	echo "ok: html_check.sh ($(tail -1 "$tmp/html.log"))"
elif [ $rc = 77 ]; then
	n=$((n - 1)); skips+=("$(sed -n 's/^SKIP: //p' "$tmp/html.log" | tail -1)")
else
	echo "FAIL: html_check.sh (exit $rc)"; sed 's/^/    /' "$tmp/html.log"; fails=$((fails + 1))
fi

echo "$((n - fails)) of $n passed"
[ $fails -eq 0 ] || exit 1
# tests/run-tests' skip (PMUCANARY_REQUIRE_ALL=1 makes it a failure): what
# this machine could not check is said, never passed over.
if [ ${#skips[@]} -gt 0 ]; then
	msg=$(printf '%s; ' "${skips[@]}")
	echo "SKIP: ${msg%; }"
	exit 77
fi
