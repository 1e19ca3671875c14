"""Rows with nothing to grade are said out loud: which grader checks what, validate/import, and the run's refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from factories import row, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import main
from goldenkit.errors import ConfigError, DatasetError
from goldenkit.formats import normalize_case
from goldenkit.graders import build_graders
from goldenkit.graders._gradable import Gradability, check_gradable, checkers, describe, gradability

RUBRIC_JUDGE = '[judge]\nprovider = "openai"\nmodel = "judge-m"\n[judge.options]\nbase_url = "http://127.0.0.1:9"\n'


def case(raw: dict, rid: str = "r") -> object:
    return normalize_case(raw, None, row_id=rid)


@pytest.mark.parametrize(
    ("raw", "grader", "checkable"),
    [
        ({"prompt": "q", "expect": {"must_contain": ["a"]}}, "contract", True),
        ({"prompt": "q", "expect": {"turns": [{"regex": ["a"]}]}}, "contract", True),
        ({"prompt": "q", "expect": {"must_contain": []}}, "contract", False),  # an empty list checks nothing
        ({"prompt": "q", "expect": {"layer": "e2e"}}, "contract", False),  # golden metadata is no check
        ({"prompt": "q"}, "contract", False),
        ({"prompt": "q", "expect": {"tools": [{"name": "f"}]}}, "trajectory", True),
        ({"prompt": "q", "expect": {"must_contain": ["a"]}}, "trajectory", False),
        ({"prompt": "q", "expect": {"reference": "the answer"}}, "reference", True),
        ({"prompt": "q", "expect": {"must_contain": ["a"]}}, "reference", False),
        ({"prompt": "q", "expect": {"retrieval": ["doc-1"]}}, "retrieval", True),
        ({"prompt": "q", "expect": {"rag": ["doc-1"]}}, "retrieval", True),
        ({"prompt": "q", "expect": {"must_contain": ["a"]}}, "retrieval", False),
        ({"prompt": "q", "expect": {"final_state": {"k": 1}}}, "state", True),
        ({"prompt": "q", "expect": {"must_contain": ["a"]}}, "state", False),
    ],
)
def test_checkable_per_grader(raw: dict, grader: str, checkable: bool) -> None:
    graders = build_graders({"graders": {"use": [grader]}})
    hard, soft = checkers(graders, case(raw))  # type: ignore[arg-type]
    assert (hard == [grader]) is checkable and soft == []


def test_adk_turns_are_checked_by_trajectory_and_reference_unless_the_criteria_leave_them_out() -> None:
    raw = {
        "eval_id": "e",
        "conversation": [
            {
                "invocation_id": "i",
                "user_content": {"parts": [{"text": "hi"}], "role": "user"},
                "final_response": {"parts": [{"text": "hello"}], "role": "model"},
                "intermediate_data": {"tool_uses": [{"name": "f", "args": {}}]},
            }
        ],
    }
    graders = build_graders({"graders": {"use": ["trajectory", "reference"]}})
    assert checkers(graders, case(raw)) == (["trajectory", "reference"], [])  # type: ignore[arg-type]
    only_tools = {**raw, "criteria": {"tool_trajectory_avg_score": 1.0}}
    assert checkers(graders, case(only_tools)) == (["trajectory"], [])  # type: ignore[arg-type]


def test_a_case_selecting_graders_narrows_what_checks_it() -> None:
    graders = build_graders({"graders": {"use": ["contract", "reference"]}})
    raw = {"prompt": "q", "graders": ["reference"], "expect": {"must_contain": ["a"]}}
    assert checkers(graders, case(raw)) == ([], [])  # type: ignore[arg-type]


def test_judge_checks_every_row_and_a_soft_one_is_named_apart(tmp_path: Path) -> None:
    (tmp_path / "rubric.md").write_text("Is the answer helpful?", encoding="utf-8")
    cfg = {
        "_path": str(tmp_path / "goldenkit.toml"),
        "graders": {"use": ["contract", "judge"]},
        "judge": {"provider": "openai", "model": "judge-m", "rubric": "rubric.md", "options": {"base_url": "http://x"}},
    }
    graders = build_graders(cfg)
    cases = {"a": case({"prompt": "q", "expect": {"must_contain": ["x"]}}, "a"), "b": case({"prompt": "q"}, "b")}
    report = gradability(graders, cases)  # type: ignore[arg-type]
    assert report.ungradable == () and dict(report.soft_only) == {"b": ("judge",)}
    check_gradable(report, 0.0)  # a soft grader's row is recorded evidence: not refused


def test_check_gradable_is_a_share_and_names_the_rows() -> None:
    report = Gradability(rows=4, ungradable=("b", "d"), soft_only={}, graders=("contract",))
    check_gradable(report, 0.5)
    with pytest.raises(
        DatasetError, match=r"nothing to grade in 2 of 4 rows .*: b, d; .*50\.0% > max_ungradable 0\.25"
    ):
        check_gradable(report, 0.25)
    with pytest.raises(ConfigError, match="between 0 and 1"):
        check_gradable(report, 1.5)
    many = Gradability(rows=12, ungradable=tuple(f"r{i}" for i in range(12)), soft_only={}, graders=())
    assert describe(many) is not None and describe(many).endswith("r9, ... (2 more)")  # type: ignore[union-attr]


# ---------------------------------------------------------------------------- the CLI


def dataset(root: Path, rows: list[dict]) -> Path:
    return write_dataset(root, [row(f"r{i}", c) for i, c in enumerate(rows)], version="1")


ROWS = [
    {"prompt": "q0", "expect": {"must_contain": ["yes"]}},
    {"prompt": "q1"},
    {"prompt": "q2", "expect": {"reference": "yes"}},
    {"prompt": "q3", "expect": {"layer": "e2e"}},
]


def test_validate_counts_and_names_rows_with_nothing_to_grade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = dataset(tmp_path, ROWS)
    assert main(["dataset", "validate", str(ds)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ok: t 1: 4 rows")
    assert out[1] == (
        "warning: nothing to grade in 2 of 4 rows (no expectation the configured graders contract, trajectory, "
        "reference can check): r1, r3"
    )
    assert main(["dataset", "validate", str(ds), "--graders", "contract"]) == 0
    assert "nothing to grade in 3 of 4 rows" in capsys.readouterr().out
    (ds / "goldenkit.toml").write_text('[graders]\nuse = ["reference"]\n', encoding="utf-8")
    assert main(["dataset", "validate", str(ds)]) == 0  # the config beside the dataset, as goldenkit run
    assert "(no expectation the configured graders reference can check): r0, r1, r3" in capsys.readouterr().out


def test_import_counts_and_names_rows_with_nothing_to_grade(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "golden.jsonl"
    rows = [{"id": "a", "prompt": "p", "expect": {"must_contain": ["x"]}}, {"id": "b", "prompt": "p"}]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["dataset", "import", str(src), "-o", str(tmp_path / "out"), "--format", "golden"]) == 0
    out = capsys.readouterr().out
    assert (
        "imported 2 rows" in out and "warning: nothing to grade in 1 of 2 rows" in out and out.rstrip().endswith(": b")
    )


def run_args(ds: Path, srv: FakeModelServer, *extra: str) -> list[str]:
    return ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m", "--quiet", *extra]


def test_run_refuses_rows_with_nothing_to_grade_before_the_first_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    ds = dataset(tmp_path, ROWS)
    with FakeModelServer(default=Reply.text("yes")) as srv:
        assert main(run_args(ds, srv, "--run-id", "a")) == 1
        err = capsys.readouterr().err
        assert "nothing to grade in 2 of 4 rows" in err and ": r1, r3;" in err and "max_ungradable 0" in err
        assert main(run_args(ds, srv, "--run-id", "b", "--max-ungradable", "0.4")) == 1
        assert srv.count() == 0 and not (tmp_path / "results" / "a").exists()  # nothing called, nothing written
        assert main(run_args(ds, srv, "--run-id", "c", "--max-ungradable", "0.5")) == 0
        assert srv.count() == 4
        (ds / "goldenkit.toml").write_text("[run]\nmax_ungradable = 0.5\n", encoding="utf-8")
        assert main(run_args(ds, srv, "--run-id", "d")) == 0
