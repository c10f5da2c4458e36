"""Names, events and kinds: properties of English found on a fresh tune set.

* words a document's own name writes together are one name, a function word
  among them too: "Its Quill" is "itsquill.md"'s subject, not "Quill";
* a present-tense when-question ("When does X check ...?") asks at which
  event: a temporal clause ("while loading a token") answers it; the past
  tense ("When did X drop ...?") still asks for a date;
* a name of several capitalised words is one: "the entire Quill Development
  Team" is the copyright holder the who-question asks for;
* "What kind of component is X?" is answered by a copula saying what X is;
* channels are named with "#": "#quill" names the IRC channel asked for;
* a noun in "-sion" meets its verb: "extension" / "extend";
* a relative clause's bare subject is a name: "that quillstack supports";
* a README's tagline opening with "A" / "An" is quotable prose.
"""

from __future__ import annotations

from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.lexical import stem
from selfrag_nb.llm.offline.quotable import quotable
from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.offline.subject import mentions, subject_names
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, GradeInputs, UsefulnessInputs


def _verdict(question: str, answer: str) -> str:
    return usefulness(UsefulnessInputs(question=question, answer=answer)).verdict


def _ev(text: str, source: str) -> Evidence:
    return Evidence(index=1, text=text, source=source, title=source.rsplit(".", 1)[0], chunk_id="c1")


def test_a_name_written_apart_with_a_function_word_is_the_documents_name() -> None:
    ev = _ev("A signature is checked while loading a token.", "itsquill.md")
    names = subject_names("When does Its Quill check the signature of a token?", [ev])
    assert names == ["Its Quill"]
    assert all(mentions(n, ev) for n in names)
    # without a document of that name the capitalised word alone is still the name
    assert subject_names("When does Its Quill check the signature of a token?", []) == ["Quill"]


def test_a_present_tense_when_question_is_answered_by_an_event() -> None:
    answer = "A signature is checked automatically while loading a token [1]."
    assert _verdict("When does Quillstack check the signature of a token?", answer) != "no"
    # the past tense asks for a date
    assert _verdict("When did Quillstack start checking signatures?", answer) == "no"
    assert (
        _verdict("When does Quillstack check the signature?", "Signatures are checked by the loader [1].")
        == "no"
    )


def test_a_name_of_several_capitalised_words_is_one_agent() -> None:
    question = "Who holds the copyright on the Quill source code taken as a whole?"
    answer = "Instead, it is the collective copyright of the entire Quill Development Team [1]."
    assert _verdict(question, answer) != "no"
    assert _verdict(question, "The source code is not owned by any single person [1].") == "no"


def test_what_kind_of_thing_is_answered_by_a_copula() -> None:
    question = "What kind of server component is quillterm?"
    assert _verdict(question, "Quillterm is a Tornado request handler providing terminals [1].") != "no"
    assert _verdict(question, "Quillterm can be installed with pip [1].") == "no"


def test_a_channel_is_named_with_a_hash() -> None:
    question = "Which IRC channel can I join to ask questions about Quillstack?"
    assert _verdict(question, "You can also join #quill on irc.example.net to ask questions [1].") != "no"
    assert _verdict(question, "You can also join the mailing list to ask questions [1].") == "no"


def test_a_noun_in_sion_meets_its_verb() -> None:
    assert stem("extension") == stem("extend") == stem("extends")
    assert stem("expansions") == stem("expand")
    assert stem("inclusion") == stem("include")
    # short words and other endings stay apart
    assert stem("tension") != stem("tend")
    assert stem("version") == "version"
    out = grade(
        GradeInputs(
            question="What do the Quill Extensions extend?",
            text="Extensions for the Markdown parser of Quillstack.",
            source="quill-extensions.md",
        )
    )
    assert "extend" not in out.gaps


def test_a_relative_clauses_bare_subject_is_a_name() -> None:
    # English puts a determiner before a singular common noun: "that quillstack
    # supports" names a thing; a bare plural ("that users need") is a common noun.
    assert "quillstack" in subject_names("What is the minimum PyPy version that quillstack supports?", [])
    assert subject_names("Which formats that users need are listed?", []) == []
    assert subject_names("What is the version that the project supports?", []) == []
    answer = "PyZMQ should work with any reasonable version of Python, as well as PyPy [1]."
    assert _verdict("What is the minimum PyPy version that quillstack supports?", answer) == "no"


def test_a_tagline_after_an_indefinite_article_is_quotable() -> None:
    # "A pure python RFC3986 validator" under a README's title: a description,
    # though five words and no full stop; a short title-cased line is not.
    assert quotable("A pure python quill validator") == [("A pure python quill validator", False)]
    assert quotable("A Quill Validator") == []
    assert quotable("Pure python validator") == []
    ev = _ev("A pure python quill validator\n\npip install quill-validator", "quill-validator.md")
    out = generate(GenerateInputs(question="Is quill-validator written in pure Python?", evidence=[ev]))
    assert "A pure python quill validator" in out.answer
