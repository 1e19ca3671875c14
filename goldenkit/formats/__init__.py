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

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
