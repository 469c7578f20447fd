"""A run's page in the dashboard: the request as recorded (secret placeholders, never the
value), the response as text or, when it is not text, as a hex preview; hostile bytes inert
(docs/dashboard-code.md)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
from litestar.testing import AsyncTestClient

from api.app import create_app
from core.apikeys import create_api_key
from core.clock import FrozenClock
from core.config import Settings
from core.crypto import KeyRing
from core.db import ConnectionPool
from core.runs.worker import Worker
from core.secrets import put_secret
from tests.helpers import add_job, runs_of
from tests.integration.test_dashboard_auth import sign_in
from tests.sink import Reply, Sink

BINARY = b"\xff\xfe\x00<script>alert(1)</script>\x80"


@pytest.fixture
async def fresh_api(fresh_dsn: str, settings: Settings,
                    clock: FrozenClock) -> AsyncIterator[AsyncTestClient]:
    async with AsyncTestClient(app=create_app(fresh_dsn, settings, clock),
                               raise_server_exceptions=False) as client:
        yield client


async def test_a_runs_attempts_show_placeholders_and_binary_bodies_as_hex(
        fresh_api: AsyncTestClient, fresh_pool: ConnectionPool, worker: Worker,
        clock: FrozenClock, sink: Sink, settings: Settings) -> None:
    key, record = await create_api_key(fresh_pool, "runs", "read")
    from core.actor import Actor

    actor = Actor(team_id=record["team_id"])
    await put_secret(fresh_pool, KeyRing.from_sources(settings.secret_key, None), actor,
                     "TOKEN", "hunter2-value", clock.now())
    sink.reply("/bin", Reply(status=200, body=BINARY),
               Reply(status=200, body=b"<b>" + b"x" * 1_000_000))
    job = await add_job(fresh_pool, actor, clock.now(), sink.url("/bin"), "* * * * *",
                        name="binary <b>", request={
                            "headers": {"Authorization": "Bearer ${secrets.TOKEN}"}})
    for _ in range(2):
        clock.advance(60)
        await worker.run_once()
        await worker.settle()
    assert [h.headers["Authorization"] for h in sink.hits] == ["Bearer hunter2-value"] * 2
    runs = await runs_of(fresh_pool, job)
    assert len(runs) == 2
    await sign_in(fresh_api, key)
    pages = {}
    for run in runs:
        page = await fresh_api.get(f"/ui/runs/{run['id']}")
        assert page.status_code == 200
        assert "hunter2" not in page.text
        assert "Bearer ${secrets.TOKEN}" in page.text
        assert "<script>alert" not in page.text and "<b>x" not in page.text
        pages[run["scheduled_for"]] = page.text
    binary, large = (pages[k] for k in sorted(pages))
    assert "binary, hex preview" in binary
    assert "00000000  ff fe 00 3c 73 63 72 69 70 74 3e" in binary
    assert "&lt;b&gt;xxx" in large and len(large) < 200_000  # a preview, not the whole body
    job_page = await fresh_api.get(f"/ui/jobs/{job}")
    assert "binary &lt;b&gt;" in job_page.text and "<svg" in job_page.text
    assert job_page.text.count('data-run-status="succeeded"') == 2


async def test_a_spread_runs_page_shows_its_fire_time_next_to_its_slot(
        fresh_api: AsyncTestClient, fresh_pool: ConnectionPool, worker: Worker,
        clock: FrozenClock, sink: Sink) -> None:
    """A run of a job with a spread: its page shows the fire time (slot + offset, from the
    run's first event) and the offset; a run of a job without one shows the slot only."""
    from tests.integration.test_spread import CREATED, HOUR, T0, spread_job, tick

    key, record = await create_api_key(fresh_pool, "spread runs", "read")
    from core.actor import Actor

    actor = Actor(team_id=record["team_id"])
    job, offset = await spread_job(fresh_pool, actor, sink, "/spread")
    plain = await add_job(fresh_pool, actor, CREATED, sink.url("/plain"), "0 * * * *")
    await tick(worker, clock, T0 + HOUR + offset)
    [run] = await runs_of(fresh_pool, job)
    [plain_run] = await runs_of(fresh_pool, plain)
    await sign_in(fresh_api, key)
    page = (await fresh_api.get(f"/ui/runs/{run['id']}")).text
    fire = (T0 + HOUR + offset).strftime("%Y-%m-%d %H:%M:%S")
    assert "Fire time" in page and fire in page
    seconds = int(offset.total_seconds())
    spelled = (f"{seconds // 60}m" if seconds >= 60 else "") + (
        f"{seconds % 60}s" if seconds % 60 else "")
    assert f"{spelled} after the slot" in page
    plain_page = (await fresh_api.get(f"/ui/runs/{plain_run['id']}")).text
    assert plain_page.count("Slot") >= 1 and "Fire time" not in plain_page

    # the job's page lists each run's fire time beside its slot, from the list's own query
    # (run_list_for_job): the spread job's is the slot plus the offset, the plain job's the slot
    def cells(html: str, label: str) -> list[str]:
        return re.findall(rf'data-label="{label}"><time datetime="[^"]*" title="([^"]*)"',
                          html)

    job_page = (await fresh_api.get(f"/ui/jobs/{job}")).text
    slot = (T0 + HOUR).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert "<th scope=\"col\">Fire time</th>" in job_page
    assert cells(job_page, "Slot") == [slot] and cells(job_page, "Fire time") == [f"{fire} UTC"]
    plain_job_page = (await fresh_api.get(f"/ui/jobs/{plain}")).text
    assert cells(plain_job_page, "Fire time") == cells(plain_job_page, "Slot") == [slot]
