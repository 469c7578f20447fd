"""The named SQL blocks: unique names (checked at load) and every block used by the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.queries import SQL_DIR, Q, load_queries

ROOT = Path(__file__).resolve().parents[2]


def test_every_query_is_used() -> None:
    code = "\n".join(p.read_text() for d in ("core", "api") for p in (ROOT / d).rglob("*.py"))
    used = set(re.findall(r'Q\["(\w+)"\]', code))
    assert set(Q) - used == set(), "unused SQL blocks"
    assert used - set(Q) == set(), "code names SQL blocks that do not exist"


def test_duplicate_names_are_rejected(tmp_path: Path) -> None:
    (tmp_path / "a.sql").write_text("-- name: thing_get\nSELECT 1;\n")
    (tmp_path / "b.sql").write_text("-- name: thing_get\nSELECT 2;\n")
    with pytest.raises(ValueError, match="duplicate"):
        load_queries(tmp_path)


def test_every_file_starts_with_a_header() -> None:
    """Each file serves one entity and says which in a comment paragraph before its first block
    (docs/architecture.md, "Layers")."""
    for path in sorted(SQL_DIR.glob("*.sql")):
        head, _, _ = path.read_text().partition("-- name:")
        lines = head.rstrip("\n").splitlines()
        assert lines, f"{path.name}: no header comment before the first block"
        assert all(line.startswith("-- ") for line in lines), (
            f"{path.name}: the header must be one comment paragraph")
        assert head.endswith("\n\n"), f"{path.name}: a blank line must follow the header"

