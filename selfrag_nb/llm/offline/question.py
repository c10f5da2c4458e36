"""Question understanding: the decide and rewrite roles, follow-ups, the effective question.

    lexical <- phrases <- question <- relevance <- evidence <- assess | generate <- verify <- model
                          ^^^^^^^^ here: imports lexical and phrases; assess and
                                   generate read questions through it.

    DecideInputs  -> empty / pure small talk (social_kind) / arithmetic -> NO_RETRIEVE
                  -> follow-up (is_follow_up), ID or version, how-to, fact word,
                     question form, anything else                      -> RETRIEVE
    RewriteInputs -> no history                  -> []
                  -> a reference ("it", "that plan", "它") -> replaced by the
                     history's best entity (phrases.entities), + question & entity
                  -> an ellipsis ("and for Pro?") -> earlier question with its
                     entity swapped, or with its topic words added
                  -> protected spans kept verbatim, duplicates dropped
    question + history --effective_question()--> the question with its reference
                     resolved, by the rewrite rule (what assess and generate read)
    question --without_idioms()--> without "in the first place", "at all"
    question --without_excluded()--> a who / which / what question without its
                     "instead of X" clause (what generate matches sentences against,
                     and the subject the usefulness check looks for)
    question --without_examples()--> a question asking for something without the
                     examples it lists ("the extensions such as len or sorted":
                     grade takes the better reading, generate and usefulness this one)
    question --answer_language()--> "zh" | "en"
    answer types (shared by generate and the usefulness judge): a quantity,
                     a duration, a date (WHEN_Q_RE --gives_time()-->), an
                     environment variable, a purpose, a code name (CODE_Q_RE
                     --code_names()-->)

Heuristics: ``docs/offline_model.md`` (decide, rewrite).
"""

from __future__ import annotations

import re

from selfrag_nb.llm.offline.lexical import exact_terms, stem, terms, wordset
from selfrag_nb.llm.offline.phrases import arithmetic, entities, social_kind
from selfrag_nb.llm.schemas import DecideInputs, DecisionOut, Message, RewriteInputs, RewriteOut
from selfrag_nb.text import detect_language, normalize_key, tokenize

__all__ = [
    "CODE_Q_RE",
    "DATE_Q_RE",
    "DATE_RE_ANY",
    "DURATION_Q_RE",
    "ENV_Q_RE",
    "ENV_VAR_RE",
    "HOW_TO_Q_RE",
    "PURPOSE_Q_RE",
    "PURPOSE_RE",
    "QUANTITY_Q_RE",
    "TIME_UNITS",
    "WHEN_Q_RE",
    "answer_language",
    "code_names",
    "decide",
    "effective_question",
    "gives_time",
    "is_follow_up",
    "rewrite",
    "without_examples",
    "without_excluded",
    "without_idioms",
]


# ------------------------------------------------------------------ answer type

#: The question asks for an amount, a duration or a limit: a sentence that
#: states a number is more likely the answer than one that only names the topic.
QUANTITY_Q_RE = re.compile(
    r"\bhow (?:many|much|long|often|fast|soon|big|large|quickly)\b|\b(?:maximum|minimum|max|min|limits?|"
    r"size|prices?|costs?|fees?|rates?|window|period|duration|percentage|number of|uptime|credit)\b|"
    r"多少|多久|几[个天次]|多大|上限|期限|价格|费用",
    re.IGNORECASE,
)
#: The question asks for a length of time by naming one ("What is the default
#: timeout?", "How long ...?"): a number with a unit of time answers it. "How
#: are timeouts measured?" asks for no length, and "Which timeout method ...?"
#: for a method: the word of time must be what is asked, not a modifier.
#: "What kind of timeout is X?" asks for a kind ("cooperative"), not a length.
DURATION_Q_RE = re.compile(
    r"^\s*(?:what|which)\b(?!\s+(?:kinds?|types?|sorts?)\s+of\b)[^?]*(?<![\w-])(?:time-?outs?|intervals?|delays?|ttl|expiry|expiration|lifetime)\b"
    r"(?=\s*(?:[?.,]|$|(?:in|for|of|on|when|before|after|between|is|are|was|does|do|that)\b))|"
    r"\bhow long\b|多久|超时",
    re.IGNORECASE,
)
#: Units of time, as lexical.quantities stems them ("10 minutes" -> "minut").
TIME_UNITS = wordset(
    "s sec second ms millisecond us microsecond ns nanosecond min minut h hr hour day week month year 秒 分钟 小时 天"
)
#: The question asks for a date.
DATE_Q_RE = re.compile(r"\bwhen\b|\bdates?\b|\bdeadline\b|什么时候|何时|日期|哪天", re.IGNORECASE)
DATE_RE_ANY = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}\b|"
    r"\d{4}年\d{1,2}月",
    re.IGNORECASE,
)
#: "When ...?", "What date / year / time ...?": a point in time is the answer.
#: "When I call X, how does it connect?" opens on a clause that sets the
#: scene; the question is what follows its comma ("how ..."), not "when".
WHEN_Q_RE = re.compile(
    r"^\s*when\b(?![^?,]*,\s*(?:how|what|which|who|whom|where|why|when|do|does|did|is|are|can|should|will|would)\b)"
    r"|\bwhat (?:date|year|time)\b|什么时候|何时|哪一?天|哪一?年",
    re.I,
)
# A point in time: a date, digits (a year, a clock time, a version's date), or
# a word placing it ("since", "until"); not the number words of "how often"
# ("every", "few").
_DIGIT_RE = re.compile(r"\d|[一二两三四五六七八九十]")
_TIME_WORD_RE = re.compile(r"\b(?:since|until|before|after|ago|year|month|day|today|now)\b|年|月|日", re.I)


#: A number as a question or an answer writes it ("3.9", "2026-05-02", "1,000").
_NUMERAL_RE = re.compile(r"\d+(?:[.,:/-]\d+)*")


def gives_time(text: str, question: str = "") -> bool:
    """``text`` states a point in time, as a when-question asks. A number the
    question already holds is what it asks about, not when: "Removed support
    for Python 3.8 and 3.9" does not say when 3.8 and 3.9 were dropped."""
    held = set(_NUMERAL_RE.findall(question))
    if held:
        text = _NUMERAL_RE.sub(lambda m: " " if m.group() in held else m.group(), text)
    if _HABITUAL_WHEN_RE.match(question) and _EVENT_TIME_RE.search(text):
        return True  # "When does X verify the timestamp?" -> "... while loading a token"
    return bool(DATE_RE_ANY.search(text) or _DIGIT_RE.search(text) or _TIME_WORD_RE.search(text))


#: "When does X verify ...?", "When do I need ...?": a present-tense when-question
#: asks at which event something happens (what the past tense "When did X ...?"
#: asks is a date), and a temporal clause answers it: "while loading a token".
_HABITUAL_WHEN_RE = re.compile(r"^\s*when\s+(?:do|does)\b", re.I)
_EVENT_TIME_RE = re.compile(
    r"\b(?:while|whenever|when|during|upon|once|as soon as|each time|every time|the first time)\b", re.I
)


#: The question asks for an environment variable ("Which environment variable
#: ...?", "How do I disable X through an environment variable?"): its name is
#: the answer. A yes/no question ("Does X read environment variables?") is not.
ENV_Q_RE = re.compile(
    r"^\s*(?:which|what|how)\b[^?]*\b(?:environment\s+variables?|env\s+vars?|envvars?)\b|环境变量", re.I
)
#: An environment variable's name: capitals joined by underscores
#: ("QUILL_LOG_SCOPE"), "$NAME", "%NAME%", or a capitalised word right before
#: or after the word "variable" ("the TZ environment variable").
ENV_VAR_RE = re.compile(
    r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\$[A-Za-z_]\w*|%[A-Za-z_]\w*%|"
    r"\b[A-Z][A-Z0-9]+\s+(?:environment\s+)?variable\b|\bvariable\s+[A-Z][A-Z0-9]+\b"
)
#: The question asks which class, function, method, exception ... ("Which
#: validator class does validate() use ...?", "What exception does X raise?"):
#: a name in code is the answer. The kind is the noun right before the verb,
#: so "Which error message is shown?" asks for a message, not code.
CODE_Q_RE = re.compile(
    r"^\s*(?:(?:in|from|on|at|for|with|by|to)\s+)?(?:which|what)\s+(?:[\w.-]+\s+){0,2}?"
    r"(?:class|function|method|exception|error|decorator|attribute|hook|fixture|callback)(?:es|s)?\s+"
    r"(?:is|are|was|were|do|does|did|can|could|should|will|would|has|have|gets?|(?-i:[a-z]+ed))\b",
    re.I,
)
#: A name as code writes it: mixed case ("OAS32Validator", "HTTPError",
#: "getLogger"), words joined by "_" ("read_timeout") or dots ("os.path.join",
#: two letters or more each, so not "e.g"), or a call ("validate()").
_CODE_NAME_RE = re.compile(
    r"\b(?:[A-Za-z]\w*?[a-z0-9][A-Z]\w*|[A-Z]{2,}[a-z]{2,}\w*|[A-Za-z]\w*_\w+|"
    r"[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+|[A-Za-z_]\w*\(\))"
)


def code_names(text: str, question: str) -> list[str]:
    """The names in ``text`` written as code that ``question`` does not hold."""
    held = question.casefold()
    return [n for n in _CODE_NAME_RE.findall(text) if n.casefold() not in held]


#: The question asks how to do something: what to do, type or set is the answer.
HOW_TO_Q_RE = re.compile(
    # "What's the pip command to get X?" / "Which command ...?" ask what to type, as "How do I ...?" does.
    # "Can I make / force X to ...?" asks for the means, as "How do I make X ...?" does.
    r"\bhow (?:do|can|should|to|would)\b|\bcan\s+(?:i|we|you)\s+(?:make|force)\b|"
    r"\b(?:what|which)\s+commands?\b(?![\s-]line)|"
    r"\bwhat(?:'s|\s+is|\s+are)\s+the\s+(?:[\w.-]+\s+){0,2}?commands?\b(?![\s-]line)|如何|怎么|怎样",
    re.IGNORECASE,
)
#: The question asks what a thing is for: its purpose, not what it is. "What
#: problem does X solve?" asks the same: what X lets one do that was hard.
PURPOSE_Q_RE = re.compile(
    r"\bpurpose\b|\b(?:meant|intended|designed)\s+(?:to\s+be\s+used\s+)?(?:for|to)\b|"
    r"\b(?:what|which)\s+(?:problems?|issues?|needs?)\s+(?:does|do|did|is|are|was|were)\b[^?]*?"
    r"\b(?:solv|address|tackl|fix)\w*|"
    r"^\s*what\s+(?:is|are)\b[^?]{1,60}?\s(?:used\s+)?for\s*\??\s*$|用途|用来|做什么用",
    re.IGNORECASE,
)
#: A sentence says what a thing is for: an intent word, a use, a goal ("for
#: <doing>", "so that", "in order to"), or what it lets someone do. What it
#: holds or is ("a package providing time zone data") is not a purpose.
PURPOSE_RE = re.compile(
    r"\b(?:intend\w*|meant|designed|aims?|aimed|purpose|goal|use[ds]?|using|usable|useful|fallback|"
    r"so\s+that|in\s+order\s+to|allows?|allowing|lets?|letting|enables?|enabling|helps?|helping|"
    r"assists?|assisting|"
    r"for\s+\w+ing|(?:is|are)\s+for|(?:tool|library|package|module|way|utility|framework|helper)s?\s+"
    r"(?:to\s+\w+|for\s+(?:the\s+)?\w+(?:ion|ment|sis|ance|ence)s?))\b|"
    r"用于|用来|目的|为了",
    re.IGNORECASE,
)

#: "Who ... instead of X?", "Which formats other than X ...?": X names what the
#: answer is not, so a sentence naming X is no likelier the answer. Only in a
#: question asking for a thing (who / which / what): "How do I build it against
#: the system library instead of the vendored copy?" and "Why threads rather
#: than processes?" ask about the contrast, and the answer names both sides.
_EXCLUDING_RE = re.compile(
    r"\s*,?\s*\b(?:instead\s+of|rather\s+than|other\s+than|apart\s+from|aside\s+from|except(?:\s+for)?|"
    r"besides)\s+(?P<what>[^,;:?!]+?)\s*(?P<end>[?？.!]?\s*)$",
    re.IGNORECASE,
)
#: A clause that goes on with a verb of the question ("Which formats other than
#: JSON does it read?") is not only what the answer is not: it is kept.
_GOES_ON_RE = re.compile(
    r"\b(?:do|does|did|is|are|was|were|can|could|will|would|should|has|have|had|may|might|must)\b",
    re.IGNORECASE,
)
_THING_Q_RE = re.compile(r"^\s*(?:who|whom|whose|which|what)\b", re.IGNORECASE)
_FRONTED_EXCLUDING_RE = re.compile(
    r"^\s*(?:besides|apart\s+from|aside\s+from|other\s+than|except(?:\s+for)?|in\s+addition\s+to)\s+"
    r"[^,;:?!]+,\s*(?=(?:who|whom|whose|which|what)\b[^?]*\w)",
    re.IGNORECASE,
)


#: Emphatic idioms say nothing about what is asked: "Why was X written in
#: the first place?" asks why X was written ("initially to support ...").
#: Nor does "on my machine": "How do I run the tests on my machine?" asks
#: how to run the tests.
_EMPHATIC_RE = re.compile(
    r"\s*\b(?:in the first place|at all|on (?:my|your|our) (?:own |local )?(?:machine|computer|laptop))\b",
    re.IGNORECASE,
)


def without_idioms(question: str) -> str:
    """``question`` without idioms that say nothing about what is asked ("in
    the first place", "at all", "on my machine")."""
    return _EMPHATIC_RE.sub("", question)


def without_excluded(question: str) -> str:
    """``question`` without a clause naming what its answer is not ("Who
    provides their own manager instead of the default one?" -> "Who provides
    their own manager?"); the question itself when it has none, asks how or
    why, or would be left with nothing."""
    if fronted := _FRONTED_EXCLUDING_RE.match(question):
        # "Besides asyncio, which libraries ...?": the same clause, put first.
        kept = question[fronted.end() :]
        return kept[:1].upper() + kept[1:]
    m = _EXCLUDING_RE.search(question) if _THING_Q_RE.match(question) else None
    if m is None or _GOES_ON_RE.search(m["what"]):
        return question
    kept = question[: m.start()] + m["end"]
    return kept if terms(kept) else question


#: "... the extensions such as len, sorted or filter?": a list of examples
#: after "such as" (or in "(e.g. ...)") illustrates the noun before it; the
#: answer is about the noun, and a passage that names none of the examples
#: answers as well. Only a short list (items of one to three words) that ends
#: the clause: "such as len, sorted or filter to transform data?" is left alone.
_ITEM = r"[^\s,;:?!()]+(?:\s+[^\s,;:?!()]+){0,2}?"
_LIST = rf"{_ITEM}(?:\s*,\s*{_ITEM})*(?:\s*,?\s+(?:and|or)\s+{_ITEM})?"
_SUCH_AS = r"(?:such\s+as|e\.\s?g\.,?|for\s+example,?)"
_EXAMPLES_RE = re.compile(
    # "the extensions such as len, sorted or filter?"
    rf",?\s+{_SUCH_AS}\s+{_LIST}(?=\s*(?:[?？.!;:]|$))"
    # "Which extensions, such as len or sorted, need ...?": an aside, both commas go
    rf"|\s*,\s*{_SUCH_AS}\s+{_LIST},"
    # "What backends (e.g. Redis, Memcached) ...?"
    rf"|\s*\({_SUCH_AS}\s[^()]*\)",
    re.IGNORECASE,
)
#: A yes/no question about the examples ("Does it support formats such as
#: YAML?") asks about them: only a question asking for something drops them.
_WH_Q_RE = re.compile(r"^\s*(?:who|whom|whose|which|what|where|when|why|how)\b", re.IGNORECASE)


def without_examples(question: str) -> str:
    """``question`` without the examples it gives of what it asks about
    ("Which module do I import parse from to use the extensions such as len,
    sorted or filter?" -> "... to use the extensions?"); the question itself
    when it asks yes or no, has none, or would be left with nothing."""
    if not _WH_Q_RE.match(question):
        return question
    kept = _EXAMPLES_RE.sub("", question)
    return kept if kept != question and terms(kept) else question


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


# -------------------------------------------------- the effective question


def answer_language(question: str) -> str:
    """The language an answer to ``question`` is written in: "zh" or "en"."""
    return "zh" if detect_language(question) == "zh" else "en"


def effective_question(question: str, history: list[Message]) -> str:
    """The question with a follow-up's reference resolved from the history
    ("Does it include SSO?" -> "Does Pro plan include SSO?"), by the same rule
    as the rewrite role; the question itself when it stands on its own."""
    if not history:
        return question
    if not is_follow_up(question, history):
        return question
    out = rewrite(RewriteInputs(question=question, history=history, max_rewrites=1))
    return out.rewrites[0] if out.rewrites else question
