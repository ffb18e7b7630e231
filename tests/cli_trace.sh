#!/usr/bin/env bash
# CLI tests for `pmucanary trace [--json FILE] -- PERF_COMMAND...`.
# Usage errors are checked everywhere; the rest needs Debian's perf and is
# skipped (SKIP line, exit 77) without /usr/bin/perf. The attr-by-attr
# comparison with perf's own -vv output is in tests/test_trace.c.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
perf=/usr/bin/perf
fails=0 n=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

check() { # NAME CONDITION-STATUS
	n=$((n + 1))
	if [ "$2" -eq 0 ]; then echo "ok: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi
}
run() { # runs the CLI, stdout to $tmp/out, stderr to $tmp/err, sets rc
	"$bin" trace "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
}

run; [ $rc -eq 2 ]; check "no command -> 2" $?
run -- /nonexistent/perf stat; [ $rc -eq 2 ] && grep -q "/nonexistent/perf" "$tmp/err"
check "missing command -> 2 naming it" $?
run --method bogus -- true; [ $rc -eq 2 ]; check "unknown method -> 2" $?
# '--' with nothing after it is no command; one word without '--' is one
run --; [ $rc -eq 2 ] && grep -q "no command given" "$tmp/err"
check "'--' alone -> 2, no command given" $?
run /bin/true; [ $rc -eq 0 ] && grep -qx 'exit status 0' "$tmp/out"
check "a command of one word without '--' runs" $?

# No shell in between: arguments arrive as given; the command's stderr
# passes through and its exit status is reported, not returned.
run -- /bin/sh -c 'echo "[$1] [$2]" >&2; exit 7' sh 'a b' '*'
[ $rc -eq 0 ] && grep -qx '\[a b\] \[\*\]' "$tmp/err" && grep -qx 'exit status 7' "$tmp/out"
check "argv passes through; stderr passes through; exit status reported" $?
run --json "$tmp/sh.json" -- /bin/sh -c 'for i in $(seq 1 30); do echo "l$i" >&2; done'
[ $rc -eq 0 ] && grep -q '"l30"' "$tmp/sh.json" && ! grep -q '"l10"' "$tmp/sh.json" &&
	grep -q '"stderr_lines": 30' "$tmp/sh.json"
check "stderr tail keeps the last 20 lines" $?
# the JSON's "argv" is the command as given, its first word included
run --json "$tmp/argv.json" -- /bin/sh -c 'exit 0' sh 'a b'
[ $rc -eq 0 ] && python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["argv"] == ["/bin/sh", "-c", "exit 0", "sh", "a b"] else 1)' "$tmp/argv.json"
check "--json: argv is the whole command, in order" $?

if [ ! -x "$perf" ]; then
	echo "$((n - fails)) of $n passed"
	echo "SKIP: $perf missing (the rest needs a real perf)"
	[ $fails -eq 0 ] && exit 77; exit 1
fi
ncpu=$(getconf _NPROCESSORS_ONLN)
hw=0; [ -e /sys/bus/event_source/devices/cpu ] && hw=1

for m in seccomp syscall; do
	run --method $m -- "$perf" stat -e cpu-clock:u -a -- true
	[ $rc -eq 0 ] &&
		[ "$(grep -c 'type=1 .*exclude_kernel=1.* -> fd [0-9]' "$tmp/out")" -ge "$ncpu" ] &&
		grep -qx 'exit status 0' "$tmp/out" && grep -q 'cpu-clock:u' "$tmp/err"
	check "$m: perf stat -e cpu-clock:u -a: one open per CPU, perf's output passes through" $?
done

run --json "$tmp/stat.json" -- "$perf" stat -e cpu-clock:u -a -- true
[ $rc -eq 0 ] && grep -q '"outcome": "OK"' "$tmp/stat.json" && grep -q '"exclude_kernel": 1' "$tmp/stat.json" &&
	grep -q '"exit_code": 0' "$tmp/stat.json" && grep -q '"argv"' "$tmp/stat.json"
check "--json FILE" $?

if [ $hw -eq 0 ]; then
	# No hardware PMU: cycles:pp gets ENOENT, then perf falls back to cpu-clock.
	run -- "$perf" record -e cycles:pp -a -o "$tmp/perf.data" -- true
	[ $rc -eq 0 ] && grep -A1 'precise_ip=2.* -> ENOENT' "$tmp/out" | grep -q 'type=1 .*precise_ip=2.* -> fd'
	check "perf record cycles:pp: ENOENT then the cpu-clock fallback" $?
fi
if [ -e /sys/bus/event_source/devices/msr ]; then
	# msr events cannot sample: every fallback gets EINVAL and perf fails.
	run -- "$perf" record -e msr/tsc/ -a -o "$tmp/perf.data" -- true
	[ $rc -eq 0 ] && [ "$(grep -c 'type=9 .* -> EINVAL' "$tmp/out")" -ge 2 ] &&
		grep -q 'exit status [1-9]' "$tmp/out"
	check "perf record msr/tsc/: EINVAL tries, perf's failure reported" $?
fi

echo "$((n - fails)) of $n passed"
[ $fails -eq 0 ]
