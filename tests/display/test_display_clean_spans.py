"""Evidence spans quote the clean text models read (selfrag_nb.cleantext);
views find them in the original chunk (display/markup.py, locate_span)."""

from __future__ import annotations

import pytest

from selfrag_nb.cleantext import clean
from selfrag_nb.display.markup import locate_span

CHUNK = (
    "**Fetchy** is a small HTTP client. It includes **an\n"
    "integrated command line client**, see the [docs](https://example.org/docs).\n"
)
# A link whose text only points ("the docs") keeps its address in the clean text.
QUOTE = "It includes an integrated command line client, see the docs (https://example.org/docs)."
ORIGINAL = "It includes **an\nintegrated command line client**, see the [docs](https://example.org/docs)."


def test_recorded_offsets_of_a_clean_quote_are_kept() -> None:
    start, end = clean(CHUNK).locate(QUOTE)
    assert CHUNK[start:end] == ORIGINAL
    assert locate_span(CHUNK, QUOTE, start, end) == (start, end)


@pytest.mark.parametrize("offsets", [(-1, -1), (0, 5), (3, 10_000)], ids=["none", "wrong", "out-of-range"])
def test_a_clean_quote_without_good_offsets_is_found_through_the_map(offsets: tuple[int, int]) -> None:
    a, b = locate_span(CHUNK, QUOTE, *offsets) or (-1, -1)
    assert CHUNK[a:b] == ORIGINAL


def test_original_quotes_still_work_and_absent_ones_are_none() -> None:
    quote = "is a small HTTP client."
    i = CHUNK.index(quote)
    assert locate_span(CHUNK, quote, i, i + len(quote)) == (i, i + len(quote))
    assert locate_span(CHUNK, quote, -1, -1) == (i, i + len(quote))
    assert locate_span(CHUNK, "not in this chunk", -1, -1) is None
