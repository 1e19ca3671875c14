"""goldenkit.scenarios's public names, listed once: each name and the module it lives in."""

from goldenkit.scenarios._agent_config import (
    read_agent_config as read_agent_config,
)
from goldenkit.scenarios._generate import (
    GENERATION_PROMPT as GENERATION_PROMPT,
    Generator as Generator,
    ModelGenerator as ModelGenerator,
    generate_scenarios as generate_scenarios,
)
