"""The flow is defined once (selfrag_nb/flow.py); everything that lists stages agrees with it."""

from __future__ import annotations

from typing import get_args

import pytest

from selfrag_nb.flow import FLOW, RETRIEVAL_STAGES, ROLES, STAGES
from selfrag_nb.llm.schemas import OUTPUTS, Role
from selfrag_nb.stages.base import STAGE_CLASSES, Stage


def test_every_step_has_exactly_one_stage_class() -> None:
    assert set(STAGE_CLASSES) == set(STAGES)
    for step in FLOW:
        assert STAGE_CLASSES[step.name].name == step.name


def test_derived_lists() -> None:
    assert STAGES[0] == "decide"
    assert STAGES[-1] == "finish"
    assert {"rewrite", "retrieve", "grade", "rerank", "assess"} == RETRIEVAL_STAGES
    assert get_args(Role) == ROLES, "llm/schemas.py Role must spell the flow's roles, in order"
    assert set(OUTPUTS) == set(ROLES)


def test_a_stage_outside_the_flow_is_refused() -> None:
    with pytest.raises(TypeError, match="not a step"):

        class Extra(Stage):  # pragma: no cover - refused at class creation
            name = "polish"

            async def run(self, trace, ctx):  # type: ignore[no-untyped-def]
                return None

    with pytest.raises(TypeError, match="two stage classes"):

        class Decide2(Stage):  # pragma: no cover - refused at class creation
            name = "decide"

            async def run(self, trace, ctx):  # type: ignore[no-untyped-def]
                return None
