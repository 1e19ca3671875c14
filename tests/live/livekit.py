"""Helpers of the live tests: the configured server, datasets, and llama.cpp servers of our own."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _shared import shared_dir

from goldenkit.providers._base import Provider, get_provider

BASE_URL_ENV = "GOLDENKIT_LIVE_BASE_URL"
PROVIDER_ENV = "GOLDENKIT_LIVE_PROVIDER"
API_KEY_ENV_ENV = "GOLDENKIT_LIVE_API_KEY_ENV"
MODEL_ENV = "GOLDENKIT_LIVE_MODEL"
CONTEXT_ENV = "GOLDENKIT_LIVE_CONTEXT_TOKENS"

#: ``../shared/real-server/setup.sh`` beside the checkout: builds and starts the llama.cpp server.
SETUP_SH = shared_dir("real-server", "setup.sh")


def skip_reason() -> str:
    return (
        f"{BASE_URL_ENV} is not set: live tests skipped (point it at an OpenAI-compatible or Ollama server, "
        f"see docs/live.md; .ci/run starts a llama.cpp server for them)"
    )


def require_live() -> None:
    """Skip the calling test module (one line in the summary) when no live server is named."""
    import pytest

    if live_config() is None:
        pytest.skip(skip_reason(), allow_module_level=True)


@dataclass(frozen=True)
class LiveConfig:
    base_url: str
    provider: str = "openai"
    api_key_env: str | None = None
    model: str = "tiny"
    context_tokens: int = 2048

    @property
    def random_model(self) -> bool:
        """The CI model (``tiny``: random weights, gibberish answers): the tests then also
        assert what only random text guarantees (many flaky rows, wrong tool arguments)."""
        return self.model == "tiny"

    def describe(self) -> str:
        key = f", key from ${self.api_key_env}" if self.api_key_env else ""
        return f"{self.provider} server {self.base_url}, model {self.model}{key}"

    def provider_options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"model": self.model, "base_url": self.base_url}
        if self.api_key_env:
            opts["api_key_env"] = self.api_key_env
        return opts

    def cli_args(self) -> list[str]:
        args = ["--provider", self.provider, "--base-url", self.base_url, "--model", self.model]
        if self.api_key_env:
            args += ["--api-key-env", self.api_key_env]
        return args


def live_config() -> LiveConfig | None:
    url = os.environ.get(BASE_URL_ENV, "").strip()
    if not url:
        return None
    provider = os.environ.get(PROVIDER_ENV, "").strip() or "openai"
    if provider not in ("openai", "ollama"):
        raise RuntimeError(f"{PROVIDER_ENV}={provider!r}: expected openai or ollama")
    return LiveConfig(
        base_url=url,
        provider=provider,
        api_key_env=os.environ.get(API_KEY_ENV_ENV, "").strip() or None,
        model=os.environ.get(MODEL_ENV, "").strip() or "tiny",
        context_tokens=int(os.environ.get(CONTEXT_ENV, "") or 2048),
    )


def make_provider(cfg: LiveConfig, **settings: Any) -> Provider:
    """The configured provider with ``settings`` (temperature, seed, max_tokens, ...)."""
    return get_provider(cfg.provider, **cfg.provider_options(), **settings)


def write_dataset(root: Path, rows: Iterable[dict[str, Any]], *, name: str = "live") -> Path:
    """A dataset folder from ``{"id", "slice"?, "case"}`` rows (split dev)."""
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "dataset.json").write_text(
        json.dumps(
            {"name": name, "version": "1.0.0", "changelog": [{"version": "1.0.0", "date": "2026-01-01", "why": "live"}]}
        ),
        encoding="utf-8",
    )
    lines = [json.dumps({"id": r["id"], "slice": r.get("slice", "s"), "split": "dev", "case": r["case"]}) for r in rows]
    (d / "dataset.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return d


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def show(title: str, **numbers: Any) -> None:
    """Print the real numbers a test saw (visible with ``pytest -s`` and in failure reports)."""
    body = ", ".join(f"{k}={v}" for k, v in numbers.items())
    print(f"\n[live] {title}: {body}", flush=True)


class OwnServer:
    """A llama.cpp server of our own, started with setup.sh (``PORT``, ``WORKDIR``, ``API_KEY``).

    ``setup.sh`` reuses the built virtualenv when it is present (seconds); the
    first build on a machine takes minutes. Stopped by the PID setup.sh recorded.
    """

    def __init__(self, workdir: Path, *, api_key: str | None = None, port: int | None = None) -> None:
        self.workdir = workdir
        self.api_key = api_key
        self.port = port or free_port()
        self.log = workdir / "setup.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        try:
            return int((self.workdir / "server.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def start(self) -> OwnServer:
        env = dict(os.environ, PORT=str(self.port), WORKDIR=str(self.workdir))
        # llama_cpp.server also reads its settings from the environment: an API_KEY that
        # is set at all, even empty, turns authentication on.
        env.pop("API_KEY", None)
        if self.api_key:
            env["API_KEY"] = self.api_key
        self.workdir.mkdir(parents=True, exist_ok=True)
        with self.log.open("a") as fh:
            proc = subprocess.run(
                ["bash", str(SETUP_SH)], env=env, stdout=fh, stderr=subprocess.STDOUT, timeout=1200, check=False
            )
        if proc.returncode != 0:
            self.kill()  # setup.sh leaves a server that did not answer running
            raise RuntimeError(f"setup.sh exited {proc.returncode}; see {self.log}:\n{self.log.read_text()[-2000:]}")
        return self

    def kill(self, sig: int = signal.SIGTERM, wait: float = 10.0) -> None:
        """Stop the server process by its PID and wait until it is gone."""
        pid = self.pid
        if pid is None:
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        end = time.monotonic() + wait
        while time.monotonic() < end:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            os.kill(pid, signal.SIGKILL)
        (self.workdir / "server.pid").unlink(missing_ok=True)

    def __enter__(self) -> OwnServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()
