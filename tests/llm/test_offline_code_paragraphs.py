"""Code set apart from prose, wherever the markup puts it, and what a lead-in
over it says.

- A chunk keeps its paragraphs' indentation: an indented paragraph is a code
  block (reStructuredText after "::" or ".. code-block::", Markdown's four
  spaces), and clean text can tell it only by that indentation.
- A paragraph that is one inline code span ("`pip install x[extra]`" under
  "To include the extra, use:") is a command set apart to be typed: a code
  block, read with its lead-in for a how-to.
- A lead-in over code the question does not ask for is a statement by itself
  when it is a whole clause ("Released under the BSD license::" over the
  licence text); an instruction or a pointer ("Install it with:", "as
  follows:") needs its code and is not.
- A hyphenated word of a name is mentioned by its parts ("Protobuf over HTTP"
  for "Protobuf-over-HTTP").
- "Why ...?" answered by a consequence ("Therefore you have to ...") is
  quoted with the sentence before it: its reason.

The documents are invented; each rule is a property of Markdown,
reStructuredText or English, not of one corpus.
"""

from __future__ import annotations

from selfrag_nb.cleantext import clean_text
from selfrag_nb.codelines import lines
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.quotable import quotable
from selfrag_nb.llm.offline.subject import mentions
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.offline.verify import verify
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, UsefulnessInputs, VerifyInputs
from selfrag_nb.store.chunking import chunk_text

RST = (
    "Gadget Exporter\n===============\n\n"
    "Installation\n------------\n\n"
    "::\n\n     pip install gadget-exporter\n\n"
    "To send spans through a proxy, give the exporter a custom session:\n\n"
    ".. code-block:: python\n\n"
    "     import gadget\n     from gadget.export import SpanExporter\n\n"
    "     exporter = SpanExporter(session=gadget.Session(proxy='p:3128'))\n"
)


def ev(text: str, source: str = "gadget.md", title: str = "") -> Evidence:
    # As the stages pass chunk text: clean (markup out, hard wraps joined).
    return Evidence(index=1, chunk_id="c1", source=source, title=title, text=clean_text(text))


def test_a_chunk_keeps_an_indented_paragraphs_indentation() -> None:
    [chunk] = [c for c in chunk_text(RST, headings="underline") if "session" in c.text]
    assert "\n     pip install gadget-exporter" in chunk.text
    assert "\n     import gadget\n     from gadget.export" in chunk.text
    clean = clean_text(chunk.text)
    # The literal block and the code-block body are code, not a run of prose.
    assert "```\npip install gadget-exporter\n```" in clean
    assert "```python\nimport gadget\nfrom gadget.export import SpanExporter\n" in clean
    kinds = {line.strip(): kind for kind, line in lines(clean)}
    assert kinds["import gadget"] == "code"
    assert kinds["pip install gadget-exporter"] == "code"


def test_an_indented_chunk_reads_as_code_to_the_answer() -> None:
    [chunk] = [c for c in chunk_text(RST, headings="underline") if "session" in c.text]
    out = generate(
        GenerateInputs(
            question="How do I give the gadget exporter a custom session?",
            evidence=[Evidence(index=1, chunk_id="c1", source="gadget.rst", text=clean_text(chunk.text))],
        )
    )
    assert "give the exporter a custom session: `import gadget; " in out.answer
    assert "SpanExporter(session=gadget.Session(proxy='p:3128'))`" in out.answer


MD_SPAN = (
    "`pip install widgetry`\n\n"
    "To include the optional `yaml` dependencies, use:\n\n"
    "`pip install widgetry[yaml]`\n\n"
    "Widgetry draws widgets.\n"
)


def test_a_paragraph_of_one_code_span_is_code() -> None:
    clean = clean_text(MD_SPAN)
    assert "```\npip install widgetry[yaml]\n```" in clean
    kinds = {line.strip(): kind for kind, line in lines(clean)}
    assert kinds["pip install widgetry[yaml]"] == "code"
    # Inline code inside a sentence, and a list of names in code, stay text.
    assert clean_text("Call `load()` first.") == "Call load() first."
    items = lines(clean_text("Backends:\n\n- `fastjson`\n- `slowjson`\n"))
    assert [kind for kind, _ in items] == ["text", "item", "item"]


def test_a_how_to_is_answered_with_the_command_of_its_own_paragraph() -> None:
    question = "How do I install widgetry with its optional yaml dependencies?"
    out = generate(GenerateInputs(question=question, evidence=[ev(MD_SPAN)]))
    assert "To include the optional yaml dependencies, use: `pip install widgetry[yaml]` [1]." in out.answer
    support = verify(VerifyInputs(question=question, answer=out.answer, evidence=[ev(MD_SPAN)]))
    assert support.isFullySupported, support
    assert usefulness(UsefulnessInputs(question=question, answer=out.answer)).verdict == "yes"


LICENCE = clean_text(
    "Licence\n-------\n\n"
    "Released under the `2-clause BSD license <https://example.org/L>`_::\n\n"
    "    Copyright (c) 2020, The Widgetry Developers\n"
)


def test_a_whole_clause_over_code_not_asked_for_is_a_statement() -> None:
    said = [s for s, _ in quotable(LICENCE)]
    assert "Released under the 2-clause BSD license." in said
    out = generate(
        GenerateInputs(question="What license is widgetry released under?", evidence=[ev(LICENCE)])
    )
    assert out.answer == "Released under the 2-clause BSD license [1]."


def test_an_instruction_or_a_pointer_over_code_is_not() -> None:
    for lead in (
        "Install the latest released version of widgetry:",
        "To check your setup, you can run the following:",
        "To add the extra, use:",
        "Widgetry is configured as follows:",
    ):
        said = [s for s, _ in quotable(clean_text(f"{lead}\n\n```\nwidgetry --check\n```\n"))]
        assert not any(s.endswith(".") and s.startswith(lead[:-1]) for s in said), (lead, said)


def test_a_hyphenated_word_of_a_name_is_mentioned_by_its_parts() -> None:
    e = ev(
        "This library exports spans to the collector using Protobuf over HTTP.\n\n"
        "    pip install gadget-exporter-otlp-proto-http\n"
    )
    assert mentions("Protobuf-over-HTTP", e)
    assert mentions("OTLP Protobuf-over-HTTP", e)  # "otlp": a part of the package's name
    assert not mentions("Protobuf-over-gRPC", e)
    assert not mentions("JSON-over-HTTP", e)


WHY_DOC = (
    "### Python API\n\n"
    "Since this package is an implementation detail, it uses a private module name "
    "to keep users from importing it by accident.\n\n"
    "Therefore you have to import the symbols from `_widgetry_core`:\n\n"
    "```python\nfrom _widgetry_core import lib\n```\n"
)


def test_why_is_answered_by_the_reason_before_a_consequence() -> None:
    question = "Why do I have to import the symbols from _widgetry_core?"
    out = generate(GenerateInputs(question=question, evidence=[ev(WHY_DOC)]))
    assert out.answer.startswith(
        "Since this package is an implementation detail, it uses a private module name"
    )
    assert "Therefore you have to import the symbols from _widgetry_core [1]." in out.answer
    # Another question quotes the consequence without its reason.
    how = generate(
        GenerateInputs(question="Where do I import the widgetry symbols from?", evidence=[ev(WHY_DOC)])
    )
    assert "Since this package" not in how.answer


def test_a_fence_right_under_a_paragraph_line_is_code_not_an_underline() -> None:
    # Markdown lets a fenced block interrupt a paragraph; a reStructuredText
    # underline is at least as long as its title, so "```" under a long line is a fence.
    text = (
        "The widgetry package is tested with Python 3.9-3.12, and can be installed\n"
        "with the following command:\n```\npip install widgetry\n```\nTo test it, run:\n```\npytest\n```\n"
    )
    clean = clean_text(text)
    assert clean.startswith(
        "The widgetry package is tested with Python 3.9-3.12, and can be installed with the following command:"
    )
    assert "```\npip install widgetry\n```" in clean
    said = [s for s, _ in quotable(clean)]
    assert not any(s.endswith("can be installed") for s in said), said
    # A real underline, as long as its title, is still one.
    assert clean_text("Usage\n`````\n\nText.") == "Usage\n\nText."
