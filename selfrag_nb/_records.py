"""The bases of every record: frozen pydantic data with notebook faces.

    _Frozen        pydantic, frozen, unknown fields refused
      -> _Displayable   + notebook faces (text, static HTML, widget: selfrag_nb.display)
                          and the one-line summary as repr / str
        -> _Saved       + one JSON file: to_json / from_json / save / load, exact round trip

trace.py's stage records and Trace, and attribution.py's records, derive from
these, so every record behaves the same in a notebook and on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from selfrag_nb._displayable import Displayable

if TYPE_CHECKING:
    from typing_extensions import Self

__all__: list[str] = []  # private bases: imported by name where records are defined


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Displayable(_Frozen, Displayable):
    """A record with notebook faces (text, static HTML, widget) drawn by ``selfrag_nb.display``."""

    def __repr__(self) -> str:
        # The one-line summary a notebook shows (as pandas and httpx do), not
        # pydantic's dump of every field (60,000 characters for one trace);
        # the data stays one call away: model_dump(), to_json().
        return self.to_text()

    def __str__(self) -> str:
        return self.to_text()


class _Saved(_Displayable):
    """A record kept as one JSON file: exact round trip through to_json / from_json."""

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Self:
        return cls.model_validate_json(text)

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_text(self.to_json(), encoding="utf-8")
        return p

    @classmethod
    def load(cls, path: str | Path) -> Self:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))
