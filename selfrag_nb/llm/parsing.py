"""Robust parsing of raw model output into each role's output schema. Never raises.

    parse(role, raw) -> (output | None, error | None)

    raw ──strip BOM, cap at MAX_SCAN (not generate)──> text
        ──json_extract.extract_json: fenced blocks first, then the whole text;
          json.raw_decode, else a lenient parser (single quotes, trailing
          commas, bare keys, True/None, full-width ：and ，, “smart quotes”)
                                                        ──> JSON candidates
        ──role coercer (aliases incl. the Chinese prompts' labels; values via
          coerce: "85分", "是", enum spellings; bare index lists, derived
          fields)──> pydantic validation ──> output (the first candidate that validates)
    decide / assess also accept the line format "RETRIEVE|reason";
    generate accepts plain text (the usual case); a JSON {"answer": ...} wrapper
    is unwrapped, and an answer that is empty or only code is an error.

Values are coerced, never invented: a score of 150 stays 150 and fails
validation (the runner then makes its one repair call), a missing required
verdict is an error. The only derived fields are those the schema defines in
terms of others (isRelevant from relevanceScore with the documented 50 cutoff,
per-claim verdicts from supportedClaims/unsupportedClaims and back,
isFullySupported from the claims, a usefulness score from its verdict's
band when the score is missing). An evidence quote with no document number
gets ``doc=0`` (unknown); citations are 1-based so 0 never names a document.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from selfrag_nb.codelines import code_only
from selfrag_nb.errors import ParseError
from selfrag_nb.llm.coerce import (
    MAX_TEXT,
    as_bool,
    as_enum,
    as_number,
    as_score,
    as_str_list,
    as_text,
    pick,
)
from selfrag_nb.llm.json_extract import extract_json, sources, wrapped_answer
from selfrag_nb.llm.schemas import (
    OUTPUTS,
    AssessOut,
    DecisionOut,
    GenerateOut,
    RelevanceOut,
    RerankOut,
    RewriteOut,
    SupportOut,
    UsefulnessOut,
)

__all__ = ["extract_json", "format_validation_error", "parse"]

#: Longest output we scan for JSON; beyond this models are producing garbage.
MAX_SCAN = 200_000


# ------------------------------------------------------------------ entry


def parse(role: str, raw: object) -> tuple[BaseModel | None, str | None]:
    """Parse ``raw`` model output for ``role``: ``(output, None)`` on success,
    ``(None, error)`` otherwise. Never raises (the error says what was wrong,
    in words a model can act on in its repair attempt)."""
    try:
        if role not in OUTPUTS:
            return None, f"unknown role {role!r}"
        if not isinstance(raw, str):
            return None, f"model output is not text ({type(raw).__name__})"
        text = raw.lstrip("\ufeff").strip()
        if not text:
            return None, "empty output"
        return _PARSERS[role](text[:MAX_SCAN] if role != "generate" else text)
    except ValidationError as exc:
        return None, format_validation_error(exc)
    except ParseError as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - the contract: parsing never raises
        return None, f"unparseable output ({type(exc).__name__}: {str(exc)[:200]})"


def format_validation_error(exc: ValidationError) -> str:
    """Compact, model-readable summary of a pydantic error."""
    parts = []
    for err in exc.errors()[:8]:
        loc = ".".join(str(x) for x in err.get("loc", ())) or "output"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


# ------------------------------------------------------------ candidates


def _first_ok(
    text: str, build: Callable[[Any], BaseModel], accept: Callable[[Any], bool] = lambda v: True
) -> tuple[BaseModel | None, str | None]:
    """Build from the first JSON candidate that works; else the first error."""
    first_err: str | None = None
    for value in extract_json(text):
        if not accept(value):
            continue
        try:
            return build(value), None
        except ValidationError as exc:
            first_err = first_err or format_validation_error(exc)
        except ParseError as exc:
            first_err = first_err or str(exc)
    return None, first_err


# --------------------------------------------------------------------- decide

_DECIDE_TOKEN_RE = re.compile(r"(?<![A-Za-z_])(NO[ _\-]?RETRIEVE|NORETRIEVE|RETRIEVE)(?![A-Za-z_])")
_DECIDE_BRACKET_RE = re.compile(r"\[\s*(no\s+retrieve|retrieve)\s*\]", re.IGNORECASE)
_DECIDE_START_RE = re.compile(r"^[\W_]*(no[ _\-]?retrieve|retrieve)(?![A-Za-z])", re.IGNORECASE)
_DECIDE_ZH_RE = re.compile(r"(不需要检索|无需检索|不用检索|不检索|(?<![不无])需要检索)")
_SEP_STRIP = " \t|｜:：-—–,，.。;；>»\"'`*"


def _decision_token(tok: str) -> str:
    t = re.sub(r"[\s_\-]", "", tok).upper()
    return "RETRIEVE" if t in ("RETRIEVE", "需要检索") else "NO_RETRIEVE"


def _parse_decide(text: str) -> tuple[BaseModel | None, str | None]:
    def build(value: Any) -> BaseModel:
        if not isinstance(value, dict):
            raise ParseError("expected a JSON object with a decision")
        found, dec = pick(
            value, ("decision", "retrieve", "shouldRetrieve", "needRetrieval", "决策", "是否检索", "判断")
        )
        if not found:
            raise ParseError("missing field 'decision' (RETRIEVE or NO_RETRIEVE)")
        if isinstance(dec, bool):
            decision = "RETRIEVE" if dec else "NO_RETRIEVE"
        elif isinstance(dec, str) and (
            m := _DECIDE_TOKEN_RE.search(dec.upper()) or _DECIDE_ZH_RE.search(dec)
        ):
            decision = _decision_token(m.group(1))
        else:
            raise ParseError(f"decision: expected RETRIEVE or NO_RETRIEVE, got {str(dec)[:40]!r}")
        _, reason = pick(value, ("reason", "理由", "原因", "rationale"))
        return DecisionOut(decision=decision, reason=as_text(reason))

    tried_json = text.lstrip("`").lstrip().startswith(("{", "json"))
    err: str | None = None
    if tried_json:
        out, err = _first_ok(text, build)
        if out is not None:
            return out, None
    body = sources(text)[0]  # the first fenced block, or the whole text
    for pattern in (_DECIDE_TOKEN_RE, _DECIDE_BRACKET_RE, _DECIDE_START_RE, _DECIDE_ZH_RE):
        m = pattern.search(body)
        if m:
            decision = _decision_token(m.group(1))
            rest = body[m.end() :]
            line = rest.strip(_SEP_STRIP).split("\n", 1)[0] if rest.strip(_SEP_STRIP) else ""
            if not line:
                before = body[: m.start()].strip(_SEP_STRIP)
                line = before.split("\n")[-1] if before and len(before) < 300 else ""
            return DecisionOut(decision=decision, reason=line.strip(_SEP_STRIP)[:MAX_TEXT]), None
    if not tried_json:
        out, err = _first_ok(text, build)
        if out is not None:
            return out, None
    return None, err or "expected RETRIEVE|reason or NO_RETRIEVE|reason"


# -------------------------------------------------------------------- rewrite

_LIST_LINE_RE = re.compile(r"^\s*(?:[-*•·]|\d+[.)、:：]|[（(]\d+[)）])\s*(.+?)\s*$")


def _parse_rewrite(text: str) -> tuple[BaseModel | None, str | None]:
    def build(value: Any) -> BaseModel:
        if isinstance(value, list):
            return RewriteOut(rewrites=as_str_list(value, "rewrites"))
        found, rw = pick(
            value,
            (
                "rewrites",
                "queries",
                "rewrittenQueries",
                "rewritten",
                "alternatives",
                "改写",
                "改写结果",
                "查询",
            ),
        )
        if not found:
            raise ParseError("missing field 'rewrites' (a list of strings)")
        _, reason = pick(value, ("reason", "理由", "原因"))
        return RewriteOut(rewrites=as_str_list(rw, "rewrites"), reason=as_text(reason))

    out, err = _first_ok(text, build)
    if out is not None:
        return out, None
    lines = [m.group(1).strip("\"'“”") for ln in text.splitlines() if (m := _LIST_LINE_RE.match(ln))]
    if lines and err is None:
        return RewriteOut(rewrites=[ln for ln in lines if ln][:50]), None
    return None, err or 'expected JSON {"rewrites": [...], "reason": "..."}'


# ---------------------------------------------------------------------- grade

_SCORE_KEYS = (
    "relevanceScore",
    "score",
    "relevance",
    "相关性评分",
    "相关度",
    "相关性得分",
    "评分",
    "分数",
    "得分",
    "相关性",
)
_RELEVANT_KEYS = ("isRelevant", "relevant", "是否相关", "相关")
_KEYINFO_KEYS = ("keyInfo", "keyInformation", "key", "关键信息", "核心信息")
_GAPS_KEYS = ("gaps", "gap", "missing", "missingInfo", "缺失信息", "信息缺口", "缺失", "缺口")


def _parse_grade(text: str) -> tuple[BaseModel | None, str | None]:
    def build(value: Any) -> BaseModel:
        if not isinstance(value, dict):
            raise ParseError("expected a JSON object with relevanceScore and isRelevant")
        found, raw_score = pick(value, _SCORE_KEYS)
        if not found:
            raise ParseError("missing field 'relevanceScore' (integer 0-100)")
        score = as_score(raw_score, "relevanceScore")
        found_rel, raw_rel = pick(value, _RELEVANT_KEYS)
        # The documented bands: below 50 is irrelevant.
        relevant = as_bool(raw_rel, "isRelevant") if found_rel and raw_rel is not None else score >= 50
        _, key_info = pick(value, _KEYINFO_KEYS)
        _, gaps = pick(value, _GAPS_KEYS)
        return RelevanceOut(
            relevanceScore=score, isRelevant=relevant, keyInfo=as_text(key_info), gaps=as_text(gaps)
        )

    out, err = _first_ok(text, build, accept=lambda v: isinstance(v, dict))
    if out is not None:
        return out, None
    return None, err or "expected a JSON object with relevanceScore (0-100) and isRelevant"


# --------------------------------------------------------------------- rerank

_INDEX_KEYS = (
    "index",
    "idx",
    "i",
    "id",
    "candidate",
    "candidateIndex",
    "doc",
    "document",
    "position",
    "下标",
    "序号",
    "编号",
    "索引",
)
_RSCORE_KEYS = ("score", "relevanceScore", "relevance", "relevance_score", "分数", "评分", "得分", "相关性")
_REASON_KEYS = ("reason", "why", "rationale", "explanation", "理由", "原因")
_LIST_KEYS = ("ranking", "results", "rankings", "ranked", "data", "items", "order", "scores", "排序", "结果")


def _index(value: Any) -> int:
    if isinstance(value, bool):
        raise ParseError("index: expected an integer, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and (m := re.fullmatch(r"\s*[\[#(]?\s*(-?\d{1,9})\s*[\])]?\s*", value)):
        return int(m.group(1))
    raise ParseError(f"index: expected an integer, got {str(value)[:40]!r}")


def _rerank_items(items: list[Any]) -> RerankOut:
    if len(items) > 10_000:
        raise ParseError("ranking: too many items")
    n = len(items)
    ranking = []
    for pos, item in enumerate(items):
        if isinstance(item, dict):
            found, idx = pick(item, _INDEX_KEYS)
            if not found:
                raise ParseError(f"ranking[{pos}]: missing 'index'")
            found_s, sc = pick(item, _RSCORE_KEYS)
            score = as_number(sc, f"ranking[{pos}].score") if found_s and sc is not None else float(n - pos)
            found_r, why = pick(item, _REASON_KEYS)
            # A reason is explanation only: one that is not text is dropped, never an error.
            reason = why.strip()[:500] if found_r and isinstance(why, str) else ""
            ranking.append({"index": _index(idx), "score": score, "reason": reason})
        elif isinstance(item, list):
            raise ParseError(f"ranking[{pos}]: expected an object or an index, got a list")
        else:
            # A bare list of indices: the order is the ranking.
            ranking.append({"index": _index(item), "score": float(n - pos)})
    return RerankOut.model_validate({"ranking": ranking})


def _parse_rerank(text: str) -> tuple[BaseModel | None, str | None]:
    def build(value: Any) -> BaseModel:
        if isinstance(value, list):
            return _rerank_items(value)
        found, items = pick(value, _LIST_KEYS)
        if found and isinstance(items, list):
            return _rerank_items(items)
        if found and isinstance(items, dict):
            value = items
        if value and all(re.fullmatch(r"\s*\d{1,9}\s*", str(k)) for k in value):
            # {"0": 0.9, "3": 0.4}: index -> score
            pairs = [(int(k), as_number(v, f"score of {k}")) for k, v in value.items()]
            return RerankOut.model_validate({"ranking": [{"index": i, "score": s} for i, s in pairs]})
        raise ParseError('expected a list [{"index": n, "score": x}, ...]')

    out, err = _first_ok(text, build)
    if out is not None:
        return out, None
    return None, err or 'expected a JSON list [{"index": n, "score": x}, ...]'


# --------------------------------------------------------------------- assess

_ACTIONS = {
    "ANSWER": "ANSWER",
    "回答": "ANSWER",
    "可回答": "ANSWER",
    "作答": "ANSWER",
    "答复": "ANSWER",
    "CLARIFY": "CLARIFY",
    "澄清": "CLARIFY",
    "追问": "CLARIFY",
    "REFUSE": "REFUSE",
    "拒答": "REFUSE",
    "拒绝": "REFUSE",
    "拒绝回答": "REFUSE",
    "无法确认": "REFUSE",
    "无法回答": "REFUSE",
}
_ACTION_LINE_RE = re.compile(r"^[\W_]*(ANSWER|CLARIFY|REFUSE|回答|澄清|拒答)(?![A-Za-z])", re.IGNORECASE)


def _options(value: Any) -> list[str]:
    if isinstance(value, str):
        return [p.strip() for p in re.split(r"[,;，；、/|]", value) if p.strip()]
    return as_str_list(value, "options")


def _parse_assess(text: str) -> tuple[BaseModel | None, str | None]:
    def build(value: Any) -> BaseModel:
        if not isinstance(value, dict):
            raise ParseError("expected a JSON object with an action")
        found, act = pick(value, ("action", "decision", "决定", "行动", "动作", "结论", "判断"))
        if not found:
            raise ParseError("missing field 'action' (ANSWER, CLARIFY or REFUSE)")
        action = as_enum(act, _ACTIONS, "action", "ANSWER, CLARIFY, REFUSE")
        _, reason = pick(value, ("reason", "理由", "原因"))
        _, opts = pick(value, ("options", "选项", "choices", "qualifiers", "可选条件"))
        _, conflict = pick(value, ("conflict", "冲突", "conflicts"))
        _, applies = pick(value, ("applies", "适用", "applicable", "适用规则"))
        return AssessOut(
            action=action,
            reason=as_text(reason),
            options=_options(opts),
            conflict=as_text(conflict),
            applies=as_text(applies),
        )

    out, err = _first_ok(text, build, accept=lambda v: isinstance(v, dict))
    if out is not None:
        return out, None
    m = _ACTION_LINE_RE.search(text)
    if m and err is None:
        action = _ACTIONS[m.group(1).upper()]
        reason = text[m.end() :].strip(_SEP_STRIP).split("\n", 1)[0]
        return AssessOut(action=action, reason=reason[:MAX_TEXT]), None
    return None, err or 'expected JSON {"action": "ANSWER|CLARIFY|REFUSE", "reason": "..."}'


# ------------------------------------------------------------------- generate


_ANSWER_KEYS = ("answer", "回答", "答案", "response", "回复")


def _parse_generate(text: str) -> tuple[BaseModel | None, str | None]:
    """Plain text is the answer. A JSON object with an answer key is
    unwrapped (never shown as the answer). Empty, or nothing but code (a
    fence, a prompt, an import line: ``selfrag_nb.codelines.code_only``), is
    no answer: an error the repair call sees."""
    found, ans = wrapped_answer(text, _ANSWER_KEYS)
    if found and not isinstance(ans, str):
        return None, "answer: expected text"
    answer = ans.strip() if found else text
    if not answer:
        return None, "empty answer"
    if code_only(answer):
        return (
            None,
            "the answer is only code (a code block, a command or an import line), not an answer in words",
        )
    return GenerateOut(answer=answer), None


# --------------------------------------------------------------------- verify

_RECS = {
    "ACCEPT": "ACCEPT",
    "接受": "ACCEPT",
    "采纳": "ACCEPT",
    "直接输出": "ACCEPT",
    "ADDDISCLAIMER": "ADD_DISCLAIMER",
    "DISCLAIMER": "ADD_DISCLAIMER",
    "添加声明": "ADD_DISCLAIMER",
    "加声明": "ADD_DISCLAIMER",
    "添加免责声明": "ADD_DISCLAIMER",
    "REGENERATE": "REGENERATE",
    "重新生成": "REGENERATE",
    "重生成": "REGENERATE",
}
_VERDICTS = (
    # Checked in order: negative and partial forms contain the positive word.
    (
        "unsupported",
        (
            "unsupported",
            "notsupported",
            "nosupport",
            "无支撑",
            "没有支撑",
            "不支持",
            "未支撑",
            "无依据",
            "不成立",
            "false",
            "no",
        ),
    ),
    (
        "partial",
        ("partial", "partially", "partly", "notfully", "部分", "部分支撑", "部分支持", "不完全", "未完全"),
    ),
    ("supported", ("supported", "fullysupported", "support", "有支撑", "支撑", "支持", "true", "yes")),
)


def _verdict(value: Any, field: str) -> str:
    if isinstance(value, bool):
        return "supported" if value else "unsupported"
    if not isinstance(value, str):
        raise ParseError(f"{field}: expected supported, partial or unsupported, got {str(value)[:40]!r}")
    key = re.sub(r"[\s_\-\"'`。.!！]", "", value).lower()
    for verdict, words in _VERDICTS:
        if key in words:
            return verdict
    for verdict, words in _VERDICTS:
        if any(len(w) > 3 and w in key for w in words) or any(w in key for w in words if not w.isascii()):
            return verdict
    raise ParseError(f"{field}: expected supported, partial or unsupported, got {value[:40]!r}")


def _doc_number(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    m = re.search(r"\d{1,9}", str(value))
    return int(m.group(0)) if m else 0


def _evidence(value: Any, field: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out = []
    for j, ev in enumerate(items[:50]):
        if isinstance(ev, dict):
            _, doc = pick(ev, ("doc", "document", "docIndex", "index", "source", "chunk", "文档", "文档编号"))
            _, quote = pick(ev, ("quote", "span", "text", "evidence", "引用", "原文", "证据"))
            out.append({"doc": _doc_number(doc), "quote": as_text(quote)})
        elif isinstance(ev, str):
            m = re.match(
                r"\s*[\[【(（]?\s*(?:doc(?:ument)?|文档)?\s*(\d{1,9})\s*[\]】)）]?[:：\s-]*(.*)",
                ev,
                re.S | re.I,
            )
            if m and m.group(2):
                out.append({"doc": int(m.group(1)), "quote": m.group(2).strip()[:MAX_TEXT]})
            else:
                out.append({"doc": 0, "quote": ev.strip()[:MAX_TEXT]})
        elif isinstance(ev, int) and not isinstance(ev, bool):
            out.append({"doc": ev, "quote": ""})
        else:
            raise ParseError(f"{field}[{j}]: expected {{doc, quote}}")
    return out


def _cited(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, str):
        return [int(x) for x in re.findall(r"\d{1,9}", value)]
    items = value if isinstance(value, list) else [value]
    out = []
    for v in items[:50]:
        if isinstance(v, int) and not isinstance(v, bool):
            out.append(v)
        elif isinstance(v, float) and math.isfinite(v) and v.is_integer():
            out.append(int(v))
        elif isinstance(v, str):
            out.extend(int(x) for x in re.findall(r"\d{1,9}", v))
    return out


def _claims(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ParseError("claims: expected a list of {claim, verdict, evidence, cited}")
    out = []
    for i, item in enumerate(value[:200]):
        if not isinstance(item, dict):
            raise ParseError(f"claims[{i}]: expected an object with 'claim' and 'verdict'")
        found, claim = pick(item, ("claim", "text", "statement", "声明", "内容"))
        if not found or not as_text(claim):
            raise ParseError(f"claims[{i}]: missing 'claim'")
        found_v, verdict = pick(
            item, ("verdict", "status", "support", "supported", "label", "判定", "结论", "支撑情况")
        )
        if not found_v:
            raise ParseError(f"claims[{i}]: missing 'verdict' (supported, partial or unsupported)")
        _, evidence = pick(item, ("evidence", "evidences", "quotes", "证据", "依据"))
        _, cited = pick(item, ("cited", "citations", "cites", "引用", "引用编号"))
        out.append(
            {
                "claim": as_text(claim),
                "verdict": _verdict(verdict, f"claims[{i}].verdict"),
                "evidence": _evidence(evidence, f"claims[{i}].evidence"),
                "cited": _cited(cited),
            }
        )
    return out


def _parse_verify(text: str) -> tuple[BaseModel | None, str | None]:
    def build(value: Any) -> BaseModel:
        if not isinstance(value, dict):
            raise ParseError(
                "expected a JSON object (supportedClaims, unsupportedClaims, claims, recommendation)"
            )
        data: dict[str, Any] = {}
        f_sup, sup = pick(
            value,
            (
                "supportedClaims",
                "supported",
                "有支撑的声明",
                "有文档支撑的声明",
                "支撑的声明",
                "已支撑声明",
                "支持的声明",
            ),
        )
        f_uns, uns = pick(
            value,
            (
                "unsupportedClaims",
                "unsupported",
                "没有支撑的声明",
                "没有文档支撑的声明",
                "无支撑的声明",
                "未支撑声明",
                "不支持的声明",
            ),
        )
        f_cl, cl = pick(value, ("claims", "claimVerdicts", "声明", "声明列表"))
        f_conf, conf = pick(value, ("overallConfidence", "confidence", "整体置信度", "置信度", "总体置信度"))
        f_rec, rec = pick(value, ("recommendation", "推荐", "建议", "推荐行动", "action"))
        f_full, full = pick(
            value, ("isFullySupported", "fullySupported", "是否完全支撑", "完全支撑", "是否完全支持")
        )
        if not (f_sup or f_uns or f_cl or f_rec):
            raise ParseError("missing fields: supportedClaims / unsupportedClaims / claims / recommendation")
        supported = as_str_list(sup, "supportedClaims") if f_sup else []
        unsupported = as_str_list(uns, "unsupportedClaims") if f_uns else []
        claims = _claims(cl) if f_cl and cl is not None else []
        if not claims:
            claims = [{"claim": c, "verdict": "supported"} for c in supported]
            claims += [{"claim": c, "verdict": "unsupported"} for c in unsupported]
        if not f_sup and not f_uns:
            # partial claims are in neither list: they are not fully supported
            # and not flatly unsupported either; the per-claim list says so.
            supported = [c["claim"] for c in claims if c["verdict"] == "supported"]
            unsupported = [c["claim"] for c in claims if c["verdict"] == "unsupported"]
        data["supportedClaims"] = supported
        data["unsupportedClaims"] = unsupported
        data["claims"] = claims
        if f_conf and conf is not None:
            data["overallConfidence"] = as_score(conf, "overallConfidence")
        if f_rec and rec is not None:
            data["recommendation"] = as_enum(
                rec, _RECS, "recommendation", "ACCEPT, ADD_DISCLAIMER, REGENERATE"
            )
        if f_full and full is not None:
            data["isFullySupported"] = as_bool(full, "isFullySupported")
        else:
            data["isFullySupported"] = bool(claims) and all(c["verdict"] == "supported" for c in claims)
        return SupportOut.model_validate(data)

    out, err = _first_ok(text, build, accept=lambda v: isinstance(v, dict))
    if out is not None:
        return out, None
    return (
        None,
        err or "expected a JSON object with supportedClaims, unsupportedClaims, claims, recommendation",
    )


# ----------------------------------------------------------------- usefulness

_USEFUL = {
    "YES": "yes",
    "是": "yes",
    "回答了": "yes",
    "PARTLY": "partly",
    "PARTIAL": "partly",
    "PARTIALLY": "partly",
    "部分": "partly",
    "NO": "no",
    "否": "no",
    "没有回答": "no",
    "未回答": "no",
}


def _parse_usefulness(text: str) -> tuple[BaseModel | None, str | None]:
    def build(value: Any) -> BaseModel:
        if not isinstance(value, dict):
            raise ParseError("expected a JSON object with verdict and score")
        found, raw = pick(value, ("verdict", "answersQuestion", "useful", "判定", "结论"))
        found_s, raw_score = pick(value, ("score", "usefulnessScore", "分数", "评分", "得分"))
        if not found or raw is None:
            raise ParseError("missing field 'verdict' (yes | partly | no)")
        verdict = as_enum(str(raw), _USEFUL, "verdict", "yes, partly, no")
        # Without a score, the verdict's band (80+ / 50-79 / below 50) stands in for it.
        score = as_score(raw_score, "score") if found_s and raw_score is not None else None
        if score is None:
            score = {"yes": 90, "partly": 60, "no": 20}[verdict]
        _, missing = pick(value, ("missing", "gaps", "缺少", "缺失"))
        _, reason = pick(value, _REASON_KEYS)
        return UsefulnessOut(verdict=verdict, score=score, missing=as_text(missing), reason=as_text(reason))

    out, err = _first_ok(text, build, accept=lambda v: isinstance(v, dict))
    if out is not None:
        return out, None
    return None, err or "expected a JSON object with verdict (yes | partly | no) and score (0-100)"


_PARSERS: dict[str, Callable[[str], tuple[BaseModel | None, str | None]]] = {
    "decide": _parse_decide,
    "rewrite": _parse_rewrite,
    "grade": _parse_grade,
    "rerank": _parse_rerank,
    "assess": _parse_assess,
    "generate": _parse_generate,
    "verify": _parse_verify,
    "usefulness": _parse_usefulness,
}
