# tests/distro_image.sh — sourced: the stock Debian disk image that
# tests/it_distro.sh boots, built the way a vendor builds one:
#  - mmdebstrap builds a stock Debian root (systemd, udev, Debian's kernel
#    and initramfs, grub-pc) from this machine's apt sources;
#  - tests/helper_mkdebian puts it on a disk with libguestfs and runs the
#    image's own grub-install and update-grub (Debian's default grub config,
#    whose terminal is gfxterm).
# Cached for a week under /var/cache/pmucanary/distro (as root), keyed by
# the suite, the package list, the apt sources and the helper's source; a
# fresh machine builds it (2-5 min here, most of it apt). One builder at a
# time: flock on the cache directory, so tests/prebuild.sh can build it in
# the background while it_distro.sh, started meanwhile, waits for it.
#
# Usage:
#   . "$PMUCANARY_TOP/tests/distro_image.sh"
#   distro_image_build MKDEBIAN WORKDIR || exit 1
#   ... "$DISTRO_IMG" ...
# Prints one line ("image: cached PATH" or "image: built PATH in N s") or,
# on failure, the failing tool's last lines and a FAIL line; returns 1 then.

distro_image_build() {
	local mkdeb=$1 work=$2 top suite include key cache img f t0=$SECONDS
	local sources=()
	top=${PMUCANARY_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
	. /etc/os-release
	suite=${VERSION_CODENAME:-bookworm}
	include=systemd-sysv,udev,linux-image-amd64,initramfs-tools,grub-pc,e2fsprogs
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -s "$f" ] && grep -qvE '^[[:space:]]*(#|$)' "$f" && sources+=("$f")
	done
	[ ${#sources[@]} -gt 0 ] || { echo "FAIL this machine has no apt sources to build from"; return 1; }
	key=$( { echo "$suite $include"; cat "${sources[@]}" "$top/tests/helper_mkdebian.c"; } |
		sha256sum | cut -c1-16)
	mkdir -p /var/cache/pmucanary/distro || return 1
	chmod 755 /var/cache/pmucanary /var/cache/pmucanary/distro
	cache=/var/cache/pmucanary/distro/$key
	img=$cache/debian.img
	# fd 8: the cache's lock, held for the block (closed when it ends)
	{
		if ! flock -n 8; then
			echo "image: waiting for another builder (/var/cache/pmucanary/distro/.lock)"
			flock 8
		fi
		if [ -f "$img" ] && [ -z "$(find "$img" -mtime +7)" ]; then
			echo "image: cached $img"
		else
			rm -rf "$cache"
			mkdir -p "$cache"
			if ! mmdebstrap --variant=minbase --include="$include" "$suite" "$work/rootfs.tar" \
				"${sources[@]}" > "$work/mmdebstrap.log" 2>&1; then
				tail -20 "$work/mmdebstrap.log"
				echo "FAIL mmdebstrap could not build a $suite root from ${sources[*]}"
				return 1
			fi
			if ! "$mkdeb" "$work/rootfs.tar" "$cache/debian.img.tmp" 2048 > "$work/mkdebian.log" 2>&1; then
				cat "$work/mkdebian.log"
				echo "FAIL helper_mkdebian could not make a disk of the root"
				rm -f "$work/rootfs.tar"
				return 1
			fi
			rm -f "$work/rootfs.tar"
			mv "$cache/debian.img.tmp" "$img"
			echo "image: built $img in $((SECONDS - t0)) s"
		fi
	} 8>>/var/cache/pmucanary/distro/.lock || return 1
	chmod 755 "$cache"
	chmod 644 "$img"
	DISTRO_IMG=$img
}
