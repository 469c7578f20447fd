"""Every repository path the docs name in backquotes exists (docs/*.md and README.md).

A backquoted ``core/…``, ``api/…``, ``tests/…``, ``migrations/…`` or ``bench/…`` path, with any
``:function`` suffix stripped, must be a file or folder of the repository (a glob such as
``core/sql/*.sql`` must match one), so that moving a module without updating the docs fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# The repository root, wherever under tests/ this file lives.
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
# A path inside single or double backquotes: `core/runs/worker.py:Worker._gate`, `core/jobs/`.
PATH = re.compile(r"`+((?:core|api|tests|migrations|bench)/[^`\s]*)`+")


def named_paths() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for match in PATH.finditer(doc.read_text(encoding="utf-8")):
            path = match.group(1).split(":", 1)[0]
            found.append((doc.relative_to(ROOT).as_posix(), path))
    return sorted(set(found))


def test_docs_name_paths() -> None:
    assert len(named_paths()) > 20


@pytest.mark.parametrize(("doc", "path"), named_paths())
def test_named_path_exists(doc: str, path: str) -> None:
    exists = any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()
    assert exists, f"{doc} names `{path}`, which does not exist"
