#!/usr/bin/env bash
# Every user-given output file (probe --json/--junit/--kcidb, matrix
# --html/--junit/--kcidb, diff --junit/--kcidb, run --junit/--kcidb, trace
# --json) and stdout:
#   - a character device or FIFO at the target is written to, never
#     replaced by a regular file (`probe --json /dev/full` once replaced the
#     host's /dev/full); a directory is an error naming it;
#   - a regular target gets the complete content, atomically; a symlink to
#     one stays a symlink;
#   - a write that fails (a full device, a file over RLIMIT_FSIZE) names the
#     path and exits non-zero with the command's output-failure code (probe,
#     trace, run, diff: 125 (diff's git bisect run contract: cannot tell);
#     matrix: 2), and leaves the previous file as it
#     was, or no file at all;
#   - stdout on a full device is never exit 0; an output path that is our
#     own stdout redirected to a file (/dev/stdout >>log) appends to it.
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
tmp=$(mktemp -d /tmp/cli_outputs.XXXXXX)
reader=
cleanup() {
	[ -n "$reader" ] && kill "$reader" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
if ! mknod "$tmp/null" c 1 3 2>/dev/null || ! mknod "$tmp/full" c 1 7 2>/dev/null; then
	echo "SKIP: mknod refused (no CAP_MKNOD here)"
	exit 77
fi
mkfifo "$tmp/fifo"
mkdir "$tmp/adir"
fails=0 n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# A run that needs no guests: its one attr reaches the kernel and fails
# (software event 0xffff: ENOENT on every Linux), so nothing is armed, and
# it still writes every report. (A spec every profile rejects tests
# nothing: exit 2.)
printf '[fleet]\nguests = 1\n[sweep]\nspecs = software/config=0xffff/\nprofiles = perf-6.1\nraw_excludes = false\n' \
	>"$tmp/noguests.ini"

# Each output option: NAME FAIL-EXIT FORMAT ULIMIT; cmdline NAME PATH sets argv.
# ULIMIT: whether the target is the only file the command writes, so that a
# 1 KiB RLIMIT_FSIZE fails that write and nothing before it.
producers=(
	"probe-json 125 json yes"
	"probe-junit 125 xml yes"
	"probe-kcidb 125 json yes"
	"matrix-html 2 html yes"
	"matrix-junit 2 xml yes"
	"matrix-kcidb 2 json yes"
	"diff-junit 125 xml yes"
	"diff-kcidb 125 json yes"
	"trace-json 125 json yes"
	"run-junit 125 xml no"
	"run-kcidb 125 json no"
)
probe=(probe --pmu software --event cpu-clock --profile perf-modern)
cmdline() {
	case $1 in
	probe-json) argv=("${probe[@]}" --json "$2") ;;
	probe-junit) argv=("${probe[@]}" --junit "$2") ;;
	probe-kcidb) argv=("${probe[@]}" --kcidb "$2") ;;
	matrix-html) argv=(matrix "$m/tcg-6.1.json" --html "$2") ;;
	matrix-junit) argv=(matrix "$m/tcg-6.1.json" --junit "$2") ;;
	matrix-kcidb) argv=(matrix "$m/tcg-6.1.json" --kcidb "$2") ;;
	diff-junit) argv=(diff "$d/run-3.8.json" "$d/run-3.8-extra.json" --junit "$2") ;;
	diff-kcidb) argv=(diff "$d/run-3.8.json" "$d/run-3.8-extra.json" --kcidb "$2") ;;
	trace-json) argv=(trace --json "$2" -- /bin/sh -c 'exit 3') ;;
	run-junit) argv=(run --results "$tmp/runs" --junit "$2" "$tmp/noguests.ini") ;;
	run-kcidb) argv=(run --results "$tmp/runs" --kcidb "$2" "$tmp/noguests.ini") ;;
	*) echo "no producer $1" >&2; exit 1 ;;
	esac
}
# pmc [ARGS...]: the command line in argv, stdout to our own null device,
# stderr to $tmp/err; sets rc.
pmc() {
	rc=0
	timeout 300 "$bin" "${argv[@]}" >"$tmp/null" 2>"$tmp/err" || rc=$?
}
# complete FILE FORMAT: the whole document, not a prefix of it.
complete() {
	[ -s "$1" ] || return 1
	case $2 in
	json) jq -e . "$1" >/dev/null 2>&1 ;;
	xml) tail -n 2 "$1" | grep -q '^</testsuites>$' ;;
	html) tail -n 2 "$1" | grep -q '^</html>$' ;;
	esac
}
# Only NAMEs in DIR: no temporary file left beside the target.
only() { [ "$(cd "$1" && ls -A | tr '\n' ' ')" = "$2" ]; }
names() { grep -qF -- "$1" "$tmp/err"; }

for p in "${producers[@]}"; do
	read -r name failrc fmt lim <<<"$p"

	# A missing regular target: the whole document, nothing else beside it.
	mkdir "$tmp/reg-$name"
	cmdline "$name" "$tmp/reg-$name/out"
	pmc
	check "$name: regular file: exit 0" [ "$rc" -eq 0 ]
	check "$name: regular file: complete" complete "$tmp/reg-$name/out" "$fmt"
	check "$name: regular file: no temporary file left" only "$tmp/reg-$name" "out "
	size=$(stat -c %s "$tmp/reg-$name/out")

	# An existing one is replaced whole; its mode stays; a symlink to it
	# stays a symlink.
	mkdir "$tmp/old-$name"
	echo previous >"$tmp/old-$name/out"
	chmod 600 "$tmp/old-$name/out"
	ln -s out "$tmp/old-$name/link"
	cmdline "$name" "$tmp/old-$name/link"
	pmc
	check "$name: through a symlink: exit 0" [ "$rc" -eq 0 ]
	check "$name: through a symlink: the link is still a link" [ -L "$tmp/old-$name/link" ]
	check "$name: through a symlink: its target replaced whole" complete "$tmp/old-$name/out" "$fmt"
	check "$name: existing file keeps its mode" [ "$(stat -c %a "$tmp/old-$name/out")" = 600 ]
	check "$name: existing file: no temporary file left" only "$tmp/old-$name" "link out "

	# A symlink to nothing (what /dev/stdout is with stdout closed): bad
	# input, said in one line naming it; the link stays, nothing created.
	mkdir "$tmp/dangling-$name"
	ln -s missing "$tmp/dangling-$name/link"
	cmdline "$name" "$tmp/dangling-$name/link"
	pmc
	check "$name: dangling symlink: exit 2 (got $rc)" [ "$rc" -eq 2 ]
	check "$name: dangling symlink: the message names it" \
		names "$tmp/dangling-$name/link: a symbolic link to missing, which does not exist"
	check "$name: dangling symlink: one line" [ "$(wc -l <"$tmp/err")" -eq 1 ]
	check "$name: dangling symlink: still a link, nothing created" \
		eval '[ -L "$tmp/dangling-$name/link" ] && only "$tmp/dangling-$name" "link "'

	# A relative path in a working directory that was removed: bad input,
	# said before the command does its work (it was exit 125 after it).
	mkdir "$tmp/gone-$name"
	cmdline "$name" out
	(cd "$tmp/gone-$name" && rmdir "$tmp/gone-$name" && pmc && echo "$rc" >"$tmp/rc")
	rc=$(cat "$tmp/rc")
	check "$name: removed working directory: exit 2 (got $rc)" [ "$rc" -eq 2 ]
	check "$name: removed working directory: the message names the file" names "cannot write out:"

	# Our own null device: written to, still a character device.
	cmdline "$name" "$tmp/null"
	pmc
	check "$name: null device: exit 0" [ "$rc" -eq 0 ]
	check "$name: null device: still a character device" [ -c "$tmp/null" ]

	# A FIFO: the reader gets the whole document; still a FIFO.
	rm -f "$tmp/got"
	cat "$tmp/fifo" >"$tmp/got" &
	reader=$!
	cmdline "$name" "$tmp/fifo"
	pmc
	for _ in $(seq 50); do kill -0 "$reader" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$reader" 2>/dev/null; then
		kill "$reader" 2>/dev/null || true
		bad "$name: FIFO: the reader got no end of file (nobody opened the FIFO)"
	fi
	wait "$reader" 2>/dev/null || true
	reader=
	check "$name: FIFO: exit 0" [ "$rc" -eq 0 ]
	check "$name: FIFO: still a FIFO" [ -p "$tmp/fifo" ]
	check "$name: FIFO: the reader got the whole document" complete "$tmp/got" "$fmt"

	# Our own full device: a write error naming it, the command's
	# output-failure exit code; still a character device.
	cmdline "$name" "$tmp/full"
	pmc
	check "$name: full device: exit $failrc (got $rc)" [ "$rc" -eq "$failrc" ]
	check "$name: full device: the message names it" names "$tmp/full"
	check "$name: full device: still a character device" [ -c "$tmp/full" ]

	# A directory is an error naming it.
	cmdline "$name" "$tmp/adir"
	pmc
	check "$name: directory: non-zero exit (got $rc)" [ "$rc" -ne 0 ]
	check "$name: directory: the message names it" names "$tmp/adir"
	check "$name: directory: still an empty directory" only "$tmp/adir" ""

	# A regular file whose write fails (RLIMIT_FSIZE, as on a full disk):
	# the previous content stays; a missing target stays missing.
	if [ "$lim" = yes ] && [ "$size" -gt 1024 ]; then
		mkdir "$tmp/lim-$name"
		echo previous >"$tmp/lim-$name/out"
		cmdline "$name" "$tmp/lim-$name/out"
		(trap '' XFSZ; ulimit -f 1; pmc; echo "$rc" >"$tmp/rc")
		rc=$(cat "$tmp/rc")
		check "$name: failed write: exit $failrc (got $rc)" [ "$rc" -eq "$failrc" ]
		check "$name: failed write: the message names the file" names "$tmp/lim-$name/out"
		check "$name: failed write: the previous file is intact" \
			[ "$(cat "$tmp/lim-$name/out")" = previous ]
		check "$name: failed write: no temporary file left" only "$tmp/lim-$name" "out "
		cmdline "$name" "$tmp/lim-$name/new"
		(trap '' XFSZ; ulimit -f 1; pmc; echo "$rc" >"$tmp/rc")
		rc=$(cat "$tmp/rc")
		check "$name: failed write to a new file: exit $failrc (got $rc)" [ "$rc" -eq "$failrc" ]
		check "$name: failed write to a new file: nothing left" only "$tmp/lim-$name" "out "
	fi
done

# Stdout on our own full device: never exit 0, and the message says stdout.
stdout_cases=(
	"probe|${probe[*]}"
	"matrix|matrix $m/tcg-6.1.json"
	"diff|diff $d/run-3.8.json $d/run-3.8-extra.json"
	"diff --json|diff --json $d/run-3.8.json $d/run-3.8-extra.json"
	"trace|trace -- /bin/true"
	"trace --json -|trace --json - -- /bin/true"
	"encode|encode -p perf-modern cycles:pp"
	"encode --json|encode -p perf-modern --json cycles:pp"
	"encode --list-profiles|encode --list-profiles"
	"run|run --results $tmp/runs $tmp/noguests.ini"
	"probe --help|probe --help"
	"lava --help|lava --help"
	"--help|--help"
)
for c in "${stdout_cases[@]}"; do
	what=${c%%|*}
	read -r -a argv <<<"${c#*|}"
	rc=0
	timeout 300 "$bin" "${argv[@]}" >"$tmp/full" 2>"$tmp/err" || rc=$?
	check "$what >full: non-zero exit (got $rc)" [ "$rc" -ne 0 ]
	check "$what >full: the message says stdout" names "stdout"
done
check "full device still a character device" [ -c "$tmp/full" ]
# The CI report options are listed where they are taken (a hidden --junit
# would be an option nobody finds): probe, run and diff.
for c in probe run diff; do
	rc=0; "$bin" $c --help-reports >"$tmp/hr" 2>&1 || rc=$?
	check "$c --help-reports: exit 0, --junit and --kcidb listed (got $rc)" \
		eval '[ "$rc" -eq 0 ] && grep -q -- "--junit=FILE" "$tmp/hr" && grep -q -- "--kcidb=FILE" "$tmp/hr"'
done
# Asked for help, every command answers on stdout with exit 0 (lava said
# its usage on stderr with exit 2); its options are named.
rc=0; "$bin" lava --help >"$tmp/lava-help" 2>"$tmp/err" || rc=$?
check "lava --help: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "lava --help: names job, cases and collect" grep -q "job.*cases.*collect" "$tmp/lava-help"

# An output path that is the command's own stdout and a regular file
# (`--json /dev/stdout >>log`): written through the descriptor, so the log
# keeps what it had and gets the document; renaming over it would lose both.
for p in "probe-json|\"cells\"" "matrix-html|</html>" "diff-junit|</testsuites>"; do
	name=${p%%|*}
	printf 'previous\n' >"$tmp/log-$name"
	cmdline "$name" /dev/stdout
	rc=0
	timeout 300 "$bin" "${argv[@]}" >>"$tmp/log-$name" 2>"$tmp/err" || rc=$?
	# each of these commands exits 0 writing a plain file (no harm, no regression)
	check "$name to /dev/stdout >>log: exit 0 (got $rc: $(head -c 200 "$tmp/err"))" [ "$rc" -eq 0 ]
	check "$name to /dev/stdout >>log: the log keeps its first line" \
		[ "$(head -n 1 "$tmp/log-$name")" = previous ]
	check "$name to /dev/stdout >>log: the log got the document" grep -q "${p#*|}" "$tmp/log-$name"
done

# A new file gets 0666 less the user's umask, as `>FILE` would: a private
# umask keeps results private, a group one shares them. An existing file
# keeps its mode whatever the umask.
for u in 077:600 002:664 022:644; do
	for name in probe-json matrix-html diff-junit trace-json; do
		rm -rf "$tmp/umask" && mkdir "$tmp/umask"
		cmdline "$name" "$tmp/umask/out"
		rc=0
		(umask "${u%:*}" && timeout 300 "$bin" "${argv[@]}" >"$tmp/null" 2>"$tmp/err") || rc=$?
		check "$name, umask ${u%:*}: exit 0 (got $rc)" [ "$rc" -eq 0 ]
		check "$name, umask ${u%:*}: a new file is ${u#*:}" \
			[ "$(stat -c %a "$tmp/umask/out" 2>&1)" = "${u#*:}" ]
	done
done
echo previous >"$tmp/umask/out"
chmod 640 "$tmp/umask/out"
cmdline probe-json "$tmp/umask/out"
rc=0
(umask 002 && timeout 300 "$bin" "${argv[@]}" >"$tmp/null" 2>"$tmp/err") || rc=$?
check "probe-json over an existing file: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "probe-json, umask 002: an existing 640 file stays 640" \
	[ "$(stat -c %a "$tmp/umask/out")" = 640 ]

# With stdin closed the temporary file of an output may get fd 0: written
# and renamed like any other.
rc=0; "$bin" matrix --junit "$tmp/closed-stdin.xml" "$d/run-3.7.json" <&- >/dev/null 2>"$tmp/err" || rc=$?
check "matrix --junit with stdin closed: exit 0 (got $rc: $(head -c 200 "$tmp/err"))" [ "$rc" -eq 0 ]
check "matrix --junit with stdin closed: the report is there" \
	grep -q '<testcase classname="3.7.0.perf-3.6" name="cycles:pp"' "$tmp/closed-stdin.xml"

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
