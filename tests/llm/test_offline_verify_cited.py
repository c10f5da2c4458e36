"""A claim whose cited passage holds every one of its words is supported by
that passage: another document's sentence that repeats a word ("License ...
license") does not take the claim's evidence away from its citation. How
often a word recurs in one sentence says nothing about which sentence states
the claim."""

from __future__ import annotations

from selfrag_nb.llm.offline.verify import verify
from selfrag_nb.llm.schemas import Evidence, VerifyInputs


def ev(i: int, text: str, source: str) -> Evidence:
    return Evidence(index=i, chunk_id=f"c{i}", source=source, text=text)


def test_the_cited_sentence_holding_every_word_of_the_claim_is_its_evidence() -> None:
    out = verify(
        VerifyInputs(
            question="What license is the graph package released under?",
            answer="Released under the 3-clause BSD license [2].",
            evidence=[
                ev(
                    1,
                    "All contributions after 2017 released under dual license - either Apache 2.0 License "
                    "or the BSD 3-Clause License.",
                    "dates.rst",
                ),
                ev(2, "License\n-------\n\nReleased under the 3-clause BSD license::", "graph.rst"),
            ],
        )
    )
    (claim,) = out.claims
    assert claim.verdict == "supported"
    assert [q.doc for q in claim.evidence] == [2]
    assert out.recommendation == "ACCEPT"


def test_a_cited_sentence_missing_a_word_of_the_claim_still_loses_to_one_that_has_it() -> None:
    out = verify(
        VerifyInputs(
            question="What license is the graph package released under?",
            answer="Released under the 3-clause BSD license [2].",
            evidence=[
                ev(1, "The graph package is released under the 3-clause BSD license.", "graph.rst"),
                ev(2, "Released under a permissive license.", "other.rst"),
            ],
        )
    )
    assert [q.doc for q in out.claims[0].evidence] == [1]
