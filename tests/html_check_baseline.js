<script>
/* html_check.sh's probe of a report written with --baseline: each tile's
 * class and outline (the regression frame), the findings, the status. */
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, w = this.contentWindow, out = [];
  if (!d) { document.getElementById('out').textContent = 'no access to report'; return; }
  out.push('status=' + d.getElementById('js-status').textContent);
  d.querySelectorAll('td.tile').forEach(function (td) {
    var cs = w.getComputedStyle(td);
    out.push('tile|' + tileName(td) + '|' + td.className + '|' + cs.outlineStyle + ' ' +
             cs.outlineColor + '|' + td.textContent);
  });
  d.querySelectorAll('#findings li').forEach(function (li) {
    out.push('finding|' + li.className + '|' + li.textContent);
  });
  document.getElementById('out').textContent = out.join('\n');
});
</script>
</body></html>
