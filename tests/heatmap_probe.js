/* Helpers for probe pages that read the heatmap page (lib/report/heatmap.c) as a
 * browser draws it; used by tests/html_check.sh and cli_matrix_scale.sh. */

/* "cpu|kernel|profile|event|class" of a tile, read from the headers. */
function tileName(td) {
  var tr = td.parentNode, table = tr.closest('table'), head = table.tHead.rows;
  var col = td.cellIndex, ev = '', at = 0;
  for (var i = 0; i < head[0].cells.length; i++) {
    var th = head[0].cells[i];
    if (col >= at && col < at + th.colSpan) { ev = th.textContent; break; }
    at += th.colSpan;
  }
  return [table.getAttribute('data-cpu'), tr.cells[0].textContent, tr.cells[1].textContent, ev,
          head[1].cells[col].textContent].join('|');
}

function findTile(d, cpu, kernel, profile, event, cls) {
  var want = [cpu, kernel, profile, event, cls].join('|'), tds = d.querySelectorAll('td.tile');
  for (var i = 0; i < tds.length; i++) if (tileName(tds[i]) === want) return tds[i];
  return null;
}

/* The open drill-down: "cell|SPEC|OUTCOME" then "KIND|TEXT" per line. */
function drillLines(d, spec) {
  var out = [];
  d.querySelectorAll('#drill div.cell').forEach(function (c) {
    if (spec && c.getAttribute('data-spec') !== spec) return;
    out.push('cell|' + c.querySelector('.spec').textContent + '|' + c.querySelector('.chip').textContent);
    c.querySelectorAll('div.line').forEach(function (l) {
      out.push(l.className.replace(/^line /, '') + '|' + l.textContent);
    });
  });
  return out;
}
