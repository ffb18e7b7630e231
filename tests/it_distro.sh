#!/usr/bin/env bash
# A real distribution image as a canary (issue 27), built the way a vendor
# builds one and run on a loaded host:
#  - mmdebstrap builds a stock Debian root (systemd, udev, Debian's kernel
#    and initramfs, grub-pc) from this machine's apt sources;
#    tests/helper_mkdebian puts it on a disk with libguestfs and runs the
#    image's own grub-install and update-grub: Debian's default grub
#    config, whose terminal is gfxterm;
#  - `pmucanary image --inject` says it found grub and commented out its
#    gfxterm terminal (a guest has no video device: grub parked there and
#    the boot ran into its timeout);
#  - one `pmucanary run` boots it through its own bootloader (SeaBIOS, the
#    MBR, grub) while busy loops keep every host CPU loaded: the agent that
#    systemd started beats, and its console shows the /proc/cmdline grub
#    gave it (BOOT_IMAGE=, the fleet's words); the clean cells are OK,
#    judged under that load (a systemd guest still booting was once called
#    stalled, then crashed by the harness's own NMI); a self-test crash is
#    GUEST_CRASH 2/2, and its two harms left two log directories, each
#    named by its own verdict and named in that verdict's evidence;
#  - afterwards no domain is left, and the image is as it was: the same
#    sha256, the same owner and mode.
# The image is cached for a week under /var/cache/pmucanary/distro (as
# root), keyed by the suite, the package list, the apt sources and the
# helper's source: a fresh machine builds it (2-5 min here), unless
# tests/prebuild.sh built it in the background of the run's first suites.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
build=${PMUCANARY_BUILD:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdeb=$build/tests/helper_mkdebian
if ! virsh -c qemu:///system version >/dev/null 2>&1; then
	echo "SKIP: libvirtd (qemu:///system) is not running"
	exit 77
fi
command -v mmdebstrap >/dev/null || { echo "SKIP: mmdebstrap is not installed"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: mmdebstrap and the image cache need root"; exit 77; }
[ -x "$mkdeb" ] || { echo "FAIL $mkdeb is not built (make $mkdeb)"; exit 1; }
command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
# QEMU runs as libvirt-qemu: every parent of the images must be searchable
work=$(mktemp -d /var/tmp/it_distro.XXXXXX)
chmod 755 "$work"
load_pids=()
cleanup() {
	local d r ids=""
	[ ${#load_pids[@]} -gt 0 ] && kill "${load_pids[@]}" 2>/dev/null
	for r in "$work"/res/*; do [ -d "$r" ] && ids="$ids|$(basename "$r")-"; done
	if [ -n "$ids" ]; then
		for d in $(virsh -c qemu:///system list --all --name 2>/dev/null |
			   grep -E "^pmucanary-(${ids#|})"); do
			virsh -c qemu:///system destroy "$d" >/dev/null 2>&1
		done
	fi
	rm -rf "$work"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
t0=$SECONDS

# --- the image: mmdebstrap from this machine's apt sources, then a disk
# (tests/distro_image.sh; tests/prebuild.sh may have built it already)
. "$top/tests/distro_image.sh"
distro_image_build "$mkdeb" "$work" || exit 1
img=$DISTRO_IMG
sum_before=$(sha256sum < "$img")
stat_before=$(stat -c '%U:%G %a' "$img")

# --- inject: grub found, its gfxterm terminal commented out
ov=$work/debian.qcow2
if ! "$bin" image --inject "$img" --out "$ov" --tcg > "$work/inject.out" 2>&1; then
	cat "$work/inject.out"
	echo "FAIL image --inject of the Debian image"
	exit 1
fi
grep -q '^bootloader grub (/boot/grub/grub.cfg)' "$work/inject.out" ||
	bad "inject found no grub: $(grep ^bootloader "$work/inject.out")"
grep -q "grub's terminal_output gfxterm commented out" "$work/inject.out" ||
	bad "inject did not say it commented out Debian's gfxterm terminal: $(grep ^bootloader "$work/inject.out")"
grep -q '^init      systemd' "$work/inject.out" || bad "inject did not find systemd: $(grep ^init "$work/inject.out")"

# --- one run through grub, on a loaded host
cat > "$work/distro.ini" <<INI
[fleet]
guests = 1
disk = $ov
disk_boot = bootloader
memory = 512M
# systemd, grub and a kernel of its own under TCG beside busy loops
boot_timeout = 5m
[sweep]
events = cpu-clock
modifiers = u,k
profiles = perf-3.7
[load]
batch_size = 1
confirm = 2
INI
for _ in $(seq "$(nproc)"); do
	sh -c 'while :; do :; done' &
	load_pids+=($!)
done
t1=$SECONDS
"$bin" run --tcg --results "$work/res" --selftest-harm cpu-clock:u=crash "$work/distro.ini" \
	> "$work/run.out" 2>&1
rc=$?
loadavg=$(cut -d' ' -f1 /proc/loadavg)
kill "${load_pids[@]}" 2>/dev/null
wait "${load_pids[@]}" 2>/dev/null
load_pids=()
echo "run through grub beside $(nproc) busy loops: exit $rc in $((SECONDS - t1)) s, load $loadavg at its end"
rdir=$(ls -d "$work"/res/*/ 2>/dev/null | head -1)
rdir=${rdir%/}
rid=$(basename "$rdir")
json=$rdir/run.json
if [ "$rc" != 1 ] || [ ! -f "$json" ]; then
	tail -30 "$work/run.out"
	bad "the run exited $rc (want 1: the self-test crash) or wrote no run.json"
else
	fhb=$(jq -rs 'map(select(.step == "fleet-up"))[0].fleet.guests[0].first_heartbeat_s' \
		"$rdir/journal.jsonl" 2>/dev/null)
	echo "first heartbeat through grub, under load: ${fhb:-none} s after the domain started"
	con=$rdir/pmucanary-$rid-0.console
	grep -aq 'pmucanary-agent: service mode' "$con" ||
		bad "the console does not show the agent systemd started"
	cmdline=$(grep -a 'pmucanary-agent: cmdline: ' "$con" | head -1)
	for w in BOOT_IMAGE=/boot/vmlinuz- pmucanary.boot=bootloader console=ttyS0 unknown_nmi_panic=1; do
		[[ "$cmdline" == *"$w"* ]] || bad "the guest's /proc/cmdline lacks $w: ${cmdline:-none on the console}"
	done
	cell=$(jq -r '.cells[] | select(.spec == "cpu-clock:u") | "\(.outcome) \(.k)/\(.n)"' "$json")
	[ "$cell" = "GUEST_CRASH 2/2" ] || bad "cpu-clock:u is '$cell', want GUEST_CRASH 2/2"
	others=$(jq -r '[.cells[] | select(.spec != "cpu-clock:u")] | length' "$json")
	notok=$(jq -r '.cells[] | select(.spec != "cpu-clock:u" and .outcome != "OK")
		| "\(.profile) \(.spec) \(.outcome) \(.k)/\(.n)"' "$json")
	[ "$others" -gt 0 ] || bad "the run judged no clean cell"
	[ -z "$notok" ] || bad "clean cells under load were not OK: $notok"
	jq -e '.limitations | map(test("TCG")) | any' "$json" >/dev/null ||
		bad "run.json does not say that TCG cannot show hardware PMU interactions"
	# two harms, two log directories, each named by its own verdict and
	# in that verdict's evidence
	logs=$(ls -d "$rdir/pmucanary-$rid-0".*-GUEST_CRASH.logs 2>/dev/null)
	[ "$(wc -w <<<"$logs")" = 2 ] || bad "two harms: want 2 log directories, got '$logs'"
	for l in $logs; do
		grep -q "own logs: $l" <(jq -r '.. | strings' "$json") ||
			bad "no evidence names the guest's own logs $l"
		[ -n "$(ls -A "$l")" ] || bad "$l is empty"
	done
fi
virsh -c qemu:///system list --all --name | grep -q "^pmucanary-$rid-" && bad "the run left a domain"
[ "$(sha256sum < "$img")" = "$sum_before" ] || bad "the base image changed"
[ "$(stat -c '%U:%G %a' "$img")" = "$stat_before" ] ||
	bad "the base image was $stat_before before the run, $(stat -c '%U:%G %a' "$img") after"
echo "it_distro: $((SECONDS - t0)) s"
exit $fail
