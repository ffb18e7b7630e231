#!/usr/bin/env bash
# Boot smoke test of the guest image with plain QEMU (no libvirt): builds the
# image with `pmucanary image`, boots it, reads the heartbeat port through a
# QEMU pipe chardev (FIFOs, so no socat/python needed) and drives every host
# command: work off, selftest corrupt/oops/hang/reboot/panic, interval.
#
# KVM only when a hardware KVM module (kvm_intel/kvm_amd) is loaded: a
# /dev/kvm from kvm_pvm cannot boot a stock kernel. PMUCANARY_ACCEL=kvm|tcg
# overrides. Skips (exit 0) without qemu-system-x86_64 or a readable kernel.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
qemu=$(command -v qemu-system-x86_64) || { echo "SKIP: no qemu-system-x86_64"; exit 77; }

if [ -n "${PMUCANARY_ACCEL:-}" ]; then
	accel=$PMUCANARY_ACCEL
elif [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then
	accel=kvm
else
	accel=tcg
fi
# Deadlines for events, not speed bounds: TCG on a loaded 2-core machine can
# take many times its idle figure (bench/ measures speed).
if [ "$accel" = kvm ]; then boot_timeout=60; step=15; else boot_timeout=120; step=30; fi

tmp=$(mktemp -d /tmp/pmucanary-it-agent.XXXXXX)
chmod 755 "$tmp"
qpid=
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null
	exec 3<&- 4>&- 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	echo "--- last heartbeat-port lines"; tail -n 15 "$tmp/port.log"
	echo "--- console tail"; tail -n 25 "$tmp/console.log" | tr -d '\r'
	exit 1
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

kargs=()
if [ -n "${PMUCANARY_KERNEL:-}" ]; then kargs=(--kernel "$PMUCANARY_KERNEL"); fi
t0=$(now_ms)
dir=$("$bin" image "${kargs[@]}" --out "$tmp/images") || {
	if [ -z "${PMUCANARY_KERNEL:-}" ] && ! ls /boot/vmlinuz-* >/dev/null 2>&1; then
		echo "SKIP: no kernel in /boot"; exit 77
	fi
	fail "pmucanary image failed"
}
t1=$(now_ms)
"$bin" image "${kargs[@]}" --out "$tmp/images" >/dev/null || fail "second image build failed"
t2=$(now_ms)
echo "image: cold $((t1 - t0)) ms, cached $((t2 - t1)) ms: $dir"

mkfifo "$tmp/hb.in" "$tmp/hb.out"
: > "$tmp/port.log"
"$qemu" -accel "$accel" -m 256 -smp 2 -display none -monitor none \
	-serial "file:$tmp/console.log" \
	-kernel "$dir/vmlinuz" -initrd "$dir/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 pmucanary.interval=100 pmucanary.canary_mib=4" \
	-device virtio-serial -chardev "pipe,id=hb,path=$tmp/hb" \
	-device virtserialport,chardev=hb,name=org.pmucanary.hb \
	-device pvpanic >"$tmp/qemu.log" 2>&1 &
qpid=$!
tq=$(now_ms)
# <> opens a FIFO without waiting for the other end.
exec 3<>"$tmp/hb.out" 4<>"$tmp/hb.in"

line=
# expect REGEX SECONDS: read port lines until one matches (into $line).
expect() {
	local re=$1 deadline=$(( $(date +%s) + $2 ))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		if IFS= read -r -t 1 -u 3 line; then
			echo "$line" >> "$tmp/port.log"
			[[ $line =~ $re ]] && return 0
		elif ! kill -0 "$qpid" 2>/dev/null; then
			return 1
		fi
	done
	return 1
}
send() { echo "$1" >&4; }

hb_re='^HB v=1 seq=([0-9]+) boot=([0-9a-f]{32}) mono=([0-9]+) work=([0-9]+) canary=(ok|bad) oops=([0-9]+)$'

expect '^HB ' "$boot_timeout" || fail "no heartbeat within $boot_timeout s ($accel)"
echo "boot to first heartbeat: $(( $(now_ms) - tq )) ms wall ($accel)"
[[ $line =~ $hb_re ]] || fail "malformed heartbeat: $line"
[ "${BASH_REMATCH[1]}" = 1 ] || fail "first seq is not 1: $line"
boot1=${BASH_REMATCH[2]}

expect "$hb_re" "$step" && until [ "${BASH_REMATCH[4]}" -gt 0 ]; do
	expect "$hb_re" "$step" || fail "work counter never grew"
done

send "work off"
expect '^ACK v=1 seq=[0-9]+ cmd=work$' "$step" || fail "no ACK for work off"
# a worker may finish the round it was in: compare heartbeats after that
for _ in 1 2 3; do expect "$hb_re" "$step" || fail "no heartbeat after work off"; done
w1=${BASH_REMATCH[4]}
for _ in 1 2 3 4 5; do expect "$hb_re" "$step" || fail "no heartbeat after work off"; done
[ "${BASH_REMATCH[4]}" = "$w1" ] || fail "work still grows after work off ($w1 -> ${BASH_REMATCH[4]})"

send "selftest corrupt"
expect '^CORRUPT v=1 seq=[0-9]+ off=[0-9a-f]+ exp=[0-9a-f]{2} got=[0-9a-f]{2}$' "$step" ||
	fail "canary corruption not reported"
expect "$hb_re" "$step" && [ "${BASH_REMATCH[5]}" = bad ] || fail "heartbeat does not say canary=bad"

send "selftest oops"
expect '^KMSG v=1 seq=[0-9]+ text=.*WARNING' "$step" || fail "no KMSG line for the oops selftest"
expect "$hb_re" "$step" && [ "${BASH_REMATCH[6]}" = 1 ] || fail "heartbeat does not count the oops"

send "interval 50"
expect '^ACK v=1 seq=[0-9]+ cmd=interval$' "$step" || fail "no ACK for interval"
send "interval 5"  # out of range: ignored, no ACK
send "bogus command"

send "selftest hang"
expect '^ACK v=1 seq=[0-9]+ cmd=selftest$' "$step" || fail "no ACK for hang"
# The heartbeats stop: within $step s, 3 s (60 intervals) without a line.
# Lines queued before the hang took effect may arrive first, however late.
quiet= end=$(( $(date +%s) + step ))
while [ "$(date +%s)" -lt "$end" ]; do
	if IFS= read -r -t 3 -u 3 l; then echo "$l" >> "$tmp/port.log"; else quiet=1; break; fi
done
kill -0 "$qpid" 2>/dev/null || fail "guest died on hang"
[ -n "$quiet" ] || fail "heartbeats go on after selftest hang: $l"

# commands still work while hung: reboot gives a new boot id and seq 1
send "selftest reboot"
expect "$hb_re" "$boot_timeout" || fail "no heartbeat after reboot"
[ "${BASH_REMATCH[1]}" = 1 ] && [ "${BASH_REMATCH[2]}" != "$boot1" ] ||
	fail "after reboot expected seq=1 and a new boot id: $line"

send "selftest panic"
expect '^ACK v=1 seq=[0-9]+ cmd=selftest$' "$step" || fail "no ACK for panic"
end=$(( $(date +%s) + step ))
while kill -0 "$qpid" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do sleep 0.1; done
kill -0 "$qpid" 2>/dev/null && fail "QEMU still running $step s after panic (pvpanic not reported?)"
wait "$qpid"; qpid=
grep -aq 'Kernel panic - not syncing' "$tmp/console.log" || fail "no kernel panic on the console"
grep -aq 'pmucanary-agent: modules: .* loaded' "$tmp/console.log" || fail "console lacks the agent lines"
echo "it_agent: all checks passed ($accel)"
