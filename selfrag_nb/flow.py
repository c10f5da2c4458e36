"""The flow, defined once: which stages run, in what order, what each is called.

    FLOW = (Step(name, title, role, needs_retrieval), ...)   in run order
      decide    Decide     role decide                        Decision
      rewrite   Rewrite    role rewrite     retrieval only    Rewrite
      retrieve  Retrieve   (no model)       retrieval only    Retrieval
      grade     Grade      role grade       retrieval only    Grades
      rerank    Rerank     role rerank      retrieval only    Rerank
      assess    Assess     role assess      retrieval only    Assessment
      generate  Generate   role generate                      Generation
      verify    Verify     role verify                        Support
      usefulness Usefulness role usefulness                 Usefulness
      finish    Outcome    (no model)                         Outcome

    derived here, used everywhere else:
      STAGES            names in order         trace.py (record order), pipeline.py
      RETRIEVAL_STAGES  skipped when decide says "no retrieval"
      TITLES            what views call each stage (display/html.py; the widget mounts the same tree)
      ROLES             model roles in flow order (llm/schemas.py Role, prompts, runner)

A stage class (selfrag_nb/stages/) names its step with ``name``; the
pipeline builds the flow by looking each step up in the stage registry
(stages/base.py), so adding a stage is one Step here and one class there.
Pure data, no imports: the trace, the views and the model layer all read it.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["FLOW", "RETRIEVAL_STAGES", "ROLES", "STAGES", "TITLES", "Step"]


class Step(NamedTuple):
    """One stage of the flow."""

    name: str
    #: What views call it.
    title: str
    #: The model role it calls (None: it calls no model).
    role: str | None
    #: Runs only when the decision is to retrieve.
    needs_retrieval: bool = False


FLOW: tuple[Step, ...] = (
    Step("decide", "Decide", "decide"),
    Step("rewrite", "Rewrite", "rewrite", needs_retrieval=True),
    Step("retrieve", "Retrieve", None, needs_retrieval=True),
    Step("grade", "Grade", "grade", needs_retrieval=True),
    Step("rerank", "Rerank", "rerank", needs_retrieval=True),
    Step("assess", "Assess", "assess", needs_retrieval=True),
    Step("generate", "Generate", "generate"),
    Step("verify", "Verify", "verify"),
    Step("usefulness", "Usefulness", "usefulness"),
    Step("finish", "Outcome", None),
)

STAGES: tuple[str, ...] = tuple(s.name for s in FLOW)
RETRIEVAL_STAGES: frozenset[str] = frozenset(s.name for s in FLOW if s.needs_retrieval)
TITLES: dict[str, str] = {s.name: s.title for s in FLOW}
ROLES: tuple[str, ...] = tuple(s.role for s in FLOW if s.role is not None)
