"""Monitor commands: decide the events, append them, update the projection, one transaction.

Each command locks the monitor's projection row, decides the events from the request and the
current state (:mod:`core.monitors.decide`), appends them with the expected stream version
and writes ``monitors`` in the same transaction (:mod:`core.streams`, with :data:`MONITOR`). When
the next alert moves earlier the checker is woken (NOTIFY, delivered at commit). Pings are
not commands: they take the single-statement path of :mod:`core.monitors.ping`.
"""

from __future__ import annotations

import dataclasses
import uuid
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.channels.queries import check_new_channels
from core.crypto import KeyRing
from core.db import Connection, ConnectionPool, transaction
from core.dependencies import check_depends_on, refuse_delete_with_dependents
from core.maintenance.queries import held_alerts
from core.monitors.decide import (
    CreateMonitor,
    DeleteMonitor,
    PauseMonitor,
    RotateToken,
    UpdateMonitor,
    decide_create,
    decide_delete,
    decide_pause,
    decide_rotate,
    decide_update,
)
from core.monitors.definition import cached_schedule, normalize_definition
from core.monitors.rules import timing
from core.monitors.slugs import MAX_SLUG, slugify
from core.monitors.state import MonitorState, evolve
from core.monitors.tokens import keep_token, kept, new_token
from core.notifications.outbox import forget_monitor_alert, reschedule_monitor_realert
from core.notifications.released import release_dependents, release_subject
from core.queries import Q
from core.stored import schedule_problem
from core.streams import StreamKind, append, execute, lock


async def _write(conn: Connection, before: MonitorState | None,
                 state: MonitorState, now: datetime) -> MonitorState:
    """Write ``monitors`` with the next expected instant and alert derived at ``now``, and
    wake the checker when the next alert moves earlier (:data:`core.streams.Write`)."""
    schedule, _ = schedule_problem(cached_schedule, state.schedule, state.timezone,
                                   state.created_at)
    expected, alert_at = None, None  # a broken monitor: the checker leaves it
    if schedule is not None and state.broken_at is None:
        expected, alert_at = timing(state, schedule, now)
    state = dataclasses.replace(state, next_expected_at=expected, alert_at=alert_at)
    await conn.execute(Q["monitor_upsert"], state.as_row())
    old_alert = before.alert_at if before else None
    if alert_at is not None and (old_alert is None or alert_at < old_alert):
        await conn.execute(Q["monitor_notify"], {"reason": "monitor"})
    return state


MONITOR = StreamKind("monitor", "monitor", Q["monitor_lock"], MonitorState.from_row, evolve,
                     _write)


async def derived_slug(conn: Connection, team_id: uuid.UUID,
                       name: str) -> str | None:
    """The slug a monitor named ``name`` gets when it is given none:
    :func:`core.monitors.slugs.slugify` of the name when no live monitor of the team has it,
    else that slug with the smallest free ``-2``, ``-3`` … (healthchecks would give both
    checks one slug and answer pings to it 409; a cronledger slug names one monitor).
    ``None`` when the name has no letter or digit to make one from."""
    base = slugify(name)
    if base is None:
        return None
    cur = await conn.execute(Q["monitor_slugs_numbered"], {"team_id": team_id, "slug": base})
    taken = {row["slug"] for row in await cur.fetchall()}
    if base not in taken:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        slug = base[:MAX_SLUG - len(suffix)].rstrip("-_") + suffix
        if slug not in taken:
            return slug
        n += 1


async def create_monitor(
    pool: ConnectionPool, actor: Actor, fields: dict[str, Any], now: datetime,
    keyring: KeyRing | None = None,
) -> tuple[uuid.UUID, str]:
    """Create a monitor from ``fields`` (the body of ``POST /v1/monitors``).

    The monitor starts ``new``: it never alerts before its first ping.

    Args:
        keyring: the server's key ring; with a key, the token is kept sealed and its URL can
            be read again (:mod:`core.monitors.tokens`); without one it is shown once.

    Returns:
        ``(monitor_id, ping_token)``.

    Raises:
        InvalidInput: when the definition is not acceptable.
    """
    async with transaction(pool) as conn:
        return await create_in(conn, actor, fields, now, keyring)


async def create_in(conn: Connection, actor: Actor, fields: dict[str, Any],
                    now: datetime, keyring: KeyRing | None = None) -> tuple[uuid.UUID, str]:
    """:func:`create_monitor` inside the caller's transaction.

    Without a ``slug`` the monitor gets one from its name (:func:`derived_slug`); a ``slug``
    given and taken is a ``Conflict``. Names may repeat (docs/healthchecks.md).
    """
    definition = normalize_definition(fields, now=now)
    monitor_id = uuid.uuid4()
    if definition["slug"] is None:
        definition["slug"] = await derived_slug(conn, actor.team_id, definition["name"])
    token, digest = new_token()
    created = decide_create(CreateMonitor(definition, digest))
    await check_new_channels(conn, actor.team_id, definition["channels"], [])
    await check_depends_on(conn, actor.team_id, monitor_id, definition["depends_on"], [])
    await append(conn, MONITOR, actor, monitor_id, None, created, now)
    if kept(keyring):  # a new monitor has no previous token to drop
        await keep_token(conn, keyring, actor.team_id, monitor_id, token, now)
    return monitor_id, token


async def update_monitor(
    pool: ConnectionPool,
    actor: Actor,
    monitor_id: uuid.UUID,
    fields: dict[str, Any],
    now: datetime,
    expected_version: int | None = None,
) -> None:
    """Apply a partial update (``PATCH``): fields absent from ``fields`` keep their value.

    A schedule or grace change recomputes the expected instant from the last ping; if that makes
    the monitor late, down or on time again, the checker records the transition at once.

    Raises:
        NotFound: no such monitor for this team.
        ConcurrencyConflict: ``expected_version`` is given and is not the current version.
        InvalidInput: the resulting definition is not acceptable (a ``depends_on`` naming
            itself, an unknown id or closing a cycle included).
    """
    async with transaction(pool) as conn:
        before = await lock(conn, MONITOR, actor, monitor_id, expected_version)
        update = decide_update(before, UpdateMonitor(fields, now))
        await check_new_channels(conn, actor.team_id, update.definition["channels"],
                                 before.channels)
        await check_depends_on(conn, actor.team_id, monitor_id,
                               update.definition["depends_on"], before.depends_on)
        if update.events:
            await append(conn, MONITOR, actor, monitor_id, before, update.events, now)
        if "realert_every" in update.changes:
            # a pending re-alert of a down monitor follows the new period (None: stops)
            await reschedule_monitor_realert(conn, monitor_id, update.changes["realert_every"])
        if "depends_on" in update.changes:  # no parent down now: what it owes goes out
            await release_subject(conn, monitor_id, now, hold=held_alerts)


async def set_paused(pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID,
                     paused: bool, now: datetime) -> None:
    """Pause or resume a monitor. Idempotent: pausing a paused monitor appends nothing.

    A paused monitor never alerts (a pending re-alert is dropped); a pending start is
    forgotten. Resuming makes it ``new`` (healthchecks' resume): it alerts again only after
    its next ping, so a job that did not run while paused cannot raise a false alarm.

    Resuming a broken monitor whose schedule evaluates again repairs it
    (``monitor.repaired``).

    Raises:
        NotFound: no such monitor for this team.
        Conflict: resuming a broken monitor whose schedule still does not evaluate.
    """
    async with transaction(pool) as conn:
        before, after = await execute(conn, MONITOR, actor, monitor_id, decide_pause,
                                      PauseMonitor(paused), now)
        if after is not None and paused:
            await forget_monitor_alert(conn, monitor_id)  # a paused monitor never re-alerts
            if before.status == "down":  # no longer down: its dependents' holds may end
                await release_dependents(conn, [monitor_id], now, hold=held_alerts)


async def delete_monitor(pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID,
                         now: datetime) -> None:
    """Delete a monitor: its token stops working at once, its history stays readable.

    Raises:
        NotFound: no such monitor for this team.
        Conflict: live monitors or jobs depend on it (``depends_on``).
    """
    async with transaction(pool) as conn:
        before = await lock(conn, MONITOR, actor, monitor_id)
        await refuse_delete_with_dependents(conn, actor.team_id, monitor_id, "monitor")
        await append(conn, MONITOR, actor, monitor_id, before,
                     decide_delete(before, DeleteMonitor()), now)
        await forget_monitor_alert(conn, monitor_id)


async def rotate_token(pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID,
                       now: datetime, keyring: KeyRing | None = None) -> str:
    """Replace the monitor's ping token; the old one stops working at once (its sealed copy
    is replaced in the same transaction, or dropped without a key: ``keyring`` as in
    :func:`create_monitor`).

    Returns:
        The new token.

    Raises:
        NotFound: no such monitor for this team.
    """
    token, digest = new_token()
    async with transaction(pool) as conn:
        await execute(conn, MONITOR, actor, monitor_id, decide_rotate, RotateToken(digest),
                      now)
        await keep_token(conn, keyring, actor.team_id, monitor_id, token, now)
    return token
