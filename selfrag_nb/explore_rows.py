"""The light rows of the trace explorer, and where each row's trace lives.

    sources                          one Row per trace (what the table shows, plus the
      Trace objects  ---row_of--->     answer, kept in Python for ``filter(text=)``)
      folder/**.json ---Trace.load--> + TraceRef: the trace itself, its file, or nothing
                      (file kept, trace dropped: opened again from disk on demand)
      EvalReport / rows.jsonl ------> one row per EvalRow; its trace is the file
                                      ``evaluate(..., traces=True)`` wrote at
                                      ``<out>/traces/<variant>/<id>.json`` when it exists
                                      (the row then takes the trace's outcome reason,
                                      flags, support and models); without it the row
                                      has what the EvalRow has: its ``reason_kind``
                                      where it names one, else None (unknown)
    bad files (not JSON, not a trace) -> Skipped(path, reason), never a crash

A Row holds no document text, no prompts and no model output besides the
answer: building rows for 5,000 saved traces keeps only the rows in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from selfrag_nb.errors import InputError, NotFoundError

if TYPE_CHECKING:
    from selfrag_nb.eval.metrics import EvalRow
    from selfrag_nb.eval.questions import QuestionSet
    from selfrag_nb.trace import Trace

__all__ = [
    "COLUMNS",
    "FLAGS",
    "Row",
    "Skipped",
    "TraceRef",
    "eval_rows",
    "file_row",
    "folder_rows",
    "load_eval_rows",
    "row_of",
    "trace_path",
]

#: The flags a row can carry, and what each says.
FLAGS: dict[str, str] = {
    "injection": "suspected prompt-injection text in a model call's input",
    "fallback": "a stage took a fallback (kept the previous order, default applied, ...)",
    "model_error": "a model call failed at the provider or gave no output that parsed",
    "unparsed": "a model call's output did not parse (a default was applied)",
    "deadline": "the question's time budget ran out",
    "regenerated": "the answer was written more than once",
    "failed": "the evaluation's checks failed for this row",
    "error": "the question raised instead of finishing (evaluation)",
    "no_trace": "no saved trace: evaluate(..., traces=True) writes them",
}


@dataclass(frozen=True, slots=True)
class Row:
    """One trace, as the explorer's table shows it."""

    #: Position in the explorer the row was first loaded into (stable across filters).
    index: int
    question: str
    answer: str = ""
    user: str = ""
    outcome: str = ""
    #: Outcome.reason_kind; None when unknown (an evaluation row without its trace).
    reason_kind: str | None = ""
    category: str = ""
    variant: str = ""
    #: Evaluation question id, else the trace file's name, else "".
    id: str = ""
    flags: tuple[str, ...] = ()
    usefulness: str = ""
    usefulness_score: int | None = None
    #: Claims verified and how many were supported (None: nothing verified).
    claims: int | None = None
    supported: int | None = None
    latency_ms: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    #: US dollars; None when any call's price is unknown.
    cost: float | None = None
    #: role -> model name.
    models: dict[str, str] = field(default_factory=dict)
    #: The file the trace was read from ("" when it came as an object or is not saved).
    path: str = ""

    @property
    def support(self) -> str:
        """'3/4 supported', 'none verified' ... in words."""
        if not self.claims:
            return ""
        return f"{self.supported}/{self.claims} supported"

    @property
    def model(self) -> str:
        """The models in one line: one name when every role used it, else role=model pairs."""
        names = list(dict.fromkeys(self.models.values()))
        if len(names) <= 1:
            return names[0] if names else ""
        return ", ".join(f"{r}={m}" for r, m in self.models.items())

    def value(self, key: str) -> Any:
        """A column's value (fields, ``support``, ``model`` and ``model_<role>``)."""
        if key.startswith("model_") and key not in _FIELD_NAMES:
            return self.models.get(key[len("model_") :], "")
        if key in _FIELD_NAMES or key in ("support", "model"):
            return getattr(self, key)
        raise NotFoundError(f"unknown column {key!r}; columns: {sorted(COLUMNS)}", key=key)

    def record(self) -> dict[str, Any]:
        """The row as a flat dict (pandas), models spread into ``model_<role>``."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "models"}
        out["flags"] = ", ".join(self.flags)
        out["support"] = self.support
        out.update({f"model_{r}": m for r, m in self.models.items()})
        return out


_FIELD_NAMES = frozenset(f.name for f in fields(Row))
#: Every column ``filter`` accepts (``model_<role>`` too).
COLUMNS = frozenset(_FIELD_NAMES - {"index"}) | {"support", "model"}


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file that was not loaded, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class TraceRef:
    """Where a row's trace is: in memory, in a file, or nowhere (``why``)."""

    trace: Trace | None = None
    path: Path | None = None
    why: str = ""

    def load(self) -> Trace:
        if self.trace is not None:
            return self.trace
        if self.path is None:
            raise NotFoundError(self.why or "this row has no trace", key="trace")
        from selfrag_nb.trace import Trace

        try:
            return Trace.load(self.path)
        except FileNotFoundError as exc:
            raise NotFoundError(f"{self.path}: the trace file is gone", key=str(self.path)) from exc
        except (ValidationError, ValueError) as exc:
            raise InputError(f"{self.path}: no longer a saved Trace ({_first_line(exc)})") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _flags(trace: Trace) -> list[str]:
    calls = trace.model_calls
    fin = trace.finish
    out: list[str] = []
    if any(c.injection_flags for c in calls):
        out.append("injection")
    if any(r.fallbacks for r in trace.records) or any(c.fallback for c in calls):
        out.append("fallback")
    if any(c.error or c.parse_status == "error" for c in calls) or (fin and fin.reason_kind == "model_error"):
        out.append("model_error")
    if any(c.parse_status == "unparsed" for c in calls):
        out.append("unparsed")
    if fin is not None and (fin.deadline_exceeded or fin.reason_kind == "deadline"):
        out.append("deadline")
    if len(trace.generations) > 1:
        out.append("regenerated")
    return out


def row_of(trace: Trace, index: int, **extra: Any) -> Row:
    """The row of ``trace``; ``extra`` sets the fields a trace does not know
    (category, variant, id, path) or overrides it (an evaluation's latency)."""
    fin = trace.finish
    use = trace.usefulness
    sup = trace.support
    totals = trace.totals
    flags = [*_flags(trace), *extra.pop("flags", ())]
    models = dict(trace.config.models)
    for c in trace.model_calls:  # a role the snapshot does not name still counts
        models.setdefault(c.role, c.model)
    base: dict[str, Any] = {
        "index": index,
        "question": trace.question,
        "answer": trace.answer or "",
        "user": trace.user.id,
        "outcome": trace.outcome or "",
        "reason_kind": fin.reason_kind if fin is not None else "",
        "flags": tuple(dict.fromkeys(flags)),
        "usefulness": use.verdict if use is not None else "",
        "usefulness_score": use.score if use is not None else None,
        "claims": len(sup.claims) if sup is not None else None,
        "supported": sum(c.verdict == "supported" for c in sup.claims) if sup is not None else None,
        "latency_ms": trace.wall_ms,
        "tokens_in": totals.tokens_in,
        "tokens_out": totals.tokens_out,
        "cost": totals.cost,
        "models": models,
    }
    return Row(**(base | extra))


# ---------------------------------------------------------------- folders


def file_row(path: Path, index: int, variant: str = "") -> tuple[Row, TraceRef] | Skipped:
    """The row of one saved trace, or a Skipped with the reason it is not one."""
    from selfrag_nb.trace import Trace

    try:
        trace = Trace.load(path)
    except UnicodeDecodeError:
        return Skipped(str(path), "not UTF-8 text")
    except ValidationError as exc:
        return Skipped(str(path), f"not a saved Trace: {_validation_reason(exc)}")
    except OSError as exc:
        return Skipped(str(path), f"cannot be read: {exc.strerror or exc}")
    return row_of(trace, index, id=path.stem, variant=variant, path=str(path)), TraceRef(path=path)


def folder_rows(folder: Path, start: int = 0) -> Iterator[tuple[Row, TraceRef] | Skipped]:
    """A row per saved trace under ``folder`` (``**/*.json``, sorted), or a
    Skipped with the reason. A trace in a sub-folder gets the sub-folder's
    path as its variant (evaluate writes ``traces/<variant>/<id>.json``).
    Each trace is dropped once its row is made."""
    index = start
    for path in sorted(folder.rglob("*.json")):
        rel = path.parent.relative_to(folder)
        got = file_row(path, index, "" if rel == Path(".") else rel.as_posix())
        if not isinstance(got, Skipped):
            index += 1
        yield got


def _validation_reason(exc: ValidationError) -> str:
    errs = exc.errors()
    if not errs:
        return "invalid"
    if errs[0]["type"] == "json_invalid":
        return "not valid JSON"
    loc = ".".join(str(x) for x in errs[0]["loc"]) or "the document"
    return f"{loc}: {errs[0]['msg']} ({len(errs)} problem(s))"


# ---------------------------------------------------------------- evaluations


def trace_path(out: Path, variant: str, qid: str) -> Path:
    """Where ``evaluate(..., traces=True)`` wrote the trace of (variant, question id)."""
    from selfrag_nb.eval.runner import _file_name

    return out / "traces" / _file_name(variant) / f"{_file_name(qid)}.json"


def load_eval_rows(path: Path) -> list[EvalRow]:
    """The rows ``evaluate`` streamed to ``rows.jsonl``; a line that is not an
    EvalRow is an InputError naming its line number."""
    from selfrag_nb.eval.metrics import EvalRow

    out = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(EvalRow.model_validate_json(line))
            except ValidationError as exc:
                raise InputError(
                    f"{path}:{n}: not an evaluation row ({_validation_reason(exc)}); "
                    "sr.explore reads the rows.jsonl that sr.evaluate writes"
                ) from exc
    return out


def eval_rows(
    rows: Sequence[EvalRow], out: Path | None, questions: QuestionSet | None = None, start: int = 0
) -> Iterator[tuple[Row, TraceRef] | Skipped]:
    """A row per evaluation row, joined to its saved trace when there is one."""
    from selfrag_nb.trace import Trace

    users = {q.id: q.make_user().id for q in questions} if questions is not None else {}
    for i, er in enumerate(rows, start):
        flags = [*(["failed"] if er.failed_checks else []), *(["error"] if er.error else [])]
        extra: dict[str, Any] = {
            "category": er.category,
            "variant": er.variant,
            "id": er.id,
            "latency_ms": er.latency_ms,
        }
        path = trace_path(out, er.variant, er.id) if out is not None else None
        why = (
            f"no trace saved for {er.variant}/{er.id}: run sr.evaluate(..., traces=True) "
            "to keep every trace (they go to <out>/traces/)"
        )
        if path is not None and path.is_file():
            try:
                trace = Trace.load(path)
            except (ValidationError, UnicodeDecodeError, OSError) as exc:
                # the row still shows (from the EvalRow); the file is reported, not opened
                why = f"the trace of {er.variant}/{er.id} is unreadable ({path}): {_first_line(exc)}"
                yield Skipped(str(path), why)
            else:
                yield row_of(trace, i, flags=flags, path=str(path), **extra), TraceRef(path=path)
                continue
        row = Row(
            index=i,
            question=er.question,
            answer=er.answer or "",
            user=users.get(er.id, ""),
            outcome=er.outcome or "",
            # the row's own reason_kind where it names one; "" is unknown here (an
            # accepted answer's "" reads the same as a row written before rows kept it)
            reason_kind=er.reason_kind or ("model_error" if er.model_error else None),
            flags=(*flags, *(["model_error"] if er.model_error else []), "no_trace"),
            usefulness=er.usefulness or "",
            usefulness_score=er.usefulness_score,
            claims=er.claims or None,
            supported=(er.claims - er.unsupported_claims) if er.claims else None,
            tokens_in=er.tokens_in,
            tokens_out=er.tokens_out,
            cost=er.cost,
            **extra,
        )
        yield row, TraceRef(why=why)


def is_eval_report_json(path: Path) -> bool:
    """True when ``path`` holds an ``EvalReport.to_json`` document."""
    try:
        with path.open(encoding="utf-8") as fh:
            head = fh.read(200)
    except (OSError, UnicodeDecodeError):
        return False
    return '"format": "selfrag_nb.eval.report/' in head or '"format":"selfrag_nb.eval.report/' in head


def split(items: Iterable[tuple[Row, TraceRef] | Skipped]) -> tuple[list[Row], list[TraceRef], list[Skipped]]:
    rows: list[Row] = []
    refs: list[TraceRef] = []
    skipped: list[Skipped] = []
    for it in items:
        if isinstance(it, Skipped):
            skipped.append(it)
        else:
            rows.append(it[0])
            refs.append(it[1])
    return rows, refs, skipped
