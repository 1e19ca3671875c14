"""The agent config scenario generation reads: an agent's instruction, tools and environment data.

:func:`read_agent_config` returns a plain dict (JSON-ready)::

    {"name": str, "description": str?, "instruction": str, "system": str,
     "tools": [{"name", "description"?, "parameters"?}], "environment": any?, "slices": [str]?}

It reads, by the path or spec given:

* ``*.toml`` / ``*.json``: the dict itself. ``instruction`` is required (a
  non-empty string); ``system`` (the system prompt the generated rows carry)
  defaults to the instruction; ``tools`` is a list of tables/objects with a
  string ``name`` (the same declarations a contract case's ``tools`` holds);
  ``slices`` a list of strings; ``environment`` any value (the data the agent's
  tools work on). Any other key is refused (a typo would otherwise be ignored).
  For example::

      name = "support-agent"
      instruction = "You are the support agent of an online shop. Look orders up before answering."
      slices = ["refunds", "shipping"]
      [environment]
      orders = [{id = "A-204939", item = "Queen linen duvet cover", status = "delivered"}]
      [[tools]]
      name = "lookup_order"
      description = "Look up an order by number."
      parameters = {type = "object", properties = {order_id = {type = "string"}}, required = ["order_id"]}

* ``*.yaml`` / ``*.yml``, or a folder holding ``root_agent.yaml``: an ADK Agent
  Config (``name``, ``description``, ``instruction``, ``tools: [{name}]``; the
  other keys, such as ``model`` or ``sub_agents``, are not needed here and are
  ignored). Needs PyYAML (installed with ``goldenkit[adk]``).
* ``module.path:attr``, ``path/to/agent.py:attr``, a bare module (its
  ``root_agent``) or a folder holding ``agent.py``: an ADK agent object, read
  through :func:`goldenkit.providers._adk.load_agent`; its ``instruction`` must
  be a string, and each tool's declaration gives name, description and
  parameters (JSON Schema, types in lower case).

Problems are a :class:`~goldenkit.errors.ConfigError` naming the file and key.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from goldenkit._registry import publish
from goldenkit.errors import ConfigError

_KEYS = ("name", "description", "instruction", "system", "tools", "environment", "slices")


def config_sha256(config: Mapping[str, Any]) -> str:
    """SHA-256 of the config as canonical JSON (sorted keys, no spaces): its identity in a changelog."""
    text = json.dumps(dict(config), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_agent_config(spec: str | Path) -> dict[str, Any]:
    """The agent config of a TOML/JSON file, an ADK Agent Config YAML, or an ADK agent (module docstring)."""
    path = Path(spec)
    if path.is_dir():
        if (path / "root_agent.yaml").is_file():
            return _from_yaml(path / "root_agent.yaml")
        if (path / "agent.py").is_file():
            return _from_agent(f"{path / 'agent.py'}:root_agent")
        raise ConfigError(f"{path}: no root_agent.yaml or agent.py in this folder (an agent config is needed)")
    suffix = path.suffix.lower()
    if suffix in (".toml", ".json"):
        return check_agent_config(_read_plain(path), str(path))
    if suffix in (".yaml", ".yml"):
        return _from_yaml(path)
    if path.is_file() and suffix != ".py":
        raise ConfigError(f"{path}: an agent config is a .toml, .json or .yaml file, an ADK agent module or a folder")
    return _from_agent(str(spec))


def _read_plain(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read agent config: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() == ".toml":
            return tomllib.loads(raw.decode("utf-8"))
        return json.loads(raw)
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: invalid JSON: {exc}") from None


def _text(value: Any, key: str, where: str, *, required: bool = False) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f'{where}: "{key}" must be a non-empty string, got {json.dumps(value, default=str)[:60]}')
    return value


def check_agent_config(obj: Any, where: str) -> dict[str, Any]:
    """A plain config checked and completed (``system`` defaults to ``instruction``, ``tools`` to [])."""
    if not isinstance(obj, dict):
        raise ConfigError(f"{where}: an agent config must be a table/object, got {type(obj).__name__}")
    unknown = sorted(k for k in obj if k not in _KEYS)
    if unknown:
        raise ConfigError(f'{where}: unknown key "{unknown[0]}" (an agent config has {", ".join(_KEYS)})')
    config: dict[str, Any] = {}
    for key in ("name", "description"):
        value = _text(obj.get(key), key, where)
        if value is not None:
            config[key] = value
    config["instruction"] = _text(obj.get("instruction"), "instruction", where, required=True)
    config["system"] = _text(obj.get("system"), "system", where) or config["instruction"]
    tools = obj.get("tools") or []
    if not isinstance(tools, list):
        raise ConfigError(f'{where}: "tools" must be a list of {{name, description, parameters}}')
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"].strip():
            raise ConfigError(f'{where}: tools[{i}] must be a table/object with a non-empty string "name"')
    config["tools"] = [dict(t) for t in tools]
    if "environment" in obj:
        config["environment"] = obj["environment"]
    slices = obj.get("slices")
    if slices is not None:
        if not isinstance(slices, list) or not all(isinstance(s, str) and s.strip() for s in slices):
            raise ConfigError(f'{where}: "slices" must be a list of non-empty strings')
        config["slices"] = list(slices)
    return config


def _from_yaml(path: Path) -> dict[str, Any]:
    """An ADK Agent Config file: name, description, instruction and the tools' names."""
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML comes with google-adk
        raise ConfigError(f"{path}: reading an ADK Agent Config needs PyYAML: pip install 'goldenkit[adk]'") from None
    try:
        obj = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read agent config: {exc.strerror or exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(obj, dict):
        raise ConfigError(f"{path}: an ADK Agent Config must be a mapping, got {type(obj).__name__}")
    tools = []
    for i, tool in enumerate(obj.get("tools") or []):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ConfigError(f'{path}: tools[{i}] must be a mapping with a "name"')
        tools.append({"name": tool["name"].rsplit(".", 1)[-1]})
    plain = {k: obj[k] for k in ("name", "description", "instruction") if obj.get(k) is not None}
    return check_agent_config({**plain, "tools": tools}, str(path))


def _json_schema(value: Any) -> Any:
    """A genai Schema dump as JSON Schema: ``"type"`` values in lower case (``OBJECT`` -> ``object``)."""
    if isinstance(value, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _json_schema(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_schema(v) for v in value]
    return value


def _tool_declaration(tool: Any) -> dict[str, Any]:
    """``{"name", "description", "parameters"}`` of an ADK tool (a function is wrapped in FunctionTool)."""
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.function_tool import FunctionTool

    if not isinstance(tool, BaseTool):
        tool = FunctionTool(tool)
    decl = tool._get_declaration()  # ADK's own declaration of the tool, what the model is offered
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    if decl is not None and decl.parameters is not None:
        out["parameters"] = _json_schema(decl.parameters.model_dump(mode="json", exclude_none=True))
    elif decl is not None and decl.parameters_json_schema is not None:
        out["parameters"] = decl.parameters_json_schema
    return out


def _from_agent(spec: str) -> dict[str, Any]:
    """An ADK agent object's name, description, instruction and tool declarations."""
    from goldenkit.providers import load_agent

    agent = load_agent(spec)
    agent = getattr(agent, "root_agent", agent)  # an ADK App holds its agent as root_agent
    instruction = getattr(agent, "instruction", None)
    if not isinstance(instruction, str) or not instruction.strip():
        raise ConfigError(
            f"{spec}: the agent's instruction is not a non-empty string (an instruction provider?); "
            "write a TOML or JSON agent config instead"
        )
    tools = [_tool_declaration(t) for t in getattr(agent, "tools", None) or []]
    plain = {"name": getattr(agent, "name", None), "description": getattr(agent, "description", None) or None}
    plain = {k: v for k, v in plain.items() if v}
    return check_agent_config({**plain, "instruction": instruction, "tools": tools}, spec)


__all__ = ["check_agent_config", "config_sha256", "read_agent_config"]

publish(globals())
