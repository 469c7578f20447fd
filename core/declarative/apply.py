"""Plan and apply a declarative document for one team, in one transaction (docs/config.md).

:func:`apply_document` checks the document's shape (:mod:`core.declarative.document`), takes
the team's apply lock, reads its live channels, monitors and jobs, resolves the
``${secrets.NAME}`` of sealed fields, normalises every object with the API's own rules, plans
(:mod:`core.declarative.plan`) and, unless it is a dry run, carries the plan out through the
job, monitor and channel commands on the same connection (:class:`BoundPool`), so that every
change commits together or none does. Unchanged objects are not touched: applying the same
document twice appends no event.

Sealed values (a channel's ``url`` and ``signing_secret``, a job's ``signing_secret``) are
write-only: absent from the document, the stored value is kept; given (usually as
``${secrets.NAME}``, resolved from the team's secrets here), it is compared with the stored one
after unsealing, and the diff only says ``[sealed, changed]``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from core.actor import Actor
from core.channels import commands as channel_commands
from core.channels.definition import SECRET_FIELDS, normalize_channel
from core.channels.sealing import Sealer, SealError, unseal_channel
from core.crypto import KeyRing, SecretUnavailable, secret_aad, signing_aad
from core.db import Connection, ConnectionPool, transaction
from core.declarative.bound import BoundPool
from core.declarative.document import (
    KINDS,
    SINGULAR,
    check_document,
    monitor_key,
    secret_warnings,
)
from core.declarative.plan import SEALED, SEALED_CHANGED, Change, FieldDiff, plan_kind
from core.errors import FieldError, FieldErrors, InvalidInput
from core.jobs import commands as job_commands
from core.jobs import definition as jobdef
from core.monitors import commands as monitor_commands
from core.monitors import definition as mondef
from core.queries import Q
from core.schedule import InvalidSchedule, parse_schedule
from core.secrets import PLACEHOLDER, fetch_sealed

ACTOR = "apply"  # the ``actor`` of every event an apply appends (core/actor.py)
RUN_ON_START = "fires once now: the job has never run"


@dataclass
class TeamState:
    """A team's live objects, read inside the apply's transaction (rows by name)."""

    channels: dict[str, dict[str, Any]]
    monitors: dict[str, dict[str, Any]]
    jobs: dict[str, dict[str, Any]]

    def channel_names(self) -> dict[uuid.UUID, str]:
        return {row["id"]: name for name, row in self.channels.items()}


@dataclass
class Outcome:
    """What :func:`apply_document` planned and did.

    Attributes:
        changes: one per object, channels then monitors then jobs (deletes last in each).
        warnings: literal secret-looking values (``FieldError`` s with document paths).
        applied: whether the changes were written (``False`` for a dry run or no change).
    """

    changes: list[Change]
    warnings: list[FieldError] = field(default_factory=list)
    applied: bool = False


async def load_team(conn: Connection, team_id: uuid.UUID) -> TeamState:
    """The team's live channels and jobs (with ``has_run``) by name, and its monitors by slug
    (a monitor without a slug is not managed by files: never matched, never pruned)."""
    out = []
    for query, key in ((Q["apply_channels"], "name"), (Q["apply_monitors"], "slug"),
                       (Q["apply_jobs"], "name")):
        cur = await conn.execute(query, {"team_id": team_id})
        out.append({row[key]: row for row in await cur.fetchall() if row[key] is not None})
    return TeamState(*out)


def current_job(row: dict[str, Any], names: dict[uuid.UUID, str]) -> dict[str, Any]:
    """A job row in the canonical form of the plan: its definition fields, channels by name
    (ids of deleted channels, which alerts skip, left out), and ``enabled`` unless it is a
    completed one-shot."""
    out = {key: row[key] for key in jobdef.DEFINITION_FIELDS}
    out["channels"] = [names[c] for c in row["channels"] if c in names]
    if row["status"] != "completed":
        out["enabled"] = row["status"] == "active"
    return out


def pinned_schedule(schedule: str, timezone: str, anchor: datetime,
                    kinds: tuple[str, ...] = ("interval", "days")) -> str:
    """``schedule`` with its anchor named when it is anchored (an interval, a calendar
    period: :meth:`core.schedule.Schedule.pinned`), so that it fires the same wherever and
    whenever it is applied; else ``schedule``. A stored schedule that no longer parses is
    left as it is (its problem is reported elsewhere)."""
    try:
        parsed = parse_schedule(schedule, timezone, anchor=anchor)
    except (InvalidSchedule, ValueError):
        return schedule
    return parsed.pinned() if parsed.kind in kinds else schedule


#: Monitors' periods are measured from the last ping: only calendar periods are anchored.
MONITOR_PINNED = ("days",)


def current_monitor(row: dict[str, Any], names: dict[uuid.UUID, str]) -> dict[str, Any]:
    """A monitor row in the canonical form of the plan (see :func:`current_job`)."""
    out = {key: row[key] for key in mondef.DEFINITION_FIELDS}
    out["channels"] = [names[c] for c in row["channels"] if c in names]
    out["enabled"] = row["status"] != "paused"
    return out


def current_channel(row: dict[str, Any]) -> dict[str, Any]:
    """A channel row in the canonical form of the plan: name, kind and the public config
    (sealed fields are compared apart)."""
    public = {"name": row["name"], "kind": row["kind"], **row["config"]}
    return {k: v for k, v in public.items() if k not in SECRET_FIELDS}


class _Resolver:
    """Resolves ``${secrets.NAME}`` in sealed values from the team's secrets (cached)."""

    def __init__(self, conn: Connection, team_id: uuid.UUID,
                 keyring: KeyRing) -> None:
        self.conn, self.team_id, self.keyring = conn, team_id, keyring
        self.cache: dict[str, str | None] = {}

    async def __call__(self, value: Any, path: str, errors: FieldErrors) -> Any:
        if not isinstance(value, str):
            return value
        names = PLACEHOLDER.findall(value)
        for name in names:
            if name not in self.cache:
                found, _ = await fetch_sealed(self.conn, [(self.team_id, name)], [])
                sealed = found.get((self.team_id, name))
                try:
                    self.cache[name] = None if sealed is None else self.keyring.open(
                        sealed, secret_aad(self.team_id.bytes, name)).decode()
                except SecretUnavailable:
                    errors.add(path, f"the team secret {name!r} cannot be opened with the "
                                     "configured keys")
                    return None
            if self.cache[name] is None:
                errors.add(path, f"names the team secret {name!r}, which does not exist: "
                                 f"create it first (PUT /v1/secrets/{name})")
                return None
        return PLACEHOLDER.sub(lambda m: self.cache[m.group(1)] or "", value)


def _prefixed(errors: FieldErrors, path: str, exc: InvalidInput) -> None:
    for error in exc.errors or [FieldError("", exc.detail)]:
        errors.add(f"{path}.{error.field}" if error.field else path, error.message)


def _check_channel_names(names: Any, known: set[str], path: str,
                         errors: FieldErrors) -> list[str]:
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return []  # reported by check_document
    for k, name in enumerate(names):
        if name not in known:
            errors.add(f"{path}.channels.{k}", f"no channel named {name!r} in this file"
                                               " or the team")
    return list(dict.fromkeys(names))


@dataclass
class _Desired:
    """One document object, normalised: ``fields`` for the plan, ``write`` for the command,
    ``sealed`` (resolved secret values) and the ``run_on_start`` directive."""

    name: str
    fields: dict[str, Any]
    write: dict[str, Any]
    sealed: dict[str, str] = field(default_factory=dict)
    run_on_start: bool = False


async def _desired_channels(items: list[dict[str, Any]], state: TeamState, sealer: Sealer,
                            resolve: _Resolver, errors: FieldErrors) -> list[_Desired]:
    out = []
    for i, item in enumerate(items):
        path = f"channels.{i}"
        name = item.get("name")
        if not isinstance(name, str):
            continue  # reported by check_document
        row = state.channels.get(name)
        given = {}
        for key in SECRET_FIELDS:
            if item.get(key) is not None:  # null (JSON only) is absent: the value is kept
                given[key] = await resolve(item[key], f"{path}.{key}", errors)
        stored: dict[str, str] = {}
        if row is not None:
            if item.get("kind", row["kind"]) != row["kind"]:
                errors.add(f"{path}.kind", f"cannot change ({row['kind']!r} stored): give "
                                           "the new channel another name")
                continue
            try:
                stored = unseal_channel(sealer, row)
            except SealError:
                errors.add(path, "its stored secrets cannot be opened with the configured keys")
                continue
        if any(v is None for v in given.values()):
            continue  # the secret could not be resolved: reported above
        write = {k: v for k, v in item.items() if k not in SECRET_FIELDS}
        sealed = {**stored, **given}
        try:
            public, _ = normalize_channel({**write, **sealed})
        except InvalidInput as exc:
            _prefixed(errors, path, exc)
            continue
        fields = {k: v for k, v in public.items() if k not in SECRET_FIELDS}
        for key, value in given.items():
            fields[key] = SEALED if stored.get(key) == value else SEALED_CHANGED
        out.append(_Desired(item["name"], fields, write, given))
    return out


async def _desired_monitors(items: list[dict[str, Any]], state: TeamState, known: set[str],
                            now: datetime, errors: FieldErrors) -> list[_Desired]:
    """The monitors the file wants, by slug (:func:`core.declarative.document.monitor_key`:
    the ``slug`` given, else the one its name gives; names may repeat)."""
    out = []
    for i, item in enumerate(items):
        path = f"monitors.{i}"
        key = monitor_key(item)
        if not isinstance(item.get("name"), str) or key is None:
            continue  # reported by check_document
        write = {k: v for k, v in item.items() if k in mondef.DEFINITION_FIELDS
                 and k != "channels"}
        current = state.monitors.get(key)
        write["slug"] = key
        if current is not None and isinstance(write.get("schedule"), str) \
                and write["schedule"].strip() != current["schedule"] \
                and write.get("timezone", mondef.DEFAULTS["timezone"]) == current["timezone"] \
                and write["schedule"].strip() == pinned_schedule(
                    current["schedule"], current["timezone"], current["created_at"],
                    MONITOR_PINNED):
            write["schedule"] = current["schedule"]  # its export: the same series
        names = _check_channel_names(item.get("channels", []), known, path, errors)
        try:
            definition = mondef.normalize_definition(write, now=now)
        except InvalidInput as exc:
            _prefixed(errors, path, exc)
            continue
        fields = {k: definition[k] for k in mondef.DEFINITION_FIELDS}
        fields["channels"] = names
        fields["enabled"] = item.get("enabled", True)
        out.append(_Desired(key, fields, write))
    return out


async def _desired_jobs(conn: Connection, team_id: uuid.UUID,
                        items: list[dict[str, Any]], state: TeamState, known: set[str],
                        keyring: KeyRing, resolve: _Resolver, now: datetime,
                        errors: FieldErrors) -> list[_Desired]:
    out = []
    for i, item in enumerate(items):
        path = f"jobs.{i}"
        name = item.get("name")
        if not isinstance(name, str):
            continue  # reported by check_document
        row = state.jobs.get(name)
        write = {k: v for k, v in item.items() if k in jobdef.DEFINITION_FIELDS
                 and k != "channels"}
        names = _check_channel_names(item.get("channels", []), known, path, errors)
        secret = None
        if item.get("signing_secret") is not None:
            secret = await resolve(item["signing_secret"], f"{path}.signing_secret", errors)
            if secret is None:
                continue
        anchor = _job_anchor(row, write, now)
        try:
            definition = jobdef.normalize_definition(
                {**write, "signing_secret": secret}, anchor=anchor, now=anchor)
        except InvalidInput as exc:
            _prefixed(errors, path, exc)
            continue
        fields = dict(definition)
        fields["channels"] = names
        if row is None or row["status"] != "completed":
            fields["enabled"] = item.get("enabled", True)
        sealed = {}
        if secret is not None:
            same = row is not None and row["signing"] and \
                await _signing_secret(conn, keyring, team_id, row["id"]) == secret
            fields["signing_secret"] = SEALED if same else SEALED_CHANGED
            sealed["signing_secret"] = secret
        out.append(_Desired(item["name"], fields, write, sealed,
                            bool(item.get("run_on_start", False))))
    return out


def _job_anchor(row: dict[str, Any] | None, write: dict[str, Any], now: datetime) -> datetime:
    """The anchor of a job the file gives, and the instant its one-shot is checked at: the
    row's while its timing (schedule and zone) is unchanged, so that a one-shot whose instant
    has passed stays valid; else ``now``. A schedule given as the row's export (its pinned
    form) is the row's schedule (the same fires), written back into ``write``."""
    if row is None or row["timezone"] != write.get("timezone", jobdef.DEFAULTS["timezone"]):
        return now
    given = str(write.get("schedule", "")).strip()
    if given != row["schedule"] and given == pinned_schedule(
            row["schedule"], row["timezone"], row["anchor_at"]):
        write["schedule"] = given = row["schedule"]  # its export: the same fires
    return row["anchor_at"] if row["schedule"] == given else now


async def _signing_secret(conn: Connection, keyring: KeyRing, team_id: uuid.UUID,
                          job_id: uuid.UUID) -> str | None:
    _, signing = await fetch_sealed(conn, [], [job_id])
    if job_id not in signing:
        return None
    try:
        return keyring.open(signing[job_id], signing_aad(team_id.bytes, job_id.bytes)).decode()
    except SecretUnavailable:
        return None  # unreadable: the file's value replaces it


def _plan(desired: dict[str, list[_Desired]], state: TeamState, prune: bool) -> list[Change]:
    names = state.channel_names()
    given = {kind: {d.name: d.sealed for d in desired[kind]} for kind in ("channels", "jobs")}
    current: dict[str, dict[str, tuple[uuid.UUID, dict[str, Any]]]] = {
        "channels": {}, "monitors": {}, "jobs": {}}
    for name, row in state.channels.items():
        # a sealed field the file gives is compared as SEALED (same) / SEALED_CHANGED
        sealed: dict[str, str | None] = {k: SEALED for k in given["channels"].get(name, {})}
        current["channels"][name] = (row["id"], {**current_channel(row), **sealed})
    for name, row in state.monitors.items():
        current["monitors"][name] = (row["id"], current_monitor(row, names))
    for name, row in state.jobs.items():
        sealed = {k: SEALED if row["signing"] else None for k in given["jobs"].get(name, {})}
        current["jobs"][name] = (row["id"], {**current_job(row, names), **sealed})
    changes: list[Change] = []
    for kind in KINDS:
        planned = plan_kind(SINGULAR[kind], [(d.name, d.fields) for d in desired[kind]],
                            current[kind], prune=prune)
        if kind == "jobs":
            for change in planned:
                _run_on_start(change, desired["jobs"], state)
        changes += planned
    return changes


def _run_on_start(change: Change, desired: list[_Desired], state: TeamState) -> None:
    """bext's first tick: a job with ``run_on_start`` that has never run is triggered once."""
    if change.index is None:
        return
    wanted = desired[change.index]
    row = state.jobs.get(change.name)
    if not wanted.run_on_start or not wanted.fields.get("enabled", False):
        return
    if row is not None and (row["has_run"] or row["status"] == "completed"):
        return
    change.diffs.append(FieldDiff("run_on_start", None, RUN_ON_START))
    change.extra["run"] = True
    if change.action == "unchanged":
        change.action = "update"


async def apply_document(
    pool: ConnectionPool, actor: Actor, document: Any, now: datetime, *,
    keyring: KeyRing, sealer: Sealer, base_url: str, digest: str | None = None,
    dry_run: bool = False, prune: bool = False,
) -> Outcome:
    """Plan ``document`` against the team of ``actor`` and, unless ``dry_run``, apply it.

    Args:
        document: the parsed file (``{"jobs": [...], "monitors": [...], "channels": [...]}``).
        now: the instant of the apply (UTC): new intervals are anchored to it.
        keyring: opens team secrets and seals signing secrets.
        sealer: seals and unseals channel secrets.
        base_url: the base of the ping URLs reported for created monitors.
        digest: the file's SHA-256 (hex), recorded in every event's metadata.
        prune: also delete the team's objects that the document does not name.

    Returns:
        The :class:`Outcome`; every event appended has ``actor: "apply"`` and ``digest``.

    Raises:
        InvalidInput: every problem of the document, each with its path (``jobs.0.schedule``);
            nothing was written.
        Conflict: a concurrent change got in the way; nothing was written.
        Unavailable: a sealed value must be written and no secret key is configured.
    """
    errors = FieldErrors()
    objects = check_document(document, errors)
    warnings = secret_warnings(objects)
    actor = Actor(actor.team_id, actor.key_id, actor.scope, actor.request_id, via=ACTOR,
                  digest=digest)
    async with transaction(pool) as conn:
        await conn.execute(Q["apply_lock"], {"team_id": actor.team_id})
        state = await load_team(conn, actor.team_id)
        resolve = _Resolver(conn, actor.team_id, keyring)
        file_channels = {c["name"] for c in objects["channels"] if isinstance(c.get("name"), str)}
        known = file_channels if prune else file_channels | set(state.channels)
        desired = {
            "channels": await _desired_channels(objects["channels"], state, sealer, resolve,
                                                errors),
            "monitors": await _desired_monitors(objects["monitors"], state, known, now, errors),
            "jobs": await _desired_jobs(conn, actor.team_id, objects["jobs"], state, known,
                                        keyring, resolve, now, errors),
        }
        errors.raise_if_any()
        changes = _plan(desired, state, prune)
        if dry_run or all(c.action == "unchanged" for c in changes):
            return Outcome(changes, warnings, applied=False)
        await _execute(BoundPool(conn), actor, changes, desired, state, now, keyring=keyring,
                       sealer=sealer, base_url=base_url)
    return Outcome(changes, warnings, applied=True)


async def _execute(bound: BoundPool, actor: Actor, changes: list[Change],
                   desired: dict[str, list[_Desired]], state: TeamState, now: datetime, *,
                   keyring: KeyRing, sealer: Sealer, base_url: str) -> None:
    # the commands take a pool; of it they use connection() only, which BoundPool has
    pool = cast(ConnectionPool, bound)
    channel_ids = {name: row["id"] for name, row in state.channels.items()}
    by_kind = {kind: [c for c in changes if c.kind == SINGULAR[kind]] for kind in KINDS}
    for kind in KINDS:
        for change in by_kind[kind]:
            if change.action in ("unchanged", "delete"):
                continue
            assert change.index is not None
            wanted = desired[kind][change.index]
            path = f"{kind}.{change.index}"
            try:
                if kind == "channels":
                    await _write_channel(pool, sealer, actor, change, wanted, state, now)
                    channel_ids[change.name] = change.id
                elif kind == "monitors":
                    await _write_monitor(pool, actor, change, wanted, channel_ids, state, now,
                                         base_url, keyring)
                else:
                    await _write_job(pool, actor, change, wanted, channel_ids, state, now,
                                     keyring)
            except InvalidInput as exc:
                errors = FieldErrors()
                _prefixed(errors, path, exc)
                errors.raise_if_any()
    deletes = {"jobs": job_commands.delete_job, "monitors": monitor_commands.delete_monitor,
               "channels": channel_commands.delete_channel}
    for kind in ("jobs", "monitors", "channels"):  # subscribers before their channels
        for change in by_kind[kind]:
            if change.action == "delete":
                assert change.id is not None
                await deletes[kind](pool, actor, change.id, now)


async def _write_channel(pool: ConnectionPool, sealer: Sealer, actor: Actor,
                         change: Change, wanted: _Desired, state: TeamState,
                         now: datetime) -> None:
    if change.action == "create":
        change.id, generated = await channel_commands.create_channel(
            pool, sealer, actor, {**wanted.write, **wanted.sealed}, now)
        if generated:
            change.extra["signing_secret"] = generated
        return
    row = state.channels[change.name]
    fields: dict[str, Any] = {k: None for k in row["config"] if k not in SECRET_FIELDS}
    fields.update(wanted.write)
    fields.update({k: v for k, v in wanted.sealed.items()
                   if wanted.fields.get(k) == SEALED_CHANGED})
    await channel_commands.update_channel(pool, sealer, actor, row["id"], fields, now)


def _channel_ids(wanted: _Desired, ids: dict[str, uuid.UUID]) -> list[uuid.UUID]:
    return [ids[name] for name in wanted.fields["channels"]]


async def _write_monitor(pool: ConnectionPool, actor: Actor, change: Change,
                         wanted: _Desired, ids: dict[str, uuid.UUID], state: TeamState,
                         now: datetime, base_url: str, keyring: KeyRing) -> None:
    fields = {**wanted.write, "channels": _channel_ids(wanted, ids)}
    enabled = wanted.fields["enabled"]
    if change.action == "create":
        change.id, token = await monitor_commands.create_monitor(pool, actor, fields, now,
                                                                 keyring)
        change.extra["ping_url"] = f"{base_url}/ping/{token}"
        if not enabled:
            await monitor_commands.set_paused(pool, actor, change.id, True, now)
        return
    row = state.monitors[change.name]
    full = {key: fields.get(key) for key in mondef.DEFINITION_FIELDS}
    await monitor_commands.update_monitor(pool, actor, row["id"], full, now)
    if enabled != (row["status"] != "paused"):
        await monitor_commands.set_paused(pool, actor, row["id"], not enabled, now)


async def _write_job(pool: ConnectionPool, actor: Actor, change: Change,
                     wanted: _Desired, ids: dict[str, uuid.UUID], state: TeamState,
                     now: datetime, keyring: KeyRing) -> None:
    fields: dict[str, Any] = {key: wanted.fields[key] for key in jobdef.DEFINITION_FIELDS}
    fields["channels"] = _channel_ids(wanted, ids)
    if "enabled" in wanted.fields:
        fields["paused"] = not wanted.fields["enabled"]
    if wanted.fields.get("signing_secret") == SEALED_CHANGED:
        fields["signing_secret"] = wanted.sealed["signing_secret"]
    if change.action == "create":
        change.id = await job_commands.create_job(pool, actor, fields, now, keyring)
    else:
        row = state.jobs[change.name]
        real = [d for d in change.diffs if d.field != "run_on_start"]
        if real:
            await job_commands.update_job(pool, actor, row["id"], fields, now, keyring=keyring)
    if change.extra.pop("run", False):
        assert change.id is not None
        change.extra["run_id"] = await job_commands.trigger_job(pool, actor, change.id, now)



async def team_id_of(pool: ConnectionPool, name: str, *,
                     create: bool) -> uuid.UUID | None:
    """The id of the team named ``name`` (created when missing and ``create``: the default
    team of ``cronledger serve --config``), or ``None``."""
    async with transaction(pool) as conn:
        query = Q["team_ensure"] if create else Q["apply_team_find"]
        cur = await conn.execute(query, {"name": name})
        row = await cur.fetchone()
    return row["id"] if row else None
