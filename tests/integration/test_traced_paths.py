"""The files a run, a ping and an event cross, as docs/architecture.md lists them (*A run*,
*A ping*, *An event*):
every ``core/`` and ``api/`` module whose functions run on the path, recorded with Python's
profile hook, equals the page's list, so a new hop or a folded one changes the page too.

Real PostgreSQL, a real local HTTP server, the real worker, API and projector.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from api.app import create_app
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.runs.worker import Worker
from tests.helpers import add_job, new_actor, project_all, runs_of
from tests.sink import Reply, Sink
from tests.teams import Team, new_team

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
SLACK = {"kind": "slack", "url": "https://hooks.slack.com/services/T0/B0/x"}


class Trace:
    """The repository modules (``core/…``, ``api/…``) whose functions ran while recording."""

    def __init__(self) -> None:
        self.recording = False
        self.files: set[str] = set()
        self._prefixes = (str(ROOT / "core") + "/", str(ROOT / "api") + "/")

    def hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if self.recording and event == "call" and frame.f_code.co_name != "<module>":
            name = frame.f_code.co_filename
            if name.startswith(self._prefixes):
                self.files.add(str(Path(name).relative_to(ROOT)))


def _cold() -> None:
    """Empty the function caches of every loaded ``core`` module (parsed schedules, cron
    fields …), so that a path reads as it does the first time, whatever ran before."""
    for name, module in list(sys.modules.items()):
        if name == "core" or name.startswith("core."):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


@pytest.fixture
def trace() -> Iterator[Trace]:
    """A trace hooked into this thread and the threads started after it (the API test
    client's), so it must come before the fixtures that start them; caches emptied."""
    _cold()
    t = Trace()
    sys.setprofile(t.hook)
    threading.setprofile(t.hook)
    try:
        yield t
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]  # None removes the hook


def documented(section: str) -> set[str]:
    """The files the page's ``section`` lists after "Files crossed": ``N — `dir/`: a, b;
    `dir/`: c``, up to the first full stop; ``N`` must be how many."""
    text = " ".join(PAGE.read_text().split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0].split())
    match = re.search(r"Files crossed.*?: (\d+) — (.*?)\. ", text)
    assert match, f"docs/architecture.md, {section}: no 'Files crossed … N — …' list"
    files = set()
    for group in match.group(2).split("; "):
        folder, _, names = group.partition(": ")
        files |= {f"{folder.strip('`')}{n.strip().strip('`')}.py" for n in names.split(",")}
    assert len(files) == int(match.group(1)), f"{section}: the count is not the list's"
    return files


async def test_a_run_crosses_the_files_the_page_lists(
    trace: Trace, fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    """A failing job with a channel: its slot claimed, sent, recorded failed, its alert
    queued, and the projector's batch applied."""
    actor = await new_actor(fresh_pool)
    channel, _ = await create_channel(fresh_pool, sealer, actor, {"name": "ops", **SLACK}, T0)
    sink.reply("/a", Reply(status=500))
    job = await add_job(fresh_pool, actor, T0, sink.url("/a"), "* * * * *",
                        channels=[str(channel)], retry={"attempts": 1})
    clock.set(T0 + timedelta(minutes=1))
    trace.recording = True
    await worker.run_once()
    await worker.settle()
    await project_all(fresh_pool)
    trace.recording = False
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "failed"
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM notifications "
                                 "WHERE subject_id = %s", (job,))
        assert (await cur.fetchone())["n"] == 1
    page = documented("A run")
    assert (sorted(trace.files - page), sorted(page - trace.files)) == ([], [])


async def test_a_ping_crosses_the_files_the_page_lists(
    trace: Trace, api: AsyncTestClient, team: Team, pool: ConnectionPool,
) -> None:
    """A ``/fail`` ping of a monitor with a channel, through the route: recorded, its alert
    queued."""
    r = await api.post("/v1/channels", json={"name": "ops", **SLACK}, headers=team.auth)
    assert r.status_code == 201, r.text
    r = await api.post("/v1/monitors", json={"name": "nightly", "schedule": "1h",
                                             "channels": [r.json()["id"]]},
                       headers=team.auth)
    assert r.status_code == 201, r.text
    monitor, token = r.json()["id"], r.json()["ping_token"]
    assert (await api.get(f"/ping/{token}")).status_code == 200
    trace.recording = True
    assert (await api.get(f"/ping/{token}/fail")).status_code == 200
    trace.recording = False
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM notifications "
                                 "WHERE subject_id = %s", (monitor,))
        assert (await cur.fetchone())["n"] == 1
    page = documented("A ping")
    assert (sorted(trace.files - page), sorted(page - trace.files)) == ([], [])


async def test_an_event_crosses_the_files_the_page_lists(
    trace: Trace, fresh_dsn: str, fresh_pool: ConnectionPool, settings: Settings,
    clock: FrozenClock,
) -> None:
    """A job renamed by a ``PATCH`` through the route: ``job.updated`` appended with the job's
    row, the projector's batch applied to the read models, and ``/v1/dashboard`` read from
    them. Its own database, so that the projector's batch is this job's events only."""
    team = await new_team(fresh_pool)
    app = create_app(fresh_dsn, settings, clock)
    async with AsyncTestClient(app=app, raise_server_exceptions=False) as api:
        r = await api.post("/v1/jobs", json={"name": "nightly", "schedule": "0 3 * * *",
                                             "request": {"url": "http://127.0.0.1:9/report"}},
                           headers=team.auth)
        assert r.status_code == 201, r.text
        job = r.json()["id"]
        await project_all(fresh_pool)
        trace.recording = True
        r = await api.patch(f"/v1/jobs/{job}", json={"name": "nightly report"},
                            headers=team.auth)
        await project_all(fresh_pool)
        dashboard = await api.get("/v1/dashboard", headers=team.read_auth)
        trace.recording = False
    assert r.status_code == 200, r.text
    assert dashboard.status_code == 200, dashboard.text
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT max(global_position) AS last FROM events")
        last = (await cur.fetchone())["last"]
        cur = await conn.execute("SELECT name FROM job_health WHERE job_id = %s", (job,))
        assert (await cur.fetchone())["name"] == "nightly report"
    assert dashboard.json()["projection"]["global_position"] == last
    page = documented("An event")
    assert (sorted(trace.files - page), sorted(page - trace.files)) == ([], [])
