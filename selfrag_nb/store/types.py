"""Plain data shared by the knowledge base, the pipeline and the views.

    User  -- who is asking (id, roles, tenant); builds the ACL prefilter
    Hit   -- one chunk returned by a search (per-mode ranks in ``ranks``)
    ChunkRef -- how a record names a chunk without the search results:
                source, title, heading, rank, trust metadata (status, dates)
    Hits  -- an ordered list of Hit plus how it was searched (query, mode, filter)
    IngestReport -- what an ingest added, updated, left alone, removed or skipped
    IndexPolicy  -- when the vector index is built / refreshed / retrained, search knobs
    OptimizeReport -- what kb.optimize() did

No LanceDB, pandas or pyarrow import here: these types travel inside traces.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from selfrag_nb._displayable import Displayable
from selfrag_nb.errors import InputError, input_error
from selfrag_nb.text import validate_unicode

if TYPE_CHECKING:  # pandas is heavy; imported inside to_pandas()
    import pandas as pd

__all__ = [
    "ANONYMOUS",
    "PUBLIC_ROLE",
    "TRUST_KEYS",
    "VECTOR_INDEX_TYPES",
    "AclChange",
    "ChunkRef",
    "EffectiveACL",
    "Hit",
    "Hits",
    "IndexPolicy",
    "IngestReport",
    "OptimizeReport",
    "User",
]

#: Role stored on chunks that every user may read (the default ACL).
PUBLIC_ROLE = "public"
#: The id of ``User()``: someone who did not say who they are.
ANONYMOUS = "anonymous"
#: Document metadata a reader needs to judge a chunk (front matter keys):
#: a superseded policy ranked first must say so wherever it is named.
TRUST_KEYS = ("status", "effective", "version", "supersedes", "superseded_by")


def _no_control(what: str, value: str) -> str:
    # The ACL prefilter refuses such names at search time (store/acl.py);
    # refusing them here fails before any model call is made for the question.
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise InputError(f"{what} must not contain control characters, got {value!r}")
    return validate_unicode(what, value)


class User(BaseModel):
    """The person asking. Chunks are visible when their ACL allows one of the
    user's roles (every user has the ``public`` role), names the user's id, and
    the tenant matches (chunks with no tenant are visible to all tenants)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = ANONYMOUS
    roles: tuple[str, ...] = ()
    tenant: str | None = None

    def __init__(self, id: str = ANONYMOUS, roles: Any = (), tenant: str | None = None, **kw: Any) -> None:  # noqa: A002 - `id` is the public field name of the API
        if isinstance(roles, str | bytes):
            # tuple("finance") would silently become the roles f, i, n, a, ...
            raise InputError(
                f"User roles must be a list of role names, got the string {roles!r}: use roles=[{roles!r}]"
            )
        try:
            super().__init__(id=id, roles=tuple(roles) if roles is not None else (), tenant=tenant, **kw)
        except ValidationError as exc:
            raise input_error(exc, what="User") from None

    @field_validator("id")
    @classmethod
    def _id_not_blank(cls, v: str) -> str:
        if not v or not v.strip():
            raise InputError("User id must not be blank")
        return _no_control("User id", v)

    @field_validator("roles")
    @classmethod
    def _roles_are_names(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for r in v:
            if not isinstance(r, str) or not r.strip():
                raise InputError(f"User role must be a non-blank string, got {r!r}")
            _no_control("User role", r)
        return v

    @field_validator("tenant")
    @classmethod
    def _tenant_is_a_name(cls, v: str | None) -> str | None:
        if v and not v.strip():
            raise InputError(f"User tenant must be None or a non-blank string, got {v!r}")
        return v if v is None else _no_control("User tenant", v)

    @property
    def all_roles(self) -> tuple[str, ...]:
        """The user's roles plus the public role."""
        return tuple(dict.fromkeys((PUBLIC_ROLE, *self.roles)))


class Hit(BaseModel):
    """One chunk found by a search. ``text`` is the original chunk text (the
    evidence shown to users and models); the context header used for search
    is kept separately in ``context``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    doc_id: str
    chunk_id: str
    title: str = ""
    heading: str = ""
    text: str
    context: str = ""
    score: float = 0.0
    scores: dict[str, float] = Field(default_factory=dict)
    rank: int = 0
    #: Position in each search leg ("vector", "fts"), 1-based; a hybrid
    #: search fuses them, so these say why a chunk sits where it does.
    ranks: dict[str, int] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)


class ChunkRef(BaseModel):
    """A chunk as a record names it: enough to show which document it is
    from (and whether that document is still current) without the search
    results. Records that mention chunks carry one per chunk id."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chunk_id: str
    source: str = ""
    title: str = ""
    heading: str = ""
    #: Rank in the retrieval (0 when unknown).
    rank: int = 0
    #: The TRUST_KEYS the document's metadata sets, as text.
    doc: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def from_hit(cls, hit: Hit) -> ChunkRef:
        doc = {k: str(hit.metadata[k]) for k in TRUST_KEYS if hit.metadata.get(k) not in (None, "")}
        return cls(
            chunk_id=hit.chunk_id,
            source=hit.source,
            title=hit.title,
            heading=hit.heading,
            rank=hit.rank,
            doc=doc,
        )


class Hits(BaseModel, Displayable):
    """Search results in rank order, with how they were obtained. Notebook
    faces (text line, static HTML, widget) come from ``Displayable``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hits: list[Hit] = Field(default_factory=list)
    query: str = ""
    mode: str = "hybrid"
    k: int = 10
    access_filter: str = ""
    user: User | None = None

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Iterator[Hit]:  # type: ignore[override]  # iterate hits, not pydantic fields
        return iter(self.hits)

    @overload
    def __getitem__(self, i: int) -> Hit: ...
    @overload
    def __getitem__(self, i: slice) -> list[Hit]: ...
    def __getitem__(self, i: int | slice) -> Hit | list[Hit]:
        return self.hits[i]

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for h in self.hits:
            row: dict[str, Any] = {
                "rank": h.rank,
                "source": h.source,
                "title": h.title,
                "heading": h.heading,
                "doc_id": h.doc_id,
                "chunk_id": h.chunk_id,
                "score": h.score,
                "text": h.text,
            }
            row.update({f"score_{k}": v for k, v in h.scores.items()})
            row.update({f"rank_{k}": v for k, v in h.ranks.items()})
            rows.append(row)
        return pd.DataFrame(rows)


class EffectiveACL(NamedTuple):
    """The access stored on every chunk of one document (store/acl.py
    ``effective_acl`` decides it from what the document declares)."""

    roles: tuple[str, ...]
    users: tuple[str, ...]
    tenant: str

    def describe(self) -> str:
        """One line a person reads: "public", "roles finance; users bob", "nobody"."""
        who = []
        if PUBLIC_ROLE in self.roles:
            who.append("public")
        named = [r for r in self.roles if r != PUBLIC_ROLE]
        if named:
            who.append("roles " + ", ".join(named))
        if self.users:
            who.append("users " + ", ".join(self.users))
        text = "; ".join(who) or "nobody"
        return f"{text} (tenant {self.tenant})" if self.tenant else text


class AclChange(BaseModel):
    """A stored document whose access an ingest changed: who could read it
    before and who can after. ``widened``: someone can read it now who could
    not before (an ingest refuses that unless told ``allow_widen=True``);
    ``narrowed``: someone who could read it no longer can. Moving a document
    to another tenant or swapping one role for another does both."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    before: EffectiveACL
    after: EffectiveACL
    widened: bool
    narrowed: bool

    @property
    def kind(self) -> Literal["widened", "narrowed", "changed"]:
        """One word: "widened" whenever anyone gains access (even if others lose it)."""
        return "widened" if self.widened else "narrowed" if self.narrowed else "changed"

    def __str__(self) -> str:
        return f"{self.source}: {self.before.describe()} -> {self.after.describe()} ({self.kind})"


class IngestReport(BaseModel, Displayable):
    """What one ingest did. Paths are as given (relative to the ingested root).

    ``acl_changes`` lists every stored document whose access changed, before
    and after; the text face names them and the HTML face shows a table."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    added: list[str] = Field(default_factory=list)
    updated: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    skipped: list[tuple[str, str]] = Field(default_factory=list)
    acl_changes: list[AclChange] = Field(default_factory=list)
    #: (source, message): stored, but probably not as meant (a role "Finance"
    #: next to "finance")
    warnings: list[tuple[str, str]] = Field(default_factory=list)
    chunks_added: int = 0
    chunks_removed: int = 0
    version: int | None = None
    seconds: float = 0.0

    def __str__(self) -> str:
        access = ""
        if self.acl_changes:
            widened = sum(c.widened for c in self.acl_changes)
            access = f", access changed={len(self.acl_changes)}" + (
                f" ({widened} widened)" if widened else ""
            )
        warned = f", warnings={len(self.warnings)}" if self.warnings else ""
        return (
            f"IngestReport(added={len(self.added)}, updated={len(self.updated)}, "
            f"unchanged={len(self.unchanged)}, removed={len(self.removed)}, "
            f"skipped={len(self.skipped)}{access}{warned}, chunks +{self.chunks_added}/-{self.chunks_removed}, "
            f"version={self.version})"
        )


#: The vector index types the knowledge base can build (docs/scaling.md says
#: which one is the default and why).
VECTOR_INDEX_TYPES = ("IVF_PQ", "IVF_HNSW_SQ")


class IndexPolicy(BaseModel):
    """When the knowledge base builds and refreshes its vector index, and the
    search knobs it uses by default (docs/scaling.md has the measurements).

    - ``min_rows``: past this many chunks an ingest (or ``kb.optimize()``)
      trains a vector index; below it every vector search is exact (at
      least 1,000: IVF-PQ needs a few hundred rows to train on).
    - ``index_type``: ``"IVF_PQ"`` or ``"IVF_HNSW_SQ"``.
    - ``max_unindexed_share``: once more than this share of the rows was added
      after the index was last updated, an ingest folds them in (LanceDB still
      searches unindexed rows, exactly, so they are found meanwhile).
    - ``retrain_growth``: once the table holds this many times the rows the
      index was trained on, it is trained again (new partitions).
    - ``nprobes``: IVF partitions searched; None (the default) searches every
      partition, so the index is a scan of compressed (PQ) codes plus exact
      re-ranking: at 1M chunks of the benchmark's vectors a cap of 20-300
      partitions lost most of the neighbours (docs/scaling.md). Set it when
      your embedder's vectors cluster and speed matters more; a capped search
      that finds fewer than k allowed rows falls back to the exact search.
      ``refine_factor``: that many
      times k candidates are re-ranked by their exact vectors (None: no
      re-ranking); ``ef``: HNSW candidates (IVF_HNSW_SQ only).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    min_rows: int = Field(default=50_000, ge=1000)
    index_type: Literal["IVF_PQ", "IVF_HNSW_SQ"] = "IVF_PQ"
    max_unindexed_share: float = Field(default=0.1, gt=0.0, le=1.0)
    retrain_growth: float = Field(default=2.0, gt=1.0)
    nprobes: int | None = Field(default=None, ge=1, le=10_000)
    refine_factor: int | None = Field(default=30, ge=1, le=1000)
    ef: int = Field(default=64, ge=1, le=100_000)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise input_error(exc, what="IndexPolicy") from None


class OptimizeReport(BaseModel):
    """What one ``kb.optimize()`` did. ``actions`` is empty when there was
    nothing to do (a second call right after the first)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    actions: list[str] = Field(default_factory=list)
    rows: int = 0
    vector_index: str | None = None
    #: index name -> rows it does not cover yet, after the call
    unindexed_rows: dict[str, int] = Field(default_factory=dict)
    version_before: int = 0
    version_after: int = 0
    seconds: float = 0.0

    def __str__(self) -> str:
        did = "; ".join(self.actions) or "nothing to do"
        return f"OptimizeReport({did}; rows={self.rows}, vector_index={self.vector_index}, version {self.version_before} -> {self.version_after})"
