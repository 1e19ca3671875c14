"""A hostile review of the core promises (issue 37), one test per way found around them.

Each test goes through the command line (or the public Python API) the way a user would, and fails
on the code before its fix.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest
from fakeserver import FakeModelServer, Recorded, Reply

from goldenkit.cli import main

KEY = "Ab+cd/Ef==12345678Zq"  # a base64-style key, as Azure and others issue them


def _dataset(root: Path, prompts: list[str], toml: str | None = None) -> Path:
    d = root / "ds"
    d.mkdir()
    log = [{"version": "1.0.0", "date": "2026-01-01", "why": "t"}]
    (d / "dataset.json").write_text(json.dumps({"name": "review", "version": "1.0.0", "changelog": log}))
    rows = [
        {"id": f"r{i}", "slice": "s", "split": "dev", "case": {"prompt": p, "expect": {"must_contain": ["x"]}}}
        for i, p in enumerate(prompts)
    ]
    (d / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if toml is not None:
        (d / "goldenkit.toml").write_text(toml)
    return d


def _files_holding(root: Path, needles: dict[str, str]) -> list[str]:
    found = []
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        data = f.read_bytes()
        found += [f"{f.relative_to(root)}: {name}" for name, s in needles.items() if s.encode() in data]
    return found


# ------------------------------------------------------------------ a secret in use, in every spelling

#: the key as an answer or an error may carry it: urllib's default quote keeps "/", a form body
#: writes "+" for a space, many servers write lowercase hex, some JSON writers escape "/" as "\/"
SPELLINGS = {
    "quote": urllib.parse.quote(KEY),
    "quote_plus": urllib.parse.quote_plus(KEY),
    "lower hex": urllib.parse.quote(KEY, safe="").replace("%2B", "%2b").replace("%2F", "%2f").replace("%3D", "%3d"),
    "json slash": KEY.replace("/", "\\/"),
}


def test_a_key_in_use_reaches_no_file_and_no_screen_in_any_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def answer(req: Recorded) -> Reply:
        prompt = req.json["messages"][-1]["content"]
        if prompt == "error":
            return Reply.status(400, body=json.dumps({"error": {"message": "bad key " + SPELLINGS["quote"]}}))
        return Reply.text("x " + SPELLINGS[prompt])

    ds = _dataset(tmp_path, [*SPELLINGS, "error"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REVIEW_KEY", KEY)
    with FakeModelServer(responder=answer) as srv:
        args = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m"]
        code = main([*args, "--api-key-env", "REVIEW_KEY", "--run-id", "k", "--record", "fx", "--max-retries", "0"])
    out = capsys.readouterr()
    assert code == 3  # the 400 is an error nobody's answer caused: the run is INVALID, as intended
    needles = {**SPELLINGS, "the key's tail": KEY[-10:]}
    assert _files_holding(tmp_path, needles) == []
    assert [n for n, s in needles.items() if s in out.out + out.err] == []


# ------------------------------------------------------------------ a value that passes the checks but breaks the run

_AGENT = "def agent(case):\n    return 'x'\n"


@pytest.mark.parametrize("repeats", ["100000000000", "10000000000000000000000000000"])
def test_a_huge_repeats_is_refused_before_the_run_folder_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], repeats: str
) -> None:
    ds = _dataset(tmp_path, ["a", "b"])
    (tmp_path / "review_agent.py").write_text(_AGENT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    code = main(["run", str(ds), "--provider", "callable", "--callable", "review_agent:agent", "--repeats", repeats])
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip().splitlines() == [
        f"goldenkit: goldenkit run: argument --repeats: must be an integer in [1, 1000], got '{repeats}'"
    ]
    assert not (tmp_path / "results").exists()
