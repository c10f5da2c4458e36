"""The Prompt Lab's words and figures: text faces and the phrases every face shares.

    figures    pct, side_mark (✓ ◐ ✗ —, MARKS), side_score ("80%" beside the mark,
               "not counted"), side_use ("prompt not used" and why), side_notes (the
               role's own measures), version_score
    lines      reach_line ("prompt reached the model on k of n"), run_cached ("k of n sides
               cached"), human_line (kappa, precision / recall / F1 with their
               denominators against people), run_summary (the widget's status line)
    text faces run_text(run), lab_text(lab), versions_text(vs)   (registered with the
               HTML faces in prompt_lab_html.py)

The view trees (prompt_lab_html.py) put these same strings into both the static
HTML and the widget, so a figure reads the same in a saved notebook, the widget
and text/plain.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.display.markup import plural
from selfrag_nb.display.text import one_line
from selfrag_nb.promptlab import LabRun, LabSide, LabVersions, PromptLab

#: The one mark vocabulary of a side (the percentage sits beside the mark, never in its place).
MARKS = (
    ("✓", "agrees with the label"),
    ("◐", "partly"),
    ("✗", "disagrees"),
    ("—", "not counted: prompt not used, or no label"),
)


def pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.0f}%"


def side_use(s: LabSide) -> str:
    """ "" when the side's prompt reached a model, else the label of why it
    did not count: "offline: prompt not used" or "prompt not used"."""
    if s.reached:
        return ""
    return f"{'offline: ' if s.prompt_use == 'offline' else ''}prompt not used"


def side_mark(s: LabSide) -> tuple[str, str]:
    """(symbol, tone) of a side's agreement: ✓ all, ◐ partly (the percentage goes beside
    it, side_score), ✗ none; — with no label, or when its prompt did not reach a model
    (its verdict is not the template's, and it is not counted)."""
    v = s.agreement
    if v is None or not s.reached:
        return "—", ""
    return ("✓", "ok") if v >= 1.0 else ("✗", "bad") if v <= 0.0 else ("◐", "warn")


def _of(old: int, new: int, n: int) -> str:
    # One count when both sides agree, else each side's.
    return f"{old} of {n}" if old == new else f"{old} of {n} (old), {new} of {n} (new)"


def reach_line(run: LabRun) -> str:
    """ "prompt reached the model on k of n" (per side when they differ), then
    where it did not: the offline model, or not used (no call, failed, another template)."""
    t = run.totals()
    o, n, q = t["old"], t["new"], t["questions"]
    s = f"prompt reached the model on {_of(o['reached'], n['reached'], q)}"
    if o["offline"] or n["offline"]:
        s += f"; offline: prompts not used on {_of(o['offline'], n['offline'], q)}"
    if o["not_used"] or n["not_used"]:
        s += f"; prompt not used on {_of(o['not_used'], n['not_used'], q)}"
    return s


def run_cached(run: LabRun) -> str:
    """ "k of n sides cached" ("" when nothing came from the cache)."""
    n = len(run.rows) * (1 if run.baseline == run.candidate else 2)
    return f"{run.cached} of {plural(n, 'side')} cached (no model call)" if run.cached else ""


def kappa_text(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.2f}"


def ratio(num: int, den: int) -> str:
    return "—" if not den else f"{num}/{den}"


def human_line(run: LabRun) -> str:
    """ "vs people (labels.jsonl, 12 chunks): kappa 0.00 → 1.00 · precision 2/4 → 2/2 · ..." ("" on a proxy run)."""
    old, new = run.human("old"), run.human("new")
    if old is None or new is None:
        return ""
    kind = run.label_kind or "item"
    parts = [
        f"kappa {kappa_text(old.kappa)} → {kappa_text(new.kappa)}",
        f"agree {ratio(old.agree, old.n)} → {ratio(new.agree, new.n)}",
        f"precision {ratio(old.true_positive, old.judge_positive)} → {ratio(new.true_positive, new.judge_positive)}"
        f" (of judged {new.positive})",
        f"recall {ratio(old.true_positive, old.human_positive)} → {ratio(new.true_positive, new.human_positive)}"
        f" (of labelled {new.positive})",
        f"F1 {pct(old.f1)} → {pct(new.f1)}",
    ]
    if old.no_label or new.no_label:
        parts.append(
            f"no label: {_of(old.no_label, new.no_label, old.no_label + old.n)} {kind}s, not counted"
        )
    note = next((a.kappa_note for a in (new, old) if a.kappa_note), "")
    name = run.labels.replace("\\", "/").rsplit("/", 1)[-1]
    return f"vs people ({name}, {kind}s): " + " · ".join(parts) + (f" · kappa: {note}" if note else "")


def run_summary(run: LabRun) -> str:
    t = run.totals()
    s = f"cancelled after {run.progress} — " if run.cancelled else ""
    o, n = t["old"], t["new"]
    agreement = f"{run.role}: agreement {pct(o['agreement'])} → {pct(n['agreement'])}"
    # "on L questions": agreement is a mean over the rows the prompt reached that have a label.
    lo, ln = o["labelled"], n["labelled"]
    if lo == ln == 0:
        agreement = f"{run.role}: agreement not measured"
    elif lo == ln:
        agreement += f" on {plural(lo, 'question')}"
    else:
        agreement = f"{run.role}: agreement {pct(o['agreement'])} (on {lo}) → {pct(n['agreement'])} (on {ln})"
    s += f"{agreement} ({reach_line(run)}), {plural(t['changed'], 'verdict')} changed"
    if run.labels:
        s += f"; {human_line(run)}"
    if t["errors"]:
        s += f", {t['errors']} error(s)"
    if run.cached:
        s += f", {run_cached(run)}"
    return s


def side_notes(s: LabSide) -> list[str]:
    """The role-specific measures of a side, as short phrases (rewrite,
    rerank, generate; grade's precision/recall are shown on their own)."""
    out = []
    if s.protected_ok is not None:
        out.append("protected spans kept" if s.protected_ok else "protected span dropped")
    if s.recall is not None and s.precision is None and s.queries:
        out.append(f"recall {pct(s.recall)}")
    if s.rank is not None:
        out.append(f"rank {s.rank}")
    if s.includes:
        out.append("includes " + ", ".join(s.includes))
    if s.excluded_hits:
        out.append("contains excluded " + ", ".join(s.excluded_hits))
    if s.citation_recall is not None:
        out.append(f"cites relevant {pct(s.citation_recall)}")
    return out


def side_score(s: LabSide) -> str:
    """The percentage beside a mark ("80%"), "not counted" when the prompt did not reach a model."""
    return "not counted" if not s.reached else "" if s.agreement is None else pct(s.agreement)


def version_score(v: dict[str, Any]) -> str:
    """ "80% (prompt reached the model on 5 of 14)" from a version's scores ("not run" before any)."""
    sc = v.get("scores") or {}
    if not sc:
        return "not run"
    a = sc.get("agreement")
    reached = f"prompt reached the model on {sc.get('reached', 0)} of {sc.get('questions', 0)}"
    return f"{'not measured' if a is None else pct(a)} ({reached})"


def versions_text(vs: LabVersions) -> str:
    """``lab.versions(role)`` as a plain-text table (aligned columns)."""
    head = ("version", "created (UTC)", "note", "agreement")
    rows = [
        (
            v["hash"] + "".join(f" [{m}]" for m in ("current", "baseline") if v[m]),
            str(v["created"]),
            one_line(str(v["note"]), 60),
            version_score(v),
        )
        for v in vs
    ]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [head, *rows]]
    title = f"PromptLab versions of {vs.role}" if vs.role else "PromptLab versions"
    return "\n".join([f"{title} ({len(vs)})", *lines])


def run_text(run: LabRun) -> str:
    s = f"LabRun {run_summary(run)} (baseline {run.baseline} → candidate {run.candidate})"
    return s + (" [offline model: prompts not used]" if run.offline else "")


def lab_text(lab: PromptLab) -> str:
    parts = []
    for role in lab.roles:
        last = lab.last_run(role)
        score = (
            f", last run {pct(last.agreement_old)} → {pct(last.agreement_new)}, prompt reached "
            f"{_of(last.reached_old, last.reached_new, len(last.rows))}"
            if last
            else ""
        )
        parts.append(f"{role}={lab.current(role)} ({len(lab.versions(role))} versions{score})")
    s = f"PromptLab: {plural(len(lab.questions), 'question')} ({lab.questions.name}); " + "; ".join(parts)
    return s + (" [offline model: prompts not used]" if lab.offline else "")
