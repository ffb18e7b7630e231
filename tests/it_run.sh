#!/usr/bin/env bash
# pmucanary run end to end with real guests (libvirt, TCG), checked cell by
# cell against what the runner does not compute itself:
#  - a clean run exits 0 and every cell equals `pmucanary probe` for it
#    (OK where the attr opened, the same errno where it did not);
#  - a self-test run (--selftest-harm cpu-clock:u=crash) exits 1, says
#    SELF-TEST, and marks GUEST_CRASH k/n=confirm/confirm exactly the cells
#    whose armed attr equals an attr `pmucanary encode` gives for cpu-clock:u
#    (three profiles encode it the same way); every other cell equals probe.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
if ! virsh -c qemu:///system version >/dev/null 2>&1; then
	echo "SKIP: libvirtd (qemu:///system) is not running"
	exit 77
fi
command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
work=$(mktemp -d /tmp/it_run.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
target=cpu-clock:u
profiles="perf-3.7 perf-3.8 perf-3.12"
confirm=2
# perf 3.7, 3.8 and 3.12 encode every cpu-clock spec alike: three cells share
# each attr. msr/tsc/ gives EINVAL when sampling: errno cells the load phase
# must leave alone. Three distinct attrs to arm.
cat > "$work/tiny.ini" <<INI
[fleet]
guests = 2
vcpus = 1
memory = 160M
heartbeat = 100ms
heartbeat_timeout = 3s
[sweep]
events = cpu-clock, msr/tsc/
modifiers = -; u; uH
profiles = ${profiles// /; }
[load]
dwell = 1s
batch_size = 4
confirm = $confirm
INI
fail=0
t0=$SECONDS

# What the runner must agree with, computed without it.
probe_args=(--event cpu-clock --event msr/tsc/)
for p in $profiles; do probe_args+=(--profile "$p"); done
"$bin" probe -q --json "$work/probe.json" "${probe_args[@]}" >/dev/null 2>"$work/probe.err" ||
	{ echo "FAIL probe: $(cat "$work/probe.err")"; exit 1; }
for p in $profiles; do
	"$bin" encode --json --profile "$p" "$target"
done | jq -s '[.[][] | select(.error == null) | del(.spec, .tries)]' >"$work/target.json" ||
	{ echo "FAIL encode $target"; exit 1; }

# The cells of run.json that disagree with the expectation, one a line.
# harm: "" (clean run) or the outcome the target's cells must have.
check_cells() { # run.json harm
	jq -r --slurpfile probe "$work/probe.json" --slurpfile tgt "$work/target.json" \
		--arg harm "$2" --arg target "$target" --argjson confirm "$confirm" '
	def armed: if ((.tries // []) | length) > 0 and .tries[-1].outcome == "OK"
		then .tries[-1].attr else .attr end;
	($probe[0].cells | map({key: "\(.profile) \(.spec)", value: .outcome}) | from_entries) as $want
	| .cells[]
	| . as $c
	| ($want["\(.profile) \(.spec)"] // "MISSING-IN-PROBE") as $p
	| (($harm != "") and $p == "OK" and .attr != null and ((armed) as $a | $tgt[0] | index([$a]) != null)) as $shared
	| if $shared then
		(if .outcome == $harm and .k == $confirm and .n == $confirm then empty
		 else "\(.profile) \(.spec): \(.outcome) k/n=\(.k)/\(.n), want \($harm) \($confirm)/\($confirm) (it arms a \($target) attr)" end)
	  elif .outcome != $p then "\(.profile) \(.spec): \(.outcome) k/n=\(.k)/\(.n), want \($p) (probe)"
	  else empty end' "$1"
}
# "shared errno" counts: the scenario must really have both kinds of cells.
count_cells() { # run.json
	jq -r --slurpfile tgt "$work/target.json" '
	def armed: if ((.tries // []) | length) > 0 and .tries[-1].outcome == "OK"
		then .tries[-1].attr else .attr end;
	([.cells[] | select(.attr != null and (.outcome | test("^E[A-Z0-9]+$") | not))
	  | select((armed) as $a | $tgt[0] | index([$a]) != null)] | length) as $s
	| ([.cells[] | select(.outcome | test("^E[A-Z0-9]+$"))] | length) as $e
	| "\($s) \($e)"' "$1"
}
explain() { # dir out
	echo "--- matrix.txt"; cat "$1"/*/matrix.txt 2>/dev/null
	echo "--- output (tail)"; tail -n 30 "$2"
}

"$bin" run --tcg --results "$work/clean" "$work/tiny.ini" >"$work/clean.out" 2>&1
rc=$?
json=$(ls "$work"/clean/*/run.json 2>/dev/null | head -1)
if [ $rc -ne 0 ] || [ -z "$json" ]; then
	echo "FAIL clean run: exit $rc (want 0)"; explain "$work/clean" "$work/clean.out"; fail=1
else
	bad=$(check_cells "$json" "")
	if [ -n "$bad" ]; then
		echo "FAIL clean run: cells differ from probe:"; echo "$bad"
		explain "$work/clean" "$work/clean.out"; fail=1
	else
		echo "ok   clean run: every cell equals probe ($(jq '.cells|length' "$json") cells)"
	fi
fi
t1=$SECONDS

"$bin" run --tcg --results "$work/st" --selftest-harm "$target=crash" "$work/tiny.ini" >"$work/st.out" 2>&1
rc=$?
json=$(ls "$work"/st/*/run.json 2>/dev/null | head -1)
m=$(cat "$work"/st/*/matrix.txt 2>/dev/null)
if [ $rc -ne 1 ] || [ -z "$json" ]; then
	echo "FAIL self-test run: exit $rc (want 1)"; explain "$work/st" "$work/st.out"; fail=1
else
	read -r shared errno < <(count_cells "$json")
	bad=$(check_cells "$json" GUEST_CRASH)
	if [ "$shared" -lt 3 ] || [ "$errno" -lt 1 ]; then
		echo "FAIL self-test scenario: $shared cells share the $target attr (want >= 3)," \
		     "$errno errno cells (want >= 1)"; explain "$work/st" "$work/st.out"; fail=1
	elif [ -n "$bad" ]; then
		echo "FAIL self-test run: cells:"; echo "$bad"; explain "$work/st" "$work/st.out"; fail=1
	else
		echo "ok   self-test run: exactly the $shared cells sharing the $target attr are" \
		     "GUEST_CRASH $confirm/$confirm; $errno errno cells and the rest equal probe"
	fi
	if ! grep -q "SELF-TEST" <<<"$m"; then echo "FAIL self-test run: matrix does not say SELF-TEST"; fail=1
	else echo "ok   matrix says SELF-TEST"; fi
	if jq -e '.selftest == true' "$json" >/dev/null; then echo "ok   run.json selftest flag"
	else echo "FAIL run.json selftest flag"; fail=1; fi
fi

# The `git bisect run` contract on these real runs: the same run is no
# regression (0); a newly harmed cell is one (1); harm going away is a fix (0);
# the JUnit file fails exactly where diff does.
clean_json=$(ls "$work"/clean/*/run.json 2>/dev/null | head -1)
st_json=$(ls "$work"/st/*/run.json 2>/dev/null | head -1)
if [ -n "$clean_json" ] && [ -n "$st_json" ]; then
	for want in "0 $clean_json $clean_json" "1 $clean_json $st_json" "0 $st_json $clean_json"; do
		set -- $want
		"$bin" diff --junit "$work/diff.xml" "$2" "$3" >"$work/diff.out" 2>&1
		rc=$?
		if [ "$rc" -ne "$1" ]; then
			echo "FAIL diff $(basename "$(dirname "$2")") $(basename "$(dirname "$3")"): exit $rc, want $1"
			cat "$work/diff.out"; fail=1
		else
			echo "ok   diff on real runs exits $1"
		fi
	done
	"$bin" diff --junit "$work/diff.xml" "$clean_json" "$st_json" >/dev/null 2>&1
	harmed=$(jq '[.cells[] | select(.outcome == "GUEST_CRASH")] | length' "$st_json")
	failures=$(grep -c '<failure' "$work/diff.xml" || true)
	if [ "$failures" -eq "$harmed" ]; then echo "ok   diff JUnit: $failures failures = harmed cells"
	else echo "FAIL diff JUnit: $failures failures, $harmed harmed cells"; fail=1; fi
else
	echo "FAIL no run.json to diff"; fail=1
fi
echo "# it_run: clean run $((t1 - t0))s, self-test run $((SECONDS - t1))s"
exit $fail
