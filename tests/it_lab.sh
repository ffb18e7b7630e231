#!/usr/bin/env bash
# pmucanary lab end to end: two kernels built from Debian's linux-source-6.1
# (tests/kernels.sh: a lab-host config, and the same as the "3.7 kernel",
# replay:pebs-2012-harm+pebs-2012-fix), each booted as a lab host that runs
# tests/data/lab/abi.ini against nested KVM guests of its own KVM.
#  - exit 1 (a regression), and the diff base -> patched flags exactly the
#    cells predicted from the patch's rule and a hand-written table of each
#    perf release's encodings (computed here, not by the harness), and
#    nothing else (the harm patch acts only on attrs the fix refuses: no
#    harm gets through): cpu-clock attrs with precise_ip > 0 and
#    exclude_guest = 0 are refused with EOPNOTSUPP, except where perf's own
#    fallback retries with exclude_guest (today's perf, no G/H given:
#    evsel__fallback() in tools/perf/util/evsel.c);
#  - inside each lab host kvm_amd (or kvm_intel) was loaded with nesting on
#    and the guests were domains of type kvm (the lab host's own
#    fingerprint, the inner run's journal);
#  - every cell carries its kernel's name, release and image hash, and the
#    two kernels' hashes differ; every report says which layer ran what;
#  - a lab host that sends no first heartbeat by --boot-timeout is INFRA
#    with failure "boot": the kernel did not boot, not the machine.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
top=${PMUCANARY_TOP:-.}

. "$top/tests/kernels.sh"
lab_suite_setup   # skips without root, libvirtd or the kernel source; builds the kernels
base=$PMUCANARY_LAB_KERNEL_BASE
patched=$PMUCANARY_LAB_KERNEL_PATCHED

work=$(lab_suite_workdir)
trap 'rm -rf "$work"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
scenario=$top/tests/data/lab/abi.ini
profiles="perf-3.6 perf-3.7 perf-modern"
mods=$(sed -n 's/^modifiers = //p' "$scenario" | tr -d ' ' | tr ';' ' ')

# The prediction: from the patch's rule and each perf release's encoding of
# cpu-clock's modifiers, written out by hand from perf's own source (not
# from `pmucanary encode`, the encoder under test). Columns: profile,
# modifiers, precise_ip, exclude_guest, exclude_host.
#  - perf 3.6, tools/perf/util/parse-events.c parse_events__modifier_event():
#    p counts precise_ip and sets nothing else; G sets exclude_host, H
#    exclude_guest (exclude_GH); no modifier at all keeps event_attr_init()'s
#    exclude_guest = !perf_guest (1 for record); any modifier string
#    starts from zeroed bits (get_event_modifier() with no evsel).
#  - perf 3.7 (1342798cc13e): p also sets exclude_guest unless G or H is
#    given anywhere in the modifiers.
#  - today's perf: p sets nothing (exclude_guest by default is gone); on
#    EOPNOTSUPP evsel__fallback() (tools/perf/util/evsel.c) retries a
#    precise event with exclude_guest when no G/H was given: a 'fallback'
#    row can never be refused for want of exclude_guest.
cat >"$work/encodings" <<'TABLE'
perf-3.6 - 0 1 0
perf-3.6 u 0 0 0
perf-3.6 k 0 0 0
perf-3.6 p 1 0 0
perf-3.6 pp 2 0 0
perf-3.6 ppp 3 0 0
perf-3.6 G 0 0 1
perf-3.6 H 0 1 0
perf-3.6 pG 1 0 1
perf-3.6 pH 1 1 0
perf-3.6 ppH 2 1 0
perf-3.7 - 0 1 0
perf-3.7 u 0 0 0
perf-3.7 k 0 0 0
perf-3.7 p 1 1 0
perf-3.7 pp 2 1 0
perf-3.7 ppp 3 1 0
perf-3.7 G 0 0 1
perf-3.7 H 0 1 0
perf-3.7 pG 1 0 1
perf-3.7 pH 1 1 0
perf-3.7 ppH 2 1 0
perf-modern - 0 0 0
perf-modern u 0 0 0
perf-modern k 0 0 0
perf-modern p 1 0 0 fallback
perf-modern pp 2 0 0 fallback
perf-modern ppp 3 0 0 fallback
perf-modern G 0 0 1
perf-modern H 0 1 0
perf-modern pG 1 0 1
perf-modern pH 1 1 0
perf-modern ppH 2 1 0
TABLE
# every (profile, modifiers) the scenario sweeps has a row, and no other
for p in $profiles; do for m in $mods; do echo "$p $m"; done; done | sort >"$work/swept"
awk '{ print $1, $2 }' "$work/encodings" | sort >"$work/tabled"
if ! cmp -s "$work/swept" "$work/tabled"; then
	bad "the encodings table does not match the scenario's sweep:"; diff "$work/swept" "$work/tabled"
fi
# the patch's rule: precise cpu-clock without exclude_guest is refused
awk '$3 > 0 && $4 == 0 && $6 != "fallback" {
	print $1, ($2 == "-" ? "cpu-clock" : "cpu-clock:" $2) }' "$work/encodings" |
	sort >"$work/predicted"
n_pred=$(wc -l <"$work/predicted")
if [ "$n_pred" -lt 5 ]; then
	bad "prediction has only $n_pred cells: $(cat "$work/predicted")"
fi

# A kernel whose lab host never answers by the deadline could not be tested,
# and the lab says it is the kernel that did not boot (not the machine):
# a real lab host, a first-heartbeat deadline no kernel meets.
"$bin" lab "$scenario" --results "$work/nb" --kernel "$base:base" --boot-timeout 1 \
	>"$work/nb.out" 2>"$work/nb.err"
rc=$?
nb=$(ls -d "$work"/nb/lab-* 2>/dev/null | head -1)
if [ "$rc" = 125 ] && grep -q "could not test (the kernel did not boot to a lab host): lab host 1 did not come up" "$work/nb.out" &&
	jq -e '.kernels[0].status == "infra" and .kernels[0].failure == "boot"' "$nb/lab.json" >/dev/null; then
	ok "a lab host with no first heartbeat by --boot-timeout: INFRA, failure boot"
else
	bad "--boot-timeout 1: exit $rc (want 125): $(cat "$work/nb.out" "$work/nb.err" | tail -5)"
fi

t0=$SECONDS
"$bin" lab "$scenario" --results "$work/r" --kernel "$base:base" --kernel "$patched:patched" \
	>"$work/out" 2>"$work/err"
rc=$?
echo "# lab base vs patched: exit $rc in $((SECONDS - t0)) s"
lab=$(ls -d "$work"/r/lab-* 2>/dev/null | head -1)
if [ "$rc" != 1 ] || [ -z "$lab" ]; then
	bad "lab base vs patched: exit $rc (want 1)"
	cat "$work/out" "$work/err" | tail -30
	for k in base patched; do
		[ -f "$lab/$k/inner.log" ] && { echo "--- $k/inner.log"; tail -20 "$lab/$k/inner.log"; }
		for c in "$lab/$k"/lab-host-*.console; do
			[ -f "$c" ] && { echo "--- $c"; tail -20 "$c"; }
		done
	done
	exit 1
fi
ok "lab base vs patched exits 1"

diff_json=$lab/diff-base-vs-patched.json
jq -r '.groups.abi_regression[] | "\(.profile) \(.spec)"' "$diff_json" | sort >"$work/flagged"
if cmp -s "$work/predicted" "$work/flagged"; then
	ok "the diff flags exactly the $n_pred predicted cells"
else
	bad "flagged cells differ from the prediction:"; diff "$work/predicted" "$work/flagged"
fi
others=$(jq '[.groups | to_entries[] | select(.key != "abi_regression" and .key != "unchanged") |
	.value | length] | add' "$diff_json")
[ "$others" = 0 ] && ok "nothing else changed" || bad "$others cells in other groups: $(jq -c .counts "$diff_json")"
jq -e '[.groups.abi_regression[] | select(.new != "EOPNOTSUPP")] | length == 0' "$diff_json" >/dev/null &&
	ok "every flagged cell is EOPNOTSUPP" || bad "flagged cells with another outcome"

for k in base patched; do
	run=$(jq -r --arg k "$k" '.kernels[] | select(.name == $k) | .run_json' "$lab/lab.json")
	rundir=$(dirname "$run")
	sha=$(sha256sum "$( [ $k = base ] && echo "$base" || echo "$patched")" | cut -c1-12)
	label="$k (6.1.192, $sha)"
	jq -e --arg l "$label" '.kernel as $k | [.cells[] | select((.kernel // $k) != $l)] | length == 0' "$run" >/dev/null &&
		ok "$k: every cell says '$label'" || bad "$k: cells without the label '$label'"
	jq -e '[.cells[] | select(.outcome == "INFRA")] | length == 0' "$run" >/dev/null &&
		ok "$k: no INFRA cell" || bad "$k: INFRA cells"
	# from inside the lab host: its KVM, nesting, the guests' accel
	jq -e '.host.kvm | (has("kvm_amd") or has("kvm_intel"))' "$run" >/dev/null &&
		ok "$k: kvm_amd/kvm_intel loaded inside the lab host" ||
		bad "$k: no kvm_amd/kvm_intel in the lab host's fingerprint: $(jq -c .host.kvm "$run")"
	jq -e '.host.kvm | (.kvm_amd.nested // .kvm_intel.nested) | test("^(1|Y)$")' "$run" >/dev/null &&
		ok "$k: nested virtualization on" || bad "$k: nesting off: $(jq -c .host.kvm "$run")"
	grep '"step":"fleet-up"' "$rundir/journal.jsonl" | jq -e '.fleet.accel == "kvm"' >/dev/null &&
		ok "$k: the nested guests were KVM guests (domain type kvm)" || bad "$k: nested guests not under KVM"
	jq -e '.lab.nested == true and .lab.outer.host.kernel.release != null' "$run" >/dev/null &&
		ok "$k: run.json says it is nested, with the outer host's fingerprint" ||
		bad "$k: run.json lacks lab.nested / lab.outer"
	jq -e '[.limitations[] | select(test("nested guests cannot show the PEBS"))] | length == 1' "$run" \
		>/dev/null && ok "$k: says what nesting cannot show" || bad "$k: no nesting limitation"
done
sha_b=$(jq -r '.cells[0].kernel // .kernel' "$(jq -r '.kernels[0].run_json' "$lab/lab.json")")
sha_p=$(jq -r '.cells[0].kernel // .kernel' "$(jq -r '.kernels[1].run_json' "$lab/lab.json")")
[ "$sha_b" != "$sha_p" ] && ok "the two 6.1.192 builds stay apart ($sha_b / $sha_p)" || bad "same label twice"
grep -q "^patched (6.1.192" "$lab/matrix.txt" && grep -q "^base (6.1.192" "$lab/matrix.txt" &&
	ok "the merged matrix has both kernels' rows" || bad "matrix.txt rows"
grep -q "lab: the outer host ran the lab host under TCG\|lab: this run ran inside a lab host" "$lab/matrix.txt" &&
	ok "the matrix says which layer ran what" || bad "matrix.txt has no layer lines"
"$bin" diff "$(jq -r '.kernels[0].run_json' "$lab/lab.json")" "$(jq -r '.kernels[1].run_json' "$lab/lab.json")" \
	>/dev/null 2>&1
[ $? = 1 ] && ok "pmucanary diff on the two run.json agrees (exit 1)" || bad "pmucanary diff disagrees"
[ -z "$(virsh -c qemu:///system list --all --name | grep '^pmucanary-lab')" ] &&
	ok "no lab host left" || bad "lab hosts left: $(virsh -c qemu:///system list --all --name)"
exit $fail
