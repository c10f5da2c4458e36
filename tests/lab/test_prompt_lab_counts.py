"""Prompt Lab's honest counts: a row the role's template never reached is
marked "prompt not used" and left out of agreement, per side, everywhere the
run is shown; lab.versions() reads like a table, not raw floats.

The rules (docs/prompt_lab.md, "Which rows count"):
- a side counts only when a call of the role carried that version's template
  to a model that reads prompts ("used"); a rule's decision, a skipped stage,
  no call, or a side cached for another template is "not used"; the offline
  model is "offline" (it reads structured inputs, not prompts), never "used";
- agreement (numerator and denominator) is over the "used" rows of that side;
  the header says "prompt reached the model on k of n", per side;
- versions: ISO times, rounded scores, shown as a table.

Real pipelines: ScriptedModel (reads a marker in the system prompt) or the
offline model, over a real LanceDB knowledge base in a temporary folder."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from display_fixtures import tree_find, tree_text
from prompt_lab_fixtures import LAZY, RECORDS, STRICT, build_kb, scripted_model, with_marker

import selfrag_nb as sr
from selfrag_nb.display.prompt_lab_widget import run_view
from selfrag_nb.eval.questions import QuestionSet
from selfrag_nb.promptlab import PromptLab

#: Four questions labelled for decide; the quick rules decide three of them
#: (greeting, small talk, a factual keyword), so only France reaches the model.
DECIDE_SET = [
    {"id": "hello-1", "category": "greeting", "question": "Hello!", "should_retrieve": False},
    {"id": "thanks-1", "category": "smalltalk", "question": "Thanks a lot!", "should_retrieve": False},
    {
        "id": "invoice-1",
        "category": "factual",
        "question": "Where is invoice INV-2041?",
        "should_retrieve": True,
    },
    {
        "id": "france-1",
        "category": "general",
        "question": "What is the capital of France?",
        "should_retrieve": False,
    },
]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_kb(tmp_path_factory.mktemp("lab_counts_kb"))


def test_decide_rows_decided_by_rule_are_left_out_of_agreement(kb: Any) -> None:
    model = scripted_model()
    lab = PromptLab(sr.SelfRAG(kb, model=model), QuestionSet.from_records(DECIDE_SET, name="rules"))
    lab.set_template("decide", with_marker(lab.template("decide"), LAZY), note="lazy")
    run = lab.run("decide", [q["id"] for q in DECIDE_SET])
    by_id = {r.id: r for r in run.rows}

    # Agreement over the one row each template reached: the rule rows (which
    # agree with their labels) do not count, so the baseline is 0%, not 75%.
    assert run.agreement_old == 0.0  # baseline retrieves for France; the label says no
    assert run.agreement_new == 1.0

    # Only France went to the model; the other three were decided by rule.
    assert {r.inputs.question for r in model.requests_for("decide")} == {"What is the capital of France?"}
    for qid in ("hello-1", "thanks-1", "invoice-1"):
        for side in (by_id[qid].old, by_id[qid].new):
            assert side.prompt_use == "not used", qid
            assert not side.reached
            assert "rule" in side.prompt_note
            assert (
                side.agreement == 1.0
            )  # the rule agrees with the label, but that says nothing of the template
    france = by_id["france-1"]
    assert france.old.prompt_use == france.new.prompt_use == "used"
    assert france.old.prompt_note == ""

    assert (run.reached_old, run.reached_new) == (1, 1)
    t = run.totals()
    assert (t["old"]["reached"], t["old"]["not_used"], t["old"]["offline"], t["old"]["labelled"]) == (
        1,
        3,
        0,
        1,
    )
    assert t["new"]["agreement"] == 1.0

    # Every face says it: text, static HTML, the widget's state, pandas.
    assert "agreement 0% → 100% on 1 question" in run.to_text()
    assert "prompt reached the model on 1 of 4" in run.to_text()
    page = run.to_html()
    assert "prompt reached the model on 1 of 4" in page
    assert page.count("<bdi>prompt not used</bdi>") == 6  # three rule rows, both sides
    assert "no call" in page  # not "unknown / unknown $0 · 0.0 ms"
    tree = run_view(run)  # the widget's results: the tree the static page is
    assert "prompt reached the model on 1 of 4" in tree_text(tree_find(tree, "srnb-lab-reach")[0])
    hello = next(b for b in tree_find(tree, "srnb-lab-row") if "hello-1" in tree_text(b))
    old = tree_find(hello, "srnb-lab-old")[0]
    assert [tree_text(u) for u in tree_find(old, "srnb-lab-unused")] == ["prompt not used"]
    assert (
        tree_text(tree_find(old, "srnb-lab-mark")[0]) == "—"
    )  # not a ✓ for a verdict the template did not give
    assert "rule" in tree_text(tree_find(old, "srnb-meta")[0])
    df = run.to_pandas()
    assert list(df["new_prompt_use"]) == ["not used", "not used", "not used", "used"]
    assert df[df.new_prompt_use == "used"]["new_agreement"].mean() == run.agreement_new
    assert "old_prompt_note" in df.columns

    # The version's recorded scores (and so best()) use the reached rows too.
    scores = {v["hash"]: v["scores"] for v in lab.versions("decide")}
    assert scores[run.baseline]["agreement"] == 0.0
    assert scores[run.baseline]["reached"] == 1
    assert scores[run.baseline]["questions"] == 4
    assert lab.best("decide")["hash"] == run.candidate


def test_a_side_cached_from_another_template_is_not_counted(kb: Any) -> None:
    qs = QuestionSet.from_records(RECORDS, name="lab-set")
    lab = PromptLab(sr.SelfRAG(kb, model=scripted_model()), qs)
    base = lab.baseline("grade")
    strict = lab.set_template("grade", with_marker(lab.template("grade"), STRICT))
    lab.run("grade", ["refund-1"], version=strict, baseline=strict)  # strict's side, on disk
    other = lab.set_template("grade", with_marker(lab.template("grade"), "another line"))
    # The disk cache hands the strict side out under the other version's key
    # (a copied or colliding file): its verdict is not the other template's.
    ctx, q = lab._context("grade"), qs.get("refund-1")
    assert lab.store is not None
    src = lab.store._path(lab._key("grade", strict, ctx, q))
    dst = lab.store._path(lab._key("grade", other, ctx, q))
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    lab.clear_cache()  # memory forgets: the next run reads the disk

    run = lab.run("grade", ["refund-1"], version=other, baseline=base)
    (row,) = run.rows
    assert row.new.cached
    assert row.new.version == strict  # what the file holds
    assert run.agreement_new is None  # strict's 100% is not credited to the other version
    assert row.new.prompt_use == "not used"
    assert "cache of template" in row.new.prompt_note
    assert run.reached_new == 0
    # The baseline was run for real: it counts (and the sides may differ in reach).
    assert row.old.prompt_use == "used"
    assert run.reached_old == 1
    assert run.agreement_old == 0.5
    assert "prompt reached the model on 1 of 1 (old), 0 of 1 (new)" in run.to_text()


def test_offline_model_calls_are_offline_not_reached(kb: Any) -> None:
    lab = PromptLab(sr.SelfRAG(kb), QuestionSet.from_records(RECORDS, name="lab-set"))
    lab.set_template("grade", with_marker(lab.template("grade"), STRICT))
    run = lab.run("grade", ["refund-1", "ship-1"])
    # Not counted as reached-and-agreeing: no agreement is measured.
    assert run.agreement_old is None
    assert run.agreement_new is None
    sides = [s for r in run.rows for s in (r.old, r.new)]
    assert all(s.calls and s.offline for s in sides)  # the offline model was called...
    assert {s.prompt_use for s in sides} == {"offline"}  # ...but it read no prompt
    assert all("structured inputs" in s.prompt_note for s in sides)
    assert (run.reached_old, run.reached_new) == (0, 0)
    text = run.to_text()
    assert "agreement not measured" in text
    assert "prompt reached the model on 0 of 2" in text
    assert "offline: prompts not used on 2 of 2" in text
    assert "offline: prompt not used" in run.to_html()
    new = tree_find(run_view(run), "srnb-lab-new")[0]
    assert [tree_text(u) for u in tree_find(new, "srnb-lab-unused")] == ["offline: prompt not used"]
    assert set(run.to_pandas()["old_prompt_use"]) == {"offline"}


def test_versions_have_readable_times_rounded_scores_and_show_as_a_table(kb: Any, tmp_path: Path) -> None:
    lab = PromptLab(sr.SelfRAG(kb, model=scripted_model()), QuestionSet.from_records(RECORDS, name="lab-set"))
    strict = lab.set_template("grade", with_marker(lab.template("grade"), STRICT), note="strict")
    # Baseline: 1/2, 1/2 and 0/2 chunks judged right -> 1/3 (0.3333333333333333 unrounded).
    lab.run("grade", ["refund-1", "ship-1", "memo-1"])
    vs = lab.versions("grade")
    base = vs[0]
    assert base["scores"]["agreement"] == 0.333
    for v in vs:
        assert isinstance(v["created"], str)
        assert datetime.fromisoformat(v["created"].replace("Z", "+00:00")).tzinfo is not None
        assert datetime.fromisoformat(v["scores"]["run_at"].replace("Z", "+00:00"))
        for k in ("agreement", "precision", "recall"):
            x = v["scores"][k]
            assert x is None or x == round(x, 3), (k, x)
    # Still a list of dicts for code (the notebook reads vs[0]["hash"]) ...
    assert [v["hash"] for v in vs] == [lab.baseline("grade"), strict]
    json.dumps(vs)
    # ... shown as a table: text with aligned columns, HTML with a <table>.
    lines = repr(vs).splitlines()
    assert lines[0] == "PromptLab versions of grade (2)"
    assert lines[1].split() == ["version", "created", "(UTC)", "note", "agreement"]
    assert "33% (prompt reached the model on 3 of 3)" in lines[2]
    assert "{" not in repr(vs)  # no raw dicts
    page = vs._repr_html_()
    assert "<table" in page
    assert base["created"] in page
    assert "33% (prompt reached the model on 3 of 3)" in page
    # The export sidecar carries the same readable values.
    lab.export("grade", tmp_path / "g.txt")
    meta = json.loads((tmp_path / "g.txt.json").read_text(encoding="utf-8"))
    assert meta["hash"] == strict
    assert datetime.fromisoformat(meta["created"].replace("Z", "+00:00"))
    assert meta["scores"]["reached"] == 3
    assert meta["scores"]["agreement"] == 0.833  # (1 + 1 + 1/2) / 3, rounded


def test_stages_that_made_no_call_are_not_counted(kb: Any) -> None:
    qs = QuestionSet.from_records(RECORDS, name="lab-set")
    # Rewrite judged the wording close enough and made no call: "not attempted".
    lab = PromptLab(sr.SelfRAG(kb, model=scripted_model()), qs)
    run = lab.run("rewrite", ["refund-1"])
    (row,) = run.rows
    assert run.agreement_old is None  # its spans-kept/recall score is not the template's
    assert row.old.verdict == "not attempted"
    assert row.old.agreement == 1.0
    assert row.old.prompt_use == "not used"
    assert row.old.prompt_note.startswith("no rewrite call: ")
    assert "agreement not measured" in run.to_text()
    # No retrieval: the verifier never ran, yet the outcome matches some labels.
    never = PromptLab(sr.SelfRAG(kb, model=scripted_model(), settings=sr.Settings(retrieval="never")), qs)
    run = never.run("verify", ["refund-1", "france-1"])
    assert run.agreement_old is None  # not (0 + 1) / 2 from questions nobody verified
    assert [r.old.verdict for r in run.rows] == ["not verified → direct"] * 2
    assert {r.old.prompt_note for r in run.rows} == {"no retrieval: the stage did not run"}
    assert (run.reached_old, run.reached_new) == (0, 0)
    assert "prompt reached the model on 0 of 2" in run.to_html()


_HARNESS = r"""
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";
const [js, statePath, miniDom] = process.argv.slice(2);
const { modelDouble } = await import(pathToFileURL(miniDom).href);
const traits = JSON.parse(readFileSync(statePath, "utf8"));
const { model } = modelDouble(traits);
const mod = await import(pathToFileURL(js).href);
const el = document.createElement("div");
mod.default.render({ model, el });
const cls = (c) => el.all((e) => (e.className || "").split(" ").includes(c));
process.stdout.write(JSON.stringify({
  text: el.textContent,
  unused: cls("srnb-lab-unused").map((e) => e.textContent),
  marks: cls("srnb-lab-mark").map((e) => e.textContent),
  unusedRows: cls("srnb-lab-unused-row").length,
  noCall: cls("srnb-meta").filter((e) => e.textContent === "no call").length,
}));
"""


def test_widget_marks_rows_the_prompt_did_not_reach(kb: Any, tmp_path: Path) -> None:
    from display_fixtures import run_harness

    lab = PromptLab(
        sr.SelfRAG(kb, model=scripted_model()),
        QuestionSet.from_records(DECIDE_SET, name="rules"),
        role="decide",
    )
    lab.set_template("decide", with_marker(lab.template("decide"), LAZY))
    lab.run("decide", [q["id"] for q in DECIDE_SET])
    w = lab.widget
    traits = {
        k: getattr(w, k)
        for k in w.keys
        if not k.startswith("_") and k not in ("layout", "tabbable", "tooltip")
    }
    (tmp_path / "h.mjs").write_text(_HARNESS, encoding="utf-8")
    mini_dom = str(Path(__file__).parents[1] / "display" / "mini_dom.mjs")
    out = run_harness(tmp_path, tmp_path / "h.mjs", "prompt_lab.js", ("state", traits), extra=[mini_dom])
    assert "prompt reached the model on 1 of 4" in out["text"]
    assert out["unused"] == ["prompt not used"] * 6  # three rule rows, both sides
    assert out["unusedRows"] == 3
    assert out["marks"] == ["—"] * 6 + ["✗", "✓"]  # France: baseline wrong, candidate right
    assert "decided by rule (greeting), no call" in out["text"]
    assert out["noCall"] == 6  # usage cells of the rule rows: not "unknown / unknown $0 · 0.0 ms"
    # The version list: times and the reached count, not raw floats.
    assert lab.versions("decide")[0]["created"] in out["text"]
    assert "0% (prompt reached the model on 1 of 4)" in out["text"]
