"""Fuzzing in one place, with the number of cases each property tried.

    parse(role, raw)        valid outputs of every role, dumped and disguised
                            (fences, prose, indentation) -> parsed
                            back to the same decision; mutated / non-text raw ->
                            never raises, output XOR error
    validate_ranking        indices out of range, duplicates, NaN/inf, None, bools,
                            huge ints, numpy types, broken iterables, huge lists ->
                            RerankProtocolError with a reason, or pairs an oracle agrees
                            with; through RerankStage -> never raises, after within before
    extract_spans /         originals with identifiers, versions, dates, amounts and
    check_rewrite           negations; a rewrite that drops or flips one span -> rejected,
                            a rewrite that only rephrases the filler -> accepted
    questions(path)         records with every field mistyped, paths that are folders
                            -> only QuestionSetError escapes, naming the file

Existing property tests (tests/llm/test_parsing_properties.py,
tests/pipeline/test_stage_spans.py, tests/eval/test_eval_questions.py) cover
arbitrary text and JSON soup; these add the shapes they do not.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cases import record
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from selfrag_nb.errors import QuestionSetError, RerankProtocolError
from selfrag_nb.eval.questions import Question, questions
from selfrag_nb.llm.parsing import parse
from selfrag_nb.llm.schemas import OUTPUTS, ROLES
from selfrag_nb.spans import check_rewrite, extract_spans
from selfrag_nb.stages.rerank import validate_ranking

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


class Count:
    """Counts a property's examples and records the total once it has run."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.n = 0
        self.kinds: Counter[str] = Counter()

    def __call__(self, kind: str = "") -> None:
        self.n += 1
        if kind:
            self.kinds[kind] += 1

    def done(self) -> None:
        assert self.n > 0, f"{self.name}: no example ran"
        record(self.name, self.n)


# ---------------------------------------------------------------------- parse

_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="`"),
    min_size=0,
    max_size=40,
)
_WORDY = st.text(alphabet="abcdefghij klmnop退款政策", min_size=1, max_size=30).filter(str.strip)

_VALID: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "decide": st.fixed_dictionaries(
        {"decision": st.sampled_from(["RETRIEVE", "NO_RETRIEVE"]), "reason": _TEXT}
    ),
    "rewrite": st.fixed_dictionaries({"rewrites": st.lists(_WORDY, max_size=4), "reason": _TEXT}),
    "grade": st.integers(0, 100).flatmap(
        lambda s: st.fixed_dictionaries(
            {"relevanceScore": st.just(s), "isRelevant": st.just(s >= 50), "keyInfo": _TEXT, "gaps": _TEXT}
        )
    ),
    "rerank": st.fixed_dictionaries(
        {
            "ranking": st.lists(
                st.fixed_dictionaries(
                    {
                        "index": st.integers(0, 49),
                        "score": st.floats(0, 1, allow_nan=False).map(lambda x: round(x, 4)),
                    }
                ),
                min_size=1,
                max_size=8,
                unique_by=lambda d: d["index"],
            )
        }
    ),
    "assess": st.fixed_dictionaries(
        {
            "action": st.sampled_from(["ANSWER", "CLARIFY", "REFUSE"]),
            "reason": _TEXT,
            "options": st.lists(_WORDY, max_size=3),
        }
    ),
    "generate": st.fixed_dictionaries({"answer": _WORDY}),
    "verify": st.sampled_from(["ACCEPT", "ADD_DISCLAIMER", "REGENERATE"]).flatmap(
        lambda rec: st.fixed_dictionaries(
            {
                "recommendation": st.just(rec),
                "overallConfidence": st.integers(0, 100),
                "claims": st.lists(
                    st.fixed_dictionaries(
                        {
                            "claim": _WORDY,
                            "verdict": st.sampled_from(["supported", "partial", "unsupported"]),
                            "evidence": st.lists(
                                st.fixed_dictionaries({"doc": st.integers(1, 9), "quote": _WORDY}), max_size=2
                            ),
                            "cited": st.lists(st.integers(1, 9), max_size=3),
                        }
                    ),
                    max_size=3,
                ),
            }
        )
    ),
    "usefulness": st.fixed_dictionaries(
        {
            "verdict": st.sampled_from(["yes", "partly", "no"]),
            "score": st.integers(0, 100),
            "missing": _TEXT,
            "reason": _TEXT,
        }
    ),
}

#: The field that decides what the pipeline does next, per role.
_KEY = {
    "decide": lambda o: o.decision,
    "rewrite": lambda o: [r.strip() for r in o.rewrites],
    "grade": lambda o: (o.relevanceScore, o.isRelevant),
    "rerank": lambda o: [(i.index, i.score) for i in o.ranking],
    "assess": lambda o: o.action,
    "generate": lambda o: o.answer.strip(),
    "verify": lambda o: (
        o.recommendation,
        o.overallConfidence,
        [(c.claim.strip(), c.verdict) for c in o.claims],
    ),
    "usefulness": lambda o: (o.verdict, o.score),
}


def _disguise(text: str, how: str) -> str:
    if how == "fence":
        return f"```json\n{text}\n```"
    if how == "prose":
        return f"Sure! Here is my assessment:\n\n{text}\n\nLet me know if you need more."
    if how == "indent":
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    return text


_PARSE_OK = Count("fuzz: parse valid outputs (8 roles, disguised)")


@FUZZ
@given(
    data=st.data(), role=st.sampled_from(ROLES), how=st.sampled_from(["plain", "fence", "prose", "indent"])
)
def test_valid_outputs_parse_back_to_the_same_decision(data: st.DataObject, role: str, how: str) -> None:
    # generate's plain-text answers are the usual case: prose around JSON is an answer
    assume(not (role == "generate" and how == "prose"))
    value = data.draw(_VALID[role])
    text = json.dumps(value, ensure_ascii=False)
    raw = _disguise(text, how)
    out, err = parse(role, raw)
    _PARSE_OK(role)
    assert err is None, f"{role}: a valid output was rejected: {err}\n{raw}"
    assert isinstance(out, OUTPUTS[role])
    want = OUTPUTS[role].model_validate(value)
    assert _KEY[role](out) == _KEY[role](want), raw


_MUTATIONS = ["truncate", "drop_key", "retype", "dup_key", "nul", "huge_number", "nan", "nest", "bom"]
_PARSE_BAD = Count("fuzz: parse mutated outputs (8 roles)")


def _mutate(value: dict[str, Any], how: str, cut: int, key_pick: int) -> str:
    keys = sorted(value)
    key = keys[key_pick % len(keys)]
    text = json.dumps(value, ensure_ascii=False)
    if how == "truncate":
        return text[: cut % (len(text) + 1)]
    if how == "drop_key":
        return json.dumps({k: v for k, v in value.items() if k != key}, ensure_ascii=False)
    if how == "retype":
        return json.dumps({**value, key: [value[key], {"x": None}]}, ensure_ascii=False)
    if how == "dup_key":
        return text[:-1] + f', "{key}": null}}'
    if how == "nul":
        return text.replace(":", ":\x00", 1)
    if how == "huge_number":
        return json.dumps({**value, key: 0}).replace(": 0", ": " + "9" * 400, 1)
    if how == "nan":
        return json.dumps({**value, key: float("nan")})
    if how == "nest":
        return "[" * 300 + text + "]" * 300
    return "\ufeff" + text


@FUZZ
@given(
    data=st.data(),
    role=st.sampled_from(ROLES),
    how=st.sampled_from(_MUTATIONS),
    cut=st.integers(0, 500),
    key_pick=st.integers(0, 10),
)
def test_mutated_outputs_never_raise(
    data: st.DataObject, role: str, how: str, cut: int, key_pick: int
) -> None:
    raw = _mutate(data.draw(_VALID[role]), how, cut, key_pick)
    out, err = parse(role, raw)
    _PARSE_BAD(how)
    assert (out is None) != (err is None), (role, how, raw)
    if out is not None:
        assert isinstance(out, OUTPUTS[role])
        assert type(out).model_validate_json(out.model_dump_json()) == out
        if role == "grade":
            assert 0 <= out.relevanceScore <= 100
        if role == "rerank":
            assert all(math.isfinite(i.score) for i in out.ranking)
    else:
        assert isinstance(err, str)
        assert err


_PARSE_TYPES = Count("fuzz: parse non-text raw values")


@FUZZ
@given(
    role=st.sampled_from(ROLES),
    raw=st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.binary(max_size=50),
        st.lists(st.integers(), max_size=5),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    ),
)
def test_non_text_raw_never_raises(role: str, raw: object) -> None:
    out, err = parse(role, raw)
    _PARSE_TYPES(type(raw).__name__)
    assert (out is None) != (err is None)


def test_parse_counts_recorded() -> None:
    for c in (_PARSE_OK, _PARSE_BAD, _PARSE_TYPES):
        c.done()
    assert set(_PARSE_OK.kinds) == set(ROLES), f"roles not exercised: {set(ROLES) - set(_PARSE_OK.kinds)}"


# ---------------------------------------------------------------------- rerank


class _Obj:
    def __init__(self, index: Any, score: Any) -> None:
        self.index = index
        self.score = score


class _Exploding:
    """An attribute that raises: a reranker result object gone wrong."""

    @property
    def index(self) -> int:
        raise RuntimeError("index exploded")

    score = 1.0


def _broken_iter() -> Any:
    yield (0, 1.0)
    raise RuntimeError("iterator died")


_INDEX = st.one_of(
    st.integers(-3, 12),
    st.integers(min_value=10**6),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.integers(0, 9).map(np.int64),
)
_SCORE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**400), 10**400),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.floats(-1, 1, allow_nan=False).map(np.float32),
)
_ENTRY = st.one_of(
    st.tuples(_INDEX, _SCORE),
    st.tuples(_INDEX, _SCORE).map(list),
    st.fixed_dictionaries({"index": _INDEX, "score": _SCORE}),
    st.builds(_Obj, _INDEX, _SCORE),
    st.just(None),
    st.just("0,1"),
    st.tuples(st.integers(0, 5)),
    st.just({"index": 0}),
    st.just(_Exploding()),
)
_RANKING = st.one_of(
    st.lists(_ENTRY, max_size=12),
    st.lists(st.tuples(st.integers(0, 9), st.floats(-5, 5, allow_nan=False)), max_size=10),
    st.none(),
    st.text(max_size=5),
    st.integers(),
    st.dictionaries(st.integers(0, 5), st.floats(), max_size=3),
    st.just("broken-iterator"),
)


def _oracle(ranking: Any, n: int, full: bool) -> list[tuple[int, float]] | None:
    """The protocol written out independently: None means "must be rejected"."""
    if ranking is None or isinstance(ranking, (str, bytes, int, float, dict)):
        return None
    out: dict[int, float] = {}
    for e in ranking:
        if isinstance(e, dict):
            if "index" not in e or "score" not in e:
                return None
            i, s = e["index"], e["score"]
        elif isinstance(e, (tuple, list)) and len(e) == 2:
            i, s = e
        elif isinstance(e, _Obj):
            i, s = e.index, e.score
        else:
            return None
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= int(i) < n:
            return None
        if int(i) in out:
            return None
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, float, np.floating)):
            return None
        try:
            f = float(s)
        except OverflowError:
            return None
        if not math.isfinite(f):
            return None
        out[int(i)] = f
    if not out or (full and len(out) != n):
        return None
    return sorted(out.items(), key=lambda p: -p[1])


_STYLE = st.sampled_from(["tuple", "list", "dict", "obj", "numpy"])


def _styled(i: int, s: float, style: str) -> Any:
    if style == "list":
        return [i, s]
    if style == "dict":
        return {"index": i, "score": s}
    if style == "obj":
        return _Obj(i, s)
    if style == "numpy":
        return (np.int64(i), np.float32(s))
    return (i, s)


@st.composite
def _valid_ranking(draw: st.DrawFn) -> tuple[list[Any], int]:
    n = draw(st.integers(1, 12))
    idx = draw(st.lists(st.integers(0, n - 1), unique=True, min_size=1, max_size=n))
    style = draw(_STYLE)
    return [_styled(i, draw(st.floats(-100, 100, allow_nan=False, width=32)), style) for i in idx], n


_RERANK = Count("fuzz: rerank responses validated")


@settings(FUZZ, max_examples=400)
@given(
    ranking=_RANKING,
    n=st.integers(0, 10),
    full=st.booleans(),
    valid=st.none() | _valid_ranking(),
)
def test_validate_ranking_rejects_with_reason_or_agrees_with_the_oracle(
    ranking: Any, n: int, full: bool, valid: tuple[list[Any], int] | None
) -> None:
    if valid is not None:
        ranking, n = valid
    if isinstance(ranking, str) and ranking == "broken-iterator":
        ranking = _broken_iter()
        want = None
    else:
        want = _oracle(ranking, n, full)
    if want is None:
        with pytest.raises(RerankProtocolError, match=r"\w") as info:
            validate_ranking(ranking, n, full_coverage=full)
        assert str(info.value), "a rejection without a reason"
        _RERANK("rejected")
        return
    got = validate_ranking(ranking, n, full_coverage=full)
    _RERANK("accepted")
    assert got == want
    assert all(type(i) is int and 0 <= i < n and type(s) is float and math.isfinite(s) for i, s in got)


class _FuzzReranker:
    """Returns whatever the example drew (or raises it)."""

    name = "fuzz"

    def __init__(self) -> None:
        self.response: Any = None

    def rank(self, query: str, texts: list[str]) -> Any:
        if isinstance(self.response, BaseException):
            raise self.response
        if isinstance(self.response, str) and self.response == "broken-iterator":
            return _broken_iter()
        return self.response


@pytest.fixture(scope="module")
def rerank_rig(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, _FuzzReranker]:
    import selfrag_nb as sr
    from selfrag_nb.store.kb import KnowledgeBase

    root = tmp_path_factory.mktemp("fuzz_rerank")
    docs = root / "docs"
    docs.mkdir()
    for i in range(8):
        (docs / f"r{i}.md").write_text(f"# Refund {i}\n\nThe refund window for plan {i} is {10 + i} days.\n")
    kb = KnowledgeBase.open(root / "kb", embedder="hashing")
    kb.ingest(docs)
    model = sr.ScriptedModel()
    model.default("decide", {"decision": "RETRIEVE", "reason": ""})
    model.default("grade", {"relevanceScore": 90, "isRelevant": True})
    reranker = _FuzzReranker()
    rag = sr.SelfRAG(kb, model=model, reranker=reranker).with_settings(rewrite=False, rerank_keep=3)
    return rag, reranker


_STAGE = Count("fuzz: rerank stage with hostile rerankers")


@settings(
    FUZZ, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(response=st.one_of(_RANKING, _valid_ranking().map(lambda v: v[0]), st.just(RuntimeError("down"))))
def test_rerank_stage_never_raises_and_keeps_within_before(
    rerank_rig: tuple[Any, _FuzzReranker], response: Any
) -> None:
    rag, reranker = rerank_rig
    reranker.response = response
    step = rag.stepper("What is the refund window for plan 3?")
    rec = step.rerank()
    assert rec is not None
    n = len(rec.before)
    assert n > 1, "the rig must give the reranker something to reorder"
    assert len(rec.after) <= rec.keep
    assert len(set(rec.after)) == len(rec.after)
    assert set(rec.after) <= set(rec.before)
    if rec.fallback is not None:
        assert rec.after == rec.before[: rec.keep]
        assert rec.fallbacks
        assert rec.fallbacks[0].reason
    _STAGE("fallback" if rec.fallback else "reranked")


def test_validate_ranking_huge_lists() -> None:
    n = 50
    tried = 0
    big = [(i % n, float(i)) for i in range(200_000)]  # duplicates after n items
    with pytest.raises(RerankProtocolError, match="duplicate index 0"):
        validate_ranking(big, n)
    tried += 1
    far = [(10**18, 1.0)] * 100_000
    with pytest.raises(RerankProtocolError, match="out of range"):
        validate_ranking(far, n)
    tried += 1
    ok = validate_ranking([(i, float(-i)) for i in range(n)], n, full_coverage=True)
    assert [i for i, _ in ok] == list(range(n))
    tried += 1
    _RERANK.n += tried


def test_rerank_counts_recorded() -> None:
    _RERANK.done()
    _STAGE.done()
    assert _STAGE.kinds["fallback"] > 0
    assert _RERANK.kinds["accepted"] > 10, f"too few valid rankings generated: {dict(_RERANK.kinds)}"
    assert _RERANK.kinds["rejected"] > 10


# ---------------------------------------------------------------------- spans

_FILL_EN = ["what", "is", "the", "refund", "policy", "for", "order", "please", "tell", "me", "about", "price"]
_FILL_EN_ALT = {"what": "which", "tell": "explain", "me": "us", "please": "kindly", "about": "regarding"}

_SLOTS: dict[str, st.SearchStrategy[str]] = {
    "identifier": st.one_of(
        st.builds(lambda y, n: f"ORD-{y}-{n:04d}", st.integers(2019, 2030), st.integers(1, 9999)),
        st.builds(lambda n: f"SKU_{n}", st.integers(1, 99999)),
        st.builds(lambda c, n: f"{c}{n}", st.sampled_from(["X", "E", "QS", "AB"]), st.integers(10, 9999)),
    ),
    "version": st.builds(
        lambda a, b, c, v: f"{'v' if v else ''}{a}.{b}" + (f".{c}" if c is not None else ""),
        st.integers(0, 20),
        st.integers(0, 20),
        st.none() | st.integers(0, 20),
        st.booleans(),
    ),
    "date": st.one_of(
        st.builds(
            lambda y, m, d: f"{y}-{m:02d}-{d:02d}",
            st.integers(2000, 2030),
            st.integers(1, 12),
            st.integers(1, 28),
        ),
        st.builds(
            lambda m, d, y: f"{m} {d}, {y}",
            st.sampled_from(["March", "June", "Oct"]),
            st.integers(1, 28),
            st.integers(2000, 2030),
        ),
        st.builds(
            lambda y, m, d: f"{y}年{m}月{d}日",
            st.integers(2000, 2030),
            st.integers(1, 12),
            st.integers(1, 28),
        ),
    ),
    "amount": st.one_of(
        st.builds(lambda n: f"${n}", st.integers(1, 99999)),
        st.builds(lambda n, c: f"${n}.{c:02d}", st.integers(1, 9999), st.integers(1, 99)),
        st.builds(lambda n: f"{n}%", st.integers(1, 100)),
        st.builds(lambda n: f"{n}元", st.integers(1, 99999)),
    ),
}
_NEG_EN = ["not", "never", "without"]


def _flip(value: str, kind: str, salt: int) -> str:
    """The same kind of value with one digit changed (or a component added)."""
    digits = [i for i, c in enumerate(value) if c.isdigit()]
    if salt % 4 == 2 and kind in ("version", "amount") and not value.endswith(("%", "元")):
        return value + (".1" if kind == "version" else "5")  # v2.3 -> v2.3.1, $30 -> $305
    if salt % 4 == 3 and kind == "amount" and value[0].isdigit():
        return "1" + value  # 5% -> 15%
    pos = digits[salt % len(digits)]
    new = str((int(value[pos]) + 1 + salt % 8) % 10)
    if new == value[pos]:
        new = str((int(new) + 1) % 10)
    return value[:pos] + new + value[pos + 1 :]


_SPANS = Count("fuzz: span rewrites (kept / dropped / flipped / negation)")


@settings(FUZZ, max_examples=300)
@given(
    data=st.data(),
    kinds=st.lists(st.sampled_from(sorted(_SLOTS)), min_size=1, max_size=3),
    negation=st.sampled_from([None, *_NEG_EN]),
    fill=st.lists(st.sampled_from(_FILL_EN), min_size=2, max_size=6),
    action=st.sampled_from(["keep", "drop", "flip", "drop_negation", "add_negation"]),
    salt=st.integers(0, 1000),
)
def test_rewrites_that_lose_or_flip_a_span_are_caught(  # noqa: PLR0917 - hypothesis passes each strategy by name
    data: st.DataObject, kinds: list[str], negation: str | None, fill: list[str], action: str, salt: int
) -> None:
    values = [data.draw(_SLOTS[k]) for k in kinds]
    assume(len(set(values)) == len(values))
    # no value may hide inside another ("2024" inside "ORD-2024-0042")
    assume(not any(a != b and a in b for a in values for b in values))
    words = [*fill[:1], *(["does", negation] if negation else []), *fill[1:], *values]
    original = " ".join(words) + "?"
    spans = extract_spans(original)
    assert check_rewrite(original, original, spans).ok, f"the original itself fails: {original!r} {spans}"
    if action == "keep":
        rephrased = [_FILL_EN_ALT.get(w, w) for w in fill]
        rewrite = " ".join([*reversed(values), *(["does", negation] if negation else []), *rephrased]) + "?"
        verdict = check_rewrite(original, rewrite, spans)
        assert verdict.ok, f"a rephrasing was rejected: {original!r} -> {rewrite!r}: {verdict.reason}"
    elif action in ("drop", "flip"):
        i = salt % len(values)
        replacement = "" if action == "drop" else _flip(values[i], kinds[i], salt)
        assume(replacement != values[i])
        rewrite = original.replace(values[i], replacement)
        verdict = check_rewrite(original, rewrite, spans)
        assert not verdict.ok, (
            f"{action} of {kinds[i]} {values[i]!r} -> {replacement!r} not caught: {original!r} -> {rewrite!r}"
        )
    elif action == "drop_negation":
        assume(negation is not None)
        rewrite = original.replace(f" does {negation}", " does")
        assert not check_rewrite(original, rewrite, spans).ok, f"negation drop not caught: {rewrite!r}"
    else:
        assume(negation is None)
        rewrite = original.replace(fill[0], f"{fill[0]} does not", 1)
        assert not check_rewrite(original, rewrite, spans).ok, f"added negation not caught: {rewrite!r}"
    _SPANS(action)


_ZH_SPANS = Count("fuzz: span rewrites in Chinese")


@settings(FUZZ, max_examples=150)
@given(
    value=st.one_of(_SLOTS["identifier"], _SLOTS["date"], _SLOTS["amount"]),
    neg=st.sampled_from([None, "不", "没有", "无法"]),
    action=st.sampled_from(["keep", "drop", "drop_negation"]),
)
def test_chinese_rewrites_keep_values_and_negations(value: str, neg: str | None, action: str) -> None:
    original = f"订单 {value} {neg or ''}能退款吗？"
    spans = extract_spans(original)
    assert check_rewrite(original, original, spans).ok
    if action == "keep":
        assert check_rewrite(original, f"请问 {value} 这个订单{neg or ''}能申请退款吗", spans).ok
    elif action == "drop":
        assert not check_rewrite(original, original.replace(value, ""), spans).ok
    else:
        assume(neg is not None)
        assert not check_rewrite(original, original.replace(neg, ""), spans).ok
    _ZH_SPANS(action)


def test_span_counts_recorded() -> None:
    _SPANS.done()
    _ZH_SPANS.done()
    assert set(_SPANS.kinds) == {"keep", "drop", "flip", "drop_negation", "add_negation"}, dict(_SPANS.kinds)


# ---------------------------------------------------------------------- questions

_GOOD = {
    "id": "q1",
    "category": "factual",
    "question": "What is the refund window?",
    "should_retrieve": True,
    "relevant": ["refund.md"],
    "expected": ["answered"],
}
_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False),
    st.text(max_size=10),
    st.lists(st.one_of(st.integers(), st.text(max_size=5), st.none()), max_size=3),
    st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=5)), max_size=3),
)
_FIELDS = [*sorted(_GOOD), "history", "user", "must_include", "must_not_include", "secret", "protected"]
_QS = Count("fuzz: question records with mistyped fields")


@settings(
    FUZZ, max_examples=250, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    overrides=st.lists(st.tuples(st.sampled_from(_FIELDS), _JUNK), min_size=1, max_size=4),
    extra_lines=st.integers(0, 2),
)
def test_only_question_set_errors_escape(
    tmp_path: Path, overrides: list[tuple[str, Any]], extra_lines: int
) -> None:
    rec = dict(_GOOD)
    for k, v in overrides:
        rec[k] = v
    lines = [json.dumps(rec)] + [json.dumps({**_GOOD, "id": f"ok{i}"}) for i in range(extra_lines)]
    p = tmp_path / "fuzz.jsonl"
    p.write_text("\n".join(lines), encoding="utf-8")
    try:
        qs = questions(p)
    except QuestionSetError as exc:
        message = str(exc)
    else:
        message = ""
        _QS("accepted")
        assert len(qs) == 1 + extra_lines
        assert all(isinstance(q, Question) for q in qs)
        json.dumps([q.model_dump(mode="json") for q in qs])  # whatever was accepted is plain data
    if message:
        _QS("rejected")
        assert str(p) in message
        assert re.search(r":1: ", message), f"the bad line is not named: {message}"


def test_question_paths_only_question_set_errors(tmp_path: Path) -> None:
    folder = tmp_path / "a_folder.jsonl"
    folder.mkdir()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n  \n")
    cases = [folder, empty, tmp_path / "missing.jsonl", tmp_path, str(tmp_path / "nope")]
    for path in cases:
        with pytest.raises(QuestionSetError) as info:
            questions(path)
        assert str(path) in str(info.value)
    _QS.n += len(cases)


def test_question_counts_recorded() -> None:
    _QS.done()
    assert _QS.kinds["rejected"] > 0
    assert _QS.kinds["accepted"] > 0
