#!/usr/bin/env bash
# Wall time of scenarios/smoke.ini end to end and its split by phase, read
# from the journal's timestamps; then the same run with a self-test culprit
# (--selftest-harm cpu-clock:u=crash), so isolation and guest restarts show.
# Ratios are against the clean run measured here. Needs root, libvirtd, jq.
# Harmed guests come back from a saved image ([fleet] restore, the default);
# SMOKE_COLD=1 also measures the self-test run with restore = false.
# Usage: bench/smoke.sh [SCENARIO]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
scenario=${1:-$top/scenarios/smoke.ini}
out=$(mktemp -d /tmp/pmucanary-bench-smoke.XXXXXX)
trap 'rm -rf "$out"' EXIT

split() { # run dir -> "total open fleet baseline load tail" in seconds; tail is from
	# the last judged batch to done: a restart of guests that batch harmed, then the outputs
	jq -rs '
	  def t(s): (map(select(.step == s)) | first | .ts);
	  (.[0].ts) as $t0 | (.[-1].ts) as $t9 |
	  [ ($t9 - $t0), (t("open-done") - $t0), (t("fleet-up") - t("open-done")),
	    (t("baseline") - t("fleet-up")),
	    ((map(select(.step == "judged")) | last | .ts // t("baseline")) - t("baseline")),
	    ($t9 - ((map(select(.step == "judged")) | last | .ts) // t("baseline"))) ]
	  | map(. / 1000) | @tsv' "$1/journal.jsonl"
}

measure() { # name, extra args...
	local name=$1; shift
	local start=$(date +%s.%N) rc=0
	"$bin" run --results "$out/$name" "$@" "$scenario" >"$out/$name.out" 2>&1 || rc=$?
	local wall; wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
	local dir; dir=$(ls -d "$out/$name"/*/ | head -1)
	local batches; batches=$(grep -c '"step":"judged"' "$dir/journal.jsonl" || true)
	read -r total open fleet base load report < <(split "$dir")
	printf '%-9s exit %-3s wall %6.1f s  journal %6.1f s  open %5.2f  fleet %5.1f  baseline %4.1f  load %6.1f (%s batches)  tail %5.2f\n' \
		"$name" "$rc" "$wall" "$total" "$open" "$fleet" "$base" "$load" "$batches" "$report"
	echo "$wall" >"$out/$name.wall"
}

measure clean
measure selftest --selftest-harm cpu-clock:u=crash
awk -v s="$(cat "$out/selftest.wall")" -v c="$(cat "$out/clean.wall")" \
	'BEGIN { printf "self-test run / clean run wall time: %.2fx (aim <= 3x)\n", s / c }'
if [ "${SMOKE_COLD:-0}" = 1 ]; then
	# the same scenario with harmed guests booted cold
	cold_scenario="$out/$(basename "$scenario" .ini)-cold.ini"
	awk '{ print } /^\[fleet\]/ { print "restore = false" }' "$scenario" >"$cold_scenario"
	scenario=$cold_scenario
	measure cold --selftest-harm cpu-clock:u=crash
	awk -v s="$(cat "$out/cold.wall")" -v c="$(cat "$out/clean.wall")" \
		-v r="$(cat "$out/selftest.wall")" \
		'BEGIN { printf "self-test run, cold boots / clean run: %.2fx; restore / cold: %.2fx\n", s / c, r / s }'
fi
