"""The knowledge base on a real S3 API: moto_server on loopback (not AWS).

One moto server per module; each test uses its own prefix in one bucket."""

from __future__ import annotations

import json
import logging
import multiprocessing as mp
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from moto_support import ingest_at_barrier, moto_s3
from store_docs import SECRET, lance_file_version, write_docs

import selfrag_nb as sr
from selfrag_nb.errors import InputError, InputTypeError, KnowledgeBaseError
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.store.kb_core import _cause, register_secrets

pytest.importorskip("moto.server", reason="moto[server] is not installed (pip install 'moto[server]')")

BUCKET = "selfrag-nb-test"
KEY_ID = "AKIDSELFRAGTEST0001"
SECRET_KEY = "s3cr3t-VALUE-never-shown-0001"


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """storage_options of a moto S3 server on a free loopback port, bucket created."""
    with moto_s3(BUCKET, KEY_ID, SECRET_KEY) as options:
        yield options


def _hits(kb: KnowledgeBase, user: Any = None) -> dict[str, list[str]]:
    return {
        mode: [h.chunk_id for h in kb.search("salary band refund", k=10, mode=mode, user=user)]
        for mode in ("vector", "fts", "hybrid")
    }


def _lance_versions(s3: dict[str, str], prefix: str) -> set[tuple[int, int]]:
    """Lance file format versions of the data files under ``prefix``: the
    bucket listed and each file's last 8 bytes read over the S3 API."""
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=s3["aws_endpoint"],
        region_name=s3["aws_region"],
        aws_access_key_id=s3["aws_access_key_id"],
        aws_secret_access_key=s3["aws_secret_access_key"],
    )
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)["Contents"]]
    assert keys
    return {
        lance_file_version(client.get_object(Bucket=BUCKET, Key=key, Range="bytes=-8")["Body"].read())
        for key in keys
    }


_REOPEN = """
import json, sys
import selfrag_nb as sr
from selfrag_nb.store.kb import KnowledgeBase
uri, options = sys.argv[1], json.loads(sys.stdin.read())
kb = KnowledgeBase.open(uri, storage_options=options, create=False)
print(json.dumps({m: [h.chunk_id for h in kb.search("salary band refund", k=10, mode=m, user=sr.User("hana", roles=["hr"], tenant="acme"))]
                  for m in ("vector", "fts", "hybrid")}))
"""


@pytest.mark.slow
def test_s3_end_to_end(
    s3: dict[str, str], tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    uri = f"s3://{BUCKET}/e2e"
    docs = write_docs(tmp_path / "docs")
    kb = KnowledgeBase.open(uri, embedder="hashing", storage_options=s3)
    first = kb.ingest(docs)
    assert first.chunks_added > 0
    assert not first.skipped
    hr = sr.User("hana", roles=["hr"], tenant="acme")
    for mode in ("vector", "fts", "hybrid"):
        assert any(SECRET in h.text for h in kb.search("salary band", k=10, mode=mode, user=hr)), mode
        assert not any(SECRET in h.text for h in kb.search("salary band", k=10, mode=mode)), mode
    hits = _hits(kb, hr)
    assert all(hits.values())

    again = kb.ingest(docs)  # re-ingest: nothing changes
    assert again.chunks_added == 0
    assert again.chunks_removed == 0
    assert len(again.unchanged) == len(first.added)
    n = len(kb)
    assert len({h.chunk_id for h in kb.chunks()}) == n

    v_before = kb.version
    (docs / "refund.md").write_text("# Refund policy\n\nNo refunds at all.\n", encoding="utf-8")
    assert kb.ingest(docs).updated == ["refund.md"]
    assert "No refunds at all." in " ".join(h.text for h in kb.chunks())
    listed = kb.versions()
    assert [v["version"] for v in listed] == sorted(v["version"] for v in listed)
    assert any(v.get("op") == "ingest" for v in listed)
    kb.restore(v_before)
    assert "No refunds at all." not in " ".join(h.text for h in kb.chunks())
    assert _hits(kb, hr) == hits  # full-text index answers after restore too

    # a second process opens the same bucket and sees the same hits
    out = subprocess.run(
        [sys.executable, "-c", _REOPEN, uri],
        input=json.dumps(s3),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == hits

    shown = " ".join([repr(kb), json.dumps(kb.describe()), caplog.text, *capfd.readouterr()])
    assert SECRET_KEY not in shown
    assert KEY_ID not in shown
    # the table was created in Lance format 2.1 on object storage too, read
    # from the files' footers (after the log check: boto3 logs its own key id)
    assert _lance_versions(s3, "e2e/chunks.lance/data/") == {(2, 1)}
    kb.close()


def test_storage_options_validated(s3: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(InputTypeError, match="storage_options must be a dict"):
        KnowledgeBase.open(f"s3://{BUCKET}/v", embedder="hashing", storage_options=[("a", "b")])  # type: ignore[arg-type]
    with pytest.raises(InputTypeError, match=r"storage_options\['allow_http'\] must be a str") as err:
        KnowledgeBase.open(f"s3://{BUCKET}/v", embedder="hashing", storage_options={**s3, "allow_http": True})  # type: ignore[dict-item]
    assert SECRET_KEY not in str(err.value)
    with pytest.raises(InputTypeError, match="keys must be non-blank strings"):
        KnowledgeBase.open(f"s3://{BUCKET}/v", embedder="hashing", storage_options={1: "x"})  # type: ignore[dict-item]
    with pytest.raises(InputError, match="not to the local folder"):
        KnowledgeBase.open(tmp_path / "kb", embedder="hashing", storage_options={"aws_region": "us-east-1"})
    with pytest.raises(InputError, match="db:// URI"):
        KnowledgeBase.open("db://some-db", embedder="hashing", storage_options={"aws_region": "x"})
    assert not (tmp_path / "kb").exists()


@pytest.mark.slow  # the unreachable endpoint is retried for ~5 s
def test_secrets_scrubbed_from_wrapped_errors(s3: dict[str, str]) -> None:
    register_secrets(s3)
    assert SECRET_KEY not in _cause(RuntimeError(f"auth failed for {KEY_ID}:{SECRET_KEY}"))
    assert "us-east-1" in _cause(RuntimeError("region us-east-1"))  # only secret values are scrubbed
    bad = {**s3, "aws_endpoint": "http://127.0.0.1:1"}  # nothing listens there
    with pytest.raises(KnowledgeBaseError) as err:
        KnowledgeBase.open(f"s3://{BUCKET}/nowhere", embedder="hashing", storage_options=bad)
    assert SECRET_KEY not in str(err.value)
    assert KEY_ID not in str(err.value)


@pytest.mark.slow
@pytest.mark.parametrize("seeded", [True, False], ids=["existing-table", "first-write"])
def test_two_writers_race_fails_loudly(s3: dict[str, str], tmp_path: Path, seeded: bool) -> None:
    """No lock on object storage: two processes ingest the same new sources at
    once. Measured with lance 0.40 + moto: on an existing table both
    merge_inserts land and every chunk is stored twice, so both writers must
    should raise (naming the race) rather than report success; at least the last
    one does. On the first write the loser merges into the winner's table
    (test_store_s3_first_writers.py checks both land); at most one may fail,
    and an undo must never drop the table the other writer made (it used to:
    the table was left damaged)."""
    uri = f"s3://{BUCKET}/race-{'seeded' if seeded else 'fresh'}"
    if seeded:
        seed = write_docs(tmp_path / "seed", {"seed.md": "# Seed\n\nSeed text.\n"})
        KnowledgeBase.open(uri, embedder="hashing", storage_options=s3).ingest(seed)
    folder = write_docs(
        tmp_path / "shared", {f"d{j}.md": f"# Doc {j}\n\nText of doc {j}.\n" for j in range(4)}
    )
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(2)
        with ctx.Pool(2) as pool:
            results = pool.starmap(ingest_at_barrier, [(uri, s3, str(folder), barrier)] * 2)
    kb = KnowledgeBase.open(uri, embedder="hashing", storage_options=s3)
    counts = Counter(h.chunk_id for h in kb.chunks())  # readable: nothing was dropped or damaged
    dupes = sum(n - 1 for n in counts.values() if n > 1)
    errors = [r for r in results if r.startswith("error")]
    print(f"race seeded={seeded}: {results}; rows={sum(counts.values())} duplicates={dupes}")
    if dupes:
        # the writer that commits last always sees the duplicates; the other one too
        # when its check runs after both commits
        assert errors, results
        assert all("same time" in e and "one writer at a time" in e for e in errors)
    else:
        assert len(errors) <= 1, results  # first write: LanceDB refuses the second create_table
    assert len(set(kb.sources()) & {f"d{j}.md" for j in range(4)}) == 4
    for r in results:
        assert SECRET_KEY not in r
