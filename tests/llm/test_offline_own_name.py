"""A chunk of the document the question names is about it.

"Who maintains quillpath-ng?" names the document quillpath-ng.rst. Its
Contributors section says "This package is authored and maintained by:"
without repeating the name: it is graded relevant, because the name the
question asks about is the document's own (its file name or title). A chunk
of that document that says nothing else asked is not credited with the name."""

from __future__ import annotations

from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.schemas import GradeInputs

Q = "Who maintains quillpath-ng?"


def score(
    text: str, source: str = "quillpath-ng.rst", title: str = "Python QuillPath Next"
) -> tuple[int, str]:
    out = grade(GradeInputs(question=Q, text=text, source=source, title=title, heading=f"{title} > Section"))
    return out.relevanceScore, out.gaps


def test_the_documents_own_name_counts_as_mentioned() -> None:
    value, gaps = score("This package is authored and maintained by:\n\n- Ada Finch\n- Kurt Mahler")
    assert value >= 50, gaps
    assert "quillpath-ng" not in gaps


def test_another_documents_chunk_does_not_get_the_name() -> None:
    value, gaps = score(
        "This package is authored and maintained by:\n\n- Ada Finch", source="otherlib.rst", title="Otherlib"
    )
    assert value < 50
    assert "quillpath-ng" in gaps


def test_a_chunk_saying_nothing_else_asked_is_not_credited() -> None:
    value, gaps = score("To install, run pip with the wheel from the release page.")
    assert value < 50
    assert "quillpath-ng" in gaps
