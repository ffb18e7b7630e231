#!/usr/bin/env bash
# Mutation check (`make mutants`; not part of `make check`): plants each bug
# of tests/mutants.list in a copy of the tree, one at a time, rebuilds, runs
# the suites that should catch it and prints which mutants survived.
#
#   tests/mutants.sh [--integration] [--all-unit] [--list] [--check-list]
#                    [--list-file=FILE] [NAME...]
#
#   --integration  also run mutants (and catching suites) that need real
#                  guests: it_fleet, it_run.sh, ... (minutes each, root,
#                  libvirtd)
#   --all-unit     run every unit suite on every mutant, not only its catchers
#   --list         print the mutants and their catching suites
#   --check-list   only check that every `find` occurs exactly once, and
#                  that each entry of tests/mutants-equivalent.list names
#                  one line that has its mutant
#   --list-file=F  the mutants of F instead of tests/mutants.list (the
#                  generated ones: tests/mutants_gen.py); the summary then
#                  gives a kill score per file
#   NAME...        only these mutants
#
# The copy holds the checkout's tracked and untracked (not ignored) files as
# they are now, so uncommitted tests count. The unmutated copy must pass the
# suites first, or the score would mean nothing (exit 2).
# Exit: 0 every mutant run was caught, 1 some survived, 2 bad list or setup.
set -uo pipefail
shopt -u patsub_replacement 2>/dev/null || true

top=$(cd "$(dirname "$0")/.." && pwd)
list=$top/tests/mutants.list
integration=0 all_unit=0 list_only=0 check_only=0 by_file=0 only=()
for a in "$@"; do
	case $a in
	--integration) integration=1 ;;
	--all-unit) all_unit=1 ;;
	--list) list_only=1 ;;
	--check-list) check_only=1 ;;
	--list-file=*) list=${a#--list-file=}; by_file=1 ;;
	-h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "mutants.sh: unknown option $a" >&2; exit 2 ;;
	*) only+=("$a") ;;
	esac
done

die() { echo "mutants.sh: $*" >&2; exit 2; }

# ---- the list ----
names=()
declare -A file=() find=() replace=() catch=() why=()
parse_list() {
	local ln=0 line cur= key val
	while IFS= read -r line || [ -n "$line" ]; do
		ln=$((ln + 1))
		case $line in
		''|'#'*) continue ;;
		'['*']')
			cur=${line#[}; cur=${cur%]}
			[ -n "${file[$cur]+x}" ] && die "$list:$ln: [$cur] given twice"
			names+=("$cur"); file[$cur]= find[$cur]= replace[$cur]= catch[$cur]= why[$cur]=
			continue ;;
		esac
		[ -n "$cur" ] || die "$list:$ln: key outside a [mutant]"
		[[ $line == *' = '* ]] || die "$list:$ln: expected 'key = value'"
		key=${line%% = *} val=${line#* = }
		case $key in
		file|find|replace|catch|why) ;;
		*) die "$list:$ln: [$cur] $key: unknown key" ;;
		esac
		# \n and \t stand for a newline and a tab (a find over two lines)
		val=${val//\\n/$'\n'}; val=${val//\\t/$'\t'}
		eval "$key[\$cur]=\$val"
	done <"$list"
	local n
	for n in "${names[@]}"; do
		for key in file find replace catch; do
			[ -n "$(eval "echo \"\${$key[\$n]}\"")" ] || die "$list: [$n]: no $key"
		done
		# a catch names suites, space-separated ("a, b" would name "a,")
		for key in ${catch[$n]}; do
			[ -e "$top/tests/$key" ] || [ -e "$top/tests/$key.c" ] ||
				die "$list: [$n]: catch: no suite tests/$key"
		done
	done
}

# How often needle occurs in haystack.
occurrences() {
	local hay=$1 needle=$2 rest
	rest=${hay//"$needle"/}
	echo $(( (${#hay} - ${#rest}) / ${#needle} ))
}

check_finds() {
	local n bad=0 c
	for n in "${names[@]}"; do
		[ -f "$top/${file[$n]}" ] || { echo "[$n]: ${file[$n]}: no such file"; bad=1; continue; }
		c=$(occurrences "$(<"$top/${file[$n]}")" "${find[$n]}")
		[ "$c" = 1 ] || { echo "[$n]: find occurs $c times in ${file[$n]} (must be once)"; bad=1; }
	done
	return $bad
}

is_integration_suite() { [[ $1 == it_* ]]; }

parse_list
check_finds || die "$list is stale: fix the entries above"
if [ "$check_only" = 1 ]; then
	echo "${#names[@]} mutants, every find occurs once"
	python3 "$top/tests/mutants_gen.py" --check-equivalent || die "tests/mutants-equivalent.list is stale: fix the entries above"
	exit 0
fi
if [ "$list_only" = 1 ]; then
	for n in "${names[@]}"; do printf '%-34s %-16s %s\n' "$n" "${file[$n]}" "${catch[$n]}"; done
	exit 0
fi
for o in "${only[@]}"; do
	[ -n "${file[$o]+x}" ] || die "no mutant named $o (see --list)"
done

unit_suites=$(cd "$top" && { ls tests/test_*.c | sed 's|tests/||; s|\.c$||'; ls tests/cli_*.sh | sed 's|tests/||'; })

# The suites a mutant runs, in order; empty when it needs --integration.
suites_for() {
	local n=$1 s out=()
	for s in ${catch[$n]}; do
		if is_integration_suite "$s"; then
			[ "$integration" = 1 ] && out+=("$s")
		elif [ "$all_unit" = 0 ]; then
			out+=("$s")
		fi
	done
	[ "$all_unit" = 1 ] && out=($unit_suites "${out[@]}")
	echo "${out[*]}"
}

selected=()
for n in "${names[@]}"; do
	if [ ${#only[@]} -gt 0 ]; then
		[[ " ${only[*]} " == *" $n "* ]] || continue
	fi
	selected+=("$n")
done

# ---- the copy ----
work=$(mktemp -d /tmp/pmucanary-mutants.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$work/src
mkdir -p "$src"
# (a tracked file deleted in the checkout is left out, not an error)
(cd "$top" && git ls-files -co --exclude-standard -z |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf -) | tar -C "$src" -xf - ||
	die "cannot copy the checkout to $src"

build_for() { # suites... -> make targets
	local s h t=(all)
	for s in "$@"; do [[ $s == *.sh ]] || t+=("build/tests/$s"); done
	# the script suites run helpers (it_inject.sh: helper_mkdisk)
	for s in "$@"; do
		[[ $s == *.sh ]] || continue
		for h in "$top"/tests/helper_*.c; do
			[ -e "$h" ] && t+=("build/tests/$(basename "$h" .c)")
		done
		break
	done
	echo "${t[*]}"
}

# Runs one suite in the copy; 0 passed, else it failed (or timed out). A
# suite that skips fails here: a skipped suite catches nothing, and would
# make the unmutated copy "pass" and every mutant "survive".
run_suite() {
	local s=$1 mode=unit limit=600
	is_integration_suite "$s" && { mode=integration; limit=1800; }
	(cd "$src" && PMUCANARY_REQUIRE_ALL=1 timeout "$limit" tests/run-tests build "$mode" "$s") \
		>"$work/log" 2>&1
}

# The copy's own build/, whatever BUILD or SANITIZE `make mutants` was given.
mk() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$src" -s -j"$(nproc)" BUILD=build "$@"; }

all_suites=()
for n in "${selected[@]}"; do
	for s in $(suites_for "$n"); do
		[[ " ${all_suites[*]} " == *" $s "* ]] || all_suites+=("$s")
	done
done
[ ${#all_suites[@]} -gt 0 ] || die "nothing to run (integration-only mutants need --integration)"

echo "mutants: building the unmutated copy in $src"
# shellcheck disable=SC2046
mk $(build_for "${all_suites[@]}") >"$work/build.log" 2>&1 ||
	{ cat "$work/build.log"; die "the unmutated copy does not build"; }
for s in "${all_suites[@]}"; do
	run_suite "$s" || { tail -30 "$work/log"; die "the unmutated copy fails $s: fix that first"; }
done
echo "mutants: the unmutated copy passes ${all_suites[*]}"

killed=() survived=() skipped=() invalid=()
start=$SECONDS
for n in "${selected[@]}"; do
	suites=$(suites_for "$n")
	if [ -z "$suites" ]; then
		skipped+=("$n (caught by ${catch[$n]}: --integration)")
		continue
	fi
	f=$src/${file[$n]}
	orig=$(<"$f")
	printf '%s\n' "${orig/"${find[$n]}"/"${replace[$n]}"}" >"$f"
	t0=$SECONDS verdict=
	# shellcheck disable=SC2046,SC2086
	if ! mk $(build_for $suites) >"$work/build.log" 2>&1; then
		verdict="INVALID (does not build: $(grep -m1 'error' "$work/build.log"))"
		invalid+=("$n")
	else
		for s in $suites; do
			if ! run_suite "$s"; then
				verdict="killed by $s"
				break
			fi
		done
		if [ -n "$verdict" ]; then
			killed+=("$n")
		else
			verdict="SURVIVED $suites"
			survived+=("$n")
		fi
	fi
	printf '%-34s %s (%d s)\n' "$n" "$verdict" $((SECONDS - t0))
	# A fresh mtime, so make rebuilds the restored file.
	printf '%s\n' "$orig" >"$f"
done

echo
echo "mutants: ${#selected[@]} in the list run, ${#killed[@]} killed, ${#survived[@]} survived," \
	"${#invalid[@]} invalid, ${#skipped[@]} not run ($((SECONDS - start)) s)"
if [ "$by_file" = 1 ]; then
	# The kill score per file: killed of those that built and ran.
	declare -A fk=() ft=()
	for n in "${killed[@]}"; do fk[${file[$n]}]=$((${fk[${file[$n]}]:-0} + 1)); ft[${file[$n]}]=$((${ft[${file[$n]}]:-0} + 1)); done
	for n in "${survived[@]}"; do ft[${file[$n]}]=$((${ft[${file[$n]}]:-0} + 1)); done
	for f in $(printf '%s\n' "${!ft[@]}" | sort); do
		printf 'score: %-28s %3d of %3d killed (%d%%)\n' "$f" "${fk[$f]:-0}" "${ft[$f]}" \
			$(( 100 * ${fk[$f]:-0} / ${ft[$f]} ))
	done
	t=$(( ${#killed[@]} + ${#survived[@]} ))
	[ "$t" -gt 0 ] && printf 'score: %-28s %3d of %3d killed (%d%%)\n' "all" "${#killed[@]}" "$t" \
		$(( 100 * ${#killed[@]} / t ))
fi
for n in "${survived[@]}"; do echo "survived: $n (${file[$n]}): ${why[$n]}"; done
for n in "${invalid[@]}"; do echo "invalid: $n (${file[$n]})"; done
for n in "${skipped[@]}"; do echo "not run: $n"; done
# A hand-written mutant that does not build is a stale list; a generated
# one (a literal in a declaration) simply is not a mutant.
[ ${#invalid[@]} -eq 0 ] || [ "$by_file" = 1 ] || exit 2
[ ${#survived[@]} -eq 0 ]
