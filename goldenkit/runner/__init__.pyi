"""goldenkit.runner's public names, listed once: each name and the module it lives in."""

from goldenkit._scrub import (
    redact_settings as redact_settings,
)
from goldenkit.runner._calls import (
    CallLimits as CallLimits,
    ModelCalls as ModelCalls,
)
from goldenkit.runner._conversation import (
    DEFAULT_MAX_TURNS as DEFAULT_MAX_TURNS,
    ConversationDriver as ConversationDriver,
)
from goldenkit.runner._evaluate import (
    arun_eval as arun_eval,
    normalize_cases as normalize_cases,
    run_eval as run_eval,
    select_rows as select_rows,
)
from goldenkit.runner._explain import (
    explain_clusters as explain_clusters,
)
from goldenkit.runner._folder import (
    NEW_RUN_ID as NEW_RUN_ID,
    new_run_id as new_run_id,
    utc_now as utc_now,
)
from goldenkit.runner._limits import (
    Limiter as Limiter,
    backoff_delay as backoff_delay,
)
from goldenkit.runner._merge import (
    merge_shards as merge_shards,
)
from goldenkit.runner._options import (
    RunOptions as RunOptions,
)
from goldenkit.runner._ray_executor import (
    RaySettings as RaySettings,
    SpecSetup as SpecSetup,
)
from goldenkit.runner._regrade import (
    aregrade as aregrade,
    regrade as regrade,
)
from goldenkit.runner._run import (
    RunExecution as RunExecution,
)
from goldenkit.runner._runkey import (
    RUN_KEY_FIELDS as RUN_KEY_FIELDS,
    TRANSPORT_SETTINGS as TRANSPORT_SETTINGS,
)
from goldenkit.runner._shard import (
    parse_shard as parse_shard,
    shard_of as shard_of,
    shard_rows as shard_rows,
)
from goldenkit.runner._summary import (
    RunInterrupted as RunInterrupted,
    RunSummary as RunSummary,
)
from goldenkit.runner._versions import (
    agent_version as agent_version,
    git_commit as git_commit,
)
