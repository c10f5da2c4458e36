"""Bad input everywhere: a clear exception naming the problem before any work,
or a documented outcome.

    question   blank / whitespace / not a string      -> ValueError / TypeError, no model call
               100 KB                                 -> Trace; "question truncated" fallback
               binary-looking, NUL + control chars,   -> Trace with an outcome
               emoji-only (rule no_words), mixed languages
               any string (hypothesis)                -> ValueError/TypeError or a Trace
    history    not a list, items not dicts, missing keys, wrong roles,
               non-string content                     -> ValueError naming the item, no model call
               any JSON-like value (hypothesis)       -> ValueError or a Trace
               huge (500 turns x 4 KB)                -> Trace, bounded; "history truncated"
    sr.User    blank / control characters / roles as one string / not strings
                                                      -> ValueError / TypeError at construction
               odd but valid ids (SQL, paths, emoji)  -> public documents only
    Settings   out of range, unknown, inconsistent, non-finite -> ValueError naming the field
    search     bad k / mode / query / user            -> ValueError / TypeError naming it
    ingest     FIFO, socket, broken link, link loop, folder named *.md, file removed between
               listing and reading, unreadable (non-root only), blank / missing path
                                                      -> reported in skipped (never hangs) or
                                                         a clear error

Every check is counted ("bad input ...").
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cases import record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_text import found, json_strings

import selfrag_nb as sr
from selfrag_nb.stages.base import MAX_MODEL_HISTORY_CHARS, MAX_MODEL_QUESTION_CHARS
from selfrag_nb.store.loaders import LOADERS

SECRETS = ("HALCYON-9", "Tallyweave", "2,840,000", "OVR-7731-ZETA", "48213")


@pytest.fixture(scope="module")
def kb() -> Any:
    return sr.KnowledgeBase.sample(embedder="hashing")


@pytest.fixture(scope="module")
def rag(kb: Any) -> Any:
    return sr.SelfRAG(kb)


def _no_work(kb: Any) -> tuple[Any, sr.ScriptedModel]:
    """A pipeline whose model answers nothing: any call would be recorded."""
    model = sr.ScriptedModel()
    return sr.SelfRAG(kb, model=model, settings=sr.Settings(decision_rules=False)), model


def _raises_before_work(
    kb: Any, call: Callable[[Any], object], exc: type[BaseException], fragment: str
) -> None:
    for how in ("ask", "stepper"):
        rag, model = _no_work(kb)
        with pytest.raises(exc) as info:
            call(getattr(rag, how))
        assert fragment in str(info.value), f"{how}: {info.value!s} does not name {fragment!r}"
        assert model.requests == [], f"{how}: a model was called before the input was rejected"


# ------------------------------------------------------------------ questions

BAD_QUESTIONS: list[tuple[object, type[BaseException], str]] = [
    ("", ValueError, "blank"),
    ("   ", ValueError, "blank"),
    (" \n\t\r\u3000\u00a0\u2003 ", ValueError, "blank"),
    (None, TypeError, "must be a string"),
    (b"What is the refund window?", TypeError, "bytes"),
    (42, TypeError, "int"),
    (["refund"], TypeError, "list"),
]


@pytest.mark.parametrize(("question", "exc", "fragment"), BAD_QUESTIONS)
def test_invalid_question_fails_before_any_model_call(
    kb: Any, question: object, exc: type[BaseException], fragment: str
) -> None:
    _raises_before_work(kb, lambda ask: ask(question), exc, fragment)
    record("bad input: questions", 2)


def _binary_looking() -> str:
    return bytes(range(256)).decode("latin-1") + "\x00\x00refund\x07\x1b[31m"


ODD_QUESTIONS = {
    "100 KB": "What is the refund window for a Pro subscription? " * 2000,
    "binary-looking": _binary_looking(),
    "NUL and controls": "refund\x00window\x01\x02\x7f\x1b policy?",
    "emoji only": "🤔💸🧾🙃",
    "mixed languages": "Pro 套餐的 refund window 是多少天？ Merci 🙏",
    "search syntax": "refund\" OR 1=1 -- ' ) ( AND NOT ^ ~ * ? : \\ [ ] { } / + <script>",
    "RTL and combining": "\u202eCan I get a refund?\u202c e\u0301\u0301\u0301",
}


@pytest.mark.parametrize("name", list(ODD_QUESTIONS))
def test_odd_questions_get_a_documented_outcome(rag: Any, name: str) -> None:
    question = ODD_QUESTIONS[name]
    t0 = time.perf_counter()
    trace = rag.ask(question, user=sr.User("ana"))
    assert time.perf_counter() - t0 < 30
    assert trace.outcome in {"answered", "disclaimed", "regenerated", "direct", "clarify", "refused"}
    assert trace.answer
    assert trace.question == question  # the trace keeps what was asked, whole
    assert sr.Trace.from_json(trace.to_json()).question == question
    assert "<script>" not in trace.to_html()
    fallbacks = [f.what for f in trace.decision.fallbacks] if trace.decision else []
    if len(question) > MAX_MODEL_QUESTION_CHARS:
        assert "question truncated" in fallbacks
        for call in trace.model_calls:
            user_text = "".join(m["content"] for m in call.messages if m["role"] == "user")
            assert question not in user_text, f"{call.role} was sent the whole 100 KB question"
    if name == "emoji only":
        assert trace.decision is not None
        assert trace.decision.rule == "no_words"
        assert trace.outcome == "direct"
    record("bad input: questions", 1)


_QUESTIONS = st.one_of(
    st.text(max_size=300),
    st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
    st.text(alphabet=st.sampled_from(" \t\n\r\u3000\u00a0\u2003\u200b"), max_size=20),
    st.text(alphabet=st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF), min_size=1, max_size=20),
    st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4FFF), min_size=1, max_size=40),
    st.lists(st.sampled_from(["refund", "退款", "Pro", "API", "v3.2.1", "E4001", "?", "🙂", "\x00"])).map(
        " ".join
    ),
    st.none(),
    st.integers(),
    st.binary(max_size=20),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=_QUESTIONS, mode=st.sampled_from(["vector", "fts", "hybrid"]))
def test_any_question_is_rejected_clearly_or_answered(rag: Any, kb: Any, question: Any, mode: str) -> None:
    record("bad input: hypothesis questions", 1)
    valid = isinstance(question, str) and bool(question.strip())
    trace: sr.Trace | None = None
    error: Exception | None = None
    try:
        trace = rag.ask(question)
    except (ValueError, TypeError) as exc:
        error = exc
    if valid:
        assert error is None, f"valid question rejected: {error}"
        assert trace is not None
        assert trace.outcome is not None
        assert trace.answer
    else:
        assert error is not None, f"{question!r} was accepted"
        assert "question" in str(error)
    hits: Any = None
    try:
        hits = kb.search(question, k=3, mode=mode)
    except (ValueError, TypeError) as exc:
        error = exc
    assert (hits is not None) == valid, f"{question!r}: {error}"
    assert all(not h.source.startswith("internal/") for h in hits or [])


# -------------------------------------------------------------------- history

BAD_HISTORIES: list[tuple[object, str]] = [
    ("hello", "history must be a list"),
    (b"hello", "history must be a list"),
    ({"role": "user", "content": "hi"}, "history must be a list"),
    (42, "history must be a list"),
    (iter([{"role": "user", "content": "hi"}]), "history must be a list"),
    (["hi"], "history[0] must be a dict"),
    ([{"role": "user", "content": "hi"}, ("user", "hi")], "history[1] must be a dict"),
    ([None], "history[0] must be a dict"),
    ([{"content": "hi"}], "history[0]['role']"),
    ([{"role": "user"}], "history[0]['content']"),
    ([{}], "history[0]['role']"),
    ([{"role": "bot", "content": "hi"}], "history[0]['role'] must be one of"),
    ([{"role": "", "content": "hi"}], "history[0]['role'] must be one of"),
    ([{"role": "USER", "content": "hi"}], "history[0]['role'] must be one of"),
    ([{"role": None, "content": "hi"}], "history[0]['role'] must be one of"),
    ([{"role": "user", "content": 5}], "history[0]['content'] must be a string"),
    ([{"role": "user", "content": None}], "history[0]['content'] must be a string"),
    ([{"role": "user", "content": ["a", "b"]}], "history[0]['content'] must be a string"),
    ([{"role": "user", "content": b"hi"}], "history[0]['content'] must be a string"),
]


@pytest.mark.parametrize(("history", "fragment"), BAD_HISTORIES)
def test_history_in_the_wrong_shape_fails_before_any_model_call(
    kb: Any, history: object, fragment: str
) -> None:
    # A fresh iterator per call: the first attempt would consume it.
    def call(ask: Any) -> object:
        h = iter([{"role": "user", "content": "hi"}]) if isinstance(history, type(iter([]))) else history
        return ask("What is the refund window?", history=h)

    _raises_before_work(kb, call, ValueError, fragment)
    record("bad input: history", 2)


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)
_TURN = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system"]), "content": st.text(max_size=80)}
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    history=st.one_of(_JSONISH, st.lists(_TURN, max_size=6), st.lists(st.one_of(_TURN, _JSONISH), max_size=4))
)
def test_any_history_is_rejected_clearly_or_used(rag: Any, history: Any) -> None:
    record("bad input: hypothesis histories", 1)
    trace: sr.Trace | None = None
    error = ""
    try:
        trace = rag.ask("And what about the refund window?", history=history)
    except ValueError as exc:
        error = str(exc)
    if trace is None:
        assert "history" in error
    else:
        assert history is None or isinstance(history, list)
        assert trace.outcome is not None
        assert trace.history == (history or [])


def test_huge_history_is_bounded_and_recorded(rag: Any) -> None:
    turns = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"turn {i}: tell me about the plans. " * 120,
        }
        for i in range(500)
    ]
    t0 = time.perf_counter()
    trace = rag.ask("And for the Pro plan?", history=turns)
    wall = time.perf_counter() - t0
    assert wall < 10, f"{wall:.1f} s for a 2 MB history"
    assert trace.outcome is not None
    assert len(trace.history) == 500  # the trace keeps the conversation whole
    decision = trace.decision
    assert decision is not None
    assert any(f.what == "history truncated" and "older turn" in f.reason for f in decision.fallbacks)
    for call in trace.model_calls:
        sent = sum(len(m["content"]) for m in call.messages)
        assert sent < MAX_MODEL_HISTORY_CHARS + 30_000, f"{call.role} was sent {sent} characters"
    record("bad input: history", 1)


# ----------------------------------------------------------------------- users

BAD_USERS: list[tuple[Callable[[], object], type[BaseException], str]] = [
    (lambda: sr.User(""), ValueError, "must not be blank"),
    (lambda: sr.User("   "), ValueError, "must not be blank"),
    (lambda: sr.User(None), ValueError, "valid string"),  # type: ignore[arg-type]  # the bad input under test
    (lambda: sr.User(5), ValueError, "valid string"),  # type: ignore[arg-type]  # the bad input under test
    (lambda: sr.User("a\x00b"), ValueError, "control characters"),
    (lambda: sr.User("ana\n"), ValueError, "control characters"),
    (lambda: sr.User("fiona", roles="finance"), ValueError, "roles=['finance']"),
    (lambda: sr.User("fiona", roles=b"finance"), ValueError, "list of role names"),
    (lambda: sr.User("x", roles=[""]), ValueError, "non-blank"),
    (lambda: sr.User("x", roles=["  "]), ValueError, "non-blank"),
    (lambda: sr.User("x", roles=[1]), ValueError, "valid string"),
    (lambda: sr.User("x", roles=["fin\tance"]), ValueError, "control characters"),
    (lambda: sr.User("x", roles=5), TypeError, "not iterable"),
    (lambda: sr.User("x", tenant="   "), ValueError, "tenant"),
    (lambda: sr.User("x", tenant="acme\x1b"), ValueError, "control characters"),
    (lambda: sr.User("x", admin=True), ValueError, "admin"),
]


@pytest.mark.parametrize(("make", "exc", "fragment"), BAD_USERS)
def test_bad_users_are_refused_when_built(
    make: Callable[[], object], exc: type[BaseException], fragment: str
) -> None:
    with pytest.raises(exc) as info:
        make()
    assert fragment in str(info.value)
    record("bad input: users", 1)


def test_user_of_the_wrong_type_fails_before_any_model_call(kb: Any) -> None:
    cases: list[tuple[object, str]] = [(5, "int"), ({"id": "ana"}, "dict"), (["ana"], "list")]
    for bad, fragment in cases:

        def call(ask: Any, bad: object = bad) -> object:
            return ask("refund?", user=bad)

        _raises_before_work(kb, call, TypeError, fragment)
        record("bad input: users", 2)


ODD_IDS = [
    "x' OR 1=1 --",
    "') OR (1=1",
    "finance",
    "../../etc/passwd",
    "*",
    "%",
    "\\",
    '"',
    "🙂",
    "名字",
    "a" * 2000,
    "support' , 'finance",
]


@pytest.mark.parametrize("uid", ODD_IDS, ids=range(len(ODD_IDS)))
def test_odd_user_ids_grant_nothing(kb: Any, rag: Any, uid: str) -> None:
    # The id "finance" is not the role "finance": only real role names grant it.
    user = sr.User(uid, roles=[] if uid == "finance" else [uid], tenant=uid)
    for mode in ("vector", "fts", "hybrid"):
        hits = kb.search("HALCYON-9 acquisition price and support override code", k=20, mode=mode, user=user)
        assert all(not h.source.startswith("internal/") for h in hits), [h.source for h in hits]
    trace = rag.ask("What is the override code in the support escalation runbook?", user=user)
    # the trace's text (keys and strings), secrets as whole tokens: support/json_text.py
    text = "\n".join(json_strings(json.loads(trace.to_json())))
    assert not found(SECRETS, text)
    record("bad input: users", 4)


# -------------------------------------------------------------------- settings

BAD_SETTINGS: list[tuple[dict[str, Any], str]] = [
    ({"relevance_cutoff": 101}, "relevance_cutoff"),
    ({"relevance_cutoff": -1}, "relevance_cutoff"),
    ({"relevance_cutoff": "high"}, "relevance_cutoff"),
    ({"relevance_cutoff": 90, "high_relevance": 80}, "relevance_cutoff (90) must not exceed high_relevance"),
    ({"disclaimer_confidence": 90, "accept_confidence": 80}, "disclaimer_confidence"),
    ({"timeout": 0}, "timeout"),
    ({"timeout": -5}, "timeout"),
    ({"timeout": float("nan")}, "timeout"),
    ({"timeout": float("inf")}, "timeout"),
    ({"deadline": 0}, "deadline"),
    ({"deadline": float("inf")}, "deadline"),
    ({"deadline": "soon"}, "deadline"),
    ({"retrieval": "sometimes"}, "retrieval"),
    ({"search_mode": "semantic"}, "search_mode"),
    ({"no_evidence": "guess"}, "no_evidence"),
    ({"prompts": "fr"}, "prompts"),
    ({"per_query_k": 0}, "per_query_k"),
    ({"total_cap": 10**6}, "total_cap"),
    ({"grade_concurrency": 0}, "grade_concurrency"),
    ({"rerank_keep": 0}, "rerank_keep"),
    ({"rerank_max_candidates": 51}, "rerank_max_candidates"),
    ({"max_regenerations": 99}, "max_regenerations"),
    ({"decision_cache_size": -1}, "decision_cache_size"),
    ({"max_rewrites": 11}, "max_rewrites"),
    ({"relevance_threshold": 50}, "relevance_threshold"),
]


@pytest.mark.parametrize(("changes", "fragment"), BAD_SETTINGS, ids=[next(iter(c)) for c, _ in BAD_SETTINGS])
def test_bad_settings_name_the_field(kb: Any, changes: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        sr.Settings(**changes)
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        sr.Settings().with_(**changes)
    rag = sr.SelfRAG(kb)
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        rag.with_settings(**changes)
    record("bad input: settings", 3)


def test_bad_pipeline_arguments(kb: Any) -> None:
    bad_settings: Any = {"rerank": False}
    no_kb: Any = None
    cases: list[tuple[Callable[[], object], type[BaseException], str]] = [
        (lambda: sr.SelfRAG(kb, settings=bad_settings), TypeError, "Settings"),
        (lambda: sr.SelfRAG(kb, timeout=0), ValueError, "timeout"),
        (lambda: sr.SelfRAG(kb, deadline=-1), ValueError, "deadline"),
        (lambda: sr.SelfRAG(no_kb), ValueError, "knowledge base"),
        (lambda: sr.SelfRAG(kb, language="fr"), ValueError, "language"),
        (lambda: sr.SelfRAG(kb, model=""), ValueError, "empty model name"),
        (lambda: sr.SelfRAG(kb, model=42), TypeError, "int"),
        (lambda: sr.SelfRAG(kb, models={"judge": "offline"}), ValueError, "unknown role 'judge'"),
        (lambda: sr.SelfRAG(kb, record=True), ValueError, "cassette"),
    ]
    for make, exc, fragment in cases:
        with pytest.raises(exc) as info:
            make()
        assert fragment in str(info.value), str(info.value)
    record("bad input: settings", len(cases))


# ---------------------------------------------------------------------- search


@pytest.mark.parametrize("k", [0, -1, 1001, 10**9, 2.5, "5", True, None, float("nan")])
def test_bad_k_is_named(kb: Any, k: Any) -> None:
    with pytest.raises(ValueError, match="k must be an int between 1 and"):
        kb.search("refund", k=k)
    record("bad input: search", 1)


@pytest.mark.parametrize("mode", ["", "HYBRID", "semantic", None, 3, "vector "])
def test_bad_mode_is_named(kb: Any, mode: Any) -> None:
    with pytest.raises(ValueError, match="unknown search mode"):
        kb.search("refund", mode=mode)
    record("bad input: search", 1)


def test_bad_query_user_and_where_are_named(kb: Any) -> None:
    cases: list[tuple[dict[str, Any], type[BaseException], str]] = [
        ({"query": ""}, ValueError, "non-blank"),
        ({"query": " \n "}, ValueError, "non-blank"),
        ({"query": None}, ValueError, "non-blank"),
        ({"query": b"refund"}, ValueError, "non-blank"),
        ({"query": "refund", "user": "ana"}, TypeError, "User"),
        ({"query": "refund", "where": 5}, TypeError, "where"),
        ({"query": "refund", "where": "1=1) OR (1=1"}, ValueError, "unmatched"),
        ({"query": "refund", "where": "source = 'a.md' --"}, ValueError, "comments"),
    ]
    for kwargs, exc, fragment in cases:
        with pytest.raises(exc) as info:
            kb.search(**kwargs)
        assert fragment in str(info.value), str(info.value)
    record("bad input: search", len(cases))


# ---------------------------------------------------------------------- ingest


def _ingest_bounded(kb: Any, path: Any, seconds: float = 30) -> Any:
    """Ingest in a thread: a FIFO opened for reading would block forever."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["report"] = kb.ingest(path)
        except Exception as exc:  # handed back to the test thread
            result["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"ingest of {path} hung for {seconds} s"
    if "error" in result:
        raise result["error"]
    return result["report"]


def test_unreadable_files_are_reported_and_the_rest_ingests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Refunds\n\nRefunds within 30 days.\n", encoding="utf-8")
    (docs / "loop").symlink_to(docs, target_is_directory=True)
    (docs / "nested").mkdir()
    (docs / "nested" / "up").symlink_to(docs / "nested", target_is_directory=True)
    (docs / "broken.md").symlink_to(tmp_path / "nowhere.md")
    os.mkfifo(docs / "pipe.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(docs / "sock.md"))
    (docs / "folder.md").mkdir()
    (docs / "binary.md").write_bytes(b"\x00\x01\x02\xff" * 64)
    (docs / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    # A file removed between listing and reading: the loader of "a.vanish"
    # (read first, names are sorted) deletes "b-vanished.md".
    (docs / "a.vanish").write_text("x", encoding="utf-8")
    (docs / "b-vanished.md").write_text("# Gone\n\nNever read.\n", encoding="utf-8")

    def vanish(path: Path, source: str) -> Any:
        (path.parent / "b-vanished.md").unlink()
        return LOADERS[".txt"](path, source)

    monkeypatch.setitem(LOADERS, ".vanish", vanish)
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    try:
        report = _ingest_bounded(kb, docs)
    finally:
        sock.close()
    skipped = dict(report.skipped)
    expected = {
        "loop": "symbolic link to a folder",
        "nested/up": "symbolic link to a folder",
        "broken.md": "broken symbolic link",
        "pipe.md": "not a regular file",
        "sock.md": "not a regular file",
        "binary.md": "binary",
        "latin1.txt": "not UTF-8",
        "b-vanished.md": "cannot read",
    }
    for source, reason in expected.items():
        assert source in skipped, f"{source} vanished from the report: {report.skipped}"
        assert reason in skipped[source], (source, skipped[source])
    assert sorted(report.added) == ["a.vanish", "good.md"]
    assert "folder.md" not in skipped  # a folder is walked, not a file to report
    hits = kb.search("refund within 30 days", k=5)
    assert [h.source for h in hits][:1] == ["good.md"]
    # Again: nothing duplicated, the same files reported.
    again = _ingest_bounded(kb, docs)
    assert again.added == []
    assert sorted(again.unchanged) == ["a.vanish", "good.md"] or not (docs / "b-vanished.md").exists()
    record("bad input: ingest", len(expected) + 2)


@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="running as root: a chmod 000 file stays readable, so permission denied cannot occur",
)
def test_permission_denied_is_reported(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Refunds\n\nRefunds within 30 days.\n", encoding="utf-8")
    (docs / "noperm.md").write_text("# Secret\n\nUnreadable.\n", encoding="utf-8")
    (docs / "noperm.md").chmod(0)
    report = _ingest_bounded(sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing"), docs)
    assert report.added == ["good.md"]
    assert "cannot read" in dict(report.skipped)["noperm.md"]
    record("bad input: ingest", 1)


def test_bad_ingest_paths_are_named(tmp_path: Path) -> None:
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    os.mkfifo(tmp_path / "alone.fifo")
    cases: list[tuple[Any, type[BaseException], str]] = [
        ("", ValueError, "blank"),
        ("   ", ValueError, "blank"),
        (tmp_path / "missing", FileNotFoundError, "does not exist"),
        (None, TypeError, "NoneType"),
        (5, TypeError, "int"),
    ]
    for path, exc, fragment in cases:
        with pytest.raises(exc) as info:
            _ingest_bounded(kb, path)
        assert fragment in str(info.value), str(info.value)
    one_role: Any = "finance"
    a_list: Any = ["x"]
    report = _ingest_bounded(kb, tmp_path / "alone.fifo")
    assert report.added == []
    assert "not a regular file" in dict(report.skipped)["alone.fifo"]
    with pytest.raises(TypeError, match="acl must be a dict"):
        kb.ingest(tmp_path, acl=one_role)
    with pytest.raises(TypeError, match="metadata"):
        kb.ingest(tmp_path, metadata=a_list)
    # ACL values of the wrong type name the key, before anything is read
    bad_acls: list[tuple[Any, type[BaseException], str]] = [
        ({"roles": 5}, TypeError, "acl roles"),
        ({"users": None}, TypeError, "acl users"),
        ({"users": {"bob": 1}}, TypeError, "acl users"),
        ({"roles": [7]}, ValueError, "acl role"),
        ({"roles": ["ok", " "]}, ValueError, "acl role"),
        ({"users": ["a\x1bb"]}, ValueError, "control characters"),
        ({"tenant": 3}, ValueError, "acl tenant"),
        ({"Roles": ["x"]}, ValueError, "acl accepts only"),
    ]
    for acl, exc, fragment in bad_acls:
        with pytest.raises(exc, match=fragment):
            kb.ingest(tmp_path, acl=acl)
    record("bad input: ingest", len(cases) + 3 + len(bad_acls))
