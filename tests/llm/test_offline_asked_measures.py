"""Answers accepted although they give nothing of what was asked, each a
property of English questions, not of one document:

* "Which versions of <a long name> does X work with?" asks for versions
  however many words stand between "versions" and the verb;
* a noun of measurement ("What throughput / latency / speedup does X
  report?") asks for a figure, as "how many" does, and so does a quantity's
  word ("What is the maximum input length ...?"); a digit inside a name the
  question holds ("quill-l6-v2") is no figure;
* two words joined by a hyphen ("quill-settings", "read-only") name a thing:
  evidence that never mentions it does not answer a question about it, and
  evidence that writes its words apart or together does;
* one bare word before "release" / "version" ("In which quilltest release
  ...?") is whose release is asked about, unless it says which ("major");
* a changelog's "v2.14.4" mentions version 2.14.4;
* a lead-in that carries its own code ("..., pass width=2:") says what to do
  when its example is cut off with the chunk: "How do I ...?" quotes it.
"""

from __future__ import annotations

import pytest

from selfrag_nb.llm.offline.assess import assess
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.quotable import quotable
from selfrag_nb.llm.offline.subject import mentions, subject_names
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import AssessInputs, Evidence, GenerateInputs, UsefulnessInputs


def verdict(question: str, answer: str) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


def ev(i: int, text: str, source: str) -> Evidence:
    return Evidence(index=i, chunk_id=f"c{i}", source=source, title="", text=text)


def test_versions_of_a_long_name_are_asked_for_whatever_the_distance_to_the_verb() -> None:
    q = "Which versions of the classic Brindle Desk Notebook does quillkit work with?"
    no_version = "This package makes Quill widgets available in the classic Brindle Desk Notebook [1]."
    assert verdict(q, no_version) == "no"
    assert verdict(q, "quillkit works with Brindle Desk Notebook 6.4 and later [1].") != "no"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (
            "What shuffle throughput does the Quillsort paper report for Brindle?",
            "The Quillsort paper reports a shuffle throughput of 1.2 TB per minute on Brindle [1].",
        ),
        (
            "What latency does quillkit add to each request?",
            "quillkit adds under 2 ms of latency to each request [1].",
        ),
        ("What speedup over pure Python does quillkit claim?", "quillkit claims a speedup of about 40x [1]."),
    ],
)
def test_a_noun_of_measurement_asks_for_a_figure(question: str, answer: str) -> None:
    title = "Quillsort: large-scale data shuffle in Brindle"
    assert verdict(question, f"{title} [1].") == "no"
    assert "figure" in usefulness(UsefulnessInputs(question=question, answer=title)).missing
    assert verdict(question, answer) == "yes"
    # The same answer without its figure names the measure, not its value.
    assert (
        verdict(question, answer.replace("1.2 TB", "a lot").replace("2 ms", "little").replace("40x", "much"))
        == "no"
    )


def test_a_quantity_asked_for_is_not_answered_by_the_digits_of_a_name() -> None:
    q = "What is the maximum input sequence length, in tokens, of the quill-l6-v2 model?"
    assert verdict(q, "Minimal CLI: the command quill-l6-v2 prints the model directory [1].") == "no"
    assert verdict(q, "The quill-l6-v2 model reads at most 256 tokens of input sequence length [1].") == "yes"
    # "How many" counts as before, and a how-to asks for a step, not a figure.
    assert (
        verdict(
            "How do I raise the maximum upload size of quillpost?", "Set max_upload in quillpost.toml [1]."
        )
        != "no"
    )


def test_two_words_joined_by_a_hyphen_name_a_thing() -> None:
    q = "How do I set an environment variable prefix for a quill-settings model?"
    assert subject_names(q, []) == ["quill-settings"]
    # Function words and short parts are not names: "built-in", "e-mail".
    assert subject_names("How do I list the built-in e-mail handlers?", []) == []
    # A participle describes: "free-threaded", "community-maintained" name nothing.
    assert subject_names("Does quillkit ship free-threaded and community-maintained wheels?", []) == []
    # An adjective opening a compound modifier describes the noun: "large-file storage".
    assert subject_names("Which existing large-file storage does quillstore work with?", []) == ["quillstore"]
    other = ev(1, "Make sure the PATH environment variable is set correctly for the model.", "brindle.md")
    out = assess(AssessInputs(question=q, evidence=[other]))
    assert out.action == "REFUSE", out
    assert "quill-settings" in out.reason
    own = ev(2, "Quill settings models read an environment variable prefix set with env_prefix.", "quill.md")
    assert assess(AssessInputs(question=q, evidence=[own])).action == "ANSWER"


def test_the_word_before_release_names_whose_release_it_is() -> None:
    q = "In which quilltest release was support for Python 3.9 dropped?"
    assert "quilltest" in subject_names(q, [])
    assert subject_names("In which major release was support for Python 3.9 dropped?", []) == ["Python 3.9"]
    other = ev(1, "Dropped support for Python 3.9 in 1.2.2.", "brindle-timeout.rst")
    out = assess(AssessInputs(question=q, evidence=[other]))
    assert out.action == "REFUSE", out
    assert "quilltest" in out.reason
    own = ev(2, "quilltest 8.4 dropped support for Python 3.9.", "quilltest.rst")
    assert assess(AssessInputs(question=q, evidence=[own])).action == "ANSWER"


def test_a_version_with_its_v_is_the_version() -> None:
    q = "Which jiter version does Quill 2.14.4 bump to, and why?"
    entry = Evidence(
        index=1,
        chunk_id="c1",
        source="quill.md",
        title="quill",
        heading="Changelog > v2.14.4 (2026-11-19) > Packaging",
        text="Bump jiter to v0.19.0. This addresses memory issues of the previous jiter release.",
    )
    assert mentions("Quill 2.14.4", entry)
    assert assess(AssessInputs(question=q, evidence=[entry])).action == "ANSWER"
    assert not mentions("Quill 2.14.5", entry)


def test_a_compound_modifier_is_mentioned_by_its_words_written_apart() -> None:
    q = "How do I open a quillkit archive in read-only mode?"
    text = "Pass mode='r' to open an archive read only; writes then raise QuillError."
    assert assess(AssessInputs(question=q, evidence=[ev(1, text, "quillkit.md")])).action == "ANSWER"


def test_a_lead_in_carrying_its_own_code_is_a_statement_when_its_example_is_cut_off() -> None:
    text = (
        "Some glyphs have an ambiguous width. These glyphs count as one cell by default.\n"
        "By default quillwidth treats ambiguous glyphs as narrow (one cell). "
        "For terminals that draw them as two cells, pass wide_mode=2:"
    )
    q = "How do I make quillwidth count ambiguous glyphs as two cells wide?"
    answer = generate(GenerateInputs(question=q, evidence=[ev(1, text, "quillwidth.md")])).answer
    assert "pass wide_mode=2 [1]." in answer, answer
    assert verdict(q, answer) == "yes"
    # Cut off the same way, a lead-in that only announces its code ("run:") says
    # nothing, nor does one whose code is its subject, over the items it announces.
    said = [s for s, _ in quotable("The width is cached. To measure a glyph, run:", how_to=True)]
    assert said == ["The width is cached."], said
    said = [
        s
        for s, _ in quotable("By default, measure() will:\n- count ambiguous glyphs as narrow\n", how_to=True)
    ]
    assert not any("will." in s for s in said), said
