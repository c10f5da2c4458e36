"""A line over a command whose colon was left out is a lead-in too.

READMEs often write "Automatically convert notebooks to quillbooks with the
CLI" directly over the command that does it, without a colon. For a how-to
question the line and its command are one answer, quoted as "...with the
CLI: `quill convert nb.ipynb > nb.py`." and verified against the same
reading of the evidence; the line alone (which names no command) is not
quoted. A line with closing punctuation, or of fewer than three words, is no
lead-in."""

from __future__ import annotations

from selfrag_nb.cleantext import clean_text
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.quotable import quotable
from selfrag_nb.llm.offline.verify import verify
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, VerifyInputs

TEXT = (
    "**Run as scripts.** Execute a quillbook as a script at the command line:\n\n"
    "```bash\npython your_book.py\n```\n\n"
    "**Convert notebooks.** Automatically convert Jupyter notebooks\nto quillbooks with the CLI\n\n"
    "```bash\nquill convert your_notebook.ipynb > your_book.py\n```\n\n"
    "or use the web page.\n"
)
Q = "How do I convert a Jupyter notebook into a quillbook?"
EV = Evidence(index=1, chunk_id="a", source="quillbook.md", title="quillbook", text=clean_text(TEXT))
JOINED = (
    "Automatically convert Jupyter notebooks to quillbooks with the CLI: "
    "`quill convert your_notebook.ipynb > your_book.py`."
)


def test_the_line_and_its_command_answer_the_how_to() -> None:
    answer = generate(GenerateInputs(question=Q, evidence=[EV])).answer
    assert JOINED.rstrip(".") in answer
    assert verify(VerifyInputs(question=Q, answer=answer, evidence=[EV])).recommendation == "ACCEPT"


def test_the_line_alone_is_not_quoted_for_a_how_to() -> None:
    said = [s for s, _ in quotable(clean_text(TEXT), how_to=True)]
    assert JOINED in said
    assert "Automatically convert Jupyter notebooks to quillbooks with the CLI" not in said


def test_a_punctuated_or_short_line_is_no_lead_in() -> None:
    for line in ("Convert notebooks with the CLI.", "Converting"):
        text = f"{line}\n\n```bash\nquill convert nb.ipynb\n```\n"
        said = [s for s, _ in quotable(clean_text(text), how_to=True)]
        assert not any("`quill convert" in s for s in said), said
