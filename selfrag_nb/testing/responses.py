"""What the loopback server answers: deterministic, offline, no model.

    chat body --infer_role--> role     response_format schema name, else prompt keywords,
                                       else "generate"
              --default_responder--> content
                                       structured roles: valid JSON for the happy path
                                       (retrieve, relevant, answer, accept)
                                       "generate": a short sentence, cited when [1] is shown
    text      --embedding_vector--> unit vector from sha256(text)   (equal texts, equal vectors)
    query, document --rerank_score--> share of the query's words in the document (0..1)
    count_tokens / message_text        the usage numbers the server reports

Kept apart from the server so a custom responder (``LoopbackServer.reply``)
can reuse ``infer_role`` and fall back to ``default_responder``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

__all__ = [
    "count_tokens",
    "default_responder",
    "embedding_vector",
    "infer_role",
    "message_text",
    "rerank_score",
]

_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def count_tokens(text: str) -> int:
    # A word count, not a tokenizer: deterministic and good enough to check
    # that usage flows through from the HTTP body to the trace.
    return len(_words(text))


def message_text(body: dict[str, Any]) -> str:
    parts: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # OpenAI content parts
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(parts)


# JSON schema names sent as response_format -> role (LiteLLMModel names the
# schema after the output class); prompt keywords are the fallback.
_SCHEMA_ROLES = {
    "DecisionOut": "decide",
    "RewriteOut": "rewrite",
    "RelevanceOut": "grade",
    "RerankOut": "rerank",
    "AssessOut": "assess",
    "GenerateOut": "generate",
    "SupportOut": "verify",
    "UsefulnessOut": "usefulness",
}
# Checked in order: the most specific field names first.
_KEYWORD_ROLES = (
    ("yes | partly | no", "usefulness"),
    ("supportedclaims", "verify"),
    ("relevancescore", "grade"),
    ("no_retrieve", "decide"),
    ("rewrites", "rewrite"),
    ('"ranking"', "rerank"),
    ("clarify", "assess"),
)


def infer_role(body: dict[str, Any]) -> str:
    """Which Self-RAG role a chat request plays: from the ``response_format``
    schema name when sent, else from the field names its prompt asks for;
    "generate" when nothing matches (free text)."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        schema = fmt.get("json_schema")
        if isinstance(schema, dict) and schema.get("name") in _SCHEMA_ROLES:
            return _SCHEMA_ROLES[str(schema["name"])]
    text = message_text(body).lower()
    for keyword, role in _KEYWORD_ROLES:
        if keyword in text:
            return role
    return "generate"


def default_responder(body: dict[str, Any]) -> str:
    """A deterministic assistant: valid JSON for the structured roles, a short
    cited sentence for "generate". Retrieves, finds documents relevant,
    answers, and accepts: the happy path, so a pipeline runs end to end over
    HTTP. Use ``LoopbackServer.reply`` for anything else."""
    role = infer_role(body)
    if role == "decide":
        out: dict[str, Any] = {"decision": "RETRIEVE", "reason": "loopback: factual question, retrieve"}
    elif role == "rewrite":
        out = {"rewrites": [], "reason": "loopback: the question is already specific"}
    elif role == "grade":
        out = {"relevanceScore": 85, "isRelevant": True, "keyInfo": "loopback: relevant", "gaps": ""}
    elif role == "rerank":
        out = {"ranking": []}
    elif role == "assess":
        out = {"action": "ANSWER", "reason": "loopback: the documents cover the question"}
    elif role == "verify":
        out = {
            "isFullySupported": True,
            "supportedClaims": ["loopback answer"],
            "unsupportedClaims": [],
            "claims": [],
            "overallConfidence": 90,
            "recommendation": "ACCEPT",
        }
    elif role == "usefulness":
        out = {
            "verdict": "yes",
            "score": 90,
            "missing": "",
            "reason": "loopback: the answer addresses the question",
        }
    else:
        cite = " [1]" if "[1]" in message_text(body) else ""
        return f"This is the loopback server's answer{cite}."
    return json.dumps(out)


def embedding_vector(text: str, dimensions: int = 16) -> list[float]:
    """The loopback server's embedding of ``text``: unit-length, derived from
    sha256 of the text, so equal texts embed equally in every run."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    raw = [(digest[i % len(digest)] - 127.5) / 127.5 for i in range(dimensions)]
    norm = math.sqrt(sum(v * v for v in raw)) or 1.0
    return [v / norm for v in raw]


def rerank_score(query: str, document: str) -> float:
    """Share of the query's words found in the document (0..1)."""
    q = set(_words(query))
    if not q:
        return 0.0
    return round(len(q & set(_words(document))) / len(q), 6)
