"""Prompt Lab engine: edit an evaluator prompt, re-run labelled questions, compare.

    PromptLab(rag, questions)
      versions[role]   hash -> template text, note, scores  (baseline = rag.prompts at creation)
      current[role]    the candidate being edited
      set_template(role, text) --validate (Prompts rules)--> version hash   (TemplateError)
      run(role, ids, version, baseline)
        ids (default: stratified, one per category among the questions the role is labelled for)
        for side in (baseline, candidate):          same template hash -> run once
          variant = rag with a copy of its prompts where prompts[role] = that version
          per question (thread pool, bounded):     cached per (role, hash, context, question)
            decide -> stepper.decide()  RETRIEVE / NO_RETRIEVE  vs should_retrieve
            grade  -> stepper.grade()   chunks judged relevant  vs relevant sources
            verify -> full run          recommendation + outcome vs expected
          -> LabSide (verdict, agreement, tokens/cost/latency of the role's calls)
        -> LabRun (rows: old vs new per question, totals; offline note when offline)
        -> scores recorded on both versions
      best(role)       highest agreement on the last run's questions (ties keep the older)
      export(role)     the winning template text (+ JSON sidecar with its hash) / apply(role)

The records a run produces (LabSide, LabRow, LabRun) and the scoring of one
side live in promptlab_runs.py. The engine is plain data and methods, usable from a script. Its notebook
faces come through ``Displayable`` (static HTML and text in
display/prompt_lab_html.py; the AnyWidget in display/prompt_lab_widget.py, one per
lab). The widget holds the engine; the engine holds no widget, it only calls
back whoever subscribed with ``on_change`` (held weakly). The user's
pipeline is never changed behind their back: runs use copies of its prompts,
and only ``apply`` writes a template into ``rag.prompts``.

Why variants are rag copies: the runner's ``Prompts`` is shared by every
stage, so swapping one template in place would race with a running question.
A shallow copy of the runner keeps the same models, cache and cassette (so
nothing is re-authenticated or re-opened) with its own ``Prompts``.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from selfrag_nb._displayable import Displayable, view
from selfrag_nb.errors import InputError, InputTypeError, NotFoundError, TemplateError
from selfrag_nb.eval.questions import Question, QuestionSet
from selfrag_nb.eval.questions import questions as load_questions
from selfrag_nb.promptlab_runs import LabRow, LabRun, LabSide, is_labelled, label_for, mean_of, score_side

if TYPE_CHECKING:
    from selfrag_nb.llm.schemas import Role
    from selfrag_nb.pipeline import SelfRAG

__all__ = [
    "OFFLINE_PROMPT_NOTE",
    "TUNABLE_ROLES",
    "LabRow",
    "LabRun",
    "LabSide",
    "PromptLab",
    "TemplateError",
]

OFFLINE_PROMPT_NOTE = (
    "The offline model reads structured inputs, not prompts: template edits do not change its "
    "verdicts. Configure a real model (or a recorded cassette) to tune prompts."
)
#: Roles whose verdicts can be scored against the question-set labels.
TUNABLE_ROLES: tuple[str, ...] = ("decide", "grade", "verify")
#: What each role is scored against (shown next to the role picker).
ROLE_LABELS = {
    "decide": "retrieve or not, vs should_retrieve",
    "grade": "chunks judged relevant, vs the relevant sources",
    "verify": "recommendation and outcome, vs expected outcomes",
}
# The stage a role's verdict needs: running further would spend tokens on
# stages the template cannot influence before its own verdict.
_STOP_AT = {"decide": "decide", "grade": "grade", "verify": "finish"}


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

    def __init__(
        self,
        rag: SelfRAG,
        questions: QuestionSet | str | Path | Iterable[Any] | None = None,
        *,
        roles: Sequence[str] = TUNABLE_ROLES,
        concurrency: int = 4,
        per_category: int = 1,
    ) -> None:
        if rag is None or not hasattr(rag, "prompts") or not hasattr(rag, "runner"):
            raise InputTypeError(
                "PromptLab needs a SelfRAG pipeline: PromptLab(sr.SelfRAG(kb), sr.questions('sample'))"
            )
        bad = [r for r in roles if r not in TUNABLE_ROLES]
        if bad or not roles:
            raise InputError(f"roles must be a non-empty subset of {list(TUNABLE_ROLES)}; got {list(roles)}")
        if not isinstance(concurrency, int) or concurrency < 1:
            raise InputError(f"concurrency must be an integer >= 1, got {concurrency!r}")
        if not isinstance(per_category, int) or per_category < 1:
            raise InputError(f"per_category must be an integer >= 1, got {per_category!r}")
        self.rag = rag
        self.questions = _as_question_set(questions)
        self.roles: tuple[str, ...] = tuple(dict.fromkeys(roles))
        self.concurrency = concurrency
        self.per_category = per_category
        self._lock = threading.RLock()
        self._versions: dict[str, dict[str, _Version]] = {}
        self._current: dict[str, str] = {}
        self._baseline: dict[str, str] = {}
        self._last: dict[str, LabRun] = {}
        self._cache: dict[tuple[str, str, str, str], LabSide] = {}
        self._listeners: list[Callable[[], Callable[[str], None] | None]] = []
        now = time.time()
        for role in self.roles:
            text = rag.prompts[role]
            h = _template_hash(text)
            note = "baseline: packaged default" if rag.prompts.is_default(role) else "baseline: rag.prompts"
            self._versions[role] = {h: _Version(role, h, text, now, note)}
            self._current[role] = h
            self._baseline[role] = h

    def __repr__(self) -> str:
        cur = ", ".join(f"{r}={self._current[r]}" for r in self.roles)
        return f"PromptLab({len(self.questions)} questions, {cur}{', offline' if self.offline else ''})"

    # -- roles and templates ------------------------------------------------
    def _role(self, role: str) -> str:
        if role not in self.roles:
            raise InputError(f"unknown role {role!r} for this lab; tunable roles: {', '.join(self.roles)}")
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

    def note(self, role: str | None = None) -> str:
        """The offline note when template edits cannot change verdicts, else ""."""
        off = self.offline if role is None else self.is_offline(role)
        return OFFLINE_PROMPT_NOTE if off else ""

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
        raise NotFoundError(f"{what} version {version!r} of {role!r}; known versions: {known}")

    def versions(self, role: str) -> list[dict[str, Any]]:
        """Every version of ``role`` (oldest first): hash, created, note,
        scores of its latest run, and whether it is the current / baseline one."""
        self._role(role)
        with self._lock:
            return [
                {
                    "hash": v.hash,
                    "created": v.created,
                    "note": v.note,
                    "scores": dict(v.scores),
                    "current": v.hash == self._current[role],
                    "baseline": v.hash == self._baseline[role],
                    "chars": len(v.text),
                }
                for v in self._versions[role].values()
            ]

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
        pool = QuestionSet([q for q in self.questions if is_labelled(role, q)], name=self.questions.name)
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
            raise NotFoundError(f"unknown question id(s) {unknown} in {self.questions.name}")
        return [by_id[i] for i in chosen]

    # -- running --------------------------------------------------------------
    def _context_key(self, role: str) -> str:
        """Everything besides the role's template that shapes a verdict: the
        other templates, the settings, the models. A cached side is reused
        only while all of these are unchanged."""
        rag = self.rag
        hashes = {k: v for k, v in rag.prompts.hashes().items() if k != role}
        blob = json.dumps(
            {
                "prompts": hashes,
                "lang": rag.prompts.lang,
                "settings": rag.settings.model_dump(mode="json"),
                "models": rag.runner.models_by_role(),
                "kb": str(getattr(rag.kb, "path", "")),
                "kb_version": str(getattr(rag.kb, "version", "")),
            },
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def _variant(self, role: str, text: str) -> SelfRAG:
        prompts = self.rag.prompts.copy()
        prompts[role] = text
        runner = copy.copy(self.rag.runner)
        runner.prompts = prompts
        variant = self.rag.with_settings()  # same kb/models/reranker, its own decision cache
        variant.runner = runner
        return variant

    @staticmethod
    def _ask(variant: SelfRAG, role: str, version: str, q: Question) -> LabSide:
        t0 = time.perf_counter()
        try:
            step = variant.stepper(q.question, user=q.make_user(), history=q.history)
            stop = _STOP_AT[role]
            if stop == "finish":
                step.run()
            else:
                getattr(step, stop)()
            trace = step.trace
        except Exception as exc:  # noqa: BLE001 - one failing question is a visible row, not a lost run
            wall = (time.perf_counter() - t0) * 1000
            return LabSide(
                version=version, verdict="error", error=f"{type(exc).__name__}: {exc}", wall_ms=wall
            )
        return score_side(role, version, q, trace, (time.perf_counter() - t0) * 1000)

    def run(
        self,
        role: str,
        ids: Iterable[str] | None = None,
        version: str | None = None,
        *,
        baseline: str | None = None,
        use_cache: bool = True,
        on_row: Callable[[LabRow, int, int], None] | None = None,
    ) -> LabRun:
        """Run questions ``ids`` (default: ``default_ids(role)``) with the
        baseline and the candidate (default: the current version) and compare
        them question by question. Sides already run with the same template
        and context are reused unless ``use_cache=False``. ``on_row(row,
        done, total)`` is called as each question finishes (both sides)."""
        role = self._role(role)
        qs = self._pick(role, ids)
        with self._lock:
            cand = self._resolve(role, version or self._current[role])
            base = self._resolve(role, baseline or self._baseline[role])
        ctx = self._context_key(role)
        t0 = time.perf_counter()
        sides: dict[tuple[str, str], LabSide] = {}
        todo: list[tuple[_Version, Question]] = []
        for v in dict.fromkeys([base.hash, cand.hash]):
            ver = self._versions[role][v]
            for q in qs:
                hit = self._cache.get((role, v, ctx, q.id)) if use_cache else None
                if hit is not None:
                    sides[(v, q.id)] = hit.model_copy(update={"cached": True})
                else:
                    todo.append((ver, q))

        rows: dict[str, LabRow] = {}
        emitted: set[str] = set()

        def emit(qid: str) -> None:
            if qid in emitted or (base.hash, qid) not in sides or (cand.hash, qid) not in sides:
                return
            q = next(x for x in qs if x.id == qid)
            row = LabRow(
                id=q.id,
                category=q.category,
                question=q.question,
                label=label_for(role, q),
                old=sides[(base.hash, qid)],
                new=sides[(cand.hash, qid)],
            )
            rows[qid] = row
            emitted.add(qid)
            if on_row is not None:
                on_row(row, len(emitted), len(qs))

        for q in qs:
            emit(q.id)
        if todo:
            variants = {v.hash: self._variant(role, v.text) for v, _ in todo}
            workers = min(self.concurrency, len(todo))
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="selfrag-lab") as pool:
                futures: dict[Future[LabSide], tuple[str, str]] = {
                    pool.submit(self._ask, variants[v.hash], role, v.hash, q): (v.hash, q.id) for v, q in todo
                }
                for fut in as_completed(futures):
                    key = futures[fut]
                    side = fut.result()
                    sides[key] = side
                    if side.error is None:
                        self._cache[(role, key[0], ctx, key[1])] = side
                    emit(key[1])
        run = LabRun(
            role=role,
            baseline=base.hash,
            candidate=cand.hash,
            question_set=self.questions.name,
            rows=[rows[q.id] for q in qs],
            offline=self.is_offline(role),
            note=self.note(role),
            model=self.model_name(role),
            wall_ms=(time.perf_counter() - t0) * 1000,
        )
        with self._lock:
            self._last[role] = run
            totals = run.totals()
            for name, scored in (("old", base), ("new", cand)):
                t = totals[name]
                scored.scores = {
                    "agreement": t["agreement"],
                    "labelled": t["labelled"],
                    "questions": len(qs),
                    "precision": t["precision"],
                    "recall": t["recall"],
                    "tokens_in": t["tokens_in"],
                    "cost": t["cost"],
                    "run_at": run.created,
                }
        self._changed(role)
        return run

    def last_run(self, role: str) -> LabRun | None:
        with self._lock:
            return self._last.get(self._role(role))

    def clear_cache(self) -> None:
        """Forget every cached side: the next run asks the model again."""
        with self._lock:
            self._cache.clear()

    # -- choosing and exporting -----------------------------------------------
    def best(self, role: str) -> dict[str, Any]:
        """The version with the highest agreement on the last run's questions,
        among the versions run on all of them (ties keep the baseline, then
        the older version). Raises ValueError before any run."""
        role = self._role(role)
        with self._lock:
            last = self._last.get(role)
            if last is None:
                raise InputError(f"no run for {role!r} yet: call lab.run({role!r}) first")
            ctx = self._context_key(role)
            ids = last.ids
            ranked: list[tuple[float, int, int, _Version]] = []
            for order, v in enumerate(self._versions[role].values()):
                sides = [self._cache.get((role, v.hash, ctx, i)) for i in ids]
                if v.hash in (last.baseline, last.candidate):
                    sides = [
                        r.old if v.hash == last.baseline else r.new for r in last.rows
                    ]  # the last run is the reference even when the context changed since
                if any(s is None for s in sides):
                    continue
                agreement = mean_of(s.agreement for s in sides if s is not None)
                score = -1.0 if agreement is None else agreement
                ranked.append((score, int(v.hash == self._baseline[role]), -order, v))
            score, _, _, win = max(ranked, key=lambda t: t[:3])
            return {
                "hash": win.hash,
                "agreement": None if score < 0 else score,
                "questions": len(ids),
                "note": win.note,
                "created": win.created,
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
                "created": v.created,
                "scores": v.scores,
                "baseline": self._baseline[role],
                "question_set": self.questions.describe(),
                "model": self.model_name(role),
                "exported_at": time.time(),
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
