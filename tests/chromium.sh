# tests/chromium.sh — sourced helper for the suites that load the HTML
# heatmap in headless Chromium (html_check.sh, cli_matrix_scale.sh): find
# the browser, run it on a probe page, read back what the probe printed.
#
# Usage:
#   . "$top/tests/chromium.sh"
#   chromium_require "NAME: " SKIP_RC     # sets $chrome, or SKIP and exit
#   chromium_flags "$tmp/profile"         # sets the array chromium_flags
#   chromium_dump_dom BUDGET_MS URL DOM LOG
#   chromium_probe_head                   # the top of a probe page (stdout)
#   chromium_probe_lines DOM SEEN         # the probe's <pre id="out"> lines

# Without a browser: "SKIP: PREFIXno chromium ..." and exit SKIP_RC, or 1
# when CI demands the browser (PMUCANARY_REQUIRE_CHROMIUM=1).
chromium_require() {
	chrome=$(command -v chromium || command -v chromium-browser ||
		 command -v google-chrome || true)
	[ -n "$chrome" ] && return 0
	echo "SKIP: ${1}no chromium (apt-get install -y chromium)"
	[ "${PMUCANARY_REQUIRE_CHROMIUM:-0}" = 1 ] && exit 1
	exit "$2"
}

# A throw-away profile and nothing that reaches the network; file:// pages
# may read their neighbours (the probe page loads the report in an iframe).
chromium_flags() {
	chromium_flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
		--disable-background-networking --disable-component-update --disable-sync
		--allow-file-access-from-files --user-data-dir="$1")
}

chromium_dump_dom() {
	timeout 120 "$chrome" "${chromium_flags[@]}" --virtual-time-budget="$1" --dump-dom \
		"$2" >"$3" 2>"$4"
}

# A probe page: report.html (same directory) in an iframe, the probe
# helpers of tests/heatmap_probe.js; the caller's <script> follows.
chromium_probe_head() {
	cat <<EOF
<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<pre id="out">probe did not run</pre>
<iframe id="f" src="report.html" width="1400" height="900"></iframe>
<script>$(cat "$top/tests/heatmap_probe.js")</script>
EOF
}

# The probe's lines, un-escaped from the dumped DOM.
chromium_probe_lines() {
	sed -n '/<pre id="out">/,/<\/pre>/p' "$1" |
		sed -e 's/<pre id="out">//' -e 's/<\/pre>.*//' \
		    -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e 's/&amp;/\&/g' >"$2"
}
