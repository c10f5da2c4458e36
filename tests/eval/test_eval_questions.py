"""Question-set loader: schema, lenient extras, strict errors with line numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import selfrag_nb as sr
from selfrag_nb.errors import QuestionSetError
from selfrag_nb.eval.questions import Question, QuestionSet, questions, sample_path
from selfrag_nb.store.types import User


def _write(tmp_path: Path, lines: list[str], name: str = "qs.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


GOOD = {
    "id": "q1",
    "category": "factual",
    "question": "How long is the refund window?",
    "should_retrieve": True,
    "relevant": ["policies/refund-policy-2025.md"],
    "expected": ["answered", "disclaimed"],
    "must_include": "30 days",
}


def test_sample_set_loads_through_the_public_name() -> None:
    qs = sr.questions("sample")
    assert qs.name == "sample"
    assert Path(qs.path) == sample_path()
    assert len(qs) == sum(
        1 for line in sample_path().read_text(encoding="utf-8").splitlines() if line.strip()
    )
    assert "greeting" in qs.categories
    assert len({q.id for q in qs}) == len(qs)
    # Every question names its category and allowed outcomes.
    assert all(q.expected for q in qs)


def test_fields_defaults_and_unknown_fields_kept(tmp_path: Path) -> None:
    rec = {**GOOD, "difficulty": "hard", "notes": {"by": "ana"}}
    p = _write(tmp_path, [json.dumps(rec), json.dumps({"id": 2, "category": "chat", "question": "hi"})])
    qs = questions(p)
    q = qs[0]
    assert q.must_include == ["30 days"]  # a lone string is a one-item list
    assert q.extra == {"difficulty": "hard", "notes": {"by": "ana"}}
    assert q.to_record()["difficulty"] == "hard"
    q2 = qs.get("2")  # numeric ids become text
    assert q2.expected == []
    assert q2.should_retrieve is None
    assert q2.history == []
    assert q2.make_user() == User()


def test_user_and_history(tmp_path: Path) -> None:
    rec = {
        **GOOD,
        "user": {"id": "fiona", "roles": ["finance"]},
        "history": [
            {"role": "user", "content": "Tell me about plans"},
            {"role": "assistant", "content": "Sure"},
        ],
    }
    q = questions(_write(tmp_path, [json.dumps(rec)]))[0]
    assert q.make_user() == User("fiona", roles=["finance"])
    assert q.history[1]["role"] == "assistant"


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"category": "x", "question": "y"}', "missing required field(s) id"),
        ('{"id": "a", "category": "x", "question": "  "}', "question: Value error, must not be blank"),
        (
            '{"id": "a", "category": "x", "question": "y", "expected": ["maybe"]}',
            "unknown outcome(s) ['maybe']",
        ),
        (
            '{"id": "a", "category": "x", "question": "y", "relevant": [1]}',
            "relevant must be a string or a list",
        ),
        (
            '{"id": "a", "category": "x", "question": "y", "history": [{"role": "bot", "content": "c"}]}',
            "history[0]",
        ),
        ('{"id": "a", "category": "x", "question": "y", "user": {"id": "", "roles": []}}', "user"),
        ('{"id": "a", "category": "x", "question": "y", "should_retrieve": "often"}', "should_retrieve"),
    ],
)
def test_bad_line_names_file_and_line(tmp_path: Path, line: str, needle: str) -> None:
    p = _write(tmp_path, [json.dumps(GOOD), "", line])
    with pytest.raises(QuestionSetError) as info:
        questions(p)
    msg = str(info.value)
    assert f"{p}:3:" in msg
    assert needle in msg


def test_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    p = _write(tmp_path, [json.dumps(GOOD), json.dumps(GOOD)])
    with pytest.raises(QuestionSetError, match=r":2: duplicate id 'q1' \(first on line 1\)"):
        questions(p)


def test_missing_empty_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(QuestionSetError, match="not found"):
        questions(tmp_path / "nope.jsonl")
    empty = _write(tmp_path, ["", "   "])
    with pytest.raises(QuestionSetError, match="no questions"):
        questions(empty)
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(json.dumps(GOOD).encode() + b"\n\xff\xfe\n")
    with pytest.raises(QuestionSetError, match=r"b\.jsonl:2: not UTF-8"):
        questions(binary)


def test_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\r\n")
    assert questions(p)[0].id == "q1"


def test_filter_sample_and_pandas() -> None:
    qs = questions("sample")
    cats = qs.categories
    one = qs.filter(category=cats[0])
    assert {q.category for q in one} == {cats[0]}
    first3 = [q.id for q in qs][:3]
    two = qs.filter(category=cats[:2], ids=first3)
    assert [q.id for q in two] == [q.id for q in qs if q.category in cats[:2] and q.id in first3]
    assert len(two) >= 1
    with pytest.raises(KeyError, match="unknown categor"):
        qs.filter(category="no-such-category")
    s1, s2 = qs.sample(10, seed=1), qs.sample(10, seed=1)
    assert [q.id for q in s1] == [q.id for q in s2]
    assert len(s1) == 10
    order = [q.id for q in qs]
    assert [order.index(q.id) for q in s1] == sorted(order.index(q.id) for q in s1)
    per = qs.sample(1, seed=0, per_category=True)
    assert sorted(per.categories) == sorted(cats)
    assert len(per) == len(cats)
    df = qs.to_pandas()
    assert list(df["id"]) == order
    assert isinstance(qs[:3], QuestionSet)
    assert len(qs[:3]) == 3


def test_fingerprint_and_round_trip(tmp_path: Path) -> None:
    qs = questions("sample")
    again = questions(qs.save(tmp_path / "copy.jsonl"))
    assert again.fingerprint == qs.fingerprint
    assert [q.model_dump() for q in again] == [q.model_dump() for q in qs]
    assert qs[:5].fingerprint != qs.fingerprint
    assert qs.describe()["count"] == len(qs)


def test_question_set_rejects_duplicates_and_non_questions() -> None:
    q = Question(id="a", category="c", question="x")
    with pytest.raises(QuestionSetError, match="duplicate question id 'a'"):
        QuestionSet([q, q])
    with pytest.raises(QuestionSetError, match="expected Question records"):
        QuestionSet([{"id": "a"}])  # type: ignore[list-item]  # deliberately wrong type


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
_keys = st.sampled_from(
    [
        "id",
        "category",
        "question",
        "history",
        "user",
        "should_retrieve",
        "relevant",
        "expected",
        "must_include",
        "secret",
        "protected",
        "other",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(
        st.one_of(
            st.binary(max_size=40),
            st.dictionaries(_keys, _json_values, max_size=8).map(lambda d: json.dumps(d).encode()),
            st.text(max_size=30).map(str.encode),
        ),
        max_size=5,
    )
)
def test_fuzz_only_question_set_errors_escape(tmp_path: Path, lines: list[bytes]) -> None:
    p = tmp_path / "fuzz.jsonl"
    p.write_bytes(b"\n".join(lines))
    try:
        qs = questions(p)
    except QuestionSetError as exc:
        message = str(exc)
    else:
        message = ""
        assert len(qs) >= 1
        assert all(isinstance(q, Question) for q in qs)
    if message:
        assert str(p) in message
