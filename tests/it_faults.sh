#!/usr/bin/env bash
# Real faults in the middle of `pmucanary run` (issue 11), with real guests
# (libvirt, TCG) and one small self-test scenario whose uninterrupted run is
# the reference: 4 cells, cpu-clock:u GUEST_CRASH 1/1 (perf 3.7 encodes it
# apart from plain cpu-clock; see it_run.sh), so that every comparison covers
# a harm verdict and its k/n.
#  1. libvirtd killed (SIGKILL) while batch 1 (plain cpu-clock, harmless) is
#     armed, and restarted: the run ends INFRA (exit 125) naming the lost
#     connection, the batch is judged INFRA, no cell is a harm; no
#     domain of the run is left when it exits (AUTODESTROY died with
#     libvirtd: the harness destroys its guests through a new connection);
#     run.json and the journal say INFRA; `--resume` later re-arms the batch.
#     Then the same with the harness stopped (SIGSTOP) while libvirtd dies
#     and SIGKILLed after: its guests outlive it (shown), and the next start
#     destroys them (fleet_reap_stale); that resume ends with the reference
#     cells.
#  2. The harness SIGKILLed 20 times in a chain at random points (seeded:
#     PMUCANARY_FAULT_SEED=N replays a chain), each time `--resume`d: the
#     guests of a killed invocation are gone once the next one runs, and the
#     last `--resume` ends with the reference cells (a run that finishes
#     before its kill must have them too; a new run carries the chain on).
#  3. The results directory (a small tmpfs of our own) fills up while a batch
#     is armed: INFRA (exit 125) with a message naming the path, no run.json
#     that looks complete, a journal of whole lines, and once space is freed
#     `--resume` ends with the reference cells.
# Why INFRA and not a reconnect that carries on: the batch armed when the
# connection died cannot be judged (a panic in the gap sends no event to
# anyone), every guest's stream and event registration would have to be
# rebuilt, and `--resume` already re-arms a batch judged INFRA: the resumed
# run ends with the uninterrupted run's cells, as checked here.
# Needs root (kills libvirtd, mounts a tmpfs) and a running libvirtd that
# wrote its pid file (run.sh starts it under tini, or `libvirtd -d`);
# libvirtd is always started again in the EXIT trap, by `run.sh libvirtd`.
# Killing libvirtd disrupts other libvirt users of the machine for 2-3 s,
# twice per run of this suite. PMUCANARY_KEEP_WORK=1 keeps the temp
# directory (outputs, journals) for a look after a failure;
# PMUCANARY_FAULT_PARTS="libvirtd chain full" (the default) picks parts.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
uri=qemu:///system
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: not root (kills libvirtd, mounts a tmpfs)"; exit 77
fi
if ! virsh -c "$uri" version >/dev/null 2>&1; then
	echo "SKIP: libvirtd ($uri) is not running"; exit 77
fi
command -v libvirtd >/dev/null || { echo "SKIP: no libvirtd binary to restart"; exit 77; }
command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
pidfile=/run/libvirtd.pid
[ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null ||
	{ echo "SKIP: libvirtd answers but $pidfile does not name it (not started by run.sh or libvirtd -d)"; exit 77; }

work=$(mktemp -d /tmp/it_faults.XXXXXX)
chmod 755 "$work"
pid= stopped= mnt=
libvirtd_wait() { # answers within 20 s
	local i
	for i in $(seq 1 100); do
		virsh -c "$uri" version >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}
libvirtd_start() { # run.sh's own start (under tini when there is one)
	virsh -c "$uri" version >/dev/null 2>&1 && return 0
	"${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}/run.sh" libvirtd >/dev/null 2>&1
	libvirtd_wait
}
cleanup() {
	[ -n "$pid" ] && { kill -CONT "$pid"; kill -9 "$pid"; } 2>/dev/null
	libvirtd_start || echo "WARN libvirtd did not come back; start it: libvirtd -d"
	# no domain of our runs left behind, whatever failed
	local d id
	for id in $(find "$work" -name journal.jsonl -printf '%h\n' 2>/dev/null | xargs -rn1 basename); do
		for d in $(virsh -c "$uri" list --all --name 2>/dev/null | grep "^pmucanary-$id-[0-9]*$"); do
			virsh -c "$uri" destroy "$d" >/dev/null 2>&1
		done
	done
	[ -n "$mnt" ] && umount "$mnt"
	[ "${PMUCANARY_KEEP_WORK:-}" = 1 ] && echo "# kept $work" || rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/tiny.ini" <<'INI'
[fleet]
guests = 1
vcpus = 1
memory = 160M
heartbeat = 100ms
heartbeat_timeout = 3s
[sweep]
events = cpu-clock, msr/tsc/
modifiers = -; u
profiles = perf-3.7
[load]
dwell = 1s
batch_size = 4
confirm = 1
INI
target=cpu-clock:u
# an array, not a function: `fn &` would background a subshell, and its pid
# is not the harness's
run=("$bin" run --tcg --selftest-harm "$target=crash")
fail=0
t0=$SECONDS

explain() { # run_dir out
	echo "--- journal steps"; jq -c '{seq, step, batch, kind, outcome}' "$1"/journal.jsonl 2>/dev/null | tail -n 30
	echo "--- output (tail)"; tail -n 25 "$2"
}
# "profile spec outcome[ k/n]" per cell, sorted; a jq failure is a failure.
cells() { # run.json
	jq -r '.cells[] | "\(.profile) \(.spec) \(.outcome)" +
		(if .outcome | test("^(GUEST|HOST)_") then " \(.k)/\(.n)" else "" end)' "$1" |
		LC_ALL=C sort
	[ "${PIPESTATUS[0]}" -eq 0 ]
}
# "uuid name" of the domains of run $1 (any incarnation).
domains() { virsh -c "$uri" list --all --uuid --name | grep " pmucanary-$1-[0-9]*$"; }
uuids_left() { # "uuid name" lines: those that still exist
	local l u
	while read -r l; do
		[ -n "$l" ] || continue
		u=${l%% *}
		virsh -c "$uri" list --all --uuid | grep -qx "$u" && echo "$l"
	done <<<"$1"
}
# Waits (<= $2 s) until journal $1 ends with an "arm" line (of batch $3 if
# given), i.e. that batch is armed now.
wait_armed() {
	local end=$((SECONDS + $2))
	while [ $SECONDS -lt $end ]; do
		kill -0 "$pid" 2>/dev/null || return 1
		[ -f "$1" ] && tail -n 1 "$1" | grep -q '"step":"arm"' &&
			{ [ -z "${3:-}" ] || tail -n 1 "$1" | jq -e --argjson b "$3" '.batch == $b' >/dev/null; } &&
			return 0
		sleep 0.05
	done
	return 1
}
kill_libvirtd() { # SIGKILL, then restart; prints the window
	local lp w0=$SECONDS
	lp=$(cat "$pidfile")
	kill -9 "$lp"
	while kill -0 "$lp" 2>/dev/null; do sleep 0.05; done
	libvirtd_start || { echo "FAIL libvirtd did not come back"; exit 1; }
	echo "#    libvirtd (pid $lp) killed and answering again after $((SECONDS - w0)) s"
}
# Consistency of a finished (or INFRA) run's journal: whole JSON lines, the
# last one "done" with run.json's verdict.
journal_ok() { # run_dir
	local v
	jq -e . "$1/journal.jsonl" >/dev/null 2>&1 || { echo "the journal has a line that is not JSON"; return; }
	v=$(tail -n 1 "$1/journal.jsonl" | jq -r 'select(.step == "done") | .summary.verdict')
	[ -n "$v" ] || { echo "the journal does not end with done"; return; }
	[ "$v" = "$(jq -r .verdict "$1/run.json" 2>/dev/null)" ] ||
		echo "journal says $v, run.json says $(jq -r .verdict "$1/run.json" 2>/dev/null)"
}

# ---- the reference ----------------------------------------------------------
"${run[@]}" --results "$work/ref" "$work/tiny.ini" >"$work/ref.out" 2>&1
rc=$?
ref_json=$(ls "$work"/ref/*/run.json 2>/dev/null | head -1)
want=$([ -n "$ref_json" ] && cells "$ref_json") || want=
if [ $rc -ne 1 ] || [ "$want" != "$(printf '%s\n' 'perf-3.7 cpu-clock OK' \
	"perf-3.7 $target GUEST_CRASH 1/1" 'perf-3.7 msr/tsc/ EINVAL' 'perf-3.7 msr/tsc/u EINVAL')" ]; then
	echo "FAIL uninterrupted run: exit $rc (want 1), cells:"; echo "${want:-(none)}"
	explain "$(dirname "${ref_json:-$work/ref/x/y}")" "$work/ref.out"; exit 1
fi
ref_s=$((SECONDS - t0))
echo "ok   uninterrupted run (${ref_s}s): 4 cells, $target GUEST_CRASH 1/1"
same_as_ref() { # run.json what
	local got
	got=$(cells "$1") || { echo "FAIL $2: jq could not read the cells of $1"; fail=1; return 1; }
	if [ "$got" != "$want" ]; then
		echo "FAIL $2: cells differ from the uninterrupted run's:"
		diff <(echo "$want") <(echo "$got") | grep '^[<>]' | sed 's/^</  want/; s/^>/  got /'
		fail=1; return 1
	fi
	echo "ok   $2: the uninterrupted run's cells"
}

parts=${PMUCANARY_FAULT_PARTS:-libvirtd chain full}
want_part() { [[ " $parts " == *" $1 "* ]]; }

# ---- 1. libvirtd killed in the load phase ------------------------------------
t1=$SECONDS
if want_part libvirtd; then
"${run[@]}" --results "$work/lv" "$work/tiny.ini" >"$work/lv.out" 2>&1 &
pid=$!
end=$((SECONDS + 300))
journal=
while [ -z "$journal" ] && [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null; do
	journal=$(ls "$work"/lv/*/journal.jsonl 2>/dev/null | head -1); sleep 0.1
done
# Batch 1 arms plain cpu-clock alone (the reference's journal: screen, then
# split OK): nothing harms the guest then, so any harm is a false verdict.
if [ -z "$journal" ] || ! wait_armed "$journal" 300 1; then
	echo "FAIL never saw batch 1 armed to kill libvirtd under"; explain "$work/lv/x" "$work/lv.out"; exit 1
fi
lv_dir=$(dirname "$journal"); lv_id=$(basename "$lv_dir")
up=$(domains "$lv_id")
before=$(wc -l <"$journal")
kill_libvirtd
end=$((SECONDS + 120))
while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
	echo "FAIL the run went on for 120 s after libvirtd died and came back"; kill -9 "$pid"
fi
wait "$pid"; rc=$?; pid=
left=$(domains "$lv_id")
if [ -z "$up" ]; then
	echo "FAIL no domain pmucanary-$lv_id-N while the batch was armed: the check below is blind"; fail=1
elif [ -n "$left" ]; then
	echo "FAIL domains of the run left after it exited: $left"; fail=1
else
	echo "ok   the run's guest is gone when it exits (AUTODESTROY died with libvirtd: the harness destroyed it through a new connection)"
fi
if [ $rc -eq 125 ]; then
	harm=$(jq -r '.cells[] | select(.outcome | test("^(GUEST|HOST)_")) | "\(.profile) \(.spec) \(.outcome)"' \
		"$lv_dir/run.json" 2>/dev/null)
	after=$(tail -n +"$((before + 1))" "$journal" | jq -r 'select(.step == "judged") | .outcome' | sort -u)
	bad=$(journal_ok "$lv_dir")
	if [ ! -f "$lv_dir/run.json" ] || [ "$(jq -r .verdict "$lv_dir/run.json")" != infra ]; then
		echo "FAIL exit 125 but run.json does not say infra"; fail=1
	elif [ -n "$harm" ]; then
		echo "FAIL INFRA run with harm cells: $harm"; fail=1
	elif [ -n "$after" ] && [ "$after" != INFRA ]; then
		echo "FAIL batches judged after libvirtd died: $(echo $after) (want INFRA only)"; fail=1
	elif [ -n "$bad" ]; then
		echo "FAIL journal: $bad"; fail=1
	elif ! grep -q 'libvirt' "$work/lv.out"; then
		echo "FAIL exit 125 without saying libvirt was lost:"; tail -n 5 "$work/lv.out"; fail=1
	else
		echo "ok   exit 125 (INFRA), no harm cell, the batch under the kill judged INFRA, journal and run.json agree"
	fi
elif [ $rc -eq 1 ]; then
	same_as_ref "$lv_dir/run.json" "run that lived through libvirtd's restart"
else
	echo "FAIL exit $rc after libvirtd was killed (want 125, or 1 with the reference cells)"; fail=1
fi
[ $fail -eq 0 ] || explain "$lv_dir" "$work/lv.out"

# Again, the harness frozen while libvirtd dies, then SIGKILLed with its
# watcher (as a kill of its whole process group would): its guests outlive
# it, and only the next start can destroy them.
"$bin" run --tcg --resume "$lv_dir" >"$work/lv2.out" 2>&1 &
pid=$!
n0=$(wc -l <"$journal")
end=$((SECONDS + 300))
while [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null &&
      ! { [ "$(wc -l <"$journal")" -gt "$n0" ] && tail -n 1 "$journal" | grep -q '"step":"arm"'; }; do
	sleep 0.05
done
orphans=$(domains "$lv_id")
kill -STOP "$pid"
kill_libvirtd
pkill -9 -f "^pmucanary-watcher $lv_id\$"
kill -9 "$pid"; kill -CONT "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=
orphans=$(uuids_left "$orphans")
if [ -z "$orphans" ]; then
	echo "FAIL no guest outlived the harness killed across libvirtd's restart: the reap check is blind"
	explain "$lv_dir" "$work/lv2.out"; fail=1
else
	echo "ok   $(grep -c . <<<"$orphans") guest(s) outlived the harness (AUTODESTROY went with libvirtd)"
fi
# Right away: any harness's start reaps dead runs' guests (other users of
# this libvirtd too), and this one's must say it did.
timeout 600 "$bin" run --tcg --resume "$lv_dir" >"$work/lv3.out" 2>&1
rc=$?
left=$(uuids_left "$orphans")
said=$(grep -c "destroying pmucanary-$lv_id-[0-9]* left by dead run" "$work/lv3.out")
if [ -n "$left" ]; then
	echo "FAIL the next start left the dead run's guests: $left"; fail=1
elif [ -n "$orphans" ] && [ "$said" -lt "$(grep -c . <<<"$orphans")" ]; then
	echo "FAIL the next start did not say it destroyed the dead run's guests (another harness's"
	echo "     start on this libvirtd may have been first: rerun):"; grep -i 'destroy' "$work/lv3.out"; fail=1
else
	echo "ok   the next start destroyed them"
fi
if [ $rc -ne 1 ]; then
	echo "FAIL resume after libvirtd's deaths: exit $rc (want 1)"; explain "$lv_dir" "$work/lv3.out"; fail=1
else
	same_as_ref "$lv_dir/run.json" "resumed run after libvirtd's deaths"
fi
[ -z "$(domains "$lv_id")" ] || { echo "FAIL domains left after the resumed run: $(domains "$lv_id")"; fail=1; }
fi
echo "#    part 1: $((SECONDS - t1))s"

# ---- 2. SIGKILL at random points, 20 times -----------------------------------
t2=$SECONDS
if want_part chain; then
seed=${PMUCANARY_FAULT_SEED:-$(( $(date +%s) % 100000 ))}
echo "#    kill chain seed $seed (PMUCANARY_FAULT_SEED=$seed replays these delays)"
RANDOM=$seed
max_ms=$(( ref_s * 1000 / 2 )) # most kills land before, some in the load phase
[ $max_ms -gt 15000 ] && max_ms=15000
[ $max_ms -lt 5000 ] && max_ms=5000
ch_dir= pending= kills=0 delays= reaped=0 checked=0
# pending: "uuid name" of the guests of killed invocations, until an
# invocation is seen with a guest of its own: it went through fleet_new(),
# whose cleanup must have destroyed them (AUTODESTROY usually did first).
i=0
while [ $kills -lt 20 ] && [ $i -lt 40 ]; do
	i=$((i + 1))
	ms=$(( (RANDOM * 32768 + RANDOM) % max_ms ))
	delays="$delays $ms"
	if [ -n "$ch_dir" ]; then "$bin" run --tcg --resume "$ch_dir" >"$work/chain$i.out" 2>&1 &
	else "${run[@]}" --results "$work/chain" "$work/tiny.ini" >"$work/chain$i.out" 2>&1 &
	fi
	pid=$!
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	[ -n "$ch_dir" ] || ch_dir=$(ls -d "$work"/chain/*/ 2>/dev/null | head -1)
	ch_dir=${ch_dir%/}
	if ! kill -0 "$pid" 2>/dev/null; then
		# finished before its kill: that run must be right, and the chain
		# goes on with a new run, so that it still has 20 kills
		wait "$pid"; rc=$?; pid=
		echo "#    invocation $i ended (exit $rc) before its kill at ${ms} ms: a new run"
		if [ $rc -ne 1 ]; then
			echo "FAIL invocation $i: exit $rc"; tail -n 5 "$work/chain$i.out"; fail=1
		else
			same_as_ref "$ch_dir/run.json" "run finished by invocation $i after $kills kills"
		fi
		mv "$ch_dir" "$work/chain-done.$i"; ch_dir=
		continue
	fi
	now=$([ -n "$ch_dir" ] && domains "$(basename "$ch_dir")")
	mine=$(comm -23 <(echo "$now" | sort) <(echo "$pending" | sort) | grep .)
	if [ -n "$mine" ] && [ -n "$pending" ]; then
		checked=$((checked + 1))
		left=$(uuids_left "$pending")
		[ -z "$left" ] || { echo "FAIL invocation $i runs its guests beside the killed ones': $left"; fail=1; }
		pending=
	fi
	kill -9 "$pid"; wait "$pid" 2>/dev/null; pid=
	kills=$((kills + 1))
	pending=$(printf '%s\n%s\n' "$pending" "$mine" | grep . | sort -u)
	# a run killed before its journal has a start line never started: begin anew
	if [ -n "$ch_dir" ] && ! grep -q '"step":"start"' "$ch_dir/journal.jsonl" 2>/dev/null; then
		echo "#    kill $i at ${ms} ms came before the run's start line: a new run"
		mv "$ch_dir" "$work/never-started.$i"; ch_dir=
	fi
done
reaped=$(cat "$work"/chain*.out | grep -c 'left by dead run')
echo "#    $kills kills in $i invocations, delays (ms):$delays"
[ $kills -eq 20 ] || { echo "FAIL $kills kills in 40 invocations, want 20"; fail=1; }
if [ -z "$ch_dir" ]; then
	echo "FAIL the chain never got a run started"; fail=1
else
	timeout 600 "$bin" run --tcg --resume "$ch_dir" >"$work/chain-final.out" 2>&1
	rc=$?
	left=$(uuids_left "$pending")
	[ -z "$left" ] || { echo "FAIL the killed invocations' guests are still there: $left"; fail=1; }
	reaped=$(cat "$work"/chain*.out | grep -c 'left by dead run')
	[ -z "$left" ] && [ $fail -eq 0 ] &&
	echo "ok   no guest of a killed invocation outlived the next start ($checked checked while" \
	     "running; $reaped destroyed by a next start's cleanup, the rest by AUTODESTROY or the watcher)"
	if [ $rc -ne 1 ]; then
		echo "FAIL final resume: exit $rc (want 1)"; explain "$ch_dir" "$work/chain-final.out"; fail=1
	elif same_as_ref "$ch_dir/run.json" "the chain's last run, resumed ($kills kills in all)"; then
		bad=$(journal_ok "$ch_dir")
		[ -z "$bad" ] || { echo "FAIL chain journal: $bad"; fail=1; }
	fi
	[ -z "$(domains "$(basename "$ch_dir")")" ] ||
		{ echo "FAIL domains left after the chain: $(domains "$(basename "$ch_dir")")"; fail=1; }
fi
fi
echo "#    part 2: $((SECONDS - t2))s"

# ---- 3. the results directory fills up ---------------------------------------
t3=$SECONDS
if want_part full; then
mnt=$(mktemp -d "$work/full.XXXXXX")
if ! mount -t tmpfs -o size=8m,mode=0755 tmpfs "$mnt"; then
	mnt=; echo "FAIL cannot mount a tmpfs"; exit 1
fi
"${run[@]}" --results "$mnt/res" "$work/tiny.ini" >"$work/full.out" 2>&1 &
pid=$!
end=$((SECONDS + 300))
journal=
while [ -z "$journal" ] && [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null; do
	journal=$(ls "$mnt"/res/*/journal.jsonl 2>/dev/null | head -1); sleep 0.1
done
if [ -z "$journal" ] || ! wait_armed "$journal" 300; then
	echo "FAIL never saw a batch armed to fill the disk under"; explain "$mnt/res/x" "$work/full.out"; exit 1
fi
full_dir=$(dirname "$journal")
dd if=/dev/zero of="$mnt/filler" bs=64k >/dev/null 2>&1
end=$((SECONDS + 120))
while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
kill -0 "$pid" 2>/dev/null && { echo "FAIL the run went on for 120 s on a full disk"; kill -9 "$pid"; }
wait "$pid"; rc=$?; pid=
msg=$(grep 'pmucanary run' "$work/full.out" | tail -n 3)
if [ $rc -ne 125 ]; then
	echo "FAIL full results dir: exit $rc (want 125)"; explain "$full_dir" "$work/full.out"; fail=1
elif ! grep -q "$mnt/res" <<<"$msg" || ! grep -qi 'no space' <<<"$msg"; then
	echo "FAIL full results dir: the message does not name the path and ENOSPC:"; echo "$msg"; fail=1
else
	echo "ok   full results dir: exit 125, $(tail -n 1 <<<"$msg")"
fi
if [ -f "$full_dir/run.json" ] && [ "$(jq -r .verdict "$full_dir/run.json" 2>/dev/null)" != infra ]; then
	echo "FAIL a run.json that looks complete on a full disk (verdict $(jq -r .verdict "$full_dir/run.json" 2>&1))"
	fail=1
else
	echo "ok   no run.json that looks complete ($([ -f "$full_dir/run.json" ] && echo 'one that says infra' || echo none))"
fi
if ! jq -e . "$journal" >/dev/null 2>&1 || [ -n "$(tail -c 1 "$journal")" ]; then
	echo "FAIL the journal is not whole JSON lines after ENOSPC:"; tail -c 300 "$journal"; echo; fail=1
else
	echo "ok   the journal is whole JSON lines"
fi
rm -f "$mnt/filler"
timeout 600 "$bin" run --tcg --resume "$full_dir" >"$work/full2.out" 2>&1
rc=$?
if [ $rc -ne 1 ]; then
	echo "FAIL resume once space was freed: exit $rc (want 1)"; explain "$full_dir" "$work/full2.out"; fail=1
else
	same_as_ref "$full_dir/run.json" "resumed once space was freed"
fi
fi
echo "#    part 3: $((SECONDS - t3))s"
echo "# it_faults: reference ${ref_s}s, libvirtd $((t2 - t1))s, kill chain $((t3 - t2))s," \
     "full disk $((SECONDS - t3))s; $((SECONDS - t0))s in all"
exit $fail
