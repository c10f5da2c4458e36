"""The deterministic offline model: every role answered by rules, no network.

    ModelRequest(role, inputs, ...)          the prompt text is never read
      -> OfflineModel.complete
           role      reads            rule (offline_rules / offline_answer)
           decide    DecideInputs     small talk / arithmetic -> NO_RETRIEVE, else RETRIEVE
           rewrite   RewriteInputs    resolve "it"/"它" from history, keep protected spans
           grade     GradeInputs      weighted term coverage + exact IDs/versions/numbers
           rerank    RerankInputs     BM25 over the candidate set + exact matches
           assess    AssessInputs     ANSWER / CLARIFY (qualifiers) / REFUSE (no cover, conflict)
           generate  GenerateInputs   extractive sentences cited [n]; direct small talk, arithmetic
           verify    VerifyInputs     claim x evidence-sentence overlap + number/ID agreement
      -> Completion(raw = JSON of schemas.OUTPUTS[role], tokens estimated, cost 0.0)

It is the default model when nothing is configured, and a credible baseline:
the heuristics (stopwords, weights, saturation, caps, verdict thresholds) are
documented in one place, ``docs/offline_model.md``. Same inputs -> same raw
output, byte for byte (only ``latency_ms`` varies). Token counts are an
estimate: ``selfrag_nb.text.tokenize`` tokens of the inputs' and the output's
text, not any provider's tokenizer.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from selfrag_nb.llm.base import Completion, ModelRequest
from selfrag_nb.llm.offline_answer import assess, generate, verify
from selfrag_nb.llm.offline_rules import (
    SYNONYMS,
    arithmetic,
    bag,
    best_sentence,
    coverage,
    entities,
    exact_terms,
    looks_like_injection,
    sentences,
    shorten,
    social_kind,
    stem,
    terms,
)
from selfrag_nb.llm.schemas import (
    INPUTS,
    DecideInputs,
    DecisionOut,
    GradeInputs,
    Message,
    RankedItem,
    RelevanceOut,
    RerankInputs,
    RerankOut,
    RewriteInputs,
    RewriteOut,
)
from selfrag_nb.text import detect_language, normalize_key, tokenize

__all__ = ["OfflineModel", "decide", "grade", "is_follow_up", "rerank", "rewrite"]


class OfflineModel:
    """A ``Model`` that answers from the stage's structured inputs with
    deterministic rules. Free (cost 0.0), offline, no key."""

    name = "offline"
    offline = True

    def complete(self, request: ModelRequest) -> Completion:
        """Answer one request; ``raw`` is the JSON of the role's output schema."""
        start = time.perf_counter()
        expected = INPUTS[request.role]
        if not isinstance(request.inputs, expected):
            raise TypeError(
                f"offline model: role {request.role!r} needs {expected.__name__} inputs, "
                f"got {type(request.inputs).__name__}"
            )
        out = _ROLES[request.role](request.inputs)
        raw = out.model_dump_json()
        return Completion(
            raw=raw,
            model=self.name,
            tokens_in=_count_tokens(request.inputs.model_dump()),
            tokens_out=_count_tokens(out.model_dump()),
            cost=0.0,
            latency_ms=(time.perf_counter() - start) * 1000.0,
            offline=True,
        )

    async def acomplete(self, request: ModelRequest) -> Completion:
        """Same as ``complete``: the rules are CPU-bound and take milliseconds,
        so there is nothing to await."""
        return self.complete(request)

    def __repr__(self) -> str:
        return "OfflineModel()"


def _count_tokens(value: Any) -> int:
    """Estimated tokens: tokenize() tokens of every string (and number) inside."""
    if isinstance(value, str):
        return len(tokenize(value))
    if isinstance(value, dict):
        return sum(_count_tokens(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_count_tokens(v) for v in value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return 1
    return 0


# ------------------------------------------------------------------ decide

_FACT_WORDS_EN = re.compile(
    r"\b(refunds?|polic(?:y|ies)|price|pricing|cost|costs|fees?|plans?|tiers?|limits?|quotas?|rate|"
    r"api|apis|endpoints?|sdk|versions?|release|errors?|codes?|orders?|invoices?|billing|account|"
    r"subscriptions?|support(?:s|ed)?|formats?|export|import|configure|settings?|install|setup|"
    r"enable|disable|process|procedure|steps?|deadline|window|sla|uptime|security|sso|password|"
    r"data|retention|delete|cancel|upgrade|downgrade|trial|discount|contract|warranty|shipping|"
    r"return|integrations?|features?|documentation|docs|requirements?|compliance|gdpr)\b",
    re.IGNORECASE,
)
_FACT_WORDS_ZH = re.compile(
    r"政策|退款|价格|费用|收费|套餐|计划|限制|额度|配额|流程|步骤|如何|怎么|怎样|版本|接口|错误|订单|发票|账单|账户|账号|"
    r"订阅|支持|格式|导出|导入|配置|设置|安装|开通|启用|关闭|期限|时间|多久|多少|哪些|哪个|规定|条款|合同|保修|"
    r"退货|发货|集成|功能|文档|要求|合规|安全|密码|数据|删除|取消|升级|降级|试用|折扣"
)
_HOW_TO_RE = re.compile(r"\bhow (?:do|can|to|does|should|long|many|much)\b|如何|怎么|怎样", re.IGNORECASE)
_QUESTION_RE = re.compile(
    r"\?|？|^(?:what|how|why|when|where|which|who|is|are|can|does|do|should|could|will)\b|吗|什么|为什么|是否|呢",
    re.IGNORECASE,
)
_REF_EN_RE = re.compile(r"\b(it|its|it's|they|them|their|this|that|these|those|the same)\b", re.IGNORECASE)
_REF_ZH_RE = re.compile(r"它们|它|这个|那个|该|其|此|这些|那些")
_ELLIPSIS_EN_RE = re.compile(
    r"^\s*(?:and|what about|how about|and what about|same for|what of|also|and also)\b[\s,]*", re.IGNORECASE
)
_ELLIPSIS_ZH_RE = re.compile(r"^\s*(?:那么|那|还有|另外|以及)[\s,，]*")

_SOCIAL_REASONS = {
    "greeting": ("A greeting needs no documents.", "问候语，不需要查阅文档。"),
    "thanks": ("Thanks need no documents.", "致谢，不需要查阅文档。"),
    "farewell": ("A farewell needs no documents.", "告别语，不需要查阅文档。"),
    "smalltalk": ("Small talk needs no documents.", "闲聊，不需要查阅文档。"),
    "identity": (
        "A question about the assistant itself needs no documents.",
        "关于助手本身的问题，不需要查阅文档。",
    ),
    "ack": ("An acknowledgement needs no documents.", "确认性回复，不需要查阅文档。"),
}


def is_follow_up(question: str, history: list[Message]) -> bool:
    """A question that leans on the history: a reference ("it", "that plan",
    "它") or an ellipsis ("and for the Pro plan?"), with history present."""
    if not history:
        return False
    if _REF_EN_RE.search(question) or _REF_ZH_RE.search(question):
        return True
    return bool(_ELLIPSIS_EN_RE.match(question) or _ELLIPSIS_ZH_RE.match(question))


def decide(inputs: DecideInputs) -> DecisionOut:
    """RETRIEVE or NO_RETRIEVE with a one-sentence reason in the question's language."""
    question = inputs.question.strip()
    zh = detect_language(question) == "zh"

    def out(decision: str, en: str, cn: str) -> DecisionOut:
        return DecisionOut(decision="RETRIEVE" if decision == "R" else "NO_RETRIEVE", reason=cn if zh else en)

    if not question:
        return out(
            "N", "The message is empty; there is nothing to look up.", "消息为空，没有需要查找的内容。"
        )
    kind, rest = social_kind(question)
    if kind is not None and not rest:
        en, cn = _SOCIAL_REASONS[kind]
        return out("N", en, cn)
    text = rest or question
    calc = arithmetic(text)
    if calc is not None:
        return out(
            "N",
            f"Plain arithmetic ({calc.expression}) is computed, not looked up.",
            f"简单计算（{calc.expression}），直接计算即可，不需要检索。",
        )
    if is_follow_up(text, inputs.history):
        return out(
            "R",
            "A follow-up that refers to an earlier turn; the documents about it are needed.",
            "这是承接上文的追问，需要检索相关文档。",
        )
    exact = exact_terms(text)
    if exact.ids or exact.versions:
        named = ", ".join(sorted(exact.ids | exact.versions))
        return out(
            "R",
            f"It names an identifier or version ({named}) that only the documents can confirm.",
            f"问题包含编号或版本（{named}），需要以文档为准。",
        )
    if _HOW_TO_RE.search(text):
        return out(
            "R",
            "A how-to question: the documents describe the process.",
            "这是询问操作方法的问题，需要查阅文档中的流程说明。",
        )
    fact = _FACT_WORDS_EN.search(text) or _FACT_WORDS_ZH.search(text)
    if fact:
        word = fact.group(0)
        return out(
            "R",
            f"It asks about {word.lower()}: specific facts that may change over time.",
            f"问题涉及“{word}”，属于可能随时间变化的具体信息，需要检索。",
        )
    if _QUESTION_RE.search(text):
        return out(
            "R",
            "A factual question the knowledge base may answer; retrieving rather than guessing.",
            "这是一个事实性问题，知识库可能有答案，检索比猜测更稳妥。",
        )
    return out(
        "R",
        "Not recognisably small talk or arithmetic, so retrieving to be safe.",
        "无法确定是闲聊或计算，为稳妥起见进行检索。",
    )


# ----------------------------------------------------------------- rewrite

_PRONOUN_EN: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\b(?:this|that|the same)\s+(?:plan|product|feature|api|tier|service|one|edition|version)\b",
            re.IGNORECASE,
        ),
        "{e}",
    ),
    # "Does that also apply?", "before that happens": a demonstrative standing for the earlier topic.
    (
        re.compile(
            r"\b(?:that|this)\b(?=\s+(?:also\s+|still\s+)?(?:apply|applies|work|works|include|includes|"
            r"cover|covers|happen|happens|happened|mean|means|cost|costs|require|requires|change|changes)\b)",
            re.IGNORECASE,
        ),
        "{e}",
    ),
    (re.compile(r"\bits\b", re.IGNORECASE), "{e}'s"),
    (re.compile(r"\bit's\b", re.IGNORECASE), "{e} is"),
    (re.compile(r"\bit\b", re.IGNORECASE), "{e}"),
    (re.compile(r"\b(?:they|them)\b", re.IGNORECASE), "{e}"),
    (re.compile(r"\btheir\b", re.IGNORECASE), "{e}'s"),
    (re.compile(r"\bthat(?=\s*[?.!]*\s*$)", re.IGNORECASE), "{e}"),
)
_PRONOUN_ZH: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:那么|那)?它们"), "{e}"),
    (re.compile(r"^(?:那么|那)它"), "{e}"),
    (re.compile(r"(?:这个|那个|该)(?:套餐|产品|功能|接口|版本|服务|计划)?"), "{e}"),
    (re.compile(r"它们|它"), "{e}"),
    (re.compile(r"(?<![\u4e00-\u9fff])其"), "{e}"),
)


def _history_entity(history: list[Message], question: str) -> str | None:
    """The entity a follow-up most likely refers to: the best entity of the
    latest user turn that has one, else of the latest assistant turn."""
    q = question.lower()
    for wanted in ("user", "assistant"):
        for turn in reversed(history):
            if turn.role != wanted:
                continue
            for ent in entities(turn.content):
                if ent.text.lower() not in q:
                    return ent.text
    return None


def _replace_reference(question: str, entity: str) -> str | None:
    for pat, tpl in (*_PRONOUN_EN, *_PRONOUN_ZH):
        if pat.search(question):
            # re.sub reads backslashes in a replacement as escapes: double them.
            return pat.sub(tpl.format(e=entity).replace("\\", "\\\\"), question)
    return None


def _with_protected(rewrite: str, protected: list[str]) -> str:
    """Every protected span must stay verbatim: append any the rewrite lost."""
    lost = [p for p in protected if p and p not in rewrite]
    return " ".join([rewrite, *lost]) if lost else rewrite


_ZH_TAIL_RE = re.compile(
    r"(?:是多少|是多久|是什么|有哪些|是哪些|多久|多少|什么|哪些|如何|怎么样|吗|呢|吧|[?？。!！,，\s])+$"
)
_ZH_EDGE = "的了吗呢吧啊是在和与及那这么"


def _topic_words(turn: str, drop: str) -> str:
    """What an earlier turn was about, minus its entities and what ``drop``
    already says: content words (English) or the trimmed clause (Chinese)."""
    ents = entities(turn)
    if detect_language(turn) == "zh":
        for e in ents:
            turn = turn.replace(e.text, " ")
        topic = _ZH_TAIL_RE.sub("", turn.strip()).strip(_ZH_EDGE + " ")
        return "" if not topic or topic in drop else topic
    have = set(terms(drop)) | {stem(t) for e in ents for t in tokenize(e.text)}
    words: list[str] = []
    for tok in tokenize(turn):
        key = stem(tok)
        if key in terms(tok) and key not in have and tok not in words:
            words.append(tok)
    return " ".join(words)


def rewrite(inputs: RewriteInputs) -> RewriteOut:
    """At most ``max_rewrites`` rewrites that resolve a follow-up's reference
    from the history; [] when no rewrite is useful."""
    question = inputs.question.strip()
    if inputs.max_rewrites <= 0 or not question:
        return RewriteOut(rewrites=[], reason="no rewrites allowed" if question else "empty question")
    if not inputs.history:
        return RewriteOut(rewrites=[], reason="no history: the question stands on its own")
    user_turns = [m.content for m in inputs.history if m.role == "user" and m.content.strip()]
    candidates: list[str] = []
    reasons: list[str] = []
    entity = _history_entity(inputs.history, question)

    replaced = _replace_reference(question, entity) if entity else None
    appended = ""
    if replaced is not None and entity is not None:
        candidates.append(replaced)
        reasons.append(f"resolved the reference to {entity!r} from the history")
        appended = entity
    elif (_ELLIPSIS_EN_RE.match(question) or _ELLIPSIS_ZH_RE.match(question)) and user_turns:
        # "and for the Pro plan?": the earlier question, with its entity swapped.
        previous = user_turns[-1]
        new = entities(question)
        old = entities(previous)
        appended = _topic_words(previous, question)
        if new and old and old[0].text in previous:
            candidates.append(previous.replace(old[0].text, new[0].text, 1))
            reasons.append(f"earlier question with {old[0].text!r} -> {new[0].text!r}")
        elif appended:
            stripped = _ELLIPSIS_EN_RE.sub("", _ELLIPSIS_ZH_RE.sub("", question)).strip()
            candidates.append(f"{appended} {stripped}".strip())
            reasons.append("added the earlier question's topic")
            appended = ""
    if candidates and appended:
        candidates.append(f"{question} {appended}")
        reasons.append("original question plus context from the history")

    rewrites: list[str] = []
    seen = {normalize_key(question)}
    for cand in candidates:
        kept = _with_protected(" ".join(cand.split()), inputs.protected)
        key = normalize_key(kept)
        if key and key not in seen:
            seen.add(key)
            rewrites.append(kept)
    rewrites = rewrites[: inputs.max_rewrites]
    if not rewrites:
        return RewriteOut(rewrites=[], reason="no reference to resolve: the question stands on its own")
    return RewriteOut(rewrites=rewrites, reason="; ".join(reasons[: len(rewrites)]))


# ------------------------------------------------------------------- grade

#: Score caps when the question's exact terms are missing from / contradicted by the chunk.
CAP_MISSING_EXACT = 45
CAP_CONTRADICTED = 30


def _meta_text(metadata: dict[str, Any]) -> str:
    parts: list[str] = []
    for key in sorted(metadata):
        value = metadata[key]
        values = value if isinstance(value, list) else [value]
        parts.extend(str(v) for v in values if isinstance(v, str | int | float) and not isinstance(v, bool))
    return " ".join(parts)


def _version_match(q: str, d: str) -> bool:
    return q == d or d.startswith(q + ".") or q.startswith(d + ".")


def exact_adjustment(
    question: str, doc_text: str, doc_versions: set[str] | None = None
) -> tuple[int, int, list[str]]:
    """(bonus, cap, notes) from the question's identifiers, versions and numbers
    against a document: present -> bonus; an ID or version absent -> cap below
    the relevance cutoff; a different version -> a lower cap; a number absent -> penalty."""
    q = exact_terms(question)
    d = exact_terms(doc_text)
    versions = set(d.versions) | (doc_versions or set())
    bonus, cap, notes = 0, 100, []
    for v in sorted(q.versions):
        if any(_version_match(v, dv) for dv in versions):
            bonus += 6
        elif versions:
            cap = min(cap, CAP_CONTRADICTED)
            notes.append(f"version {v} asked, document is about {', '.join(sorted(versions))}")
        else:
            cap = min(cap, CAP_MISSING_EXACT)
            notes.append(f"version {v} not mentioned")
    for i in sorted(q.ids):
        if i in d.ids:
            bonus += 8
        else:
            cap = min(cap, CAP_MISSING_EXACT)
            notes.append(f"identifier {i} not mentioned")
    missing_numbers = 0
    for n in sorted(q.numbers):
        if n in d.numbers:
            bonus += 3
        else:
            missing_numbers += 1
            notes.append(f"number {n} not mentioned")
    return bonus - min(16, 8 * missing_numbers), cap, notes


#: "What is the <modifiers> HEAD for/of/...": the thing asked for.
_HEAD_RE = re.compile(
    r"^\s*(?:what|which)\s+(?:is|are|was|were)\s+(?:the\s+|a\s+|an\s+|your\s+|my\s+|our\s+|its\s+)?"
    r"(?:[\w'’\-]+\s+){0,4}?([a-z][a-z\-]*)\s+(?:for|of|in|on|at|to|with|that|when|per|from)\b",
    re.IGNORECASE,
)
#: Heads whose answer is a number (any number in the chunk names them).
_NUMERIC_HEADS = frozenset(
    stem(w)
    for w in [
        "price",
        "cost",
        "fee",
        "size",
        "limit",
        "rate",
        "value",
        "amount",
        "number",
        "count",
        "total",
        "window",
        "period",
        "duration",
        "time",
        "percentage",
        "length",
        "maximum",
        "minimum",
        "quota",
    ]
)
_DATED_HEADS = frozenset(stem(w) for w in ["date", "deadline", "day"])
_ISO_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_NAME_RE = re.compile(r"(?<=\s)([A-Z][a-z][\w\-]*)(?:['’]s)?\b")
#: Score cap when a chunk matches the question only by names, or lacks the thing asked for.
CAP_OFF_TOPIC = 45


def asked_head(question: str) -> str:
    """The stemmed head noun of a "What is the X for ..." question ("" when none)."""
    m = _HEAD_RE.match(question)
    if not m:
        return ""
    head = stem(m.group(1).lower())
    return head if terms(head) else ""


def _has_head(head: str, doc: Counter[str], text: str) -> bool:
    if doc.get(head, 0) or any(doc.get(syn, 0) for syn in SYNONYMS.get(head, ())):
        return True
    if head in _NUMERIC_HEADS and exact_terms(text).numbers:
        return True
    return head in _DATED_HEADS and bool(_ISO_DATE_RE.search(text))


def _name_keys(question: str) -> set[str]:
    """Capitalised words inside the question (not its first word, not acronyms):
    product and company names, which many documents share."""
    return {stem(m.group(1).lower()) for m in _NAME_RE.finditer(" " + question.strip())} - {
        stem(question.strip().split()[0].lower()) if question.strip() else ""
    }


def grade(inputs: GradeInputs) -> RelevanceOut:
    """relevanceScore 0-100 (80+ high, 50-79 partial, <50 irrelevant)."""
    qterms = terms(inputs.question)
    meta = _meta_text(inputs.metadata)
    header = f"{inputs.title} {inputs.heading}"
    boost = bag(f"{header} {meta}")
    # Instructions planted in a document are not information about the question.
    text = "\n".join(s for s in sentences(inputs.text) if not looks_like_injection(s))
    doc = bag(text) + boost
    cov, missing = coverage(qterms, doc, boost)
    sentence, sent_cov = best_sentence(qterms, text)
    lexical = 100.0 * (0.7 * cov + 0.3 * sent_cov) ** 0.8 if qterms else 0.0
    meta_versions = {
        v.removeprefix("v")
        for k, v in inputs.metadata.items()
        if k.lower() == "version" and isinstance(v, str)
    } | {str(v) for k, v in inputs.metadata.items() if k.lower() == "version" and isinstance(v, int | float)}
    bonus, cap, notes = exact_adjustment(inputs.question, f"{header} {text} {inputs.source}", meta_versions)
    # Sharing only the question's names ("Quillstack") is not being about it.
    names = _name_keys(inputs.question)
    topical = {k: w for k, w in qterms.items() if k not in names}
    if names & set(qterms) and topical and coverage(topical, doc, boost)[0] < 0.35:
        cap = min(cap, CAP_OFF_TOPIC)
        notes.append("only the names in the question match")
    head = asked_head(inputs.question)
    if head and not _has_head(head, doc, f"{header} {text}"):
        cap = min(cap, CAP_OFF_TOPIC)
        notes.append(f"the thing asked for ({head}) is not mentioned")
    score = round(max(0.0, min(100.0, lexical + bonus if lexical > 0 else 0.0, float(cap))))
    missing_set = set(missing)
    gap_words: list[str] = []
    for tok in tokenize(inputs.question):
        if stem(tok) in missing_set and tok not in gap_words and qterms.get(stem(tok), 0) >= 1.0:
            gap_words.append(tok)
    gaps = "; ".join(p for p in (", ".join(gap_words), *notes) if p)
    key_info = shorten(sentence or text, 200) if score > 0 else ""
    return RelevanceOut(relevanceScore=score, isRelevant=score >= 50, keyInfo=key_info, gaps=gaps)


# ------------------------------------------------------------------ rerank

#: BM25 document-length normalisation.
B = 0.75


def rerank(inputs: RerankInputs) -> RerankOut:
    """Every candidate ranked, best first: BM25 with IDF from the candidate set,
    term specificity as query-term weight, times coverage, plus exact matches."""
    import math

    qterms = terms(inputs.query)
    docs = [bag(c) for c in inputs.candidates]
    n = len(docs)
    if n == 0:
        return RerankOut(ranking=[])
    avgdl = sum(sum(d.values()) for d in docs) / n or 1.0
    idf = {}
    for key in qterms:
        df = sum(1 for d in docs if key in d)
        idf[key] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    scored: list[tuple[float, int]] = []
    for i, (text, d) in enumerate(zip(inputs.candidates, docs, strict=True)):
        dl = sum(d.values()) or 1
        bm25 = 0.0
        for key, w in qterms.items():
            tf = d.get(key, 0)
            if tf:
                bm25 += w * idf[key] * tf * (1.2 + 1) / (tf + 1.2 * (1 - B + B * dl / avgdl))
        cov, _ = coverage(qterms, d)
        bonus, cap, _ = exact_adjustment(inputs.query, text)
        score = bm25 * (0.5 + 0.5 * cov) + bonus / 10.0
        if cap < 100:
            score *= cap / 100.0
        scored.append((round(score, 6), i))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return RerankOut(ranking=[RankedItem(index=i, score=s) for s, i in scored])


#: role -> rule; every role of ``schemas.INPUTS`` is answered.
_ROLES: dict[str, Callable[[Any], BaseModel]] = {
    "decide": decide,
    "rewrite": rewrite,
    "grade": grade,
    "rerank": rerank,
    "assess": assess,
    "generate": generate,
    "verify": verify,
}
