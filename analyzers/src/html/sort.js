// kgap's one script, progressive: it turns the headers of every table.sortable into buttons
// that sort its rows by that column (a second click reverses). A cell sorts by its data-sort,
// the raw number the page was made from (4670000 for "4.67M msg/s"), when it has one, else
// by its text with runs of digits compared as numbers. Cells with no number sort after those
// with one, either way. Without this script the page reads the same, in the order it was made.
(function () {
  'use strict';
  function key(row, col) {
    var cell = row.cells[col];
    if (!cell) return '';
    var raw = cell.getAttribute('data-sort');
    if (raw !== null && raw.trim() !== '' && isFinite(Number(raw))) return Number(raw);
    return cell.textContent.trim();
  }
  function compare(a, b, ascending) {
    var an = typeof a === 'number', bn = typeof b === 'number';
    if (an !== bn) return an ? -1 : 1;
    var d = an ? a - b : a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' });
    return ascending ? d : -d;
  }
  function sortBy(table, th, col) {
    var ascending = th.getAttribute('aria-sort') !== 'ascending';
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
      h.removeAttribute('aria-sort');
    });
    th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) { return compare(key(a, col), key(b, col), ascending); });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    if (!table.tHead || !table.tBodies.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      var button = document.createElement('button');
      button.type = 'button';
      button.className = 'sort';
      button.title = 'sort by this column';
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener('click', function () { sortBy(table, th, col); });
    });
  });
})();
