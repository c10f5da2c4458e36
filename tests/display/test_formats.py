"""The one number format (selfrag_nb/formats.py): costs and tokens read the
same in the text summaries, the static HTML, EvalReport's text and the
explorer widget (static/explore.js fmtCost / fmtTok, compared value by value)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import pytest

from selfrag_nb.display import cards
from selfrag_nb.display.explore_widget import explore_module
from selfrag_nb.eval.report import format_metric
from selfrag_nb.formats import fmt_cost, fmt_tokens

NODE = shutil.which("node")

# (value, expected) from the documented rule: $0 for zero, <$0.0001 for tiny,
# four decimals below a cent, cents from a cent up; unknown is not free.
COSTS = [
    (None, "unknown"),
    (float("nan"), "unknown"),
    (0, "$0"),
    (0.0, "$0"),
    (0.00000042, "<$0.0001"),
    (0.00009, "<$0.0001"),
    (0.0001, "$0.0001"),
    (0.0012, "$0.0012"),
    (0.00734, "$0.0073"),
    (0.01, "$0.01"),
    (0.0149, "$0.01"),
    (0.37, "$0.37"),
    (1.5, "$1.50"),
    (1234.5, "$1,234.50"),
    (-0.0012, "-$0.0012"),
]
TOKENS = [(None, "unknown"), (0, "0"), (999, "999"), (1000, "1,000"), (1234567, "1,234,567")]


@pytest.mark.parametrize(("value", "expected"), COSTS)
def test_cost_format(value: float | None, expected: str) -> None:
    assert fmt_cost(value) == expected


@pytest.mark.parametrize(("value", "expected"), TOKENS)
def test_token_format(value: int | None, expected: str) -> None:
    assert fmt_tokens(value) == expected


def test_display_and_eval_use_the_same_formatter() -> None:
    assert cards.fmt_cost is fmt_cost
    # The evaluation text/HTML never prints six zeros again.
    assert format_metric("cost", 0.0) == "$0"
    assert format_metric("cost", 0.0000003) == "<$0.0001"
    assert format_metric("tokens_in", 123456) == "123,456"
    assert format_metric("latency_p95_ms", 12345.6) == "12,346"


def test_browser_formatters_follow_the_same_rule(tmp_path: object) -> None:
    if NODE is None:
        pytest.skip("node is not installed: the JS formatter test needs it")
    from pathlib import Path

    mod = Path(str(tmp_path)) / "explore.mjs"  # the explorer's module, as the widget loads it
    mod.write_text(explore_module() + "\nexport { fmtCost, fmtTok };\n", encoding="utf-8")
    costs = [v for v, _ in COSTS if v is not None and not math.isnan(v)]  # JSON has no NaN
    toks = [v for v, _ in TOKENS if v is not None]
    script = (
        f"const m = await import({json.dumps(mod.as_uri())});"
        f"console.log(JSON.stringify([{json.dumps(costs)}.map(m.fmtCost), {json.dumps(toks)}.map(m.fmtTok),"
        " m.fmtCost(null), m.fmtTok(null)]));"
    )
    out = subprocess.run(
        [NODE, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=True
    )
    js_costs, js_toks, js_none_cost, js_none_tok = json.loads(out.stdout)
    assert js_costs == [fmt_cost(v) for v in costs]
    assert js_toks == [fmt_tokens(v) for v in toks]
    assert (js_none_cost, js_none_tok) == ("unknown", "unknown")
