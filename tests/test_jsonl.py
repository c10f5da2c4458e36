"""The two JSON Lines files people edit by hand, question sets and labels,
are read by one reader (selfrag_nb/jsonl.py) yet keep their own error type:
a bad line raises QuestionSetError or LabelsError (both InputError) naming
"file:line" and what is wrong; a BOM on line 1 and blank lines are fine."""

from __future__ import annotations

import json
from collections.abc import Callable, Sized
from pathlib import Path

import pytest

import selfrag_nb as sr
from selfrag_nb.errors import InputError, LabelsError, QuestionSetError
from selfrag_nb.eval.questions import questions

QUESTION = json.dumps({"id": "q1", "category": "c", "question": "What?"})
LABEL = json.dumps({"kind": "answer", "id": "q1", "useful": "yes"})

#: (loader, its error type, a good line for it)
FILES: dict[str, tuple[Callable[[Path], Sized], type[InputError], str]] = {
    "questions": (questions, QuestionSetError, QUESTION),
    "labels": (sr.Labels, LabelsError, LABEL),
}


@pytest.mark.parametrize("kind", sorted(FILES))
@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (b"\xff\xfe", "not UTF-8 text (invalid start byte at byte 0)"),
        (b"{not json", "not valid JSON: Expecting property name enclosed in double quotes"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON: nested too deeply"),
        (b"[1, 2]", "expected a JSON object, got list"),
        (b'"text"', "expected a JSON object, got str"),
    ],
)
def test_a_bad_line_raises_the_files_own_error_naming_file_and_line(
    tmp_path: Path, kind: str, bad: bytes, problem: str
) -> None:
    load, error, good = FILES[kind]
    path = tmp_path / f"{kind}.jsonl"
    path.write_bytes(good.encode() + b"\n   \n" + bad + b"\n")
    with pytest.raises(error) as info:
        load(path)
    assert type(info.value) is error
    assert str(info.value) == f"{path}:3: {problem}"


@pytest.mark.parametrize("kind", sorted(FILES))
def test_a_bom_on_line_one_and_blank_lines_are_read(tmp_path: Path, kind: str) -> None:
    load, _, good = FILES[kind]
    path = tmp_path / f"{kind}.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + good.encode() + b"\r\n\n\n")
    assert len(load(path)) == 1


@pytest.mark.parametrize("kind", sorted(FILES))
def test_a_bom_after_line_one_is_not_json(tmp_path: Path, kind: str) -> None:
    load, error, good = FILES[kind]
    path = tmp_path / f"{kind}.jsonl"
    path.write_bytes(good.encode() + b"\n\xef\xbb\xbf" + good.encode() + b"\n")
    with pytest.raises(error, match=rf"{kind}\.jsonl:2: not valid JSON"):
        load(path)
