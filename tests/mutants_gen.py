#!/usr/bin/env python3
"""Generated mutants (`make mutants-gen`; issue 23): derives mutants
mechanically from lib/*/*.c and harness/*.c and writes them in the format of
tests/mutants.list, for tests/mutants.sh --list-file to run.

  tests/mutants_gen.py [--seed N] [--per-module K] [--module PATH]... [--stats]

Operators, each applied to one place of one line of code (comments,
strings, character constants and preprocessor lines are left alone):

  flip      a comparison to its negation: == !=, < >=, > <=
  boundary  a comparison moved by one: < <=, > >=
  logic     && to ||, || to &&
  term      one operand of a && / || chain dropped (made 1 / 0)
  const     an integer literal N to N+1, true to false, false to true

Every candidate of a module is listed, then K of them are drawn with the
seed (the same seed draws the same mutants from the same code). A
candidate listed in tests/mutants-equivalent.list (file, line text and
replacement text, with the reason it cannot change behaviour) is left out.
Each mutant names the suites that should catch it: the module's own unit
suite (lib/LAYER/X.c: test_X) and the CLI suites of the table below; a module
with none gets every unit suite. An integer given to an allocator
(g_new, malloc...) is not mutated: one more is never seen.

--stats prints, per module, how many candidates there are, and exits.
"""
import argparse
import hashlib
import os
import random
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Suites beyond test_<module> that exercise a module (the CLI suites that
# run it); the harness's commands by their file.
EXTRA = {
    "lib/host/prober.c": ["test_prober", "cli_probe.sh"],
    "lib/abi/profile.c": ["test_profile", "cli_encode.sh"],
    "lib/abi/spec.c": ["test_spec", "test_profile", "cli_encode.sh"],
    "lib/report/report.c": ["test_report", "cli_matrix.sh"],
    "lib/guests/domxml.c": ["test_domxml", "test_fleet", "test_inject"],
    # the fleet's own files (fleet_priv.h): test_fleet, as fleet.c
    "lib/guests/monitor.c": ["test_fleet"],
    "lib/guests/reaper.c": ["test_fleet"],
    "lib/guests/restore.c": ["test_fleet"],
    "lib/report/heatmap.c": ["test_report", "cli_matrix.sh"],
    "lib/report/judge.c": ["test_report", "cli_matrix.sh"],
    "lib/report/junit.c": ["test_report", "cli_matrix.sh"],
    "lib/report/kcidb.c": ["test_report", "cli_matrix.sh"],
    "lib/report/matrix.c": ["test_matrix", "cli_matrix.sh"],
    "lib/report/matrix_text.c": ["test_matrix", "cli_matrix.sh", "cli_probe.sh"],
    "lib/model/diff.c": ["test_diff", "cli_diff.sh"],
    "lib/base/outfile.c": ["test_outfile", "cli_outputs.sh"],
    "lib/base/infile.c": ["test_infile", "cli_inputs.sh"],
    "lib/report/repro.c": ["test_repro", "cli_repro.sh"],
    "lib/run/isolate.c": ["test_isolate", "test_runner"],
    "lib/run/rule.c": ["test_rule", "test_isolate"],
    "lib/run/runner.c": ["test_runner", "test_only", "cli_run.sh"],
    # the runner's own files (runner_priv.h), as runner.c
    "lib/run/runner_open.c": ["test_runner", "test_only", "cli_run.sh"],
    "lib/run/runner_load.c": ["test_runner", "test_only", "cli_run.sh"],
    # guest pools: the registry's unit suite; the libvirt backend is reached
    # by real guests only (it_fleet), like fleet.c
    "lib/guests/pool.c": ["test_pool", "test_runner"],
    "lib/run/only.c": ["test_only", "cli_only.sh"],
    "lib/base/jsonstr.c": ["test_jsonstr", "test_results"],
    # probe --list-all prints its cells' lines (the tries after the first)
    "lib/model/results.c": ["test_results", "cli_probe.sh"],
    "lib/model/results_read.c": ["test_results", "cli_probe.sh"],
    "lib/model/results_write.c": ["test_results", "cli_probe.sh"],
    "lib/host/perfev.c": ["test_perfev", "test_prober"],
    # the errno outcomes by name reach the user through encode --fail
    "lib/model/outcome.c": ["test_outcome", "test_attr", "cli_encode.sh"],
    "harness/cmd-encode.c": ["cli_encode.sh"],
    "harness/cmd-probe.c": ["cli_probe.sh"],
    "harness/cmd-diff.c": ["cli_diff.sh"],
    "harness/cmd-matrix.c": ["cli_matrix.sh"],
    "harness/cmd-run.c": ["cli_run.sh", "cli_only.sh"],
    "harness/cmd-lab.c": ["cli_lab.sh"],
    "harness/cmd-trace.c": ["cli_trace.sh"],
    "harness/cmd-repro.c": ["cli_repro.sh"],
    "harness/cmd-fleet.c": ["cli_inputs.sh"],
    "harness/cmd-image.c": ["cli_inputs.sh", "it_inject.sh"],
    "harness/cmd-lava.c": ["cli_lava.sh", "cli_outputs.sh"],
    "harness/main.c": ["cli_inputs.sh", "cli_outputs.sh", "cli_run.sh"],
    "harness/reports.c": ["cli_outputs.sh", "cli_matrix.sh"],
}

COMPARE_FLIP = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
BOUNDARY = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
LOGIC = {"&&": "||", "||": "&&"}

TOKEN = re.compile(r"<<=|>>=|<<|>>|->|<=|>=|==|!=|&&|\|\||[<>]|\b(?:true|false)\b|\b\d+\b")


def blank_code(lines):
    """Each line with comments, strings and character constants replaced
    by spaces (same length), and preprocessor lines blanked whole."""
    out = []
    in_comment = False
    for line in lines:
        if not in_comment and line.lstrip().startswith("#"):
            out.append(" " * len(line))
            continue
        b = []
        i = 0
        while i < len(line):
            c = line[i]
            if in_comment:
                if line.startswith("*/", i):
                    in_comment = False
                    b.append("  ")
                    i += 2
                else:
                    b.append(" ")
                    i += 1
                continue
            if line.startswith("/*", i):
                in_comment = True
                b.append("  ")
                i += 2
                continue
            if line.startswith("//", i):
                b.append(" " * (len(line) - i))
                break
            if c in "\"'":
                j = i + 1
                while j < len(line) and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                b.append(" " * (min(j, len(line) - 1) - i + 1))
                i = j + 1
                continue
            b.append(c)
            i += 1
        out.append("".join(b)[: len(line)].ljust(len(line)))
    return out


def operand_end(code, start):
    """Where the operand that starts at code[start] ends: the next && or ||
    at its own depth, or the parenthesis, ';', ',' or '?' that closes it."""
    depth = 0
    i = start
    while i < len(code):
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and (code.startswith("&&", i) or code.startswith("||", i)
                             or c in ";,?:"):
            return i
        i += 1
    return None   # runs past the line: not a one-line chain


def candidates(path, text):
    lines = text.split("\n")
    code = blank_code(lines)
    out = []
    for n, (line, cl) in enumerate(zip(lines, code)):
        if not cl.strip():
            continue
        # tables of numbers (errno lists, widths) and declarations with
        # array sizes make mostly equivalent or unbuildable mutants: only
        # literals in statements with an operator or a return are taken
        for m in TOKEN.finditer(cl):
            tok, s, e = m.group(0), m.start(), m.end()
            muts = []
            if tok in COMPARE_FLIP:
                muts.append(("flip", COMPARE_FLIP[tok]))
            if tok in BOUNDARY:
                muts.append(("boundary", BOUNDARY[tok]))
            if tok in LOGIC:
                muts.append(("logic", LOGIC[tok]))
                j = e
                while j < len(cl) and cl[j] == " ":
                    j += 1
                end = operand_end(cl, j)
                if end is not None and end > j:
                    out.append((n, "term", line[:j] + ("1" if tok == "&&" else "0")
                                + line[end:]))
            if tok == "true":
                muts.append(("const", "false"))
            if tok == "false":
                muts.append(("const", "true"))
            if tok.isdigit():
                stmt = re.search(r"\breturn\b|==|!=|<|>|[-+*/%]=?|=", cl)
                if not stmt or re.match(r"\s*\[", cl[e:]) or re.search(r"\[\s*$", cl[:s]):
                    continue
                if re.search(r"\bcase\b", cl) or len(tok) > 9:
                    continue
                # -1 as "until the NUL" or "none" (g_utf8_validate(s, -1),
                # fd = -1): -2 means the same to every such API
                if tok == "1" and re.search(r"-\s*$", cl[:s]):
                    continue
                # a size given to an allocator: one more is never seen
                if re.search(r"\b(g_new0?|g_malloc0?|malloc|calloc|g_alloca)\s*\(", cl):
                    continue
                muts.append(("const", str(int(tok) + 1)))
            for op, rep in muts:
                out.append((n, op, line[:s] + rep + line[e:]))
    return lines, out


def unique_find(lines, n):
    """The smallest run of lines around line n (as text) that occurs once."""
    text = "\n".join(lines)
    lo = hi = n
    while True:
        find = "\n".join(lines[lo:hi + 1])
        if text.count(find) == 1:
            return lo, hi
        if lo > 0:
            lo -= 1
        elif hi < len(lines) - 1:
            hi += 1
        else:
            return None


def escape(s):
    """mutants.list's two escapes: a tab and a newline."""
    return s.replace("\t", "\\t").replace("\n", "\\n")


def writable(s):
    """Whether s survives the list's escapes: a backslash before n or t in
    the code itself (C's "\\n") would read back as a newline or a tab."""
    return not re.search(r"\\[nt]", s)


def load_equivalent(path):
    """The entries of mutants-equivalent.list, each (file, line number in the
    list, the lines around the mutated one, the mutated one's index among
    them, its replacement). A line that occurs more than once in its file is
    given with its neighbours (`\\n` between lines, in LINE and REPLACEMENT
    alike), so that every entry names one line."""
    eq = []
    if not os.path.exists(path):
        return eq
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            parts = line.split(" | ")
            if len(parts) != 4:
                sys.exit(f"{path}:{ln}: expected FILE | LINE | REPLACEMENT | REASON")
            find = [x.strip() for x in parts[1].split("\\n")]
            rep = [x.strip() for x in parts[2].split("\\n")]
            diff = [i for i in range(len(find)) if len(find) == len(rep) and find[i] != rep[i]]
            if len(diff) != 1:
                sys.exit(f"{path}:{ln}: LINE and REPLACEMENT must differ in one line")
            eq.append((parts[0], ln, find, diff[0], rep[diff[0]]))
    return eq


def equivalent_lines(entry, lines):
    """The line numbers (0-based) of lines an entry names: where its lines
    occur in the file, trimmed."""
    _, _, find, i, _ = entry
    t = [x.strip() for x in lines]
    return [s + i for s in range(len(t) - len(find) + 1) if t[s:s + len(find)] == find]


def is_equivalent(eq, rel, lines, cand):
    n, _, new = cand
    return any(e[0] == rel and e[4] == new.strip() and n in equivalent_lines(e, lines)
               for e in eq)


def check_equivalent(eq):
    """Every entry names exactly one line of its file, and that line has its
    replacement among the generated candidates. Returns the complaints."""
    bad = []
    for e in eq:
        rel, ln = e[0], e[1]
        where = f"tests/mutants-equivalent.list:{ln}: {rel}"
        if not os.path.exists(os.path.join(TOP, rel)):
            bad.append(f"{where}: no such file")
            continue
        with open(os.path.join(TOP, rel)) as f:
            lines, cands = candidates(rel, f.read())
        at = equivalent_lines(e, lines)
        if len(at) != 1:
            bad.append(f"{where}: the line occurs {len(at)} times (must be once: "
                       "give its neighbours, \\n between lines)")
        elif not any(c[0] == at[0] and c[2].strip() == e[4] for c in cands):
            bad.append(f"{where}:{at[0] + 1}: the generator makes no such mutant of it")
    return bad


def suites_for(rel):
    base = os.path.splitext(os.path.basename(rel))[0]
    s = list(EXTRA.get(rel, []))
    own = f"test_{base}"
    if os.path.exists(os.path.join(TOP, "tests", own + ".c")) and own not in s:
        s.insert(0, own)
    return s


def main():
    ap = argparse.ArgumentParser(description="generated mutants for tests/mutants.sh")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-module", type=int, default=5)
    ap.add_argument("--module", action="append", default=[])
    ap.add_argument("--stats", action="store_true")
    ap.add_argument("--check-equivalent", action="store_true",
                    help="only check that each entry of mutants-equivalent.list "
                    "names one line that has that mutant")
    a = ap.parse_args()

    mods = a.module or sorted(
        [f"lib/{d}/{f}" for d in sorted(os.listdir(os.path.join(TOP, "lib")))
         if os.path.isdir(os.path.join(TOP, "lib", d))
         for f in os.listdir(os.path.join(TOP, "lib", d)) if f.endswith(".c")] +
        [f"harness/{f}" for f in os.listdir(os.path.join(TOP, "harness")) if f.endswith(".c")])
    eq = load_equivalent(os.path.join(TOP, "tests", "mutants-equivalent.list"))
    if a.check_equivalent:
        bad = check_equivalent(eq)
        for b in bad:
            print(b, file=sys.stderr)
        if bad:
            sys.exit(1)
        print(f"{len(eq)} equivalent mutants, each names one line")
        return
    all_unit = sorted(f[:-2] for f in os.listdir(os.path.join(TOP, "tests"))
                      if f.startswith("test_") and f.endswith(".c"))
    total = 0
    print("# generated by tests/mutants_gen.py --seed %d --per-module %d" % (a.seed, a.per_module))
    for rel in mods:
        with open(os.path.join(TOP, rel)) as f:
            text = f.read()
        lines, cands = candidates(rel, text)
        cands = [c for c in cands if not is_equivalent(eq, rel, lines, c)]
        if a.stats:
            print(f"{rel}: {len(cands)} candidates")
            continue
        # Seeded by the path lib/ had before its layer folders (lib/X.c), so
        # that a seed's sample named in a note stays the same sample.
        rng = random.Random(f"{a.seed}:{re.sub(r'^lib/[a-z]+/', 'lib/', rel)}")
        pick = sorted(rng.sample(cands, min(a.per_module, len(cands))))
        suites = suites_for(rel) or all_unit
        for n, op, new in pick:
            span = unique_find(lines, n)
            if not span:
                continue
            lo, hi = span
            find = "\n".join(lines[lo:hi + 1])
            rep = "\n".join(lines[lo:n] + [new] + lines[n + 1:hi + 1])
            if not writable(find) or not writable(rep):
                continue
            h = hashlib.sha1(f"{rel}\0{find}\0{rep}".encode()).hexdigest()[:8]
            name = "gen-%s-%d-%s-%s" % (os.path.splitext(os.path.basename(rel))[0], n + 1, op, h)
            print()
            print(f"[{name}]")
            print(f"file = {rel}")
            print(f"find = {escape(find)}")
            print(f"replace = {escape(rep)}")
            print(f"catch = {' '.join(suites)}")
            print(f"why = generated: {op} at {rel}:{n + 1}: {new.strip()}")
            total += 1
    if not a.stats:
        print(f"# {total} mutants", file=sys.stderr)


if __name__ == "__main__":
    main()
