"""The flow is defined once (selfrag_nb/flow.py); everything that lists stages agrees with it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest

import selfrag_nb.pipeline
from selfrag_nb.display.html import STAGE_TITLES
from selfrag_nb.flow import FLOW, RETRIEVAL_STAGES, ROLES, STAGES, TITLES
from selfrag_nb.llm.schemas import OUTPUTS, Role
from selfrag_nb.stages.base import STAGE_CLASSES, Stage

TRACE_JS = Path(selfrag_nb.pipeline.__file__).parent / "display" / "static" / "trace.js"


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
    assert STAGE_TITLES == TITLES


def test_trace_js_titles_are_the_flows() -> None:
    """trace.js keeps its own TITLES table (the widget has no Python at render
    time): it must say what the flow says, for every stage."""
    block = re.search(r"const TITLES = \{(.*?)\};", TRACE_JS.read_text(encoding="utf-8"), re.DOTALL)
    assert block is not None
    js = json.loads("{" + re.sub(r"(\w+):", r'"\1":', block.group(1)).rstrip().rstrip(",") + "}")
    assert {k: js[k] for k in STAGES} == TITLES


def test_trace_js_usefulness_words_are_the_records() -> None:
    """trace.js keeps its own table of usefulness verdicts (badge text, tone):
    the same words and tones as the static view."""
    from selfrag_nb.display.html import USEFUL_TONE

    block = re.search(r"const USEFUL = \{(.*?)\};", TRACE_JS.read_text(encoding="utf-8"), re.DOTALL)
    assert block is not None
    js = json.loads("{" + re.sub(r"(\w+):", r'"\1":', block.group(1)).rstrip().rstrip(",") + "}")
    assert {k: tuple(v) for k, v in js.items()} == USEFUL_TONE


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
