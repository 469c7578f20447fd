"""What events are about, by name: the dashboard's event lines (the overview, the audit log)
name and link the job or monitor of every event type, not its id.

One query for a page of events (``event_subjects`` in ``core/sql/ledger.sql``, given the rows
the page read: the partitioned log is not read again): a job's and a
run's events are about the job, a monitor's about the monitor, a notification's about the job
or monitor it alerts on (and the channel it goes to), a channel's, a secret's and a maintenance
window's about themselves; a team's about no one object. Deleted objects keep their names.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from core.db import ConnectionPool
from core.queries import Q

UUID_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


@dataclass(frozen=True)
class Subject:
    """What one event is about.

    Attributes:
        type: ``job``, ``monitor``, ``channel``, ``secret``, ``maintenance`` or ``None`` (a
            team's event, or a notification whose subject is gone from its data).
        id: its id (``None`` for a secret named only, or no subject).
        name: its name (a maintenance window: its comment; ``None`` when it has none).
        channel_id: a notification's channel.
        channel_name: that channel's name.
    """

    type: str | None
    id: uuid.UUID | None
    name: str | None
    channel_id: uuid.UUID | None = None
    channel_name: str | None = None


# The fields of an event's data the query reads (a run's job, a notification's subject and
# channel, a secret's name): only these are sent, not whole payloads (a ping's data is most of
# its event, and each is escaped into the array parameter).
DATA_FIELDS = ("job_id", "subject_type", "subject_id", "channel_id", "name")


def _named_in(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        return {}
    return {k: data[k] for k in DATA_FIELDS if k in data}


async def event_subjects(pool: ConnectionPool, team_id: uuid.UUID,
                         events: Iterable[Mapping[str, Any]]) -> dict[int, Subject]:
    """``{global position: Subject}`` of the team's ``events`` (rows of
    :func:`core.events.list_team_events`: ``global_position``, ``stream_type``, ``stream_id``,
    ``data``), named from the team's own rows only."""
    rows_in = list(events)
    if not rows_in:
        return {}
    async with pool.connection() as conn:
        cur = await conn.execute(Q["event_subjects"], {
            "team_id": team_id, "uuid": UUID_PATTERN,
            "positions": [e["global_position"] for e in rows_in],
            "stream_types": [e["stream_type"] for e in rows_in],
            "stream_ids": [e["stream_id"] for e in rows_in],
            "datas": [Jsonb(_named_in(e["data"])) for e in rows_in]})
        rows = await cur.fetchall()
    return {row["global_position"]: Subject(row["subject_type"], row["subject_id"],
                                            row["subject_name"], row["channel_id"],
                                            row["channel_name"]) for row in rows}
