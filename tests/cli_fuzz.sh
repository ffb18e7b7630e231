#!/usr/bin/env bash
# The libFuzzer targets (tests/fuzz/fuzz_*.c; issue 11): `make fuzz`, then
# each target for PMUCANARY_FUZZ_SECONDS (10) from a copy of its seed corpus
# (tests/fuzz/corpus/NAME; nothing is written into the tree). Any crash,
# leak, UB report, timeout (>10 s on one input) or failed property fails.
# Left out of the sanitizer pass: the targets are ASan+UBSan builds already.
# bench/fuzz.sh runs them longer and prints coverage.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${PMUCANARY_BUILD:-$top/build}
secs=${PMUCANARY_FUZZ_SECONDS:-10}
fails=0 n=0

ok()   { n=$((n + 1)); echo "ok: $1"; }
fail() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL: $1"; [ -n "${2:-}" ] && echo "$2" | sed 's/^/    /'; }

if ! command -v "${FUZZ_CC:-clang}" >/dev/null; then
	echo "SKIP: no clang (Debian packages clang and libclang-rt-14-dev; run.sh check installs them)"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! make -C "$top" -j"$(nproc)" BUILD="$build" WERROR=1 fuzz >"$work/make.log" 2>&1; then
	fail "make fuzz" "$(tail -30 "$work/make.log")"
	echo "$fails of $n checks failed"
	exit 1
fi
ok "make fuzz"

for src in "$top"/tests/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c); name=${name#fuzz_}
	bin=$build/fuzz/fuzz_$name
	d=$work/$name
	mkdir -p "$d/corpus" "$d/tmp"
	cp "$top/tests/fuzz/corpus/$name"/* "$d/corpus/"
	# libFuzzer's own exit code for a finding is 77, our skip code: pick 3.
	(cd "$d" && TMPDIR=$d/tmp UBSAN_OPTIONS=print_stacktrace=1 \
		"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-error_exitcode=3 -timeout_exitcode=3 -print_final_stats=1 \
		-artifact_prefix="$d/" corpus) >"$d/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log")
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$d/log" | tail -1)
	if [ "$rc" = 0 ] && [ "${runs:-0}" -gt 0 ]; then
		ok "fuzz_$name: ${runs} runs in ${secs} s, $cov, no finding"
	else
		crash=$(ls "$d"/crash-* "$d"/leak-* "$d"/timeout-* "$d"/oom-* 2>/dev/null | head -1)
		fail "fuzz_$name: exit $rc after ${runs:-0} runs" \
			"$(grep -E 'ERROR|SUMMARY|runtime error|property failed|#[0-9]+ 0x' "$d/log" | head -25)
input: $( [ -n "$crash" ] && od -c "$crash" | head -8)"
	fi
done

echo "$fails of $n checks failed"
[ "$fails" = 0 ]
