"""Credits, glossed code and the version a question asks for: properties of
how documentation is written, found on a fresh tune set.

* "Thanks to X for the illustration!" credits X with it: "thanks", "credit"
  and "courtesy" mark who did something, as "by" and "author" do;
* a "term -- gloss" list item whose term names code ("Fonts (user_fonts_dir)
  -- user-writable font installation directory") says what that code is, an
  API entry quoted as a statement; a table of contents ("Guides -- recipes
  for ...") is not;
* a version question is answered by the first version the question does not
  hold, even when the sentence adds no other question word, as a how-many
  question is by the first number ("Adding quillhttp middleware. Support
  quillhttp >= 2.3.").
"""

from __future__ import annotations

from selfrag_nb.llm.offline.answer_kind import names_agent
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.quotable import quotable
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, UsefulnessInputs


def _ev(text: str, source: str = "quill.md") -> Evidence:
    return Evidence(index=1, chunk_id="c1", source=source, title=source.rsplit(".", 1)[0], text=text)


def test_thanks_credit_someone_with_the_work() -> None:
    question = "Who drew the illustration used in the Quill README?"
    said = "Thanks to Olha Quillwright for the illustration [1]!"
    assert names_agent(said, question)
    assert not names_agent("The illustration shows a narwhal [1].", question)
    assert usefulness(UsefulnessInputs(question=question, answer=said)).verdict != "no"
    text = "## Quill\n\nQuill is a dataframe layer.\n\nThanks to Olha Quillwright for the illustration!\n"
    answer = generate(GenerateInputs(question=question, evidence=[_ev(text)])).answer
    assert "Olha Quillwright" in answer, answer


def test_a_glossed_code_item_is_quoted_and_a_table_of_contents_is_not() -> None:
    text = (
        "Convenience functions:\n\n"
        "- Documents (user_documents_dir), Downloads (user_downloads_dir)\n"
        "- Fonts (user_fonts_dir) — user-writable font installation directory\n\n"
        "Documentation:\n\n"
        "- Guides — recipes for common tasks and platform-specific tips\n"
        "- Reference — the full API of every function\n"
    )
    said = [s for s, _ in quotable(text)]
    assert "Fonts (user_fonts_dir) — user-writable font installation directory" in said, said
    assert not any(s.startswith(("Guides", "Reference")) for s in said), said
    question = "Which quilldirs function gives me a user-writable folder for installing fonts?"
    answer = generate(GenerateInputs(question=question, evidence=[_ev(text, "quilldirs.md")])).answer
    assert "user_fonts_dir" in answer, answer


def test_the_first_version_answers_a_version_question() -> None:
    text = (
        "### Working with quillhttp\n\n"
        "Adding quillhttp middleware. Support quillhttp >= 2.3.\n\n"
        "```python\nfrom quillhttp import web\n```\n\n"
        "Tracing quillhttp client. Support quillhttp >=3.\n"
    )
    ev = Evidence(
        index=1,
        chunk_id="c1",
        source="quill-xray-sdk.md",
        title="quill-xray-sdk",
        heading="Quill X-Ray SDK > Working with quillhttp",
        text=text,
    )
    question = (
        "Which quillhttp version do I need at least to use the Quill X-Ray SDK's quillhttp server middleware?"
    )
    answer = generate(GenerateInputs(question=question, evidence=[ev])).answer
    assert answer == "Adding quillhttp middleware [1]. Support quillhttp >= 2.3 [1].", answer
