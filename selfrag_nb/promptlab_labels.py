"""Prompt Lab against human labels: what a judge ruled, item by item, next to what people said.

    score_side (promptlab_runs.py) keeps what the role's judge ruled, per item (LabSide.judged):
      grade       one Judged per graded chunk   key chunk_id    verdict relevant / not relevant
      verify      one per claim of the first    key claim text  verdict supported / partial / unsupported
                  verification
      usefulness  one per question (first       key ""          verdict yes / partly / no
                  judgement)
    PromptLab(rag, qs, labels=sr.Labels(path))
      human_kind(role, labels)   the label kind a role is scored on ("chunk" / "claim" / "answer"),
                                 None when no labels of that kind exist: the role keeps its proxy
      relabel(role, row, labels) -> (row, items)   as each question finishes
        items  one LabelItem per judged key (union of both sides): the people's label or None,
               each side's verdict; None where that side did not rule, or its prompt was not
               reached (rule, offline model, no call: promptlab_runs.prompt_use_of)
        row    each side's agreement = share of its labelled items judged as people did
               (None: no labelled item); the proxy precision / recall cleared; label = what
               people said
      LabRun.label_items, LabRun.labels (the file)  ->  HumanFigures, mixed into LabRun:
        human(side)         Agreement (agreement.py) over the items that side's prompt reached;
                            items with no label counted apart (no_label), never as agreement
        kappa precision recall f1 confusion no_label     the candidate ("new") side
        by_category(side)   per question category + "overall"
        disagreements(side) the items where the judge and people differ (dicts, one call away)
        label_records()     every item, flat (exports)
      rescore(role, qid, side, labels)  a cached side of another version, scored the same way
                                 (PromptLab.best ranks every version against people)
      version_scores(run, side)  what PromptLab records on a version after a run (+ kappa ...)

The cached sides hold only what the judge ruled; the labels are matched at
run time, so editing the labels file changes the figures without re-running a
model. An item people labelled that the judge never saw (a chunk not
retrieved) is not a row: there is no verdict to compare.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from selfrag_nb.agreement import Agreement, agreement, by_category

if TYPE_CHECKING:
    import pandas as pd

    from selfrag_nb.labels import Labels
    from selfrag_nb.promptlab_runs import LabRow, LabRun, LabSide

__all__ = [
    "CLASSES",
    "POSITIVE",
    "ROLE_KINDS",
    "HumanFigures",
    "Judged",
    "LabelItem",
    "human_kind",
    "relabel",
    "rescore",
    "version_scores",
]

#: The label kind each judge role is scored on.
ROLE_KINDS = {"grade": "chunk", "verify": "claim", "usefulness": "answer"}
#: The verdicts of each kind, positive class first (precision / recall are of it).
CLASSES: dict[str, tuple[str, ...]] = {
    "chunk": ("relevant", "not relevant"),
    "claim": ("supported", "partial", "unsupported"),
    "answer": ("yes", "partly", "no"),
}
POSITIVE = {kind: classes[0] for kind, classes in CLASSES.items()}
Side = Literal["old", "new"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Judged(_Frozen):
    """One item a judge ruled on: a graded chunk, a verified claim, an answer."""

    key: str
    verdict: str
    #: For people reading: the chunk's source, the claim text.
    what: str = ""


class LabelItem(_Frozen):
    """One judged item of a question: what people said, what each side ruled."""

    id: str
    category: str
    kind: str
    key: str
    what: str = ""
    #: The people's label (spelled like a verdict); None: no label.
    human: str | None = None
    note: str = ""
    #: Line of the label in the labels file (0: none).
    line: int = 0
    #: Each side's verdict; None when it did not rule on the item or its prompt was not reached.
    old: str | None = None
    new: str | None = None


def human_kind(role: str, labels: Labels | None) -> str | None:
    """The label kind ``role`` is scored on, when ``labels`` hold any of it."""
    kind = ROLE_KINDS.get(role)
    if labels is None or kind is None or not labels.of_kind(kind):
        return None
    return kind


def _label(labels: Labels, kind: str, qid: str, key: str) -> tuple[str | None, str, int]:
    if kind == "chunk":
        found: Any = labels.get_chunk(qid, key)
    elif kind == "claim":
        found = labels.get_claim(qid, key)
    else:
        found = labels.get_answer(qid)
    return (None, "", 0) if found is None else (found.value, found.note, found.line)


def _share(items: list[LabelItem], side: Side) -> float | None:
    pairs = [
        (i.human, getattr(i, side)) for i in items if i.human is not None and getattr(i, side) is not None
    ]
    return sum(h == j for h, j in pairs) / len(pairs) if pairs else None


def relabel(role: str, row: LabRow, labels: Labels | None) -> tuple[LabRow, list[LabelItem]]:
    """``row`` scored against people (and its items), or unchanged with no
    items when the role keeps its proxy."""
    kind = human_kind(role, labels)
    if kind is None or labels is None:
        return row, []
    judged: dict[str, dict[str, Judged]] = {"old": {}, "new": {}}
    for name in ("old", "new"):
        side: LabSide = getattr(row, name)
        if side.reached:  # a verdict the template did not shape says nothing about it
            judged[name] = {j.key: j for j in side.judged}
    keys = list(dict.fromkeys([*(j.key for j in row.old.judged), *(j.key for j in row.new.judged)]))
    items = []
    for key in keys:
        human, note, line = _label(labels, kind, row.id, key)
        any_side = next(j for j in (*row.old.judged, *row.new.judged) if j.key == key)
        items.append(
            LabelItem(
                id=row.id,
                category=row.category,
                kind=kind,
                key=key,
                what=any_side.what,
                human=human,
                note=note,
                line=line,
                old=judged["old"][key].verdict if key in judged["old"] else None,
                new=judged["new"][key].verdict if key in judged["new"] else None,
            )
        )
    labelled = [i for i in items if i.human is not None]
    said = ", ".join(f"{sum(1 for i in labelled if i.human == c)} {c}" for c in CLASSES[kind])
    says = f"people: {len(labelled)} of {len(items)} {kind}s labelled" + (f" ({said})" if labelled else "")
    clear = {"precision": None, "recall": None}
    new_row = row.model_copy(
        update={
            "label": says,
            "old": row.old.model_copy(update={"agreement": _share(items, "old"), **clear}),
            "new": row.new.model_copy(update={"agreement": _share(items, "new"), **clear}),
        }
    )
    return new_row, items


def rescore(role: str, qid: str, side: LabSide | None, labels: Labels | None) -> LabSide | None:
    """A side read from the cache, its agreement against people as ``relabel``
    gives it (unchanged when the role keeps its proxy): ``PromptLab.best``
    ranks versions outside the last run on the same footing."""
    kind = human_kind(role, labels)
    if side is None or kind is None or labels is None:
        return side
    pairs = [(_label(labels, kind, qid, j.key)[0], j.verdict) for j in side.judged]
    known = [(h, v) for h, v in pairs if h is not None]
    share = sum(h == v for h, v in known) / len(known) if known else None
    return side.model_copy(update={"agreement": share, "precision": None, "recall": None})


class HumanFigures:
    """Agreement with people, for a run scored against labels (mixed into LabRun)."""

    if TYPE_CHECKING:
        role: str
        labels: str
        label_items: list[LabelItem]

    @property
    def label_kind(self) -> str | None:
        """ "chunk" / "claim" / "answer" when the run was scored against people, else None."""
        return ROLE_KINDS.get(self.role) if self.labels else None

    def human(self, side: Side = "new") -> Agreement | None:
        """Agreement of ``side``'s judge with people over the items its prompt
        reached (None when the run used the proxy)."""
        return self.by_category(side).get("overall") if self.label_kind else None

    def by_category(self, side: Side = "new") -> dict[str, Agreement]:
        """Per question category, then "overall" ({} when the run used the proxy)."""
        kind = self.label_kind
        if kind is None:
            return {}
        rows = [(i.category, i.human, v) for i in self.label_items if (v := getattr(i, side)) is not None]
        return by_category(rows, CLASSES[kind], POSITIVE[kind])

    def _new(self) -> Agreement | None:
        return self.human("new")

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa of the candidate vs people (None: undefined, see ``human().kappa_note``)."""
        a = self._new()
        return a.kappa if a else None

    @property
    def precision(self) -> float | None:
        a = self._new()
        return a.precision if a else None

    @property
    def recall(self) -> float | None:
        a = self._new()
        return a.recall if a else None

    @property
    def f1(self) -> float | None:
        a = self._new()
        return a.f1 if a else None

    @property
    def confusion(self) -> dict[str, dict[str, int]]:
        """confusion[people][judge] of the candidate ({} when the run used the proxy)."""
        a = self._new()
        return a.confusion if a else {}

    @property
    def no_label(self) -> int:
        """Candidate verdicts with no human label (never counted as agreement)."""
        a = self._new()
        return a.no_label if a else 0

    def disagreements(self, side: Side = "new") -> list[dict[str, Any]]:
        """The items where ``side``'s judge and people differ: id, category,
        kind, key, what, people, judge, note, line (of the label)."""
        return [
            {
                "id": i.id,
                "category": i.category,
                "kind": i.kind,
                "key": i.key,
                "what": i.what,
                "people": i.human,
                "judge": getattr(i, side),
                "note": i.note,
                "line": i.line,
            }
            for i in self.label_items
            if i.human is not None and getattr(i, side) is not None and getattr(i, side) != i.human
        ]

    def label_records(self) -> list[dict[str, Any]]:
        """Every judged item, flat: people's label and each side's verdict."""
        return [i.model_dump() for i in self.label_items]

    def labels_to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.label_records())

    def human_totals(self, side: Side) -> dict[str, Any]:
        """The ``totals()`` entries of a side scored against people ({} on a proxy run)."""
        a = self.human(side)
        if a is None:
            return {}
        return {
            "human": a.to_dict(),
            "kappa": a.kappa,
            "precision": a.precision,
            "recall": a.recall,
            "f1": a.f1,
            "no_label": a.no_label,
            "by_category": {c: f.to_dict() for c, f in self.by_category(side).items()},
        }


def version_scores(run: LabRun, side: Side) -> dict[str, Any]:
    """What a version's ``scores`` record after ``run`` (rounded; ISO time)."""
    from selfrag_nb.promptlab_runs import iso_time, rounded

    t = run.totals()[side]
    out: dict[str, Any] = {
        "agreement": rounded(t["agreement"]),
        "reached": t["reached"],  # rows the prompt reached: agreement is over these
        "labelled": t["labelled"],
        "questions": len(run.rows),
        "offline": t["offline"],
        "not_used": t["not_used"],
        "precision": rounded(t["precision"]),
        "recall": rounded(t["recall"]),
        "tokens_in": t["tokens_in"],
        "cost": rounded(t["cost"], 6),
        "run_at": iso_time(run.created),
        "cancelled": run.cancelled,
    }
    if "human" in t:  # scored against people: kappa and its denominators
        h = t["human"]
        out |= {
            "scored_on": run.labels,
            "kappa": rounded(h["kappa"]),
            "f1": rounded(h["f1"]),
            "items": h["n"],
            "no_label": h["no_label"],
        }
    return out


def agreement_of(pairs: list[tuple[str, str]], kind: str) -> Agreement:
    """Agreement of ``(people, judge)`` pairs of one label kind (for scripts)."""
    return agreement(pairs, CLASSES[kind], POSITIVE[kind])
