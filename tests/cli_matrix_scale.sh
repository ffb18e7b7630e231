#!/usr/bin/env bash
# The HTML report at full scale: the default sweep (`pmucanary probe`, all
# profiles, ~140,000 cells) through `pmucanary matrix --html`, then the page
# in headless Chromium as a person would use it.
#
# Asserts: the page is at most 5 MB; it draws one heatmap row per (kernel,
# profile) of the file and one tile per (row, event, modifier class) that
# holds a cell (counted here from the file by the classes matrix.h
# documents), every cell counted in some tile; a click on the tile of
# perf-modern's cpu-cycles with precise modifiers opens the drill-down that
# shows cpu-cycles:pp's tries (hardware cycles ENOENT, then cpu-clock OK:
# this host has no PMU, perf falls back); a filter typed into the box goes
# into the fragment, and reloading the page restores the same view (same
# filter, same tiles, same cells).
#
# Needs chromium and python3; without chromium: SKIP (exit 77), unless
# PMUCANARY_REQUIRE_CHROMIUM=1 (CI) -> fail. About 40 s, most of it the
# probe and the text matrix that `matrix` always prints.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
. "$top/tests/chromium.sh"
chromium_require "" 77
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
ok() { n=$((n + 1)); echo "ok: $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL: $1"; }

start=$SECONDS
if ! "$bin" probe --json "$tmp/p.json" >/dev/null 2>"$tmp/probe.err"; then
	echo "FAIL: probe"; sed 's/^/    /' "$tmp/probe.err"; exit 1
fi
t_probe=$((SECONDS - start))
"$bin" matrix --html "$tmp/report.html" "$tmp/p.json" >/dev/null 2>"$tmp/matrix.err"
rc=$?
t_matrix=$((SECONDS - start - t_probe))
[ $rc -eq 0 ] && ok "matrix --html exits 0 (no harm on this host)" ||
	{ bad "matrix --html exited $rc"; sed 's/^/    /' "$tmp/matrix.err"; }
size=$(stat -c %s "$tmp/report.html" 2>/dev/null || echo 0)
[ "$size" -gt 0 ] && [ "$size" -le $((5 * 1024 * 1024)) ] &&
	ok "page is $size bytes (<= 5 MB)" || bad "page is $size bytes (want 1..5 MB)"

# What the page must show, from the file: rows, cells, tiles by matrix.h's
# modifier classes, events.
python3 - "$tmp/p.json" >"$tmp/expect" 2>"$tmp/expect.err" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
cells = doc["cells"]
def kernel(c):  # pmucanary/2 leaves out a cell's kernel when it is the file's
    return c.get("kernel") or doc["kernel"]
def event(spec):
    br = spec.find("[")
    if br >= 0 and spec.endswith("]"):
        return spec[:br]
    sl = spec.rfind("/")
    if sl > 0 and spec.find("/") != sl:
        return spec[:sl + 1]
    co = spec.find(":")
    return spec[:co] if co >= 0 else spec
FLAGS = {"S": "S", "I": "I", "D": "D", "W": "W", "e": "e", "b": "b", "R": "R", "X": "X"}
def of(priv, virt, precise, flag):
    if flag:
        return flag
    if precise:
        return "p+G/H" if virt else "p"
    return "G/H" if virt else "u/k/h" if priv else "none"
def modclass(spec):
    mods = spec[len(event(spec)):]
    priv = virt = precise = False
    flag = None
    if mods.startswith("["):
        for t in mods[1:-1].split(","):
            if t in ("exclude_user", "exclude_kernel", "exclude_hv"): priv = True
            elif t in ("exclude_host", "exclude_guest"): virt = True
            elif t.startswith("precise_ip="): precise = t != "precise_ip=0"
            elif t == "exclude_idle": flag = flag or "I"
            elif t: flag = "other"
        return of(priv, virt, precise, flag)
    for ch in mods.lstrip(":") if mods.startswith(":") else mods:
        if ch in "ukh": priv = True
        elif ch in "GH": virt = True
        elif ch in "pP": precise = True
        else:
            f = FLAGS.get(ch, "other")
            if f == "other" or not flag: flag = f
    return of(priv, virt, precise, flag)
rows = {(kernel(c), c["profile"]) for c in cells}
tiles = {(kernel(c), c["profile"], event(c["spec"]), modclass(c["spec"])) for c in cells}
print(len(rows), len(cells), len(tiles), len({event(c["spec"]) for c in cells}))
EOF
if ! read -r want_rows want_cells want_tiles want_events <"$tmp/expect"; then
	echo "FAIL: counting the file with python3"; sed 's/^/    /' "$tmp/expect.err"; exit 1
fi
echo "note: the file has $want_cells cells, $want_rows rows, $want_tiles tiles, $want_events events"

{
	chromium_probe_head
	cat <<EOF
<script>
var out = [], loads = 0, t0 = performance.now();
/* The view as numbers: fragment, filter box, tiles and their cells, the
 * open drill-down's cells. */
function view(d, w) {
  var tiles = d.querySelectorAll('td.tile[data-t]'), sum = 0, specs = [];
  tiles.forEach(function (td) { sum += Number(td.getAttribute('data-n')); });
  d.querySelectorAll('#drill div.cell').forEach(function (c) { specs.push(c.getAttribute('data-spec')); });
  return [w.location.hash, d.getElementById('filter').value, tiles.length, sum, specs.length,
          specs.join(' ')].join('|');
}
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, w = this.contentWindow;
  if (!d) { document.getElementById('out').textContent = 'no access to report'; return; }
  loads++;
  if (loads === 1) {
    out.push('ready|' + d.body.getAttribute('data-js') + '|' + Math.round(performance.now() - t0));
    out.push('rows|' + d.querySelectorAll('table.heatmap tbody tr').length);
    var tiles = d.querySelectorAll('td.tile[data-t]'), sum = 0, events = {};
    tiles.forEach(function (td) { sum += Number(td.getAttribute('data-n')); });
    d.querySelectorAll('table.heatmap th.event').forEach(function (th) { events[th.textContent] = 1; });
    out.push('tiles|' + tiles.length + '|' + sum + '|' + Object.keys(events).length);
    var td = findTile(d, d.querySelector('table.heatmap').getAttribute('data-cpu'),
                      d.querySelector('table.heatmap tbody th.row').textContent,
                      'perf-modern', 'cpu-cycles', 'p');
    if (!td) { out.push('no tile perf-modern cpu-cycles p'); }
    else {
      td.click();
      drillLines(d, 'cpu-cycles:pp').forEach(function (l) { out.push('drill|' + l); });
    }
    var box = d.getElementById('filter');
    box.value = 'cpu-cycles:pp';
    box.dispatchEvent(new w.Event('input', {bubbles: true}));
    setTimeout(function () {
      out.push('before|' + view(d, w));
      w.location.reload();
    }, 1000);
  } else {
    out.push('after|' + view(d, w));
    document.getElementById('out').textContent = out.join('\n');
  }
});
</script>
</body></html>
EOF
} >"$tmp/probe.html"
chromium_flags "$tmp/profile"
cstart=$SECONDS
chromium_dump_dom 20000 "file://$tmp/probe.html" "$tmp/dom.html" "$tmp/chrome.log"
t_chrome=$((SECONDS - cstart))
chromium_probe_lines "$tmp/dom.html" "$tmp/seen"

want() { # want DESCRIPTION EXTENDED-REGEX
	if grep -Eq -- "$2" "$tmp/seen"; then ok "$1"
	else bad "$1 (no line matching /$2/)"; fi
}
want "the page's script ran" '^ready\|ready\|'
want "one heatmap row per kernel x profile ($want_rows)" "^rows\|$want_rows$"
want "one tile per row x event x modifier class ($want_tiles), all $want_cells cells, $want_events events" \
	"^tiles\|$want_tiles\|$want_cells\|$want_events$"
want "drill-down: cpu-cycles:pp under perf-modern is OK" '^drill\|cell\|cpu-cycles:pp\|OK$'
want "drill-down: try 1, hardware cycles, ENOENT" '^drill\|try\|try 1: size=136 [^|]*precise_ip=2 [^|]*-> ENOENT$'
want "drill-down: try 2, cpu-clock after perf's fallback" \
	'^drill\|try\|try 2: type=1 size=136 [^|]*precise_ip=2 [^|]*-> OK \(cycles -> cpu-clock: no hardware cycles event\)$'
want "the filter is in the fragment with the open tile" '^before\|#f=cpu-cycles%3App&t=[0-9]+\.[0-9]+\|cpu-cycles:pp\|'
before=$(sed -n 's/^before|//p' "$tmp/seen")
after=$(sed -n 's/^after|//p' "$tmp/seen")
IFS='|' read -r _ _ bt _ bc _ <<<"$before"
if [ -n "$before" ] && [ "$before" = "$after" ] && [ "${bc:-0}" -gt 1 ] && [ "${bt:-0}" -lt "$want_tiles" ]; then
	ok "reloading restores the filtered view ($bt tiles, $bc cells in the open tile)"
else
	bad "reloading restores the filtered view"; echo "    before: ${before:0:300}"; echo "    after:  ${after:0:300}"
fi

if [ $fails -ne 0 ]; then
	echo "--- what the probe saw:"; cut -c1-300 "$tmp/seen" | sed 's/^/    /'
	echo "--- chromium log:"; tail -5 "$tmp/chrome.log" | sed 's/^/    /'
fi
echo "note: probe ${t_probe} s, matrix --html ${t_matrix} s, chromium ${t_chrome} s, $((SECONDS - start)) s in all"
echo "$((n - fails)) of $n passed"
[ $fails -eq 0 ]
