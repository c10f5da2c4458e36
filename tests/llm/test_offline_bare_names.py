"""A bare word where English needs a determiner is a name.

A singular common noun in the subject slot of an inverted question ("does the
library support", "is the lock released") or as the last object of "Who
<verb>s ...?" takes a determiner; a word standing there alone is a proper
name, even in lower case ("does fastjsonschema support", "Who maintains
mdurl?"). Assess then refuses when no covering passage mentions it, as it
does for a capitalised name: a licence line of another package does not say
what this one's licence is."""

from __future__ import annotations

from selfrag_nb.llm.offline.assess import assess
from selfrag_nb.llm.offline.subject import subject_names
from selfrag_nb.llm.schemas import AssessInputs, Evidence


def ev(i: int, text: str, source: str) -> Evidence:
    return Evidence(index=i, chunk_id=f"c{i}", source=source, text=text)


def test_a_bare_word_in_the_subject_slot_of_an_inverted_question_is_a_name() -> None:
    assert "quillpack" in subject_names("What license is quillpack released under?", [])
    assert "tarnfile" in subject_names("Which Python versions does tarnfile support?", [])
    assert "brindle" in subject_names("Which operating systems does brindle run on?", [])


def test_the_bare_last_object_of_who_is_a_name() -> None:
    assert "quillpack" in subject_names("Who maintains quillpack?", [])


def test_words_with_a_determiner_pronouns_and_gerunds_are_not_names() -> None:
    assert subject_names("What license is the library released under?", []) == []
    assert subject_names("Which extra do I need for WebSocket support?", []) == ["WebSocket"]
    assert subject_names("How does caching work?", []) == []
    assert subject_names("Who maintains it?", []) == []


def test_assess_refuses_when_no_covering_passage_mentions_the_bare_name() -> None:
    out = assess(
        AssessInputs(
            question="What license is quillpack released under?",
            evidence=[
                ev(1, "Code released under the MIT license.", "plotly.md"),
                ev(2, "Released under the Apache 2.0 license.", "dateutil.rst"),
            ],
        )
    )
    assert out.action == "REFUSE"
    assert "quillpack" in out.reason


def test_assess_answers_when_a_covering_passage_mentions_the_bare_name() -> None:
    out = assess(
        AssessInputs(
            question="What license is quillpack released under?",
            evidence=[ev(1, "quillpack is released under the MIT license.", "quillpack.md")],
        )
    )
    assert out.action == "ANSWER"


def test_the_verb_after_an_auxiliary_whose_subject_is_the_wh_word_is_not_a_name() -> None:
    # "Who has taken over ...": "who" is the subject, "taken" the verb.
    assert "taken" not in subject_names("Who has taken over stewardship of the project?", [])
    assert "used" not in subject_names("What is used for the cache?", [])
    # A participle after "was" / "has" is the wh-phrase's own verb (passive, perfect).
    assert "added" not in subject_names("Which new endpoint was added in API v3.2?", [])
    assert "dropped" not in subject_names("Which release has dropped Python 3.9 support?", [])
