#!/usr/bin/env bash
# pmucanary bisect on a real git history with a real make, no kernel: bad
# input exits 2 with one line and leaves the tree as it was; a history
# whose every build fails is skipped commit by commit (never "bad") and
# ends inconclusive (exit 125) with the tree back on its branch. The
# bisection over real kernels and lab hosts is tests/slow_bisect.sh.
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
top=${PMUCANARY_TOP:-.}
[ "$(id -u)" = 0 ] || { echo "SKIP: a lab needs root"; exit 77; }
command -v git >/dev/null || { echo "FAIL git is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
tmp=$(mktemp -d /var/tmp/cli_bisect.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name expected-exit expected-stderr-substring cmd...
	local name=$1 want=$2 msg=$3; shift 3
	local err rc lines
	err=$("$@" 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s' "$err" | grep -c .)
	if [ "$rc" != "$want" ] || [[ "$err" != *"$msg"* ]] || { [ "$want" = 2 ] && [ "$lines" != 1 ]; }; then
		echo "FAIL $name: exit $rc (want $want), $lines line(s) of stderr: $err"; fail=1
	else
		echo "ok   $name"
	fi
}

# A tree of five commits whose build always fails: make's bzImage target
# exits 1 (a real build failure, as a broken commit gives).
t=$tmp/linux
mkdir -p "$t"
git -C "$t" init -q -b main
git -C "$t" config user.email t@example.invalid
git -C "$t" config user.name test
printf 'olddefconfig:\n\t@true\nbzImage:\n\t@echo "no kernel here" >&2; exit 1\n' >"$t/Makefile"
printf '.config\n' >"$t/.gitignore"
for i in 1 2 3 4 5; do
	echo "$i" >"$t/file"
	git -C "$t" add -A && git -C "$t" commit -q -m "commit $i"
done
good=$(git -C "$t" rev-parse HEAD~4) bad=$(git -C "$t" rev-parse HEAD)
head0=$(git -C "$t" rev-parse HEAD)
scen=$top/tests/data/lab/harm.ini
res=$tmp/results

check not-a-tree 2 "not a git work tree" "$bin" bisect --tree "$tmp" --good a --bad b "$scen"
check unknown-rev 2 "not commits of" "$bin" bisect --tree "$t" --good nosuch --bad "$bad" "$scen"
check not-ancestor 2 "is not an ancestor of --bad" \
	"$bin" bisect --tree "$t" --good "$bad" --bad "$good" "$scen"
check no-config 2 "has no .config: give --config FILE" \
	"$bin" bisect --tree "$t" --good "$good" --bad "$bad" "$scen"
check no-resume 2 "--resume: no bisection is under way" \
	"$bin" bisect --tree "$t" --good "$good" --bad "$bad" --resume "$scen"
check cell-alone 2 "--cell without --only" \
	"$bin" bisect --tree "$t" --good "$good" --bad "$bad" --cell perf-3.6:cycles "$scen"
check jobs-zero 2 "option --jobs: 0 is out of range" \
	"$bin" bisect --tree "$t" --good "$good" --bad "$bad" --jobs 0 "$scen"
git -C "$t" bisect start "$bad" "$good" >/dev/null 2>&1
check under-way 2 "a bisection is under way" \
	"$bin" bisect --tree "$t" --good "$good" --bad "$bad" "$scen"
git -C "$t" bisect reset >/dev/null 2>&1
[ "$(git -C "$t" rev-parse HEAD)" = "$head0" ] && ok=1 || ok=0
[ "$ok" = 1 ] && echo "ok   the refusals left the tree where it was" || { echo "FAIL the tree moved"; fail=1; }

# Every build fails: each candidate is skipped, never bad, and the answer
# is "inconclusive" (exit 125); git's own state and the checkout are back.
: >"$t/.config"
out=$("$bin" bisect --tree "$t" --good "$good" --bad "$bad" --results "$res" "$scen" 2>"$tmp/err")
rc=$?
json=$(ls "$res"/bisect-*/bisect.json 2>/dev/null | head -1)
if [ "$rc" = 125 ] && [ -n "$json" ] && [ "$(jq -r .state "$json")" = inconclusive ] &&
	[ "$(jq '[.steps[] | select(.verdict != "skip")] | length' "$json")" = 0 ] &&
	[ "$(jq '.steps | length' "$json")" -ge 3 ] && [ "$(jq .builds "$json")" = "$(jq '.steps | length' "$json")" ]; then
	echo "ok   every build fails: $(jq '.steps | length' "$json") steps, all skipped, inconclusive, exit 125"
else
	echo "FAIL all-skip: exit $rc, $(jq -c '{state, steps: [.steps[] | .verdict]}' "$json" 2>&1) $(tail -3 "$tmp/err")"; fail=1
fi
grep -q "only skipped commits are left\|inconclusive" <<<"$out$(cat "$tmp/err")" &&
	echo "ok   it says the first bad commit is among the untested ones" ||
	{ echo "FAIL no inconclusive line: $out"; fail=1; }
[ "$(git -C "$t" rev-parse HEAD)" = "$head0" ] && [ "$(git -C "$t" symbolic-ref -q HEAD)" = refs/heads/main ] &&
	! git -C "$t" bisect log >/dev/null 2>&1 &&
	echo "ok   the tree is back on main, no bisection left" ||
	{ echo "FAIL the tree: $(git -C "$t" status | head -2)"; fail=1; }
grep -q "no kernel here" "$(dirname "$json")"/step-1-*/build.log.bzImage 2>/dev/null &&
	echo "ok   each step keeps its build log" || { echo "FAIL no build log"; fail=1; }
exit "$fail"
