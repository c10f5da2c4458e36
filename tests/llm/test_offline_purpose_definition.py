""" "What is X for?" is answered by X's definition, not by a sentence that asks for help.

"What is X for?" and "What is X used for?" ask what X is for: the sentence
that defines X ("X is a Python library that provides utilities that assist
with ...") answers it. Read as a name, "X for" matched no definition, and a
contributing section's "like to help further" won on its purpose word.
"Assist" says what a thing is for as "help" does."""

from __future__ import annotations

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.lexical import defined_name, defines
from selfrag_nb.llm.offline.question import PURPOSE_RE
from selfrag_nb.llm.schemas import Evidence, GenerateInputs

DEFINING = (
    "quillfmt is a Python library that provides an integrated collection of utilities that "
    "assist with formatting and aligning tables in terminal output."
)


def test_what_is_x_for_names_x() -> None:
    assert defined_name("What is quillfmt for?") == "quillfmt"
    assert defined_name("What is quillfmt used for?") == "quillfmt"
    assert defined_name("What is quillfmt?") == "quillfmt"
    # A value asked of a thing is still not a definition.
    assert defined_name("What is the refund window for?") == ""
    pattern = defines("What is quillfmt for?")
    assert pattern is not None
    assert pattern.search(DEFINING)


def test_assist_says_what_a_thing_is_for() -> None:
    assert PURPOSE_RE.search("utilities that assist with formatting")
    assert not PURPOSE_RE.search("a collection of utilities for tables")


def test_the_definition_answers_what_x_is_for() -> None:
    ev = [
        Evidence(
            index=1,
            chunk_id="a",
            source="quillfmt.rst",
            title="quillfmt",
            heading="About quillfmt",
            text=f"{DEFINING} For more information please visit the quillfmt web site.",
        ),
        Evidence(
            index=2,
            chunk_id="b",
            source="quillfmt.rst",
            title="quillfmt",
            heading="Contributing to quillfmt",
            text=(
                "If you know your way around quillfmt's codebase a bit and like to help further, we would "
                "appreciate any help in reviewing pull requests. If you want to contribute code to "
                "quillfmt, please take a look at our contributing guide."
            ),
        ),
    ]
    answer = generate(GenerateInputs(question="What is quillfmt for?", evidence=ev)).answer
    assert "assist with formatting and aligning tables" in answer
    assert "reviewing pull requests" not in answer
