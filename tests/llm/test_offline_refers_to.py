""" "What does X refer to?" asks what X is, and an appositive after a dash defines it.

"What does the RFC 9999 in the name rfc9999-tiles refer to?" asks for a
definition, as "What is RFC 9999?" does. "... terms defined in RFC 9999 —
the IETF standard for map tile names" defines it: an appositive after a dash
says what the name before it is, as "X is a ..." and "X, a ..." do."""

from __future__ import annotations

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.lexical import defined_name, defines
from selfrag_nb.llm.schemas import Evidence, GenerateInputs

Q = "What does the RFC 9999 in the name rfc9999-tiles refer to?"
DEFINING = "Helper functions to parse the syntax of terms defined in RFC 9999 — the IETF standard for map tile names."


def test_refer_to_asks_for_a_definition() -> None:
    assert defined_name(Q) == "RFC 9999"
    assert defined_name("What does GIL refer to?") == "GIL"
    assert defined_name("What does rfc9999-tiles do?") == ""


def test_an_appositive_after_a_dash_defines() -> None:
    pattern = defines(Q)
    assert pattern is not None
    assert pattern.search(DEFINING)
    assert not pattern.search("Implements grammar from RFC 9999, using RFC 3986 where it delegates.")


def test_the_defining_sentence_is_quoted_first() -> None:
    ev = [
        Evidence(
            index=1,
            chunk_id="a",
            source="rfc9999-tiles.md",
            title="rfc9999-tiles",
            text=(
                "Implements grammar from RFC 9999, using RFC 3986 where RFC 9999 delegates syntax. "
                "The goal of rfc9999-tiles is to validate strings against the grammar defined in RFC 9999."
            ),
        ),
        Evidence(index=2, chunk_id="b", source="rfc9999-tiles.md", title="rfc9999-tiles", text=DEFINING),
    ]
    answer = generate(GenerateInputs(question=Q, evidence=ev)).answer
    assert "the IETF standard for map tile names" in answer
