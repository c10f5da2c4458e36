"""What an answer may quote: the whole sentences of clean chunk text.

    lexical <- quotable <- generate | verify
               ^^^^^^^^ here (layer 2): of this package, imports lexical; generate quotes
                        what it returns, verify reads a lead-in with its list
                        as generate quotes it (listed).

    clean chunk text --lines()--> (kind, line): text, item, code
      -> code lines: never
      -> each line's sentences: whole ones (closing punctuation), a list item
         of three words or more, a whole line of prose (_prose); a heading, a
         caption, a name, a piece cut mid-sentence or one that opens on a
         small conjunction ("but compiling ..."): not
      -> a bracketed remark kept with its sentence (_bracketed); a sentence
         pointing back at the one before ("This is no longer necessary.")
         marked so
      -> lead-ins ("...:"): whose items are gone, or over code not asked for
         when the clause is whole (_stands_alone), or carrying its own code
         ("..., pass width=2:", _own_code) when not read with a block, a
         statement; announcing an
         example ("..., e.g.:"), the statement before it; "X and supports the
         following:", the first conjunct (_first_conjunct)
      -> several=True: a lead-in (":" or an ellipsis) read with its short
         items as one sentence, "X: a, b, c." (_with_items)
      -> how_to=True: a lead-in read with its short code block, "... using:
         `cmd`." (_with_code; a line without closing punctuation right over
         the block is a lead-in whose colon was left out)
    listed(text) -> every lead-in read with its list or its code
    headed_code(heading, text) -> a section that is only a short code block,
         read with its heading: "Installation: `pip install x`."

Heuristics: ``docs/offline_model.md`` (generate).
"""

from __future__ import annotations

import itertools
import re

from selfrag_nb.codelines import FENCE_RE, ITEM_RE, lines
from selfrag_nb.llm.offline.lexical import INSTRUCTION_VERBS, STOP_EN, sentences
from selfrag_nb.text import tokenize

__all__ = [
    "CODE_CHARS_MAX",
    "CODE_LINES_MAX",
    "LIST_ITEMS_MAX",
    "headed_code",
    "listed",
    "quotable",
    "table_leads",
]


#: A sentence that ends: closing punctuation, then closing quotes or brackets.
_ENDED_RE = re.compile(r"[.!?。！？；…][\"'”’)\]）」』]*$")


_TERM_DASH_RE = re.compile(r"\s(?:--|—|–|\|)\s")
#: A name in code: words joined by "_" or ".", two letters or more each, or a call.
_CODE_TERM_RE = re.compile(r"\b[A-Za-z]\w+(?:[._][A-Za-z0-9]\w+)+\b|\b\w+\(\)")


def _glossed_code(item: str) -> bool:
    """A "term -- gloss" item whose term names code ("Fonts (user_fonts_dir)
    -- user-writable font installation directory") says what that code is:
    an API entry, not a table of contents ("Guides -- recipes for ...")."""
    m = _TERM_DASH_RE.search(item)
    return m is not None and bool(_CODE_TERM_RE.search(item[: m.start()]))


#: A lead-in that opens on a name written in lower case after a full stop
#: ("... and others. psutil currently supports the following platforms:"):
#: the full stop ends a word of three letters or more (not "etc." or
#: "approx."), and two lower-case words follow (a clause, not "e.g. foo").
_LOWER_START_RE = re.compile(r"(?<=[a-z]{3}[.!?])(?<!\betc\.)(?<!approx\.)\s+(?=[a-z][\w-]*\s+[a-z])")

#: A sentence opening on a small conjunction continues one begun before a
#: break (a code block between: "... with: `pip install x` but compiling
#: from source ... should work"): half a sentence, whose other half is gone.
_CONTINUES_RE = re.compile(r"^(?:but|and|or|nor|so|which|because|whereas)\b")


def _prose(line: str) -> bool:
    """A whole line of prose without a full stop ("Library to resolve JSON
    Pointers according to RFC 6901"): six words or more, or four after an
    indefinite article ("A pure python RFC3986 validator": a description),
    mostly lower-case after the first. A title capitalises its words; a
    fragment is short."""
    if _TERM_DASH_RE.search(line):
        return False  # "Platform details -- default paths": a term and its gloss
    words = line.split()
    rest = [w for w in words[1:] if w[:1].isalpha()]
    long_enough = len(words) >= 6 or (len(words) >= 4 and words[0] in ("A", "An"))
    return long_enough and bool(rest) and sum(w[:1].islower() for w in rest) / len(rest) >= 0.5


#: A sentence that opens by pointing back at the one before it: its subject
#: is that sentence's ("Older versions required X. This is no longer necessary.",
#: "X aims at being a WebSocket library. Its support for HTTP is minimal."),
#: or a connective that only means something after it ("X is hashable only
#: when frozen. Otherwise it throws a RuntimeError."), or a condition whose
#: verb leaves out what the sentence before says ("It will refuse to evaluate
#: X. If we try, it raises CannotEval.", "If so, ...", "If not, ...").
_REFERS_BACK_RE = re.compile(
    r"^(?:(?:this|that|these|those|it|its|they|their|such|otherwise|however|instead)\b(?!\s*[:=(])|"
    r"if\s+(?:so|not|(?:we|you|it|they|one)\s+(?:do|does|did|try|tries|tried))(?=\s*[,;]))",
    re.IGNORECASE,
)


def _bracketed(said: list[str]) -> list[str]:
    """Sentences of one line with a bracket kept whole: a remark in brackets
    after a full stop belongs to the sentence before it ("wsproto - WebSocket
    support. (Optional, with httpx2[ws])"), and a sentence does not end
    inside brackets ("(Optional. On 3.14+ it installs nothing.)")."""
    out: list[str] = []
    for sent in said:
        open_before = bool(out) and out[-1].count("(") > out[-1].count(")")
        if out and (open_before or sent.lstrip().startswith("(")):
            out[-1] = f"{out[-1]} {sent}"
        else:
            out.append(sent)
    return out


#: Words after which a lead-in points at what follows ("as follows:", "the following:").
_POINTING = frozenset({"following", "follows", "e.g", "example", "instance"})


def _stands_alone(lead: str) -> bool:
    """A lead-in ending in ":" is a statement without what follows it: its
    last clause (after the last comma) has three words or more and does not
    end in a function word or a pointer, and it does not open with an
    imperative, which the code carries out ("To add it, use:", "Run it with:",
    "as follows:", "Install the latest version of X:" need their code;
    "Released under the BSD license:" does not)."""
    words = tokenize(lead.rstrip().rstrip(":：").rsplit(",", 1)[-1])
    opens = {w[0] for w in (tokenize(lead), words) if w}
    return len(words) >= 3 and words[-1] not in STOP_EN | _POINTING and not opens & INSTRUCTION_VERBS


#: Code in a lead-in's own words: a keyword argument ("ambiguous_width=2"),
#: a call ("freeze()"), a long option ("--strict").
_OWN_CODE_RE = re.compile(
    r"(?<![\w-])(?:[A-Za-z_][\w.]*=[^\s,:;]+|[A-Za-z_][\w.]*\(\)|--[a-z][\w-]+)(?=[\s,:;.]|$)"
)


def _own_code(lead: str) -> bool:
    """The lead-in ends on its code ("For wide terminals, pass
    ambiguous_width=2:"): a statement by itself when its example is not read
    with it (cut off with the chunk, too long, or not asked for). Code
    earlier in the clause is its subject, the statement still to come ("By
    default, load_dotenv() will:" over its items)."""
    clause = lead.rstrip().rstrip(":：").rsplit(",", 1)[-1]
    return any(m.end() == len(clause) for m in _OWN_CODE_RE.finditer(clause))


def table_leads(text: str) -> set[str]:
    """Lines of ``text`` that end with ":" and introduce a table: its rows
    are the lead-in's items once ``surface.readable`` turns them into sentences."""
    rows = [ln.strip() for ln in text.split("\n") if ln.strip()]
    return {a for a, b in itertools.pairwise(rows) if a.endswith((":", "：")) and b.startswith("|")}


#: A lead-in whose last conjunct points at the items that follow
#: ("... and supports the following platforms:").
_LEAD_CONJUNCT_RE = re.compile(
    r"^(?P<first>.{12,}?)\s+and\s+(?:[\w-]+\s+){0,3}?(?:the\s+following|these|as\s+follows|below)\b[^.!?]*:\s*$",
    re.IGNORECASE,
)


def _first_conjunct(sentence: str) -> str:
    """The statement before "and" in a lead-in whose second conjunct
    announces the list ("X requires Python 3.10 and supports the following
    platforms:" -> "X requires Python 3.10."), or ""."""
    m = _LEAD_CONJUNCT_RE.match(sentence.strip())
    if m is None:
        return ""
    return m.group("first").rstrip(" ,;") + "."


#: A list read with its lead-in: between two and this many items, each a
#: phrase or one sentence of at most _ITEM_WORDS_MAX words.
LIST_ITEMS_MAX = 12
_ITEM_WORDS_MAX = 30


#: How a lead-in ends: a colon, or an ellipsis standing for one ("has the
#: following dependencies..." over a list).
_LEAD_ENDS = (":", "...", "…")


def _with_items(lead: str, rest: list[tuple[str, str]]) -> str:
    """A lead-in ending with ":" (or "...") read with the list items right after it,
    as one sentence ("Formats: a, b and c."), or "" when it has no such
    list. Only items that are a phrase or one sentence of up to
    _ITEM_WORDS_MAX words are gathered: a list of longer items is quoted item
    by item, and "term -- what it is" items (a table of contents) are not
    instances of anything. A line that stops on a function word with no
    closing punctuation ("Playwright is also available in" over its items)
    is a lead-in whose colon was left out: the list completes the sentence."""
    if not lead.rstrip().endswith(_LEAD_ENDS):
        last = tokenize(lead)[-1:]
        if _ENDED_RE.search(lead) or not last or last[0] not in STOP_EN:
            return ""
    items: list[str] = []
    for kind, line in rest:
        if kind != "item" or len(items) > LIST_ITEMS_MAX:
            break
        m = ITEM_RE.match(line)
        item = line[m.end() :].strip().rstrip(".;,") if m else ""
        if not item or len(tokenize(item)) > _ITEM_WORDS_MAX or len(sentences(item)) > 1:
            return ""
        if _TERM_DASH_RE.search(item):
            return ""  # "Guides -- recipes for ...": a table of contents, not instances
        items.append(item)
    if not 2 <= len(items) <= LIST_ITEMS_MAX:
        return ""
    sep = "; " if any("," in i for i in items) else ", "
    return f"{lead.rstrip()} {sep.join(items)}."


#: Code read with its lead-in: at most this many commands and characters.
CODE_LINES_MAX = 4
CODE_CHARS_MAX = 240
_CODE_PROMPT_RE = re.compile(r"^\s*(?:\$|>>>|\.\.\.)(?:\s+|$)")


def _with_code(lead: str, rest: list[tuple[str, str]]) -> str:
    """A lead-in ending with ":" read with the code block right after it, as
    one sentence ("... is installed using: `env X=1 pip install y`."), or ""
    when no short block follows. A line of three words or more without
    closing punctuation right over the block is a lead-in whose colon was
    left out ("Convert notebooks with the CLI: `tool convert x`."). Shell and REPL prompts are dropped; when a
    block has prompts, the lines without one are output and are dropped too;
    a line ending in a backslash continues on the next."""
    lead = lead.rstrip()
    if not lead.endswith(":"):
        if _ENDED_RE.search(lead) or len(tokenize(lead)) < 3 or not rest or rest[0][0] != "code":
            return ""
        lead += ":"
    block: list[str] = []
    for kind, line in rest:
        if kind != "code":
            break
        if FENCE_RE.match(line):
            if block:
                break  # the closing fence
            continue
        block.append(line.strip())
    commands: list[str] = []
    for ln in (ln for ln in block if ln):
        if commands and commands[-1].endswith("\\"):
            commands[-1] = f"{commands[-1][:-1].rstrip()} {ln}"
        else:
            commands.append(ln)
    if any(_CODE_PROMPT_RE.match(c) for c in commands):
        commands = [_CODE_PROMPT_RE.sub("", c, count=1) for c in commands if _CODE_PROMPT_RE.match(c)]
    code = "; ".join(commands)
    if not commands or len(commands) > CODE_LINES_MAX or len(code) > CODE_CHARS_MAX or "`" in code:
        return ""
    return f"{lead} `{code}`."


def headed_code(heading: str, text: str) -> str:
    """A section whose whole body is a short code block ("Installation" over
    "pip install x" and nothing else) read as one sentence with its
    heading's last part as the lead ("Installation: `pip install x`."), or
    "" (no heading, any text in the body, or no short block)."""
    last = heading.rsplit(">", maxsplit=1)[-1].strip()
    found = [(kind, line) for kind, line in lines(text) if line.strip()]
    if not last or not found or any(kind != "code" for kind, _ in found):
        return ""
    return _with_code(f"{last}:", found)


def listed(text: str) -> list[str]:
    """Every lead-in of clean chunk text read with its list ("Formats: a, b
    and c.") or its code ("... using: `pip install x`."): what verify reads
    as one evidence sentence, as generate quotes it."""
    found = lines(text)
    out: list[str] = []
    for n, (kind, line) in enumerate(found):
        said = sentences(line) if kind != "code" else []
        for read in (_with_items, _with_code):
            if said and (joined := read(said[-1], found[n + 1 :])):
                out.append(joined)
    return out


#: The end of a sentence that announces an example ("..., e.g.:", "..., for
#: instance:"): what comes before it is a statement by itself.
_EXAMPLE_NEXT_RE = re.compile(r",?\s*\(?(?:e\.\s?g\.|for example|for instance)\)?\s*[:：]$", re.IGNORECASE)


def quotable(
    text: str,
    table_leads: frozenset[str] | set[str] = frozenset(),
    *,
    several: bool = False,
    how_to: bool = False,
) -> list[tuple[str, bool]]:
    """The sentences of clean chunk text an answer may quote: whole ones,
    each with whether it points back at the quotable sentence right before
    it in the same paragraph (``_REFERS_BACK_RE``). Code (fenced blocks,
    prompts, imports, commands) never; a piece without closing punctuation
    (a heading, a caption, a name, the end of a chunk cut mid-sentence) only
    as a list item of three words or more, or a whole line of prose (``_prose``).
    ``several`` (the question asks for several things): a lead-in read with
    its list items is quotable too, as one sentence (``_with_items``);
    ``how_to``: a lead-in read with its code block (``_with_code``)."""
    out: list[tuple[str, bool]] = []
    found = lines(text)
    for n, (kind, line) in enumerate(found):
        if kind == "code":
            continue
        previous = False  # the sentence before, in this line, was quotable
        said = sentences(line)
        follows = found[n + 1][0] if n + 1 < len(found) else ""
        if (
            said
            and said[-1].rstrip().endswith((":", "："))
            and (
                follows == "text"
                or (follows == "code" and not how_to and _stands_alone(said[-1]))
                or (
                    follows != "item"
                    and _own_code(said[-1])
                    and not (how_to and _with_code(said[-1], found[n + 1 :]))
                )
            )
            and line.strip() not in table_leads
        ):
            # A lead-in whose items, code or figure are not there (a paragraph
            # follows: the picture was markup) says what it says by itself:
            # "X is 3-6x faster than a comparable tokeniser:" is a statement.
            # So does a whole clause over code the question does not ask for
            # ("Released under the BSD license::" over the licence's text).
            said[-1] = said[-1].rstrip()[:-1] + ("。" if said[-1].rstrip().endswith("：") else ".")
        if said and said[-1].rstrip().endswith((":", "：")):
            # The sentence splitter keeps "... and others. psutil currently
            # supports the following platforms:" whole (a sentence does not
            # start in lower case, except on a name): the statement before
            # the lead-in is one of its own, not part of the lead-in
            # (nor of the lead-in read with its items).
            said[-1:] = _LOWER_START_RE.split(said[-1])
        # "There are a few language servers that use Jedi:" over a list of
        # names: the lead-in and its items are one statement, the answer to
        # "Which language servers use Jedi?" (one item is not).
        with_items = _with_items(said[-1], found[n + 1 :]) if said and several else ""
        if with_items and said[-1].rstrip().endswith(("...", "…")):
            # An ellipsis lead-in read with its items is not quoted without them.
            said = said[:-1]
        # "... can be disabled if it is installed using:" over a command: the
        # lead-in and its command are the answer to "How do I ...?".
        with_code = _with_code(said[-1], found[n + 1 :]) if said and how_to else ""
        if with_code and not said[-1].rstrip().endswith((":", "：")):
            # "Convert notebooks with the CLI" over its command: the colon
            # left out; read with the command, not without it.
            said = said[:-1]
        if said and (whole := _EXAMPLE_NEXT_RE.sub(".", said[-1].rstrip())) != said[-1].rstrip():
            # "..., set X to a non-empty value, e.g.:" over an example: the
            # statement is whole before the example is announced.
            said[-1] = whole
        if said and (first := _first_conjunct(said[-1])):
            # "X requires 3.10 or later and supports the following:": only
            # the second conjunct points at the items; the first is a statement.
            said[-1:] = [first]
        for sent in _bracketed(said):
            item = (
                kind == "item"
                and len(tokenize(sent)) >= 3
                and (not _TERM_DASH_RE.search(sent) or _glossed_code(sent))
            )
            if _CONTINUES_RE.match(sent):
                previous = False
            elif _ENDED_RE.search(sent) or item or _prose(sent):
                out.append((sent, previous and bool(_REFERS_BACK_RE.match(sent))))
                previous = True
            else:
                previous = False
        out.extend((joined, False) for joined in (with_items, with_code) if joined)
    return out
