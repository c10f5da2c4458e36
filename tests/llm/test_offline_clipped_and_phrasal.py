"""Words software English writes two ways: properties found on the tune sets.

* a clipped word is the long word ("env" for environment, "repo" for
  repository, "docs" for documentation), each way round;
* a phrasal verb is the noun made of it written as one word ("set up" the
  environment, the "setup"; "log in", the "login"): its particle joins,
  where other function words never do.
"""

from __future__ import annotations

from selfrag_nb.llm.offline.lexical import joined_words
from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.schemas import GradeInputs


def _score(question: str, text: str) -> int:
    return grade(
        GradeInputs(question=question, text=text, title="quillstack", source="quillstack.md")
    ).relevanceScore


def test_a_clipped_word_is_the_long_word() -> None:
    question = "How do I configure the environment for quillstack?"
    assert _score(question, "Configure the env with quillstack init.") > _score(
        question, "Configure the cache with quillstack init."
    )
    asked_short = "Where is the quillstack repo?"
    assert _score(asked_short, "The quillstack repository is on Codeberg.") > _score(
        asked_short, "The quillstack mirror is on Codeberg."
    )


def test_a_phrasal_verb_is_its_noun_written_as_one_word() -> None:
    assert joined_words("How do I set up quillstack?", "Run the setup script.") == {"set": 1, "up": 1}
    assert joined_words("Where do I log in?", "Open the login page.") == {"log": 1, "in": 1}
    # other function words still never join: "is it" is not "isit"
    assert not joined_words("Why is it slow?", "isit")
    question = "How do I set up my environment for working on quillstack after cloning the repository?"
    chunk = "After cloning, setup your env with uv sync or pip install -e . --group dev"
    assert _score(question, chunk) >= 50
