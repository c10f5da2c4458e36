"""Prices of models, per token, in US dollars.

    cost_of(model, tokens_in, tokens_out)
        -> our table (register_price)          user-registered, consulted first
        -> LiteLLM's bundled price map         (litellm_model asks it)
        -> None                                unknown: never 0 for "we do not know"

``register_price`` is for models LiteLLM does not price (a self-hosted vLLM,
a fine-tune, a negotiated rate). The table is process-wide. When LiteLLM is
already imported the price is also registered with ``litellm.register_model``
so LiteLLM's own ``completion_cost`` agrees; when it is not, nothing is
imported here (``import litellm`` takes seconds) and ``sync_litellm`` does it
on LiteLLM's first use.
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
from dataclasses import dataclass

from selfrag_nb.errors import InputError, InputTypeError

__all__ = ["Price", "cost_of", "get_price", "register_price", "sync_litellm", "unregister_price"]


@dataclass(frozen=True)
class Price:
    """US dollars per input (prompt) token and per output (completion) token."""

    input_per_token: float
    output_per_token: float


_PRICES: dict[str, Price] = {}
_LOCK = threading.Lock()


def _check(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputTypeError(f"{name} must be a number of US dollars per token, got {type(value).__name__}")
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{name} must be a finite number >= 0 (US dollars per token), got {value!r}")
    return float(value)


def register_price(model: str, *, input_per_token: float, output_per_token: float) -> Price:
    """Price ``model`` (the model string as given to LiteLLM, e.g.
    ``"openai/my-finetune"``) at the given US dollars per token."""
    if not isinstance(model, str) or not model.strip():
        raise InputError("model must be a non-empty model string, e.g. 'openai/my-model'")
    price = Price(_check("input_per_token", input_per_token), _check("output_per_token", output_per_token))
    with _LOCK:
        _PRICES[model] = price
    if "litellm" in sys.modules:
        _register_with_litellm(model, price)
    return price


def unregister_price(model: str) -> None:
    """Forget a registered price (LiteLLM keeps any copy it was given)."""
    with _LOCK:
        _PRICES.pop(model, None)


def get_price(model: str) -> Price | None:
    """The registered price of ``model``, or None."""
    with _LOCK:
        return _PRICES.get(model)


def cost_of(model: str, tokens_in: int | None, tokens_out: int | None) -> float | None:
    """Cost of one call from the registered table; None when ``model`` is not
    registered or a token count is unknown."""
    price = get_price(model)
    if price is None or tokens_in is None or tokens_out is None:
        return None
    return tokens_in * price.input_per_token + tokens_out * price.output_per_token


def sync_litellm() -> None:
    """Give LiteLLM every registered price (called once LiteLLM is imported)."""
    with _LOCK:
        items = list(_PRICES.items())
    for model, price in items:
        _register_with_litellm(model, price)


def _register_with_litellm(model: str, price: Price) -> None:
    import litellm

    provider, _, _name = model.partition("/")
    entry: dict[str, object] = {
        "input_cost_per_token": price.input_per_token,
        "output_cost_per_token": price.output_per_token,
        "mode": "chat",
    }
    if _name:
        entry["litellm_provider"] = provider
    # Our table stays the source of truth (consulted first): a LiteLLM
    # registration failure only means LiteLLM's own cost helpers won't know.
    with contextlib.suppress(Exception):
        litellm.register_model({model: entry})
