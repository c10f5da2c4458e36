"""A lead-in that joins a statement to its list with "and" ("X requires
Python 3.10 or later and supports the following platforms:") states its first
conjunct by itself: only the second one points at the items. The statement
is quotable; the lead-in as a whole still is not."""

from __future__ import annotations

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.schemas import Evidence, GenerateInputs


def ev(i: int, text: str, source: str) -> Evidence:
    return Evidence(index=i, chunk_id=f"c{i}", source=source, text=text)


QUILL = ev(
    1,
    "Quillpack is installed from PyPI with pip.\n\n"
    "Quillpack requires Python 3.10 or later and supports the following platforms:\n"
    "- macOS 10.8+ via the Security framework\n- Windows via CryptoAPI\n- Linux via OpenSSL\n",
    "quillpack.md",
)
OTHER = ev(2, "[0.19.0] - 2021-07-24: Require Python 3.5 or a later version.", "changes.md")


def test_the_statement_before_and_is_quoted() -> None:
    out = generate(
        GenerateInputs(question="Which Python version does Quillpack require?", evidence=[QUILL, OTHER])
    )
    assert "Quillpack requires Python 3.10 or later [1]." in out.answer
    assert "3.5" not in out.answer
    assert "following" not in out.answer


def test_a_lead_in_without_a_statement_of_its_own_is_still_skipped() -> None:
    only = ev(1, "Quillpack supports the following platforms:\n- macOS\n- Windows\n- Linux\n", "quillpack.md")
    out = generate(GenerateInputs(question="Which Python version does Quillpack require?", evidence=[only]))
    assert "following" not in out.answer
