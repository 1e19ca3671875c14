"""Import the per-sample results of other evaluation harnesses as goldenkit runs.

:func:`import_run` reads one result file (or a folder holding one) written by
inspect_ai, lm-evaluation-harness, promptfoo, deepeval, openai/evals or Google ADK
(``adk eval``'s history: one file, or the ``.adk/eval_history`` folder) and writes
an ordinary run folder (``run.json`` + ``outcomes.jsonl`` + ``outcomes.parquet``)
with ``mode: "imported"``, the source format, file and the tool's own identifiers
in ``run.json["source"]``. Compare, gate and report then work on it as on any run.

One module per format (its docstring states the mapping); :mod:`.common` builds the
the records, the fingerprint and the folder are
:mod:`.runfolder`'s.

>>> import goldenkit
>>> runs = goldenkit.harnesses.import_run("logs/x.eval", format="inspect", run_id="gpt5")  # doctest: +SKIP
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
