"""Text that knows where each character came from: the map ``clean_text``
keeps back to the original chunk (selfrag_nb.cleantext).

    Mapped.of(original)            every character stands for itself
    Mapped.lit(s, a, b)            inserted text standing for original[a:b]
    .cut(i, j) / .strip() / .sub(pattern, repl)   pieces that keep the map
    join(parts) / join_lines(lines)               pieces back into one text
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence


class Mapped:
    """Text that knows where each character came from: ``s[i]`` stands for
    ``original[a[i]:b[i]]``; ``end`` is the original position after it (an
    empty text still has a place)."""

    __slots__ = ("a", "b", "end", "s")

    def __init__(self, s: str, a: list[int], b: list[int], end: int) -> None:
        self.s, self.a, self.b, self.end = s, a, b, end

    @classmethod
    def of(cls, s: str) -> Mapped:
        return cls(s, list(range(len(s))), list(range(1, len(s) + 1)), len(s))

    @classmethod
    def lit(cls, s: str, a: int, b: int) -> Mapped:
        """Inserted text standing for ``original[a:b]`` (what it replaces)."""
        return cls(s, [a] * len(s), [b] * len(s), b)

    def at(self, i: int) -> int:
        return self.a[i] if i < len(self.s) else self.end

    def cut(self, i: int, j: int | None = None) -> Mapped:
        j = len(self.s) if j is None else j
        end = self.b[j - 1] if j > i else self.at(i)
        return Mapped(self.s[i:j], self.a[i:j], self.b[i:j], end)

    def strip(self) -> Mapped:
        n = len(self.s)
        i = n - len(self.s.lstrip())
        return self.cut(i, max(i, len(self.s.rstrip())))

    def sub(
        self, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], Sequence[int | str | Mapped]]
    ) -> Mapped:
        """``re.sub`` that keeps the map: ``repl`` returns the pieces of the
        replacement, each a group number (those characters, still mapped), a
        string (new text, standing for the whole match) or a mapped text."""
        parts: list[Mapped] = []
        pos = 0
        for m in pattern.finditer(self.s):
            parts.append(self.cut(pos, m.start()))
            whole = self.cut(m.start(), m.end())
            for piece in repl(m):
                if isinstance(piece, int):
                    if m.start(piece) >= 0:
                        parts.append(self.cut(m.start(piece), m.end(piece)))
                elif isinstance(piece, str):
                    parts.append(Mapped.lit(piece, whole.at(0), whole.end))
                else:
                    parts.append(piece)
            pos = m.end()
        if not parts:
            return self
        parts.append(self.cut(pos))
        return join(parts)


def join(parts: Sequence[Mapped]) -> Mapped:
    a: list[int] = []
    b: list[int] = []
    for p in parts:
        a += p.a
        b += p.b
    return Mapped("".join(p.s for p in parts), a, b, parts[-1].end if parts else 0)


def join_lines(ls: Sequence[Mapped]) -> Mapped:
    """Lines joined by the newlines between them in the original."""
    out: list[Mapped] = []
    for i, line in enumerate(ls):
        if i:
            out.append(Mapped.lit("\n", ls[i - 1].end, ls[i - 1].end + 1))
        out.append(line)
    return join(out) if out else Mapped("", [], [], 0)
