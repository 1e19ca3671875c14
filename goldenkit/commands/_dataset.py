"""``goldenkit dataset ...``: validate, hash, describe, sample and import datasets.

* ``validate PATH``: check every row and normalize every case in one pass;
  prints a one-line summary, or every problem of every row (up to 50; row and
  case problems together, each naming file:line and the row id) and exits 1;
  a second line counts and names the rows that carry images.
* ``hash PATH``: the canonical SHA-256 alone.
* ``info PATH [--json]``: name, version, hash, rows by slice x split, tags, sources.
* ``sample PATH --per-slice N --seed S [--split dev|holdout] [-o OUT.jsonl]``: the
  stratified sample; prints the chosen ids one a line, or writes the chosen rows'
  original lines to OUT.jsonl.
* ``import SRC -o DIR --format FMT [--slice FIELD_OR_NAME] [--split] [--source]``:
  turn a foreign eval file into a dataset folder (see goldenkit.formats);
  ``--criteria FILE`` (adk) reads an ADK eval config in place of test_config.json.
* ``generate DATASET --agent-config FILE --count N --model M [--provider openai|ollama|callable]``:
  ask a model for N conversation scenarios from an agent's config and write the new
  ones as a new dataset version in a new folder (see goldenkit.scenarios._generate).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, cast

from goldenkit.commands._agent import grader_list
from goldenkit.commands._args import SECONDS, TEMPERATURE
from goldenkit.dataset import Dataset, read_dataset, red_row_ids, validate_dataset, without_red
from goldenkit.errors import DatasetError, GoldenkitError, InputError, UsageError
from goldenkit.records import Case
from goldenkit.schema import SPLITS

IMPORT_FORMATS = ("adk", "vertex", "golden", "openai-evals", "inspect")


def register(subparsers: Any) -> None:
    """Add the ``dataset`` command group."""
    group = subparsers.add_parser("dataset")
    group.set_defaults(func=lambda args: _help(group))
    sub = group.add_subparsers(dest="dataset_command", metavar="SUBCOMMAND", parser_class=type(group))

    p = sub.add_parser("validate", help="check every row and case; list every problem")
    p.add_argument("path", metavar="PATH", help="dataset folder or .jsonl file")
    _grader_options(p)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("hash", help="print the canonical SHA-256 of the dataset")
    p.add_argument("path", metavar="PATH", help="dataset folder or .jsonl file")
    p.set_defaults(func=cmd_hash)

    p = sub.add_parser("info", help="name, version, hash, rows by slice x split, tags, sources")
    p.add_argument("path", metavar="PATH", help="dataset folder or .jsonl file")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("sample", help="stratified, seeded sample of rows")
    p.add_argument("path", metavar="PATH", help="dataset folder or .jsonl file")
    p.add_argument("--per-slice", type=_positive_int, required=True, metavar="N", help="rows per slice (at most)")
    p.add_argument("--seed", type=_int, required=True, metavar="S", help="sampling seed (e.g. a weekly seed)")
    p.add_argument("--split", choices=SPLITS, help="sample only this split")
    p.add_argument("--red", action="store_true", help="sample the red rows too (left out by default, as in a run)")
    p.add_argument("-o", "--output", metavar="OUT.jsonl", help="write the chosen rows' original lines here")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("import", help="turn a foreign eval file into a goldenkit dataset folder")
    p.add_argument("src", metavar="SRC", help="the file (or folder) to import")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="dataset folder to write")
    p.add_argument("--format", required=True, choices=IMPORT_FORMATS, help="format of SRC")
    p.add_argument("--slice", metavar="FIELD_OR_NAME", help="field holding each row's slice, or a slice name")
    p.add_argument("--split", choices=SPLITS, help="split of every imported row (default dev)")
    p.add_argument("--source", metavar="NAME", help="provenance written to every row (default: the file name)")
    p.add_argument("--name", help="dataset name (default: from the source)")
    p.add_argument("--force", action="store_true", help="overwrite a dataset already in DIR")
    p.add_argument(
        "--criteria",
        metavar="FILE",
        help="adk: an ADK eval config (criteria and thresholds) in place of a test_config.json beside each file",
    )
    p.add_argument(
        "--ignore-criteria",
        metavar="NAME[,NAME]",
        help="criteria of --criteria that goldenkit cannot grade, left ungraded on purpose (else an error)",
    )
    _grader_options(p)
    p.set_defaults(func=cmd_import)

    _register_generate(sub)


GENERATE_PROVIDERS = ("openai", "ollama", "callable")


def _register_generate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("generate", help="generate conversation scenarios into a new dataset version")
    p.add_argument("path", metavar="DATASET", help="dataset folder (dataset.jsonl + dataset.json)")
    p.add_argument(
        "--agent-config", required=True, metavar="FILE", help="agent config: .toml/.json, ADK .yaml, agent module"
    )
    p.add_argument("--count", type=_positive_int, required=True, metavar="N", help="scenarios to ask for")
    p.add_argument("--model", metavar="M", help="model id (named in each row's source and the changelog)")
    p.add_argument("--provider", choices=GENERATE_PROVIDERS, default="openai", help="how to ask (default openai)")
    p.add_argument("--base-url", metavar="URL", help="the server's URL (openai: .../v1; ollama: its host)")
    p.add_argument("--api-key-env", metavar="NAME", help="environment variable holding the API key")
    p.add_argument("--generator-callable", metavar="MOD:FN", help="with --provider callable: fn(config, count, seed)")
    p.add_argument("--slice", metavar="S", help="every scenario in this slice (default: the model chooses)")
    p.add_argument(
        "--model-seed", dest="seed", type=_int, metavar="S", help="seed sent to the model (attempt k sends S + k)"
    )
    p.add_argument("--temperature", type=TEMPERATURE, help="sampling temperature")
    p.add_argument("--max-tokens", type=_positive_int, metavar="N", help="cap on the reply's tokens")
    p.add_argument("--timeout", type=SECONDS, default=300.0, help="seconds per model call (default 300)")
    p.add_argument(
        "--attempts", type=_positive_int, default=3, metavar="N", help="asks before malformed output fails (default 3)"
    )
    p.add_argument("--version", metavar="V", help="the new version (default: the next one)")
    p.add_argument(
        "-o",
        "--output",
        "--out",
        dest="out",
        metavar="DIR",
        help="folder of the new version (default: DATASET-VERSION beside it)",
    )
    p.set_defaults(func=cmd_generate)


def _grader_options(p: argparse.ArgumentParser) -> None:
    """--config / --graders: the graders whose checks the rows are counted against (as goldenkit run)."""
    p.add_argument(
        "--config", help="goldenkit.toml whose [graders] count as configured (default: beside the dataset, then here)"
    )
    p.add_argument("--graders", help="comma-separated grader names (overrides [graders] use)")


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 1


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def _positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


# --------------------------------------------------------------------------- handlers


def cmd_validate(args: argparse.Namespace) -> int:
    """Check every row and case in one pass; print every problem found (a single one as one line)."""
    found = validate_dataset(args.path)
    ds, problems, red = found.dataset, list(found.problems), 0
    if ds is not None:
        try:
            red = len(red_row_ids(ds))  # dataset.json red_rows naming no row is a problem too
        except DatasetError as exc:
            problems.append(str(exc))
    if len(problems) == 1:
        print(f"goldenkit: {problems[0]}", file=sys.stderr)
        return 1
    if problems or ds is None:
        _print_problems(problems[:50], len(problems))
        return 1
    cases = found.cases
    with_images = {rid: len(case.images) for rid, case in cases.items() if case.images}
    version = f" {ds.version}" if ds.version else ""
    reds = f", {red} red row{'s' if red != 1 else ''} (run only with --red)" if red else ""
    print(f"ok: {ds.name}{version}: {len(ds)} rows, {ds.rows['slice'].nunique()} slices{reds}, sha256 {ds.sha256}")
    if with_images:
        print(images_line(with_images))
    _report_gradable(args, ds, cases)
    return 0


def _report_gradable(args: argparse.Namespace, ds: Dataset, cases: dict[str, Case]) -> None:
    """Count and name the rows no configured grader can check, and those only soft graders check.

    Printed on stdout, only when there are such rows (see goldenkit.graders._gradable); the
    exit code stays 0 (``goldenkit run`` is what refuses them).
    Graders that cannot be built here (a judge whose key is not set) are said on stderr.
    """
    from goldenkit.config import load_config
    from goldenkit.graders import describe, describe_soft_only, gradability

    try:
        cfg = load_config(getattr(args, "config", None), dataset_dir=ds.path)
        graders = grader_list(args, cfg)
    except GoldenkitError as exc:
        print(f"goldenkit: note: rows not checked against the graders: {exc}", file=sys.stderr)
        return
    report = gradability(graders, cases)
    for line in (describe(report), describe_soft_only(report)):
        if line is not None:
            print(f"warning: {line}")


def images_line(with_images: dict[str, int], limit: int = 20) -> str:
    """``images: N rows carry M images: "a", "b", ...`` (what ``validate`` prints after its ok line)."""
    ids = list(with_images)
    named = ", ".join(f'"{rid}"' for rid in ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
    total = sum(with_images.values())
    rows = f"{len(ids)} row{'s' if len(ids) != 1 else ''}"
    return (
        f"images: {rows} carr{'y' if len(ids) != 1 else 'ies'} {total} image{'s' if total != 1 else ''}: {named} "
        "(goldenkit run sends them, or refuses these rows when the provider or model cannot take images)"
    )


def _print_problems(problems: list[str], count: int) -> None:
    for line in problems:
        print(f"goldenkit: {line}", file=sys.stderr)
    if count > len(problems):
        print(f"goldenkit: ... and {count - len(problems)} more problems", file=sys.stderr)
    print(f"goldenkit: {count} problem{'s' if count != 1 else ''} found", file=sys.stderr)


def cmd_hash(args: argparse.Namespace) -> int:
    print(read_dataset(args.path).sha256)
    return 0


def dataset_info(ds: Dataset) -> dict[str, Any]:
    """The summary ``goldenkit dataset info`` prints, as a JSON-ready dict."""
    import pandas as pd

    rows = ds.rows
    table = pd.crosstab(rows["slice"], rows["split"]).reindex(columns=list(SPLITS), fill_value=0)
    slices = {
        str(name): {**{s: int(r[s]) for s in SPLITS}, "total": int(r.sum())}
        for name, r in table.sort_index().iterrows()
    }
    tags = Counter(t for ts in rows["tags"] for t in ts)
    sources = Counter(s for s in rows["source"].tolist() if isinstance(s, str))
    no_source = int(rows["source"].isna().sum())
    return {
        "name": ds.name,
        "version": ds.version,
        "sha256": ds.sha256,
        "path": str(ds.path),
        "case_format": ds.case_format,
        "rows": len(rows),
        "splits": {s: int((rows["split"] == s).sum()) for s in SPLITS},
        "slices": slices,
        "tags": dict(sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))),
        "sources": dict(sorted(sources.items(), key=lambda kv: (-kv[1], kv[0]))),
        "rows_without_source": no_source,
    }


def cmd_info(args: argparse.Namespace) -> int:
    info = dataset_info(read_dataset(args.path))
    if args.json:
        print(json.dumps(info, indent=2, ensure_ascii=False))
        return 0
    print(f"name     {info['name']}")
    print(f"version  {info['version'] if info['version'] is not None else '(none)'}")
    print(f"sha256   {info['sha256']}")
    print(f"path     {info['path']}")
    split_text = ", ".join(f"{s} {n}" for s, n in info["splits"].items())
    print(f"rows     {info['rows']} ({split_text})")
    print()
    width = max([len("slice"), len("total")] + [len(s) for s in info["slices"]])
    header = f"{'slice':<{width}}  " + "  ".join(f"{s:>7}" for s in (*SPLITS, "total"))
    print(header)
    print("-" * len(header))
    for name, counts in info["slices"].items():
        print(f"{name:<{width}}  " + "  ".join(f"{counts[s]:>7}" for s in (*SPLITS, "total")))
    print("-" * len(header))
    totals = [*(info["splits"][s] for s in SPLITS), info["rows"]]
    print(f"{'total':<{width}}  " + "  ".join(f"{n:>7}" for n in totals))
    print()
    tags = ", ".join(f"{t} {n}" for t, n in info["tags"].items()) or "(none)"
    print(f"tags     {tags}")
    sources = ", ".join(f"{s} {n}" for s, n in info["sources"].items()) or "(none)"
    if info["rows_without_source"]:
        sources += f" (no source: {info['rows_without_source']})"
    print(f"sources  {sources}")
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    from goldenkit.sampling import stratified_sample

    ds = read_dataset(args.path)  # the rows `goldenkit run --per-slice` would choose: red rows only with --red
    pool = ds if args.red else cast(Dataset, without_red(ds))
    chosen = stratified_sample(pool, args.per_slice, args.seed, split=args.split)
    if args.output is None:
        sys.stdout.write("".join(f"{rid}\n" for rid in chosen.ids))
        return 0
    out = Path(args.output)
    try:
        with out.open("wb") as fh:
            for rid in chosen.ids:
                fh.write(chosen.raw_line(rid) + b"\n")
    except OSError as exc:
        raise InputError(f"{out}: cannot write: {exc.strerror or exc}") from None
    print(f"wrote {len(chosen)} rows to {out}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from goldenkit.commands._run import read_criteria
    from goldenkit.formats import import_dataset

    criteria = read_criteria(args.criteria, args.ignore_criteria, "dataset import")
    out = import_dataset(
        args.src,
        args.output,
        args.format,
        slice=args.slice,
        split=args.split,
        source=args.source,
        name=args.name,
        overwrite=args.force,
        criteria=criteria,
    )
    ds = read_dataset(out)
    print(f"imported {len(ds)} rows into {out} (sha256 {ds.sha256})")
    _report_gradable(args, ds, {rid: ds.case(rid) for rid in ds.ids})
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from goldenkit.scenarios import Generator, ModelGenerator, generate_scenarios

    generator: Generator
    if args.provider == "callable":
        from goldenkit.providers import load_callable

        if not args.generator_callable:
            raise UsageError("dataset generate --provider callable needs --generator-callable MOD:FN")
        generator = load_callable(args.generator_callable)
        model = args.model or "callable"
    else:
        if args.generator_callable:
            raise UsageError("--generator-callable goes with --provider callable")
        if not args.model:
            raise UsageError(f"dataset generate --provider {args.provider} needs --model")
        model = args.model
        generator = ModelGenerator(
            args.provider,
            slice_=args.slice,
            model=model,
            base_url=args.base_url,
            api_key_env=args.api_key_env,
            temperature=args.temperature,
            max_tokens=args.max_tokens,
            timeout=args.timeout,
        )
    done = generate_scenarios(
        args.path,
        args.agent_config,
        args.count,
        generator,
        model=model,
        provider=args.provider,
        slice_=args.slice,
        seed=args.seed,
        attempts=args.attempts,
        out=args.out,
        version=args.version,
    )
    dropped = f", {len(done.duplicates)} duplicate(s) dropped" if done.duplicates else ""
    print(
        f"generated {len(done.added)} scenario(s){dropped} into {done.path}: version {done.version} "
        f"(was {done.previous_version}), sha256 {done.sha256}"
    )
    return 0


__all__ = ["dataset_info", "register"]
