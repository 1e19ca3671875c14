"""Foreign case shapes and dataset files, normalized to goldenkit's case model.

* :func:`normalize_case` turns one raw case (ADK eval case, Vertex GenAI eval
  case, or contract case) into a :class:`goldenkit.cases.Case`.
* :func:`import_dataset` turns a foreign file (ADK, Vertex, java-ai-golden,
  openai/evals, inspect_ai) into a goldenkit dataset folder.

One module per foreign shape: :mod:`.adk`, :mod:`.vertex`, :mod:`.contract`
(also java-ai-golden files), :mod:`.openai_evals`, :mod:`.inspect`.
"""

from goldenkit.formats.importer import IMPORT_FORMATS, import_dataset
from goldenkit.formats.normalize import detect_shape, normalize_case

__all__ = ["IMPORT_FORMATS", "detect_shape", "import_dataset", "normalize_case"]
