"""Deterministic sampling and split assignment.

:func:`stratified_sample` draws up to ``per_slice`` rows from every slice by
the **sample rule**, reproducible in any language and independent of library
versions and of the order rows come in: within each slice, rows are ordered
by the lowercase hex SHA-256 of the UTF-8 bytes of ``"{seed}:{slice}:{id}"``,
ascending, and the first ``per_slice`` are taken. In a shell, the rank of row
``refund-0142`` of slice ``refunds`` under seed 7 is
``printf '7:refunds:refund-0142' | sha256sum``. The same seed therefore picks
the same ids for a baseline run and a candidate run, on any machine. (Earlier
versions shuffled with numpy; a sampled baseline from them must be
re-captured -- the gate's row-set check names the rows that differ.)

:func:`assign_splits` puts a row in the holdout when the first 8 bytes of
SHA-256(salt, id), read as a fraction of 2**64, fall below the holdout
fraction. A row's split depends on its own id only, so adding rows never moves
an existing row between dev and holdout.

:func:`weekly_seed` rotates a pull-request sample once per ISO week.

**Red rows** (:mod:`goldenkit.dataset._red`) are left out before the sample
is drawn, like the rows of another split, so they are never selected and never
an outcome.
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
