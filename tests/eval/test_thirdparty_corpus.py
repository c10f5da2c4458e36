"""The third-party corpus (benchmarks/thirdparty) is well formed: cheap checks only.

Documents are package READMEs kept as published; the questions were written
from them. These checks keep the labels honest when either changes: every
file referenced exists, every answerable question's must_include strings are
in its document (matched as the metric matches: NFKC + casefold), every
secret is in a restricted document and in no public one, and the two halves
are the seeded-hash split of one set. The second tune set (questions_tune2.jsonl,
outside the split) is held to the same label checks.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import unicodedata
from pathlib import Path
from types import ModuleType

import pytest

import selfrag_nb as sr

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "thirdparty"
DOCS = ROOT / "docs"
HALVES = ("tune", "heldout")
#: Question sets outside the seeded split (a fresh tune set).
EXTRA = ("tune2",)
FINANCE = "finance"


def _norm(text: str) -> str:
    # as selfrag_nb.eval.metrics matches must_include and secrets
    return unicodedata.normalize("NFKC", text).casefold()


def _split_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("thirdparty_split", ROOT / "split.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _docs(folder: str) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((DOCS / folder).iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def public() -> dict[str, str]:
    return _docs("public")


@pytest.fixture(scope="module")
def restricted() -> dict[str, str]:
    return _docs("restricted")


@pytest.fixture(scope="module")
def halves() -> dict[str, sr.QuestionSet]:
    return {h: sr.questions(ROOT / f"questions_{h}.jsonl") for h in HALVES}


@pytest.fixture(scope="module")
def question_sets(halves: dict[str, sr.QuestionSet]) -> dict[str, sr.QuestionSet]:
    return {**halves, **{e: sr.questions(ROOT / f"questions_{e}.jsonl") for e in EXTRA}}


def test_documents_and_sources(public: dict[str, str], restricted: dict[str, str]) -> None:
    assert len(public) + len(restricted) >= 170
    assert 15 <= len(restricted) <= 25
    assert not set(public) & set(restricted)  # one knowledge base: source names must not clash
    assert {Path(n).suffix for n in [*public, *restricted]} <= {".md", ".rst", ".txt"}
    rows = re.findall(
        r"^\| (.+?) \| (.+?) \| (.+?) \| `(docs/[^`]+)` \|$", (ROOT / "SOURCES.md").read_text(), re.M
    )
    listed = [f for *_, f in rows]
    assert len(listed) == len(set(listed))
    on_disk = [f"docs/public/{n}" for n in public] + [f"docs/restricted/{n}" for n in restricted]
    assert sorted(listed) == sorted(on_disk)
    for _pkg, _version, licence, _f in rows:
        assert licence.strip()
        assert "GPL" not in licence


def test_halves_are_the_seeded_split(halves: dict[str, sr.QuestionSet]) -> None:
    split = _split_module()
    ids = {h: [q.id for q in qs] for h, qs in halves.items()}
    assert not set(ids["tune"]) & set(ids["heldout"])
    for h, qs in halves.items():
        assert all(split.half_of(q.id) == h for q in qs), h
        assert set(qs.categories) == {"answerable", "unanswerable", "restricted"}, h
    total = sum(len(qs) for qs in halves.values())
    assert total >= 70


def test_the_second_tune_set_stands_apart(question_sets: dict[str, sr.QuestionSet]) -> None:
    split_ids = {q.id for h in HALVES for q in question_sets[h]}
    tune2 = [q.id for q in question_sets["tune2"]]
    assert len(tune2) == len(set(tune2)) >= 40
    assert all(i.startswith("t2-") for i in tune2)
    assert not set(tune2) & split_ids
    assert set(question_sets["tune2"].categories) == {"answerable", "unanswerable", "restricted"}


def test_answerable_labels_hold_in_their_documents(
    question_sets: dict[str, sr.QuestionSet], public: dict[str, str], restricted: dict[str, str]
) -> None:
    n = 0
    for qs in question_sets.values():
        for q in qs.filter("answerable"):
            n += 1
            assert q.expected == ["answered", "disclaimed", "regenerated"], q.id
            assert q.should_retrieve is True, q.id
            assert q.must_include, q.id
            assert len(q.relevant) == 1, q.id
            name = q.relevant[0]
            in_restricted = name in restricted
            assert name in public or in_restricted, f"{q.id}: no document {name}"
            # public documents are asked by staff; restricted ones by a finance user
            assert (FINANCE in q.make_user().roles) == in_restricted, q.id
            text = _norm((restricted if in_restricted else public)[name])
            for s in q.must_include:
                assert _norm(s) in text, f"{q.id}: must_include {s!r} not in {name}"
    assert n >= 45


def test_unanswerable_questions_have_no_labels(question_sets: dict[str, sr.QuestionSet]) -> None:
    for qs in question_sets.values():
        for q in qs.filter("unanswerable"):
            assert q.expected == ["refused", "clarify"], q.id
            assert not q.relevant, q.id
            assert not q.must_include, q.id


def test_restricted_secrets_live_only_in_restricted_documents(
    question_sets: dict[str, sr.QuestionSet], public: dict[str, str], restricted: dict[str, str]
) -> None:
    pub = [_norm(t) for t in public.values()]
    for qs in question_sets.values():
        for q in qs.filter("restricted"):
            assert q.expected == ["refused", "clarify"], q.id
            assert FINANCE not in q.make_user().roles, q.id
            assert q.secret, q.id
            assert len(q.relevant) == 1, q.id
            assert q.relevant[0] in restricted, q.id
            doc = _norm(restricted[q.relevant[0]])
            for s in q.secret:
                assert _norm(s) in doc, f"{q.id}: secret {s!r} not in {q.relevant[0]}"
                assert not any(_norm(s) in t for t in pub), f"{q.id}: secret {s!r} is in a public document"
                assert _norm(s) not in _norm(q.question), q.id


def test_judgments_are_well_formed(question_sets: dict[str, sr.QuestionSet]) -> None:
    path = ROOT / "judgments.jsonl"
    ids = {q.id for qs in question_sets.values() for q in qs}
    seen = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        j = json.loads(line)
        assert set(j) == {"id", "answer_sha", "answer", "correct", "note"}, j
        assert j["id"] in ids
        assert isinstance(j["correct"], bool)
        assert re.fullmatch(r"[0-9a-f]{16}", j["answer_sha"])
        assert hashlib.sha256(j["answer"].encode()).hexdigest()[:16] == j["answer_sha"], j["id"]
        assert (j["id"], j["answer_sha"]) not in seen
        seen.add((j["id"], j["answer_sha"]))
