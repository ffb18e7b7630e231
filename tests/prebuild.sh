#!/usr/bin/env bash
# tests/prebuild.sh WHAT... — builds, ahead of the suites that need them,
# what those suites would otherwise build on the test run's critical path:
#   distro  the Debian image of it_distro.sh (tests/distro_image.sh)
#   small   the small guest kernel of it_smallkernel.sh
#   lab     the lab-host kernels of the lab suites, the replay ones too
# in that order (the order the suites come in). tests/run-tests starts it
# in the background under nice 19 when a pass includes those suites: most
# unit and integration suites run one process at a time, and on a 2-core
# machine the other core is mostly idle; the builds take that time and
# give it back at once when a suite wants it (nice 19, for its processes
# and for the autogroup of the session run-tests starts it in: a weight
# of 15 against the suites' 1024).
#
# Each build is the one the suite does itself when it finds nothing
# cached, through the same cache and its lock (a suite that comes while a
# build runs waits for it and finds its result). A build that fails here
# is only reported: the suite builds again and fails in its own words.
# Prints one line per item to stdout ("prebuild: small kernel ready (512 s
# after its start)"), the builders' output to stderr. Exit 0, or 1 when an
# item failed. Stopped (SIGTERM to its session), it removes its work
# directory; a build cut short leaves what the next build of the same
# cache removes under its lock.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${PMUCANARY_BUILD:-$top/build}
export PMUCANARY_TOP=$top
rc=0
t0=$SECONDS
work=
trap '[ -z "$work" ] || rm -rf "$work"' EXIT
trap 'exit 143' TERM INT
say() { echo "prebuild: $* ($((SECONDS - t0)) s after its start)"; }

[ "$(id -u)" = 0 ] || { say "not root: nothing to build into /var/cache/pmucanary"; exit 0; }
for what in "$@"; do
	case $what in
	distro)
		command -v mmdebstrap >/dev/null || { say "no mmdebstrap: distro image left to it_distro.sh"; continue; }
		work=$(mktemp -d /var/tmp/prebuild.XXXXXX) || exit 1
		. "$top/tests/distro_image.sh"
		if distro_image_build "$build/tests/helper_mkdebian" "$work" >&2; then
			say "distro image ready"
		else
			say "distro image FAILED (it_distro.sh builds it again)"; rc=1
		fi
		rm -rf "$work"
		work= ;;
	small|lab)
		[ -f /usr/src/linux-source-6.1.tar.xz ] ||
			{ say "no linux-source-6.1: $what kernels left to their suites"; continue; }
		. "$top/tests/kernels.sh"
		if [ "$what" = small ]; then
			if test_small_kernel_build >&2; then say "small kernel ready"
			else say "small kernel FAILED (it_smallkernel.sh builds it again)"; rc=1; fi
		else
			if test_kernels_build >&2 && test_replay_kernels_build >&2; then say "lab kernels ready"
			else say "lab kernels FAILED (the lab suites build them again)"; rc=1; fi
		fi ;;
	*)
		echo "usage: tests/prebuild.sh [distro|small|lab]..." >&2; exit 2 ;;
	esac
done
exit $rc
