"""What is imported on first use: name -> factory registries (providers, graders) and package attributes.

A built-in is named by ``"module:attribute"``; its module is imported the first
time its name is asked for, so a run imports only the providers and graders it
uses. A built-in's name is taken as if every built-in were loaded: registering
it without ``replace`` clashes, and a factory registered with ``replace`` before
the built-in was loaded stays (the built-in never overwrites it).

>>> reg = Registry("widget", {"json": "json:dumps"})
>>> reg.get("json")({"a": 1})
'{"a": 1}'
>>> reg.register("json", repr)
Traceback (most recent call last):
...
goldenkit.errors.ConfigError: widget 'json' is already registered
>>> reg.register("plain", str)
>>> reg.names()
['json', 'plain']
>>> reg.get("nope")
Traceback (most recent call last):
...
goldenkit.errors.ConfigError: unknown widget 'nope' (known: json, plain)

A package's public names are imported on first use the same way
(:func:`lazy_attributes`, PEP 562): ``import goldenkit`` loads almost nothing.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from goldenkit.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


class Registry(Generic[F]):
    """Factories by name; ``builtins`` maps a built-in's name to the ``"module:attribute"`` that makes it."""

    def __init__(self, kind: str, builtins: Mapping[str, str]) -> None:
        self.kind = kind
        self.builtins = dict(builtins)
        self._factories: dict[str, F] = {}

    def register(self, name: str, factory: F, *, replace: bool = False) -> None:
        """Make ``factory`` available under ``name``; a taken name (a built-in's too) needs ``replace``."""
        if not replace:
            self._load(name)
            if name in self._factories:
                raise ConfigError(f"{self.kind} {name!r} is already registered")
        self._factories[name] = factory

    def get(self, name: str) -> F:
        """The factory under ``name``; an unknown name is a ConfigError naming every known one."""
        self._load(name)
        try:
            return self._factories[name]
        except KeyError:
            raise ConfigError(f"unknown {self.kind} {name!r} (known: {', '.join(self.names()) or 'none'})") from None

    def names(self) -> list[str]:
        """Every registered name, the built-ins' included (this imports them all)."""
        for name in self.builtins:
            self._load(name)
        return sorted(self._factories)

    def _load(self, name: str) -> None:
        if name in self._factories or name not in self.builtins:
            return
        module, attribute = self.builtins[name].split(":")
        self._factories[name] = getattr(importlib.import_module(module), attribute)


def lazy_attributes(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """A ``__getattr__`` for ``package`` that imports ``name`` from ``modules[name]`` on first use.

    ``modules`` maps a public name to its module (absolute, or relative to ``package``); the
    name is looked up there on each use, never stored in the package, so a doctest finder
    walking the package sees the same names however much was imported. A public submodule of
    ``package`` resolves the same way (``goldenkit.report`` without importing it first).

    >>> getattr_ = lazy_attributes("goldenkit", {"dumps": "json"})
    >>> getattr_("dumps")([1])
    '[1]'
    >>> getattr_("loads")
    Traceback (most recent call last):
    ...
    AttributeError: module 'goldenkit' has no attribute 'loads'
    """

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            if not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}") is not None:
                return importlib.import_module(f"{package}.{name}")  # a public subpackage: gk.report as gk.stats
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module, package), name)  # not cached: see publish

    return __getattr__


def attach_stub(package: str, init_file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package`` from the ``.pyi`` stub beside ``init_file``.

    The stub is where the package lists its public API, once: each ``from MODULE import NAME as NAME``
    line names a public name and the module it lives in (type checkers read the same lines).
    ``__all__`` is those names, sorted; each is imported from its module on first use
    (:func:`lazy_attributes`). A stub line in another form is a TypeError naming it. The root and
    every subpackage list their names this way (one mechanism): an ``__init__.py`` imports nothing
    else eagerly, so importing a package costs only what its caller uses.
    """
    modules = _stub_table(package, init_file)
    names = sorted(modules)

    def __dir__() -> list[str]:  # the public names and the public submodules (gk.report as gk.stats)
        module = sys.modules[package]
        submodules = {m.name for m in pkgutil.iter_modules(getattr(module, "__path__", [])) if m.name[0] != "_"}
        return sorted(set(vars(module)) | set(names) | submodules)

    return lazy_attributes(package, modules), __dir__, names


_STUBS: dict[str, dict[str, str]] = {}


def _stub_table(package: str, init_file: str, spec: Any = None) -> dict[str, str]:
    """Each public name of ``package`` and the module its stub line names, read once."""
    if package in _STUBS:
        return _STUBS[package]
    stub = Path(init_file).with_suffix(".pyi")
    spec = spec or getattr(sys.modules.get(package), "__spec__", None)
    get_data = getattr(getattr(spec, "loader", None), "get_data", None)  # a package inside a zip file too
    text = (get_data(str(stub)) if callable(get_data) else stub.read_bytes()).decode("utf-8")
    modules: dict[str, str] = {}
    for node in ast.parse(text, str(stub)).body:
        if isinstance(node, ast.ImportFrom):
            if node.module is None or node.level or any(a.asname != a.name for a in node.names):
                raise TypeError(f"{stub}:{node.lineno}: write public names as 'from goldenkit.x import name as name'")
            modules.update((alias.name, node.module) for alias in node.names)
    _STUBS[package] = modules
    return modules


def _package_stub(package: str) -> dict[str, str]:
    """The stub table of one of goldenkit's packages, imported or not (its stub is read, it is not imported)."""
    spec = getattr(sys.modules.get(package), "__spec__", None) or importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ImportError(f"no package {package!r} to read the public names of")
    return _stub_table(package, spec.origin, spec)


def _public_homes(module: str, offered_by: tuple[str, ...] = ()) -> dict[str, str]:
    """Each public name ``module`` defines and its home: the outermost package whose stub leads to ``module``.

    The packages looked at are ``module``'s parents, then ``offered_by``. A stub line naming one of
    them is followed into its stub (the root's ``from goldenkit.stats import slice_table`` leads
    through goldenkit.stats's stub to the module that defines it).
    """
    parts = module.split(".")
    packages = [".".join(parts[:i]) for i in range(1, len(parts))]
    packages += [p for p in offered_by if p not in packages]
    tables = {p: _package_stub(p) for p in packages}
    homes: dict[str, str] = {}
    for package in packages:
        for name in tables[package]:
            target, seen = tables[package][name], package
            while target != seen and target in tables and name in tables[target]:
                target, seen = tables[target][name], target
            if target == module:
                homes.setdefault(name, package)
    return homes


def publish(namespace: dict[str, Any], *offered_by: str) -> None:
    """Set ``__module__`` of each public class and function defined in ``namespace``'s module to its home.

    Called on the last line of a module whose names a package's stub lists: ``goldenkit.read_run`` is
    defined in ``goldenkit.results._run`` and its ``__module__`` is ``goldenkit``, so reprs, tracebacks,
    pickles and docs show the public path, whichever way the module was imported. Each is also put in
    the module's ``__test__``, so doctest (which keeps what ``__module__`` says is its module's) still
    collects its examples, from this module only.

    A private module of the root sits below the packages that offer its names (``goldenkit._display``
    below every package that formats, its names offered by ``goldenkit.report``): it names those
    packages in ``offered_by``, whose stubs are read without importing them. A module none of whose
    names the stubs it was pointed to list is a TypeError (a stub line moved, the call left behind).
    """
    module = str(namespace["__name__"])
    tests: dict[str, Any] = namespace.setdefault("__test__", {})
    homes = _public_homes(module, offered_by)
    if offered_by and not set(homes.values()) & set(offered_by):
        raise TypeError(f"{module}: no stub of {', '.join(offered_by)} lists a name defined here")
    for name, home in homes.items():
        value = namespace.get(name)
        if getattr(value, "__module__", None) == module and hasattr(value, "__qualname__"):  # a class or function
            value.__module__ = home
            tests[name] = value
