#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz/) to RUNS executions (default
# 10^7; the slowest target does ~2000/s here, so hours) or CAP seconds
# when CAP is given and not 0 (default 0: no cap), from a copy of
# its seed corpus, and prints per target: executions, exec/s, coverage
# (cov: edges, ft: features) and the finding if any. Exit 1 on a finding.
#   bash bench/fuzz.sh [RUNS] [CAP] [TARGET...]
# Builds with `make fuzz` into $BUILD (default build)/fuzz. The grown corpus
# and any crash input stay in a temp dir whose path is printed; JOBS=N runs
# N targets at a time (default 1).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-10000000}
cap=${2:-0}
shift 2 2>/dev/null || shift $#
build=${BUILD:-build}
jobs=${JOBS:-1}
make -C "$top" -j"$(nproc)" BUILD="$build" fuzz >/dev/null || exit 2
case $build in /*) ;; *) build=$top/$build ;; esac
targets=("$@")
if [ ${#targets[@]} = 0 ]; then
	for src in "$top"/tests/fuzz/fuzz_*.c; do
		t=$(basename "$src" .c); targets+=("${t#fuzz_}")
	done
fi
work=$(mktemp -d -t pmucanary-fuzz-bench-XXXXXX)
echo "fuzz.sh: $runs runs per target$([ "$cap" != 0 ] && echo " or $cap s"); work dir $work"

run_one() {
	local name=$1 d=$work/$1
	mkdir -p "$d/corpus" "$d/tmp"
	cp "$top/tests/fuzz/corpus/$name"/* "$d/corpus/"
	(cd "$d" && TMPDIR=$d/tmp UBSAN_OPTIONS=print_stacktrace=1 \
		"$build/fuzz/fuzz_$name" -runs="$runs" -max_total_time="$cap" -timeout=10 \
		-rss_limit_mb=2048 -error_exitcode=3 -timeout_exitcode=3 \
		-print_final_stats=1 -artifact_prefix="$d/" corpus) >"$d/log" 2>&1
	echo $? >"$d/rc"
}

i=0
for t in "${targets[@]}"; do
	run_one "$t" &
	i=$((i + 1))
	[ $((i % jobs)) = 0 ] && wait
done
wait

printf '%-10s %12s %9s %6s %7s %8s  %s\n' target executions exec/s cov ft seconds finding
bad=0
for t in "${targets[@]}"; do
	d=$work/$t
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log")
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$d/log")
	cov=$(grep -o 'cov: [0-9]*' "$d/log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$d/log" | tail -1 | cut -d' ' -f2)
	secs=$(grep -o '^Done [0-9]* runs in [0-9]* second' "$d/log" | awk '{print $5}')
	finding=none
	if [ "$(cat "$d/rc")" != 0 ]; then
		bad=1
		finding=$(grep -m1 -E 'ERROR: |runtime error|property failed' "$d/log" || echo "exit $(cat "$d/rc")")
	fi
	printf '%-10s %12s %9s %6s %7s %8s  %s\n' "$t" "${n:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" \
		"${secs:-?}" "$finding"
done
exit $bad
