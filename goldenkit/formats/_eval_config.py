"""ADK eval configs (``--criteria FILE``): criteria and thresholds read from one file.

An ADK project keeps its criteria in an eval config (``EvalConfig``, what
``adk eval --config_file_path`` reads) or in the older ``test_config.json`` beside
its test files; both are ``{"criteria": {metric: threshold | {"threshold", ...}}}``
(snake_case or camelCase keys), and an eval config may also hold
``custom_metrics``, ``user_simulator_config`` and ``live_model_config``.
``goldenkit dataset import --criteria FILE`` and ``goldenkit run --criteria FILE``
read one (:func:`read_eval_config`) in place of a ``test_config.json`` beside each file.

Which criteria goldenkit grades, and with which grader (:data:`GRADED_BY`):

=============================================  ============  ==========================================
criterion                                      grader        what is read
=============================================  ============  ==========================================
``tool_trajectory_avg_score``                  trajectory    threshold, ``match_type``, ``ignore_args``
``response_match_score``                       reference     threshold (ROUGE-1 F)
``rubric_based_final_response_quality_v1``     rubrics       threshold, ``rubrics`` (judged one by one)
``rubric_based_tool_use_quality_v1``           rubrics       threshold, ``rubrics``
``rubric_based_multi_turn_trajectory_quality_v1``  rubrics   threshold, ``rubrics``
=============================================  ============  ==========================================

Any other criterion (``final_response_match_v2``, ``hallucinations_v1``,
``safety_v1``, ``response_evaluation_score``, the multi-turn and user-simulator
metrics, a custom metric) is graded by nothing in goldenkit, so reading it is an
error (:class:`~goldenkit.errors.ConfigError`, exit 1) that names each one, unless
the user names it in ``--ignore-criteria``: then it is kept in every case's criteria
(so, as in ADK, metrics the file does not name still do not apply), written to the
run key as ignored, and printed as a warning. A grader a graded criterion needs
must be among the run's graders (:func:`check_graders`). The other sections of an
eval config are not criteria and are reported as not used (:attr:`EvalCriteria.notes`).

>>> import json, tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "eval_config.json"
>>> _ = f.write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0, "safety_v1": 0.8}}))
>>> read_eval_config(f, ignore=["safety_v1"]).graders()
{'tool_trajectory_avg_score': 'trajectory'}
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from goldenkit._checks import unit_threshold
from goldenkit._registry import publish
from goldenkit.errors import ConfigError, DatasetError
from goldenkit.formats._common import get
from goldenkit.formats._rubrics import RUBRIC_METRICS, adk_rubrics, criteria_rubrics
from goldenkit.records import Case

__all__ = [
    "ADK_METRICS",
    "GRADED_BY",
    "EvalCriteria",
    "apply_criteria",
    "check_graders",
    "criteria_differences",
    "read_eval_config",
]

#: The criteria goldenkit grades, and the grader that grades each.
GRADED_BY: dict[str, str] = {
    "tool_trajectory_avg_score": "trajectory",
    "response_match_score": "reference",
    **{metric: "rubrics" for metric in RUBRIC_METRICS},
}

#: ADK's prebuilt metric names (``google.adk.evaluation.eval_metrics.PrebuiltMetrics``): a case's own
#: criteria under these names are replaced by the file's; any other key (``simulated_user``) is kept.
ADK_METRICS = frozenset(
    {
        *GRADED_BY,
        "response_evaluation_score",
        "safety_v1",
        "final_response_match_v2",
        "hallucinations_v1",
        "per_turn_user_simulator_quality_v1",
        "multi_turn_task_success_v1",
        "multi_turn_trajectory_quality_v1",
        "multi_turn_tool_use_quality_v1",
        "tool_call_count_v1",
        "inference_call_count_v1",
        "token_usage_v1",
        "invocation_duration_v1",
    }
)

_OTHER_SECTIONS = ("custom_metrics", "user_simulator_config", "live_model_config")


@dataclass(frozen=True)
class EvalCriteria:
    """Criteria read from one file: ``criteria`` (as written, every metric), the file's name and
    SHA-256, the criteria acknowledged as not graded (``ignored``) and notes on the rest."""

    criteria: dict[str, Any]
    file: str
    sha256: str
    ignored: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def graders(self) -> dict[str, str]:
        """``{criterion: grader}`` of the criteria goldenkit grades."""
        return {name: GRADED_BY[name] for name in self.criteria if name in GRADED_BY}

    def record(self) -> dict[str, Any]:
        """What a run key and an import manifest keep: ``{"file", "sha256", "ignored"}``."""
        return {"file": self.file, "sha256": self.sha256, "ignored": list(self.ignored)}

    def stamp(self, cases: Iterable[dict[str, Any]]) -> dict[str, Any]:
        """Give imported ADK case dicts these criteria (``criteria_source``: the file's name), in
        place of a test_config.json's; returns what the import manifest notes for their file."""
        for case in cases:
            case["criteria"] = dict(self.criteria)
            case["criteria_source"] = self.file
        return {"criteria": dict(self.criteria), "criteria_source": self.file, "criteria_file": self.record()}

    def warnings(self) -> list[str]:
        """One line per criterion left ungraded on request, and per note."""
        out = [f"{self.file}: criterion {name} is not graded (--ignore-criteria)" for name in self.ignored]
        return out + [f"{self.file}: {note}" for note in self.notes]


def read_eval_config(path: str | Path, *, ignore: Iterable[str] = ()) -> EvalCriteria:
    """Read an ADK eval config or test_config.json; see the module doc for what is refused."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the criteria file: {exc.strerror or exc}") from None
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise DatasetError("the criteria file is not UTF-8 text", path=p.name) from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", path=p.name, line=exc.lineno) from None
    criteria = get(doc, "criteria") if isinstance(doc, Mapping) else None
    if not isinstance(criteria, Mapping) or not criteria:
        raise ConfigError(f'{p.name}: no criteria object (an ADK eval config is {{"criteria": {{metric: threshold}}}})')
    for name, value in criteria.items():
        _check_criterion(p.name, str(name), value)
    ignored = tuple(dict.fromkeys(i.strip() for i in ignore if i.strip()))
    unknown = [name for name in ignored if name not in criteria]
    if unknown:
        raise ConfigError(f"{p.name}: --ignore-criteria names {', '.join(unknown)}, which the file does not have")
    ungraded = [str(name) for name in criteria if name not in GRADED_BY and name not in ignored]
    if ungraded:
        raise ConfigError(
            f"{p.name}: goldenkit cannot grade criteria {', '.join(ungraded)} (it grades "
            f"{', '.join(GRADED_BY)}); pass --ignore-criteria {','.join(ungraded)} to run without them"
        )
    graded_ignored = [name for name in ignored if name in GRADED_BY]
    if graded_ignored:
        raise ConfigError(f"{p.name}: --ignore-criteria names {', '.join(graded_ignored)}, which goldenkit grades")
    notes = tuple(
        f"{section} is not used by goldenkit"
        for section in _OTHER_SECTIONS
        if isinstance(doc, Mapping) and get(doc, section)
    )
    return EvalCriteria(
        criteria={str(k): v for k, v in criteria.items()},
        file=p.name,
        sha256=hashlib.sha256(data).hexdigest(),
        ignored=ignored,
        notes=notes,
    )


def _check_criterion(file: str, name: str, value: Any) -> None:
    """A criterion is a threshold (a number) or an object whose ``threshold`` is one; rubrics must parse."""
    if isinstance(value, Mapping):
        threshold = value.get("threshold")
        if name in RUBRIC_METRICS:
            try:
                adk_rubrics(get(value, "rubrics"), None, f"criteria.{name}.rubrics")
            except DatasetError as exc:
                raise ConfigError(f"{file}: {exc.detail}") from None
    else:
        threshold = value
    if threshold is None and isinstance(value, Mapping):
        return  # ADK's own defaults apply (goldenkit's graders use theirs)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise ConfigError(f"{file}: criteria.{name} must be a threshold (a number) or an object with one")
    try:
        unit_threshold(threshold, f"criteria.{name}")
    except ConfigError as exc:
        raise ConfigError(f"{file}: {exc}") from None


def apply_criteria(cases: Mapping[str, Case], config: EvalCriteria) -> dict[str, Case]:
    """Every case with the file's criteria in place of its own ADK metrics (other keys such as
    ``simulated_user`` are kept) and the rubrics of the file's rubric criteria in place of those
    its own criteria carried (rubrics on the case or an invocation stay)."""
    file_rubrics = tuple(criteria_rubrics(config.criteria, None))  # checked when the file was read
    out: dict[str, Case] = {}
    for rid, case in cases.items():
        criteria = {k: v for k, v in case.criteria.items() if k not in ADK_METRICS and k != "criteria"}
        criteria.update(config.criteria)
        own = tuple(r for r in case.rubrics if not r.source.startswith("adk:"))
        out[rid] = replace(case, criteria=criteria, rubrics=own + file_rubrics)
    return out


def criteria_differences(base: Any, cand: Any) -> list[str]:
    """``["criteria files differ: ..."]`` when two runs' ``criteria`` records differ (null or absent:
    the cases' own criteria, no ``--criteria`` file), else ``[]``; compare refuses such a pair."""
    if (base or None) == (cand or None):
        return []

    def label(record: Any) -> str:
        if not isinstance(record, Mapping):
            return "the cases' own"
        ignored = f", ignoring {', '.join(record.get('ignored') or [])}" if record.get("ignored") else ""
        return f"{record.get('file')} ({str(record.get('sha256'))[:12]}{ignored})"

    return [f"criteria files differ: {label(base)} vs {label(cand)}"]


def check_graders(config: EvalCriteria, grader_names: Iterable[str]) -> None:
    """A ConfigError when a criterion the file asks for needs a grader the run does not use."""
    names = set(grader_names)
    missing = {crit: grader for crit, grader in config.graders().items() if grader not in names}
    if missing:
        needs = ", ".join(f"{crit} needs the {grader} grader" for crit, grader in missing.items())
        raise ConfigError(f"{config.file}: {needs}; add it to [graders] use (or --graders)")


publish(globals())
