#!/usr/bin/env bash
# The default terminal matrix at full scale: the whole default sweep
# (`probe --json`, ~110,000 cells, 11 profiles) through `matrix`.
#   - one run: at most 150 lines, nothing lost (the spec counts of the
#     differing column groups and of the collapsed ones add up to every
#     spec; every outcome's cell count is the file's);
#   - two kernels where a planted cell turned EOPNOTSUPP and another harms a
#     guest: both named in the first lines, still at most 150 lines;
#   - filters narrow the view, --all prints every cell.
# Needs $PMUCANARY_BIN and $PMUCANARY_TOP (tests/run-tests sets both); jq.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
check() { # check DESCRIPTION COMMAND...
	n=$((n + 1))
	if "${@:2}"; then echo "ok: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi
}
command -v jq >/dev/null || { echo "SKIP: no jq"; exit 77; }

"$bin" probe --json "$tmp/p.json" >"$tmp/probe.log" 2>&1 ||
	{ echo "FAIL: probe"; tail "$tmp/probe.log"; exit 1; }
cells=$(jq '.cells | length' "$tmp/p.json")
specs=$(jq '[.cells[].spec] | unique | length' "$tmp/p.json")
kernel=$(jq -r '.kernel' "$tmp/p.json")
echo "note: full sweep: $cells cells, $specs specs, kernel $kernel"
check "the full sweep is large ($cells cells)" [ "$cells" -gt 50000 ]

"$bin" matrix "$tmp/p.json" >"$tmp/one.txt" 2>&1; rc=$?
lines=$(wc -l <"$tmp/one.txt")
check "one run: exit 0 (no harm; got $rc)" [ "$rc" -eq 0 ]
check "one run: $lines lines <= 150" [ "$lines" -le 150 ]
check "one run: no line over 160 columns" [ "$(awk 'length > 160' "$tmp/one.txt" | wc -l)" -eq 0 ]
# Nothing lost: specs of the shown column groups + the collapsed ones = all.
sum=$(awk '/^  c[0-9]+ .*: [0-9]+ specs?, /{ sub(/.*: /, ""); s += $1 }
	/^where every row agrees: /{ s += $5 } END { print s + 0 }' "$tmp/one.txt")
check "one run: column groups cover every spec ($sum of $specs)" [ "$sum" -eq "$specs" ]
check "one run: no column group left out" bash -c "! grep -q 'more column groups differ' '$tmp/one.txt'"
# Every outcome of the file, with its count (a rejected spec counted apart).
while read -r o c; do
	check "one run: $o $c in the outcome counts" grep -Eq "cells by outcome:.* $o $c(,|$)" "$tmp/one.txt"
done < <(jq -r '[.cells[] | select((.error // null) == null and .outcome != "REJECTED") | .outcome]
		| group_by(.) | .[] | "\(.[0]) \(length)"' "$tmp/p.json")
rej=$(jq '[.cells[] | select((.error // null) != null or .outcome == "REJECTED")] | length' "$tmp/p.json")
[ "$rej" -gt 0 ] && check "one run: $rej rejected" grep -q "rejected by the profile $rej" "$tmp/one.txt"
check "one run: the modifier classes are explained" grep -q 'p+G/H = precise_ip>0 with an explicit G or H' "$tmp/one.txt"

# A second kernel: cpu-clock:ppH under perf-3.6 turned EOPNOTSUPP and
# task-clock:u under perf-modern crashed a guest.
jq --arg k "9.9.0-planted" '.kernel = $k | .run_id = "planted" | .cells |= map(.kernel = $k
	| if .profile == "perf-3.6" and .spec == "cpu-clock:ppH" then .outcome = "EOPNOTSUPP"
	  elif .profile == "perf-modern" and .spec == "task-clock:u" then
	    .outcome = "GUEST_CRASH" | .k = 2 | .n = 3
	    | .evidence = [{"kind": "console", "guest": 1, "excerpt": "BUG: planted"}]
	  else . end)' "$tmp/p.json" >"$tmp/p2.json"
check "planted file has both cells" [ "$(jq '[.cells[] | select(.outcome == "EOPNOTSUPP" or .outcome == "GUEST_CRASH")] | length' "$tmp/p2.json")" -eq 2 ]
"$bin" matrix "$tmp/p.json" "$tmp/p2.json" >"$tmp/two.txt" 2>&1; rc=$?
lines=$(wc -l <"$tmp/two.txt")
check "two kernels: exit 1 (the planted harm; got $rc)" [ "$rc" -eq 1 ]
check "two kernels: $lines lines <= 150" [ "$lines" -le 150 ]
head -25 "$tmp/two.txt" >"$tmp/head.txt"
check "two kernels: the EOPNOTSUPP difference named in the first 25 lines" \
	grep -Eq "^  cpu-clock x p\+G/H: .*ok \| 9\.9\.0-planted NOSUP$" "$tmp/head.txt"
check "two kernels: ... with its spec and profile" grep -q '^      cpu-clock:ppH under perf-3\.6$' "$tmp/head.txt"
check "two kernels: the crash named in the first 25 lines" \
	grep -q "^  9\.9\.0-planted perf-modern task-clock:u: GUEST_CRASH 2/3 " "$tmp/head.txt"
check "two kernels: the crash's evidence" grep -q 'evidence: console (guest 1): BUG: planted' "$tmp/two.txt"
check "two kernels: the crash in the grid" grep -Eq '^9\.9\.0-planted +perf-modern .*CRASH!' "$tmp/two.txt"

# Three inputs, one on another CPU where every G/H spec of perf-3.6 that
# opened now gives EOPNOTSUPP (832 cells) and page-faults:k* is INFRA under
# perf-6.1: each named once, grouped, and still at most 150 lines.
jq --arg k "9.9.1-intel" '.kernel = $k | .run_id = "intel" | .host.cpu.vendor = "GenuineIntel"
	| .host.cpu.family = 6 | .host.cpu.model = 85 | .host.cpu.stepping = 7
	| .cells |= map(.kernel = $k
	| if .profile == "perf-3.6" and (.spec | test(":.*[GH]")) and .outcome == "OK" then .outcome = "EOPNOTSUPP"
	  elif .profile == "perf-6.1" and (.spec | startswith("page-faults:k")) then .outcome = "INFRA"
	  else . end)' "$tmp/p.json" >"$tmp/p3.json"
"$bin" matrix "$tmp/p.json" "$tmp/p2.json" "$tmp/p3.json" >"$tmp/three.txt" 2>&1; rc=$?
lines=$(wc -l <"$tmp/three.txt")
check "three inputs, two CPUs: exit 1 (got $rc)" [ "$rc" -eq 1 ]
check "three inputs: $lines lines <= 150" [ "$lines" -le 150 ]
check "three inputs: grouped by CPU" grep -q '^cpu GenuineIntel 6/85/7:$' "$tmp/three.txt"
check "three inputs: the EOPNOTSUPP mass is one group naming the Intel kernel" \
	grep -Eq "^  cpu-cycles, cpu-clock, task-clock \(\+[0-9]+ events\) x G/H, p\+G/H: .*GenuineIntel 6/85/7 9\.9\.1-intel NOSUP" "$tmp/three.txt"
check "three inputs: the INFRA cells are listed" grep -q '^  GenuineIntel 6/85/7 9\.9\.1-intel INFRA: page-faults x ' "$tmp/three.txt"
check "three inputs: the planted crash still named" grep -q 'perf-modern task-clock:u: GUEST_CRASH 2/3' "$tmp/three.txt"

# Filters and --all.
"$bin" matrix --event task-clock --profile 'perf-3.*' "$tmp/p.json" >"$tmp/f.txt" 2>&1
check "--event task-clock --profile 'perf-3.*': no other event or profile" \
	bash -c "! grep -Eq 'cpu-clock|perf-modern|perf-4|raw ' '$tmp/f.txt' && grep -q 'task-clock' '$tmp/f.txt'"
want=$(jq '[.cells[] | select(.spec | startswith("task-clock")) | select(.profile | startswith("perf-3."))] | length' "$tmp/p.json")
check "filtered: $want cells" grep -q " $want cells$" <(head -1 "$tmp/f.txt")
out=$("$bin" matrix --outcome EXPLODED "$tmp/p.json" 2>&1); rc=$?
check "--outcome EXPLODED: exit 2 naming it" bash -c "[ $rc -eq 2 ] && grep -q \"'EXPLODED' names no outcome\" <<<\"\$1\"" _ "$out"
"$bin" matrix --all "$tmp/p.json" >"$tmp/all.txt" 2>&1
shown=$(awk -v k="$kernel" '$1 == k { for (i = 3; i <= NF; i++) if ($i != "-") c++ } END { print c + 0 }' "$tmp/all.txt")
check "--all: every cell in the grid ($shown of $cells)" [ "$shown" -eq "$cells" ]

echo "$((n - fails)) of $n passed"
[ $fails -eq 0 ]
