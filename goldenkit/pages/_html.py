"""The HTML of the site: one page shell, tables, and the index's inline script.

Every value that reaches a page goes through :func:`esc` (``html.escape`` with
quotes), attributes included: run ids, model names, notes and model output are
text, never markup. Each page carries a Content-Security-Policy that forbids
any fetch (``default-src 'none'``; inline style and script, ``data:`` images):
a page of this site loads nothing, from file:// or from any static host.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from goldenkit._display import STYLE, STYLESHEET
from goldenkit._scrub import scrub

if TYPE_CHECKING:
    from jinja2 import Template

__all__ = ["CSP", "esc", "href", "page", "slug", "table", "write_page"]

CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


def write_page(path: Path, text: str) -> None:
    """Write one file of the site atomically (a temporary file, then ``os.replace``), secrets masked
    (:func:`goldenkit._scrub.scrub`): every page the site builds, and its state file, go through here."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(scrub(text), encoding="utf-8")
    os.replace(tmp, path)


def esc(value: Any) -> str:
    """``value`` as HTML text (quotes escaped too); None and NaN become an empty string."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    try:
        if value != value:  # pandas NA / NaT
            return ""
    except (TypeError, ValueError):
        pass
    return html.escape(str(value), quote=True)


def href(*parts: str) -> str:
    """A relative URL from path parts, each percent-encoded (works from file:// and any host)."""
    return "/".join(quote(p, safe="") for p in parts)


def slug(name: str) -> str:
    """A file-name-safe form of ``name``: itself when already safe, else its safe letters and a short hash."""
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name) or "_"
    if safe == name and not name.startswith("."):
        return safe
    digest = hashlib.sha256(json.dumps(name).encode()).hexdigest()[:6]
    return f"{safe.lstrip('.')}-{digest}"


@functools.cache
def _shell() -> Template:
    """The page shell's template (goldenkit/templates/gk_page.html.j2), autoescaped, loaded once."""
    from jinja2 import Environment, FileSystemLoader

    env = Environment(loader=FileSystemLoader(STYLESHEET.parent), autoescape=True, keep_trailing_newline=True)
    return env.get_template("gk_page.html.j2")


def page(title: str, body: str, *, site_title: str, root: str = "", script: str = "") -> str:
    """A whole page: the shell with navigation (``root`` is the relative way back to the site's top); ``title``
    and ``site_title`` are text (escaped by the template), ``body`` and ``script`` markup the site built."""
    from markupsafe import Markup

    return _shell().render(
        csp=Markup(CSP),
        title=title,
        site_title=site_title,
        root=root,
        style=Markup(STYLE),
        body=Markup(body),
        script=Markup(script),
    )


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    table_id: str | None = None,
    numeric: Sequence[int] = (),
    row_attrs: Iterable[str] | None = None,
) -> str:
    """A table whose cells are **already HTML** (escape values with :func:`esc` first)."""
    ident = f' id="{esc(table_id)}"' if table_id else ""
    head = "".join(f'<th class="sortable">{esc(h)}</th>' if table_id else f"<th>{esc(h)}</th>" for h in headers)
    attrs = iter(row_attrs) if row_attrs is not None else None
    body = []
    for cells in rows:
        extra = next(attrs) if attrs is not None else ""
        tds = "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(cells))
        body.append(f"<tr{extra}>{tds}</tr>")
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


#: The index page's script: filter by text, state and dataset; sort by a header click (``data-sort`` values).
INDEX_SCRIPT = """
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
"""
