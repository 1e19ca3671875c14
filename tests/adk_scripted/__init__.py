"""A scripted ADK agent for tests: real ADK agents and tools, a model with fixed answers.

The package follows ADK's project layout (``adk_scripted.agent.root_agent``) so
ADK's own ``AgentEvaluator`` can load it by module name, exactly as goldenkit's
``--agent adk_scripted`` does.
"""

from . import agent

__all__ = ["agent"]
