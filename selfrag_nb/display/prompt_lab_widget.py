"""The Prompt Lab widget: one AnyWidget over the engine in ``selfrag_nb.promptlab``.

    PromptLabWidget.of(lab)   one widget per lab, kept here (the engine holds no widget)
    PromptLab (engine) ──on_change(role)──> PromptLabWidget.refresh(role) -> traits
      the read-only panes, each a view tree built once in prompt_lab_html.py (to_json here,
      to_html in the static faces), mounted by prompt_lab.js with mount.js's build() + attach():
        head        head_tree(lab, role)        "Prompt Lab", the role's model, the note
        versions    versions_card(...)          one row per version (data-hash: the JS adds
                                                revert / set baseline / export buttons there)
        results     run_tree(run)               totals, figures against people, word-diffed rows;
                    progress_tree(...)          while a run streams in, one row per finished question
      the editor's data (prompt_lab.js draws it):
        role roles role_info offline note       role picker + what the role is scored on
        template template_hash baseline_hash    editor (textarea), version line
        questions categories selected_ids       subset picker (categories / ids)
        status error running exported export_dir  status line, Run / Cancel, download link
      status and error show control characters as ⟨U+XXXX⟩ (neutralize), as text/plain does
    _esm = js.module("mount.js", "prompt_lab.js")   allow-lists + mount.js + the editor script
    static/prompt_lab.js ──model.send({action, ...})──> PromptLabWidget.handle(msg)
        run     (template?, ids?)  set_template if edited, then lab.run on a worker thread;
                                   results/status update as each question finishes
        cancel  ()                 lab.cancel(role): questions in flight finish, no new one starts
        save    (template, note)   set_template -> new version
        revert  (hash)             lab.revert;  baseline (hash) -> lab.set_baseline
        export  (hash?, path?)     lab.export to a file (+ .json sidecar), by default in
                                   lab.export_dir (prompt_lab_exports/); text sent back;
                                   the notice clears when the role changes
        apply   (hash?)            lab.apply: the pipeline uses it from now on
    Any error (bad template, unknown id) lands in ``error`` as a sentence, never a traceback.

The widget opens on ``lab.role`` (``PromptLab(..., role="grade")``). prompt_lab_html.py
registers it as the lab's widget face (faces.py: mimebundle, marimo view).
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import Any, ClassVar, cast

from selfrag_nb.errors import InputError, MissingDependencyError

try:
    import anywidget
    import traitlets
except ImportError as exc:  # pragma: no cover - anywidget is a core dependency
    raise MissingDependencyError(
        "The Prompt Lab widget needs anywidget: pip install 'selfrag-nb[jupyter]' (or pip install anywidget)"
    ) from exc

from selfrag_nb.display.js import module
from selfrag_nb.display.markup import neutralize
from selfrag_nb.display.prompt_lab_html import (
    QUESTION_CHARS,
    best_of,
    head_tree,
    lab_css,
    progress_tree,
    run_tree,
    versions_card,
)
from selfrag_nb.display.prompt_lab_text import run_summary
from selfrag_nb.display.text import one_line
from selfrag_nb.display.tree import to_json
from selfrag_nb.errors import TemplateError
from selfrag_nb.promptlab import ROLE_LABELS, LabRow, LabRun, PromptLab

# ------------------------------------------------------------------ state


def run_view(run: LabRun) -> dict[str, Any]:
    """The ``results`` trait of a finished run: its view tree as JSON (the tree
    run_html serialises to HTML)."""
    return cast("dict[str, Any]", to_json(run_tree(run)))


def lab_state(lab: PromptLab, role: str) -> dict[str, Any]:
    """Everything the widget shows for ``role``, as JSON-able trait values: the
    editor's data, and the read-only panes as view trees (tree.to_json)."""
    last = lab.last_run(role)
    return {
        "roles": list(lab.roles),
        "role": role,
        "role_info": ROLE_LABELS.get(role, ""),
        "offline": lab.is_offline(role),
        "note": lab.note(role),
        "template": lab.template(role),
        "template_hash": lab.current(role),
        "baseline_hash": lab.baseline(role),
        "placeholders": list(lab.rag.prompts.placeholders(role)),
        "head": to_json(head_tree(lab, role)),
        "versions": to_json(versions_card(lab.versions(role), role, best_of(lab, role))),
        "results": run_view(last) if last is not None else {},
    }


# ------------------------------------------------------------------ the widget


class PromptLabWidget(anywidget.AnyWidget):
    """Interactive Prompt Lab. Build it with ``lab.widget`` or ``PromptLabWidget.of(lab)``
    (one per lab). The widget holds the lab; the lab only calls ``refresh``
    through ``lab.on_change`` (held weakly)."""

    #: id(lab) -> its widget; an entry goes when its widget does.
    _by_lab: ClassVar[weakref.WeakValueDictionary[int, PromptLabWidget]] = weakref.WeakValueDictionary()

    _esm = module("mount.js", "prompt_lab.js")
    _css = lab_css()

    roles = traitlets.List(traitlets.Unicode()).tag(sync=True)
    role = traitlets.Unicode("").tag(sync=True)
    role_info = traitlets.Unicode("").tag(sync=True)
    offline = traitlets.Bool(False).tag(sync=True)
    note = traitlets.Unicode("").tag(sync=True)
    template = traitlets.Unicode("").tag(sync=True)
    template_hash = traitlets.Unicode("").tag(sync=True)
    baseline_hash = traitlets.Unicode("").tag(sync=True)
    placeholders = traitlets.List(traitlets.Unicode()).tag(sync=True)
    questions = traitlets.List(traitlets.Dict()).tag(sync=True)
    categories = traitlets.List(traitlets.Unicode()).tag(sync=True)
    selected_ids = traitlets.List(traitlets.Unicode()).tag(sync=True)
    #: The read-only panes, view trees as JSON (prompt_lab_html.py builds them;
    #: prompt_lab.js mounts them with mount.js): header, versions, results ({} before a run).
    head = traitlets.Dict().tag(sync=True)
    versions = traitlets.Dict().tag(sync=True)
    results = traitlets.Dict().tag(sync=True)
    #: Where "Export" writes (absolute; lab.export_dir, prompt_lab_exports/ by default).
    export_dir = traitlets.Unicode("").tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    running = traitlets.Bool(False).tag(sync=True)
    #: The last export: {"hash", "filename", "path", "text"} (the JS offers a download).
    exported = traitlets.Dict().tag(sync=True)

    def __init__(self, lab: PromptLab, **kwargs: Any) -> None:
        role = lab.role
        self._lab = lab
        self._worker: threading.Thread | None = None
        self._running_role: str = role
        self._selection: dict[str, list[str]] = {r: lab.default_ids(r) for r in lab.roles}
        # the picker sets each question as text: control characters as ⟨U+XXXX⟩ labels
        qs = [
            {"id": q.id, "category": q.category, "question": neutralize(one_line(q.question, QUESTION_CHARS))}
            for q in lab.questions
        ]
        super().__init__(
            questions=qs,
            categories=lab.questions.categories,
            selected_ids=self._selection[role],
            status=lab.note(role),
            export_dir=str(lab.export_dir.resolve()),
            **(lab_state(lab, role) | kwargs),
        )
        self.observe(self._on_role, names="role")
        self.on_msg(lambda _widget, content, _buffers: self.handle(content))
        lab.on_change(self.refresh)

    @classmethod
    def of(cls, lab: PromptLab) -> PromptLabWidget:
        """The widget of ``lab``, built on first use."""
        w = cls._by_lab.get(id(lab))
        if w is None or w._lab is not lab:
            w = cls(lab)
            cls._by_lab[id(lab)] = w
        return w

    @property
    def lab(self) -> PromptLab:
        return self._lab

    @traitlets.validate("status", "error")
    def _labelled(self, proposal: dict[str, Any]) -> str:
        # set as text in the browser: an invisible control character is shown, not obeyed
        return neutralize(str(proposal["value"]))

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
            self.exported = {}  # an export notice belongs to the role it was made for
            self.selected_ids = self._selection.get(new) or self._lab.default_ids(new)
            self.refresh()
            self.status = self._lab.note(new)

    # -- front end -> python ------------------------------------------------
    def handle(self, msg: Any) -> threading.Thread | None:
        """Act on one message from the front end (the dict ``model.send``
        sent). Returns the worker thread of a run, else None. Problems are
        shown in ``error``; this never raises into the comm."""
        try:
            if not isinstance(msg, dict) or not isinstance(msg.get("action"), str):
                raise InputError(f"a Prompt Lab message needs an 'action'; got {msg!r}")
            action = msg["action"]
            handler = getattr(self, f"_do_{action}", None)
            if handler is None:
                raise InputError(
                    f"unknown action {action!r}: one of run, cancel, save, revert, baseline, export, apply"
                )
            self.error = ""
            return cast("threading.Thread | None", handler(msg))
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
            raise InputError("save needs the template text")
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
        version = msg.get("hash") or best_of(self._lab, role) or self._lab.current(role)
        h = self._lab.version_hash(role, version)
        path = Path(msg.get("path") or self._lab.export_dir / f"prompt-{role}-{h}.txt")
        path.parent.mkdir(parents=True, exist_ok=True)
        text = self._lab.export(role, path, version=h)
        self.exported = {"hash": h, "filename": path.name, "path": str(path), "text": text}
        self.status = f"exported {role} version {h} to {path} (+ {path.name}.json)"

    def _do_cancel(self, _msg: dict[str, Any]) -> None:
        if self._worker is None or not self._worker.is_alive():
            self.status = "nothing to cancel: no run in progress"
            return
        self._lab.cancel(self._running_role)
        self.status = "cancelling: questions already started finish, no new one starts…"

    def _do_run(self, msg: dict[str, Any]) -> threading.Thread:
        if self._worker is not None and self._worker.is_alive():
            raise InputError("a run is already in progress: wait for it to finish")
        self._edited(msg)
        ids = msg.get("ids", self.selected_ids)
        if not isinstance(ids, list) or not ids:
            raise InputError("pick at least one question to run (tick a category or a question)")
        role = self.role
        self._running_role = role
        self.selected_ids = [str(i) for i in ids]
        self._selection[role] = list(self.selected_ids)
        total = len(ids)
        lab = self._lab
        rows: list[LabRow] = []
        base, cand, note = lab.baseline(role), lab.current(role), lab.note(role)

        def progress() -> dict[str, Any]:
            tree = progress_tree(role, base, cand, rows, total=max(total, len(rows)), note=note)
            return cast("dict[str, Any]", to_json(tree))

        with self.hold_sync():
            self.running = True
            self.refresh()
            self.results = progress()
            self.status = f"running {role} on {total} question(s)…"

        def on_row(row: LabRow, done: int, total_: int) -> None:
            nonlocal total
            rows.append(row)
            total = total_
            self.results = progress()
            self.status = f"running {role}: {done}/{total_} questions done…"

        def work() -> None:
            try:
                run = lab.run(role, ids, on_row=on_row)
            except Exception as exc:  # noqa: BLE001 - the worker reports into the UI; nothing else would see it
                self.error = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
                self.status = "run failed"
            else:
                if self.role == role:
                    self.results = run_view(run)
                note = f" — {run.note}" if run.note else ""
                done = "" if run.cancelled else "done: "  # a cancelled summary starts "cancelled after n/N"
                self.status = f"{done}{run_summary(run)}{note}"
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
