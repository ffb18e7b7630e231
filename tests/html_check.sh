#!/usr/bin/env bash
# The HTML heatmap as a browser shows it: headless Chromium loads the page
# written by `pmucanary matrix --html` inside a small probe page (an
# iframe, same directory), lets the page's own script run, then the probe
# reads what is on screen: each tile's computed colour per outcome class and
# harm kind, its number, the tooltip after a hover, the drill-down after a
# click (outcome, k/n, tries, evidence), the limitation lines, and that no
# hostile string from the inputs became an element.
#
# Called by cli_matrix.sh; standalone: tests/html_check.sh [OUTDIR]
# Against a baseline (--baseline): a cell OK there and refused now is a
# regression tile (red frame), counted failing and listed as a finding.
# Needs: chromium (Debian package "chromium"). Without it: prints "SKIP:
# reason" and exits 77 (tests/run-tests' skip), unless
# PMUCANARY_REQUIRE_CHROMIUM=1 (CI sets it) -> exit 1.
# PMUCANARY_HTML_SCREENSHOT=FILE also writes a screenshot of the page.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
. "$top/tests/chromium.sh"
chromium_require "html_check: " 77

out=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$out" ] || out=$tmp
d=$top/tests/data/matrix
"$bin" matrix --html "$out/report.html" --errata "$top/scenarios/errata.ini" \
	"$d/ivb-3.6.json" "$d/hsw-3.6.json" "$d/amd-3.6.json" "$d/tcg-6.1.json" "$d/xss.json" \
	>/dev/null
rc=$?
if [ $rc -ne 1 ] || [ ! -s "$out/report.html" ]; then
	echo "FAIL: pmucanary matrix --html exited $rc (want 1: unexplained harm)"
	exit 1
fi

# tests/heatmap_probe.js names every tile by cpu|kernel|profile|event|class.
{
	chromium_probe_head
	cat <<EOF
<script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, w = this.contentWindow, out = [];
  if (!d) { document.getElementById('out').textContent = 'no access to report'; return; }
  out.push('js=' + d.body.getAttribute('data-js'));
  out.push('status=' + d.getElementById('js-status').textContent);
  d.querySelectorAll('td.tile').forEach(function (td) {
    var cs = w.getComputedStyle(td);
    out.push('tile|' + tileName(td) + '|' + td.className + '|' + cs.backgroundColor + '|' +
             cs.backgroundImage.split('(')[0] + '|' + td.textContent);
  });
  d.querySelectorAll('#findings li').forEach(function (li) { out.push('finding|' + li.textContent); });
  var harm = findTile(d, 'AuthenticAMD 16/4/3', '3.6.11', 'perf-3.6', 'cycles', 'p');
  harm.dispatchEvent(new w.MouseEvent('mouseover', {bubbles: true}));
  harm.dispatchEvent(new w.MouseEvent('mousemove', {bubbles: true, clientX: 50, clientY: 60}));
  var tip = d.getElementById('tip');
  out.push('tip|' + w.getComputedStyle(tip).display + '|' + tip.textContent.split('\n').join('|'));
  harm.click();
  out.push('hash|' + w.location.hash);
  drillLines(d).forEach(function (l) { out.push('drill|' + l); });
  var links = d.querySelectorAll('#findings li.f-harm a'), xss = null;
  for (var i = 0; i < links.length; i++) if (links[i].textContent.indexOf('alert(1)') >= 0) xss = links[i];
  xss.click();
  setTimeout(function () {
    drillLines(d).forEach(function (l) { out.push('xss|' + l); });
    d.querySelectorAll('li.limitation').forEach(function (li) {
      out.push('limitation|' + li.textContent);
    });
    out.push('elements|script=' + d.querySelectorAll('script').length +
             ' img=' + d.querySelectorAll('img').length +
             ' b=' + d.querySelectorAll('b').length +
             ' i=' + d.querySelectorAll('i').length);
    document.getElementById('out').textContent = out.join('\n');
  }, 100);
});
</script>
</body></html>
EOF
} >"$out/probe.html"

chromium_flags "$tmp/profile"
chromium_dump_dom 5000 "file://$out/probe.html" "$tmp/dom.html" "$tmp/chrome.log"
if [ -n "${PMUCANARY_HTML_SCREENSHOT:-}" ]; then
	timeout 120 "$chrome" "${chromium_flags[@]}" --window-size=1400,1000 \
		--screenshot="$PMUCANARY_HTML_SCREENSHOT" "file://$out/report.html" \
		>/dev/null 2>&1
fi
chromium_probe_lines "$tmp/dom.html" "$tmp/seen"

fails=0 n=0
want() { # want DESCRIPTION EXTENDED-REGEX
	n=$((n + 1))
	if grep -Eq -- "$2" "$tmp/seen"; then echo "ok: $1"
	else echo "FAIL: $1 (no line matching /$2/)"; fails=$((fails + 1)); fi
}
none() { # none DESCRIPTION EXTENDED-REGEX
	n=$((n + 1))
	if grep -Eq -- "$2" "$tmp/seen"; then echo "FAIL: $1"; grep -E -- "$2" "$tmp/seen" | sed 's/^/    /'; fails=$((fails + 1))
	else echo "ok: $1"; fi
}

T='^tile\|'
want "the page's script ran" '^js=ready$'
want "script counted cells and tiles" '^status=14 cells in 14 tiles, 2 failing, 2 known errata; click a tile for its cells$'
want "unexplained crash is dark red" "${T}AuthenticAMD 16/4/3\|3\.6\.11\|perf-3\.6\|cycles\|p\|tile v-harm c-harm o-GUEST_CRASH( x-diff)?\|rgb\(183, 28, 28\)\|none\|1$"
want "known erratum is striped, not red" "${T}GenuineIntel 6/58/9\|3\.6\.11\|perf-3\.6\|cycles\|p\|tile v-known c-harm o-GUEST_CRASH[^|]*\|[^|]*\|repeating-linear-gradient\|1$"
want "known corruption is striped" "${T}GenuineIntel 6/63/2\|3\.6\.11\|perf-3\.6\|cycles\|p\|tile v-known c-harm o-GUEST_CORRUPTION[^|]*\|[^|]*\|repeating-linear-gradient\|1$"
want "OK is green" "${T}GenuineIntel 6/58/9\|3\.6\.11\|perf-3\.7\|cycles\|p\|tile v-pass c-ok o-OK\|rgb\(200, 230, 201\)\|none\|1$"
want "errno is amber" "${T}AuthenticAMD 25/1/1\|6\.1\.0-18-amd64\|perf-6\.1\|cycles\|p\|tile v-pass c-errno o-ENOENT\|rgb\(255, 243, 196\)\|none\|1$"
want "INFRA is violet" "${T}GenuineIntel 6/63/2\|3\.6\.11\|perf-3\.6\|cpu-clock\|u/k/h\|tile v-infra c-infra o-INFRA\|rgb\(209, 196, 233\)\|none\|1$"
want "rejected spec is grey" "${T}AuthenticAMD 25/1/1\|6\.1\.0-18-amd64\|perf-6\.1\|cycles\|S\|tile v-rejected c-rejected o-REJECTED\|rgb\(238, 238, 238\)\|none\|1$"
want "no cell: an empty tile" "${T}GenuineIntel 6/58/9\|3\.6\.11\|perf-3\.7\|cpu-clock\|u/k/h\|tile v-absent\|rgb\(250, 250, 250\)\|none\|$"
want "harm is a finding, linked" '^finding\|harmcpu AuthenticAMD 16/4/3: 3\.6\.11 perf-3\.6: cycles · p 1 harmful \(GUEST_CRASH 1\)$'
want "known erratum is a finding" '^finding\|knowncpu GenuineIntel 6/63/2: 3\.6\.11 perf-3\.6: cycles · p 1 harmful, a known erratum \(GUEST_CORRUPTION 1\)$'
want "hover shows the tooltip with the tile" '^tip\|block\|kernel 3\.6\.11, profile perf-3\.6\|event cycles, modifiers p \([^|]*\)\|1 cell: GUEST_CRASH 1\|1 harmful, no known erratum explains it'
want "a click puts the tile in the fragment" '^hash\|#t=[0-9]+\.[0-9]+$'
want "drill-down: the cell" '^drill\|cell\|cycles:pp\|GUEST_CRASH$'
want "drill-down: outcome and k/n" '^drill\|head\|outcome GUEST_CRASH \(harm\), k/n 1/3$'
want "drill-down: the try" '^drill\|try\|try 1: size=96 sample_freq=4000 disabled=1 inherit=1 freq=1 precise_ip=2 -> GUEST_CRASH$'
want "drill-down: evidence" '^drill\|evidence\|evidence: console \(guest 0\): BUG: unable to handle kernel paging request$'
want "hostile spec shown as text" '^xss\|cell\|<script>alert\(1\)</script>\|GUEST_CRASH$'
want "hostile evidence shown as text" '^xss\|evidence\|evidence: console \(guest 0\): </title><script>alert\(2\)</script><img src=x onerror=alert\(3\)> & "quoted"'
want "TCG limitation shown" '^limitation\|limitation: accel is tcg: TCG cannot show'
want "no-PMU limitation shown" '^limitation\|limitation: no hardware PMU on this host'
want "hostile limitation shown as text" '^limitation\|limitation: limitation with <script>alert\(5\)</script>$'
want "no element injected" '^elements\|script=2 img=0 b=0 i=0$'
none "no script error reached the probe" '^probe did not run|no access to report'

# The heatmap against a baseline: cpu-clock:u was OK there, EOPNOTSUPP now.
mkdir -p "$out/base"
jq '(.cells[] | select(.profile == "perf-6.1" and .spec == "cpu-clock:u") | .outcome) = "EOPNOTSUPP"' \
	"$d/tcg-6.1.json" >"$out/base/now.json"
"$bin" matrix --html "$out/base/report.html" --baseline "$d/tcg-6.1.json" "$out/base/now.json" \
	>/dev/null
rc=$?
n=$((n + 1))
if [ $rc -ne 1 ] || [ ! -s "$out/base/report.html" ]; then
	echo "FAIL: matrix --html --baseline exited $rc (want 1: a regression)"; fails=$((fails + 1))
else
	echo "ok: matrix --html --baseline exits 1 on the regression"
fi
{
	chromium_probe_head
	cat "$top/tests/html_check_baseline.js"
} >"$out/base/probe.html"
chromium_dump_dom 5000 "file://$out/base/probe.html" "$tmp/dom-base.html" "$tmp/chrome-base.log"
mv "$tmp/seen" "$tmp/seen-main"
chromium_probe_lines "$tmp/dom-base.html" "$tmp/seen"
want "baseline: the regression counts as failing" '^status=[0-9]+ cells in [0-9]+ tiles, 1 failing'
want "baseline: the regressed tile has the red frame" "${T}[^|]*\|6\.1\.0-18-amd64\|perf-6\.1\|cpu-clock\|[^|]*\|tile v-regression c-errno o-EOPNOTSUPP[^|]*\|solid rgb\(213, 0, 0\)\|1$"
want "baseline: the regression is a finding" '^finding\|[^|]*regression[^|]*\|.*1 regressed against the baseline'
none "baseline: no other tile framed" "${T}[^|]*\|[^|]*\|[^|]*\|(cycles|msr)[^|]*\|[^|]*\|tile v-regression"
cat "$tmp/seen-main" >>"$tmp/seen"

# A run whose harm a proven rule explains (isolate = rule; the file is a
# runner's run.json, fake guests crashing on every task-clock attr): the
# rule is listed, visible, above the heat map; a cell it judged says so in
# its drill-down and its tile's tooltip.
mkdir -p "$out/rule"
"$bin" matrix --html "$out/rule/report.html" "$d/rule-6.18.json" >/dev/null
rc=$?
n=$((n + 1))
if [ $rc -ne 1 ] || [ ! -s "$out/rule/report.html" ]; then
	echo "FAIL: matrix --html of a rule run exited $rc (want 1: harm)"; fails=$((fails + 1))
else
	echo "ok: matrix --html of a rule run exits 1 on its harm"
fi
{
	chromium_probe_head
	cat <<'EOF2'
<script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, w = this.contentWindow, out = [];
  var rules = d.getElementById('rules'), map = d.getElementById('heatmap');
  out.push('rule-js=' + d.body.getAttribute('data-js'));
  out.push('rules-visible=' + (rules && rules.offsetHeight > 0 && w.getComputedStyle(rules).display !== 'none'));
  out.push('rules-before-map=' + !!(rules && (rules.compareDocumentPosition(map) & w.Node.DOCUMENT_POSITION_FOLLOWING) &&
                                     rules.getBoundingClientRect().bottom <= map.getBoundingClientRect().top));
  d.querySelectorAll('#rules li.rule').forEach(function (li) {
    out.push('rule|' + li.querySelector('code.rule-text').textContent + '|' + li.querySelector('.rule-cells').textContent);
  });
  d.querySelectorAll('#rules li.sample').forEach(function (li) { out.push('sample|' + li.textContent); });
  var td = findTile(d, 'AuthenticAMD 26/2/1', '6.18.44-fc-v1252', 'perf-modern', 'task-clock', 'u/k/h');
  td.dispatchEvent(new w.MouseEvent('mouseover', {bubbles: true}));
  out.push('rtip|' + d.getElementById('tip').textContent.split('\n').join('|'));
  td.click();
  setTimeout(function () {
    drillLines(d, 'task-clock:u').forEach(function (l) { out.push('rdrill|' + l); });
    /* the filter box as a user types into it (its input handler waits
     * 150 ms before it applies a filter) */
    var fs = ['rule', 'rule cpu-clock', 'rule task-clock:u'], box = d.getElementById('filter');
    (function next(k) {
      if (k === fs.length) {
        document.getElementById('out').textContent = out.join('\n');
        return;
      }
      box.value = fs[k];
      box.dispatchEvent(new w.Event('input'));
      setTimeout(function () {
        out.push('rfilter|' + fs[k] + '|' + d.getElementById('fcount').textContent);
        next(k + 1);
      }, 400);
    })(0);
  }, 100);
});
</script>
</body></html>
EOF2
} >"$out/rule/probe.html"
chromium_dump_dom 5000 "file://$out/rule/probe.html" "$tmp/dom-rule.html" "$tmp/chrome-rule.log"
mv "$tmp/seen" "$tmp/seen-base"
chromium_probe_lines "$tmp/dom-rule.html" "$tmp/seen"
# Expected values from the file: one rule, 17 attrs; 18 task-clock cells
# (9 specs x 2 profiles) cover it, 5 of them armed alone (k/n 2/2 each).
want "rule: the page's script ran" '^rule-js=ready$'
want "rule: the rule section is visible" '^rules-visible=true$'
want "rule: the rule section comes before the heat map" '^rules-before-map=true$'
want "rule: its text and the cells it covers" '^rule\|type=software config=task-clock\|18 cells \(13 judged by the rule, not armed alone; 5 armed alone\)$'
want "rule: a sample attr with its k/n" '^sample\|sample type=1 size=136 config=0x1 .* exclude_host=1 GUEST_CRASH k/n 2/2$'
want "rule: the tooltip counts the cells the rule judged" '^rtip\|.*\|[0-9]+ judged by rule type=software config=task-clock \(not armed alone\)\|click for the cells$'
want "rule: a covered cell's drill-down names the rule" '^rdrill\|rule\|judged by rule type=software config=task-clock \(not armed alone\)$'
# The filter keyword "rule" keeps the 13 cells the rule judged ("judged":
# "rule" in the file), none of the cpu-clock cells (no rule covers them),
# and with "task-clock:u" (specs :u, :uG, :up in two profiles) the 5 of
# those 6 the rule judged: perf-modern's task-clock:uG was armed alone.
want "rule: the filter 'rule' keeps the cells the rule judged" '^rfilter\|rule\|13 cells match$'
want "rule: no cpu-clock cell is judged by a rule" '^rfilter\|rule cpu-clock\|0 cells match$'
want "rule: 'rule' combines with a spec" '^rfilter\|rule task-clock:u\|5 cells match$'
cat "$tmp/seen-base" "$tmp/seen-main" >>"$tmp/seen"

if [ $fails -ne 0 ]; then
	echo "--- what the probe saw:"; sed 's/^/    /' "$tmp/seen"
	echo "--- chromium log:"; tail -5 "$tmp/chrome.log" | sed 's/^/    /'
fi
echo "$((n - fails)) of $n passed"
[ $fails -eq 0 ]
