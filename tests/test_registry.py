"""The provider and grader registries: built-ins load on first use, by name, and keep their names."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from goldenkit.errors import ConfigError
from goldenkit.graders import get_grader, register_grader
from goldenkit.graders._base import BUILTINS as GRADERS
from goldenkit.providers import BUILTINS, get_provider, provider_names, register_provider

WATCH = ["httpx", "goldenkit.providers._openai", "goldenkit.providers._ollama", "goldenkit.providers._adk"]


def _fresh(code: str, watch: list[str] = WATCH) -> dict[str, bool]:
    """Run ``code`` in a fresh interpreter; which of the ``watch`` modules it imported."""
    probe = code + "\nimport json, sys\nprint(json.dumps({m: m in sys.modules for m in WATCH}))"
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
    assert loaded["goldenkit.providers._openai"] and loaded["httpx"]
    assert not loaded["goldenkit.providers._adk"]


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
    assert loaded["goldenkit.providers._ollama"]  # loaded first, so the clash is seen at once
    with pytest.raises(ConfigError, match="provider 'ollama' is already registered"):
        register_provider("ollama", lambda **kw: None)


def test_a_builtin_replaced_before_it_was_loaded_stays_replaced() -> None:
    """Loading every built-in later (to list them) neither overwrites the replacement nor clashes with it."""
    code = (
        "from goldenkit.providers import get_provider, provider_names, register_provider\n"
        "from goldenkit.graders import get_grader, grader_names, register_grader\n"
        "register_provider('openai', lambda **kw: 'mine', replace=True)\n"
        "register_grader('contract', lambda **kw: 'my grader', replace=True)\n"
        "assert 'ollama' in provider_names() and 'trajectory' in grader_names()\n"
        "print(get_provider('openai'), get_grader('contract'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["mine my grader"]


def test_asking_for_a_grader_loads_that_one_and_a_builtin_grader_name_clashes() -> None:
    graders = ["goldenkit.graders._contract", "goldenkit.graders._trajectory", "goldenkit.graders._rubrics"]
    loaded = _fresh("import goldenkit.graders\ngoldenkit.graders.get_grader('contract')", graders)
    assert loaded == {
        "goldenkit.graders._contract": True,
        "goldenkit.graders._trajectory": False,
        "goldenkit.graders._rubrics": False,
    }
    with pytest.raises(ConfigError, match="grader 'trajectory' is already registered"):
        register_grader("trajectory", lambda **kw: None)
    with pytest.raises(ConfigError, match=r"unknown grader 'nope' \(known: ") as err:
        get_grader("nope")
    known = str(err.value).split("(known: ", 1)[1].rstrip(")").split(", ")
    assert set(GRADERS) <= set(known)  # other tests may have registered more
