"""The ping API over HTTP (through the app): healthchecks-compatible routes, bodies, methods,
answers, and odd input that must never produce a 500 or write anything."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.db import ConnectionPool
from core.monitors.batcher import PingBatcher
from core.monitors.ping import open_ping_pool
from tests.teams import Team


async def _monitor(api: AsyncTestClient, team: Team, **fields: Any) -> dict[str, Any]:
    r = await api.post("/v1/monitors", json={"name": "backup", "schedule": "1h", **fields},
                       headers=team.auth)
    assert r.status_code == 201, r.text
    return r.json()


async def _pings(api: AsyncTestClient, team: Team, monitor: dict[str, Any]) -> list[dict]:
    r = await api.get(f"/v1/monitors/{monitor['id']}/pings", headers=team.auth)
    assert r.status_code == 200, r.text
    return r.json()["items"]


async def _state(api: AsyncTestClient, team: Team, monitor: dict[str, Any]) -> dict[str, Any]:
    return (await api.get(f"/v1/monitors/{monitor['id']}", headers=team.auth)).json()


async def _counts(pool: ConnectionPool) -> tuple[int, int]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT (SELECT count(*) FROM events) AS e, "
                                 "(SELECT count(*) FROM monitor_ping_bodies) AS p")
        row = await cur.fetchone()
    return row["e"], row["p"]


async def _raw(api: AsyncTestClient, path: str,
               messages: list[dict[str, Any]]) -> tuple[int | None, bytes]:
    """Call the ASGI app directly with scripted ``receive`` messages (a chunked body, a client
    that disconnects); returns the response status (``None`` if none was sent) and body."""
    sent: list[dict[str, Any]] = []
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "headers": [(b"host", b"testserver")],
             "client": ("127.0.0.1", 5000), "server": ("testserver", 80)}
    await api.app(scope, receive, send)  # type: ignore[arg-type]
    status = next((m["status"] for m in sent if m["type"] == "http.response.start"), None)
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


async def test_success_answer_and_headers(api: AsyncTestClient, team: Team) -> None:
    monitor = await _monitor(api, team)
    token = monitor["ping_token"]
    assert monitor["ping_url"].endswith(f"/ping/{token}") and len(token) == 64
    r = await api.get(f"/ping/{token}", headers={"User-Agent": "curl/8.5.0"})
    assert r.status_code == 200 and r.text == "OK"
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    assert r.headers["ping-body-limit"] == "10000"
    state = await _state(api, team, monitor)
    assert state["status"] == "up" and state["last_ping_at"] is not None
    assert state["next_expected_at"] is not None and state["alert_at"] == state[
        "next_expected_at"]
    [ping] = await _pings(api, team, monitor)
    assert ping["kind"] == "success" and ping["method"] == "GET"
    assert ping["user_agent"] == "curl/8.5.0" and ping["body"] is None


@pytest.mark.parametrize("prefix", ["/ping", "/v1/ping"])
async def test_every_route_and_method(api: AsyncTestClient, team: Team, prefix: str) -> None:
    monitor = await _monitor(api, team)
    base = f"{prefix}/{monitor['ping_token']}"
    calls = [("GET", "", "success", None), ("POST", "/start", "start", None),
             ("HEAD", "/log", "log", None), ("POST", "/fail", "fail", None),
             ("GET", "/0", "success", 0), ("HEAD", "/255", "fail", 255),
             ("POST", "/1", "fail", 1), ("GET", "/", "success", None)]
    for method, suffix, _, _ in calls:
        r = await api.request(method, base + suffix)
        assert r.status_code == 200, (method, suffix, r.text)
        assert r.text == ("" if method == "HEAD" else "OK")
    pings = list(reversed(await _pings(api, team, monitor)))
    assert [(p["method"], p["kind"], p["exit_status"]) for p in pings] == [
        (m, kind, status) for m, _, kind, status in calls]
    assert (await _state(api, team, monitor))["status"] == "up"


async def test_body_is_kept_up_to_the_limit(api: AsyncTestClient, team: Team) -> None:
    monitor = await _monitor(api, team)
    url = f"/ping/{monitor['ping_token']}"
    text = "é" * 6000  # 12000 bytes: cut at 10000, inside no character
    assert (await api.post(url, content=text.encode())).status_code == 200
    assert (await api.post(url + "/fail", content=b"\xff\xfe\x00binary")).status_code == 200
    odd = "x" * 9999 + "é"  # the cut falls inside the last character
    assert (await api.post(url + "/log", content=odd.encode())).status_code == 200
    log_ping, binary, utf8 = await _pings(api, team, monitor)
    assert utf8["body"] == "é" * 5000 and utf8["body_encoding"] == "utf-8"
    assert utf8["body_size"] == 12000 and utf8["body_truncated"] is True
    assert binary["body_encoding"] == "base64" and binary["body"] == "//4AYmluYXJ5"
    assert binary["body_truncated"] is False
    assert log_ping["body"] == "x" * 9999 and log_ping["body_truncated"] is True


async def test_bodies_over_10_mib_are_refused_and_write_nothing(
    api: AsyncTestClient, team: Team, pool: ConnectionPool
) -> None:
    monitor = await _monitor(api, team)
    url = f"/ping/{monitor['ping_token']}"
    before = await _counts(pool)
    r = await api.post(url, content=b"x" * (10 * 1024 * 1024 + 1))
    assert r.status_code == 413 and r.headers["content-type"].startswith("text/plain")
    # No Content-Length (chunked): counted while reading, refused past 10 MiB.
    chunks = [b"y" * (1024 * 1024)] * 11
    status, _ = await _raw(api, url, [{"type": "http.request", "body": c, "more_body": True}
                                      for c in chunks])
    assert status == 413
    # A client that goes away before the body is read records nothing.
    status, _ = await _raw(api, url, [{"type": "http.request", "body": b"a", "more_body": True},
                                      {"type": "http.disconnect"}])
    assert status is None
    assert await _counts(pool) == before
    r = await api.post(url, content=b"z" * (10 * 1024 * 1024))  # exactly 10 MiB is accepted
    assert r.status_code == 200
    [ping] = await _pings(api, team, monitor)
    assert ping["body_size"] == 10 * 1024 * 1024 and len(ping["body"]) == 10000


async def test_post_only_monitors_ignore_get_and_head(api: AsyncTestClient, team: Team) -> None:
    monitor = await _monitor(api, team, methods="POST")
    assert monitor["methods"] == "post"
    url = f"/ping/{monitor['ping_token']}"
    assert (await api.get(url)).status_code == 200  # unfurlers still get a normal answer
    assert (await api.head(url + "/fail")).status_code == 200
    assert (await _state(api, team, monitor))["status"] == "new"
    assert (await api.post(url)).status_code == 200
    assert (await _state(api, team, monitor))["status"] == "up"
    assert [p["kind"] for p in await _pings(api, team, monitor)] == [
        "success", "ignored", "ignored"]


async def test_rid_pairs_start_and_success(api: AsyncTestClient, team: Team) -> None:
    monitor = await _monitor(api, team)
    url = f"/ping/{monitor['ping_token']}"
    rid = str(uuid.uuid4())
    assert (await api.get(f"{url}/start?rid={rid}")).status_code == 200
    assert (await _state(api, team, monitor))["last_start_at"] is not None
    assert (await api.get(f"{url}/0", params={"rid": rid})).status_code == 200
    state = await _state(api, team, monitor)
    assert state["last_start_at"] is None and state["last_duration_ms"] is not None
    end, start = (await _pings(api, team, monitor))
    assert start["rid"] == end["rid"] == rid
    assert end["duration_ms"] == state["last_duration_ms"] >= 0


@pytest.mark.parametrize(("suffix", "status", "text"), [
    ("/256", 400, "invalid exit status 256"),
    ("/999999999", 400, "invalid exit status"),
    ("/999999999999999999999", 400, "invalid exit status 99999999999999999999…"),
    ("/" + "9" * 5000, 400, "invalid exit status"),
    ("/+1", 404, "not found"),
    ("?rid=not-a-uuid", 400, "invalid uuid format: rid"),
    ("?rid=%00", 400, "invalid uuid format: rid"),
    # healthchecks' is_valid_uuid_string: empty is not absent, and only the hyphenated form
    ("?rid=", 400, "invalid uuid format: rid"),
    ("?rid=&rid=", 400, "invalid uuid format: rid"),
    ("?rid=3fa85f6457174562b3fc2c963f66afa6", 400, "invalid uuid format: rid"),
    ("?rid={3fa85f64-5717-4562-b3fc-2c963f66afa6}", 400, "invalid uuid format: rid"),
    ("/starts", 404, "not found"),
    ("/start/extra", 404, "not found"),
    ("/-1", 404, "not found"),
])
async def test_bad_parts_of_a_ping_url(api: AsyncTestClient, team: Team,
                                       pool: ConnectionPool, suffix: str, status: int,
                                       text: str) -> None:
    monitor = await _monitor(api, team)
    before = await _counts(pool)
    r = await api.get(f"/ping/{monitor['ping_token']}{suffix}")
    assert r.status_code == status and r.text.startswith(text)
    assert await _counts(pool) == before


async def test_other_methods_are_405(api: AsyncTestClient, team: Team) -> None:
    monitor = await _monitor(api, team)
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS"):
        r = await api.request(method, f"/ping/{monitor['ping_token']}")
        assert r.status_code == 405 and r.headers["allow"] == "GET, POST, HEAD"


@pytest.mark.parametrize("headers", [
    {"User-Agent": "\u00ff\u00fe weird \u00e9".encode("latin-1")},
    {"User-Agent": "caf\u00e9 \u2603".encode()},
    {"User-Agent": "x" * 5000},
    {"X-Forwarded-For": "not an address, 10.0.0.1"},
    {"X-Forwarded-For": "2001:db8::1, 10.0.0.1"},
    {"Content-Type": "application/json"},
    {"Content-Type": "text/plain; charset=utf-16"},
    {"Content-Encoding": "gzip"},
])
async def test_odd_headers_are_recorded_not_fatal(api: AsyncTestClient, team: Team,
                                                  headers: dict[str, Any]) -> None:
    monitor = await _monitor(api, team)
    r = await api.post(f"/ping/{monitor['ping_token']}", headers=headers,
                       content=b"{\"not\": \"gzip\"}")
    assert r.status_code == 200, r.text
    [ping] = await _pings(api, team, monitor)
    assert len(ping["user_agent"] or "") <= 300
    if "X-Forwarded-For" in headers:  # the test client's peer is no trusted proxy
        assert ping["remote_addr"] == "testclient"


async def test_rotated_and_deleted_tokens_stop_working(api: AsyncTestClient,
                                                       team: Team) -> None:
    monitor = await _monitor(api, team)
    old = monitor["ping_token"]
    r = await api.post(f"/v1/monitors/{monitor['id']}/rotate-token", headers=team.auth)
    new = r.json()["ping_token"]
    assert new != old and r.json()["ping_url"].endswith(new)
    assert (await api.get(f"/ping/{old}")).status_code == 404
    assert (await api.get(f"/ping/{new}")).status_code == 200
    await api.delete(f"/v1/monitors/{monitor['id']}", headers=team.auth)
    assert (await api.get(f"/ping/{new}")).status_code == 404


async def test_an_unavailable_database_is_503_not_500(api: AsyncTestClient, team: Team,
                                                      shared_dsn: str) -> None:
    """curl --retry retries a 503; a 500 would say the request itself was at fault."""
    monitor = await _monitor(api, team)
    state = api.app.state
    closed = await open_ping_pool(shared_dsn, size=1)
    await closed.close()
    working, state.ping_batcher = state.ping_batcher, PingBatcher(closed)
    try:
        r = await api.get(f"/ping/{monitor['ping_token']}")
    finally:
        state.ping_batcher = working
    assert r.status_code == 503 and r.headers["retry-after"] == "1"
    assert (await api.get(f"/ping/{monitor['ping_token']}")).status_code == 200


async def test_a_500_on_a_secret_path_logs_the_route_never_the_secret(
        api: AsyncTestClient, team: Team, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Issue 32 (outside test): the 500 log line named the raw path, so a failure on a ping
    (``/ping/<token>``, ``/ping/<ping key>/<slug>``) or a status page (``/status/<key>``)
    wrote its secret to the log. It names the route's template instead."""
    import logging

    import api.ui.pages.status as status_pages

    monitor = await _monitor(api, team, slug="logged")
    r = await api.post("/v1/team/ping-key", headers=team.auth)
    assert r.status_code in (200, 201), r.text
    ping_key = r.json()["ping_key"]
    r = await api.post("/v1/status-pages", headers=team.auth,
                       json={"title": "Logged", "components": [monitor["id"]]})
    assert r.status_code == 201, r.text
    page_path = r.json()["url"].split("testserver.local")[-1]
    page_key = page_path.rsplit("/", 1)[1]

    async def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the cause, without the request's path")

    monkeypatch.setattr(api.app.state.ping_batcher, "record", boom)
    monkeypatch.setattr(status_pages, "find_page", boom)
    # Litestar's logging set-up replaced the root handlers, pytest's among them.
    logging.getLogger().addHandler(caplog.handler)
    try:
        caplog.set_level(logging.INFO, logger="cronledger")
        for path in (f"/ping/{monitor['ping_token']}", f"/ping/{ping_key}/logged/start",
                     page_path, f"{page_path}/feed.atom"):
            caplog.clear()
            answer = await api.get(path)
            assert answer.status_code == 500, (path, answer.text)
            logged = "\n".join(caplog.handler.format(r) for r in caplog.records
                               if r.name.startswith("cronledger"))  # the server's log
            assert "the cause, without the request's path" in logged, (path, logged)
            for secret in (monitor["ping_token"], ping_key, page_key):
                assert secret not in logged, (path, logged)
            assert ("GET /ping/…" in logged if path.startswith("/ping/")
                    else "/status/{key}" in logged), logged
    finally:
        logging.getLogger().removeHandler(caplog.handler)
