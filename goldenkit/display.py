"""HTML pieces shared by everything that displays evidence (the report and the audit).

:class:`HTMLBlock` is a ``str`` that Jupyter renders as HTML; :data:`STYLE` is
the stylesheet each piece carries, so it looks the same in Jupyter and in the
exported page. Build an HTMLBlock only from escaped text.
"""

from __future__ import annotations

# Styles of the HTML pieces goldenkit builds; each piece carries them, so they look the same in
# Jupyter and in the exported page (where the notebook CSS would otherwise right-align cells).
STYLE = """<style>
.gk-side-by-side { border-collapse: collapse; width: 100%; table-layout: fixed; }
.gk-side-by-side th, .gk-side-by-side td { border: 1px solid #ccc !important; padding: 4px 6px !important;
  vertical-align: top !important; text-align: left !important; }
.gk-side-by-side pre { white-space: pre-wrap !important; word-break: break-word; margin: 2px 0 !important;
  font-size: 12px; background: transparent !important; text-align: left !important; }
.gk-status-NEW_FAILURE td { background: #fde2e1 !important; }
.gk-status-RECOVERED td { background: #e3f6e5 !important; }
.gk-status-NEW_ERROR td, .gk-status-ERROR_CLEARED td { background: #fff3cd !important; }
.gk-banner { padding: 6px 10px; border-radius: 4px; font-weight: bold; }
.gk-banner-ok { background: #e3f6e5; }
.gk-banner-bad { background: #fde2e1; }
.gk-card { margin: 0 0 14px 0; }
</style>"""


class HTMLBlock(str):
    """A piece of HTML that Jupyter displays rendered (and ``str`` everywhere else).

    Build it only from escaped text: every function here that returns one runs
    :func:`html.escape` over model output and dataset text.
    """

    def _repr_html_(self) -> str:
        return str(self)


__all__ = ["STYLE", "HTMLBlock"]
