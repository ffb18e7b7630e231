#!/usr/bin/env bash
# CLI contract of `pmucanary encode` (design.md "Contracts"):
#   --profile P [--mode record|stat] [--json] SPEC...  -> one attr per spec
#   --list-profiles                                    -> name, letters, releases
#   exit 0 all encoded; 2 usage/bad input, or a rejected spec in text mode;
#   with --json a rejected spec is an {"spec","error"} object and exit is 0.
# Needs $PMUCANARY_BIN and $PMUCANARY_TOP (tests/run-tests sets both); jq is
# not assumed: JSON is checked with python3 when present, else grep.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
fixture=$top/tests/data/sysfs
fails=0 n=0

ok()   { n=$((n + 1)); echo "ok: $1"; }
fail() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL: $1"; [ -n "${2:-}" ] && echo "$2" | sed 's/^/    /'; }

# expect_rc WANT DESCRIPTION -- ARGS...
expect_rc() {
	local want=$1 what=$2 out rc; shift 3
	out=$("$bin" encode "$@" 2>&1); rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$what -> $rc"; else fail "$what: exit $rc, want $want" "$out"; fi
	last_out=$out
}

# json_check DESCRIPTION PYTHON-EXPR ARGS...   (expr sees `a`, the parsed array)
json_check() {
	local what=$1 expr=$2 out; shift 2
	out=$("$bin" encode --json --sysfs "$fixture" "$@" 2>/dev/null)
	if ! command -v python3 >/dev/null; then
		ok "$what (python3 missing: not checked)"; return
	fi
	if python3 -c "import json,sys; a=json.loads(sys.stdin.read()); sys.exit(0 if ($expr) else 1)" <<<"$out"; then
		ok "$what"
	else
		fail "$what" "$out"
	fi
}

expect_rc 0 "--help" -- --help
grep -q -- "--list-profiles" <<<"$last_out" && grep -q -- "--mode" <<<"$last_out" &&
	grep -q -- "--json" <<<"$last_out" && grep -q "error" <<<"$last_out" &&
	ok "--help describes every option and the exit codes" || fail "--help incomplete" "$last_out"

expect_rc 0 "--list-profiles" -- --list-profiles
for p in perf-3.6 perf-3.7 perf-6.1 perf-modern raw; do
	grep -q "^$p " <<<"$last_out" && ok "lists $p" || fail "--list-profiles lacks $p" "$last_out"
done
grep -q "1342798cc13e" <<<"$last_out" && ok "releases name the commit" || fail "no commit in list"

expect_rc 0 "--list-profiles --release" -- --list-profiles --release "perf version 3.6.11"
[ "$(awk '{print $1}' <<<"$last_out")" = perf-3.6 ] && ok "release 3.6.11 -> perf-3.6" || fail "release mapping" "$last_out"
expect_rc 2 "no profile" -- cycles
expect_rc 2 "unknown profile" -- --profile perf-0.1 cycles
[ "$(wc -l <<<"$last_out")" -eq 1 ] && grep -q "unknown profile 'perf-0.1'" <<<"$last_out" &&
	ok "unknown profile: one clear line" || fail "unknown profile message" "$last_out"
# ...listing exactly the profiles --list-profiles lists, in its order
known=$("$bin" encode --list-profiles | awk '{print $1}' | paste -sd, | sed 's/,/, /g')
grep -qF "(known: $known)" <<<"$last_out" && ok "unknown profile: the known ones, all, nothing else" ||
	fail "unknown profile: known list, want ($known)" "$last_out"
expect_rc 2 "no spec" -- --profile perf-6.1
expect_rc 2 "bad mode" -- --profile perf-6.1 --mode bogus cycles
expect_rc 2 "bad option" -- --profile perf-6.1 --frobnicate cycles
expect_rc 2 "rejected spec in text mode" -- --profile perf-6.1 cycles:pppp
grep -q "cycles:pppp" <<<"$last_out" && grep -q "at 11" <<<"$last_out" &&
	ok "rejection names spec and position" || fail "rejection message" "$last_out"
# A spec that is not UTF-8 is bad input in both modes, named escaped; the
# JSON would otherwise lose it and its error ({}, exit 0).
for mode in "" --json; do
	expect_rc 2 "spec not UTF-8 ${mode:-text}" -- $mode --profile perf-6.1 $'cpu-clock\xff'
	[ "$last_out" = "pmucanary encode: spec 'cpu-clock\\xff' is not valid UTF-8" ] &&
		ok "spec not UTF-8 ${mode:-text}: one line, escaped" || fail "spec not UTF-8 message" "$last_out"
done
expect_rc 2 "unknown event" -- --profile perf-6.1 --sysfs "$fixture" bogus
# Numbers as perf reads them: past 64 bits is an error with its position,
# never a saturated config; 010 is decimal ten.
expect_rc 2 "raw event past 64 bits" -- --profile perf-6.1 r10000000000000000
grep -q "r10000000000000000: raw event 'r10000000000000000' does not fit 64 bits at 2" <<<"$last_out" &&
	ok "raw overflow names spec and position" || fail "raw overflow message" "$last_out"
expect_rc 2 "term value past 64 bits" -- --profile perf-6.1 --sysfs "$fixture" cpu/config=18446744073709551616/
grep -q "does not fit 64 bits at 12" <<<"$last_out" && ok "term overflow position" || fail "term overflow message" "$last_out"
expect_rc 2 "negative term value" -- --profile perf-6.1 --sysfs "$fixture" cpu/event=-1/
json_check "json: event=010 is decimal ten, as perf reads it" \
	'a[0]["config"] == 10' --profile perf-6.1 cpu/event=010/
# A sysfs PMU type is read as perf reads it ("%u"): a signed or out-of-range
# type is bad input naming the file, not a wrapped type number.
sysfs_tmp=$(mktemp -d); trap 'rm -rf "$sysfs_tmp"' EXIT
cp -r "$fixture/." "$sysfs_tmp/"
echo -18446744073709551615 >"$sysfs_tmp/msr/type"
expect_rc 2 "signed sysfs PMU type" -- --profile perf-6.1 --sysfs "$sysfs_tmp" msr/tsc/
grep -q "msr/type: not a PMU type number" <<<"$last_out" && ok "bad type names its file" ||
	fail "bad type message" "$last_out"
# --fail walks the profile's fallbacks: today's perf retries an EOPNOTSUPP
# once with exclude_guest set (evsel__fallback(), unless G or H was given),
# then gives up; with H given there is no such retry.
expect_rc 0 "--fail EOPNOTSUPP,EOPNOTSUPP" -- --profile perf-modern --fail EOPNOTSUPP,EOPNOTSUPP cycles:pp
[ "$(grep -c $'^cycles:pp\tretry 1 (EOPNOTSUPP' <<<"$last_out")" = 1 ] &&
	grep $'^cycles:pp\tretry 1' <<<"$last_out" | grep -q 'exclude_guest=1' &&
	grep -q $'^cycles:pp\tgives up after EOPNOTSUPP' <<<"$last_out" &&
	! grep -q 'retry 2' <<<"$last_out" &&
	ok "--fail: one exclude_guest retry, then it gives up" || fail "--fail chain" "$last_out"
# --json --fail (--help: "tries", each attr with "why", and "gave_up": the
# release stops retrying): the same chains as data, gave_up only once perf
# has no retry left for the errno given.
json_check "json --fail: one retry answers one EOPNOTSUPP, not given up" \
	'len(a[0]["tries"]) == 1 and a[0]["tries"][0]["exclude_guest"] == 1 and "EOPNOTSUPP" in a[0]["tries"][0]["why"] and a[0]["gave_up"] is False' \
	--profile perf-modern --fail EOPNOTSUPP cycles:pp
json_check "json --fail: a second EOPNOTSUPP has none: given up" \
	'len(a[0]["tries"]) == 1 and a[0]["gave_up"] is True' \
	--profile perf-modern --fail EOPNOTSUPP,EOPNOTSUPP cycles:pp
json_check "json --fail: with H there is no retry at all: given up" \
	'a[0]["tries"] == [] and a[0]["gave_up"] is True' \
	--profile perf-modern --fail EOPNOTSUPP cycles:ppH
expect_rc 0 "--fail EOPNOTSUPP with H" -- --profile perf-modern --fail EOPNOTSUPP cycles:ppH
grep -q $'^cycles:ppH\tgives up after EOPNOTSUPP' <<<"$last_out" && ! grep -q 'retry' <<<"$last_out" &&
	ok "--fail: no retry when H was given" || fail "--fail with H" "$last_out"
# --fail errno numbers are 1..4095: 4294967318 is not EINVAL (22) truncated.
expect_rc 2 "--fail past int" -- --profile perf-6.1 --fail 4294967318 cycles:ppp
grep -q "not an errno list: '4294967318'" <<<"$last_out" && ok "--fail names the bad list" ||
	fail "--fail message" "$last_out"
expect_rc 0 "--fail 22" -- --profile perf-6.1 --fail 22 cycles:ppp
# the smallest errno is 1 (EPERM, asm-generic/errno-base.h), a number like any
# other; 0 is no errno at all.
expect_rc 0 "--fail 1" -- --profile perf-6.1 --fail 1 cycles:ppp
grep -q $'^cycles:ppp\tgives up after EPERM' <<<"$last_out" && ok "--fail 1 is EPERM" ||
	fail "--fail 1" "$last_out"
expect_rc 2 "--fail 0" -- --profile perf-6.1 --fail 0 cycles:ppp
# and the largest is MAX_ERRNO, 4095 (include/linux/err.h); 4096 is none
expect_rc 0 "--fail 4095" -- --profile perf-6.1 --fail 4095 cycles:ppp
expect_rc 2 "--fail 4096" -- --profile perf-6.1 --fail 4096 cycles:ppp
grep -q "not an errno list: '4096'" <<<"$last_out" && ok "--fail 4096 names the bad list" ||
	fail "--fail 4096 message" "$last_out"
expect_rc 0 "rejected spec in --json" -- --profile perf-6.1 --json cycles:pppp
expect_rc 0 "--release picks a profile" -- --release "perf version 6.1.187" cycles
expect_rc 2 "--release nonsense" -- --release banana cycles
expect_rc 0 "text mode" -- --profile perf-3.6 --mode stat cycles:pp
grep -q "^cycles:pp	.*precise_ip=2" <<<"$last_out" && ! grep -q exclude_guest <<<"$last_out" &&
	ok "text: SPEC<TAB>attr, perf-3.6 :pp has no exclude_guest" || fail "text output" "$last_out"

json_check "json: one object per spec, in order" \
	'len(a) == 3 and [o["spec"] for o in a] == ["cycles", "cycles:pp", "cycles:pppp"]' \
	--profile perf-3.7 cycles cycles:pp cycles:pppp
# an error's position is the 1-based column of the byte at fault: the ':'
# after a term list is the 17th of cycles/period=1/:u
json_check "json: a ':' after a term list is named at its column" \
	'a[0]["error"].endswith("directly, no " + chr(39) + ":" + chr(39) + ", at 17")' --profile perf-6.1 'cycles/period=1/:u'
json_check "json: error object has only spec and error" \
	'set(a[0]) == {"spec", "error"} and "at 11" in a[0]["error"]' \
	--profile perf-3.7 cycles:pppp
json_check "json: perf-3.7 :pp sets exclude_guest (1342798cc13e)" \
	'a[0]["precise_ip"] == 2 and a[0]["exclude_guest"] == 1' --profile perf-3.7 cycles:pp
json_check "json: perf-3.6 :pp leaves it clear" \
	'a[0]["precise_ip"] == 2 and "exclude_guest" not in a[0]' --profile perf-3.6 cycles:pp
json_check "json: kernel member names, zero members omitted" \
	'set(a[0]) <= {"spec","type","size","config","sample_type","read_format","disabled","inherit","exclude_user","exclude_kernel","exclude_hv","exclude_guest","exclude_host","precise_ip"} and "type" not in a[0]' \
	--profile perf-6.1 --mode stat cycles:u
json_check "json: record mode samples with callchains at 4000 Hz" \
	'a[0]["sample_freq"] == 4000 and a[0]["freq"] == 1 and a[0]["sample_type"] & 32' \
	--profile perf-6.1 cpu-clock
json_check "json: sysfs event through the fixture tree" \
	'a[0]["type"] == 9 and a[1]["type"] == 4 and a[1]["config"] == 0x13c' \
	--profile perf-6.1 msr/tsc/ cpu/event=0x3c,umask=1/
json_check "json: raw profile members" \
	'a[0]["exclude_user"] == 1 and a[0]["precise_ip"] == 2 and "exclude_guest" not in a[0]' \
	--profile raw --mode stat 'cycles[exclude_user,precise_ip=2]'

echo "cli_encode: $((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
