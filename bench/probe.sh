#!/usr/bin/env bash
# Open-phase throughput: distinct attrs opened per second on every online CPU
# by the prober, by a bare open+close syscall loop over the same attrs, and by
# a shell loop of `perf stat -e SPEC -a -- true` over the same specs (a
# sample of K of them: perf takes tens of ms each). Prints the ratios, all
# measured in this run. Usage: bench/probe.sh [K] [REPEAT]   (default 100 5)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${PMUCANARY_BUILD:-$top/build}
bench=$build/bench/probe
perf=${PERF:-/usr/bin/perf}
k=${1:-100}
repeat=${2:-5}
[ -x "$bench" ] || make -C "$top" -s "build/bench/probe" || exit 1
specs=$(mktemp)
trap 'rm -f "$specs"' EXIT

out=$("$bench" --repeat "$repeat" --specs-out "$specs") || exit 1
echo "$out"
val() { echo "$out" | awk -v k="$1" '$1 == k { print $2 }'; }
prober=$(val prober_attrs_per_s)
bare=$(val bare_attrs_per_s)

if [ -x "$perf" ]; then
	mapfile -t list < <(head -n "$k" "$specs")
	start=$(date +%s%N)
	for s in "${list[@]}"; do
		"$perf" stat -e "$s" -a -- true >/dev/null 2>&1
	done
	end=$(date +%s%N)
	perf_rate=$(echo "${#list[@]} / (($end - $start) / 1000000000)" | bc -l)
	printf 'perf_stat_specs %d\n' "${#list[@]}"
	printf 'perf_stat_attrs_per_s %.1f\n' "$perf_rate"
	printf 'ratio prober/perf-stat: %.0fx faster\n' "$(echo "$prober / $perf_rate" | bc -l)"
else
	echo "perf not found at $perf: perf-stat loop skipped"
fi
printf 'ratio prober/bare syscall cost per attr: %.2fx\n' "$(echo "$bare / $prober" | bc -l)"
