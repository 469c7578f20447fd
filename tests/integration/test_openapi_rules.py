"""What a client generated from /schema/openapi.json can rely on beyond JSON Schema's reach:
the rules between two values are either taken (an empty range is a question with an empty
answer) or stated in the document's words and refused with a 422 naming the parameter; the
document's lengths and patterns count what the server counts (docs/api.md, *The OpenAPI
document*)."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.channels import definition as chandef
from core.clock import FrozenClock
from core.durations import DURATION_PATTERN, MAX_DURATION_DIGITS
from core.jobs import definition as jobdef
from core.projections.queries import MAX_BUCKETS
from tests.teams import Team

NOW = datetime(2026, 11, 30, 12, 30, tzinfo=UTC)
JOB = {"name": "rules", "schedule": "0 * * * *", "request": {"url": "https://example.com/x"}}


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(NOW)


@pytest.fixture
async def api(frozen_api: AsyncTestClient) -> AsyncTestClient:
    return frozen_api


@pytest.fixture
async def doc(api: AsyncTestClient) -> dict[str, Any]:
    r = await api.get("/schema/openapi.json")
    assert r.status_code == 200
    return r.json()


def _iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


async def _job(api: AsyncTestClient, team: Team) -> str:
    r = await api.post("/v1/jobs", json=JOB, headers=team.auth)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


async def _monitor(api: AsyncTestClient, team: Team) -> str:
    r = await api.post("/v1/monitors", json={"name": f"m-{uuid.uuid4().hex[:6]}",
                                             "schedule": "1h"}, headers=team.auth)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _param(doc: dict[str, Any], path: str, method: str, name: str) -> dict[str, Any]:
    op = doc["paths"][path][method]
    return next(p for p in op["parameters"] if p["name"] == name)


def _fields(r: Any) -> list[str]:
    return [e["field"] for e in r.json().get("errors", [])]


# -- Ranges: from equal to to is an empty question, from after to is refused and said -------

async def test_an_empty_range_is_a_question_with_an_empty_answer(
    api: AsyncTestClient, team: Team,
) -> None:
    job, monitor = await _job(api, team), await _monitor(api, team)
    at = _iso(NOW.replace(minute=0) - timedelta(hours=3))  # on an hour: rounded down, empty
    r = await api.get(f"/v1/monitors/{monitor}/uptime", params={"from": at, "to": at},
                      headers=team.auth)
    assert r.status_code == 200, r.text
    assert (r.json()["uptime_percent"], r.json()["downtime_seconds"]) == (None, 0)
    r = await api.get(f"/v1/jobs/{job}/stats", params={"from": at, "to": at},
                      headers=team.auth)
    assert r.status_code == 200, r.text
    assert r.json()["items"] == [] and r.json()["totals"]["runs"] == 0
    for kind, ident in (("jobs", job), ("monitors", monitor)):  # a replay needs a window
        r = await api.post(f"/v1/{kind}/{ident}/simulate", json={"from": at, "to": at},
                           headers=team.auth)
        assert r.status_code == 422 and _fields(r) == ["from"], r.text


@pytest.mark.parametrize("route", ["jobs/{id}/stats", "monitors/{id}/uptime"])
async def test_a_range_ending_before_it_starts_is_refused_as_documented(
    api: AsyncTestClient, team: Team, doc: dict[str, Any], route: str,
) -> None:
    ident = await (_job if route.startswith("jobs") else _monitor)(api, team)
    r = await api.get(f"/v1/{route.format(id=ident)}", headers=team.auth, params={
        "from": _iso(NOW - timedelta(hours=1)), "to": _iso(NOW - timedelta(hours=2))})
    assert r.status_code == 422 and _fields(r) == ["from"], r.text
    named = route.replace("{id}", "{job_id}" if route.startswith("jobs") else "{monitor_id}")
    words = _param(doc, f"/v1/{named}", "get", "from")["description"]
    assert "not after `to`" in words, words


async def test_stats_over_too_many_buckets_are_refused_as_documented(
    api: AsyncTestClient, team: Team, doc: dict[str, Any],
) -> None:
    job = await _job(api, team)
    for bucket, step in (("hour", timedelta(hours=1)), ("day", timedelta(days=1))):
        most = MAX_BUCKETS[bucket]
        end = NOW.replace(hour=0, minute=0)
        for buckets, status in ((most, 200), (most + 1, 422)):
            r = await api.get(f"/v1/jobs/{job}/stats", headers=team.auth, params={
                "from": _iso(end - buckets * step), "to": _iso(end), "bucket": bucket})
            assert r.status_code == status, (bucket, buckets, r.text)
            if status == 422:
                assert _fields(r) == ["from"]
    words = _param(doc, "/v1/jobs/{job_id}/stats", "get", "from")["description"]
    assert f"{MAX_BUCKETS['hour']} hour buckets" in words, words
    assert f"{MAX_BUCKETS['day']} day buckets" in words, words


@pytest.mark.parametrize("kind", ["Job", "Monitor"])
async def test_a_replays_window_rules_are_in_the_document(
    api: AsyncTestClient, team: Team, doc: dict[str, Any], kind: str,
) -> None:
    ident = await (_job if kind == "Job" else _monitor)(api, team)
    path = f"/v1/{kind.lower()}s/{ident}/simulate"
    props = doc["components"]["schemas"][f"{kind}Simulate"]["properties"]
    to_words, from_words = _described(props["to"]), _described(props["from"])
    assert "not in the future" in to_words, to_words
    assert "before `to`" in from_words and "31 days" in from_words, from_words
    for body, field in (({"to": _iso(NOW + timedelta(seconds=1))}, "to"),
                        ({"from": _iso(NOW - timedelta(hours=1)),
                          "to": _iso(NOW - timedelta(hours=2))}, "from"),
                        ({"from": _iso(NOW - timedelta(days=32))}, "from")):
        r = await api.post(path, json=body, headers=team.auth)
        assert r.status_code == 422 and _fields(r) == [field], r.text


def _described(schema: dict[str, Any]) -> str:
    return " ".join(s.get("description", "") for s in [schema, *schema.get("anyOf", [])])


@pytest.mark.parametrize("name", ["MaintenanceCreate", "MaintenancePatch", "ProposedWindow"])
def test_a_windows_from_and_to_rules_are_in_the_document(doc: dict[str, Any],
                                                         name: str) -> None:
    props = doc["components"]["schemas"][name]["properties"]
    assert "after `from`" in _described(props["to"]), props["to"]
    assert "366 days" in _described(props["to"]), props["to"]
    for key in ("from", "to"):
        assert "1971 to 2398" in _described(props[key]), props[key]


async def test_a_window_ending_at_its_start_names_to(
    api: AsyncTestClient, team: Team,
) -> None:
    at = "2030-01-01T00:00:00Z"
    r = await api.post("/v1/maintenance", json={"from": at, "to": at}, headers=team.auth)
    assert r.status_code == 422 and _fields(r) == ["to"], r.text


# -- A request body counts characters, as the document's maxLength does ---------------------

async def test_a_job_body_is_bounded_in_characters_as_the_document_says(
    api: AsyncTestClient, team: Team, doc: dict[str, Any],
) -> None:
    body = doc["components"]["schemas"]["RequestSpec"]["properties"]["body"]
    text = next(s for s in body.get("anyOf", [body]) if s.get("type") == "string")
    assert text["maxLength"] == jobdef.MAX_BODY
    assert f"at most {jobdef.MAX_BODY} characters" in _described(body), body
    for value, status in (("é" * jobdef.MAX_BODY, 201), ("\U0001f600" * jobdef.MAX_BODY, 201),
                          ("é" * (jobdef.MAX_BODY + 1), 422)):
        r = await api.post("/v1/jobs", headers=team.auth, json={
            **JOB, "name": f"body-{uuid.uuid4().hex[:6]}",
            "request": {"url": "https://example.com/x", "method": "POST", "body": value}})
        assert r.status_code == status, r.text[:300]
        if status == 422:
            assert _fields(r) == ["request.body"]


# -- Durations: a bounded number of digits, the same in the pattern and the server ----------

def test_the_duration_pattern_bounds_each_number_of_digits() -> None:
    pattern = re.compile(DURATION_PATTERN)
    most = "9" * MAX_DURATION_DIGITS
    assert pattern.search(f"{most}s") and pattern.search(f"1d{most}s")
    assert not pattern.search(f"{most}9s") and not pattern.search("99999999999d")


@pytest.mark.parametrize("value", ["9" * 5000 + "s", "1" + "0" * 10 + "s", "99999999999d"])
async def test_a_duration_past_the_patterns_digits_is_a_422(
    api: AsyncTestClient, team: Team, value: str,
) -> None:
    r = await api.post("/v1/monitors", headers=team.auth, json={
        "name": "d", "schedule": "1h", "realert_every": value})
    assert r.status_code == 422 and _fields(r) == ["realert_every"], r.text[:300]


def test_a_durations_description_states_its_bounds_in_seconds(doc: dict[str, Any]) -> None:
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("format") == "cronledger-duration":
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    assert found
    for node in found:
        assert node["pattern"] == DURATION_PATTERN
        assert (f"from {node['x-minimum-seconds']} to {node['x-maximum-seconds']} seconds"
                in node["description"]), node["description"]
        assert f"{MAX_DURATION_DIGITS} digits" in node["description"], node["description"]


# -- URLs with credentials ----------------------------------------------------------------

async def test_a_job_url_with_literal_credentials_is_refused_as_documented(
    api: AsyncTestClient, team: Team, doc: dict[str, Any],
) -> None:
    url = doc["components"]["schemas"]["RequestSpec"]["properties"]["url"]
    assert "user:password@" in _described(url), url
    r = await api.post("/v1/jobs", headers=team.auth, json={
        **JOB, "request": {"url": "https://user:pass@example.com/x"}})
    assert r.status_code == 422 and _fields(r) == ["request.url"], r.text


# -- A bad cursor says what a cursor is -----------------------------------------------------

@pytest.mark.parametrize("path", ["/v1/jobs", "/v1/secrets", "/v1/jobs/{id}/history",
                                  "/v1/jobs/{id}/events"])
async def test_a_bad_cursor_says_what_a_cursor_is(
    api: AsyncTestClient, team: Team, path: str,
) -> None:
    r = await api.get(path.format(id=uuid.uuid4()), params={"cursor": "not a cursor!"},
                      headers=team.auth)
    assert r.status_code == 422, r.text
    message = r.json()["errors"][0]["message"]
    assert "regex" not in message and "next_cursor" in message, message


# -- One order for every route that names an object -----------------------------------------

@pytest.mark.parametrize(("method", "path", "body"), [
    ("get", "/v1/jobs/{id}/stats?from=2026-11-30T02:00:00Z&to=2026-11-30T01:00:00Z", None),
    ("get", "/v1/monitors/{id}/uptime?from=2026-11-30T02:00:00Z&to=2026-11-30T01:00:00Z", None),
    ("post", "/v1/jobs/{id}/simulate", {"to": "2099-01-01T00:00:00Z"}),
    ("post", "/v1/monitors/{id}/simulate", {"from": "2026-11-30T02:00:00Z",
                                            "to": "2026-11-30T01:00:00Z"}),
    ("post", "/v1/monitors/{id}/snooze", {"for": "1s"}),
    ("patch", "/v1/jobs/{id}", {"schedule": "not a schedule"}),
    ("patch", "/v1/monitors/{id}", {"min_duration": "1h", "max_duration": "1m"}),
    ("patch", "/v1/maintenance/{id}", {"from": "2030-01-02T00:00:00Z",
                                       "to": "2030-01-01T00:00:00Z"}),
    ("patch", "/v1/channels/{id}", {"url": "ftp://example.com/"}),
])
async def test_an_unknown_id_is_404_before_the_rules_on_the_values(
    api: AsyncTestClient, team: Team, method: str, path: str,
    body: dict[str, Any] | None,
) -> None:
    """The document's own checks (shape, types, patterns, bounds) come first, then the id the
    path names, then the server's rules on the values (some need the stored object: a patch is
    judged merged with it), on every route alike."""
    url = path.format(id=uuid.uuid4())
    kwargs: dict[str, Any] = {"headers": team.auth}
    if body is not None:
        kwargs["json"] = body
    r = await getattr(api, method)(url, **kwargs)
    assert r.status_code == 404, r.text
    if body is not None:  # a body the document refuses is a 422 whatever the id
        r = await getattr(api, method)(url, headers=team.auth, json={**body, "nope": 1})
        assert r.status_code == 422, r.text


# -- A Telegram chat id given as a number: a signed 64-bit integer, in both -----------------

@pytest.mark.parametrize(("chat_id", "status"), [
    (chandef.MAX_CHAT_ID, 201), (chandef.MIN_CHAT_ID, 201), (chandef.MAX_CHAT_ID + 1, 422),
    (-32326981751963192918016, 422), (-1001234567890.0, 201)])
async def test_a_numeric_chat_id_is_bounded_as_the_document_says(
    api: AsyncTestClient, team: Team, doc: dict[str, Any], chat_id: int,
    status: int,
) -> None:
    for name in ("ChannelCreate", "ApplyChannel"):
        number = next(s for s in doc["components"]["schemas"][name]["properties"]["chat_id"][
            "anyOf"] if s.get("type") == "integer")
        assert (number["minimum"], number["maximum"]) == (chandef.MIN_CHAT_ID,
                                                          chandef.MAX_CHAT_ID)
    channel = {"kind": "telegram", "chat_id": chat_id, "token_secret": "TG"}
    r = await api.post("/v1/channels", headers=team.auth,
                       json={**channel, "name": f"tg-{uuid.uuid4().hex[:6]}"})
    assert r.status_code == status, r.text
    r = await api.post("/v1/apply", headers=team.auth,
                       json={"channels": [{**channel, "name": f"tg-{uuid.uuid4().hex[:6]}"}]})
    assert r.status_code == (200 if status == 201 else 422), r.text


async def test_an_smtp_port_written_with_a_fraction_of_zero_is_an_integer(
    api: AsyncTestClient, team: Team,
) -> None:
    """``smtp`` is read by the server's own rule, not the decoder: 4505.0 is the integer the
    document allows (JSON Schema), as everywhere else."""
    r = await api.post("/v1/channels", headers=team.auth, json={
        "name": f"mail-{uuid.uuid4().hex[:6]}", "kind": "email", "to": "a@example.com",
        "smtp": {"host": "mail.example.com", "port": 4505.0}})
    assert r.status_code == 201, r.text
    r = await api.post("/v1/channels", headers=team.auth, json={
        "name": f"mail-{uuid.uuid4().hex[:6]}", "kind": "email", "to": "a@example.com",
        "smtp": {"host": "mail.example.com", "port": 4505.5}})
    assert r.status_code == 422 and _fields(r) == ["smtp.port"], r.text
