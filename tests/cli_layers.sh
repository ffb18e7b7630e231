#!/usr/bin/env bash
# lib/ is in folders by layer (lib/README.md, ../shared/design.md "Layout"):
# each folder may include only its own headers and those of the folders
# below it, never one above, and no circle of includes, inside a folder
# either. Every folder says what it owns (README.md), no two headers share a
# name (they are included by name alone: -Ilib/<layer> for each), nothing
# lies loose in lib/, and lib/ never includes harness/.
#
# The layer order is written here by hand, from the design, not read from
# the Makefile: a file moved up or down, or a new include, is checked
# against what the design says. The checker is also run on copies of lib/
# with a planted include up, a planted circle and a duplicate name, which it
# must refuse.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
LAYERS=(base abi model host report guests run lab)
fails=0 passes=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check LIBDIR: prints one line per violation, exit 1 if any.
check() {
	local lib=$1 bad=0 i layer f inc dep hdr name
	declare -A rank=() where=()
	for i in "${!LAYERS[@]}"; do
		rank[${LAYERS[$i]}]=$i
	done
	for f in "$lib"/*; do
		[ -d "$f" ] && continue
		[ "$(basename "$f")" = README.md ] && continue
		echo "loose in lib/: $(basename "$f")"; bad=1
	done
	for layer in "$lib"/*/; do
		layer=$(basename "$layer")
		if [ -z "${rank[$layer]+x}" ]; then
			echo "lib/$layer: not a layer of the design (${LAYERS[*]})"; bad=1
			continue
		fi
		[ -s "$lib/$layer/README.md" ] || { echo "lib/$layer: no README.md"; bad=1; }
		for hdr in "$lib/$layer"/*.h; do
			[ -e "$hdr" ] || continue
			name=$(basename "$hdr")
			if [ -n "${where[$name]+x}" ]; then
				echo "$name: in lib/${where[$name]} and lib/$layer"; bad=1
			fi
			where[$name]=$layer
		done
	done
	: >"$tmp/edges"
	for layer in "${LAYERS[@]}"; do
		for f in "$lib/$layer"/*.[ch]; do
			[ -e "$f" ] || continue
			while read -r inc; do
				if [ -e "$top/harness/$inc" ] && [ -z "${where[$inc]+x}" ]; then
					echo "lib/$layer/$(basename "$f"): includes harness/$inc"; bad=1
					continue
				fi
				[ -n "${where[$inc]+x}" ] || continue   # a system or generated header
				dep=${where[$inc]}
				if [ "${rank[$dep]}" -gt "${rank[$layer]}" ]; then
					echo "lib/$layer/$(basename "$f"): includes $inc from lib/$dep, a layer above"
					bad=1
				fi
				# module-level edge (x.c and x.h are one module)
				local from=${f##*/}; from=${from%.[ch]}
				local to=${inc%.h}
				[ "$from" != "$to" ] && echo "$from $to" >>"$tmp/edges"
			done < <(sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
		done
	done
	if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/tsort.err"; then
		echo "a circle of includes: $(grep -v 'input contains a loop' "$tmp/tsort.err" |
			sed 's/^tsort: //' | tr '\n' ' ')"
		bad=1
	fi
	return $bad
}

expect() { # name want(0|1) libdir [grep pattern the output must hold]
	local name=$1 want=$2 lib=$3 pat=${4:-} out rc
	out=$(check "$lib"); rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL: $name: exit $rc, want $want"; echo "$out" | sed 's/^/    /'
		fails=$((fails + 1)); return
	fi
	if [ -n "$pat" ] && ! grep -q -- "$pat" <<<"$out"; then
		echo "FAIL: $name: output lacks '$pat'"; echo "$out" | sed 's/^/    /'
		fails=$((fails + 1)); return
	fi
	passes=$((passes + 1))
}

expect "the tree's lib/ keeps the layers" 0 "$top/lib"

# The checker must be able to fail: plant each kind of violation in a copy.
plant() { rm -rf "$tmp/lib"; cp -r "$top/lib" "$tmp/lib"; }

plant
sed -i '0,/^#include "/s//#include "runner.h"\n#include "/' "$tmp/lib/base/log.c"
expect "an include up (base/log.c -> run/runner.h) is refused" 1 "$tmp/lib" \
	"lib/base/log.c: includes runner.h from lib/run, a layer above"

plant
sed -i '0,/^#include "/s//#include "judge.h"\n#include "/' "$tmp/lib/report/matrix.c"
expect "a circle inside a folder (matrix <-> judge) is refused" 1 "$tmp/lib" "a circle of includes"

plant
cp "$tmp/lib/base/log.h" "$tmp/lib/lab/log.h"
expect "two headers of one name are refused" 1 "$tmp/lib" "log.h: in lib/"

plant
rm "$tmp/lib/host/README.md"
expect "a folder without its README is refused" 1 "$tmp/lib" "lib/host: no README.md"

plant
mkdir "$tmp/lib/misc" && touch "$tmp/lib/misc/x.c" && echo x >"$tmp/lib/misc/README.md"
expect "a folder that is not a layer is refused" 1 "$tmp/lib" "lib/misc: not a layer"

plant
touch "$tmp/lib/stray.c"
expect "a file loose in lib/ is refused" 1 "$tmp/lib" "loose in lib/: stray.c"

plant
sed -i '0,/^#include "/s//#include "commands.h"\n#include "/' "$tmp/lib/model/diff.c"
if [ -e "$top/harness/commands.h" ]; then
	expect "an include of harness/ is refused" 1 "$tmp/lib" "includes harness/commands.h"
fi

echo "cli_layers: $passes of $((passes + fails)) passed"
[ "$fails" = 0 ]
