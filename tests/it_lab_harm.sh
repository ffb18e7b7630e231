#!/usr/bin/env bash
# pmucanary lab with harm, on the base test kernel (tests/kernels.sh) and
# tests/data/lab/harm.ini (cpu-clock and cpu-clock:u, one attr a batch):
#  - self-test harm inside lab hosts (--selftest-harm cpu-clock:u=crash):
#    the nested guests crash themselves while cpu-clock:u's attr is armed.
#    Each lab host isolates the same cells, outcome and k/n as `pmucanary
#    run` of the same scenario on this host; and the same kernel twice
#    (two names) is no regression: exit 0.
#  - a lab host that panics during an armed batch (--selftest-harm
#    cpu-clock:u=host-crash: the run inside panics its own kernel with sysrq
#    c when that attr is armed): that batch is HOST_CRASH with the lab host's
#    panic as evidence, fresh lab hosts resume the run, isolation finishes
#    (the culprit confirmed k/n), exit 1.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
top=${PMUCANARY_TOP:-.}

. "$top/tests/kernels.sh"
lab_suite_setup   # skips without root, libvirtd or the kernel source; builds the kernels
base=$PMUCANARY_LAB_KERNEL_BASE

work=$(lab_suite_workdir)
trap 'rm -rf "$work"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
scenario=$top/tests/data/lab/harm.ini
harmful='[.cells[] | select(.outcome != "OK") | {profile, spec, outcome, k, n}] | sort_by(.profile, .spec)'
show_lab() { # lab dir
	local k
	for k in "$1"/*/; do
		[ -f "$k/inner.log" ] && { echo "--- $k/inner.log"; tail -15 "$k/inner.log"; }
		for c in "$k"/lab-host-*.console; do [ -f "$c" ] && { echo "--- $c"; tail -15 "$c"; }; done
	done
}

# The same self-test on this host, as the reference.
t0=$SECONDS
"$bin" run "$scenario" --results "$work/host" --selftest-harm cpu-clock:u=crash >"$work/host.out" 2>&1
rc=$?
[ "$rc" = 1 ] && ok "run on this host with the self-test exits 1 ($((SECONDS - t0)) s)" ||
	{ bad "run on this host: exit $rc"; tail -20 "$work/host.out"; exit 1; }
jq -S "$harmful" "$work"/host/*/run.json >"$work/host.harm"
jq -e 'length == 1 and .[0].spec == "cpu-clock:u" and .[0].outcome == "GUEST_CRASH" and .[0].k >= 1' \
	"$work/host.harm" >/dev/null && ok "on this host: $(jq -c '.[0]' "$work/host.harm")" ||
	bad "on this host the self-test culprit was not isolated: $(cat "$work/host.harm")"

# The same kernel twice, each lab host isolating the same culprit.
t0=$SECONDS
"$bin" lab "$scenario" --results "$work/twice" --selftest-harm cpu-clock:u=crash \
	--kernel "$base:first" --kernel "$base:second" >"$work/twice.out" 2>&1
rc=$?
lab=$(ls -d "$work"/twice/lab-* 2>/dev/null | head -1)
echo "# lab, the same kernel twice, self-test crash: exit $rc in $((SECONDS - t0)) s"
if [ "$rc" = 0 ]; then
	ok "the same kernel twice: exit 0"
else
	bad "the same kernel twice: exit $rc (want 0)"; tail -20 "$work/twice.out"; show_lab "$lab"
fi
for k in first second; do
	run=$(jq -r --arg k "$k" '.kernels[] | select(.name == $k) | .run_json // ""' "$lab/lab.json" 2>/dev/null)
	if [ -z "$run" ] || [ ! -f "$run" ]; then bad "$k: no run.json"; continue; fi
	jq -S "$harmful" "$run" >"$work/$k.harm"
	if cmp -s "$work/host.harm" "$work/$k.harm"; then
		ok "$k: inside the lab host the self-test isolates the same cell, outcome and k/n as on this host"
	else
		bad "$k: isolated $(jq -c . "$work/$k.harm"), this host $(jq -c . "$work/host.harm")"
	fi
	jq -e '[.limitations[] | select(test("^SELF-TEST"))] | length == 1' "$run" >/dev/null &&
		ok "$k: says SELF-TEST" || bad "$k: no SELF-TEST line"
	grep '"step":"fleet-up"' "$(dirname "$run")/journal.jsonl" | jq -e '.fleet.accel == "kvm"' >/dev/null &&
		ok "$k: the crashed guests were KVM guests of the lab kernel" || bad "$k: nested guests not under KVM"
done
# the lab's report.html links each kernel's reproducers, inside its run
grep -q '"p":"first/[^"]*/repro/' "$lab/report.html" 2>/dev/null &&
	grep -q '"p":"second/[^"]*/repro/' "$lab/report.html" &&
	ok "the lab's report.html links both kernels' reproducers" ||
	bad "the lab's report.html has no reproducer links per kernel"
jq -e '.diffs[0].verdict == "CLEAN"' "$lab/lab.json" >/dev/null && ok "diff first -> second: CLEAN" ||
	bad "diff first -> second: $(jq -c '.diffs' "$lab/lab.json")"

# A lab host that panics while a batch is armed.
t0=$SECONDS
"$bin" lab "$scenario" --results "$work/hc" --selftest-harm cpu-clock:u=host-crash \
	--kernel "$base:hc" >"$work/hc.out" 2>&1
rc=$?
lab=$(ls -d "$work"/hc/lab-* 2>/dev/null | head -1)
echo "# lab, host-crash self-test: exit $rc in $((SECONDS - t0)) s"
[ "$rc" = 1 ] && ok "host-crash: exit 1" || { bad "host-crash: exit $rc (want 1)"; tail -20 "$work/hc.out"; show_lab "$lab"; }
run=$(jq -r '.kernels[0].run_json // ""' "$lab/lab.json" 2>/dev/null)
if [ -n "$run" ] && [ -f "$run" ]; then
	journal=$(dirname "$run")/journal.jsonl
	# which batches armed cpu-clock:u's attr: the cell's attr key is in the arm lines
	hc_batches=$(grep '"step":"host-down"' "$journal" | jq -r .batch | sort -n | tr '\n' ' ')
	judged=$(grep '"step":"judged"' "$journal" | jq -r 'select(.outcome == "HOST_CRASH") | .batch' |
		sort -n | tr '\n' ' ')
	[ -n "$hc_batches" ] && [ "$hc_batches" = "$judged" ] &&
		ok "host-crash: batches $hc_batches lost the lab host and were judged HOST_CRASH" ||
		bad "host-crash: host-down batches '$hc_batches', judged HOST_CRASH '$judged'"
	for b in $hc_batches; do
		grep '"step":"arm"' "$journal" | jq -se --argjson b "$b" \
			'[.[] | select(.batch == $b) | .keys | length] | length > 0 and all(. == 1)' \
			>/dev/null || bad "host-crash: batch $b armed more than the culprit"
	done
	jq -e '[.cells[] | select(.spec == "cpu-clock:u")][0] | .outcome == "HOST_CRASH" and .k >= 1 and .k == .n' \
		"$run" >/dev/null && ok "host-crash: cpu-clock:u is HOST_CRASH $(jq -r '[.cells[] |
		select(.spec == "cpu-clock:u")][0] | "\(.k)/\(.n)"' "$run")" ||
		bad "host-crash: cpu-clock:u is $(jq -c '[.cells[] | select(.spec == "cpu-clock:u")][0] | {outcome, k, n}' "$run")"
	jq -e '[.cells[] | select(.spec == "cpu-clock")][0].outcome == "OK"' "$run" >/dev/null &&
		ok "host-crash: cpu-clock stays OK" || bad "host-crash: cpu-clock is not OK"
	jq -e '[.cells[] | select(.spec == "cpu-clock:u")][0].evidence | tostring |
		test("sysrq triggered crash")' "$run" >/dev/null &&
		ok "host-crash: the evidence holds the lab host's panic" || bad "host-crash: no panic in the evidence"
	grep -q '"step":"done"' "$journal" && ok "host-crash: the resumed run finished" ||
		bad "host-crash: the run never finished"
	boots=$(jq '.kernels[0].boots' "$lab/lab.json")
	downs=$(jq '.kernels[0].host_down' "$lab/lab.json")
	[ "$boots" = $((downs + 1)) ] && ok "host-crash: $boots lab hosts for $downs lost ones" ||
		bad "host-crash: $boots boots, $downs lost"
else
	bad "host-crash: no run.json"
fi
[ -z "$(virsh -c qemu:///system list --all --name | grep '^pmucanary-lab')" ] &&
	ok "no lab host left" || bad "lab hosts left: $(virsh -c qemu:///system list --all --name)"
exit $fail
