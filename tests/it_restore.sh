#!/usr/bin/env bash
# Restore instead of reboot, end to end (real guests, libvirt, TCG): the same
# self-test crash run (--selftest-harm cpu-clock:u=crash) three times:
#  - [fleet] restore = true (the default): harmed guests come back from a
#    saved image; the run isolates the same culprit cells with the same k/n
#    as a run that boots them cold, the log says guests were restored and
#    no restored guest was judged anything (run.json holds no harm but the
#    culprit's: a restored guest taken for rebooted or lying would add
#    GUEST_REBOOT/GUEST_CORRUPTION cells);
#  - restore = false: harmed guests boot cold, nothing is restored;
#  - restore = true while every saved image is truncated as soon as it is
#    written (a real fault: QEMU cannot load it): the restores fail, the log
#    says so, the guests boot cold, and the verdicts are still the same.
# Every run leaves no saved image behind.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
if ! virsh -c qemu:///system version >/dev/null 2>&1; then
	echo "SKIP: libvirtd (qemu:///system) is not running"
	exit 77
fi
command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
work=$(mktemp -d /tmp/it_restore.XXXXXX)
chmod 755 "$work"
watcher=
trap '[ -n "$watcher" ] && kill "$watcher" 2>/dev/null; rm -rf "$work"' EXIT
target=cpu-clock:u
confirm=2
scenario() { # restore
	cat <<INI
[fleet]
guests = 2
vcpus = 1
memory = 160M
heartbeat = 100ms
# generous: a cold boot on a loaded 2-CPU TCG host can take minutes
heartbeat_timeout = 10s
boot_timeout = 10m
restore = $1
[sweep]
events = cpu-clock
modifiers = -; u; uH
profiles = perf-3.7; perf-3.8
[load]
dwell = 1s
batch_size = 4
confirm = $confirm
INI
}
scenario true >"$work/restore.ini"
scenario false >"$work/cold.ini"
fail=0
t0=$SECONDS

cells() { # run dir -> "profile spec outcome k/n", sorted
	jq -r '.cells[] | "\(.profile) \(.spec) \(.outcome)" +
		(if .outcome | test("^(GUEST|HOST)_") then " \(.k)/\(.n)" else "" end)' \
		"$1"/*/run.json | LC_ALL=C sort
	[ "${PIPESTATUS[0]}" -eq 0 ]
}
run() { # name ini
	"$bin" run -v --tcg --results "$work/$1" --selftest-harm "$target=crash" "$2" \
		>"$work/$1.out" 2>&1
	echo $?
}
explain() { # name
	echo "--- matrix.txt"; cat "$work/$1"/*/matrix.txt 2>/dev/null
	echo "--- output (tail)"; tail -n 30 "$work/$1.out"
}
# The run's cells: exit 1, harm only on the target's cells, k/n confirm/confirm.
check_run() { # name rc
	local got harmed
	if [ "$2" -ne 1 ] || ! got=$(cells "$work/$1"); then
		echo "FAIL $1 run: exit $2 (want 1)"; explain "$1"; fail=1; return
	fi
	harmed=$(grep -E ' (GUEST|HOST)_' <<<"$got")
	if [ "$(grep -c . <<<"$harmed")" -ne 2 ] ||
	   grep -v " $target GUEST_CRASH $confirm/$confirm\$" <<<"$harmed" | grep -q .; then
		echo "FAIL $1 run: harmed cells are not the two $target GUEST_CRASH $confirm/$confirm:"
		echo "$harmed"; explain "$1"; fail=1
	else
		echo "ok   $1 run: the $target cells are GUEST_CRASH $confirm/$confirm, nothing else harmed"
	fi
	echo "$got" >"$work/$1.cells"
	if ls "$work/$1"/*/*.save >/dev/null 2>&1; then
		echo "FAIL $1 run left saved images:"; ls -l "$work/$1"/*/*.save; fail=1
	fi
}

rc=$(run restore "$work/restore.ini")
check_run restore "$rc"
n=$(grep -c ': restored, first heartbeat' "$work/restore.out")
if [ "$n" -lt 2 ] || grep -q 'restore from .* failed\|cannot save' "$work/restore.out"; then
	echo "FAIL restore run: $n restores logged (want >= 2), or a restore failed:"
	grep -E 'restored|saved to|restore from|cannot save' "$work/restore.out"; fail=1
else
	echo "ok   restore run: $n restores, none failed"
fi
# run.json records what became of the guests, as the log does
if [ "$(jq '[.guests[].restores] | add' "$work"/restore/*/run.json)" = "$n" ] &&
	[ "$(jq '[.guests[].restore_failures] | add' "$work"/restore/*/run.json)" = 0 ]; then
	echo "ok   restore run.json: $n restores, 0 failures"
else
	echo "FAIL restore run.json guests: $(jq -c .guests "$work"/restore/*/run.json)"; fail=1
fi

rc=$(run cold "$work/cold.ini")
check_run cold "$rc"
if grep -q ': restored, first heartbeat\|saved to' "$work/cold.out"; then
	echo "FAIL cold run: a guest was saved or restored with restore = false"; fail=1
else
	echo "ok   cold run: every restart a cold boot"
fi
if [ -s "$work/restore.cells" ] && [ -s "$work/cold.cells" ]; then
	if diff "$work/restore.cells" "$work/cold.cells" >"$work/diff.out"; then
		echo "ok   restore and cold runs: the same cells, outcomes and k/n"
	else
		echo "FAIL restore and cold runs differ:"; cat "$work/diff.out"; fail=1
	fi
fi

# Every saved image truncated once written: the restores fail for real.
mkdir -p "$work/broken"
(
	while :; do
		for f in "$work"/broken/*/*.save; do
			[ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 65536 ] && truncate -s 8192 "$f"
		done
		sleep 0.05
	done
) &
watcher=$!
rc=$(run broken "$work/restore.ini")
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
watcher=
check_run broken "$rc"
if grep -q 'restore from .* failed (.*): booting it cold' "$work/broken.out"; then
	echo "ok   broken images: the log says the restore failed and the guest booted cold"
	grep -m1 'restore from' "$work/broken.out"
	if jq -e '[.guests[] | select(.restore_failures > 0 and (.restore_note | length > 0))] | length > 0' \
		"$work"/broken/*/run.json >/dev/null; then
		echo "ok   broken images: run.json names the failed restore ($(jq -r '[.guests[].restore_note // empty][0]' "$work"/broken/*/run.json))"
	else
		echo "FAIL broken images: run.json does not record the failed restore: $(jq -c .guests "$work"/broken/*/run.json)"
		fail=1
	fi
else
	echo "FAIL broken images: no failed restore in the log:"
	grep -E 'restored|saved to|restore from|cannot save' "$work/broken.out"; fail=1
fi
if [ -s "$work/broken.cells" ] && [ -s "$work/cold.cells" ]; then
	if diff "$work/broken.cells" "$work/cold.cells" >"$work/diff.out"; then
		echo "ok   broken-image and cold runs: the same cells, outcomes and k/n"
	else
		echo "FAIL broken-image and cold runs differ:"; cat "$work/diff.out"; fail=1
	fi
fi

echo "it_restore: $((SECONDS - t0)) s"
exit $fail
