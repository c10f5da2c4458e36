""" "owner/project" (a repository's name: "pyca/cryptokit") names the project
after the slash, whose document is "cryptokit.rst": evidence from that
document comes before another README that shares more of the question's
words (a sentence from another package's document is the most confident kind
of wrong answer)."""

from __future__ import annotations

from selfrag_nb.llm.offline.assess import assess
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.subject import subject_names
from selfrag_nb.llm.schemas import AssessInputs, Evidence, GenerateInputs


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


# A code identifier in a question ("zonekit_meta", "zonekit.tz") names the
# thing asked about, in lower case and all: passages that never mention it
# are about something else, however many of the question's other words they
# share, and assess says which name is missing.
CHANGELOGS = [
    ev(1, "httpkit.md", "httpkit", "- Add Python 3.9 to officially supported versions."),
    ev(2, "cleaner.rst", "cleaner", "Update the sanitizer to fix test failures on Python 3.9 (#536)."),
]


def test_an_identifier_is_a_name_the_evidence_must_mention() -> None:
    question = "Which zonekit_meta version was contributed to Python 3.9?"
    assert "zonekit_meta" in subject_names(question, CHANGELOGS)
    out = assess(AssessInputs(question=question, evidence=CHANGELOGS))
    assert out.action == "REFUSE"
    assert "zonekit_meta" in out.reason
    mentioned = [
        *CHANGELOGS,
        ev(3, "zonekit-meta.rst", "zonekit-meta", "zonekit_meta 1.4 was added to Python 3.9."),
    ]
    assert assess(AssessInputs(question=question, evidence=mentioned)).action != "REFUSE"


def test_function_words_and_versions_are_not_identifiers() -> None:
    question = "does it read and/or write i/o streams, e.g. on 3.9?"
    assert subject_names(question, CHANGELOGS) == []
