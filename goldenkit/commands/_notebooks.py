"""``goldenkit notebooks copy DIR``: copy the bundled notebooks out of the installed package.

A pip user has goldenkit's notebooks (report, compare, audit, coverage,
leaderboard) inside the installed package (``goldenkit.notebooks.bundled``),
where they should not be edited or run. This writes them, without outputs,
into DIR (created when missing) to open in Jupyter or run with papermill
(docs/reports.md gives each notebook's command line and parameters). A file
already in DIR with other content is left alone and named, unless ``--force``;
an identical one is left as it is.

Exit codes: 0 copied · 1 bad input (DIR is a file, a notebook there differs).
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path
from typing import Any

from goldenkit.errors import InfrastructureError, InputError, UsageError

#: The notebooks this copies, in the order ``goldenkit notebooks copy`` lists them.
NAMES = ("report", "compare", "audit", "coverage", "leaderboard")


def register(sub: Any) -> None:
    p = sub.add_parser("notebooks", description=__doc__.split("\n\n")[0] if __doc__ else None)
    nsub = p.add_subparsers(dest="notebooks_command", metavar="SUBCOMMAND", parser_class=type(p))
    copy = nsub.add_parser(
        "copy",
        help="copy the bundled notebooks into a folder",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    copy.add_argument("dir", metavar="DIR", help="folder to copy the notebooks into (created when missing)")
    copy.add_argument("--force", action="store_true", help="overwrite notebooks in DIR that differ")
    copy.set_defaults(func=copy_command)

    def no_subcommand(args: argparse.Namespace) -> int:
        raise UsageError("goldenkit notebooks: choose a subcommand (copy)")

    p.set_defaults(func=no_subcommand)


def bundled_notebook(name: str) -> bytes:
    """The bytes of a bundled notebook: the installed package's copy, else a checkout's ``notebooks/``."""
    packaged = resources.files("goldenkit.notebooks") / "bundled" / f"{name}.ipynb"
    if packaged.is_file():
        return packaged.read_bytes()
    checkout = Path(__file__).resolve().parents[2] / "notebooks" / f"{name}.ipynb"
    if checkout.is_file():
        return checkout.read_bytes()
    raise InfrastructureError(f"goldenkit's {name}.ipynb is missing from the installed package")


def copy_command(args: argparse.Namespace) -> int:
    out = Path(args.dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: not a folder")
    texts = {name: bundled_notebook(name) for name in NAMES}
    clashes = [
        out / f"{n}.ipynb"
        for n, b in texts.items()
        if (out / f"{n}.ipynb").is_file() and (out / f"{n}.ipynb").read_bytes() != b
    ]
    if clashes and not args.force:
        raise InputError(f"{clashes[0]}: exists with other content; pass --force to overwrite it")
    out.mkdir(parents=True, exist_ok=True)
    for name, data in texts.items():
        target = out / f"{name}.ipynb"
        if target.is_file() and target.read_bytes() == data:
            print(f"unchanged {target}")
            continue
        target.write_bytes(data)
        print(f"wrote {target}")
    print(f"run one with papermill, e.g.: papermill {out / 'report.ipynb'} report-run.ipynb -p run results/latest")
    return 0
