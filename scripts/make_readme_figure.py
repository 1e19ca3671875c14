"""Draw the README's picture: the forest plot of the demo's compare report, as a PNG.

Runs the demo pipeline (no HTML) into a temporary folder, compares the two
recorded agents and saves :func:`goldenkit.report.forest_figure` -- the same
figure compare.html shows -- to ``docs/compare-forest.png``:

    python scripts/make_readme_figure.py [--out docs/compare-forest.png]

Run from the repository root (the dataset path is relative to it).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from goldenkit.demo._story import DEFAULT_DATASET, run_demo
from goldenkit.report import figure_png, forest_figure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default=DEFAULT_DATASET)
    parser.add_argument("--out", default="docs/compare-forest.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = run_demo(args.dataset, tmp, html=False)
        fig = forest_figure(result.comparison)
        if isinstance(fig, str):  # an HTML note instead of a figure: the comparison was invalid
            raise SystemExit(f"no figure: {fig}")
        png = figure_png(fig)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(png)
    print(f"wrote {out} ({len(png)} bytes)")


if __name__ == "__main__":
    main()
