"""``goldenkit pages -o site/``: the static site of every run, its reports and the history per dataset.

Writes ``index.html`` (every run and baseline, sortable and filterable in the
page), ``runs/<run>/report.html`` and ``compare.html`` (copied from the run
folder when up to date, else made by the report functions the notebooks of
``goldenkit report`` call, without a kernel or a notebook; ``--no-render`` skips it),
``datasets/<name>.html`` (trend plots per slice with Wilson bands, dataset
version changes marked) and ``baselines.html``. Re-running reuses every page
whose inputs did not change. Nothing on any page loads from the network.

Exit 0 when every page was written; 3 when a report could not be rendered (the
rest of the site is written and the index says which).
"""

from __future__ import annotations

import argparse
from typing import Any

from goldenkit.errors import EXIT_INFRASTRUCTURE


def register(sub: Any) -> None:
    p = sub.add_parser(
        "pages",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-o", "--output", default="site", metavar="DIR", help="the site folder (default: site)")
    p.add_argument("--results-dir", default="results", help="where the run folders are (default: results)")
    p.add_argument("--baselines-dir", default="baselines", help="where the baselines are (default: baselines)")
    p.add_argument("--title", default="goldenkit", help="the site's title")
    p.add_argument("--no-render", dest="render", action="store_false", help="copy existing reports only")
    p.add_argument("--rule", default="majority", help="repeat collapse rule (majority, all, any, at_least:K)")
    p.set_defaults(func=cmd_pages)


def cmd_pages(args: argparse.Namespace) -> int:
    from goldenkit.pages import build_site

    result = build_site(
        args.output,
        args.results_dir,
        args.baselines_dir,
        title=args.title,
        render=args.render,
        rule=args.rule,
        processes=None,  # this command is its own __main__: one worker per core for a large build
    )
    print(
        f"wrote {result.index}: {len(result.rendered)} pages rendered, {len(result.copied)} copied, "
        f"{len(result.reused)} reused"
    )
    for failure in result.failures:
        print(f"goldenkit pages: could not render {failure}")
    return EXIT_INFRASTRUCTURE if result.failures else 0
