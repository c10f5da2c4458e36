"""Loaders: files on disk -> Documents (text + title + ACL + metadata).

    load_tree(root, metadata_keys=None)   file or folder (walked recursively, sorted)
      for each file: LOADERS[suffix](path, source)
        .md .markdown  front matter + Markdown      (one Document)
        .txt           front matter + plain text    (one Document)
        .rst           front matter + reStructuredText as plain text: markup kept
                       (.txt and .rst: underlined titles are headings)
        .html .htm     front matter + text only, headings kept; a <meta name>
                       naming access skips the page (one Document)
        .jsonl         one Document per line        (source "file.jsonl#<id or line>")
        .pdf           text layer via pypdf         (one Document)
      title: front matter's, else the first level-1 heading (.rst / .txt: a lone
             top-level title at the start, as docutils reads it), else the file name
      -> (documents, skipped[(path, reason)])

A file that cannot be read (unsupported extension, binary, empty, not UTF-8,
a name that is not UTF-8, broken PDF, headings with no text under them) is
reported in ``skipped`` and the rest still load. Hidden files and folders
(".git", ".DS_Store") are ignored without a report. Symbolic links are read only when they resolve inside the
ingested folder, and links to folders are never walked.

A document or JSONL record holding a lone surrogate (a JSON "\\ud800" escape,
a PDF text layer) is skipped with the field named: UTF-8 cannot encode it, so
it could be neither hashed nor stored.

Front matter (store/front_matter.py) is read by every text loader (.md,
.txt, .rst, .html): a ``---`` block of ``key: value`` lines, a ``+++`` TOML
block, or an HTML comment of ``key: value`` lines at the top, after any blank
lines, BOM or zero-width characters. A metadata block that is malformed, or
that a reader would take for metadata but is not read (a ``----`` fence, an
HTML comment or first paragraph naming access), skips the file: it would
otherwise be public body text.

    front matter / JSONL record
      -> metadata_access_error (store/acl_keys.py)   a key whose words name
           access (read_roles, owner, org_id, "rоles" in Cyrillic), at the
           top or nested at any depth, or a value such as "confidential"
                                                      -> skip, key named
      -> title, roles, users, tenant pulled out       a name with a comma
                                                      -> skip: write [a, b]
      -> every other key is chunk metadata; with ``metadata_keys`` given
         (strict mode) a key outside {title, roles, users, tenant} and
         those keys skips the file or record, key named

Stored as metadata, an access-looking key would leave the document public,
so every refusal fails closed. Any exception a parser raises (pypdf's
decompression limits, an HTML or TOML parser fault) skips that one file with
its name and the problem; the rest of the folder still loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from selfrag_nb.errors import InputError, InputTypeError, PathNotFoundError
from selfrag_nb.store.acl import ACL_KEYS
from selfrag_nb.store.acl_keys import metadata_access_error, names_access
from selfrag_nb.store.chunking import HeadingStyle, first_title, has_body_text
from selfrag_nb.store.front_matter import normalise_lines, parse_front_matter

__all__ = [
    "LOADERS",
    "Document",
    "Loaded",
    "SkipFile",
    "count_files",
    "load_file",
    "load_tree",
    "parse_front_matter",
    "printable",
]


class SkipFile(Exception):  # noqa: N818 - a control-flow signal carrying the skip reason, not an error
    """Raised by a loader: this file (or record) is skipped, for ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Document:
    """One loaded document before chunking."""

    source: str
    text: str
    title: str
    kind: str  # markdown | text | html | jsonl | pdf: decides how it is chunked
    roles: tuple[str, ...] | None = None  # None: not stated by the document
    users: tuple[str, ...] | None = None
    tenant: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    #: sha256 of the raw bytes (or the canonical JSON of a JSONL record)
    raw_hash: str = ""
    #: the keys the file itself wrote (front matter, JSONL fields other than
    #: text and id): what strict mode (``metadata_keys``) checks
    declared: tuple[str, ...] = ()

    @property
    def heading_style(self) -> HeadingStyle:
        """How its headings are written (chunking.HeadingStyle): Markdown's, the
        "# " lines the HTML loader writes for <h1>..<h6>, or underlined titles
        (reStructuredText and plain text)."""
        return _HEADING_STYLES.get(self.kind, "none")


# --------------------------------------------------------------------------- helpers


def _read_text(path: Path, *, separators: bool = True) -> tuple[str, bytes]:
    """Text and raw bytes; ``separators``: U+2028 / U+2029 / U+0085 become
    newlines too (not for JSONL, where they may sit inside a JSON string)."""
    data = path.read_bytes()
    if not data.strip():
        raise SkipFile("empty file")
    if b"\x00" in data[:8192]:
        raise SkipFile("binary file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkipFile(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if not text.strip():
        raise SkipFile("empty file")
    return (normalise_lines(text) if separators else text.replace("\r\n", "\n").replace("\r", "\n")), data


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# A lone surrogate (from a JSON "\ud800" escape, a PDF's text layer, or a file
# name that is not UTF-8, which os.fsdecode turns into U+DC80..U+DCFF) is a str
# that UTF-8 cannot encode: hashing, LanceDB and printing all raise on it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with lone surrogates as ``\\udcff`` escapes: safe to encode and print."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _surrogate_in(value: Any, where: str) -> str | None:
    """'<where> contains a lone surrogate (U+D800)' for the first one in a
    string, or in the keys and values of nested lists and dicts; else None."""
    if isinstance(value, str):
        m = _SURROGATE.search(value)
        return None if m is None else f"{where} contains a lone surrogate (U+{ord(m.group()):04X})"
    if isinstance(value, dict):
        for key, item in value.items():
            name = printable(str(key))
            found = _surrogate_in(key, f"a key of {where or 'the record'}")
            found = found or _surrogate_in(item, f"{where}.{name}" if where else name)
            if found:
                return found
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _surrogate_in(item, f"{where}[{i}]")
            if found:
                return found
    return None


def _document_surrogate(doc: Document) -> str | None:
    fields = {"text": doc.text, "title": doc.title, "metadata": doc.metadata}
    fields.update({"roles": doc.roles or (), "users": doc.users or (), "tenant": doc.tenant or ""})
    for name, value in fields.items():
        found = _surrogate_in(value, name)
        if found:
            return found
    return None


def _no_comma(name: str, key: str, where: str) -> str:
    # "roles: finance, hr" is one role named "finance, hr" that nobody has:
    # the author meant two, so say how to write them.
    if "," in name:
        parts = ", ".join(p.strip() for p in name.split(",") if p.strip())
        raise SkipFile(f"{key!r} name {name!r} holds a comma in {where}: write a list [{parts}]")
    return name


def _as_names(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise SkipFile(f"{key!r} must be a name or a list of names in {where}, got {value!r}")
    return tuple(_no_comma(v.strip(), key, where) for v in value)


def _split_meta(meta: dict[str, Any], where: str) -> dict[str, Any]:
    """title/roles/users/tenant pulled out; the rest stays metadata.

    Raises SkipFile for metadata that names access without declaring it
    (store/acl_keys.py), and for an ACL name holding a comma."""
    refused = metadata_access_error(meta)
    if refused is not None:
        raise SkipFile(f"{refused} ({where})")
    out: dict[str, Any] = {"metadata": {}, "declared": tuple(str(k) for k in meta)}
    for key, value in meta.items():
        if key == "title":
            out["title"] = str(value)
        elif key in ("roles", "users"):
            out[key] = _as_names(value, key, where)
        elif key == "tenant":
            if value is not None and not isinstance(value, (str, int)):
                raise SkipFile(f"'tenant' must be a name in {where}, got {value!r}")
            # Declared but blank ("tenant:", "", null) stays "": refused by
            # effective_acl, because it would read as "every tenant".
            out["tenant"] = "" if value is None else _no_comma(str(value), key, where)
        else:
            out["metadata"][key] = value
    return out


# --------------------------------------------------------------------------- loaders

_HEADING_STYLES: dict[str, HeadingStyle] = {"markdown": "markdown", "html": "atx", "text": "underline"}


def _titled(parts: dict[str, Any], body: str, style: HeadingStyle, path: Path) -> None:
    """Title: the front matter's, else the first level-1 heading, else the file name.
    Headings live in chunk context, not text: a file of headings alone would
    store no chunk, and with nothing stored count as added on every ingest."""
    if not has_body_text(body, headings=style):
        raise SkipFile("no text under the headings")
    if "title" not in parts:
        parts["title"] = first_title(body, style) or path.stem


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(the document's title/ACL/metadata parts, body) of a text file."""
    try:
        meta, body = parse_front_matter(text)
    except ValueError as exc:
        raise SkipFile(f"bad front matter: {exc}") from exc
    if not body.strip():
        raise SkipFile("empty file (front matter only)")
    return _split_meta(meta, "front matter"), body


def load_markdown(path: Path, source: str) -> list[Document]:
    text, data = _read_text(path)
    parts, body = _front_matter(text)
    _titled(parts, body, "markdown", path)
    return [Document(source=source, text=body.strip("\n"), kind="markdown", raw_hash=_sha(data), **parts)]


def load_text(path: Path, source: str) -> list[Document]:
    text, data = _read_text(path)
    # Front matter in a .txt or .rst file is read as in Markdown: left as text,
    # its "roles: [finance]" would be searchable in a public document.
    parts, body = _front_matter(text)
    _titled(parts, body, "underline", path)
    return [Document(source=source, text=body.strip("\n"), kind="text", raw_hash=_sha(data), **parts)]


class _HTMLText(HTMLParser):
    """Text of an HTML page; headings become Markdown headings so chunking sees them."""

    _SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
    _BLOCK = frozenset(
        {"p", "div", "br", "li", "tr", "section", "article", "header", "footer", "table", "ul", "ol"}
        | {"blockquote", "pre", "hr", "main", "nav", "aside", "dd", "dt", "figure", "figcaption"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.h1 = ""
        self._skip_depth = 0
        self._in_title = False
        self._heading: int | None = None
        self._heading_text: list[str] = []
        #: <meta name="..."> names that name access: not read as access control
        self.access_meta: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            found = dict(attrs)
            name = found.get("name") or found.get("property") or ""
            if name in ACL_KEYS or names_access(name):
                self.access_meta.append(name)
        elif tag == "title":
            self._in_title = True
        elif tag in self._SKIP:
            self._skip_depth += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self._heading = int(tag[1])
            self._heading_text = []
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self._SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            text = " ".join("".join(self._heading_text).split())
            if text:
                if self._heading == 1 and not self.h1:
                    self.h1 = text
                self.parts.append(f"\n\n{'#' * self._heading} {text}\n\n")
            self._heading = None
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif self._skip_depth:
            return
        elif self._heading is not None:
            self._heading_text.append(data)
        else:
            self.parts.append(data)


def load_html(path: Path, source: str) -> list[Document]:
    raw, data = _read_text(path)
    parts, raw = _front_matter(raw)  # a Jekyll-style page: front matter, then HTML
    parser = _HTMLText()
    parser.feed(raw)
    parser.close()
    if parser.access_meta:
        name = parser.access_meta[0]
        raise SkipFile(
            f"<meta name={name!r}> looks like access control but is not read as such: declare "
            "access with 'roles', 'users' or 'tenant' in a '---' front matter block at the top"
        )
    lines = [" ".join(line.split()) for line in "".join(parser.parts).split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    if not text:
        raise SkipFile("no text in HTML")
    if not has_body_text(text, headings="atx"):
        raise SkipFile("no text under the headings")
    parts.setdefault("title", " ".join(parser.title.split()) or parser.h1 or path.stem)
    return [Document(source=source, text=text, kind="html", raw_hash=_sha(data), **parts)]


def load_jsonl(path: Path, source: str) -> tuple[list[Document], list[tuple[str, str]]]:
    """One Document per line; bad lines are skipped one by one, the rest load."""
    text, _ = _read_text(path, separators=False)
    docs: list[Document] = []
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{source}#{lineno}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            skipped.append((where, f"line {lineno} is not JSON: {exc.msg}"))
            continue
        if not isinstance(rec, dict):
            skipped.append((where, f"line {lineno} is not a JSON object"))
            continue
        bad = _surrogate_in(rec, "")
        if bad:
            # checked before the id, title or hash use the record: each would raise
            skipped.append((where, f"line {lineno}: {bad}"))
            continue
        body = rec.get("text")
        if not isinstance(body, str) or not body.strip():
            skipped.append((where, f"line {lineno} has no 'text' string"))
            continue
        rid = rec.get("id")
        key = str(rid).strip() if rid is not None and str(rid).strip() else str(lineno)
        doc_source = f"{source}#{key}"
        if doc_source in seen:
            skipped.append((doc_source, f"line {lineno} repeats id {key!r}"))
            continue
        seen.add(doc_source)
        meta = {k: v for k, v in rec.items() if k not in ("text", "id")}
        try:
            parts = _split_meta(meta, f"line {lineno}")
        except SkipFile as exc:
            skipped.append((doc_source, exc.reason))
            continue
        parts.setdefault("title", f"{path.stem} {key}")
        canon = json.dumps(rec, sort_keys=True, ensure_ascii=False).encode()
        docs.append(
            Document(source=doc_source, text=body.strip(), kind="jsonl", raw_hash=_sha(canon), **parts)
        )
    return docs, skipped


def load_pdf(path: Path, source: str) -> list[Document]:
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError, PdfReadError

    data = path.read_bytes()
    if not data.strip():
        raise SkipFile("empty file")
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            raise SkipFile("encrypted PDF")
        pages = [(p.extract_text() or "").strip() for p in reader.pages]
        info_title = (reader.metadata.title if reader.metadata else None) or ""
    except SkipFile:
        raise
    except LimitReachedError as exc:
        # a small file whose streams expand past pypdf's limits: a decompression bomb
        raise SkipFile(
            f"PDF content expands past pypdf's safety limit (a decompression bomb?): {exc}"
        ) from exc
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise SkipFile(f"unreadable PDF: {exc}") from exc
    text = "\n\n".join(p for p in pages if p)
    if not text.strip():
        raise SkipFile("PDF has no text layer")
    return [
        Document(
            source=source,
            text=text,
            title=str(info_title).strip() or path.stem,
            kind="pdf",
            metadata={"pages": len(pages)},
            raw_hash=_sha(data),
        )
    ]


Loaded = tuple[list[Document], list[tuple[str, str]]]


def _whole(loader: Callable[[Path, str], list[Document]]) -> Callable[[Path, str], Loaded]:
    """A loader of one document per file, as a loader that can also skip."""

    def load(path: Path, source: str) -> Loaded:
        return loader(path, source), []

    return load


#: suffix -> loader(path, source) -> (documents, skipped). Add an entry for a new format.
LOADERS: dict[str, Callable[[Path, str], Loaded]] = {
    ".md": _whole(load_markdown),
    ".markdown": _whole(load_markdown),
    ".txt": _whole(load_text),
    ".rst": _whole(load_text),  # reStructuredText read as plain text, directives and all
    ".html": _whole(load_html),
    ".htm": _whole(load_html),
    ".jsonl": load_jsonl,
    ".pdf": _whole(load_pdf),
}


#: Keys every file may write in strict mode: the title and the ACL.
_ALWAYS_ALLOWED = frozenset({"title", *ACL_KEYS})


def _allowed_keys(metadata_keys: Iterable[str] | None) -> frozenset[str] | None:
    """``metadata_keys`` checked: None (any key) or the keys allowed besides
    title and the ACL keys."""
    if metadata_keys is None:
        return None
    if isinstance(metadata_keys, str) or not isinstance(metadata_keys, Iterable):
        # a str would be read letter by letter: "owner" -> {"o", "w", ...}
        raise InputTypeError(
            f"metadata_keys must be a collection of key names, got {type(metadata_keys).__name__}"
        )
    keys = list(metadata_keys)
    bad = [k for k in keys if not isinstance(k, str) or not k.strip()]
    if bad:
        raise InputError(f"metadata_keys must hold non-blank key names, got {bad[0]!r}")
    return _ALWAYS_ALLOWED | frozenset(keys)


def _strict(doc: Document, allowed: frozenset[str] | None) -> str | None:
    """Why ``doc`` breaks strict mode (a key it wrote is not allowed), or None."""
    if allowed is None:
        return None
    extra = [k for k in doc.declared if k not in allowed]
    if not extra:
        return None
    return (
        f"metadata key {printable(extra[0])!r} is not among the allowed keys (metadata_keys: "
        f"{', '.join(sorted(allowed - _ALWAYS_ALLOWED)) or 'none'}; always: title, roles, users, "
        "tenant): add it to metadata_keys, or remove it from the file"
    )


def load_file(
    path: Path, source: str, *, metadata_keys: Iterable[str] | None = None
) -> tuple[list[Document], list[tuple[str, str]]]:
    """Documents of one file plus what was skipped in it (never raises SkipFile,
    nor anything a parser raises: that is a skip too).

    ``metadata_keys`` (strict mode): the metadata keys a file or JSONL record
    may write besides title/roles/users/tenant; a document writing another
    is skipped with the key named. None: any key that does not name access."""
    allowed = _allowed_keys(metadata_keys)
    if _SURROGATE.search(source):
        return [], [(printable(source), f"file name is not valid UTF-8: {source!r}")]
    suffix = path.suffix.lower()
    loader = LOADERS.get(suffix)
    if loader is None:
        return [], [(source, f"unsupported file type {suffix or '(no extension)'!r}")]
    try:
        loaded, skipped = loader(path, source)
        docs = []
        for doc in loaded:
            bad = _document_surrogate(doc) or _strict(doc, allowed)
            if bad:
                skipped.append((doc.source, bad))
            else:
                docs.append(doc)
        if not docs and not skipped:
            skipped = [(source, "no documents in file")]
        return docs, skipped
    except SkipFile as exc:
        return [], [(source, exc.reason)]
    except OSError as exc:
        return [], [(source, f"cannot read: {exc.strerror or exc}")]
    except Exception as exc:  # noqa: BLE001 - one file's parser fault must not abort the folder
        # pypdf's own limits, an HTML parser assertion, a MemoryError: the file
        # is skipped with the problem named, and the rest of the folder loads.
        problem = printable(str(exc))[:300] or "no message"
        return [], [(source, f"cannot load {printable(source)}: {type(exc).__name__}: {problem}")]


def _outside(path: Path, real_root: Path) -> str | None:
    """Why ``path`` must not be read when a symbolic link (the path itself, or
    a link further down its chain) resolves outside the ingested folder: a
    link to /etc/passwd in a shared folder would otherwise store that file
    for everyone who may read the folder. None when it stays inside."""
    try:
        target = path.resolve()
    except (OSError, RuntimeError) as exc:  # a link loop: RuntimeError before Python 3.13
        return f"symbolic link cannot be resolved ({exc})"
    if target == real_root or real_root in target.parents:
        return None
    return f"symbolic link leaves the ingested folder (-> {printable(str(target))})"


def count_files(root: Path, paths: Iterable[Path] | None = None) -> int:
    """How many files ``load_tree(root)`` will read: regular files outside
    hidden folders (the count a progress bar promises)."""
    listed = root.rglob("*") if paths is None else paths
    return sum(
        1 for p in listed if not any(x.startswith(".") for x in p.relative_to(root).parts) and p.is_file()
    )


def load_tree(
    root: str | os.PathLike[str],
    *,
    metadata_keys: Iterable[str] | None = None,
    on_file: Callable[[int, int, str], None] | None = None,
) -> tuple[list[Document], list[tuple[str, str]]]:
    """Load a file, or every file under a folder (sorted, recursive).

    Sources are posix paths relative to the folder (a single file: its name).
    What is neither a file nor a folder (FIFO, socket, device, broken link)
    and links to folders (not followed) are reported in ``skipped``: a FIFO
    is never opened, since reading one blocks until a writer comes. A link
    whose target resolves outside the folder is skipped too; a link to a
    file inside it is read under the link's own name (the content is then
    stored under both names: harmless, and what the folder says).

    ``metadata_keys``: strict mode, as in ``load_file``. ``on_file(i, n, source)``
    is told before each file is read; ``n`` is known before the first (the
    folder is listed first), so a progress bar has its total at once."""
    if not isinstance(root, str | os.PathLike):
        raise InputTypeError(f"path to ingest must be a str or os.PathLike, got {type(root).__name__}")
    if isinstance(root, str) and not root.strip():
        # Path("") is the current directory: a blank path must not ingest it.
        raise InputError("nothing to ingest: the path is blank")
    # checked (and a one-shot iterator read) once, before anything is read
    allowed = _allowed_keys(metadata_keys)
    root = Path(root)
    if not root.exists():
        raise PathNotFoundError(f"nothing to ingest: {root} does not exist", path=root)
    if root.is_file():
        return load_file(root, root.name, metadata_keys=allowed)
    if not root.is_dir():
        return [], [(root.name, "not a regular file or folder (FIFO, socket or device)")]
    docs: list[Document] = []
    skipped: list[tuple[str, str]] = []
    real_root = root.resolve()
    paths = sorted(root.rglob("*"))
    n_files = count_files(root, paths)
    n_read = 0
    for path in paths:
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if _SURROGATE.search(rel.as_posix()):
            skipped.append((printable(rel.as_posix()), f"file name is not valid UTF-8: {rel.as_posix()!r}"))
            continue
        outside = _outside(path, real_root)
        if outside is not None and path.exists():
            skipped.append((rel.as_posix(), outside))
            continue
        if not path.is_file():
            if path.is_symlink() and path.is_dir():
                skipped.append((rel.as_posix(), "symbolic link to a folder (not followed)"))
            elif path.is_symlink() and not path.exists():
                skipped.append((rel.as_posix(), "broken symbolic link"))
            elif not path.exists():
                skipped.append((rel.as_posix(), "cannot read: removed while the folder was being ingested"))
            elif not path.is_dir():
                skipped.append((rel.as_posix(), "not a regular file (FIFO, socket or device)"))
            continue
        if on_file is not None:
            on_file(n_read, n_files, rel.as_posix())
        n_read += 1
        d, s = load_file(path, rel.as_posix(), metadata_keys=allowed)
        docs.extend(d)
        skipped.extend(s)
    return docs, skipped
