#!/usr/bin/env bash
# pmucanary lab: bad input exits 2 with one line naming it, and nothing is
# booted or created. Uses the distribution's kernel from /boot as a real
# kernel image and edited copies of its config as kernels that lack things.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
top=${PMUCANARY_TOP:-.}
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# .deb packages are unpacked into the kernel cache: this test's own
export PMUCANARY_CACHE_DIR=$tmp/cache

skip() { echo "SKIP: $*"; exit 77; }
check() { # name expected-exit expected-stderr-substring cmd...
	local name=$1 want=$2 msg=$3; shift 3
	local err rc lines
	err=$("$@" 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s' "$err" | grep -c .)
	if [ "$rc" != "$want" ] || [[ "$err" != *"$msg"* ]] || { [ "$want" = 2 ] && [ "$lines" != 1 ]; }; then
		echo "FAIL $name: exit $rc (want $want), $lines line(s) of stderr: $err"; fail=1
	else
		echo "ok   $name"
	fi
}

vmlinuz=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
[ -n "$vmlinuz" ] || skip "no /boot/vmlinuz-* (install linux-image-amd64)"
[ -r "$vmlinuz" ] || skip "$vmlinuz is not readable (run as root)"
release=${vmlinuz#/boot/vmlinuz-}
config=/boot/config-$release
[ -r "$config" ] || skip "no $config"

results=$tmp/results
# Lab host domains of this suite: their consoles are under $tmp (other
# users' and other suites' lab hosts on this machine are not ours to count).
own_domains() {
	local d
	virsh -c qemu:///system list --all --name 2>/dev/null | grep '^pmucanary-lab' |
		while read -r d; do
			virsh -c qemu:///system dumpxml "$d" 2>/dev/null | grep -qF -- "$tmp/" && echo "$d"
		done
}
lab() { "$bin" lab --results "$results" "$top/scenarios/smoke.ini" "$@"; }

# Not a kernel at all.
echo "just text" >"$tmp/notakernel"
check not-a-kernel 2 "--kernel $tmp/notakernel: not a kernel image" lab --kernel "$tmp/notakernel"
check no-such-file 2 "$tmp/nope" lab --kernel "$tmp/nope"
check no-such-release 2 "--kernel 9.9.9-nope: no /boot/vmlinuz-9.9.9-nope" lab --kernel 9.9.9-nope

# A real image whose config lacks what a lab host needs: KVM, the 9p
# filesystem, the KVM vendor module this machine's lab hosts need.
grep -v '^CONFIG_KVM=' "$config" >"$tmp/nokvm.config"
check without-kvm 2 "CONFIG_KVM is not set" lab --kernel "$vmlinuz" --config "$tmp/nokvm.config"
grep -v '^CONFIG_9P_FS=' "$config" >"$tmp/no9p.config"
check without-9p 2 "CONFIG_9P_FS is not set" lab --kernel "$vmlinuz" --config "$tmp/no9p.config"
err=$(lab --kernel "$vmlinuz" --config "$tmp/no9p.config" 2>&1 >/dev/null)
if [[ "$err" == *CONFIG_KVM\ * ]] || [[ "$err" == *CONFIG_OVERLAY_FS* ]]; then
	echo "FAIL without-9p names options that are there: $err"; fail=1
else
	echo "ok   without-9p names only what lacks"
fi

# Modules: a missing --modules directory; a modular config with no modules
# dir at all (a copied image whose release has no /lib/modules).
check missing-modules-dir 2 "--modules $tmp/nomods: no such directory" \
	lab --kernel "$vmlinuz" --modules "$tmp/nomods"
cp "$vmlinuz" "$tmp/vmlinuz-9.9.9-copy"
check modular-without-modules 2 "but no modules dir" \
	lab --kernel "$tmp/vmlinuz-9.9.9-copy" --config "$config"

# Broken packages: not a .deb at all, a real .deb cut in half.
echo "garbage" >"$tmp/linux-image-broken.deb"
check broken-deb 2 "--kernel $tmp/linux-image-broken.deb: broken package" \
	lab --kernel "$tmp/linux-image-broken.deb"
if command -v dpkg-deb >/dev/null; then
	mkdir -p "$tmp/pkg/DEBIAN" "$tmp/pkg/boot"
	printf 'Package: linux-image-test\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: t\n' \
		>"$tmp/pkg/DEBIAN/control"
	cp "$vmlinuz" "$tmp/pkg/boot/vmlinuz-9.9.9-test"
	cp "$config" "$tmp/pkg/boot/config-9.9.9-test"
	dpkg-deb -Zxz --build "$tmp/pkg" "$tmp/linux-image-test.deb" >/dev/null
	head -c $(($(stat -c %s "$tmp/linux-image-test.deb") / 2)) "$tmp/linux-image-test.deb" \
		>"$tmp/linux-image-cut.deb"
	check truncated-deb 2 "--kernel $tmp/linux-image-cut.deb: broken package" \
		lab --kernel "$tmp/linux-image-cut.deb"
	# the whole package is fine as far as the image goes, but its modular
	# config has no modules in the package
	check deb-without-modules 2 "but no modules dir" lab --kernel "$tmp/linux-image-test.deb"
	# a package without a config: said on stderr (it was a debug line),
	# and then whatever the rest says (here: an unknown --base)
	rm "$tmp/pkg/boot/config-9.9.9-test"
	dpkg-deb -Zxz --build "$tmp/pkg" "$tmp/linux-image-noconfig.deb" >/dev/null
	err=$(lab --kernel "$tmp/linux-image-noconfig.deb" --base nosuch 2>&1 >/dev/null); rc=$?
	if [ "$rc" = 2 ] && grep -q "^pmucanary: warning: .*linux-image-noconfig.deb: no kernel config found (none in the package" <<<"$err" &&
	   grep -q -- "--base nosuch" <<<"$err"; then
		echo "ok   deb-without-config: warned, then the --base error"
	else
		echo "FAIL deb-without-config: exit $rc: $err"; fail=1
	fi
else
	echo "FAIL dpkg-deb is missing (Debian's dpkg)"; fail=1
fi

# Names and the base.
check boot-timeout-zero 2 "option --boot-timeout: 0 is out of range (1..3600)" \
	lab --kernel "$vmlinuz" --boot-timeout 0
# Places: an unknown one is named with the known ones before any kernel is
# looked at; the lab host takes no options; the lava place names what it
# lacks; a place that runs the scenario alone takes no --selftest-harm.
check place-unknown 2 "--place nope: no such place (known: labhost, lava)" \
	"$bin" lab --kernel /nonexistent/vmlinuz --place nope
check place-opt-labhost 2 "--place-opt x=1: the place labhost takes no option 'x' (it takes: none)" \
	"$bin" lab --results "$results" --kernel "$vmlinuz" --place-opt x=1
check place-lava-no-device 2 "the place lava needs --place-opt device=FILE" \
	"$bin" lab --results "$results" --kernel "$vmlinuz" --place lava
check place-lava-bad-opt 2 "--place-opt device: expected KEY=VALUE" \
	"$bin" lab --results "$results" --kernel "$vmlinuz" --place lava --place-opt device
printf 'device_type: qemu\n' >"$tmp/dev.yaml"
check place-lava-selftest 2 "--selftest-harm: the place lava runs the scenario alone" \
	"$bin" lab --results "$results" --kernel "$vmlinuz" --place lava --place-opt "device=$tmp/dev.yaml" \
	--place-opt "ramdisk=$tmp/dev.yaml" --selftest-harm cpu-clock
# --only: what the run inside would refuse, refused once before anything boots
check only-cell-alone 2 "--cell without --only" \
	"$bin" lab --results "$results" --kernel "$vmlinuz" --cell perf-3.6:cycles:pp
check only-missing 2 "$tmp/none.json" \
	"$bin" lab --results "$results" --kernel "$vmlinuz" --only "$tmp/none.json"
check same-name 2 "both named '$release'" lab --kernel "$vmlinuz" --kernel "$release"
check bad-base 2 "--base nosuch: no --kernel is named so" lab --kernel "$vmlinuz" --base nosuch
# a kernel without :NAME is named by its release (--help), the first one too:
# that --base is taken, and the next error is the scenario's
check base-first 2 "$tmp/nope.ini" "$bin" lab --results "$results" --kernel "$vmlinuz" \
	--base "$release" "$tmp/nope.ini"
check bad-name 2 "" lab --kernel "$vmlinuz:bad/name"
check modules-first 2 "--modules /x: give it after the --kernel it belongs to" \
	"$bin" lab --results "$results" --modules /x --kernel "$vmlinuz"
check no-kernel 2 "give at least one --kernel" "$bin" lab --results "$results"
check short-k 2 "--kernel $tmp/notakernel: not a kernel image" lab -k "$tmp/notakernel"
check k-then-config 2 "--config $tmp/nope.config" lab -k "$vmlinuz" --config "$tmp/nope.config"
check relative-perf 2 "give an absolute path" lab --kernel "$vmlinuz" --perf-binary perf
check bad-results 2 "a lab host mounts it by path" \
	"$bin" lab --results "$tmp/with space" --kernel "$vmlinuz" "$top/scenarios/smoke.ini"
check bad-selftest 2 "--selftest-harm cpu-clock=melt" \
	lab --kernel "$vmlinuz" --selftest-harm cpu-clock=melt
check bad-scenario 2 "$tmp/nope.ini" "$bin" lab --results "$results" --kernel "$vmlinuz" "$tmp/nope.ini"
check help 0 "" "$bin" lab --help
# Replay kernels: a bad LIST or NAME is refused before anything builds.
check replay-unknown 2 "--kernel replay:pebs-2013: no replay \"pebs-2013\" (there are: stock," \
	lab --kernel replay:pebs-2013
check replay-empty 2 "--kernel replay:: name a replay" lab --kernel replay:
check replay-twice 2 "host-hang given twice" lab --kernel replay:host-hang+host-hang:x
check replay-stock-plus 2 "\"stock\" is the kernel without replays" lab --kernel replay:stock+host-hang
check replay-bad-name 2 "--kernel replay:stock:bad/name: bad NAME \"bad/name\"" \
	lab --kernel replay:stock:bad/name
check list-replays 0 "" "$bin" lab --list-replays
# The five shipped replays, as README names them, and what each stands for.
listed=$("$bin" lab --list-replays | grep -E '^[a-z0-9-]+$' | tr '\n' ' ')
[ "$listed" = "guest-only-precise-2025 host-hang host-panic pebs-2012-fix pebs-2012-harm " ] &&
	echo "ok   --list-replays lists the five replays" || { echo "FAIL --list-replays lists: $listed"; fail=1; }
"$bin" lab --list-replays | grep -A3 '^pebs-2012-harm$' | grep -q "rule: *cpu-clock with precise_ip > 0 and exclude_guest = 0" &&
	echo "ok   --list-replays says pebs-2012-harm's rule" || { echo "FAIL --list-replays without pebs-2012-harm's rule"; fail=1; }
"$bin" lab --help | grep -q -- "--kernel=KERNEL\[:NAME\]" || { echo "FAIL help lists --kernel"; fail=1; }
for o in "--modules=DIR" "--config=FILE" "--base"; do
	"$bin" lab --help | grep -q -- "$o" || { echo "FAIL help lists $o"; fail=1; }
done

# Nothing booted, nothing created.
booted=$(own_domains)
if [ -n "$booted" ]; then
	echo "FAIL bad input booted a lab host: $(echo $booted)"; fail=1
else
	echo "ok   no lab host booted"
fi
if [ -e "$results" ]; then
	echo "FAIL bad input created $results: $(ls -R "$results" | head -5)"; fail=1
else
	echo "ok   no results directory created"
fi
exit $fail
