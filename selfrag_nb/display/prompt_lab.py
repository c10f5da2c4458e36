"""The Prompt Lab view: one AnyWidget over the engine in ``selfrag_nb.promptlab``.

    PromptLab (engine) ──refresh(role)──> PromptLabWidget traits (synced to the front end)
        role roles role_info model offline note        header, role picker, offline note
        template template_hash baseline_hash            editor (textarea), version badges
        questions categories selected_ids               subset picker (categories / ids)
        versions                                        version list (hash, note, agreement)
        results status error running exported           results table, status line
    static/prompt_lab.js ──model.send({action, ...})──> PromptLabWidget.handle(msg)
        run     (template?, ids?)  set_template if edited, then lab.run on a worker thread;
                                   results/status update as each question finishes
        save    (template, note)   set_template -> new version
        revert  (hash)             lab.revert;  baseline (hash) -> lab.set_baseline
        export  (hash?, path?)     lab.export to a file (+ .json sidecar); text sent back
        apply   (hash?)            lab.apply: the pipeline uses it from now on
    Any error (bad template, unknown id) lands in ``error`` as a sentence, never a traceback.

    lab_html / run_html      static HTML (no script, every text escaped), the text/html face
    lab_text / run_text      one-line text/plain faces
    lab_mimebundle           text/plain + text/html (+ the widget inside a kernel)
    lab_marimo_view          mo.ui.anywidget(widget) when marimo runs the cell

Styling reuses the record views' stylesheet (trace.css: variables, badges,
banners) plus prompt_lab.css for the lab's own layout; escaping reuses
``html.esc``/``html.block``.
"""

from __future__ import annotations

import logging
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

try:
    import anywidget
    import traitlets
except ImportError as exc:  # pragma: no cover - anywidget is a core dependency
    raise ImportError(
        "The Prompt Lab widget needs anywidget: pip install 'selfrag-nb[jupyter]' (or pip install anywidget)"
    ) from exc

from selfrag_nb.display import WIDGET_MIME, _marimo_running, in_kernel
from selfrag_nb.display.html import block, css, esc, fmt_cost, fmt_ms, fmt_tokens
from selfrag_nb.display.text import one_line
from selfrag_nb.promptlab import (
    ROLE_LABELS,
    LabRow,
    LabRun,
    LabSide,
    PromptLab,
    TemplateError,
)

__all__ = [
    "PromptLab",
    "PromptLabWidget",
    "lab_html",
    "lab_mimebundle",
    "lab_state",
    "lab_text",
    "run_html",
    "run_state",
    "run_text",
]

_STATIC = Path(__file__).parent / "static"
_log = logging.getLogger(__name__)
#: Characters of a question shown in the picker and the results table.
_QUESTION_CHARS = 240
#: Rows in the static results table before the rest is folded away.
_STATIC_ROWS = 200


@lru_cache(maxsize=1)
def lab_css() -> str:
    """The record views' stylesheet followed by the lab's own, comments stripped."""
    raw = (_STATIC / "prompt_lab.css").read_text(encoding="utf-8")
    raw = re.sub(r"/\*.*?\*/", "", raw, flags=re.S)
    return css() + re.sub(r"\s*\n\s*", "", raw).strip()


# ------------------------------------------------------------------ formatting


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.0f}%"


def _mark(v: float | None) -> tuple[str, str]:
    """(symbol, tone) of an agreement value."""
    if v is None:
        return "—", ""
    if v >= 1.0:
        return "✓", "ok"
    if v <= 0.0:
        return "✗", "bad"
    return f"{v * 100:.0f}%", "warn"


def _side_state(s: LabSide) -> dict[str, Any]:
    mark, tone = _mark(s.agreement)
    return {
        "verdict": s.verdict,
        "agreement": s.agreement,
        "mark": mark,
        "tone": tone,
        "tokens": f"{fmt_tokens(s.tokens_in)} / {fmt_tokens(s.tokens_out)}",
        "cost": fmt_cost(s.cost),
        "latency": fmt_ms(s.latency_ms),
        "calls": s.calls,
        "unparsed": s.unparsed,
        "source": s.decision_source or "",
        "reason": one_line(s.reason, 200) if s.reason else "",
        "precision": _pct(s.precision) if s.precision is not None else "",
        "recall": _pct(s.recall) if s.recall is not None else "",
        "error": s.error or "",
        "cached": s.cached,
    }


def _row_state(r: LabRow) -> dict[str, Any]:
    return {
        "id": r.id,
        "category": r.category,
        "question": one_line(r.question, _QUESTION_CHARS),
        "label": r.label,
        "changed": r.changed,
        "old": _side_state(r.old),
        "new": _side_state(r.new),
    }


def _totals_state(run: LabRun) -> dict[str, Any]:
    t = run.totals()
    out: dict[str, Any] = {"questions": t["questions"], "changed": t["changed"], "errors": t["errors"]}
    for name in ("old", "new"):
        s = t[name]
        out[name] = {
            "version": s["version"],
            "agreement": _pct(s["agreement"]),
            "labelled": s["labelled"],
            "precision": _pct(s["precision"]) if s["precision"] is not None else "",
            "recall": _pct(s["recall"]) if s["recall"] is not None else "",
            "tokens": f"{fmt_tokens(s['tokens_in'])} / {fmt_tokens(s['tokens_out'])}",
            "cost": fmt_cost(s["cost"]),
            "latency": fmt_ms(s["latency_ms"]),
        }
    return out


def run_state(run: LabRun) -> dict[str, Any]:
    """JSON state of a finished run for the widget."""
    return {
        "role": run.role,
        "baseline": run.baseline,
        "candidate": run.candidate,
        "rows": [_row_state(r) for r in run.rows],
        "totals": _totals_state(run),
        "note": run.note,
        "done": len(run.rows),
        "total": len(run.rows),
        "finished": True,
    }


def _summary(run: LabRun) -> str:
    t = run.totals()
    s = (
        f"{run.role}: agreement {_pct(t['old']['agreement'])} → {_pct(t['new']['agreement'])} "
        f"on {t['questions']} question{'s' if t['questions'] != 1 else ''}, "
        f"{t['changed']} verdict{'s' if t['changed'] != 1 else ''} changed"
    )
    if t["errors"]:
        s += f", {t['errors']} error(s)"
    return s


def _version_state(v: dict[str, Any], best: str | None) -> dict[str, Any]:
    sc = v["scores"]
    return {
        "hash": v["hash"],
        "note": v["note"],
        "current": v["current"],
        "baseline": v["baseline"],
        "best": v["hash"] == best,
        "agreement": _pct(sc.get("agreement")) if sc else "",
        "questions": sc.get("questions", 0) if sc else 0,
        "chars": v["chars"],
    }


def lab_state(lab: PromptLab, role: str) -> dict[str, Any]:
    """Everything the widget shows for ``role``, as JSON-able trait values."""
    last = lab.last_run(role)
    best = lab.best(role)["hash"] if last is not None else None
    return {
        "roles": list(lab.roles),
        "role": role,
        "role_info": ROLE_LABELS.get(role, ""),
        "model": lab.model_name(role),
        "offline": lab.is_offline(role),
        "note": lab.note(role),
        "template": lab.template(role),
        "template_hash": lab.current(role),
        "baseline_hash": lab.baseline(role),
        "placeholders": list(lab.rag.prompts.placeholders(role)),
        "versions": [_version_state(v, best) for v in lab.versions(role)],
        "results": run_state(last) if last is not None else {},
    }


# ------------------------------------------------------------------ the widget


class PromptLabWidget(anywidget.AnyWidget):
    """Interactive Prompt Lab. Build it with ``lab.widget`` (one per lab)."""

    _esm = _STATIC / "prompt_lab.js"
    _css = lab_css()

    roles = traitlets.List(traitlets.Unicode()).tag(sync=True)
    role = traitlets.Unicode("").tag(sync=True)
    role_info = traitlets.Unicode("").tag(sync=True)
    model = traitlets.Unicode("").tag(sync=True)
    offline = traitlets.Bool(False).tag(sync=True)
    note = traitlets.Unicode("").tag(sync=True)
    template = traitlets.Unicode("").tag(sync=True)
    template_hash = traitlets.Unicode("").tag(sync=True)
    baseline_hash = traitlets.Unicode("").tag(sync=True)
    placeholders = traitlets.List(traitlets.Unicode()).tag(sync=True)
    questions = traitlets.List(traitlets.Dict()).tag(sync=True)
    categories = traitlets.List(traitlets.Unicode()).tag(sync=True)
    selected_ids = traitlets.List(traitlets.Unicode()).tag(sync=True)
    versions = traitlets.List(traitlets.Dict()).tag(sync=True)
    results = traitlets.Dict().tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    running = traitlets.Bool(False).tag(sync=True)
    #: The last export: {"hash", "filename", "path", "text"} (the JS offers a download).
    exported = traitlets.Dict().tag(sync=True)

    def __init__(self, lab: PromptLab, **kwargs: Any) -> None:
        role = lab.roles[0]
        self._lab = lab
        self._worker: threading.Thread | None = None
        self._selection: dict[str, list[str]] = {r: lab.default_ids(r) for r in lab.roles}
        qs = [
            {
                "id": q.id,
                "category": q.category,
                "question": one_line(q.question, _QUESTION_CHARS),
            }
            for q in lab.questions
        ]
        super().__init__(
            questions=qs,
            categories=lab.questions.categories,
            selected_ids=self._selection[role],
            status=lab.note(role),
            **(lab_state(lab, role) | kwargs),
        )
        self.observe(self._on_role, names="role")
        self.on_msg(self._on_msg)

    @property
    def lab(self) -> PromptLab:
        return self._lab

    # -- python -> front end ------------------------------------------------
    def refresh(self, role: str | None = None) -> None:
        """Push the lab's state for the shown role (no-op for another role)."""
        if role is not None and role != self.role:
            return
        state = lab_state(self._lab, self.role)
        with self.hold_sync():
            for k, v in state.items():
                if k != "role" and getattr(self, k) != v:
                    setattr(self, k, v)

    def _on_role(self, change: dict[str, Any]) -> None:
        new, old = change["new"], change["old"]
        if new not in self._lab.roles:
            # Restore first: the restoring change re-enters here and clears the error.
            self.role = old if old in self._lab.roles else self._lab.roles[0]
            self.error = f"unknown role {new!r}; tunable roles: {', '.join(self._lab.roles)}"
            return
        if old in self._selection:
            self._selection[old] = list(self.selected_ids)
        with self.hold_sync():
            self.error = ""
            self.selected_ids = self._selection.get(new) or self._lab.default_ids(new)
            self.refresh()
            self.status = self._lab.note(new)

    # -- front end -> python ------------------------------------------------
    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        self.handle(content)

    def handle(self, msg: Any) -> threading.Thread | None:
        """Act on one message from the front end (the dict ``model.send``
        sent). Returns the worker thread of a run, else None. Problems are
        shown in ``error``; this never raises into the comm."""
        try:
            if not isinstance(msg, dict) or not isinstance(msg.get("action"), str):
                raise ValueError(f"a Prompt Lab message needs an 'action'; got {msg!r}")
            action = msg["action"]
            handler = getattr(self, f"_do_{action}", None)
            if handler is None:
                raise ValueError(
                    f"unknown action {action!r}: one of run, save, revert, baseline, export, apply"
                )
            self.error = ""
            result: threading.Thread | None = handler(msg)
            return result
        except TemplateError as exc:
            self.error = f"template not saved: {exc}"
        except KeyError as exc:
            self.error = str(exc.args[0]) if exc.args else "unknown key"
        except (ValueError, TypeError, OSError) as exc:
            self.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a widget callback must report, not raise into the comm
            self.error = f"{type(exc).__name__}: {exc}"
        return None

    def _edited(self, msg: dict[str, Any]) -> None:
        text = msg.get("template")
        if text is not None and text != self._lab.template(self.role):
            self._lab.set_template(self.role, text, note=str(msg.get("note") or ""))

    def _do_save(self, msg: dict[str, Any]) -> None:
        if msg.get("template") is None:
            raise ValueError("save needs the template text")
        before = self._lab.current(self.role)
        h = self._lab.set_template(self.role, msg["template"], note=str(msg.get("note") or ""))
        self.refresh()
        self.status = f"saved version {h}" if h != before else f"unchanged: still version {h}"

    def _do_revert(self, msg: dict[str, Any]) -> None:
        h = self._lab.revert(self.role, str(msg.get("hash") or ""))
        self.refresh()
        self.status = f"reverted {self.role} to version {h}"

    def _do_baseline(self, msg: dict[str, Any]) -> None:
        h = self._lab.set_baseline(self.role, str(msg.get("hash") or ""))
        self.refresh()
        self.status = f"baseline of {self.role} is now version {h}"

    def _do_apply(self, msg: dict[str, Any]) -> None:
        self._edited(msg)
        h = self._lab.apply(self.role, msg.get("hash") or None)
        self.status = (
            f"rag.prompts[{self.role!r}] is now version {h}: the pipeline uses it from its next question"
        )

    def _do_export(self, msg: dict[str, Any]) -> None:
        role = self.role
        version = msg.get("hash") or None
        if version is None:
            version = self._lab.best(role)["hash"] if self._lab.last_run(role) else self._lab.current(role)
        h = self._lab.version_hash(role, version)
        path = Path(msg.get("path") or f"prompt-{role}-{h}.txt")
        text = self._lab.export(role, path, version=h)
        self.exported = {"hash": h, "filename": path.name, "path": str(path), "text": text}
        self.status = f"exported {role} version {h} to {path} (+ {path.name}.json)"

    def _do_run(self, msg: dict[str, Any]) -> threading.Thread:
        if self._worker is not None and self._worker.is_alive():
            raise ValueError("a run is already in progress: wait for it to finish")
        self._edited(msg)
        ids = msg.get("ids", self.selected_ids)
        if not isinstance(ids, list) or not ids:
            raise ValueError("pick at least one question to run (tick a category or a question)")
        role = self.role
        self.selected_ids = [str(i) for i in ids]
        self._selection[role] = list(self.selected_ids)
        total = len(ids)
        lab = self._lab
        rows: list[dict[str, Any]] = []
        with self.hold_sync():
            self.running = True
            self.refresh()
            self.results = {
                "role": role,
                "baseline": lab.baseline(role),
                "candidate": lab.current(role),
                "rows": [],
                "done": 0,
                "total": total,
                "finished": False,
                "note": lab.note(role),
            }
            self.status = f"running {role} on {total} question(s)…"

        def on_row(row: LabRow, done: int, total_: int) -> None:
            rows.append(_row_state(row))
            self.results = {**self.results, "rows": list(rows), "done": done, "total": total_}
            self.status = f"running {role}: {done}/{total_} questions done…"

        def work() -> None:
            try:
                run = lab.run(role, ids, on_row=on_row)
            except Exception as exc:  # noqa: BLE001 - the worker reports into the UI; nothing else would see it
                self.error = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
                self.status = "run failed"
            else:
                if self.role == role:
                    self.results = run_state(run)
                note = f" — {run.note}" if run.note else ""
                self.status = f"done: {_summary(run)}{note}"
            finally:
                self.running = False

        self._worker = threading.Thread(target=work, name="selfrag-prompt-lab", daemon=True)
        self._worker.start()
        return self._worker

    def wait(self, timeout: float | None = None) -> None:
        """Block until the current run finishes (scripts and tests)."""
        w = self._worker
        if w is not None:
            w.join(timeout)


# ------------------------------------------------------------------ static faces


def _side_cells(s: LabSide) -> str:
    mark, tone = _mark(s.agreement)
    verdict = esc(s.verdict, 400)
    if s.error:
        verdict = f'<span class="srnb-badge srnb-bad">error</span> {esc(s.error, 400)}'
    extra = []
    if s.decision_source:
        extra.append(f"by {esc(s.decision_source, 40)}")
    if s.precision is not None or s.recall is not None:
        extra.append(f"P {_pct(s.precision)} · R {_pct(s.recall)}")
    if s.unparsed:
        extra.append(f"{s.unparsed} unparsed")
    meta = f'<div class="srnb-meta">{" · ".join(extra)}</div>' if extra else ""
    cls = f"srnb-lab-mark srnb-{tone}" if tone else "srnb-lab-mark"
    return f'<td>{verdict}{meta}</td><td class="{cls}">{esc(mark, 10)}</td>'


def _usage(s: LabSide) -> str:
    return (
        f'<span class="srnb-num">{fmt_tokens(s.tokens_in)} / {fmt_tokens(s.tokens_out)}</span><br>'
        f'<span class="srnb-num">{fmt_cost(s.cost)}</span> · <span class="srnb-num">{fmt_ms(s.latency_ms)}</span>'
    )


def _run_body(run: LabRun) -> str:
    t = run.totals()
    head = (
        f'<div class="srnb-card-h"><span class="srnb-stage">Run · {esc(run.role, 40)}</span>'
        f'<span class="srnb-id">{esc(run.baseline, 40)}</span> → <span class="srnb-id">{esc(run.candidate, 40)}</span>'
        f'<span class="srnb-meta">{esc(run.model, 200)} · {fmt_ms(run.wall_ms)}</span></div>'
    )
    note = f'<div class="srnb-banner srnb-banner-info">{esc(run.note, 600)}</div>' if run.note else ""
    o, n = t["old"], t["new"]
    totals = (
        '<div class="srnb-lab-totals">'
        f"agreement <strong>{_pct(o['agreement'])}</strong> → <strong>{_pct(n['agreement'])}</strong> "
        f"({n['labelled']} labelled of {t['questions']}) · {t['changed']} changed"
        + (f" · {t['errors']} error(s)" if t["errors"] else "")
        + (
            f" · precision {_pct(o['precision'])} → {_pct(n['precision'])}"
            f" · recall {_pct(o['recall'])} → {_pct(n['recall'])}"
            if run.role == "grade"
            else ""
        )
        + f" · tokens {fmt_tokens(o['tokens_in'])} → {fmt_tokens(n['tokens_in'])} in"
        f" · cost {fmt_cost(o['cost'])} → {fmt_cost(n['cost'])}</div>"
    )
    rows = []
    for r in run.rows[:_STATIC_ROWS]:
        cls = "srnb-lab-row srnb-lab-changed" if r.changed else "srnb-lab-row"
        rows.append(
            f'<tr class="{cls}"><td><span class="srnb-id">{esc(r.id, 100)}</span> '
            f'<span class="srnb-meta">{esc(r.category, 100)}</span><div dir="auto">{esc(one_line(r.question, _QUESTION_CHARS))}</div></td>'
            f"<td>{esc(r.label, 400)}</td>{_side_cells(r.old)}{_side_cells(r.new)}"
            f"<td>{_usage(r.old)}</td><td>{_usage(r.new)}</td></tr>"
        )
    more = ""
    if len(run.rows) > _STATIC_ROWS:
        more = f'<div class="srnb-trunc">{len(run.rows) - _STATIC_ROWS} more rows: see run.to_pandas()</div>'
    table = (
        '<table class="srnb-lab-table"><thead><tr><th>question</th><th>label</th><th>old verdict</th><th></th>'
        "<th>new verdict</th><th></th><th>old tokens · cost · latency</th><th>new tokens · cost · latency</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}"
    )
    return f'<section class="srnb-card srnb-lab-run">{head}{note}{totals}{table}</section>'


def run_html(run: LabRun) -> str:
    """Static HTML of one run: totals and one row per question."""
    return f'<div class="srnb-root srnb-lab" dir="ltr"><style>{lab_css()}</style>{_run_body(run)}</div>'


def _versions_table(lab: PromptLab, role: str) -> str:
    last = lab.last_run(role)
    best = lab.best(role)["hash"] if last is not None else None
    rows = []
    for v in lab.versions(role):
        marks = [
            m
            for m, on in (("current", v["current"]), ("baseline", v["baseline"]), ("best", v["hash"] == best))
            if on
        ]
        badges = " ".join(f'<span class="srnb-badge srnb-info">{m}</span>' for m in marks)
        sc = v["scores"]
        score = f"{_pct(sc.get('agreement'))} on {sc.get('questions', 0)}" if sc else "not run"
        rows.append(
            f'<tr><td><span class="srnb-id">{esc(v["hash"], 40)}</span> {badges}</td>'
            f"<td>{esc(v['note'], 300)}</td><td>{esc(score, 60)}</td></tr>"
        )
    return (
        '<table class="srnb-lab-table srnb-lab-versions"><thead><tr><th>version</th><th>note</th>'
        f"<th>agreement</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def lab_html(lab: PromptLab) -> str:
    """Static HTML of the lab: per role the current template, its versions
    and the last run. No script; every template and question is escaped."""
    note = lab.note()
    head = (
        '<section class="srnb-card srnb-lab-head"><div class="srnb-card-h">'
        '<span class="srnb-stage">Prompt Lab</span>'
        f'<span class="srnb-meta">{len(lab.questions)} questions · {esc(lab.questions.name, 200)}</span></div>'
        + (f'<div class="srnb-banner srnb-banner-info">{esc(note, 600)}</div>' if note else "")
        + "</section>"
    )
    cards = []
    for role in lab.roles:
        last = lab.last_run(role)
        cards.append(
            f'<section class="srnb-card srnb-lab-role"><div class="srnb-card-h">'
            f'<span class="srnb-stage">{esc(role, 40)}</span>'
            f'<span class="srnb-meta">{esc(ROLE_LABELS.get(role, ""), 200)} · model {esc(lab.model_name(role), 200)}</span>'
            f'<span class="srnb-meta">current <span class="srnb-id">{esc(lab.current(role), 40)}</span> · '
            f'baseline <span class="srnb-id">{esc(lab.baseline(role), 40)}</span></span></div>'
            f'<details class="srnb-details"><summary>template ({len(lab.template(role)):,} characters)</summary>'
            f"{block(lab.template(role), cls='srnb-block srnb-code')}</details>"
            f"{_versions_table(lab, role)}"
            + (_run_body(last) if last is not None else '<div class="srnb-meta">not run yet</div>')
            + "</section>"
        )
    return f'<div class="srnb-root srnb-lab" dir="ltr"><style>{lab_css()}</style>{head}{"".join(cards)}</div>'


def run_text(run: LabRun) -> str:
    s = f"LabRun {_summary(run)} (baseline {run.baseline} → candidate {run.candidate})"
    return s + (" [offline model: prompts not used]" if run.offline else "")


def lab_text(lab: PromptLab) -> str:
    parts = []
    for role in lab.roles:
        last = lab.last_run(role)
        score = f", last run {_pct(last.agreement_old)} → {_pct(last.agreement_new)}" if last else ""
        parts.append(f"{role}={lab.current(role)} ({len(lab.versions(role))} versions{score})")
    n = len(lab.questions)
    s = f"PromptLab: {n} question{'s' if n != 1 else ''} ({lab.questions.name}); " + "; ".join(parts)
    return s + (" [offline model: prompts not used]" if lab.offline else "")


def lab_mimebundle(lab: PromptLab) -> dict[str, Any]:
    """text/plain + text/html; the widget view too inside a kernel."""
    bundle: dict[str, Any] = {"text/plain": lab_text(lab), "text/html": lab_html(lab)}
    if in_kernel():
        try:
            data: Any = lab.widget._repr_mimebundle_()
            if isinstance(data, tuple):  # anywidget returns (data, metadata)
                data = data[0]
            if data and WIDGET_MIME in data:
                bundle[WIDGET_MIME] = data[WIDGET_MIME]
        except Exception:  # noqa: BLE001 - a display hook must never raise; the static HTML still shows
            _log.debug("Prompt Lab widget unavailable, showing static HTML", exc_info=True)
    return bundle


class _StaticLab:
    def __init__(self, lab: PromptLab) -> None:
        self.html = lab_html(lab)
        self.text = lab_text(lab)

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text


def lab_marimo_view(lab: PromptLab) -> Any:
    """``mo.ui.anywidget(lab.widget)`` when marimo runs the cell, else the static face."""
    if _marimo_running():
        import marimo as mo

        try:
            return mo.ui.anywidget(lab.widget)
        except Exception:  # noqa: BLE001 - no widget support in this marimo: show the static face
            return mo.Html(lab_html(lab))
    return _StaticLab(lab)
