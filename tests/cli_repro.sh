#!/usr/bin/env bash
# CLI tests for `pmucanary repro RESULT [--cell PROFILE:SPEC]... [--out DIR]`.
#
# The honest check: `pmucanary probe` opens a small sweep on this host's
# real kernel and records what it did; the reproducers of its errno cells
# (one per distinct attr and errno) and of a few OK cells are built with
# `cc -Wall` (no warning allowed) and run as root, and each must exit 0:
# the kernel did again what the probe recorded. The expected values come
# from the kernel through probe, not from repro. Then two lies planted in
# a copy of the file (an errno it did not give, an errno for an attr that
# opens) must make the reproducers exit 1: the check is not vacuous.
# Bad input (a missing file, a --cell not in the file, a cell without an
# attr) exits 2 with a message naming it.
#
# Needs root (system-wide opens) and cc; without root the rest runs and the
# suite skips (exit 77). Needs $PMUCANARY_BIN and $PMUCANARY_TOP.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# expect_usage WHAT PATTERN ARGS...: exit 2 and PATTERN on stderr
expect_usage() {
	local what=$1 pat=$2 out rc
	shift 2
	n=$((n + 1))
	out=$("$bin" repro "$@" 2>&1 >/dev/null); rc=$?
	if [ "$rc" != 2 ]; then
		fail "$what: exit $rc, want 2"; echo "$out" | sed 's/^/    /'; return
	fi
	if ! grep -q -- "$pat" <<<"$out"; then
		fail "$what: no '$pat' in: $out"; return
	fi
	ok "$what -> 2: $out"
}

# build_run DIR WANT_RC [DWELL_MS]: cc -Wall with nothing on stderr, then
# ./repro exits WANT_RC.
build_run() {
	local d=$1 want=$2 cerr out rc
	n=$((n + 1))
	cerr=$(cd "$d" && cc -Wall -o repro repro.c 2>&1) || { fail "$d: cc failed: $cerr"; return; }
	[ -z "$cerr" ] || { fail "$d: cc -Wall warned: $cerr"; return; }
	out=$(cd "$d" && ./repro ${3:-} 2>&1); rc=$?
	if [ "$rc" != "$want" ]; then
		fail "$(basename "$d"): exit $rc, want $want: $out"; return
	fi
	ok "$(basename "$d") -> $rc: $out"
}

# --- bad input, no root needed
data=$top/tests/data/repro/run.json
expect_usage "no RESULT" "need one RESULT"
expect_usage "missing file" "$tmp/none.json" "$tmp/none.json"
expect_usage "a --cell not in the file" "no cell perf-3.6:nosuch" "$data" --cell perf-3.6:nosuch
expect_usage "a --cell without profile" "no cell cycles:pp" "$data" --cell cycles:pp
expect_usage "a cell without an attr" "has no attr" "$data" --cell perf-3.1:cycles:H
expect_usage "an INFRA cell" "INFRA" "$data" --cell perf-modern:task-clock
expect_usage "a bad --dwell" "option --dwell" "$data" --dwell 1e3
touch "$tmp/afile"
expect_usage "--out naming a file" "not a directory" "$data" --out "$tmp/afile"
rm "$tmp/afile"
[ -z "$(ls -A "$tmp")" ] || fail "bad input left files: $(ls -A "$tmp")"

# --- a hand-written run with a hostile spec: every default cell (harm and
# errno, with an attr) gets a directory, and every repro.c builds clean
n=$((n + 1))
mkdir -p "$tmp/h" && cp "$data" "$tmp/h/run.json"
if out=$("$bin" repro "$tmp/h/run.json"); then
	got=$(ls "$tmp/h/repro" | wc -l)
	[ "$got" = 4 ] && ok "default cells of run.json: 4 directories under repro/ next to it" ||
		fail "default cells: $got directories, want 4: $out"
	for d in "$tmp"/h/repro/*/; do
		n=$((n + 1))
		cerr=$(cd "$d" && cc -Wall -Wextra -o repro repro.c 2>&1)
		[ $? = 0 ] && [ -z "$cerr" ] && ok "builds: $(basename "$d")" ||
			fail "$(basename "$d"): $cerr"
	done
else
	fail "repro of run.json failed: $out"
fi

# --- --out naming a directory that is there already: written into it, next
# to what it holds (only a path that is no directory is refused)
n=$((n + 1))
mkdir -p "$tmp/there" && touch "$tmp/there/keep"
if out=$("$bin" repro "$data" --cell perf-3.6:cycles:pp --out "$tmp/there" 2>&1) &&
	[ -e "$tmp/there/keep" ] && [ -f "$out/repro.c" ] && [ "$(dirname "$out")" = "$tmp/there" ]; then
	ok "--out an existing directory: $out"
else
	fail "--out an existing directory: $out"
fi

# --- the dwell (--help: "default: the run's [load] dwell, else 2 s"):
# run.json's scenario says 1500 ms; --dwell SECONDS is rounded to the
# nearest millisecond (0.0104 s is 10 ms, 0.0106 s is 11 ms)
# dwell_of DIR: the DWELL_MS of DIR's one repro.c
dwell_of() { sed -n 's/^#define DWELL_MS \([0-9]*\)$/\1/p' "$1"/*/repro.c; }
for dw in "-:1500" "2.5:2500" "0.0104:10" "0.0106:11"; do
	n=$((n + 1))
	arg=${dw%%:*} want=${dw#*:} d=$tmp/dwell-$arg
	dargs=()
	[ "$arg" = - ] || dargs=(--dwell "$arg")
	if ! out=$("$bin" repro "$data" --cell perf-3.6:cycles:pp --out "$d" "${dargs[@]}" 2>&1); then
		fail "repro --dwell $arg: $out"; continue
	fi
	got=$(dwell_of "$d")
	[ "$got" = "$want" ] && ok "--dwell $arg: DWELL_MS $got" || fail "--dwell $arg: DWELL_MS '$got', want $want"
	if [ "$arg" = - ]; then
		grep -q "dwells 1500 ms (the run's scenario, \[load\] dwell)" "$d"/*/README.txt &&
			ok "README.txt names the run's dwell" || fail "README.txt: $(grep dwells "$d"/*/README.txt)"
	fi
done

# --- the honest check, as root
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: not root: probe cannot open system-wide, the reproducers cannot run"
	[ "$fails" = 0 ] && exit 77 || exit 1
fi
p=$tmp/p/p.json
mkdir -p "$tmp/p"
# msr/tsc/ cannot sample (EINVAL) where the msr PMU is; the hardware events
# give ENOENT without a hardware PMU, errnos of their own with one.
events=(--event cycles --event instructions --event cpu-clock --event page-faults)
[ -d /sys/bus/event_source/devices/msr ] && events+=(--event msr/tsc/)
if ! "$bin" probe --json "$p" "${events[@]}" --profile perf-3.6 --profile perf-3.7 --profile perf-modern \
	--profile raw >"$tmp/probe.out" 2>&1; then
	fail "probe failed: $(tail -5 "$tmp/probe.out")"
	exit 1
fi
# Up to 4 distinct attrs of each errno, 12 in all.
mapfile -t errno_cells < <(jq -r '[.cells[] | select(.attr != null and (.outcome | test("^E")))]
	| group_by(.outcome) | map(unique_by(.attr) | .[:4]) | add // [] | .[:12][]
	| "\(.profile):\(.spec)"' "$p")
mapfile -t ok_cells < <(jq -r '[.cells[] | select(.outcome == "OK")] | unique_by(.attr)
	| .[:3][] | "\(.profile):\(.spec)"' "$p")
want_default=$(jq '[.cells[] | select(.attr != null and (.outcome | test("^(E|GUEST_|HOST_)")))]
	| length' "$p")
echo "probe: ${#errno_cells[@]} distinct errno attrs, ${#ok_cells[@]} OK cells picked," \
	"$want_default default cells"
n=$((n + 1))
[ "${#errno_cells[@]}" -gt 0 ] || fail "the probe found no errno cell to reproduce"
[ "${#ok_cells[@]}" -gt 0 ] || fail "the probe found no OK cell to reproduce"

# Every default cell (all errno cells here) gets a directory.
n=$((n + 1))
"$bin" repro "$p" --out "$tmp/all" >"$tmp/all.out" 2>&1 || fail "repro of every cell: $(cat "$tmp/all.out")"
got=$(ls "$tmp/all" 2>/dev/null | wc -l)
[ "$got" = "$want_default" ] && ok "default: $got directories, one per errno cell" ||
	fail "default: $got directories, want $want_default"

args=()
for c in "${errno_cells[@]}" "${ok_cells[@]}"; do args+=(--cell "$c"); done
n=$((n + 1))
if "$bin" repro "$p" "${args[@]}" --out "$tmp/sel" --dwell 0.2 >"$tmp/sel.out" 2>&1; then
	ok "repro of ${#args[@]} / 2 picked cells"
else
	fail "repro of the picked cells: $(cat "$tmp/sel.out")"
fi
while read -r d; do
	build_run "$d" 0
done <"$tmp/sel.out"

# Lies the kernel must not confirm: an errno cell said to give another
# errno, and an OK cell said to give EINVAL.
lie_errno=${errno_cells[0]}
lie_ok=${ok_cells[0]}
real=$(jq -r --arg c "$lie_errno" '.cells[] | select("\(.profile):\(.spec)" == $c) | .outcome' "$p" | head -1)
other=EBUSY
[ "$real" = EBUSY ] && other=EINVAL
jq --arg a "$lie_errno" --arg b "$lie_ok" --arg o "$other" '.cells |= map(
	if "\(.profile):\(.spec)" == $a then .outcome = $o | .tries[-1].outcome = $o
	elif "\(.profile):\(.spec)" == $b then .outcome = "EINVAL" | .tries[-1].outcome = "EINVAL"
	else . end)' "$p" >"$tmp/lie.json"
n=$((n + 1))
if "$bin" repro "$tmp/lie.json" --cell "$lie_errno" --cell "$lie_ok" --out "$tmp/lie" >"$tmp/lie.out" 2>&1; then
	while read -r d; do
		build_run "$d" 1
	done <"$tmp/lie.out"
else
	fail "repro of the planted lies: $(cat "$tmp/lie.out")"
fi

echo "$((n - fails)) of $n checks passed"
[ "$fails" = 0 ]
