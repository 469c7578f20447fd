"""Bodies of ``/v1/jobs``: the job to create or patch, and the job as shown."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from api.schemas.common import (
    JOB_URL_DOC,
    URL_FORMAT,
    Channels,
    DependsOn,
    RealertSeconds,
    RealertText,
    RunBound,
    Schedule,
    Spread,
    Tags,
    Zone,
    any_case,
    page_of,
)
from core import secrets
from core.alerting import MAX_ALERT_AFTER
from core.durations import NOT_BLANK_PATTERN
from core.jobs import definition as jobdef

JobName = Annotated[str, Meta(min_length=1, max_length=jobdef.MAX_NAME,
                              extra_json_schema={"pattern": NOT_BLANK_PATTERN})]
Url = Annotated[str, Meta(min_length=1, max_length=jobdef.MAX_URL,
                          examples=["https://example.com/hook"], description=JOB_URL_DOC,
                          extra_json_schema={"format": URL_FORMAT})]
HeaderValue = Annotated[str, Meta(extra_json_schema={
    "maxLength": jobdef.MAX_HEADER_VALUE, "pattern": jobdef.HEADER_VALUE_PATTERN})]
Headers = Annotated[dict[str, HeaderValue], Meta(
    max_length=jobdef.MAX_HEADERS,
    description="header names to values (set by cronledger and refused: "
                + ", ".join(jobdef.RESERVED_HEADERS) + ")",
    extra_json_schema={"propertyNames": {"pattern": jobdef.HEADER_NAME_PATTERN,
                                         "maxLength": jobdef.MAX_HEADER_NAME,
                                         "not": {"pattern": any_case(*jobdef.RESERVED_HEADERS)}}})]
Body = Annotated[str, Meta(max_length=jobdef.MAX_BODY,
                           description=f"text, at most {jobdef.MAX_BODY} characters (Unicode code "
                                       f"points, as maxLength counts them; sent as UTF-8, up "
                                       f"to 4 bytes each)")]
Method = Annotated[str, Meta(description="one of " + ", ".join(jobdef.METHODS)
                                         + f" (any case; empty: {jobdef.DEFAULT_METHOD})",
                             extra_json_schema={"pattern": any_case("", *jobdef.METHODS)})]
Timeout = Annotated[float, Meta(ge=jobdef.MIN_TIMEOUT_SECONDS, le=jobdef.MAX_TIMEOUT_SECONDS)]
Attempts = Annotated[int, Meta(ge=1, le=jobdef.MAX_ATTEMPTS)]
Delay = Annotated[float, Meta(ge=0, le=jobdef.MAX_DELAY_SECONDS)]
Backoff = Annotated[str, Meta(description="one of " + ", ".join(jobdef.BACKOFFS)
                                          + "; another name means fixed")]
Overlap = Literal[jobdef.OVERLAP_POLICIES]  # type: ignore[valid-type]  # Literal of a runtime tuple
Catchup = Literal[jobdef.CATCHUP_POLICIES]  # type: ignore[valid-type]  # Literal of a runtime tuple
AlertAfter = Annotated[int, Meta(ge=1, le=MAX_ALERT_AFTER)]
AlertOn = Annotated[
    list[Literal[jobdef.ALERT_ON]],  # type: ignore[valid-type]  # Literal of a runtime tuple
    Meta(max_length=len(jobdef.ALERT_ON), extra_json_schema={"uniqueItems": True},
         description="the slots that did not run to alert for: skipped (overlap), missed "
                     "(catch-up), held (maintenance); [] for none")]
Status = Annotated[int, Meta(extra_json_schema={"minimum": jobdef.MIN_STATUS,
                                                "maximum": jobdef.MAX_STATUS})]
SuccessStatuses = Annotated[list[Status], Meta(min_length=1,
                                               max_length=jobdef.MAX_SUCCESS_STATUSES)]
SigningSecret = Annotated[str, Meta(min_length=secrets.MIN_SIGNING_SECRET,
                                    max_length=secrets.MAX_SIGNING_SECRET)]


class RequestSpec(Struct, forbid_unknown_fields=True):
    """The HTTP request a job sends."""

    url: Url
    method: Method = jobdef.DEFAULT_METHOD
    headers: Headers = {}
    body: Body | None = None


class RetrySpec(Struct, forbid_unknown_fields=True):
    """Retry policy: ``attempts`` 1–10; delays in seconds; unknown backoff names mean fixed."""

    attempts: Attempts = jobdef.DEFAULT_RETRY["attempts"]
    backoff: Backoff = jobdef.DEFAULT_RETRY["backoff"]
    delay_seconds: Delay = jobdef.DEFAULT_RETRY["delay_seconds"]
    max_delay_seconds: Delay = jobdef.DEFAULT_RETRY["max_delay_seconds"]


ConfirmSeconds = Annotated[int, Meta(ge=jobdef.MIN_CONFIRM_SECONDS,
                                     le=jobdef.MAX_CONFIRM_SECONDS)]


class ConfirmSpec(Struct, forbid_unknown_fields=True):
    """Fire-and-confirm (docs/ledger.md): after a 2xx the run waits up to
    ``timeout_seconds`` for its confirmation URL to be pinged, else it fails ``unconfirmed``."""

    timeout_seconds: ConfirmSeconds


class JobCreate(Struct, forbid_unknown_fields=True):
    """Body of ``POST /v1/jobs``. ``signing_secret`` is write-only: stored encrypted, never
    returned (responses say ``signing: true``)."""

    name: JobName
    schedule: Schedule
    request: RequestSpec
    timezone: Zone = jobdef.DEFAULTS["timezone"]
    timeout_seconds: Timeout = jobdef.DEFAULT_TIMEOUT_SECONDS
    retry: RetrySpec | None = None
    overlap: Overlap = jobdef.DEFAULTS["overlap"]
    catchup: Catchup = jobdef.DEFAULTS["catchup"]
    channels: Channels = []
    alert_after_failures: AlertAfter = jobdef.DEFAULTS["alert_after_failures"]
    recover_after_successes: AlertAfter = 1
    realert_every: RealertSeconds | RealertText | None = None
    alert_on: AlertOn = []
    depends_on: DependsOn = []
    min_duration: RunBound = None
    max_duration: RunBound = None
    spread: Spread = None
    tags: Tags = []
    paused: bool = False
    success_statuses: SuccessStatuses | None = None
    signing_secret: SigningSecret | None = None
    confirm: ConfirmSpec | None = None


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


class JobRulesPatch(Struct, forbid_unknown_fields=True):
    """A job's alert rules, each optional (absent: unchanged): the shared part of
    :class:`JobPatch` and of a simulation's proposed changes
    (:class:`api.schemas.ledger.JobChanges`)."""

    alert_after_failures: AlertAfter | UnsetType = UNSET
    recover_after_successes: AlertAfter | UnsetType = UNSET
    realert_every: RealertSeconds | RealertText | None | UnsetType = UNSET
    alert_on: AlertOn | UnsetType = UNSET
    depends_on: DependsOn | UnsetType = UNSET
    min_duration: RunBound | UnsetType = UNSET
    max_duration: RunBound | UnsetType = UNSET


class JobPatch(JobRulesPatch, forbid_unknown_fields=True):
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
    spread: Spread | UnsetType = UNSET
    channels: Channels | UnsetType = UNSET
    tags: Tags | UnsetType = UNSET
    paused: bool | UnsetType = UNSET
    success_statuses: SuccessStatuses | None | UnsetType = UNSET
    signing_secret: SigningSecret | None | UnsetType = UNSET
    confirm: ConfirmSpec | None | UnsetType = UNSET
    version: int | UnsetType = UNSET


class Job(Struct):
    id: uuid.UUID
    name: str
    schedule: str
    schedule_description: str
    schedule_text: str | None
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
    tags: list[str] = []
    alert_on: list[str] = []
    depends_on: list[uuid.UUID] = []
    min_duration: int | None = None
    max_duration: int | None = None
    recover_after_successes: int = 1
    spread: int | None = None
    spread_offset_seconds: int = 0  # core/schedule/spread.py; next_run_at includes it
    in_maintenance_until: datetime | None = None  # docs/ledger.md
    confirm: dict[str, int] | None = None


JobPage = page_of(Job)
