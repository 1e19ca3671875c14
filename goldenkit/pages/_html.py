"""The HTML of the site: its pages are autoescaped Jinja2 templates (goldenkit/templates/site_*.html.j2).

Every value a page shows is text escaped by the templates' environment (:func:`goldenkit._display.templates`),
attributes included: run ids, model names, notes and model output are never markup. Each page carries a
Content-Security-Policy that forbids any fetch (``default-src 'none'``; inline style and script, ``data:``
images): a page of this site loads nothing, from file:// or from any static host.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from goldenkit._display import STYLE, templates
from goldenkit._files import write_atomic
from goldenkit._scrub import scrub

__all__ = ["CSP", "href", "page", "render", "slug", "write_page"]

CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


def write_page(path: Path, text: str) -> None:
    """Write one file of the site whole or not at all (:func:`goldenkit._files.write_atomic`), secrets masked
    (:func:`goldenkit._scrub.scrub`): every page the site builds, and its state file, go through here."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, scrub(text))


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


def render(template: str, **values: Any) -> str:
    """A page of the site: ``template`` (one of goldenkit/templates/site_*.html.j2, each extending the shell
    site_page.html.j2) with ``values``, the CSP and the stylesheet."""
    from markupsafe import Markup

    return templates().get_template(template).render(csp=Markup(CSP), style=Markup(STYLE), **values)


def page(title: str, body: str, *, site_title: str, root: str = "") -> str:
    """A page whose body was built elsewhere (a run's report) in the site's shell: ``title`` and ``site_title``
    are text, ``body`` markup; ``root`` is the relative way back to the site's top."""
    from markupsafe import Markup

    return render("site_page.html.j2", title=title, body=Markup(body), site_title=site_title, root=root)
