"""goldenkit.harnesses.import_run: one result file of another harness in, one goldenkit run folder out."""

from __future__ import annotations

import os
from pathlib import Path

from goldenkit._constraints import RUN_OPTIONS
from goldenkit._registry import publish
from goldenkit.dataset import read_dataset
from goldenkit.errors import InputError, UsageError
from goldenkit.harnesses._adk_history import read_adk_history
from goldenkit.harnesses._common import Imported
from goldenkit.harnesses._deepeval_testrun import read_deepeval
from goldenkit.harnesses._formats import FORMATS
from goldenkit.harnesses._inspect_log import read_inspect
from goldenkit.harnesses._lm_eval_samples import read_lm_eval
from goldenkit.harnesses._openai_evals_log import read_openai_evals
from goldenkit.harnesses._promptfoo_output import read_promptfoo
from goldenkit.harnesses._runfolder import prepare, sample_differences, write_prepared
from goldenkit.results import Run, read_run

#: Where a folder holds several files of the format, the one the tool itself reads back first.
_PREFERRED = {"deepeval": ".latest_test_run.json"}
_OPTIONS = {
    "scorer": ("inspect",),
    "metric": ("lm-eval", "deepeval", "openai-evals"),
    "threshold": ("inspect", "lm-eval", "deepeval", "openai-evals"),
    "provider": ("promptfoo",),
    "eval_set": ("adk",),
}


def _source_file(src: Path, fmt: str) -> Path:
    """``src`` itself, or the one file of the format in the folder ``src``."""
    if src.is_file():
        return src
    if not src.exists():
        raise InputError(f"{src}: no such file or folder")
    if fmt == "adk":  # a folder of eval history: every file of the eval set (see harnesses.adk_history)
        return src
    found = sorted({p for pattern in FORMATS[fmt] for p in src.glob(pattern) if p.is_file()})
    preferred = [p for p in found if p.name == _PREFERRED.get(fmt)]
    found = preferred or found
    if len(found) != 1:
        listed = ", ".join(p.name for p in found[:10]) or "none"
        raise InputError(f"{src}: a folder with {len(found)} {fmt} result files ({listed}); name the file")
    return found[0]


def _read(path: Path, fmt: str, options: dict[str, object]) -> list[Imported]:
    """The runs in the file. The readers take each field through :func:`~goldenkit.harnesses._common.typed`;
    a wrong type that reaches Python's own operations all the same is still one line naming the file."""
    try:
        return _read_format(path, fmt, options)
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
        raise InputError(
            f"{path}: a field of this {fmt} file has a type or value goldenkit cannot read ({exc})"
        ) from None


def _read_format(path: Path, fmt: str, options: dict[str, object]) -> list[Imported]:
    threshold = options.get("threshold")
    thr = None if threshold is None else float(threshold)  # type: ignore[arg-type]
    metric = options.get("metric")
    name = None if metric is None else str(metric)
    if fmt == "inspect":
        scorer = options.get("scorer")
        return [read_inspect(path, scorer=None if scorer is None else str(scorer), threshold=thr)]
    if fmt == "lm-eval":
        return [read_lm_eval(path, metric=name, threshold=thr)]
    if fmt == "promptfoo":
        provider = options.get("provider")
        return read_promptfoo(path, provider=None if provider is None else str(provider))
    if fmt == "deepeval":
        return [read_deepeval(path, metric=name, threshold=thr)]
    if fmt == "adk":
        eval_set = options.get("eval_set")
        return read_adk_history(path, eval_set=None if eval_set is None else str(eval_set))
    return [read_openai_evals(path, metric=name, threshold=thr)]


def import_run(
    src: str | os.PathLike[str],
    *,
    format: str,
    run_id: str,
    dataset: str | os.PathLike[str] | None = None,
    scorer: str | None = None,
    metric: str | None = None,
    threshold: float | None = None,
    provider: str | None = None,
    slice_field: str | None = None,
    results_dir: str | os.PathLike[str] = "results",
    eval_set: str | None = None,
) -> list[Run]:
    """Import one result file of another harness as goldenkit run folder(s) under ``results_dir``.

    ``format`` is one of :data:`FORMATS`; ``scorer`` (inspect), ``metric`` (lm-eval,
    deepeval, openai-evals) and ``threshold`` (PASS when a numeric score >= it) choose
    the verdict; ``provider`` picks one promptfoo provider (without it, one run per
    provider, ``RUN_ID-<provider>``); ``eval_set`` (adk) picks the eval set of an
    ``.adk/eval_history`` folder (one run per ``adk eval`` run in it); ``slice_field`` takes each row's slice from the
    sample's metadata / vars / doc (else the slice is ``all``, or the dataset's);
    ``dataset`` (a goldenkit dataset the samples came from) matches the rows to its ids
    and lends its hash. Returns the written runs (one, or one per promptfoo provider and
    template, or per ADK run).

    Bad input is an :class:`~goldenkit.errors.InputError` naming the file (and sample);
    nothing is written then, and an existing run folder is never replaced.
    """
    if format not in FORMATS:
        raise UsageError(f"unknown format {format!r}; one of: {', '.join(FORMATS)}")
    try:  # the one rule for run ids (goldenkit._constraints.RUN_OPTIONS)
        RUN_OPTIONS["run_id"].check(run_id)
    except ValueError as exc:
        raise UsageError(f"run id {exc}") from None
    options: dict[str, object] = {"scorer": scorer, "metric": metric, "threshold": threshold, "provider": provider}
    options["eval_set"] = eval_set
    for key, value in options.items():
        if value is not None and format not in _OPTIONS[key]:
            flag = key.replace("_", "-")
            raise UsageError(f"--{flag} does not apply to --format {format} (only {', '.join(_OPTIONS[key])})")
    path = _source_file(Path(src), format)
    ds = None if dataset is None else read_dataset(Path(dataset))
    imported = _read(path, format, options)
    for imp in imported:
        if not imp.samples:
            raise InputError(f"{path}: no samples in the file; nothing to import")
    recorded = {k: v for k, v in options.items() if v is not None}
    recorded.update(slice=slice_field, dataset=None if dataset is None else str(dataset))
    prepared = []
    for imp in imported:
        rid = run_id if imp.suffix is None else f"{run_id}-{imp.suffix}"
        prepared.append(prepare(imp, rid, ds, slice_field, recorded))
    if len({p.run_id for p in prepared}) != len(prepared):
        raise InputError(f"{path}: two runs would get the same run id; pick one with --provider")
    written = write_prepared(prepared, Path(results_dir))
    return [read_run(p) for p in written]


__all__ = ["import_run", "sample_differences"]

publish(globals())
