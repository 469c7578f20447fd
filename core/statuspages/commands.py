"""Commands on status pages: create, change (and rotate the public key), delete; and the
note a person writes on an incident.

Each page command decides with :mod:`core.statuspages.decide`, appends to the page's
``status_page`` stream and writes the ``status_pages`` row in the same transaction
(:mod:`core.streams`, with :data:`PAGE`), with the caller as actor; a deleted page's row goes.
A note is an ``alert.noted`` event on the alert's own stream (``alert``, kept forever) with
its ``alert_notes`` row.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Callable, Collection
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.crypto import KeyRing
from core.db import Connection, ConnectionPool, one_row, team_row, transaction
from core.errors import FieldErrors, invalid
from core.events import Head, append_at
from core.notifications.dependencies import PROBLEM
from core.queries import Q
from core.statuspages.decide import (
    CreatePage,
    DeletePage,
    UpdatePage,
    decide_create,
    decide_delete,
    decide_update,
)
from core.statuspages.keys import new_key, seal_key
from core.statuspages.state import PageState, evolve
from core.streams import StreamKind, append, execute, lock
from core.tags import BLANK, FORMATTING

MAX_NOTE = 2000
# A note: no control (but tabs and newlines) or invisible formatting character, the rule of
# tags and titles (core/tags.py:INVISIBLE); one of nothing but blank-looking characters
# (core/tags.py:BLANK) is no note.
NOTE_PATTERN = f"[^\\x00-\\x08\\x0b-\\x1f{FORMATTING}]*"
NOTE_WORDS = ("must not contain control characters other than newlines and tabs, or invisible "
              "formatting characters")
_NOT_IN_A_NOTE = re.compile(f"[\\x00-\\x08\\x0b-\\x1f{FORMATTING}]")
_VISIBLE = re.compile(f"[^\\s{BLANK}{FORMATTING}]")


@dataclasses.dataclass(frozen=True)
class Minted:
    """A page just created or re-keyed: its id and the public key minted for it (shown to the
    caller even when the server cannot keep it)."""

    page_id: uuid.UUID
    key: str


async def _check_subjects(conn: Connection, team_id: uuid.UUID,
                          definition: dict[str, Any], given: Collection[str]) -> None:
    """Refuse component and display-name ids that are not live jobs or monitors of the team
    (422 naming each), of the fields ``given`` only (``components``, ``names``): a stored one
    whose job or monitor was deleted since is not shown (:mod:`core.statuspages.public`,
    :mod:`core.statuspages.queries`) and never stops a change of the other fields, such as a
    key's rotation."""
    components = definition["components"] if "components" in given else []
    names = definition["names"] if "names" in given and not definition["components"] else {}
    ids = list(dict.fromkeys([*components, *(uuid.UUID(k) for k in names)]))
    if not ids:
        return
    cur = await conn.execute(Q["status_page_subjects"], {"team_id": team_id, "ids": ids})
    known = {row["id"] for row in await cur.fetchall()}
    errors = FieldErrors()
    for n, subject in enumerate(components):
        if subject not in known:
            errors.add(f"components.{n}", f"no job or monitor {subject} in this team")
    for key in names:
        if uuid.UUID(key) not in known:
            errors.add(f"names.{key}", f"no job or monitor {key} in this team")
    errors.raise_if_any()


async def _write(conn: Connection, before: PageState | None, page: PageState,
                 now: datetime) -> PageState:
    """Write ``status_pages`` (:data:`core.streams.Write`): the row, or its removal."""
    if page.deleted:
        await conn.execute(Q["status_page_delete"], {"id": page.id})
    else:
        await conn.execute(Q["status_page_upsert"], page.upsert_params())
    return page


PAGE = StreamKind("status_page", "status page", Q["status_page_lock"], PageState.from_row,
                  evolve, _write)


def _sealing(keyring: KeyRing | None, actor: Actor, page_id: uuid.UUID,
             key: str) -> Callable[[PageState], PageState]:
    sealed = seal_key(keyring, actor.team_id, page_id, key)
    return lambda state: dataclasses.replace(state, **sealed)


async def create_page(pool: ConnectionPool, keyring: KeyRing | None, actor: Actor,
                      fields: dict[str, Any], now: datetime) -> Minted:
    """Create a page from ``fields`` (:mod:`core.statuspages.definition`).

    Returns:
        Its id and its public key.

    Raises:
        InvalidInput: the definition is not acceptable, or names an id that is not a live job
            or monitor of the team.
        Conflict: another page has this custom ``path``.
    """
    key, key_hash = new_key()
    decision = decide_create(CreatePage(fields, key_hash))
    page_id = uuid.uuid4()
    async with transaction(pool) as conn:
        await _check_subjects(conn, actor.team_id, decision.definition, decision.definition)
        await append(conn, PAGE, actor, page_id, None, decision.events, now,
                     _sealing(keyring, actor, page_id, key))
    return Minted(page_id, key)


async def update_page(pool: ConnectionPool, keyring: KeyRing | None, actor: Actor,
                      page_id: uuid.UUID, fields: dict[str, Any], now: datetime, *,
                      rotate_key: bool = False,
                      expected_version: int | None = None) -> Minted | None:
    """Change the fields given (:class:`core.statuspages.decide.UpdatePage`), and mint a new
    public key when ``rotate_key`` (the old URL stops working at once).

    Returns:
        The new key when one was minted, else ``None``.

    Raises:
        NotFound: no such page for this team.
        ConcurrencyConflict: ``expected_version`` is not the current version.
        InvalidInput: the resulting definition is not acceptable.
        Conflict: another page has this custom ``path``.
    """
    key, key_hash = new_key() if rotate_key else (None, None)
    async with transaction(pool) as conn:
        page = await lock(conn, PAGE, actor, page_id, expected_version)
        decision = decide_update(page, UpdatePage(fields, key_hash))
        await _check_subjects(conn, actor.team_id, decision.definition, fields)
        if decision.events:
            await append(conn, PAGE, actor, page_id, page, decision.events, now,
                         _sealing(keyring, actor, page_id, key) if key else None)
    return Minted(page_id, key) if key else None


async def delete_page(pool: ConnectionPool, actor: Actor, page_id: uuid.UUID,
                      now: datetime) -> None:
    """Delete the page: its URLs answer 404 at once (``status_page.deleted``; the row goes,
    the stream stays).

    Raises:
        NotFound: no such page for this team.
    """
    async with transaction(pool) as conn:
        await execute(conn, PAGE, actor, page_id, decide_delete, DeletePage(), now)


async def set_note(pool: ConnectionPool, actor: Actor, alert_id: uuid.UUID,
                   note: str | None, now: datetime) -> str | None:
    """Write (or with ``None`` or ``""`` clear) the note shown with the incident an alert
    opened, on every status page that shows its job or monitor (``alert.noted``; nothing is
    recorded when the note is unchanged).

    Returns:
        The note as kept: stripped; ``None`` when none (one of blank-looking characters only
        is none).

    Raises:
        NotFound: no such alert for this team.
        InvalidInput: the alert does not open an incident (only a job's ``failed`` /
            ``still_failing`` and a monitor's ``down`` / ``still_down`` do:
            :data:`core.notifications.dependencies.PROBLEM`), or the note is too long or
            holds control characters other than newlines and tabs or invisible formatting
            characters (:data:`NOTE_PATTERN`).
    """
    text = (note or "").strip()
    if len(text) > MAX_NOTE:
        raise invalid("note", f"must be at most {MAX_NOTE} characters")
    if _NOT_IN_A_NOTE.search(text):
        raise invalid("note", NOTE_WORDS)
    if not _VISIBLE.search(text):  # only blank-looking characters: no note, as "" is
        text = ""
    async with transaction(pool) as conn:
        alert = await team_row(conn, Q["alert_note_lock"], "alert", alert_id, actor.team_id)
        if alert["event"] not in PROBLEM.get(alert["subject_type"], ()):
            raise invalid("alert", f"a {alert['subject_type']} {alert['event']!r} alert opens "
                                   "no incident: write the note on the alert that opened it")
        if (alert["note"] or "") == text:
            return text or None
        # After the stream's real version: the checker's alert.released advances it, not the
        # alert_notes row (core/notifications/dependencies.py:release).
        cur = await conn.execute(Q["alert_stream_version"], {"id": alert_id})
        version: int = one_row(await cur.fetchone(), "alert_stream_version")["version"]
        await append_at(conn, [(Head("alert", alert_id, actor.team_id, version),
                                [("alert.noted", {"note": text or None})])],
                        now, actor.metadata())
        await conn.execute(Q["alert_note_upsert"], {
            "alert_id": alert_id, "team_id": actor.team_id, "note": text,
            "version": version + 1, "now": now})
    return text or None
