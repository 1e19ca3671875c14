"""Baselines: committed snapshots of a run that later runs are compared against.

::

    baselines/
        NAME.json        the run's manifest whole (run.json), its protocol key under the
                         collapse rule (goldenkit.compare.protocol_key) and a summary
        NAME.parquet     one line per row, collapsed: verdict, repeat counts, flaky,
                         and a representative response with its grader reasons
                         (what a paired comparison and its flip list need)
        history.jsonl    one line appended per save, never rewritten

:func:`save_baseline` refuses to overwrite an existing baseline unless
``force=True``, and refuses a run that is INVALID, incomplete, empty, or
whose ERROR outcomes leave a row without a verdict (a baseline with holes
would take those rows out of every later comparison; an errored repeat that
decides nothing, P, P, E under majority, leaves none). :func:`read_baseline` returns a :class:`Baseline`, which
:func:`goldenkit.compare.compare_runs` accepts wherever a run is (it has a
``.manifest``, a ``.rule`` and ``.collapsed()``). :func:`resolve_run_or_baseline`
turns a command-line reference -- a run folder, a run id, a baseline name or
a baseline file -- into a run or a baseline.
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
