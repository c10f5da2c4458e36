"""The Prompt Lab in a marimo notebook (exported to HTML by
tests/lab/test_prompt_lab_marimo.py). A tiny knowledge base in a temporary
folder, the offline model, and the lab shown as the cell's output: marimo
takes the lab's ``_display_`` (the AnyWidget through ``mo.ui.anywidget``)."""

import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="Prompt Lab")


@app.cell
def _():
    import pathlib
    import tempfile

    import selfrag_nb as sr

    return pathlib, sr, tempfile


@app.cell
def _(pathlib, sr, tempfile):
    root = pathlib.Path(tempfile.mkdtemp(prefix="selfrag-lab-marimo-"))
    (root / "docs").mkdir()
    (root / "docs" / "refunds.md").write_text(
        "# Refund policy\n\nCustomers can request a full refund within 30 days.\n", encoding="utf-8"
    )
    kb = sr.KnowledgeBase.open(root / "kb", embedder="hashing")
    kb.ingest(root / "docs")
    records = [
        {
            "id": "refund-1",
            "category": "factual",
            "question": "What is the refund window?",
            "should_retrieve": True,
            "relevant": ["refunds.md"],
            "expected": ["answered"],
            "must_include": ["30 days"],
        }
    ]
    lab = sr.PromptLab(sr.SelfRAG(kb), records, role="generate", cache=root / "lab-cache")
    run = lab.run("generate", ["refund-1"])
    return lab, run


@app.cell
def _(lab):
    lab  # noqa: B018 - a marimo cell shows its last expression


@app.cell
def _(run):
    run  # noqa: B018 - a marimo cell shows its last expression


if __name__ == "__main__":
    app.run()
