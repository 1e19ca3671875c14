"""Argument policies: when the arguments of an actual tool call satisfy the expected ones.

A policy set (:class:`ArgRules`) has a default *mode* for arguments without a
policy of their own and, per tool and per argument, a *policy*:

``exact``            the actual value equals the expected one (or both lack the key);
``ignore``           anything, the key may be missing;
``present``          the actual call has the key (any value);
``regex:<pattern>``  the actual value matches the whole pattern (``re.fullmatch``;
                     a non-string value is matched as its JSON text);
``number:<tol>``     both values are numbers (not booleans) within ``tol`` (absolute);
``subset``           the expected value is an object whose keys the actual object has
                     with equal values (recursively for nested objects); extra keys are fine.

Modes (for the arguments no policy names): ``exact`` — every expected key equal
and no extra actual key (ADK); ``subset`` — every expected key equal, extra
actual keys allowed; ``ignore`` — names only (ADK's ``ignore_args``).

The config form, as in ``[graders.trajectory.args]`` or a contract case's
``expect.tool_args``::

    "subset"                                   # a mode for every tool
    {"*": "subset",                            # the default mode
     "search": "ignore",                       # a mode for one tool
     "get_weather": {"city": "regex:(?i)paris", "ts": "ignore", "*": "exact"}}

``"*"`` inside a tool's table is that tool's mode. An actual call whose
argument string was not valid JSON (providers record it as
``{"_invalid_json": "..."}``; a JSON value that is not an object as
``{"_value": ...}``) never matches, whatever the policy.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from goldenkit.errors import InputError

__all__ = ["ARG_MODES", "BROKEN_ARGS", "ArgRules", "args_match", "parse_arg_rules"]

ARG_MODES = ("exact", "subset", "ignore")
#: Keys under which providers record tool-call arguments that are not a JSON object.
BROKEN_ARGS = ("_invalid_json", "_value")
_SIMPLE = ("exact", "ignore", "present", "subset")


@dataclass(frozen=True)
class ToolRules:
    """One tool's mode (None: the default mode) and its per-argument policies."""

    mode: str | None = None
    policies: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ArgRules:
    """A default mode and per-tool rules (see the module doc)."""

    mode: str = "exact"
    tools: Mapping[str, ToolRules] = field(default_factory=dict)

    def for_tool(self, name: str) -> tuple[str, Mapping[str, str]]:
        """(mode, per-argument policies) for calls to ``name``."""
        rules = self.tools.get(name)
        if rules is None:
            return self.mode, {}
        return rules.mode or self.mode, rules.policies

    def merged(self, other: ArgRules | None) -> ArgRules:
        """These rules with ``other``'s (a case's) on top: its mode if it set one, its tools replacing ours."""
        if other is None:
            return self
        return ArgRules(mode=other.mode, tools={**self.tools, **other.tools})

    def spec(self) -> Any:
        """The config form back (for a grader's version)."""
        if not self.tools:
            return self.mode
        out: dict[str, Any] = {"*": self.mode}
        for name, t in sorted(self.tools.items()):
            out[name] = {**({"*": t.mode} if t.mode else {}), **dict(t.policies)}
        return out

    @property
    def names_only(self) -> bool:
        return self.mode == "ignore" and not self.tools


def _mode(value: Any, where: str) -> str:
    if isinstance(value, str) and value.strip().lower() in ARG_MODES:
        return value.strip().lower()
    raise InputError(f"{where}: unknown tool args mode {value!r} (expected one of {', '.join(ARG_MODES)})")


def _policy(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where}: an argument policy must be a string, got {value!r}")
    text = value.strip()
    low = text.lower()
    if low in _SIMPLE:
        return low
    if low.startswith("regex:"):
        try:
            re.compile(text[6:])
        except re.error as exc:
            raise InputError(f"{where}: invalid pattern {text[6:]!r}: {exc}") from None
        return "regex:" + text[6:]
    if low.startswith("number:"):
        try:
            tol = float(text[7:])
        except ValueError:
            tol = float("nan")
        if not math.isfinite(tol) or tol < 0:
            raise InputError(f"{where}: number:<tolerance> needs a non-negative number, got {text!r}")
        return f"number:{tol!r}"
    raise InputError(
        f"{where}: unknown argument policy {value!r} (exact, ignore, present, subset, regex:<pattern>, number:<tol>)"
    )


def parse_arg_rules(value: Any, where: str = "args") -> ArgRules:
    """:class:`ArgRules` from the config form (a mode string or a table; see the module doc)."""
    if isinstance(value, ArgRules):
        return value
    if isinstance(value, str):
        return ArgRules(mode=_mode(value, where))
    if not isinstance(value, Mapping):
        raise InputError(f"{where}: must be a mode string or a table of tools, got {value!r}")
    mode = _mode(value.get("*", "exact"), f"{where}.*")
    tools: dict[str, ToolRules] = {}
    for name, rules in value.items():
        if name == "*":
            continue
        at = f"{where}.{name}"
        if isinstance(rules, str):
            tools[str(name)] = ToolRules(mode=_mode(rules, at))
        elif isinstance(rules, Mapping):
            tmode = _mode(rules["*"], f"{at}.*") if "*" in rules else None
            pol = {str(k): _policy(v, f"{at}.{k}") for k, v in rules.items() if k != "*"}
            tools[str(name)] = ToolRules(mode=tmode, policies=pol)
        else:
            raise InputError(f"{at}: must be a mode string or a table of argument policies, got {rules!r}")
    return ArgRules(mode=mode, tools=tools)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _subset(expected: Any, actual: Any) -> bool:
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(k in actual and _subset(v, actual[k]) for k, v in expected.items())
    return bool(expected == actual)


def _one(policy: str, key: str, expected: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Whether argument ``key`` satisfies ``policy``."""
    if policy == "ignore":
        return True
    if policy == "present":
        return key in actual
    if policy == "exact":
        return (key in expected) == (key in actual) and expected.get(key) == actual.get(key)
    if key not in actual:
        return False
    got = actual[key]
    if policy == "subset":
        return key in expected and _subset(expected[key], got)
    if policy.startswith("regex:"):
        text = got if isinstance(got, str) else json.dumps(got, ensure_ascii=False, sort_keys=True)
        return re.fullmatch(policy[6:], text) is not None
    if policy.startswith("number:"):
        want = expected.get(key)
        if not isinstance(want, (int, float)) or not _is_number(want) or not _is_number(got):
            return False
        return abs(float(got) - float(want)) <= float(policy[7:])
    raise InputError(f"unknown argument policy {policy!r}")


def args_match(name: str, expected: Mapping[str, Any], actual: Mapping[str, Any], rules: ArgRules) -> bool:
    """Whether the actual arguments of a call to ``name`` satisfy the expected ones under ``rules``.

    >>> r = parse_arg_rules({"get": {"city": "regex:(?i)paris", "ts": "ignore"}})
    >>> args_match("get", {"city": "Paris", "ts": 1}, {"city": "PARIS", "ts": 99}, r)
    True
    >>> args_match("get", {}, {"_invalid_json": "{city: paris"}, parse_arg_rules("ignore"))
    False
    """
    if any(k in actual for k in BROKEN_ARGS):
        return False
    mode, policies = rules.for_tool(name)
    for key, policy in policies.items():
        if not _one(policy, key, expected, actual):
            return False
    if mode == "ignore":
        return True
    rest = [k for k in expected if k not in policies]
    if not all(k in actual and expected[k] == actual[k] for k in rest):
        return False
    return mode == "subset" or all(k in expected or k in policies for k in actual)
