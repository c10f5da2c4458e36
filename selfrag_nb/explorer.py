"""sr.explore: hundreds to thousands of answers in one view.

    sr.explore(x)                                   x is one of
      [Trace, ...] / Trace  ---------------------->  rows from the objects (kept in memory)
      "folder/"             (Trace.save files) --->  rows from **/*.json; traces dropped,
                                                     re-read from disk when opened
      EvalReport            (sr.evaluate) ------->  one row per EvalRow; its trace is
      "out/" or "out/rows.jsonl" or report .json     <out>/traces/<variant>/<id>.json when
                                                     evaluate(..., traces=True) wrote it
      -> Explorer
           .rows / len(ex) / ex.counts("outcome") / ex.to_pandas()
           .filter(outcome=, reason_kind=, text=, user=, variant=, category=,
                   flag=, **{column: value | [values] | predicate})  -> Explorer (a view)
           ex[i] / ex.trace(i) / iter(ex) / ex.traces   the full traces, loaded on demand
           ex.selected     the traces selected in the widget (one opens its trace,
                           two their comparison)
           ex.skipped      files not loaded, each with its reason
           faces: text (one line), static HTML (the first rows, no script), and the
           ExploreWidget (display/explore_widget.py): rows only until a row is opened

A bad input is an InputError naming it (a missing path, an empty list, an
object that is not a trace); a bad file inside a folder is skipped with its
reason, and only a folder where nothing loads is an error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from selfrag_nb._displayable import Displayable
from selfrag_nb.errors import InputError, InputTypeError, PathNotFoundError
from selfrag_nb.explore_rows import (
    COLUMNS,
    FLAGS,
    Row,
    Skipped,
    TraceRef,
    eval_rows,
    file_row,
    folder_rows,
    is_eval_report_json,
    load_eval_rows,
    row_of,
    split,
)

if TYPE_CHECKING:
    import pandas as pd

    from selfrag_nb.trace import Trace

__all__ = ["Explorer", "explore"]


def _known(name: str) -> frozenset[str] | None:
    """The values a typed column may take (None: any)."""
    from selfrag_nb import trace as tr

    if name == "outcome":
        return frozenset(get_args(tr.OutcomeName))
    if name == "reason_kind":
        return frozenset(a for arg in get_args(tr.ReasonKind) for a in (get_args(arg) or (arg,)))
    if name in ("flag", "flags"):
        return frozenset(FLAGS)
    return None


def _matcher(name: str, want: Any) -> Callable[[Any], bool]:
    """``want`` as a test of one value: a predicate as is, a list / tuple / set
    as membership, anything else as equality. A value a typed column cannot
    take is an error (a typo must not silently match nothing)."""
    if callable(want):
        return lambda v: bool(want(v))
    wanted = set(want) if isinstance(want, (list, tuple, set, frozenset)) else {want}
    known = _known(name)
    if known is not None:
        bad = sorted(str(w) for w in wanted if w not in known and w is not None)
        if bad:
            raise InputError(f"{name}={bad[0]!r} is not a value {name} takes; known: {sorted(known)}")
    if name in ("flag", "flags"):
        return lambda v: bool(wanted & set(v))
    return lambda v: v in wanted


def _column_test(key: str, match: Callable[[Any], bool]) -> Callable[[Row], bool]:
    return lambda r: match(r.value(key))


class Explorer(Displayable):
    """Rows of many traces, with their traces one call away (see module doc)."""

    def __init__(
        self,
        rows: Sequence[Row],
        refs: Sequence[TraceRef],
        *,
        skipped: Sequence[Skipped] = (),
        source: str = "",
    ) -> None:
        if len(rows) != len(refs):
            raise InputError("an Explorer needs one trace reference per row")
        self.rows: list[Row] = list(rows)
        self._refs: list[TraceRef] = list(refs)
        #: Files that were not loaded, each with its reason.
        self.skipped: list[Skipped] = list(skipped)
        #: What the rows were loaded from, in words.
        self.source = source
        #: Positions (in ``rows``) selected in the widget, in the order clicked.
        self.selection: list[int] = []

    # ------------------------------------------------------------ rows

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Trace]:
        """The traces, one at a time (read from disk as they come)."""
        for i in range(len(self.rows)):
            yield self.trace(i)

    def __getitem__(self, i: int) -> Trace:
        return self.trace(i)

    def trace(self, i: int) -> Trace:
        """The full trace of row ``i`` (loaded from its file when it came from a folder)."""
        if not -len(self.rows) <= i < len(self.rows):
            raise InputError(f"row {i} out of range: this view has {len(self.rows)} row(s)")
        return self._refs[i].load()

    def has_trace(self, i: int) -> bool:
        """False when row ``i`` has no trace to open (an evaluation run without ``traces=True``)."""
        ref = self._refs[i]
        return ref.trace is not None or ref.path is not None

    def why_no_trace(self, i: int) -> str:
        return self._refs[i].why

    @property
    def traces(self) -> list[Trace]:
        """Every trace of this view, loaded (use ``iter(ex)`` to hold one at a time)."""
        return list(self)

    @property
    def selected(self) -> list[Trace]:
        """The traces selected in the widget, in the order they were selected."""
        return [self.trace(i) for i in self.selection if 0 <= i < len(self.rows)]

    def counts(self, by: str = "outcome") -> dict[Any, int]:
        """How many rows per value of column ``by`` (most first); ``"flags"``
        counts each flag."""
        if by in ("flag", "flags"):
            return dict(Counter(f for r in self.rows for f in r.flags).most_common())
        if by not in COLUMNS and not by.startswith("model_"):
            raise InputError(f"unknown column {by!r}; columns: {sorted(COLUMNS)}")
        return dict(Counter(r.value(by) for r in self.rows).most_common())

    def filter(self, text: str | None = None, **columns: Any) -> Explorer:
        """A view of the rows that match every condition given.

        ``text``: case-insensitive, in the question or the answer.
        ``column=value``: equal; ``column=[a, b]``: one of them;
        ``column=callable``: the callable says (``latency_ms=lambda ms: ms > 2000``).
        Columns: outcome, reason_kind, user, variant, category, usefulness,
        flag (a row matches when it carries the flag), and every other column
        of ``to_pandas()``. An unknown column, or a value an outcome, reason
        kind or flag cannot take, is an InputError."""
        tests: list[Callable[[Row], bool]] = []
        if text is not None:
            if not isinstance(text, str):
                raise InputTypeError(f"text= takes a string, not {type(text).__name__}")
            needle = text.casefold()
            tests.append(lambda r: needle in r.question.casefold() or needle in r.answer.casefold())
        for name, want in columns.items():
            key = "flags" if name == "flag" else name
            if key not in COLUMNS and not key.startswith("model_"):
                raise InputError(f"unknown column {name!r}; columns: {sorted(COLUMNS | {'flag'})}")
            tests.append(_column_test(key, _matcher(name, want)))
        keep = [i for i, r in enumerate(self.rows) if all(t(r) for t in tests)]
        return Explorer(
            [self.rows[i] for i in keep],
            [self._refs[i] for i in keep],
            skipped=self.skipped,
            source=self.source,
        )

    def to_pandas(self) -> pd.DataFrame:
        """One row per trace: every column, flags joined with ", ", one
        ``model_<role>`` column per model role."""
        import pandas as pd

        return pd.DataFrame([r.record() for r in self.rows])

    # ------------------------------------------------------------ faces

    def to_text(self) -> str:
        counts = ", ".join(f"{n} {k or 'unknown'}" for k, n in self.counts("outcome").items())
        skipped = f"; {len(self.skipped)} file(s) skipped" if self.skipped else ""
        return f"Explorer: {len(self.rows):,} trace(s){f' ({counts})' if counts else ''}{skipped}"

    def __repr__(self) -> str:
        return self.to_text()


# ---------------------------------------------------------------- loading


def _from_traces(traces: Sequence[Any]) -> Explorer:
    from selfrag_nb.trace import Trace

    if not traces:
        raise InputError(
            "sr.explore: the list is empty; give it traces, a folder of saved traces or an EvalReport"
        )
    for i, t in enumerate(traces):
        if not isinstance(t, Trace):
            raise InputTypeError(f"sr.explore: item {i} is a {type(t).__name__}, not a Trace")
    rows = [row_of(t, i) for i, t in enumerate(traces)]
    return Explorer(rows, [TraceRef(trace=t) for t in traces], source=f"{len(traces)} trace object(s)")


def _from_folder(folder: Path) -> Explorer:
    rows_file = folder / "rows.jsonl"
    if rows_file.is_file():
        return _from_rows_file(rows_file)
    if not any(folder.rglob("*.json")):
        raise InputError(f"{folder}: no .json files (sr.explore reads the files Trace.save writes)")
    rows, refs, skipped = split(folder_rows(folder))
    if not rows:
        reasons = "; ".join(f"{Path(s.path).name}: {s.reason}" for s in skipped[:3])
        raise InputError(f"{folder}: none of {len(skipped)} .json file(s) is a saved Trace ({reasons})")
    return Explorer(rows, refs, skipped=skipped, source=str(folder))


def _from_rows_file(path: Path) -> Explorer:
    rows, refs, skipped = split(eval_rows(load_eval_rows(path), path.parent))
    if not rows:
        raise InputError(f"{path}: no evaluation rows")
    return Explorer(rows, refs, skipped=skipped, source=str(path))


def _from_report(report: Any) -> Explorer:
    if not report.rows:
        raise InputError("sr.explore: the EvalReport has no rows")
    rows, refs, skipped = split(eval_rows(report.rows, report.out, report.questions))
    return Explorer(rows, refs, skipped=skipped, source=f"EvalReport ({report.out or 'not saved'})")


def explore(source: Any) -> Explorer:
    """Rows of many answers, filterable, with a table view (see module doc).

    ``source``: a list of Traces (or one), a folder of ``Trace.save`` files,
    an ``EvalReport``, the folder ``sr.evaluate`` wrote (``rows.jsonl``) or
    that file, or an ``EvalReport.save(".json")`` file, or an Explorer."""
    from selfrag_nb.eval.report import EvalReport
    from selfrag_nb.trace import Trace

    if isinstance(source, Explorer):
        return source
    if isinstance(source, Trace):
        return _from_traces([source])
    if isinstance(source, EvalReport):
        return _from_report(source)
    if isinstance(source, (str, Path)):
        path = Path(source).expanduser()
        if not path.exists():
            raise PathNotFoundError(f"sr.explore: {path} does not exist", path=path)
        if path.is_dir():
            return _from_folder(path)
        if path.suffix == ".jsonl":
            return _from_rows_file(path)
        if is_eval_report_json(path):
            return _from_report(EvalReport.load(path))
        got = file_row(path, 0)
        if isinstance(got, Skipped):
            raise InputError(f"sr.explore: {path} is not a saved Trace ({got.reason})")
        return Explorer([got[0]], [got[1]], source=str(path))
    if isinstance(source, Iterable) and not isinstance(source, (bytes, dict)):
        return _from_traces(list(source))  # a list, a tuple, a generator of traces
    raise InputTypeError(
        f"sr.explore takes traces, a folder of saved traces, an EvalReport or a rows.jsonl, "
        f"not {type(source).__name__}"
    )
