"""Validate the bundled knowledge base (sample_data/docs) and its labelled
question set (sample_data/questions.jsonl).

    docs/ ------> front matter, formats, languages, ACL, planted traps
    questions --> schema, categories, counts, label conventions
    both -------> relevant files exist, must_include tokens are in the evidence,
                  secrets live only in restricted documents, injected claims exist

Pure Python and json: no store, no model. The label conventions checked here
are described in sample_data/README.md.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from selfrag_nb.text import detect_language

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
DOCS = SAMPLE / "docs"
QUESTIONS = SAMPLE / "questions.jsonl"

CATEGORIES = {
    "greeting",
    "smalltalk",
    "factual",
    "id-lookup",
    "negation",
    "version",
    "conflict",
    "multi-turn",
    "chinese",
    "unanswerable",
    "missing-qualifier",
    "unauthorized",
    "authorized",
    "injection",
    "cross_lingual_en_zh",
    "cross_lingual_zh_en",
}
OUTCOMES = {"answered", "disclaimed", "regenerated", "direct", "clarify", "refused"}
ANSWER_OUTCOMES = {"answered", "disclaimed", "regenerated"}
REQUIRED = {
    "id": str,
    "category": str,
    "question": str,
    "should_retrieve": bool,
    "relevant": list,
    "expected": list,
}
STRING_LISTS = ("must_include", "must_not_include", "secret", "protected")
DOC_SUFFIXES = {".md", ".txt", ".html", ".jsonl"}


def _front_matter(text: str) -> dict[str, Any]:
    """The store's simple front matter: `key: value` lines between `---` lines,
    lists written `[a, b]`."""
    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---\n", 4)
    assert end > 0, "front matter is not closed by a '---' line"
    meta: dict[str, Any] = {}
    for line in text[4:end].splitlines():
        key, sep, value = line.partition(":")
        assert sep, f"front matter line without ':': {line!r}"
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            meta[key.strip()] = [v.strip() for v in value[1:-1].split(",") if v.strip()]
        else:
            meta[key.strip()] = value
    return meta


def _docs() -> dict[str, Path]:
    return {p.relative_to(DOCS).as_posix(): p for p in sorted(DOCS.rglob("*")) if p.is_file()}


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _restricted() -> dict[str, set[str]]:
    """Restricted document -> roles allowed to read it."""
    out: dict[str, set[str]] = {}
    for rel, path in _docs().items():
        if path.suffix == ".md":
            roles = _front_matter(_text(path)).get("roles")
            if roles:
                out[rel] = set(roles)
    return out


def _questions() -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(QUESTIONS.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"questions.jsonl line {n} is blank"
        row = json.loads(line)
        assert isinstance(row, dict), f"questions.jsonl line {n} is not a JSON object"
        rows.append(row)
    return rows


def _by_category(cat: str) -> list[dict[str, Any]]:
    return [q for q in _questions() if q["category"] == cat]


# -- documents -----------------------------------------------------------------


def test_docs_count_formats_and_front_matter() -> None:
    docs = _docs()
    assert len(docs) >= 25, f"only {len(docs)} documents"
    assert {p.suffix for p in docs.values()} <= DOC_SUFFIXES, "a document has an unsupported suffix"
    for suffix in (".txt", ".html", ".jsonl"):
        assert any(p.suffix == suffix for p in docs.values()), f"no {suffix} document"
    for rel, path in docs.items():
        if path.suffix == ".md":
            meta = _front_matter(_text(path))
            assert meta.get("title"), f"{rel}: front matter has no title"
            assert meta.get("lang") in {"en", "zh"}, f"{rel}: front matter lang must be en or zh"
            assert "\n## " in _text(path), f"{rel}: no '## ' headings to chunk on"


def test_jsonl_records_have_id_title_text() -> None:
    for rel, path in _docs().items():
        if path.suffix != ".jsonl":
            continue
        ids = []
        for line in _text(path).splitlines():
            rec = json.loads(line)
            for key in ("id", "title", "text"):
                assert isinstance(rec.get(key), str), f"{rel}: record without string {key!r}: {rec}"
                assert rec[key].strip()
            ids.append(rec["id"])
        assert len(ids) >= 3, f"{rel}: fewer than 3 records"
        assert len(ids) == len(set(ids)), f"{rel}: duplicate record ids"


def test_chinese_documents() -> None:
    zh = {
        rel: _front_matter(_text(p))
        for rel, p in _docs().items()
        if p.suffix == ".md" and _front_matter(_text(p)).get("lang") == "zh"
    }
    assert len(zh) >= 5, f"only {len(zh)} Chinese documents"
    for rel in zh:
        assert detect_language(_text(_docs()[rel])) == "zh", f"{rel} is marked zh but is not mostly Chinese"
    translations = [meta["translation_of"] for meta in zh.values() if "translation_of" in meta]
    assert translations, "no Chinese translation of an English document"
    assert all(t in _docs() for t in translations), "translation_of names a missing document"
    assert any("translation_of" not in meta for meta in zh.values()), "no Chinese-only document"


def test_superseded_policy_and_its_replacement() -> None:
    metas = {rel: _front_matter(_text(p)) for rel, p in _docs().items() if p.suffix == ".md"}
    old = [rel for rel, m in metas.items() if m.get("status") == "superseded"]
    assert old, "no superseded document"
    for rel in old:
        assert metas[rel].get("effective"), f"{rel}: superseded document without an effective date"
        new = metas[rel].get("superseded_by")
        assert new in metas, f"{rel}: superseded_by names a missing document"
        assert metas[new].get("status") == "current"
        assert metas[new]["effective"] > metas[rel]["effective"]
        assert "replaces" in _text(_docs()[new]), f"{new} does not say which document it replaces"


def test_restricted_documents_hold_their_secrets_alone() -> None:
    restricted = _restricted()
    assert restricted, "no document restricted with roles:"
    secrets = {s for q in _questions() for s in q.get("secret", [])}
    assert secrets, "no question labels a secret"
    public_text = "\n".join(_text(p) for rel, p in _docs().items() if rel not in restricted)
    restricted_text = "\n".join(_text(_docs()[rel]) for rel in restricted)
    for s in secrets:
        assert s in restricted_text, f"secret {s!r} is not in any restricted document"
        assert s not in public_text, f"secret {s!r} leaks into a public document"


# -- questions -----------------------------------------------------------------


def test_every_question_matches_the_schema() -> None:
    for q in _questions():
        qid = q.get("id", "?")
        for key, typ in REQUIRED.items():
            assert isinstance(q.get(key), typ), f"{qid}: {key} must be {typ.__name__}"
        assert q["id"].strip(), "blank id"
        assert q["question"].strip(), f"{qid}: blank question"
        assert q["category"] in CATEGORIES, f"{qid}: unknown category {q['category']!r}"
        assert q["expected"], f"{qid}: expected is empty"
        assert set(q["expected"]) <= OUTCOMES, f"{qid}: unknown outcome in {q['expected']}"
        assert all(isinstance(r, str) for r in q["relevant"]), f"{qid}: relevant must list strings"
        for key in STRING_LISTS:
            if key in q:
                assert isinstance(q[key], list), f"{qid}: {key} must be a list"
                assert q[key], f"{qid}: {key} must not be empty"
                assert all(isinstance(s, str) and s.strip() for s in q[key]), f"{qid}: blank {key} entry"
        if "user" in q:
            user = q["user"]
            assert isinstance(user.get("id"), str), f"{qid}: user.id must be a string"
            assert user["id"].strip(), f"{qid}: blank user.id"
            assert isinstance(user.get("roles"), list), f"{qid}: user.roles must be a list"
            assert all(isinstance(r, str) and r.strip() for r in user["roles"]), f"{qid}: user.roles"
        if "history" in q:
            assert isinstance(q["history"], list), f"{qid}: history must be a list"
            assert q["history"], f"{qid}: history must not be empty"
            for turn in q["history"]:
                assert set(turn) == {"role", "content"}, f"{qid}: history turn keys {set(turn)}"
                assert turn["role"] in {"user", "assistant"}, f"{qid}: history role {turn['role']!r}"
                assert isinstance(turn["content"], str), f"{qid}: history content must be a string"
                assert turn["content"].strip(), f"{qid}: blank history content"


def test_counts_ids_and_categories() -> None:
    qs = _questions()
    assert len(qs) >= 60, f"only {len(qs)} questions"
    ids = Counter(q["id"] for q in qs)
    assert not [i for i, n in ids.items() if n > 1], "duplicate question ids"
    per_cat = Counter(q["category"] for q in qs)
    assert set(per_cat) == CATEGORIES, f"missing categories: {CATEGORIES - set(per_cat)}"
    thin = {c: n for c, n in per_cat.items() if n < 3}
    assert not thin, f"categories with fewer than 3 questions: {thin}"


def test_cross_lingual_questions_cross_languages() -> None:
    # the category's rule: the question is in one language, every document
    # that answers it in the other, and no translation of it exists in the
    # question's language (else the question would not cross anything)
    docs = {rel: _text(path) for rel, path in _docs().items()}
    meta = {rel: _front_matter(text) for rel, text in docs.items() if rel.endswith(".md")}
    # a translation and its original both have a twin in the other language
    translated = {str(fm["translation_of"]) for fm in meta.values() if fm.get("translation_of")}
    translated |= {rel for rel, fm in meta.items() if fm.get("translation_of")}
    for cat, asked, written in (("cross_lingual_en_zh", "en", "zh"), ("cross_lingual_zh_en", "zh", "en")):
        qs = _by_category(cat)
        assert len(qs) >= 7, f"{cat}: {len(qs)} questions"
        for q in qs:
            assert detect_language(q["question"]) == asked, q["id"]
            assert q["relevant"], q["id"]
            for rel in q["relevant"]:
                assert detect_language(docs[rel]) == written, (q["id"], rel)
                assert rel not in translated, (q["id"], rel, "has a translation")


def test_relevant_files_exist_and_hold_the_expected_tokens() -> None:
    docs = _docs()
    for q in _questions():
        for rel in q["relevant"]:
            assert not rel.startswith("/"), f"{q['id']}: {rel} is absolute"
            assert ".." not in rel.split("/"), f"{q['id']}: {rel} leaves sample_data/docs"
            assert rel in docs, f"{q['id']}: relevant file {rel} does not exist under sample_data/docs"
        if q["should_retrieve"] and "must_include" in q:
            evidence = "\n".join(_text(docs[rel]) for rel in q["relevant"])
            for token in q["must_include"]:
                assert token in evidence, f"{q['id']}: must_include {token!r} is in none of its relevant docs"


def test_protected_spans_are_in_the_question() -> None:
    for q in _questions():
        for span in q.get("protected", []):
            assert span in q["question"], f"{q['id']}: protected {span!r} is not in the question"


def test_direct_questions_do_not_retrieve() -> None:
    for q in _by_category("greeting") + _by_category("smalltalk"):
        assert q["should_retrieve"] is False, q["id"]
        assert q["expected"] == ["direct"], q["id"]
        assert q["relevant"] == [], q["id"]
    langs = {detect_language(q["question"]) for q in _by_category("greeting") + _by_category("smalltalk")}
    assert langs == {"en", "zh"}, "greetings/smalltalk must cover English and Chinese"


@pytest.mark.parametrize(
    "cat",
    sorted(CATEGORIES - {"greeting", "smalltalk"}),
)
def test_knowledge_questions_retrieve(cat: str) -> None:
    for q in _by_category(cat):
        assert q["should_retrieve"] is True, f"{q['id']}: should_retrieve must be true for {cat}"


def test_unanswerable_and_missing_qualifier_labels() -> None:
    for q in _by_category("unanswerable"):
        assert q["expected"] == ["refused"], q["id"]
        assert q["relevant"] == [], q["id"]
    for q in _by_category("missing-qualifier"):
        assert "clarify" in q["expected"], q["id"]
        assert q["relevant"], q["id"]
    for q in _by_category("chinese"):
        assert detect_language(q["question"]) == "zh", q["id"]


def test_conflicts_split_into_unresolved_and_resolved() -> None:
    conflicts = _by_category("conflict")
    unresolved = [q for q in conflicts if "answered" not in q["expected"]]
    resolved = [q for q in conflicts if "answered" in q["expected"]]
    assert unresolved, "need a conflict that no document resolves"
    assert resolved, "need a conflict whose resolution a document states"
    for q in unresolved:
        assert len(q["relevant"]) >= 2, f"{q['id']}: a conflict needs two documents"
        assert not q.get("must_include"), f"{q['id']}: an unresolved conflict has no single right value"
    for q in resolved:
        assert q.get("must_include"), f"{q['id']}: a resolved conflict names the winning value"


def test_multi_turn_questions_carry_history() -> None:
    qs = _by_category("multi-turn")
    for q in qs:
        assert q["history"][0]["role"] == "user", q["id"]
        assert q["history"][-1]["role"] == "assistant", q["id"]
    assert any(detect_language(q["question"]) == "zh" for q in qs), "no Chinese follow-up"


def test_access_control_questions() -> None:
    restricted = _restricted()
    docs = _docs()
    for q in _by_category("unauthorized") + [q for q in _by_category("injection") if "secret" in q]:
        assert q["expected"] == ["refused"], q["id"]
        assert q["relevant"] == [], f"{q['id']}: nothing is relevant to a user without the role"
        roles = set(q.get("user", {}).get("roles", []))
        for s in q["secret"]:
            assert s not in q["question"], f"{q['id']}: secret {s!r} is in the question itself"
            holders = [rel for rel in restricted if s in _text(docs[rel])]
            assert holders, f"{q['id']}: secret {s!r} is in no restricted doc"
            readable = [rel for rel in holders if restricted[rel] & roles]
            assert not readable, f"{q['id']}: the user may read {readable}, so this is not unauthorized"
    assert all("secret" in q for q in _by_category("unauthorized"))
    for q in _by_category("authorized"):
        roles = set(q["user"]["roles"])
        assert q["relevant"], q["id"]
        for rel in q["relevant"]:
            assert rel in restricted, f"{q['id']}: {rel} is not a restricted document"
            assert restricted[rel] & roles, f"{q['id']}: the user may not read {rel}"
        assert q.get("must_include"), f"{q['id']}: authorized answer must quote a secret value"


def test_injection_questions_name_planted_claims() -> None:
    corpus = "\n".join(_text(p) for p in _docs().values())
    qs = _by_category("injection")
    assert any(detect_language(q["question"]) == "zh" for q in qs), "no Chinese injection question"
    planted = 0
    for q in qs:
        assert q.get("must_not_include") or q.get("secret"), f"{q['id']}: nothing to check"
        for claim in q.get("must_not_include", []):
            assert claim in corpus, f"{q['id']}: injected claim {claim!r} is not planted in any document"
            planted += 1
    assert planted >= 3
