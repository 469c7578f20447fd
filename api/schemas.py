"""Request and response bodies of the REST API (msgspec Structs, snake_case, RFC 3339 UTC)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import msgspec
from msgspec import UNSET, Struct, UnsetType


class RequestSpec(Struct, forbid_unknown_fields=True):
    """The HTTP request a job sends."""

    url: str
    method: str = "GET"
    headers: dict[str, str] = {}
    body: str | None = None


class RetrySpec(Struct, forbid_unknown_fields=True):
    """Retry policy: ``attempts`` 1–10; delays in seconds; unknown backoff names mean fixed."""

    attempts: int = 1
    backoff: str = "exponential"
    delay_seconds: float = 10.0
    max_delay_seconds: float = 300.0


class JobCreate(Struct, forbid_unknown_fields=True):
    """Body of ``POST /v1/jobs``. ``signing_secret`` is write-only: stored encrypted, never
    returned (responses say ``signing: true``)."""

    name: str
    schedule: str
    request: RequestSpec
    timezone: str = "UTC"
    timeout_seconds: float = 30.0
    retry: RetrySpec | None = None
    overlap: str = "skip"
    catchup: str = "latest"
    channels: list[uuid.UUID] = []
    alert_after_failures: int = 1
    realert_every: int | str | None = None
    paused: bool = False
    success_statuses: list[int] | None = None
    signing_secret: str | None = None


class RequestPatch(Struct, forbid_unknown_fields=True):
    url: str | UnsetType = UNSET
    method: str | UnsetType = UNSET
    headers: dict[str, str] | UnsetType = UNSET
    body: str | None | UnsetType = UNSET


class RetryPatch(Struct, forbid_unknown_fields=True):
    attempts: int | UnsetType = UNSET
    backoff: str | UnsetType = UNSET
    delay_seconds: float | UnsetType = UNSET
    max_delay_seconds: float | UnsetType = UNSET


class JobPatch(Struct, forbid_unknown_fields=True):
    """Body of ``PATCH /v1/jobs/{id}``: only the fields given change; ``version`` (optional)
    makes the update conditional on the job's current version (409 otherwise).
    ``success_statuses: null`` restores "any 2xx"; ``signing_secret: null`` stops signing."""

    name: str | UnsetType = UNSET
    schedule: str | UnsetType = UNSET
    timezone: str | UnsetType = UNSET
    request: RequestPatch | UnsetType = UNSET
    timeout_seconds: float | UnsetType = UNSET
    retry: RetryPatch | UnsetType = UNSET
    overlap: str | UnsetType = UNSET
    catchup: str | UnsetType = UNSET
    channels: list[uuid.UUID] | UnsetType = UNSET
    alert_after_failures: int | UnsetType = UNSET
    realert_every: int | str | None | UnsetType = UNSET
    paused: bool | UnsetType = UNSET
    success_statuses: list[int] | None | UnsetType = UNSET
    signing_secret: str | None | UnsetType = UNSET
    version: int | UnsetType = UNSET


def given_fields(struct: Struct) -> dict[str, Any]:
    """The fields of a patch Struct that were present in the body, nested Structs as dicts."""
    out: dict[str, Any] = {}
    for name in struct.__struct_fields__:
        value = getattr(struct, name)
        if value is UNSET:
            continue
        out[name] = given_fields(value) if isinstance(value, Struct) else value
    return out


class Job(Struct):
    id: uuid.UUID
    name: str
    schedule: str
    schedule_description: str
    timezone: str
    request: dict[str, Any]
    timeout_seconds: float
    retry: dict[str, Any]
    overlap: str
    catchup: str
    success_statuses: list[int] | None
    signing: bool
    channels: list[uuid.UUID]
    alert_after_failures: int
    realert_every: int | None
    status: str
    next_run_at: datetime | None
    broken_at: datetime | None
    broken_reason: str | None
    version: int
    created_at: datetime
    updated_at: datetime


class Run(Struct):
    id: uuid.UUID
    job_id: uuid.UUID
    scheduled_for: datetime
    trigger: str
    status: str
    attempt: int
    max_attempts: int
    available_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    lateness_ms: int | None
    duration_ms: int | None
    response_status: int | None
    error_class: str | None
    error: str | None
    reason: str | None
    created_at: datetime


class Attempt(Struct):
    """One HTTP attempt: the request as recorded (secrets as placeholders), the response
    (``status``, ``headers``, ``body``, ``body_encoding`` utf-8|base64, ``truncated``) or
    ``None`` when none arrived, and the error class and message of a failure."""

    attempt: int
    started_at: datetime
    finished_at: datetime
    duration_ms: int
    lateness_ms: int | None
    worker_id: str | None
    request: dict[str, Any]
    response: dict[str, Any] | None
    error_class: str | None
    error: str | None


class RunDetail(Run):
    attempts: list[Attempt] = []


class Event(Struct):
    global_position: int
    event_id: uuid.UUID
    event_type: str
    stream_type: str
    stream_id: uuid.UUID
    stream_version: int
    occurred_at: datetime
    recorded_at: datetime
    data: dict[str, Any]
    metadata: dict[str, Any]


class JobPage(Struct):
    items: list[Job]
    next_cursor: str | None


class RunPage(Struct):
    items: list[Run]
    next_cursor: str | None


class EventPage(Struct):
    items: list[Event]
    next_cursor: str | None


class ApiKeyCreate(Struct, forbid_unknown_fields=True):
    scope: str = "write"
    name: str = ""


class ApiKey(Struct):
    id: uuid.UUID
    name: str
    prefix: str
    scope: str
    created_at: datetime
    key: str | None = None


class ApiKeyList(Struct):
    items: list[ApiKey]
    next_cursor: str | None


class SecretPut(Struct, forbid_unknown_fields=True):
    """Body of ``PUT /v1/secrets/{name}``: the value, write-only."""

    value: str


class Secret(Struct):
    """A secret as listed: never its value."""

    name: str
    created_at: datetime
    updated_at: datetime


class SecretPage(Struct):
    items: list[Secret]
    next_cursor: str | None


class ChannelCreate(Struct, forbid_unknown_fields=True):
    """Body of ``POST /v1/channels``: ``name``, ``kind`` and the kind's own fields
    (checked by :func:`core.notifications.channels.normalize_channel`)."""

    name: str
    kind: str
    url: str | None = None
    signing_secret: str | None = None
    chat_id: int | str | None = None
    token_secret: str | None = None
    to: list[str] | str | None = None
    smtp: dict[str, Any] | None = None


class ChannelPatch(Struct, forbid_unknown_fields=True):
    """Body of ``PATCH /v1/channels/{id}``: given fields replace the stored ones."""

    name: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    url: str | UnsetType = UNSET
    signing_secret: str | UnsetType = UNSET
    chat_id: int | str | UnsetType = UNSET
    token_secret: str | UnsetType = UNSET
    to: list[str] | str | UnsetType = UNSET
    smtp: dict[str, Any] | None | UnsetType = UNSET
    version: int | UnsetType = UNSET


class Channel(Struct, omit_defaults=True):
    """A channel as shown: URLs redacted to scheme and host, secrets never shown (except a
    generated webhook ``signing_secret``, once, in the create response)."""

    id: uuid.UUID
    name: str
    kind: str
    version: int
    created_at: datetime
    updated_at: datetime
    url: str | None = None
    signing_secret: str | None = None
    chat_id: str | None = None
    token_secret: str | None = None
    to: list[str] | None = None
    smtp: dict[str, Any] | None = None


class ChannelPage(Struct):
    items: list[Channel]
    next_cursor: str | None


class ChannelTestResult(Struct):
    """What the provider answered to the test message."""

    ok: bool
    status: int | None
    answer: str | None
    error_class: str | None
    error: str | None
    duration_ms: int


class Notification(Struct):
    """One outbox row: an alert for one channel and its delivery state."""

    id: uuid.UUID
    channel_id: uuid.UUID
    subject_type: str
    subject_id: uuid.UUID
    event: str
    status: str
    attempt: int
    max_attempts: int
    available_at: datetime | None
    last_error_class: str | None
    last_error: str | None
    last_response_status: int | None
    last_response_body: str | None
    created_at: datetime
    sent_at: datetime | None
    finished_at: datetime | None
    message: dict[str, Any]


class NotificationPage(Struct):
    items: list[Notification]
    next_cursor: str | None


# -- reporting (dashboard, job stats, monitor uptime) -----------------------------------------
class JobCounts(Struct):
    active: int
    paused: int
    completed: int
    failing: int


class MonitorCounts(Struct):
    new: int
    up: int
    late: int
    down: int
    paused: int


class RunCounts(Struct):
    succeeded: int
    failed: int
    skipped: int
    missed: int
    total: int


class FailingJob(Struct):
    id: uuid.UUID
    name: str
    status: str
    last_failure_at: datetime | None
    last_error_class: str | None
    last_error: str | None
    consecutive_failures: int


class DownMonitor(Struct):
    id: uuid.UUID
    name: str
    down_since: datetime | None
    last_ping_at: datetime | None


class ProjectionState(Struct):
    global_position: int
    updated_at: datetime


class Dashboard(Struct):
    """``GET /v1/dashboard``: from the asynchronous read models (``projection`` tells how far
    they are)."""

    jobs: JobCounts
    monitors: MonitorCounts
    runs_24h: RunCounts
    failing_jobs: list[FailingJob]
    down_monitors: list[DownMonitor]
    projection: ProjectionState


class Percentiles(Struct):
    p50: int | None
    p95: int | None


class StatsBucket(Struct):
    runs: int
    succeeded: int
    failed: int
    skipped: int
    missed: int
    retries: int
    success_rate: float | None
    duration_ms: Percentiles
    lateness_ms: Percentiles
    bucket_start: datetime | None = None


class JobStats(Struct, rename={"from_": "from"}):
    job_id: uuid.UUID
    bucket: str
    from_: datetime
    to: datetime
    items: list[StatsBucket]
    totals: StatsBucket


class DowntimePeriod(Struct):
    started_at: datetime
    ended_at: datetime | None
    duration_seconds: float
    end_reason: str | None


class MonitorUptime(Struct, rename={"from_": "from"}):
    monitor_id: uuid.UUID
    from_: datetime
    to: datetime
    status: str | None
    monitored_seconds: float
    downtime_seconds: float
    uptime_percent: float | None
    downtime_periods: list[DowntimePeriod]


def from_row(cls: type[Struct], row: dict[str, Any]) -> Any:
    """Build a response Struct from a database row, ignoring extra columns."""
    return msgspec.convert({k: row[k] for k in cls.__struct_fields__ if k in row}, cls,
                           from_attributes=False)


class MonitorCreate(Struct, forbid_unknown_fields=True):
    """Body of ``POST /v1/monitors``: ``schedule`` is a period (``1h``, ``@every 90s``) or cron;
    ``grace_seconds`` 1 s to 366 days; ``methods`` ``any`` | ``post``; ``channels``: ids of the
    team's channels notified when it goes down and comes back up; ``realert_every``: seconds or
    ``"1h"``-style (60 s to 30 days) between re-alerts while down (``null``: none)."""

    name: str
    schedule: str
    timezone: str = "UTC"
    grace_seconds: int = 300
    methods: str = "any"
    manual_resume: bool = False
    channels: list[uuid.UUID] = []
    realert_every: int | str | None = None


class MonitorPatch(Struct, forbid_unknown_fields=True):
    """Body of ``PATCH /v1/monitors/{id}``: only the fields given change; ``version`` (optional)
    makes the update conditional on the monitor's current version (409 otherwise)."""

    name: str | UnsetType = UNSET
    schedule: str | UnsetType = UNSET
    timezone: str | UnsetType = UNSET
    grace_seconds: int | UnsetType = UNSET
    methods: str | UnsetType = UNSET
    manual_resume: bool | UnsetType = UNSET
    channels: list[uuid.UUID] | UnsetType = UNSET
    realert_every: int | str | None | UnsetType = UNSET
    version: int | UnsetType = UNSET


class Monitor(Struct):
    """A monitor. ``ping_token`` and ``ping_url`` are present only in the response that minted
    the token (create, rotate-token): only the token's hash is stored."""

    id: uuid.UUID
    name: str
    schedule: str
    schedule_description: str
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


class MonitorPage(Struct):
    items: list[Monitor]
    next_cursor: str | None


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


class PingPage(Struct):
    items: list[PingRecord]
    next_cursor: str | None
