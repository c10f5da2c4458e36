"""Prompt Lab scored against human labels (sr.Labels), from the documented
rules (docs/prompt_lab.md, promptlab_labels.py): grade vs chunk labels, verify
vs claim labels, usefulness vs answer labels; kappa / precision / recall / F1
and the confusion matrix over the items whose prompt reached a model; items
with no label counted apart, never as agreement; roles without labels of their
kind keep the proxy. Real pipeline: ScriptedModel reading a marker in the
system prompt, real LanceDB; the expected figures are worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from display_fixtures import tree_find, tree_text
from prompt_lab_fixtures import RECORDS, SKEPTIC, STRICT, build_kb, scripted_model, with_marker

import selfrag_nb as sr
from selfrag_nb.display.prompt_lab_html import run_html
from selfrag_nb.display.prompt_lab_text import run_summary
from selfrag_nb.display.prompt_lab_widget import run_view
from selfrag_nb.eval.questions import QuestionSet
from selfrag_nb.promptlab import PromptLab


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_kb(tmp_path_factory.mktemp("lab_labels_kb"))


@pytest.fixture
def chunk_ids(kb: Any) -> dict[str, str]:
    ids = {h.source: h.chunk_id for h in kb.chunks()}
    assert set(ids) == {"refunds.md", "shipping.md"}  # one chunk each
    return ids


def make_lab(kb: Any, labels: sr.Labels | None, **kw: Any) -> PromptLab:
    qs = QuestionSet.from_records(RECORDS, name="lab-labels")
    return sr.PromptLab(
        sr.SelfRAG(kb, model=kw.pop("model", None) or scripted_model()), qs, labels=labels, **kw
    )


def test_grade_scored_against_chunk_labels(kb: Any, chunk_ids: dict[str, str], tmp_path: Path) -> None:
    labels = sr.Labels(tmp_path / "labels.jsonl")
    labels.chunk("refund-1", chunk_ids["refunds.md"], relevant=True)
    labels.chunk("refund-1", chunk_ids["shipping.md"], relevant=False, note="about shipping")
    labels.chunk("ship-1", chunk_ids["shipping.md"], relevant=True)
    # ship-1's refunds chunk is left unlabelled: "no label", never agreement
    lab = make_lab(kb, labels)
    # one per category among the questions people labelled (memo-1 and france-1 have no chunk labels)
    assert len(lab.default_ids("grade")) == 1
    assert lab.default_ids("grade")[0] in {"refund-1", "ship-1"}
    lab.set_template("grade", with_marker(lab.template("grade"), STRICT))
    run = lab.run("grade", ["refund-1", "ship-1"])
    assert run.labels == str(labels.path)
    assert run.label_kind == "chunk"

    # baseline grades every chunk relevant: people/judge pairs (rel, rel) (not, rel) (rel, rel)
    # po = 2/3; people rel 2/3, judge rel 3/3: pe = 2/3 -> kappa (2/3 - 2/3) / (1/3) = 0
    old = run.human("old")
    assert old is not None
    assert (old.n, old.agree, old.no_label) == (3, 2, 1)
    assert old.kappa == pytest.approx(0.0)
    assert (old.true_positive, old.judge_positive, old.human_positive) == (2, 3, 2)
    assert old.precision == pytest.approx(2 / 3)
    assert old.recall == 1.0
    # STRICT grades by topic: every labelled chunk as people did.
    # po = 1; people rel 2/3 not 1/3, judge the same: pe = 4/9 + 1/9 = 5/9 -> kappa 1
    assert run.kappa == pytest.approx(1.0)
    assert (run.precision, run.recall, run.f1) == (1.0, 1.0, 1.0)
    assert run.confusion == {
        "relevant": {"relevant": 2, "not relevant": 0},
        "not relevant": {"relevant": 0, "not relevant": 1},
    }
    assert run.no_label == 1
    assert run.disagreements("new") == []
    [wrong] = run.disagreements("old")
    assert wrong["id"] == "refund-1"
    assert wrong["key"] == chunk_ids["shipping.md"]
    assert (wrong["people"], wrong["judge"], wrong["note"]) == ("not relevant", "relevant", "about shipping")
    assert wrong["line"] == 2
    assert list(run.by_category("new")) == ["factual", "overall"]

    # the proxy is gone: each side's agreement is the share of its labelled chunks judged as people did
    row = {r.id: r for r in run.rows}
    assert row["refund-1"].label.startswith("people: 2 of 2 chunks labelled")
    assert row["refund-1"].old.agreement == pytest.approx(0.5)
    assert row["ship-1"].old.agreement == 1.0  # its one labelled chunk; the other is "no label"
    assert row["refund-1"].new.precision is None
    t = run.totals()
    assert t["new"]["kappa"] == pytest.approx(1.0)
    assert t["old"]["precision"] == pytest.approx(2 / 3)  # vs people, not vs the relevant files
    assert t["new"]["human"]["no_label"] == 1

    df = run.to_pandas()
    assert list(df["label_items"]) == [2, 1]
    assert list(df["old_label_agree"]) == [1, 1]
    assert list(df["new_label_agree"]) == [2, 1]
    assert len(run.labels_to_pandas()) == 4  # every judged chunk, labelled or not

    # versions and exports carry kappa and its denominators
    scores = lab.versions("grade")[-1]["scores"]
    assert scores["kappa"] == 1.0
    assert scores["items"] == 3
    assert scores["no_label"] == 1
    lab.export("grade", tmp_path / "grade.txt")
    side = json.loads((tmp_path / "grade.txt.json").read_text(encoding="utf-8"))
    assert side["scores"]["scored_on"] == str(labels.path)

    # the faces: summary, static HTML, widget state
    assert "kappa 0.00 → 1.00" in run_summary(run)
    assert "precision 2/3 → 2/2" in run_summary(run)
    assert "no label: 1 of 4 chunks" in run_summary(run)
    html = run_html(run)
    assert "srnb-lab-confusion" in html
    assert "1 disagreement" not in html  # the candidate has none
    assert "0 disagreements with people" in html
    tree = run_view(run)  # the widget shows the same figures: the same tree
    line = tree_text(tree_find(tree, "srnb-lab-human")[0])
    assert line.startswith("vs people (labels.jsonl, chunks): kappa 0.00 → 1.00")
    assert "precision 2/3 → 2/2" in line
    assert tree_find(tree, "srnb-lab-confusion")
    assert tree_find(tree, "srnb-lab-disagreements")


def test_round_trip_keeps_the_items(kb: Any, chunk_ids: dict[str, str], tmp_path: Path) -> None:
    labels = sr.Labels(tmp_path / "labels.jsonl")
    labels.chunk("refund-1", chunk_ids["shipping.md"], relevant=False)
    run = make_lab(kb, labels).run("grade", ["refund-1"])
    again = type(run).model_validate_json(run.to_json())
    assert again.label_items == run.label_items
    assert again.kappa == run.kappa


def test_verify_and_usefulness_scored_against_claim_and_answer_labels(kb: Any, tmp_path: Path) -> None:
    labels = sr.Labels(tmp_path / "labels.jsonl")
    labels.claim("refund-1", "The answer.", "partial")  # the scripted verifier's claim is "the answer"
    labels.answer("refund-1", "partly")
    labels.answer("ship-1", "partly")
    lab = make_lab(kb, labels)

    verify = lab.run("verify", ["refund-1", "ship-1"])
    assert verify.label_kind == "claim"
    v = verify.human("new")
    assert v is not None
    # refund-1: people partial, judge supported; ship-1's claim has no label
    assert (v.n, v.agree, v.no_label) == (1, 0, 1)
    assert v.confusion["partial"]["supported"] == 1
    assert v.kappa == 0.0  # po = 0, pe = 0 (people and judge used different single labels)
    assert verify.disagreements()[0]["people"] == "partial"

    lab.set_template("usefulness", with_marker(lab.template("usefulness"), SKEPTIC))
    use = lab.run("usefulness", ["refund-1", "ship-1"])
    old, new = use.human("old"), use.human("new")
    assert old is not None
    assert new is not None
    # baseline says yes to both, people partly: po 0, pe 0 -> kappa 0
    assert old.confusion["partly"]["yes"] == 2
    assert old.kappa == 0.0
    # SKEPTIC says partly to both, as people did: chance agreement 1 -> kappa undefined, said why
    assert new.agree == 2
    assert new.kappa is None
    assert "chance agreement is 1" in new.kappa_note
    assert use.kappa is None
    assert "kappa 0.00 → undefined" in run_summary(use)
    assert "chance agreement is 1" in run_summary(use)


def test_roles_without_labels_of_their_kind_keep_the_proxy(kb: Any, tmp_path: Path) -> None:
    labels = sr.Labels(tmp_path / "labels.jsonl")
    labels.answer("refund-1", "yes")  # answers only: grade and verify keep their proxies
    lab = make_lab(kb, labels)
    run = lab.run("grade", ["refund-1"])
    assert run.labels == ""
    assert run.label_items == []
    assert run.kappa is None
    assert run.human() is None
    assert run.rows[0].label == "relevant: refunds.md"
    assert "human" not in run.totals()["new"]
    assert "label_items" not in run.to_pandas().columns
    assert "srnb-lab-human" not in run_html(run)


def test_rows_whose_prompt_did_not_reach_a_model_are_not_counted(kb: Any, tmp_path: Path) -> None:
    labels = sr.Labels(tmp_path / "labels.jsonl")
    labels.answer("refund-1", "yes")
    lab = make_lab(kb, labels, model=sr.OfflineModel())  # reads structured inputs, not prompts
    run = lab.run("usefulness", ["refund-1"])
    assert run.rows[0].new.prompt_use == "offline"
    assert run.rows[0].new.judged  # the offline judge did rule...
    new = run.human("new")
    assert new is not None
    assert (new.n, new.no_label) == (0, 0)  # ...but nothing counts, agreement or "no label"
    assert run.kappa is None
    assert "no rows" in new.kappa_note
    assert run.label_items[0].human == "yes"
    assert run.label_items[0].new is None


def test_labels_edited_after_a_run_rescore_from_the_cache(kb: Any, tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    sr.Labels(path).answer("refund-1", "no")
    model = scripted_model()  # a scripted model's sides are cached for the life of the object
    run = make_lab(kb, sr.Labels(path), model=model).run("usefulness", ["refund-1"])
    assert run.human("new").agree == 0  # type: ignore[union-attr]
    sr.Labels(path).answer("refund-1", "yes")  # a person changes their mind: the last line wins
    again = make_lab(kb, sr.Labels(path), model=model).run("usefulness", ["refund-1"])
    assert again.cached == 1  # no model call
    assert again.human("new").agree == 1  # type: ignore[union-attr]


def test_labels_argument_accepts_a_path(kb: Any, tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    sr.Labels(path).answer("refund-1", "yes")
    lab = make_lab(kb, path)  # type: ignore[arg-type]
    assert isinstance(lab.labels, sr.Labels)
    assert lab.labels.get_answer("refund-1") is not None
    with pytest.raises(sr.LabelsError, match=r"path to a \.jsonl"):
        make_lab(kb, 42)  # type: ignore[arg-type]


def test_best_ranks_cached_versions_against_people_too(
    kb: Any, chunk_ids: dict[str, str], tmp_path: Path
) -> None:
    # People judge refund-1's refunds chunk not relevant (its file is listed as relevant: the proxy disagrees).
    labels = sr.Labels(tmp_path / "labels.jsonl")
    labels.chunk("refund-1", chunk_ids["refunds.md"], relevant=False)
    labels.chunk("refund-1", chunk_ids["shipping.md"], relevant=False)
    lab = make_lab(kb, labels)
    base = lab.baseline("grade")
    strict = lab.set_template("grade", with_marker(lab.template("grade"), STRICT))
    lab.run("grade", ["refund-1"])  # STRICT: refunds relevant (people: no), shipping not (people: no) -> 1/2
    lab.set_template("grade", "NOTE: read carefully.\n" + lab.version_text("grade", base))
    last = lab.run("grade", ["refund-1"])  # baseline vs the note: both say relevant to both -> 0/2
    assert (last.agreement_old, last.agreement_new) == (0.0, 0.0)
    best = lab.best("grade")
    # STRICT comes from the cache: it is ranked on people's labels (1/2), not on the proxy (2/2)
    assert best["hash"] == strict
    assert best["agreement"] == 0.5
