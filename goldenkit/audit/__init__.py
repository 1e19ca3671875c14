"""The failure audit: browse failing rows, mark label errors, turn them into a new dataset version.

A person reads failing rows (prompt, expected, response and the graders'
reasons side by side) and marks each one:

* ``label_error`` -- the dataset is wrong (the expectation or the slice), not the agent;
* ``agent_error`` -- the agent really failed;
* ``unclear`` -- cannot tell; needs another look.

**Marks file.** Marks are appended, one JSON object per line, to
``audits/<dataset>-<YYYY-MM-DD>.jsonl`` (:func:`audit_file`); the file is never
rewritten. A row marked twice keeps its **latest** mark. A mark::

    {"schema_version": 1, "marked_at": "2026-10-02T09:30:00+00:00",
     "dataset": "support-agent", "dataset_version": "1.0.0", "dataset_sha256": "...",
     "run_id": "cand", "row_id": "refund-0142", "slice": "refunds",
     "label": "label_error", "note": "policy changed: 30 days, not 14",
     "correction": {"case": {"expect": {"must_contain": ["30 days"]}}}}

**Applying marks** (:func:`apply_audit`, ``goldenkit audit apply``). Only
``label_error`` marks change the dataset:

* with a ``correction``: the correction is a JSON Merge Patch (RFC 7396) applied
  to the row (everything but ``id``): objects merge key by key, ``null``
  deletes a key, anything else replaces. ``{"case": {"expect": {"must_contain":
  ["30 days"]}}}`` relabels the expectation; ``{"slice": "billing"}`` moves the row.
* without one (``null``): the row is **dropped** from the new version -- a wrong
  label nobody has fixed is not ground truth, and guessing one would be worse.

The new version is written to a **new folder** (default: a sibling named
``<folder>-<new version>``); the old folder is never touched. Its dataset.json
has the new version and one changelog entry appended saying which rows were
relabelled or dropped and why (the notes), from which audit file and which
previous content hash. Unchanged rows keep their exact bytes; every other file
of the folder (fixtures, goldenkit.toml) is copied. Marks made against another
content hash than the dataset's are refused: they describe other rows.

The browser logic (:class:`AuditBrowser`: filtering, paging, mark recording) is
plain Python and tested; :class:`AuditWidget` only wires it to ipywidgets.

**Human verdicts** (a run graded by an LLM judge): the widget's "human verdict: PASS / FAIL" mark
and its "label next" panel save labels of the run (``labels.jsonl``, never the outcomes), proposed
rows with the probability they were drawn with, hand-picked ones shown but never used for inference;
the judge-graded figures follow them (:mod:`goldenkit.audit._labelling`).

Modules: ``marks`` (the marks file), ``failures`` (failing rows, the sample, the
cards), ``labelling`` (human verdicts, label next, the judge-graded figures), ``browser``
(browser and widget), ``apply`` (the new dataset version), ``session`` (what the audit
notebook opens). None imports the report.
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
