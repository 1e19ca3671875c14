"""What a run imports before its first call: no pandas, no importer, no grader it does not use.

Each test runs a fresh interpreter (the modules a test process already holds would hide an import).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROW = '{"id": "r%d", "slice": "s", "split": "dev", "tags": %s, "case": {"prompt": "done?", "expect": %s}}'
EXPECT = '{"must_contain": ["done"]}'

CHILD = """
import json, sys
WATCH = ["pandas", "goldenkit.formats._importer", "goldenkit.graders._trajectory", "goldenkit.graders._match",
         "goldenkit.graders._rubrics", "goldenkit.providers._openai", "statsmodels"]
seen = {}
def answer(case):
    if not seen:
        seen.update({m: m in sys.modules for m in WATCH})
    return "yes, done"
import goldenkit
provider = goldenkit.get_provider("callable", fn=answer)
dataset = goldenkit.read_dataset(sys.argv[1])
sample = json.loads(sys.argv[3])
summary = goldenkit.run_eval(dataset, provider, graders=["contract"], progress=False, results_dir=sys.argv[2],
                             sample=sample, include_red=bool(sample))
print(json.dumps({"validity": summary.validity, "counts": summary.counts, "loaded": seen}))
"""


def _first_call(tmp_path: Path, sample: dict[str, object]) -> dict[str, object]:
    data = tmp_path / "ds.jsonl"
    data.write_text("\n".join(ROW % (i, '["red"]' if i == 0 else "[]", EXPECT) for i in range(4)) + "\n")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(data), str(tmp_path / "results"), json.dumps(sample)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_a_run_reaches_its_first_call_without_pandas_or_unused_modules(tmp_path: Path) -> None:
    result = _first_call(tmp_path, {})
    assert result["validity"] == "VALID"
    assert result["counts"]["PASS"] == 3  # type: ignore[index]  # the red row is left out
    loaded = result["loaded"]
    assert isinstance(loaded, dict) and loaded == dict.fromkeys(loaded, False)


def test_a_split_filter_and_red_rows_need_no_pandas_either(tmp_path: Path) -> None:
    result = _first_call(tmp_path, {"split": "dev"})
    assert result["validity"] == "VALID"
    assert result["counts"]["PASS"] == 4  # type: ignore[index]  # the red row runs, tagged red
    loaded = result["loaded"]
    assert isinstance(loaded, dict) and loaded["pandas"] is False
