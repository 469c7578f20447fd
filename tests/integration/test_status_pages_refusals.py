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
from psycopg_pool import AsyncConnectionPool

from core.apikeys import create_api_key
from tests.helpers import add_job
from tests.monitor_helpers import add_monitor

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def _create(api: AsyncTestClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    answer = await api.post("/v1/status-pages", headers=auth, json=body)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def _key(page: dict[str, Any]) -> str:
    return str(page["url"]).rsplit("/status/", 1)[1]


async def test_a_path_of_a_key_form_is_refused_and_never_meets_a_key(
        frozen_api: AsyncTestClient, pool: AsyncConnectionPool, team: dict[str, Any]) -> None:
    a = await _create(frozen_api, team["auth"], title="A", tags=["a"])
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
    await frozen_api.patch(f"/v1/status-pages/{a['id']}", headers=team["auth"],
                           json={"rotate_key": True})
    assert (await frozen_api.get(f"/status/{_key(a)}")).status_code == 404


async def test_a_url_of_neither_form_is_a_404_without_a_query(
        frozen_api: AsyncTestClient, team: dict[str, Any]) -> None:
    page = await _create(frozen_api, team["auth"], title="A", tags=["a"], path="acme-nul")
    misses = ["/status/%00", "/status/a%00b", "/status/%00/feed.atom",
              f"/status/{_key(page).upper()}", "/status/acme-nul%00", "/status/-acme"]
    for url in misses:
        answer = await frozen_api.get(url)
        assert answer.status_code == 404, (url, answer.text)
    assert (await frozen_api.get("/status/acme-nul")).status_code == 200


async def test_a_deleted_component_drops_out_and_never_blocks_a_change(
        frozen_api: AsyncTestClient, pool: AsyncConnectionPool, team: dict[str, Any]) -> None:
    job = await add_job(pool, team["actor"], T0, "https://example.com/a", name="job-a")
    monitor, _ = await add_monitor(pool, team["actor"], T0, name="mon-a")
    page = await _create(frozen_api, team["auth"], title="A",
                         components=[str(job), str(monitor)],
                         names={str(job): "Job", str(monitor): "Monitor"})
    gone = await frozen_api.delete(f"/v1/jobs/{job}", headers=team["auth"])
    assert gone.status_code in (200, 204), gone.text
    for body in ({"title": "B"}, {"path": "acme-b"}, {"rotate_key": True},
                 {"names": {str(monitor): "Queue"}}):
        answer = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team["auth"],
                                        json=body)
        assert answer.status_code == 200, (body, answer.text)
        assert answer.json()["components"] == [str(monitor)]
    read = (await frozen_api.get(f"/v1/status-pages/{page['id']}", headers=team["auth"])).json()
    assert read["components"] == [str(monitor)] and read["names"] == {str(monitor): "Queue"}
    listed = (await frozen_api.get("/v1/status-pages", headers=team["auth"])).json()["items"]
    assert [p["components"] for p in listed] == [[str(monitor)]]
    # naming it again is refused
    again = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team["auth"],
                                   json={"components": [str(monitor), str(job)]})
    assert again.status_code == 422
    assert [e["field"] for e in again.json()["errors"]] == ["components.1"]
    # every component gone: the key still rotates
    await frozen_api.delete(f"/v1/monitors/{monitor}", headers=team["auth"])
    rotated = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team["auth"],
                                     json={"rotate_key": True})
    assert rotated.status_code == 200 and rotated.json()["components"] == []


async def test_errors_name_the_field(frozen_api: AsyncTestClient, pool: AsyncConnectionPool,
                                     team: dict[str, Any]) -> None:
    job = await add_job(pool, team["actor"], T0, "https://example.com/a", name="job-a")

    async def fields(**body: Any) -> list[str]:
        answer = await frozen_api.post("/v1/status-pages", headers=team["auth"],
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
    await _create(frozen_api, team["auth"], title="Acme status", components=[str(job)],
                  names={str(job): "Nightly backup"})
    await _create(frozen_api, team["auth"], title="x", tags=["a"], path="taken-409")
    taken = await frozen_api.post("/v1/status-pages", headers=team["auth"],
                                  json={"title": "y", "tags": ["a"], "path": "taken-409"})
    assert taken.status_code == 409
    assert [e["field"] for e in taken.json()["errors"]] == ["path"]


async def test_head_answers_as_get_and_html_names_its_charset_once(
        frozen_api: AsyncTestClient, team: dict[str, Any]) -> None:
    page = await _create(frozen_api, team["auth"], title="A", tags=["a"])
    url = f"/status/{_key(page)}"
    for path in (url, f"{url}/feed.atom", "/status/no-such-page"):
        get = await frozen_api.get(path)
        head = await frozen_api.head(path)
        assert head.status_code == get.status_code and head.content == b"", path
        assert head.headers["content-type"] == get.headers["content-type"]
    for path in (url, "/status/no-such-page", "/ui/signin"):
        answer = await frozen_api.get(path)
        assert answer.headers["content-type"] == "text/html; charset=utf-8", path
