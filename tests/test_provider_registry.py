"""The provider registry: built-ins load on first use, by name, and keep their names."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from goldenkit.errors import ConfigError
from goldenkit.providers import BUILTINS, get_provider, provider_names, register_provider


def _fresh(code: str) -> dict[str, bool]:
    """Run ``code`` in a fresh interpreter; which heavy modules it imported."""
    probe = code + "\nimport json, sys\nprint(json.dumps({m: m in sys.modules for m in WATCH}))"
    watch = ["httpx", "goldenkit.providers.openai", "goldenkit.providers.ollama", "goldenkit.providers.adk"]
    out = subprocess.run(
        [sys.executable, "-c", f"WATCH = {watch!r}\n" + probe], capture_output=True, text=True, check=True
    )
    loaded: dict[str, bool] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def test_a_callable_provider_loads_neither_the_http_stack_nor_adk() -> None:
    loaded = _fresh("import goldenkit\ngoldenkit.get_provider('callable', fn=lambda case: 'x')")
    assert loaded == dict.fromkeys(loaded, False)


def test_asking_for_a_builtin_loads_that_one() -> None:
    loaded = _fresh("import goldenkit\ngoldenkit.get_provider('openai', model='m', base_url='http://127.0.0.1:9')")
    assert loaded["goldenkit.providers.openai"] and loaded["httpx"]
    assert not loaded["goldenkit.providers.adk"]


def test_names_list_every_builtin_and_an_unknown_name_names_them() -> None:
    assert set(BUILTINS) <= set(provider_names())
    with pytest.raises(ConfigError, match=r"unknown provider 'nope' \(known: ") as err:
        get_provider("nope")
    known = str(err.value).split("(known: ", 1)[1].rstrip(")").split(", ")
    assert set(BUILTINS) <= set(known)  # the built-ins not asked for yet are named too


def test_a_builtin_name_cannot_be_taken_without_replace() -> None:
    loaded = _fresh(
        "from goldenkit.providers import register_provider\n"
        "try:\n"
        "    register_provider('ollama', lambda **kw: None)\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    assert loaded["goldenkit.providers.ollama"]  # loaded first, so the clash is seen at once
    with pytest.raises(ConfigError, match="provider 'ollama' is already registered"):
        register_provider("ollama", lambda **kw: None)
