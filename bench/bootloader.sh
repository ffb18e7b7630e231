#!/usr/bin/env bash
# Disk guests through the image's own bootloader (issue 12): boot to first
# heartbeat of one disk guest booted by SeaBIOS -> MBR -> extlinux ->
# kernel + initrd against direct kernel boot of the same kernel and initrd
# (the ones inject copied out) on the same injected overlay, alternated in
# the same run; the ratio is bootloader / direct, per round and over all
# rounds (medians).
# Needs root, libvirtd, jq, busybox-static, extlinux.
# Usage: bench/bootloader.sh [ROUNDS]   (default 3)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${PMUCANARY_BUILD:-$top/build}
bin=${PMUCANARY_BIN:-$build/pmucanary}
rounds=${1:-3}
make -s -C "$top" BUILD="${build#$top/}" all "${build#$top/}/tests/helper_mkdisk" >/dev/null
out=$(mktemp -d /var/tmp/pmucanary-bench-bootloader.XXXXXX)
chmod 755 "$out"
trap 'rm -rf "$out"' EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t=$(now)
"$build/tests/helper_mkdisk" "$out" >/dev/null
"$bin" image --inject "$out/busybox.img" --out "$out/bb.qcow2" --json > "$out/bb.json"
echo "image built and injected: $(since "$t") s; bootloader $(jq -r .bootloader.kind "$out/bb.json")" \
	"($(jq -r .bootloader.config "$out/bb.json")), kernel $(jq -r .boot.release "$out/bb.json")"

fhb() { # name, fleet args... -> first_heartbeat_s
	local name=$1; shift
	"$bin" fleet -n 1 -d 1 --memory 256 --disk "$out/bb.qcow2" --run-dir "$out/$name" \
		--run-id "bb$$$name" --json "$out/$name.json" "$@" > "$out/$name.out" 2>&1 || true
	jq -r '.guests[0].first_heartbeat_s // "none"' "$out/$name.json"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", b / a; else print "?" }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: > "$out/direct.txt"
: > "$out/bl.txt"
for i in $(seq 1 "$rounds"); do
	# alternate which goes first: a machine whose load drifts favours neither
	if [ $((i % 2)) = 1 ]; then
		a=$(fhb "direct$i" --disk-boot kernel)
		b=$(fhb "bl$i" --disk-boot bootloader)
	else
		b=$(fhb "bl$i" --disk-boot bootloader)
		a=$(fhb "direct$i" --disk-boot kernel)
	fi
	grep -aqE '(SYS|EXT)LINUX' "$out/bl$i/pmucanary-bb$$bl$i-0.console" ||
		echo "round $i: the bootloader guest's console shows no SYSLINUX banner" >&2
	echo "round $i: first heartbeat: direct kernel boot $a s, through extlinux $b s ($(ratio "$a" "$b"))"
	echo "$a" >> "$out/direct.txt"
	echo "$b" >> "$out/bl.txt"
done
a=$(grep -v none "$out/direct.txt" | median)
b=$(grep -v none "$out/bl.txt" | median)
echo "median of $rounds: direct kernel boot $a s, through the bootloader $b s: $(ratio "$a" "$b")" \
	"(load $(cut -d' ' -f1 /proc/loadavg))"
