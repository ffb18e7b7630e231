#!/usr/bin/env bash
# Every user-given input file (run SCENARIO, run --lab-context, matrix
# --errata, diff A B, matrix FILES, image --kernel, lab --kernel) that is
# not a regular file, or is too large, or (text) holds a NUL byte:
#   - exit 2 within seconds (`--errata /dev/zero` once grew memory without
#     bound, a FIFO with no writer blocked diff, matrix and run forever);
#   - one line on stderr naming the path;
#   - no results directory created.
# A scenario's kernel or initrd that cannot be used, and a sweep where every
# spec is rejected, fail the same way before anything runs. A perf binary
# that hangs is killed after PMUCANARY_TEST_PERF_TIMEOUT_S (a test hook).
# Every node is this test's own, made in its temp dir: never a real /dev one.
# Needs root (mknod); $PMUCANARY_BIN and $PMUCANARY_TOP (tests/run-tests).
set -euo pipefail
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
d=$top/tests/data/diff
m=$top/tests/data/matrix

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: not root (mknod for the test's own device nodes)"
	exit 77
fi
tmp=$(mktemp -d /tmp/cli_inputs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if ! mknod "$tmp/zero" c 1 5 2>/dev/null; then
	echo "SKIP: mknod refused (no CAP_MKNOD here)"
	exit 77
fi
mkfifo "$tmp/fifo"
mkdir "$tmp/adir"
# Over the limits: scenario/errata 1 MiB, result files 512 MiB (sparse).
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '#' >"$tmp/big.ini"
truncate -s $((512 * 1024 * 1024 + 1)) "$tmp/big.json"
printf '[fleet]\nguests = 1\n[sweep]\nspecs = cycles\0:G\n' >"$tmp/nul.ini"
printf '[erratum E1]\nharm = GUEST_CRASH\n\0\n' >"$tmp/nul-errata.ini"
printf '[fleet]\nguests = 1\n[sweep]\nspecs = cycles:G\nprofiles = perf-3.1\n' >"$tmp/ok.ini"
mkdir "$tmp/cwd"

# ASan reserves terabytes of shadow address space, so `ulimit -v` kills a
# sanitizer build at start: there ASan's own cap on one allocation bounds
# memory instead (an unbounded read is one growing buffer).
if ldd "$bin" 2>/dev/null | grep -q libasan; then
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=2048
	vlimit=unlimited
else
	vlimit=$((2 * 1024 * 1024))
fi

fails=0 n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }

# refused WHAT PATH ARGS...: the command, run in an empty directory with
# at most 2 GiB of address space (of one allocation under ASan), exits 2
# within 20 s, says one line naming
# PATH, and creates nothing.
refused() {
	local what=$1 path=$2 rc=0
	shift 2
	rm -rf "$tmp/runs"
	(cd "$tmp/cwd" && ulimit -v "$vlimit" &&
		timeout 20 "$bin" "$@" </dev/null >"$tmp/out" 2>"$tmp/err") || rc=$?
	if [ "$rc" -eq 124 ]; then
		bad "$what: did not end within 20 s"
		return
	fi
	if [ "$rc" -eq 2 ]; then ok "$what: exit 2"; else bad "$what: exit 2 (got $rc)"; fi
	if [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "$path" "$tmp/err"; then
		ok "$what: one line naming $path"
	else
		bad "$what: one line naming $path (got: $(head -c 400 "$tmp/err"))"
	fi
	if [ ! -e "$tmp/runs" ] && [ -z "$(ls -A "$tmp/cwd")" ]; then
		ok "$what: no results directory"
	else
		bad "$what: no results directory ($(ls -A "$tmp/cwd" "$tmp/runs" 2>&1 | tr '\n' ' '))"
		rm -rf "$tmp/cwd"/* "$tmp/runs"
	fi
}

for node in zero fifo adir; do
	p=$tmp/$node
	refused "run SCENARIO=$node" "$p" run --results "$tmp/runs" "$p"
	refused "run --lab-context $node" "$p" run --results "$tmp/runs" --lab-context "$p" "$tmp/ok.ini"
	refused "matrix --errata $node" "$p" matrix --errata "$p" "$m/amd-3.6.json"
	refused "diff $node B" "$p" diff "$p" "$d/probe-3.6.json"
	refused "diff A $node" "$p" diff "$d/probe-3.6.json" "$p"
	refused "matrix $node" "$p" matrix "$m/amd-3.6.json" "$p"
	refused "image --kernel $node" "$p" image --kernel "$p" -o "$tmp/runs"
	refused "lab --kernel $node" "$p" lab --results "$tmp/runs" --kernel "$p" "$tmp/ok.ini"
done

refused "run: scenario over 1 MiB" "$tmp/big.ini" run --results "$tmp/runs" "$tmp/big.ini"
grep -q '1 MiB' "$tmp/err" && ok "scenario over 1 MiB: the limit is said" ||
	bad "scenario over 1 MiB: the limit is said"
refused "matrix --errata over 1 MiB" "$tmp/big.ini" matrix --errata "$tmp/big.ini" "$m/amd-3.6.json"
refused "diff: result file over 512 MiB" "$tmp/big.json" diff "$tmp/big.json" "$d/probe-3.6.json"
grep -q '512 MiB' "$tmp/err" && ok "result file over 512 MiB: the limit is said" ||
	bad "result file over 512 MiB: the limit is said"
refused "matrix: result file over 512 MiB" "$tmp/big.json" matrix "$tmp/big.json"

# A NUL byte in a text input is an error naming file:line, not a silent end.
refused "run: NUL byte in the scenario" "$tmp/nul.ini:4" run --results "$tmp/runs" "$tmp/nul.ini"
refused "matrix --errata: NUL byte" "$tmp/nul-errata.ini:3" matrix --errata "$tmp/nul-errata.ini" \
	"$m/amd-3.6.json"

# Checked before anything runs or is created: a scenario's kernel or
# initrd that is missing, a directory or a FIFO is file:line: [fleet] key.
for bad in "kernel = $tmp/no-such-vmlinuz" "initrd = $tmp/adir" "kernel = $tmp/fifo"; do
	key=${bad%% *}
	printf '[fleet]\nguests = 1\n%s\n[sweep]\nspecs = cpu-clock\n' "$bad" >"$tmp/sc.ini"
	refused "run: scenario $bad" "$tmp/sc.ini:3: [fleet] $key" run --results "$tmp/runs" "$tmp/sc.ini"
done
# A sweep where every profile rejects every spec tested nothing: not clean.
refused "run: every spec rejected" "$tmp/ok.ini: nothing to test" run --results "$tmp/runs" "$tmp/ok.ini"

# A perf binary that hangs: probe ends with INFRA for that cell within the
# timeout (shortened for the test) and leaves no process behind; one that
# hangs at --version is an error naming it, killed.
mkdir "$tmp/bin"
cat >"$tmp/bin/perf" <<'SH'
#!/bin/sh
case "$*" in
--version) echo "perf version 6.1.0" ;;
*"-e cpu-clock:uG "*) echo $$ >>"${0%/*}/pids"; exec sleep 1000 ;;
*) echo "event syntax error: '$3'" >&2; exit 129 ;;
esac
SH
printf '#!/bin/sh\necho $$ >>"${0%%/*}/pids"\nexec sleep 1000\n' >"$tmp/bin/mute"
chmod +x "$tmp/bin/perf" "$tmp/bin/mute"
gone() { # every pid in $tmp/bin/pids has exited (within 5 s)
	local p
	[ -s "$tmp/bin/pids" ] || return 1
	for _ in $(seq 50); do
		for p in $(cat "$tmp/bin/pids"); do kill -0 "$p" 2>/dev/null && break; p=; done
		[ -z "$p" ] && return 0
		sleep 0.1
	done
	return 1
}
rc=0
start=$SECONDS
PMUCANARY_TEST_PERF_TIMEOUT_S=2 timeout 60 "$bin" probe --event cpu-clock --profile perf-6.1 \
	--perf-binary "$tmp/bin/perf" --json "$tmp/probe.json" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -ne 124 ] && ok "probe, a perf that hangs: ends ($((SECONDS - start)) s)" ||
	bad "probe, a perf that hangs: ends within 60 s"
cell=$(jq -r '.cells[] | select(.spec == "cpu-clock:uG" and (.profile | startswith("bin:")))
	| .outcome + " " + ([(.evidence // [])[].worker_error // empty] | join(","))' "$tmp/probe.json" 2>/dev/null || true)
[ "$cell" = "INFRA perf did not finish in time: killed" ] && ok "probe, a perf that hangs: INFRA, killed" ||
	bad "probe, a perf that hangs: INFRA, killed (got '$cell')"
gone && ok "probe, a perf that hangs: no process left" || bad "probe, a perf that hangs: no process left"
rm -f "$tmp/bin/pids"
rc=0
PMUCANARY_TEST_PERF_TIMEOUT_S=2 timeout 30 "$bin" probe --event cpu-clock --perf-binary "$tmp/bin/mute" \
	>/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -qF "$tmp/bin/mute" "$tmp/err" &&
	ok "probe, a perf that hangs at --version: exit 2 naming it" ||
	bad "probe, a perf that hangs at --version: exit 2 naming it (got $rc: $(cat "$tmp/err"))"
gone && ok "probe, a perf that hangs at --version: no process left" ||
	bad "probe, a perf that hangs at --version: no process left"

# Bad paths: for every file- or directory-taking input, a missing path, a
# dangling symlink, a symlink loop, a regular file with a trailing slash, a
# directory and a FIFO are exit 2 with one line naming the path (ELOOP and
# ENOTDIR were 125, "could not test", and fleet booted a directory).
echo text >"$tmp/afile"
ln -s "$tmp/nowhere" "$tmp/dangling"
ln -s "$tmp/loop" "$tmp/loop"
vmlinuz=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
# Something to test, so that a run gets as far as its results directory.
printf '[fleet]\nguests = 1\n[sweep]\nspecs = cpu-clock\nprofiles = perf-6.1\n' >"$tmp/sw.ini"
# The smallest file the boot header check takes for a bzImage (protocol 2.15).
head -c 1024 /dev/zero >"$tmp/fakebz"
printf '\x55\xaa' | dd of="$tmp/fakebz" bs=1 seek=510 conv=notrunc 2>/dev/null
printf 'HdrS\x0f\x02' | dd of="$tmp/fakebz" bs=1 seek=514 conv=notrunc 2>/dev/null
printf '\x01' | dd of="$tmp/fakebz" bs=1 seek=529 conv=notrunc 2>/dev/null
for b in missing dangling loop afile/ adir fifo; do
	p=$tmp/$b
	refused "run SCENARIO=$b" "$p" run --results "$tmp/runs" "$p"
	refused "run --lab-context $b" "$p" run --results "$tmp/runs" --lab-context "$p" "$tmp/ok.ini"
	refused "run --resume $b" "$p" run --results "$tmp/runs" --resume "$p"
	refused "run --perf-binary $b" "$p" run --results "$tmp/runs" --perf-binary "$p" "$tmp/ok.ini"
	refused "probe --perf-binary $b" "$p" probe --perf-binary "$p" --event cpu-clock
	refused "matrix $b" "$p" matrix "$p"
	refused "matrix --errata $b" "$p" matrix --errata "$p" "$m/amd-3.6.json"
	refused "matrix --baseline $b" "$p" matrix --baseline "$p" "$m/amd-3.6.json"
	refused "diff $b B" "$p" diff "$p" "$d/probe-3.6.json"
	refused "image --kernel $b" "$p" image --kernel "$p" -o "$tmp/runs"
	refused "image --agent $b" "$p" image --agent "$p" -o "$tmp/runs"
	refused "lab --kernel $b" "$p" lab --results "$tmp/runs" --kernel "$p" "$tmp/ok.ini"
	refused "fleet --kernel $b" "$p" fleet --kernel "$p" --initrd "$tmp/afile" --run-dir "$tmp/runs"
	refused "fleet --initrd $b" "$p" fleet --kernel "$tmp/fakebz" --initrd "$p" --run-dir "$tmp/runs"
	refused "trace -- $b" "$p" trace -- "$p"
	if [ -n "$vmlinuz" ]; then
		refused "lab --config $b" "$p" lab --results "$tmp/runs" --kernel "$vmlinuz" --config "$p" "$tmp/ok.ini"
		refused "lab SCENARIO=$b" "$p" lab --results "$tmp/runs" --kernel "$vmlinuz" "$p"
	fi
	[ "$b" = adir ] ||
		refused "image --modules $b" "$p" image --modules "$p" -o "$tmp/runs"
	case $b in afile/|loop|fifo)
		refused "run --results $b" "${p%/}" run --results "$p" "$tmp/sw.ini" ;;
	esac
done

# A file that is not a kernel: a text file, a module (an ELF that is no
# executable), a bzImage of a boot protocol older than 2.06. image built an
# initramfs around it, fleet booted it (INFRA), a scenario ran its open phase.
cp /bin/true "$tmp/elf-dyn" # a PIE: ET_DYN, no vmlinux
head -c 1024 /dev/zero >"$tmp/oldbz"
printf '\x55\xaa' | dd of="$tmp/oldbz" bs=1 seek=510 conv=notrunc 2>/dev/null
printf 'HdrS\x05\x02' | dd of="$tmp/oldbz" bs=1 seek=514 conv=notrunc 2>/dev/null
for k in afile elf-dyn oldbz; do
	p=$tmp/$k
	refused "image --kernel $k: not a kernel" "$p: not a" image --kernel "$p" -o "$tmp/runs"
	# a --modules that is a directory is taken: the kernel is what is refused
	refused "image --modules DIR --kernel $k" "$p: not a" image --modules "$tmp/adir" \
		--kernel "$p" -o "$tmp/runs"
	refused "fleet --kernel $k: not a kernel" "$p: not a" fleet --kernel "$p" --initrd "$tmp/afile" \
		--run-dir "$tmp/runs"
	refused "lab --kernel $k: not a kernel" "$p: not a" lab --results "$tmp/runs" --kernel "$p" "$tmp/ok.ini"
	printf '[fleet]\nguests = 1\nkernel = %s\n[sweep]\nspecs = cpu-clock\n' "$p" >"$tmp/sc.ini"
	refused "run: scenario kernel = $k" "$tmp/sc.ini:3: [fleet] kernel: $p: not a" \
		run --results "$tmp/runs" "$tmp/sc.ini"
done
grep -q "boot protocol 2.05, older than 2.06" "$tmp/err" && ok "an old boot protocol is named" ||
	bad "an old boot protocol is named ($(cat "$tmp/err"))"

# Counts and durations out of range: exit 2, "option --X:", nothing runs.
for o in "probe --jobs=0" "probe --jobs=-1" "probe --jobs=100000" "probe --jobs=2x" \
	"probe --jobs=+4" "probe --jobs=99999999999999999999" \
	"fleet --guests=0" "fleet --guests=65" "fleet --duration=-1" "fleet --vcpus=0" \
	"fleet --memory=1" "fleet --interval=1" "fleet --timeout=0" "fleet --parallel=0" \
	"fleet --duration=604801" "fleet --vcpus=65" "fleet --memory=63" "fleet --memory=1048577" \
	"fleet --interval=10001" "fleet --timeout=3600001" "fleet --parallel=65" \
	"fleet --boot-timeout=999" "fleet --boot-timeout=3600001" "fleet --run-id=a/b" \
	"fleet --run-id=" "fleet --run-id=../x" \
	"fleet --selftest-at=-1" "fleet --selftest-at=nan" "fleet --selftest-at=0x10" \
	"fleet --selftest-at=1e1" "fleet --selftest-at=1." "fleet --selftest-at=.5" "lab --vcpus=0" "lab --vcpus=65" \
	"trace --tail=0" "trace --tail=100001"; do
	read -r -a argv <<<"$o"
	opt=${argv[1]%%=*}
	case ${argv[0]} in
	fleet) argv+=(--run-dir "$tmp/runs") ;;
	lab) argv+=(--results "$tmp/runs" --kernel "$tmp/afile") ;;
	trace) argv+=(-- /bin/true) ;;
	esac
	refused "$o" "option $opt: " "${argv[@]}"
done

# The ends of the ranges --help gives are in range: the next check (a bad
# --run-id, before any guest boots) is the one refused.
for o in "--guests=64" "--duration=604800" "--vcpus=64" "--memory=64" "--memory=1048576" \
	"--interval=10" "--interval=10000" "--timeout=100" "--timeout=3600000" \
	"--boot-timeout=1000" "--boot-timeout=3600000" "--parallel=64" "--selftest-at=3600"; do
	refused "fleet $o is in range" "option --run-id" fleet "$o" --run-id=a/b --run-dir "$tmp/runs"
done

# Digits beyond 64 bits are a number out of range, not "not a number".
refused "probe --jobs=99999999999999999999" "option --jobs: 99999999999999999999 is out of range" \
	probe --jobs=99999999999999999999

# --lab-context timeouts out of range or of the wrong type were ignored:
# refused, naming the file and the field.
for f in '"guest_boot_timeout_ms": 0' '"guest_boot_timeout_ms": 99999999999' \
	'"guest_heartbeat_timeout_ms": -5' '"guest_heartbeat_timeout_ms": "5000"' \
	'"guest_boot_timeout_ms": 1.5' '"limitations": [1]'; do
	printf '{%s}\n' "$f" >"$tmp/ctx.json"
	field=${f%%:*}
	refused "--lab-context {$f}" "$tmp/ctx.json: $field" \
		run --results "$tmp/runs" --lab-context "$tmp/ctx.json" "$tmp/ok.ini"
done

# image --inject of what is not a disk (a text file, a qcow2 backed by
# itself) is bad input, not could-not-test: exit 2 naming it, before any
# appliance boots.
refused "image --inject a text file" "$tmp/afile: not a disk image" image --inject "$tmp/afile"
if command -v qemu-img >/dev/null; then
	qemu-img create -q -f qcow2 "$tmp/self.qcow2" 1M &&
		qemu-img rebase -q -u -b "$tmp/self.qcow2" -F qcow2 "$tmp/self.qcow2"
	refused "image --inject a qcow2 backed by itself" "$tmp/self.qcow2: not a usable disk image" \
		image --inject "$tmp/self.qcow2"
fi
# fleet --selftest names a guest of the fleet and a harm it knows
refused "fleet --selftest 2=panic with 2 guests" "--selftest 2=panic" \
	fleet --selftest 2=panic --run-dir "$tmp/runs"
refused "fleet --selftest 0=melt" "--selftest 0=melt" fleet --selftest 0=melt --run-dir "$tmp/runs"
# ... and every harm of its --help, on guest 0 and the last, gets past it: the
# next check (a bad --run-id, still before any guest boots) is the one refused
for k in panic hang corrupt reboot oops; do
	for g in 0 1; do
		refused "fleet --selftest $g=$k is a selftest" "--run-id" \
			fleet --guests 2 --selftest "$g=$k" --run-id 'a/b' --run-dir "$tmp/runs"
	done
done

# With stdin closed (cron, a daemon) the first file opened gets fd 0: it is a
# file like any other. 3.6 -> 3.7 fences the 2012 crash: exit 0 (design.md).
rc=0; "$bin" diff "$top/tests/data/diff/run-3.6.json" "$top/tests/data/diff/run-3.7.json" \
	<&- >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] && grep -q "GUEST_CRASH (3/3) -> EOPNOTSUPP" "$tmp/out" &&
	ok "diff with stdin closed reads its files" ||
	bad "diff with stdin closed: exit $rc: $(head -c 300 "$tmp/err")"

# The nodes are still what they were.
[ -c "$tmp/zero" ] && [ -p "$tmp/fifo" ] && [ -d "$tmp/adir" ] && ok "the nodes are unchanged" ||
	bad "the nodes are unchanged"

echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
