#!/usr/bin/env bash
# A rule-shaped harm in a lab host (issue 22): the 2012 replay kernel over
# scenarios/pebs-2012-wide.ini (840 distinct cpu-clock attrs armed, 420 harmful),
# with `isolate = rule` and, as the baseline, `isolate = each` under the
# same scenario cut off by a budget (it would take hours: the budget shows
# what it proves in that time). Prints wall time, rounds and harmful
# rounds of each, the rule, how many cells each judged, and checks every
# armed cell against the patch's rule applied by hand to the attr it
# opened: harmed exactly when precise_ip > 0 and exclude_guest = 0.
# Needs root, libvirtd and Debian's linux-source-6.1 (as `make lab-check`).
# Usage: bench/rule-lab.sh [EACH_BUDGET]     (default 15m; 0 skips each;
#        RULE_LAB_EACH_ONLY=1 runs only each)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
scenario=$top/scenarios/pebs-2012-wide.ini
each_budget=${1:-15m}
out=$(mktemp -d /var/tmp/pmucanary-bench-rule.XXXXXX)
chmod 755 "$out"
trap 'rm -rf "$out"' EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t=$(now)
"$bin" lab --kernel replay:pebs-2012-harm --kernel replay:stock --base nosuch \
	"$scenario" >/dev/null 2>&1 || true
printf 'kernels built or found cached in %s s\n' "$(since "$t")"

# lab SCENARIO NAME -> prints the crash kernel's figures; leaves $out/NAME
lab() {
	local sc=$1 name=$2 t rc=0 lab run j
	t=$(now)
	"$bin" lab "$sc" --results "$out/$name" --base fixed \
		--kernel replay:pebs-2012-harm:crash --kernel replay:stock:fixed \
		>"$out/$name.out" 2>&1 || rc=$?
	lab=$(ls -d "$out/$name"/lab-*)
	run=$(jq -r '.kernels[] | select(.name == "crash") | .run_json // empty' "$lab/lab.json")
	j=$(dirname "$run")/journal.jsonl
	printf '%-5s lab exit %s, wall %s s; crash kernel %s s, fixed kernel %s s\n' "$name" "$rc" \
		"$(since "$t")" \
		"$(jq -r '.kernels[] | select(.name == "crash") | .total_s' "$lab/lab.json")" \
		"$(jq -r '.kernels[] | select(.name == "fixed") | .total_s' "$lab/lab.json")"
	printf '      %s rounds, %s harmful; cells: %s\n' "$(grep -c '"step":"judged"' "$j" || true)" \
		"$(grep '"step":"judged"' "$j" | jq -s '[.[] | select(.outcome != "OK")] | length')" \
		"$(jq -r '[.cells[].outcome] | group_by(.) | map("\(.[0]) \(length)") | join(", ")' "$run")"
	jq -r '(.rules // [])[] | "      rule \"\(.text)\": \(.attrs) attrs, sample of \(.sample | length), \(.refuted_before) refuted before"' "$run"
	jq -r '.budget // empty | "      budget \(.budget_ms) ms: \(.rounds) rounds, \(.unjudged_attrs) attrs without a verdict, \(.unresolved | length) group(s) harm is known to be among"' "$run"
	echo "$run" >"$out/$name.run"
}

if [ "${RULE_LAB_EACH_ONLY:-0}" = 1 ]; then
	sed -e 's/^isolate = .*/isolate = each/' -e "s/^\\[load\\]/[load]\\nbudget = $each_budget/" \
		"$scenario" >"$out/each.ini"
	lab "$out/each.ini" each
	exit 0
fi
sed 's/^isolate = .*/isolate = rule/' "$scenario" >"$out/rule.ini"
lab "$out/rule.ini" rule

# The cells against the patch's rule, applied by hand to the attr each cell
# opened (run.json's own record of its last try): an armed cell (OK or a
# harm) is harmed exactly when precise_ip > 0 and exclude_guest = 0.
run=$(cat "$out/rule.run")
jq -r '. as $r | .cells[] | select(.outcome == "OK" or (.outcome | test("^(GUEST|HOST)_"))) |
	($r.attrs[(.tries[-1].attr // .attr)]) as $a |
	(($a.precise_ip // 0) > 0 and (($a.exclude_guest // 0) == 0 or $a.exclude_guest == false)) as $want |
	(.outcome | test("^GUEST_")) as $got |
	select($want != $got) | "      WRONG \(.profile) \(.spec): \(.outcome), the rule says \(if $want then "harm" else "OK" end)"' \
	"$run" >"$out/wrong"
armed=$(jq '[.cells[] | select(.outcome == "OK" or (.outcome | test("^(GUEST|HOST)_")))] | length' "$run")
distinct=$(jq -r 'select(.step == "done") | .summary.distinct_armed // .distinct_armed // empty' \
	"$(dirname "$run")/journal.jsonl" 2>/dev/null | tail -1)
if [ -s "$out/wrong" ]; then
	head -20 "$out/wrong"; echo "      $(wc -l <"$out/wrong") cells against the rule"
else
	echo "      every one of $armed armed cells (${distinct:-?} distinct attrs) as the patch's rule says"
fi

if [ "$each_budget" != 0 ]; then
	sed -e 's/^isolate = .*/isolate = each/' -e "s/^\\[load\\]/[load]\\nbudget = $each_budget/" \
		"$scenario" >"$out/each.ini"
	lab "$out/each.ini" each
fi
