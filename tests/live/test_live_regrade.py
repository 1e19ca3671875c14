"""A live run regraded with the live server as its judge: no model call for the answers, the judge's replies read.

On the CI server (random weights) the judge's replies are gibberish, so its results
are PENDING (``passed`` None, no error) or, rarely, a decision; a soft judge never
changes a verdict, so the regrade's verdicts are the run's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from livekit import LiveConfig, require_live, write_dataset

from goldenkit.cli import main
from goldenkit.results import outcomes_df, read_run

pytestmark = pytest.mark.live
require_live()


def test_regrade_a_live_run_with_the_live_judge(live: LiveConfig, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [
        {"id": f"q{i}", "case": {"prompt": f"Say something about {w}.", "expect": {"must_contain": ["a"]}}}
        for i, w in enumerate(["cats", "rain", "maps"])
    ]
    ds = write_dataset(tmp_path, rows)
    args = [*live.cli_args(), "--temperature", "0.8", "--max-tokens", "24", "--quiet"]
    assert main(["run", str(ds), *args, "--run-id", "live", "--repeats", "2"]) == 0
    (tmp_path / "rubric.md").write_text("Accept an answer that is a coherent English sentence.", encoding="utf-8")
    opts = {"base_url": live.base_url, "max_tokens": 48, "temperature": 0}
    if live.api_key_env:
        opts["api_key_env"] = live.api_key_env
    judge = "\n".join(f"{k} = {json.dumps(v)}" for k, v in opts.items())
    (tmp_path / "judge.toml").write_text(
        f'[graders]\nuse = ["contract", "judge"]\n[judge]\nprovider = "{live.provider}"\nmodel = "{live.model}"\n'
        f'rubric = "rubric.md"\nallow_self_judge = true\n[judge.options]\n{judge}\n',
        encoding="utf-8",
    )
    code = main(["regrade", "live", "--run-id", "judged", "--config", str(tmp_path / "judge.toml"), "--quiet"])
    assert code in (0, 3)  # 3: a judge call failed (INVALID)
    man = read_run("judged").manifest
    assert man["mode"] == "regrade" and man["regraded_from"]["run_id"] == "live" and man["judge_version"]
    old = outcomes_df("live").set_index(["row_id", "repeat"])
    new = outcomes_df("judged").set_index(["row_id", "repeat"])
    assert (old["verdict"] == new.loc[old.index, "verdict"]).all()  # a soft judge never decides
    graded = int((old["verdict"] != "ERROR").sum())
    assert man["timings"]["invocations"][-1]["calls"] >= graded  # the judge's calls, through the run's limiter
    assert (old["response"] == new.loc[old.index, "response"]).all()
    for rid, rep in old.index:
        if old.loc[(rid, rep), "verdict"] == "ERROR":
            continue
        j = new.loc[(rid, rep), "graders"]["judge"]
        assert j["passed"] in (True, False, None)
        assert j["error"] or j["passed"] is not None or j["reason"].startswith("PENDING")
    print(f"judge results: {[new.loc[i, 'graders'].get('judge', {}).get('reason', '')[:40] for i in new.index]}")
