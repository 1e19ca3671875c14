"""The results store: one folder per run, written while the run is going.

::

    results/<run_id>/
        run.json           the run key, configuration, counts, validity (rewritten atomically)
        outcomes.jsonl     one outcome per line, appended as each completes
        outcomes.parquet   the final outcomes (one per row x repeat), written at the end

Crash safety: outcome lines are written with ``os.write()`` on an unbuffered file
descriptor, nothing waiting in a user-space buffer; the runner writes the outcomes
completed in one pass of its event loop together, before the loop waits for
anything again (:class:`OutcomeWriter`). A process killed with SIGKILL therefore
loses at most the calls in flight and the outcomes of the pass it was killed in,
which a resume calls again; the operating system keeps what was written. A torn
last line (a write cut by the kill) is tolerated: :func:`repair_jsonl` truncates
the file after its last complete line, and readers skip it. Every reader of
``outcomes.jsonl`` goes through :func:`scan_jsonl` (one rule: strict JSON, NaN
refused, a bad line other than the torn last one is an error naming ``file:line``).

Superseded outcomes: ``--retry-errors`` appends a new outcome for a row x repeat
that already has an ERROR line. The **last record per (row_id, repeat) wins**, in
``outcomes.parquet`` and in :func:`outcomes_df` alike, so the file keeps its history
while every reader sees exactly one outcome per pair.

Reading: :func:`read_run` opens a run folder (or a run id under ``results_dir``) as a
:class:`Run`; :func:`outcomes_df` concatenates the outcomes of one or many runs into
one DataFrame, read from Parquet when the run is complete and from the JSONL
otherwise; :func:`light_outcomes` reads a few flat columns of one run (the five
a comparison needs by default, optionally only some rows' outcomes), with the
string columns as categoricals. Nested columns come back as Python objects: ``tags`` a list of str,
``graders`` a dict name -> {passed, score, reason, error}, ``trajectory`` a list of
per-turn dicts, ``agent_version`` a dict.

One module per thing the store owns: :mod:`~goldenkit.results._manifest` (run.json),
:mod:`~goldenkit.results._jsonl` (outcomes.jsonl: writer, repair, reader),
:mod:`~goldenkit.results._parquet` (the Arrow schema, outcomes.parquet),
:mod:`~goldenkit.results._latest` (the ``latest`` pointer),
:mod:`~goldenkit.results._run` (:class:`Run`, :func:`read_run`, :func:`outcomes_df`),
:mod:`~goldenkit.results._light` (:func:`light_outcomes`). Every public name is
importable from ``goldenkit.results``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldenkit._registry import lazy_attributes
from goldenkit.results._jsonl import (
    MAX_PENDING_LINES,
    OutcomeLine,
    OutcomeWriter,
    iter_jsonl,
    latest_per_pair,
    loads_line,
    repair_jsonl,
    scan_jsonl,
)
from goldenkit.results._labels import LABELS_FILE, HumanLabel, add_labels, read_labels
from goldenkit.results._latest import LATEST, update_latest
from goldenkit.results._light import LIGHT_COLUMNS, light_outcomes
from goldenkit.results._manifest import stored_json, write_json_atomic
from goldenkit.results._parquet import (
    OUTCOME_SCHEMA,
    RECORD_BATCH,
    ROW_GROUP,
    outcomes_table,
    write_parquet,
    write_parquet_batches,
)
from goldenkit.results._run import Run, outcomes_df, read_run

if TYPE_CHECKING:  # the real imports, for type checkers and IDEs
    from goldenkit.results._judge_evidence import judge_difference, judge_estimates, judge_rows
    from goldenkit.results._judge_next import LabelPlan, label_plan

#: Imported when asked for: the judge-graded estimates load pandas and the statistics, which a run's
#: first call does without.
_LAZY = {
    **dict.fromkeys(("judge_difference", "judge_estimates", "judge_rows"), "goldenkit.results._judge_evidence"),
    **dict.fromkeys(("LabelPlan", "label_plan"), "goldenkit.results._judge_next"),
}
__getattr__ = lazy_attributes(__name__, _LAZY)

__all__ = [
    "LABELS_FILE",
    "LATEST",
    "LIGHT_COLUMNS",
    "MAX_PENDING_LINES",
    "OUTCOME_SCHEMA",
    "RECORD_BATCH",
    "ROW_GROUP",
    "OutcomeLine",
    "HumanLabel",
    "LabelPlan",
    "OutcomeWriter",
    "Run",
    "add_labels",
    "iter_jsonl",
    "judge_difference",
    "judge_estimates",
    "judge_rows",
    "label_plan",
    "latest_per_pair",
    "light_outcomes",
    "loads_line",
    "outcomes_df",
    "outcomes_table",
    "read_labels",
    "read_run",
    "repair_jsonl",
    "scan_jsonl",
    "stored_json",
    "update_latest",
    "write_json_atomic",
    "write_parquet",
    "write_parquet_batches",
]
