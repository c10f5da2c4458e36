"""Regression samples: keep every failure, re-run it, see what changed.

    EvalReport rows --write_failures()--> failures.parquet
        one row per failing (variant, question): question, category, outcome
        and the check that ended it (reason_kind), candidate evidence ids,
        config version, failure reason, failed checks, and the full question
        record (so the sample can be asked again)
    failures.parquet --read_failures()--> DataFrame
                     --failures_to_questions()--> QuestionSet  -> evaluate(rag2, ...)
    before rows + after rows --RegressionDiff--> .fixed .still_failing .broke
        faces (text, static HTML, EvalWidget) through Displayable: display/eval_html.py

A regression sample keeps the question category, candidate evidence, config
version and failure reason, inside the authorised scope, as regression
samples. Failure reasons never repeat a labelled secret, and evidence is kept
as chunk ids, not text, so the samples carry no more than the labels did.

A re-run compares check by check: a row whose earlier failure is gone is
*fixed*; one that still fails the same checks is *still failing*; one that
passed before, or that now fails a check it used to pass, *broke*.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfrag_nb._displayable import Displayable
from selfrag_nb.errors import PathNotFoundError, QuestionSetError
from selfrag_nb.eval.metrics import EvalRow
from selfrag_nb.eval.questions import Question, QuestionSet

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FAILURE_COLUMNS", "RegressionDiff", "failures_to_questions", "read_failures", "write_failures"]

#: Columns of a regression-sample file, in order.
FAILURE_COLUMNS = (
    "variant",
    "id",
    "category",
    "question",
    "outcome",
    "reason_kind",
    "expected",
    "evidence",
    "config_version",
    "failure_reason",
    "failed_checks",
    "error",
    "question_record",
)
#: Columns newer than the first files, each with the column it follows: a file
#: written before one existed still reads, with "" there.
_ADDED_LATER = {"reason_kind": "outcome"}


def _failure_dicts(rows: Sequence[EvalRow], questions: QuestionSet | None) -> list[dict[str, Any]]:
    by_id = {q.id: q for q in questions} if questions is not None else {}
    out = []
    for r in rows:
        if not r.failed_checks:
            continue
        q = by_id.get(r.id)
        record = (
            q.to_record() if q is not None else {"id": r.id, "category": r.category, "question": r.question}
        )
        out.append(
            {
                "variant": r.variant,
                "id": r.id,
                "category": r.category,
                "question": r.question,
                "outcome": r.outcome,
                "reason_kind": r.reason_kind,
                "expected": list(r.expected),
                "evidence": list(r.evidence),
                "config_version": r.config_version,
                "failure_reason": r.failure_reason or "",
                "failed_checks": list(r.failed_checks),
                "error": r.error,
                "question_record": json.dumps(record, ensure_ascii=False, sort_keys=True),
            }
        )
    return out


def failures_frame(rows: Sequence[EvalRow], questions: QuestionSet | None = None) -> pd.DataFrame:
    """The failing rows as a DataFrame with ``FAILURE_COLUMNS``."""
    import pandas as pd

    return pd.DataFrame(_failure_dicts(rows, questions), columns=list(FAILURE_COLUMNS))


def write_failures(rows: Sequence[EvalRow], questions: QuestionSet | None, path: str | Path) -> Path:
    """Write the failing rows of ``rows`` to a Parquet file (a folder gets
    ``failures.parquet`` inside it). An all-passing run writes an empty file
    with the same columns, so readers never special-case it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = Path(path)
    if p.is_dir() or not p.suffix:
        p.mkdir(parents=True, exist_ok=True)
        p = p / "failures.parquet"
    strings = pa.list_(pa.string())
    schema = pa.schema(
        [
            ("variant", pa.string()),
            ("id", pa.string()),
            ("category", pa.string()),
            ("question", pa.string()),
            ("outcome", pa.string()),
            ("reason_kind", pa.string()),
            ("expected", strings),
            ("evidence", strings),
            ("config_version", pa.string()),
            ("failure_reason", pa.string()),
            ("failed_checks", strings),
            ("error", pa.string()),
            ("question_record", pa.string()),
        ]
    )
    table = pa.Table.from_pylist(_failure_dicts(rows, questions), schema=schema)
    pq.write_table(table, p)
    return p


def read_failures(path: str | Path) -> pd.DataFrame:
    """Read a regression-sample file (or the ``failures.parquet`` in a folder)."""
    import pyarrow.parquet as pq

    p = Path(path)
    if p.is_dir():
        p = p / "failures.parquet"
    if not p.is_file():
        raise PathNotFoundError(f"{p}: no regression samples here (expected a failures.parquet)", path=p)
    try:
        df = pq.read_table(p).to_pandas()
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise QuestionSetError(f"{p}: not a regression-sample file (not Parquet: {exc})") from None
    missing = [c for c in FAILURE_COLUMNS if c not in df.columns and c not in _ADDED_LATER]
    if missing:
        raise QuestionSetError(f"{p}: not a regression-sample file (no column {', '.join(missing)})")
    for col, after in _ADDED_LATER.items():
        if col not in df.columns:
            # a file written before the column existed: the same columns as a new
            # one, the value unknown ("", as for a plain answer's reason_kind)
            df.insert(int(df.columns.get_loc(after)) + 1, col, "")
    for col in ("expected", "evidence", "failed_checks"):
        df[col] = df[col].map(lambda v: [str(x) for x in v] if v is not None else [])
    return df


def failures_to_questions(failures: str | Path | pd.DataFrame, *, name: str = "failures") -> QuestionSet:
    """The questions behind regression samples (each once, in file order),
    ready for ``evaluate``."""
    df = read_failures(failures) if isinstance(failures, (str, Path)) else failures
    seen: dict[str, Question] = {}
    for i, rec in enumerate(df["question_record"], start=1):
        try:
            q = Question.from_record(json.loads(rec))
        except (ValueError, TypeError) as exc:
            raise QuestionSetError(f"{name}: regression sample {i}: {exc}") from None
        seen.setdefault(q.id, q)
    return QuestionSet(list(seen.values()), name=name)


class RegressionDiff(Displayable):
    """Before/after comparison of the same (variant, question) pairs.

    ``fixed``: failed before, passes now. ``still_failing``: fails now, no new
    check failing. ``broke``: passed before and fails now, or fails a check it
    used to pass. Each is a list of dicts (variant, id, category, question,
    before, after, new_checks); ``table`` has them all with a ``status``."""

    def __init__(self, before: Sequence[EvalRow], after: Sequence[EvalRow]) -> None:
        prev = {(r.variant, r.id): r for r in before}
        self.fixed: list[dict[str, Any]] = []
        self.still_failing: list[dict[str, Any]] = []
        self.broke: list[dict[str, Any]] = []
        self.unchanged_passing = 0
        self.not_compared = 0
        for new in after:
            old = prev.get((new.variant, new.id))
            if old is None:
                self.not_compared += 1
                continue
            new_checks = [c for c in new.failed_checks if c not in old.failed_checks]
            entry = {
                "variant": new.variant,
                "id": new.id,
                "category": new.category,
                "question": new.question,
                "before": old.failure_reason or "",
                "after": new.failure_reason or "",
                "new_checks": new_checks,
            }
            if new_checks:
                self.broke.append(entry)
            elif new.failed_checks:
                self.still_failing.append(entry)
            elif old.failed_checks:
                self.fixed.append(entry)
            else:
                self.unchanged_passing += 1

    @property
    def table(self) -> pd.DataFrame:
        """Every compared pair that failed before or after, with its status."""
        import pandas as pd

        rows = [
            {"status": status, **e}
            for status, items in (
                ("broke", self.broke),
                ("still failing", self.still_failing),
                ("fixed", self.fixed),
            )
            for e in items
        ]
        cols = ["status", "variant", "id", "category", "question", "before", "after", "new_checks"]
        return pd.DataFrame(rows, columns=cols)

    def __repr__(self) -> str:
        return (
            f"RegressionDiff(fixed={len(self.fixed)}, still_failing={len(self.still_failing)}, "
            f"broke={len(self.broke)}, passing={self.unchanged_passing})"
        )

    def to_text(self) -> str:
        return repr(self)
