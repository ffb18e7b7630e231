#!/usr/bin/env bash
# bench/matrix.sh [BUILD]: the terminal matrix of the full default sweep.
# Runs `probe --json` once, then prints for `matrix` (the grouped default
# view) its wall time and peak RSS, and the ratios against `matrix --all`
# (every cell, the view before the grouped one) measured in the same run;
# then bench/matrix's split: reading the file vs building and formatting the
# matrix (the matrix's own cost). Not part of the test suites.
# Aim (issue 10): the whole `matrix` at most 3 s and 200 MB.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
bin=$top/$build/pmucanary
make -s -C "$top" BUILD="$build" all "$build/bench/matrix" >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$bin" probe --json "$tmp/p.json" >/dev/null 2>&1
echo "full sweep: $(jq '.cells | length' "$tmp/p.json") cells, $(du -m "$tmp/p.json" | cut -f1) MB"

measure() { # measure NAME ARGS... -> "seconds kB"
	/usr/bin/time -f '%e %M' -o "$tmp/t" "$bin" matrix "${@:2}" >"$tmp/$1.out" 2>/dev/null || true
	cat "$tmp/t"
}
read -r all_s all_kb < <(measure all --all "$tmp/p.json")
read -r def_s def_kb < <(measure default "$tmp/p.json")
printf 'matrix --all : %6.2f s %6d MB %7d lines\n' "$all_s" $((all_kb / 1024)) "$(wc -l <"$tmp/all.out")"
printf 'matrix       : %6.2f s %6d MB %7d lines\n' "$def_s" $((def_kb / 1024)) "$(wc -l <"$tmp/default.out")"
awk -v a="$all_s" -v d="$def_s" -v am="$all_kb" -v dm="$def_kb" \
	'BEGIN { printf "default / --all: time %.2fx, RSS %.2fx\n", d / a, dm / am }'
echo "split (bench/matrix):"
"$top/$build/bench/matrix" "$tmp/p.json"
