"""arun_eval / run_eval take one RunOptions; its fields given by keyword replace those of the options."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest
from fakeserver import FakeModelServer, Reply
from test_runner import contains, make_dataset, must_contain_grader

import goldenkit
from goldenkit.dataset import read_dataset
from goldenkit.providers._openai import OpenAIProvider
from goldenkit.results import outcomes_df, read_run
from goldenkit.runner import RunOptions, arun_eval, run_eval
from goldenkit.runner._calls import CallLimits
from goldenkit.runner._options import RunOptionsFields


@pytest.fixture
def server():
    with FakeModelServer() as srv:
        srv.responder = lambda req: Reply.text("hello there")
        yield srv


def _run(tmp_path: Path, server: FakeModelServer, run_id: str, *args, **kw):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("hello"), "b": contains("bye")}))
    prov = OpenAIProvider(model="m1", base_url=server.url)
    return run_eval(ds, prov, [must_contain_grader()], *args, run_id=run_id, results_dir=tmp_path / "res", **kw)


def test_one_options_object_and_its_keywords_make_the_same_run(tmp_path, server) -> None:
    options = RunOptions(repeats=2, max_in_flight=2, progress=False, backoff_base=0.01)
    by_object = _run(tmp_path, server, "object", options)
    by_keyword = _run(tmp_path, server, "keyword", repeats=2, max_in_flight=2, progress=False, backoff_base=0.01)
    a, b = read_run(by_object.path).manifest, read_run(by_keyword.path).manifest
    assert a["protocol_sha256"] == b["protocol_sha256"] and a["config"] == b["config"]
    assert a["repeats"] == b["repeats"] == 2 and a["config"]["max_in_flight"] == 2
    cols = ["row_id", "repeat", "verdict"]
    assert outcomes_df(by_object.path)[cols].equals(outcomes_df(by_keyword.path)[cols])


def test_a_keyword_replaces_the_field_of_the_options(tmp_path, server) -> None:
    summary = _run(tmp_path, server, "r", RunOptions(repeats=2, timeout=5.0, progress=False), repeats=3)
    manifest = read_run(summary.path).manifest
    assert manifest["repeats"] == 3 and manifest["config"]["timeout"] == 5.0
    assert len(outcomes_df(summary.path)) == 6


def test_an_unknown_option_or_options_of_another_type_is_a_type_error(tmp_path, server) -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'repeat' \(did you mean repeats\?\)"):
        _run(tmp_path, server, "r", repeat=2)
    with pytest.raises(TypeError, match="options must be a RunOptions"):
        _run(tmp_path, server, "r", {"repeats": 2})
    assert not (tmp_path / "res" / "r").exists()  # refused before anything was written


def test_the_signatures_are_small_and_the_defaults_are_one_table() -> None:
    for fn in (arun_eval, run_eval):
        assert list(inspect.signature(fn).parameters) == ["dataset", "provider", "graders", "options", "overrides"]
    fields = {f.name: f.default for f in dataclasses.fields(RunOptions)}
    limits = {f.name: f.default for f in dataclasses.fields(CallLimits)}
    assert limits.items() <= fields.items()  # the workers' part has the same names and defaults
    assert RunOptions().limits() == CallLimits()
    typed = {name: getattr(t, "__forward_arg__", t) for name, t in RunOptionsFields.__annotations__.items()}
    assert typed == {f.name: f.type for f in dataclasses.fields(RunOptions)}  # the keywords type checkers see
    assert goldenkit.RunOptions is RunOptions
    with pytest.raises(TypeError):
        RunOptions(2)  # type: ignore[misc]  # keyword-only: a positional option is a mistake
