"""Request and response bodies of the REST API (msgspec Structs, snake_case, RFC 3339 UTC).

Request fields carry the core's limits as msgspec ``Meta`` constraints, so that they appear in
the OpenAPI document (see :mod:`api.openapi`) and out-of-range input is a 422 before it reaches
the core, which checks the same limits again (and what a schema cannot say: schedules, zones,
URLs, NUL characters). A limit whose violation the core reports under a finer field path
(``request.headers.<name>``, ``success_statuses``) is only described (``extra_json_schema``).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from core import apikeys, secrets
from core.jobs import definition as jobdef
from core.monitors import definition as mondef
from core.notifications import channels as chandef

Schedule = Annotated[str, Meta(
    min_length=1, examples=["*/5 * * * *", "1h"],
    description="cron (5 or 6 fields), a macro, an interval or @at: see docs/schedules.md")]
Zone = Annotated[str, Meta(examples=["UTC", "Europe/Paris"], description="an IANA time zone")]
JobName = Annotated[str, Meta(min_length=1, max_length=jobdef.MAX_NAME)]
Url = Annotated[str, Meta(min_length=1, max_length=jobdef.MAX_URL,
                          examples=["https://example.com/hook"])]
HeaderValue = Annotated[str, Meta(extra_json_schema={"maxLength": jobdef.MAX_HEADER_VALUE})]
Headers = Annotated[dict[str, HeaderValue], Meta(
    max_length=jobdef.MAX_HEADERS,
    description="header names to values (set by cronledger and refused: "
                + ", ".join(jobdef.RESERVED_HEADERS) + ")",
    extra_json_schema={"propertyNames": {"pattern": jobdef.HEADER_NAME_PATTERN,
                                         "maxLength": jobdef.MAX_HEADER_NAME}})]
Body = Annotated[str, Meta(max_length=jobdef.MAX_BODY,
                           description=f"text, at most {jobdef.MAX_BODY} bytes as UTF-8")]
Method = Annotated[str, Meta(description="one of " + ", ".join(jobdef.METHODS)
                                         + " (any case)")]
Timeout = Annotated[float, Meta(ge=jobdef.MIN_TIMEOUT_SECONDS, le=jobdef.MAX_TIMEOUT_SECONDS)]
Attempts = Annotated[int, Meta(ge=1, le=jobdef.MAX_ATTEMPTS)]
Delay = Annotated[float, Meta(ge=0, le=jobdef.MAX_DELAY_SECONDS)]
Backoff = Annotated[str, Meta(description="one of " + ", ".join(jobdef.BACKOFFS)
                                          + "; another name means fixed")]
Overlap = Literal[jobdef.OVERLAP_POLICIES]  # type: ignore[valid-type]
Catchup = Literal[jobdef.CATCHUP_POLICIES]  # type: ignore[valid-type]
Channels = Annotated[list[uuid.UUID], Meta(max_length=jobdef.MAX_CHANNELS)]
AlertAfter = Annotated[int, Meta(ge=1, le=jobdef.MAX_ALERT_AFTER)]
RealertSeconds = Annotated[int, Meta(ge=jobdef.MIN_REALERT_SECONDS,
                                     le=jobdef.MAX_REALERT_SECONDS)]
Duration = Annotated[str, Meta(description="a duration such as 90s, 30m, 1h30m, 1d")]
Status = Annotated[int, Meta(extra_json_schema={"minimum": jobdef.MIN_STATUS,
                                                "maximum": jobdef.MAX_STATUS})]
SuccessStatuses = Annotated[list[Status], Meta(min_length=1,
                                               max_length=jobdef.MAX_SUCCESS_STATUSES)]
SigningSecret = Annotated[str, Meta(min_length=secrets.MIN_SIGNING_SECRET,
                                    max_length=secrets.MAX_SIGNING_SECRET)]
MonitorName = Annotated[str, Meta(min_length=1, max_length=mondef.MAX_NAME)]
Grace = Annotated[int, Meta(ge=1, le=mondef.MAX_GRACE_SECONDS)]
PingMethods = Annotated[str, Meta(description="one of " + ", ".join(mondef.METHODS)
                                              + " (any case)")]
ChannelName = Annotated[str, Meta(min_length=1, max_length=chandef.MAX_NAME)]
Kind = Literal[chandef.KINDS]  # type: ignore[valid-type]
ChannelUrl = Annotated[str, Meta(min_length=1, max_length=chandef.MAX_URL,
                                 examples=["https://example.com/hook"])]
WebhookSecret = Annotated[str, Meta(min_length=chandef.MIN_WEBHOOK_SECRET,
                                    max_length=chandef.MAX_WEBHOOK_SECRET)]
ChatId = Annotated[str, Meta(pattern=f"^({chandef.CHAT_ID_PATTERN})$")]
SecretName = Annotated[str, Meta(pattern=f"^{secrets.NAME_PATTERN}$",
                                 description="the name of a team secret")]
Recipients = Annotated[list[str], Meta(min_length=1, max_length=chandef.MAX_RECIPIENTS)]
SecretValue = Annotated[str, Meta(min_length=1, max_length=secrets.MAX_VALUE_BYTES,
                                  description=f"at most {secrets.MAX_VALUE_BYTES} bytes as UTF-8")]
Scope = Literal[apikeys.SCOPES]  # type: ignore[valid-type]
KeyName = Annotated[str, Meta(max_length=apikeys.MAX_KEY_NAME)]


class RequestSpec(Struct, forbid_unknown_fields=True):
    """The HTTP request a job sends."""

    url: Url
    method: Method = "GET"
    headers: Headers = {}
    body: Body | None = None


class RetrySpec(Struct, forbid_unknown_fields=True):
    """Retry policy: ``attempts`` 1–10; delays in seconds; unknown backoff names mean fixed."""

    attempts: Attempts = 1
    backoff: Backoff = "exponential"
    delay_seconds: Delay = 10.0
    max_delay_seconds: Delay = 300.0


class JobCreate(Struct, forbid_unknown_fields=True):
    """Body of ``POST /v1/jobs``. ``signing_secret`` is write-only: stored encrypted, never
    returned (responses say ``signing: true``)."""

    name: JobName
    schedule: Schedule
    request: RequestSpec
    timezone: Zone = "UTC"
    timeout_seconds: Timeout = 30.0
    retry: RetrySpec | None = None
    overlap: Overlap = "skip"
    catchup: Catchup = "latest"
    channels: Channels = []
    alert_after_failures: AlertAfter = 1
    realert_every: RealertSeconds | Duration | None = None
    paused: bool = False
    success_statuses: SuccessStatuses | None = None
    signing_secret: SigningSecret | None = None


class RequestPatch(Struct, forbid_unknown_fields=True):
    url: Url | UnsetType = UNSET
    method: Method | UnsetType = UNSET
    headers: Headers | UnsetType = UNSET
    body: Body | None | UnsetType = UNSET


class RetryPatch(Struct, forbid_unknown_fields=True):
    attempts: Attempts | UnsetType = UNSET
    backoff: Backoff | UnsetType = UNSET
    delay_seconds: Delay | UnsetType = UNSET
    max_delay_seconds: Delay | UnsetType = UNSET


class JobPatch(Struct, forbid_unknown_fields=True):
    """Body of ``PATCH /v1/jobs/{id}``: only the fields given change; ``version`` (optional)
    makes the update conditional on the job's current version (409 otherwise).
    ``success_statuses: null`` restores "any 2xx"; ``signing_secret: null`` stops signing."""

    name: JobName | UnsetType = UNSET
    schedule: Schedule | UnsetType = UNSET
    timezone: Zone | UnsetType = UNSET
    request: RequestPatch | UnsetType = UNSET
    timeout_seconds: Timeout | UnsetType = UNSET
    retry: RetryPatch | UnsetType = UNSET
    overlap: Overlap | UnsetType = UNSET
    catchup: Catchup | UnsetType = UNSET
    channels: Channels | UnsetType = UNSET
    alert_after_failures: AlertAfter | UnsetType = UNSET
    realert_every: RealertSeconds | Duration | None | UnsetType = UNSET
    paused: bool | UnsetType = UNSET
    success_statuses: SuccessStatuses | None | UnsetType = UNSET
    signing_secret: SigningSecret | None | UnsetType = UNSET
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
    scope: Scope = "write"
    name: KeyName = ""


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

    value: SecretValue


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

    name: ChannelName
    kind: Kind
    url: ChannelUrl | None = None
    signing_secret: WebhookSecret | None = None
    chat_id: int | ChatId | None = None
    token_secret: SecretName | None = None
    to: Recipients | str | None = None
    smtp: dict[str, Any] | None = None


class ChannelPatch(Struct, forbid_unknown_fields=True):
    """Body of ``PATCH /v1/channels/{id}``: given fields replace the stored ones."""

    name: ChannelName | UnsetType = UNSET
    kind: Kind | UnsetType = UNSET
    url: ChannelUrl | UnsetType = UNSET
    signing_secret: WebhookSecret | UnsetType = UNSET
    chat_id: int | ChatId | UnsetType = UNSET
    token_secret: SecretName | UnsetType = UNSET
    to: Recipients | str | UnsetType = UNSET
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

    name: MonitorName
    schedule: Schedule
    timezone: Zone = "UTC"
    grace_seconds: Grace = 300
    methods: PingMethods = "any"
    manual_resume: bool = False
    channels: Channels = []
    realert_every: RealertSeconds | Duration | None = None


class MonitorPatch(Struct, forbid_unknown_fields=True):
    """Body of ``PATCH /v1/monitors/{id}``: only the fields given change; ``version`` (optional)
    makes the update conditional on the monitor's current version (409 otherwise)."""

    name: MonitorName | UnsetType = UNSET
    schedule: Schedule | UnsetType = UNSET
    timezone: Zone | UnsetType = UNSET
    grace_seconds: Grace | UnsetType = UNSET
    methods: PingMethods | UnsetType = UNSET
    manual_resume: bool | UnsetType = UNSET
    channels: Channels | UnsetType = UNSET
    realert_every: RealertSeconds | Duration | None | UnsetType = UNSET
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
