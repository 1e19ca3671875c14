"""Read and validate goldenkit datasets, and compute their canonical content hash.

A dataset is a folder holding ``dataset.jsonl`` (one row per line) and
``dataset.json`` (the manifest), or a bare ``.jsonl`` file. Each row is::

    {"id": "refund-0142", "slice": "refunds", "tags": ["multi_turn"], "split": "dev",
     "source": "prod-2026-09", "added": "2026-09-18", "case": {...}}

Row rules (anything else is refused with a :class:`~goldenkit.errors.DatasetError`
naming ``file:line``; no row is ever skipped):

* ``id``: non-empty string (not only whitespace), unique in the file.
* ``slice``: non-empty string.
* ``split``: ``"dev"`` or ``"holdout"``. A row without a split (absent or null)
  is refused, because the split decides who may look at a row, unless the
  manifest declares ``"default_split"`` (``"dev"`` or ``"holdout"``), which then
  applies to such rows.
* ``tags``: list of non-empty strings; absent or null means ``[]``.
* ``source``, ``added``: strings, or absent/null (then ``None``). ``added`` is
  not parsed: it is provenance text (usually an ISO date).
* ``case``: a JSON object (the eval case, in any shape goldenkit.formats reads).
* No other top-level key is allowed (a typo such as ``"slcie"`` would otherwise
  be silently ignored); put extra data inside ``case``.

The file must be UTF-8 without a byte-order mark; CRLF line ends are accepted
and hash the same as LF; blank lines are ignored (and do not change the hash).

The manifest ``dataset.json`` is a JSON object with ``name`` (non-empty
string), ``version`` (non-empty string) and ``changelog``: a non-empty list of
``{"version", "date" (YYYY-MM-DD), "why"}`` entries, oldest first (it is
append-only: new versions go at the end), versions unique, dates not
decreasing, and the last entry's version equal to ``version``. Optional keys:
``description``, ``case_format`` (``adk``, ``vertex`` or ``contract``: the shape
of every row's case, otherwise detected per row) and ``default_split``; other
keys are kept in :attr:`Dataset.manifest` untouched.

A bare ``.jsonl`` file has no manifest, unless it is named ``dataset.jsonl``
and a ``dataset.json`` sits beside it; without one, the name is the file's stem
and the version is ``None``.

**Content hash** (:func:`canonical_sha256`): split the file's bytes on LF only
(never ``str.splitlines()``, which also breaks on U+2028, U+2029 and U+0085
that JSON writers leave raw inside strings); strip ASCII whitespace (space,
tab, CR, LF, VT, FF) from both ends of each line; drop empty lines; sort the
lines by their bytes; feed each line followed by ``\\n`` to SHA-256.
Reordering rows or switching CRLF/LF keeps the hash; editing any row changes it.

**Shard rule** (:func:`goldenkit.runner._shard.shard_of`, beside the hash and the
sample rule of :mod:`goldenkit.sampling`): a row's shard, 1-based of N, is
``int(sha256(utf8(id)).hexdigest(), 16) mod N + 1``, applied after the split
filter and the sample, so ``goldenkit run --shard K/N`` for K = 1..N partitions
exactly the rows of the unsharded run (see docs/scale.md).
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
