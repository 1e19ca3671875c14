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
>>> runs = goldenkit.import_run("logs/x.eval", format="inspect", run_id="gpt5")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldenkit._registry import lazy_attributes
from goldenkit.harnesses._formats import FORMATS

if TYPE_CHECKING:  # the real imports, for type checkers and IDEs
    from goldenkit.harnesses._import import import_run, sample_differences

_LAZY = {"import_run": "goldenkit.harnesses._import", "sample_differences": "goldenkit.harnesses._import"}

__all__ = ["FORMATS", "import_run", "sample_differences"]

__getattr__ = lazy_attributes(__name__, _LAZY)
