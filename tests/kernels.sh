# tests/kernels.sh — sourced helper for integration tests that need the two
# lab-host test kernels (built from Debian's linux-source-6.1, cached by
# guest-images/kernel-build.sh):
#
#   base:    guest-images/kconfig/lab-host.config
#   patched: the same + tests/data/kernel/perf-abi-cpu-clock-precise.patch
#            (cpu-clock with precise_ip and without exclude_guest gives
#            EOPNOTSUPP: the 2012 pattern on a software PMU)
#
# Usage:
#   . "$PMUCANARY_TOP/tests/kernels.sh"
#   test_kernels_build [kernel-build.sh options, e.g. --cache DIR --jobs N] || exit 1
#   ... "$PMUCANARY_LAB_KERNEL_BASE" "$PMUCANARY_LAB_KERNEL_PATCHED" ...
#
# test_kernels_build exports PMUCANARY_LAB_KERNEL_BASE and
# PMUCANARY_LAB_KERNEL_PATCHED (absolute bzImage paths). It writes nothing to
# stdout; progress and errors go to stderr; it returns non-zero on failure.
# Cached: well under a second when both exist. Cold: one full build (~8 min
# on 2 cores) plus one incremental build (~1 min).

test_kernels_build() {
	local top kb frag patch base patched
	top=${PMUCANARY_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
	kb=$top/guest-images/kernel-build.sh
	frag=$top/guest-images/kconfig/lab-host.config
	patch=$top/tests/data/kernel/perf-abi-cpu-clock-precise.patch
	local f
	for f in "$kb" "$frag" "$patch"; do
		if [ ! -f "$f" ]; then
			echo "test_kernels_build: missing $f" >&2
			return 1
		fi
	done
	if ! base=$(bash "$kb" "$@" "$frag"); then
		echo "test_kernels_build: building the base lab-host kernel failed" >&2
		return 1
	fi
	if ! patched=$(bash "$kb" "$@" --patch "$patch" "$frag"); then
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
