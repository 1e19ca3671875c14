"""How the CLI reports errors: one line on stderr, exit 1 for usage and bad input
(never argparse's 2, which means "gate failed"), a traceback only with --debug; and a
stdout closed early (``goldenkit gate ... | head -1``) never turns a decision into 0."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from goldenkit.cli import main

GOOD = {"id": "a", "slice": "s", "split": "dev", "case": {"prompt": "hi"}}


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(data)
    return path


def line(**changes: object) -> bytes:
    row = {**GOOD, **changes}
    return json.dumps({k: v for k, v in row.items() if v is not ...}).encode() + b"\n"


BAD_FILES = [
    (line() + b"{oops\n", 2, "invalid JSON"),
    (line() + line(id=...), 2, 'missing "id"'),
    (line() + line(id=""), 2, 'empty "id"'),
    (line() + line(id="b", slice=...), 2, 'missing "slice"'),
    (line() + line(id="b", slice=""), 2, 'empty "slice"'),
    (line() + line(id="b", split="train"), 2, '"split" must be "dev" or "holdout", got "train"'),
    (line() + line(id="b", tags="x"), 2, '"tags" must be a list of strings'),
    (line() + line(id="b", case=[1]), 2, '"case" must be a JSON object, got a list'),
    (line() + b"\n" + line(), 3, 'duplicate id "a" (first on line 1)'),
    (b"\xef\xbb\xbf" + line(), 1, "byte-order mark"),
    (line() + line(id="b").replace(b"hi", b"h\xe9"), 2, "invalid UTF-8 byte 0xe9"),
]


@pytest.mark.parametrize(("data", "lineno", "message"), BAD_FILES)
def test_bad_input_one_line_with_file_line_and_exit_1(tmp_path, capsys, data, lineno, message):
    path = write(tmp_path, data)
    code = main(["dataset", "validate", str(path)])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err.startswith(f"goldenkit: {path}:{lineno}: ")
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_crlf_is_accepted(tmp_path, capsys):
    lf = write(tmp_path, line() + line(id="b"))
    code = main(["dataset", "hash", str(lf)])
    digest = capsys.readouterr().out
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes((line() + line(id="b")).replace(b"\n", b"\r\n"))
    assert main(["dataset", "hash", str(crlf)]) == code == 0
    assert capsys.readouterr().out == digest


def test_empty_file(tmp_path, capsys):
    path = write(tmp_path, b"\n\n")
    assert main(["dataset", "validate", str(path)]) == 1
    assert capsys.readouterr().err == f"goldenkit: {path}: empty dataset: no rows\n"


def test_missing_path(tmp_path, capsys):
    assert main(["dataset", "info", str(tmp_path / "nope")]) == 1
    assert capsys.readouterr().err == f"goldenkit: {tmp_path / 'nope'}: no such dataset file or folder\n"


def test_bad_manifest_names_the_file(tmp_path, capsys):
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "dataset.jsonl").write_bytes(line())
    (folder / "dataset.json").write_text('{"name": "x", "version": "1"}')
    assert main(["dataset", "validate", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"goldenkit: {folder / 'dataset.json'}: ") and "changelog" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["dataset", "frobnicate"],
        ["dataset", "hash"],
        ["dataset", "sample", "x.jsonl", "--seed", "1"],
        ["dataset", "sample", "x.jsonl", "--per-slice", "two", "--seed", "1"],
        ["dataset", "sample", "x.jsonl", "--per-slice", "2", "--seed", "1", "--split", "train"],
        ["dataset", "info", "x", "--no-such-option"],
        ["no-such-command"],
    ],
)
def test_usage_errors_exit_1_not_2(capsys, argv):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("goldenkit: ") and err.count("\n") == 1


def test_no_subcommand_prints_help_and_exits_1(capsys):
    assert main(["dataset"]) == 1
    assert "validate" in capsys.readouterr().err


def test_debug_shows_a_traceback(tmp_path, capsys):
    path = write(tmp_path, line() + line())
    assert main(["--debug", "dataset", "info", str(path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "DatasetError" in err
    assert err.rstrip().endswith(f'goldenkit: {path}:2: duplicate id "a" (first on line 1)')


def _console_script() -> list[str]:
    exe = Path(sys.executable).with_name("goldenkit")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("goldenkit")
    if found is None:
        pytest.skip("the goldenkit console script is not installed")
    return [found]


def test_console_script_exit_codes(tmp_path):
    bad = write(tmp_path, line() + b"[]\n")
    proc = subprocess.run([*_console_script(), "dataset", "validate", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr == f"goldenkit: {bad}:2: a row must be a JSON object, got a list\n"
    good = tmp_path / "good.jsonl"
    good.write_bytes(line())
    proc = subprocess.run([*_console_script(), "dataset", "hash", str(good)], capture_output=True, text=True)
    assert proc.returncode == 0 and len(proc.stdout.strip()) == 64
    proc = subprocess.run([*_console_script(), "dataset", "sample", str(good)], capture_output=True, text=True)
    assert proc.returncode == 1 and "--per-slice" in proc.stderr


# ------------------------------------------------------------------ a closed stdout never turns a decision into 0


@pytest.fixture
def gate_runs(tmp_path: Path) -> Path:
    """results/base and results/cand (the worked example); g2.toml fails the gate, g0.toml passes it."""
    from run_factory import manifest, worked_example, write_run

    base, cand = worked_example()
    write_run(tmp_path / "results", manifest("base"), base)
    write_run(tmp_path / "results", manifest("cand", model_id="model-b"), cand)
    (tmp_path / "g2.toml").write_text('[gate]\ncritical = ["refunds"]\nmin_pass_rate = 0.85\n')
    (tmp_path / "g0.toml").write_text("[gate]\nalpha = 0.01\n")
    return tmp_path


def _gate(config: str) -> list[str]:
    return [sys.executable, "-m", "goldenkit.cli", "gate", "cand", "--baseline", "base", "--config", config]


def _clean_exit(stderr: str) -> bool:
    return not any(s in stderr for s in ("Traceback", "Exception ignored", "BrokenPipeError"))


@pytest.mark.parametrize(("config", "code"), [("g2.toml", 2), ("g0.toml", 0)])
def test_a_reader_that_closes_early_keeps_the_exit_code_under_pipefail(gate_runs, config, code):
    script = " ".join(f"'{a}'" for a in _gate(config)) + " | true"  # true exits without reading a byte
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", script], cwd=gate_runs, capture_output=True, text=True)
    assert proc.returncode == code, proc.stderr
    assert _clean_exit(proc.stderr), proc.stderr


@pytest.mark.parametrize(("config", "code"), [("g2.toml", 2), ("g0.toml", 0)])
def test_a_stdout_pipe_closed_before_the_first_write_keeps_the_exit_code(gate_runs, config, code):
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will ever read: every write meets EPIPE
    try:
        proc = subprocess.run(_gate(config), cwd=gate_runs, stdout=write_end, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    assert proc.returncode == code, proc.stderr
    assert _clean_exit(proc.stderr), proc.stderr
    full = subprocess.run(_gate(config), cwd=gate_runs, capture_output=True, text=True)
    assert full.returncode == code and "gate" in full.stdout  # the same command, read to the end


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_in_process_a_broken_stdout_still_returns_the_decision(gate_runs, monkeypatch, capsys):
    monkeypatch.chdir(gate_runs)
    closed = _ClosedPipe()
    monkeypatch.setattr(sys, "stdout", closed)
    assert main(["gate", "cand", "--baseline", "base", "--config", "g2.toml"]) == 2
    assert sys.stdout is closed  # put back as it was
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="/dev/full is Linux's always-full device")
def test_a_full_disk_on_stdout_keeps_the_decisions_exit_code(tmp_path: Path) -> None:
    import subprocess
    import sys

    ds = Path(__file__).resolve().parents[1] / "datasets" / "support-agent"
    gk = [sys.executable, "-m", "goldenkit.cli"]
    for run_id, fx in (("b", "baseline"), ("c", "candidate")):
        argv = [
            *gk,
            "run",
            str(ds),
            "--provider",
            "fixtures",
            "--fixtures",
            str(ds / "fixtures" / fx),
            "--quiet",
            "--split",
            "holdout",
            "--run-id",
            run_id,
            "--results-dir",
            str(tmp_path),
        ]
        subprocess.run(argv, capture_output=True, timeout=120, check=False)
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*gk, "gate", "c", "--baseline", "b", "--results-dir", str(tmp_path)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2  # the refunds regression, though nothing of the decision could be written
    assert "could not write the output: No space left on device" in done.stderr and "Traceback" not in done.stderr
