"""Hash shards and their merge: the rule, ``run --shard K/N``, ``goldenkit merge`` and its refusals."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from factories import numbered_rows, write_dataset
from hypothesis import given, settings, strategies as st

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.errors import ConfigError, ResultsError, UsageError
from goldenkit.providers._callable import CallableProvider
from goldenkit.results import outcomes_df, read_run
from goldenkit.runner import RUN_KEY_FIELDS, merge_shards, parse_shard, run_eval, shard_of
from goldenkit.runner._runkey import key_differences

SUPPORT = Path(__file__).resolve().parents[1] / "datasets" / "support-agent"
QUIET = {"progress": False}

# ---------------------------------------------------------------- the rule


# `printf %s refund-0142 | sha256sum` (coreutils), computed outside Python:
REFUND_0142 = "cfa19b052f0e6cb8aa3161a4ab70f402c1e73d224ae291a0f9791298d42ac15f"


def test_the_rule_against_a_digest_computed_by_sha256sum() -> None:
    assert hashlib.sha256(b"refund-0142").hexdigest() == REFUND_0142
    # N a power of two: the low bits of the last hex digit (f = 0b1111)
    assert [shard_of("refund-0142", n) for n in (1, 2, 4, 8, 16)] == [1, 2, 4, 8, 16]
    # N = 3, 5, 15 divide 16 - 1: a hex number is congruent to its digit sum
    digit_sum = sum(int(c, 16) for c in REFUND_0142)
    assert [shard_of("refund-0142", n) for n in (3, 5, 15)] == [digit_sum % n + 1 for n in (3, 5, 15)]
    # more ids, their shards computed by hand from their sha256sum digests the same way
    assert [shard_of("refund-0143", n) for n in (2, 3, 4, 8)] == [1, 2, 3, 7]
    assert [shard_of("ü-1", n) for n in (2, 3, 4, 8)] == [2, 1, 4, 8]  # UTF-8 bytes c3 bc 2d 31


@given(st.text(max_size=40), st.integers(min_value=1, max_value=1000))
def test_the_rule_is_the_integer_of_the_hex_digest_mod_n_plus_one(row_id: str, n: int) -> None:
    digest = hashlib.sha256(row_id.encode("utf-8")).digest()
    expected = int.from_bytes(digest, "big") % n + 1  # the digest's bytes as a big-endian integer
    assert shard_of(row_id, n) == expected
    assert 1 <= shard_of(row_id, n) <= n


@settings(max_examples=60)
@given(st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=60), st.integers(min_value=1, max_value=9))
def test_shards_partition_the_rows(ids: list[str], n: int) -> None:
    parts = [[r for r in ids if shard_of(r, n) == k] for k in range(1, n + 1)]
    assert sum(len(p) for p in parts) == len(ids)  # every row in exactly one shard
    assert sorted(r for p in parts for r in p) == sorted(ids)


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "1/0", "-1/3", "2/3/4", ""])
def test_bad_shard_specs_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="--shard"):
        parse_shard(text)
    assert parse_shard(" 3/8 ") == (3, 8)


def test_run_with_a_bad_shard_spec_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "run",
            str(SUPPORT),
            "--provider",
            "fixtures",
            "--fixtures",
            str(SUPPORT / "fixtures" / "baseline"),
            "--shard",
            "4/3",
            "--results-dir",
            str(tmp_path),
        ]
    )
    assert code == 1
    assert "--shard 4/3: need 1 <= K <= N" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------- shards of a callable run


def answer(case, repeat=0):  # type: ignore[no-untyped-def]
    """A deterministic agent: PASS on even rows, FAIL on odd ones; the repeat shows in the text."""
    word = "done" if int(case.raw["n"]) % 2 == 0 else "nope"
    return f"{word} {repeat}"


def dataset(root: Path, rows: int = 40) -> object:
    made = numbered_rows(
        rows,
        lambda i: {"prompt": "q", "n": i, "expect": {"must_contain": ["done"]}},
        slice=lambda i: f"s{i % 3}",
        split=lambda i: "dev" if i % 4 else "holdout",
    )
    return read_dataset(write_dataset(root, made))


def provider() -> CallableProvider:
    return CallableProvider(fn=answer)


def facts(run: str | Path) -> set[tuple[str, int, str, str]]:
    df = outcomes_df(run)
    return set(zip(df["row_id"], df["repeat"], df["verdict"], df["response"], strict=True))


def test_sharded_runs_partition_the_sampled_rows_and_merge_to_the_unsharded_run(tmp_path: Path) -> None:
    ds, res = dataset(tmp_path), tmp_path / "results"
    sample = {"split": "dev", "per_slice": 7, "seed": 3}
    whole = run_eval(ds, provider(), repeats=2, run_id="whole", results_dir=res, sample=sample, **QUIET)
    shards = [
        run_eval(ds, provider(), repeats=2, run_id=f"s{k}", results_dir=res, sample=sample, shard=(k, 3), **QUIET)
        for k in (1, 2, 3)
    ]
    rows = [set(outcomes_df(s.path)["row_id"]) for s in shards]
    assert set().union(*rows) == set(outcomes_df(whole.path)["row_id"])
    assert sum(len(r) for r in rows) == len(set().union(*rows))  # disjoint
    for k, r in enumerate(rows, 1):
        assert all(shard_of(x, 3) == k for x in r)
    assert read_run(shards[1].path).manifest["shard"] == {"k": 2, "n": 3}
    assert "shard" not in read_run(whole.path).manifest

    merged = merge_shards("merged", ["s3", "s1", "s2"], results_dir=res)  # any order
    assert merged.validity == "VALID" and merged.counts == whole.counts
    assert facts(merged.path) == facts(whole.path)
    m = read_run(merged.path).manifest
    assert "shard" not in m and key_differences(m, read_run(whole.path).manifest) == []
    for field in RUN_KEY_FIELDS:  # the same run key, field by field (the git commit too)
        assert field in m
    assert set(outcomes_df(merged.path)["run_id"]) == {"merged"}
    assert [x["run_id"] for x in m["merged_from"]] == ["s1", "s2", "s3"]
    # the merged JSONL holds the same outcomes as its Parquet
    assert len((merged.path / "outcomes.jsonl").read_text().splitlines()) == whole.counts["total"]
    assert read_run("latest", res).run_id == "merged"


def test_a_shard_resumes_as_itself_and_refuses_another_shard_spec(tmp_path: Path) -> None:
    ds, res = dataset(tmp_path), tmp_path / "results"
    first = run_eval(ds, provider(), run_id="s1", results_dir=res, shard=(1, 2), **QUIET)
    again = run_eval(ds, provider(), run_id="s1", results_dir=res, shard=(1, 2), **QUIET)
    assert again.calls == 0 and again.resumed == first.counts["total"] and again.validity == "VALID"
    for other in ((2, 2), (1, 3), None):
        with pytest.raises(ResultsError, match="cannot resume run s1: its run key differs .*shard"):
            run_eval(ds, provider(), run_id="s1", results_dir=res, shard=other, **QUIET)
    with pytest.raises(ConfigError, match="shard 0/2"):
        run_eval(ds, provider(), run_id="s9", results_dir=res, shard=(0, 2), **QUIET)


def _shards(ds: object, res: Path, n: int, prefix: str, **kw: object) -> list[str]:
    for k in range(1, n + 1):
        run_eval(ds, provider(), run_id=f"{prefix}{k}", results_dir=res, shard=(k, n), **QUIET, **kw)  # type: ignore[arg-type]
    return [f"{prefix}{k}" for k in range(1, n + 1)]


def test_merge_refusals_name_the_culprit_and_write_nothing(tmp_path: Path) -> None:
    ds, res = dataset(tmp_path), tmp_path / "results"
    three = _shards(ds, res, 3, "a")
    two = _shards(ds, res, 2, "b")
    rep = _shards(ds, res, 3, "c", repeats=2)
    run_eval(ds, provider(), run_id="plain", results_dir=res, **QUIET)
    before = sorted(p.name for p in res.iterdir())
    cases = [
        (["a1", "a2"], "missing shard(s) 3 of 3"),
        (["a1", "a2", "a2"], "shard 2/3 given twice: runs a2 and a2"),
        (["a1", "a2", "a3", "b1"], "shard run b1 is shard 1/2, of another N than a1 (of 3)"),
        (["a1", "a2", "c3"], "shard run c3 has another run key than a1: repeats differ: 1 vs 2"),
        (["a1", "a2", "plain"], "run plain is not a shard"),
        (["a1", "a2", "ghost"], "ghost: no run found"),
    ]
    for shards, message in cases:
        with pytest.raises(ResultsError, match=message.replace("(", r"\(").replace(")", r"\)")):
            merge_shards("m", shards, results_dir=res)
    with pytest.raises(ResultsError, match="already exists"):
        merge_shards("plain", three, results_dir=res)
    assert sorted(p.name for p in res.iterdir()) == before  # nothing written, no temporary folder left
    assert two and rep


def test_shards_of_other_user_simulators_are_not_merged(tmp_path: Path) -> None:
    ds, res = dataset(tmp_path), tmp_path / "results"
    _shards(ds, res, 2, "a")
    shard = res / "a2" / "run.json"  # as a shard run with another simulator records it
    manifest = json.loads(shard.read_text())
    shard.write_text(json.dumps({**manifest, "simulator_version": {"provider": "callable", "fn": "m:other"}}))
    with pytest.raises(ResultsError, match="shard run a2 has another run key than a1: user simulator differs"):
        merge_shards("m", ["a1", "a2"], results_dir=res)


def test_an_incomplete_shard_is_refused(tmp_path: Path) -> None:
    ds, res = dataset(tmp_path), tmp_path / "results"
    _shards(ds, res, 2, "a")
    run = read_run(res / "a2")  # as a killed shard leaves it: some outcomes, no Parquet, not complete
    lines = (run.path / "outcomes.jsonl").read_text().splitlines(keepends=True)
    (run.path / "outcomes.jsonl").write_text("".join(lines[:3]))
    (run.path / "outcomes.parquet").unlink()
    manifest = {**run.manifest, "complete": False, "counts": {**run.manifest["counts"], "total": 3}}
    (run.path / "run.json").write_text(json.dumps(manifest))
    with pytest.raises(ResultsError, match=r"shard 2/2 \(run a2\) is incomplete \(3 of \d+ outcomes\); resume it"):
        merge_shards("m", ["a1", "a2"], results_dir=res)
    run_eval(ds, provider(), run_id="a2", results_dir=res, shard=(2, 2), **QUIET)  # the resume finishes it
    assert merge_shards("m", ["a1", "a2"], results_dir=res).validity == "VALID"


def test_merge_computes_validity_over_the_whole(tmp_path: Path) -> None:
    """2 ERRORs, both in shard 1: over 2% of that shard (INVALID), 2% of the whole (VALID)."""
    ds, res = dataset(tmp_path, rows=100), tmp_path / "results"
    bad = sorted(int(r[1:]) for r in ds.rows["id"] if shard_of(r, 2) == 1)[:2]  # type: ignore[attr-defined]

    def flaky(case, repeat=0):  # type: ignore[no-untyped-def]
        if case.raw["n"] in bad:
            raise PermissionError("boom")  # an outage (infrastructure): an agent's own error is never INVALID
        return answer(case, repeat)

    for k, rate in ((1, 0.02), (2, 0.05)):
        run_eval(
            ds, CallableProvider(fn=flaky), run_id=f"e{k}", results_dir=res, shard=(k, 2), max_error_rate=rate, **QUIET
        )
    assert read_run(res / "e1").validity == "INVALID" and read_run(res / "e2").validity == "VALID"
    merged = merge_shards("m", ["e1", "e2"], results_dir=res)
    assert merged.counts["ERROR"] == 2 and merged.counts["total"] == 100 and merged.error_rate == 0.02
    assert merged.validity == "VALID" and merged.max_error_rate == 0.02  # the strictest of the shards
    assert merged.exit_code == 0


# ---------------------------------------------------------------- through the CLI, fixtures of the bundled dataset


def test_cli_shards_merge_then_compare_and_gate_accept_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    base = [
        "run",
        str(SUPPORT),
        "--provider",
        "fixtures",
        "--fixtures",
        str(SUPPORT / "fixtures" / "baseline"),
        "--split",
        "holdout",
        "--quiet",
    ]
    assert main([*base, "--run-id", "whole"]) == 0
    for k in (1, 2, 3):
        assert main([*base, "--run-id", f"part{k}", "--shard", f"{k}/3"]) == 0
    assert main(["merge", "merged", "part1", "part2"]) == 1
    assert "missing shard(s) 3 of 3" in capsys.readouterr().err
    assert not (tmp_path / "results" / "merged").exists()
    assert main(["merge", "merged", "part1", "part2", "part3"]) == 0
    assert "run merged: VALID" in capsys.readouterr().out
    assert facts("results/merged") == facts("results/whole")
    whole, merged = read_run("results/whole").manifest, read_run("results/merged").manifest
    assert {k: whole[k] for k in RUN_KEY_FIELDS} == {k: merged[k] for k in RUN_KEY_FIELDS}
    assert whole["counts"] == merged["counts"] and whole["validity"] == merged["validity"]
    assert main(["compare", "whole", "merged"]) == 0
    assert "flips: none" in capsys.readouterr().out
    config = str(SUPPORT / "goldenkit.toml")
    # the same answers: nothing fails; 60 refunds rows cannot show non-inferiority at 0.05 (exit 3, not a shard's)
    assert main(["gate", "merged", "--baseline", "whole", "--config", config]) == 3
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("gate NOT EVIDENCE: non_inferiority[refunds]: ")
    assert "[FAIL]" not in out and "run.shard" not in out
    # the merged run as the baseline of a candidate decides as the unsharded one does
    cand = [
        "run",
        str(SUPPORT),
        "--provider",
        "fixtures",
        "--fixtures",
        str(SUPPORT / "fixtures" / "candidate"),
        "--split",
        "holdout",
        "--quiet",
        "--run-id",
        "cand",
    ]
    assert main(cand) == 0
    capsys.readouterr()
    codes = [main(["gate", "cand", "--baseline", b, "--config", config]) for b in ("whole", "merged")]
    out = capsys.readouterr().out
    assert codes == [2, 2] and out.count("gate FAILED") == 2
    via_whole, via_merged = out.split("gate for cand against merged")
    via_whole = via_whole.replace("against whole", "").replace("baseline whole", "baseline B")
    via_merged = via_merged.replace("baseline merged", "baseline B")
    assert via_whole.strip().splitlines()[1:] == via_merged.strip().splitlines()
