#!/usr/bin/env bash
# Distribution disk images as canaries (issue 12), on real images and real
# boots:
#  - tests/helper_mkdisk builds four real disk images with libguestfs: a
#    bootable one with busybox init (no systemd), the fleet's kernel and an
#    initrd; one booting the host's systemd; a Linux root with no init; an
#    ext4 filesystem with no OS;
#  - `pmucanary image --inject` on the busybox image: exit 0, says what it
#    found (linux, debian, the kernel, busybox init, the appliance's accel),
#    writes an overlay backed by the image, and the image's sha256 is the
#    same after injection and after a guest ran on it (its owner too:
#    libvirt gives it to libvirt-qemu, the fleet gives it back);
#  - one disk guest under `pmucanary fleet --disk`: heartbeats arrive from
#    the agent its own init started, then a self-test panic gives
#    GUEST_CRASH whose evidence names the guest's own /var/log, read out of
#    its overlay into the run dir; the per-guest overlay and the domain are
#    gone afterwards;
#  - a mixed fleet under `pmucanary run --keep` (one initramfs guest, one
#    disk guest: [fleet] disk_guests = 1): both beat (only the disk guest's
#    console shows the agent its init started), a self-test crash is
#    GUEST_CRASH 2/2 on both, the cell's evidence names the disk guest's own
#    logs, its second incarnation has a fresh overlay (its own /var/log
#    holds one boot), and --keep leaves that overlay; the same run without
#    --keep, SIGTERMed mid-run, leaves none; SIGKILLed mid-run, its watcher
#    removes it;
#  - the busybox image's own bootloader (extlinux, syslinux's MBR): inject
#    reports it and gives its APPEND the fleet's kernel words; a disk guest
#    under `fleet --disk-boot bootloader` boots through it (the console
#    shows the SYSLINUX banner, /proc/cmdline is the config's with those
#    words and no direct-boot words), beats at the interval the fleet sent
#    its agent, and a self-test panic gives GUEST_CRASH; nothing is left;
#    the systemd image has no bootloader: a fleet asked to boot through it
#    refuses in one line, exit 2, before booting anything;
#  - the systemd image (the host's real systemd as its init) is recognised
#    (unit + multi-user.target.wants link) and boots for real: heartbeats
#    arrive from the agent systemd started through the injected unit;
#  - a text file, the image with no OS and the one with no init give one
#    clear line and exit 2, and leave no overlay.
# Each libguestfs launch boots an appliance under TCG (30-70 s here): the
# error cases run side by side.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
build=${PMUCANARY_BUILD:-build}
mkdisk=$build/tests/helper_mkdisk
if ! virsh -c qemu:///system version >/dev/null 2>&1; then
	echo "SKIP: libvirtd (qemu:///system) is not running"
	exit 77
fi
[ -x "$mkdisk" ] || { echo "FAIL $mkdisk is not built (make $mkdisk)"; exit 1; }
[ -x /bin/busybox ] || { echo "SKIP: /bin/busybox (busybox-static) is not installed"; exit 77; }
command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
# QEMU runs as libvirt-qemu: every parent of the images must be searchable
work=$(mktemp -d /var/tmp/it_inject.XXXXXX)
chmod 755 "$work"
run_id=itinj$$
cleanup() {
	local ids="$run_id-" r
	# the runs' own ids (their result directories' names)
	for r in "$work"/mixed/* "$work"/term/*; do [ -d "$r" ] && ids="$ids|$(basename "$r")-"; done
	for d in $(virsh -c qemu:///system list --all --name 2>/dev/null | grep -E "^pmucanary-($ids)"); do
		virsh -c qemu:///system destroy "$d" >/dev/null 2>&1
	done
	rm -rf "$work"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
t0=$SECONDS

if ! "$mkdisk" "$work" > "$work/mkdisk.log" 2>&1; then
	cat "$work/mkdisk.log"
	echo "FAIL helper_mkdisk could not build the test images"
	exit 1
fi
echo "images built in $((SECONDS - t0)) s"
sum_before=$(sha256sum < "$work/busybox.img")
owner_before=$(stat -c %U:%G "$work/busybox.img")
printf 'just some text, not a disk\n' > "$work/notes.txt"

# The error cases and the systemd image in the background, side by side.
inject() { # name image [args...]
	local name=$1 img=$2; shift 2
	"$bin" image --inject "$work/$img" --out "$work/$name.qcow2" "$@" \
		> "$work/$name.out" 2> "$work/$name.err"
	echo $? > "$work/$name.rc"
}
inject sd systemd.img --json &
inject noinit noinit.img &
inject noos noos.img &
inject notes notes.txt
t1=$SECONDS
inject bb busybox.img --json
echo "busybox image injected in $((SECONDS - t1)) s"

# --- the busybox image
if [ "$(cat "$work/bb.rc")" != 0 ]; then
	cat "$work/bb.err"
	bad "inject busybox.img exited $(cat "$work/bb.rc")"
else
	j=$work/bb.out
	[ "$(jq -r .os.type "$j")" = linux ] || bad "os.type is $(jq -r .os.type "$j")"
	[ "$(jq -r .os.distro "$j")" = debian ] || bad "os.distro is $(jq -r .os.distro "$j")"
	[ "$(jq -r .os.product_name "$j")" = "pmucanary test image (busybox init)" ] ||
		bad "product_name is $(jq -r .os.product_name "$j")"
	[ "$(jq -r .init "$j")" = busybox ] || bad "init is $(jq -r .init "$j")"
	[ "$(jq -r '.hooks[0]' "$j")" = /etc/inittab ] || bad "hooks are $(jq -c .hooks "$j")"
	rel=$(jq -r .boot.release "$j")
	[ -n "$rel" ] && [ -e "/lib/modules/$rel" ] || bad "boot.release '$rel' is not the fleet's kernel"
	jq -e '.modules | map(select(test("virtio_console"))) | length == 1' "$j" >/dev/null ||
		bad "virtio_console is not in the agent's module list: $(jq -c .modules "$j")"
	jq -e '.boot.cmdline_root | startswith("root=UUID=")' "$j" >/dev/null ||
		bad "cmdline root is $(jq -r .boot.cmdline_root "$j")"
	accel=$(jq -r .appliance.accel "$j")
	if [ ! -e /sys/module/kvm_intel ] && [ ! -e /sys/module/kvm_amd ]; then
		[ "$accel" = tcg ] || bad "appliance accel is $accel without kvm_intel/kvm_amd"
	fi
	[ "$(jq -r .appliance.backend "$j")" = direct ] || bad "backend $(jq -r .appliance.backend "$j")"
	jq -e '.bootloader.kind == "extlinux" and .bootloader.config == "/boot/extlinux/extlinux.conf"
		and .bootloader.entries == 1' "$j" >/dev/null ||
		bad "bootloader is $(jq -c .bootloader "$j"), want extlinux in /boot/extlinux/extlinux.conf"
	for f in bb.qcow2 bb.qcow2.vmlinuz bb.qcow2.initrd bb.qcow2.json; do
		[ -f "$work/$f" ] || bad "$f was not written"
	done
	qemu-img info --output=json "$work/bb.qcow2" | jq -e --arg b "$work/busybox.img" \
		'.format == "qcow2" and ."backing-filename" == $b' >/dev/null ||
		bad "bb.qcow2 is not a qcow2 over busybox.img"
	# the text report names the same things
	"$bin" image --help 2>&1 | grep -q -- '--inject' || bad "image --help does not show --inject"
fi
[ "$(sha256sum < "$work/busybox.img")" = "$sum_before" ] || bad "injection wrote into busybox.img"

# A lost libvirt connection is run once more only when libvirtd itself was
# restarted meanwhile (another suite's fault injection: its pid changed); a
# loss while the same libvirtd lived on is ours to explain, not to retry.
libvirtd_pid() {
	cat /run/libvirtd.pid 2>/dev/null || pgrep -o -x libvirtd || echo none
}
retry_if_libvirtd_restarted() { # PID-BEFORE WHAT TRY
	local now
	now=$(libvirtd_pid)
	if [ "$1" = "$now" ]; then
		bad "$2: libvirt connection lost while libvirtd (pid $1) lived on: not retried"
		return 1
	fi
	echo "$2: libvirt connection lost in try $3, and libvirtd was restarted meanwhile" \
		"(pid $1 -> $now): once more"
	sleep 5
	[ "$3" -lt 2 ]
}

# --- one disk guest: heartbeats, then a self-test panic
if [ -f "$work/bb.qcow2.json" ]; then
	t2=$SECONDS
	for try in 1 2; do
		lvd=$(libvirtd_pid)
		"$bin" fleet --disk "$work/bb.qcow2" -n 1 -d 4 --memory 256 --run-dir "$work/run" \
			--run-id "$run_id" --selftest 0=panic --selftest-at 2 --json "$work/fleet.json" \
			> "$work/fleet.out" 2>&1
		rc=$?
		grep -q 'libvirt connection lost' "$work/fleet.out" || break
		retry_if_libvirtd_restarted "$lvd" fleet "$try" || break
	done
	echo "disk guest fleet run: exit $rc in $((SECONDS - t2)) s"
	if [ ! -s "$work/fleet.json" ]; then
		cat "$work/fleet.out"
		bad "fleet --disk wrote no JSON"
	else
		fhb=$(jq -r '.guests[0].first_heartbeat_s' "$work/fleet.json")
		echo "disk guest: first heartbeat ${fhb} s after start"
		[ "$fhb" != null ] || { tail -30 "$work/run/pmucanary-$run_id-0.console"; bad "no heartbeat from the disk guest"; }
		kinds=$(jq -r '[.guests[0].verdicts[].kind] | join(",")' "$work/fleet.json")
		[ "$kinds" = GUEST_CRASH ] || { cat "$work/fleet.out"; bad "verdicts are '$kinds', want GUEST_CRASH"; }
		[ "$rc" = 1 ] || bad "fleet exited $rc after a guest crash, want 1"
		grep -aq 'pmucanary-agent: service mode' "$work/run/pmucanary-$run_id-0.console" ||
			bad "the console does not show the agent started by the guest's init"
		# the harmed guest's own logs, read out of its overlay
		# one directory per harmed incarnation, named by its verdict
		logs=$(ls -d "$work/run/pmucanary-$run_id-0".*-GUEST_CRASH.logs 2>/dev/null)
		[ "$(wc -w <<<"$logs")" = 1 ] || bad "want one GUEST_CRASH logs directory, got '$logs'"
		grep -q '^rcS: boot ' "$logs/messages" 2>/dev/null ||
			bad "the guest's /var/log/messages is not in $logs: $(ls "$logs" 2>&1)"
		jq -e --arg d "$logs" '.guests[0].verdicts[0].evidence | contains("own logs: " + $d)' \
			"$work/fleet.json" >/dev/null || bad "the crash's evidence does not name $logs"
	fi
	[ ! -e "$work/pmucanary-$run_id-0.qcow2" ] || bad "the guest's overlay was left behind"
	virsh -c qemu:///system list --all --name | grep -q "^pmucanary-$run_id-" &&
		bad "a domain was left behind"
	[ "$(sha256sum < "$work/busybox.img")" = "$sum_before" ] || bad "the guest wrote into busybox.img"
	# libvirt gives the backing chain to libvirt-qemu; the fleet gives it back
	[ "$(stat -c %U:%G "$work/busybox.img")" = "$owner_before" ] ||
		bad "busybox.img was $owner_before's, after a fleet $(stat -c %U:%G "$work/busybox.img")'s"
fi

# --- the same image through its own bootloader: SeaBIOS, MBR, extlinux
if [ -f "$work/bb.qcow2.json" ]; then
	t2=$SECONDS
	"$bin" fleet --disk "$work/bb.qcow2" --disk-boot grub -n 1 > "$work/blbad.out" 2>&1
	rc=$?
	[ "$rc" = 2 ] && grep -q -- "--disk-boot: expected kernel or bootloader, not 'grub'" "$work/blbad.out" ||
		bad "--disk-boot grub: exit $rc, $(cat "$work/blbad.out")"
	for try in 1 2; do
		lvd=$(libvirtd_pid)
		"$bin" fleet --disk "$work/bb.qcow2" --disk-boot bootloader -n 1 -d 4 --memory 256 \
			--interval 250 --run-dir "$work/blrun" --run-id "$run_id-bl" --selftest 0=panic \
			--selftest-at 2 --json "$work/blfleet.json" > "$work/blfleet.out" 2>&1
		rc=$?
		grep -q 'libvirt connection lost' "$work/blfleet.out" || break
		retry_if_libvirtd_restarted "$lvd" "bootloader fleet" "$try" || break
	done
	con=$work/blrun/pmucanary-$run_id-bl-0.console
	fhb=$(jq -r '.guests[0].first_heartbeat_s' "$work/blfleet.json" 2>/dev/null)
	echo "bootloader disk guest: exit $rc, first heartbeat ${fhb:-none} s, $((SECONDS - t2)) s"
	if [ -z "$fhb" ] || [ "$fhb" = null ]; then
		cat "$work/blfleet.out"; tail -30 "$con"
		bad "no heartbeat from the guest booted through its bootloader"
	else
		[ "$(jq -r '.guests[0].disk_boot' "$work/blfleet.json")" = bootloader ] ||
			bad "fleet JSON says disk_boot $(jq -r '.guests[0].disk_boot' "$work/blfleet.json")"
		# SeaBIOS ran the MBR, which ran extlinux (SERIAL 0 in its config)
		grep -aqE '(SYS|EXT)LINUX 6' "$con" || bad "the console shows no SYSLINUX/EXTLINUX banner"
		cmdline=$(grep -a '^rcS: cmdline ' "$con" | head -1)
		for w in pmucanary.test=extlinux-config pmucanary.boot=bootloader console=ttyS0 \
			unknown_nmi_panic=1 "initrd=/boot/initrd.img-"; do
			[[ " $cmdline" == *" $w"* ]] || bad "the bootloader guest's /proc/cmdline lacks $w: $cmdline"
		done
		[[ "$cmdline" == *pmucanary.interval=* ]] &&
			bad "the bootloader guest's cmdline is the direct boot's: $cmdline"
		# what the cmdline does not carry, the fleet told the agent
		grep -aq 'pmucanary-agent: interval 250 ms' "$con" ||
			bad "the agent was not told the fleet's heartbeat interval"
		kinds=$(jq -r '[.guests[0].verdicts[].kind] | join(",")' "$work/blfleet.json")
		[ "$kinds" = GUEST_CRASH ] && [ "$rc" = 1 ] ||
			{ cat "$work/blfleet.out"; bad "bootloader guest: verdicts '$kinds', exit $rc; want GUEST_CRASH, 1"; }
	fi
	[ ! -e "$work/pmucanary-$run_id-bl-0.qcow2" ] || bad "the bootloader guest's overlay was left behind"
	virsh -c qemu:///system list --all --name | grep -q "^pmucanary-$run_id-bl-" &&
		bad "the bootloader guest's domain was left behind"
	[ "$(sha256sum < "$work/busybox.img")" = "$sum_before" ] || bad "the bootloader guest wrote into busybox.img"
fi

# --- a mixed fleet through a whole run: screening, isolation, restarts
if [ -f "$work/bb.qcow2.json" ]; then
	t3=$SECONDS
	cat > "$work/mixed.ini" <<INI
[fleet]
guests = 2
disk = $work/bb.qcow2
disk_guests = 1
memory = 256M
heartbeat = 500ms
heartbeat_timeout = 10s
# a disk guest under TCG on a loaded machine took 74 s to its first beat
boot_timeout = 5m
[sweep]
events = cpu-clock
modifiers = u
profiles = perf-3.7
[load]
dwell = 1s
batch_size = 4
confirm = 2
INI
	"$bin" run --tcg --keep --results "$work/mixed" --selftest-harm cpu-clock:u=crash \
		"$work/mixed.ini" > "$work/mixed.out" 2>&1
	rc=$?
	echo "mixed fleet run (--keep, self-test crash): exit $rc in $((SECONDS - t3)) s"
	mdir=$(ls -d "$work"/mixed/*/ 2>/dev/null | head -1)
	mdir=${mdir%/}
	mid=$(basename "$mdir")
	json=$mdir/run.json
	if [ "$rc" != 1 ] || [ ! -f "$json" ]; then
		tail -30 "$work/mixed.out"
		bad "mixed run exited $rc (want 1) or wrote no run.json"
	else
		# the journal's fleet-up line says which guest booted what
		boots=$(jq -rs 'map(select(.step == "fleet-up"))[0].fleet.guests
			| map("\(.boot):\(.first_heartbeat_s != null)") | join(",")' "$mdir/journal.jsonl" 2>&1)
		[ "$boots" = "initramfs:true,disk:true" ] ||
			bad "mixed fleet booted '$boots', want initramfs:true,disk:true"
		# what each guest ran, from its own console: only guest 1 is the disk
		grep -aq 'pmucanary-agent: service mode' "$mdir/pmucanary-$mid-1.console" ||
			bad "guest 1's console does not show the agent its own init started"
		grep -aq 'pmucanary-agent: service mode' "$mdir/pmucanary-$mid-0.console" &&
			bad "guest 0 (initramfs) booted the disk"
		cell=$(jq -r '.cells[] | select(.spec == "cpu-clock:u") | "\(.outcome) \(.k)/\(.n)"' "$json")
		[ "$cell" = "GUEST_CRASH 2/2" ] || bad "cpu-clock:u is '$cell', want GUEST_CRASH 2/2"
		for g in 0 1; do
			grep -q "pmucanary-$mid-$g" <(jq -r '.. | strings' "$json") ||
				bad "run.json names no verdict of guest $g"
		done
		# two harms, two directories, each named by its own verdict and
		# named in that verdict's evidence; each log holds its one boot
		all_logs=$(ls -d "$mdir/pmucanary-$mid-1".*-GUEST_CRASH.logs 2>/dev/null)
		[ "$(wc -w <<<"$all_logs")" = 2 ] || bad "two harms of the disk guest: want 2 logs directories, got '$all_logs'"
		for logs in $all_logs; do
			nb=$(grep -c '^rcS: boot ' "$logs/messages" 2>/dev/null)
			[ "$nb" = 1 ] || bad "$logs/messages holds ${nb:-no} boots, want 1 (a fresh overlay per incarnation)"
			grep -q "own logs: $logs" <(jq -r '.. | strings' "$json") ||
				bad "no evidence names the disk guest's own logs $logs"
		done
		[ -f "$work/pmucanary-$mid-1.qcow2" ] || bad "--keep: the disk guest's overlay is gone"
		[ -e "$work/pmucanary-$mid-0.qcow2" ] && bad "the initramfs guest got an overlay"
	fi
	rm -f "$work/pmucanary-$mid-"*.qcow2
	virsh -c qemu:///system list --all --name | grep -q "^pmucanary-$mid-" &&
		bad "the mixed run left a domain"

	# The mixed run in the background until its fleet is up: pid, and rid
	# (its run id: its guests are pmucanary-$rid-N).
	mixed_up() { # name
		"$bin" run --tcg --results "$work/$1" "$work/mixed.ini" > "$work/$1.out" 2>&1 &
		pid=$!
		for _ in $(seq 600); do
			grep -qs '"fleet-up"' "$work/$1"/*/journal.jsonl && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		rid=$(basename "$(ls -d "$work/$1"/*/ 2>/dev/null | head -1)")
	}

	# without --keep, a SIGTERM once the fleet is up: no overlay left
	t4=$SECONDS
	mixed_up term
	tid=$rid
	[ -n "$tid" ] && [ -f "$work/pmucanary-$tid-1.qcow2" ] || bad "no disk guest overlay while the run was up"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	echo "mixed run SIGTERMed mid-run: exit $rc in $((SECONDS - t4)) s"
	ls "$work"/pmucanary-*.qcow2 >/dev/null 2>&1 &&
		bad "SIGTERM without --keep left overlays: $(ls "$work"/pmucanary-*.qcow2)"
	virsh -c qemu:///system list --all --name | grep -q "^pmucanary-$tid-" &&
		bad "the SIGTERMed run left a domain"

	# SIGKILL once the fleet is up: the harness cleans nothing, its watcher
	# (lib/guests/reaper.c) destroys the guests and removes the overlay
	t5=$SECONDS
	mixed_up kill
	kid=$rid
	if [ -z "$kid" ] || [ ! -f "$work/pmucanary-$kid-1.qcow2" ]; then
		bad "no disk guest overlay while the run to be SIGKILLed was up"
	else
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		for _ in $(seq 60); do
			[ -e "$work/pmucanary-$kid-1.qcow2" ] ||
				virsh -c qemu:///system list --all --name | grep -q "^pmucanary-$kid-" || break
			sleep 0.5
		done
		echo "mixed run SIGKILLed mid-run: cleaned up $((SECONDS - t5)) s after its start"
		[ -e "$work/pmucanary-$kid-1.qcow2" ] && bad "SIGKILL without --keep left the overlay"
		virsh -c qemu:///system list --all --name | grep -q "^pmucanary-$kid-" &&
			bad "the SIGKILLed run left a domain"
		grep -q "removed .*pmucanary-$kid-1.qcow2: its harness (pid $pid) was killed" "$work/kill.out" ||
			bad "the SIGKILLed run's output does not say its watcher removed the overlay"
	fi
fi

wait
# --- the systemd image: recognised, then booted for real
if [ "$(cat "$work/sd.rc")" != 0 ]; then
	cat "$work/sd.err"
	bad "inject systemd.img exited $(cat "$work/sd.rc")"
else
	[ "$(jq -r .init "$work/sd.out")" = systemd ] || bad "systemd.img: init $(jq -r .init "$work/sd.out")"
	[ "$(jq -r .bootloader.kind "$work/sd.out")" = none ] ||
		bad "systemd.img: bootloader $(jq -c .bootloader "$work/sd.out"), want none"
	# no bootloader to boot through: one line, exit 2, no guest started
	"$bin" fleet --disk "$work/sd.qcow2" --disk-boot bootloader -n 1 --run-dir "$work/sdbl" \
		--run-id "$run_id-sdbl" > "$work/sdbl.out" 2> "$work/sdbl.err"
	rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l < "$work/sdbl.err")" = 1 ] &&
		grep -q "sd.qcow2: no bootloader to boot through (no grub.cfg" "$work/sdbl.err" ||
		bad "--disk-boot bootloader without one: exit $rc, $(cat "$work/sdbl.err")"
	[ -e "$work/pmucanary-$run_id-sdbl-0.qcow2" ] && bad "the refused fleet made an overlay"
	echo "sdbl: $(cat "$work/sdbl.err")"
	jq -e '.hooks == ["/etc/systemd/system/pmucanary-agent.service",
		"/etc/systemd/system/multi-user.target.wants/pmucanary-agent.service"]' \
		"$work/sd.out" >/dev/null || bad "systemd hooks: $(jq -c .hooks "$work/sd.out")"
	# a real systemd boot: the injected unit starts the agent
	t5=$SECONDS
	"$bin" fleet --disk "$work/sd.qcow2" -n 1 -d 2 --memory 256 --run-dir "$work/sdrun" \
		--run-id "$run_id-sd" --json "$work/sdfleet.json" > "$work/sdfleet.out" 2>&1
	rc=$?
	fhb=$(jq -r '.guests[0].first_heartbeat_s' "$work/sdfleet.json" 2>/dev/null)
	echo "systemd disk guest: exit $rc, first heartbeat ${fhb:-none} s, $((SECONDS - t5)) s"
	if [ "$rc" != 0 ] || [ -z "$fhb" ] || [ "$fhb" = null ]; then
		cat "$work/sdfleet.out"; tail -40 "$work/sdrun/pmucanary-$run_id-sd-0.console"
		bad "the systemd disk guest did not beat (exit $rc)"
	fi
	# systemd's own status lines: it ran the injected unit, which ran the agent
	grep -aq 'Started.*pmucanary-agent' "$work/sdrun/pmucanary-$run_id-sd-0.console" ||
		bad "the systemd guest's console does not show systemd starting pmucanary-agent.service"
	grep -aq 'pmucanary-agent: service mode' "$work/sdrun/pmucanary-$run_id-sd-0.console" ||
		bad "the systemd guest's console does not show the agent in service mode"
fi

# --- refusals: one line, exit 2, nothing left
check_refused() { # name pattern
	local name=$1 pat=$2 rc
	rc=$(cat "$work/$name.rc")
	[ "$rc" = 2 ] || bad "$name: exit $rc, want 2 ($(cat "$work/$name.err"))"
	[ "$(wc -l < "$work/$name.err")" = 1 ] || bad "$name: not one line: $(cat "$work/$name.err")"
	grep -q "$pat" "$work/$name.err" || bad "$name: '$(cat "$work/$name.err")' does not say '$pat'"
	ls "$work/$name".qcow2* >/dev/null 2>&1 && bad "$name: an overlay was left behind"
	echo "$name: $(cat "$work/$name.err")"
}
check_refused notes "notes.txt: not a disk image"
check_refused noos "noos.img: no operating system found"
check_refused noinit "noinit.img: unknown init"

echo "it_inject: $((SECONDS - t0)) s"
[ "$fail" = 0 ] && echo "PASS" && exit 0
exit 1
