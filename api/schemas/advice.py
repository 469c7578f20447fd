"""Bodies of ``GET /v1/{monitors,jobs}/{id}/advice`` (docs/advice.md): the advisor's answer,
shaped from :class:`core.advice.answer.Advice`."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from msgspec import Meta, Struct

# A value as the PATCH body takes it: seconds or a count (an integer), a schedule (a string),
# or null (no bound).
Value = Annotated[int | str | None, Meta(
    description="seconds or a count (an integer), a schedule (a string), or null (unset)")]
Field = Annotated[str, Meta(
    description="the definition field: grace_seconds, alert_after_failures, "
                "recover_after_successes, min_duration, max_duration or schedule")]


class AdviceOutage(Struct):
    """A real outage of the window: an alert not cleared by the next check-in or run (it
    lasted more than one and a half periods) or still open at the window's end."""

    start: datetime
    end: datetime
    open: bool


class AdviceWhatIf(Struct):
    """The current value and the suggestion over the window, by the what-if replay: incidents
    each opens, the real outages and how many each alerts on, the false alarms of each and
    how many the suggestion avoids."""

    current_alerts: int
    suggested_alerts: int
    real_outages: int
    outages_alerted_current: int
    outages_alerted_suggested: int
    false_alarms_current: int
    false_alarms_suggested: int
    false_alarms_avoided: int
    outages: list[AdviceOutage]


class AdviceSuggestion(Struct):
    """A suggested change: apply it with the ordinary ``PATCH`` of the object, ``change``
    being that body."""

    field: Field
    current: Value
    suggested: Value
    reason: str
    what_if: AdviceWhatIf
    change: dict[str, Any]


class AdviceKept(Struct):
    """A field the advisor looked at and would not change, and why."""

    field: Field
    current: Value
    reason: str


class Advice(Struct, rename={"from_": "from"}):
    """Suggestions from the recorded history of the last ``days`` days (``[from, to]``), or
    only since the schedule last changed in them (``schedule_changed_at``, then ``from``);
    nothing is changed. ``insufficient`` says why nothing is suggested when the history is
    too short (``observations``: check-ins of a monitor, finished runs of a job)."""

    subject: Literal["monitor", "job"]
    id: uuid.UUID
    from_: datetime
    to: datetime
    days: int
    observations: int
    insufficient: str | None
    suggestions: list[AdviceSuggestion]
    kept: list[AdviceKept]
    schedule_changed_at: Annotated[datetime | None, Meta(
        description="when the schedule or its time zone last changed within the days asked "
                    "for: the history is read from then on (null: no change)")] = None
