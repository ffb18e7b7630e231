#!/usr/bin/env bash
# Tracer overhead: wall time of a perf command untraced vs traced by each
# method, N runs each, printed as mean ms and ratio to untraced.
# Usage: bench/trace.sh [N] [PERF_COMMAND...]   (default: perf stat -e cpu-clock -a -- true)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
n=${1:-20}; shift || true
[ $# -gt 0 ] || set -- perf stat -e cpu-clock -a -- true
command -v "$1" >/dev/null || { echo "SKIP: $1 not found"; exit 0; }

mean_ms() { # runs "$@" n times, prints the mean wall time in ms
	local start end
	start=$(date +%s%N)
	for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1; done
	end=$(date +%s%N)
	echo $(( (end - start) / n / 1000 ))
}
echo "command: $* ($n runs each)"
base=$(mean_ms "$@")
printf '%-10s %8.2f ms\n' untraced "$(awk -v b="$base" 'BEGIN { print b / 1000 }')"
for m in seccomp syscall; do
	t=$(mean_ms "$bin" trace --method "$m" -- "$@")
	printf '%-10s %8.2f ms  x%.2f\n' "$m" "$(awk -v t="$t" 'BEGIN { print t / 1000 }')" \
		"$(awk -v t="$t" -v b="$base" 'BEGIN { print t / b }')"
done
