#!/usr/bin/env bash
# The `pmucanary lava` commands' own contract, without LAVA (it_lava.sh runs
# the real dispatcher): exit codes, option combinations, and what `collect`
# makes of a log written here the way lava-run writes one, from the cases
# `lava cases` prints for a result file.
#
#   lava --help                 exit 0, the subcommands on stdout
#   lava job --pmucanary-url    taken alone; with --pmucanary-path refused
#   lava collect MISSING        exit 2 naming the file
#   lava collect LOG            exit 1 when any collected cell is a harm,
#                               the first cell included; 0 when none is
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
command -v jq >/dev/null || { echo "FAIL jq is missing"; exit 1; }

rc=0; "$bin" lava --help >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] && grep -q "collect" "$tmp/out" && ok "lava --help: exit 0, on stdout" ||
	bad "lava --help: exit $rc: $(cat "$tmp/out" "$tmp/err")"
rc=0; "$bin" lava frob >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "usage: pmucanary lava job|cases|collect" "$tmp/err" &&
	ok "lava frob: exit 2, the usage" || bad "lava frob: exit $rc: $(cat "$tmp/err")"

# ---- job: --pmucanary-url alone is a job; with --pmucanary-path, bad input
job=(lava job --device-type qemu --kernel http://lab.example/bzImage
	--ramdisk http://lab.example/initrd.cpio.gz --probe-event cpu-clock)
rc=0; "$bin" "${job[@]}" --pmucanary-url http://lab.example/pmucanary >"$tmp/job.yaml" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] && grep -q "http://lab.example/pmucanary" "$tmp/job.yaml" &&
	ok "job --pmucanary-url: a job that fetches it" || bad "job --pmucanary-url: exit $rc: $(cat "$tmp/err")"
rc=0; "$bin" "${job[@]}" --pmucanary-url http://lab.example/p --pmucanary-path /usr/bin/pmucanary \
	>/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "not both" "$tmp/err" && ok "job --pmucanary-url with --pmucanary-path: exit 2" ||
	bad "job with both: exit $rc: $(cat "$tmp/err")"

# Each required option missing on its own: exit 2 with the one usage line,
# before anything is written (--help: --device-type, --kernel, --ramdisk
# and --scenario or --probe-event).
req=(--device-type qemu --kernel http://lab.example/bzImage --probe-event cpu-clock)
for drop in 0 2 4; do
	args=("${req[@]:0:$drop}" "${req[@]:$((drop + 2))}")
	rc=0; "$bin" lava job "${args[@]}" --ramdisk http://lab.example/r -o "$tmp/none.yaml" \
		>/dev/null 2>"$tmp/err" || rc=$?
	[ "$rc" = 2 ] && grep -q "need --device-type, --kernel, --ramdisk and --scenario or --probe-event" "$tmp/err" &&
		[ ! -e "$tmp/none.yaml" ] && ok "job without ${req[$drop]}: exit 2, the usage line" ||
		bad "job without ${req[$drop]}: exit $rc: $(cat "$tmp/err")"
done

# A job that cannot be written (a full disk: /dev/full) is "could not test",
# 125 (README: a failed write is never exit 0, and is 125), to a file or stdout.
rc=0; "$bin" "${job[@]}" --pmucanary-url http://lab.example/p -o /dev/full >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 125 ] && grep -q "/dev/full" "$tmp/err" && ok "job -o /dev/full: exit 125 naming it" ||
	bad "job -o /dev/full: exit $rc: $(cat "$tmp/err")"
rc=0; "$bin" "${job[@]}" --pmucanary-url http://lab.example/p >/dev/full 2>"$tmp/err" || rc=$?
[ "$rc" = 125 ] && grep -q "cannot write stdout" "$tmp/err" && ok "job >/dev/full: exit 125" ||
	bad "job >/dev/full: exit $rc: $(cat "$tmp/err")"

# job --scenario: checked here (the device would find a bad one hours
# later), then carried whole: the job decodes to the file's own bytes
scen=(lava job --device-type qemu --kernel http://lab.example/bzImage --ramdisk http://lab.example/r)
rc=0; "$bin" "${scen[@]}" --scenario "$top/scenarios/smoke.ini" >"$tmp/scen.yaml" 2>"$tmp/err" || rc=$?
b64=$(grep -o 'echo [A-Za-z0-9+/=]* | base64 -d > /tmp/pmucanary/scenario.ini' "$tmp/scen.yaml" | cut -d' ' -f2)
[ "$rc" = 0 ] && [ -n "$b64" ] && cmp -s <(base64 -d <<<"$b64") "$top/scenarios/smoke.ini" &&
	ok "job --scenario: exit 0, the scenario carried byte for byte" ||
	bad "job --scenario: exit $rc: $(cat "$tmp/err")"
rc=0; "$bin" "${scen[@]}" --scenario "$top/tests/data/scenarios/bad-duration.ini" -o "$tmp/none.yaml" \
	>/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "bad-duration.ini:7: \[load\] dwell" "$tmp/err" && [ ! -e "$tmp/none.yaml" ] &&
	ok "job --scenario with a bad scenario: exit 2 naming its line, no job" ||
	bad "job with a bad scenario: exit $rc: $(cat "$tmp/err")"

# job -o FILE: written, exit 0, the same job as on stdout
rc=0; "$bin" "${job[@]}" -o "$tmp/job-o.yaml" >"$tmp/out" 2>"$tmp/err" || rc=$?
"$bin" "${job[@]}" >"$tmp/job-stdout.yaml" 2>/dev/null
[ "$rc" = 0 ] && [ ! -s "$tmp/out" ] && cmp -s "$tmp/job-o.yaml" "$tmp/job-stdout.yaml" &&
	ok "job -o FILE: exit 0, the job in FILE" || bad "job -o FILE: exit $rc: $(cat "$tmp/err")"

# ---- cases --errata: ivb-3.6's cycles:pp crash on 3.6.11 is the 2012 PEBS
# erratum of scenarios/errata.ini: skip (--help: known erratum), fail without
ivb=$top/tests/data/matrix/ivb-3.6.json
rc=0; "$bin" lava cases "$ivb" --errata "$top/scenarios/errata.ini" >"$tmp/cases" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] && grep -q "^case perf-3.6__cycles_3App skip 3 GUEST_CRASH/3$" "$tmp/cases" &&
	ok "cases --errata: the known erratum is skip" || bad "cases --errata: exit $rc: $(cat "$tmp/err" "$tmp/cases")"
rc=0; "$bin" lava cases "$ivb" >"$tmp/cases" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] && grep -q "^case perf-3.6__cycles_3App fail 3 GUEST_CRASH/3$" "$tmp/cases" &&
	ok "cases without --errata: the same cell fails" || bad "cases: exit $rc: $(cat "$tmp/err" "$tmp/cases")"

# ---- collect: neither a log nor --export, or two logs: exit 2, the usage
for a in "" "a.log b.log"; do
	# shellcheck disable=SC2086
	rc=0; "$bin" lava collect $a >/dev/null 2>"$tmp/err" || rc=$?
	[ "$rc" = 2 ] && grep -q "need JOB.log, --export FILE or both" "$tmp/err" &&
		ok "collect ${a:-(nothing)}: exit 2, the usage" || bad "collect ${a:-(nothing)}: exit $rc: $(cat "$tmp/err")"
done

# ---- collect: a missing log is bad input
rc=0; "$bin" lava collect "$tmp/nope.log" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "$tmp/nope.log" "$tmp/err" && ok "collect of a missing log: exit 2 naming it" ||
	bad "collect of a missing log: exit $rc: $(cat "$tmp/err")"

# A lava-run log of the cases of RESULT, the device having exited EXIT.
log_of() { # result exit-code
	local dt='"dt": "2026-12-05T08:00:00.00"' k a b c d
	echo "{$dt, \"lvl\": \"results\", \"msg\": {\"case\": \"validate\", \"definition\": \"lava\", \"result\": \"pass\"}}"
	"$bin" lava cases "$1" | while read -r k a b c d; do
		if [ "$k" = case ]; then
			echo "{$dt, \"lvl\": \"results\", \"msg\": {\"case\": \"$a\", \"definition\": \"0_pmucanary\", \"measurement\": ! \"$c.0\", \"result\": \"$b\", \"units\": \"$d\"}}"
		else
			echo "{$dt, \"lvl\": \"target\", \"msg\": \"$k $a $b\"}"
		fi
	done
	echo "{$dt, \"lvl\": \"results\", \"msg\": {\"case\": \"pmucanary-exit\", \"definition\": \"0_pmucanary\", \"measurement\": ! \"$2.0\", \"result\": \"pass\", \"units\": \"exit-code\"}}"
	echo "{$dt, \"lvl\": \"results\", \"msg\": {\"case\": \"job\", \"definition\": \"lava\", \"result\": \"pass\"}}"
}

# The run with every cell OK, then with only its first cell harmed, then
# with only its last: exit 0, 1, 1; the collected cells are the run's.
d=$top/tests/data/diff/run-3.8.json
jq '.cells |= map(if .outcome | test("^(GUEST|HOST)_") then .outcome = "OK" | .k = 0 else . end)' "$d" \
	>"$tmp/clean.json"
jq '.cells[0].outcome = "GUEST_CRASH" | .cells[0].k = 2' "$tmp/clean.json" >"$tmp/first.json"
last=$(jq '[.cells | to_entries[] | select(.value.attr != null and .value.outcome == "OK") | .key] | last' \
	"$tmp/clean.json")
jq --argjson i "$last" '.cells[$i].outcome = "GUEST_CRASH" | .cells[$i].k = 1' "$tmp/clean.json" >"$tmp/last.json"
for c in "clean 0" "first 1" "last 1"; do
	read -r name want <<<"$c"
	log_of "$tmp/$name.json" "$want" >"$tmp/$name.log"
	rc=0; "$bin" lava collect "$tmp/$name.log" --json "$tmp/$name.out.json" >/dev/null 2>"$tmp/err" || rc=$?
	got=$(jq -r '[.cells[] | "\(.profile) \(.spec) \(.outcome)"] | join(",")' "$tmp/$name.out.json" 2>/dev/null)
	# (a spec the profile rejected, with no attr, is no case)
	want_cells=$(jq -r '[.cells[] | select(.outcome != "REJECTED" and .attr != null) | "\(.profile) \(.spec) \(.outcome)"] | join(",")' \
		"$tmp/$name.json")
	have_cells=$(jq -r '[.cells[] | select(.outcome != "REJECTED") | "\(.profile) \(.spec) \(.outcome)"] | join(",")' \
		"$tmp/$name.out.json" 2>/dev/null)
	if [ "$rc" = "$want" ] && [ -n "$got" ] && [ "$have_cells" = "$want_cells" ]; then
		ok "collect, harm in the $name cell(s): exit $rc, the run's cells"
	else
		bad "collect $name: exit $rc (want $want): $(cat "$tmp/err")"
	fi
done
exit $fail
