"""Model calls through a real forward proxy (Debian's tinyproxy) and to servers with a test CA.

Each test starts tinyproxy on a free 127.0.0.1 port with a generated config and
log file and stops it by its PID. The model servers are tests/fakeserver.py,
plain http or https with a certificate signed by a CA made in the test
(tests/testca.py). The proxy's log is the evidence that a call went through it
(``POST http://...`` for plain http, ``CONNECT host:port`` for https) or not.

Skipped, saying why, only where tinyproxy is not installed; .ci/run installs it
and fails in CI when it cannot.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import factories
import pytest
from factories import row
from fakeserver import FakeModelServer
from testca import make_ca

from goldenkit.cli import main
from goldenkit.results import iter_jsonl

TINYPROXY = shutil.which("tinyproxy") or ("/usr/bin/tinyproxy" if Path("/usr/bin/tinyproxy").exists() else None)
pytestmark = pytest.mark.skipif(
    TINYPROXY is None, reason="tinyproxy is not installed (apt-get install tinyproxy; .ci/run installs it)"
)
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Tinyproxy:
    """tinyproxy in the foreground on a free port; ``log()`` is what it has logged so far."""

    def __init__(self, folder: Path, *, auth: tuple[str, str] | None = None) -> None:
        self.port = free_port()
        self.log_file = folder / "tinyproxy.log"
        conf = folder / "tinyproxy.conf"
        lines = [
            f"Port {self.port}",
            "Listen 127.0.0.1",
            "Timeout 30",
            f'LogFile "{self.log_file}"',
            "LogLevel Info",
            "MaxClients 50",
            "Allow 127.0.0.1",
            "DisableViaHeader Yes",
        ]
        if auth is not None:
            lines.append(f"BasicAuth {auth[0]} {auth[1]}")
        conf.write_text("\n".join(lines) + "\n")
        self.proc = subprocess.Popen(
            [str(TINYPROXY), "-d", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"tinyproxy did not start on port {self.port}: {self.log()}")

    def url(self, userinfo: str = "") -> str:
        return f"http://{userinfo}127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture
def clean_env(monkeypatch):
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


@pytest.fixture
def proxy(tmp_path) -> Iterator[Tinyproxy]:
    p = Tinyproxy(tmp_path)
    try:
        yield p
    finally:
        p.stop()


@pytest.fixture
def ca(tmp_path):
    return make_ca(tmp_path / "ca", "test")


def write_dataset(root: Path, n: int = 2) -> Path:
    d = root / "ds"
    d.mkdir(parents=True)  # a second call in one folder is a mistake
    case = {"prompt": "", "expect": {"must_contain": ["ok"]}}
    return factories.write_dataset(root, [row(f"r{i}", case | {"prompt": f"q{i}"}) for i in range(n)])


def run(tmp_path: Path, url: str, *extra: str, run_id: str = "r") -> int:
    return main(
        [
            "run",
            str(write_dataset(tmp_path / run_id)),
            "--provider",
            "openai",
            "--base-url",
            url,
            "--model",
            "m",
            "--graders",
            "contract",
            "--results-dir",
            str(tmp_path / "res"),
            "--run-id",
            run_id,
            "--quiet",
            "--max-retries",
            "0",
            *extra,
        ]
    )


def outcomes(tmp_path: Path, run_id: str = "r") -> list[dict]:
    return list(iter_jsonl(tmp_path / "res" / run_id / "outcomes.jsonl"))


def test_plain_http_through_http_proxy(tmp_path, clean_env, proxy):
    clean_env.setenv("HTTP_PROXY", proxy.url())
    with FakeModelServer() as srv:
        assert run(tmp_path, srv.url) == 0
        assert srv.count() == 2
    assert proxy.log().count(f"POST {srv.url}/v1/chat/completions") == 2


def test_lowercase_http_proxy_and_all_proxy_are_honoured(tmp_path, clean_env, proxy):
    clean_env.setenv("http_proxy", proxy.url())
    with FakeModelServer() as srv:
        assert run(tmp_path, srv.url, run_id="lower") == 0
    clean_env.delenv("http_proxy")
    clean_env.setenv("ALL_PROXY", proxy.url())
    with FakeModelServer() as srv2:
        assert run(tmp_path, srv2.url, run_id="all") == 0
    log = proxy.log()
    assert f"POST {srv.url}/v1/chat/completions" in log and f"POST {srv2.url}/v1/chat/completions" in log


def test_https_through_the_proxy_with_ssl_cert_file(tmp_path, clean_env, proxy, ca):
    clean_env.setenv("HTTPS_PROXY", proxy.url())
    clean_env.setenv("SSL_CERT_FILE", str(ca.ca_pem))
    with FakeModelServer(tls=ca.server_context()) as srv:
        assert run(tmp_path, srv.url) == 0
        assert srv.count() == 2
    hostport = srv.url.removeprefix("https://")
    assert f"CONNECT {hostport}" in proxy.log()


def test_https_through_the_proxy_with_ca_bundle(tmp_path, clean_env, proxy, ca):
    clean_env.setenv("HTTPS_PROXY", proxy.url())
    with FakeModelServer(tls=ca.server_context()) as srv:
        assert run(tmp_path, srv.url, "--ca-bundle", str(ca.ca_pem)) == 0
        assert srv.count() == 2
    assert f"CONNECT {srv.url.removeprefix('https://')}" in proxy.log()


def test_ca_bundle_in_goldenkit_toml(tmp_path, clean_env, proxy, ca):
    clean_env.setenv("HTTPS_PROXY", proxy.url())
    ds = write_dataset(tmp_path / "toml")
    (ds / "goldenkit.toml").write_text(f'[run]\nca_bundle = "{ca.ca_pem}"\n')
    with FakeModelServer(tls=ca.server_context()) as srv:
        code = main(
            [
                "run",
                str(ds),
                "--provider",
                "openai",
                "--base-url",
                srv.url,
                "--model",
                "m",
                "--graders",
                "contract",
                "--results-dir",
                str(tmp_path / "res"),
                "--quiet",
                "--config",  # a goldenkit.toml that says which CA to trust is the user's own, named
                str(ds / "goldenkit.toml"),
            ]
        )
        assert code == 0 and srv.count() == 2
    assert f"CONNECT {srv.url.removeprefix('https://')}" in proxy.log()


def test_a_wrong_ca_through_the_proxy_is_a_permanent_error_naming_the_certificate_problem(
    tmp_path, clean_env, proxy, ca
):
    other = make_ca(tmp_path / "other", "other")
    clean_env.setenv("HTTPS_PROXY", proxy.url())
    with FakeModelServer(tls=ca.server_context()) as srv:
        code = main(
            [
                "run",
                str(write_dataset(tmp_path)),
                "--provider",
                "openai",
                "--base-url",
                srv.url,
                "--model",
                "m",
                "--graders",
                "contract",
                "--results-dir",
                str(tmp_path / "res"),
                "--run-id",
                "r",
                "--quiet",
                "--ca-bundle",
                str(other.ca_pem),
            ]
        )
        assert srv.count() == 0
    assert code == 3
    recs = outcomes(tmp_path)
    assert all(r["verdict"] == "ERROR" and r["attempts"] == 1 for r in recs)  # permanent: not retried
    assert all("TLS certificate verification failed" in r["detail"] for r in recs)
    assert all("unable to get local issuer certificate" in r["detail"] for r in recs)
    assert "CONNECT" in proxy.log()


def test_no_proxy_bypasses_the_proxy(tmp_path, clean_env, proxy):
    clean_env.setenv("HTTP_PROXY", proxy.url())
    clean_env.setenv("NO_PROXY", "localhost,127.0.0.1")
    with FakeModelServer() as srv:
        assert run(tmp_path, srv.url) == 0
        assert srv.count() == 2
    assert "/v1/chat/completions" not in proxy.log()


def test_no_proxy_flag_ignores_the_proxy_variables(tmp_path, clean_env, proxy):
    clean_env.setenv("HTTP_PROXY", proxy.url())
    with FakeModelServer() as srv:
        assert run(tmp_path, srv.url, "--no-proxy") == 0
        assert srv.count() == 2
    assert "/v1/chat/completions" not in proxy.log()


def test_proxy_credentials_are_used_and_never_recorded_or_printed(tmp_path, clean_env, capsys):
    p = Tinyproxy(tmp_path, auth=("proxyuser", "s3cretpw"))
    try:
        clean_env.setenv("HTTP_PROXY", p.url("proxyuser:s3cretpw@"))
        with FakeModelServer() as srv:
            assert run(tmp_path, srv.url, run_id="good") == 0
            assert srv.count() == 2
            clean_env.setenv("HTTP_PROXY", p.url("proxyuser:wr0ngpw@"))
            assert run(tmp_path, srv.url, run_id="bad") == 3
        assert proxy_log_count(p, srv.url) >= 2
    finally:
        p.stop()
    printed = capsys.readouterr()
    written = "".join(f.read_text() for f in (tmp_path / "res").rglob("*") if f.is_file() and f.suffix != ".parquet")
    for text in (printed.out, printed.err, written):
        assert "s3cretpw" not in text and "wr0ngpw" not in text
    bad = outcomes(tmp_path, "bad")
    assert all(r["verdict"] == "ERROR" for r in bad)


def proxy_log_count(p: Tinyproxy, url: str) -> int:
    return p.log().count(f"POST {url}/v1/chat/completions")
