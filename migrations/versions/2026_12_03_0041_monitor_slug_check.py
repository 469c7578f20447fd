"""``monitors_slug_check`` without a regular expression: the same rule, cheaper on the ping path.

PostgreSQL evaluates every CHECK constraint of a row on each UPDATE, whatever columns it sets,
so the ping statement (``monitor_ping_batch``, one UPDATE of each pinged monitor's row) ran the
slug's regular expression ``slug ~ '^[a-z0-9_-]{1,100}$'`` (migration 0009) once per monitor
per batch: 4-5 % of its backend's CPU under ``perf`` at 8 monitors per call. The constraint now
says the same without the regex engine: 1 to 100 characters, none outside ``a-z``, ``0-9``,
``_`` and ``-`` (``ltrim`` with that set leaves nothing). Measured with
``bench/ping_statement.py`` (docs/benchmarks.md, *A leaner statement*): about 0.03 ms less
PostgreSQL CPU per call at 8 pings over 8 monitors. The name stays, so errors naming it read
the same. Downgrade restores 0009's expression.
"""

from __future__ import annotations

from alembic import op

revision = "0041"
down_revision = "0040"
branch_labels = None
depends_on = None

_LEAN = ("char_length(slug) BETWEEN 1 AND 100 "
         "AND ltrim(slug, 'abcdefghijklmnopqrstuvwxyz0123456789_-') = ''")
_REGEX = "slug ~ '^[a-z0-9_-]{1,100}$'"


def _replace(expression: str) -> None:
    op.execute(f"ALTER TABLE monitors DROP CONSTRAINT monitors_slug_check, "
               f"ADD CONSTRAINT monitors_slug_check CHECK ({expression});")


def upgrade() -> None:
    _replace(_LEAN)


def downgrade() -> None:
    _replace(_REGEX)
