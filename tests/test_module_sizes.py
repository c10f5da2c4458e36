"""House rule: no module under selfrag_nb/ is over 700 lines.

    selfrag_nb/**/*.py ──count lines──> over MAX_LINES and not in SPLITTING? -> fail, naming each

Long modules are where layers start pointing both ways and helpers get
defined twice; a split while the module is still readable is cheap.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 700

# Modules other branches are splitting right now (some, like llm/offline.py,
# are listed because their whole family becomes a package). Temporary: the
# lead removes each entry once its split is merged; never add one to get a
# long module past this test.
SPLITTING = frozenset(
    {
        "selfrag_nb/llm/offline.py",
        "selfrag_nb/llm/offline_answer.py",
        "selfrag_nb/llm/offline_rules.py",
        "selfrag_nb/store/kb.py",
        "selfrag_nb/promptlab.py",
        "selfrag_nb/display/html.py",
    }
)


def _line_counts() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted((ROOT / "selfrag_nb").rglob("*.py"))
    }


def test_no_module_is_over_the_limit() -> None:
    counts = _line_counts()
    assert counts, "no modules found: is ROOT right?"
    too_long = {name: n for name, n in counts.items() if n > MAX_LINES and name not in SPLITTING}
    assert not too_long, f"modules over {MAX_LINES} lines (split them): {too_long}"
