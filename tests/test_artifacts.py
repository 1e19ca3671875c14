"""The agent's artifacts in its version: the hash rule, computed independently, and through goldenkit run / compare."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from factories import row, write_dataset

from goldenkit._artifacts import artifact_entries, artifacts_sha256
from goldenkit.cli import main
from goldenkit.errors import InputError
from goldenkit.report import run_key_table
from goldenkit.results import read_run


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def by_hand(entries: dict[str, bytes]) -> str:
    """The documented rule written out: name NUL sha256(bytes), lines sorted by bytes, each + LF, SHA-256."""
    lines = sorted(f"{name}\0{sha(data)}".encode() for name, data in entries.items())
    return sha(b"".join(line + b"\n" for line in lines))


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    (root / "prompts" / "sub").mkdir(parents=True)
    (root / "prompts" / "system.md").write_bytes(b"You are a support agent.\n")
    (root / "prompts" / "sub" / "refunds.md").write_bytes("Refunds within 30 days. Ünïcode.\n".encode())
    (root / "prompts" / ".hidden.swp").write_bytes(b"editor junk")
    (root / "prompts" / ".git").mkdir()
    (root / "prompts" / ".git" / "HEAD").write_bytes(b"ref: refs/heads/main\n")
    (root / "prompts" / "empty").mkdir()
    (root / "tools.json").write_bytes(b'[{"name": "lookup"}]')
    return root


def test_the_rule_matches_a_computation_by_hand(agent: Path) -> None:
    expected = by_hand(
        {
            "prompts/system.md": b"You are a support agent.\n",
            "prompts/sub/refunds.md": "Refunds within 30 days. Ünïcode.\n".encode(),
            "tools.json": b'[{"name": "lookup"}]',
        }
    )
    assert artifacts_sha256([agent / "prompts", agent / "tools.json"]) == expected
    assert artifacts_sha256([agent / "tools.json", agent / "prompts"]) == expected  # order of the paths
    assert artifacts_sha256([str(agent / "tools.json"), agent / "prompts", agent / "tools.json"]) == expected
    assert artifacts_sha256([]) is None
    assert artifacts_sha256(agent / "tools.json") == by_hand({"tools.json": b'[{"name": "lookup"}]'})


def test_what_changes_the_hash_and_what_does_not(agent: Path, tmp_path: Path) -> None:
    before = artifacts_sha256([agent / "prompts"])
    (agent / "prompts" / ".another-hidden").write_text("x")
    (agent / "prompts" / "empty" / "deeper").mkdir()
    assert artifacts_sha256([agent / "prompts"]) == before  # hidden files and empty folders add nothing
    moved = tmp_path / "elsewhere" / "prompts"
    moved.parent.mkdir()
    os.rename(agent / "prompts", moved)
    assert artifacts_sha256([moved]) == before  # where the folder lies does not matter
    (moved / "sub" / "refunds.md").write_bytes(b"Refunds within 14 days.\n")
    assert artifacts_sha256([moved]) != before
    os.rename(moved, moved.with_name("prompts-v2"))
    assert artifact_entries([moved.with_name("prompts-v2")])[0].startswith("prompts-v2/")
    hidden = tmp_path / ".env.md"
    hidden.write_text("given by name")
    assert artifact_entries([hidden]) == [f".env.md\0{sha(b'given by name')}"]


def test_symbolic_links_are_followed(agent: Path, tmp_path: Path) -> None:
    links = tmp_path / "links"
    links.mkdir()
    (links / "tools.json").symlink_to(agent / "tools.json")
    (links / "prompts").symlink_to(agent / "prompts")
    expected = by_hand(
        {
            "links/tools.json": b'[{"name": "lookup"}]',
            "links/prompts/system.md": b"You are a support agent.\n",
            "links/prompts/sub/refunds.md": "Refunds within 30 days. Ünïcode.\n".encode(),
        }
    )
    assert artifacts_sha256([links]) == expected
    (links / "loop").symlink_to(links)
    with pytest.raises(InputError, match="contains itself"):
        artifacts_sha256([links])
    (links / "loop").unlink()
    (links / "gone").symlink_to(tmp_path / "nothing-here")
    with pytest.raises(InputError, match=r"links/gone: a dangling symbolic link"):
        artifacts_sha256([links])


def test_bad_paths_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"artifact .*/nope.md: no such file or folder"):
        artifacts_sha256([tmp_path / "nope.md"])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "p.md").write_text("one")
    (tmp_path / "b" / "p.md").write_text("two")
    with pytest.raises(InputError, match="'p.md' is also given with other content"):
        artifacts_sha256([tmp_path / "a" / "p.md", tmp_path / "b" / "p.md"])


# ---------------------------------------------------------------------------- through the CLI


def dataset(root: Path) -> Path:
    case = {"expect": {"must_contain": ["yes"]}}
    d = write_dataset(root, [row(f"r{i}", {"prompt": f"q{i}", **case}) for i in range(3)], version="1")
    fx = root / "fx"
    fx.mkdir()
    (fx / "meta.json").write_text(json.dumps({"schema_version": 1, "agent": "a", "model_id": "m-1"}))
    recs = [{"row_id": f"r{i}", "repeat": 0, "turns": [{"text": "yes", "tool_calls": []}]} for i in range(3)]
    (fx / "fixtures.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return d


def run(root: Path, run_id: str, *extra: str) -> int:
    argv = ["run", str(root / "ds"), "--provider", "fixtures", "--fixtures", str(root / "fx"), "--run-id", run_id]
    return main([*argv, "--quiet", *extra])


def test_artifacts_in_the_run_key_the_resume_and_the_comparison(
    agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    dataset(tmp_path)
    assert run(tmp_path, "plain") == 0
    assert "artifacts_sha256" not in read_run("plain").manifest["agent_version"]  # as before: no new field
    assert run(tmp_path, "a1", "--artifact", str(agent / "prompts"), "--artifact", str(agent / "tools.json")) == 0
    assert run(tmp_path, "a2", "--artifact", str(agent / "tools.json"), "--artifact", str(agent / "prompts")) == 0
    m1 = read_run("a1").manifest
    expected = artifacts_sha256([agent / "prompts", agent / "tools.json"])
    assert m1["agent_version"]["artifacts_sha256"] == expected
    assert read_run("a2").manifest["agent_version"] == m1["agent_version"]
    assert m1["config"]["extra"]["artifacts"] == [str(agent / "prompts"), str(agent / "tools.json")]
    assert run_key_table(m1).loc["agent artifacts sha256", "value"] == expected
    assert "agent artifacts sha256" not in run_key_table(read_run("plain").manifest).index
    capsys.readouterr()
    assert main(["compare", "a1", "a2"]) == 0

    (agent / "prompts" / "system.md").write_text("You are a terse agent.\n")
    assert run(tmp_path, "a3", "--artifact", str(agent / "prompts"), "--artifact", str(agent / "tools.json")) == 0
    capsys.readouterr()
    assert main(["compare", "a1", "a3"]) == 4
    assert "agent_version.artifacts_sha256 differs" in capsys.readouterr().err
    assert main(["compare", "plain", "a1"]) == 4
    assert "agent_version.artifacts_sha256 differs: (none) vs" in capsys.readouterr().err

    # a resume with other artifacts is refused; the same ones resume
    assert run(tmp_path, "a1", "--artifact", str(agent / "prompts")) == 1
    assert "cannot resume run a1" in capsys.readouterr().err
    assert run(tmp_path, "plain") == 0  # a run without artifacts resumes as it always did

    assert run(tmp_path, "bad", "--artifact", str(tmp_path / "missing.md")) == 1
    assert "artifact " + str(tmp_path / "missing.md") + ": no such file or folder" in capsys.readouterr().err
    assert not (tmp_path / "results" / "bad").exists()


def test_run_table_artifacts_are_relative_to_the_config_file(
    agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = dataset(tmp_path)
    (ds / "goldenkit.toml").write_text('[run]\nartifacts = ["../agent/tools.json"]\n')
    monkeypatch.chdir(agent / "prompts")  # anywhere else: the path is the config file's
    assert run(tmp_path, "cfg") == 0
    man = read_run(agent / "prompts" / "results" / "cfg").manifest
    assert man["agent_version"]["artifacts_sha256"] == artifacts_sha256([agent / "tools.json"])
    (ds / "goldenkit.toml").write_text('[run]\nartifacts = "tools.json"\n')
    assert run(tmp_path, "cfg2") == 1
    assert "[run] artifacts = 'tools.json' is not a valid list of paths" in capsys.readouterr().err


def test_the_history_protocol_tells_artifacts_apart_and_keeps_old_ids() -> None:
    from goldenkit.history._run_index import protocol_id

    old = {"repeats": 3, "graders": {"contract": "1"}, "agent_version": {"model_id": "m"}}
    with_a = {**old, "agent_version": {"model_id": "m", "artifacts_sha256": "a" * 64}}
    with_b = {**old, "agent_version": {"model_id": "m", "artifacts_sha256": "b" * 64}}
    assert protocol_id(old) == protocol_id({**old, "agent_version": {"model_id": "other"}})
    assert len({protocol_id(old), protocol_id(with_a), protocol_id(with_b)}) == 3
