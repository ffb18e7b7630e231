#!/usr/bin/env bash
# pmucanary run: bad input exits 2 with file:line:key; no guests needed.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
top=${PMUCANARY_TOP:-.}
fail=0
check() { # name expected-exit expected-stderr-substring cmd...
	local name=$1 want=$2 msg=$3; shift 3
	local err rc
	err=$("$@" 2>&1 >/dev/null); rc=$?
	if [ "$rc" != "$want" ] || [[ "$err" != *"$msg"* ]]; then
		echo "FAIL $name: exit $rc (want $want), stderr: $err"; fail=1
	else
		echo "ok   $name"
	fi
}
d=$top/tests/data/scenarios
check bad-duration 2 "$d/bad-duration.ini:7: [load] dwell: expected a duration like 2s or 500ms" \
	"$bin" run "$d/bad-duration.ini"
check unknown-key 2 "$d/unknown-key.ini:2: [fleet] guest: unknown key" "$bin" run "$d/unknown-key.ini"
check missing 2 "/nonexistent.ini" "$bin" run /nonexistent.ini
# Every bad file of tests/data/scenarios: exit 2 and the file:line at fault.
check bad-bool 2 "$d/bad-bool.ini:3: [sweep] raw_excludes: expected true or false" "$bin" run "$d/bad-bool.ini"
check bad-header 2 "$d/bad-header.ini:1: expected a section header" "$bin" run "$d/bad-header.ini"
check bad-heartbeat 2 "$d/bad-heartbeat.ini:3: [fleet] heartbeat_timeout: must be longer than heartbeat" \
	"$bin" run "$d/bad-heartbeat.ini"
check bad-memory 2 "$d/bad-memory.ini:2: [fleet] memory: expected a size" "$bin" run "$d/bad-memory.ini"
check bad-mode 2 "$d/bad-mode.ini:3: [sweep] mode: expected record or stat" "$bin" run "$d/bad-mode.ini"
check bad-modifiers 2 "$d/bad-modifiers.ini:3: [sweep] modifiers: 'p+'" "$bin" run "$d/bad-modifiers.ini"
check bad-ring 2 "$d/bad-ring.ini:4: [load] ring_pages: expected a power of two" "$bin" run "$d/bad-ring.ini"
check bad-uint 2 "$d/bad-uint.ini:2: [fleet] guests: expected an integer from 1 to 64" "$bin" run "$d/bad-uint.ini"
check duplicate-key 2 "$d/duplicate-key.ini:4: [sweep] events: key given twice" "$bin" run "$d/duplicate-key.ini"
check key-outside 2 "$d/key-outside.ini:1: guests: key outside any section" "$bin" run "$d/key-outside.ini"
check not-a-line 2 "$d/not-a-line.ini:3: expected key = value" "$bin" run "$d/not-a-line.ini"
check nothing-to-sweep 2 "$d/nothing-to-sweep.ini:4: [sweep]: nothing to sweep" "$bin" run "$d/nothing-to-sweep.ini"
check unknown-section 2 "$d/unknown-section.ini:3: [loda]: unknown section" "$bin" run "$d/unknown-section.ini"
# Values only the sweep can judge (no such profile, event, PMU) are bad input
# too, named by line, and leave no run directory behind.
tmp=$(mktemp -d /tmp/cli_run.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf '[sweep]\nevents = cpu-clock\n\nprofiles = perf-9.9\n' >"$tmp/profile.ini"
printf '[fleet]\nguests = 1\n[sweep]\nevents = cpu-clock, nosuchevent\n' >"$tmp/event.ini"
printf '[sweep]\npmus = nosuchpmu\n' >"$tmp/pmu.ini"
check bad-profile 2 "$tmp/profile.ini:4: [sweep] profiles: " "$bin" run --results "$tmp/r" "$tmp/profile.ini"
check bad-event 2 "$tmp/event.ini:4: [sweep] events: " "$bin" run --results "$tmp/r" "$tmp/event.ini"
check bad-pmu 2 "$tmp/pmu.ini:2: [sweep] pmus: " "$bin" run --results "$tmp/r" "$tmp/pmu.ini"
if [ -e "$tmp/r" ]; then echo "FAIL bad scenarios left run directories: $(ls "$tmp/r")"; fail=1
else echo "ok   bad scenarios leave no run directory"; fi
# --resume: a missing run, a journal with garbage mid-file (file:line).
check resume-missing 2 "$tmp/nope/journal.jsonl" "$bin" run --resume "$tmp/nope"
mkdir -p "$tmp/garbled"
printf '{"step":"start","seq":0}\nnot json\n{"step":"done","seq":2}\n' >"$tmp/garbled/journal.jsonl"
check resume-garbled 2 "$tmp/garbled/journal.jsonl:2: not a journal line" "$bin" run --resume "$tmp/garbled"
check two-scenarios 2 "one SCENARIO at most" "$bin" run a.ini b.ini
check bad-harm 2 "expected crash, hang, corrupt, reboot, oops or host-crash" \
	"$bin" run --selftest-harm cpu-clock=melt "$top/scenarios/smoke.ini"
# host-crash panics the kernel it runs on: refused outside a lab host, before
# anything is created (this test must never panic the machine it runs on).
check host-crash-outside-lab 2 "only inside a lab host" \
	"$bin" run --results "$tmp/hc" --selftest-harm cpu-clock=host-crash "$top/scenarios/smoke.ini"
if [ -e "$tmp/hc" ]; then echo "FAIL host-crash refusal left a run directory"; fail=1
else echo "ok   host-crash refusal leaves no run directory"; fi
printf '{"limitations": [' >"$tmp/ctx.json"
check lab-context-garbled 2 "$tmp/ctx.json:1:" \
	"$bin" run --results "$tmp/hc" --lab-context "$tmp/ctx.json" "$top/scenarios/smoke.ini"
check help 0 "" "$bin" run --help
"$bin" run --help | grep -q "heartbeat_timeout" || { echo "FAIL help lists keys"; fail=1; }
exit $fail
