"""The vector index: built past IndexPolicy.min_rows, kept fresh by ingest and
kb.optimize(), the ACL still a prefilter (k allowed hits whenever k exist),
new rows found before they are indexed, knobs validated, recall near exact.

Small tables (about a thousand rows) with a low threshold, so the real LanceDB
indexes are trained in seconds."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from store_docs import lance_file_version, write_docs

from selfrag_nb.errors import InputError, InputTypeError, KnowledgeBaseError
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.store.types import IndexPolicy, User

_RNG = random.Random(3)
_WORDS = sorted({"".join(_RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6)) for _ in range(900)})
_SUBJECTS = [_RNG.sample(_WORDS, 30) for _ in range(12)]


def _text(rng: random.Random) -> str:
    subject = rng.choice(_SUBJECTS)
    return " ".join([rng.choice(subject) for _ in range(14)] + [rng.choice(_WORDS) for _ in range(4)])


def _records(start: int, n: int, *, seed: int = 1) -> list[dict[str, Any]]:
    """Records with ACLs: 1 % readable by the auditors role only, the rest by
    staff, every fifth in tenant acme, some naming a user."""
    rng = random.Random(seed + start)
    out = []
    for i in range(start, start + n):
        rec: dict[str, Any] = {"id": str(i), "text": _text(rng)}
        if i % 100 == 7:
            rec["roles"] = ["auditors"]
        else:
            rec["roles"] = ["staff"]
            if i % 3 == 0:
                rec["users"] = [f"user{i % 7}"]
        if i % 5 == 0 and i % 100 != 7:
            rec["tenant"] = "acme"
        out.append(rec)
    return out


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def visible(rec: dict[str, Any], user: User) -> bool:
    """The rule of docs/access-control.md, written from its prose and table:
    the tenant matches (none, or the user's), and the chunk is public, names
    the user, or shares a role with them. A record naming roles or users is
    public only if its roles say ``public``; one naming neither is public."""
    declared_roles = rec.get("roles")
    declared_users = rec.get("users")
    roles = {"public"} if declared_roles is None and declared_users is None else set(declared_roles or [])
    tenant = rec.get("tenant") or ""
    if tenant and tenant != user.tenant:
        return False
    return "public" in roles or user.id in (declared_users or []) or bool(roles & set(user.roles))


def _source(rec: dict[str, Any], name: str) -> str:
    return f"{name}#{rec['id']}"


POLICY = IndexPolicy(min_rows=1000)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[KnowledgeBase, list[dict[str, Any]]]:
    """1,200 chunks ingested in two steps across the 1,000-row threshold."""
    root = tmp_path_factory.mktemp("vindex")
    kb = KnowledgeBase.open(root / "kb", embedder="hashing", index_policy=POLICY)
    first, second = _records(0, 800), _records(800, 400)
    kb.ingest(_write(root / "docs" / "a.jsonl", first))
    assert kb.describe()["vector_index"] is None  # below the threshold: exact search only
    kb.ingest(_write(root / "docs" / "b.jsonl", second))
    return kb, first + second


def test_the_index_is_built_past_the_threshold(indexed: tuple[KnowledgeBase, list[dict[str, Any]]]) -> None:
    kb, _ = indexed
    info = kb.describe()["vector_index"]
    assert info is not None
    assert info["type"] == "IvfPq"
    assert info["trained_rows"] == 1200
    assert info["unindexed_rows"] == 0


@pytest.mark.parametrize("nprobes", [None, 1])
def test_a_selective_acl_still_gets_k_allowed_hits(
    indexed: tuple[KnowledgeBase, list[dict[str, Any]]], nprobes: int | None
) -> None:
    kb, records = indexed
    auditor = User("zoe", roles=["auditors"])
    allowed = {
        _source(r, "a.jsonl" if int(r["id"]) < 800 else "b.jsonl") for r in records if visible(r, auditor)
    }
    assert len(allowed) == 12  # 1 % of the rows
    for query in [_text(random.Random(s)) for s in range(5)]:
        hits = kb.search(query, k=10, mode="vector", user=auditor, nprobes=nprobes)
        assert len(hits.hits) == 10
        assert {h.source for h in hits.hits} <= allowed
    every = kb.search("anything at all", k=50, mode="vector", user=auditor, nprobes=nprobes)
    assert {h.source for h in every.hits} == allowed  # all 12 there are, none other


def test_nprobes_none_searches_every_partition_and_a_cap_caps(
    indexed: tuple[KnowledgeBase, list[dict[str, Any]]],
) -> None:
    """The oracle is the exact search: by default (every partition, exact
    re-ranking) the indexed search finds the exact top 10. A query made of two
    subjects has neighbours in two subjects' partitions; one probe reads one."""
    kb, _ = indexed
    staff = User("sam", roles=["staff"])
    assert IndexPolicy().nprobes is None
    capped_differs = 0
    queries = [" ".join(_SUBJECTS[i][:6] + _SUBJECTS[(i + 5) % 12][:6]) for i in range(8)]
    for query in queries:
        exact = [h.chunk_id for h in kb.search(query, k=10, mode="vector", user=staff, exact=True).hits]
        full = [h.chunk_id for h in kb.search(query, k=10, mode="vector", user=staff).hits]
        one = [h.chunk_id for h in kb.search(query, k=10, mode="vector", user=staff, nprobes=1).hits]
        assert len(set(full) & set(exact)) >= 9, (full, exact)
        assert len(one) == 10
        capped_differs += set(one) != set(exact)
    assert capped_differs >= 4


def test_hybrid_and_tenant_filters_hold_on_the_index(
    indexed: tuple[KnowledgeBase, list[dict[str, Any]]],
) -> None:
    kb, records = indexed
    user = User("user2", roles=["staff"], tenant="acme")
    allowed = {
        _source(r, "a.jsonl" if int(r["id"]) < 800 else "b.jsonl") for r in records if visible(r, user)
    }
    outsider = User("user2", roles=["staff"], tenant="other")
    blocked = {
        _source(r, "a.jsonl" if int(r["id"]) < 800 else "b.jsonl")
        for r in records
        if not visible(r, outsider)
    }
    for query in [_text(random.Random(s)) for s in range(10, 14)]:
        for mode in ("vector", "hybrid"):
            hits = kb.search(query, k=10, mode=mode, user=user)
            assert len(hits.hits) == 10
            assert {h.source for h in hits.hits} <= allowed
            assert not {h.source for h in kb.search(query, k=10, mode=mode, user=outsider).hits} & blocked


def test_recall_against_exact_search(indexed: tuple[KnowledgeBase, list[dict[str, Any]]]) -> None:
    kb, _ = indexed
    staff = User("sam", roles=["staff"], tenant="acme")
    scores = []
    for s in range(20, 40):
        query = " ".join(random.Random(s).sample(random.Random(s).choice(_SUBJECTS), 5))
        got = {h.chunk_id for h in kb.search(query, k=10, mode="vector", user=staff).hits}
        want = {h.chunk_id for h in kb.search(query, k=10, mode="vector", user=staff, exact=True).hits}
        assert len(want) == 10
        scores.append(len(got & want) / 10)
    assert sum(scores) / len(scores) >= 0.9


def test_rows_added_after_the_index_are_found_then_folded_in(tmp_path: Path) -> None:
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing", index_policy=POLICY)
    kb.ingest(_write(tmp_path / "docs" / "a.jsonl", _records(0, 1000)))
    assert kb.describe()["vector_index"]["trained_rows"] == 1000
    new = [
        {"id": "en", "text": "The zanzibarquux procedure replaces the legacy flux capacitor audit."},
        {"id": "zh", "text": "量子纠缠实验室的安全守则要求每周检查一次。"},
    ]
    kb.ingest(_write(tmp_path / "docs" / "new.jsonl", new))
    info = kb.describe()["vector_index"]
    assert info["unindexed_rows"] == 2  # 2 of 1,002 rows: under the 10 % share, left for later

    def found() -> None:
        for query, source in [
            ("zanzibarquux", "new.jsonl#en"),
            ("量子纠缠实验室", "new.jsonl#zh"),
        ]:
            assert kb.search(query, k=3, mode="fts").hits[0].source == source
            assert kb.search(query, k=3, mode="hybrid").hits[0].source == source
        exact_text = new[0]["text"]
        assert kb.search(exact_text, k=3, mode="vector").hits[0].source == "new.jsonl#en"

    found()
    report = kb.optimize()
    assert report.actions
    assert report.unindexed_rows
    assert set(report.unindexed_rows.values()) == {0}
    assert kb.describe()["vector_index"]["unindexed_rows"] == 0
    found()


def test_ingest_folds_new_rows_past_the_share_and_retrains_past_growth(tmp_path: Path) -> None:
    policy = IndexPolicy(min_rows=1000, max_unindexed_share=0.1, retrain_growth=2.0)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing", index_policy=policy)
    kb.ingest(_write(tmp_path / "d" / "a.jsonl", _records(0, 1000)))
    kb.ingest(_write(tmp_path / "d" / "b.jsonl", _records(1000, 50)))
    assert kb.describe()["vector_index"] == {
        **kb.describe()["vector_index"],
        "trained_rows": 1000,
        "unindexed_rows": 50,
    }
    kb.ingest(_write(tmp_path / "d" / "c.jsonl", _records(1050, 100)))  # 150 of 1,150 > 10 %
    info = kb.describe()["vector_index"]
    assert (info["trained_rows"], info["unindexed_rows"]) == (1000, 0)
    kb.ingest(_write(tmp_path / "d" / "e.jsonl", _records(1150, 900)))  # 2,050 > 2 x 1,000
    info = kb.describe()["vector_index"]
    assert (info["trained_rows"], info["unindexed_rows"]) == (2050, 0)
    assert len(kb.search("anything", k=10, mode="vector", user=User(roles=["staff"])).hits) == 10
    # reindex rebuilds it on today's rows, with the policy's type
    kb.ingest(_write(tmp_path / "d" / "f.jsonl", _records(2050, 30)))
    assert "rebuilt IVF_PQ(vector)" in kb.reindex()
    info = kb.describe()["vector_index"]
    assert (info["trained_rows"], info["unindexed_rows"]) == (2080, 0)


def test_optimize_is_idempotent_and_builds_when_the_policy_says(tmp_path: Path) -> None:
    assert KnowledgeBase.open(tmp_path / "empty", embedder="hashing").optimize().actions == []
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")  # default policy: 50,000 rows
    kb.ingest(_write(tmp_path / "d" / "a.jsonl", _records(0, 1100)))
    assert kb.describe()["vector_index"] is None
    kb.close()
    kb = KnowledgeBase.open(tmp_path / "kb", index_policy=POLICY)  # the threshold is per handle
    first = kb.optimize()
    assert any("trained IVF_PQ vector index on 1100 rows" in a for a in first.actions)
    assert first.vector_index == "IvfPq"
    assert first.rows == 1100
    user = User(roles=["staff"])
    before = [h.chunk_id for h in kb.search("anything", k=10, mode="vector", user=user).hits]
    second = kb.optimize()
    assert second.actions == []
    assert second.version_before == second.version_after == kb.version
    assert [h.chunk_id for h in kb.search("anything", k=10, mode="vector", user=user).hits] == before
    assert len(kb) == 1100
    restored = kb.versions()[0]["version"]
    kb.restore(restored)  # versions made by optimize do not stand in the way of restore
    assert len(kb) == kb.versions()[0]["chunks"]


def test_a_failed_index_build_undoes_the_ingest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lancedb.index import IvfPq

    from selfrag_nb.store import vindex

    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing", index_policy=POLICY)
    kb.ingest(_write(tmp_path / "d" / "a.jsonl", _records(0, 900)))
    version = kb.version
    # 7 sub-vectors do not divide 256 dimensions: LanceDB itself refuses to train
    monkeypatch.setattr(vindex, "_config", lambda *a: IvfPq(distance_type="cosine", num_sub_vectors=7))
    with pytest.raises(KnowledgeBaseError, match="vector index") as err:
        kb.ingest(_write(tmp_path / "d" / "b.jsonl", _records(900, 200)))
    assert "undone" in str(err.value)
    assert len(kb) == 900
    assert kb.describe()["vector_index"] is None
    assert kb.version > version  # the undo is a new version holding the old rows
    monkeypatch.undo()
    report = kb.ingest(tmp_path / "d" / "b.jsonl")
    assert report.chunks_added == 200
    assert kb.describe()["vector_index"]["trained_rows"] == 1100


@pytest.mark.parametrize(
    "kwargs",
    [
        {"nprobes": 0},
        {"nprobes": -2},
        {"nprobes": True},
        {"nprobes": 2.5},
        {"nprobes": "8"},
        {"refine_factor": 0},
        {"refine_factor": 1001},
        {"ef": 0},
        {"ef": "64"},
    ],
)
def test_search_knobs_are_validated(kb: KnowledgeBase, kwargs: dict[str, Any]) -> None:
    name = next(iter(kwargs))
    with pytest.raises(InputError, match=name):
        kb.search("refund", **kwargs)


def test_exact_and_the_policy_are_validated(kb: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(InputTypeError, match="exact"):
        kb.search("refund", exact="yes")  # type: ignore[arg-type]
    assert kb.search(
        "refund", k=3, mode="vector", exact=True
    ).hits  # below the threshold: the same exact search
    for bad, field in [
        ({"min_rows": 10}, "min_rows"),
        ({"index_type": "HNSW"}, "index_type"),
        ({"nprobes": True}, "nprobes"),
        ({"max_unindexed_share": 0.0}, "max_unindexed_share"),
        ({"retrain_growth": 1.0}, "retrain_growth"),
        ({"refine_factor": 0}, "refine_factor"),
        ({"bogus": 1}, "bogus"),
    ]:
        with pytest.raises(InputError, match=field):
            IndexPolicy(**bad)
    assert IndexPolicy(refine_factor=None).refine_factor is None
    with pytest.raises(InputTypeError, match="index_policy"):
        KnowledgeBase.open(tmp_path / "x", embedder="hashing", index_policy={"min_rows": 1000})  # type: ignore[arg-type]


def test_new_tables_are_written_in_lance_format_2_1(tmp_path: Path) -> None:
    """The tables are created in Lance file format 2.1, whose random access
    fetches the hits' columns about five times faster at 1M rows than
    LanceDB's default 2.2 (benchmarks/scale.md, run 7). Read from the files'
    footers. Fails when the format is left to LanceDB (2.2)."""
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(write_docs(tmp_path / "docs"))
    files = sorted((tmp_path / "kb").glob("*.lance/data/*.lance"))
    assert {f.parent.parent.name for f in files} == {"chunks.lance", "ingest_log.lance"}
    for f in files:
        with f.open("rb") as fh:
            fh.seek(-8, 2)
            assert lance_file_version(fh.read()) == (2, 1), f
    kb.close()
