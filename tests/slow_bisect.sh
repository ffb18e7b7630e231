#!/usr/bin/env bash
# pmucanary bisect over real kernels, each step a real build and a real lab
# host (issue 26). Slow (20-30 min on 2 cores): not in `make check` or CI;
# `make slow-check` runs it.
#
# A git history made here from a copy of the built lab-host tree (Debian's
# linux-source-6.1 with guest-images/kconfig/lab-host.config, as
# kernel-build.sh caches it, objects and .config included). objtool's build
# records absolute paths, so the copy is bind-mounted over the cached
# tree's path in a mount namespace of its own (unshare -m) for each
# bisect: every step's `make bzImage` then rebuilds only what the checkout
# changed, and the cached tree itself is never written.
#   base   the tree as built                                 (--good)
#   c1     a comment in Documentation/                        harmless
#   c2     a comment in kernel/events/core.c                  harmless
#   c3     kernel_init() panics: this commit does not boot    skip, never bad
#   c4     c3 reverted                                        harmless
#   c5     guest-images/replay/pebs-2012-harm.patch           THE BAD ONE
#   c6     a comment in arch/x86/kvm/x86.c                    harmless (--bad)
# git tests the middle one first (c3): the no-boot commit is met at once.
# The scenario arms cpu-clock:p under perf 3.6 (precise_ip=1,
# exclude_guest=0: the patch's rule) and cpu-clock: c5 and later harm the
# nested guest, earlier ones do not. Asserted: the first bad commit is c5,
# verified; no step was called bad before c5 or good from c5 on; c3 is a
# skip (its lab host never came up), never bad; the tree is back on its
# branch. Then the same bisection stopped (SIGINT) during its first lab
# and resumed with --resume gives the same answer.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
top=${PMUCANARY_TOP:-.}
. "$top/tests/kernels.sh"
lab_suite_setup
command -v git >/dev/null || { echo "FAIL git is not installed"; exit 1; }
command -v unshare >/dev/null || { echo "FAIL unshare (util-linux) is not installed"; exit 1; }
meta=$(dirname "$PMUCANARY_LAB_KERNEL_BASE")/meta
tk=$(sed -n 's/^tree_key=//p' "$meta" | cut -c1-16)
tree=$(dirname "$(dirname "$PMUCANARY_LAB_KERNEL_BASE")")/trees/$tk/linux
[ -d "$tree" ] && [ -f "$tree/.config" ] ||
	{ echo "FAIL the built lab-host tree is not cached at $tree (kernel-build.sh keeps it)"; exit 1; }
work=$(lab_suite_workdir)
trap 'git -C "$work/linux" bisect reset >/dev/null 2>&1; rm -rf "$work"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

t0=$SECONDS
cp -a "$tree" "$work/linux" || { echo "FAIL cp -a $tree"; exit 1; }
L=$work/linux
# Debian's source package ignores everything at its top level ("/*" in
# .gitignore): a kernel's own .gitignore is what a git tree has
sed -i -e '/^\/\*$/d' -e '/^!\/debian\/$/d' "$L/.gitignore"
git -C "$L" init -q -b main && git -C "$L" config user.email t@example.invalid &&
	git -C "$L" config user.name bisect-test && git -C "$L" add -A &&
	git -C "$L" commit -q -m base || { echo "FAIL git init of the tree"; exit 1; }
commit() { git -C "$L" add -A && git -C "$L" commit -q -m "$1" && git -C "$L" rev-parse HEAD; }
echo "# bisect: made the history base (in $((SECONDS - t0)) s)"
echo "This line is harmless (pmucanary bisect test)." >>"$L/Documentation/admin-guide/README.rst"
c1=$(commit "docs: a harmless line")
echo "/* pmucanary bisect test: harmless */" >>"$L/kernel/events/core.c"
c2=$(commit "perf/core: a harmless comment")
sed -i 's/^\twait_for_completion(&kthreadd_done);$/&\n\tpanic("pmucanary bisect test: this commit does not boot");/' "$L/init/main.c"
grep -q "this commit does not boot" "$L/init/main.c" || { echo "FAIL could not make the no-boot commit"; exit 1; }
c3=$(commit "init: does not boot")
git -C "$L" revert --no-edit HEAD >/dev/null && c4=$(git -C "$L" rev-parse HEAD) ||
	{ echo "FAIL git revert of the no-boot commit"; exit 1; }
git -C "$L" apply "$top/guest-images/replay/pebs-2012-harm.patch" || { echo "FAIL git apply the replay patch"; exit 1; }
c5=$(commit "perf/core: pebs-2012-harm (the bad one)")
echo "/* pmucanary bisect test: harmless */" >>"$L/arch/x86/kvm/x86.c"
c6=$(commit "kvm: a harmless comment")
base=$(git -C "$L" rev-parse "$c1^")
echo "# history: base c1 c2 c3(no boot) c4 c5(bad) c6; c5 = $c5"

cat >"$work/bisect.ini" <<'INI'
[scenario]
name = bisect
description = cpu-clock:p under perf 3.6 (the 2012 rule's attr) and cpu-clock
[fleet]
guests = 1
memory = 256M
heartbeat = 500ms
heartbeat_timeout = 20s
[sweep]
specs = cpu-clock:p; cpu-clock
profiles = perf-3.6
mode = record
[load]
dwell = 2s
batch_size = 1
confirm = 1
INI

# pmucanary bisect on the copy, at the cached tree's path
inns() {
	unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' \
		sh "$L" "$tree" "$@"
}

# 1. the bisection
t1=$SECONDS
inns "$bin" bisect --tree "$tree" --good "$base" --bad "$c6" --boot-timeout 150 \
	--results "$work/r1" "$work/bisect.ini" >"$work/b1.out" 2>"$work/b1.err"
rc=$?
json=$(ls "$work"/r1/bisect-*/bisect.json 2>/dev/null | head -1)
echo "# bisect: exit $rc in $((SECONDS - t1)) s"
[ -n "$json" ] && jq -r '.steps[] | "#   \(.what): \(.commit[0:12]) \(.subject): \(.verdict) (build \(.build_s | floor) s, all \(.total_s | floor) s)"' "$json"
if [ "$rc" = 1 ] && [ "$(jq -r .first_bad.commit "$json")" = "$c5" ] && [ "$(jq -r .verified "$json")" = true ]; then
	ok "the first bad commit is c5 (the replay patch), verified against its parent"
else
	bad "bisect: exit $rc, first bad $(jq -r .first_bad.commit "$json" 2>&1) (want $c5): $(tail -5 "$work/b1.err")"
fi
before=$(git -C "$L" rev-list "$base..$c4" | tr '\n' ' ')
jq -r '.steps[] | "\(.commit) \(.verdict)"' "$json" 2>/dev/null >"$work/verdicts"
while read -r c v; do
	case " $before " in
	*" $c "*) [ "$v" = bad ] && bad "$c (before c5) was called bad" ;;
	*) [ "$v" = good ] && bad "$c (c5 or later) was called good" ;;
	esac
done <"$work/verdicts"
grep -q "^$c3 skip$" "$work/verdicts" && ! grep -q "^$c3 bad$" "$work/verdicts" &&
	ok "c3 (does not boot) was tested and skipped, not blamed" ||
	bad "c3 (does not boot): $(grep "^$c3" "$work/verdicts" || echo "never tested")"
grep -q "pebs-2012-harm (the bad one)" "$work/b1.out" && grep -q "kernel/events/core.c" "$work/b1.out" &&
	ok "the answer names the commit's subject and diffstat" || bad "summary: $(cat "$work/b1.out")"
[ "$(git -C "$L" symbolic-ref -q HEAD)" = refs/heads/main ] && [ "$(git -C "$L" rev-parse HEAD)" = "$c6" ] &&
	ok "the tree is back on main at c6" || bad "the tree: $(git -C "$L" status | head -2)"
echo "# figures: $(jq -r '"\(.tested) tested steps, \(.builds) builds, \(.skips) skipped"' "$json"), $((SECONDS - t1)) s"

# 2. stopped (SIGINT, a Ctrl-C) in its first lab, then resumed. The signal
# goes to pmucanary itself: the background job is the function's subshell.
echo "# the same bisection again: good $base, bad $c6, HEAD $(git -C "$L" rev-parse HEAD)"
t2=$SECONDS
inns "$bin" bisect --tree "$tree" --good "$base" --bad "$c6" --boot-timeout 150 \
	--results "$work/r2" "$work/bisect.ini" >"$work/b2.out" 2>"$work/b2.err" &
pid=$!
for _ in $(seq 600); do
	ls -d "$work"/r2/bisect-*/step-1-*/lab-* >/dev/null 2>&1 && break
	sleep 1
done
sleep 20
kill -INT $(pgrep -f "^$bin bisect .*$work/r2") 2>/dev/null || bad "no pmucanary bisect to stop"
wait "$pid"
rc=$?
[ "$rc" = 130 ] && git -C "$L" bisect log >/dev/null 2>&1 &&
	ok "SIGINT during a lab: exit 130, the bisection kept for --resume" ||
	{ bad "killed bisect: exit $rc:"; cat "$work/b2.err"; }
sleep 2
virsh -c qemu:///system list --name 2>/dev/null | grep -q pmucanary && bad "a lab host was left running" ||
	ok "no lab host left after the kill"
inns "$bin" bisect --tree "$tree" --good "$base" --bad "$c6" --resume --boot-timeout 150 \
	--results "$work/r3" "$work/bisect.ini" >"$work/b3.out" 2>"$work/b3.err"
rc=$?
json3=$(ls "$work"/r3/bisect-*/bisect.json 2>/dev/null | head -1)
[ "$rc" = 1 ] && [ "$(jq -r .first_bad.commit "$json3")" = "$c5" ] &&
	ok "resumed: the same first bad commit, c5 ($((SECONDS - t2)) s with the stop)" ||
	bad "resume: exit $rc, $(jq -r .first_bad.commit "$json3" 2>&1): $(tail -3 "$work/b3.err")"
exit "$fail"
