#!/usr/bin/env bash
# Checks the profile for the installed perf (perf --version -> profile, via
# `pmucanary encode --release`) against what that perf really passes to
# perf_event_open: for each spec, run `perf stat -vv -e SPEC -a -- true` (and
# `perf record -vv -e SPEC -a -g` for some), parse every `perf_event_attr:`
# block of the event's tries (fallbacks included) and the errno each try got,
# then ask `pmucanary encode --json --mode M --fail ERRNOS SPEC` for the same
# chain. Every try must agree member by member, the number of tries must
# agree, and perf giving up must agree with the profile giving up. A spec
# perf's parser rejects must be rejected by the profile too.
#
# Compared: every member perf prints except
#   - none excluded for the event itself: type, size, config, sample_period/
#     sample_freq, sample_type, read_format, disabled, inherit, freq,
#     precise_ip, exclude_*, pinned, exclusive, sample_id_all, mmap/comm/... .
#   Only the event's own tries are compared: perf record's extra dummy
#   tracking event (mmap/comm/task/ksymbol/bpf_event, opened after the event
#   succeeds) and per-CPU repeats of a successful try are not part of the
#   profile's single attr.
# Skips (exit 77, prints SKIP) when perf or python3 is missing, or no profile
# covers the installed perf release.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
perf=${PERF:-$(command -v perf || true)}

if [ -z "$perf" ] || ! "$perf" --version >/dev/null 2>&1; then
	echo "SKIP: no working perf binary"; exit 77
fi
if ! command -v python3 >/dev/null; then
	echo "SKIP: python3 missing (needed to parse perf -vv output)"; exit 77
fi
version=$("$perf" --version 2>&1)
out=$("$bin" encode --list-profiles --release "$version" 2>&1); rc=$?
if [ $rc -ne 0 ]; then
	if grep -q "no profile for perf release" <<<"$out"; then
		echo "SKIP: no pmucanary profile for '$version'"; exit 77
	fi
	echo "FAIL: pmucanary encode --list-profiles --release: exit $rc: $out"; exit 1
fi
profile=$(awk '{print $1}' <<<"$out")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

stat_specs=(cpu-clock cpu-clock:u cpu-clock:k cpu-clock:h cpu-clock:p cpu-clock:pp cpu-clock:ppp
	cpu-clock:G cpu-clock:H cpu-clock:GH cpu-clock:uG cpu-clock:pG cpu-clock:ppH cpu-clock:uk
	cpu-clock:I cpu-clock:D cpu-clock:e cpu-clock:P cpu-clock:S
	task-clock:u page-faults:uG context-switches:k msr/tsc/ msr/tsc/u msr/tsc/pp
	cycles cycles:pp cycles:u instructions:k L1-dcache-load-misses r01c2
	cpu-clock:pppp cpu-clock:uu cpu-clock:x nosuchevent msr/tsc/:u
	# issue 23: term lists on hw/sw/raw/cache events, perf's own terms
	# on PMU events, alias case, 'EVENT:', skipped characters, cache
	# parts, a second alias
	'cycles/period=1000/' 'cpu-clock/config=1/' 'r1a8/period=10/' 'cpu-clock//'
	'cycles/name=x/' 'msr/period=1000/' 'msr/tsc,name=foo/' 'msr/tsc,percore/' 'msr/TSC/'
	'cycles:' ' cpu-clock' 'cpu-clock: u' 'cpu-clock :u' 'L1-dcache-load-load'
	'L1-dcache-misses-misses' 'L1-dcache-misses-load' 'msr/tsc,tsc/'
	'cpu-clock/period=1/:u' 'cpu-clock/freq=100/' 'cpu-clock/percore=2/' 'r1a8/name=x/:u'
	'cpu-clock/bogus=1/' 'msr/tsc,event=1,config=0/' 'cpu -clock' 'cycles//u')
record_specs=(cpu-clock cpu-clock:u cpu-clock:pp cpu-clock:P cpu-clock:S cpu-clock:GH
	cycles cycles:pp cycles:ppH msr/tsc/ msr/tsc/u msr/tsc/P page-faults:G
	'cpu-clock/period=1000/' 'cpu-clock/freq=100/' 'cpu-clock/time=0/'
	'cpu-clock/config=1,name=x/u' 'msr/tsc,period=7/' 'r1a8/period=10/:u'
	'cpu-clock/no-inherit/' 'cpu-clock/period=1000,time=0/' 'cycles:')
# Known, named differences: perf takes these, pmucanary refuses them as not
# modelled (tracepoints need tracefs ids, breakpoints bp_addr/bp_len/
# bp_type). Each must still be a spec perf opens and the profile refuses
# with "not modelled"; anything else fails, so the list cannot go stale.
known_specs=('sched:sched_switch' 'mem:0x1000:rw' 'mem:0x1000')

fails=0 n=0
check() {
	local mode=$1 spec=$2 known=${3:-} perfout=$tmp/perf.out rc
	n=$((n + 1))
	if [ "$mode" = stat ]; then
		"$perf" stat -vv -e "$spec" -a -- true >"$perfout" 2>&1
	else
		"$perf" record -vv -e "$spec" -a -g -o "$tmp/perf.data" -- true >"$perfout" 2>&1
	fi
	rc=$?
	python3 - "$bin" "$version" "$mode" "$spec" "$perfout" "$rc" "$known" <<'PY'
import json, re, subprocess, sys

binpath, version, mode, spec, perfout, perf_rc, known = sys.argv[1:8]
text = open(perfout, errors="replace").read()

SAMPLE = ["IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD",
          "STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT",
          "DATA_SRC", "IDENTIFIER", "TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX",
          "CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT"]
READ = ["TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST"]

def flags(val, names):
    v = 0
    for f in val.split("|"):
        v |= 1 << names.index(f)
    return v

def member(line):
    m = re.match(r"\s+(\{[^}]*\}|\S+)\s+(\S+)\s*$", line)
    if not m:
        return None
    name, val = m.group(1), m.group(2)
    if name.startswith("{"):
        name = name.strip("{} ").split(",")[0].strip()
    if name == "sample_type":
        return name, flags(val, SAMPLE)
    if name == "read_format":
        return name, flags(val, READ)
    return name, int(val, 0)

# Blocks in order: (attr, result) with result = fd (>= 0) or -errno of the
# first open after the block.
blocks, cur, inblock = [], None, False
for line in text.splitlines():
    if line.startswith("perf_event_attr:"):
        cur, inblock = {}, True
        continue
    if inblock:
        if line.startswith("----"):
            inblock = False
            blocks.append([cur, None])
            continue
        kv = member(line)
        if kv:
            cur[kv[0]] = kv[1]
        continue
    if blocks and blocks[-1][1] is None:
        m = re.match(r"sys_perf_event_open: .*= (\d+)\s*$", line)
        if m:
            blocks[-1][1] = int(m.group(1))
        m = re.match(r"sys_perf_event_open failed, error (-\d+)", line)
        if m:
            blocks[-1][1] = int(m.group(1))

tries = []
for attr, res in blocks:
    if res is None:
        continue
    tries.append((attr, res))
    if res >= 0:
        break

errs = [-r for _, r in tries if r < 0]
cmd = [binpath, "encode", "--release", version, "--mode", mode, "--json"]
if errs:
    cmd += ["--fail", ",".join(str(e) for e in errs)]
cmd += [spec]
out = subprocess.run(cmd, capture_output=True, text=True)
pred = json.loads(out.stdout)[0]
problems = []

if known:
    if tries and "error" in pred and "not modelled" in pred["error"]:
        print(f"known difference: {mode} {spec}: perf opens it ({len(tries)} tries), "
              f"pmucanary: {pred['error']}")
        sys.exit(0)
    print(f"FAIL: {mode} {spec}: listed as a known difference but perf tries={len(tries)}, "
          f"pmucanary: {pred.get('error', 'encodes')}")
    sys.exit(1)

if "error" in pred or not tries:
    if "error" in pred and not tries:
        print(f"ok: {mode} {spec}: both reject ({pred['error']})")
        sys.exit(0)
    print(f"FAIL: {mode} {spec}: perf tries={len(tries)} rc={perf_rc}, pmucanary: {pred.get('error', 'encodes')}")
    print("\n".join("    " + l for l in text.splitlines()[:15]))
    sys.exit(1)

predicted = [dict((k, v) for k, v in pred.items() if k not in ("spec", "tries", "gave_up"))]
predicted += [dict((k, v) for k, v in t.items() if k != "why") for t in pred.get("tries", [])]
for t in predicted:
    if "sample_freq" in t:
        t["sample_period"] = t.pop("sample_freq")

perf_gave_up = tries[-1][1] < 0
if perf_gave_up != pred.get("gave_up", False) and (errs or perf_gave_up):
    problems.append(f"perf {'gave up' if perf_gave_up else 'opened'} after {len(tries)} tries; "
                    f"profile gave_up={pred.get('gave_up')}")
if len(predicted) < len(tries):
    problems.append(f"perf made {len(tries)} tries, profile predicts {len(predicted)}")
for i, (attr, res) in enumerate(tries):
    if i >= len(predicted):
        break
    p = predicted[i]
    for k in sorted(set(attr) | set(p)):
        if attr.get(k, 0) != p.get(k, 0):
            problems.append(f"try {i + 1}: {k}: perf {attr.get(k, 0)}, profile {p.get(k, 0)}")

outcome = "opened" if not perf_gave_up else f"errno {-tries[-1][1]}"
if problems:
    print(f"FAIL: {mode} {spec} ({len(tries)} tries, {outcome})")
    for pr in problems:
        print("    " + pr)
    sys.exit(1)
print(f"ok: {mode} {spec}: {len(tries)} tries agree, {outcome}")
PY
	[ $? -eq 0 ] || fails=$((fails + 1))
}

echo "perf: $version ($perf) -> profile $profile"
for s in "${stat_specs[@]}"; do check stat "$s"; done
for s in "${record_specs[@]}"; do check record "$s"; done
for s in "${known_specs[@]}"; do check stat "$s" known; done
echo "cli_perf_debian: $((n - fails)) of $n passed (${#known_specs[@]} known differences: ${known_specs[*]})"
[ "$fails" -eq 0 ]
