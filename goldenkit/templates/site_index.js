(function () {
  var table = document.getElementById('runs');
  if (!table) { return; }
  var body = table.tBodies[0];
  var text = document.getElementById('filter');
  var state = document.getElementById('state');
  var dataset = document.getElementById('dataset');
  var shown = document.getElementById('shown');
  function apply() {
    var q = text.value.toLowerCase(), s = state.value, d = dataset.value, n = 0;
    Array.prototype.forEach.call(body.rows, function (r) {
      var ok = (!q || r.textContent.toLowerCase().indexOf(q) >= 0) &&
        (!s || r.getAttribute('data-state') === s) && (!d || r.getAttribute('data-dataset') === d);
      r.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = String(n);
  }
  function key(row, i) {
    var c = row.cells[i];
    return c ? (c.hasAttribute('data-sort') ? c.getAttribute('data-sort') : c.textContent) : '';
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    th.addEventListener('click', function () {
      var asc = th.getAttribute('aria-sort') !== 'ascending';
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (o) { o.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a, i).trim(), y = key(b, i).trim(), nx = Number(x), ny = Number(y), r;
        x = x === 'n/a' ? '' : x; y = y === 'n/a' ? '' : y;  // a missing figure reads n/a; sorted as a blank
        if (x === '' || y === '') { return (x === '') - (y === ''); }  // blanks last, either way
        r = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? r : -r;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  text.addEventListener('input', apply);
  state.addEventListener('change', apply);
  dataset.addEventListener('change', apply);
  apply();
})();
