#!/usr/bin/env bash
# A run's reproducer directory, used the way a maintainer would: no
# pmucanary process while it runs, only QEMU, cc and the files (issue 26).
#  - a self-test run (TCG, cpu-clock:u crashes the guest) writes repro/ for
#    its harmed cell: repro.c, README.txt and guest.sh;
#  - guest.sh boots the run's guest with plain QEMU and arms the attr beside
#    it on this host's kernel, which does not harm guests (the run's crash
#    was the agent's self-test, not the kernel's): exit 0, "no harm";
#  - the same while the guest really panics (an NMI through QEMU's monitor;
#    the guest's command line has unknown_nmi_panic=1): exit 1, GUEST_CRASH
#    with the console's panic line;
#  - a guest that never comes up (its kernel panics at boot: rdinit=/nowhere)
#    and a missing kernel: exit 125, not a verdict;
#  - nothing of pmucanary runs meanwhile, no QEMU is left after.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
[ "$(id -u)" = 0 ] || { echo "SKIP: the reproducer arms system-wide events (root)"; exit 77; }
virsh -c qemu:///system version >/dev/null 2>&1 || { echo "SKIP: libvirtd is not running"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: no qemu-system-x86_64"; exit 77; }
command -v cc >/dev/null || { echo "FAIL no cc"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL no python3 (the monitor's NMI)"; exit 1; }
work=$(mktemp -d /tmp/it_repro.XXXXXX)
chmod 755 "$work"
trap 'pkill -f "$work/" 2>/dev/null; rm -rf "$work"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

cat >"$work/tiny.ini" <<'INI'
[scenario]
name = it-repro
description = one guest, cpu-clock and cpu-clock:u, the latter crashes (self-test)
[fleet]
guests = 1
memory = 256M
[sweep]
events = cpu-clock
modifiers = -; u
profiles = perf-modern
[load]
dwell = 1s
confirm = 1
INI
"$bin" run --tcg --results "$work/res" --selftest-harm cpu-clock:u=crash "$work/tiny.ini" \
	>"$work/run.out" 2>&1
rc=$?
dir=$(ls -d "$work"/res/*/repro/*/ 2>/dev/null | head -1)
if [ "$rc" = 1 ] && [ -n "$dir" ] && [ -x "$dir/guest.sh" ] && [ -f "$dir/repro.c" ] &&
	grep -q "./guest.sh" "$dir/README.txt"; then
	ok "the run (exit 1) wrote repro.c, README.txt and an executable guest.sh"
else
	bad "run exit $rc, repro dir '$dir': $(ls "$dir" 2>&1 | tr '\n' ' ')"; tail -5 "$work/run.out"
	exit 1
fi

guest() { # NAME [ENV=V...]: ./guest.sh in the reproducer's directory, its output in NAME.out
	local name=$1; shift
	(cd "$dir" && env TMPDIR="$work" "$@" ./guest.sh >"$work/$name.out" 2>&1)
}
descendants() { local c; for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done; }
# guest.sh's whole process tree holds QEMU, sleep, grep... and no pmucanary
no_pmucanary() { # PID
	local pids
	pids=$(descendants "$1")
	[ -n "$pids" ] && ! ps -o comm= -p "$(echo $pids | tr ' ' ',')" | grep -qx pmucanary &&
		ps -o comm= -p "$(echo $pids | tr ' ' ',')" | grep -q qemu
}

# 1. this kernel does not harm the guest
t0=$SECONDS
guest clean &
gpid=$!
sleep 3
no_pmucanary "$gpid" && seen=ok || seen=bad
wait "$gpid"
rc=$?
if [ "$rc" = 0 ] && grep -q "no harm" "$work/clean.out" && grep -q "guest up" "$work/clean.out"; then
	ok "guest.sh on a kernel that does not harm: exit 0, no harm ($((SECONDS - t0)) s)"
else
	bad "guest.sh (clean): exit $rc: $(tail -4 "$work/clean.out" | tr '\n' ' ')"
fi
[ "$seen" = ok ] && ok "guest.sh ran QEMU and no pmucanary process" ||
	bad "guest.sh's processes: QEMU missing or a pmucanary among them"

# 2. a real guest panic while the attr is armed
mon=$work/mon
t0=$SECONDS
guest nmi "GUEST_QEMU_EXTRA=-monitor unix:$mon,server=on,wait=off" REPRO_MS=20000 &
gpid=$!
for _ in $(seq 240); do grep -q "arming" "$work/nmi.out" 2>/dev/null && break; sleep 0.5; done
python3 - "$mon" <<'EOF' || bad "could not send the NMI through QEMU's monitor"
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
time.sleep(0.3)
s.recv(4096)
s.sendall(b"nmi\n")
time.sleep(0.5)
s.close()
EOF
wait "$gpid"
rc=$?
if [ "$rc" = 1 ] && grep -q "GUEST_CRASH: .*Kernel panic - not syncing" "$work/nmi.out"; then
	ok "guest.sh while the guest panics: exit 1, GUEST_CRASH with its console's line ($((SECONDS - t0)) s)"
else
	bad "guest.sh (nmi): exit $rc: $(tail -4 "$work/nmi.out" | tr '\n' ' ')"
fi

# 3. a guest that never comes up; a kernel that is not there
sed -e "s|^CMDLINE='|CMDLINE='rdinit=/nowhere |" -e 's/^BOOT_TIMEOUT_S=.*/BOOT_TIMEOUT_S=20/' \
	"$dir/guest.sh" >"$dir/noboot.sh" && chmod +x "$dir/noboot.sh"
(cd "$dir" && TMPDIR=$work ./noboot.sh >"$work/noboot.out" 2>&1)
rc=$?
[ "$rc" = 125 ] && grep -q "did not come up" "$work/noboot.out" &&
	ok "a guest that panics at boot: exit 125, the guest did not come up" ||
	bad "noboot: exit $rc: $(tail -3 "$work/noboot.out" | tr '\n' ' ')"
sed "s|^KERNEL=.*|KERNEL='$work/no-such-kernel'|" "$dir/guest.sh" >"$dir/nokernel.sh" &&
	chmod +x "$dir/nokernel.sh"
(cd "$dir" && TMPDIR=$work ./nokernel.sh >"$work/nokernel.out" 2>&1)
rc=$?
[ "$rc" = 125 ] && grep -q "no-such-kernel: cannot be read" "$work/nokernel.out" &&
	ok "a missing kernel: exit 125 naming it" || bad "nokernel: exit $rc: $(cat "$work/nokernel.out")"

sleep 1
pgrep -f "$work/guest-sh" >/dev/null && bad "a QEMU of guest.sh is left" || ok "no QEMU left"
[ -z "$(ls -d "$work"/guest-sh.* 2>/dev/null)" ] && ok "guest.sh removed its files" ||
	bad "guest.sh left $(ls -d "$work"/guest-sh.*)"
[ "$fails" = 0 ] || { echo "$fails failures"; exit 1; }
echo "all passed"
