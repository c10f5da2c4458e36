"""What a stored row means is versioned: ``store.prepare.FORMAT`` is part of
every source's content hash, so when it changes each source is re-written on
its next ingest, and an ingest of unchanged files never leaves chunks cut by
an older chunker in place (docs/architecture.md, on chunking).

The rule this guards: a change to what the chunker produces comes with a new
FORMAT. The chunker's output over the repository's own documents (the bundled
sample and the third-party corpus: Markdown, reStructuredText, plain text,
HTML) is fingerprinted and pinned to the FORMAT it was made under, so a
chunking change without a bump fails here instead of leaving stale chunks in
every existing knowledge base.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from selfrag_nb.store.chunking import iter_chunks
from selfrag_nb.store.loaders import load_tree
from selfrag_nb.store.prepare import FORMAT

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("sample_data/docs", "benchmarks/thirdparty/docs")
#: (FORMAT, chunks, fingerprint) of the chunker's output over FOLDERS at 800 characters.
PINNED = (4, 4003, "2580a73f964af92b")


def _fingerprint() -> tuple[int, str]:
    digest = hashlib.sha256()
    n = 0
    for folder in FOLDERS:
        docs, skipped = load_tree(ROOT / folder)
        assert not skipped, skipped
        for doc in sorted(docs, key=lambda d: d.source):
            for chunk in iter_chunks(doc.text, headings=doc.heading_style, max_chars=800):
                digest.update(f"{doc.source}\0{chunk.heading}\0{chunk.text}\0".encode())
                n += 1
    return n, digest.hexdigest()[:16]


def test_the_chunkers_output_is_pinned_to_the_stored_format() -> None:
    n, fingerprint = _fingerprint()
    assert (FORMAT, n, fingerprint) == PINNED, (
        f"the chunker's output is ({n}, {fingerprint!r}) under FORMAT {FORMAT}, pinned {PINNED}: a change "
        "to what the chunker produces needs a new selfrag_nb.store.prepare.FORMAT (so stored sources "
        "are re-written on their next ingest), then PINNED = (that FORMAT, chunks, fingerprint)"
    )
