"""Status pages without a database: the incident rule over alerts, the definition's
refusals, the visitor cache's TTL (docs/status-pages.md)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from core.errors import InvalidInput
from core.statuspages.cache import PageCache
from core.statuspages.definition import normalize_page
from core.statuspages.incidents import incidents

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _alert(kind: str, subject: uuid.UUID, event: str, minutes: int,
           note: str | None = None) -> dict[str, object]:
    return {"id": uuid.uuid4(), "subject_type": kind, "subject_id": subject, "event": event,
            "created_at": T0 + timedelta(minutes=minutes), "note": note}


def test_a_problem_opens_a_recovery_resolves_and_repeats_continue() -> None:
    m, j = uuid.uuid4(), uuid.uuid4()
    found = incidents([
        _alert("monitor", m, "up", 0),  # a recovery of an incident older than the rows
        _alert("monitor", m, "down", 10),
        _alert("monitor", m, "still_down", 20, note="on it"),
        _alert("monitor", m, "up", 30),
        _alert("job", j, "failed", 40),
        _alert("job", j, "missed", 45),  # opens nothing
        _alert("monitor", m, "down", 50),
    ])
    assert [(i.subject_id, i.started_at, i.resolved_at, i.note) for i in found] == [
        (m, T0 + timedelta(minutes=50), None, None),
        (j, T0 + timedelta(minutes=40), None, None),
        (m, T0 + timedelta(minutes=10), T0 + timedelta(minutes=30), "on it"),
    ]


@pytest.mark.parametrize(("fields", "field"), [
    ({"title": "t"}, "components"),
    ({"title": "t", "tags": ["a"], "components": [str(uuid.uuid4())]}, "components"),
    ({"title": "", "tags": ["a"]}, "title"),
    ({"title": "a\x07b", "tags": ["a"]}, "title"),
    ({"title": "t", "components": ["nope"]}, "components.0"),
    ({"title": "t", "tags": ["a"], "path": "-bad"}, "path"),
    ({"title": "t", "tags": ["a"], "names": {"x": "n"}}, "names.x"),
])
def test_refusals_name_the_field(fields: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        normalize_page(fields)
    assert field in [e.field for e in caught.value.errors]


def test_a_duplicate_component_is_refused_by_its_place() -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    page = normalize_page({"title": "t", "components": [str(a), str(b)]})
    assert page["components"] == [a, b] and page["tags"] == [] and page["path"] is None
    with pytest.raises(InvalidInput) as refused:
        normalize_page({"title": "t", "components": [str(a), str(b), str(a)]})
    assert [e.field for e in refused.value.errors] == ["components.2"]
    assert "components.0" in refused.value.errors[0].message


def test_the_cache_serves_a_body_for_its_ttl_only() -> None:
    cache, key = PageCache(ttl_seconds=10, max_entries=2), (uuid.uuid4(), 1, "html")
    cache.put(key, b"body", T0)
    assert cache.get(key, T0 + timedelta(seconds=9.9)) == b"body"
    assert cache.get(key, T0 + timedelta(seconds=10)) is None
    assert cache.get((key[0], 2, "html"), T0) is None  # another version
    for n in range(3):
        cache.put((uuid.uuid4(), n, "html"), b"x", T0)
    assert cache.get(key, T0) is None  # the oldest stored went first


def test_decided_events_fold_to_the_state_the_row_holds() -> None:
    """create, a change that switches to components, a new key, delete: each decision folds
    (core.streams.fold with the page's evolve) to the state its row is written from."""
    from core.events import stream_events
    from core.statuspages.decide import (
        CreatePage,
        DeletePage,
        UpdatePage,
        decide_create,
        decide_delete,
        decide_update,
    )
    from core.statuspages.state import evolve
    from core.streams import as_read, fold

    page_id, team_id, job = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()

    def apply(state: object, changes: list[tuple[str, dict[str, object]]]) -> object:
        version = getattr(state, "version", 0)
        events = stream_events("status_page", page_id, team_id, version, T0, changes, {})
        return fold(evolve, map(as_read, events), state)  # type: ignore[arg-type]

    created = apply(None, decide_create(CreatePage({"title": "t", "tags": ["a"]},
                                                   b"\x01" * 32)).events)
    assert created.definition() == {"title": "t", "tags": ["a"], "components": [],  # type: ignore[attr-defined]
                                    "names": {}, "path": None}
    decision = decide_update(created, UpdatePage({"components": [str(job)]}))  # type: ignore[arg-type]
    assert decision.events == [("status_page.updated", {"changes": {
        "tags": [], "components": [str(job)]}})]
    changed = apply(created, decision.events)
    assert changed.components == [job] and changed.tags == [] and changed.version == 2  # type: ignore[attr-defined]
    assert decide_update(changed, UpdatePage({"title": "t"})).events == []  # type: ignore[arg-type]
    import dataclasses
    sealed = dataclasses.replace(changed, key_id="k", nonce=b"n" * 12, ciphertext=b"c")  # type: ignore[type-var]
    rekeyed = apply(sealed, decide_update(sealed, UpdatePage({}, b"\x02" * 32)).events)
    assert rekeyed.key_hash == b"\x02" * 32 and rekeyed.ciphertext is None  # type: ignore[attr-defined]
    deleted = apply(rekeyed, decide_delete(rekeyed, DeletePage()))  # type: ignore[arg-type]
    assert deleted.deleted and deleted.version == 4  # type: ignore[attr-defined]


def testperiods_by_day_match_the_scan_of_every_period() -> None:
    """core/projections/queries.py:periods_by_day finds a day's downtime periods as the scan
    it replaced did (started before the day's end; open, or ended after its start), on days'
    edges included."""
    import random

    from core.projections.queries import periods_by_day

    rng, first, days = random.Random(5), T0.replace(hour=0), 10
    edges = [first + timedelta(days=n) for n in range(-2, days + 2)]
    for _ in range(300):
        periods = []
        for _ in range(rng.randrange(4)):
            start = rng.choice([*edges, first + timedelta(minutes=rng.randrange(-3000, 15000))])
            end = None if rng.random() < 0.2 else start + timedelta(
                minutes=rng.choice([1, 60, 1440, 2880, rng.randrange(1, 9000)]))
            periods.append({"started_at": start, "ended_at": end})
        periods = [p for p in periods if p["ended_at"] is None or p["ended_at"] > first]
        found = periods_by_day(periods, first, days)
        for n in range(days):
            start, end = first + timedelta(days=n), first + timedelta(days=n + 1)
            scanned = [p for p in periods if p["started_at"] < end
                       and (p["ended_at"] is None or p["ended_at"] > start)]
            assert found.get(n, []) == scanned, (n, periods)


def test_a_rotation_alone_rechecks_nothing_stored() -> None:
    from core.statuspages.decide import UpdatePage, decide_update
    from core.statuspages.state import PageState

    now = datetime(2026, 11, 30, tzinfo=UTC)
    # a path of a key's form, stored before the rule that refuses it
    page = PageState(id=uuid.uuid4(), team_id=uuid.uuid4(), title="t", tags=["a"],
                     components=[], names={}, path="0" * 32, key_hash=b"\x01" * 32,
                     version=1, created_at=now, updated_at=now)
    rotated = decide_update(page, UpdatePage({}, b"\x02" * 32))
    assert rotated.events == [("status_page.updated", {"changes": {"key_hash": "02" * 32}})]
    with pytest.raises(InvalidInput) as refused:
        decide_update(page, UpdatePage({"title": "u"}))
    assert [e.field for e in refused.value.errors] == ["path"]
