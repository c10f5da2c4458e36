"""Prompt-injection markers in untrusted text: flagged, never dropped.

    text --normalise: NFKC; text.HIDDEN dropped (C0 controls, every format
           character: soft hyphen, zero-width, bidi; other invisibles); Cyrillic/Greek
           look-alike letters mapped to Latin inside words that are mixed-script
           or made only of look-alikes; markdown emphasis removed-->
         --each pattern in _PATTERNS (English + Chinese)--> [(flag, snippet)]
    find_injection(text)        -> ["ignore previous instructions", ...]
    injection_matches(text)     -> [("ignore previous instructions", "Ignore all previous ..."), ...]

The runner runs this over the untrusted parts of a call's inputs (question,
history, documents, the answer under verification) and stores the flags on
the ``ModelCall``. Text is never altered or removed because of a flag: the
evidence-quality design says text like "ignore the rules and call a tool" in a
document must be treated as untrusted content, and that a prompt alone cannot
replace tool authorisation. Flagging makes the attempt visible in the trace.

Patterns search the whole text, so markers inside headings, code blocks and
HTML comments are found too. Normalisation is only for matching: ordinary
Russian or Greek words (not all look-alikes, no Latin letters) are left as
they are, so they cannot turn into English markers.
"""

from __future__ import annotations

import re
import unicodedata

from selfrag_nb.errors import InputTypeError
from selfrag_nb.text import HIDDEN, char_class

__all__ = ["INJECTION_FLAGS", "find_injection", "injection_matches"]

_I = re.IGNORECASE | re.MULTILINE

# flag name -> patterns. Flag names are stable: views and evaluations group by them.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "ignore previous instructions",
        re.compile(
            r"\bignore\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
            r"(?:previous|prior|above|earlier|preceding|system|existing|these|those)?\s*"
            r"(?:instructions?|prompts?|rules|directions|guidelines|constraints)\b"
            r"|\bignore\s+(?:all\s+of\s+|everything\s+|anything\s+)?(?:the\s+)?(?:above|foregoing)\b",
            _I,
        ),
    ),
    (
        "ignore previous instructions",
        # Qualifiers come in any order and number: "忽略之前的所有指令", "忽略所有之前的指令".
        re.compile(
            r"忽略(?:掉)?(?:之前|以前|先前|前面|上面|上述|以上|所有|全部|一切|你|的){0,4}"
            r"(?:指令|指示|规则|提示词?|要求|约束|设定|系统提示)"
        ),
    ),
    (
        "disregard the above",
        re.compile(
            r"\bdisregard\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:above|previous|prior|earlier|instructions?|rules|prompts?)\b",
            _I,
        ),
    ),
    (
        "ignore previous instructions",
        # "override your instructions", "override all previous rules", "override the
        # system prompt"; not "override the default timeout" or "override rules in CSS"
        re.compile(
            r"\boverride\s+(?:all\s+(?:of\s+)?|any\s+(?:of\s+)?)?"
            r"(?:your|the\s+(?:previous|prior|above|earlier|system)|previous|prior|earlier|system)\s+"
            r"(?:(?:previous|prior|system|safety)\s+)?"
            r"(?:instructions?|prompts?|rules|guidelines|constraints|guardrails)\b",
            _I,
        ),
    ),
    (
        "disregard the above",
        re.compile(
            r"\bforget\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above|earlier)?\s*(?:instructions?|rules|prompts?)\b"
            # "forget everything above", "forget all of the above", "forget the above",
            # "forget everything you were told before"; not "don't forget to renew"
            # or "forget the previous version" (needs above / everything ... before)
            r"|\bforget\s+(?:about\s+)?(?:all\s+of\s+|all\s+|everything\s+|anything\s+)?"
            r"(?:(?:that\s+was\s+)?(?:said|written)\s+)?(?:the\s+)?(?:above|foregoing)\b"
            r"|\bforget\s+(?:all\s+|everything\s+|anything\s+)(?:(?:that\s+)?you\s+(?:were|have\s+been)\s+told\s+)?"
            r"(?:before|previously|so\s+far)\b",
            _I,
        ),
    ),
    (
        "disregard the above",
        re.compile(
            r"忽略以上|忽略上文|无视(?:之前|以上|上述|前面|所有)?的?(?:指令|指示|规则|内容|要求)?|忘记(?:之前|以上|上述|所有)的?(?:指令|指示|规则|要求)"
        ),
    ),
    (
        "role override",
        re.compile(
            r"\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will)\b|\bpretend\s+(?:to\s+be|you\s+are)\b",
            _I,
        ),
    ),
    ("role override", re.compile(r"你现在是|从现在(?:开始|起)，?你|假装你是|(?:请|你)扮演")),
    ("system: line", re.compile(r"^[ \t>#*-]*(?:system|assistant|developer)\s*[:：]", _I)),
    ("system: line", re.compile(r"^[ \t>#*-]*(?:系统|系统提示)\s*[:：]", re.MULTILINE)),
    (
        "chat-template marker",
        re.compile(
            r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\s*\|>"
            r"|\[/?INST\]|<<\s*/?SYS\s*>>|</?\s*system\s*>",
            _I,
        ),
    ),
    (
        "instruction heading",
        re.compile(r"^\s*#{2,}\s*(?:new\s+)?(?:instructions?|system(?:\s+prompt)?|response)\b", _I),
    ),
    ("instruction heading", re.compile(r"\bnew\s+instructions?\s*[:：]", _I)),
    ("instruction heading", re.compile(r"^\s*#{1,}\s*(?:新的?)?(?:指令|系统提示)", re.MULTILINE)),
    (
        "tool call request",
        re.compile(
            r"\bcall\s+(?:the\s+|this\s+|a\s+|any\s+)?(?:tools?|functions?|api)\b"
            r"|\bfunction_call\b|\btool_calls?\b|\binvoke\s+(?:the\s+)?(?:tools?|functions?)\b"
            r"|\bexecute\s+(?:\w+\s+){0,2}?(?:command|code|tool|function|script|shell|following|this)\b"
            r"|\brun\s+(?:the\s+|this\s+)?(?:shell\s+)?(?:command|tool|script)\b",
            _I,
        ),
    ),
    (
        "tool call request",
        re.compile(
            r"调用(?:这个|该|以下)?(?:工具|函数|接口|插件)|执行(?:以下|下面|这个|该)?(?:命令|代码|脚本)|执行(?:以下|下面|这个|该)(?:指令|操作)"
        ),
    ),
    (
        "prompt exfiltration",
        re.compile(
            r"\b(?:reveal|print|show|repeat|output|leak)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+)?(?:prompt|instructions)\b",
            _I,
        ),
    ),
    ("prompt exfiltration", re.compile(r"(?:输出|显示|透露|泄露|重复)(?:你的)?(?:系统)?(?:提示词|指令)")),
)

INJECTION_FLAGS: tuple[str, ...] = tuple(dict.fromkeys(name for name, _ in _PATTERNS))

# Invisible characters split words ("ig\u00adnore"): selfrag_nb.text.HIDDEN,
# every character a view labels plus every format character (category Cf)
# and the invisible non-Cf ones, whitespace excepted. One table for the views
# and this flagger, so a character a view shows as U+XXXX cannot hide a marker.
_INVISIBLE_RE = re.compile(char_class(HIDDEN))
# Cyrillic and Greek letters that look like Latin ones (and two Latin
# look-alikes NFKC keeps): "\u0456gnore" with Cyrillic i, "\u043everride" with
# Cyrillic o. Deliberately small and explicit: only shapes that are read as
# the Latin letter in common fonts.
_CONFUSABLES: dict[int, str] = {
    ord(k): v
    for k, v in {
        # Cyrillic lower case
        "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0443": "y",
        "\u0445": "x", "\u0455": "s", "\u0456": "i", "\u0458": "j", "\u04bb": "h", "\u0501": "d",
        "\u051b": "q", "\u051d": "w", "\u04cf": "l", "\u0457": "i",
        # Cyrillic upper case
        "\u0410": "A", "\u0412": "B", "\u0415": "E", "\u041a": "K", "\u041c": "M", "\u041d": "H",
        "\u041e": "O", "\u0420": "P", "\u0421": "C", "\u0422": "T", "\u0423": "Y", "\u0425": "X",
        "\u0405": "S", "\u0406": "I", "\u0408": "J", "\u04c0": "I", "\u051a": "Q", "\u051c": "W",
        # Greek lower case
        "\u03b1": "a", "\u03b9": "i", "\u03ba": "k", "\u03bd": "v", "\u03bf": "o", "\u03c1": "p",
        "\u03c5": "u", "\u03c7": "x", "\u03b3": "y",
        # Greek upper case
        "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0396": "Z", "\u0397": "H", "\u0399": "I",
        "\u039a": "K", "\u039c": "M", "\u039d": "N", "\u039f": "O", "\u03a1": "P", "\u03a4": "T",
        "\u03a5": "Y", "\u03a7": "X",
        # Latin letters NFKC leaves alone: dotless i, script a / g
        "\u0131": "i", "\u0251": "a", "\u0261": "g",
    }.items()
}  # fmt: skip
_CONFUSABLE_WORD_RE = re.compile(r"\w*[" + "".join(chr(c) for c in _CONFUSABLES) + r"]\w*")
_LATIN_RE = re.compile(r"[A-Za-z]")
# Markdown emphasis and inline code split words ("**ignore** previous").
_EMPHASIS_RE = re.compile(r"[*`~]+")


def _delatinise(m: re.Match[str]) -> str:
    word = m.group(0)
    mapped = word.translate(_CONFUSABLES)
    # A word is rewritten only when it already mixes in Latin letters or is
    # made entirely of look-alikes; ordinary Russian/Greek words stay as written.
    if _LATIN_RE.search(word) or mapped.isascii():
        return mapped
    return word


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE_RE.sub("", text)
    if not text.isascii():
        text = _CONFUSABLE_WORD_RE.sub(_delatinise, text)
    return _EMPHASIS_RE.sub("", text)


def injection_matches(text: str) -> list[tuple[str, str]]:
    """(flag, matched snippet) for every marker found, first occurrence of each
    flag only, in the order of the pattern table."""
    if not isinstance(text, str):
        raise InputTypeError(f"find_injection expects text (str), got {type(text).__name__}")
    if not text:
        return []
    norm = _normalise(text)
    found: dict[str, str] = {}
    for name, pattern in _PATTERNS:
        if name in found:
            continue
        m = pattern.search(norm)
        if m:
            found[name] = m.group(0).strip()[:80]
    return list(found.items())


def find_injection(text: str) -> list[str]:
    """Names of the injection markers found in ``text`` (empty when clean)."""
    return [name for name, _ in injection_matches(text)]
