"""Ingest's boundary: what a folder may make the knowledge base store.

symbolic links   leave the folder -> skipped with the target named; stay inside -> read
"""

from __future__ import annotations

import os
from pathlib import Path

from selfrag_nb.store.kb import KnowledgeBase


def _kb(tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase.open(tmp_path / "kb", embedder="hashing")


def test_links_leaving_the_folder_are_skipped_and_links_inside_are_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_text("TOPSECRET payroll figures", encoding="utf-8")
    (outside / "deep" / "key.md").write_text("# Key\n\nTOPSECRET signing key\n", encoding="utf-8")
    docs = tmp_path / "docs"
    (docs / "sub" / "inner").mkdir(parents=True)
    (docs / "good.md").write_text("# Refunds\n\nRefunds within 30 days.\n", encoding="utf-8")
    (docs / "abs.txt").symlink_to(outside / "secret.txt")  # absolute
    (docs / "sub" / "inner" / "rel.txt").symlink_to("../../../outside/secret.txt")  # relative ../ chain
    (docs / "sub" / "hop.md").symlink_to("../hop2.md")  # a chain: inside, then out
    (docs / "hop2.md").symlink_to(outside / "deep" / "key.md")
    (docs / "etc.txt").symlink_to("/etc/hostname")
    (docs / "outdir").symlink_to(outside, target_is_directory=True)
    (docs / "twin.md").symlink_to("good.md")  # stays inside: read
    (docs / "sub" / "up.md").symlink_to("../good.md")  # stays inside through ../
    kb = _kb(tmp_path)
    report = kb.ingest(docs)
    skipped = dict(report.skipped)
    leaving = {
        "abs.txt": outside / "secret.txt",
        "sub/inner/rel.txt": outside / "secret.txt",
        "sub/hop.md": outside / "deep" / "key.md",
        "hop2.md": outside / "deep" / "key.md",
        "etc.txt": Path("/etc/hostname").resolve(),
        "outdir": outside,
    }
    for source, target in leaving.items():
        assert skipped.get(source) == f"symbolic link leaves the ingested folder (-> {target.resolve()})", (
            source,
            report.skipped,
        )
    assert sorted(report.added) == ["good.md", "sub/up.md", "twin.md"]
    assert not [h for h in kb.chunks() if "TOPSECRET" in h.text]
    assert {h.source for h in kb.search("refunds within 30 days", k=5)} == {"good.md", "sub/up.md", "twin.md"}


def test_root_given_through_a_link_still_bounds_its_links(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("TOPSECRET", encoding="utf-8")
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.md").write_text("# A\n\nalpha text\n", encoding="utf-8")
    (real / "b.txt").symlink_to(tmp_path / "secret.txt")
    (real / "c.txt").symlink_to(real / "a.md")  # absolute, through the real path
    alias = tmp_path / "alias"
    alias.symlink_to(real, target_is_directory=True)
    report = _kb(tmp_path).ingest(alias)
    assert sorted(report.added) == ["a.md", "c.txt"]
    assert dict(report.skipped)["b.txt"].startswith("symbolic link leaves the ingested folder")
    assert os.path.islink(real / "b.txt")
