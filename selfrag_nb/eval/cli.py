"""``selfrag-nb eval``: run an evaluation from the shell.

    selfrag-nb eval --questions sample --variants ablation --out report.html
                    [--kb PATH|sample] [--model M] [--concurrency N] [--limit N] [--rows DIR]
      questions(--questions) -> cli.open_kb(--kb: a folder, or "sample" / none: the bundled sample)
      -> SelfRAG(kb, model=--model) -> evaluate(variants) -> report.save(--out)
      -> text summary on stdout; rows.jsonl + failures.parquet in --rows

The top-level CLI (``selfrag_nb.cli.SUBCOMMANDS``) hooks this in through
``register(subparsers)``; ``main`` runs it on its own
(``python -m selfrag_nb.eval.cli eval ...``). Exit status: 0 ok, 1 failing
rows with ``--fail-on-failures``, 2 bad input.

Output is plain text (no rich markup is interpreted); anything that came from
the user's files (question-set and variant names, error messages quoting
them) goes through ``selfrag_nb.text.printable`` first, so a name holding
terminal escapes is shown, not executed; error messages are phrased for the
shell by ``selfrag_nb.cli.for_cli`` (flags, not Python arguments).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from selfrag_nb.cli import for_cli, invalid_text_argument, open_kb, positive_int
from selfrag_nb.text import printable

__all__ = ["build_parser", "main", "register", "run"]


def _variants_arg(text: str) -> Any:
    """ "none", a preset name, a JSON object, or a path to a JSON file."""
    if text == "none":
        return None
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise argparse.ArgumentTypeError(f"--variants is not valid JSON: {exc.msg}") from None
    p = Path(text)
    if p.suffix.lower() == ".json":
        if not p.is_file():
            raise argparse.ArgumentTypeError(f"--variants file not found: {p}")
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise argparse.ArgumentTypeError(f"--variants file {p} is not valid JSON: {exc.msg}") from None
    return text


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--questions", default="sample", help='question set: "sample" or a .jsonl path')
    p.add_argument(
        "--variants",
        type=_variants_arg,
        default="ablation",
        help='"ablation", "retrieval", "none", a JSON object {name: {setting: value}} or a .json file',
    )
    p.add_argument("--out", default="report.html", help="report file (.html or .json)")
    p.add_argument(
        "--kb",
        default=None,
        help='knowledge base folder or URI, or "sample" (the bundled sample knowledge base; the default)',
    )
    p.add_argument("--embedder", default=None, help="embedder of --kb (default: the one it was built with)")
    p.add_argument("--model", default=None, help="LiteLLM model string (default: the offline model)")
    p.add_argument("--api-base", default=None, help="API base URL passed to LiteLLM")
    p.add_argument("--concurrency", type=positive_int, default=4, help="questions in flight at once")
    p.add_argument("--limit", type=positive_int, default=None, help="evaluate a seeded sample of N questions")
    p.add_argument("--seed", type=int, default=0, help="seed of --limit's sample")
    p.add_argument("--k", type=positive_int, default=10, help="cut-off of recall@k")
    p.add_argument("--rows", default=None, help="folder for rows.jsonl and failures.parquet (default: temp)")
    p.add_argument("--traces", action="store_true", help="also write every trace to <rows>/traces/")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--fail-on-failures", action="store_true", help="exit with status 1 when any row fails")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``eval`` subcommand to an ``argparse`` subparsers object; the
    parsed namespace's ``func(args) -> int`` runs it."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "eval",
        help="evaluate variants of the pipeline on a labelled question set",
        description="Run every variant over every question and write an HTML report.",
    )
    _add_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Execute a parsed ``eval`` command; returns the exit status."""
    from selfrag_nb.errors import QuestionSetError, SelfRAGError
    from selfrag_nb.eval.questions import questions
    from selfrag_nb.eval.runner import evaluate, resolve_variants
    from selfrag_nb.pipeline import SelfRAG

    try:
        qs = questions(args.questions)
        variants = resolve_variants(args.variants)
    except (QuestionSetError, ValueError, TypeError) as exc:  # bad input: a usage error, not a crash
        sys.stderr.write(f"selfrag-nb eval: {printable(for_cli(exc))}\n")
        return 2
    if args.limit is not None:
        qs = qs.sample(args.limit, args.seed)
    kwargs: dict[str, Any] = {}
    if args.model:
        kwargs["model"] = args.model
    if args.api_base:
        kwargs["api_base"] = args.api_base
    try:
        kb = open_kb(args.kb, args.embedder)
        rag = SelfRAG(kb, **kwargs)
    except (
        SelfRAGError,
        FileNotFoundError,
        ValueError,
    ) as exc:  # a missing KB, a bad model: say so, no traceback
        sys.stderr.write(f"selfrag-nb eval: {printable(for_cli(exc))}\n")
        return 2
    report = evaluate(
        rag,
        qs,
        variants,
        concurrency=args.concurrency,
        out=args.rows,
        progress=not args.no_progress,
        k=args.k,
        traces=args.traces,
    )
    path = report.save(args.out)
    sys.stdout.write(printable(f"{report.to_text()}\nreport: {path}\nrows: {report.out}") + "\n")
    failing = sum(1 for r in report.rows if r.failed_checks)
    return 1 if args.fail_on_failures and failing else 0


def build_parser() -> argparse.ArgumentParser:
    """A stand-alone parser with only the ``eval`` subcommand."""
    parser = argparse.ArgumentParser(prog="selfrag-nb")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``eval`` on its own; returns the exit status (0 ok, 1 failing rows
    with --fail-on-failures, 2 bad input)."""
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the cost map at startup
    args = build_parser().parse_args(argv)
    problem = invalid_text_argument(args)
    if problem is not None:
        sys.stderr.write(f"selfrag-nb eval: {printable(problem)}\n")
        return 2
    status: int = args.func(args)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
