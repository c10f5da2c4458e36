"""The sample documents the cross-lingual store tests search (fp32 and int8 alike).

XLING_DOCS        the six Chinese documents + the English ones the cross-lingual
                  questions ask about, with a few more English ones around them
copy_sample(rels, dst) -> dst    those files copied (sample_data is read-only here)
sample_questions()               every sample question, as the JSON objects on disk
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "docs"
QUESTIONS = ROOT / "sample_data" / "questions.jsonl"
ENGLISH = [
    "security/sso.md",
    "security/security-overview.md",
    "api/webhooks.md",
    "api/rate-limits.md",
    "policies/data-retention.md",
    "policies/sla.md",
    "billing/payment-methods.md",
    "product/add-ons.md",
    "product/recurring-invoices.md",
    "support/support-handbook.md",
    "company/about.md",
]
XLING_DOCS = [*sorted(str(p.relative_to(SAMPLE)) for p in (SAMPLE / "zh").glob("*.md")), *ENGLISH]


def copy_sample(rels: list[str], dst: Path) -> Path:
    for rel in rels:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLE / rel, dst / rel)
    return dst


def sample_questions() -> list[dict[str, Any]]:
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
