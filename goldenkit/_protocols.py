"""The shapes the library reads duck-typed: a dataset, and a run or a saved baseline.

:class:`goldenkit.dataset.Dataset` is a :class:`DatasetLike`; :class:`goldenkit.results.Run`
and :class:`goldenkit.baselines.Baseline` are :class:`RunLike`. Anything else with the same
attributes works too (a test's stand-in, a run imported from another harness), and mypy
checks that it has them. These are types only: nothing here runs at import beyond the
class definitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd

    from goldenkit.records import Case


class DatasetLike(Protocol):
    """A versioned set of rows: identity (name, version, sha256), the ``rows`` table and its columns, cases by id."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str | None: ...

    @property
    def sha256(self) -> str: ...

    @property
    def rows(self) -> pd.DataFrame: ...

    def column(self, name: str) -> list[Any]:
        """One column of ``rows`` (id, slice, tags, split, source, added) as a list, in row order."""
        ...

    def case(self, row_id: str) -> Case:
        """The row's case, normalized."""
        ...

    def subset(self, ids_or_rows: Iterable[str]) -> DatasetLike:
        """The same dataset holding only the given rows."""
        ...


class RunLike(Protocol):
    """One side of a comparison or the subject of the gate: a run id and its ``run.json`` dict.

    A run also offers ``outcomes(columns=...)``, a baseline ``collapsed()`` and ``rule``;
    the readers ask for whichever is there.
    """

    @property
    def run_id(self) -> str: ...

    @property
    def manifest(self) -> Mapping[str, Any]: ...


__all__ = ["DatasetLike", "RunLike"]
