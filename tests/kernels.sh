# tests/kernels.sh — sourced helper for integration tests that need the two
# lab-host test kernels (built from Debian's linux-source-6.1, cached by
# guest-images/kernel-build.sh):
#
#   base:    guest-images/kconfig/lab-host.config (= replay:stock)
#   patched: the same + guest-images/replay/pebs-2012-harm.patch +
#            guest-images/replay/pebs-2012-fix.patch (= replay:pebs-2012-harm+
#            pebs-2012-fix, the "3.7 kernel"): cpu-clock with precise_ip and
#            without exclude_guest gives EOPNOTSUPP, the 2012 pattern on a
#            software PMU. The harm patch acts only on attrs the fix refuses,
#            so the one visible change is the ABI one; it_lab_replay.sh
#            builds the same kernel through `lab --kernel replay:...`, from
#            the same cache entry.
#
# Usage:
#   . "$PMUCANARY_TOP/tests/kernels.sh"
#   test_kernels_build [kernel-build.sh options, e.g. --cache DIR --jobs N] || exit 1
#   ... "$PMUCANARY_LAB_KERNEL_BASE" "$PMUCANARY_LAB_KERNEL_PATCHED" ...
#
# test_kernels_build exports PMUCANARY_LAB_KERNEL_BASE and
# PMUCANARY_LAB_KERNEL_PATCHED (absolute bzImage paths). It writes nothing to
# stdout; progress and errors go to stderr; it returns non-zero on failure.
# Cached: well under a second when both exist. Cold: one full build (5-10 min
# on 2 cores) plus one incremental build (~1 min).

test_kernels_build() {
	local top kb frag harm patch base patched
	top=${PMUCANARY_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
	kb=$top/guest-images/kernel-build.sh
	frag=$top/guest-images/kconfig/lab-host.config
	harm=$top/guest-images/replay/pebs-2012-harm.patch
	patch=$top/guest-images/replay/pebs-2012-fix.patch
	local f
	for f in "$kb" "$frag" "$harm" "$patch"; do
		if [ ! -f "$f" ]; then
			echo "test_kernels_build: missing $f" >&2
			return 1
		fi
	done
	if ! base=$(bash "$kb" "$@" "$frag"); then
		echo "test_kernels_build: building the base lab-host kernel failed" >&2
		return 1
	fi
	if ! patched=$(bash "$kb" "$@" --patch "$harm" --patch "$patch" "$frag"); then
		echo "test_kernels_build: building the patched lab-host kernel failed" >&2
		return 1
	fi
	if [ ! -f "$base" ] || [ ! -f "$patched" ]; then
		echo "test_kernels_build: kernel-build.sh printed no usable path ('$base', '$patched')" >&2
		return 1
	fi
	export PMUCANARY_LAB_KERNEL_BASE=$base
	export PMUCANARY_LAB_KERNEL_PATCHED=$patched
	return 0
}

# The small guest kernel (guest-images/kconfig/guest-small.config), built
# or found in the cache `pmucanary` itself uses for `kernel = small`
# ($PMUCANARY_CACHE_DIR/kernels when that is set, else kernel-build.sh's
# default): the suite builds it with progress on stderr, the harness then
# finds it cached. Exports PMUCANARY_SMALL_KERNEL. Cold: ~8 min on 2 cores;
# cached: well under a second. Options as test_kernels_build.
test_small_kernel_build() {
	local top kb frag k cache=()
	top=${PMUCANARY_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
	kb=$top/guest-images/kernel-build.sh
	frag=$top/guest-images/kconfig/guest-small.config
	[ -f "$kb" ] && [ -f "$frag" ] || { echo "test_small_kernel_build: missing $kb or $frag" >&2; return 1; }
	[ -z "${PMUCANARY_CACHE_DIR:-}" ] || cache=(--cache "$PMUCANARY_CACHE_DIR/kernels")
	if ! k=$(nice -n 5 bash "$kb" "${cache[@]}" "$@" "$frag"); then
		echo "test_small_kernel_build: building the small guest kernel failed" >&2
		return 1
	fi
	[ -f "$k" ] || { echo "test_small_kernel_build: kernel-build.sh printed no usable path ('$k')" >&2; return 1; }
	export PMUCANARY_SMALL_KERNEL=$k
}

# The replay kernels it_lab_replay.sh asks `pmucanary lab --kernel
# replay:...` for, built the way lab builds them (kernel-build.sh, the
# lab-host fragment, the patches of guest-images/replay in the `+` order;
# a result's key is the bytes, not the paths), so lab finds them cached.
# Only tests/prebuild.sh calls it: the suite itself leaves it to lab.
test_replay_kernels_build() {
	local top kb frag r set p args
	top=${PMUCANARY_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
	kb=$top/guest-images/kernel-build.sh
	frag=$top/guest-images/kconfig/lab-host.config
	r=$top/guest-images/replay
	for set in pebs-2012-harm guest-only-precise-2025 host-panic+host-hang; do
		args=()
		for p in ${set//+/ }; do
			args+=(--patch "$r/$p.patch")
		done
		bash "$kb" "$@" "${args[@]}" "$frag" >/dev/null ||
			{ echo "test_replay_kernels_build: replay:$set failed" >&2; return 1; }
	done
}

# For a lab suite (sourced into it): skip (exit 77) without root, libvirtd or
# the kernel source, fail without jq or when the kernels do not build.
lab_suite_setup() {
	[ "$(id -u)" = 0 ] ||
		{ echo "SKIP: lab hosts need root (QEMU runs as root for the 9p root share)"; exit 77; }
	virsh -c qemu:///system version >/dev/null 2>&1 ||
		{ echo "SKIP: libvirtd (qemu:///system) is not running"; exit 77; }
	[ -f /usr/src/linux-source-6.1.tar.xz ] ||
		{ echo "SKIP: no /usr/src/linux-source-6.1.tar.xz (apt-get install linux-source-6.1)"; exit 77; }
	command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
	test_kernels_build || { echo "FAIL building the test kernels"; exit 1; }
}

# A work directory a lab host can mount: under /var/tmp (a filesystem with
# user xattrs; /tmp may be a tmpfs without them), 0755.
lab_suite_workdir() {
	local d
	d=$(mktemp -d "/var/tmp/$(basename "$0" .sh).XXXXXX") || return 1
	chmod 755 "$d"
	echo "$d"
}
