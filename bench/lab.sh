#!/usr/bin/env bash
# The cost of a lab host: the same scenario run on this host (`pmucanary run`)
# and through `pmucanary lab` with one kernel, measured back to back; the
# lab's overhead split into lab host boot (QEMU start to the agent's first
# heartbeat), libvirtd ready (to the LAB ready line: the inner harness
# starts), and the inner run itself, whose nested guests' boot to first
# heartbeat comes from its journal. Prints ratios lab/run.
# Needs root, libvirtd, jq and a lab-host kernel: the base test kernel
# (tests/kernels.sh builds and caches it) unless KERNEL=path is given.
# Usage: bench/lab.sh [SCENARIO]     (default scenarios/smoke.ini)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
scenario=${1:-$top/scenarios/smoke.ini}
if [ -z "${KERNEL:-}" ]; then
	. "$top/tests/kernels.sh"
	PMUCANARY_TOP=$top test_kernels_build
	KERNEL=$PMUCANARY_LAB_KERNEL_BASE
fi
out=$(mktemp -d /var/tmp/pmucanary-bench-lab.XXXXXX)
chmod 755 "$out"
trap 'rm -rf "$out"' EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# first heartbeat of the (first) guests from a run's fleet-up line, in s
guest_boot() { grep '"step":"fleet-up"' "$1" | head -1 | jq '[.fleet.guests[].first_heartbeat_s] | max'; }
batches() { grep -c '"step":"judged"' "$1" || true; }

# A lab once first, unmeasured: libvirtd in a fresh lab host probes QEMU
# (~20-40 s under TCG) unless its capability cache has this kernel; a lab
# run on this machine fills it, as it would for a user's second lab.
"$bin" lab "$scenario" --results "$out/warm" --kernel "$KERNEL:bench" >/dev/null 2>&1 || true

t=$(now); rc=0
"$bin" run "$scenario" --results "$out/host" >"$out/host.out" 2>&1 || rc=$?
host_wall=$(since "$t")
host_journal=$(ls "$out"/host/*/journal.jsonl)
printf 'run on this host   exit %-3s wall %6.1f s  guests to first heartbeat %5.1f s  %s batches\n' \
	"$rc" "$host_wall" "$(guest_boot "$host_journal")" "$(batches "$host_journal")"

t=$(now); rc=0
"$bin" lab "$scenario" --results "$out/lab" --kernel "$KERNEL:bench" >"$out/lab.out" 2>&1 || rc=$?
lab_wall=$(since "$t")
lab_json=$(ls "$out"/lab/lab-*/lab.json)
run_json=$(jq -r '.kernels[0].run_json // empty' "$lab_json")
[ -n "$run_json" ] || { echo "the lab did not produce a run:"; tail -20 "$out/lab.out"; exit 1; }
lab_journal=$(dirname "$run_json")/journal.jsonl
read -r boot ready total < <(jq -r '.kernels[0] | "\(.boot_s) \(.ready_s) \(.total_s)"' "$lab_json")
printf 'lab, one kernel    exit %-3s wall %6.1f s  lab host boot %5.1f s  ready %5.1f s  nested guests to first heartbeat %5.1f s  %s batches\n' \
	"$rc" "$lab_wall" "$boot" "$ready" "$(guest_boot "$lab_journal")" "$(batches "$lab_journal")"
awk -v l="$lab_wall" -v h="$host_wall" -v r="$ready" 'BEGIN {
	printf "lab / run wall time: %.2fx; lab overhead %.1f s per kernel (of which %.1f s to ready)\n",
		l / h, l - h, r }'
