"""A list item of prose that ends with ";" (enumerations in reStructuredText
and plain text often do: "* Computing of Easter Sunday dates for any given
year, using Western, Orthodox or Julian algorithms;") is text, not a line
of code, even when it holds brackets: a line of code ending in ";" is short
and dense with symbols; a sentence is mostly words. Such an item can be
quoted."""

from __future__ import annotations

from selfrag_nb.codelines import code_line
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.schemas import Evidence, GenerateInputs

ITEM = (
    "Computing of Easter Sunday dates for any given year (any), using Western, Orthodox or Julian algorithms;"
)


def test_a_prose_item_ending_in_a_semicolon_is_not_code() -> None:
    assert not code_line(ITEM)
    # Code that ends in ";" still is.
    assert code_line('printf("%d", n);')
    assert code_line("x = compute(a, b);")
    assert code_line("for (i = 0; i < n; i++) {")


def test_the_item_is_quoted() -> None:
    text = (
        "Features\n\n- Computing of relative deltas (next month, next year);\n"
        f"- {ITEM}\n- A comprehensive test suite.\n"
    )
    out = generate(
        GenerateInputs(
            question="Which algorithms can quilldate use to compute Easter Sunday dates?",
            evidence=[Evidence(index=1, chunk_id="c1", source="quilldate.rst", text=text)],
        )
    )
    assert "Western, Orthodox or Julian" in out.answer


def test_usefulness_reads_a_list_item_closed_by_a_semicolon_as_whole() -> None:
    from selfrag_nb.llm.offline.usefulness import usefulness
    from selfrag_nb.llm.schemas import UsefulnessInputs

    q = "Which algorithms can quilldate use to compute Easter Sunday dates?"
    item = usefulness(UsefulnessInputs(question=q, answer=f"* {ITEM[:-1]} [1];"))
    assert item.verdict != "no"
    # A sentence of running text that stops at ";" is still cut off.
    cut = usefulness(UsefulnessInputs(question=q, answer="Quilldate computes Easter Sunday dates, and [1];"))
    assert cut.verdict == "no"
