"""What a replay may propose: the one table of ``changes`` keys and how each is validated.

A proposal overrides part of the definition for the whole replayed window; ``{}`` replays the
definition as it was (recorded edits included). Each key is listed once, in
:data:`MONITOR_CHANGES` or :data:`JOB_CHANGES`, with the validator of its group: a
``definition`` key is validated with the concept's own ``normalize_*`` (merged with the
current definition, so a ``timezone`` is checked against the ``schedule`` it goes with) and
overrides the field of the same name in every replayed state. A key that is not a definition
field gets its own validator here, ``(value, now) -> canonical value``, and reaches the replay
in :attr:`Proposal.extras`: ``maintenance`` (proposed windows, each validated by
:func:`core.maintenance.definition.normalize_window`, the rule of ``POST /v1/maintenance``, its
subject implicit) and ``recorded_maintenance`` (``keep`` or ``ignore`` the windows that existed;
default ``keep`` unless ``maintenance`` is given, which then replaces them). docs/ledger.md,
*What-if replay*.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.errors import FieldError, InvalidInput, invalid
from core.jobs.definition import normalize_alert_rules
from core.maintenance.definition import FIELDS as WINDOW_FIELDS
from core.maintenance.definition import normalize_window
from core.monitors.definition import DEFINITION_FIELDS as MONITOR_FIELDS
from core.monitors.definition import normalize_definition as normalize_monitor

DEFINITION = "definition"  # the group of keys that override definition fields

MAX_PROPOSED_WINDOWS = 100
SELECTOR = ("jobs", "monitors", "tags")  # implicit in a proposal: the simulated subject
RECORDED = ("keep", "ignore")


def proposed_windows(value: Any, now: datetime) -> list[dict[str, Any]]:
    """``changes.maintenance``: a list of window definitions in the shape of ``POST
    /v1/maintenance`` bodies without the selector, each validated by
    :func:`core.maintenance.definition.normalize_window` (anchored at ``now``); returns them
    canonical, without the selector keys.

    Raises:
        InvalidInput: on ``maintenance.<i>.<field>``.
    """
    if not isinstance(value, list | tuple) or len(value) > MAX_PROPOSED_WINDOWS:
        raise invalid("maintenance", f"must be a list of at most {MAX_PROPOSED_WINDOWS} "
                                     "maintenance windows")
    out: list[dict[str, Any]] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise invalid(f"maintenance.{i}", "must be a maintenance window object")
        for key in sorted(item):
            if key in SELECTOR:
                raise invalid(f"maintenance.{i}.{key}",
                              "cannot be given: a proposed window covers the simulated subject")
            if key not in WINDOW_FIELDS:
                raise invalid(f"maintenance.{i}.{key}", "is not a maintenance window field")
        try:
            window = normalize_window(item, anchor=now)
        except InvalidInput as exc:
            errors = [FieldError(f"maintenance.{i}.{e.field}", e.message) for e in exc.errors]
            raise InvalidInput("; ".join(f"{e.field}: {e.message}" for e in errors),
                               errors) from None
        out.append({k: v for k, v in window.items() if k not in SELECTOR})
    return out


def recorded_maintenance(value: Any, now: datetime) -> str:
    """``changes.recorded_maintenance``: ``keep`` or ``ignore``."""
    if value not in RECORDED:
        raise invalid("recorded_maintenance", f"must be one of {', '.join(RECORDED)}")
    return str(value)


# key -> its group: ``definition``, or a validator ``(value, now) -> canonical value``.
Validator = Callable[[Any, datetime], Any]
MONITOR_CHANGES: dict[str, str | Validator] = {
    "schedule": DEFINITION,
    "timezone": DEFINITION,
    "grace_seconds": DEFINITION,
    "methods": DEFINITION,
    "min_duration": DEFINITION,
    "max_duration": DEFINITION,
    "start_keywords": DEFINITION,
    "success_keywords": DEFINITION,
    "failure_keywords": DEFINITION,
    "alert_after_failures": DEFINITION,
    "recover_after_successes": DEFINITION,
    "depends_on": DEFINITION,
    "maintenance": proposed_windows,
    "recorded_maintenance": recorded_maintenance,
}
JOB_CHANGES: dict[str, str | Validator] = {
    "alert_after_failures": DEFINITION,
    "recover_after_successes": DEFINITION,
    "realert_every": DEFINITION,
    "alert_on": DEFINITION,
    "min_duration": DEFINITION,
    "max_duration": DEFINITION,
    "depends_on": DEFINITION,
    "maintenance": proposed_windows,
    "recorded_maintenance": recorded_maintenance,
}


@dataclass(frozen=True)
class Proposal:
    """A validated proposal.

    Attributes:
        overrides: definition fields (canonical values) that replace the recorded ones in
            every replayed state; a monitor's ``period_seconds`` follows its ``schedule``.
        extras: validated keys that are not definition fields, by key.
    """

    overrides: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)

    def apply(self, state: Any) -> Any:
        """``state`` (a stream's frozen state, or a row dict) with the overrides."""
        if isinstance(state, dict):
            return {**state, **self.overrides}
        return dataclasses.replace(state, **self.overrides)

    def shown(self) -> dict[str, Any]:
        """The proposal as answered: the canonical value of each key given."""
        return {**{k: v for k, v in self.overrides.items() if k != "period_seconds"},
                **self.extras}

    @property
    def keeps_recorded_maintenance(self) -> bool:
        """Whether the windows recorded in the replayed period apply to the proposal: yes
        unless ``maintenance`` is proposed (it replaces them), ``recorded_maintenance`` says."""
        default = "ignore" if "maintenance" in self.extras else "keep"
        recorded: str = self.extras.get("recorded_maintenance", default)  # "keep" or "ignore"
        return recorded == "keep"

    @property
    def windows(self) -> list[dict[str, Any]]:
        """The proposed maintenance windows (canonical, :func:`proposed_windows`)."""
        return list(self.extras.get("maintenance", ()))


def _prefixed(exc: InvalidInput) -> InvalidInput:
    errors = [FieldError(f"changes.{e.field}", e.message) for e in exc.errors]
    return InvalidInput("; ".join(f"{e.field}: {e.message}" for e in errors), errors)


def _split(changes: dict[str, Any], table: dict[str, str | Validator], now: datetime
           ) -> tuple[dict[str, Any], dict[str, Any]]:
    unknown = sorted(set(changes) - set(table))
    if unknown:
        raise invalid(f"changes.{unknown[0]}",
                      f"cannot be proposed: use {', '.join(table)}")
    definition = {k: v for k, v in changes.items() if table[k] == DEFINITION}
    extras = {}
    for key, value in changes.items():
        check = table[key]
        if check != DEFINITION:
            assert callable(check)
            try:
                extras[key] = check(value, now)
            except InvalidInput as exc:
                raise _prefixed(exc) from None
    return definition, extras


def monitor_proposal(changes: dict[str, Any], current: dict[str, Any],
                     now: datetime) -> Proposal:
    """Validate a monitor proposal against the ``current`` definition (a folded state).

    Raises:
        InvalidInput: an unknown key, or a value the monitor definition rules refuse (fields
            named ``changes.<key>``).
    """
    definition, extras = _split(changes, MONITOR_CHANGES, now)
    if not definition:
        return Proposal({}, extras)
    merged = {key: current.get(key) for key in MONITOR_FIELDS} | definition
    try:
        normal = normalize_monitor(merged, now=now)
    except InvalidInput as exc:
        raise _prefixed(exc) from None
    overrides = {key: normal[key] for key in definition}
    if "schedule" in definition:
        overrides["period_seconds"] = normal["period_seconds"]
    return Proposal(overrides, extras)


def job_proposal(changes: dict[str, Any], now: datetime,
                 current: dict[str, Any] | None = None) -> Proposal:
    """Validate a job proposal (its alert rules, against the ``current`` definition: a folded
    state's fields; maintenance windows anchored at ``now``).

    Raises:
        InvalidInput: an unknown key, or a value the job definition rules refuse.
    """
    definition, extras = _split(changes, JOB_CHANGES, now)
    if not definition:
        return Proposal({}, extras)
    try:
        return Proposal(normalize_alert_rules(definition, current), extras)
    except InvalidInput as exc:
        raise _prefixed(exc) from None
