"""goldenkit.providers's public names, listed once: each name and the module it lives in."""

from goldenkit.providers._adk import (
    AdkProvider as AdkProvider,
    load_agent as load_agent,
)
from goldenkit.providers._base import (
    BUILTINS as BUILTINS,
    Provider as Provider,
    Response as Response,
    TurnOutput as TurnOutput,
    get_provider as get_provider,
    provider_factory as provider_factory,
    provider_names as provider_names,
    register_provider as register_provider,
)
from goldenkit.providers._callable import (
    CallableProvider as CallableProvider,
    load_callable as load_callable,
)
from goldenkit.providers._failures import (
    exception_error as exception_error,
)
from goldenkit.providers._fixtures import (
    FIXTURES_FILE as FIXTURES_FILE,
    RECORDING_ENDS as RECORDING_ENDS,
    FixtureRecorder as FixtureRecorder,
    FixturesProvider as FixturesProvider,
)
from goldenkit.providers._images import (
    check_images as check_images,
)
from goldenkit.providers._ollama import (
    OllamaProvider as OllamaProvider,
)
from goldenkit.providers._openai import (
    OpenAIProvider as OpenAIProvider,
)
from goldenkit.providers._simulator import (
    SIMULATOR_SYSTEM_PROMPT as SIMULATOR_SYSTEM_PROMPT,
    SIMULATOR_USER_PROMPT as SIMULATOR_USER_PROMPT,
    CallableSimulator as CallableSimulator,
    ChatSimulator as ChatSimulator,
    SimulatorError as SimulatorError,
    UserSimulator as UserSimulator,
    get_simulator as get_simulator,
    open_session as open_session,
    transcript_messages as transcript_messages,
)
from goldenkit.providers._spec import (
    PROVIDER_OPTIONS as PROVIDER_OPTIONS,
    SIMULATOR_OPTIONS as SIMULATOR_OPTIONS,
    TRANSPORT_OPTIONS as TRANSPORT_OPTIONS,
    apply_transport_to_judges as apply_transport_to_judges,
    build_provider as build_provider,
    build_simulator as build_simulator,
)
