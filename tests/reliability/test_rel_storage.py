"""Storage reliability: nothing lost, nothing duplicated, damage named.

    concurrent   4 spawned processes x several rounds of overlapping folders
                 (same content, changed content, one contested source)
                 -> no duplicate chunk id, every source once, ids = a reference build
    killed       a child process ingests a big folder; SIGKILL at random points
                 (embedding, write/index, first ingest) -> the KB is the old or the
                 new state exactly, opens, searches (FTS too); the stale lock file
                 does not block; a re-run completes it
    restore      several ingests / removes / ACL changes, each state recorded
                 -> restore(v) brings back content AND search results (FTS too)
    damaged      data / manifest / index files truncated or deleted, garbage,
                 foreign databases, files for folders -> KnowledgeBaseError or
                 FileNotFoundError naming the knowledge base, never a raw lance error
    file://      URI end to end: open, ingest, search, versions, restore, reopen

Each test records its case count (tests/support/cases.py).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from cases import record

import selfrag_nb as sr
from selfrag_nb.errors import KnowledgeBaseError
from selfrag_nb.store.kb import LOCK_FILE, KnowledgeBase

State = dict[str, tuple[str, ...]]  # source -> sorted chunk ids


def _state(kb: KnowledgeBase) -> State:
    by_source: dict[str, list[str]] = {}
    for h in kb.chunks():
        by_source.setdefault(h.source, []).append(h.chunk_id)
    return {s: tuple(sorted(ids)) for s, ids in sorted(by_source.items())}


def _write(root: Path, docs: dict[str, str]) -> Path:
    for rel, text in docs.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def _reference(tmp: Path, docs: dict[str, str]) -> State:
    """The state a single, uninterrupted ingest of ``docs`` produces."""
    folder = _write(tmp / "docs", docs)
    kb = KnowledgeBase.open(tmp / "kb", embedder="hashing")
    kb.ingest(folder)
    return _state(kb)


# ---------------------------------------------------------------------- concurrent


def _ingest_counts(kb_path: str, folder: str) -> tuple[int, int, int]:
    kb = KnowledgeBase.open(kb_path, embedder="hashing")
    # Every process ingests its own folder holding the same names: replacing
    # what another folder stored must be asked for (by default it is skipped).
    rep = kb.ingest(folder, on_conflict="replace")
    return len(rep.added), len(rep.updated), len(rep.unchanged)


def _round_docs(rnd: int) -> dict[str, str]:
    """Twelve shared documents; every round rewrites a different third of them."""
    out = {}
    for j in range(12):
        gen = rnd if j % 3 == rnd % 3 else 0
        out[f"shared/s{j:02d}.md"] = (
            f"# Shared {j}\n\n## Terms\n\nShared document {j} generation {gen} keeps {j * 7 + gen} items.\n\n"
            f"## Notes\n\nA second section so the document has more than one chunk ({j}).\n"
        )
    return out


@pytest.mark.slow
def test_concurrent_ingest_rounds_never_duplicate(tmp_path: Path) -> None:
    rounds, procs = 3, 4
    kb_path = str(tmp_path / "kb")
    ctx = mp.get_context("spawn")
    tried = 0
    with ctx.Pool(procs) as pool:
        for rnd in range(1, rounds + 1):
            shared = _round_docs(rnd)
            names = sorted(shared)
            folders = []
            for i in range(procs):
                # overlapping windows: process i sees documents 3i .. 3i+5 (mod 12)
                window = {names[(3 * i + k) % len(names)] for k in range(6)}
                docs = {n: shared[n] for n in window}
                docs[f"own{i}/r{rnd}.md"] = f"# Own {i}\n\nProcess {i} round {rnd}.\n"
                docs["contested.md"] = f"# Contested\n\nVariant {i} of round {rnd} wins.\n"
                folders.append(str(_write(tmp_path / f"r{rnd}p{i}", docs)))
            results = pool.starmap(_ingest_counts, [(kb_path, f) for f in folders])
            tried += procs

            kb = KnowledgeBase.open(kb_path)
            ids = [h.chunk_id for h in kb.chunks()]
            assert [c for c, n in Counter(ids).items() if n > 1] == [], f"round {rnd}: duplicate chunk ids"
            state = _state(kb)
            contested = kb.chunks("contested.md")
            assert len(contested) == 1, f"round {rnd}: contested.md stored {len(contested)} times"
            assert any(f"Variant {i} of round {rnd} wins." == contested[0].text for i in range(procs))
            every_own = {
                f"own{i}/r{r}.md": f"# Own {i}\n\nProcess {i} round {r}.\n"
                for i in range(procs)
                for r in range(1, rnd + 1)
            }
            want = _reference(tmp_path / f"ref{rnd}", {**shared, **every_own})
            del state["contested.md"]
            assert state == want, f"round {rnd}: stored chunks differ from a single uninterrupted ingest"
            # each shared document was written by exactly one process per change
            if rnd > 1:
                changed = [n for j, n in enumerate(names) if j % 3 == rnd % 3]
                assert sum(u for _, u, _ in results) + sum(a for a, _, _ in results) >= len(changed)
    record("storage: concurrent ingests (rounds x processes)", tried)


# ---------------------------------------------------------------------- killed

# The child announces "writing" right before the store's single table write
# (a wrapper around KnowledgeBase._write: the write itself is the real one),
# so the parent can SIGKILL inside LanceDB's commit, which takes ~20-40 ms here.
_CHILD = """
import sys
from selfrag_nb.store.kb import KnowledgeBase
real_write = KnowledgeBase._write
def announced_write(self, rows, replaced):
    print("writing", len(rows), flush=True)
    return real_write(self, rows, replaced)
KnowledgeBase._write = announced_write
kb = KnowledgeBase.open(sys.argv[1], embedder="hashing")
def progress(done, total, message):
    print(message.split()[0], done, total, flush=True)
print("start", flush=True)
kb.ingest(sys.argv[2], progress=progress, prune=True)
print("finished", flush=True)
"""


def _gen_docs(gen: int, n: int = 100) -> dict[str, str]:
    """Generation ``gen`` of a big folder: half the documents change each
    generation, every seventh is absent in turn (pruned, then back)."""
    out = {}
    for i in range(n):
        if (i + gen) % 7 == 0:
            continue
        tag = gen if i % 2 == gen % 2 else 0
        body = "\n\n".join(
            f"## Part {j}\n\nDocument {i} part {j} marker g{tag}d{i} says the value is {i * j + tag} units. "
            * 3
            for j in range(5)
        )
        out[f"d{i:03d}.md"] = f"# Document {i}\n\n{body}\n"
    return out


def _spawn_ingest(kb: Path, folder: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(kb), str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def _kill_at(child: subprocess.Popen[str], point: str, rng: random.Random) -> str:
    """Read the child's progress and SIGKILL it at ``point`` (load | embedding |
    write | after-write); returns the phase it was in when the signal was sent
    ("finished" when the child won the race)."""
    assert child.stdout is not None
    embed_at = rng.uniform(0.1, 0.9)
    phase = "load"
    while True:
        line = child.stdout.readline()
        if not line:
            child.wait()
            return "finished"
        word, *nums = line.split()
        if word == "start" and point == "load":
            time.sleep(rng.uniform(0.0, 0.2))
            break
        if word == "embedding":
            phase = "embedding"
            if point == "embedding" and int(nums[0]) >= embed_at * int(nums[1]):
                break
        if word == "writing":
            phase = "write"
            if point == "write":
                time.sleep(rng.uniform(0.0, 0.02))
                break
        if word == "done":  # reported inside the write lock, after the log and index
            phase = "after-write"
            if point == "after-write":
                break
        if word == "finished":
            phase = "done"
    child.send_signal(signal.SIGKILL)
    child.wait()
    return phase if child.returncode == -signal.SIGKILL else "finished"


def _check_opens_and_searches(path: Path, state: State) -> None:
    kb = KnowledgeBase.open(path)
    for mode in ("vector", "fts", "hybrid"):
        kb.search("value units", k=5, mode=mode)
    # the full-text index agrees with the content: a marker of a stored chunk is found
    some = next(iter(state))
    hit = kb.chunks(some)[0]
    words = hit.text.split()
    marker = words[words.index("marker") + 1]
    found = kb.search(marker, k=3, mode="fts")
    assert some in {h.source for h in found}, f"FTS does not find {marker!r} of {some}"
    kb.close()


@pytest.mark.slow
def test_killed_ingest_leaves_old_or_new_and_rerun_completes(tmp_path: Path) -> None:
    seed = int(os.environ.get("SELFRAG_NB_KILL_SEED", "7"))
    rng = random.Random(seed)
    kb_path, folder = tmp_path / "kb", tmp_path / "docs"
    _write(folder, _gen_docs(0))
    base = KnowledgeBase.open(kb_path, embedder="hashing")
    base.ingest(folder, prune=True)
    old = _state(base)
    base.close()
    points = ["embedding", "write", "load", "write", "after-write", "write", "embedding", "write"]
    phases: Counter[str] = Counter()
    stale_locks = 0
    outcomes: Counter[str] = Counter()
    for gen, point in enumerate(points, start=1):
        shutil.rmtree(folder)
        _write(folder, _gen_docs(gen))
        phase = _kill_at(_spawn_ingest(kb_path, folder), point, rng)
        phases[phase] += 1

        after_kill = _state(KnowledgeBase.open(kb_path))
        _check_opens_and_searches(kb_path, after_kill)
        lock = kb_path / LOCK_FILE
        if lock.exists():  # left behind by the killed writer: must not block anyone
            from filelock import FileLock

            t0 = time.perf_counter()
            with FileLock(str(lock), timeout=5):
                pass
            assert time.perf_counter() - t0 < 5
            stale_locks += 1
        kb = KnowledgeBase.open(kb_path)
        rep = kb.ingest(folder, prune=True)  # the re-run completes it
        new = _state(kb)
        kb.close()
        assert after_kill in (old, new), (
            f"gen {gen}, killed during {phase}: the knowledge base is neither the old nor the new content "
            f"({len(set(after_kill.items()) ^ set(old.items()))} sources differ from old, "
            f"{len(set(after_kill.items()) ^ set(new.items()))} from new)"
        )
        outcomes[f"{phase} -> {'new' if after_kill == new else 'old'}"] += 1
        if after_kill == new:
            assert rep.added == rep.updated == rep.removed == [], (
                f"gen {gen}: re-run rewrote a finished ingest"
            )
        old = new
    assert old == _reference(tmp_path / "ref", _gen_docs(len(points)))
    assert phases["embedding"] >= 1, f"no kill landed while embedding: {dict(phases)}"
    assert phases["write"] >= 1, f"no kill landed while writing: {dict(phases)}"
    for what, n in sorted(outcomes.items()):
        record(f"storage: SIGKILLed ingests ({what})", n)
    record("storage: stale lock files taken over", stale_locks)


@pytest.mark.slow
def test_killed_first_ingest_leaves_nothing_or_everything(tmp_path: Path) -> None:
    rng = random.Random(11)
    folder = _write(tmp_path / "docs", _gen_docs(3, n=120))
    want = _reference(tmp_path / "ref", _gen_docs(3, n=120))
    tried = 0
    outcomes: Counter[str] = Counter()
    for attempt, point in enumerate(["embedding", "write", "write", "after-write"]):
        kb_path = tmp_path / f"kb{attempt}"
        phase = _kill_at(_spawn_ingest(kb_path, folder), point, rng)
        tried += 1
        kb = KnowledgeBase.open(kb_path, embedder="hashing")
        got = _state(kb)
        assert got in ({}, want), f"attempt {attempt} ({point}): a half-created knowledge base"
        outcomes[f"{phase} -> {'new' if got else 'empty'}"] += 1
        kb.ingest(folder)
        assert _state(kb) == want
        assert kb.search("value units", mode="fts").hits
    for what, n in sorted(outcomes.items()):
        record(f"storage: SIGKILLed first ingests ({what})", n)
    assert sum(outcomes.values()) == tried


# ---------------------------------------------------------------------- restore

_QUERIES = ["refund window days", "shipping express", "退款 三十天", "salary band"]
_HR = sr.User("hana", roles=["hr"])


def _searches(kb: KnowledgeBase) -> dict[str, list[str]]:
    out = {}
    for q in _QUERIES:
        for mode in ("vector", "fts", "hybrid"):
            for user in (None, _HR):
                key = f"{q}|{mode}|{user is not None}"
                out[key] = [h.chunk_id for h in kb.search(q, k=5, mode=mode, user=user)]
    return out


def test_restore_brings_back_content_and_search(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "docs",
        {
            "refund.md": "# Refund\n\nThe refund window is 30 days.\n\n## Exceptions\n\nGift cards are final.\n",
            "shipping.md": "# Shipping\n\nExpress shipping arrives the next day.\n",
            "zh/退款.md": "# 退款\n\n购买后三十天内可以申请退款。\n",
            "hr/salary.md": "---\nroles: [hr]\n---\n# Salary\n\nThe salary band for level 3 is 4242.\n",
        },
    )
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    snapshots: dict[int, tuple[State, dict[str, list[str]]]] = {}

    def snap() -> None:
        snapshots[kb.version] = (_state(kb), _searches(kb))

    ops = [
        lambda: kb.ingest(folder),
        lambda: (
            (folder / "refund.md").write_text("# Refund\n\nThe refund window is now 14 days.\n")
            and kb.ingest(folder)
        ),
        lambda: kb.remove("shipping.md"),
        lambda: kb.ingest(folder / "hr", acl={"roles": ["hr", "finance"]}),
        lambda: (folder / "new.md").write_text("# New\n\nExpress refund desk opens.\n") and kb.ingest(folder),
        lambda: (folder / "zh" / "退款.md").unlink() or kb.ingest(folder, prune=True),
    ]
    for op in ops:
        op()
        snap()
    assert len({json.dumps(s[0]) for s in snapshots.values()}) == len(ops), (
        "every operation changed the state"
    )
    order = list(snapshots)
    random.Random(5).shuffle(order)
    compared = 0
    for v in order:
        kb.restore(v)
        state, searches = snapshots[v]
        assert _state(kb) == state, f"restore({v}) content"
        assert _searches(kb) == searches, f"restore({v}) search results"
        compared += len(searches)
        again = KnowledgeBase.open(tmp_path / "kb")  # a fresh handle sees the restored state
        assert _state(again) == state
        again.close()
    # an ingest after a restore builds on the restored state
    kb.restore(order[0])
    rep = kb.ingest(folder, prune=True)
    # prune removes only this folder's sources: hr/ ingested as its own folder
    # ("salary.md") is brought back by ingesting it again
    kb.ingest(folder / "hr", acl={"roles": ["hr", "finance"]})
    assert _state(kb) == snapshots[max(snapshots)][0]
    assert rep.version <= kb.version
    assert [v["op"] for v in kb.versions()].count("restore") == len(order) + 1
    record("storage: restores", len(order) + 1)
    record("storage: searches compared after restore", compared)


# ---------------------------------------------------------------------- damaged


def _trunc(p: Path, size: int) -> None:
    with open(p, "r+b") as f:
        f.truncate(size)


def _files(d: Path, sub: str, pattern: str = "*") -> list[Path]:
    return sorted(p for p in (d / sub).rglob(pattern) if p.is_file())


def _latest_manifest(d: Path) -> Path:
    # LanceDB's v2 manifest names count down: the smallest number is the latest version
    return min((d / "chunks.lance" / "_versions").glob("*.manifest"), key=lambda p: int(p.stem))


_DAMAGE: dict[str, Any] = {
    "truncated data file": lambda d: [_trunc(p, 100) for p in _files(d, "chunks.lance/data")],
    "half a data file": lambda d: [_trunc(p, p.stat().st_size // 2) for p in _files(d, "chunks.lance/data")],
    "deleted data file": lambda d: [p.unlink() for p in _files(d, "chunks.lance/data")],
    "truncated manifest": lambda d: _trunc(_latest_manifest(d), 10),
    "garbage manifest": lambda d: (d / "chunks.lance/_versions/18446744073709551000.manifest").write_bytes(
        os.urandom(300)
    ),
    "every manifest deleted": lambda d: [
        p.unlink() for p in _files(d, "chunks.lance/_versions", "*.manifest")
    ],
    "deleted index files": lambda d: [p.unlink() for p in _files(d, "chunks.lance/_indices")],
    "truncated index files": lambda d: [_trunc(p, 10) for p in _files(d, "chunks.lance/_indices")],
    "table folder emptied": lambda d: (shutil.rmtree(d / "chunks.lance"), (d / "chunks.lance").mkdir()),
    "table folder is a file": lambda d: (
        shutil.rmtree(d / "chunks.lance"),
        (d / "chunks.lance").write_text("x"),
    ),
    "ingest log data deleted": lambda d: [p.unlink() for p in _files(d, "ingest_log.lance/data")],
    "ingest log manifests deleted": lambda d: [
        p.unlink() for p in _files(d, "ingest_log.lance/_versions", "*.manifest")
    ],
}

#: Damage LanceDB shrugs off: the knowledge base must then read normally.
_BENIGN: dict[str, Any] = {
    "garbage file beside the tables": lambda d: (d / "junk.bin").write_bytes(os.urandom(100)),
    "garbage file among the data": lambda d: (d / "chunks.lance/data/junk.lance").write_bytes(
        os.urandom(100)
    ),
    "latest manifest deleted (earlier version remains)": lambda d: _latest_manifest(d).unlink(),
}


def _use(path: Path) -> None:
    """Everything a notebook does with a knowledge base, in order."""
    kb = KnowledgeBase.open(path, embedder="hashing", create=False)
    len(kb)
    kb.sources()
    kb.chunks()
    for mode in ("vector", "fts", "hybrid"):
        kb.search("refund window", mode=mode)
    kb.versions()
    kb.describe()


def _assert_named(exc: BaseException, path: Path, kind: str) -> None:
    assert isinstance(exc, (KnowledgeBaseError, FileNotFoundError)), (
        f"{kind}: {type(exc).__name__} escaped: {exc}"
    )
    msg = str(exc)
    assert str(path) in msg, f"{kind}: the message does not name the knowledge base: {msg}"
    assert not msg.lower().startswith(("lance error", "table '", "not found")), f"{kind}: raw message {msg}"
    assert ".cargo/registry" not in msg, f"{kind}: a Rust source location leaked: {msg}"
    assert "/rustc/" not in msg, f"{kind}: a Rust source location leaked: {msg}"


def test_damaged_folders_give_named_errors(tmp_path: Path) -> None:
    pristine = tmp_path / "pristine"
    kb = KnowledgeBase.open(pristine, embedder="hashing")
    docs = _write(tmp_path / "docs", {"a.md": "# A\n\nThe refund window is 30 days.\n"})
    kb.ingest(docs)
    (docs / "b.md").write_text("# B\n\nRefunds go back to the card within a window of 5 days.\n")
    kb.ingest(docs)
    kb.close()
    tried = 0
    for kind, damage in _DAMAGE.items():
        d = tmp_path / kind.replace(" ", "_")
        shutil.copytree(pristine, d)
        damage(d)
        with pytest.raises(
            (KnowledgeBaseError, FileNotFoundError, RuntimeError, ValueError, OSError)
        ) as info:
            _use(d)
        _assert_named(info.value, d, kind)
        tried += 1
    for kind, damage in _BENIGN.items():
        d = tmp_path / kind.split(" (")[0].replace(" ", "_")
        shutil.copytree(pristine, d)
        damage(d)
        _use(d)
        tried += 1

    # not a knowledge base at all
    other = tmp_path / "other_db"
    import lancedb

    lancedb.connect(str(other)).create_table("vectors", [{"a": 1}])
    plain = _write(tmp_path / "plain", {"notes.txt": "hello", "data.bin": "x"})
    file_instead = tmp_path / "kb_file"
    file_instead.write_bytes(os.urandom(64))
    missing = tmp_path / "missing"
    for kind, path in [
        ("another LanceDB database", other),
        ("plain folder of files", plain),
        ("a file instead of a folder", file_instead),
        ("no folder at all", missing),
    ]:
        with pytest.raises(
            (KnowledgeBaseError, FileNotFoundError, RuntimeError, ValueError, OSError)
        ) as info:
            _use(path)
        _assert_named(info.value, path, kind)
        tried += 1
    record("storage: damage kinds", tried)


def test_bad_table_metadata_is_named(tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    tried = 0
    for kind, meta in [("not JSON", b"{oops"), ("no embedder", b"{}"), ("a list", b"[1, 2]")]:
        d = tmp_path / kind.replace(" ", "_")
        schema = pa.schema([("a", pa.int64())], metadata={b"selfrag_nb": meta})
        lancedb.connect(str(d)).create_table("chunks", pa.table({"a": [1]}, schema=schema))
        with pytest.raises(KnowledgeBaseError) as info:
            KnowledgeBase.open(d)
        _assert_named(info.value, d, kind)
        tried += 1
    record("storage: bad table metadata", tried)


# ---------------------------------------------------------------------- file://


def test_file_uri_end_to_end(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "docs",
        {"a.md": "# A\n\nAlpha refund rules.\n", "b.md": "# B\n\nBeta shipping rules.\n"},
    )
    local = tmp_path / "team kb ü"
    uri = local.as_uri()
    kb = KnowledgeBase.open(uri, embedder="hashing")
    assert kb.path == str(local)
    v1 = kb.ingest(folder).version
    first = _state(kb)
    assert kb.search("alpha refund", mode="hybrid")[0].source == "a.md"
    (folder / "a.md").write_text("# A\n\nAlpha refund rules changed to 10 days.\n")
    kb.ingest(folder)
    kb.remove("b.md")
    assert kb.sources() == ["a.md"]
    assert [v["op"] for v in kb.versions() if v["op"] != "index"][-2:] == ["ingest", "remove"]
    assert (local / LOCK_FILE).exists()  # file:// takes the same writer lock as a folder
    kb.restore(v1)
    assert _state(kb) == first
    assert kb.search("beta shipping", mode="fts")[0].source == "b.md"
    kb.close()
    tried = 0
    for again in (uri, str(local), f"file://localhost{local.as_uri()[len('file://') :]}", local):
        reopened = KnowledgeBase.open(again, create=False)
        assert _state(reopened) == first, again
        assert reopened.embedder_name == "hashing"
        assert reopened.search("alpha", mode="fts")[0].source == "a.md"
        tried += 1
    with pytest.raises(FileNotFoundError, match="no knowledge base"):
        KnowledgeBase.open((tmp_path / "nope").as_uri(), create=False)
    with pytest.raises(ValueError, match="local path"):
        KnowledgeBase.open("file://otherhost/kb")
    record("storage: file:// URI forms", tried)
