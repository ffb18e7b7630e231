#!/usr/bin/env bash
# CLI tests for `pmucanary diff BASE NEW`.
#
# The exit code is the `git bisect run` contract (design.md "Contracts"):
#   0    good  - no regression
#   1    bad   - a regression: a cell that was OK is now anything else, or a
#                cell that newly harms a guest or the host
#   125  skip  - cannot tell: INFRA on either side, a run verdict INFRA, or
#                NEW lacks cells BASE had (and no regression was measured)
#   2    bad input (unreadable file, bad JSON, wrong schema); note that
#        `git bisect run` treats 2 as "bad", so a bisect script should turn
#        pmucanary's 2 into something louder (exit 128+ aborts the bisect):
#
#     # bisect.sh: build/boot the kernel, run, then
#     pmucanary diff base/run.json "$new"/run.json; rc=$?
#     [ $rc -eq 2 ] && exit 255; exit $rc
#
# Needs $PMUCANARY_BIN and $PMUCANARY_TOP (tests/run-tests sets both).
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
d=$top/tests/data/diff
fails=0 n=0 skips=()

# expect RC BASE NEW [grep-pattern-in-output]
expect() {
	local want=$1 base=$2 new=$3 pat=${4:-} out rc
	n=$((n + 1))
	out=$("$bin" diff "$base" "$new" 2>&1); rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: diff $(basename "$base") $(basename "$new"): exit $rc, want $want"
		echo "$out" | sed 's/^/    /'
		fails=$((fails + 1)); return
	fi
	if [ -n "$pat" ] && ! grep -q -- "$pat" <<<"$out"; then
		echo "FAIL: diff $(basename "$base") $(basename "$new"): no '$pat' in output"
		echo "$out" | sed 's/^/    /'
		fails=$((fails + 1)); return
	fi
	echo "ok: diff $(basename "$base") $(basename "$new") -> $rc"
}

# The 2012 story.
expect 1   "$d/probe-3.6.json" "$d/probe-3.7.json" "ABI regressions (2)"
expect 0   "$d/run-3.6.json"   "$d/run-3.7.json"   "fenced (2)"
expect 0   "$d/run-3.6.json"   "$d/run-3.8.json"   "fixes (2)"
expect 0   "$d/probe-3.7.json" "$d/probe-3.8.json" "new capability (2)"
# Harm, INFRA, coverage.
expect 1   "$d/run-3.8.json" "$d/run-3.8-harm.json" "harm regressions (2)"
expect 125 "$d/run-3.8.json" "$d/run-3.8-infra-cell.json" "INFRA"
expect 125 "$d/run-3.8-infra-cell.json" "$d/run-3.8.json"
expect 125 "$d/run-3.8.json" "$d/run-3.8-infra-verdict.json" "run verdict INFRA"
expect 125 "$d/run-3.8.json" "$d/run-3.8-missing.json" "only in BASE (1)"
expect 0   "$d/run-3.8.json" "$d/run-3.8-extra.json" "only in NEW (1)"
# Bad input: message names the file (and line:column, or the schema).
expect 2   "$d/run-3.8.json" "$d/truncated.json" "truncated.json:107:"
expect 2   "$d/schema-3.json" "$d/run-3.8.json" 'pmucanary/3'
expect 2   "$d/run-3.8.json" "$d/bad-outcome.json" "GUEST_EXPLODED"
expect 2   "$d/run-3.8.json" "$d/no-such-file.json" "no-such-file.json"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf 'not json' >"$tmp/garbage.json"
expect 2   "$d/run-3.8.json" "$tmp/garbage.json" "garbage.json:1:"

# Result files written as NAME.gz (compact storage of a full sweep): read
# the same as the plain file; a cut or corrupt one is bad input naming it.
gzip -c "$d/probe-3.7.json" >"$tmp/probe-3.7.json.gz"
expect 1   "$d/probe-3.6.json" "$tmp/probe-3.7.json.gz" "ABI regressions (2)"
head -c 300 "$tmp/probe-3.7.json.gz" >"$tmp/cut.json.gz"
expect 2   "$d/probe-3.6.json" "$tmp/cut.json.gz" "cut.json.gz: not a whole gzip file"
printf '\037\213garbage' >"$tmp/corrupt.json.gz"
expect 2   "$d/probe-3.6.json" "$tmp/corrupt.json.gz" "corrupt.json.gz: not a whole gzip file"
gzip -c "$tmp/garbage.json" >"$tmp/garbage.json.gz"
expect 2   "$d/run-3.8.json" "$tmp/garbage.json.gz" "garbage.json.gz:1:"
# The trailer is checked: a CRC-32 or length that does not match the data,
# and bytes after it, are refused (the data itself may still inflate).
gzip -c "$d/run-3.8.json" >"$tmp/crc.json.gz"
size=$(stat -c %s "$tmp/crc.json.gz")
printf '\377' | dd of="$tmp/crc.json.gz" bs=1 seek=$((size - 8)) conv=notrunc 2>/dev/null
expect 2   "$d/run-3.8.json" "$tmp/crc.json.gz" "crc.json.gz: not a whole gzip file: incorrect data check"
gzip -c "$d/run-3.8.json" >"$tmp/len.json.gz"
printf '\377' | dd of="$tmp/len.json.gz" bs=1 seek=$((size - 2)) conv=notrunc 2>/dev/null
expect 2   "$d/run-3.8.json" "$tmp/len.json.gz" "len.json.gz: not a whole gzip file: incorrect length check"
{ gzip -c "$d/run-3.8.json"; printf 'tail'; } >"$tmp/tail.json.gz"
expect 2   "$d/run-3.8.json" "$tmp/tail.json.gz" "tail.json.gz: not a whole gzip file: 4 byte(s) after"

# Usage.
n=$((n + 1)); "$bin" diff "$d/run-3.8.json" >/dev/null 2>&1
[ $? -eq 2 ] && echo "ok: one argument -> 2" || { echo "FAIL: one argument"; fails=$((fails + 1)); }
n=$((n + 1)); "$bin" diff --bogus a b >/dev/null 2>&1
[ $? -eq 2 ] && echo "ok: bad option -> 2" || { echo "FAIL: bad option"; fails=$((fails + 1)); }

# --json: same exit code, machine-readable groups.
n=$((n + 1))
"$bin" diff --json "$d/probe-3.6.json" "$d/probe-3.7.json" >"$tmp/out.json"; rc=$?
# grep, not a JSON tool: CI machines need nothing beyond coreutils here.
if [ $rc -eq 1 ] && grep -q '"verdict": "REGRESSION"' "$tmp/out.json" &&
   grep -q '"abi_regression": 2' "$tmp/out.json" &&
   grep -q '"changed_errno": 1' "$tmp/out.json" &&
   grep -q '"kernel": "3.7.0"' "$tmp/out.json" &&
   grep -A8 '"abi_regression": \[' "$tmp/out.json" | grep -q '"new": "EOPNOTSUPP"'
then echo "ok: --json"; else echo "FAIL: --json (exit $rc)"; fails=$((fails + 1)); fi

# pmucanary/1 files (all of tests/data) diff and matrix exactly as the same
# data written as pmucanary/2: attrs once, the cell's attr the final one,
# indices, REJECTED for the profile's refusals. Same names in two
# directories so that the outputs, which name the files, compare whole.
if command -v jq >/dev/null; then
	mkdir -p "$tmp/v1" "$tmp/v2"
	m=$top/tests/data/matrix
	for f in "$d"/probe-3.[678].json "$d"/run-3.*.json "$m"/*.json; do
		b=$(basename "$f")
		cp "$f" "$tmp/v1/$b"
		jq '
		def final: if ((.tries // []) | length) > 0 then .tries[-1].attr else .attr end;
		([.cells[] | (select(.error == null) | final), ((.tries // [])[] | .attr)]
		 | map(select(. != null)) | unique) as $a
		| def ix($x): $a | index([$x]);
		.schema = "pmucanary/2" | .attrs = $a
		| .cells |= map(final as $f
			| if .error then .outcome = "REJECTED" | del(.attr) else .attr = ix($f) end
			| .tries = [(.tries // [])[] | .attr = ix(.attr)])' "$f" >"$tmp/v2/$b" || exit 1
	done
	same() {
		local what=$1; shift
		n=$((n + 1))
		(cd "$tmp/v1" && "$bin" "$@" >"$tmp/out1" 2>&1; echo "exit $?" >>"$tmp/out1")
		(cd "$tmp/v2" && "$bin" "$@" >"$tmp/out2" 2>&1; echo "exit $?" >>"$tmp/out2")
		if cmp -s "$tmp/out1" "$tmp/out2" && grep -q . "$tmp/out1"; then
			echo "ok: /1 and /2 alike: $what"
		else
			echo "FAIL: /1 and /2 differ: $what"; diff "$tmp/out1" "$tmp/out2" | head -20 | sed 's/^/    /'
			fails=$((fails + 1))
		fi
	}
	same "diff probe-3.6 probe-3.7" diff probe-3.6.json probe-3.7.json
	same "diff run-3.6 run-3.7" diff run-3.6.json run-3.7.json
	same "diff run-3.8 run-3.8-harm" diff run-3.8.json run-3.8-harm.json
	same "diff --json run-3.8 run-3.8-missing" diff --json run-3.8.json run-3.8-missing.json
	same "matrix of runs" matrix run-3.6.json run-3.7.json run-3.8.json
	same "matrix --all of runs" matrix --all run-3.6.json run-3.7.json run-3.8.json
	same "matrix of tests/data/matrix" matrix amd-3.6.json hsw-3.6.json ivb-3.6.json tcg-6.1.json
	same "matrix --all of tests/data/matrix" matrix --all amd-3.6.json hsw-3.6.json ivb-3.6.json tcg-6.1.json
	same "matrix --junit/--kcidb" matrix --errata "$top/scenarios/errata.ini" --junit /dev/stdout \
		--kcidb /dev/stdout ivb-3.6.json hsw-3.6.json tcg-6.1.json
else
	skips+=("no jq: pmucanary/1 files not compared with the same data as /2")
fi

echo "$((n - fails)) of $n passed"
[ $fails -eq 0 ] || exit 1
# tests/run-tests' skip (PMUCANARY_REQUIRE_ALL=1 makes it a failure)
if [ ${#skips[@]} -gt 0 ]; then
	msg=$(printf '%s; ' "${skips[@]}")
	echo "SKIP: ${msg%; }"
	exit 77
fi
