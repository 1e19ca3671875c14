"""``goldenkit query "SQL" [--json | --csv]``: one SQL statement over every run.

The views (DuckDB, in memory, no server): ``runs`` (one row per run folder and
committed baseline), ``outcomes`` (every outcome of every run, Parquet read in
place) and ``baseline_history`` (baselines/history.jsonl); their columns are in
docs/history.md. Prints a text table, or JSON (one array of objects, NaN as
null) or CSV. A bad statement is exit 1 with DuckDB's message.

    goldenkit query "SELECT run_id, pass_rate, ci_low FROM runs WHERE state = 'ok' ORDER BY started_at"
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def register(sub: Any) -> None:
    p = sub.add_parser(
        "query",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("sql", metavar="SQL", help="one SQL statement (DuckDB dialect)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print a JSON array of objects")
    fmt.add_argument("--csv", action="store_true", help="print CSV")
    p.add_argument("--results-dir", default="results", help="where the run folders are (default: results)")
    p.add_argument("--baselines-dir", default="baselines", help="where the baselines are (default: baselines)")
    p.add_argument("--rule", default="majority", help="repeat collapse rule of the runs view's pass rates")
    p.set_defaults(func=cmd_query)


def _jsonable(df: pd.DataFrame) -> list[dict[str, Any]]:
    text = df.to_json(orient="records", date_format="iso", default_handler=str)
    return list(json.loads(text))


def cmd_query(args: argparse.Namespace) -> int:
    import pandas as pd

    from goldenkit.history import query

    df = query(args.sql, args.results_dir, args.baselines_dir, rule=args.rule)
    if args.json:
        json.dump(_jsonable(df), sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    elif args.csv:
        df.to_csv(sys.stdout, index=False)
    else:
        with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
            print(df.to_string(index=False) if len(df.columns) else "(no columns)")
    return 0
