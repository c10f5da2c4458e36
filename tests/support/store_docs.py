"""Fixture documents for the store tests: a small bilingual folder with ACLs,
written fresh into each test's tmp_path (sample_data is someone else's)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from selfrag_nb.store.kb import KnowledgeBase

SECRET = "SECRET-SALARY-4242"

DOCS: dict[str, str] = {
    "refund.md": """---
title: Refund policy
version: 3
effective: 2024-01-01
product: [store, app]
---
# Refund policy

Customers can ask for a refund within 30 days of purchase. The item must be unused.

## Exceptions

Digital goods are not refundable once downloaded. Gift cards are never refundable.
""",
    "shipping.txt": "Shipping takes three to five business days. Express shipping arrives the next day.\n",
    "zh/退款.md": """---
lang: zh
---
# 退款政策

购买后三十天内可以申请退款。商品必须未使用。数字商品一旦下载不可退款。
""",
    "hr/salary.md": f"""---
title: Salary bands
roles: [hr]
tenant: acme
---
# Salary bands

The salary band for level 3 is {SECRET}. Only HR may read this.
""",
    "faq.jsonl": '{"id": "ship", "text": "How long does shipping take? Usually 3-5 business days.", "topic": "shipping"}\n'
    '{"text": "发票可以在订单页面下载。", "roles": ["staff"]}\n',
    "contact.html": "<html><head><title>Contact us</title><script>var leak = 'NOPE';</script>"
    "<style>.a{color:red}</style></head><body><h1>Contact</h1><p>Email support@example.com.</p>"
    "<h2>Hours</h2><p>Open 9 to 5 on weekdays.</p></body></html>",
}


def write_docs(root: Path, docs: dict[str, str] | None = None) -> Path:
    for rel, text in (docs or DOCS).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def ingested_kb(root: Path, docs: dict[str, str]) -> KnowledgeBase:
    """A hashing-embedder KnowledgeBase under ``root/kb`` holding ``docs``
    (written under ``root/docs``); every file must load."""
    import selfrag_nb as sr

    kb = sr.KnowledgeBase.open(root / "kb", embedder="hashing")
    report = kb.ingest(write_docs(root / "docs", docs))
    assert not report.skipped, report.skipped
    return kb


def lance_file_version(tail: bytes) -> tuple[int, int]:
    """(major, minor) of a Lance data file from its last 8 bytes. The Lance
    file format ends every file with the format version (two little-endian
    u16) and the magic ``LANC``; read from the bytes, not from LanceDB."""
    if len(tail) < 8 or tail[-4:] != b"LANC":
        raise ValueError(f"not a Lance file footer: {tail[-8:]!r}")
    return int.from_bytes(tail[-8:-6], "little"), int.from_bytes(tail[-6:-4], "little")
