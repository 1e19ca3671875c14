"""Live tests: goldenkit against a real model server.

Which server: ``GOLDENKIT_LIVE_BASE_URL`` (an OpenAI-compatible ``.../v1`` URL,
or an Ollama host), optionally ``GOLDENKIT_LIVE_PROVIDER`` (``openai``, the
default, or ``ollama``), ``GOLDENKIT_LIVE_API_KEY_ENV`` (the *name* of the
variable holding the key) and ``GOLDENKIT_LIVE_MODEL`` (default ``tiny``, the
model id of the CI server). Without ``GOLDENKIT_LIVE_BASE_URL`` every test in
this folder is skipped: each module says why in the short test summary, and
the reason is printed once more at the end (and in the header when the folder
is run on its own).

Tests that must start, stop or re-key a server of their own (wrong API key,
server stopped mid-run) start the llama.cpp server of ``../shared/real-server/setup.sh``
(beside the checkout) on a free port with a temporary ``WORKDIR``, and are
skipped with a reason when that script is absent.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # livekit
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # fakeserver

from livekit import live_config, skip_reason  # noqa: E402


def pytest_report_header(config: pytest.Config) -> str:
    cfg = live_config()
    if cfg is None:
        return f"live tests: {skip_reason()}"
    return f"live tests: {cfg.describe()}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    cfg = live_config()
    terminalreporter.write_line(f"live tests: {skip_reason() if cfg is None else 'ran against ' + cfg.describe()}")


@pytest.fixture(scope="session")
def live():
    """The configured server (skips when none is named)."""
    cfg = live_config()
    if cfg is None:
        pytest.skip(skip_reason())
    return cfg
