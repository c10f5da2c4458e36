"""What Markdown, reStructuredText and HTML lines look like: the patterns and
element names ``selfrag_nb.cleantext`` reads a chunk's blocks by.

Properties of the three markup languages, never words of one corpus. Kept
apart from the parser so the parser reads as its flow.
"""

from __future__ import annotations

import re

from selfrag_nb.codelines import FENCE_RE, ITEM_RE

CRLF_RE = re.compile(r"\r\n?")
EXPLICIT_RE = re.compile(r"^\s*\.\.(?:\s+(.*))?$")
TARGET_RE = re.compile(r"_(?:`[^`]*`|[^:]*):(?:\s|$)")
SUBST_DEF_RE = re.compile(r"\|([^|]+)\|\s+([\w:.+-]+)::\s*(.*)$")
FOOTNOTE_RE = re.compile(r"\[([^\]\s]+)\]\s+")
DIRECTIVE_RE = re.compile(r"([\w:.+-]+)::(?:\s+(.*))?$")
OPTION_RE = re.compile(r"^\s*:[\w .+-]+:(?:\s|$)")
ANON_TARGET_RE = re.compile(r"^\s*__\s+\S+\s*$")
REFDEF_RE = re.compile(r"^\s{0,3}\[([^\]]+)\]:\s*(?:<[^>]*>|\S+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*$")
NOTEDEF_RE = re.compile(r"^\s{0,3}\[\^[^\]]+\]:\s*")
# An adornment: three or more of one punctuation character (RST titles, setext
# headings, rules and transitions).
ADORN_RE = re.compile(r"^\s*([=\-~^\"'`#*+:._<>!$%&,;?@\\/|])\1{2,}\s*$")
ATX_RE = re.compile(r"^\s{0,3}#{1,6}(?:\s+|$)(.*?)(?:\s+#+)?\s*$")
FIELD_RE = re.compile(r"^\s*:([^:\s][^:`]*):(?:\s+|$)")
ROW_RE = re.compile(r"^\s*\|.*\|\s*$")
BORDER_RE = re.compile(r"^\s*(?:\+(?:[-=]+\+)+|=+(?:\s+=+)+)\s*$")
BADGES_RE = re.compile(r"^\s*(?:\|[^|\s][^|]*\|_{0,2}\s*)+$")
DOCTEST_RE = re.compile(r"^\s*>>>(?:\s|$)")
PRE_RE = re.compile(r"^\s*<pre\b", re.IGNORECASE)
QUOTE_RE = re.compile(r"^\s{0,3}>(?!>>)\s?")
OPENERS: tuple[re.Pattern[str], ...] = (FENCE_RE, EXPLICIT_RE, REFDEF_RE, NOTEDEF_RE, ADORN_RE)
OPENERS += (ATX_RE, ITEM_RE, FIELD_RE, ROW_RE, BORDER_RE, DOCTEST_RE, QUOTE_RE)


def names(words: str) -> frozenset[str]:
    return frozenset(words.split())


# The HTML elements a README uses. A bare "<name>" of the second set is also a
# usual placeholder in prose ("cp <source> <dest>"): it counts as a tag only
# with attributes, "/>" or a closing tag.
TAGS = names(
    "a abbr address article aside audio b bdi bdo big blockquote body br caption center cite code col "
    "colgroup dd del details dfn div dl dt em figcaption figure font footer h1 h2 h3 h4 h5 h6 header hr "
    "html i iframe img ins kbd li main mark nav noscript ol p picture pre q rp rt ruby s samp section "
    "small span strike strong sub summary sup svg table tbody td tfoot th thead tr tt u ul var video wbr"
)
AMBIGUOUS_TAGS = names(
    "area base button canvas data dialog embed form head input label link map menu meta object option "
    "output param select slot source template textarea time title track"
)
BLOCK_TAGS = names(
    "address article aside blockquote body center dd details div dl dt figcaption figure footer h1 h2 h3 "
    "h4 h5 h6 header hr html li main nav ol p pre section summary table tbody td tfoot th thead tr ul"
)
HTML_START_RE = re.compile(r"^\s*</?([A-Za-z][A-Za-z0-9]*)\b")
HTML_END_RE = re.compile(r"</([A-Za-z][A-Za-z0-9]*)\s*>\s*$")
# RST directives whose body is code, and those whose body is not text at all.
CODE_DIRECTIVES = names(
    "code code-block sourcecode testcode testoutput doctest ipython jupyter-execute math parsed-literal "
    "prompt"
)
DROPPED_DIRECTIVES = names(
    "image raw include literalinclude toctree contents meta highlight index autosummary sectnum "
    "target-notes header footer default-role role title class csv-table"
)
LANGUAGE_ARGUMENT = names("code code-block sourcecode")
# Directives whose argument is text (an admonition's first words, a topic's title).
TEXT_ARGUMENT = names(
    "note warning tip hint important caution danger attention error seealso admonition topic sidebar "
    "rubric deprecated versionadded versionchanged todo"
)
SENTENCE_END = ".!?。！？,;:，；：、-–—/&+=("

# A link whose text only points at something ("See [documentation](https://...)",
# "checkout the official documentation", "here"): the address is what it says,
# so the clean text keeps it after the words ("documentation (https://...)").
POINTER_TEXT_RE = re.compile(
    r"\s*(?:(?:the|our|its|this|full|official|online|latest|project|api|more|read)\s+)*"
    r"(?:documentation|docs?|here|page|website|site|homepage|home\s+page|guide|manual|reference)\s*",
    re.IGNORECASE,
)
WEB_TARGET_RE = re.compile(r"\s*https?://[^\s<>()]+\s*")


def points(text: str, target: str | None) -> bool:
    """A link's text only points, and its target is a web address."""
    return bool(target and POINTER_TEXT_RE.fullmatch(text) and WEB_TARGET_RE.fullmatch(target))
