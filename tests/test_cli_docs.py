"""``selfrag-nb docs`` reaches every guide the README links, names a wrong
one with the list, and prints text, never markup."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from selfrag_nb.cli import main
from selfrag_nb.docs_cli import guides

ROOT = Path(__file__).resolve().parents[1]


def test_every_readme_link_to_docs_is_a_guide() -> None:
    linked = set(re.findall(r"\]\(docs/([\w-]+)\.md", (ROOT / "README.md").read_text(encoding="utf-8")))
    assert linked
    assert linked <= set(guides())


def test_listing_names_and_titles(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs"]) == 0
    out = capsys.readouterr().out
    assert "access-control" in out
    assert "prompt_lab" in out
    assert "selfrag-nb docs NAME" in out


def test_one_guide_prints_its_text_and_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", "access-control"]) == 0
    first = (ROOT / "docs" / "access-control.md").read_text(encoding="utf-8").splitlines()[0]
    assert capsys.readouterr().out.splitlines()[0] == first
    assert main(["docs", "docs/access-control.md", "--path"]) == 0
    assert capsys.readouterr().out.strip().endswith("access-control.md")


def test_an_unknown_guide_is_named_with_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", "no-such-guide"]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert "no guide named 'no-such-guide'" in out
    assert "access-control" in out
