#!/usr/bin/env bash
# The HTML heatmap as a browser shows it: headless Chromium loads the page
# written by `pmucanary matrix --html` inside a small probe page (an
# iframe, same directory), lets the page's own script run, then the probe
# reads what is on screen: computed cell colours per outcome class and harm
# kind, cell texts and titles, the tooltip after a hover, the limitation
# lines, and that no hostile string from the inputs became an element.
#
# Called by cli_matrix.sh; standalone: tests/html_check.sh [OUTDIR]
# Needs: chromium (Debian package "chromium"). Without it: prints SKIP and
# exits 0, unless PMUCANARY_REQUIRE_CHROMIUM=1 (CI sets it) -> exit 1.
# PMUCANARY_HTML_SCREENSHOT=FILE also writes a screenshot of the page.
set -u
top=${PMUCANARY_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${PMUCANARY_BIN:-$top/build/pmucanary}
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chrome" ]; then
	echo "SKIP: html_check: no chromium (apt-get install -y chromium)"
	[ "${PMUCANARY_REQUIRE_CHROMIUM:-0}" = 1 ] && exit 1
	exit 0
fi

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

cat >"$out/probe.html" <<'EOF'
<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<pre id="out">probe did not run</pre>
<iframe id="f" src="report.html" width="1400" height="900"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, w = this.contentWindow, out = [];
  if (!d) { document.getElementById('out').textContent = 'no access to report'; return; }
  out.push('js=' + d.body.getAttribute('data-js'));
  out.push('status=' + d.getElementById('js-status').textContent);
  d.querySelectorAll('td.cell').forEach(function (td) {
    var cs = w.getComputedStyle(td);
    out.push('cell|' + td.className + '|' + cs.backgroundColor + '|' +
             cs.backgroundImage.split('(')[0] + '|' + td.textContent + '|' +
             (td.getAttribute('title') || '').split('\n')[1]);
  });
  var harm = d.querySelector('td.v-harm');
  harm.dispatchEvent(new w.MouseEvent('mouseenter', {bubbles: false}));
  harm.dispatchEvent(new w.MouseEvent('mousemove', {clientX: 50, clientY: 60}));
  var tip = d.getElementById('tip');
  out.push('tip|' + w.getComputedStyle(tip).display + '|' + tip.textContent.split('\n')[0]);
  d.querySelectorAll('li.limitation').forEach(function (li) {
    out.push('limitation|' + li.textContent);
  });
  out.push('elements|script=' + d.querySelectorAll('script').length +
           ' img=' + d.querySelectorAll('img').length +
           ' b=' + d.querySelectorAll('b').length +
           ' i=' + d.querySelectorAll('i').length);
  document.getElementById('out').textContent = out.join('\n');
});
</script>
</body></html>
EOF

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --allow-file-access-from-files --user-data-dir="$tmp/profile")
timeout 120 "$chrome" "${flags[@]}" --virtual-time-budget=5000 --dump-dom \
	"file://$out/probe.html" >"$tmp/dom.html" 2>"$tmp/chrome.log"
if [ -n "${PMUCANARY_HTML_SCREENSHOT:-}" ]; then
	timeout 120 "$chrome" "${flags[@]}" --window-size=1400,1000 \
		--screenshot="$PMUCANARY_HTML_SCREENSHOT" "file://$out/report.html" \
		>/dev/null 2>&1
fi
# The probe's lines, un-escaped from the dumped DOM.
sed -n '/<pre id="out">/,/<\/pre>/p' "$tmp/dom.html" |
	sed -e 's/<pre id="out">//' -e 's/<\/pre>.*//' \
	    -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e 's/&amp;/\&/g' >"$tmp/seen"

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

want "the page's script ran" '^js=ready$'
want "script counted cells" '^status=hover a cell for its evidence; 14 cells, 2 failing, 2 known errata$'
want "unexplained crash is dark red" '^cell\|cell v-harm c-harm o-GUEST_CRASH\|rgb\(183, 28, 28\)\|none\|CRASH!\|outcome GUEST_CRASH \(harm\), k/n 1/3$'
want "known erratum is striped, not red" '^cell\|cell v-known c-harm o-GUEST_CRASH\|[^|]*\|repeating-linear-gradient\|CRASH~\|outcome GUEST_CRASH \(harm\), k/n 3/3$'
want "known corruption is striped" '^cell\|cell v-known c-harm o-GUEST_CORRUPTION\|[^|]*\|repeating-linear-gradient\|CORRUPT~\|'
want "OK is green" '^cell\|cell v-pass c-ok o-OK\|rgb\(200, 230, 201\)\|none\|ok\|outcome OK \(ok\)'
want "errno is amber" '^cell\|cell v-pass c-errno o-ENOENT\|rgb\(255, 243, 196\)\|none\|NOENT\|'
want "INFRA is violet" '^cell\|cell v-infra c-infra o-INFRA\|rgb\(209, 196, 233\)\|none\|infra\?\|outcome INFRA'
want "rejected spec is grey" '^cell\|cell v-rejected c-errno o-EINVAL\|rgb\(238, 238, 238\)\|none\|rej\|'
want "absent cell" '^cell\|cell v-absent\|rgb\(250, 250, 250\)\|none\|-\|'
want "hover shows the tooltip with the cell" '^tip\|block\|kernel 3.6.11, profile perf-3.6, spec cycles:pp$'
want "TCG limitation shown" '^limitation\|limitation: accel is tcg: TCG cannot show'
want "no-PMU limitation shown" '^limitation\|limitation: no hardware PMU on this host'
want "hostile spec shown as text" '^cell\|cell v-harm[^|]*\|[^|]*\|none\|CRASH!\|'
want "hostile limitation shown as text" '^limitation\|limitation: limitation with <script>alert\(5\)</script>$'
want "no element injected" '^elements\|script=1 img=0 b=0 i=0$'
none "no script error reached the probe" '^probe did not run|no access to report'

if [ $fails -ne 0 ]; then
	echo "--- what the probe saw:"; sed 's/^/    /' "$tmp/seen"
	echo "--- chromium log:"; tail -5 "$tmp/chrome.log" | sed 's/^/    /'
fi
echo "$((n - fails)) of $n passed"
[ $fails -eq 0 ]
