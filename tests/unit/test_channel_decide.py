"""The channel stream's decisions and fold without a database (core/channels/decide.py,
core/channels/state.py): what a create, a PATCH and a delete append, and the row the fold
gives."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.channels.decide import (
    CreateChannel,
    DeleteChannel,
    UpdateChannel,
    decide_create,
    decide_delete,
    decide_update,
)
from core.channels.definition import REDACTED
from core.channels.state import ChannelState, evolve
from core.errors import Conflict, InvalidInput
from core.streams import Change, fold

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
HOOK = "https://hooks.example.com/services/T000/B000/XXXX"


def _events(changes: list[Change], after: int = 0) -> list[dict[str, Any]]:
    stream_id, team_id = uuid.UUID(int=1), uuid.UUID(int=2)
    return [{"event_type": kind, "data": data, "stream_id": stream_id, "team_id": team_id,
             "stream_version": after + i, "occurred_at": T0 + timedelta(minutes=after + i - 1)}
            for i, (kind, data) in enumerate(changes, start=1)]


def _slack() -> ChannelState:
    decision = decide_create(CreateChannel({"name": "ops", "kind": "slack", "url": HOOK}))
    state = fold(evolve, _events(decision.events))
    assert state is not None
    return state


def test_a_create_carries_the_redacted_view_and_seals_the_url() -> None:
    decision = decide_create(CreateChannel({"name": "ops", "kind": "slack", "url": HOOK}))
    [(kind, data)] = decision.events
    assert kind == "channel.created" and data["name"] == "ops" and data["kind"] == "slack"
    assert HOOK not in repr(decision.events)
    assert decision.sealed == {"url": HOOK} and decision.config == data["config"]


def test_the_fold_of_a_create_is_the_row_but_its_sealed_columns() -> None:
    state = _slack()
    assert (state.name, state.kind, state.version, state.created_at) == ("ops", "slack", 1, T0)
    assert state.key_id is None and state.sealed is None and state.deleted_at is None


def test_a_rename_is_one_update_and_the_fold_follows_it() -> None:
    before = _slack()
    decision = decide_update(before, UpdateChannel({"name": "pager"}, {"url": HOOK}))
    assert decision.events == [("channel.updated", {"changes": {"name": "pager"}})]
    after = fold(evolve, _events(decision.events, after=1), before)
    assert after is not None and after.name == "pager" and after.version == 2
    assert after.config == before.config == decision.config


def test_a_new_url_is_redacted_in_the_event_and_sealed() -> None:
    other = HOOK.replace("XXXX", "YYYY")
    decision = decide_update(_slack(), UpdateChannel({"url": other}, {"url": HOOK}))
    assert decision.events == [("channel.updated", {"changes": {"url": REDACTED}})]
    assert decision.sealed == {"url": other}


def test_the_same_values_decide_nothing() -> None:
    assert decide_update(_slack(), UpdateChannel({"name": "ops"}, {"url": HOOK})).events == []


def test_a_kind_change_or_a_foreign_field_is_a_conflict_and_a_bad_field_invalid() -> None:
    with pytest.raises(Conflict, match="kind"):
        decide_update(_slack(), UpdateChannel({"kind": "webhook"}, {"url": HOOK}))
    with pytest.raises(Conflict, match="signing_secret"):
        decide_update(_slack(), UpdateChannel({"signing_secret": "s" * 32}, {"url": HOOK}))
    with pytest.raises(InvalidInput):
        decide_update(_slack(), UpdateChannel({"name": ""}, {"url": HOOK}))


def test_a_delete_drops_the_sealed_columns_in_the_fold() -> None:
    before = dataclasses.replace(_slack(), key_id="k1", sealed=b"x")
    [change] = decide_delete(before, DeleteChannel())
    assert change == ("channel.deleted", {})
    after = fold(evolve, _events([change], after=1), before)
    assert after is not None and after.deleted_at == T0 + timedelta(minutes=1)
    assert after.key_id is None and after.sealed is None and after.version == 2


def test_a_test_send_only_moves_the_version() -> None:
    before = _slack()
    after = evolve(before, _events([("channel.tested", {"ok": True})], after=1)[0])
    assert after == dataclasses.replace(before, version=2)


def test_the_fold_refuses_a_stream_that_does_not_start_with_created() -> None:
    with pytest.raises(ValueError, match="before channel.created"):
        fold(evolve, _events([("channel.deleted", {})]))
