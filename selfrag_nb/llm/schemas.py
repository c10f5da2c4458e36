"""Structured inputs and outputs of every model role.

Each role has an *inputs* model (what the stage hands the model: the offline
model reads these, never the prompt text) and an *output* model (what the
model must answer, in the camelCase JSON field names the prompts ask for).

    role       inputs             output            fields
    decide     DecideInputs   ->  DecisionOut       RETRIEVE|NO_RETRIEVE + reason
    rewrite    RewriteInputs  ->  RewriteOut        bounded rewrites
    grade      GradeInputs    ->  RelevanceOut      relevanceScore/isRelevant/keyInfo/gaps
    rerank     RerankInputs   ->  RerankOut         [{index, score, reason}]
    assess     AssessInputs   ->  AssessOut         ANSWER | CLARIFY | REFUSE
    generate   GenerateInputs ->  GenerateOut       answer text with [n] citations
    verify     VerifyInputs   ->  SupportOut        supportedClaims/unsupportedClaims/
                                                    overallConfidence/recommendation
    usefulness UsefulnessInputs -> UsefulnessOut    yes|partly|no, 0-100, what is missing

``CONSERVATIVE_DEFAULTS`` is what a role yields when the model's output cannot
be parsed even after one repair: never "relevant", never ACCEPT.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from selfrag_nb.flow import ROLES as FLOW_ROLES

__all__ = [
    "CONSERVATIVE_DEFAULTS",
    "INPUTS",
    "OUTPUTS",
    "ROLES",
    "AssessInputs",
    "AssessOut",
    "ClaimVerdict",
    "DecideInputs",
    "DecisionOut",
    "Evidence",
    "EvidenceQuote",
    "GenerateInputs",
    "GenerateOut",
    "GradeInputs",
    "Message",
    "RankedItem",
    "RelevanceOut",
    "RerankInputs",
    "RerankOut",
    "RewriteInputs",
    "RewriteOut",
    "Role",
    "SupportOut",
    "UsefulnessInputs",
    "UsefulnessOut",
    "VerifyInputs",
]

Role = Literal["decide", "rewrite", "grade", "rerank", "assess", "generate", "verify", "usefulness"]
#: The roles in flow order (selfrag_nb.flow); the Literal above spells them for
#: type checkers and a test pins the two together.
ROLES: tuple[Role, ...] = cast("tuple[Role, ...]", FLOW_ROLES)

Verdict = Literal["supported", "partial", "unsupported"]
Recommendation = Literal["ACCEPT", "ADD_DISCLAIMER", "REGENERATE"]


class _In(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Out(BaseModel):
    # Models add fields we did not ask for; keep them rather than fail.
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class Message(_In):
    """One chat turn: role is "user", "assistant" or "system"."""

    role: str
    content: str


class Evidence(_In):
    """One chunk as shown to a model: ``index`` is the 1-based [n] used in
    prompts and citations."""

    index: int
    chunk_id: str
    source: str
    title: str = ""
    heading: str = ""
    text: str
    relevance: int | None = None
    key_info: str = ""
    #: What the grader found this chunk lacks for the question (assess reads it).
    gaps: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


# ----------------------------------------------------------------- inputs


class DecideInputs(_In):
    question: str
    history: list[Message] = Field(default_factory=list)
    summary: str = ""
    language: str = "en"


class RewriteInputs(_In):
    question: str
    history: list[Message] = Field(default_factory=list)
    protected: list[str] = Field(default_factory=list)
    max_rewrites: int = 2
    language: str = "en"


class GradeInputs(_In):
    question: str
    text: str
    title: str = ""
    heading: str = ""
    source: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    language: str = "en"


class RerankInputs(_In):
    query: str
    candidates: list[str]


class AssessInputs(_In):
    question: str
    evidence: list[Evidence] = Field(default_factory=list)
    history: list[Message] = Field(default_factory=list)
    language: str = "en"


class GenerateInputs(_In):
    question: str
    evidence: list[Evidence] = Field(default_factory=list)
    history: list[Message] = Field(default_factory=list)
    #: "grounded" (answer from evidence), "strict" (the Self-RAG design's
    #: regeneration prompt), "direct" (no retrieval was needed).
    mode: Literal["grounded", "strict", "direct"] = "grounded"
    #: Set on a strict regeneration: claims the verifier found unsupported.
    avoid: list[str] = Field(default_factory=list)
    #: Set on a strict regeneration after the usefulness check: what the
    #: question asks that the previous answer did not give.
    missing: str = ""
    language: str = "en"


class VerifyInputs(_In):
    question: str
    answer: str
    evidence: list[Evidence] = Field(default_factory=list)
    language: str = "en"


class UsefulnessInputs(_In):
    """Only the question and the answer: usefulness is judged without the
    documents (whether the answer is supported is verify's job)."""

    question: str
    answer: str
    history: list[Message] = Field(default_factory=list)
    language: str = "en"


# ---------------------------------------------------------------- outputs


class DecisionOut(_Out):
    decision: Literal["RETRIEVE", "NO_RETRIEVE"]
    reason: str = ""


class RewriteOut(_Out):
    rewrites: list[str] = Field(default_factory=list)
    reason: str = ""


class RelevanceOut(_Out):
    relevanceScore: int = Field(ge=0, le=100)  # noqa: N815 - the prompts' JSON field name
    isRelevant: bool  # noqa: N815 - the prompts' JSON field name
    keyInfo: str = ""  # noqa: N815 - the prompts' JSON field name
    gaps: str = ""


class RankedItem(_Out):
    index: int
    score: float
    # Optional: why the item sits where it does (the views show it per item;
    # a model that gives none is ranked the same).
    reason: str = ""


class RerankOut(_Out):
    ranking: list[RankedItem] = Field(default_factory=list)


class AssessOut(_Out):
    action: Literal["ANSWER", "CLARIFY", "REFUSE"]
    reason: str = ""
    #: For CLARIFY: the qualifiers the documents distinguish (products, plans, versions).
    options: list[str] = Field(default_factory=list)
    #: For conflicting evidence: what conflicts, and which applies if the documents say so.
    conflict: str = ""
    applies: str = ""


class GenerateOut(_Out):
    answer: str


class EvidenceQuote(_Out):
    doc: int
    quote: str = ""


class ClaimVerdict(_Out):
    claim: str
    verdict: Verdict
    evidence: list[EvidenceQuote] = Field(default_factory=list)
    cited: list[int] = Field(default_factory=list)


class SupportOut(_Out):
    isFullySupported: bool = False  # noqa: N815 - the prompts' JSON field name
    supportedClaims: list[str] = Field(default_factory=list)  # noqa: N815 - the prompts' JSON field name
    unsupportedClaims: list[str] = Field(default_factory=list)  # noqa: N815 - the prompts' JSON field name
    claims: list[ClaimVerdict] = Field(default_factory=list)
    overallConfidence: int = Field(default=0, ge=0, le=100)  # noqa: N815 - the prompts' JSON field name
    recommendation: Recommendation = "REGENERATE"


class UsefulnessOut(_Out):
    verdict: Literal["yes", "partly", "no"]
    score: int = Field(ge=0, le=100)
    missing: str = ""
    reason: str = ""


INPUTS: dict[Role, type[BaseModel]] = {
    "decide": DecideInputs,
    "rewrite": RewriteInputs,
    "grade": GradeInputs,
    "rerank": RerankInputs,
    "assess": AssessInputs,
    "generate": GenerateInputs,
    "verify": VerifyInputs,
    "usefulness": UsefulnessInputs,
}

OUTPUTS: dict[Role, type[BaseModel]] = {
    "decide": DecisionOut,
    "rewrite": RewriteOut,
    "grade": RelevanceOut,
    "rerank": RerankOut,
    "assess": AssessOut,
    "generate": GenerateOut,
    "verify": SupportOut,
    "usefulness": UsefulnessOut,
}

#: What each role yields when its output cannot be parsed (after one repair).
#: Conservative: retrieve rather than guess, nothing is relevant, no rerank
#: (the stage keeps the previous order), answerability unknown -> refuse,
#: verification unknown -> not ACCEPT, usefulness unknown -> not an answer.
CONSERVATIVE_DEFAULTS: dict[Role, BaseModel] = {
    "decide": DecisionOut(decision="RETRIEVE", reason="unparsed model output: retrieving to be safe"),
    "rewrite": RewriteOut(rewrites=[], reason="unparsed model output: original question only"),
    "grade": RelevanceOut(relevanceScore=0, isRelevant=False, keyInfo="", gaps="unparsed model output"),
    "rerank": RerankOut(ranking=[]),
    "assess": AssessOut(
        action="REFUSE", reason="unparsed model output: answerability could not be confirmed"
    ),
    "generate": GenerateOut(answer=""),
    "verify": SupportOut(isFullySupported=False, overallConfidence=0, recommendation="REGENERATE"),
    "usefulness": UsefulnessOut(
        verdict="no", score=0, reason="unparsed model output: whether the answer answers could not be judged"
    ),
}
