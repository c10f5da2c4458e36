"""Names asked about in one clause are asked about together.

"Which C compiler does Brindle need on Windows?" asks one fact about Brindle
and Windows at once. A passage about another library's Windows wheels and a
passage about Brindle's Linux build each hold one of the names; neither says
what Brindle needs on Windows, so assess must not answer from them. Names
joined by a coordinator ("X and Y", "X or Y", "X vs Y") are asked about one
by one, as in a comparison, and may each have their own passage."""

from __future__ import annotations

from selfrag_nb.llm.offline.assess import assess
from selfrag_nb.llm.schemas import AssessInputs, Evidence


def ev(i: int, text: str, source: str) -> Evidence:
    return Evidence(index=i, chunk_id=f"c{i}", source=source, text=text)


SPLIT = [
    ev(
        1,
        "Quillpack ships binary wheels for Linux, Windows and macOS; building it needs a C compiler.",
        "quillpack.md",
    ),
    ev(2, "Building Brindle from source requires a C compiler and CMake on Linux.", "brindle.md"),
]


def test_names_held_only_by_different_passages_are_refused_and_named() -> None:
    out = assess(AssessInputs(question="Which C compiler does Brindle need on Windows?", evidence=SPLIT))
    assert out.action == "REFUSE"
    assert "Brindle" in out.reason
    assert "Windows" in out.reason
    assert "together" in out.reason


def test_one_passage_holding_every_name_answers() -> None:
    together = [
        *SPLIT,
        ev(3, "On Windows, Brindle needs the MSVC C compiler from Visual Studio 2022.", "brindle.md"),
    ]
    out = assess(AssessInputs(question="Which C compiler does Brindle need on Windows?", evidence=together))
    assert out.action == "ANSWER"


def test_coordinated_names_may_each_have_their_own_passage() -> None:
    out = assess(
        AssessInputs(
            question="Which C compilers do Brindle and Quillpack need?",
            evidence=[
                ev(1, "Brindle needs a C compiler such as GCC or Clang to build.", "brindle.md"),
                ev(2, "Quillpack needs a C compiler such as GCC or MSVC to build.", "quillpack.md"),
            ],
        )
    )
    assert out.action == "ANSWER"


def test_the_refusal_is_in_the_questions_language() -> None:
    out = assess(
        AssessInputs(
            question="Brindle 在 Windows 上需要哪个 C 编译器？",
            evidence=[
                ev(1, "Quillpack 为 Windows 提供二进制 wheel，构建需要 C 编译器。", "quillpack.md"),
                ev(2, "从源码构建 Brindle 需要 C 编译器和 CMake。", "brindle.md"),
            ],
        )
    )
    assert out.action == "REFUSE"
    assert "同时" in out.reason
