"""Two answer forms a question names by its own words.

- "Which class / function / method / exception ... does X use?" asks for a
  name written as code: mixed case ("StrictParser", "HTTPError"), words
  joined by "_" or dots, or a call. A sentence that names one the question
  does not hold is the answer, for generate and for the usefulness check;
  the kind is the noun right before the verb, so "Which error message is
  shown?" asks for a message, not code.
- "What is the X library?" asks what X is: "library" classifies X, and a
  README's definition of itself ("An implementation-agnostic implementation
  of ...") seldom repeats it. The grade of a chunk of X's own document and
  the usefulness check do not count it as missing.
- A when-question is answered by a sentence that states a point in time, as
  the usefulness check demands ("When: Thursdays 8:00am" over "Our meetings
  are open to everyone"): one that states none is scored down, as one that
  names no variable is for a question asking for an environment variable;
  and a how-to question by one that says what to do (an imperative, "you
  can ...", something to type), over one that describes how a thing works.

The documents are invented; each rule is a property of English questions and
of how code names are written, not of one corpus.
"""

from __future__ import annotations

from selfrag_nb.cleantext import clean_text
from selfrag_nb.llm.offline.answer_kind import asked_head, names_kind
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.question import CODE_Q_RE, code_names
from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, GradeInputs, UsefulnessInputs

PARSER_DOC = (
    "Usage\n=====\n\n"
    "The ``parse`` call signature is ``parse(text, schema, cls=StrictParser)``.\n\n"
    "The first argument is always the text you want to parse.\n"
    "The second argument is always the schema object.\n"
    "The ``cls`` keyword argument is optional and defaults to ``StrictParser``.\n"
)
CLASS_Q = "Which parser class does quillkit's parse() use when no cls argument is given?"

MEETINGS = "quillkit > Community meetings"
MEETINGS_DOC = (
    "Our community meetings are open to everyone who uses quillkit.\n\n"
    "- When: Tuesdays 9:30am, Central European time\n"
    "- Where: the project's video room\n\n"
    "See our tentative roadmap here.\n"
)


def ev(text: str, heading: str = "") -> Evidence:
    return Evidence(
        index=1, chunk_id="c1", source="quillkit.md", title="quillkit", heading=heading, text=clean_text(text)
    )


def test_a_question_for_a_code_kind_is_told_by_the_noun_before_its_verb() -> None:
    assert CODE_Q_RE.match(CLASS_Q)
    assert CODE_Q_RE.match("What exception does quillkit raise on a bad schema?")
    assert CODE_Q_RE.match("Which function is called for each row?")
    assert not CODE_Q_RE.match("Which error message is shown for a bad schema?")
    assert not CODE_Q_RE.match("What license is quillkit released under?")
    assert not CODE_Q_RE.match("How do I pick a parser class?")


def test_code_names_are_the_ones_the_question_does_not_hold() -> None:
    text = "parse() defaults to StrictParser; set read_timeout or call os.path.join, e.g. here."
    assert code_names(text, CLASS_Q) == ["StrictParser", "read_timeout", "os.path.join"]
    assert code_names("It raises HTTPError, not ValueError.", "Which exception ...?") == [
        "HTTPError",
        "ValueError",
    ]
    # Plain words, versions, "e.g." and a capitalised first word are not code.
    assert code_names("The first argument is v1.2, i.e. the text.", CLASS_Q) == []


def test_a_code_name_answers_which_class() -> None:
    assert asked_head(CLASS_Q) == "class"
    right = "The cls keyword argument is optional and defaults to StrictParser."
    wrong = "The first argument is always the text you want to parse."
    assert names_kind(right, "class", CLASS_Q)
    assert not names_kind(wrong, "class", CLASS_Q)
    # Not "no": the class is named (the answer leaves the package's name
    # unsaid, which is "partly" on its own).
    assert usefulness(UsefulnessInputs(question=CLASS_Q, answer=right + " [1]")).verdict != "no"
    assert usefulness(UsefulnessInputs(question=CLASS_Q, answer=wrong + " [1]")).verdict == "no"


def test_generate_quotes_the_sentence_naming_the_class() -> None:
    out = generate(GenerateInputs(question=CLASS_Q, evidence=[ev(PARSER_DOC)]))
    assert "defaults to StrictParser [1]." in out.answer
    assert usefulness(UsefulnessInputs(question=CLASS_Q, answer=out.answer)).verdict == "yes"


def test_a_when_question_is_answered_by_a_point_in_time() -> None:
    question = "When do the quillkit community meetings take place?"
    out = generate(GenerateInputs(question=question, evidence=[ev(MEETINGS_DOC, MEETINGS)]))
    # Quoted in document order; the item with the time is the one chosen first.
    assert "When: Tuesdays 9:30am, Central European time [1]" in out.answer
    assert "roadmap" not in out.answer
    assert usefulness(UsefulnessInputs(question=question, answer=out.answer)).verdict != "no"
    # Without a time in the evidence, the topical sentence is still the answer
    # (the usefulness check then says what is missing).
    no_time = MEETINGS_DOC.replace("- When: Tuesdays 9:30am, Central European time\n", "")
    out = generate(GenerateInputs(question=question, evidence=[ev(no_time, MEETINGS)]))
    assert out.answer.startswith("Our community meetings are open to everyone")


def test_what_is_the_x_library_does_not_need_the_word_library() -> None:
    question = "What is the inkwell library?"
    lead = "A lightweight implementation of JSON pointer resolution."
    own = grade(
        GradeInputs(question=question, text=lead, title="inkwell", heading="inkwell", source="inkwell.rst")
    )
    assert own.isRelevant
    assert "library" not in own.gaps
    # Another document's chunk is not credited with the kind: the rule is
    # about the document the name is the title of.
    other = grade(
        GradeInputs(question=question, text=lead, title="quillkit", heading="quillkit", source="quillkit.md")
    )
    assert not other.isRelevant
    # The usefulness check misses the name the lead leaves to its title, not the kind.
    said = usefulness(UsefulnessInputs(question=question, answer=lead + " [1]"))
    assert said.missing == "inkwell", said
    named = usefulness(UsefulnessInputs(question=question, answer="inkwell: " + lead + " [1]"))
    assert named.verdict == "yes", named
    # The kind is framing only for a definition question.
    assert (
        "library"
        in grade(
            GradeInputs(
                question="Which library does inkwell use for parsing?",
                text=lead,
                title="inkwell",
                source="inkwell.rst",
            )
        ).gaps
    )


TIMEOUT_DOC = (
    "quillkit gives each test its own timeout thread, which watches one test at a time.\n\n"
    "To override the timeout for a single test, use the marker ``@quillkit.timeout(60)``.\n"
)


def test_a_how_to_question_is_answered_by_what_to_do() -> None:
    question = "How do I give one test its own timeout with quillkit?"
    out = generate(GenerateInputs(question=question, evidence=[ev(TIMEOUT_DOC)]))
    # The instruction is chosen (quoted in document order, after the description).
    assert (
        "To override the timeout for a single test, use the marker @quillkit.timeout(60) [1]." in out.answer
    )
    assert usefulness(UsefulnessInputs(question=question, answer=out.answer)).verdict != "no"
    # A question that is not a how-to is answered by the description.
    what = generate(GenerateInputs(question="What does quillkit give each test?", evidence=[ev(TIMEOUT_DOC)]))
    assert what.answer.startswith("quillkit gives each test its own timeout thread")
