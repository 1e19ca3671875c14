"""Providers: the systems under test, by name (openai, ollama, fixtures, callable, adk).

A built-in provider's module is imported the first time its name is asked for
(:func:`get_provider`), so a run of an in-process callable never loads the HTTP
stack or ADK's adapter; :func:`provider_names` imports them all.
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
