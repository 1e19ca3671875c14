"""Graders: contract, trajectory, reference match, retrieval, state, rubrics and LLM judge.

The built-in graders, by name: ``contract`` (:class:`ContractGrader`),
``trajectory`` (:class:`TrajectoryGrader`), ``reference``
(:class:`ReferenceMatchGrader`), ``judge`` (:class:`JudgeGrader`), ``rubrics``
(:class:`RubricGrader`), ``retrieval`` (:class:`RetrievalGrader`) and ``state``
(:class:`StateGrader`); each module is imported the first time its name or one
of its names here is asked for. Users add their own with
:func:`register_grader` (a class or factory) or :func:`register_function` (a
plain function), and choose graders per dataset with :func:`build_graders`
(``[graders] use`` in goldenkit.toml). The grading rules are public functions
too: :func:`trajectory_score`, :func:`rouge1_f` and :func:`parse_judge`.
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
