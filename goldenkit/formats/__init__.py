"""Foreign case shapes and dataset files, normalized to goldenkit's case model.

* :func:`normalize_case` turns one raw case (ADK eval case, Vertex GenAI eval
  case, or contract case) into a :class:`goldenkit.records.Case`.
* :func:`import_dataset` turns a foreign file (ADK, Vertex, java-ai-golden,
  openai/evals, inspect_ai) into a goldenkit dataset folder.

One module per foreign shape: :mod:`.adk`, :mod:`.vertex`, :mod:`.contract`
(also java-ai-golden files), :mod:`.openai_evals`, :mod:`.inspect`. Each is
imported on first use: a run that only reads criteria or normalizes contract
cases does not load the importers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldenkit._registry import lazy_attributes

if TYPE_CHECKING:  # the real imports, for type checkers and IDEs
    from goldenkit.formats._importer import IMPORT_FORMATS, import_dataset
    from goldenkit.formats._normalize import detect_shape, normalize_case

_LAZY = {
    "IMPORT_FORMATS": "._importer",
    "import_dataset": "._importer",
    "detect_shape": "._normalize",
    "normalize_case": "._normalize",
}
__getattr__ = lazy_attributes(__name__, _LAZY)

__all__ = ["IMPORT_FORMATS", "detect_shape", "import_dataset", "normalize_case"]
