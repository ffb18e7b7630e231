#!/usr/bin/env bash
# pmucanary run end to end with real guests (libvirt, TCG), checked cell by
# cell against a table written here by hand. Not against `pmucanary probe` or
# `pmucanary encode`: they share lib/host/prober.c and profile_encode() with the
# runner, so a bug there would be on both sides and cancel out.
#  - open phase, from the kernel's source and the platform facts
#    (shared/platform.md): cpu-clock is a software event, and
#    cpu_clock_event_init() takes sampling, callchains and any exclude bit:
#    OK with every modifier. The msr PMU refuses sampling (msr_event_init():
#    "no sampling" -> EINVAL) and any exclude bit (PERF_PMU_CAP_NO_EXCLUDE ->
#    EINVAL); `perf record` always samples and the profiles' EINVAL retries
#    (clear exclude_guest/host, sample_id_all) still sample: EINVAL with every
#    modifier, for every profile;
#  - a clean run exits 0 and every cell is that table;
#  - a self-test run (--selftest-harm cpu-clock:u=crash) exits 1, says
#    SELF-TEST, and harms exactly the three cpu-clock:u cells (GUEST_CRASH
#    k/n=confirm/confirm), every other cell is the table. Why exactly those
#    (lib/abi/profile.c's history, from perf's source): in perf 3.7 .. 4.0 'u'
#    sets exclude_kernel and exclude_hv and leaves exclude_guest clear (it
#    sets it only from 5.9, 943b69ac1884), all three pass size VER3 and build
#    the same `record -a -g` attr: their cpu-clock:u attrs are one attr.
#    cpu-clock alone keeps event_attr_init()'s exclude_guest=1 and :uH sets
#    it: different attrs, not harmed. The harmed attr is pinned member by
#    member below;
#  - a hang self-test run (one guest, cpu-clock:u) is GUEST_HANG 1/1: a
#    hang shows after the dwell, so the judge must wait for it.
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

# The table: "profile spec outcome", and k/n after a harm, sorted.
# harm: "" (clean run) or the outcome the cpu-clock:u cells must have.
expected() { # harm
	local p m
	for p in $profiles; do
		for m in "" :u :uH; do
			if [ -n "$1" ] && [ "cpu-clock$m" = "$target" ]; then
				echo "$p cpu-clock$m $1 $confirm/$confirm"
			else
				echo "$p cpu-clock$m OK"
			fi
		done
		for m in "" u uH; do echo "$p msr/tsc/$m EINVAL"; done
	done | LC_ALL=C sort
}
ncells=$(expected "" | wc -l) # 18
# The same lines from run.json. A jq failure (no file, "cells": null) fails
# here rather than read as "no cells, nothing differs".
actual() { # run.json
	jq -r '.cells[] | "\(.profile) \(.spec) \(.outcome)" +
		(if .outcome | test("^(GUEST|HOST)_") then " \(.k)/\(.n)" else "" end)' "$1" |
		LC_ALL=C sort
	[ "${PIPESTATUS[0]}" -eq 0 ]
}
# Empty when run.json is the table; else what differs, and why.
check_cells() { # run.json harm
	local got
	got=$(actual "$1") || { echo "jq could not read the cells of $1"; return; }
	[ "$(grep -c . <<<"$got")" -eq "$ncells" ] ||
		echo "$(grep -c . <<<"$got") cells, want $ncells"
	diff <(expected "$2") <(grep . <<<"$got") | grep '^[<>]' | sed 's/^</want/; s/^>/got /'
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
		echo "FAIL clean run: cells differ from the table:"; echo "$bad"
		explain "$work/clean" "$work/clean.out"; fail=1
	else
		echo "ok   clean run: the $ncells cells are the table (cpu-clock OK, msr/tsc/ EINVAL)"
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
	bad=$(check_cells "$json" GUEST_CRASH)
	if [ -n "$bad" ]; then
		echo "FAIL self-test run: cells differ from the table:"; echo "$bad"
		explain "$work/st" "$work/st.out"; fail=1
	else
		echo "ok   self-test run: exactly the three $target cells are GUEST_CRASH" \
		     "$confirm/$confirm; the other cells are the table"
	fi
	# The attr those cells armed (the cell's attr: the final one), pinned:
	# software cpu-clock, user only, exclude_guest clear, one attr for all.
	if jq -e --arg t "$target" '
		.attrs as $A | [.cells[] | select(.spec == $t) | $A[.attr]] as $a
		| ($a | length) == 3 and ($a | unique | length) == 1
		  and ($a[0] | .type == 1 and (.config // 0) == 0 and (.exclude_user // 0) == 0
		       and .exclude_kernel == 1 and .exclude_hv == 1 and (.exclude_idle // 0) == 0
		       and (.exclude_host // 0) == 0 and (.exclude_guest // 0) == 0
		       and (.precise_ip // 0) == 0)' "$json" >/dev/null; then
		echo "ok   the harmed cells armed one attr: cpu-clock, exclude_kernel+hv, exclude_guest clear"
	else
		echo "FAIL the $target cells' armed attrs are not the one pinned here:"
		jq -c --arg t "$target" '.attrs as $A | .cells[] | select(.spec == $t)
			| {profile, attr: $A[.attr], tries: [.tries[] | .attr = $A[.attr]]}' "$json"
		fail=1
	fi
	# What a maintainer reads first: the guest's own console, with the
	# panic the agent's sysrq-c caused, in each crash's evidence.
	if jq -e '[.cells[] | select(.outcome == "GUEST_CRASH") | .evidence | tostring] |
		length > 0 and all(test("--- console") and test("sysrq triggered crash"))' "$json" >/dev/null; then
		echo "ok   every GUEST_CRASH's evidence holds the guest console's panic line"
	else
		echo "FAIL a GUEST_CRASH's evidence lacks the console's panic line:"
		jq -r '.cells[] | select(.outcome == "GUEST_CRASH") | .evidence | tostring' "$json" | head -c 3000
		fail=1
	fi
	if ! grep -q "SELF-TEST" <<<"$m"; then echo "FAIL self-test run: matrix does not say SELF-TEST"; fail=1
	else echo "ok   matrix says SELF-TEST"; fi
	# matrix.txt is `pmucanary matrix` of this one run.json (the merged view,
	# n = 1), the input named by its run id (its directory) instead of its path.
	mv=$("$bin" matrix "$json" 2>/dev/null | sed "s|$json|$(basename "$(dirname "$json")")|g")
	if [ "$m" = "$mv" ]; then
		echo "ok   matrix.txt is the one-input matrix of run.json"
	else
		echo "FAIL matrix.txt is not \`pmucanary matrix run.json\`:"
		diff <(echo "$m") <(echo "$mv") | head -20
		fail=1
	fi
	if grep -q "^      limitation: accel is tcg: TCG cannot show hardware PMU/virtualization interactions" <<<"$m" &&
	   grep -q "^HARM (no known erratum explains it): 3 cells" <<<"$m" &&
	   grep -q "^      evidence: " <<<"$m" &&
	   grep -q "^cells by outcome: OK [0-9]*,.* GUEST_CRASH 3" <<<"$m"; then
		echo "ok   matrix.txt: the TCG limitation, the three harms with evidence, counts per outcome"
	else
		echo "FAIL matrix.txt lacks the TCG limitation, the harm lines or the counts:"; head -40 <<<"$m"; fail=1
	fi
	if jq -e '.selftest == true' "$json" >/dev/null; then echo "ok   run.json selftest flag"
	else echo "FAIL run.json selftest flag"; fail=1; fi
	# every GUEST_CRASH armed alone has its reproducer next to run.json,
	# which builds with a plain cc, and report.html links it
	rdir=$(dirname "$json")/repro
	nrep=$(ls "$rdir" 2>/dev/null | wc -l)
	ncrash=$(jq '[.cells[] | select(.outcome == "GUEST_CRASH" and .judged != "rule")] | length' "$json")
	if [ "$nrep" = "$ncrash" ] && [ "$nrep" -ge 1 ]; then
		echo "ok   run wrote $nrep reproducers, one per GUEST_CRASH armed alone"
	else
		echo "FAIL repro/: $nrep directories for $ncrash crashed cells"; fail=1
	fi
	one=$(ls -d "$rdir"/*/ 2>/dev/null | head -1)
	if [ -n "$one" ] && cc -o "$work/repro-bin" "$one/repro.c" 2>"$work/cc.err" &&
		grep -q "GUEST_CRASH" "$one/README.txt"; then
		echo "ok   a reproducer builds with cc alone and its README names GUEST_CRASH"
	else
		echo "FAIL reproducer $one: $(head -3 "$work/cc.err" 2>/dev/null)"; fail=1
	fi
	if [ -n "$one" ] && grep -q "\"p\":\"repro/" "$(dirname "$json")/report.html"; then
		echo "ok   report.html links the reproducers"
	else
		echo "FAIL report.html has no reproducer link"; fail=1
	fi
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
	# the three harmed cells of the table are the regressions
	failures=$(grep -c '<failure' "$work/diff.xml" || true)
	if [ "$failures" -eq 3 ]; then echo "ok   diff JUnit: $failures failures = the harmed cells"
	else echo "FAIL diff JUnit: $failures failures, want 3 (the harmed cells)"; fail=1; fi
else
	echo "FAIL no run.json to diff"; fail=1
fi
t2=$SECONDS

# A hang shows only once heartbeats are overdue, after the 1 s dwell: the
# batch must be judged after the guests ran on (two more heartbeats, or none
# within the timeout), not when the dwell ends. One guest, one attr, one
# confirmation: the cell is GUEST_HANG 1/1 and nothing is INFRA.
cat > "$work/hang.ini" <<INI
[fleet]
guests = 1
vcpus = 1
memory = 160M
heartbeat = 100ms
heartbeat_timeout = 3s
[sweep]
events = cpu-clock
modifiers = u
profiles = perf-3.7
[load]
dwell = 1s
batch_size = 4
confirm = 1
INI
"$bin" run --tcg --results "$work/hang" --selftest-harm "$target=hang" "$work/hang.ini" >"$work/hang.out" 2>&1
rc=$?
json=$(ls "$work"/hang/*/run.json 2>/dev/null | head -1)
if [ $rc -ne 1 ] || [ -z "$json" ]; then
	echo "FAIL hang self-test run: exit $rc (want 1)"; explain "$work/hang" "$work/hang.out"; fail=1
elif got=$(jq -r '[.cells[] | "\(.profile) \(.spec) \(.outcome) \(.k)/\(.n)"] | join(",")' "$json") &&
     [ "$got" = "perf-3.7 cpu-clock:u GUEST_HANG 1/1" ]; then
	echo "ok   hang self-test run: the one cell is GUEST_HANG 1/1"
	# a hang's evidence: the NMI sent and what the console said after it
	# (the agent went silent; the guest kernel answers the NMI)
	if jq -e '.cells[0].evidence | tostring | test("NMI injected") and test("--- console after NMI")' \
		"$json" >/dev/null; then
		echo "ok   hang self-test run: the evidence holds the NMI and the console after it"
	else
		echo "FAIL hang self-test run: no NMI or console after it in the evidence:"
		jq -r '.cells[0].evidence | tostring' "$json" | head -c 3000; echo; fail=1
	fi
else
	echo "FAIL hang self-test run: cells '$got', want 'perf-3.7 cpu-clock:u GUEST_HANG 1/1'"
	explain "$work/hang" "$work/hang.out"; fail=1
fi
echo "# it_run: clean run $((t1 - t0))s, self-test run $((t2 - t1))s, hang run $((SECONDS - t2))s"
exit $fail
