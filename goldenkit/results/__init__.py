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

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
