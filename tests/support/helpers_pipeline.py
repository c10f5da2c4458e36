"""Scripted-model recipes shared by the pipeline tests (not a test module)."""

from __future__ import annotations

from typing import Any

#: The fixture knowledge base of the pipeline tests (one restricted document).
DOCS = {
    "refunds.md": (
        "---\ntitle: Refund policy\n---\n# Refund policy\n\n"
        "Customers can request a full refund within 30 days of purchase. "
        "Refunds are paid back to the original payment method within 5 business days.\n"
    ),
    "plans.md": (
        "---\ntitle: Plans\n---\n# Plans\n\n"
        "The Free plan allows 3 projects. The Pro plan costs $12 per user per month and allows "
        "unlimited projects. The Enterprise plan adds SSO and a 99.9% uptime SLA.\n"
    ),
    "export.md": (
        "---\ntitle: Export formats\n---\n# Export formats\n\n"
        "Version 2.3 exports CSV, JSON and PDF. Excel files (XLSX) are not supported for export.\n"
    ),
    "shipping.md": (
        "---\ntitle: Shipping\n---\n# Shipping\n\n"
        "Orders ship within 2 business days. Tracking numbers are emailed when the order leaves the warehouse.\n"
    ),
    "secret.md": (
        "---\ntitle: Merger plan\nroles: [board]\n---\n# Merger plan\n\n"
        "Project Bluefin: the refund budget will be cut to 10 days after the merger with Zentrix.\n"
    ),
}
SECRET = "Bluefin"


def grade_by_words(*words: str, high: int = 90, low: int = 10) -> Any:
    """A scripted grader: relevant when the chunk mentions any of ``words``."""

    def respond(request: Any) -> dict[str, Any]:
        text = request.inputs.text.lower()
        hit = any(w.lower() in text for w in words)
        return {
            "relevanceScore": high if hit else low,
            "isRelevant": hit,
            "keyInfo": text[:40] if hit else "",
            "gaps": "",
        }

    return respond


def verdict(
    claims: list[tuple[str, str, int, str]], recommendation: str, confidence: int = 90
) -> dict[str, Any]:
    """A verify response from (claim, verdict, doc, quote) tuples; doc 0 = no evidence, no citation."""
    return {
        "isFullySupported": all(v == "supported" for _, v, _, _ in claims),
        "supportedClaims": [c for c, v, _, _ in claims if v == "supported"],
        "unsupportedClaims": [c for c, v, _, _ in claims if v == "unsupported"],
        "claims": [
            {
                "claim": c,
                "verdict": v,
                "evidence": [{"doc": d, "quote": q}] if d and v != "unsupported" else [],
                "cited": [d] if d else [],
            }
            for c, v, d, q in claims
        ],
        "overallConfidence": confidence,
        "recommendation": recommendation,
    }


REFUND_ANSWER = "Customers can request a full refund within 30 days of purchase [1]."
REFUND_CLAIM = "Customers can request a full refund within 30 days of purchase"
REFUND_QUOTE = "full refund within 30 days of purchase"


#: A refund answer with one supported and one unsupported claim, which verify
#: keeps sending back: after the regenerations, the unsupported one is dropped.
MIXED_ANSWER = REFUND_ANSWER.removesuffix(" [1].") + " [1]. Refunds include shipping costs."


def script_mixed(scripted: Any) -> None:
    """The refund question with MIXED_ANSWER, verify asking to regenerate each time."""
    mixed = verdict(
        [
            (REFUND_CLAIM, "supported", 1, REFUND_QUOTE),
            ("Refunds include shipping costs", "unsupported", 0, ""),
        ],
        "REGENERATE",
        40,
    )
    script_refund(scripted, verify=mixed, answer=MIXED_ANSWER)


#: The usefulness judge's "yes" (tests about other stages script it so).
USEFUL_YES = {"verdict": "yes", "score": 90, "missing": "", "reason": "scripted: it answers the question"}


def script_refund(scripted: Any, *, verify: Any = None, answer: str = REFUND_ANSWER) -> None:
    """Everything a grounded refund question needs."""
    scripted.default("decide", {"decision": "RETRIEVE", "reason": "policy question"})
    scripted.default("rewrite", {"rewrites": []})
    scripted.default("grade", grade_by_words("refund"))
    scripted.default("rerank", {"ranking": [{"index": 0, "score": 1.0}]})
    scripted.default("assess", {"action": "ANSWER", "reason": "the refund policy covers it"})
    scripted.default("generate", {"answer": answer})
    scripted.default(
        "verify", verify or verdict([(REFUND_CLAIM, "supported", 1, REFUND_QUOTE)], "ACCEPT", 95)
    )
    scripted.default("usefulness", USEFUL_YES)
