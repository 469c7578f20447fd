"""What a status page refuses and survives (docs/status-pages.md): a custom path of a key's
form (a key and a path never meet in the lookup), URLs of neither form answered 404 before any
query, deleted components that drop out instead of blocking every change, field names in the
errors, blank or invisible texts, duplicate components and the 409 of a taken path.

Real PostgreSQL, the API in process, a frozen clock.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from litestar.testing import AsyncTestClient

from core.apikeys import create_api_key
from core.db import ConnectionPool
from tests.helpers import add_job
from tests.monitor_helpers import add_monitor
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def _create(api: AsyncTestClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    answer = await api.post("/v1/status-pages", headers=auth, json=body)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def _key(page: dict[str, Any]) -> str:
    return str(page["url"]).rsplit("/status/", 1)[1]


async def test_a_path_of_a_key_form_is_refused_and_never_meets_a_key(
        frozen_api: AsyncTestClient, pool: ConnectionPool, team: Team) -> None:
    a = await _create(frozen_api, team.auth, title="A", tags=["a"])
    other, _ = await create_api_key(pool, f"team-{uuid.uuid4().hex[:10]}", "write")
    b_auth = {"Authorization": f"Bearer {other}"}
    hijack = await frozen_api.post("/v1/status-pages", headers=b_auth,
                                   json={"title": "B", "tags": ["b"], "path": _key(a)})
    assert hijack.status_code == 422, hijack.text
    [error] = hijack.json()["errors"]
    assert error["field"] == "path" and "key" in error["message"]
    b = await _create(frozen_api, b_auth, title="B", tags=["b"], path="team-b")
    patched = await frozen_api.patch(f"/v1/status-pages/{b['id']}", headers=b_auth,
                                     json={"path": "0123456789abcdef" * 2})
    assert patched.status_code == 422 and patched.json()["errors"][0]["field"] == "path"
    # a path of a key's form stored before the rule: never looked up as a path
    async with pool.connection() as conn:
        await conn.execute("UPDATE status_pages SET path = %s WHERE id = %s", (_key(a), b["id"]))
    assert "<title>A" in (await frozen_api.get(f"/status/{_key(a)}")).text
    await frozen_api.patch(f"/v1/status-pages/{a['id']}", headers=team.auth,
                           json={"rotate_key": True})
    assert (await frozen_api.get(f"/status/{_key(a)}")).status_code == 404


async def test_a_url_of_neither_form_is_a_404_without_a_query(
        frozen_api: AsyncTestClient, team: Team) -> None:
    page = await _create(frozen_api, team.auth, title="A", tags=["a"], path="acme-nul")
    misses = ["/status/%00", "/status/a%00b", "/status/%00/feed.atom",
              f"/status/{_key(page).upper()}", "/status/acme-nul%00", "/status/-acme"]
    for url in misses:
        answer = await frozen_api.get(url)
        assert answer.status_code == 404, (url, answer.text)
    assert (await frozen_api.get("/status/acme-nul")).status_code == 200


async def test_a_deleted_component_drops_out_and_never_blocks_a_change(
        frozen_api: AsyncTestClient, pool: ConnectionPool, team: Team) -> None:
    job = await add_job(pool, team.actor, T0, "https://example.com/a", name="job-a")
    monitor, _ = await add_monitor(pool, team.actor, T0, name="mon-a")
    page = await _create(frozen_api, team.auth, title="A",
                         components=[str(job), str(monitor)],
                         names={str(job): "Job", str(monitor): "Monitor"})
    gone = await frozen_api.delete(f"/v1/jobs/{job}", headers=team.auth)
    assert gone.status_code in (200, 204), gone.text
    for body in ({"title": "B"}, {"path": "acme-b"}, {"rotate_key": True},
                 {"names": {str(monitor): "Queue"}}):
        answer = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team.auth,
                                        json=body)
        assert answer.status_code == 200, (body, answer.text)
        assert answer.json()["components"] == [str(monitor)]
    read = (await frozen_api.get(f"/v1/status-pages/{page['id']}", headers=team.auth)).json()
    assert read["components"] == [str(monitor)] and read["names"] == {str(monitor): "Queue"}
    listed = (await frozen_api.get("/v1/status-pages", headers=team.auth)).json()["items"]
    assert [p["components"] for p in listed] == [[str(monitor)]]
    # naming it again is refused
    again = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team.auth,
                                   json={"components": [str(monitor), str(job)]})
    assert again.status_code == 422
    assert [e["field"] for e in again.json()["errors"]] == ["components.1"]
    # every component gone: the key still rotates
    await frozen_api.delete(f"/v1/monitors/{monitor}", headers=team.auth)
    rotated = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team.auth,
                                     json={"rotate_key": True})
    assert rotated.status_code == 200 and rotated.json()["components"] == []


async def test_errors_name_the_field(frozen_api: AsyncTestClient, pool: ConnectionPool,
                                     team: Team) -> None:
    job = await add_job(pool, team.actor, T0, "https://example.com/a", name="job-a")

    async def fields(**body: Any) -> list[str]:
        answer = await frozen_api.post("/v1/status-pages", headers=team.auth,
                                       json={"title": "A", "components": [str(job)], **body})
        assert answer.status_code == 422, answer.text
        return [e["field"] for e in answer.json()["errors"]]

    assert await fields(names={"garbage": "x"}) == ["names.garbage"]
    assert await fields(names={str(job): ""}) == [f"names.{job}"]
    assert await fields(names={str(job): "n" * 101}) == [f"names.{job}"]
    assert await fields(names={str(job): "   "}) == [f"names.{job}"]
    assert await fields(names={str(job): "Jo\u202eb"}) == [f"names.{job}"]
    assert await fields(title=" \u00a0 ") == ["title"]
    assert await fields(title="Acme\u202e") == ["title"]
    assert await fields(title="Ac\u200bme") == ["title"]
    assert await fields(components=[str(job), str(job)]) == ["components.1"]
    # a space inside a text is fine
    await _create(frozen_api, team.auth, title="Acme status", components=[str(job)],
                  names={str(job): "Nightly backup"})
    await _create(frozen_api, team.auth, title="x", tags=["a"], path="taken-409")
    taken = await frozen_api.post("/v1/status-pages", headers=team.auth,
                                  json={"title": "y", "tags": ["a"], "path": "taken-409"})
    assert taken.status_code == 409
    assert [e["field"] for e in taken.json()["errors"]] == ["path"]


async def test_head_answers_as_get_and_html_names_its_charset_once(
        frozen_api: AsyncTestClient, team: Team) -> None:
    page = await _create(frozen_api, team.auth, title="A", tags=["a"])
    url = f"/status/{_key(page)}"
    for path in (url, f"{url}/feed.atom", "/status/no-such-page"):
        get = await frozen_api.get(path)
        head = await frozen_api.head(path)
        assert head.status_code == get.status_code and head.content == b"", path
        # GET's headers, its length among them (RFC 9110, 9.3.2; issue 32)
        assert head.headers["content-length"] == get.headers["content-length"] != "0", path
        assert head.headers["content-type"] == get.headers["content-type"]
    for path in (url, "/status/no-such-page", "/ui/signin"):
        answer = await frozen_api.get(path)
        assert answer.headers["content-type"] == "text/html; charset=utf-8", path


async def test_a_stored_name_of_a_deleted_component_never_blocks_a_components_patch(
        frozen_api: AsyncTestClient, pool: ConnectionPool, team: Team) -> None:
    """Issue 32: the display name of a deleted component, hidden from every read, went on
    being checked against the new `components` (422 `names.<id>: is not one of components`);
    names of the components a change drops go with them."""
    job = await add_job(pool, team.actor, T0, "https://example.com/a", name="job-a")
    monitor, _ = await add_monitor(pool, team.actor, T0, name="mon-a")
    page = await _create(frozen_api, team.auth, title="A",
                         components=[str(monitor), str(job)],
                         names={str(job): "Nightly", str(monitor): "Queue"})
    gone = await frozen_api.delete(f"/v1/jobs/{job}", headers=team.auth)
    assert gone.status_code in (200, 204), gone.text
    answer = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team.auth,
                                    json={"components": [str(monitor)]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["names"] == {str(monitor): "Queue"}
    # a live component dropped by the change loses its name too
    other, _ = await add_monitor(pool, team.actor, T0, name="mon-b")
    both = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team.auth,
                                  json={"components": [str(monitor), str(other)],
                                        "names": {str(monitor): "Queue", str(other): "B"}})
    assert both.status_code == 200, both.text
    dropped = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team.auth,
                                     json={"components": [str(other)]})
    assert dropped.status_code == 200, dropped.text
    assert dropped.json()["names"] == {str(other): "B"}


BLANK_LOOKING = ["\u2800", "\u3164", "\u115f", "\u1160", "\uffa0"]


async def test_blank_looking_and_invisible_texts_are_refused_in_words(
        frozen_api: AsyncTestClient, pool: ConnectionPool, team: Team) -> None:
    """Issue 32: titles, display names and tags of blank-looking characters (braille blank,
    Hangul fillers) are refused, as spaces are; a pattern's refusal says what it means, never
    the raw regex; a display name that is no text names the map."""
    job = await add_job(pool, team.actor, T0, "https://example.com/a", name="job-a")

    async def refused(method: str, url: str, body: dict[str, Any]) -> list[dict[str, str]]:
        answer = await frozen_api.request(method, url, headers=team.auth, json=body)
        assert answer.status_code == 422, (body, answer.text)
        errors: list[dict[str, str]] = answer.json()["errors"]
        assert all("regex" not in e["message"] for e in errors), errors
        assert "regex" not in answer.json()["detail"]
        return errors

    base = {"title": "A", "components": [str(job)]}
    for blank in BLANK_LOOKING:
        for title in (blank, f" {blank}\u00a0"):
            [error] = await refused("POST", "/v1/status-pages", {**base, "title": title})
            assert error["field"] == "title" and "blank" in error["message"], error
        [error] = await refused("POST", "/v1/status-pages", {**base, "names": {str(job): blank}})
        assert error["field"] == f"names.{job}" and "blank" in error["message"], error
        [error] = await refused("POST", "/v1/status-pages",
                                {"title": "A", "tags": [f"a{blank}b"]})
        assert error["field"] == "tags.0" and "blank" in error["message"], error
    for title in ("   ", "Acme\u202e", "\u200b"):
        [error] = await refused("POST", "/v1/status-pages", {**base, "title": title})
        assert error["field"] == "title" and "characters" in error["message"], error
    for path in ("ACME", "a", "a" * 65, "-acme"):
        [error] = await refused("POST", "/v1/status-pages", {**base, "path": path})
        assert error == {"field": "path", "message": "must be 2 to 64 lowercase letters, "
                                                     "digits or inner hyphens"}
    page = await _create(frozen_api, team.auth, **base)
    [error] = await refused("PATCH", f"/v1/status-pages/{page['id']}", {"title": "\u2800"})
    assert error["field"] == "title"
    [error] = await refused("PATCH", f"/v1/status-pages/{page['id']}", {"path": "ACME"})
    assert error["field"] == "path"
    [error] = await refused("POST", "/v1/status-pages", {**base, "names": {str(job): 5}})
    assert error["field"] == "names", error
    # (with its schedule: a body missing one hears of that too, every bad field is named)
    [error] = await refused("POST", "/v1/monitors", {"name": "m", "schedule": "1h",
                                                      "slug": "monA1"})
    assert error == {"field": "slug", "message": "must be 1 to 100 of a-z, 0-9, - and _"}
    # words where there were spaces: a title and a name with a blank-looking letter inside
    await _create(frozen_api, team.auth, title="Acme\u2800status", components=[str(job)],
                  names={str(job): "Nightly\u3164backup"})


async def test_a_note_refuses_invisible_characters_in_words_and_keeps_tabs_and_newlines(
        frozen_api: AsyncTestClient, pool: ConnectionPool, team: Team) -> None:
    """Issue 32: a note took U+202E (and showed it on the public page and feed); it refuses
    the invisible formatting characters titles refuse, a NUL in words."""
    monitor, _ = await add_monitor(pool, team.actor, T0, name="mon-a")
    down = uuid.uuid4()
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO alerts (id, team_id, subject_type, subject_id, event, title, "
            "created_at) VALUES (%s, %s, 'monitor', %s, 'down', 't', %s)",
            (down, team.actor.team_id, monitor, T0))
    url = f"/v1/alerts/{down}/note"
    for note in ("Fixed\u202e", "a\x00b", "a\u200bb", "a\rb", "a\u2066b"):
        answer = await frozen_api.put(url, headers=team.auth, json={"note": note})
        assert answer.status_code == 422, (note, answer.text)
        [error] = answer.json()["errors"]
        assert error["field"] == "note" and "regex" not in error["message"], error
        assert "invisible" in error["message"], error
    kept = await frozen_api.put(url, headers=team.auth, json={"note": "Line 1\n\tLine 2"})
    assert kept.status_code == 200 and kept.json()["note"] == "Line 1\n\tLine 2"
    blank = await frozen_api.put(url, headers=team.auth, json={"note": " \u2800\u3164 "})
    assert blank.status_code == 200 and blank.json()["note"] is None, blank.text
