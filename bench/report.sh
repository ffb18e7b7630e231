#!/usr/bin/env bash
# Reports at full scale: the default sweep (`pmucanary probe`, or RESULT
# files given) rendered as HTML, JUnit and KCIDB by build/bench/report (each
# writer's wall time, best of REPEAT, and size; JUnit testcases and KCIDB
# tests must equal the cells), then the HTML page opened in headless
# Chromium: time until the page's script has drawn it (data-ready-ms, since
# navigation start) and the whole `chromium --dump-dom` run, against the
# small tests/data/matrix page measured the same way in the same run.
# Usage: bench/report.sh [REPEAT] [RESULT...]      (default REPEAT 3)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${PMUCANARY_BUILD:-$top/build}
repeat=${1:-3}
shift 2>/dev/null
make -C "$top" -s BUILD="${build#$top/}" "${build#$top/}/pmucanary" "${build#$top/}/bench/report" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inputs=("$@")
if [ ${#inputs[@]} -eq 0 ]; then
	start=$(date +%s%N)
	"$build/pmucanary" probe --json "$tmp/p.json" >/dev/null || exit 1
	printf 'probe_s %.2f\n' "$(echo "($(date +%s%N) - $start) / 10^9" | bc -l)"
	inputs=("$tmp/p.json")
fi
out=$("$build/bench/report" --repeat "$repeat" --out "$tmp" "${inputs[@]}") || exit 1
echo "$out"
val() { echo "$out" | awk -v k="$1" '$1 == k { print $2 }'; }
for f in junit kcidb; do
	[ "$(val ${f}_cases)" = "$(val cells)" ] && echo "$f complete: every cell" ||
		echo "$f INCOMPLETE: $(val ${f}_cases) of $(val cells) cells"
done

chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "no chromium: page timing skipped"; exit 0; }
d=$top/tests/data/matrix
"$build/pmucanary" matrix --html "$tmp/small.html" "$d/ivb-3.6.json" "$d/hsw-3.6.json" \
	"$d/amd-3.6.json" "$d/tcg-6.1.json" "$d/xss.json" >/dev/null
cp "$tmp/report.html" "$tmp/full.html"
# open PAGE -> "READY_MS WALL_S" (best of REPEAT)
open_page() {
	local best_ready= best_wall= i start ready wall
	for i in $(seq "$repeat"); do
		start=$(date +%s%N)
		ready=$(timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run \
			--disable-background-networking --disable-component-update --disable-sync \
			--user-data-dir="$tmp/profile" --dump-dom "file://$tmp/$1" 2>/dev/null |
			grep -o 'data-ready-ms="[0-9]*"' | head -1 | tr -dc 0-9)
		wall=$(echo "($(date +%s%N) - $start) / 10^9" | bc -l)
		[ -n "$ready" ] || { echo "NOT READY $1" >&2; ready=999999; }
		if [ -z "$best_ready" ] || [ "$ready" -lt "$best_ready" ]; then best_ready=$ready; fi
		if [ -z "$best_wall" ] || [ "$(echo "$wall < $best_wall" | bc)" = 1 ]; then best_wall=$wall; fi
	done
	echo "$best_ready $best_wall"
}
read -r small_ready small_wall < <(open_page small.html)
read -r full_ready full_wall < <(open_page full.html)
printf 'page_small_bytes %d\npage_full_bytes %d\n' "$(stat -c %s "$tmp/small.html")" \
	"$(stat -c %s "$tmp/full.html")"
printf 'page_small_ready_ms %d\npage_full_ready_ms %d\n' "$small_ready" "$full_ready"
printf 'chromium_small_s %.2f\nchromium_full_s %.2f\n' "$small_wall" "$full_wall"
printf 'ratio full/small page ready: %.1fx (%d ms more)\n' \
	"$(echo "$full_ready / ($small_ready + 1)" | bc -l)" $((full_ready - small_ready))
printf 'ratio full/small chromium run: %.2fx\n' "$(echo "$full_wall / $small_wall" | bc -l)"
