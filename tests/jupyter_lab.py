"""A real JupyterLab server for the notebook widget tests, started and stopped by the test.

:func:`jupyter_lab` starts ``python -m jupyterlab`` on 127.0.0.1 on a free port with a
random token, serving a temporary folder, with Jupyter's config, data, runtime and
settings folders inside it (nothing of the user's is read or written) and a
``python3`` kernel that is this interpreter. It waits until the server answers,
yields a :class:`Lab`, and on the way out shuts every kernel down through the
server's API, then stops the server by its PID (SIGTERM, then SIGKILL after 20 s)
and whatever is left of its process group.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx


@dataclass
class Lab:
    """A running JupyterLab: where it serves from, its URL and token, its process and its log."""

    root: Path
    url: str
    token: str
    proc: subprocess.Popen[bytes]
    log: Path

    def tree(self, notebook: str) -> str:
        """The URL that opens ``notebook`` (relative to the root) in JupyterLab."""
        return f"{self.url}/lab/tree/{notebook}?reset&token={self.token}"  # reset: no tabs of an earlier page

    def api(self, method: str, path: str) -> Any:
        r = httpx.request(method, f"{self.url}{path}", headers={"Authorization": f"token {self.token}"}, timeout=10)
        r.raise_for_status()
        return r.json() if r.content else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _isolated_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON"))}
    dirs = {
        "JUPYTER_CONFIG_DIR": "config",
        "JUPYTER_DATA_DIR": "data",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "IPYTHONDIR": "ipython",
        "JUPYTERLAB_SETTINGS_DIR": "settings",
        "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
    }
    for var, sub in dirs.items():
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(home / sub)
    kernel = home / "data" / "kernels" / "python3"
    kernel.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3",
        "language": "python",
    }
    (kernel / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    news = home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True, exist_ok=True)
    news.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")  # no toast
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    return env


def _wait_until_up(lab: Lab, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lab.proc.poll() is not None:
            raise RuntimeError(f"jupyterlab exited {lab.proc.returncode}: {lab.log.read_text()[-3000:]}")
        try:
            lab.api("GET", "/api/status")
            return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise TimeoutError(f"jupyterlab did not answer in {timeout} s: {lab.log.read_text()[-3000:]}")


def _stop(lab: Lab) -> None:
    try:
        for kernel in lab.api("GET", "/api/kernels") or []:
            lab.api("DELETE", f"/api/kernels/{kernel['id']}")
    except httpx.HTTPError:
        pass
    lab.proc.send_signal(signal.SIGTERM)
    try:
        lab.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        lab.proc.kill()
        lab.proc.wait()
    try:  # a kernel the server left behind is in its process group
        os.killpg(lab.proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@contextmanager
def jupyter_lab(root: Path, home: Path) -> Iterator[Lab]:
    """JupyterLab serving ``root``, its Jupyter folders under ``home`` (see the module docstring)."""
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",  # CI runs as root
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    log = home / "jupyterlab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=_isolated_env(home),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    lab = Lab(root, f"http://127.0.0.1:{port}", token, proc, log)
    try:
        _wait_until_up(lab)
        yield lab
    finally:
        _stop(lab)
