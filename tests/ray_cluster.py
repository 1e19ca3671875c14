"""One local Ray cluster for every Ray test of a session (Ray takes seconds to start).

``ray_cluster``: a session fixture that starts ``ray.init(num_cpus=2)`` once and
shuts it down at the end; a module that imports it while the cluster is up reuses it.
``head_node()``: a separate cluster started as ``ray start --head`` on 127.0.0.1 (for
``--ray-address``), stopped by killing the process group it was started in.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    ray = pytest.importorskip("ray")  # the `ray` extra, part of `dev`
    if ray.is_initialized():  # another test module started it
        yield
        return
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    try:
        yield
    finally:
        ray.shutdown()


def free_port() -> int:
    with socket.socket() as s:  # an ephemeral port: outside Ray's own worker port range
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def head_node(log: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """``ray start --head --block`` on a free port, with a token of its own; yields ``127.0.0.1:PORT``
    and the environment a driver needs to connect (the token); stopped by its PID."""
    port = free_port()
    ray_cli = Path(sys.executable).parent / "ray"
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(ray_cli),
                "start",
                "--head",
                "--block",
                "--port",
                str(port),
                "--node-ip-address",
                "127.0.0.1",
                "--num-cpus",
                "2",
                "--include-dashboard",
                "false",
                "--disable-usage-stats",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while b"will now block" not in log.read_bytes():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray start --head did not come up: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"127.0.0.1:{port}", env
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the head's GCS and raylet are in its process group
        proc.wait(10)
