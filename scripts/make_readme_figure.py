"""Draw the README's picture: the forest plot of the demo's compare report, as an SVG file.

Runs the demo pipeline (no HTML) into a temporary folder, compares the two
recorded agents and saves :func:`goldenkit.report.forest_figure` -- the same
figure compare.html shows -- to ``docs/compare-forest.svg``:

    python scripts/make_readme_figure.py [--out docs/compare-forest.svg]

Run from the repository root (the dataset path is relative to it).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from goldenkit.demo._story import DEFAULT_DATASET, run_demo
from goldenkit.report import forest_figure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default=DEFAULT_DATASET)
    parser.add_argument("--out", default="docs/compare-forest.svg")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = run_demo(args.dataset, tmp, html=False)
        fig = forest_figure(result.comparison)
        if isinstance(fig, str):  # an HTML note instead of a figure: the comparison was invalid
            raise SystemExit(f"no figure: {fig}")
        markup = fig._repr_html_()
    svg = markup[markup.index("<svg ") : markup.rindex("</svg>") + len("</svg>")] + "\n"  # the figure's own SVG
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(svg, encoding="utf-8")
    print(f"wrote {out} ({len(svg)} characters)")


if __name__ == "__main__":
    main()
