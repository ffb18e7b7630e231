#!/usr/bin/env bash
# The small guest kernel (guest-images/kconfig/guest-small.config: built in,
# no modules) as the fleet's kernel, with real guests (libvirt, TCG):
#  - `pmucanary fleet --kernel small` boots guests that send heartbeats, and
#    the agent loads no module (everything is built in);
#  - `run` with `[fleet] kernel = small` and --selftest-harm cpu-clock:u=crash
#    finds the same culprit cells, GUEST_CRASH confirm/confirm, as the same
#    run with the distribution kernel (measured here, not assumed): the
#    panic reaches the host through the small kernel's built-in pvpanic;
#    run.json says which guest kernel ran (source small, no modules, another
#    image hash than the distribution's);
#  - a hang self-test under the small kernel is GUEST_HANG 1/1.
# The kernel is built once through tests/kernels.sh into the cache the
# harness uses (a cold build is ~8 min on 2 cores; cached, nothing).
# Skips without libvirtd or Debian's linux-source-6.1 tarball.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
if ! virsh -c qemu:///system version >/dev/null 2>&1; then
	echo "SKIP: libvirtd (qemu:///system) is not running"; exit 77
fi
[ -f "${PMUCANARY_KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}" ] ||
	{ echo "SKIP: no /usr/src/linux-source-6.1.tar.xz (apt-get install linux-source-6.1)"; exit 77; }
command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
. "$top/tests/kernels.sh"
t0=$SECONDS
test_small_kernel_build --jobs 2 || { echo "FAIL building the small guest kernel"; exit 1; }
tb=$((SECONDS - t0))
work=$(mktemp -d /tmp/it_smallkernel.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
explain() { # dir out
	echo "--- matrix.txt"; cat "$1"/*/matrix.txt 2>/dev/null
	echo "--- output (tail)"; tail -n 30 "$2"
	echo "--- a console (tail)"; tail -n 20 "$(ls "$1"/*/console-* "$1"/*/*.log 2>/dev/null | head -1)" 2>/dev/null
}

# ---- fleet --kernel small: heartbeats from the small kernel
t1=$SECONDS
"$bin" fleet --tcg --kernel small -n 2 --duration 2 --interval 100 --run-id "smallkernel-$$" \
	--run-dir "$work/fleet" --json "$work/fleet.json" >"$work/fleet.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && jq -e '(.guests | length) == 2 and
		all(.guests[]; .first_heartbeat_s != null and .seq >= 2 and .state == "healthy")
		and .guest_kernel.source == "small"' "$work/fleet.json" >/dev/null; then
	ok "fleet --kernel small: 2 guests healthy with heartbeats ($(jq -r '[.guests[].first_heartbeat_s] | map(tostring) | join(", ")' "$work/fleet.json") s to the first)"
else
	bad "fleet --kernel small: exit $rc"; cat "$work/fleet.json" 2>/dev/null; tail -n 20 "$work/fleet.out"
fi
if [ "$(jq -r .guest_kernel.path "$work/fleet.json" 2>/dev/null)" = "$PMUCANARY_SMALL_KERNEL" ] &&
   [ "$(grep -l 'modules: 0 listed, 0 loaded' "$work"/fleet/*.console 2>/dev/null | wc -l)" -eq 2 ]; then
	ok "the guests booted the cached small kernel, their initramfs loading no module"
else
	bad "not the small kernel: $(jq -c .guest_kernel "$work/fleet.json" 2>/dev/null), want $PMUCANARY_SMALL_KERNEL"
	grep -h 'modules:' "$work"/fleet/*.console 2>/dev/null
fi
# --boot-timeout is the boot's deadline: 1 s is shorter than the
# distribution kernel's TCG boot (4 s and more to its first heartbeat; the
# small kernel's can take under 1 s), so the guest is INFRA with that
# deadline in its evidence (exit 125).
"$bin" fleet --tcg -n 1 --duration 1 --boot-timeout 1000 --run-id "smallkernel-bt-$$" \
	--run-dir "$work/fleet-bt" --json "$work/fleet-bt.json" >"$work/fleet-bt.out" 2>&1
rc=$?
if [ $rc -eq 125 ] && grep -q 'no heartbeat within 1000 ms of start' "$work/fleet-bt.json" "$work/fleet-bt.out" 2>/dev/null; then
	ok "fleet --boot-timeout 1000: the guest is INFRA at its 1 s deadline"
else
	bad "fleet --boot-timeout 1000: exit $rc"; tail -n 20 "$work/fleet-bt.out"; cat "$work/fleet-bt.json" 2>/dev/null
fi
tf=$((SECONDS - t1))

# ---- the same self-test crash with each kernel: the same culprit cells
ini() { # kernel guests modifiers confirm
	cat <<INI
[fleet]
guests = $2
vcpus = 1
memory = 160M
kernel = $1
heartbeat = 100ms
heartbeat_timeout = 3s
# a deadline, not a speed bound: the distribution kernel took over 2 min
# to its first heartbeat on this loaded 2-core machine
boot_timeout = 5m
[sweep]
events = cpu-clock
modifiers = $3
profiles = perf-3.7
[load]
dwell = 1s
batch_size = 4
confirm = $4
INI
}
harmed() { # run.json: the harmed cells, one a line
	jq -r '.cells[] | select(.outcome | test("^(GUEST|HOST)_")) |
		"\(.profile) \(.spec) \(.outcome) \(.k)/\(.n)"' "$1" | LC_ALL=C sort
}
declare -A took
for k in small distribution; do
	t=$SECONDS
	ini "$([ $k = small ] && echo small)" 2 "-; u; uH" 2 >"$work/$k.ini"
	"$bin" run --tcg --results "$work/$k" --selftest-harm cpu-clock:u=crash "$work/$k.ini" \
		>"$work/$k.out" 2>&1
	rc=$?
	took[$k]=$((SECONDS - t))
	json=$(ls "$work/$k"/*/run.json 2>/dev/null | head -1)
	if [ $rc -ne 1 ] || [ -z "$json" ]; then
		bad "$k kernel self-test crash run: exit $rc (want 1)"; explain "$work/$k" "$work/$k.out"
	fi
done
js=$(ls "$work"/small/*/run.json 2>/dev/null | head -1)
jd=$(ls "$work"/distribution/*/run.json 2>/dev/null | head -1)
if [ -n "$js" ] && [ -n "$jd" ]; then
	hs=$(harmed "$js"); hd=$(harmed "$jd")
	if [ "$hs" = "perf-3.7 cpu-clock:u GUEST_CRASH 2/2" ] && [ "$hs" = "$hd" ]; then
		ok "self-test crash: the small kernel's culprit is the distribution kernel's ($hs)"
	else
		bad "self-test crash culprits differ: small '$hs', distribution '$hd'"
		explain "$work/small" "$work/small.out"
	fi
	if jq -e '.guest_kernel.source == "small" and .guest_kernel.modules == 0
			and (.guest_kernel.release | startswith("6.1"))' "$js" >/dev/null &&
	   jq -e '.guest_kernel.source == "distribution"' "$jd" >/dev/null &&
	   [ "$(jq -r .guest_kernel.sha256 "$js")" != "$(jq -r .guest_kernel.sha256 "$jd")" ]; then
		ok "run.json says which guest kernel ran: small ($(jq -r .guest_kernel.release "$js"), no modules) and distribution ($(jq -r .guest_kernel.release "$jd"))"
	else
		bad "run.json guest_kernel: small $(jq -c .guest_kernel "$js"), distribution $(jq -c .guest_kernel "$jd")"
	fi
fi

# ---- a hang under the small kernel
t=$SECONDS
ini small 1 "u" 1 >"$work/hang.ini"
"$bin" run --tcg --results "$work/hang" --selftest-harm cpu-clock:u=hang "$work/hang.ini" \
	>"$work/hang.out" 2>&1
rc=$?
th=$((SECONDS - t))
json=$(ls "$work"/hang/*/run.json 2>/dev/null | head -1)
if [ $rc -eq 1 ] && [ -n "$json" ] && [ "$(harmed "$json")" = "perf-3.7 cpu-clock:u GUEST_HANG 1/1" ]; then
	ok "hang self-test under the small kernel: GUEST_HANG 1/1"
else
	bad "hang self-test under the small kernel: exit $rc, harmed '$([ -n "$json" ] && harmed "$json")'"
	explain "$work/hang" "$work/hang.out"
fi
echo "# it_smallkernel: kernel ${tb}s (cache), fleet ${tf}s, crash run small ${took[small]:-?}s vs distribution ${took[distribution]:-?}s, hang ${th}s"
exit $fail
