#!/usr/bin/env bash
# pmucanary run --resume with real guests (libvirt, TCG): a self-test run
# (there is isolation work) is killed with SIGKILL while a batch is armed,
# after at least two batches were judged. Then:
#  - no guest of the run is left (AUTODESTROY: the guests die with the
#    harness), counted by a name pattern shown to match both while it ran;
#  - `run --resume RUN_DIR`, given nothing else, finishes it: the same cells
#    (profile, spec, outcome, k, n) as an uninterrupted run of the scenario,
#    whose 12 cells have exactly the two cpu-clock:u cells harmed (perf 3.7
#    and 3.12 encode cpu-clock:u alike and unlike :uH or no modifier; see
#    it_run.sh), so that two runs broken alike cannot pass as equal;
#  - no batch judged before the kill is armed again after it;
#  - the batch armed at the kill, on this same host boot, is armed again and
#    not called HOST_CRASH (that needs the host's boot id to change).
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
if ! virsh -c qemu:///system version >/dev/null 2>&1; then
	echo "SKIP: libvirtd (qemu:///system) is not running"
	exit 77
fi
command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
work=$(mktemp -d /tmp/it_resume.XXXXXX)
chmod 755 "$work"
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT
target=cpu-clock:u
cat > "$work/tiny.ini" <<'INI'
# Three distinct attrs, one of them the self-test culprit: a screen, splits
# and confirms, most of them harmful (guest restarts).
[fleet]
guests = 2
vcpus = 1
memory = 160M
heartbeat = 100ms
heartbeat_timeout = 3s
[sweep]
events = cpu-clock, msr/tsc/
modifiers = -; u; uH
profiles = perf-3.7; perf-3.12
[load]
dwell = 1s
batch_size = 4
confirm = 2
INI
fail=0
t0=$SECONDS
explain() { # dir out
	echo "--- matrix.txt"; cat "$1"/*/matrix.txt 2>/dev/null
	echo "--- journal steps"; jq -c '{seq, step, batch, kind, outcome}' "$1"/*/journal.jsonl 2>/dev/null | tail -n 40
	echo "--- output (tail)"; tail -n 30 "$2"
}
# A jq failure ("cells": null, no file) is the caller's failure, never an
# empty list that equals another empty list.
cells() { # run.json
	jq -c '[.cells[] | {profile, spec, outcome, k, n}] | sort_by(.profile, .spec)' "$1"
}
ncells=12

# The reference: the same scenario, uninterrupted.
"$bin" run --tcg --results "$work/ref" --selftest-harm "$target=crash" "$work/tiny.ini" \
	>"$work/ref.out" 2>&1
rc=$?
ref=$(ls "$work"/ref/*/run.json 2>/dev/null | head -1)
if [ $rc -ne 1 ] || [ -z "$ref" ]; then
	echo "FAIL uninterrupted run: exit $rc (want 1)"; explain "$work/ref" "$work/ref.out"; exit 1
fi
want=$(cells "$ref") &&
harmed=$(jq -r '[.[] | select(.outcome | test("^(GUEST|HOST)_")) | "\(.profile) \(.spec) \(.outcome) \(.k)/\(.n)"]
	| sort | .[]' <<<"$want") || { echo "FAIL jq could not read the cells of $ref"; exit 1; }
if [ "$(jq length <<<"$want")" != "$ncells" ] ||
   [ "$harmed" != $'perf-3.12 cpu-clock:u GUEST_CRASH 2/2\nperf-3.7 cpu-clock:u GUEST_CRASH 2/2' ]; then
	echo "FAIL uninterrupted run: $(jq length <<<"$want") cells (want $ncells), harmed:"
	echo "${harmed:-(none)}"; echo "want the two cpu-clock:u cells GUEST_CRASH 2/2"
	explain "$work/ref" "$work/ref.out"; exit 1
fi
echo "ok   uninterrupted run ($((SECONDS - t0))s, $ncells cells, the two $target cells GUEST_CRASH 2/2)"
t1=$SECONDS

# The victim: killed while a batch is armed, after two were judged.
"$bin" run --tcg --results "$work/res" --selftest-harm "$target=crash" "$work/tiny.ini" \
	>"$work/first.out" 2>&1 &
pid=$!
journal=
killed=
up=
end=$((SECONDS + 600)) # the uninterrupted run takes 2-3 min under TCG
while [ $SECONDS -lt $end ]; do
	journal=${journal:-$(ls "$work"/res/*/journal.jsonl 2>/dev/null | head -1)}
	if [ -n "$journal" ] &&
	   [ "$(grep -c '"step":"judged"' "$journal")" -ge 2 ] &&
	   tail -n 1 "$journal" | grep -q '"step":"arm"'; then
		# the pattern the "none left" check uses sees the guests now
		up=$(virsh -c qemu:///system list --all --name |
			grep -c "^pmucanary-$(basename "$(dirname "$journal")")-[0-9]*$")
		kill -9 "$pid"; killed=1; break
	fi
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
wait "$pid" 2>/dev/null
pid=
if [ -z "$killed" ]; then
	echo "FAIL never saw two judged batches and an armed one to kill the run at"
	explain "$work/res" "$work/first.out"; exit 1
fi
run_dir=$(dirname "$journal")
run_id=$(basename "$run_dir")
before=$(wc -l <"$journal")
open=$(tail -n 1 "$journal" | jq -r .batch)
echo "ok   killed with SIGKILL after $before journal lines, batch $open armed"

# AUTODESTROY: the guests go with the harness's libvirt connection.
if [ "${up:-0}" -lt 1 ]; then
	echo "FAIL no domain pmucanary-$run_id-N while the run was armed: the check below is blind"; fail=1
fi
left=
end=$((SECONDS + 60))
while :; do
	left=$(virsh -c qemu:///system list --all --name | grep "^pmucanary-$run_id-[0-9]*$")
	[ -z "$left" ] || [ $SECONDS -ge $end ] && break
	sleep 0.2
done
if [ -n "$left" ]; then echo "FAIL guests left after the kill: $left"; fail=1
else echo "ok   none of the $up guests of the killed run is left"; fi

# Resume with nothing but the run directory.
"$bin" run --tcg --resume "$run_dir" >"$work/resume.out" 2>&1
rc=$?
if [ $rc -ne 1 ] || [ ! -f "$run_dir/run.json" ]; then
	echo "FAIL resume: exit $rc (want 1)"; explain "$work/res" "$work/resume.out"; exit 1
fi
got=$(cells "$run_dir/run.json") || { echo "FAIL jq could not read the cells of $run_dir/run.json"; exit 1; }
if [ "$got" != "$want" ]; then
	echo "FAIL resumed cells differ from the uninterrupted run's:"
	diff <(jq -c '.[]' <<<"$want") <(jq -c '.[]' <<<"$got") | sed 's/^/  /'
	explain "$work/res" "$work/resume.out"; fail=1
else
	echo "ok   resumed run has the uninterrupted run's cells (profile, spec, outcome, k, n)"
fi

# The journal: what was judged before the kill is not armed after it.
set -o pipefail
judged_before=$(head -n "$before" "$journal" | jq -r 'select(.step == "judged") | .batch' | sort -n | uniq) &&
armed_after=$(tail -n +"$((before + 1))" "$journal" | jq -r 'select(.step == "arm") | .batch' | sort -n | uniq) ||
	{ echo "FAIL jq could not read $journal"; exit 1; }
set +o pipefail
again=$(comm -12 <(echo "$judged_before") <(echo "$armed_after"))
if [ "$(echo "$judged_before" | grep -c .)" -lt 2 ]; then
	echo "FAIL $(echo "$judged_before" | grep -c .) batches judged before the kill in the journal, want >= 2"; fail=1
elif [ -n "$again" ]; then
	echo "FAIL batches judged before the kill were armed again: $(echo $again)"; fail=1
else
	echo "ok   $(echo "$judged_before" | wc -w) batches judged before the kill were not re-run"
fi
if ! grep -qx "$open" <<<"$armed_after"; then
	echo "FAIL batch $open (armed at the kill, same host boot) was not armed again"; fail=1
elif jq -e 'select(.step == "judged" and .outcome == "HOST_CRASH")' "$journal" >/dev/null; then
	echo "FAIL a batch was judged HOST_CRASH though the host never rebooted"; fail=1
else
	echo "ok   batch $open, interrupted on this host boot, was re-run, not called HOST_CRASH"
fi
if ! tail -n 1 "$journal" | jq -e '.step == "done"' >/dev/null; then
	echo "FAIL the journal does not end with done"; fail=1
fi
[ $fail -eq 0 ] || explain "$work/res" "$work/resume.out"
echo "# it_resume: uninterrupted run $((t1 - t0))s, killed + resumed run $((SECONDS - t1))s"
exit $fail
