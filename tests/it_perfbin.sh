#!/usr/bin/env bash
# pmucanary run --perf-binary end to end with real guests (libvirt, TCG):
# one self-test run (--selftest-harm cpu-clock:u=crash) of a tiny scenario
# with profile perf-6.1 and the host's real perf as a second column.
#  - every cell is a table written here by hand (not `pmucanary probe`,
#    which shares the prober with the runner), from the kernel's source and
#    the platform facts (shared/platform.md): perf stat opens counting attrs
#    (read_format, no sample_type/freq) while the profile encodes
#    `perf record -a -g` (sampling). cpu-clock, a software event, opens
#    either way with any exclude bit. The msr PMU refuses sampling and any
#    exclude bit (EINVAL): msr/tsc/ is EINVAL for the profile (sampling) but
#    OK for the binary (counting, once perf's fallback clears its default
#    exclude_guest), and msr/tsc/u (exclude_kernel, exclude_hv: no fallback
#    clears them) is EINVAL for both;
#  - no binary attr equals a profile attr here (asserted: counting vs
#    sampling), so the load phase arms the binary's attrs on their own;
#  - both the profile's and the binary's cpu-clock:u cells are GUEST_CRASH
#    k/n=confirm/confirm (each arms an attr of that spec); every other armed
#    cell stays OK; cells sharing an armed attr share the outcome;
#  - run.json and the journal's start line name the binary (path, version),
#    and --resume refuses a journal whose binary version differs.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
perf=${PERF:-/usr/bin/perf}
if ! virsh -c qemu:///system version >/dev/null 2>&1; then
	echo "SKIP: libvirtd (qemu:///system) is not running"
	exit 77
fi
if [ ! -x "$perf" ] || ! "$perf" --version >/dev/null 2>&1; then
	echo "SKIP: no runnable perf at $perf"
	exit 77
fi
command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
work=$(mktemp -d /tmp/it_perfbin.XXXXXX)
chmod 755 "$work"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
target=cpu-clock:u
confirm=2
cat > "$work/tiny.ini" <<INI
[fleet]
guests = 2
vcpus = 1
memory = 192M
heartbeat = 100ms
heartbeat_timeout = 3s
[sweep]
events = cpu-clock, msr/tsc/
modifiers = -; u
profiles = perf-6.1
[load]
dwell = 1s
batch_size = 8
confirm = $confirm
INI
fail=0
t0=$SECONDS
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# The binary's column is named after the version it reports.
version=$("$perf" --version | sed -n 's/^perf version //p')
[ -n "$version" ] || { echo "FAIL no version from $perf --version"; exit 1; }
col="bin:perf-$version"
# The table: "column spec outcome", k/n after a harm; sorted.
expected() {
	LC_ALL=C sort <<TABLE
perf-6.1 cpu-clock OK
perf-6.1 $target GUEST_CRASH $confirm/$confirm
perf-6.1 msr/tsc/ EINVAL
perf-6.1 msr/tsc/u EINVAL
$col cpu-clock OK
$col $target GUEST_CRASH $confirm/$confirm
$col msr/tsc/ OK
$col msr/tsc/u EINVAL
TABLE
}

"$bin" run --tcg --results "$work/st" --perf-binary "$perf" --selftest-harm "$target=crash" \
	"$work/tiny.ini" >"$work/st.out" 2>&1
rc=$?
dir=$(ls -d "$work"/st/*/ 2>/dev/null | head -1)
json=$dir/run.json
explain() { echo "--- matrix.txt"; cat "$dir/matrix.txt" 2>/dev/null
	echo "--- output (tail)"; tail -n 30 "$work/st.out"; }
if [ $rc -ne 1 ] || [ ! -f "$json" ]; then
	bad "self-test run: exit $rc (want 1)"; explain; exit 1
fi

# The cells against the table. jq failing (no file, "cells": null) is a
# failure, not an empty list of disagreements.
if ! got=$(jq -r '.cells[] | "\(.profile) \(.spec) \(.outcome)" +
	(if .outcome | test("^(GUEST|HOST)_") then " \(.k)/\(.n)" else "" end)' "$json"); then
	bad "jq could not read the cells of $json"
elif ! diff <(expected) <(grep . <<<"$got" | LC_ALL=C sort) >"$work/cells.diff"; then
	bad "self-test run cells differ from the table ($(grep -c . <<<"$got") cells, want $(expected | wc -l)):"
	grep '^[<>]' "$work/cells.diff" | sed 's/^</  want/; s/^>/  got /'; explain
else
	ok "self-test run: the $(expected | wc -l) cells are the table; both $target cells GUEST_CRASH $confirm/$confirm"
fi

# One line per disagreement among those cells (the table above makes sure
# there are cells to disagree).
if ! problems=$(jq -r --arg col "$col" '
	# The cell attr is the final one (pmucanary/2): what the load phase arms.
	.attrs as $A | def armed: $A[.attr];
	[.cells[] | select(.profile == $col or .profile == "perf-6.1")] as $cells
	| ($cells | map(select(.attr != null and (.outcome | test("^E[A-Z0-9]+$") | not)))
	   | group_by(armed) | .[] | select((map(.outcome) | unique | length) > 1)
	   | "cells sharing an armed attr differ: \(map("\(.profile) \(.spec)=\(.outcome)") | join(", "))"),
	  ($cells[] | select(.profile == $col and .outcome != "INFRA")
	   | select([(.evidence // [])[] | select(.kind == "perf-binary" and (.load | test("group testing")))] | length == 0)
	   | "\(.profile) \(.spec): no perf-binary evidence saying how the load phase arms it")
	' "$json"); then
	bad "jq could not read the cells of $json"
elif [ -n "$problems" ]; then bad "self-test run cells:"; echo "$problems"; explain
else ok "cells sharing an armed attr share the outcome; $col cells say how they are armed"; fi

# The premise of the table: perf stat's attrs (counting) are not
# perf-6.1's (sampling), so each column arms its own. A change in perf or
# the profile that makes them equal fails here.
if ! shared=$(jq -r '
	.attrs as $A | def armed: $A[.attr];
	[.cells[] | select(.spec == "cpu-clock" or .spec == "cpu-clock:u") | {spec, profile, a: armed}]
	| if length != 4 then error("\(length) cpu-clock cells, want 4") else . end
	| group_by(.spec) | map(select((map(.a) | unique | length) == 1) | .[0].spec) | join(",")' "$json"); then
	bad "jq could not compare the cpu-clock attrs of $json"
elif [ -n "$shared" ]; then
	bad "$shared: perf stat's attr equals perf-6.1's (the table assumes each column arms its own)"
else
	ok "perf stat's cpu-clock attrs differ from perf-6.1's record attrs: armed separately"
fi

if jq -e --arg p "$perf" --arg v "$version" \
	'.perf_binaries | any(.path == $p and .version == $v)' "$json" >/dev/null; then
	ok "run.json perf_binaries names $perf $version"
else bad "run.json perf_binaries: $(jq -c '.perf_binaries' "$json")"; fi
if head -1 "$dir/journal.jsonl" | jq -e --arg p "$perf" --arg v "$version" \
	'.perf_binaries | any(.path == $p and .version == $v)' >/dev/null; then
	ok "journal start line names $perf $version"
else bad "journal start line: $(head -1 "$dir/journal.jsonl" | head -c 300)"; fi

# --resume with another version of the binary than the run started with.
cp -r "$dir" "$work/changed"
jq -c 'if .perf_binaries then .perf_binaries[0].version = "0.0.1" else . end' \
	"$dir/journal.jsonl" >"$work/changed/journal.jsonl"
"$bin" run --tcg --resume "$work/changed" >"$work/resume.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "0.0.1" "$work/resume.out" && grep -q "new run" "$work/resume.out"; then
	ok "--resume refuses a changed binary version (exit 2)"
else bad "--resume with a changed version: exit $rc (want 2): $(tail -3 "$work/resume.out")"; fi

echo "# it_perfbin: $((SECONDS - t0))s"
exit $fail
