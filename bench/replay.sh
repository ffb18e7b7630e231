#!/usr/bin/env bash
# The 2012 story's three worlds on replay kernels, in one lab command:
# builds (or finds cached) the three kernels, runs scenarios/pebs-2012-replay.ini
# in a lab host per kernel, and prints each kernel's wall time against the
# clean kernel's (the baseline, measured in the same lab), the rounds and
# harmful rounds of each, and the merged matrix.
# Needs root, libvirtd and Debian's linux-source-6.1 (as `make lab-check`).
# Usage: bench/replay.sh [SCENARIO]     (default scenarios/pebs-2012-replay.ini)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
scenario=${1:-$top/scenarios/pebs-2012-replay.ini}
out=$(mktemp -d /var/tmp/pmucanary-bench-replay.XXXXXX)
chmod 755 "$out"
trap 'rm -rf "$out"' EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t=$(now)
# Building is part of `lab` (it resolves every --kernel first): time it
# apart from the runs with a lab that stops right after (an unknown --base).
"$bin" lab --kernel replay:pebs-2012-harm --kernel replay:pebs-2012-harm+pebs-2012-fix \
	--kernel replay:stock --base nosuch "$scenario" >/dev/null 2>&1 || true
printf 'kernels built or found cached in %s s\n' "$(since "$t")"

t=$(now); rc=0
"$bin" lab "$scenario" --results "$out/r" --base fixed \
	--kernel replay:pebs-2012-harm:crash \
	--kernel replay:pebs-2012-harm+pebs-2012-fix:eopnotsupp \
	--kernel replay:stock:fixed >"$out/lab.out" 2>&1 || rc=$?
wall=$(since "$t")
lab=$(ls -d "$out"/r/lab-*)
printf 'lab, three kernels: exit %s, wall %s s\n' "$rc" "$wall"
base=$(jq -r '.kernels[] | select(.name == "fixed") | .total_s' "$lab/lab.json")
for k in fixed crash eopnotsupp; do
	run=$(jq -r --arg k "$k" '.kernels[] | select(.name == $k) | .run_json // empty' "$lab/lab.json")
	total=$(jq -r --arg k "$k" '.kernels[] | select(.name == $k) | .total_s' "$lab/lab.json")
	j=$(dirname "$run")/journal.jsonl
	rounds=$(grep -c '"step":"judged"' "$j" || true)
	harmful=$(grep '"step":"judged"' "$j" | jq -s '[.[] | select(.outcome != "OK")] | length')
	printf '  %-10s %6.1f s  (%.2fx the clean kernel)  %2s rounds, %2s harmful\n' "$k" "$total" \
		"$(awk -v a="$total" -v b="$base" 'BEGIN { print a / b }')" "$rounds" "$harmful"
done
echo
# The merged matrix without the evidence lines (console tails: long).
grep -v '^      evidence: ' "$lab/matrix.txt"
