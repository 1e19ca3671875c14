"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``).

No port and no websocket: Chromium reads NUL-terminated JSON commands on its
file descriptor 3 and writes replies and events on 4. :class:`Browser` starts
one Chromium with the network off (every host unresolvable, a dead proxy),
opens one page, and records every request the page makes (``Network`` events),
so a test can click through pages and then check that nothing left file://.
The process is stopped by its PID in :meth:`Browser.close`.
"""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=127.0.0.1:9",
    "--remote-debugging-pipe",
    "--window-size=1280,900",
]


class Browser:
    """One headless Chromium and one page in it."""

    def __init__(self, chromium: str, profile: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds() -> None:  # in the child: the pipe ends become fds 3 and 4 (inheritable)
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.log = profile / "chromium.log"
        with self.log.open("w") as err:
            self.proc = subprocess.Popen(
                [chromium, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                preexec_fn=fds,
                close_fds=False,
            )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable", session=True)

    def _recv(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            ready, _, _ = select.select([self._from_child], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise RuntimeError(f"chromium exited: {self.log.read_text()[-2000:]}")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return dict(json.loads(raw))

    def call(self, method: str, params: dict[str, Any] | None = None, *, session: bool = False) -> dict[str, Any]:
        """Send one command and return its result (events that arrive meanwhile are kept in ``events``)."""
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + 30
        while True:
            reply = self._recv(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result") or {})
            self.events.append(reply)

    def wait_for(self, method: str, since: int, timeout: float = 30) -> dict[str, Any]:
        """The first event ``method`` after event number ``since``, waiting for it."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events[since:]:
                if event.get("method") == method:
                    return event
            since = len(self.events)
            self.events.append(self._recv(deadline))

    def navigate(self, url: str) -> None:
        mark = len(self.events)
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_for("Page.loadEventFired", mark)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click_and_wait(self, selector: str) -> None:
        """Click the first element matching ``selector`` and wait for the page it opens to load."""
        mark = len(self.events)
        self.evaluate(f"document.querySelector({json.dumps(selector)}).click()")
        self.wait_for("Page.loadEventFired", mark)

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=True)
        path.write_bytes(base64.b64decode(data["data"]))

    def requested_urls(self) -> list[str]:
        """Every URL the page asked for (documents, scripts, images, fetches), in order."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        try:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        finally:
            os.close(self._to_child)
            os.close(self._from_child)
