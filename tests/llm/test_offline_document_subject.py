""" "owner/project" (a repository's name: "pyca/cryptokit") names the project
after the slash, whose document is "cryptokit.rst": evidence from that
document comes before another README that shares more of the question's
words (a sentence from another package's document is the most confident kind
of wrong answer)."""

from __future__ import annotations

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.subject import subject_names
from selfrag_nb.llm.schemas import Evidence, GenerateInputs


def ev(i: int, source: str, title: str, text: str) -> Evidence:
    return Evidence(index=i, chunk_id=f"c{i}", source=source, title=title, text=text)


OWN = ev(
    1,
    "cryptokit.rst",
    "cryptokit",
    "Our goal is a standard library of ciphers. It supports Python 3.9+ and PyPy3.",
)
OTHER = ev(
    2,
    "nbrunner.md",
    "nbrunner",
    "As minor Python versions are sunset by the Python org, nbrunner will similarly drop support in the future.",
)


def test_owner_slash_project_names_the_project() -> None:
    question = "Which Python versions does pyca/cryptokit support?"
    assert subject_names(question, [OWN, OTHER]) == ["cryptokit"]
    out = generate(GenerateInputs(question=question, evidence=[OWN, OTHER]))
    assert "3.9+" in out.answer
    assert "nbrunner" not in out.answer
