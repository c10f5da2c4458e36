"""The third-party corpus (benchmarks/thirdparty) is well formed: cheap checks only.

Documents are package READMEs kept as published; the questions were written
from them. These checks keep the labels honest when either changes: every
file referenced exists, every answerable question's must_include strings are
in its document (matched as the metric matches: NFKC + casefold), every
secret is in a restricted document and in no public one, and each pair of
halves is the seeded-hash split of one set: tune/heldout (split.SEED) and the
third round's tune3/heldout2 (split.ROUND3_SEED). The second and fourth to
fourteenth tune sets and the third held-out set (questions_tune2.jsonl,
questions_tune4.jsonl ... questions_tune14.jsonl, questions_heldout3.jsonl,
outside any split) are held to the same label checks; the unanswerable
questions of the third round, of tune4 to tune14 and heldout3 also record how they were checked
(why_unanswerable).
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
#: Each seeded split: its tune half, its held-out half and the seed's name in split.py.
SPLITS = (("tune", "heldout", "SEED"), ("tune3", "heldout2", "ROUND3_SEED"))
HALVES = tuple(h for tune, heldout, _ in SPLITS for h in (tune, heldout))
#: Every question set on disk (questions_<name>.jsonl); each needs a PREFIX below.
SETS = tuple(sorted(p.stem.removeprefix("questions_") for p in ROOT.glob("questions_*.jsonl")))
#: Question sets outside any seeded split (fresh tune sets and the third held-out set).
EXTRA = tuple(s for s in SETS if s not in HALVES)
#: The id prefix of every set: one per round of writing.
PREFIX = {
    "tune": "tp-",
    "heldout": "tp-",
    "tune2": "t2-",
    "tune3": "r3-",
    "heldout2": "r3-",
    "tune4": "t4-",
    "heldout3": "h3-",
    "tune5": "t5-",
    "tune6": "t6-",
    "tune7": "t7-",
    "tune8": "t8-",
    "tune9": "t9-",
    "tune10": "t10-",
    "tune11": "t11-",
    "tune12": "t12-",
    "tune13": "t13-",
    "tune14": "t14-",
}
#: Sets whose unanswerable questions say what was grepped to check them:
#: every set written after the first split and the second tune set.
WITH_WHY = tuple(s for s in SETS if s not in ("tune", "heldout", "tune2"))
CATEGORIES = {"answerable", "unanswerable", "restricted"}
#: Why a question has no answer: a fact its package's README does not state, a
#: package not in the corpus, a subject only named in passing in another
#: README, or a detail a README's topic stops short of.
UNANSWERABLE_KINDS = ("not-stated", "not-in-corpus", "mentioned-elsewhere", "detail-missing")
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


@pytest.mark.parametrize(("tune", "heldout", "seed"), SPLITS)
def test_halves_are_the_seeded_split(
    halves: dict[str, sr.QuestionSet], tune: str, heldout: str, seed: str
) -> None:
    split = _split_module()
    for half, name in (("tune", tune), ("heldout", heldout)):
        assert all(split.half_of(q.id, getattr(split, seed)) == half for q in halves[name]), name
        assert split.OUTPUTS[getattr(split, seed)] == (tune, heldout)
    assert len(halves[tune]) + len(halves[heldout]) >= 70


def test_every_set_stands_apart(question_sets: dict[str, sr.QuestionSet]) -> None:
    assert set(question_sets) == set(PREFIX)
    seen: set[str] = set()
    for name, qs in question_sets.items():
        ids = [q.id for q in qs]
        assert len(ids) == len(set(ids)) >= 30, name
        assert all(i.startswith(PREFIX[name]) for i in ids), name
        assert not set(ids) & seen, name
        seen |= set(ids)
        assert set(qs.categories) == CATEGORIES, name


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
    for name, qs in question_sets.items():
        for q in qs.filter("unanswerable"):
            assert q.expected == ["refused", "clarify"], q.id
            assert not q.relevant, q.id
            assert not q.must_include, q.id
            if name in WITH_WHY:
                why = q.extra.get("why_unanswerable")
                assert isinstance(why, str), q.id
                assert "grep" in why, f"{q.id}: why_unanswerable does not say what was grepped"
                assert q.extra.get("unanswerable_kind") in UNANSWERABLE_KINDS, q.id


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
