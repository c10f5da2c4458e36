"""Whole-phrase recognisers of the offline model: social phrases, arithmetic, entities.

    lexical <- phrases <- question <- relevance <- evidence <- assess | generate <- verify <- model
               ^^^^^^^ here: imports lexical only; used by question (decide,
                       rewrite) and generate (direct answers).

    question --social_kind()--> (kind, remainder)      "hi there, thanks!" -> greeting, ""
    question --arithmetic()--> Arithmetic(expression, value) --format_number()--> "51"
    question --direct_reply()--> "Hello! ...", "17 × 3 = 51.", "I can't answer that reliably ..."
    turn --entities()--> [Entity(text, rank, position)] noun phrases, names, identifiers
                                                       (what a follow-up's "it" may mean)

Pure functions of their arguments, like the lexical layer; the phrase lists
are documented in ``docs/offline_model.md`` (decide, rewrite, generate).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction

from selfrag_nb.llm.offline.lexical import ID_RE, STOP_EN
from selfrag_nb.text import is_cjk

__all__ = ["Arithmetic", "Entity", "arithmetic", "direct_reply", "entities", "format_number", "social_kind"]


# ------------------------------------------------------------ social talk

_SOCIAL_EN: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(rf"^(?:{pat})\b[\s,.!?~]*", re.IGNORECASE))
    for kind, pat in (
        ("identity", r"who are you|what are you|what(?:'s| is) your name|are you (?:a bot|human|an ai)"),
        ("identity", r"what can you do|how can you help(?: me)?"),
        (
            "smalltalk",
            r"how are you(?: doing)?(?: today)?|how's it going|how is it going|what's up|whats up|sup",
        ),
        ("smalltalk", r"(?:is )?any(?:one|body) (?:there|here)|are you there"),
        ("smalltalk", r"nice to meet you|good to see you|how have you been"),
        ("greeting", r"(?:hi|hello|hey|hiya|howdy|greetings|yo|good (?:morning|afternoon|evening|day))"),
        (
            "thanks",
            r"(?:thanks a lot|thanks so much|thank you(?: so much| very much)?|thanks|thx|ty|cheers|much appreciated)",
        ),
        (
            "thanks",
            r"(?:that(?:'s| was| is)?|this is|you(?:'re| are)) (?:really |very |so |super )?"
            r"(?:helpful|great|useful|perfect|awesome)",
        ),
        (
            "farewell",
            r"(?:goodbye|good bye|bye(?: bye)?|see you(?: later| soon)?|good night|take care|have a nice day)",
        ),
        (
            "ack",
            r"(?:ok|okay|got it|great|cool|nice|perfect|awesome|understood|i see|sounds good|alright|sure)",
        ),
    )
)
_SOCIAL_EN_TAIL = re.compile(r"^(?:there|all|everyone|folks|again|friend|team|bot)\b[\s,.!~]*", re.IGNORECASE)

_SOCIAL_ZH: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(rf"^(?:{pat})[\s,，.。!！~～？?]*"))
    for kind, pat in (
        (
            "identity",
            r"你是谁|你叫什么(?:名字)?|你是什么|你是机器人吗|你能做什么|你可以做什么|你会什么|你能帮我做什么",
        ),
        ("smalltalk", r"你好吗|最近(?:怎么样|好吗)|在吗|在不在|吃了吗|忙吗"),
        ("greeting", r"你好|您好|嗨|哈喽|哈啰|早上好|上午好|中午好|下午好|晚上好|大家好|早安|晚安"),
        (
            "thanks",
            r"(?:谢谢|感谢|多谢)(?:你|您)?的?(?:帮助|帮忙|解答)|谢谢你?|谢谢您|多谢|感谢|辛苦了|太感谢了",
        ),
        ("farewell", r"再见|拜拜|回头见|下次见"),
        ("ack", r"好的|好吧|明白了|知道了|收到|了解了|懂了|没问题|可以了|行|嗯"),
    )
)


def social_kind(question: str) -> tuple[str | None, str]:
    """Classify leading social phrases. Returns (kind, remainder): kind is the
    first phrase's kind ("greeting", "thanks", "farewell", "smalltalk",
    "identity", "ack") or None; remainder is what follows all social phrases
    (empty when the message is pure small talk)."""
    text = unicodedata.normalize("NFKC", question).strip()
    first: str | None = None
    for _ in range(6):  # a few stacked phrases at most: "hi there, thanks!"
        matched = False
        for kind, pat in (*_SOCIAL_EN, *_SOCIAL_ZH):
            m = pat.match(text)
            if m and m.end() > 0:
                first = first or kind
                text = text[m.end() :]
                tail = _SOCIAL_EN_TAIL.match(text)
                if tail and kind in ("greeting", "thanks"):
                    text = text[tail.end() :]
                matched = True
                break
        if not matched:
            break
    rest = text.strip(" \t\n,，.。!！?？~～")
    # Emoji and punctuation after a greeting ("Hi there 👋") are not a question.
    if not any(c.isalnum() for c in rest):
        rest = ""
    return first, rest


# -------------------------------------------------------------- arithmetic

_ARITH_WORDS: tuple[tuple[str, str], ...] = (
    ("multiplied by", "*"),
    ("divided by", "/"),
    ("to the power of", "^"),
    ("times", "*"),
    ("plus", "+"),
    ("minus", "-"),
    ("over", "/"),
    ("乘以", "*"),
    ("除以", "/"),
    ("加上", "+"),
    ("减去", "-"),
    ("的平方", "^2"),
    ("乘", "*"),
    ("加", "+"),
    ("减", "-"),
    ("×", "*"),
    ("÷", "/"),
    ("x", "*"),
)
_ARITH_STRIP_RE = re.compile(
    r"^(?:please\s+)?(?:can you\s+)?(?:tell me\s+)?(?:what(?:'s| is)|whats|how much is|calculate|compute|"
    r"evaluate|solve)\s*|(?:请|帮我|麻烦)?(?:计算|算一下|算算|算)?|"
    r"\s*(?:=|equals?|is)?\s*\??$",
    re.IGNORECASE,
)
_ARITH_ZH_TAIL_RE = re.compile(r"(?:等于多少|等于几|是多少|等于|得多少|多少)[?？。]*$")
_ARITH_OK_RE = re.compile(r"[\d\s.+\-*/^()%]+")


class _Parser:
    """expr := term (('+'|'-') term)*; term := power (('*'|'/'|'%') power)*;
    power := unary ('^' power)?; unary := '-' unary | atom; atom := number | '(' expr ')'.
    Exact rational arithmetic (Fraction); no eval."""

    def __init__(self, text: str) -> None:
        self.toks: list[str] = re.findall(r"\d+(?:\.\d+)?|[+\-*/^()%]", text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expr(self) -> Fraction:
        value = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            rhs = self.term()
            value = value + rhs if op == "+" else value - rhs
        return value

    def term(self) -> Fraction:
        value = self.power()
        while self.peek() in ("*", "/", "%"):
            op = self.take()
            rhs = self.power()
            if op == "*":
                value *= rhs
            elif rhs == 0:
                raise ZeroDivisionError("division by zero")
            elif op == "/":
                value /= rhs
            else:
                value %= rhs
        return value

    def power(self) -> Fraction:
        base = self.unary()
        if self.peek() == "^":
            self.take()
            exp = self.power()
            # Bounded so a question cannot make us compute 9^9^9.
            if exp.denominator != 1 or abs(exp) > 64 or abs(base) > 10**6:
                raise ValueError("exponent out of range")
            if base == 0 and exp < 0:
                raise ZeroDivisionError("division by zero")
            return base ** int(exp)
        return base

    def unary(self) -> Fraction:
        if self.peek() == "-":
            self.take()
            return -self.unary()
        return self.atom()

    def atom(self) -> Fraction:
        tok = self.peek()
        if tok is None:
            raise ValueError("unexpected end")
        if tok == "(":
            self.take()
            value = self.expr()
            if self.peek() != ")":
                raise ValueError("missing )")
            self.take()
            return value
        if tok[0].isdigit():
            self.take()
            return Fraction(tok)
        raise ValueError(f"unexpected {tok!r}")


@dataclass(frozen=True)
class Arithmetic:
    """A recognised arithmetic question: the normalised expression and its
    value (None when it cannot be computed, e.g. division by zero)."""

    expression: str
    value: Fraction | None
    problem: str = ""


def arithmetic(question: str) -> Arithmetic | None:
    """Recognise "what is 17*3", "17乘以3等于多少", "12 divided by 4?" and parse
    them with a tiny expression parser. None when the question is not pure
    arithmetic (at least one operator between numbers)."""
    text = unicodedata.normalize("NFKC", question).strip().lower()
    if len(text) > 200:
        return None
    text = _ARITH_ZH_TAIL_RE.sub("", text)
    text = _ARITH_STRIP_RE.sub("", text).strip()
    for word, op in _ARITH_WORDS:
        if word == "x":
            text = re.sub(r"(?<=[\d\s)])x(?=[\s\d(])", "*", text)
        else:
            text = text.replace(word, f" {op} ")
    text = text.replace(",", "").strip()
    if not text or not _ARITH_OK_RE.fullmatch(text):
        return None
    if not re.search(r"\d\s*[)]*\s*[+\-*/^%]\s*[(\-]*\s*\d", text):
        return None
    expression = " ".join(re.findall(r"\d+(?:\.\d+)?|[+\-*/^()%]", text))
    parser = _Parser(text)
    try:
        value = parser.expr()
        if parser.peek() is not None:
            return None
    except ZeroDivisionError:
        return Arithmetic(expression, None, "division by zero")
    except (ValueError, IndexError):
        return None
    return Arithmetic(expression, value)


def format_number(value: Fraction) -> str:
    """An exact integer, else a decimal with up to 6 places (trailing zeros cut)."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.6f}".rstrip("0").rstrip(".")


def direct_reply(question: str, lang: str) -> str:
    """The answer without documents (generate's direct mode): a social
    phrase answered in kind, a calculation's result, or an honest "I don't
    know" (never a guess)."""
    zh = lang == "zh"
    kind, rest = social_kind(question)
    parts: list[str] = []
    canned = {
        "greeting": ("Hello! How can I help you today?", "你好！有什么可以帮你的吗？"),
        "thanks": ("You're welcome!", "不客气！"),
        "farewell": ("Goodbye, and have a nice day!", "再见，祝你愉快！"),
        "smalltalk": (
            "I'm doing well, thanks for asking. How can I help?",
            "我很好，谢谢关心。有什么可以帮你的吗？",
        ),
        "identity": (
            "I'm an assistant that answers questions from this knowledge base and shows how each answer was checked.",
            "我是一个基于知识库回答问题的助手，并会展示每个答案的核对过程。",
        ),
        "ack": ("Great. Let me know if you have another question.", "好的，如果还有其他问题请告诉我。"),
    }
    if kind is not None:
        parts.append(canned[kind][1 if zh else 0])
    text = rest if kind is not None else question
    if text:
        calc = arithmetic(text)
        if calc is not None and calc.value is not None:
            value = format_number(calc.value)
            parts.append(f"{calc.expression} = {value}。" if zh else f"{calc.expression} = {value}.")
        elif calc is not None:
            parts.append(f"无法计算：{calc.problem}。" if zh else f"That cannot be computed: {calc.problem}.")
        else:
            parts.append(
                "不查阅资料的话，我无法可靠地回答这个问题，也不想猜测。"
                if zh
                else "I can't answer that reliably without the knowledge base, and I won't guess."
            )
    return " ".join(parts) if not zh else "".join(parts)


# ---------------------------------------------------------------- entities

_HEADS_EN = (
    "plan|plans|tier|edition|product|feature|api|sdk|app|service|endpoint|integration|policy|"
    "subscription|account|connector|module|license|package|workspace|add-on|addon"
)
#: A run of capitalised words; a single capital letter ends one ("Network X",
#: "Mac OS X"), except "I" and "A", which are words of their own.
_CAP_PHRASE_RE = re.compile(
    r"\b[A-Z][\w\-.]*[A-Za-z0-9](?:\s+(?:[A-Z0-9][\w\-.]*[A-Za-z0-9]|[B-HJ-Z](?![\w\-.])))*"
)
_HEAD_PHRASE_RE = re.compile(
    rf"\b((?:[A-Za-z0-9][\w\-.]*\s+){{1,3}}?(?:{_HEADS_EN}))\b(?!\s+(?:{_HEADS_EN})\b)", re.IGNORECASE
)
_QUOTED_RE = re.compile(r"[「“\"《『]([^」”\"》』]{1,40})[」”\"》』]")
_ZH_HEADS = "套餐|版本|版|接口|功能|产品|服务|计划|政策|方案|账户|账号"
_ZH_PHRASE_RE = re.compile(
    rf"((?:[A-Za-z][\w\-.]*(?:\s+[A-Za-z0-9][\w\-.]*)*\s*)?[\u4e00-\u9fff]{{0,6}}?(?:{_ZH_HEADS})+)"
)
_LATIN_IN_ZH_RE = re.compile(r"[A-Za-z][\w\-.]*(?:\s+[A-Za-z0-9][\w\-.]*)*")
_ZH_LEAD_TRIM = "的了解问于是在用个这那我你想要看查请关对把给让该其它么什怎哪吗呢吧啊和与或及"


@dataclass(frozen=True)
class Entity:
    """A thing a follow-up may refer to. ``rank``: 0 head-noun phrase or
    quoted term, 1 multi-word capitalised name, 2 identifier, 3 single
    capitalised word (lower is preferred)."""

    text: str
    rank: int
    position: int


def _trim_en(phrase: str) -> str:
    words = phrase.split()
    while words and words[0].lower() in STOP_EN:
        words = words[1:]
    return " ".join(words)


def entities(text: str) -> list[Entity]:
    """Candidate entities of one turn, best first (rank, then position)."""
    text = unicodedata.normalize("NFKC", text)
    found: dict[str, Entity] = {}

    def add(phrase: str, rank: int, pos: int) -> None:
        phrase = phrase.strip(" ,.;:!?'\"")
        if len(phrase) < 2 or phrase.lower() in STOP_EN:
            return
        key = phrase.lower()
        old = found.get(key)
        if old is None or (rank, pos) < (old.rank, old.position):
            found[key] = Entity(phrase, rank, pos)

    for m in _QUOTED_RE.finditer(text):
        add(m.group(1), 0, m.start())
    for m in _HEAD_PHRASE_RE.finditer(text):
        phrase = _trim_en(m.group(1))
        words = phrase.split()
        if len(words) >= 2:
            named = any(w[0].isupper() or w[0].isdigit() for w in words[:-1])
            add(phrase, 0 if named else 1, m.start())
    for m in _CAP_PHRASE_RE.finditer(text):
        phrase = _trim_en(m.group(0))
        if not phrase:
            continue
        add(phrase, 1 if " " in phrase else 3, m.start())
    for m in ID_RE.finditer(text):
        add(m.group(0), 2, m.start())
    if any(is_cjk(c) for c in text):
        for m in _ZH_PHRASE_RE.finditer(text):
            phrase = m.group(1)
            cut = max((phrase.rfind(c) for c in _ZH_LEAD_TRIM), default=-1)
            phrase = phrase[cut + 1 :].strip()
            if len(phrase) >= 2 and phrase not in _ZH_HEADS.split("|"):
                add(phrase, 0, m.start())
        for m in _LATIN_IN_ZH_RE.finditer(text):
            add(m.group(0), 1, m.start())
    # A phrase contained in a better, longer one adds nothing.
    kept = [
        e
        for e in found.values()
        if not any(
            o is not e and e.text.lower() in o.text.lower() and o.rank <= e.rank for o in found.values()
        )
    ]
    return sorted(kept, key=lambda e: (e.rank, e.position))
