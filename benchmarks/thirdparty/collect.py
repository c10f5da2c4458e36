"""Rebuild the third-party corpus from installed packages' METADATA files.

    python benchmarks/thirdparty/collect.py [--site-packages DIR] [--out benchmarks/thirdparty]

    for each DIR/*.dist-info/METADATA:
      licence  License-Expression, else License (short form) and the
               "License ::" classifiers; kept only when every licence named is
               permissive (MIT, MIT-0, BSD, 0BSD, Apache-2.0, PSF-2.0, ISC,
               MPL-2.0, Zlib, CC0-1.0) and none is copyleft or unknown
      body     the bytes after the header block (the long description, i.e.
               the README), written unmodified; skipped under 300 bytes
      format   Description-Content-Type: markdown -> .md, x-rst -> .rst,
               plain -> .txt; absent -> .rst when the text has reST
               markup (titles underlined, ".. " directives), else .txt
      where    docs/restricted/ for the names in RESTRICTED, else docs/public/
    -> docs/..., SOURCES.md (package, version, licence, file)

The project itself (selfrag-nb) is never collected.
"""

from __future__ import annotations

import argparse
import re
import sys
import sysconfig
from email.message import Message
from email.parser import BytesHeaderParser
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIN_BYTES = 300
SKIP = {"selfrag-nb"}

#: Packages whose description goes to docs/restricted/ (ingested with roles ["finance"]).
RESTRICTED = (
    "aiohappyeyeballs",
    "arrow",
    "blinker",
    "defusedxml",
    "fqdn",
    "isoduration",
    "jmespath",
    "lazy-object-proxy",
    "mpmath",
    "overrides",
    "pandocfilters",
    "pathable",
    "py-partiql-parser",
    "python-json-logger",
    "send2trash",
    "sortedcontainers",
    "tomlkit",
    "uri-template",
    "webcolors",
    "xmltodict",
)

PERMISSIVE_SPDX = {
    "MIT",
    "MIT-0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "0BSD",
    "Apache-2.0",
    "PSF-2.0",
    "ISC",
    "MPL-2.0",
    "Zlib",
    "CC0-1.0",
}
CLASSIFIERS = {
    "MIT License": "MIT",
    "MIT No Attribution License (MIT-0)": "MIT-0",
    "BSD License": "BSD",
    "Apache Software License": "Apache-2.0",
    "Python Software Foundation License": "PSF-2.0",
    "ISC License (ISCL)": "ISC",
    "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
}
#: Short free-text License fields seen in the wild -> SPDX-like names.
LICENSE_TEXT = {
    "mit": "MIT",
    "mit license": "MIT",
    "the mit license (mit)": "MIT",
    "bsd": "BSD",
    "bsd-3-clause": "BSD-3-Clause",
    "bsd 3-clause license": "BSD-3-Clause",
    "3-clause bsd license": "BSD-3-Clause",
    "bsd 2-clause license": "BSD-2-Clause",
    "apache 2.0": "Apache-2.0",
    "apache 2": "Apache-2.0",
    "apache-2.0": "Apache-2.0",
    "apache license 2.0": "Apache-2.0",
    "apache license, version 2.0": "Apache-2.0",
    "apache software license": "Apache-2.0",
    "psf-2.0": "PSF-2.0",
    "psfl": "PSF-2.0",
    "isc license": "ISC",
    "mpl-2.0": "MPL-2.0",
    "mit or apache-2.0": "MIT OR Apache-2.0",
    "mpl-2.0 and mit": "MPL-2.0 AND MIT",
}
NON_PERMISSIVE = re.compile(r"\b(L?A?GPL|GNU|Public Domain|Proprietary|CNRI)\b", re.I)


def licence_of(headers: Message) -> str | None:
    """The licence to record, or None when it is not clearly permissive."""
    expr = str(headers.get("License-Expression") or "").strip()
    text = str(headers.get("License") or "").strip()
    classifiers = [
        str(c).split("::")[-1].strip()
        for c in headers.get_all("Classifier") or []
        if str(c).startswith("License ::")
    ]
    named = [c for c in classifiers if c not in ("OSI Approved", "DFSG approved")]
    if any(NON_PERMISSIVE.search(x) for x in (expr, *named)):
        return None
    if any(c not in CLASSIFIERS for c in named):
        return None
    if expr:
        ids = [t for t in re.split(r"[\s()]+", expr) if t and t not in ("AND", "OR", "WITH")]
        return expr if ids and all(t in PERMISSIVE_SPDX for t in ids) else None
    first = text.splitlines()[0].strip().lower() if text else ""
    short = LICENSE_TEXT.get(first.rstrip("."))
    from_classifiers = " / ".join(dict.fromkeys(CLASSIFIERS[c] for c in named))
    if short:
        return short
    if first and first not in ("unknown", "dual license") and not from_classifiers:
        return None  # a licence text we cannot read and no classifier to say what it is
    return from_classifiers or None


def suffix_of(content_type: str, body: str) -> str:
    ct = content_type.split(";", maxsplit=1)[0].strip().lower()
    if ct == "text/markdown":
        return ".md"
    if ct == "text/x-rst":
        return ".rst"
    if ct == "text/plain":
        return ".txt"
    rst = re.search(r"^\.\. \S|^([=#\-^~*])\1{2,}\s*$", body, re.M)
    return ".rst" if rst else ".txt"


def collect(site: Path, out: Path) -> list[tuple[str, str, str, str]]:
    rows = []
    for meta in sorted(site.glob("*.dist-info/METADATA")):
        raw = meta.read_bytes()
        blank = re.search(rb"\r?\n\r?\n", raw)  # end of the header block (some files use CRLF)
        if blank is None:
            continue
        headers = BytesHeaderParser().parsebytes(raw[: blank.start()] + b"\n")
        name, version = str(headers["Name"]), str(headers["Version"])
        key = re.sub(r"[-_.]+", "-", name).lower()
        body = raw[blank.end() :]
        if key in SKIP or len(body) < MIN_BYTES:
            continue
        lic = licence_of(headers)
        if lic is None:
            print(f"skip {name} {version}: licence not clearly permissive", file=sys.stderr)
            continue
        text = body.decode("utf-8")
        folder = "restricted" if key in RESTRICTED else "public"
        rel = f"docs/{folder}/{key}{suffix_of(str(headers.get('Description-Content-Type') or ''), text)}"
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
        rows.append((name, version, lic, rel))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site-packages", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    ap.add_argument("--out", type=Path, default=HERE)
    a = ap.parse_args()
    rows = collect(a.site_packages, a.out)
    missing = sorted(set(RESTRICTED) - {Path(r[3]).stem for r in rows})
    if missing:
        sys.exit(f"restricted packages not collected: {missing}")
    lines = [
        "# Sources",
        "",
        "Each file is the long description (the body of the `METADATA` file, i.e. the",
        "README as published on PyPI) of one installed package, unmodified.",
        "",
        "| package | version | licence | file |",
        "|---|---|---|---|",
        *(f"| {n} | {v} | {lic} | `{f}` |" for n, v, lic, f in rows),
        "",
    ]
    (a.out / "SOURCES.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"{len(rows)} documents, {sum(r[3].startswith('docs/restricted') for r in rows)} restricted")


if __name__ == "__main__":
    main()
