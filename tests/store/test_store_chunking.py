from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selfrag_nb.errors import InputError
from selfrag_nb.store.chunking import chunk_text, context_header, first_title


def test_heading_paths_and_fences() -> None:
    text = (
        "# Refund policy\n\nIntro sentence.\n\n## Exceptions\n\nGift cards.\n\n"
        "```\n# not a heading\n```\n\n### Deep\n\nDeep text.\n\n## Contact\n\nMail us.\n"
        "<!--\n# not a heading either: a comment's lines are not Markdown\n-->\n"
    )
    chunks = chunk_text(text, headings=True, max_chars=800)
    assert [c.heading for c in chunks] == [
        "Refund policy",
        "Refund policy > Exceptions",
        "Refund policy > Exceptions > Deep",
        "Refund policy > Contact",
    ]
    assert "# not a heading" in chunks[1].text
    assert "# not a heading either" in chunks[3].text
    assert all("## " not in c.text for c in chunks)  # heading lines live in .heading, not the text
    assert [c.ordinal for c in chunks] == [0, 1, 2, 3]
    plain = chunk_text(text, headings=False)
    assert {c.heading for c in plain} == {""}


def test_a_lead_in_opens_the_chunk_of_what_it_introduces() -> None:
    # A paragraph ending in ":" introduces the next one: when the chunk is full
    # there, the lead-in moves to the next chunk with its list rather than
    # closing this one without it.
    intro = "Tilekit renders map tiles for Python. " * 5
    text = f"{intro.strip()}\n\nThere are a few tile servers that use Tilekit:\n\n- tile-one\n- tile-two\n- tile-three\n"
    chunks = chunk_text(text, max_chars=240)
    assert [c.text for c in chunks] == [
        intro.strip(),
        "There are a few tile servers that use Tilekit:\n\n- tile-one\n- tile-two\n- tile-three",
    ]
    # Only a lead-in moves, and only when there is other text to close.
    plain = chunk_text(text.replace("Tilekit:", "Tilekit."), max_chars=240)
    assert plain[0].text.endswith("use Tilekit.")


def test_size_bound_and_sentence_boundaries_english() -> None:
    sentences = [f"Sentence number {i} talks about refunds and returns." for i in range(60)]
    chunks = chunk_text(" ".join(sentences), max_chars=200)
    assert len(chunks) > 5
    assert all(len(c.text) <= 200 for c in chunks)
    for c in chunks:  # every chunk starts and ends on a sentence boundary
        assert c.text.startswith("Sentence number")
        assert c.text.endswith(".")


def test_chinese_sentences() -> None:
    text = "".join(f"第{i}条：购买后三十天内可以申请退款。" for i in range(40))
    chunks = chunk_text(text, max_chars=100)
    assert all(len(c.text) <= 100 for c in chunks)
    assert all(c.text.endswith("。") for c in chunks)
    assert all(c.text.startswith("第") for c in chunks)
    assert " " not in "".join(c.text for c in chunks)  # Chinese sentences join without spaces


def test_overlong_sentence_is_cut_hard() -> None:
    word_run = "word " * 100  # 500 chars, no sentence end
    chunks = chunk_text(word_run, max_chars=120)
    assert all(len(c.text) <= 120 for c in chunks)
    assert " ".join(c.text for c in chunks).split() == word_run.split()
    cjk = "退" * 330
    pieces = chunk_text(cjk, max_chars=100)
    assert [len(c.text) for c in pieces] == [100, 100, 100, 30]


def test_context_header() -> None:
    assert context_header("Refund policy", "Refund policy > Exceptions") == "Refund policy > Exceptions"
    assert context_header("Handbook", "Exceptions") == "Handbook > Exceptions"
    assert context_header("Handbook", "") == "Handbook"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from("ab 退款。.!\n#"), min_size=0, max_size=300), min_size=1, max_size=6
    ),
    st.integers(min_value=50, max_value=300),
)
def test_property_chunks_are_bounded_and_keep_all_words(parts: list[str], max_chars: int) -> None:
    text = "\n\n".join(parts)
    chunks = chunk_text(text, max_chars=max_chars)
    assert all(0 < len(c.text) <= max_chars for c in chunks)
    squash = "".join(text.split())
    assert "".join("".join(c.text for c in chunks).split()) == squash


# Underlined titles. The rules come from the formats: CommonMark's setext
# headings ("=" is level 1, "-" level 2, up to three spaces of indent) and
# reStructuredText's section titles (one punctuation character repeated at
# least as long as the title, under it and optionally over it; levels in the
# order the styles first appear). A title is a paragraph of its own.


def test_markdown_setext_headings_set_the_heading_path() -> None:
    text = (
        "python-tile-kit\n===============\n\n[![badge](https://x/b.svg)](https://x)\n\n"
        "Rendering tiles\n---------------\n\nLibrary to render tiles according to RFC 9999.\n\n"
        "# Usage\n\nCall render().\n"
    )
    chunks = chunk_text(text, headings="markdown")
    assert [c.heading for c in chunks] == [
        "python-tile-kit",
        "python-tile-kit > Rendering tiles",
        "Usage",
    ]
    assert chunks[1].text == "Library to render tiles according to RFC 9999."
    assert all("===" not in c.text and "---" not in c.text for c in chunks)
    assert first_title(text, "markdown") == "python-tile-kit"
    assert chunk_text(text, headings=True) == chunks  # True is Markdown


def test_rst_section_titles_take_levels_in_order_of_first_use() -> None:
    text = (
        "==========\n Tilekit\n==========\n\nIntro.\n\n"
        "Install\n=======\n\npip install tilekit\n\n"
        "From source\n~~~~~~~~~~~\n\nClone it.\n\n"
        "Usage\n=====\n\nCall render().\n"
    )
    chunks = chunk_text(text, headings="underline")
    assert [(c.heading, c.text) for c in chunks] == [
        ("Tilekit", "Intro."),
        ("Tilekit > Install", "pip install tilekit"),
        ("Tilekit > Install > From source", "Clone it."),
        ("Tilekit > Usage", "Call render()."),
    ]
    assert first_title(text, "underline") == "Tilekit"


def test_a_rst_document_title_is_a_lone_title_at_the_start() -> None:
    # docutils makes a lone top-level section title at the start the document's
    # title (comments, substitution definitions and targets may come first);
    # a section after an introduction, or one of several, is not
    rule = "=" * 12
    assert (
        first_title(f".. |b| image:: b.svg\n.. _home: https://x\n\nTilekit\n{rule}\n\nText.\n", "underline")
        == "Tilekit"
    )
    assert first_title(f"An introduction.\n\nFeatures\n{rule}\n\nFast.\n", "underline") is None
    assert first_title(f".. image:: logo.png\n\nTilekit\n{rule}\n\nText.\n", "underline") is None
    assert first_title(f"Install\n{rule}\n\nA.\n\nUsage\n{rule}\n\nB.\n", "underline") is None
    # Markdown keeps its rule: the first level-1 heading
    assert first_title("Intro.\n\n# Features\n\nFast.\n", "markdown") == "Features"


def test_lines_that_only_look_like_underlined_titles_stay_text() -> None:
    cases = {
        # a rule under running text: the line above belongs to a paragraph
        "markdown": "First line of a paragraph\nsecond line\n---\n\nMore.\n",
        # list items, table rows and quotes are not titles; nor is indented code
        "markdown ": "- an item\n---\n\n| a | b |\n---\n\n> quoted\n===\n\n    code\n    ---\n",
        # reStructuredText: an underline shorter than the title, an indented
        # line, a transition between paragraphs, a simple table's border
        "underline": "A longer title\n=====\n\n  indented\n  ========\n\nPara.\n\n-----\n\nPara.\n\n"
        "=====  =====\nA      B\n=====  =====\n",
    }
    for style, text in cases.items():
        chunks = chunk_text(text, headings=style.strip())
        assert {c.heading for c in chunks} == {""}, style
        assert "".join(c.text for c in chunks).count("\n") >= 1
    # a fenced block in Markdown keeps its lines
    fenced = "# Top\n\n```\nnot a title\n-----------\n```\n"
    assert [c.heading for c in chunk_text(fenced, headings="markdown")] == ["Top"]
    # plain-text files and reStructuredText have no "# " headings (a shell comment is text)
    assert {c.heading for c in chunk_text("# run this\nmake all\n", headings="underline")} == {""}


def test_an_unknown_heading_style_is_refused_by_name() -> None:
    with pytest.raises(InputError, match="headings must be one of none, atx, markdown, underline"):
        chunk_text("text", headings="setext")
