"""Prompt Lab engine: edit any role's prompt, re-run labelled questions, compare.

    PromptLab(rag, questions, role="grade", cache=True, labels=None)
      labels           sr.Labels: grade / verify / usefulness scored against people where labels of
                       their kind exist (promptlab_labels.py: kappa, P/R/F1, confusion); else proxies
      roles            every model role, in flow order (flow.ROLES): decide rewrite grade
                       rerank assess generate verify;  role = the one a view opens on
      versions[role]   hash -> template text, note, scores  (baseline = rag.prompts at creation)
                       lab.versions(role) -> LabVersions: dicts with ISO times, rounded scores; a table
      current[role]    the candidate being edited
      set_template(role, text) --validate (Prompts rules)--> version hash   (TemplateError)
      run(role, ids, version, baseline, cancel=event)
        ids (default: stratified, one per category among the questions the role is labelled for)
        for side in (baseline, candidate):          same template hash -> run once
          variant = rag with a copy of its prompts where prompts[role] = that version
          per question, at most `concurrency` in flight; a cancel stops scheduling more:
            cached?  memory, then disk (promptlab_cache.py: prompt hash + model identity
                     + context + question record)  -> LabSide(cached=True), no model call
            else     stepper run up to the role's stage -> score_side  (promptlab_exec.py)
                     (promptlab_runs.py: what each role is scored against, ROLE_LABELS)
          -> LabSide (verdict, agreement, tokens/cost/latency of the role's calls,
                      prompt_use: did this template reach a model here? used / offline / not used)
             a cached side recorded for another template is "not used"
        -> LabRun (rows: old vs new per finished question, planned, cancelled, offline note;
                   agreement over the rows each side's prompt reached: reached_old / reached_new)
        -> scores recorded on both versions (rounded; run_at as ISO time)
      cancel(role?)    ask running runs to stop: questions in flight finish, no new ones start
      best(role)       highest agreement on the last run's questions, over the rows its prompt
                       reached (ties keep the older)
      export(role)     the winning template text (+ JSON sidecar with its hash) / apply(role)
      export_path()    where the widget writes exports: export_dir (prompt_lab_exports/)

The records a run produces (LabSide, LabRow, LabRun) and the scoring of one
side live in promptlab_runs.py; the disk cache in promptlab_cache.py. The
engine is plain data and methods, usable from a script. Its notebook
faces come through ``Displayable`` (static HTML and text in
display/prompt_lab_html.py; the AnyWidget in display/prompt_lab_widget.py, one per
lab). The widget holds the engine; the engine holds no widget, it only calls
back whoever subscribed with ``on_change`` (held weakly). The user's
pipeline is never changed behind their back: runs use copies of its prompts,
and only ``apply`` writes a template into ``rag.prompts``.

Why variants are rag copies: the runner's ``Prompts`` is shared by every
stage, so swapping one template in place would race with a running question.
A shallow copy of the runner keeps the same models, cache and cassette (so
nothing is re-authenticated or re-opened) with its own ``Prompts``; the
model reranker is rebuilt on that copy, since it calls the runner it was made with.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from selfrag_nb._displayable import Displayable, view
from selfrag_nb.errors import InputError, InputTypeError, NotFoundError, TemplateError
from selfrag_nb.eval.questions import Question, QuestionSet
from selfrag_nb.eval.questions import questions as load_questions
from selfrag_nb.flow import ROLES
from selfrag_nb.labels import Labels
from selfrag_nb.promptlab_cache import RunStore, default_run_dir, run_context, side_key
from selfrag_nb.promptlab_exec import schedule
from selfrag_nb.promptlab_labels import human_kind, relabel, rescore, version_scores
from selfrag_nb.promptlab_runs import (
    LabRow,
    LabRun,
    LabSide,
    LabVersions,
    is_labelled,
    iso_time,
    label_for,
    mean_of,
    rounded,
)
from selfrag_nb.rerankers import ModelReranker

if TYPE_CHECKING:
    from selfrag_nb.llm.schemas import Role
    from selfrag_nb.pipeline import SelfRAG

__all__ = [
    "EXPORT_DIR",
    "OFFLINE_PROMPT_NOTE",
    "ROLE_LABELS",
    "TUNABLE_ROLES",
    "LabRow",
    "LabRun",
    "LabSide",
    "LabVersions",
    "PromptLab",
]

OFFLINE_PROMPT_NOTE = (
    "The offline model reads structured inputs, not prompts: template edits do not change its "
    "verdicts. Configure a real model (or a recorded cassette) to tune prompts."
)
#: Every model role, in flow order: each is scored against the question-set labels.
TUNABLE_ROLES: tuple[str, ...] = ROLES
#: What each role is scored against (shown under the role picker; promptlab_runs.py scores it).
ROLE_LABELS = {
    "decide": "retrieve or not, vs should_retrieve",
    "rewrite": "protected spans kept in every query, and retrieval recall of the relevant sources",
    "grade": "chunks judged relevant, vs the relevant sources (precision / recall)",
    "rerank": "rank of the first relevant source after reranking (reciprocal rank, MRR)",
    "assess": "answer / clarify / refuse, vs the expected outcomes",
    "generate": "must_include found, must_not_include avoided, relevant sources cited",
    "verify": "recommendation and outcome, vs expected outcomes",
    "usefulness": "answers the question (yes / partly vs no), vs must_include found in the answer",
}
#: Where the widget writes exported templates (relative to the working
#: directory, i.e. next to the notebook; gitignored in this repository).
EXPORT_DIR = Path("prompt_lab_exports")


# ------------------------------------------------------------------ versions


@dataclass
class _Version:
    role: str
    hash: str
    text: str
    created: float
    note: str = ""
    scores: dict[str, Any] = field(default_factory=dict)


def _template_hash(text: str) -> str:
    # The same digest as Prompts.hash, so lab versions and trace prompt hashes agree.
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _as_question_set(qs: object) -> QuestionSet:
    if qs is None:
        return load_questions("sample")
    if isinstance(qs, QuestionSet):
        return qs
    if isinstance(qs, (str, Path)):
        return load_questions(qs)
    if isinstance(qs, Iterable):
        items = list(qs)
        if all(isinstance(q, Question) for q in items):
            return QuestionSet(items, name="questions")
        if all(isinstance(q, dict) for q in items):
            return QuestionSet.from_records(items)
    raise InputTypeError(
        "questions must be a QuestionSet (sr.questions('sample')), a path to a .jsonl question set, "
        f"or a list of Question records / dicts; got {type(qs).__name__}"
    )


def _vouched(hit: LabSide | None, version: str) -> LabSide | None:
    """A cached side as it counts for ``version``: one recorded for another
    template (a copied or colliding file) says nothing about this one, so it
    is never counted as reached."""
    if hit is not None and hit.reached and (hit.version != version or version not in hit.prompt_hashes):
        why = f"served from the cache of template {hit.version}, not {version}"
        return hit.model_copy(update={"prompt_use": "not used", "prompt_note": why})
    return hit


# ------------------------------------------------------------------ the lab


class PromptLab(Displayable):
    """Tune the evaluator prompts of a pipeline against labelled questions.

    ``lab = sr.PromptLab(rag, sr.questions("sample"))``; in a notebook the
    lab shows itself as a widget. From code::

        h = lab.set_template("grade", new_text, note="stricter")
        run = lab.run("grade")            # baseline vs h on a stratified subset
        run.agreement_old, run.agreement_new
        lab.export("grade", "grade.txt")  # the best version + grade.txt.json
    """

    #: Human labels (sr.Labels): grade, verify and usefulness are scored against them where they exist.
    labels: Labels | None = None

    def __init__(
        self,
        rag: SelfRAG,
        questions: QuestionSet | str | Path | Iterable[Any] | None = None,
        *,
        roles: Sequence[str] = TUNABLE_ROLES,
        role: str | None = None,
        concurrency: int = 4,
        per_category: int = 1,
        cache: bool | str | Path = True,
        export_dir: str | Path = EXPORT_DIR,
        labels: Labels | str | Path | None = None,
    ) -> None:
        if rag is None or not hasattr(rag, "prompts") or not hasattr(rag, "runner"):
            raise InputTypeError(
                "PromptLab needs a SelfRAG pipeline: PromptLab(sr.SelfRAG(kb), sr.questions('sample'))"
            )
        if isinstance(roles, str):
            raise InputTypeError(f"roles must be a list of role names, not one string: use [{roles!r}]")
        bad = [r for r in roles if r not in TUNABLE_ROLES]
        if bad or not roles:
            raise InputError(f"roles must be a non-empty subset of {list(TUNABLE_ROLES)}; got {list(roles)}")
        # Flow order whatever order they were given in: the picker reads like the pipeline.
        chosen = tuple(r for r in TUNABLE_ROLES if r in roles)
        if role is not None and role not in chosen:
            raise InputError(f"role must be one of this lab's roles {list(chosen)}; got {role!r}")
        if not isinstance(concurrency, int) or concurrency < 1:
            raise InputError(f"concurrency must be an integer >= 1, got {concurrency!r}")
        if not isinstance(per_category, int) or per_category < 1:
            raise InputError(f"per_category must be an integer >= 1, got {per_category!r}")
        if not isinstance(cache, (bool, str, Path)):
            raise InputTypeError(f"cache must be True, False or a folder path; got {type(cache).__name__}")
        self.rag = rag
        self.questions = _as_question_set(questions)
        self.labels = labels if isinstance(labels, Labels) or labels is None else Labels(labels)
        self.roles: tuple[str, ...] = chosen
        #: The role a view of this lab opens on.
        self.role: str = role or chosen[0]
        self.concurrency = concurrency
        self.per_category = per_category
        #: Scored sides on disk (None: memory only). Re-runs across kernel restarts are free.
        self.store: RunStore | None = (
            None if cache is False else RunStore(default_run_dir() if cache is True else cache)
        )
        #: Folder the widget writes exports into (relative: to the working directory).
        self.export_dir = Path(export_dir)
        self._lock = threading.RLock()
        self._versions: dict[str, dict[str, _Version]] = {}
        self._current: dict[str, str] = {}
        self._baseline: dict[str, str] = {}
        self._last: dict[str, LabRun] = {}
        self._cache: dict[str, LabSide] = {}
        self._active: dict[int, tuple[str, threading.Event]] = {}
        self._listeners: list[Callable[[], Callable[[str], None] | None]] = []
        now = time.time()
        for r in self.roles:
            text = rag.prompts[r]
            h = _template_hash(text)
            note = "baseline: packaged default" if rag.prompts.is_default(r) else "baseline: rag.prompts"
            self._versions[r] = {h: _Version(r, h, text, now, note)}
            self._current[r] = h
            self._baseline[r] = h

    def __repr__(self) -> str:
        cur = ", ".join(f"{r}={self._current[r]}" for r in self.roles)
        return f"PromptLab({len(self.questions)} questions, {cur}{', offline' if self.offline else ''})"

    # -- roles and templates ------------------------------------------------
    def _role(self, role: str) -> str:
        if role not in self.roles:
            raise InputError(f"unknown role {role!r} for this lab; its roles: {', '.join(self.roles)}")
        return role

    def model_name(self, role: str) -> str:
        return str(self.rag.runner.models_by_role().get(self._role(role), ""))

    def is_offline(self, role: str) -> bool:
        """True when ``role`` is answered by a model that ignores prompt text."""
        model = self.rag.runner.model_for(cast("Role", self._role(role)))
        return bool(getattr(model, "offline", False))

    @property
    def offline(self) -> bool:
        """True when any tunable role is answered by the offline model."""
        return any(self.is_offline(r) for r in self.roles)

    def unused_reason(self, role: str) -> str:
        """Why ``role``'s template cannot reach a model in this pipeline
        (its stage is switched off, or the reranker is not the model), else ""."""
        self._role(role)
        s = self.rag.settings
        if role == "rewrite" and not s.rewrite:
            return "Rewriting is off (settings.rewrite=False): the rewrite template is not used."
        if role == "rerank":
            if not s.rerank:
                return "Reranking is off (settings.rerank=False): the rerank template is not used."
            if not isinstance(self.rag.reranker, ModelReranker):
                return (
                    f"The reranker is {self.rag.reranker_name!r}, not the model: the rerank template "
                    "is not used. Build the pipeline with reranker='model' to tune it."
                )
        return ""

    def note(self, role: str | None = None) -> str:
        """Why template edits cannot change verdicts (offline model, stage off,
        reranker not a model), else ""."""
        off = self.offline if role is None else self.is_offline(role)
        parts = [OFFLINE_PROMPT_NOTE] if off else []
        if role is not None and self.unused_reason(role):
            parts.append(self.unused_reason(role))
        return " ".join(parts)

    def template(self, role: str) -> str:
        """The candidate template of ``role`` (what the editor holds)."""
        with self._lock:
            return self._versions[self._role(role)][self._current[role]].text

    def current(self, role: str) -> str:
        """Hash of the candidate version."""
        with self._lock:
            return self._current[self._role(role)]

    def baseline(self, role: str) -> str:
        """Hash of the baseline version (``rag.prompts[role]`` when the lab was made)."""
        with self._lock:
            return self._baseline[self._role(role)]

    def set_template(self, role: str, text: str, note: str = "") -> str:
        """Make ``text`` the candidate for ``role``; returns its version hash.
        Validated by the pipeline's own template rules: TemplateError names the problem."""
        self._role(role)
        if not isinstance(text, str):
            raise TemplateError(f"template for {role!r} must be text, got {type(text).__name__}")
        trial = self.rag.prompts.copy()
        try:
            trial[role] = text
        except (ValueError, TypeError, KeyError) as exc:
            raise TemplateError(str(exc).strip("'\"")) from None
        h = _template_hash(text)
        with self._lock:
            versions = self._versions[role]
            if h not in versions:
                versions[h] = _Version(role, h, text, time.time(), note)
            elif note and not versions[h].note:
                versions[h].note = note
            self._current[role] = h
        self._changed(role)
        return h

    def _resolve(self, role: str, version: str) -> _Version:
        versions = self._versions[role]
        if version in versions:
            return versions[version]
        found = [v for h, v in versions.items() if len(version) >= 4 and h.startswith(version)]
        if len(found) == 1:
            return found[0]
        known = ", ".join(versions)
        what = "ambiguous" if found else "unknown"
        raise NotFoundError(f"{what} version {version!r} of {role!r}; known versions: {known}", key=version)

    def versions(self, role: str) -> LabVersions:
        """Every version of ``role`` (oldest first): hash, created (ISO time,
        UTC), note, scores of its latest run (rounded; ``reached``: rows its
        prompt reached), whether it is the current / baseline one. A list of
        dicts that shows itself as a table."""
        self._role(role)
        with self._lock:
            return LabVersions(
                (
                    {
                        "hash": v.hash,
                        "created": iso_time(v.created),
                        "note": v.note,
                        "scores": dict(v.scores),
                        "current": v.hash == self._current[role],
                        "baseline": v.hash == self._baseline[role],
                        "chars": len(v.text),
                    }
                    for v in self._versions[role].values()
                ),
                role=role,
            )

    def version_text(self, role: str, version: str) -> str:
        """The template text of a version (full hash or a unique prefix of 4+ digits)."""
        with self._lock:
            return self._resolve(self._role(role), version).text

    def version_hash(self, role: str, version: str) -> str:
        """The full hash of a version given by a unique prefix (KeyError when unknown)."""
        with self._lock:
            return self._resolve(self._role(role), version).hash

    def revert(self, role: str, version: str) -> str:
        """Make an earlier version the candidate again; returns its hash."""
        with self._lock:
            v = self._resolve(self._role(role), version)
            self._current[role] = v.hash
        self._changed(role)
        return v.hash

    def set_baseline(self, role: str, version: str) -> str:
        """Compare later runs against ``version`` instead; returns its hash."""
        with self._lock:
            v = self._resolve(self._role(role), version)
            self._baseline[role] = v.hash
        self._changed(role)
        return v.hash

    # -- questions ------------------------------------------------------------
    def default_ids(self, role: str) -> list[str]:
        """A small stratified subset: ``per_category`` questions of each
        category among those labelled for ``role`` (seeded, file order)."""
        role = self._role(role)
        kind, labels = human_kind(role, self.labels), self.labels
        ok = {lab.id for lab in labels.of_kind(kind)} if kind and labels else None  # labelled by people
        mine = [q for q in self.questions if (q.id in ok if ok is not None else is_labelled(role, q))]
        pool = QuestionSet(mine, name=self.questions.name)
        return [q.id for q in pool.sample(self.per_category, seed=0, per_category=True)]

    def _pick(self, role: str, ids: Iterable[str] | None) -> list[Question]:
        if ids is None:
            chosen = self.default_ids(role)
        elif isinstance(ids, str):
            raise InputTypeError(
                f"ids must be a list of question ids, not one string ({ids!r}): use [{ids!r}]"
            )
        else:
            chosen = list(dict.fromkeys(ids))
        if not chosen:
            raise InputError(f"no questions to run for {role!r}: pick at least one question id")
        by_id = {q.id: q for q in self.questions}
        unknown = [i for i in chosen if i not in by_id]
        if unknown:
            # one missing id is the key, as KeyError's; several are a tuple (the message names them all)
            key = unknown[0] if len(unknown) == 1 else tuple(unknown)
            raise NotFoundError(f"unknown question id(s) {unknown} in {self.questions.name}", key=key)
        return [by_id[i] for i in chosen]

    # -- running --------------------------------------------------------------
    def _context(self, role: str) -> dict[str, Any]:
        """What besides the template and the question shapes a verdict (promptlab_cache.run_context)."""
        return run_context(self.rag, role)

    def _key(self, role: str, version: str, ctx: dict[str, Any], q: Question) -> str:
        return side_key(role, version, ctx, q.model_dump(mode="json"))

    def _cached(self, key: str, version: str) -> LabSide | None:
        with self._lock:
            hit = self._cache.get(key)
        if hit is None and self.store is not None:
            hit = self.store.get(key)
            if hit is not None:
                with self._lock:
                    self._cache[key] = hit
        return _vouched(hit, version)

    def run(
        self,
        role: str,
        ids: Iterable[str] | None = None,
        version: str | None = None,
        *,
        baseline: str | None = None,
        use_cache: bool = True,
        on_row: Callable[[LabRow, int, int], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> LabRun:
        """Run questions ``ids`` (default: ``default_ids(role)``) with the
        baseline and the candidate (default: the current version) and compare
        them question by question. Sides already run with the same template,
        model, context and question are reused from memory or the disk cache
        unless ``use_cache=False``. ``on_row(row, done, total)`` is called as
        each question finishes (both sides). Setting ``cancel`` (or calling
        ``lab.cancel(role)``) stops scheduling new questions: those in flight
        finish, and the run returns with ``cancelled=True`` and the rows done."""
        role = self._role(role)
        qs = self._pick(role, ids)
        with self._lock:
            cand = self._resolve(role, version or self._current[role])
            base = self._resolve(role, baseline or self._baseline[role])
        ctx = self._context(role)
        t0 = time.perf_counter()
        stop = threading.Event()
        token = id(stop)
        with self._lock:
            self._active[token] = (role, stop)

        def stopped() -> bool:
            return stop.is_set() or (cancel is not None and cancel.is_set())

        versions = list(dict.fromkeys([base.hash, cand.hash]))
        sides: dict[tuple[str, str], LabSide] = {}
        keys: dict[tuple[str, str], str] = {}
        for v in versions:
            for q in qs:
                keys[(v, q.id)] = self._key(role, v, ctx, q)
                hit = self._cached(keys[(v, q.id)], v) if use_cache else None
                if hit is not None:
                    sides[(v, q.id)] = hit.model_copy(update={"cached": True})

        rows: dict[str, LabRow] = {}
        items: dict[str, list[Any]] = {}

        def emit(q: Question) -> None:
            if q.id in rows or any((v, q.id) not in sides for v in versions):
                return
            row = LabRow(
                id=q.id,
                category=q.category,
                question=q.question,
                label=label_for(role, q),
                old=sides[(base.hash, q.id)],
                new=sides[(cand.hash, q.id)],
            )
            row, items[q.id] = relabel(role, row, self.labels)  # people's labels, where they exist
            rows[q.id] = row
            if on_row is not None:
                on_row(row, len(rows), len(qs))

        try:
            for q in qs:
                emit(q)  # fully cached questions are free: they never wait for a cancel
            waiting = [q for q in qs if q.id not in rows]
            if waiting and not stopped():
                with self._lock:
                    texts = {v: self._versions[role][v].text for v in versions}
                for (v, qid), side in schedule(
                    self.rag,
                    role,
                    texts,
                    waiting,
                    sides,
                    concurrency=self.concurrency,
                    emit=emit,
                    stopped=stopped,
                ):
                    if side.error is None:
                        with self._lock:
                            self._cache[keys[(v, qid)]] = side
                        if self.store is not None:
                            self.store.put(keys[(v, qid)], side)
        finally:
            with self._lock:
                self._active.pop(token, None)
        run = LabRun(
            role=role,
            baseline=base.hash,
            candidate=cand.hash,
            question_set=self.questions.name,
            rows=[rows[q.id] for q in qs if q.id in rows],
            offline=self.is_offline(role),
            note=self.note(role),
            model=self.model_name(role),
            wall_ms=(time.perf_counter() - t0) * 1000,
            planned=len(qs),
            cancelled=len(rows) < len(qs) and stopped(),
            labels=str(self.labels.path) if human_kind(role, self.labels) and self.labels else "",
            label_items=[i for q in qs for i in items.get(q.id, [])],
        )
        self._record(role, run, base, cand)
        return run

    def _record(self, role: str, run: LabRun, base: _Version, cand: _Version) -> None:
        with self._lock:
            self._last[role] = run
            base.scores = version_scores(run, "old")
            cand.scores = version_scores(run, "new")
        self._changed(role)

    def cancel(self, role: str | None = None) -> int:
        """Ask the running runs of ``role`` (default: every role) to stop:
        questions already started finish, no new one starts. Returns how many
        runs were asked."""
        if role is not None:
            self._role(role)
        with self._lock:
            hits = [ev for r, ev in self._active.values() if role is None or r == role]
        for ev in hits:
            ev.set()
        return len(hits)

    @property
    def running(self) -> bool:
        """True while a run of this lab is in progress (in any thread)."""
        with self._lock:
            return bool(self._active)

    def last_run(self, role: str) -> LabRun | None:
        with self._lock:
            return self._last.get(self._role(role))

    def clear_cache(self, *, disk: bool = False) -> None:
        """Forget every cached side (and with ``disk=True`` the stored ones
        too): the next run asks the model again."""
        with self._lock:
            self._cache.clear()
        if disk and self.store is not None:
            self.store.clear()

    # -- choosing and exporting -----------------------------------------------
    def best(self, role: str) -> dict[str, Any]:
        """The version with the highest agreement on the last run's questions
        (over the rows its prompt reached), among the versions run on all of
        them (ties keep the baseline, then the older version). Raises
        InputError before any run."""
        role = self._role(role)
        with self._lock:
            last = self._last.get(role)
            if last is None:
                raise InputError(f"no run for {role!r} yet: call lab.run({role!r}) first")
            if not last.rows:  # cancelled before any question finished: nothing to rank
                base = self._versions[role][self._baseline[role]]
                return {
                    "hash": base.hash,
                    "agreement": None,
                    "questions": 0,
                    "note": base.note,
                    "created": iso_time(base.created),
                }
            ctx = self._context(role)
            qs = self._pick(role, last.ids)
            ranked: list[tuple[float, int, int, _Version]] = []
            for order, v in enumerate(self._versions[role].values()):
                # cached sides hold the proxy: with labels, scored against people as the run does
                hits = [_vouched(self._cache.get(self._key(role, v.hash, ctx, q)), v.hash) for q in qs]
                sides = [rescore(role, q.id, hit, self.labels) for q, hit in zip(qs, hits, strict=True)]
                if v.hash in (last.baseline, last.candidate):
                    sides = [
                        r.old if v.hash == last.baseline else r.new for r in last.rows
                    ]  # the last run is the reference even when the context changed since
                if any(s is None for s in sides):
                    continue
                agreement = mean_of(s.agreement for s in sides if s is not None and s.reached)
                score = -1.0 if agreement is None else agreement
                ranked.append((score, int(v.hash == self._baseline[role]), -order, v))
            score, _, _, win = max(ranked, key=lambda t: t[:3])
            return {
                "hash": win.hash,
                "agreement": None if score < 0 else rounded(score),
                "questions": len(qs),
                "note": win.note,
                "created": iso_time(win.created),
            }

    def export(self, role: str, path: str | Path | None = None, version: str | None = None) -> str:
        """The winning template text (``version``, else ``best(role)`` after a
        run, else the current one). With ``path``: writes the text exactly (so
        ``rag.prompts[role] = Path(path).read_text()`` gives the same hash) and
        a JSON sidecar ``<path>.json`` with role, hash, note and scores."""
        role = self._role(role)
        with self._lock:
            if version is None:
                version = self.best(role)["hash"] if role in self._last else self._current[role]
            v = self._resolve(role, version)
        if path is not None:
            p = Path(path)
            p.write_text(v.text, encoding="utf-8", newline="")
            side = p.with_name(p.name + ".json")
            meta = {
                "role": role,
                "hash": v.hash,
                "lang": self.rag.prompts.lang,
                "note": v.note,
                "created": iso_time(v.created),
                "scores": v.scores,
                "baseline": self._baseline[role],
                "question_set": self.questions.describe(),
                "model": self.model_name(role),
                "exported_at": iso_time(time.time()),
            }
            side.write_text(json.dumps(meta, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
        return v.text

    def apply(self, role: str, version: str | None = None) -> str:
        """Write a version (default: the current one) into ``rag.prompts[role]``:
        the pipeline uses it from its next question. Returns its hash."""
        role = self._role(role)
        with self._lock:
            v = self._resolve(role, version or self._current[role])
        self.rag.prompts[role] = v.text
        self._changed(role)
        return v.hash

    # -- change notices (the widget subscribes; the lab holds no view) -------
    def on_change(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(role)`` after each change of ``role``'s versions,
        baseline, runs or applied template. A bound method is held weakly, so
        a view that goes away stops being called."""
        ref: Callable[[], Callable[[str], None] | None] = (
            weakref.WeakMethod(callback) if inspect.ismethod(callback) else lambda: callback
        )
        with self._lock:
            self._listeners.append(ref)

    def _changed(self, role: str) -> None:
        with self._lock:
            self._listeners = [ref for ref in self._listeners if ref() is not None]
            listeners = [cb for cb in (ref() for ref in self._listeners) if cb is not None]
        for cb in listeners:
            cb(role)

    @property
    def widget(self) -> Any:
        """The AnyWidget view of this lab (one per lab, kept by the view layer)."""
        return view(self)
