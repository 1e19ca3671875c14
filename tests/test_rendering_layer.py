"""One rendering layer: one formatting module (goldenkit._display) and one stylesheet for the report, the pages
and the notebooks, its site rules scoped so a notebook's output never restyles JupyterLab."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pandas as pd
import pytest

import goldenkit
from goldenkit._display import MISSING, STYLE, STYLESHEET, interval, money, number, p_value, pct, signed_pct
from goldenkit.pages._html import page

PACKAGE = Path(goldenkit.__file__).resolve().parent


@pytest.mark.parametrize("value", [None, math.nan, pd.NA, float("nan"), "text"])
def test_a_missing_figure_reads_the_same_in_every_formatter(value: object) -> None:
    shown = {pct(value), signed_pct(value), p_value(value), number(value), money(value), interval(value, 0.5)}
    assert shown == {MISSING} == {"n/a"}


def test_the_formatters_figures() -> None:
    assert (pct(0.8812), pct(0.8812, unit=""), pct(-0.05, unit=" pp", signed=True)) == ("88.1%", "88.1", "-5.0 pp")
    assert interval(-0.01, 0.03, signed=True) == "[-1.0 pp, +3.0 pp]"
    assert interval(0.1, 0.2, unit="") == "[10.0, 20.0]"
    assert (p_value(0.04999), p_value(2e-5), p_value(0.0391, significant=2)) == ("0.0500", "2.0e-05", "0.039")
    assert (money(0), money(0.00004), money(0.5), money(1234.5)) == ("$0.0000", "under $0.0001", "$0.5000", "$1,234.50")
    assert number(1, 3) == "1.000"


def _selectors(css: str) -> list[str]:
    body = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    return [s.strip() for block in re.findall(r"([^{}]+)\{[^{}]*\}", body) for s in block.split(",")]


def test_one_stylesheet_whose_every_rule_is_goldenkits_own() -> None:
    """Every selector names a gk- class or sits under the site's body class, so the stylesheet each piece of a
    notebook carries styles nothing of JupyterLab's; the site's pages carry the same file."""
    css = STYLESHEET.read_text(encoding="utf-8")
    selectors = _selectors(css)
    assert len(selectors) > 40
    foreign = [s for s in selectors if not (s.startswith(".gk-") or s.startswith("body.gk-site"))]
    assert foreign == []
    assert css in STYLE
    shell = page("t", "<p>x</p>", site_title="s")
    assert STYLE in shell and '<body class="gk-site">' in shell and shell.count("<style>") == 1


def test_no_module_declares_a_stylesheet_or_a_formatter_of_its_own() -> None:
    """The formatting rules live in goldenkit._display: no other module defines pct, p_value, money or a
    <style> block of its own."""
    names = {"pct", "_pct", "p_value", "_p", "pval", "fmt_p", "_fmt", "_usd", "_money_fmt", "signed_pct", "interval"}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "_display.py":
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{rel}: <style>" for _ in re.findall(r"<style[ >]", text)]
        tree = ast.parse(text)
        found += [  # a formatter returns text (a parser of prices or a Comparison's p_value returns a number)
            f"{rel}: def {n.name}"
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef)
            and n.name in names
            and n.returns is not None
            and ast.unparse(n.returns) == "str"
        ]
    assert found == []
