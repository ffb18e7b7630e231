#!/usr/bin/env bash
# Replay kernels end to end: real kernels (Debian's linux-source-6.1, the
# lab-host config, guest-images/replay/*.patch) whose KVM hurts a nested
# guest, or whose host dies, when the harness arms a host perf event of
# one shape. `pmucanary lab --kernel replay:...` builds them (cached).
#
# 1. The 2012 story in three worlds, and 2025, in one lab over
#    tests/data/lab/replay.ini (cpu-clock :p :pH :pG x perf 3.6, 3.7,
#    today's perf):
#      crash       replay:pebs-2012-harm               (before 20b279ddb38c)
#      eopnotsupp  replay:pebs-2012-harm+pebs-2012-fix (the 3.7 kernel rule)
#      fixed       replay:stock                        (the base)
#      gop2025     replay:guest-only-precise-2025
#    Every cell of every kernel is asserted against a table written here
#    by hand from each patch's rule and perf's encodings (below), not from
#    `pmucanary encode`: the harmed cells are exactly the rule's, k = n,
#    the harm kind is the patch's, everything else OK or the errno; the
#    diffs from the base say harm regression / ABI regression; crash ->
#    eopnotsupp is "fenced" and exit 0; the nested guests were KVM guests.
# 2. replay:host-panic+host-hang over tests/data/lab/host-replay.ini:
#    cpu-clock:u is HOST_CRASH (the lab host's panic in the evidence),
#    task-clock:k HOST_HANG (silence, no panic), the other four cells OK,
#    and the run still finishes through fresh lab hosts.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
top=${PMUCANARY_TOP:-.}

. "$top/tests/kernels.sh"
lab_suite_setup   # skips without root, libvirtd or the kernel source; builds the base kernels

work=$(lab_suite_workdir)
trap 'rm -rf "$work"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
show_lab() { # lab dir
	local k c
	for k in "$1"/*/; do
		[ -f "$k/inner.log" ] && { echo "--- $k/inner.log"; tail -15 "$k/inner.log"; }
		for c in "$k"/lab-host-*.console; do [ -f "$c" ] && { echo "--- $c"; tail -15 "$c"; }; done
	done
}
cells() { # run.json -> "profile spec outcome[ k n]" lines (k/n of harm only), sorted
	jq -r '.cells[] | "\(.profile) \(.spec) \(.outcome)" +
		(if .outcome | test("^(GUEST|HOST)_") then " \(.k) \(.n)" else "" end)' "$1" | sort
}

# ---- 1. three worlds and 2025
# The encodings, from perf's own source at each release:
#   perf 3.6 (parse-events.c before 1342798cc13e): `p` sets precise_ip only;
#     `G` sets exclude_host, `H` sets exclude_guest.
#   perf 3.7 (1342798cc13e): `p` also sets exclude_guest unless G or H is
#     given; G/H as before.
#   today's perf (6.13 and later): no default exclude_guest; an open that
#     fails with EOPNOTSUPP is retried with exclude_guest set unless G or H
#     was given (evsel__fallback()).
# So (precise_ip, exclude_guest, exclude_host) for :p :pH :pG:
#   perf-3.6     (1,0,0) (1,1,0) (1,0,1)
#   perf-3.7     (1,1,0) (1,1,0) (1,0,1)
#   perf-modern  (1,0,0) (1,1,0) (1,0,1)   :p -> (1,1,0) on its retry
# The rules (the patches' headers):
#   pebs-2012-harm  harms while precise_ip > 0 and exclude_guest = 0
#   pebs-2012-fix   EOPNOTSUPP at open for precise_ip > 0, exclude_guest = 0
#   guest-only-precise-2025  harms while precise_ip > 0 and exclude_host = 1
# HARM is any guest harm (the 2012 writes corrupt or crash, whichever they
# hit first); DF is GUEST_CRASH, GUEST_REBOOT or GUEST_HANG (a double-fault
# storm: a panic, a triple fault or a handler spinning on its own stack,
# whichever comes first; the patch's header), or HOST_CRASH when the lab
# host itself reset with no panic: TCG's emulated SVM sometimes turns the
# nested guest's triple fault into a reset of the whole lab host instead of
# a #VMEXIT(SHUTDOWN) to its KVM (seen on perf-modern cpu-clock:pG,
# 2026-12-06). On hardware the storm stays in the guest.
cat >"$work/expected" <<'EOF'
crash perf-3.6 cpu-clock:p HARM
crash perf-3.6 cpu-clock:pH OK
crash perf-3.6 cpu-clock:pG HARM
crash perf-3.7 cpu-clock:p OK
crash perf-3.7 cpu-clock:pH OK
crash perf-3.7 cpu-clock:pG HARM
crash perf-modern cpu-clock:p HARM
crash perf-modern cpu-clock:pH OK
crash perf-modern cpu-clock:pG HARM
eopnotsupp perf-3.6 cpu-clock:p EOPNOTSUPP
eopnotsupp perf-3.6 cpu-clock:pH OK
eopnotsupp perf-3.6 cpu-clock:pG EOPNOTSUPP
eopnotsupp perf-3.7 cpu-clock:p OK
eopnotsupp perf-3.7 cpu-clock:pH OK
eopnotsupp perf-3.7 cpu-clock:pG EOPNOTSUPP
eopnotsupp perf-modern cpu-clock:p OK
eopnotsupp perf-modern cpu-clock:pH OK
eopnotsupp perf-modern cpu-clock:pG EOPNOTSUPP
fixed perf-3.6 cpu-clock:p OK
fixed perf-3.6 cpu-clock:pH OK
fixed perf-3.6 cpu-clock:pG OK
fixed perf-3.7 cpu-clock:p OK
fixed perf-3.7 cpu-clock:pH OK
fixed perf-3.7 cpu-clock:pG OK
fixed perf-modern cpu-clock:p OK
fixed perf-modern cpu-clock:pH OK
fixed perf-modern cpu-clock:pG OK
gop2025 perf-3.6 cpu-clock:p OK
gop2025 perf-3.6 cpu-clock:pH OK
gop2025 perf-3.6 cpu-clock:pG DF
gop2025 perf-3.7 cpu-clock:p OK
gop2025 perf-3.7 cpu-clock:pH OK
gop2025 perf-3.7 cpu-clock:pG DF
gop2025 perf-modern cpu-clock:p OK
gop2025 perf-modern cpu-clock:pH OK
gop2025 perf-modern cpu-clock:pG DF
EOF

want_re() { # HARM|DF|outcome -> the regex an outcome must match
	case $1 in
	HARM) echo '^GUEST_(CORRUPTION|CRASH|OOPS|HANG|REBOOT)$' ;;
	DF) echo '^(GUEST_(CRASH|REBOOT|HANG)|HOST_CRASH)$' ;;
	*) echo "^$1\$" ;;
	esac
}
four_kernels() { # results dir
	"$bin" lab "$top/tests/data/lab/replay.ini" --results "$1" --base fixed \
		--kernel replay:stock:fixed --kernel replay:pebs-2012-harm:crash \
		--kernel replay:pebs-2012-harm+pebs-2012-fix:eopnotsupp \
		--kernel replay:guest-only-precise-2025:gop2025 >"$1.out" 2>&1
}
run_of() { jq -r --arg k "$1" '.kernels[] | select(.name == $k) | .run_json // ""' "$lab/lab.json"; }
# "kernel profile spec outcome want" for every cell of the lab run $lab
# that is not what the table wants
mismatches() {
	local k run p s want got c
	for k in fixed crash eopnotsupp gop2025; do
		run=$(run_of "$k")
		[ -f "$run" ] || { echo "$k - - no-run.json -"; continue; }
		c=$(cells "$run")
		while read -r _ p s want; do
			got=$(awk -v p="$p" -v s="$s" '$1 == p && $2 == s {print $3}' <<<"$c")
			[[ ${got:-none} =~ $(want_re "$want") ]] || echo "$k $p $s ${got:-none} $want"
		done < <(grep "^$k " "$work/expected")
	done
}

# Under TCG the nested SVM is emulated, and now and then a nested guest is
# harmed with no replay rule armed: CI saw the stock kernel's perf-3.6
# cpu-clock:pG and perf-modern cpu-clock:p guests reset (GUEST_REBOOT, the
# console silent before it), the fenced kernel's perf-3.7 cpu-clock:p
# guest panic (GUEST_CRASH, after 7 s of silence), a host-harm kernel's
# task-clock guest reset (all 2026-12); lab hosts freeze (platform.md).
# About every other four-kernel run in CI had one. Such a run is not a
# verdict this test can judge: when the lab host ran under TCG and every
# cell off the table is one the table wants OK that saw harm, the run is
# said here with each such cell's evidence and made again, up to $tries
# runs in all; the last run made is held to the whole table. On KVM (no
# emulated nested SVM) the first run is the one judged.
tries=3
tcg_lab() { # lab dir: its lab hosts ran under TCG
	local r
	r=$(jq -r '[.kernels[] | .run_json // empty][0] // ""' "$1/lab.json" 2>/dev/null)
	[ -f "$r" ] && jq -e '.lab.outer.accel == "tcg"' "$r" >/dev/null
}
only_platform_harm() { # "... got want" lines on stdin: all want OK, got harm
	awk 'NF < 2 || $NF != "OK" || $(NF - 1) !~ /^(GUEST|HOST)_/ {bad = 1} END {exit bad}'
}
evidence_of() { # run.json profile spec
	jq -r --arg p "$2" --arg s "$3" '.cells[] | select(.profile == $p and .spec == $s) |
		.evidence | tostring' "$1" | head -c 3000 | sed 's/^/#     /'; echo
}
# until_judgeable RUNNER DIR MISMATCHES WHAT: runs "RUNNER DIR1", again into
# DIR2, DIR3 while the grounds above hold (MISMATCHES prints "kernel
# profile spec got want" lines for $lab); leaves rc, out, lab and try of
# the last run made
until_judgeable() {
	local off k p s got want
	for try in $(seq "$tries"); do
		"$1" "$2$try"
		rc=$?
		out=$2$try.out
		lab=$(ls -d "$2$try"/lab-* 2>/dev/null | head -1)
		[ "$try" -lt "$tries" ] && [ "$rc" = 1 ] && [ -n "$lab" ] && tcg_lab "$lab" &&
			off=$("$3") && [ -n "$off" ] && only_platform_harm <<<"$off" || break
		echo "# run $try of $tries: TCG harmed a nested guest on cells the table wants OK ($lab):"
		while read -r k p s got want; do
			echo "#   $k $p $s $got (want $want):"; evidence_of "$(run_of "$k")" "$p" "$s"
		done <<<"$off"
		echo "# running $4 again; the next run is held to the table"
	done
}
t0=$SECONDS
until_judgeable four_kernels "$work/w" mismatches "the four kernels"
echo "# lab, four replay kernels: exit $rc in $((SECONDS - t0)) s (run $try)"
if [ "$rc" = 1 ] && [ -n "$lab" ]; then
	ok "four replay kernels, base fixed: exit 1 (crash and eopnotsupp regress)"
else
	bad "four replay kernels: exit $rc (want 1)"; tail -30 "$out"; [ -n "$lab" ] && show_lab "$lab"
	exit 1
fi
for k in fixed crash eopnotsupp gop2025; do
	run=$(run_of "$k")
	if [ -z "$run" ] || [ ! -f "$run" ]; then bad "$k: no run.json"; continue; fi
	cells "$run" >"$work/$k.cells"
	n_want=$(grep -c "^$k " "$work/expected")
	n_got=$(wc -l <"$work/$k.cells")
	[ "$n_got" = "$n_want" ] && ok "$k: $n_got cells" || bad "$k: $n_got cells (want $n_want)"
	while read -r _ p s want; do
		got=$(awk -v p="$p" -v s="$s" '$1 == p && $2 == s' "$work/$k.cells")
		read -r _ _ outcome kk nn <<<"$got"
		re=$(want_re "$want")
		if ! [[ ${outcome:-none} =~ $re ]]; then
			bad "$k $p $s: ${outcome:-no cell} (want $want)"
			# what the run saw: a false verdict must be diagnosable from
			# the log alone (the work directory goes with the test)
			jq -r --arg p "$p" --arg s "$s" '.cells[] | select(.profile == $p and .spec == $s) |
				.evidence | tostring' "$run" | head -c 4000; echo
		elif [ "$outcome" = HOST_CRASH ] && ! jq -e --arg p "$p" --arg s "$s" '.cells[] |
			select(.profile == $p and .spec == $s) | .evidence | tostring |
			test("reboot event") and (test("Kernel panic") | not)' "$run" >/dev/null; then
			bad "$k $p $s: HOST_CRASH that is not a lab host reset without a panic"
		elif [ "$want" = HARM ] || [ "$want" = DF ]; then
			if [ "${kk:-0}" -ge 1 ] && [ "$kk" = "$nn" ]; then
				ok "$k $p $s: $outcome $kk/$nn"
			else
				bad "$k $p $s: $outcome k/n $kk/$nn (want k = n >= 1)"
			fi
		else
			ok "$k $p $s: $outcome"
		fi
	done < <(grep "^$k " "$work/expected")
	grep '"step":"fleet-up"' "$(dirname "$run")/journal.jsonl" | jq -se 'length > 0 and all(.fleet.accel == "kvm")' \
		>/dev/null && ok "$k: the nested guests were KVM guests of the replay kernel" ||
		bad "$k: nested guests not under KVM"
	jq -e '.lab.kernel.source == "replay"' "$run" >/dev/null && ok "$k: run.json says a replay kernel" ||
		bad "$k: kernel source $(jq -c .lab.kernel.source "$run")"
	jq -e '.kernel | startswith("'"$k"' (6.1")' "$run" >/dev/null &&
		ok "$k: run.json names the kernel $(jq -r .kernel "$run")" || bad "$k: kernel $(jq -r .kernel "$run")"
done
# The evidence of one 2012 harm holds what the guest saw (a canary
# mismatch or its kernel's death), not just a verdict word.
jq -e '[.cells[] | select(.outcome | startswith("GUEST_"))] | length > 0 and
	all(.evidence | tostring | length > 20)' "$(run_of crash)" >/dev/null &&
	ok "crash: every harm carries evidence" || bad "crash: harm without evidence"

# The diffs from the base (fixed), and crash -> eopnotsupp.
d=$lab/diff-fixed-vs-crash.json
jq -r '.groups.harm_regression[] | "\(.profile) \(.spec)"' "$d" 2>/dev/null | sort >"$work/hr"
awk '$1 == "crash" && $4 == "HARM" {print $2, $3}' "$work/expected" | sort >"$work/hr.want"
cmp -s "$work/hr" "$work/hr.want" && ok "fixed -> crash: exactly the $(wc -l <"$work/hr") rule cells are harm regressions" ||
	{ bad "fixed -> crash harm regressions differ:"; diff "$work/hr.want" "$work/hr"; }
d=$lab/diff-fixed-vs-eopnotsupp.json
jq -r '.groups.abi_regression[] | "\(.profile) \(.spec)"' "$d" 2>/dev/null | sort >"$work/ar"
awk '$1 == "eopnotsupp" && $4 == "EOPNOTSUPP" {print $2, $3}' "$work/expected" | sort >"$work/ar.want"
cmp -s "$work/ar" "$work/ar.want" && ok "fixed -> eopnotsupp: the ABI regression is exactly the $(wc -l <"$work/ar") old-binary cells" ||
	{ bad "fixed -> eopnotsupp ABI regressions differ:"; diff "$work/ar.want" "$work/ar"; }
jq -e '.groups.harm_regression | length == 0' "$d" >/dev/null && ok "fixed -> eopnotsupp: no harm" ||
	bad "fixed -> eopnotsupp: harm"
"$bin" diff --json "$(run_of crash)" "$(run_of eopnotsupp)" >"$work/fence.json" 2>/dev/null
rc=$?
[ "$rc" = 0 ] && ok "crash -> eopnotsupp: exit 0 (harm turned into an errno is a fix)" ||
	bad "crash -> eopnotsupp: exit $rc (want 0)"
jq -r '.groups.fenced[] | "\(.profile) \(.spec)"' "$work/fence.json" 2>/dev/null | sort >"$work/fenced"
join <(awk '$1 == "crash" && $4 == "HARM" {print $2"/"$3}' "$work/expected" | sort) \
	<(awk '$1 == "eopnotsupp" && $4 == "EOPNOTSUPP" {print $2"/"$3}' "$work/expected" | sort) |
	tr / ' ' | sort >"$work/fenced.want"
cmp -s "$work/fenced" "$work/fenced.want" && ok "crash -> eopnotsupp: fenced exactly $(wc -l <"$work/fenced") cells" ||
	{ bad "fenced cells differ:"; diff "$work/fenced.want" "$work/fenced"; }
[ -z "$(virsh -c qemu:///system list --all --name | grep '^pmucanary-lab')" ] &&
	ok "no lab host left" || bad "lab hosts left: $(virsh -c qemu:///system list --all --name)"

# ---- 2. a kernel that kills its host
cat >"$work/h.want" <<'EOF'
perf-modern cpu-clock OK
perf-modern cpu-clock:k OK
perf-modern cpu-clock:u HOST_CRASH 1 1
perf-modern task-clock OK
perf-modern task-clock:k HOST_HANG 1 1
perf-modern task-clock:u OK
EOF
host_harm() { # results dir
	"$bin" lab "$top/tests/data/lab/host-replay.ini" --results "$1" \
		--kernel replay:host-panic+host-hang:hostharm >"$1.out" 2>&1
}
# "hostharm profile spec got want" for the cells of the lab run $lab that
# are not the table's
h_mismatches() {
	local run
	run=$(run_of hostharm)
	[ -f "$run" ] || { echo "hostharm - - no-run.json -"; return; }
	join -a 1 -e none -o 0,2.2,1.2 <(awk '{print $1 "/" $2, $3}' "$work/h.want" | sort) \
		<(cells "$run" | awk '{print $1 "/" $2, $3}' | sort) | tr / ' ' |
		awk '$3 != $4 {print "hostharm", $0}'
}
t0=$SECONDS
until_judgeable host_harm "$work/h" h_mismatches "the host-harm kernel"
run=$(jq -r '.kernels[0].run_json // ""' "$lab/lab.json" 2>/dev/null)
echo "# lab, replay:host-panic+host-hang: exit $rc in $((SECONDS - t0)) s (run $try)"
[ "$rc" = 1 ] && ok "host harm: exit 1" || { bad "host harm: exit $rc (want 1)"; tail -20 "$out"; show_lab "$lab"; }
if [ -n "$run" ] && [ -f "$run" ]; then
	cells "$run" >"$work/h.cells"
	if cmp -s "$work/h.want" "$work/h.cells"; then
		ok "host harm: cpu-clock:u HOST_CRASH 1/1, task-clock:k HOST_HANG 1/1, the rest OK"
	else
		bad "host harm cells differ:"; diff "$work/h.want" "$work/h.cells"
	fi
	ev() { jq -r --arg s "$1" '.cells[] | select(.spec == $s) | .evidence | tostring' "$run"; }
	ev cpu-clock:u | grep -q "pmucanary replay host-panic" &&
		ok "host harm: the HOST_CRASH evidence holds the lab host's panic" ||
		bad "host harm: no panic in the HOST_CRASH evidence: $(ev cpu-clock:u | head -c 300)"
	ev task-clock:k | grep -q "Kernel panic" &&
		bad "host harm: the HOST_HANG evidence shows a panic" || ok "host harm: the HOST_HANG evidence has no panic"
	grep -q '"step":"done"' "$(dirname "$run")/journal.jsonl" && ok "host harm: the resumed run finished" ||
		bad "host harm: the run never finished"
	# Under TCG a silent lab host gives its batch back once before HOST_HANG
	# (lib/lab/lab.c note_host_down): task-clock:k costs two lab hosts there.
	boots=$(jq '.kernels[0].boots' "$lab/lab.json")
	downs=$(jq '.kernels[0].host_down' "$lab/lab.json")
	retries=$(jq '.kernels[0].tcg_silent_retries' "$lab/lab.json")
	want_retries=0
	jq -e '.lab.outer.accel == "tcg"' "$run" >/dev/null && want_retries=1
	[ "$downs" = 2 ] && [ "$retries" = "$want_retries" ] && [ "$boots" = $((3 + want_retries)) ] &&
		ok "host harm: $boots lab hosts for 2 judged losses and $retries silence given back" ||
		bad "host harm: $boots boots, $downs judged, $retries given back (want $((3 + want_retries)), 2, $want_retries)"
	[ "$want_retries" = 0 ] || { ev task-clock:k | grep -q "silent twice with this batch armed" &&
		ok "host harm: the HOST_HANG evidence says the batch went silent twice" ||
		bad "host harm: the HOST_HANG evidence does not say it was silent twice"; }
else
	bad "host harm: no run.json"
fi
[ -z "$(virsh -c qemu:///system list --all --name | grep '^pmucanary-lab')" ] &&
	ok "no lab host left" || bad "lab hosts left: $(virsh -c qemu:///system list --all --name)"
exit $fail
