"""``goldenkit leaderboard`` and ``goldenkit benchmark`` end to end through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from factories import tiny_dataset
from fakeserver import FakeModelServer, Reply
from run_factory import manifest, outcomes, write_run

from goldenkit.cli import main
from goldenkit.results import read_run

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = ROOT / "datasets" / "support-agent"


def _runs(tmp_path: Path) -> list[str]:
    a = [(f"r{i}", "x" if i < 20 else "y", ("PASS", "PASS", "PASS")) for i in range(40)]
    b = [(f"r{i}", "x" if i < 20 else "y", ("FAIL",) * 3 if i < 15 else ("PASS", "ERROR", "PASS")) for i in range(40)]
    pa = write_run(tmp_path, manifest("good", model_id="m-good"), outcomes(a, run_id="good"))
    pb = write_run(tmp_path, manifest("weak", model_id="m-weak"), outcomes(b, run_id="weak"))
    return [str(pa), str(pb)]


def test_text_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leaderboard", *_runs(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "top    1     m-good (good)  m-good  40/40" in out  # the run's label (here its model), then its id
    assert "A      2     m-weak (weak)  m-weak  25/40" in out
    assert "good  weak" in out and "yes" in out  # 15 vs 0: significant


def test_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leaderboard", *_runs(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) >= {"table", "pairs"}
    assert [r["run_id"] for r in doc["table"]] == ["good", "weak"]
    weak = doc["table"][1]
    assert weak["k"] == 25 and weak["n"] == 40 and isinstance(weak["pass_rate"], float)
    assert weak["passk_left_out"] == 25 and weak["group"] == "A"
    pair = doc["pairs"][0]
    assert (pair["b_count"], pair["c_count"], pair["significant"]) == (15, 0, True)


def test_slice_and_null_for_nan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leaderboard", *_runs(tmp_path), "--json", "--slice", "y"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["k"] for r in doc["table"]] == [20, 20]
    assert [r["group"] for r in doc["table"]] == ["top", "top"]
    assert doc["pairs"][0]["diff"] == 0.0
    assert main(["leaderboard", *_runs(tmp_path), "--slice", "nope"]) == 1
    assert "no such slice" in capsys.readouterr().err


def test_not_comparable_exits_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = _runs(tmp_path)
    odd = write_run(tmp_path, manifest("odd", repeats=1), outcomes([("r0", "x", ("PASS",))], run_id="odd"))
    assert main(["leaderboard", *runs, str(odd)]) == 4
    err = capsys.readouterr().err
    assert "run odd vs good: repeats differ: 3 vs 1" in err


def test_unknown_run_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leaderboard", str(tmp_path / "missing"), "--results-dir", str(tmp_path)]) == 1
    assert "no run found" in capsys.readouterr().err


def test_benchmark_models_on_a_real_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = tiny_dataset(tmp_path, 30)

    def responder(req: object) -> Reply:
        body = getattr(req, "json", {})
        number = int(str(body["messages"][-1]["content"]).split()[-1])
        good = body["model"] == "big" or number % 3 != 0
        return Reply.text("yes" if good else "no")

    with FakeModelServer(responder=responder) as srv:
        args = [
            "benchmark",
            str(ds),
            "--provider",
            "openai",
            "--base-url",
            srv.url,
            "--models",
            "big,small",
            "--run-prefix",
            "b1",
            "--results-dir",
            str(tmp_path / "res"),
            "--quiet",
            "--json",
        ]
        assert main(args) == 0
        calls = srv.count()
        out = capsys.readouterr().out
        doc = json.loads(out[out.index("{") :])
        assert [r["run_id"] for r in doc["table"]] == ["b1-big", "b1-small"]
        assert [r["k"] for r in doc["table"]] == [30, 20]
        assert calls == 60
        # resumable like any run: a second call finds every outcome and calls nothing
        assert main(args) == 0
        assert srv.count() == calls
    assert read_run(tmp_path / "res" / "b1-small").manifest["agent_version"]["model_id"] == "small"


def test_benchmark_agents_from_toml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toml = tmp_path / "goldenkit.toml"
    toml.write_text(
        '[graders]\nuse = ["contract", "trajectory"]\n[run]\nrepeats = 3\nsplit = "holdout"\nprovider = "fixtures"\n'
        + "".join(
            f'[[benchmark.agents]]\nname = "{a}"\nfixtures = "{SUPPORT / "fixtures" / a}"\n'
            for a in ("baseline", "candidate")
        )
    )
    code = main(
        [
            "benchmark",
            str(SUPPORT),
            "--config",
            str(toml),
            "--results-dir",
            str(tmp_path / "r"),
            "--run-prefix",
            "demo",
            "--quiet",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    # each run's label (the recorded agent's name), then its run id
    assert "candidate (demo-candidate)  support-sim-1  356/400" in out
    assert "baseline (demo-baseline)    support-sim-1  352/400" in out
    assert "0.5413" in out  # 14 vs 10: exact McNemar p, the worked example


def test_benchmark_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = tiny_dataset(tmp_path, 3)
    assert main(["benchmark", str(ds), "--provider", "openai", "--run-id", "x", "--models", "a"]) == 1
    assert "--run-id does not apply" in capsys.readouterr().err
    assert main(["benchmark", str(ds), "--provider", "openai"]) == 1
    assert "--models" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text('[[benchmark.agents]]\nname = "a"\nmodle = "x"\n')
    assert main(["benchmark", str(ds), "--config", str(bad)]) == 1
    assert "[[benchmark.agents]] #1: modle: unknown key (did you mean model?)" in capsys.readouterr().err


def test_benchmark_with_an_invalid_run_exits_3_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = tiny_dataset(tmp_path, 6)

    def responder(req: object) -> Reply:
        body = getattr(req, "json", {})
        return Reply.text("yes") if body["model"] == "ok" else Reply.status(400, body="bad request")

    with FakeModelServer(responder=responder) as srv:
        args = [
            "benchmark",
            str(ds),
            "--provider",
            "openai",
            "--base-url",
            srv.url,
            "--models",
            "ok,broken",
            "--run-prefix",
            "b2",
            "--results-dir",
            str(tmp_path / "res"),
            "--quiet",
            "--max-retries",
            "0",
        ]
        code = main(args)
    out = capsys.readouterr().out
    assert code == 3  # no evidence, no green: the leaderboard is printed, but the exit says a run is INVALID
    assert "run b2-broken is left out of ranks and groups: INVALID" in out
