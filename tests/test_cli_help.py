"""`goldenkit --help` and `goldenkit CMD --help` answer at once: listing commands and options imports
nothing heavy (no pandas, numpy, scipy, statsmodels, pyarrow, matplotlib, duckdb, nbformat, httpx).

Measured, not timed: each command's help runs in a fresh interpreter, which then reports the heavy
modules it loaded; none may be. (About 0.05 s each on two cores, against 1-3 s when the command's
module imported pandas and the statistics stack to register its options.)
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from goldenkit.cli import COMMANDS

HEAVY = ("pandas", "numpy", "scipy", "statsmodels", "pyarrow", "matplotlib", "duckdb", "nbformat", "httpx")

PROBE = """
import contextlib, io, json, sys
from goldenkit.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(HEAVY)))
print(json.dumps({"code": code, "heavy": heavy, "help": out.getvalue()[:200]}))
"""


def _help(*argv: str) -> dict[str, object]:
    code = PROBE.replace("json.loads(HEAVY)", repr(list(HEAVY)))
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_overview_lists_every_command_without_importing_one() -> None:
    result = _help("--help")
    assert result["heavy"] == [] and result["code"] == 0
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from goldenkit.cli import main; main(['--help'])"],
        capture_output=True,
        text=True,
    )
    for name, line in COMMANDS.items():
        assert name.replace("_", "-") in done.stdout and line.split()[0] in done.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_commands_help_imports_nothing_heavy(command: str) -> None:
    result = _help(command.replace("_", "-"), "--help")
    assert result["code"] == 0, result
    assert result["heavy"] == [], f"goldenkit {command} --help imported {result['heavy']}"
