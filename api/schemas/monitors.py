"""Bodies of ``/v1/monitors``: the monitor to create or patch, the monitor as shown, its pings."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from msgspec import UNSET, Meta, Struct, UnsetType

from api.schemas.common import (
    Channels,
    DependsOn,
    RealertSeconds,
    RealertText,
    RepeatingSchedule,
    RunBound,
    Slug,
    Tags,
    Zone,
    any_case,
    page_of,
)
from core.alerting import MAX_ALERT_AFTER
from core.durations import NOT_BLANK_PATTERN
from core.monitors import definition as mondef

MonitorName = Annotated[str, Meta(min_length=1, max_length=mondef.MAX_NAME,
                                  extra_json_schema={"pattern": NOT_BLANK_PATTERN})]
Grace = Annotated[int, Meta(ge=1, le=mondef.MAX_GRACE_SECONDS)]
PingMethods = Annotated[str, Meta(description="one of " + ", ".join(mondef.METHODS)
                                              + " (any case)",
                                  extra_json_schema={"pattern": any_case(*mondef.METHODS)})]
Keyword = Annotated[str, Meta(min_length=1, max_length=mondef.MAX_KEYWORD,
                              extra_json_schema={"pattern": mondef.KEYWORD_PATTERN})]
Keywords = Annotated[list[Keyword], Meta(
    max_length=mondef.MAX_KEYWORDS,
    description="case-sensitive keywords searched in HTTP ping bodies (healthchecks' *_kw "
                "with filter_http_body); no comma, no white space at either end")]
Threshold = Annotated[int, Meta(ge=1, le=MAX_ALERT_AFTER, description=(
    "failure tolerance: a whole number of pings or slots in a row, 1 to "
    f"{MAX_ALERT_AFTER} (docs/notifications.md, Failure tolerance)"))]


class MonitorCreate(Struct, forbid_unknown_fields=True):
    """Body of ``POST /v1/monitors``: ``schedule`` is a period (``1h``, ``@every 90s``) or cron;
    ``grace_seconds`` 1 s to 366 days; ``methods`` ``any`` | ``post``; ``channels``: ids of the
    team's channels notified when it goes down and comes back up; ``realert_every``: seconds or
    ``"1h"``-style (60 s to 30 days) between re-alerts while down (``null``: none); ``slug``: its
    name in ``/ping/<ping-key>/<slug>`` (default: derived from ``name``, docs/healthchecks.md);
    ``tags``: short words for badges and metrics; ``min_duration`` / ``max_duration``: the
    run-time bounds between ``/start`` and its end (docs/heartbeats.md, *Run-time bounds*);
    ``start_keywords``, ``success_keywords``, ``failure_keywords``: with any, a ping's body
    decides its action (docs/heartbeats.md, *Keywords in ping bodies*);
    ``alert_after_failures`` / ``recover_after_successes``: alert after that many failed pings
    or missed slots in a row, say ``up`` after that many good pings in a row
    (docs/notifications.md, *Failure tolerance*)."""

    name: MonitorName
    schedule: RepeatingSchedule
    timezone: Zone = mondef.DEFAULTS["timezone"]
    grace_seconds: Grace = mondef.DEFAULT_GRACE_SECONDS
    methods: PingMethods = mondef.DEFAULTS["methods"]
    manual_resume: bool = mondef.DEFAULTS["manual_resume"]
    channels: Channels = []
    realert_every: RealertSeconds | RealertText | None = None
    slug: Slug | None = None
    tags: Tags = []
    min_duration: RunBound = None
    max_duration: RunBound = None
    start_keywords: Keywords = []
    success_keywords: Keywords = []
    failure_keywords: Keywords = []
    alert_after_failures: Threshold = 1
    recover_after_successes: Threshold = 1
    depends_on: DependsOn = []


class MonitorPatch(Struct, forbid_unknown_fields=True):
    """Body of ``PATCH /v1/monitors/{id}``: only the fields given change; ``version`` (optional)
    makes the update conditional on the monitor's current version (409 otherwise)."""

    name: MonitorName | UnsetType = UNSET
    schedule: RepeatingSchedule | UnsetType = UNSET
    timezone: Zone | UnsetType = UNSET
    grace_seconds: Grace | UnsetType = UNSET
    methods: PingMethods | UnsetType = UNSET
    manual_resume: bool | UnsetType = UNSET
    channels: Channels | UnsetType = UNSET
    realert_every: RealertSeconds | RealertText | None | UnsetType = UNSET
    version: int | UnsetType = UNSET
    slug: Slug | None | UnsetType = UNSET
    tags: Tags | UnsetType = UNSET
    min_duration: RunBound | UnsetType = UNSET
    max_duration: RunBound | UnsetType = UNSET
    start_keywords: Keywords | UnsetType = UNSET
    success_keywords: Keywords | UnsetType = UNSET
    failure_keywords: Keywords | UnsetType = UNSET
    alert_after_failures: Threshold | UnsetType = UNSET
    recover_after_successes: Threshold | UnsetType = UNSET
    depends_on: DependsOn | UnsetType = UNSET


class Monitor(Struct):
    """A monitor. ``ping_token`` and ``ping_url``: its current ping token and URL, for write
    keys, whenever the server keeps it (a secret key is configured; docs/heartbeats.md, *The
    ping URL*); otherwise only in the answer that minted it (create, rotate-token), and
    ``ping_url_note`` says why. Read keys never see them."""

    id: uuid.UUID
    name: str
    schedule: str
    schedule_description: str
    schedule_text: str | None
    timezone: str
    grace_seconds: int
    methods: str
    manual_resume: bool
    channels: list[uuid.UUID]
    realert_every: int | None
    status: str
    ping_url: str | None
    ping_token: str | None
    last_ping_at: datetime | None
    last_start_at: datetime | None
    last_duration_ms: int | None
    next_expected_at: datetime | None
    alert_at: datetime | None
    broken_at: datetime | None
    broken_reason: str | None
    version: int
    created_at: datetime
    updated_at: datetime
    slug: str | None = None
    tags: list[str] = []
    min_duration: int | None = None
    max_duration: int | None = None
    start_keywords: list[str] = []
    success_keywords: list[str] = []
    failure_keywords: list[str] = []
    alert_after_failures: int = 1
    recover_after_successes: int = 1
    depends_on: list[uuid.UUID] = []
    in_maintenance_until: datetime | None = None  # docs/ledger.md
    ping_url_note: str | None = None


class PingRecord(Struct):
    """One received ping (``version``: the stream version of its ``monitor.pinged`` event);
    ``body`` is UTF-8 text, or base64 when it is not text."""

    version: int
    received_at: datetime
    kind: str
    method: str
    exit_status: int | None
    rid: uuid.UUID | None
    remote_addr: str | None
    user_agent: str | None
    body: str | None
    body_encoding: str | None
    body_size: int
    body_truncated: bool
    duration_ms: int | None


MonitorPage = page_of(Monitor)
PingPage = page_of(PingRecord, "PingPage")
