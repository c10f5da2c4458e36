"""selfrag_nb as a marimo app: ask a question, pick the user and roles, the model
and which stages run, and read the live trace.

    marimo run notebooks/selfrag_app.py      # the app
    marimo edit notebooks/selfrag_app.py     # the notebook behind it
    python notebooks/selfrag_app.py          # runs every cell once, as a script

Views are AnyWidgets wrapped by ``mo.ui.anywidget``: no classic ipywidgets
layouts (they do not render in marimo).
"""

import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="selfrag_nb")


@app.cell
def _():
    import html
    import os

    import marimo as mo

    import selfrag_nb as sr

    return html, mo, os, sr


@app.cell
def _(mo):
    mo.md(
        """
        # Self-RAG, live

        Every stage of the answer below is a typed record: the decision and its reason,
        the retrieved chunks the user may read, relevance grades, the rerank order, the
        answerability check, the answer with claim-level support, and the outcome.
        With no API key the **offline model** runs everything.
        """
    )


@app.cell
def _(sr):
    kb = sr.KnowledgeBase.sample()
    return (kb,)


@app.cell
def _(mo):
    question = mo.ui.text(
        value="What is the refund window for a Pro subscription?",
        label="Question",
        full_width=True,
    )
    user_id = mo.ui.text(value="ana", label="User id")
    roles = mo.ui.multiselect(options=["staff", "support", "finance"], value=["staff"], label="Roles")
    model = mo.ui.dropdown(
        options=["offline", "openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-latest"],
        value="offline",
        label="Model",
    )
    retrieval = mo.ui.dropdown(options=["adaptive", "always", "never"], value="adaptive", label="Retrieval")
    rewrite = mo.ui.switch(value=True, label="rewrite")
    rerank = mo.ui.switch(value=True, label="rerank")
    mo.vstack(
        [
            question,
            mo.hstack([user_id, roles, model], justify="start"),
            mo.hstack([retrieval, rewrite, rerank], justify="start"),
        ]
    )
    return model, question, rerank, retrieval, rewrite, roles, user_id


@app.cell
def _(kb, model, mo, os, rerank, retrieval, rewrite, sr):
    _provider_keys = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
    _name = model.value
    _key = _provider_keys.get(_name.split("/", 1)[0])
    if _name != "offline" and _key and not os.environ.get(_key):
        _note = mo.callout(mo.md(f"`{_key}` is not set: using the offline model instead."), kind="warn")
        _name = "offline"
    else:
        _note = None
    settings = sr.Settings(retrieval=retrieval.value, rewrite=rewrite.value, rerank=rerank.value)
    rag = sr.SelfRAG(kb, model=None if _name == "offline" else _name, settings=settings)
    _note
    return (rag,)


@app.cell
def _(html, mo, question, rag, roles, sr, user_id):
    if question.value.strip():
        trace = rag.ask(question.value, user=sr.User(user_id.value.strip() or "anonymous", roles=roles.value))
        # Answer text comes from documents: escaped, never markdown; it wraps
        # (mo.plain_text is a <pre>: one long line ran off the page).
        _line = html.escape(f"{trace.outcome}: {trace.answer or ''}")
        _out = mo.vstack(
            [
                mo.Html(
                    f'<p class="srnb-answer-line tex2jax_ignore" style="white-space: pre-wrap; '
                    f'overflow-wrap: break-word; margin: 0">{_line}</p>'
                ),
                trace,
            ]
        )
    else:
        trace = None
        _out = mo.md("Type a question.")
    _out
    return (trace,)


if __name__ == "__main__":
    app.run()
