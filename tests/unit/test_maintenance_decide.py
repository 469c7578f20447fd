"""The maintenance stream's decisions and fold without a database
(core/maintenance/decide.py, core/maintenance/state.py): what a create, a PATCH and an end
append, and that the fold of those events is the row the commands write."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.errors import Conflict, InvalidInput
from core.maintenance.decide import (
    CreateWindow,
    EndWindow,
    UpdateWindow,
    decide_create,
    decide_end,
    decide_update,
)
from core.maintenance.state import WindowState, evolve
from core.streams import Change, fold

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
JOB = uuid.UUID(int=7)


def _events(changes: list[Change], after: int = 0) -> list[dict[str, Any]]:
    return [{"event_type": kind, "data": data, "stream_id": uuid.UUID(int=1),
             "team_id": uuid.UUID(int=2), "stream_version": after + i,
             "occurred_at": T0 + timedelta(minutes=after + i - 1)}
            for i, (kind, data) in enumerate(changes, start=1)]


def _window() -> WindowState:
    decision = decide_create(CreateWindow({"from": T0, "to": T0 + timedelta(hours=2),
                                           "jobs": [JOB], "comment": "upgrade"}, T0))
    state = fold(evolve, _events(decision.events))
    assert state is not None
    return state


def test_a_create_carries_the_definition_as_json_and_the_fold_reads_it_back() -> None:
    decision = decide_create(CreateWindow({"from": T0, "to": T0 + timedelta(hours=2),
                                           "jobs": [JOB]}, T0))
    [(kind, data)] = decision.events
    assert kind == "maintenance.created" and data["jobs"] == [str(JOB)]
    state = fold(evolve, _events(decision.events))
    assert state == dataclasses.replace(WindowState.created(
        uuid.UUID(int=1), uuid.UUID(int=2), decision.definition, T0), version=1)
    assert state is not None and state.definition() == decision.definition
    assert (state.version, state.created_at, state.released_until) == (1, T0, None)


def test_an_update_names_only_the_changes_and_the_fold_applies_them() -> None:
    before = dataclasses.replace(_window(), released_until=T0)
    later = T0 + timedelta(hours=3)
    decision = decide_update(before, UpdateWindow({"to": later, "comment": "upgrade",
                                                   "unknown": 1}))
    assert decision.events == [("maintenance.updated", {"changes": {"to": "2026-12-01T12:00:00Z"}})]
    after = fold(evolve, _events(decision.events, after=1), before)
    assert after is not None and after.ends_at == later and after.version == 2
    assert after.definition() == decision.definition
    assert after.released_until == T0  # the release service's, no event sets it


def test_the_same_values_decide_nothing_and_a_bad_one_is_invalid() -> None:
    assert decide_update(_window(), UpdateWindow({"comment": "upgrade"})).events == []
    with pytest.raises(InvalidInput):
        decide_update(_window(), UpdateWindow({"to": T0 - timedelta(hours=1)}))


def test_an_ended_window_cannot_change_or_end_again() -> None:
    window = _window()
    [change] = decide_end(window, EndWindow(T0 + timedelta(minutes=30)))
    assert change == ("maintenance.ended", {"ended_at": "2026-12-01T09:30:00+00:00"})
    ended = fold(evolve, _events([change], after=1), window)
    assert ended is not None and ended.ended_at == T0 + timedelta(minutes=30)
    with pytest.raises(Conflict, match="ended; create a new one"):
        decide_update(ended, UpdateWindow({"comment": "x"}))
    with pytest.raises(Conflict, match="ended already"):
        decide_end(ended, EndWindow(T0))


def test_the_fold_refuses_a_stream_that_does_not_start_with_created() -> None:
    with pytest.raises(ValueError, match="before maintenance.created"):
        fold(evolve, _events([("maintenance.ended", {"ended_at": T0.isoformat()})]))
