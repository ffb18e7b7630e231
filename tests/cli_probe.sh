#!/usr/bin/env bash
# CLI tests for `pmucanary probe`: the result-file contract (schema
# pmucanary/1, kind probe, the keys run/diff/matrix read), exit 2 with one
# line naming the bad input and no JSON file left behind, --help.
# Needs $PMUCANARY_BIN and $PMUCANARY_TOP (tests/run-tests sets both); jq for
# the schema checks, /usr/bin/perf and root for --perf-binary: without them
# the rest runs and the suite then skips (exit 77, "SKIP: what was not
# checked"), which PMUCANARY_REQUIRE_ALL=1 turns into a failure.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0 skips=()

ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# --help names every option.
help=$("$bin" probe --help 2>&1); rc=$?
check "--help exits 0" [ "$rc" -eq 0 ]
for o in --json --pmu --event --profile --full --sysfs --per-task --perf-binary --jobs --list-all; do
	check "--help describes $o" grep -q -- "$o" <<<"$help"
done

# A small real probe: software events, every profile.
out=$("$bin" probe --pmu software --json "$tmp/p.json" 2>"$tmp/err"); rc=$?
check "probe --pmu software exits 0" [ "$rc" -eq 0 ]
check "quiet on stderr when not a terminal" [ ! -s "$tmp/err" ]
# The terminal view is `matrix` of this one probe (one input).
check "matrix of one input" grep -q "^pmucanary matrix: 1 input, " <<<"$out"
check "matrix names a software event" grep -q "cpu-clock.* x " <<<"$out"
check "matrix counts cells per outcome" grep -q "^cells by outcome: OK [0-9]" <<<"$out"
check "result file written" [ -s "$tmp/p.json" ]
check "no temporary file left" [ "$(ls -A "$tmp" | wc -l)" -eq 2 ]
if command -v jq >/dev/null; then
	j() { jq -e "$1" "$tmp/p.json" >/dev/null; }
	check "schema pmucanary/2" j '.schema == "pmucanary/2"'
	check "kind probe" j '.kind == "probe"'
	check "envelope keys" j 'has("run_id") and has("created") and has("tool_version")
		and has("host") and has("kernel") and has("accel") and has("limitations")
		and has("selftest") and has("scenario") and has("attrs") and has("cells")'
	check "created is ISO-8601 UTC" j '.created | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")'
	check "accel kvm|tcg|none" j '.accel | IN("kvm", "tcg", "none")'
	check "kernel is the host release" j ".kernel == \"$(uname -r)\""
	check "host fingerprint" j '.host | .kernel.release and .cpu and (.pmus | length > 0)
		and has("perf_event_paranoid") and has("kvm") and has("qemu_version")
		and has("libvirt_version") and (.accel | IN("kvm", "tcg"))'
	check "cells present" j '.cells | length > 0'
	check "cell keys" j 'all(.cells[]; has("profile") and has("spec")
		and has("outcome") and has("tries") and has("k") == has("n"))'
	check "k/n only on cells that repeated tries" j 'all(.cells[] | select(has("k")); .n > 0)'
	check "a cell's kernel only when not the file's" j '.kernel as $k
		| all(.cells[]; (.kernel // $k) == $k)'
	check "attrs: each distinct attr once" j '(.attrs | length) == (.attrs | unique | length)'
	check "attr indices in range" j '(.attrs | length) as $n | all(.cells[];
		([.attr // 0, (.tries[] | .attr)] | all(type == "number" and . >= 0 and . < $n)))'
	check "attr xor error" j 'all(.cells[]; has("attr") != has("error"))'
	check "rejected cells: REJECTED, no tries" j 'all(.cells[] | select(has("error"));
		.outcome == "REJECTED" and (.tries | length) == 0)'
	check "no REJECTED without perf's message" j 'all(.cells[] | select(.outcome == "REJECTED");
		.error | type == "string")'
	check "opened cells: the attr is the last try's, outcome the last try's" j 'all(.cells[] |
		select(has("attr")); .tries[-1].attr == .attr and .tries[-1].outcome == .outcome)'
	check "jq inlines attrs" j '.attrs as $a | [.cells[] | select(has("attr"))
		| .attr = $a[.attr]] | all(.attr | type == "object")'
	check "software cpu-clock opens" j 'any(.cells[]; .spec == "cpu-clock" and .outcome == "OK")'
	check "raw profile specs" j 'any(.cells[]; .profile == "raw"
		and .spec == "cpu-clock[exclude_user,exclude_guest,precise_ip=2]")'
	if [ ! -e /sys/bus/event_source/devices/cpu ]; then
		check "no-hardware-PMU limitation" j 'any(.limitations[]; test("no hardware PMU"))'
	fi
	if [ ! -e /dev/kvm ]; then
		check "TCG limitation" j 'any(.limitations[]; test("TCG"))'
	fi
	check "accel_reason in the fingerprint" j '.host.accel_reason | type == "string"'
	if [ -e /dev/kvm ] && [ ! -e /sys/module/kvm_intel ] && [ ! -e /sys/module/kvm_amd ]; then
		check "/dev/kvm without kvm_intel/kvm_amd is tcg" j '.accel == "tcg"'
	fi
else
	skips+=("no jq: the result files' schema and contents not checked")
fi

# --json NAME.gz writes the same document gzip-compressed (a full sweep's
# 30 MB is ~1.3 MB so), and matrix reads it like the plain file.
"$bin" probe --pmu software --json "$tmp/p.json.gz" >/dev/null 2>&1; rc=$?
check "probe --json NAME.gz exits 0" [ "$rc" -eq 0 ]
check "NAME.gz is gzip" gzip -t "$tmp/p.json.gz"
check "NAME.gz holds the same cells" cmp <(gzip -dc "$tmp/p.json.gz" | grep -o '"cells":.*') \
	<(grep -o '"cells":.*' "$tmp/p.json")
check "NAME.gz is smaller" [ "$(stat -c %s "$tmp/p.json.gz")" -lt "$(( $(stat -c %s "$tmp/p.json") / 4 ))" ]
# (but for the lines naming the input, its run id and when it was written)
check "matrix reads NAME.gz as the plain file" \
	cmp <("$bin" matrix "$tmp/p.json.gz" 2>&1 | grep -v '^  \[1\] \|^      written by ') \
	<("$bin" matrix "$tmp/p.json" 2>&1 | grep -v '^  \[1\] \|^      written by ')
rm -f "$tmp/p.json.gz"

# The readable summary: a screenful, not a line per cell; rejected specs
# counted apart from the kernel's EINVAL; --list-all gives every cell.
out=$("$bin" probe --pmu software --profile perf-3.1 --profile perf-6.1 2>/dev/null)
check "summary: rejected counted apart" \
	grep -q "^cells by outcome: .*, rejected by the profile [0-9]" <<<"$out"
check "summary: names every profile" grep -q "^      profiles: perf-3.1, perf-6.1$" <<<"$out"
check "summary: the grid row of perf-3.1 (no G/H letters)" grep -qE "^[^ ]+ +perf-3\.1 +rej$" <<<"$out"
check "summary: rejected group names the parser rule" \
	grep -q "^rejected by the profile's parser (no syscall): unknown modifier 'G'" <<<"$out"
check "summary: short" [ "$(wc -l <<<"$out")" -lt 150 ]
all=$("$bin" probe --pmu software --profile perf-3.1 --profile perf-6.1 --list-all 2>/dev/null)
check "--list-all: every non-OK cell" grep -q "^  perf-3.1     cpu-clock:G .*rejected: " <<<"$all"
check "--list-all: the grid has a column per spec" grep -q "^kernel .*  cpu-clock:G" <<<"$all"
all2=$("$bin" probe --pmu software --profile perf-3.1 --profile perf-6.1 --all 2>/dev/null)
check "--all is --list-all" cmp -s <(grep -v '^  \[1\] \|^      written by ' <<<"$all") \
	<(grep -v '^  \[1\] \|^      written by ' <<<"$all2")
check "default: no flat list" [ "$(grep -c '^  perf-3.1     cpu-clock:' <<<"$out")" -eq 0 ]

# --list-all: a cell's fallbacks after its first try, one "why -> outcome"
# each, "; " between them. Without a hardware PMU instructions:P fails at
# precise_ip 3, 2, 1 and 0 (perf's :P walk down): 4 tries, 3 fallbacks.
if [ ! -e /sys/bus/event_source/devices/cpu ] && [ ! -e /sys/bus/event_source/devices/cpu_core ]; then
	w="P: decrease precise_ip by one -> ENOENT"
	out=$("$bin" probe --list-all --event instructions --profile perf-4.8 2>/dev/null)
	check "--list-all: the tries of instructions:P, '; ' between them" \
		grep -qF "ENOENT  after 4 tries: $w; $w; $w" <<<"$out"
fi

# A real perf binary as a column (Debian's perf; skipped without it).
if [ -x /usr/bin/perf ] && [ "$(id -u)" -eq 0 ]; then
	out=$("$bin" probe --event cpu-clock --profile perf-6.1 --perf-binary /usr/bin/perf \
		--json "$tmp/b.json" 2>"$tmp/err"); rc=$?
	check "--perf-binary exits 0" [ "$rc" -eq 0 ]
	check "--perf-binary: a bin:perf-<version> profile" grep -q "^      profiles: perf-6.1, bin:perf-[0-9]" <<<"$out"
	if command -v jq >/dev/null; then
		check "--perf-binary: cpu-clock traced and OK" jq -e 'any(.cells[];
			(.profile | startswith("bin:perf-")) and .spec == "cpu-clock"
			and .outcome == "OK" and (.tries | length) >= 1)' "$tmp/b.json" >/dev/null
		check "--perf-binary: as many specs as perf-6.1" jq -e '
			([.cells[] | select(.profile == "perf-6.1")] | length) ==
			([.cells[] | select(.profile | startswith("bin:"))] | length)' \
			"$tmp/b.json" >/dev/null
	fi
	rm -f "$tmp/b.json"
	# On a terminal (script(1) gives it one) a short sweep says what it is
	# about to trace too, not only a long one.
	if command -v script >/dev/null; then
		out=$(script -qec "$bin probe --event cpu-clock --profile perf-6.1 --perf-binary /usr/bin/perf" \
			/dev/null </dev/null 2>&1)
		check "--perf-binary on a terminal: says how many specs it traces" \
			grep -aq "^probe: bin:perf-[0-9.]* (/usr/bin/perf): [0-9]* specs to trace (the sweep of perf-6.1)" <<<"$out"
	fi
elif [ ! -x /usr/bin/perf ]; then
	skips+=("no /usr/bin/perf (Debian package linux-perf): --perf-binary not checked")
else
	skips+=("not root: --perf-binary (traces perf's system-wide opens) not checked")
fi

# Bad input: exit 2, one line naming it, no file left behind.
# expect2 WHAT PATTERN ARGS...
expect2() {
	local what=$1 pat=$2 err rc; shift 2
	rm -f "$tmp/bad.json"
	err=$("$bin" probe --json "$tmp/bad.json" "$@" 2>&1 >/dev/null); rc=$?
	check "$what: exit 2" [ "$rc" -eq 2 ]
	check "$what: message names it" grep -q -- "$pat" <<<"$err"
	check "$what: one line" [ "$(wc -l <<<"$err")" -eq 1 ]
	check "$what: no JSON file" [ ! -e "$tmp/bad.json" ]
}
expect2 "unknown profile" "perf-nope" --profile perf-nope
expect2 "unknown event" "no-such-event" --event no-such-event
expect2 "unknown pmu" "nopmu" --pmu nopmu
expect2 "unreadable sysfs" "$tmp/nosysfs" --sysfs "$tmp/nosysfs"
mkdir "$tmp/emptysysfs"
expect2 "sysfs without PMUs" "emptysysfs: no PMU directories" --sysfs "$tmp/emptysysfs"
rmdir "$tmp/emptysysfs"
expect2 "bad option" "--frobnicate" --frobnicate
expect2 "missing perf binary" "$tmp/noperf" --perf-binary "$tmp/noperf"
expect2 "not a perf binary" "/bin/true" --pmu software --perf-binary /bin/true
# Nothing left to test is not a clean probe (exit 0 said "probed" with 0
# cells): the rule `run` has. The breakpoint PMU is never swept on its own.
expect2 "filters select nothing" "nothing to test: the filters select no event" \
	--sysfs "$top/tests/data/sysfs-enum" --pmu breakpoint
err=$("$bin" probe --json "$tmp/nodir/x.json" --pmu software 2>&1 >/dev/null); rc=$?
check "unwritable --json: exit 2" [ "$rc" -eq 2 ]
check "unwritable --json: names the path" grep -q "$tmp/nodir" <<<"$err"

# --sysfs fixture: its PMUs, and the limitation says so.
"$bin" probe --sysfs "$top/tests/data/sysfs-enum" --pmu msr --profile raw \
	--json "$tmp/f.json" >/dev/null 2>&1; rc=$?
check "--sysfs fixture exits 0" [ "$rc" -eq 0 ]
if command -v jq >/dev/null; then
	check "fixture: 2 msr events x 256 raw specs" \
		jq -e '.cells | length == 512' "$tmp/f.json" >/dev/null
	check "fixture: limitation names the sysfs dir" \
		jq -e 'any(.limitations[]; test("sysfs-enum"))' "$tmp/f.json" >/dev/null
fi

echo "1..$n"
[ "$fails" -eq 0 ] || exit 1
# tests/run-tests' skip (PMUCANARY_REQUIRE_ALL=1 makes it a failure)
if [ ${#skips[@]} -gt 0 ]; then
	msg=$(printf '%s; ' "${skips[@]}")
	echo "SKIP: ${msg%; }"
	exit 77
fi
