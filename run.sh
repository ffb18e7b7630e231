#!/usr/bin/env bash
# pmucanary on a fresh Debian machine.
#   ./run.sh          set up, build, build the guest image, run scenarios/smoke.ini
#   ./run.sh check    set up, build and run the whole test suite (make check,
#                     then make check SANITIZE=1)
#   ./run.sh setup    only install packages and start libvirtd
#   ./run.sh libvirtd only start virtlogd and libvirtd (tests/it_faults.sh)
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(build-essential pkg-config qemu-system-x86 qemu-utils
	libvirt-daemon-system libvirt-clients libvirt-dev libcmocka-dev
	libglib2.0-dev libjansson-dev libarchive-dev libguestfs-dev libyaml-dev
	linux-image-amd64 linux-perf procps tini)
# Only the test suite needs these: jq for the CLI suites, xmllint for the
# JUnit check, Chromium to look at the HTML report, and Debian's kernel
# source with what building it takes for the lab suites' test kernels
# (guest-images/kernel-build.sh), clang and its libFuzzer runtime for the
# fuzz targets (tests/cli_fuzz.sh), busybox-static for the disk images
# tests/it_inject.sh builds and extlinux for the bootloader in one of them
# (its mbr.bin; libguestfs's appliance takes extlinux from the host),
# mmdebstrap for the stock Debian image tests/it_distro.sh builds from this
# machine's apt sources,
# lava-dispatcher (lava-run, no server) for tests/it_lava.sh (37 packages
# beyond this list, 23 s to install here).
TEST_PACKAGES=(jq libxml2-utils chromium python3
	linux-source-6.1 bc bison flex libelf-dev libssl-dev cpio xz-utils
	clang libclang-rt-14-dev busybox-static extlinux lava-dispatcher mmdebstrap)

say() { [ -n "${CI:-}" ] || [ -t 1 ] && echo "run.sh: $*"; true; }

install_packages() {
	local missing=()
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "run.sh: missing packages: ${missing[*]} (run as root to install them)" >&2
		exit 2
	fi
	echo "run.sh: installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
}

# libvirtd daemonizes each QEMU, so a QEMU that exits is reaped by PID 1;
# some container and microVM inits reap late (1-2 s here), and
# virDomainDestroy waits for that zombie to go: every harmed guest's
# restart paid it. tini -s, a subreaper, reaps them at once (destroy
# 1.64 s -> 0.23 s here). Without systemd only: a systemd host's libvirtd
# is running already and is left as it is.
launch_libvirtd() {
	if command -v tini >/dev/null; then
		setsid tini -s -- libvirtd </dev/null >/dev/null 2>&1 &
	else
		libvirtd -d
	fi
}

start_libvirtd() {
	if [ -S /run/libvirt/libvirt-sock ] && virsh -c qemu:///system version >/dev/null 2>&1; then
		return 0
	fi
	[ "$(id -u)" = 0 ] || { echo "run.sh: libvirtd is not running and we are not root" >&2; exit 125; }
	echo "run.sh: starting virtlogd and libvirtd"
	pgrep -x virtlogd >/dev/null || virtlogd -d
	pgrep -x libvirtd >/dev/null || launch_libvirtd
	for _ in $(seq 1 50); do
		virsh -c qemu:///system version >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "run.sh: libvirtd did not come up" >&2
	exit 125
}

setup() {
	install_packages
	start_libvirtd
	make -j"$(nproc)" >/dev/null
}

case "${1:-}" in
setup)
	setup ;;
libvirtd)
	start_libvirtd ;;
check)
	PACKAGES+=("${TEST_PACKAGES[@]}")
	setup
	# compile in parallel, run the suites one at a time (no jobserver in
	# their environment: some suites run make themselves)
	make -j"$(nproc)" check-build >/dev/null
	make check
	make -j"$(nproc)" check-build SANITIZE=1 >/dev/null
	make check SANITIZE=1 ;;
"")
	setup
	./build/pmucanary image
	./build/pmucanary run scenarios/smoke.ini ;;
*)
	echo "usage: ./run.sh [check|setup|libvirtd]" >&2
	exit 2 ;;
esac
