#!/usr/bin/env bash
# The small guest kernel (guest-images/kconfig/guest-small.config) against
# the distribution's, both measured in this run:
#  - build: the cold build time kernel-build.sh recorded for the cached tree
#    (build_seconds in its meta) and the time of a cache hit, measured now;
#  - boot: boot to first heartbeat (fleet.json first_heartbeat_s: domain
#    start to the first heartbeat), one guest, R rounds alternating the two
#    kernels so that load on the machine hits both alike; medians and the
#    ratio small / distribution;
#  - smoke: scenarios/smoke.ini end to end (wall) with each kernel, and the
#    ratio (skip with --no-smoke).
# Needs root, libvirtd, jq, Debian's linux-source-6.1 (a cold kernel build
# is several minutes). Usage: bench/smallkernel.sh [--runs R] [--no-smoke] [--tcg]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
runs=5 smoke=1 tcg=()
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--no-smoke) smoke=0; shift ;;
	--tcg) tcg=(--tcg); shift ;;
	*) echo "usage: $0 [--runs R] [--no-smoke] [--tcg]" >&2; exit 2 ;;
	esac
done
out=$(mktemp -d /tmp/pmucanary-bench-smallkernel.XXXXXX)
chmod 755 "$out"
trap 'rm -rf "$out"' EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ---- build
. "$top/tests/kernels.sh"
t=$(now)
test_small_kernel_build --jobs 2
first=$(since "$t")
t=$(now)
test_small_kernel_build --jobs 2
hit=$(since "$t")
cold=$(sed -n 's/^build_seconds=//p' "$(dirname "$PMUCANARY_SMALL_KERNEL")/meta")
printf 'build: cold %s s (kernel-build.sh meta, -j%s), this call %s s, cache hit %s s; bzImage %s KiB\n' \
	"$cold" "$(sed -n 's/^jobs=//p' "$(dirname "$PMUCANARY_SMALL_KERNEL")/meta")" "$first" "$hit" \
	$(( $(stat -c %s "$PMUCANARY_SMALL_KERNEL") / 1024 ))

# ---- boot to first heartbeat
boot() { # name, fleet args...
	local name=$1 i=$2; shift 2
	"$bin" fleet "${tcg[@]}" -n 1 --duration 1 --run-id "bench-sk-$$-$name-$i" \
		--run-dir "$out/fleet-$name-$i" --json "$out/$name-$i.json" "$@" >"$out/$name-$i.out" 2>&1 ||
		{ echo "fleet ($name) failed:" >&2; tail -n 20 "$out/$name-$i.out" >&2; exit 1; }
	jq -r '.guests[0].first_heartbeat_s' "$out/$name-$i.json" >>"$out/$name.boot"
	jq -r '.guest_kernel.path' "$out/$name-$i.json" >"$out/$name.kernel"
}
for i in $(seq "$runs"); do
	boot distribution "$i"
	boot small "$i" --kernel small
done
bd=$(median <"$out/distribution.boot")
bs=$(median <"$out/small.boot")
printf 'boot to first heartbeat, median of %d: distribution %.2f s (%s), small %.2f s (%s)\n' \
	"$runs" "$bd" "$(paste -sd' ' "$out/distribution.boot")" "$bs" "$(paste -sd' ' "$out/small.boot")"
awk -v s="$bs" -v d="$bd" 'BEGIN { printf "small / distribution boot to first heartbeat: %.2fx\n", s / d }'

# ---- smoke.ini with each kernel
if [ "$smoke" = 1 ]; then
	sed 's/^kernel =.*/kernel = small/' "$top/scenarios/smoke.ini" >"$out/smoke-small.ini"
	grep -q '^kernel = small$' "$out/smoke-small.ini" || { echo "smoke.ini has no kernel key" >&2; exit 1; }
	for k in distribution small; do
		sc=$top/scenarios/smoke.ini
		[ $k = small ] && sc=$out/smoke-small.ini
		t=$(now) rc=0
		"$bin" run "${tcg[@]}" --results "$out/run-$k" "$sc" >"$out/run-$k.out" 2>&1 || rc=$?
		w=$(since "$t")
		echo "$w" >"$out/run-$k.wall"
		printf 'smoke.ini %-12s exit %s wall %6.1f s (guest kernel %s)\n' "$k" "$rc" "$w" \
			"$(jq -r '.guest_kernel | "\(.source) \(.release)"' "$out"/run-$k/*/run.json 2>/dev/null)"
		# a run that could not test says why (its wall time is no figure)
		[ "$rc" != 125 ] || grep -m1 'could not test' "$out/run-$k.out" || true
	done
	awk -v s="$(cat "$out/run-small.wall")" -v d="$(cat "$out/run-distribution.wall")" \
		'BEGIN { printf "smoke.ini small / distribution wall time: %.2fx\n", s / d }'
fi
