"""Commands on status pages: create, change (and rotate the public key), delete; and the
note a person writes on an incident.

Each page command appends to the page's ``status_page`` stream (``status_page.created``,
``status_page.updated`` with the changed fields, ``status_page.deleted``) and writes the
``status_pages`` row in the same transaction, with the caller as actor. Events carry the
key's hash, never the key. A note is an ``alert.noted`` event on the alert's own stream
(``alert``, kept forever) with its ``alert_notes`` row.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from datetime import datetime
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from core.actor import Actor
from core.crypto import KeyRing
from core.db import team_row, transaction
from core.errors import ConcurrencyConflict, FieldErrors, invalid
from core.events import append_events, stream_events, to_json
from core.notifications.dependencies import PROBLEM
from core.queries import Q
from core.statuspages.definition import FIELDS, normalize_page
from core.statuspages.keys import new_key, seal_key
from core.statuspages.state import PageState

STREAM = "status_page"
MAX_NOTE = 2000


@dataclasses.dataclass(frozen=True)
class Minted:
    """A page just created or re-keyed: its id and the public key minted for it (shown to the
    caller even when the server cannot keep it)."""

    page_id: uuid.UUID
    key: str


async def _check_subjects(conn: psycopg.AsyncConnection, team_id: uuid.UUID,
                          definition: dict[str, Any]) -> None:
    """Refuse component and display-name ids that are not live jobs or monitors of the team
    (422 naming each)."""
    ids = list(dict.fromkeys([*definition["components"],
                              *(uuid.UUID(k) for k in definition["names"])]))
    if not ids:
        return
    cur = await conn.execute(Q["status_page_subjects"], {"team_id": team_id, "ids": ids})
    known = {row["id"] for row in await cur.fetchall()}
    errors = FieldErrors()
    for n, subject in enumerate(definition["components"]):
        if subject not in known:
            errors.add(f"components.{n}", f"no job or monitor {subject} in this team")
    for key in definition["names"]:
        if uuid.UUID(key) not in known and not definition["components"]:
            errors.add(f"names.{key}", f"no job or monitor {key} in this team")
    errors.raise_if_any()


def _event_data(definition: dict[str, Any]) -> dict[str, Any]:
    """A definition as an event carries it (JSON-ready: ids as text)."""
    return json.loads(to_json(definition))


async def _write(conn: psycopg.AsyncConnection, actor: Actor, kind: str,
                 data: dict[str, Any], after: PageState, now: datetime,
                 sealed: dict[str, Any]) -> None:
    """Append ``kind`` after ``after``'s version and write ``after`` at the next one."""
    await append_events(conn, stream_events(STREAM, after.id, actor.team_id, after.version,
                                            now, [(kind, data)], actor.metadata()))
    await conn.execute(Q["status_page_upsert"], {
        **after.row_params(), **sealed, "names": json.dumps(after.names),
        "version": after.version + 1, "updated_at": now})


async def create_page(pool: AsyncConnectionPool, keyring: KeyRing | None, actor: Actor,
                      fields: dict[str, Any], now: datetime) -> Minted:
    """Create a page from ``fields`` (:mod:`core.statuspages.definition`).

    Returns:
        Its id and its public key.

    Raises:
        InvalidInput: the definition is not acceptable, or names an id that is not a live job
            or monitor of the team.
        Conflict: another page has this custom ``path``.
    """
    definition = normalize_page(fields)
    page_id = uuid.uuid4()
    key, key_hash = new_key()
    state = PageState(id=page_id, team_id=actor.team_id, key_hash=key_hash, version=0,
                      created_at=now, updated_at=now, **definition)
    async with transaction(pool) as conn:
        await _check_subjects(conn, actor.team_id, definition)
        await _write(conn, actor, "status_page.created",
                     {**_event_data(definition), "key_hash": key_hash.hex()}, state, now,
                     seal_key(keyring, actor.team_id, page_id, key))
    return Minted(page_id, key)


async def _lock(conn: psycopg.AsyncConnection, actor: Actor, page_id: uuid.UUID) -> PageState:
    return PageState.from_row(await team_row(conn, Q["status_page_lock"], "status page",
                                             page_id, actor.team_id))


async def update_page(pool: AsyncConnectionPool, keyring: KeyRing | None, actor: Actor,
                      page_id: uuid.UUID, fields: dict[str, Any], now: datetime, *,
                      rotate_key: bool = False,
                      expected_version: int | None = None) -> Minted | None:
    """Change the fields given (``path: None`` clears the custom path; giving ``tags``
    clears ``components`` and the reverse, so a page may switch between the two), and mint a
    new public key when ``rotate_key`` (the old URL stops working at once).

    Returns:
        The new key when one was minted, else ``None``.

    Raises:
        NotFound: no such page for this team.
        ConcurrencyConflict: ``expected_version`` is not the current version.
        InvalidInput: the resulting definition is not acceptable.
        Conflict: another page has this custom ``path``.
    """
    async with transaction(pool) as conn:
        page = await _lock(conn, actor, page_id)
        if expected_version is not None and expected_version != page.version:
            raise ConcurrencyConflict(f"status page {page_id} is at version {page.version}, "
                                      f"not {expected_version}")
        before = page.definition()
        given = {k: v for k, v in fields.items() if k in FIELDS}
        if "tags" in given and "components" not in given:
            given["components"] = []
        if "components" in given and "tags" not in given:
            given["tags"] = []
        definition = normalize_page({**before, **given})
        await _check_subjects(conn, actor.team_id, definition)
        changes = _event_data({k: v for k, v in definition.items() if v != before[k]})
        after, sealed, minted = page.with_definition(definition), {}, None
        if rotate_key:
            key, key_hash = new_key()
            after, minted = dataclasses.replace(after, key_hash=key_hash), Minted(page_id, key)
            sealed = seal_key(keyring, actor.team_id, page_id, key)
            changes["key_hash"] = key_hash.hex()
            if sealed["ciphertext"] is None:
                await conn.execute(Q["status_page_forget_key"], {"id": page_id})
        if not changes:
            return None
        await _write(conn, actor, "status_page.updated", {"changes": changes}, after, now,
                     sealed or {"key_id": None, "nonce": None, "ciphertext": None})
    return minted


async def delete_page(pool: AsyncConnectionPool, actor: Actor, page_id: uuid.UUID,
                      now: datetime) -> None:
    """Delete the page: its URL answers 404 at once (``status_page.deleted``; the row goes,
    the stream stays).

    Raises:
        NotFound: no such page for this team.
    """
    async with transaction(pool) as conn:
        page = await _lock(conn, actor, page_id)
        await append_events(conn, stream_events(STREAM, page.id, actor.team_id, page.version,
                                                now, [("status_page.deleted", {})],
                                                actor.metadata()))
        await conn.execute(Q["status_page_delete"], {"id": page_id})


async def set_note(pool: AsyncConnectionPool, actor: Actor, alert_id: uuid.UUID,
                   note: str | None, now: datetime) -> None:
    """Write (or with ``None`` or ``""`` clear) the note shown with the incident an alert
    opened, on every status page that shows its job or monitor (``alert.noted``).

    Raises:
        NotFound: no such alert for this team.
        InvalidInput: the alert does not open an incident (only a job's ``failed`` /
            ``still_failing`` and a monitor's ``down`` / ``still_down`` do:
            :data:`core.notifications.dependencies.PROBLEM`), or the note is too long or
            holds control characters other than newlines.
    """
    text = (note or "").strip()
    if len(text) > MAX_NOTE:
        raise invalid("note", f"must be at most {MAX_NOTE} characters")
    if any(ord(c) < 32 and c not in "\n\t" for c in text):
        raise invalid("note", "must not contain control characters other than newlines")
    async with transaction(pool) as conn:
        alert = await team_row(conn, Q["alert_note_lock"], "alert", alert_id, actor.team_id)
        if alert["event"] not in PROBLEM.get(alert["subject_type"], ()):
            raise invalid("alert", f"a {alert['subject_type']} {alert['event']!r} alert opens "
                                   "no incident: write the note on the alert that opened it")
        if (alert["note"] or "") == text:
            return  # unchanged: nothing to record
        version = alert["version"] or 1  # the alert stream holds alert.raised at version 1
        await append_events(conn, stream_events("alert", alert_id, actor.team_id, version,
                                                now, [("alert.noted", {"note": text or None})],
                                                actor.metadata()))
        await conn.execute(Q["alert_note_upsert"], {
            "alert_id": alert_id, "team_id": actor.team_id, "note": text,
            "version": version + 1, "now": now})
