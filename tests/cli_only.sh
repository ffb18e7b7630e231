#!/usr/bin/env bash
# pmucanary run --only RESULT [--cell PROFILE:SPEC]: every combination that
# cannot mean anything and every RESULT that cannot be re-tested here exits
# 2 with one line naming the option, the file or the cell and field, before
# any run directory exists; no guests needed. The result files are written
# here by hand; their attrs are perf's own (tools/perf/util/evsel.c,
# evsel__config for `perf record -a -g -e cpu-clock:u`, perf 6.x:
# PERF_ATTR_SIZE_VER8 = 136, sample_type IP|TID|TIME|CALLCHAIN|CPU|PERIOD|
# IDENTIFIER = 0x101a7, read_format ID|LOST = 0x14, freq 4000, disabled,
# inherit, sample_id_all; `:u` sets exclude_kernel and exclude_hv).
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
top=${PMUCANARY_TOP:-.}
fail=0
tmp=$(mktemp -d /tmp/cli_only.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
r=$tmp/r
check() { # name expected-exit expected-stderr-substring cmd...
	local name=$1 want=$2 msg=$3; shift 3
	local err rc
	err=$("$@" 2>&1 >/dev/null); rc=$?
	if [ "$rc" != "$want" ] || [[ "$err" != *"$msg"* ]]; then
		echo "FAIL $name: exit $rc (want $want), stderr: $err"; fail=1
	else
		echo "ok   $name"
	fi
}
run() { "$bin" run --results "$r" --uri test:///default "$@"; }

# perf-modern's `perf record -a -g -e cpu-clock:u` (see the top).
CPU_CLOCK_U='"type":1,"size":136,"sample_freq":4000,"sample_type":65959,"read_format":20,"disabled":1,"inherit":1,"exclude_kernel":1,"exclude_hv":1,"freq":1,"sample_id_all":1'
# result FILE ATTRS CELLS: a pmucanary/2 run file.
result() {
	printf '{"schema":"pmucanary/2","kind":"run","run_id":"20261201T000000Z-aaaaaa",
"created":"2026-12-01T00:00:00Z","tool_version":"0.1.0","host":{},"kernel":"6.1.0",
"accel":"kvm","limitations":[],"selftest":false,"scenario":null,
"attrs":[%s],"cells":[%s]}\n' "$2" "$3" >"$1"
}
crash='"outcome":"GUEST_CRASH","tries":[{"attr":0,"outcome":"OK"}],"k":2,"n":2'
result "$tmp/good.json" "{$CPU_CLOCK_U}" \
	"{\"profile\":\"perf-modern\",\"spec\":\"cpu-clock:u\",\"attr\":0,$crash}"
smoke=$top/scenarios/smoke.ini

# Combinations refused before anything is read.
check only-and-resume 2 "--only with --resume" run --only "$tmp/good.json" --resume "$tmp/nope"
check cell-without-only 2 "--cell without --only" run --cell perf-modern:cpu-clock:u "$smoke"
check only-and-perf-binary 2 "--only with --perf-binary" \
	run --only "$tmp/good.json" --perf-binary /bin/true "$smoke"

# RESULT itself.
# (each line names the option first: README "one line each")
check only-missing 2 "--only: $tmp/nope.json" run --only "$tmp/nope.json" "$smoke"
mkdir "$tmp/dir.json"
check only-directory 2 "--only: $tmp/dir.json: a directory" run --only "$tmp/dir.json" "$smoke"
printf '{"schema": "pmucanary/2",\n  "kind": \n' >"$tmp/garbled.json"
check only-garbled 2 "--only: $tmp/garbled.json:3:" run --only "$tmp/garbled.json" "$smoke"
# A RESULT the system fails to read is no bad input: read(2) of the
# process's own /proc/self/mem at offset 0 (unmapped) is EIO, and EIO is
# "could not test", 125 (infile.h: only -EINVAL and bad paths are the
# user's), never 2. Read only.
[ -r /proc/self/mem ] &&
	check only-read-error 125 "/proc/self/mem: Input/output error" run --only /proc/self/mem "$smoke"
check cell-not-in-result 2 "--cell: no cell perf-modern:instructions in the result file" \
	run --only "$tmp/good.json" --cell perf-modern:instructions "$smoke"
result "$tmp/rejected.json" "{$CPU_CLOCK_U}" \
	"{\"profile\":\"perf-3.6\",\"spec\":\"cpu-clock:W\",\"outcome\":\"REJECTED\",\"error\":\"bad modifier\"}"
check cell-rejected 2 "cell perf-3.6:cpu-clock:W has no attr" \
	run --only "$tmp/rejected.json" --cell perf-3.6:cpu-clock:W "$smoke"
result "$tmp/infra.json" "{$CPU_CLOCK_U}" \
	"{\"profile\":\"perf-modern\",\"spec\":\"cpu-clock:u\",\"attr\":0,\"outcome\":\"INFRA\",\"tries\":[{\"attr\":0,\"outcome\":\"OK\"}]}"
check cell-infra 2 "cell perf-modern:cpu-clock:u is INFRA" \
	run --only "$tmp/infra.json" --cell perf-modern:cpu-clock:u "$smoke"
result "$tmp/clean.json" "{$CPU_CLOCK_U}" \
	"{\"profile\":\"perf-modern\",\"spec\":\"cpu-clock:u\",\"attr\":0,\"outcome\":\"OK\",\"tries\":[{\"attr\":0,\"outcome\":\"OK\"}]}"
check nothing-to-retest 2 "--only $tmp/clean.json: nothing to re-test: no harm or errno cell" \
	run --only "$tmp/clean.json" "$smoke"
# A traced perf binary's cells cannot be encoded by this binary: left out,
# said so, and with nothing else left, refused.
result "$tmp/bin.json" "{$CPU_CLOCK_U}" \
	"{\"profile\":\"bin:perf-6.1.0\",\"spec\":\"cpu-clock:u\",\"attr\":0,$crash}"
check only-bin-cells 2 "every cell selected is a traced perf binary's" \
	run --only "$tmp/bin.json" "$smoke"
check only-bin-said 2 "cell bin:perf-6.1.0:cpu-clock:u left out" \
	run --only "$tmp/bin.json" "$smoke"

# The attr RESULT recorded is not the one perf-modern builds here (a
# precise_ip planted by hand): refused naming the cell and the member.
result "$tmp/planted.json" "{$CPU_CLOCK_U,\"precise_ip\":1}" \
	"{\"profile\":\"perf-modern\",\"spec\":\"cpu-clock:u\",\"attr\":0,$crash}"
check attr-differs 2 "--only $tmp/planted.json: cell perf-modern:cpu-clock:u: profile perf-modern encodes another attr than RESULT's (RESULT -> this binary: precise_ip 0x1 -> 0)" \
	run --only "$tmp/planted.json" "$smoke"
result "$tmp/sized.json" "{${CPU_CLOCK_U/\"size\":136/\"size\":128},\"exclude_guest\":1}" \
	"{\"profile\":\"perf-modern\",\"spec\":\"cpu-clock:u\",\"attr\":0,$crash}"
check attr-differs-two 2 "(RESULT -> this binary: size 0x80 -> 0x88, exclude_guest 0x1 -> 0)" \
	run --only "$tmp/sized.json" "$smoke"
# A cell the scenario does not sweep.
result "$tmp/unswept.json" "{$CPU_CLOCK_U}" \
	"{\"profile\":\"perf-modern\",\"spec\":\"cpu-clock:ppp\",\"attr\":0,$crash}"
check not-in-sweep 2 "cell perf-modern:cpu-clock:ppp of RESULT is not in this scenario's sweep" \
	run --only "$tmp/unswept.json" "$smoke"

# Default SCENARIO: the scenario.ini a run kept beside its run.json (here
# a bad one, so that the message names it).
mkdir -p "$tmp/run1"
cp "$tmp/good.json" "$tmp/run1/run.json"
printf '[sweep]\nevents = cpu-clock\n[loda]\n' >"$tmp/run1/scenario.ini"
check default-scenario 2 "$tmp/run1/scenario.ini:3: [loda]: unknown section" \
	run --only "$tmp/run1/run.json"
# ...and one that does not sweep the cell, named as not in its sweep.
printf '[sweep]\nevents = task-clock\nmodifiers = u\nprofiles = perf-modern\n' >"$tmp/run1/scenario.ini"
check default-scenario-sweep 2 "cell perf-modern:cpu-clock:u of RESULT is not in this scenario's sweep" \
	run --only "$tmp/run1/run.json"

# A resumed --only run reads its selection from the journal's start line:
# a damaged one is bad input naming the run directory.
mkdir -p "$tmp/resumed"
printf '{"step":"start","seq":0,"only":{"result":"r.json","cells":[]}}\n' >"$tmp/resumed/journal.jsonl"
cp "$smoke" "$tmp/resumed/scenario.ini"
check resume-bad-only 2 "$tmp/resumed: bad \"only\" in the start line" run --resume "$tmp/resumed"

if [ -e "$r" ]; then echo "FAIL refused --only runs left run directories: $(ls "$r")"; fail=1
else echo "ok   refused --only runs leave no run directory"; fi

help=$("$bin" run --help 2>&1)
if [[ $help == *"--only"*"RESULT"* && $help == *"--cell"* ]]; then echo "ok   run --help shows --only and --cell"
else echo "FAIL run --help lacks --only/--cell"; fail=1; fi
exit $fail
