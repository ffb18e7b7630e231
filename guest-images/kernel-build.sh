#!/bin/bash
# kernel-build.sh — build a small kernel from Debian's linux-source-6.1, cached.
#
#   guest-images/kernel-build.sh [--cache DIR] [--patch FILE]... [--jobs N] FRAGMENT.config
#
# Prints one line on stdout: the absolute path of the built bzImage (in the
# cache). Progress goes to stderr; the full make output goes to a build.log in
# the build directory, whose tail is printed on failure.
#
# Kernel: `make allnoconfig` with KCONFIG_ALLCONFIG=FRAGMENT (everything not in
# the fragment is off), then every `CONFIG_X=value` line of the fragment must
# be in .config exactly (and every `CONFIG_X=n` / `# CONFIG_X is not set` must
# be off): Kconfig silently drops options whose dependencies are missing, and
# this turns that into an error listing them. Then `make -jN bzImage`.
# Patches (--patch, repeatable, unified diffs, -p1) are applied in order,
# without fuzz (offsets are fine; a patch that needs fuzz is an error).
#
# Cache (default /var/cache/pmucanary/kernels as root, else
# ${XDG_CACHE_HOME:-~/.cache}/pmucanary/kernels):
#   DIR/<key16>/      one result: bzImage (0644), config (final .config),
#                     fragment, patches/NN-name, build.log (tail), meta.
#                     key = sha256 over SCRIPT_VERSION, the source identity
#                     (tarball path, size, mtime, linux-source-6.1 package
#                     version), the compiler version, the fragment's bytes and
#                     each patch's bytes in order. ~2 MB per entry.
#   DIR/trees/<tk16>/ one unpacked, built in-tree source tree per
#                     (source, compiler, fragment): linux/ + build.log.
#                     ~1.3 GB unpacked source + the objects of the build.
#                     An unpatched result is that tree's own bzImage. A patched
#                     variant saves a pristine copy of the built tree
#                     (cp -a, mtimes kept), applies the patches in the tree,
#                     runs `make bzImage` there (only what the patches touch
#                     is rebuilt), stores the result and renames the pristine
#                     copy back. It builds at the tree's own path because
#                     objtool's build records absolute paths: a copy built
#                     elsewhere rebuilds objtool and then every object. It
#                     needs as much free space again while it runs.
#   DIR/.lock         flock(1) around every build; results appear by an atomic
#                     rename, so a cache hit never takes the lock.
#   DIR/logs/         full build.log of failed builds.
# `rm -rf DIR/trees` is always safe (the next patched variant rebuilds its
# tree in full); removing DIR/<key16> forces that one result to be rebuilt.
#
# Build dependencies (Debian 12): build-essential bc bison flex libelf-dev
# libssl-dev cpio xz-utils (checked on a cache miss).
#
# Environment: PMUCANARY_KERNEL_TARBALL (default
# /usr/src/linux-source-6.1.tar.xz), PMUCANARY_KERNEL_PACKAGE (default
# linux-source-6.1; its dpkg version is part of the source identity).

set -euo pipefail
export LC_ALL=C

SCRIPT_VERSION=1
PROG=${0##*/}

TARBALL=${PMUCANARY_KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
SRC_PACKAGE=${PMUCANARY_KERNEL_PACKAGE:-linux-source-6.1}

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
usage() {
	cat >&2 <<EOF
usage: $PROG [--cache DIR] [--patch FILE]... [--jobs N] FRAGMENT.config
Builds a kernel from $TARBALL (allnoconfig + FRAGMENT [+ patches]) and prints
the absolute path of the cached bzImage.
EOF
	exit "${1:-2}"
}

# ---------------------------------------------------------------- arguments
CACHE=
JOBS=
PATCHES=()
FRAGMENT=
while [ $# -gt 0 ]; do
	case $1 in
	--cache) [ $# -ge 2 ] || usage; CACHE=$2; shift 2 ;;
	--cache=*) CACHE=${1#*=}; shift ;;
	--patch) [ $# -ge 2 ] || usage; PATCHES+=("$2"); shift 2 ;;
	--patch=*) PATCHES+=("${1#*=}"); shift ;;
	--jobs|-j) [ $# -ge 2 ] || usage; JOBS=$2; shift 2 ;;
	--jobs=*) JOBS=${1#*=}; shift ;;
	-h|--help) usage 0 ;;
	--) shift; break ;;
	-*) log "unknown option: $1"; usage ;;
	*) [ -z "$FRAGMENT" ] || { log "more than one fragment given"; usage; }
	   FRAGMENT=$1; shift ;;
	esac
done
if [ $# -gt 0 ]; then
	[ -z "$FRAGMENT" ] && [ $# -eq 1 ] || usage
	FRAGMENT=$1
fi
[ -n "$FRAGMENT" ] || usage
[ -f "$FRAGMENT" ] && [ -r "$FRAGMENT" ] || die "fragment not readable: $FRAGMENT"
FRAGMENT=$(realpath -e -- "$FRAGMENT")
for i in "${!PATCHES[@]}"; do
	p=${PATCHES[$i]}
	[ -f "$p" ] && [ -r "$p" ] || die "patch not readable: $p"
	PATCHES[i]=$(realpath -e -- "$p")
done
if [ -z "$JOBS" ]; then
	JOBS=$(nproc 2>/dev/null || echo 1)
fi
case $JOBS in ''|*[!0-9]*|0) die "--jobs wants a positive integer, got '$JOBS'" ;; esac

if [ -z "$CACHE" ]; then
	if [ "$(id -u)" = 0 ]; then
		CACHE=/var/cache/pmucanary/kernels
	else
		CACHE=${XDG_CACHE_HOME:-${HOME:?HOME is not set; pass --cache DIR}/.cache}/pmucanary/kernels
	fi
fi
case $CACHE in /*) ;; *) CACHE=$PWD/$CACHE ;; esac

# ---------------------------------------------------------------- keys
[ -f "$TARBALL" ] || die "kernel source tarball not found: $TARBALL (apt-get install $SRC_PACKAGE)"
src_stat=$(stat -L -c '%s %Y' -- "$TARBALL")
src_size=${src_stat% *}
src_mtime=${src_stat#* }
src_pkgver=$(dpkg-query -W -f='${Version}' "$SRC_PACKAGE" 2>/dev/null || true)
[ -n "$src_pkgver" ] || src_pkgver=none
cc_version=$({ gcc --version 2>/dev/null || echo 'gcc missing'; } | head -n1)

# key input stream: every item as "name length\n" + bytes, so no two
# different input sets can produce the same stream.
item() { # name string
	printf '%s %d\n%s' "$1" "${#2}" "$2"
}
item_file() { # name path
	printf '%s %d\n' "$1" "$(stat -L -c %s -- "$2")"
	cat -- "$2"
}
tree_inputs() {
	item script-version "$SCRIPT_VERSION"
	item source "$TARBALL $src_size $src_mtime $SRC_PACKAGE=$src_pkgver"
	item compiler "$cc_version"
	item_file fragment "$FRAGMENT"
}
result_inputs() {
	tree_inputs
	local p
	for p in "${PATCHES[@]}"; do
		item_file patch "$p"
	done
}
TREE_KEY=$(tree_inputs | sha256sum | cut -c1-64)
KEY=$(result_inputs | sha256sum | cut -c1-64)
KEY16=${KEY:0:16}
TK16=${TREE_KEY:0:16}
OUT=$CACHE/$KEY16

# ---------------------------------------------------------------- cache hit
if [ -f "$OUT/bzImage" ]; then
	printf '%s\n' "$OUT/bzImage"
	exit 0
fi

# ---------------------------------------------------------------- miss: build
check_deps() {
	local missing=() c
	for c in gcc make ld; do
		command -v "$c" >/dev/null 2>&1 || { missing+=(build-essential); break; }
	done
	[ -e /usr/include/stdio.h ] || missing+=(build-essential)
	command -v bc >/dev/null 2>&1 || missing+=(bc)
	command -v bison >/dev/null 2>&1 || missing+=(bison)
	command -v flex >/dev/null 2>&1 || missing+=(flex)
	[ -e /usr/include/gelf.h ] || [ -e /usr/include/libelf.h ] || missing+=(libelf-dev)
	[ -e /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
	command -v cpio >/dev/null 2>&1 || missing+=(cpio)
	command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
	command -v patch >/dev/null 2>&1 || missing+=(patch)
	command -v perl >/dev/null 2>&1 || missing+=(perl)
	command -v flock >/dev/null 2>&1 || missing+=(util-linux)
	if [ ${#missing[@]} -gt 0 ]; then
		die "missing build dependencies; install them with: apt-get install $(printf '%s\n' "${missing[@]}" | sort -u | paste -sd' ')"
	fi
}
check_deps

# Directories QEMU (user libvirt-qemu) must traverse: 0755 whatever the umask.
mkdir_public() { # dir
	local d=$1 parts=() p
	while [ ! -d "$d" ]; do parts=("$d" "${parts[@]}"); d=$(dirname -- "$d"); done
	for p in "${parts[@]}"; do
		mkdir -- "$p" 2>/dev/null || [ -d "$p" ] || die "cannot create $p (use --cache DIR)"
		chmod 0755 -- "$p"
	done
}
mkdir_public "$CACHE"
mkdir -p -- "$CACHE/trees" "$CACHE/logs" || die "cannot write to $CACHE (use --cache DIR)"

exec 9>>"$CACHE/.lock"
if ! flock -n 9; then
	log "waiting for the cache lock ($CACHE/.lock)"
	flock 9
fi
if [ -f "$OUT/bzImage" ]; then # built by another invocation meanwhile
	printf '%s\n' "$OUT/bzImage"
	exit 0
fi
[ ! -e "$OUT" ] || rm -rf -- "$OUT" # incomplete leftover
# Every writer holds the lock: any temporary directory left now is from a
# killed invocation.
rm -rf -- "$CACHE"/.tmp.* "$CACHE"/trees/.tmp.*

TMPS=()
RESTORE_TREE=
# Put a tree's pristine copy back after a patched build (or its remains).
restore_tree() {
	local tree=${1:-$RESTORE_TREE}
	[ -n "$tree" ] || return 0
	rm -rf -- "$tree/.pristine.tmp"
	if [ -d "$tree/linux.pristine" ]; then
		rm -rf -- "$tree/linux"
		mv -T -- "$tree/linux.pristine" "$tree/linux"
	fi
	rm -f -- "$tree/patched.log"
	RESTORE_TREE=
}
cleanup() {
	local t
	for t in "${TMPS[@]}"; do [ -n "$t" ] && rm -rf -- "$t"; done
	restore_tree
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

now() { date +%s; }
fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

export KBUILD_BUILD_USER=pmucanary KBUILD_BUILD_HOST=pmucanary

run_make() { # tree logfile what... ; make output appended to logfile
	local tree=$1 logf=$2
	shift 2
	if ! make -C "$tree" "$@" >>"$logf" 2>&1; then
		log "make $* failed; last lines of $logf:"
		tail -n 40 -- "$logf" >&2
		return 1
	fi
}

save_failed_log() { # logfile tag
	if cp -- "$1" "$CACHE/logs/$2.failed.log" 2>/dev/null; then
		log "full log: $CACHE/logs/$2.failed.log"
	fi
}

# Every CONFIG_X=value line of the fragment must be in .config exactly.
verify_config() { # fragment dotconfig
	local frag=$1 cfg=$2 bad=() line name want got
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%$'\r'}
		case $line in
		CONFIG_*=*)
			name=${line%%=*}; want=${line#*=}
			got=$(grep -m1 -E "^($name=|# $name is not set)" "$cfg" || true)
			case $want in
			n) case $got in "$name="*) bad+=("$line (got: $got)") ;; esac ;;
			*) [ "$got" = "$line" ] || bad+=("$line (got: ${got:-absent})") ;;
			esac ;;
		"# CONFIG_"*" is not set")
			name=${line#\# }; name=${name%% *}
			got=$(grep -m1 -E "^$name=" "$cfg" || true)
			[ -z "$got" ] || bad+=("$line (got: $got)") ;;
		esac
	done <"$frag"
	if [ ${#bad[@]} -gt 0 ]; then
		log "these fragment options did not stick (missing dependencies?):"
		printf '  %s\n' "${bad[@]}" >&2
		return 1
	fi
}

# ---- the base tree for (source, compiler, fragment)
TREE=$CACHE/trees/$TK16
if [ -d "$TREE/linux.pristine" ] || [ -e "$TREE/.pristine.tmp" ]; then
	log "restoring $TREE after an interrupted patched build"
	restore_tree "$TREE"
fi
T0=$(now)
if [ ! -f "$TREE/.built" ]; then
	if [ ! -d "$TREE/linux" ]; then
		rm -rf -- "$TREE"
		tmp=$CACHE/trees/.tmp.$TK16.$$
		TMPS+=("$tmp")
		mkdir -p -- "$tmp/linux"
		log "unpacking $(basename -- "$TARBALL") into $TREE"
		tar -xJf "$TARBALL" -C "$tmp/linux" --strip-components=1 ||
			die "could not unpack $TARBALL"
		cp -- "$FRAGMENT" "$tmp/fragment"
		mv -T -- "$tmp" "$TREE"
		TMPS=()
	else
		log "resuming the build of $TREE"
	fi
	blog=$TREE/build.log
	: >"$blog"
	log "configuring (allnoconfig + $(basename -- "$FRAGMENT"))"
	if ! run_make "$TREE/linux" "$blog" KCONFIG_ALLCONFIG="$TREE/fragment" allnoconfig; then
		die "allnoconfig failed"
	fi
	if ! verify_config "$TREE/fragment" "$TREE/linux/.config"; then
		rm -rf -- "$TREE"
		die "fragment $FRAGMENT does not stick under allnoconfig"
	fi
	log "building bzImage (full build, -j$JOBS; log: $blog)"
	if ! run_make "$TREE/linux" "$blog" -j"$JOBS" bzImage; then
		save_failed_log "$blog" "tree-$TK16"
		die "base kernel build failed (tree kept in $TREE for the next attempt)"
	fi
	verify_config "$TREE/fragment" "$TREE/linux/.config" || die "fragment lost after build"
	T1=$(now)
	echo "$((T1 - T0))" >"$TREE/build-seconds"
	touch "$TREE/.built"
	log "base tree built in $(fmt_secs $((T1 - T0)))"
fi

# ---- store one result directory from a built tree
store_result() { # tree-linux-dir logfile key16 kind seconds
	local src=$1 blog=$2 key=$3 kind=$4 secs=$5 tmp i=0 p
	tmp=$CACHE/.tmp.$key.$$
	TMPS+=("$tmp")
	rm -rf -- "$tmp"
	mkdir -p -- "$tmp/patches"
	cp -- "$src/arch/x86/boot/bzImage" "$tmp/bzImage"
	cp -- "$src/.config" "$tmp/config"
	cp -- "$FRAGMENT" "$tmp/fragment"
	if [ "$key" = "$KEY16" ]; then
		for p in "${PATCHES[@]}"; do
			i=$((i + 1))
			cp -- "$p" "$tmp/patches/$(printf '%02d' $i)-$(basename -- "$p")"
		done
	fi
	tail -n 200 -- "$blog" >"$tmp/build.log"
	{
		echo "script_version=$SCRIPT_VERSION"
		echo "key=$( [ "$key" = "$KEY16" ] && echo "$KEY" || echo "$TREE_KEY")"
		echo "tree_key=$TREE_KEY"
		echo "source=$TARBALL"
		echo "source_size=$src_size"
		echo "source_mtime=$src_mtime"
		echo "source_package=$SRC_PACKAGE=$src_pkgver"
		echo "compiler=$cc_version"
		echo "fragment=$FRAGMENT"
		echo "fragment_sha256=$(sha256sum <"$FRAGMENT" | cut -c1-64)"
		if [ "$key" = "$KEY16" ]; then
			for p in "${PATCHES[@]}"; do
				echo "patch=$p sha256=$(sha256sum <"$p" | cut -c1-64)"
			done
		fi
		echo "kernel_release=$(cat "$src/include/config/kernel.release" 2>/dev/null || echo unknown)"
		echo "build_kind=$kind"
		echo "build_seconds=$secs"
		echo "jobs=$JOBS"
		echo "built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	} >"$tmp/meta"
	chmod 0755 "$tmp" "$tmp/patches"
	chmod 0644 "$tmp"/bzImage "$tmp"/config "$tmp"/fragment "$tmp"/build.log "$tmp"/meta
	[ -z "$(ls -A "$tmp/patches")" ] || chmod 0644 "$tmp"/patches/*
	[ ! -e "$CACHE/$key" ] || rm -rf -- "${CACHE:?}/$key"
	mv -T -- "$tmp" "$CACHE/$key"
}

if [ ${#PATCHES[@]} -eq 0 ]; then
	secs=$(cat "$TREE/build-seconds" 2>/dev/null || echo 0)
	store_result "$TREE/linux" "$TREE/build.log" "$KEY16" full "$secs"
	printf '%s\n' "$OUT/bzImage"
	exit 0
fi

# The unpatched result of this tree comes for free: store it too (its key
# has no patch items, so it is the tree key).
BASE_KEY16=$TK16
if [ ! -f "$CACHE/$BASE_KEY16/bzImage" ]; then
	secs=$(cat "$TREE/build-seconds" 2>/dev/null || echo 0)
	store_result "$TREE/linux" "$TREE/build.log" "$BASE_KEY16" full "$secs"
fi

# ---- patched variant: build in the tree itself, on a copy's return ticket
# The tree keeps its canonical path during the build: objtool's own build
# (tools/objtool) records absolute paths, so a tree built at another path
# rebuilds objtool, and with it every object. So: copy the built tree aside
# as linux.pristine (cp -a keeps mtimes), patch and `make bzImage` in place
# (only what the patches touch is rebuilt), store the result, then put the
# pristine copy back (a rename: its contents still match the path).
T0=$(now)
# Fail fast, before copying 1.5 GB, when the first patch does not apply.
if ! out=$(patch -p1 -N --batch --fuzz=0 --dry-run -d "$TREE/linux" -i "${PATCHES[0]}" 2>&1); then
	printf '%s\n' "$out" | tail -n 20 >&2
	die "patch does not apply to $SRC_PACKAGE: ${PATCHES[0]}"
fi
log "saving a pristine copy of the built tree $TREE"
rm -rf -- "$TREE/.pristine.tmp"
cp -a -- "$TREE/linux" "$TREE/.pristine.tmp" || die "could not copy $TREE/linux"
mv -T -- "$TREE/.pristine.tmp" "$TREE/linux.pristine"
RESTORE_TREE=$TREE
Tc=$(now)
blog=$TREE/patched.log
: >"$blog"
for p in "${PATCHES[@]}"; do
	log "applying $(basename -- "$p")"
	if ! patch -p1 -N --batch --fuzz=0 -d "$TREE/linux" -i "$p" >>"$blog" 2>&1; then
		tail -n 20 -- "$blog" >&2
		die "patch does not apply: $p"
	fi
done
log "building bzImage (incremental, -j$JOBS; log: $blog)"
if ! run_make "$TREE/linux" "$blog" -j"$JOBS" bzImage; then
	save_failed_log "$blog" "$KEY16"
	die "patched kernel build failed"
fi
verify_config "$FRAGMENT" "$TREE/linux/.config" || die "fragment options lost after patching"
T1=$(now)
store_result "$TREE/linux" "$blog" "$KEY16" incremental "$((T1 - T0))"
restore_tree
T2=$(now)
log "patched kernel built in $(fmt_secs $((T1 - T0))) (copy $(fmt_secs $((Tc - T0))), patch+make $(fmt_secs $((T1 - Tc)))); tree restored in $(fmt_secs $((T2 - T1)))"
printf '%s\n' "$OUT/bzImage"
