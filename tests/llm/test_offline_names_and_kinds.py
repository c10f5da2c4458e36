"""Names written another way, code names of a kind, and evidence about
something else, each a property of English or of code naming, found on a
fresh tune set:

* a name written together in CamelCase ("QuillPress") is mentioned by its
  capitalised words written apart ("Quill Press's support ...");
* a code name ends on its kind: "QuillConfigMixin" answers "Which mixin ...?";
* in "Which standard-library modules does Quill provide ...?" the compound
  before the auxiliary describes the kind asked for: Quill is the subject;
* "Under what licence is quillcore distributed?": a wh-phrase that carries
  its preposition still inverts, so the bare word after "is" is the subject;
* when one passage mentions what the question names (or is its document),
  a passage that mentions none of it is not quoted: it is about another thing.
"""

from __future__ import annotations

from selfrag_nb.llm.offline.answer_kind import names_kind
from selfrag_nb.llm.offline.assess import assess
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.subject import mentions, subject_names
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import AssessInputs, Evidence, GenerateInputs, UsefulnessInputs


def _ev(index: int, source: str, text: str) -> Evidence:
    return Evidence(
        index=index, chunk_id=f"c{index}", source=source, title=source.partition(".")[0], text=text
    )


def test_a_camelcase_name_is_mentioned_by_its_words_written_apart() -> None:
    ev = _ev(
        1, "quill-press.md", "Quill Press's support for Brindle 2 was discontinued on December 31, 2020."
    )
    assert mentions("QuillPress", ev)
    assert not mentions("QuillPress", _ev(2, "notes.md", "Quill support for Brindle 2 ended."))
    assert not mentions("InkPress", ev)
    out = assess(AssessInputs(question="When did QuillPress stop supporting Brindle 2?", evidence=[ev]))
    assert out.action.lower() == "answer", out


def test_a_code_name_that_ends_on_the_kind_names_one() -> None:
    question = "Which mixin should an app that subclassed QuillApp add to its bases?"
    answer = "Such apps should add QuillConfigShimMixin in their inheritance list to handle moved traits [1]."
    assert names_kind(answer, "mixin", question)
    assert usefulness(UsefulnessInputs(question=question, answer=answer)).verdict != "no"
    # Naming none: the inheritance list alone is no mixin, nor is the question's own name.
    assert not names_kind("Such apps should change their inheritance list [1].", "mixin", question)
    assert not names_kind("Keep QuillMixin as before [1].", "mixin", "Which mixin replaces QuillMixin?")


def test_a_compound_before_the_auxiliary_describes_the_kind() -> None:
    assert subject_names("Which standard-library modules does Quill provide async versions of?", []) == [
        "Quill"
    ]
    # With no other name, the compound is the subject.
    assert subject_names("Which quill-settings sources are supported?", []) == ["quill-settings"]
    assert subject_names("Does quill-settings support TOML?", []) == ["quill-settings"]


def test_a_passage_about_another_thing_is_not_quoted() -> None:
    question = "Which Python versions does Quill support?"
    other = _ev(1, "inkpot.md", "As minor Python versions are sunset, Inkpot will drop support for them too.")
    about = _ev(2, "press.md", "Press wraps Quill, using it to handle the details of the wire protocol.")
    answer = generate(GenerateInputs(question=question, evidence=[other, about])).answer
    assert "Inkpot" not in answer, answer
    # Alone, the passage is still read (assess decides whether it is about the question).
    answer = generate(GenerateInputs(question=question, evidence=[other])).answer
    assert "Inkpot" in answer, answer


def test_a_wh_phrase_that_opens_with_its_preposition_still_has_a_subject() -> None:
    # "Under what licence is X distributed?": X is named whatever its case.
    assert subject_names("Under what licence is quillcore distributed?", []) == ["quillcore"]
    assert subject_names("For which platforms does quillcore ship wheels?", []) == ["quillcore"]
    assert subject_names("Under which conditions does it retry?", []) == []
