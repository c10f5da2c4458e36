"""JSON Lines files a person wrote or edited: one JSON object a line, every
error naming ``file:line``.

    read_objects(path, error)
      path.read_bytes()            cannot read         -> error("path: cannot read: ...")
      split on "\\n", per line:
        decode (line 1 may start with a BOM)  not UTF-8 -> error("path:N: not UTF-8 text ...")
        blank                                           -> skipped
        json.loads                            not JSON  -> error("path:N: not valid JSON: ...")
        not a dict                                      -> error("path:N: expected a JSON object, got ...")
      -> (lineno, "path:N", obj) for each object, in file order

Used by the question sets (eval/questions.py) and the labels file
(labels.py); each passes its own error class so callers keep catching what
they caught. A generator: each line is checked only when the caller reaches
it, so the first bad line, read or parsed, is the one reported.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from selfrag_nb.errors import InputError

__all__ = ["read_objects"]


def read_objects(path: Path, error: type[InputError]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """Each JSON object of the JSON Lines file ``path`` as ``(lineno, where,
    obj)``, ``where`` being ``"path:lineno"`` for the caller's own messages;
    a file or line that cannot be read raises ``error`` naming it."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc}") from None
    for lineno, line_bytes in enumerate(raw.split(b"\n"), start=1):
        where = f"{path}:{lineno}"
        try:
            line = line_bytes.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise error(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise error(f"{where}: not valid JSON: {msg}") from None
        if not isinstance(obj, dict):
            raise error(f"{where}: expected a JSON object, got {type(obj).__name__}")
        yield lineno, where, obj
