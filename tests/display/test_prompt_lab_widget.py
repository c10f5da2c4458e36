"""Prompt Lab widget: synced state, action messages (handled exactly as the
front end sends them), the static HTML face, and the JS under node.

Messages are passed to ``PromptLabWidget.handle`` as the dict ``model.send``
would deliver; runs happen on the widget's worker thread, which the tests
join with ``wait``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from display_fixtures import run_harness, tree_attr, tree_find, tree_text
from prompt_lab_fixtures import RECORDS, STRICT, build_kb, scripted_model, with_marker

import selfrag_nb as sr
from selfrag_nb.display.prompt_lab_widget import PromptLabWidget, lab_state, run_view
from selfrag_nb.eval.questions import QuestionSet
from selfrag_nb.promptlab import OFFLINE_PROMPT_NOTE, ROLE_LABELS, PromptLab

NODE = shutil.which("node")
HOSTILE = '</textarea><script>alert(1)</script><img src=x onerror="alert(2)"> \u202eevil\u202c &amp;'


def versions_of(w: PromptLabWidget) -> list[tuple[str, str]]:
    """(hash, text of its row) per version row of the widget's versions pane."""
    return [(r["a"]["data-hash"], tree_text(r)) for r in tree_attr(w.versions, "data-hash")]


def row_ids(tree: dict[str, Any]) -> list[str]:
    """The question ids of a results tree, in order."""
    return [tree_text(tree_find(q, "srnb-id")[0]) for q in tree_find(tree, "srnb-lab-question")]


def marks(tree: dict[str, Any]) -> list[tuple[str, str]]:
    """(mark, score beside it) per side of a results tree."""
    return [
        (
            tree_text(tree_find(h, "srnb-lab-mark")[0]),
            "".join(tree_text(x) for x in tree_find(h, "srnb-lab-score")),
        )
        for h in tree_find(tree, "srnb-lab-side-h")
    ]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The lab's disk cache lives under the cache dir: each test gets its own.
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_kb(tmp_path_factory.mktemp("lab_widget_kb"))


@pytest.fixture
def lab(kb: Any) -> PromptLab:
    qs = QuestionSet.from_records(RECORDS, name="lab-set")
    return sr.PromptLab(sr.SelfRAG(kb, model=scripted_model()), qs, roles=["grade", "decide"], role="grade")


def test_initial_state_mirrors_the_engine(lab: PromptLab) -> None:
    w = lab.widget
    assert isinstance(w, PromptLabWidget)
    assert lab.widget is w  # one widget per lab
    assert w.roles == ["decide", "grade"]  # flow order
    assert w.role == "grade"  # role= of the lab: the role the view opens on
    assert w.role_info == ROLE_LABELS["grade"]
    assert w.template == lab.template("grade")
    assert w.template_hash == lab.current("grade") == w.baseline_hash
    assert w.placeholders == ["question", "document", "title", "heading", "source"]
    assert [q["id"] for q in w.questions] == [r["id"] for r in RECORDS]
    assert w.categories == ["factual", "open", "general"]
    assert w.selected_ids == lab.default_ids("grade")
    assert [h for h, _ in versions_of(w)] == [lab.baseline("grade")]
    assert w.results == {}
    assert w.head["c"] == "srnb-card srnb-lab-head"  # the header pane: a view tree
    assert not w.offline
    assert w.note == ""
    assert w.error == ""


def test_run_message_saves_the_edit_runs_on_a_thread_and_streams_rows(lab: PromptLab) -> None:
    w = lab.widget
    seen_rows: list[int] = []
    w.observe(lambda ch: seen_rows.append(len(row_ids(ch["new"]))), names="results")
    text = with_marker(w.template, STRICT)
    worker = w.handle({"action": "run", "template": text, "note": "strict", "ids": ["refund-1", "ship-1"]})
    assert worker is not None
    w.wait(30)
    assert not worker.is_alive()
    assert w.error == ""
    assert not w.running
    # The edit became a version and the current one.
    assert w.template == text
    assert w.template_hash == lab.current("grade") != w.baseline_hash
    assert [v["note"] for v in lab.versions("grade")] == ["baseline: packaged default", "strict"]
    rows = versions_of(w)
    assert [h for h, _ in rows] == [v["hash"] for v in lab.versions("grade")]
    best = [(h, text) for h, text in rows if "best" in text]
    assert [h for h, _ in best] == [w.template_hash]
    assert "100% (prompt reached the model on 2 of 2)" in best[0][1]
    # Results: streamed one question at a time, then the final table.
    assert 1 in seen_rows
    assert 2 in seen_rows
    res = w.results
    assert res == run_view(lab.last_run("grade"))  # type: ignore[arg-type]  # the finished run's tree
    assert "srnb-lab-running" not in res["c"]
    assert row_ids(res) == ["refund-1", "ship-1"]
    first = tree_find(res, "srnb-lab-row")[0]
    # One mark vocabulary: partly agreeing is "◐", its percentage stands beside it.
    assert marks(first) == [("◐", "50%"), ("✓", "100%")]
    assert tree_text(tree_find(first, "srnb-lab-new")[0]).count("1/2 relevant: refunds.md") == 1
    assert "srnb-lab-changed" in first["c"]
    assert "agreement 50% → 100%" in tree_text(tree_find(res, "srnb-lab-totals")[0])
    assert w.status.startswith("done: grade: agreement 50% → 100% on 2 questions")
    assert w.selected_ids == ["refund-1", "ship-1"]


def test_bad_template_shows_an_error_not_a_traceback(lab: PromptLab) -> None:
    w = lab.widget
    before = dict(w.versions)
    assert w.handle({"action": "save", "template": "Judge {{documnet}}\n=== user ===\n"}) is None
    assert w.error.startswith("template not saved:")
    assert "unknown placeholder {{documnet}}" in w.error
    assert w.versions == before
    # A run with a bad template does not start.
    assert w.handle({"action": "run", "template": "no marker {{question}}", "ids": ["refund-1"]}) is None
    assert "=== user ===" in w.error
    assert not w.running
    assert w.results == {}


@pytest.mark.parametrize(
    ("msg", "problem"),
    [
        ({"action": "explode"}, "unknown action 'explode'"),
        ("run", "needs an 'action'"),
        ({"action": "revert", "hash": "zzzz"}, "unknown version 'zzzz'"),
        ({"action": "run", "ids": []}, "pick at least one question"),
        ({"action": "run", "ids": ["nope"]}, None),
    ],
)
def test_bad_messages_land_in_error(lab: PromptLab, msg: Any, problem: str | None) -> None:
    w = lab.widget
    worker = w.handle(msg)
    if worker is not None:  # unknown ids are found by the run itself, on the worker
        w.wait(30)
        problem = "unknown question id(s) ['nope']"
    assert problem is not None
    assert problem in w.error


def test_save_revert_baseline_export_apply_messages(lab: PromptLab, tmp_path: Path) -> None:
    w = lab.widget
    base = w.template_hash
    w.handle({"action": "save", "template": with_marker(w.template, STRICT), "note": "strict"})
    v1 = w.template_hash
    assert v1 != base
    assert w.status == f"saved version {v1}"
    w.handle({"action": "revert", "hash": base})
    assert w.template_hash == base
    assert w.template == lab.template("grade")
    assert STRICT not in w.template
    w.handle({"action": "baseline", "hash": v1})
    assert w.baseline_hash == v1
    out = tmp_path / "best.txt"
    w.handle({"action": "export", "hash": v1, "path": str(out)})
    assert w.error == ""
    assert out.read_text(encoding="utf-8") == with_marker(lab.template("grade"), STRICT)
    assert json.loads((tmp_path / "best.txt.json").read_text(encoding="utf-8"))["hash"] == v1
    assert w.exported["hash"] == v1
    assert w.exported["filename"] == "best.txt"
    assert w.exported["text"] == out.read_text(encoding="utf-8")
    w.handle({"action": "apply", "hash": v1})
    assert lab.rag.prompts.hash("grade") == v1
    assert "rag.prompts['grade'] is now version" in w.status


def test_role_switch_loads_that_roles_template_and_selection(lab: PromptLab) -> None:
    w = lab.widget
    w.selected_ids = ["refund-1"]
    w.role = "decide"
    assert w.template == lab.template("decide")
    assert w.placeholders == ["question", "history"]
    assert w.selected_ids == lab.default_ids("decide")
    w.role = "grade"
    assert w.selected_ids == ["refund-1"]  # each role keeps its own subset
    w.role = "verify"  # not a role of this lab
    assert "unknown role 'verify'" in w.error
    assert w.role == "grade"


def test_engine_changes_refresh_the_widget(lab: PromptLab) -> None:
    w = lab.widget
    h = lab.set_template("grade", with_marker(lab.template("grade"), "from python"))
    assert w.template_hash == h
    assert "from python" in w.template
    lab.set_template("decide", with_marker(lab.template("decide"), "other role"))
    assert w.role == "grade"
    assert "other role" not in w.template


def test_offline_lab_says_so_in_the_header_and_status(kb: Any) -> None:
    lab = sr.PromptLab(sr.SelfRAG(kb), RECORDS)
    w = lab.widget
    assert w.offline
    assert w.note == OFFLINE_PROMPT_NOTE
    assert w.status == OFFLINE_PROMPT_NOTE
    w.handle({"action": "run", "template": with_marker(w.template, STRICT), "ids": ["refund-1", "france-1"]})
    w.wait(30)
    assert w.error == ""
    assert OFFLINE_PROMPT_NOTE in w.status
    assert OFFLINE_PROMPT_NOTE in tree_text(tree_find(w.results, "srnb-banner")[0])
    run = lab.last_run(lab.role)
    assert run is not None
    assert all(r.old.verdict == r.new.verdict for r in run.rows)
    assert not tree_find(w.results, "srnb-diff-del")  # nothing to strike: the same verdicts


def test_static_html_escapes_a_hostile_template_and_question(kb: Any) -> None:
    records = [dict(RECORDS[0], question="Refund? " + HOSTILE)]
    lab = sr.PromptLab(sr.SelfRAG(kb), records, roles=["grade"])
    lab.set_template("grade", HOSTILE + "\n" + lab.template("grade"), note=HOSTILE)
    lab.run("grade", ["refund-1"])
    page = lab.to_html()
    for bad in ("<script", "<img", "</textarea>", 'onerror="', "\u202e"):
        assert bad not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&amp;amp;" in page  # an entity in the template stays literal text
    assert "U+202E" in page  # the bidi override is shown, not obeyed
    assert page.count("<style>") == 1
    bundle = lab._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}  # no kernel here: no widget view
    assert bundle["text/plain"].startswith("PromptLab: 1 question (questions); grade=")
    static = lab._display_()  # outside marimo: the static face
    assert static._repr_html_() == page
    state = lab_state(lab, "grade")
    json.dumps(state)  # the synced state is plain JSON
    assert state["template"].startswith(HOSTILE)


# ------------------------------------------------------------------ the JS

_HARNESS = r"""
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";

const [js, statePath, miniDom] = process.argv.slice(2);
const { modelDouble } = await import(pathToFileURL(miniDom).href);
const traits = JSON.parse(readFileSync(statePath, "utf8"));
const { model, sent, counts, listening } = modelDouble(traits);
const mod = await import(pathToFileURL(js).href);
const el = document.createElement("div");
const cleanup = mod.default.render({ model, el });
const out = {};
const editor = el.all((e) => e.tagName === "TEXTAREA")[0];
out.editor_initial = editor.value;
out.text_initial = el.textContent;
editor.value = "edited draft";
editor.fire("input");
out.edited_note = el.textContent.includes("edited — not saved");
// A results update redraws the table but keeps the draft.
model.set("results", traits.__results);
out.draft_kept = editor.value;
out.text_results = el.textContent;
out.marks = el.all((e) => (e.className || "").includes("srnb-lab-mark")).map((e) => e.textContent);
const btn = (label) => el.all((e) => e.tagName === "BUTTON" && e.textContent === label)[0];
btn("Run").fire("click");
btn("Save version").fire("click");
// Tick the "open" category: selected_ids grows, in question order.
const cat = el.all((e) => e.tagName === "LABEL" && e.textContent.startsWith(" open"))[0]
  || el.all((e) => e.tagName === "LABEL" && e.textContent.includes("open ("))[0];
const box = cat.all((e) => e.tagName === "INPUT")[0];
box.checked = true; box.fire("change");
out.selected = traits.selected_ids;
const sel = el.all((e) => e.tagName === "SELECT")[0];
sel.value = "decide"; sel.fire("change");
out.role = traits.role;
model.set("template", "new template from python");
out.editor_after_python = editor.value;
model.set("error", "template not saved: bad");
out.error_text = el.textContent.includes("template not saved: bad");
out.sent = sent; out.saves = counts.saves;
cleanup();
out.handlers_left = listening();
process.stdout.write(JSON.stringify(out));
"""


def test_js_renders_without_innerhtml_keeps_the_draft_and_sends_actions(
    lab: PromptLab, tmp_path: Path
) -> None:
    if NODE is None:  # before the runs: they are the slow part
        pytest.skip("node is not installed: the JS test needs it")
    lab.set_template("grade", with_marker(HOSTILE + "\n" + lab.template("grade"), STRICT), note=HOSTILE)
    run = lab.run("grade", ["refund-1"])
    w = lab.widget
    traits = {
        k: getattr(w, k)
        for k in w.keys
        if not k.startswith("_") and k not in ("layout", "tabbable", "tooltip")
    }
    traits["results"] = {}
    traits["__results"] = run_view(run)
    (tmp_path / "h.mjs").write_text(_HARNESS, encoding="utf-8")
    mini_dom = str(Path(__file__).parent / "mini_dom.mjs")
    out = run_harness(tmp_path, tmp_path / "h.mjs", "prompt_lab.js", ("state", traits), extra=[mini_dom])
    assert out["editor_initial"] == w.template  # the hostile template is plain text in the editor
    # The hostile note is shown as text; its bidi override as a visible label.
    assert "<script>alert(1)</script>" in out["text_initial"]
    assert "U+202E" in out["text_initial"]
    assert out["edited_note"]
    assert out["draft_kept"] == "edited draft"
    assert "agreement" in out["text_results"]
    assert "1/2 relevant" in out["text_results"]
    assert out["marks"] == ["◐", "✓"]  # one vocabulary: the 50% stands beside the mark
    run_msg, save_msg = out["sent"][:2]
    assert run_msg == {"action": "run", "template": "edited draft", "note": "", "ids": w.selected_ids}
    assert save_msg == {"action": "save", "template": "edited draft", "note": ""}
    wanted = set(w.selected_ids) | {"memo-1"}  # the "open" category holds memo-1
    assert out["selected"] == [r["id"] for r in RECORDS if r["id"] in wanted]
    assert out["role"] == "decide"
    assert out["editor_after_python"] == "new template from python"
    assert out["error_text"]
    assert out["saves"] >= 2
    assert out["handlers_left"] == 0


def test_the_engine_holds_no_widget_the_widget_holds_the_engine(lab: PromptLab) -> None:
    w = lab.widget
    assert PromptLabWidget.of(lab) is w
    assert w.lab is lab
    held = [k for k, v in vars(lab).items() if v is w or (isinstance(v, (list, dict)) and w in v)]
    assert held == []
    # The lab reaches the widget only through a weak on_change subscription.
    assert [type(ref).__name__ for ref in lab._listeners] == ["WeakMethod"]


# ------------------------------------------------------------------ every role, cancel, cache, exports


def test_every_role_says_what_it_is_scored_on(kb: Any) -> None:
    lab = sr.PromptLab(sr.SelfRAG(kb, model=scripted_model()), RECORDS, role="generate")
    w = lab.widget
    assert w.roles == ["decide", "rewrite", "grade", "rerank", "assess", "generate", "verify", "usefulness"]
    assert w.role == "generate"
    for role in w.roles:
        w.role = role
        assert w.error == ""
        assert w.role_info == ROLE_LABELS[role] != ""
        assert w.template == lab.template(role)


def test_cancel_message_stops_the_run_and_the_view_says_after_how_many(kb: Any) -> None:
    import threading

    from prompt_lab_fixtures import grade

    entered = threading.Event()
    release = threading.Event()

    def slow_grade(request: Any) -> dict[str, Any]:
        entered.set()
        release.wait()  # held until the cancel has been sent: no timing involved
        return grade(request)

    model = scripted_model(without=("grade",))
    model.default("grade", slow_grade)
    lab = sr.PromptLab(sr.SelfRAG(kb, model=model), RECORDS, roles=["grade"], concurrency=1)
    w = lab.widget
    assert w.handle({"action": "cancel"}) is None
    assert w.status == "nothing to cancel: no run in progress"
    worker = w.handle({"action": "run", "ids": ["refund-1", "ship-1", "memo-1"]})
    assert worker is not None
    try:
        assert entered.wait(60)
        assert w.running
        w.handle({"action": "cancel"})
        assert w.error == ""
        assert w.status.startswith("cancelling")
    finally:
        release.set()
    w.wait(120)
    assert not w.running
    assert w.status.startswith("cancelled after 1/3")
    res = w.results
    assert "srnb-lab-running" not in res["c"]  # finished
    banner = tree_find(res, "srnb-lab-cancelled")
    assert [tree_text(b) for b in banner] == [
        "cancelled after 1/3 questions: the rows below are the questions that finished"
    ]
    assert row_ids(res) == ["refund-1"]


def test_a_rerun_is_served_from_the_cache_and_says_so(lab: PromptLab) -> None:
    w = lab.widget
    text = with_marker(w.template, STRICT)
    w.handle({"action": "run", "template": text, "ids": ["refund-1"]})
    w.wait(60)
    assert "cached" not in w.status
    w.handle({"action": "run", "template": text, "ids": ["refund-1"]})
    w.wait(60)
    assert "2 of 2 sides cached" in w.status
    assert tree_text(tree_find(w.results, "srnb-lab-cached")[0]) == "2 of 2 sides cached (no model call)"
    assert "cached" in tree_text(tree_find(w.results, "srnb-lab-new")[0])


def test_export_goes_to_the_exports_folder_and_its_notice_clears_on_role_switch(
    lab: PromptLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the notebook's folder
    w = PromptLabWidget(lab)
    assert w.export_dir == str(tmp_path / "prompt_lab_exports")
    w.handle({"action": "export"})
    assert w.error == ""
    h = lab.current("grade")
    out = tmp_path / "prompt_lab_exports" / f"prompt-grade-{h}.txt"
    assert out.read_text(encoding="utf-8") == lab.template("grade")
    assert (tmp_path / "prompt_lab_exports" / f"prompt-grade-{h}.txt.json").is_file()
    assert w.exported["path"] == str(Path("prompt_lab_exports") / out.name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prompt_lab_exports"]  # nothing else written
    w.role = "decide"
    assert w.exported == {}


def test_static_html_is_mathjax_ignored_and_left_aligned(lab: PromptLab) -> None:
    lab.run("grade", ["refund-1"])
    for page in (lab.to_html(), lab.last_run("grade").to_html()):  # type: ignore[union-attr]
        assert page.startswith('<div class="srnb-root srnb-lab tex2jax_ignore mathjax_ignore"')
        # Jupyter right-aligns rendered table cells; the lab's rule is more specific.
        assert re.search(r"\.srnb-lab \.srnb-lab-table td\s*\{\s*text-align:\s*left", page)
        assert re.search(r"\.srnb-lab \.srnb-lab-table th\s*\{\s*text-align:\s*left", page)


_CANCEL_HARNESS = r"""
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";

const [js, statePath, miniDom] = process.argv.slice(2);
const { modelDouble } = await import(pathToFileURL(miniDom).href);
const traits = JSON.parse(readFileSync(statePath, "utf8"));
const { model, sent } = modelDouble(traits);
const mod = await import(pathToFileURL(js).href);
const el = document.createElement("div");
mod.default.render({ model, el });
const cancel = () => el.all((e) => e.tagName === "BUTTON" && e.textContent === "Cancel run")[0];
const out = {};
out.root = el.all((e) => (e.className || "").includes("srnb-lab"))[0].className;
out.idle_hidden = cancel().style.display === "none";
out.scored = el.byClass("srnb-lab-scored").map((e) => e.textContent);
out.exports_line = el.textContent.includes("exports are written to " + traits.export_dir);
model.set("running", true);
out.running_shown = cancel().style.display === "" && !cancel().disabled;
cancel().fire("click");
model.set("results", traits.__cancelled);
model.set("running", false);
out.after_hidden = cancel().style.display === "none";
out.text = el.textContent;
out.sent = sent;
process.stdout.write(JSON.stringify(out));
"""


def test_js_cancel_button_sends_cancel_and_the_view_says_cancelled_after(
    lab: PromptLab, tmp_path: Path
) -> None:
    if NODE is None:  # before the runs: they are the slow part
        pytest.skip("node is not installed: the JS test needs it")
    one_by_one = sr.PromptLab(lab.rag, lab.questions, roles=["grade"], concurrency=1)
    ids = ["refund-1", "ship-1", "memo-1"]
    run = one_by_one.run("grade", ids, on_row=lambda *_: one_by_one.cancel("grade"))
    assert run.cancelled
    w = one_by_one.widget
    traits = {
        k: getattr(w, k)
        for k in w.keys
        if not k.startswith("_") and k not in ("layout", "tabbable", "tooltip")
    }
    traits["results"] = {}
    traits["__cancelled"] = run_view(run)
    (tmp_path / "c.mjs").write_text(_CANCEL_HARNESS, encoding="utf-8")
    mini_dom = str(Path(__file__).parent / "mini_dom.mjs")
    out = run_harness(tmp_path, tmp_path / "c.mjs", "prompt_lab.js", ("state", traits), extra=[mini_dom])
    assert out["root"] == "srnb-root srnb-lab tex2jax_ignore mathjax_ignore"
    assert out["idle_hidden"]
    assert out["scored"] == ["scored on: " + ROLE_LABELS["grade"]]  # one line under the role picker
    assert out["exports_line"]
    assert out["running_shown"]
    assert out["sent"] == [{"action": "cancel"}]
    assert out["after_hidden"]
    assert "cancelled after 1/3 questions" in out["text"]
