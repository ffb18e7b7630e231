#!/usr/bin/env bash
# pmucanary run: bad input exits 2 with file:line:key; no guests needed.
# Every run is given --results under this test's own temp directory, and
# none may create it: a run that got past its input checks would otherwise
# write results/ into the working directory (the source tree).
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
top=${PMUCANARY_TOP:-.}
fail=0
tmp=$(mktemp -d /tmp/cli_run.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
r=$tmp/r
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
run() { "$bin" run --results "$r" "$@"; }
check bad-duration 2 "$d/bad-duration.ini:7: [load] dwell: expected a duration like 2s or 500ms" \
	run "$d/bad-duration.ini"
check unknown-key 2 "$d/unknown-key.ini:2: [fleet] guest: unknown key" run "$d/unknown-key.ini"
check missing 2 "/nonexistent.ini" run /nonexistent.ini
# Every bad file of tests/data/scenarios: exit 2 and the file:line at fault.
check bad-bool 2 "$d/bad-bool.ini:3: [sweep] raw_excludes: expected true or false" run "$d/bad-bool.ini"
check bad-header 2 "$d/bad-header.ini:1: expected a section header" run "$d/bad-header.ini"
check bad-heartbeat 2 "$d/bad-heartbeat.ini:3: [fleet] heartbeat_timeout: must be longer than heartbeat" \
	run "$d/bad-heartbeat.ini"
check bad-memory 2 "$d/bad-memory.ini:2: [fleet] memory: expected a size" run "$d/bad-memory.ini"
check bad-mode 2 "$d/bad-mode.ini:3: [sweep] mode: expected record or stat" run "$d/bad-mode.ini"
check bad-modifiers 2 "$d/bad-modifiers.ini:3: [sweep] modifiers: 'p+'" run "$d/bad-modifiers.ini"
check bad-ring 2 "$d/bad-ring.ini:4: [load] ring_pages: expected a power of two" run "$d/bad-ring.ini"
check big-duration 2 "$d/big-duration.ini:7: [load] dwell: 999999999999999999999h is out of range" \
	run "$d/big-duration.ini"
check big-memory 2 "$d/big-memory.ini:3: [fleet] memory: 4194304G is out of range" run "$d/big-memory.ini"
check bad-uint 2 "$d/bad-uint.ini:2: [fleet] guests: expected an integer from 1 to 64" run "$d/bad-uint.ini"
check duplicate-key 2 "$d/duplicate-key.ini:4: [sweep] events: key given twice" run "$d/duplicate-key.ini"
check key-outside 2 "$d/key-outside.ini:1: guests: key outside any section" run "$d/key-outside.ini"
check not-a-line 2 "$d/not-a-line.ini:3: expected key = value" run "$d/not-a-line.ini"
check nothing-to-sweep 2 "$d/nothing-to-sweep.ini:4: [sweep]: nothing to sweep" run "$d/nothing-to-sweep.ini"
check unknown-section 2 "$d/unknown-section.ini:3: [loda]: unknown section" run "$d/unknown-section.ini"
# Values only the sweep can judge (no such profile, event, PMU) are bad input
# too, named by line, and leave no run directory behind.
printf '[sweep]\nevents = cpu-clock\n\nprofiles = perf-9.9\n' >"$tmp/profile.ini"
printf '[fleet]\nguests = 1\n[sweep]\nevents = cpu-clock, nosuchevent\n' >"$tmp/event.ini"
printf '[sweep]\npmus = nosuchpmu\n' >"$tmp/pmu.ini"
check bad-profile 2 "$tmp/profile.ini:4: [sweep] profiles: " run "$tmp/profile.ini"
check bad-event 2 "$tmp/event.ini:4: [sweep] events: " run "$tmp/event.ini"
check bad-pmu 2 "$tmp/pmu.ini:2: [sweep] pmus: " run "$tmp/pmu.ini"
if [ -e "$r" ]; then echo "FAIL bad scenarios left run directories: $(ls "$r")"; fail=1
else echo "ok   bad scenarios leave no run directory"; fi
# --resume: a missing run, a journal with garbage mid-file (file:line).
check resume-missing 2 "$tmp/nope/journal.jsonl" run --resume "$tmp/nope"
mkdir -p "$tmp/garbled"
printf '{"step":"start","seq":0}\nnot json\n{"step":"done","seq":2}\n' >"$tmp/garbled/journal.jsonl"
check resume-garbled 2 "$tmp/garbled/journal.jsonl:2: not a journal line" run --resume "$tmp/garbled"
check two-scenarios 2 "one SCENARIO at most" run a.ini b.ini
check bad-harm 2 "expected crash, hang, corrupt, reboot, oops or host-crash" \
	run --selftest-harm cpu-clock=melt "$top/scenarios/smoke.ini"
# The self-test's spec: none, or one the scenario does not sweep, is bad
# input before anything exists; an attr the sweep has under another
# spelling (cpu-clock:u is cpu-clock with exclude_kernel) is taken.
check harm-no-spec 2 "--selftest-harm: no spec before '='" \
	run --selftest-harm =crash "$top/scenarios/smoke.ini"
check harm-not-swept 2 "--selftest-harm msr/tsc/: not in this run's sweep" \
	run --selftest-harm msr/tsc/=crash "$top/scenarios/smoke.ini"
check harm-not-swept-mod 2 "--selftest-harm cpu-clock:ppp: not in this run's sweep" \
	run --selftest-harm cpu-clock:ppp=crash "$top/scenarios/smoke.ini"
# host-crash panics the kernel it runs on: refused outside a lab host, before
# anything is created (this test must never panic the machine it runs on).
check host-crash-outside-lab 2 "only inside a lab host" \
	run --selftest-harm cpu-clock=host-crash "$top/scenarios/smoke.ini"
printf '{"limitations": [' >"$tmp/ctx.json"
check lab-context-garbled 2 "$tmp/ctx.json:1:" \
	run --lab-context "$tmp/ctx.json" "$top/scenarios/smoke.ini"
# A value found bad only once used (an unknown profile) names its line too,
# its section on the file's first line.
printf '[sweep]\nevents = cpu-clock\nprofiles = perf-9.99\n' >"$tmp/bad-profile.ini"
check unknown-profile-line 2 "$tmp/bad-profile.ini:3: [sweep] profiles: " \
	run --uri test:///default "$tmp/bad-profile.ini"

# Without SCENARIO: scenarios/smoke.ini of the working directory when it has
# one (--help), not the one beside the binary. (--uri test:///default: never
# a real guest, whichever file were read.)
mkdir -p "$tmp/cwd/scenarios"
cp "$d/unknown-key.ini" "$tmp/cwd/scenarios/smoke.ini"
check default-scenario-cwd 2 "scenarios/smoke.ini:2: [fleet] guest: unknown key" \
	sh -c 'cd "$1" && shift && exec "$@"' sh "$tmp/cwd" "$bin" run --uri test:///default --results "$r"
if [ -e "$r" ]; then echo "FAIL bad input left run directories: $(ls "$r")"; fail=1
else echo "ok   no bad input left a run directory"; fi
check help 0 "" run --help
run --help | grep -q "heartbeat_timeout" || { echo "FAIL help lists keys"; fail=1; }

# A run that arms nothing boots no guest: on a host without a hardware PMU
# (no devices/cpu) `instructions` opens nowhere (ENOENT). Its --junit is
# written, exit 0. (--uri test:///default: were a guest ever started, it
# would be libvirt's fake driver's, never a real one.)
if [ ! -e /sys/bus/event_source/devices/cpu ] && [ ! -e /sys/bus/event_source/devices/cpu_core ]; then
	printf '[sweep]\nevents = instructions\nmodifiers = -\nprofiles = perf-3.6\nraw_excludes = false\n' \
		>"$tmp/none-armed.ini"
	rc=0; "$bin" run --uri test:///default --results "$tmp/na" --junit "$tmp/na.xml" \
		"$tmp/none-armed.ini" >"$tmp/na.out" 2>&1 || rc=$?
	if [ "$rc" = 0 ] && grep -q '<testcase classname="[^"]*\.perf-3\.6" name="instructions"' "$tmp/na.xml" &&
	   grep -q "outcome ENOENT" "$tmp/na.xml"; then
		echo "ok   a run that arms nothing: exit 0, --junit written"
	else
		echo "FAIL a run that arms nothing: exit $rc, junit: $(cat "$tmp/na.xml" 2>&1 | head -c 300) $(cat "$tmp/na.out")"; fail=1
	fi
fi
exit $fail
