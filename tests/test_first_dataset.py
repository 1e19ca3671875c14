"""docs/first-dataset.md, executed: every file it shows is written, every command it shows is run.

The guide's conventions, which this test enforces:

* a ```json, ```jsonl, ```toml or ```python block is a file when the line before it ends
  naming the file in backticks and a colon (`` save it as `shop/dataset.json`: ``); a
  ```python block that names no file is an illustration and must compile;
* a ```bash block is commands, run one by one (a line ending in ``\\`` continues) in a
  fresh folder holding the files above, with this project's ``goldenkit`` first on PATH;
  each must exit 0, or the code its trailing ``# exit N`` comment says;
* a ```text block after a ```bash block is output: each of its lines is found in the
  output of that block (whitespace runs compared as one space, ``...`` standing for any
  text; a line of only ``...`` is skipped).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from factories import FILE_LANGS, GUIDE, blocks

ROOT = Path(__file__).resolve().parent.parent
_EXIT = re.compile(r"\s+#\s*exit (\d+)\s*$")


def commands(script: str) -> list[tuple[str, int]]:
    """``(command, expected exit code)`` of each command of a bash block."""
    out = []
    for logical in re.sub(r"\s*\\\n\s*", " ", script).split("\n"):
        if not logical.strip() or logical.lstrip().startswith("#"):
            continue
        code = _EXIT.search(logical)
        out.append((_EXIT.sub("", logical).strip(), int(code.group(1)) if code else 0))
    return out


def _flat(text: str) -> str:
    return " ".join(text.split())


def shown_in(expected: str, output: str) -> bool:
    """Whether one expected line is in one line of ``output`` (``...`` matching any text)."""
    pattern = re.compile(".*".join(re.escape(part) for part in _flat(expected).split("...")))
    return any(pattern.search(_flat(line)) for line in output.splitlines())


GUIDE_BLOCKS = blocks(GUIDE.read_text(encoding="utf-8"))


def test_the_guide_is_linked_from_the_readme() -> None:
    assert "(docs/first-dataset.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_block_is_a_file_a_command_an_output_or_a_signature_that_compiles() -> None:
    files = [b for b in GUIDE_BLOCKS if b.file is not None]
    assert {b.file for b in files} == {
        "shop/dataset.jsonl",
        "shop/dataset.json",
        "shop/goldenkit.toml",
        "shop_agent.py",
    }
    for before, block in zip([None, *GUIDE_BLOCKS], GUIDE_BLOCKS, strict=False):
        where = f"docs/first-dataset.md:{block.line}"
        if block.lang in FILE_LANGS and block.file is None:
            assert block.lang == "python", f"{where}: a {block.lang} block names no file"
            compile(block.text, where, "exec")
        elif block.lang == "text":
            assert before is not None and before.lang == "bash", f"{where}: output that follows no command"
        else:
            assert block.lang in (*FILE_LANGS, "bash"), f"{where}: a block of {block.lang!r}"
    rows = next(b for b in files if b.file == "shop/dataset.jsonl").text.strip().split("\n")
    assert len(rows) == 20  # the guide promises 20 rows


def test_the_helpers_read_the_conventions() -> None:
    found = blocks("Save it as `a/b.json`:\n\n```json\n{}\n```\n\n```bash\ngoldenkit x \\\n  --y  # exit 2\n```\n")
    assert [(b.lang, b.file, b.text) for b in found] == [
        ("json", "a/b.json", "{}\n"),
        ("bash", None, "goldenkit x \\\n  --y  # exit 2\n"),
    ]
    assert commands(found[1].text) == [("goldenkit x --y", 2)]
    assert shown_in("run v1: ... pass rate 95.0%;", "x\nrun v1: VALID;  pass rate 95.0%; 0.1s\n")
    assert not shown_in("pass rate 96.0%", "pass rate 95.0%")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env


@pytest.mark.slow
def test_the_guide_runs_as_written(tmp_path: Path) -> None:
    env = _env()
    output = ""
    for block in GUIDE_BLOCKS:
        if block.file is not None:
            path = tmp_path / block.file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.text, encoding="utf-8")
        elif block.lang == "bash":
            output = ""
            for command, expected in commands(block.text):
                done = subprocess.run(
                    ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
                )
                said = done.stdout + done.stderr
                assert done.returncode == expected, f"{command}\nexit {done.returncode}, expected {expected}\n{said}"
                assert "Traceback" not in said, f"{command}\n{said}"
                output += said
        elif block.lang == "text":
            for line in block.text.splitlines():
                if line.strip() and line.strip() != "...":
                    assert shown_in(line, output), f"docs/first-dataset.md:{block.line}: not in the output: {line}"
    assert (tmp_path / "results" / "v2" / "compare.html").is_file()
