"""What a question names, and evidence about it: generate prefers it, assess
refuses without it (naming what is missing). General properties of names
(capitals, identifiers, quoted terms, a document named by its own name)."""

from __future__ import annotations

from selfrag_nb.llm.offline.assess import assess
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.lexical import sentences
from selfrag_nb.llm.offline.subject import about, mentions, subject_names, subject_share
from selfrag_nb.llm.schemas import AssessInputs, Evidence, GenerateInputs
from selfrag_nb.text import split_sentences


def ev(i: int, text: str, source: str, title: str = "", **meta: str) -> Evidence:
    return Evidence(index=i, chunk_id=f"c{i}", source=source, title=title, text=text, metadata=meta)


IDNA = ev(
    1,
    "Support for the IDNA protocol as specified in RFC 5891. Python 3.9 and later are supported.",
    "idna.md",
)
OTHER = ev(2, "This library currently supports Python 3.10+ versions.", "nbclient.md")


def test_names_are_capitalised_runs_identifiers_quotes_and_document_names() -> None:
    assert subject_names("How much overhead does Sorted Containers have?", []) == ["Sorted Containers"]
    assert subject_names('What does "tidy mode" change?', []) == ["tidy mode"]
    assert "py-partiql-parser" in subject_names("How is the tokenizer of py-partiql-parser implemented?", [])
    # A lower-case word is a name when a retrieved document is called by it.
    assert "idna" in subject_names("Which Python versions does the idna library support?", [IDNA, OTHER])
    # Not names: the first word, a short acronym, a noun with its head word.
    assert subject_names("What is the API rate limit?", []) == []
    assert subject_names("What is the refund window for a Pro subscription?", []) == []


def test_mentions_reads_text_title_source_and_metadata_and_joined_spellings() -> None:
    sc = ev(1, "Each reference requires eight bytes.", "sortedcontainers.rst")
    assert mentions("Sorted Containers", sc)
    assert mentions("Pro", ev(2, "600 requests per minute.", "limits.md", plan="Pro"))
    assert not mentions("idna", OTHER)
    assert about(["idna", "Python"], IDNA) == 1.0
    assert about(["idna", "Python"], OTHER) == 0.5


def test_generate_answers_from_the_document_about_the_subject() -> None:
    q = "Which Python versions does the idna library support?"
    out = generate(GenerateInputs(question=q, evidence=[OTHER, IDNA]))
    assert "3.9" in out.answer
    assert "3.10" not in out.answer


def test_assess_refuses_when_no_passage_names_the_subject_and_says_which() -> None:
    q = "What license is Sorted Containers released under?"
    plotly = ev(1, "The library is released under the MIT license.", "plotly.md", "plotly")
    out = assess(AssessInputs(question=q, evidence=[plotly]))
    assert out.action == "REFUSE"
    assert "Sorted Containers" in out.reason


def test_sentences_do_not_end_at_abbreviations_or_before_lower_case() -> None:
    text = (
        "It has 66% less overhead than a tree (e.g. Red-Black Tree, AVL). Next. and more, i.e. this. Dr. Who!"
    )
    assert split_sentences(text) == [
        "It has 66% less overhead than a tree (e.g. Red-Black Tree, AVL).",
        "Next. and more, i.e. this.",
        "Dr. Who!",
    ]
    # what the offline model quotes: a period alone between spaces is a word
    # (the current folder), not an end
    assert sentences("Set up with pip install -e . --group dev. Then run it.") == [
        "Set up with pip install -e . --group dev.",
        "Then run it.",
    ]


def test_a_whole_line_of_prose_without_a_full_stop_is_quotable_a_title_is_not() -> None:
    doc = ev(
        1,
        "Resolve JSON Pointers in Python\n\nLibrary to resolve JSON Pointers according to RFC 6901",
        "jp.md",
    )
    out = generate(GenerateInputs(question="Which RFC do JSON Pointers follow?", evidence=[doc]))
    assert out.answer.startswith("Library to resolve JSON Pointers according to RFC 6901")


def test_a_term_with_its_gloss_is_not_quoted_as_an_answer() -> None:
    doc = ev(
        1,
        "- Operating systems platformdirs handles -- default paths for each operating system\n"
        "- It handles the differences between macOS, Windows, Linux, Android and iOS.",
        "platformdirs.md",
        "platformdirs",
    )
    out = generate(
        GenerateInputs(question="Which operating systems does platformdirs handle?", evidence=[doc])
    )
    assert "default paths" not in out.answer
    assert "Android" in out.answer


def test_a_name_is_a_whole_word_not_the_start_of_a_longer_one() -> None:
    # "httpx2" names another package than "HTTPX", "ClickHouse" another than "Click":
    # a document about the longer name does not mention the shorter one.
    other = ev(1, "By default requests time out after 10 minutes (an httpx2.Timeout).", "openai.md")
    assert not mentions("HTTPX", other)
    assert not mentions("Click", ev(2, "ClickHouse stores the events.", "events.md"))
    # The whole word, in any case, before punctuation, or written together, still is.
    assert mentions("HTTPX", ev(3, "Pass an httpx.Client to share connections.", "openai.md"))
    assert mentions("Sorted Containers", ev(4, "pip install sortedcontainers", "install.md"))
    assert mentions("Quillstack", ev(5, "使用Quillstack同步数据。", "zh.md"))
    q = "What is the default timeout for requests made with HTTPX?"
    out = assess(AssessInputs(question=q, evidence=[other]))
    assert out.action == "REFUSE"
    assert "httpx" in out.reason.lower()


def test_the_subjects_own_document_comes_before_one_that_mentions_it_in_passing() -> None:
    # The same sentence in Flask's own README and in another that mentions
    # Flask in passing: the own document's is quoted.
    said = "Flask apps use WSGI, the interface between web servers and applications."
    passing = ev(1, said, "xray.md")
    own = ev(2, said, "flask.md")
    assert subject_share(["Flask"], own) > subject_share(["Flask"], passing) > 0
    out = generate(GenerateInputs(question="Which interface does Flask use?", evidence=[passing, own]))
    assert "[2]" in out.answer
    assert "[1]" not in out.answer
