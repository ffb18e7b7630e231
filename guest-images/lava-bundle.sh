#!/usr/bin/env bash
# Packs a pmucanary binary with the shared libraries it links into the
# tarball `pmucanary lava job --pmucanary-url` fetches on a LAVA device:
#   pmucanary-lava/pmucanary      a launcher (sh) that runs the binary with
#                                 the bundled dynamic loader and libraries,
#                                 so the device's own libc does not matter
#   pmucanary-lava/bin/pmucanary  the binary
#   pmucanary-lava/lib/           ld-linux and every library ldd names
# Usage: guest-images/lava-bundle.sh [BINARY] OUT.tar.gz
set -euo pipefail
if [ $# -eq 1 ]; then bin=build/pmucanary; out=$1
elif [ $# -eq 2 ]; then bin=$1; out=$2
else echo "usage: $0 [BINARY] OUT.tar.gz" >&2; exit 2; fi
[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
d=$tmp/pmucanary-lava
mkdir -p "$d/bin" "$d/lib"
cp "$bin" "$d/bin/pmucanary"
loader=
for l in $(ldd "$bin" | grep -o '/[^ ]*'); do
	cp -L "$l" "$d/lib/"
	case $l in */ld-linux*) loader=$(basename "$l") ;; esac
done
[ -n "$loader" ] || { echo "$0: no dynamic loader in ldd $bin" >&2; exit 2; }
cat >"$d/pmucanary" <<LAUNCH
#!/bin/sh
here=\$(cd "\$(dirname "\$0")" && pwd)
exec "\$here/lib/$loader" --library-path "\$here/lib" "\$here/bin/pmucanary" "\$@"
LAUNCH
chmod 755 "$d/pmucanary"
tar -C "$tmp" -czf "$out" pmucanary-lava
echo "$out: $(du -h "$out" | cut -f1), $(ls "$d/lib" | wc -l) libraries"
