"""Named SQL statements, loaded once from ``core/sql/*.sql``.

Each file holds blocks introduced by ``-- name: <entity>_<verb>``; parameters use psycopg's
``%(name)s`` style (procrastinate's ``queries.sql`` layout). ``Q["job_claim_due"]`` returns the
statement text. One file per entity, opened by a comment paragraph (docs/architecture.md,
"Layers"); a block whose table varies is a template (``{table}``) that its module fills with
``psycopg.sql.Identifier``.
"""

from __future__ import annotations

import re
from pathlib import Path

SQL_DIR = Path(__file__).parent / "sql"
_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


def load_queries(directory: Path = SQL_DIR) -> dict[str, str]:
    """Parse every ``*.sql`` file of ``directory`` into ``{name: statement}``.

    Raises:
        ValueError: when two blocks share a name or a block is empty.
    """
    queries: dict[str, str] = {}
    for path in sorted(directory.glob("*.sql")):
        text = path.read_text()
        parts = _NAME.split(text)
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            statement = "\n".join(
                line for line in body.strip().splitlines() if not line.lstrip().startswith("--")
            ).strip()
            if name in queries:
                raise ValueError(f"duplicate query name {name!r} in {path.name}")
            if not statement:
                raise ValueError(f"empty query {name!r} in {path.name}")
            queries[name] = statement
    return queries


Q: dict[str, str] = load_queries()
