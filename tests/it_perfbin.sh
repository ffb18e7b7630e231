#!/usr/bin/env bash
# pmucanary run --perf-binary end to end with real guests (libvirt, TCG):
# one self-test run (--selftest-harm cpu-clock:u=crash) of a tiny scenario
# with profile perf-6.1 and the host's real perf as a second column.
#  - the binary's column has one cell per spec, and each cell's open-phase
#    outcome equals `pmucanary probe --perf-binary` for it;
#  - perf stat opens counting attrs (read_format, no sample_type/freq) while
#    the profile encodes `perf record -a -g` (sampling): no binary attr equals
#    a profile attr here, so the load phase arms the binary's attrs on their
#    own. Hence msr/tsc/ is EINVAL for the profile (sampling) but OK for the
#    binary (counting, after perf's exclude_guest fallback), and msr/tsc/u is
#    EINVAL for both;
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

"$bin" probe -q --json "$work/probe.json" --event cpu-clock --event msr/tsc/ \
	--profile perf-6.1 --perf-binary "$perf" >/dev/null 2>"$work/probe.err" ||
	{ echo "FAIL probe: $(cat "$work/probe.err")"; exit 1; }
col=$(jq -r '[.cells[].profile | select(startswith("bin:"))][0]' "$work/probe.json")
version=$(jq -r '.cells[] | select(.profile | startswith("bin:")) | .profile' "$work/probe.json" |
	head -1 | sed 's/^bin:perf-//')

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

# One line per disagreement.
problems=$(jq -r --slurpfile probe "$work/probe.json" --arg col "$col" --arg target "$target" \
	--argjson confirm "$confirm" '
	def armed: if ((.tries // []) | length) > 0 and .tries[-1].outcome == "OK"
		then .tries[-1].attr else .attr end;
	($probe[0].cells | map({key: "\(.profile) \(.spec)", value: .outcome}) | from_entries) as $want
	| [.cells[] | select(.profile == $col or .profile == "perf-6.1")] as $cells
	| (["cpu-clock", "cpu-clock:u", "msr/tsc/", "msr/tsc/u"] - [$cells[] | select(.profile == $col) | .spec]
	   | .[] | "\($col): no cell for \(.)"),
	  ($cells[] | . as $c | ($want["\(.profile) \(.spec)"] // "MISSING") as $p
	   | if .spec == $target then
		(if .outcome == "GUEST_CRASH" and .k == $confirm and .n == $confirm then empty
		 else "\(.profile) \(.spec): \(.outcome) k/n=\(.k)/\(.n), want GUEST_CRASH \($confirm)/\($confirm)" end)
	     elif .outcome != $p then "\(.profile) \(.spec): \(.outcome), want \($p) (probe)"
	     else empty end),
	  ($cells | map(select(.attr != null and (.outcome | test("^E[A-Z0-9]+$") | not)))
	   | group_by(armed) | .[] | select((map(.outcome) | unique | length) > 1)
	   | "cells sharing an armed attr differ: \(map("\(.profile) \(.spec)=\(.outcome)") | join(", "))"),
	  ($cells[] | select(.profile == $col and .outcome != "INFRA")
	   | select([.evidence[] | select(.kind == "perf-binary" and (.load | test("group testing")))] | length == 0)
	   | "\(.profile) \(.spec): no perf-binary evidence saying how the load phase arms it")
	' "$json")
if [ -n "$problems" ]; then bad "self-test run cells:"; echo "$problems"; explain
else ok "self-test run: $col has a cell per spec equal to probe; both $target cells GUEST_CRASH $confirm/$confirm"; fi

# The premise of the expectations above, so that a change in perf or the
# profile that makes the attrs equal is noticed (they would then share one).
shared=$(jq -r --arg col "$col" '
	def armed: if ((.tries // []) | length) > 0 and .tries[-1].outcome == "OK"
		then .tries[-1].attr else .attr end;
	[.cells[] | select(.spec == "cpu-clock" or .spec == "cpu-clock:u") | {spec, profile, a: armed}]
	| group_by(.spec) | map(select((map(.a) | unique | length) == 1) | .[0].spec) | join(",")' "$json")
if [ -z "$shared" ]; then ok "perf stat's cpu-clock attrs differ from perf-6.1's record attrs: armed separately"
else ok "NOTE: $shared: perf stat's attr equals perf-6.1's; they shared one verdict"; fi
prof_tsc=$(jq -r --arg col "$col" '.cells[] | select(.profile == "perf-6.1" and .spec == "msr/tsc/") | .outcome' "$json")
bin_tsc=$(jq -r --arg col "$col" '.cells[] | select(.profile == $col and .spec == "msr/tsc/") | .outcome' "$json")
echo "     msr/tsc/: perf-6.1 (record) $prof_tsc, $col (stat) $bin_tsc"

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
