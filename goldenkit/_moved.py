"""Old import locations, kept working for one release: one table and one rule, no shim files.

A module that is not public API has a private name (``goldenkit.runner._evaluate``); its
old name (``goldenkit.runner.evaluate``) still imports, as the same module object, with a
DeprecationWarning naming the public place to import from. :data:`MOVED` lists the other
old locations (modules that moved to another package). The finder answers only for
``goldenkit.*`` names that no file answers for, after every other finder of ``sys.meta_path``.

>>> import sys, warnings
>>> _ = sys.modules.pop("goldenkit.compare.protocol", None)  # imported before: no new warning
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     import goldenkit.compare.protocol as old
>>> import goldenkit.compare._protocol as new
>>> print(old is new, caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
True goldenkit.compare.protocol is deprecated (it is the private goldenkit.compare._protocol):
import from goldenkit.compare
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MOVED", "MovedFinder", "moved_target"]

#: Old module -> (the module it is now, the public place to import its names from).
MOVED: dict[str, tuple[str, str]] = {
    "goldenkit.cases": ("goldenkit.records", "goldenkit.records"),
    "goldenkit.comparability": ("goldenkit.compare._protocol", "goldenkit.compare"),
    "goldenkit.flips": ("goldenkit.compare._flips", "goldenkit.compare"),
    "goldenkit.policy": ("goldenkit.gate._policy", "goldenkit.gate"),
    "goldenkit.evidence": ("goldenkit.gate._evidence", "goldenkit.gate"),
    "goldenkit.alignment": ("goldenkit.leaderboards._alignment", "goldenkit.leaderboards"),
    "goldenkit.ranking": ("goldenkit.leaderboards._ranking", "goldenkit.leaderboards"),
    "goldenkit.passk": ("goldenkit.leaderboards._passk", "goldenkit.leaderboards"),
    "goldenkit.pairwise": ("goldenkit.leaderboards._pairwise", "goldenkit.leaderboards"),
    "goldenkit.leaderboard_report": ("goldenkit.leaderboards._report", "goldenkit.leaderboards"),
    "goldenkit.demo_benchmark": ("goldenkit.demo._benchmark", "goldenkit.demo"),
    "goldenkit.dataset.generate": ("goldenkit.scenarios._generate", "goldenkit.scenarios"),
    "goldenkit.dataset.agent_config": ("goldenkit.scenarios._agent_config", "goldenkit.scenarios"),
    "goldenkit.runner.index": ("goldenkit.runner._outcome_index", "goldenkit.runner"),
    "goldenkit.history.index": ("goldenkit.history._run_index", "goldenkit.history"),
}

#: The old public-looking names of modules that are private now (``goldenkit.runner.evaluate`` is
#: ``goldenkit.runner._evaluate``), by package. Only these answer: a name that never existed is not found.
RENAMED_PRIVATE: dict[str, tuple[str, ...]] = {
    "goldenkit": (
        "artifacts",
        "display",
        "explain",
        "findings",
        "protocols",
        "registry",
        "reprs",
        "scrub",
    ),
    "goldenkit.audit": (
        "apply",
        "browser",
        "failures",
        "marks",
        "session",
    ),
    "goldenkit.commands": (
        "audit",
        "baseline",
        "benchmark",
        "compare",
        "dataset",
        "demo",
        "gate",
        "import_run",
        "judge",
        "leaderboard",
        "merge",
        "pages",
        "query",
        "regrade",
        "report",
        "run",
        "stats",
    ),
    "goldenkit.compare": (
        "clusters",
        "flips",
        "groups",
        "ledger",
        "protocol",
        "runs",
    ),
    "goldenkit.dataset": (
        "lines",
        "manifest",
        "problems",
        "reader",
        "red",
        "rows",
        "versions",
    ),
    "goldenkit.demo": (
        "benchmark",
        "story",
    ),
    "goldenkit.formats": (
        "adk",
        "contract",
        "eval_config",
        "importer",
        "inspect",
        "normalize",
        "openai_evals",
        "vertex",
    ),
    "goldenkit.gate": (
        "evaluate",
        "evidence",
        "policy",
    ),
    "goldenkit.graders": (
        "base",
        "build",
        "calibration",
        "contract",
        "gradable",
        "judge",
        "match",
        "retrieval",
        "rubrics",
        "state",
        "trajectory",
    ),
    "goldenkit.harnesses": (
        "adk_history",
        "common",
        "deepeval_testrun",
        "inspect_log",
        "lm_eval_samples",
        "openai_evals_log",
        "promptfoo_output",
        "runfolder",
    ),
    "goldenkit.history": (
        "run_index",
        "sql",
        "trend",
    ),
    "goldenkit.leaderboards": (
        "alignment",
        "pairwise",
        "passk",
        "ranking",
        "report",
    ),
    "goldenkit.notebooks": ("inprocess",),
    "goldenkit.pages": (
        "html",
        "leaderboards",
        "plots",
        "site",
        "views",
    ),
    "goldenkit.providers": (
        "adk",
        "adk_events",
        "base",
        "callable",
        "chat",
        "client",
        "conversation",
        "failures",
        "fixtures",
        "http",
        "images",
        "ollama",
        "openai",
        "simulator",
        "streaming",
    ),
    "goldenkit.report": (
        "audit",
        "compare",
        "coverage",
        "explore",
        "html",
        "run",
    ),
    "goldenkit.results": (
        "jsonl",
        "latest",
        "light",
        "manifest",
        "parquet",
        "run",
    ),
    "goldenkit.runner": (
        "conversation",
        "evaluate",
        "folder",
        "limits",
        "manifest",
        "merge",
        "outcome_index",
        "progress",
        "ray_executor",
        "ray_limits",
        "regrade",
        "run",
        "runkey",
        "shard",
        "summary",
        "validity",
        "versions",
    ),
    "goldenkit.scenarios": (
        "agent_config",
        "generate",
    ),
    "goldenkit.stats": (
        "clustered",
        "collapse",
        "intervals",
        "mcnemar",
        "representative",
    ),
}


def moved_target(name: str) -> tuple[str, str] | None:
    """Where the old module ``name`` is now and where to import from, or None when it never moved.

    >>> moved_target("goldenkit.runner.evaluate")
    ('goldenkit.runner._evaluate', 'goldenkit.runner')
    >>> moved_target("goldenkit.scrub"), moved_target("goldenkit.runner.nothing"), moved_target("goldenkit.text")
    (('goldenkit._scrub', 'goldenkit'), None, None)
    """
    if name in MOVED:
        return MOVED[name]
    package, _, module = name.rpartition(".")
    if module not in RENAMED_PRIVATE.get(package, ()):
        return None
    return f"{package}._{module}", package


class _KeepsItsNames(ModuleType):
    """A package whose own attribute (``goldenkit.history.trend``, a function) an import of the old
    module name of the same spelling does not replace with the module (the import system sets it)."""

    def __setattr__(self, name: str, value: object) -> None:
        current = vars(self).get(name)
        if isinstance(value, ModuleType) and current is not None and not isinstance(current, ModuleType):
            return
        super().__setattr__(name, value)


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module it is now: the import system returns ``sys.modules[name]``."""

    def __init__(self, target: str, public: str) -> None:
        self.target, self.public = target, public

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        name = module.__name__
        private = any(part.startswith("_") for part in self.target.split("."))
        shown = f"it is the private {self.target}" if private else f"it is {self.target}"
        warnings.warn(f"{name} is deprecated ({shown}): import from {self.public}", DeprecationWarning, stacklevel=2)
        package, _, child = name.rpartition(".")
        parent = sys.modules.get(package)
        own = vars(parent).get(child) if parent is not None else None
        if parent is not None and own is not None and not isinstance(own, ModuleType) and type(parent) is ModuleType:
            parent.__class__ = _KeepsItsNames  # only a package with a name of its own spelled like the old module
        sys.modules[name] = importlib.import_module(self.target)

    def get_code(self, fullname: str) -> object:
        """The code of the module it is now, so that ``python -m OLD.NAME`` runs it."""
        spec = importlib.util.find_spec(self.target)
        loader = spec.loader if spec is not None else None
        return loader.get_code(self.target) if isinstance(loader, importlib.abc.InspectLoader) else None


class MovedFinder(importlib.abc.MetaPathFinder):
    """The finder of the old locations (:func:`moved_target`); goldenkit appends it to ``sys.meta_path`` once."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("goldenkit."):
            return None
        found = moved_target(fullname)
        if found is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(*found))


def install() -> None:
    """Append the finder to ``sys.meta_path`` unless one is there (``import goldenkit`` calls this once)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())
