#!/usr/bin/env bash
# SIGTERM and SIGINT while a batch is armed (real guests, libvirt, TCG): our
# own shutdown is not a guest's hang. For each signal, a clean run with a
# long dwell gets it a second into its first batch. Then:
#  - the run stops within seconds (not after the dwell), exit 125, naming
#    the signal;
#  - the journal has no "judged" line for that batch (before the fix it said
#    GUEST_HANG: the heartbeat wait took the pending signal for a timeout),
#    an "interrupted" line instead, and no batch armed after the signal;
#  - `run --resume` arms that batch again and ends clean: exit 0, no harm
#    cell, no GUEST_HANG anywhere in the journal.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
if ! virsh -c qemu:///system version >/dev/null 2>&1; then
	echo "SKIP: libvirtd (qemu:///system) is not running"
	exit 77
fi
command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
work=$(mktemp -d /tmp/it_signal.XXXXXX)
chmod 755 "$work"
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT
dwell=20
cat > "$work/tiny.ini" <<INI
# Two batches of distinct software attrs that harm nothing.
[fleet]
guests = 1
vcpus = 1
memory = 160M
heartbeat = 100ms
heartbeat_timeout = 3s
[sweep]
events = cpu-clock, task-clock
modifiers = -; u
profiles = perf-modern
[load]
dwell = ${dwell}s
batch_size = 2
INI
fail=0
explain() { # dir out
	echo "--- journal steps"; jq -c '{seq, step, batch, kind, outcome, signal}' "$1"/*/journal.jsonl 2>/dev/null | tail -n 20
	echo "--- output (tail)"; tail -n 20 "$2"
}

for sig in TERM INT; do
	res=$work/res-$sig
	t0=$SECONDS
	# (a background job starts with SIGINT ignored; the harness's own
	# handler replaces that)
	"$bin" run --tcg --results "$res" "$work/tiny.ini" >"$work/$sig.out" 2>&1 &
	pid=$!
	journal= sent=
	end=$((SECONDS + 300))
	while [ $SECONDS -lt $end ]; do
		journal=${journal:-$(ls "$res"/*/journal.jsonl 2>/dev/null | head -1)}
		if [ -n "$journal" ] && tail -n 1 "$journal" | grep -q '"step":"arm"'; then
			sleep 1
			kill -s "$sig" "$pid"; sent=$SECONDS; break
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	wait "$pid"
	rc=$?
	pid=
	if [ -z "$sent" ]; then
		echo "FAIL SIG$sig: never saw an armed batch to interrupt"; explain "$res" "$work/$sig.out"; exit 1
	fi
	took=$((SECONDS - sent))
	open=$(jq -r 'select(.step == "arm") | .batch' "$journal" | head -1)
	if [ "$rc" != 125 ]; then
		echo "FAIL SIG$sig during batch $open: exit $rc (want 125)"; fail=1
	elif [ "$took" -ge $((dwell - 5)) ]; then
		echo "FAIL SIG$sig: the run took ${took}s to stop (dwell ${dwell}s): it waited the dwell out"; fail=1
	elif ! grep -q "signal" "$work/$sig.out"; then
		echo "FAIL SIG$sig: the output never names the signal"; fail=1
	else
		echo "ok   SIG$sig during batch $open: stopped in ${took}s, exit 125"
	fi
	judged=$(jq -r --argjson b "$open" 'select(.step == "judged" and .batch == $b) | .outcome' "$journal")
	later=$(jq -r --argjson b "$open" 'select(.step == "arm" and .batch != $b) | .batch' "$journal")
	if [ -n "$judged" ]; then
		echo "FAIL SIG$sig: batch $open was judged $judged though our own shutdown cut it short"; fail=1
	elif ! jq -s -e --argjson b "$open" 'any(.[]; .step == "interrupted" and .batch == $b)' "$journal" >/dev/null; then
		echo "FAIL SIG$sig: no \"interrupted\" line for batch $open"; fail=1
	elif [ -n "$later" ]; then
		echo "FAIL SIG$sig: batch $(echo $later) armed after the signal"; fail=1
	else
		echo "ok   SIG$sig: batch $open left unjudged (\"interrupted\"), nothing armed after it"
	fi
	[ $fail -eq 0 ] || explain "$res" "$work/$sig.out"

	run_dir=$(dirname "$journal")
	before=$(wc -l <"$journal")
	"$bin" run --tcg --resume "$run_dir" >"$work/$sig.resume.out" 2>&1
	rc=$?
	rearmed=$(tail -n +"$((before + 1))" "$journal" | jq -r --argjson b "$open" 'select(.step == "arm" and .batch == $b) | .batch')
	harm=$(jq -r '.cells[] | select(.outcome | test("^(GUEST|HOST)_|INFRA")) | "\(.profile) \(.spec) \(.outcome)"' \
		"$run_dir/run.json" 2>/dev/null)
	if [ "$rc" != 0 ]; then
		echo "FAIL SIG$sig: resume exit $rc (want 0)"; fail=1; explain "$res" "$work/$sig.resume.out"
	elif [ -z "$rearmed" ]; then
		echo "FAIL SIG$sig: resume did not arm batch $open again"; fail=1
	elif [ -n "$harm" ] || grep -q GUEST_HANG "$journal"; then
		echo "FAIL SIG$sig: resumed run has harm: ${harm:-GUEST_HANG in the journal}"; fail=1
	elif ! tail -n 1 "$journal" | jq -e '.step == "done"' >/dev/null; then
		echo "FAIL SIG$sig: the journal does not end with done"; fail=1
	else
		echo "ok   SIG$sig: resume armed batch $open again and ended clean, exit 0 ($((SECONDS - t0))s)"
	fi
done
exit $fail
