"""A how-to question is answered by what to do, and a README often says it
as a lead-in ending in ":" over a short code block ("... can be disabled if
it is installed using:" then the command). The lead-in and its command are
quoted as one sentence, the command in backticks: shell and REPL prompts
dropped, the output after a prompt dropped, a line ending in a backslash
joined to the next. Verify reads the same sentence from the evidence. A
question that is not a how-to, and a block too long to quote in a line, get
no such sentence."""

from __future__ import annotations

from selfrag_nb.cleantext import clean_text
from selfrag_nb.llm.offline.generate import generate
from selfrag_nb.llm.offline.usefulness import usefulness
from selfrag_nb.llm.offline.verify import verify
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, UsefulnessInputs, VerifyInputs


def ev(text: str) -> Evidence:
    # As the stages pass chunk text: clean (markup out, hard wraps joined).
    return Evidence(index=1, chunk_id="c1", source="zonekit.md", text=clean_text(text))


SYSTEM = ev(
    "### Disabling vendored code\n\n"
    "A copy of the zone database is vendored and used by default, but can be disabled "
    "if zonekit is installed using:\n\n"
    "```console\n$ env ZONEKIT_USE_SYSTEM=1 \\\n  python -m pip install --no-binary=zonekit zonekit\n```\n\n"
    "Overriding the build\n\nUsually the build process guesses the compiler.\n"
)
HOW = "How do I build zonekit against the system's zone database instead of the vendored copy?"


def test_a_how_to_is_answered_by_the_lead_in_and_its_command() -> None:
    out = generate(GenerateInputs(question=HOW, evidence=[SYSTEM]))
    assert (
        "can be disabled if zonekit is installed using: "
        "`env ZONEKIT_USE_SYSTEM=1 python -m pip install --no-binary=zonekit zonekit`" in out.answer
    )
    support = verify(VerifyInputs(question=HOW, answer=out.answer, evidence=[SYSTEM]))
    assert support.isFullySupported, support
    assert usefulness(UsefulnessInputs(question=HOW, answer=out.answer)).verdict == "yes"


def test_output_lines_are_not_commands() -> None:
    text = ev(
        "Check a timestamp with:\n\n```python\n>>> from zonekit import is_valid\n"
        ">>> is_valid('2001-10-23T15:32:12Z')\nTrue\n```\n"
    )
    out = generate(GenerateInputs(question="How do I check a timestamp with zonekit?", evidence=[text]))
    assert "`from zonekit import is_valid; is_valid('2001-10-23T15:32:12Z')`" in out.answer
    assert "True" not in out.answer


def test_not_for_other_questions_nor_long_blocks() -> None:
    out = generate(GenerateInputs(question="Is the zone database vendored in zonekit?", evidence=[SYSTEM]))
    assert "`" not in out.answer
    long = ev(
        "Install it using:\n\n```console\n" + "".join(f"$ step-{i} --flag\n" for i in range(6)) + "```\n"
    )
    out = generate(GenerateInputs(question="How do I install zonekit?", evidence=[long]))
    assert "step-" not in out.answer
