"""The runner: every row x repeat of a dataset through a provider and the graders, into a run folder.

:func:`run_eval` (sync; safe to call from Jupyter) and :func:`arun_eval` (async)
take the options of a run as one :class:`RunOptions` (or its fields by keyword) and do, in order:

1. pick the rows (``sample``: split filter and/or stratified sample), resolve the
   graders, normalize every case (a case that cannot be normalized is bad input:
   a :class:`~goldenkit.errors.DatasetError` naming file:line and the row id,
   before any call), derive the run key (dataset sha256 and version, agent
   version, judge version, graders and versions, repeats, sample spec, mode);
2. create ``results/<run_id>/`` or **resume** it, as its one writer (a lock; see
   :mod:`goldenkit.runner._folder`): a folder with the same run id must have the
   same run key (else :class:`~goldenkit.errors.ResultsError`; a new git commit
   alone is allowed and recorded per invocation), and only the row x repeat
   pairs with no outcome yet are called (with ``retry_errors=True`` the pairs
   whose last outcome is ERROR too; the new record supersedes the old one,
   last record per pair wins);
3. call the provider for each pending pair, each an independent call: at most
   ``max_in_flight`` at once, optionally at most ``rpm`` starts per minute
   (:mod:`goldenkit.runner._limits`). Only ``transient`` failures are retried, up to
   ``max_retries`` times with exponential backoff and full jitter, waiting at
   least the server's Retry-After, never more than ``max_retry_after`` (a 429
   asking for longer, or saying the quota is exhausted, is an ``infrastructure``
   ERROR at once; so are refused requests, ``refused``, and an agent's own errors, ``agent``).
   Repeated 429s halve the concurrency (at most once per second); a run of
   successes raises it by one again, up to ``max_in_flight``. The judge's calls
   go through the same limiter, retries and backoff;
4. grade each response with every grader (a grader that raises is recorded as a
   grader error, never a crash) and :func:`goldenkit.graders._base.combine` the
   results into PASS / FAIL / SKIPPED, or ERROR when a hard grader could not
   grade and none failed; a call that produced nothing is ERROR with a one-line
   reason (status and URL without secrets), its ``error_kind`` (the taxonomy of
   :mod:`goldenkit.schema`: transient, infrastructure, refused, agent, grader,
   simulator; :class:`goldenkit.errors.ProviderError` says which), the attempts made,
   and as its trajectory what came before the failure (a conversation's earlier turns);
5. append each outcome to ``outcomes.jsonl`` as it completes (see
   :class:`goldenkit.results.OutcomeWriter`), keeping in memory only where each
   pair's last line is and its verdict (:mod:`goldenkit.runner._outcome_index`: memory
   flat in the number of outcomes), and at the end write ``outcomes.parquet``
   (read back from the JSONL a row group at a time), the final run.json (counts, error rate, validity) and
   point ``results/latest`` at the run. INVALID when the error rate (ERROR
   outcomes nobody's answer caused, never the candidate's own ``agent`` or
   ``refused`` errors, plus outcomes with a grader that could not grade) exceeds
   ``max_error_rate``, when every outcome is such an ERROR (an infrastructure failure,
   never "0% quality"), or when the run stopped early.

The workers of a run live in an ``asyncio.TaskGroup`` (:mod:`goldenkit.runner._run`):
a failure or a cancel (Ctrl-C, an interrupted notebook cell) stops them all, and
what finished is written; a worker's failure (a crash of goldenkit, not a row's error)
is recorded as one (run.json ``"stopped_because": "crash"`` with every worker's exception
in ``crash``) and raised. A circuit breaker stops launching new calls after
``abort_after_errors`` consecutive provider ERRORs nobody's answer caused (a server that went away); the
run is then incomplete and INVALID, and resuming it with ``retry_errors=True``
finishes it. Progress is drawn by ``tqdm.auto`` (:mod:`goldenkit.runner._progress`).

``shard=(k, n)`` runs only the rows of hash shard k of n (:mod:`goldenkit.runner._shard`,
picked after the split and the sample), and :func:`merge_shards` unites the n
shard runs into one ordinary run (:mod:`goldenkit.runner._merge`).

:func:`goldenkit.runner._regrade.regrade` grades the stored answers of a finished run again with new
graders, into a new run of mode ``regrade`` (:mod:`goldenkit.runner._regrade`).
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
