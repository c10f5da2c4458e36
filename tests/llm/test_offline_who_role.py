"""A "who" question asks for the one who holds a role.

"Who wrote Brindle?" is answered by a name in the role the question names:
beside its verb ("Ada Quill wrote Brindle"), or beside a word that marks an
agent in English ("written by", "author", "maintainer", "copyright"). A
capitalised word elsewhere in the sentence is someone or something doing
another thing: "Brindle raises an Error if two sections share a name" names
no author, and the usefulness judge must say so."""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import UsefulnessInputs


def verdict(question: str, answer: str) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


@pytest.mark.parametrize(
    "answer",
    [
        "Brindle was written by Ada Quill [1].",
        "Ada Quill wrote Brindle in 2019 [1].",
        "Brindle is a friendly fork, written and maintained by Ada Quill and Tom Reed [1].",
        "Author: Ada Quill [1].",
        "Copyright 2019 Ada Quill and contributors [1].",
    ],
)
def test_a_name_in_the_role_answers(answer: str) -> None:
    # Other checks may still cap it at "partly" (an answer that does not
    # repeat "Brindle", or says "written" for "wrote"); the role is filled.
    out = usefulness(UsefulnessInputs(question="Who wrote Brindle?", answer=answer))
    assert out.verdict != "no", out.reason


@pytest.mark.parametrize(
    "answer",
    [
        "Brindle raises an Error if two sections have the same name [1].",
        "Brindle reads INI files and works with Python 3.9 [1].",
    ],
)
def test_a_name_outside_the_role_does_not_answer(answer: str) -> None:
    out = usefulness(UsefulnessInputs(question="Who wrote Brindle?", answer=answer))
    assert out.verdict == "no"
    assert "person or an organisation" in out.missing


def test_the_questions_own_role_word_places_the_name() -> None:
    q = "Who has taken over stewardship of Brindle under the Brindle2 name?"
    assert verdict(q, "Quillworks is picking up stewardship under the Brindle2 name [1].") == "yes"
    assert verdict("Who maintains Brindle?", "Brindle is maintained by Ada Quill [1].") == "yes"
