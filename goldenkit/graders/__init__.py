"""Graders: contract, trajectory, reference match and LLM judge."""

from goldenkit.graders.base import GradeResult, Grader, combine, get_grader, grader_names, register_grader

__all__ = ["GradeResult", "Grader", "combine", "get_grader", "grader_names", "register_grader"]
