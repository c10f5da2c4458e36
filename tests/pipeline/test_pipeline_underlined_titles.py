"""A README whose name is only in its underlined title, end to end.

    tilekit.md (Markdown setext titles) and geodex.rst (reStructuredText
    section titles), each long enough that the title and the fact asked
    about land in different chunks -> hashing KB in a tmp folder
      -> the chunk holding the fact carries "<title> > <section>" as its
         heading path (stored, embedded and indexed with it)
      -> the offline pipeline answers "Which RFC does python-tile-kit
         implement?" from it: the question's subject is named by the
         chunk's heading, as a reader sees it above the paragraph

Before underlined titles were read as headings, the title was a line of
the first chunk's text only, so no passage holding the fact mentioned the
subject, and assess refused with the right chunk at rank 1.
"""

from __future__ import annotations

import pytest
from store_docs import ingested_kb

import selfrag_nb as sr

INTRO = (
    "This project grew out of a weekend experiment in drawing street maps for a cycling club. "
    "Over the years it gained contributors from several countries, a documentation site, a "
    "gallery of examples and a small plugin system that lets people add their own styles. "
    "The maintainers meet once a month to review proposals and plan the next release, and "
    "every release is announced on the mailing list together with a short summary of what "
    "changed and who helped. Bug reports are welcome on the issue tracker; please include "
    "the version you use and a minimal example that shows the problem. "
)

README_MD = f"""python-tile-kit
===============

[![PyPI](https://img.shields.io/pypi/v/tilekit.svg)](https://pypi.org/project/tilekit/)

{INTRO}

Rendering tiles
---------------

Library to render map tiles according to
[RFC 9999](https://example.org/rfc9999).

See the tutorial for examples.
"""

README_RST = f"""=========
 geo-dex
=========

.. image:: https://img.shields.io/pypi/v/geodex.svg

{INTRO}

Storage
=======

The index is stored in a single SQLite file next to the data it describes.
"""


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> sr.KnowledgeBase:
    return ingested_kb(
        tmp_path_factory.mktemp("underlined"), {"tilekit.md": README_MD, "geodex.rst": README_RST}
    )


def test_underlined_titles_are_heading_paths(kb: sr.KnowledgeBase) -> None:
    by_text = {h.text.split("\n", 1)[0][:30]: h for h in kb.chunks()}
    fact = next(h for t, h in by_text.items() if t.startswith("Library to render"))
    assert (fact.title, fact.heading) == ("python-tile-kit", "python-tile-kit > Rendering tiles")
    store = next(h for t, h in by_text.items() if t.startswith("The index is stored"))
    assert (store.title, store.heading) == ("geo-dex", "geo-dex > Storage")
    assert not any("=====" in h.text or "-----" in h.text for h in kb.chunks())


@pytest.mark.parametrize(
    ("question", "must"),
    [
        ("Which RFC does python-tile-kit implement?", "RFC 9999"),
        ("Where does geo-dex store its index?", "single SQLite file"),
    ],
)
def test_a_subject_named_in_the_title_is_answered(kb: sr.KnowledgeBase, question: str, must: str) -> None:
    trace = sr.SelfRAG(kb).ask(question)
    assert trace.outcome in ("answered", "disclaimed"), (trace.outcome, trace.answer)
    assert must in (trace.answer or "")
