#!/usr/bin/env bash
# A rule-shaped harm in a lab host (issue 22): the 2012 replay kernel over
# scenarios/pebs-2012-wide.ini (300 cpu-clock attrs, about 3 in 8 harmful),
# with `isolate = rule` and, as the baseline, `isolate = each` under the
# same scenario cut off by a budget (it would take hours: the budget shows
# what it proves in that time). Prints wall time, rounds and harmful
# rounds of each, the rule, how many cells each judged, and checks the
# rule's cells against perf's encodings (`pmucanary encode`): the cells
# harmed must be exactly those with precise_ip > 0 and exclude_guest = 0.
# Needs root, libvirtd and Debian's linux-source-6.1 (as `make lab-check`).
# Usage: bench/rule-lab.sh [EACH_BUDGET]     (default 15m; 0 skips each)
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
	jq -r '.budget // empty | "      budget \(.budget_ms) ms: \(.rounds) rounds, \(.unjudged_attrs) attrs without a verdict, \(.unresolved | length) groups harm is among"' "$run"
	echo "$run" >"$out/$name.run"
}

sed 's/^isolate = .*/isolate = rule/' "$scenario" >"$out/rule.ini"
lab "$out/rule.ini" rule

# The rule's cells against perf's own encodings: harm iff precise_ip > 0
# and exclude_guest = 0 in the attr the profile opened.
run=$(cat "$out/rule.run")
wrong=0
while read -r profile spec outcome; do
	attr=$("$bin" encode --json --profile "$profile" "$spec" | jq -c '.[0]')
	want=OK
	[ "$(jq -r '(.precise_ip // 0) > 0 and ((.exclude_guest // false) | not)' <<<"$attr")" = true ] && want=HARM
	got=OK
	case $outcome in GUEST_*) got=HARM ;; esac
	[ "$want" = "$got" ] || { echo "      WRONG $profile $spec: $outcome, perf's attr says $want"; wrong=1; }
done < <(jq -r '.cells[] | "\(.profile) \(.spec) \(.outcome)"' "$run")
[ $wrong = 0 ] && echo "      every cell as perf's encoding and the patch's rule say"

if [ "$each_budget" != 0 ]; then
	sed -e 's/^isolate = .*/isolate = each/' -e "s/^\\[load\\]/[load]\\nbudget = $each_budget/" \
		"$scenario" >"$out/each.ini"
	lab "$out/each.ini" each
fi
