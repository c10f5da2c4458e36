"""Half sentences, the means a can-question asks for, and the reason after
a statement: properties of English and of how documentation is written,
found on a fresh tune set.

* a sentence that opens on a small conjunction ("but compiling from source
  ... should work") continues one begun before a break (a code block in
  between): half a sentence, never quoted alone;
* "Can I make / force X to ...?" asks for the means, as "How do I make X
  ...?" does, so a lead-in is quoted with its command;
* a full stop before a name written in lower case ends the statement before
  a lead-in ("... and others. quillutil currently supports the following
  platforms:"), which the sentence splitter keeps whole, also when the
  lead-in is read with its items;
* "Why did X replace A with B?" answered only by the statement that it did
  (a sentence that restates the question's event): expository text states,
  then explains, so the next sentence of the same paragraph is quoted as the
  reason (tests/llm/test_offline_reasons.py: not after a sentence that
  shares a word or two).
"""

from __future__ import annotations

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.question import HOW_TO_Q_RE
from selfrag_nb.llm.offline.quotable import quotable
from selfrag_nb.llm.schemas import Evidence, GenerateInputs

_INSTALL = (
    "We build wheels for three platforms, so you can get a binary there with:\n\n"
    "```\npip install quill\n```\n\n"
    "but compiling from source with `pip install quill` should work in most environments.\n"
    "Make sure you are using the latest pip.\n\n"
    "If the wheel does not work for some reason, you can force installation from source with:\n\n"
    "```\npip install --no-binary=quill quill\n```\n"
)


def _ev(text: str) -> Evidence:
    return Evidence(index=1, chunk_id="c1", source="quill.md", title="quill", text=text)


def test_a_sentence_opening_on_a_conjunction_is_half_of_one() -> None:
    said = [s for s, _ in quotable(_INSTALL)]
    assert not any(s.startswith("but ") for s in said), said
    assert "Make sure you are using the latest pip." in said


def test_can_i_make_asks_for_the_means() -> None:
    question = "Can I make pip compile quill from source instead of installing a prebuilt wheel?"
    assert HOW_TO_Q_RE.search(question)
    assert HOW_TO_Q_RE.search("Can I force quill to skip its C extension?")
    assert not HOW_TO_Q_RE.search("Can I use quill on Windows?")  # a yes or no, not a means
    answer = generate(GenerateInputs(question=question, evidence=[_ev(_INSTALL)])).answer
    assert "--no-binary=quill" in answer, answer
    assert not answer.startswith("but"), answer


def test_why_is_answered_by_the_sentence_after_the_statement() -> None:
    text = (
        "### Changed\n\n"
        "- Replaced the optional mypyc build with Cython extensions while retaining the pure Python "
        "fallback. The previous engine started to hit limits around the optimization of our scorer "
        "while Cython lets us steer the generated sources.\n"
        "- Faster scoring in both implementations.\n"
    )
    question = "Why did quill 2.0 replace its optional mypyc build with Cython extensions?"
    answer = generate(GenerateInputs(question=question, evidence=[_ev(text)])).answer
    assert "The previous engine started to hit limits" in answer, answer
    # not across a paragraph: the next item is another change, no reason
    items = (
        "### Changed\n\n"
        "- Replaced the optional mypyc build with Cython extensions while retaining the pure Python "
        "fallback.\n"
        "- Faster start-up of the optimization of our scorer in both implementations.\n"
    )
    answer = generate(GenerateInputs(question=question, evidence=[_ev(items)])).answer
    assert "Faster start-up" not in answer, answer


def test_a_lead_in_opening_on_a_lower_case_name_is_split_from_the_statement_before() -> None:
    text = (
        "It implements many functionalities offered by classic UNIX command line tools such as "
        "ps, top, lsof and others. quillutil currently supports the following platforms:\n\n"
        "- Linux\n- Windows\n- macOS\n"
    )
    said = [s for s, _ in quotable(text)]
    assert (
        "It implements many functionalities offered by classic UNIX command line tools such as "
        "ps, top, lsof and others."
    ) in said, said
    # not after an abbreviation: the lead-in stays whole
    whole = "It reads many formats, etc. quillutil supports these:"
    assert [s for s, _ in quotable(whole + "\n\n- a\n- b\n")] == [whole]
    question = "Which classic UNIX command line tools does quillutil offer the functionality of?"
    ev = Evidence(index=1, chunk_id="c1", source="quillutil.rst", title="quillutil", text=text)
    answer = generate(GenerateInputs(question=question, evidence=[ev])).answer
    assert "such as ps, top, lsof and others" in answer, answer
    # The lead-in read with its items for "Which platforms ...?" is the
    # lead-in alone, not the statement before it.
    with_items = [s for s, _ in quotable(text, several=True) if s.endswith("macOS.")]
    assert with_items == ["quillutil currently supports the following platforms: Linux, Windows, macOS."]
    asked = "Which platforms does quillutil support?"
    answer = generate(GenerateInputs(question=asked, evidence=[ev])).answer
    assert "Linux, Windows, macOS" in answer, answer
    assert "lsof" not in answer, answer
