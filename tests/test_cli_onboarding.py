"""The command line a newcomer meets: ``--kb sample`` (and no ``--kb``) names
the bundled sample, and errors name flags and environment variables, not
Python arguments (selfrag_nb.cli.for_cli), while the Python API keeps its
own wording."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from selfrag_nb.cli import for_cli, main
from selfrag_nb.errors import PathNotFoundError
from selfrag_nb.eval.cli import main as eval_main
from selfrag_nb.store.kb import KnowledgeBase


def test_missing_kb_error_names_the_cli_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nope")
    assert main(["search", "refund", "--kb", missing]) == 2
    out = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert "no knowledge base at" in out
    assert "selfrag-nb ingest DIR --kb PATH" in out
    assert "create=True" not in out
    # The Python API keeps the Python phrasing for API callers.
    with pytest.raises(PathNotFoundError, match=r"create=True"):
        KnowledgeBase.open(missing, create=False)


def test_eval_cli_missing_kb_is_a_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = eval_main(
        ["eval", "--kb", str(tmp_path / "nope"), "--no-progress", "--out", str(tmp_path / "r.html")]
    )
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("selfrag-nb eval: no knowledge base at")
    assert "selfrag-nb ingest DIR --kb PATH" in err
    assert "create=True" not in err


@pytest.mark.parametrize(
    ("python", "cli"),
    [
        (
            "model 'openai/gpt-4o' (openai): no API key. Set the environment variable OPENAI_API_KEY "
            "or pass api_key=...",
            "model 'openai/gpt-4o' (openai): no API key. Set the environment variable OPENAI_API_KEY "
            "(the command line reads keys only from the environment)",
        ),
        (
            "Check the environment variable OPENAI_API_KEY or the api_key= you passed.",
            "Check the environment variable OPENAI_API_KEY.",
        ),
        (
            "kb/ was built with embedder 'minilm' (dim 384); it cannot be searched with 'hashing'. "
            "Open it with embedder='minilm' or use a new folder.",
            "kb/ was built with embedder 'minilm' (dim 384); it cannot be searched with 'hashing'. "
            "Open it with --embedder minilm or use a new folder.",
        ),
        (
            "or use embedder='hashing' / 'litellm:<model>'; `selfrag-nb doctor` checks the installation",
            "or use --embedder hashing / --embedder litellm:<model>; `selfrag-nb doctor` checks the installation",
        ),
        ("'openai/<name>' with api_base= for a server", "'openai/<name>' with --api-base for a server"),
        ("nothing Pythonic here", "nothing Pythonic here"),
    ],
)
def test_for_cli_phrases_python_arguments_as_flags(python: str, cli: str) -> None:
    assert for_cli(python) == cli


def test_kb_sample_is_ambiguous_when_a_sample_folder_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sample").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["search", "refund", "--kb", "sample"]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert "pass --kb ./sample for the folder" in out


@pytest.mark.skipif(not os.environ.get("SELFRAG_NB_CACHE"), reason="needs the shared sample cache")
def test_search_the_sample_by_name_and_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "refund window", "--kb", "sample", "--k", "2", "--mode", "fts"]) == 0
    named = capsys.readouterr().out
    assert "fts search" in named
    assert "2 hits" in named
    assert main(["search", "refund window", "--k", "2", "--mode", "fts"]) == 0
    assert capsys.readouterr().out == named
