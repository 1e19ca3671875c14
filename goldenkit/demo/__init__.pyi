"""goldenkit.demo's public names, listed once: each name and the module it lives in."""

from goldenkit.demo._benchmark import (
    benchmark_story as benchmark_story,
    run_benchmark as run_benchmark,
)
from goldenkit.demo._story import (
    AGENTS as AGENTS,
    DEFAULT_DATASET as DEFAULT_DATASET,
    DemoResult as DemoResult,
    replay_agent as replay_agent,
    run_demo as run_demo,
    run_id_of as run_id_of,
    story as story,
    validate_dataset as validate_dataset,
)
