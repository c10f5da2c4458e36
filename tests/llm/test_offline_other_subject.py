"""An answer about another thing does not answer the question.

A word that is a name by its form (inner capitals, digits, joined parts such
as "pyzmq-2.1.11" or "pyca/cryptography", an acronym such as "AWS") is a name
wherever it stands, even first in a sentence. An answer that opens with such
a name the question does not hold, and never names what the question asks
about, is about that other thing: "no", naming what is missing. A plain
capitalised first word ("Compatible with ...") is only a sentence's start.

A version number that belongs to something the question names by number
("HTTP/1.1" beside "HTTP/2") is not the release asked about."""

from __future__ import annotations

from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import UsefulnessInputs


def judge(question: str, answer: str) -> tuple[str, str]:
    out = usefulness(UsefulnessInputs(question=question, answer=answer))
    return out.verdict, out.reason


def test_an_answer_opening_with_another_named_thing_is_about_it() -> None:
    q = "Which OpenSSL versions does quill/crypto support?"
    verdict, reason = judge(q, "brindle-2.1.11 was the last version of brindle to support OpenSSL 1.0 [1].")
    assert verdict == "no"
    assert "brindle-2.1.11" in reason
    verdict, _ = judge(
        "Which Python versions does quill/crypto support?", "AWS SDK for Python has dropped 3.6 [5]."
    )
    assert verdict == "no"


def test_the_questions_own_name_or_a_plain_first_word_is_not_another_thing() -> None:
    q = "Which Python versions does quill/crypto support?"
    assert judge(q, "quill/crypto supports Python 3.9+ [1].")[0] == "yes"
    assert judge(q, "Compatible with Python 3.9+ [1].")[0] != "no"


def test_a_protocol_number_the_question_names_is_not_a_release() -> None:
    q = "Which version of the Brindle server added HTTP/2 support?"
    assert judge(q, "It supports HTTP/1.1, HTTP/2, and WebSockets [1].")[0] == "no"
    assert judge(q, "Brindle 3.0.1 added HTTP/2 support [1].")[0] == "yes"
