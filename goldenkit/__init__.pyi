"""goldenkit's root: the 25 names a first hour needs, each listed once with the module it lives in.

Type checkers and editors read this stub; at run time ``goldenkit/__init__.py`` reads the same
lines (:func:`goldenkit._registry.attach_stub`) and imports each name from its module on first
use, so ``import goldenkit`` stays cheap. Every other public name has its one home in its
package (``goldenkit.stats.holm``, ``goldenkit.errors.ConfigError``); the packages are
attributes of the root (``gk.stats``) without being listed here. A root name's ``__module__`` is
``goldenkit`` (:func:`goldenkit._registry.publish`), so reprs, tracebacks and docs show
``goldenkit.compare_runs``.
"""

__version__: str

from goldenkit.baselines import (
    read_baseline as read_baseline,
    save_baseline as save_baseline,
)
from goldenkit.compare import (
    Comparison as Comparison,
    compare_runs as compare_runs,
    why as why,
)
from goldenkit.dataset import (
    Dataset as Dataset,
    read_dataset as read_dataset,
)
from goldenkit.errors import (
    GoldenkitError as GoldenkitError,
)
from goldenkit.gate import (
    GateDecision as GateDecision,
    GatePolicy as GatePolicy,
    evaluate_gate as evaluate_gate,
)
from goldenkit.graders import (
    Grader as Grader,
)
from goldenkit.leaderboards import (
    leaderboard as leaderboard,
)
from goldenkit.providers import (
    Response as Response,
    get_provider as get_provider,
)
from goldenkit.records import (
    Case as Case,
)
from goldenkit.report import (
    explore as explore,
)
from goldenkit.results import (
    Run as Run,
    outcomes_df as outcomes_df,
    read_run as read_run,
)
from goldenkit.runner import (
    RunOptions as RunOptions,
    arun_eval as arun_eval,
    regrade as regrade,
    run_eval as run_eval,
)
from goldenkit.stats import (
    slice_table as slice_table,
)
