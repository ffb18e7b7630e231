#!/usr/bin/env bash
# Result-file cost, schema pmucanary/2 against pmucanary/1 and /2 written as
# NAME.json.gz, on the same cells in this run: file size, write time, and
# read time and peak RSS of
# results_read_json and of `pmucanary matrix`. Usage: bench/results.sh [FILE]
# (default: a fresh `pmucanary probe --json` of the full default sweep).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${PMUCANARY_BUILD:-$top/build}
bin=$build/pmucanary
bench=$build/bench/results
[ -x "$bench" ] || make -C "$top" -s BUILD="${build#"$top"/}" "${build#"$top"/}/bench/results" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

src=${1:-}
if [ -z "$src" ]; then
	src=$tmp/probe.json
	s=$(date +%s%N)
	"$bin" probe --json "$src" >/dev/null 2>&1 || { echo "probe failed"; exit 1; }
	printf 'probe_with_write_s %.2f\n' "$(echo "($(date +%s%N) - $s) / 1000000000" | bc -l)"
fi
out=$("$bench" write "$src" "$tmp/v2.json" "$tmp/v1.json" "$tmp/v2gz.json.gz") || exit 1
echo "$out"
val() { awk -v k="$1" '$1 == k { print $2 }' <<<"$2"; }
size2=$(stat -c %s "$tmp/v2.json") size1=$(stat -c %s "$tmp/v1.json")
sizegz=$(stat -c %s "$tmp/v2gz.json.gz")
printf 'size_v2_bytes %d\nsize_v1_bytes %d\nsize_v2gz_bytes %d\n' "$size2" "$size1" "$sizegz"

# Time and peak RSS (KB) of one command: "SECONDS KB".
measure() { /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1; }
for v in 1 2 2gz; do
	f=$tmp/v$v.json
	[ "$v" = 2gz ] && f=$tmp/v2gz.json.gz
	read -r rs rk <<<"$(measure "$bench" read "$f")"
	read -r ms mk <<<"$(measure "$bin" matrix "$f")"
	printf 'read_v%s_s %s\nread_v%s_max_rss_kb %s\nmatrix_v%s_s %s\nmatrix_v%s_max_rss_kb %s\n' \
		"$v" "$rs" "$v" "$rk" "$v" "$ms" "$v" "$mk"
	eval "rs$v=$rs rk$v=$rk ms$v=$ms mk$v=$mk"
done
ratio() { echo "scale=2; $1 / $2" | bc -l; }
echo "ratio size v2/v1: $(ratio "$size2" "$size1")"
echo "ratio write time v2/v1: $(ratio "$(val write_v2_s "$out")" "$(val write_v1_s "$out")")"
echo "ratio read time v2/v1: $(ratio "$rs2" "$rs1")"
echo "ratio read max RSS v2/v1: $(ratio "$rk2" "$rk1")"
echo "ratio matrix time v2/v1: $(ratio "$ms2" "$ms1")"
echo "ratio matrix max RSS v2/v1: $(ratio "$mk2" "$mk1")"
echo "ratio size v2.gz/v2: $(ratio "$sizegz" "$size2")"
echo "ratio write time v2.gz/v2: $(ratio "$(val write_v2gz_s "$out")" "$(val write_v2_s "$out")")"
echo "ratio read time v2.gz/v2: $(ratio "$rs2gz" "$rs2")"
echo "ratio matrix time v2.gz/v2: $(ratio "$ms2gz" "$ms2")"
