"""A team's monitors and jobs as healthchecks' *checks*: one status each, and the worst of a
group (docs/healthchecks.md), for the badges (:mod:`core.badges`) and the per-team metrics
(:mod:`core.metrics`).

Statuses are healthchecks' three: ``up``, ``late`` (its "grace") and ``down``.

- A monitor is its own status: ``late`` and ``down`` as they are; ``up``, ``new`` and
  ``paused`` count as ``up`` (healthchecks' badges treat new and paused checks as up).
- A job is ``down`` when its last finished run failed for good (retries exhausted: a run that
  will be retried is ``queued``, not ``failed``), else ``up``; a paused or completed job is
  ``up``.

The worst of a group is ``down`` over ``late`` over ``up``; an empty group is ``up``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core.db import ConnectionPool
from core.queries import Q

ORDER = ("up", "late", "down")  # worse to the right
ALL = "*"


@dataclass(frozen=True)
class Check:
    """One monitor or job: ``kind`` (``monitor`` | ``job``), ``status`` (see the module text),
    ``started`` (a monitor with a pending start), ``running`` (a job run in flight),
    ``last_run_ok`` (a job's last finished run: ``True`` | ``False``, ``None`` before any),
    ``runs`` (a job's runs by status)."""

    kind: str
    id: uuid.UUID
    name: str
    tags: tuple[str, ...]
    status: str
    started: bool = False
    running: bool = False
    last_run_ok: bool | None = None
    runs: dict[str, int] = field(default_factory=dict)


def _status(row: dict[str, Any]) -> str:
    if row["kind"] == "monitor":
        return row["status"] if row["status"] in ("late", "down") else "up"
    return "down" if row["last_run_status"] == "failed" else "up"


async def team_checks(pool: ConnectionPool, team_id: uuid.UUID) -> list[Check]:
    """The team's live monitors and jobs, by name."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["check_list_for_team"], {"team_id": team_id})
        rows = await cur.fetchall()
    return [Check(kind=r["kind"], id=r["id"], name=r["name"], tags=tuple(r["tags"]),
                  status=_status(r), started=r["started"], running=r["running"],
                  last_run_ok=None if r["last_run_status"] is None
                  else r["last_run_status"] == "succeeded", runs=dict(r["runs"]))
            for r in rows]


def tagged(checks: Iterable[Check], tag: str) -> list[Check]:
    """The checks with ``tag`` (``*``: all of them)."""
    return [c for c in checks if tag == ALL or tag in c.tags]


def worst(statuses: Iterable[str]) -> str:
    """The worst of ``statuses`` (``up`` for none)."""
    return max(statuses, key=ORDER.index, default="up")
