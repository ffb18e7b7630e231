#!/usr/bin/env bash
# Disk guests (issue 12): what injection and a disk guest cost.
#  - inject time with a cold appliance (a fresh LIBGUESTFS_CACHEDIR: supermin
#    builds the appliance first) and a warm one (the same cache again);
#  - boot to first heartbeat of one disk guest against one initramfs guest
#    of the same kernel (pmucanary fleet, first_heartbeat_s), alternated;
#  - the fresh overlay a disk guest gets at every (re)start (qemu-img create
#    of a qcow2 over the injected image, what inject_overlay_create runs);
#  - what else a harmed disk guest's restart costs: the same one-guest
#    fleet --disk with a self-test panic (stopping it reads the guest's own
#    logs out of its overlay, one appliance launch) against one without.
# Needs root, libvirtd, jq, busybox-static. Usage: bench/inject.sh [ROUNDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${PMUCANARY_BUILD:-$top/build}
bin=${PMUCANARY_BIN:-$build/pmucanary}
rounds=${1:-2}
make -s -C "$top" BUILD="${build#$top/}" all "${build#$top/}/tests/helper_mkdisk" >/dev/null
out=$(mktemp -d /var/tmp/pmucanary-bench-inject.XXXXXX)
chmod 755 "$out"
trap 'rm -rf "$out"' EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t=$(now)
"$build/tests/helper_mkdisk" "$out"
echo "test images built (one launch): $(since "$t") s"

mkdir -p "$out/cache"
t=$(now)
LIBGUESTFS_CACHEDIR=$out/cache "$bin" image --inject "$out/busybox.img" --out "$out/cold.qcow2" \
	--json > "$out/cold.json"
echo "inject, cold appliance: $(since "$t") s (launch $(jq .appliance.launch_s "$out/cold.json") s)"
for i in $(seq 1 "$rounds"); do
	t=$(now)
	LIBGUESTFS_CACHEDIR=$out/cache "$bin" image --inject "$out/busybox.img" \
		--out "$out/warm$i.qcow2" --json > "$out/warm$i.json"
	echo "inject, warm appliance: $(since "$t") s (launch $(jq .appliance.launch_s "$out/warm$i.json") s)"
done

t=$(now)
for i in $(seq 1 20); do
	qemu-img create -q -f qcow2 -b "$out/cold.qcow2" -F qcow2 "$out/fresh.qcow2"
	rm -f "$out/fresh.qcow2"
done
echo "fresh per-guest overlay: $(awk -v s="$(since "$t")" 'BEGIN { printf "%.0f", s * 1000 / 20 }') ms"

fhb() { # name, fleet args... -> first_heartbeat_s
	local name=$1; shift
	"$bin" fleet -n 1 -d 1 --run-dir "$out/$name" --run-id "bi$$$name" --json "$out/$name.json" \
		"$@" > "$out/$name.out" 2>&1 || true
	jq -r '.guests[0].first_heartbeat_s // "none"' "$out/$name.json"
}
for i in $(seq 1 "$rounds"); do
	a=$(fhb "ram$i" --memory 256)
	b=$(fhb "disk$i" --disk "$out/cold.qcow2" --memory 256)
	echo "round $i: first heartbeat: initramfs guest $a s, disk guest $b s" \
		"($(awk -v a="$a" -v b="$b" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", b / a; else print "?" }'))"
done
# harm at 2 s, watched for 4 s either way: the difference is the stop of a
# harmed guest (log pull) that every restart after harm pays
for i in $(seq 1 "$rounds"); do
	t=$(now)
	fhb "clean$i" --disk "$out/cold.qcow2" --memory 256 -d 4 >/dev/null
	a=$(since "$t")
	t=$(now)
	fhb "harm$i" --disk "$out/cold.qcow2" --memory 256 -d 4 --selftest 0=panic --selftest-at 2 >/dev/null
	b=$(since "$t")
	echo "round $i: disk guest fleet run: clean $a s, harmed (logs pulled at stop) $b s" \
		"(+$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b - a }') s per harmed restart)"
done
