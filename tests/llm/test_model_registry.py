"""Models resolve through a registry, as embedders and rerankers do: a
registered name builds its model from (argument, options); any other string
is a LiteLLM model; a factory that returns no Model is refused by name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import selfrag_nb as sr
from selfrag_nb.llm import registry
from selfrag_nb.llm.base import Completion, ModelRequest
from selfrag_nb.llm.registry import ModelOptions, available_models, register_model, resolve_model


class Echo:
    """A model an outside package could ship: answers every role with the offline model's answer."""

    offline = False

    def __init__(self, arg: str, options: ModelOptions) -> None:
        self.name = f"echo:{arg}"
        self.options = options
        self._inner = sr.OfflineModel()

    def complete(self, request: ModelRequest) -> Completion:
        return self._inner.complete(request).model_copy(update={"model": self.name})

    async def acomplete(self, request: ModelRequest) -> Completion:
        return self.complete(request)


@pytest.fixture
def echo_registered() -> Iterator[None]:
    register_model("echo", Echo)
    try:
        yield
    finally:
        registry._REGISTRY.pop("echo", None)


def test_a_registered_name_reaches_its_factory_with_argument_and_options(
    echo_registered: None, tmp_path: object
) -> None:
    model = resolve_model("echo:loud", ModelOptions(api_base="http://127.0.0.1:9", timeout=5.0))
    assert isinstance(model, Echo)
    assert model.name == "echo:loud"
    assert model.options.api_base == "http://127.0.0.1:9"
    assert model.options.timeout == 5.0
    assert "echo" in available_models()


def test_the_pipeline_resolves_names_through_the_registry(echo_registered: None) -> None:
    kb = sr.KnowledgeBase.sample()
    trace = sr.SelfRAG(kb, models={"generate": "echo:x"}).ask(
        "What is the refund window for a Pro subscription?"
    )
    generate = [c for c in trace.model_calls if c.role == "generate"]
    assert generate
    assert {c.model for c in generate} == {"echo:x"}


def test_built_in_names_register_like_outside_ones() -> None:
    assert {"offline", "litellm"} <= set(available_models())
    assert isinstance(resolve_model("offline", ModelOptions()), sr.OfflineModel)
    lite = resolve_model("litellm:openai/gpt-4o-mini", ModelOptions(api_key="sk-test-abcdefghijklmnop"))
    assert isinstance(lite, sr.LiteLLMModel)
    assert lite.name == "openai/gpt-4o-mini"
    # any other string is a LiteLLM model, as before
    assert resolve_model("ollama_chat/llama3:8b", ModelOptions()).name == "ollama_chat/llama3:8b"


@pytest.mark.parametrize("name", ["", " echo", "a:b", "openai/gpt", None])
def test_bad_names_are_refused(name: object) -> None:
    with pytest.raises(sr.InputError, match="model name"):
        register_model(name, Echo)  # type: ignore[arg-type]


def test_a_name_is_registered_once_unless_replaced(echo_registered: None) -> None:
    with pytest.raises(sr.InputError, match="already registered"):
        register_model("echo", Echo)
    register_model("echo", Echo, replace=True)


def test_a_factory_that_returns_no_model_is_named(echo_registered: None) -> None:
    register_model("broken", lambda arg, options: "not a model")  # type: ignore[arg-type,return-value]
    try:
        with pytest.raises(sr.InputTypeError, match="'broken' returned str, not a Model"):
            resolve_model("broken", ModelOptions())
    finally:
        registry._REGISTRY.pop("broken", None)


def test_offline_takes_no_argument_and_litellm_needs_one() -> None:
    with pytest.raises(sr.InputError, match="no argument"):
        resolve_model("offline:fast", ModelOptions())
    with pytest.raises(sr.InputError, match="after the colon"):
        resolve_model("litellm:", ModelOptions())
