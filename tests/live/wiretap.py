"""A recording reverse proxy of the live tests' own: what the model server received, byte for byte.

:class:`Wiretap` listens on 127.0.0.1 (a thread of this process), forwards each request to the
upstream server unchanged (the same method, path, headers and body) and sends the upstream's
reply back whole (status, content type, body; a streamed reply is relayed with its chunks joined,
which keeps its server-sent events as they were). Every request's JSON body is kept in
``bodies``, so a test asserts on the wire as well as on the outcome.
"""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


class Wiretap:
    """``with Wiretap("http://127.0.0.1:PORT/v1") as tap:`` then point the client at ``tap.base_url``."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.path = parts.path.rstrip("/")
        self.bodies: list[Any] = []
        self.lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{self.path}"

    def __enter__(self) -> Wiretap:
        tap = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with tap.lock:
                    tap.bodies.append(json.loads(body) if body else None)
                conn = http.client.HTTPConnection(tap.host, tap.port, timeout=120)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request("POST", self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                self.send_response(resp.status)
                self.send_header("Content-Type", resp.getheader("content-type") or "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def chat_bodies(self) -> list[dict[str, Any]]:
        with self.lock:
            return [b for b in self.bodies if isinstance(b, dict) and "messages" in b]
