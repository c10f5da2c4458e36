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
* a how-to answered by a description of the problem gains the sentence that
  tells the reader what to do ("you can set run_close_loop=True ..."), and an
  imperative after an adverb ("Automatically convert ...") is one;
* "Which draft (not yet final) RFCs ...?" asks for several things: a remark
  in brackets does not hide the plural, so a lead-in's items are quoted;
* "Why was X written in the first place?" is answered by the purpose of its
  verb ("written initially to support ..."); the emphatic idiom asks nothing;
* when one passage mentions what the question names (or is its document),
  a passage that mentions none of it is not quoted: it is about another thing.
"""

from __future__ import annotations

from selfrag_nb.llm.offline.answer_kind import instructs, names_kind
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


def test_a_how_to_answered_by_the_problem_gains_what_to_do() -> None:
    text = (
        "This will cause a ResourceWarning: unclosed event loop at exit on Python 3.12+, although it is hidden "
        "by default. (Note that if you call quillio.get_event_loop() on the main thread without setting the loop "
        "before, ResourceWarning is expected on Python 3.12~3.13, not caused by quill-async2.)\n\n"
        "If you want to follow quillio.run()'s behavior and get rid of the ResourceWarning, you can set "
        "run_close_loop=True for all apply():\n\n```py\nquill_async2.apply(run_close_loop=True)\n```"
    )
    ev = _ev(1, "quill-async2.md", text)
    question = (
        "How do I get rid of the 'unclosed event loop' ResourceWarning at exit when using quill-async2?"
    )
    answer = generate(GenerateInputs(question=question, evidence=[ev])).answer
    assert "you can set run_close_loop=True" in answer, answer
    # Not a how-to: the description alone answers "What happens ...?".
    question = "What happens at exit with an unclosed event loop when using quill-async2?"
    answer = generate(GenerateInputs(question=question, evidence=[ev])).answer
    assert "run_close_loop=True" not in answer, answer


def test_a_remark_in_brackets_does_not_hide_a_plural_kind() -> None:
    text = "And draft RFCs implementation of:\n\n- draft-quill-jose-none-02\n- draft-quill-chacha-02\n- draft-quill-ecdh-04"
    ev = _ev(1, "quillrfc.rst", text)
    answer = generate(
        GenerateInputs(question="Which draft (not yet final) RFCs does QuillRFC implement?", evidence=[ev])
    ).answer
    assert "draft-quill-chacha-02" in answer, answer


def test_why_was_it_written_in_the_first_place_is_answered_by_its_purpose() -> None:
    text = (
        "What's here is quite minimal (in transparency, it was written initially to support replacing "
        "inkpot in the brindle library). If you see something missing, a PR is definitely welcome to add it."
    )
    # The document calls itself "quill.rs", the question "quill-rs": the name alone matches nothing.
    ev = Evidence(
        index=1, chunk_id="c1", source="quill-rs.rst", title="quill.rs", heading="quill.rs", text=text
    )
    question = "Why was quill-rs written in the first place?"
    answer = generate(GenerateInputs(question=question, evidence=[ev])).answer
    assert "written initially to support replacing inkpot" in answer, answer
    assert "PR is definitely welcome" not in answer, answer


def test_an_imperative_after_an_adverb_is_an_instruction() -> None:
    assert instructs("Automatically convert notebooks to quill documents with the command line tool.")
    assert instructs("Optionally set the output folder first.")
    assert not instructs("Currently supports three modes.")
