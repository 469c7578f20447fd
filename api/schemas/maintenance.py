"""Bodies of ``/v1/maintenance`` and ``POST /v1/monitors/{id}/snooze``: a maintenance window to
create or change, and the window as shown (docs/ledger.md)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType, field

from api.schemas.common import Schedule, Tags, Zone, duration_meta, page_of
from core.maintenance import definition as mdef

Ids = Annotated[list[uuid.UUID], Meta(
    max_length=mdef.MAX_TARGETS,
    description="ids of the team's jobs (in `jobs`) or monitors (in `monitors`); a window "
                "made or changed names live ones (422 otherwise)")]
Seconds = Annotated[int, Meta(ge=1, le=mdef.MAX_DURATION_SECONDS)]
Comment = Annotated[str, Meta(max_length=mdef.MAX_COMMENT)]
Suppress = Literal[mdef.SUPPRESS]  # type: ignore[valid-type]  # Literal of a runtime tuple
SnoozeFor = Annotated[int, Meta(ge=mdef.MIN_SNOOZE_SECONDS, le=mdef.MAX_SNOOZE_SECONDS)]
# A one-off window's rules that JSON Schema cannot state (core/maintenance/definition.py), in
# words for a generated client's author; a patch's are checked on the window it makes.
_YEARS = f"in the years {mdef.MIN_YEAR + 1} to {mdef.MAX_YEAR - 1} (the schedule engine's)"
WindowFrom = Annotated[datetime, Meta(
    description=f"a one-off window's start, an RFC 3339 instant with an offset {_YEARS} "
                "(422 naming `from` otherwise)")]
WindowTo = Annotated[datetime, Meta(
    description=f"a one-off window's end: after `from` and at most "
                f"{mdef.MAX_ONE_OFF_SECONDS // 86400} days after it, an RFC 3339 instant with "
                f"an offset {_YEARS} (422 naming `to` otherwise)")]
SnoozeText = Annotated[str, duration_meta(mdef.MIN_SNOOZE_SECONDS, mdef.MAX_SNOOZE_SECONDS,
                                          "2h")]


class MaintenanceCreate(Struct, forbid_unknown_fields=True):
    """Body of ``POST /v1/maintenance``: one-off (``from``, ``to``) or recurring (``schedule``,
    ``duration_seconds``, ``timezone``), over ``jobs``, ``monitors`` and ``tags`` (none: the
    whole team)."""

    from_: WindowFrom | None = field(default=None, name="from")
    to: WindowTo | None = None
    schedule: Schedule | None = None
    timezone: Zone | None = None
    duration_seconds: Seconds | None = None
    jobs: Ids = []
    monitors: Ids = []
    tags: Tags = []
    suppress: Suppress = "alerts"
    comment: Comment | None = None


class MaintenancePatch(Struct, forbid_unknown_fields=True):
    """Body of ``PATCH /v1/maintenance/{id}``: the fields given change (``null`` clears);
    ``version`` makes the change conditional (409 otherwise)."""

    from_: WindowFrom | None | UnsetType = field(default=UNSET, name="from")
    to: WindowTo | None | UnsetType = UNSET
    schedule: Schedule | None | UnsetType = UNSET
    timezone: Zone | None | UnsetType = UNSET
    duration_seconds: Seconds | None | UnsetType = UNSET
    jobs: Ids | UnsetType = UNSET
    monitors: Ids | UnsetType = UNSET
    tags: Tags | UnsetType = UNSET
    suppress: Suppress | UnsetType = UNSET
    comment: Comment | None | UnsetType = UNSET
    version: int | UnsetType = UNSET


class Snooze(Struct, forbid_unknown_fields=True):
    """Body of ``POST /v1/monitors/{id}/snooze``: ``for`` a duration (``"30m"``, ``"2h"``,
    ``"1d"``, or seconds), 1 minute to 30 days."""

    for_: SnoozeText | SnoozeFor = field(name="for")


class Maintenance(Struct):
    """A window. ``in_effect_until``: the end of the occurrence in effect now (``null``: not in
    effect); ``ended_at``: when it was ended early."""

    id: uuid.UUID
    from_: datetime | None = field(name="from")
    to: datetime | None
    schedule: str | None
    timezone: str | None
    duration_seconds: int | None
    jobs: list[uuid.UUID]
    monitors: list[uuid.UUID]
    tags: list[str]
    suppress: str
    comment: str | None
    ended_at: datetime | None
    in_effect_until: datetime | None
    version: int
    created_at: datetime
    updated_at: datetime


MaintenancePage = page_of(Maintenance)
