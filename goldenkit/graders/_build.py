"""Which graders a run uses: built from goldenkit.toml.

::

    [graders]
    use = ["contract", "trajectory", "reference"]     # the default when absent

    [graders.contract]                                # options of one grader
    refusal_patterns = ["^Отказ\\\\."]

    [graders.reference]
    threshold = 0.5

{JUDGE_TABLES}

``[judge]`` is used when "judge" is in use (``[graders.judge]``, read under it, takes the same keys), and
``[graders.rubrics]`` when "rubrics" is: both listings come from their declarations
(:mod:`goldenkit._config_tables`), which goldenkit.toml is checked against when it is read.

A row can narrow the set with ``"graders": [...]`` in its case (see
:func:`goldenkit.graders._base.case_grader_names`). Users add graders with
:func:`goldenkit.graders.register_grader` (a class or factory taking the
options table as keywords) or :func:`register_function` (a plain
``fn(case, response) -> GradeResult | bool``), then name them in ``use``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from goldenkit._config_tables import GRADERS_KEYS, INHERITED, JUDGE_KEYS, RUBRICS_KEYS, check_table, keys_listing
from goldenkit._registry import publish
from goldenkit._text import did_you_mean
from goldenkit.errors import ConfigError, InputError
from goldenkit.graders._base import _REGISTRY, FunctionGrader, Grader, GradeResult, get_grader, register_grader
from goldenkit.records import Case, Response

__all__ = ["DEFAULT_USE", "build_graders", "judge_version_of", "register_function"]

#: The graders of a run when ``[graders] use`` is absent (its default in goldenkit._config_tables).
DEFAULT_USE: tuple[str, ...] = GRADERS_KEYS["use"].default


def register_function(
    name: str,
    fn: Callable[[Case, Response], GradeResult | bool],
    *,
    version: str = "1",
    hard: bool = True,
    replace: bool = False,
) -> None:
    """Register a plain function ``fn(case, response) -> GradeResult | bool`` as grader ``name``."""
    register_grader(name, lambda **_: FunctionGrader(fn, name=name, version=version, hard=hard), replace=replace)


def _table(cfg: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = cfg.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: [{key}] must be a table")
    return dict(value)


def _check_options(name: str, options: Mapping[str, Any], where: str) -> None:
    """An option the grader's factory does not take is a ConfigError naming it, with a did-you-mean."""
    factory = _REGISTRY.get(name)
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a factory without a signature: it checks its own options
        return
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    takes = [k for k, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and k != "self"]
    for key in options:
        if key not in takes:
            known = did_you_mean(key, takes) or f"; it takes {', '.join(sorted(takes)) or 'no options'}"
            raise ConfigError(f"{where}: [graders.{name}] {key}: unknown option{known}")


def _resolve(path: Any, base: Path | None) -> Any:
    if isinstance(path, str) and base is not None and not Path(path).is_absolute():
        return str(base / path)
    return path


def build_graders(
    config: Mapping[str, Any] | None = None,
    *,
    use: Sequence[str] | None = None,
    generator_model: str | None = None,
    base_dir: str | Path | None = None,
) -> list[Grader]:
    """The graders named in ``[graders] use`` (default contract, trajectory, reference), built with their options.

    The one place a run's graders are built from goldenkit.toml: ``goldenkit run``, ``regrade``
    and ``benchmark``, and :func:`goldenkit.runner.run_eval` / :func:`~goldenkit.runner.regrade`
    given no graders, all call it, so Python and the command line grade alike.
    ``config`` is the whole goldenkit.toml as a dict (``goldenkit.config.load_config``);
    ``use``: grader names in place of ``[graders] use`` (``--graders a,b``), each still built
    with its ``[graders.NAME]`` options. Relative paths in ``[judge]`` are resolved against
    ``base_dir``, else the config file's folder. ``generator_model`` is the model under test (the
    judge refuses to be the same model unless ``allow_self_judge``).
    """
    cfg = dict(config or {})
    where = str(cfg.get("_path", "goldenkit.toml"))
    base = Path(base_dir) if base_dir is not None else (Path(cfg["_path"]).parent if "_path" in cfg else None)
    section = _table(cfg, "graders", where)
    given = {"use": list(use)} if use is not None else {}
    use = list(check_table("graders", {**section, **given}, where)["use"])  # checked as [graders] declares it
    graders: list[Grader] = []
    for name in use:
        if name == "judge":
            graders.append(_build_judge(cfg, section, where, base, generator_model))
            continue
        if name == "rubrics":
            graders.append(_build_rubrics(cfg, section, where, base, generator_model))
            continue
        options = _table(section, name, f"{where}: [graders]")
        _check_options(name, options, where)
        try:
            g = get_grader(name, **options)
        except TypeError as exc:
            raise ConfigError(f"{where}: [graders.{name}]: {exc}") from None
        except InputError as exc:  # an option's own check names the option
            raise ConfigError(f"{where}: {exc}") from None
        if g.name != name:
            g.name = name
        graders.append(g)
    return graders


def _build_judge(
    cfg: Mapping[str, Any], section: Mapping[str, Any], where: str, base: Path | None, generator_model: str | None
) -> Grader:
    from goldenkit.graders._judge import JudgeGrader, _sha256_text

    raw = {**_table(section, "judge", f"{where}: [graders]"), **_table(cfg, "judge", where)}
    jcfg = check_table("judge", raw, where, keys=JUDGE_KEYS)  # [graders.judge] under [judge], as declared
    if not jcfg.get("provider"):
        raise ConfigError(f'{where}: [judge] provider is required when "judge" is in [graders] use')
    rubric = _resolve(jcfg.get("rubric"), base)
    pin = jcfg.get("rubric_sha256")
    if pin and rubric:
        try:
            actual = _sha256_text(Path(rubric).read_bytes())
        except OSError as exc:
            raise ConfigError(f"{where}: [judge] rubric {rubric}: {exc.strerror}") from None
        if actual != str(pin).lower():
            raise ConfigError(f"{where}: [judge] rubric {rubric} has sha256 {actual}, pinned {pin}")
    return JudgeGrader(
        str(jcfg["provider"]),
        model=jcfg["model"],
        rubric=rubric,
        options=jcfg["options"],
        hard=jcfg["hard"],
        calibration=_resolve(jcfg["calibration"], base),
        generator_model=generator_model,
        allow_self_judge=jcfg["allow_self_judge"],
        max_response_chars=jcfg["max_response_chars"],
    )


def _build_rubrics(
    cfg: Mapping[str, Any], section: Mapping[str, Any], where: str, base: Path | None, generator_model: str | None
) -> Grader:
    """The rubric grader: the judge's model settings from ``[judge]``, its own from ``[graders.rubrics]``."""
    from goldenkit.graders._rubrics import RubricGrader

    own = check_table("graders.rubrics", _table(section, "rubrics", f"{where}: [graders]"), where, keys=RUBRICS_KEYS)
    judge = check_table("judge", _table(cfg, "judge", where), where, keys=JUDGE_KEYS)
    merged = {**own, **{k: judge[k] if own[k] is None else own[k] for k in INHERITED}}
    if not merged["provider"]:
        raise ConfigError(f'{where}: [judge] provider is required when "rubrics" is in [graders] use')
    return RubricGrader(
        str(merged["provider"]),
        model=merged["model"],
        options=merged["options"],
        prompt=_resolve(merged["prompt"], base),
        threshold=merged["threshold"],
        hard=merged["hard"],
        calibration=_resolve(merged["calibration"], base),
        generator_model=generator_model,
        allow_self_judge=merged["allow_self_judge"],
        max_response_chars=merged["max_response_chars"],
    )


def judge_version_of(graders: Iterable[Grader]) -> str | None:
    """The judge version of the first judge among ``graders`` (for run.json and outcomes), or None."""
    for g in graders:
        v = getattr(g, "judge_version", None)
        if v:
            return str(v)
    return None


__doc__ = (__doc__ or "").replace(
    "{JUDGE_TABLES}", keys_listing("judge") + "\n\n" + keys_listing("graders.rubrics")
)  # the listings, from the tables themselves
publish(globals())
