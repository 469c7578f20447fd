"""The dashboard's sign-in, sessions, CSRF and scope checks, through the ASGI test client
(docs/dashboard-code.md)."""

from __future__ import annotations

import re
import uuid

from litestar.testing import AsyncTestClient

from core.clock import FrozenClock
from core.db import ConnectionPool
from core.sessions import SESSION_SECONDS, issue_signin_link
from tests.teams import Team

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


async def sign_in(client: AsyncTestClient, key: str) -> str:
    """Sign ``client`` in with ``key``; the CSRF token of its session's forms."""
    form = await client.get("/ui/signin")
    token = CSRF.search(form.text).group(1)  # type: ignore[union-attr]
    answer = await client.post("/ui/signin", data={"csrf": token, "api_key": key, "next": "/"},
                               follow_redirects=False)
    assert answer.status_code == 303, answer.text
    page = await client.get("/")
    assert page.status_code == 200
    return CSRF.search(page.text).group(1)  # type: ignore[union-attr]


async def _job_count(pool: ConnectionPool, team: Team) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM jobs WHERE team_id = %s",
                                 (team.actor.team_id,))
        return (await cur.fetchone())["n"]


async def test_pages_redirect_to_sign_in_without_a_session(frozen_api: AsyncTestClient) -> None:
    answer = await frozen_api.get("/ui/jobs?state=active", follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/ui/signin?next=/ui/jobs%3Fstate%3Dactive"
    form = await frozen_api.get("/ui/signin")
    assert '<label for="api_key">API key</label>' in form.text


async def test_sign_in_sets_a_session_cookie_stored_only_as_a_hash(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    form = await frozen_api.get("/ui/signin")
    token = CSRF.search(form.text).group(1)  # type: ignore[union-attr]
    answer = await frozen_api.post("/ui/signin", data={"csrf": token, "api_key": team.write},
                                   follow_redirects=False)
    assert answer.status_code == 303
    cookie = answer.headers["set-cookie"]
    assert "cronledger_session=" in cookie and "HttpOnly" in cookie
    assert "SameSite=lax" in cookie or "SameSite=Lax" in cookie
    assert "Secure" not in cookie  # plain HTTP
    session_id = frozen_api.cookies["cronledger_session"]
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM ui_sessions WHERE id_hash = %s",
                                 (session_id.encode(),))
        assert (await cur.fetchone())["n"] == 0  # the id itself is never stored
    page = await frozen_api.get("/")
    assert page.status_code == 200 and "Overview" in page.text


async def test_a_wrong_key_or_a_missing_form_token_opens_no_session(
        frozen_api: AsyncTestClient, team: Team) -> None:
    form = await frozen_api.get("/ui/signin")
    token = CSRF.search(form.text).group(1)  # type: ignore[union-attr]
    wrong = await frozen_api.post("/ui/signin", data={"csrf": token, "api_key": "clk_nope"})
    assert wrong.status_code == 401 and "unknown or revoked" in wrong.text
    forged = await frozen_api.post("/ui/signin", data={"api_key": team.write})
    assert forged.status_code == 403
    assert "cronledger_session" not in frozen_api.cookies


async def test_the_cookie_is_secure_behind_a_trusted_https_proxy_only(
        frozen_api: AsyncTestClient, team: Team) -> None:
    form = await frozen_api.get("/ui/signin")
    token = CSRF.search(form.text).group(1)  # type: ignore[union-attr]
    # The test client's peer is "testclient", not a trusted proxy: the header is not believed.
    answer = await frozen_api.post(
        "/ui/signin", data={"csrf": token, "api_key": team.write},
        headers={"X-Forwarded-Proto": "https"}, follow_redirects=False)
    assert "Secure" not in answer.headers["set-cookie"]
    frozen_api.app.state.settings = frozen_api.app.state.settings.__class__(
        **{**frozen_api.app.state.settings.__dict__, "trusted_proxies": "*"})
    answer = await frozen_api.post(
        "/ui/signin", data={"csrf": token, "api_key": team.write},
        headers={"X-Forwarded-Proto": "https"}, follow_redirects=False)
    assert "Secure" in answer.headers["set-cookie"]


async def test_a_session_expires(frozen_api: AsyncTestClient, team: Team,
                                 clock: FrozenClock) -> None:
    await sign_in(frozen_api, team.write)
    clock.advance(SESSION_SECONDS - 1)
    assert (await frozen_api.get("/", follow_redirects=False)).status_code == 200
    clock.advance(1)
    assert (await frozen_api.get("/", follow_redirects=False)).status_code == 303


async def test_revoking_the_key_ends_its_sessions(
        frozen_api: AsyncTestClient, team: Team) -> None:
    await sign_in(frozen_api, team.read)
    read_session = frozen_api.cookies["cronledger_session"]
    frozen_api.cookies.clear()
    await sign_in(frozen_api, team.write)
    write_session = frozen_api.cookies["cronledger_session"]
    keys = await frozen_api.get("/v1/api-keys", headers=team.auth)
    read_id = next(k["id"] for k in keys.json()["items"] if k["scope"] == "read")
    revoked = await frozen_api.delete(f"/v1/api-keys/{read_id}", headers=team.auth)
    assert revoked.status_code == 204
    frozen_api.cookies.set("cronledger_session", read_session)
    assert (await frozen_api.get("/", follow_redirects=False)).status_code == 303
    frozen_api.cookies.set("cronledger_session", write_session)
    assert (await frozen_api.get("/", follow_redirects=False)).status_code == 200


async def test_sign_out_ends_the_session(frozen_api: AsyncTestClient,
                                         team: Team) -> None:
    csrf = await sign_in(frozen_api, team.read)
    session_id = frozen_api.cookies["cronledger_session"]
    refused = await frozen_api.post("/ui/signout", data={}, follow_redirects=False)
    assert refused.status_code == 403
    out = await frozen_api.post("/ui/signout", data={"csrf": csrf}, follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/ui/signin"
    frozen_api.cookies.set("cronledger_session", session_id)  # the old cookie, replayed
    assert (await frozen_api.get("/", follow_redirects=False)).status_code == 303


async def test_a_sign_in_link_works_once(frozen_api: AsyncTestClient, team: Team,
                                         pool: ConnectionPool, clock: FrozenClock) -> None:
    token = await issue_signin_link(pool, team.name, clock.now())
    first = await frozen_api.get(f"/ui/signin?token={token}&next=/ui/jobs",
                                 follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/ui/jobs"
    assert (await frozen_api.get("/ui/jobs")).status_code == 200
    frozen_api.cookies.clear()
    again = await frozen_api.get(f"/ui/signin?token={token}", follow_redirects=False)
    assert again.status_code == 401 and "used, expired or unknown" in again.text
    expired = await issue_signin_link(pool, team.name, clock.now())
    clock.advance(25 * 3600)
    late = await frozen_api.get(f"/ui/signin?token={expired}", follow_redirects=False)
    assert late.status_code == 401


async def test_unknown_pages_are_the_html_404(frozen_api: AsyncTestClient,
                                              team: Team) -> None:
    await sign_in(frozen_api, team.read)
    missing = await frozen_api.get("/ui/no/such/page")
    assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]
    assert "Not found" in missing.text
    job = await frozen_api.get(f"/ui/jobs/{uuid.uuid4()}")
    assert job.status_code == 404 and "text/html" in job.headers["content-type"]
    api = await frozen_api.get("/v1/nope")
    assert api.headers["content-type"].startswith("application/problem+json")


async def test_sign_in_goes_only_to_local_pages(frozen_api: AsyncTestClient,
                                                team: Team) -> None:
    for target, expected in (("/ui/jobs", "/ui/jobs"), ("//evil.example/", "/"),
                             ("https://evil.example/", "/"), ("/\t/evil.example", "/"),
                             ("/\\evil.example", "/")):
        frozen_api.cookies.clear()
        form = await frozen_api.get("/ui/signin")
        token = CSRF.search(form.text).group(1)  # type: ignore[union-attr]
        answer = await frozen_api.post("/ui/signin", data={
            "csrf": token, "api_key": team.read, "next": target}, follow_redirects=False)
        assert answer.headers["location"] == expected, target

