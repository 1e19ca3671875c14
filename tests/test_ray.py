"""``executor="ray"``: the same outcomes as a local run, limits for the whole cluster, faults bounded.

One local cluster serves the module (``ray_cluster``); the ``--ray-address`` test
starts its own head node on 127.0.0.1 and stops it by PID.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import factories
import pytest
from factories import row
from fakeserver import FakeModelServer, Reply
from ray_cluster import head_node, ray_cluster  # noqa: F401 - the session's cluster fixture

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.errors import ConfigError
from goldenkit.providers._callable import CallableProvider
from goldenkit.providers._fixtures import FixturesProvider
from goldenkit.providers._openai import OpenAIProvider
from goldenkit.results import outcomes_df, read_run
from goldenkit.runner import merge_shards, run_eval
from goldenkit.runner._ray_executor import RaySettings, SpecSetup
from goldenkit.runner._runkey import key_differences

QUIET = {"progress": False}
SUPPORT = Path(__file__).resolve().parents[1] / "datasets" / "support-agent"


def answer(case, repeat=0):  # type: ignore[no-untyped-def]
    """Deterministic: PASS on even rows, FAIL on odd ones. A row whose case names a ``kill`` file
    kills the process it runs in once (repeat 1), when that file does not exist yet."""
    marker = case.raw.get("kill")
    if marker and repeat == 1 and not os.path.exists(marker):
        Path(marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return f"{'done' if int(case.raw['n']) % 2 == 0 else 'nope'} {repeat}"


def write_dataset(root: Path, rows: int, kill: Path | None = None, prompt: str = "q") -> Path:
    lines = []
    for i in range(rows):
        case: dict[str, Any] = {"prompt": prompt, "n": i, "expect": {"must_contain": ["done"]}}
        if kill is not None and i == 7:
            case["kill"] = str(kill)
        lines.append(row(f"r{i:03d}", case, slice=f"s{i % 3}"))
    return factories.write_dataset(root, lines)


def facts(run: str | Path) -> set[tuple[str, int, str, str]]:
    df = outcomes_df(run)
    return set(zip(df["row_id"], df["repeat"], df["verdict"], df["response"], strict=True))


def jsonl_pairs(run: Path) -> list[tuple[str, int]]:
    return [(r["row_id"], r["repeat"]) for r in map(json.loads, (run / "outcomes.jsonl").read_text().splitlines())]


@pytest.mark.usefixtures("ray_cluster")
def test_ray_run_equals_local_and_merged_shards_and_loses_nothing_to_a_killed_worker(tmp_path: Path) -> None:
    marker = tmp_path / "killed"
    ds, res = read_dataset(write_dataset(tmp_path, 40, kill=marker)), tmp_path / "results"
    marker.write_text("local runs never kill")
    local = run_eval(ds, CallableProvider(fn=answer), repeats=2, run_id="local", results_dir=res, **QUIET)
    for k in (1, 2, 3):
        run_eval(ds, CallableProvider(fn=answer), repeats=2, run_id=f"s{k}", results_dir=res, shard=(k, 3), **QUIET)
    merged = merge_shards("merged", ["s1", "s2", "s3"], results_dir=res)
    marker.unlink()  # the Ray run's worker that runs r007 repeat 1 kills itself, once
    scratch = set(Path(tempfile.gettempdir()).glob("goldenkit-ray-*"))

    ray_run = run_eval(
        ds,
        CallableProvider(fn=answer),
        repeats=2,
        run_id="ray",
        results_dir=res,
        executor=RaySettings(workers=2),
        **QUIET,
    )

    assert set(Path(tempfile.gettempdir()).glob("goldenkit-ray-*")) == scratch  # workers leave no folder behind

    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a worker process died, not this one
    assert ray_run.validity == "VALID" and ray_run.complete and ray_run.counts == local.counts
    assert facts(ray_run.path) == facts(local.path) == facts(merged.path)
    pairs = jsonl_pairs(ray_run.path)
    assert len(pairs) == len(set(pairs)) == 80  # nothing lost, nothing written twice
    manifest = read_run(ray_run.path).manifest
    assert key_differences(manifest, read_run(local.path).manifest) == []
    assert key_differences(manifest, read_run(merged.path).manifest) == []
    invocation = manifest["timings"]["invocations"][-1]
    assert invocation["ray_workers"] == 2 and invocation["ray_requeued"] >= 1  # the killed batch ran again


@pytest.mark.usefixtures("ray_cluster")
def test_limits_hold_for_the_whole_cluster(tmp_path: Path) -> None:
    """2 workers, max_in_flight 2, rpm 240 (one start per 0.25 s) and a 429 asking for a 1 s pause:
    the server never sees more than 2 at once, nor more starts a second than the pacing allows,
    and no new start reaches it during the pause (each worker alone would allow twice as much)."""
    ds = read_dataset(write_dataset(tmp_path, 14, prompt="say done"))
    with FakeModelServer(default=Reply.slow(0.6, "done")) as srv:
        srv.script(Reply.status(429, retry_after=1))
        provider = OpenAIProvider(model="m", base_url=srv.url)
        run = run_eval(
            ds,
            provider,
            run_id="limits",
            results_dir=tmp_path / "r",
            executor=RaySettings(workers=2),
            max_in_flight=2,
            rpm=240,
            **QUIET,
        )
        arrivals = sorted(r.at for r in srv.requests)
        peak = srv.peak_in_flight
    assert run.validity == "VALID" and run.counts["PASS"] == 14 and len(arrivals) == 15
    assert peak == 2  # reached, never exceeded
    assert max(sum(1 for b in arrivals if a <= b < a + 1.0) for a in arrivals) <= 5
    throttled = arrivals[0]  # the 429 was the first reply
    # during the pause only starts the limiter had granted before the 429 reached it (Limiter does not
    # take back a start it has scheduled, locally or on Ray): at most max_in_flight of them, never more
    # (seen: 0, 1 or 2, by how the grants and the 429 interleave)
    paused = [a for a in arrivals if throttled + 0.15 < a < throttled + 0.95]
    assert len(paused) <= 2
    invocation = read_run(run.path).manifest["timings"]["invocations"][-1]
    assert invocation["decreases"] >= 1 and invocation["peak_in_flight"] == 2


@pytest.mark.usefixtures("ray_cluster")
def test_a_run_whose_driver_was_killed_resumes_on_ray_with_only_the_missing_outcomes(tmp_path: Path) -> None:
    """What a killed driver leaves (some outcomes, run.json not complete, no Parquet) resumes by run id."""
    ds, res = read_dataset(write_dataset(tmp_path, 30)), tmp_path / "results"
    whole = run_eval(ds, CallableProvider(fn=answer), repeats=2, run_id="whole", results_dir=res, **QUIET)
    first = run_eval(ds, CallableProvider(fn=answer), repeats=2, run_id="cut", results_dir=res, **QUIET)
    lines = (first.path / "outcomes.jsonl").read_text().splitlines(keepends=True)
    (first.path / "outcomes.jsonl").write_text("".join(lines[:25]) + lines[25][:40])  # and a torn last line
    (first.path / "outcomes.parquet").unlink()
    manifest = json.loads((first.path / "run.json").read_text())
    (first.path / "run.json").write_text(json.dumps({**manifest, "complete": False, "validity": None}))

    again = run_eval(
        ds,
        CallableProvider(fn=answer),
        repeats=2,
        run_id="cut",
        results_dir=res,
        executor=RaySettings(workers=2),
        **QUIET,
    )
    assert again.calls == 60 - 25 and again.resumed == 25 and again.validity == "VALID" and again.complete
    assert facts(again.path) == facts(whole.path)
    pairs = jsonl_pairs(again.path)
    assert len(pairs) == len(set(pairs)) == 60


def test_executor_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ds, res = write_dataset(tmp_path, 3), str(tmp_path / "r")
    base = ["run", str(ds), "--provider", "callable", "--callable", "test_ray:answer", "--results-dir", res]
    assert main([*base, "--ray-workers", "2"]) == 1
    assert "--ray-address and --ray-workers need --executor ray" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    assert main([*base, "--executor", "ray"]) == 1
    assert "--executor ray needs Ray: pip install 'goldenkit[ray]'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_provider_that_cannot_be_shipped_is_refused_before_anything_runs(tmp_path: Path) -> None:
    lock = threading.Lock()

    def locked(case):  # type: ignore[no-untyped-def]
        with lock:  # a closure over a lock: it cannot be pickled
            return "done"

    ds = read_dataset(write_dataset(tmp_path, 3))
    with pytest.raises(ConfigError, match=r"provider .*locked cannot be shipped to Ray workers \(TypeError"):
        run_eval(ds, CallableProvider(fn=locked), results_dir=tmp_path / "r", executor="ray", **QUIET)
    assert not (tmp_path / "r").exists()
    with pytest.raises(ConfigError, match="executor must be 'local', 'ray' or a RaySettings"):
        run_eval(ds, CallableProvider(fn=answer), results_dir=tmp_path / "r", executor="dask", **QUIET)
    with pytest.raises(ConfigError, match="--ray-workers must be >= 1"):
        run_eval(ds, CallableProvider(fn=answer), results_dir=tmp_path / "r", executor=RaySettings(workers=0), **QUIET)
    assert not (tmp_path / "r").exists()


@pytest.mark.usefixtures("ray_cluster")
def test_a_worker_that_cannot_build_the_provider_says_so_up_front(tmp_path: Path) -> None:
    """The fixtures folder the driver read is not there for the workers: exit 1, nothing written."""
    import shutil

    local_only = tmp_path / "fixtures"
    shutil.copytree(SUPPORT / "fixtures" / "baseline", local_only)
    provider = FixturesProvider(fixtures=local_only)  # read here, now
    shutil.rmtree(local_only)
    setup = SpecSetup({"provider": "fixtures", "fixtures": str(local_only)}, {})
    with pytest.raises(ConfigError, match=r"Ray worker on .* cannot build the provider and graders: .*fixtures folder"):
        run_eval(
            read_dataset(SUPPORT),
            provider,
            results_dir=tmp_path / "r",
            executor=RaySettings(workers=1, setup=setup),
            **QUIET,
        )
    assert not (tmp_path / "r").exists()


def test_cli_run_on_a_cluster_by_address(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ray start --head`` on 127.0.0.1, then ``goldenkit run --executor ray --ray-address`` in
    another process: the run equals a local run of the same dataset."""
    ds = write_dataset(tmp_path, 12)
    (tmp_path / "agent_ray.py").write_text(
        "def answer(case, repeat=0):\n    return ('done' if case.raw['n'] % 2 == 0 else 'nope') + f' {repeat}'\n"
    )
    common = [
        "run",
        str(ds),
        "--provider",
        "callable",
        "--callable",
        "agent_ray:answer",
        "--repeats",
        "2",
        "--results-dir",
        str(tmp_path / "r"),
        "--quiet",
    ]
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main([*common, "--run-id", "local"]) == 0
    cli = [sys.executable, "-c", "from goldenkit.cli import console_main; console_main()"]
    with head_node(tmp_path / "head.log") as (address, env):
        remote = subprocess.run(
            [*cli, *common, "--run-id", "ray", "--executor", "ray", "--ray-address", address, "--ray-workers", "1"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert "run ray: VALID; 24/24 outcomes" in remote.stdout
    assert facts(tmp_path / "r" / "ray") == facts(tmp_path / "r" / "local")
    assert key_differences(read_run(tmp_path / "r" / "ray").manifest, read_run(tmp_path / "r" / "local").manifest) == []


def test_import_goldenkit_does_not_import_ray() -> None:
    code = "import sys, goldenkit, goldenkit.runner, goldenkit.cli; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"
