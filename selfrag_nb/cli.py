"""``selfrag-nb``: the command line.

    selfrag-nb ingest DIR --kb PATH [--embedder NAME] [--roles a,b] [--users u] [--tenant T] [--prune]
                             [--prefix P/] [--on-conflict skip|replace]
                             [--allow-widen] [--default-access public|private] [--metadata-keys a,b]
      KnowledgeBase.open(--kb) -> ingest(DIR) with a rich progress bar -> summary table
                                  (+ an "access changed" table when any document's ACL changed)
    selfrag-nb search "QUERY" [--kb PATH|sample] [--k N] [--mode M] [--user ID] [--roles a,b] [--tenant T]
                              [--where SQL]
      open_kb(--kb): "sample" or no --kb -> the bundled sample, else KnowledgeBase.open(create=False)
      -> search(user=User(ID, roles)) -> rich table
    selfrag-nb ask "QUESTION" [--kb PATH|sample] [--model M] [--api-base URL] [--user ID] [--roles a,b]
                              [--trace T.json] [--html T.html]
      SelfRAG(KnowledgeBase) -> ask -> one row per stage (rich table) + the outcome
    selfrag-nb eval ...      (selfrag_nb.eval.cli)
    selfrag-nb tour [DIR] | app [DIR]   (selfrag_nb.tour: copy the notebooks, start JupyterLab / marimo)
    selfrag-nb doctor        (selfrag_nb.doctor: what is installed, what is missing, the fix)
    selfrag-nb serve-model [--port N]   (selfrag_nb.llm.local_model: SmolLM2 on 127.0.0.1, no key)

Each subcommand is a ``register(subparsers) -> parser`` function that sets
``func(args) -> int`` on its parser; :data:`SUBCOMMANDS` lists them as
"module:function" so a new subcommand is one line here and its module is only
imported when the parser is built. Exit status: 0 ok, 1 failure, 2 bad input.

Everything printed that did not come from this module's own literals
(document text, ids, sources, headings, titles, answers, questions, paths,
error messages) goes through :func:`shown`: a rich ``Text`` (never parsed as
markup, so ``[/b]`` prints as ``[/b]``) of ``text.printable`` (terminal
controls, bidi overrides and zero-width characters made visible, so a chunk
cannot clear the screen or plant an OSC-8 hyperlink). Text arguments that
are not valid UTF-8 on the command line (Python hands them over as lone
surrogates) are refused with exit status 2 before any work, naming the
argument; paths are exempt (a non-UTF-8 file name is still a file name).

Errors are phrased for the shell: the package's messages name Python
arguments (``create=True``, ``api_key=``, ``embedder='x'``) for API callers;
:func:`for_cli` rewrites those phrases into flags and environment variables
at this boundary (``_fail`` and the eval subcommand use it), so the Python
API keeps its own wording.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from selfrag_nb.text import lone_surrogate, printable

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

__all__ = [
    "SUBCOMMANDS",
    "build_parser",
    "for_cli",
    "invalid_text_argument",
    "main",
    "open_kb",
    "positive_int",
    "register_ask",
    "register_ingest",
    "register_search",
    "shown",
]

#: Parsed text arguments (dest -> shown name) that must be valid Unicode:
#: they reach search filters, ACLs, prompts and the trace.
_TEXT_ARGS: dict[str, str] = {
    "question": "QUESTION",
    "query": "QUERY",
    "user": "--user",
    "roles": "--roles",
    "users": "--users",
    "tenant": "--tenant",
    "where": "--where",
    "model": "--model",
    "api_base": "--api-base",
    "prefix": "--prefix",
}

#: "module:function" registrars, in the order they appear in --help.
SUBCOMMANDS: list[str] = [
    "selfrag_nb.cli:register_ingest",
    "selfrag_nb.cli:register_search",
    "selfrag_nb.cli:register_ask",
    "selfrag_nb.eval.cli:register",
    "selfrag_nb.tour:register_tour",
    "selfrag_nb.tour:register_app",
    "selfrag_nb.doctor:register",
    "selfrag_nb.docs_cli:register",
    "selfrag_nb.llm.local_model:register_serve_model",
]


def shown(value: object) -> Text:
    """Untrusted text for a rich console: a ``Text`` (markup is never
    interpreted) whose terminal controls are made visible. The one way this
    CLI prints anything it did not write itself."""
    from rich.text import Text

    return Text(printable(str(value)))


#: Python phrasings in the package's messages -> what a shell user types instead.
_CLI_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\(pass create=True to make one\)"), "(make one with: selfrag-nb ingest DIR --kb PATH)"),
    (re.compile(r" or pass api_key=\.\.\."), " (the command line reads keys only from the environment)"),
    (re.compile(r" or the api_key= you passed"), ""),
    (re.compile(r"\bapi_base="), "--api-base"),
    (re.compile(r"\bembedder='([^']*)' / '([^']*)'"), r"--embedder \1 / --embedder \2"),
    (re.compile(r"\bembedder='([^']*)'"), r"--embedder \1"),
)


def for_cli(message: object) -> str:
    """A package error message with its Python arguments phrased as CLI flags."""
    text = str(message)
    for pattern, replacement in _CLI_PHRASES:
        text = pattern.sub(replacement, text)
    return text


def _fail(console: Console, command: str, exc: BaseException) -> int:
    """Print ``selfrag-nb COMMAND: <message>`` (message shown as text, phrased
    for the shell by :func:`for_cli`); exit status 2."""
    from rich.text import Text

    console.print(Text.assemble((f"selfrag-nb {command}: ", "red"), shown(for_cli(exc))))
    return 2


#: The ``--kb`` value naming the bundled sample knowledge base (also the default).
SAMPLE = "sample"


def open_kb(spec: str | None, embedder: str | None = None) -> Any:
    """``--kb``: None or "sample" -> the bundled sample (built on first use, with
    a progress bar); anything else an existing knowledge base. A folder named
    ``sample`` in the current directory makes "sample" ambiguous: refused,
    with both spellings named."""
    from pathlib import Path

    from selfrag_nb.errors import InputError
    from selfrag_nb.store.kb import KnowledgeBase

    if spec is None or spec == SAMPLE:
        if spec == SAMPLE and Path(SAMPLE).exists():
            raise InputError(
                "--kb sample names the bundled sample knowledge base, but ./sample exists too: "
                "pass --kb ./sample for the folder, or leave --kb out for the bundled sample"
            )
        return KnowledgeBase.sample() if embedder is None else KnowledgeBase.sample(embedder)
    return KnowledgeBase.open(spec, embedder=embedder, create=False)


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}")
    return names


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1 (shared by every subcommand)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {n}")
    return n


# --------------------------------------------------------------------------- ingest


def register_ingest(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``ingest``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "ingest",
        help="add a file or folder to a knowledge base",
        description="Load, chunk, embed and store documents (Markdown, text, HTML, JSONL, PDF).",
    )
    p.add_argument("path", help="file or folder (walked recursively)")
    p.add_argument("--kb", required=True, help="knowledge base folder or URI (created if missing)")
    p.add_argument(
        "--embedder",
        default=None,
        help="minilm (default for a new KB), minilm:int8 (faster, fast extra), e5-small-multilingual "
        "(Chinese + English, multilingual extra), e5-small-multilingual:int8 (faster), hashing, litellm:<model>",
    )
    p.add_argument("--roles", type=_names, default=None, help="override ACL roles, e.g. staff,hr")
    p.add_argument("--users", type=_names, default=None, help="override ACL user ids")
    p.add_argument("--tenant", default=None, help="override ACL tenant")
    p.add_argument("--max-chars", type=positive_int, default=None, help="chunk size bound (new KB only)")
    p.add_argument(
        "--prune", action="store_true", help="remove this folder's stored sources missing from PATH"
    )
    p.add_argument(
        "--prefix", default="", help="put before every source name, e.g. colA/ (keeps same-named files apart)"
    )
    p.add_argument(
        "--on-conflict",
        choices=("skip", "replace"),
        default="skip",
        help="a source already stored from another folder: skip it (default, with the reason) or replace it",
    )
    p.add_argument(
        "--allow-widen",
        action="store_true",
        help="let this ingest make stored documents readable by more people (refused otherwise)",
    )
    p.add_argument(
        "--default-access",
        choices=("public", "private"),
        default=None,
        help="what a document that declares no access gets (a new KB stores it; default: the stored one, "
        "else public). private: readable by nobody until it has an ACL",
    )
    p.add_argument(
        "--metadata-keys",
        type=_names,
        default=None,
        help="strict mode: the only front-matter / JSONL keys accepted besides title, roles, users, tenant "
        "(e.g. status,effective,product); a file with any other key is skipped",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run_ingest)
    return p


def run_ingest(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from selfrag_nb.errors import KnowledgeBaseError
    from selfrag_nb.store.kb import KnowledgeBase

    console = Console()
    acl: dict[str, Any] = {}
    if args.roles is not None:
        acl["roles"] = args.roles
    if args.users is not None:
        acl["users"] = args.users
    if args.tenant is not None:
        acl["tenant"] = args.tenant
    options: dict[str, Any] = {}
    if args.max_chars is not None:
        options["max_chars"] = args.max_chars
    try:
        kb = KnowledgeBase.open(
            args.kb, embedder=args.embedder, default_access=args.default_access, **options
        )
        report = kb.ingest(
            args.path,
            acl=acl or None,
            progress=not args.no_progress,
            prune=args.prune,
            prefix=args.prefix,
            on_conflict=args.on_conflict,
            allow_widen=args.allow_widen,
            metadata_keys=args.metadata_keys,
        )
    except (FileNotFoundError, ValueError, TypeError, KnowledgeBaseError) as exc:
        return _fail(console, "ingest", exc)
    table = Table(title=shown(f"ingest {args.path} -> {kb.path}"))
    table.add_column("result")
    table.add_column("count", justify="right")
    table.add_column("examples", overflow="fold")
    for label, items in (
        ("added", report.added),
        ("updated", report.updated),
        ("unchanged", report.unchanged),
        ("removed", report.removed),
    ):
        examples = ", ".join(items[:5]) + (" ..." if len(items) > 5 else "")
        table.add_row(label, str(len(items)), shown(examples))
    skipped = "; ".join(f"{p} ({r})" for p, r in report.skipped[:5])
    table.add_row("skipped", str(len(report.skipped)), shown(skipped))
    console.print(table)
    if report.acl_changes:
        access = Table(title="access changed (who may read each document, before -> after)")
        for column in ("document", "before", "after", "change"):
            access.add_column(column, overflow="fold")
        for c in report.acl_changes:
            access.add_row(shown(c.source), shown(c.before.describe()), shown(c.after.describe()), c.kind)
        console.print(access)
    for source, text in report.warnings[:20]:
        console.print(shown(f"warning: {source}: {text}"))
    console.print(
        shown(
            f"chunks +{report.chunks_added} / -{report.chunks_removed}; total {len(kb)}; "
            f"version {report.version}; {report.seconds:.2f} s; embedder {kb.embedder_name}"
        )
    )
    kb.close()
    return 0


# --------------------------------------------------------------------------- search


def register_search(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``search``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "search",
        help="search a knowledge base as a given user",
        description="Hybrid, vector or full-text search with the user's access filter applied first.",
    )
    p.add_argument("query")
    p.add_argument(
        "--kb",
        default=None,
        help='knowledge base folder or URI, or "sample" (the bundled sample knowledge base; the default)',
    )
    p.add_argument("--k", type=positive_int, default=5, help="number of results (default 5)")
    p.add_argument("--mode", choices=("hybrid", "vector", "fts"), default="hybrid")
    p.add_argument("--user", default=None, help="user id (default: anonymous, public chunks only)")
    p.add_argument("--roles", type=_names, default=None, help="the user's roles, e.g. staff,hr")
    p.add_argument("--tenant", default=None, help="the user's tenant")
    p.add_argument("--where", default=None, help="extra SQL condition, ANDed with the access filter")
    p.add_argument("--embedder", default=None, help="only needed to pass embedder options; must match the KB")
    p.add_argument("--width", type=positive_int, default=160, help="characters of chunk text shown")
    p.set_defaults(func=run_search)
    return p


def run_search(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from selfrag_nb.errors import KnowledgeBaseError
    from selfrag_nb.store.types import User

    console = Console()
    try:
        user = None
        if args.user is not None or args.roles is not None or args.tenant is not None:
            user = User(args.user or "anonymous", roles=args.roles or (), tenant=args.tenant)
        kb = open_kb(args.kb, args.embedder)
        hits = kb.search(args.query, k=args.k, mode=args.mode, user=user, where=args.where)
    except (FileNotFoundError, ValueError, TypeError, KnowledgeBaseError) as exc:
        return _fail(console, "search", exc)
    table = Table(title=shown(f"{args.mode} search: {args.query!r} ({len(hits)} hits, {len(kb)} chunks)"))
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("source")
    table.add_column("heading")
    table.add_column("text", overflow="fold")
    for h in hits:
        text = " ".join(h.text.split())
        if len(text) > args.width:
            text = text[: args.width - 1] + "…"
        table.add_row(str(h.rank), f"{h.score:.4f}", shown(h.source), shown(h.heading), shown(text))
    console.print(table)
    kb.close()
    return 0


# --------------------------------------------------------------------------- ask


def register_ask(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``ask``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "ask",
        help="answer one question and show every stage",
        description="Run the Self-RAG pipeline on one question. Keys come from the provider's "
        "environment variable (e.g. OPENAI_API_KEY), never from the command line.",
    )
    p.add_argument("question")
    p.add_argument(
        "--kb",
        default=None,
        help='knowledge base folder or URI, or "sample" (the bundled sample knowledge base; the default)',
    )
    p.add_argument("--model", default=None, help='a LiteLLM model string (default: "offline")')
    p.add_argument("--api-base", default=None, help="base URL of an OpenAI-compatible server")
    p.add_argument("--user", default=None, help="user id (default: anonymous)")
    p.add_argument("--roles", type=_names, default=None, help="the user's roles, e.g. staff,finance")
    p.add_argument("--tenant", default=None, help="the user's tenant")
    p.add_argument("--trace", default=None, help="write the trace as JSON to this file")
    p.add_argument("--html", default=None, help="write the trace's static HTML view to this file")
    p.set_defaults(func=run_ask)
    return p


def run_ask(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rich.console import Console
    from rich.panel import Panel
    from rich.table import Table

    from selfrag_nb.display import static_html, text_summary
    from selfrag_nb.errors import KnowledgeBaseError, ModelError
    from selfrag_nb.pipeline import SelfRAG
    from selfrag_nb.store.types import User

    console = Console()
    try:
        user = User(args.user or "anonymous", roles=args.roles or (), tenant=args.tenant)
        kb = open_kb(args.kb)
        rag = SelfRAG(kb, model=args.model, api_base=args.api_base)
        trace = rag.ask(args.question, user=user)
    except (FileNotFoundError, ValueError, TypeError, KnowledgeBaseError, ModelError) as exc:
        return _fail(console, "ask", exc)
    table = Table(title=shown(f"{args.question!r} as {user.id}"))
    table.add_column("stage")
    table.add_column("ms", justify="right")
    table.add_column("calls", justify="right")
    table.add_column("summary", overflow="fold")
    for rec in trace.records:
        table.add_row(
            shown(rec.stage), f"{rec.latency_ms:.1f}", str(len(rec.calls)), shown(text_summary(rec))
        )
    console.print(table)
    console.print(Panel(shown(trace.answer or ""), title=shown(trace.outcome), expand=False))
    if args.trace:
        trace.save(args.trace)
    if args.html:
        Path(args.html).write_text(static_html(trace), encoding="utf-8")
    kb.close()
    return 0


# --------------------------------------------------------------------------- main


def _registrar(spec: str) -> Callable[[Any], argparse.ArgumentParser]:
    module, _, name = spec.partition(":")
    fn: Callable[[Any], argparse.ArgumentParser] = getattr(importlib.import_module(module), name)
    return fn


def build_parser() -> argparse.ArgumentParser:
    """The ``selfrag-nb`` parser with every registered subcommand."""
    from selfrag_nb import __version__

    parser = argparse.ArgumentParser(prog="selfrag-nb", description="Self-RAG you can see and steer.")
    parser.add_argument("--version", action="version", version=f"selfrag-nb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for spec in SUBCOMMANDS:
        _registrar(spec)(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``selfrag-nb``; returns the exit status."""
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the cost map at startup
    args = build_parser().parse_args(argv)
    problem = invalid_text_argument(args)
    if problem is not None:
        from rich.console import Console

        return _fail(Console(), args.command, ValueError(problem))
    status: int = args.func(args)
    return status


def invalid_text_argument(args: argparse.Namespace) -> str | None:
    """Why a parsed text argument cannot be used (a lone surrogate), or None.
    Shared with ``selfrag_nb.eval.cli.main``."""
    for dest, shown_name in _TEXT_ARGS.items():
        value = getattr(args, dest, None)
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, str):
                continue
            i = lone_surrogate(text)
            if i is not None:
                return (
                    f"{shown_name} contains a lone surrogate U+{ord(text[i]):04X} at index {i}; "
                    "text must be valid Unicode (the command line held bytes that are not UTF-8)"
                )
    return None


if __name__ == "__main__":
    sys.exit(main())
