"""Package READMEs end to end: models read clean text, answers quote whole
clean sentences, views still highlight the evidence in the original chunk.

    a hard-wrapped Markdown README (HTML logo and footer, badges, reference
    links, a code block) and a reStructuredText one -> hashing KB in a tmp folder
      -> ScriptedModel answering as the offline model: every request of every
         role that reads document text holds none of the documents' markup
      -> offline pipeline: the answer is whole sentences of the clean text
         (no line-break fragment, no code line, no markup); the stored chunk is
         unchanged; each claim's evidence span maps back to the original words
         and the static view marks it there
"""

from __future__ import annotations

import re

import pytest
from store_docs import ingested_kb

import selfrag_nb as sr
from selfrag_nb.cleantext import clean_text
from selfrag_nb.display.html import view_tree
from selfrag_nb.display.tree import to_json
from selfrag_nb.llm.base import ModelRequest
from selfrag_nb.llm.offline import OfflineModel
from selfrag_nb.llm.schemas import ROLES
from selfrag_nb.testing import ScriptedModel
from selfrag_nb.text import split_sentences, strip_markers

README_MD = """<h1 align="center">
  <img src="https://raw.githubusercontent.com/acme/tidyjson/main/docs/logo.svg" alt="tidyjson" width="200">
</h1>

<p align="center">
  <a href="https://pypi.org/project/tidyjson"><img src="https://img.shields.io/pypi/v/tidyjson.svg" alt="PyPI"></a>
  <a href="https://github.com/acme/tidyjson/actions"><img src="https://github.com/acme/tidyjson/workflows/CI/badge.svg" alt="CI"></a>
</p>

[![Downloads][downloads-badge]][downloads-link] [![License: MIT](https://img.shields.io/badge/License-MIT-yellow.svg)](LICENSE)

**tidyjson** is a strict JSON parser for Python with readable error messages. It
parses a document of one megabyte in about three milliseconds, and it reports
the line and column of every syntax error it finds. See the [user
guide](https://tidyjson.example.org/guide "Guide") and the [changelog][changes].

## Installation

```bash
$ pip install tidyjson
```

## Usage

```python
import tidyjson
data = tidyjson.loads('{"a": 1}')
```

## Licence

<p align="center"><i>tidyjson is <a href="https://github.com/acme/tidyjson/blob/main/LICENSE">MIT licensed</a> code.<br/>Designed &amp; maintained by the Acme parsing team.</i></p>

[downloads-badge]: https://img.shields.io/pypi/dm/tidyjson
[downloads-link]: https://pypi.org/project/tidyjson
[changes]: https://tidyjson.example.org/changes
"""

# Ingested as plain text (the store has no .rst loader): the markup reaches
# the chunk as it is and is cleaned on the way to the models.
README_RST = """recodex
=======

.. image:: https://img.shields.io/pypi/v/recodex.svg
   :target: https://pypi.org/project/recodex
   :alt: PyPI

|build| |coverage|

**recodex** detects the character encoding of a byte string. Call
:func:`~recodex.api.detect` with the raw bytes; it returns the most likely
encoding together with a confidence between zero and one. See the
`documentation <https://recodex.example.org>`_ for details.

.. code-block:: python

   import recodex
   recodex.detect(b"caf\\xc3\\xa9")

.. |build| image:: https://github.com/acme/recodex/workflows/CI/badge.svg
.. |coverage| image:: https://codecov.io/gh/acme/recodex/branch/main/graph/badge.svg
"""

#: Markup of these two documents that no model may read and no answer may hold.
RAW = (
    "<img",
    "<p ",
    "<a ",
    "</a>",
    "</p>",
    "</h1>",
    "<br",
    "&amp;",
    "![",
    "](",
    "][downloads",
    "img.shields.io",
    "badge.svg",
    "**",
    ".. image::",
    ".. code-block::",
    ":func:",
    "`_",
    "|build|",
    ":target:",
)
MARKUP_RE = re.compile(r"<[a-zA-Z/]|&[a-z]+;|!\[|\]\(|\]\[|\*\*|\.\. |:func:|`|\|\w+\||^[=#]", re.MULTILINE)
DOC_ROLES = ("grade", "rerank", "assess", "generate", "verify")


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> sr.KnowledgeBase:
    return ingested_kb(
        tmp_path_factory.mktemp("readmes"), {"tidyjson.md": README_MD, "recodex.txt": README_RST}
    )


def _as_offline() -> ScriptedModel:
    """A scripted model that answers every role as the offline model would,
    keeping each request it was sent (its rendered messages and inputs)."""
    model = ScriptedModel()
    offline = OfflineModel()
    for role in ROLES:
        model.default(role, lambda req: offline.complete(req).raw)
    return model


def _document_text(req: ModelRequest) -> list[str]:
    """The document text a request hands the model (structured inputs)."""
    inputs = req.inputs
    texts = [getattr(inputs, "text", ""), *getattr(inputs, "candidates", [])]
    for ev in getattr(inputs, "evidence", []):
        texts += [ev.text, ev.title, ev.heading]
    return [t for t in texts if t]


@pytest.mark.parametrize(
    "question",
    [
        "How fast does tidyjson parse a one megabyte document?",
        "What does recodex detect and what confidence does it return?",
    ],
)
def test_models_read_no_markup(kb: sr.KnowledgeBase, question: str) -> None:
    model = _as_offline()
    # every chunk kept as relevant, so the reranker has several to order
    rag = sr.SelfRAG(kb, model=model, reranker="model", settings=sr.Settings(relevance_cutoff=0))
    trace = rag.ask(question)
    assert trace.retrieval is not None
    assert any(re.search(r"\*\*|<img|\.\. image::", h.text) for h in trace.retrieval.hits)  # stored as is
    seen = {req.role for req in model.requests}
    assert set(DOC_ROLES) <= seen, seen
    for req in model.requests:
        if req.role not in DOC_ROLES:
            continue
        prompt = "\n".join(m.content for m in req.messages)
        leaked = [r for r in RAW if r in prompt]
        assert not leaked, (req.role, leaked)
        for text in _document_text(req):
            prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # code blocks stay code
            assert not MARKUP_RE.search(prose), (req.role, MARKUP_RE.search(prose), text)
            # a hard wrap inside a paragraph is gone: no line of prose ends mid-sentence
            assert "one\nmegabyte" not in text
            assert "Call\n" not in text


def _clean_sentences(kb: sr.KnowledgeBase) -> set[str]:
    out: set[str] = set()
    for h in kb.chunks():
        for para in clean_text(h.text).split("\n"):
            out.update(split_sentences(para))
    return out


@pytest.mark.parametrize(
    ("question", "must"),
    [
        ("How fast does tidyjson parse a one megabyte document?", "about three milliseconds"),
        ("Which licence is tidyjson released under?", "MIT licensed"),
        ("What confidence does recodex return with the encoding?", "confidence between zero and one"),
    ],
)
def test_offline_answer_quotes_whole_clean_sentences(kb: sr.KnowledgeBase, question: str, must: str) -> None:
    trace = sr.SelfRAG(kb).ask(question)
    assert trace.outcome in ("answered", "disclaimed"), (trace.outcome, trace.answer)
    assert trace.generation is not None
    answer = trace.generation.answer
    assert must in answer
    assert not MARKUP_RE.search(answer), answer
    assert "$ pip" not in answer
    assert "import " not in answer
    whole = _clean_sentences(kb)
    for line in answer.split("\n"):
        for sent in split_sentences(strip_markers(line)):
            # every quoted sentence is one whole sentence of the clean text
            assert sent.rstrip().endswith("."), sent
            assert any(" ".join(sent.split()) == " ".join(w.split()) for w in whole), (sent, whole)


def test_evidence_spans_are_found_in_the_original_and_highlighted(kb: sr.KnowledgeBase) -> None:
    trace = sr.SelfRAG(kb).ask("How fast does tidyjson parse a one megabyte document?")
    assert trace.support is not None
    assert trace.retrieval is not None
    hits = {h.chunk_id: h for h in trace.retrieval.hits}
    spans = [(c, ev) for c in trace.support.claims for ev in c.evidence]
    assert spans
    for claim, ev in spans:
        original = hits[ev.chunk_id].text
        assert 0 <= ev.start < ev.end <= len(original), (claim.text, ev)
        # the original there holds the quoted words (the hard wrap and the markup between them aside)
        assert " ".join(clean_text(original[ev.start : ev.end]).split()) == " ".join(ev.span.split())
    # one span crosses a hard line break of the stored chunk, and the view marks it there
    crossing = [ev for _, ev in spans if "\n" in hits[ev.chunk_id].text[ev.start : ev.end]]
    assert crossing
    page = trace.support._repr_html_()
    assert "span not found" not in page
    marked = re.findall(r'<mark class="srnb-mark">(.*?)</mark>', page, flags=re.DOTALL)
    assert any("one\nmegabyte" in m or "parses a document" in m for m in marked), marked
    # the widget mounts the same tree: the same marks, in the same places
    from display_fixtures import tree_find, tree_text

    shown = [tree_text(m) for m in tree_find(to_json(view_tree(trace)), "srnb-mark")]
    assert len(shown) == len(marked)
    assert any("one\nmegabyte" in m or "parses a document" in m for m in shown), shown


def test_markdown_readme_chunk_is_stored_unchanged(kb: sr.KnowledgeBase) -> None:
    texts = [h.text for h in kb.chunks() if h.source == "tidyjson.md"]
    # the store keeps the document's own words; only what models read is cleaned
    assert any("**tidyjson** is a strict JSON parser" in t and "It\nparses" in t for t in texts)


@pytest.mark.parametrize(
    "raw",
    ['{"answer":"```jinja [2]"}', "$ uvicorn example:app [1]", "```python\nimport tidyjson\n```"],
    ids=["json-wrapped-fence", "shell-line", "code-block"],
)
def test_a_json_wrapper_or_code_from_the_model_is_never_the_answer(kb: sr.KnowledgeBase, raw: str) -> None:
    model = _as_offline()
    model.default("generate", raw)  # every generate call, the repair and the regeneration too
    trace = sr.SelfRAG(kb, model=model).ask("How fast does tidyjson parse a one megabyte document?")
    first = trace.generations[0]
    assert first.answer == ""
    assert first.calls[0].parse_status == "unparsed"
    assert any(f.what == "no answer" for f in first.fallbacks)
    assert trace.outcome == "refused"
    final = trace.answer or ""
    for bad in ('"answer"', "```", "{", "uvicorn", "import"):
        assert bad not in final, final
