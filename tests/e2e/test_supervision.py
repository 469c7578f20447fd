"""Supervision and health (docs/operations.md, "Supervision and health checks"): a background task
that dies stops its process with an
error and a non-zero exit; the heartbeat behind ``cronledger health`` is written only while
every loop runs and the database answers."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from psycopg_pool import AsyncConnectionPool

from api.runner import Service, ServiceFailed, _run_services, serve
from core.clock import FrozenClock, SystemClock
from core.config import Settings
from core.db import ConnectionPool
from core.services.health import Heartbeat, check_heartbeat, write_heartbeat
from tests.helpers import eventually
from tests.processes import ROOT, cronledger, stop


def _health(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "api.cli", "health"], cwd=ROOT,
                          env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=60)


class Boom:
    """A service that fails (or returns) once the others are running."""

    def __init__(self, fail: bool) -> None:
        self.fail, self.stopped = fail, asyncio.Event()

    async def run(self) -> None:
        await asyncio.sleep(0)
        if self.fail:
            raise RuntimeError("boom: injected failure")

    def stop(self) -> None:
        self.stopped.set()


@pytest.mark.parametrize("fail", [True, False])
async def test_a_service_that_ends_stops_the_others_and_raises(
    fresh_dsn: str, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture, fail: bool,
) -> None:
    monkeypatch.setenv("CRONLEDGER_HEARTBEAT_FILE", str(tmp_path / "hb"))
    boom = Boom(fail)
    caplog.set_level(logging.ERROR, "cronledger")
    async with asyncio.timeout(60):
        with pytest.raises(ServiceFailed, match="boom"):
            await _run_services(fresh_dsn, settings, asyncio.Event(),
                                extra=[Service("boom", boom.run, boom.stop)])
    [line] = [r for r in caplog.records if "ended unexpectedly" in r.getMessage()]
    assert "boom" in line.getMessage()
    assert ("RuntimeError('boom: injected failure')" in line.getMessage()) == fail
    assert "returned" in line.getMessage() or fail
    assert boom.stopped.is_set()  # every service was told to stop
    assert not (tmp_path / "hb").exists()  # a stopped process is never reported healthy


async def test_serve_raises_when_a_service_dies_and_not_on_a_requested_stop(
    fresh_dsn: str, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CRONLEDGER_HEARTBEAT_FILE", str(tmp_path / "hb"))
    boom = Boom(True)
    async with asyncio.timeout(60):
        with pytest.raises(ServiceFailed):
            await serve(fresh_dsn, settings, with_api=False, with_services=True,
                        extra=[Service("boom", boom.run, boom.stop)])
    # A stop that was requested is a clean return.
    requested = asyncio.Event()
    task = asyncio.create_task(_run_services(fresh_dsn, settings, requested))
    await eventually((tmp_path / "hb").exists, 60, 0.01, "the services up and beating")
    requested.set()
    assert await asyncio.wait_for(task, 60) is None


class Deaf:
    """A service that does not hear its stop: it runs until it is cancelled."""

    def __init__(self) -> None:
        self.running, self.cancelled = asyncio.Event(), False

    async def run(self) -> None:
        self.running.set()
        try:
            await asyncio.Event().wait()  # never set: only a cancel ends this
        except asyncio.CancelledError:
            self.cancelled = True
            raise

    def stop(self) -> None:
        return  # deliberately ignored


async def test_a_service_that_ignores_its_stop_is_cancelled_after_the_grace(
    fresh_dsn: str, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("CRONLEDGER_HEARTBEAT_FILE", str(tmp_path / "hb"))
    monkeypatch.setattr("api.runner.STOP_MARGIN_SECONDS", 0.2)
    deaf, requested = Deaf(), asyncio.Event()
    caplog.set_level(logging.ERROR, "cronledger")
    task = asyncio.create_task(_run_services(
        fresh_dsn, replace(settings, shutdown_grace_seconds=0.0), requested,
        extra=[Service("deaf", deaf.run, deaf.stop)]))
    await asyncio.wait_for(deaf.running.wait(), 60)
    requested.set()
    assert await asyncio.wait_for(task, 30) is None  # ended although "deaf" never stopped
    assert deaf.cancelled
    # (with no grace at all, a service busy at the stop - the retention pass making its
    # partitions at start on a loaded machine - may be cancelled too: only "deaf" is asserted)
    [line] = [r.getMessage() for r in caplog.records
              if "did not stop" in r.getMessage() and "service deaf " in r.getMessage()]
    assert "background service deaf did not stop within 0 s" in line
    assert "in run" in line  # where it was waiting: its task's stack


async def test_heartbeat_only_while_every_loop_runs_and_the_database_answers(
    fresh_pool: ConnectionPool, clock: FrozenClock, tmp_path: Path,
) -> None:
    path = tmp_path / "hb"
    alive = asyncio.create_task(asyncio.Event().wait(), name="alive")
    dead = asyncio.create_task(asyncio.sleep(0), name="dead")
    await dead
    beat = Heartbeat(path, fresh_pool, clock, db_timeout=2)
    assert await beat.beat([alive]) is True
    assert check_heartbeat(path, clock.now()) is None
    assert check_heartbeat(path, clock.now() + timedelta(seconds=59)) is None

    clock.advance(61)
    assert await beat.beat([alive, dead]) is False  # a dead loop: no beat
    assert "old" in check_heartbeat(path, clock.now())

    unreachable = AsyncConnectionPool("postgresql://postgres@127.0.0.1:1/none", min_size=0,
                                      max_size=1, open=False)
    await unreachable.open(wait=False)
    try:
        assert await Heartbeat(path, unreachable, clock, db_timeout=0.5).beat([alive]) is False
    finally:
        await unreachable.close()
    assert "old" in check_heartbeat(path, clock.now())
    assert await beat.beat([alive]) is True  # alive again
    assert check_heartbeat(path, clock.now()) is None
    alive.cancel()
    assert "no heartbeat file" in check_heartbeat(tmp_path / "missing", clock.now())


def test_health_command_exit_codes(tmp_path: Path) -> None:
    env = {"CRONLEDGER_HEARTBEAT_FILE": str(tmp_path / "hb")}
    missing = _health(env)
    assert missing.returncode == 1 and "no heartbeat file" in missing.stderr
    write_heartbeat(tmp_path / "hb", SystemClock().now() - timedelta(hours=1))
    stale = _health(env)
    assert stale.returncode == 1 and "old" in stale.stderr
    write_heartbeat(tmp_path / "hb", SystemClock().now())
    assert _health(env).returncode == 0


async def test_a_real_worker_process_is_healthy_until_it_stops(
    fresh_dsn: str, tmp_path: Path,
) -> None:
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_HEARTBEAT_FILE": str(tmp_path / "hb")}
    process = cronledger("worker", env=env, log=tmp_path / "worker.log")
    try:

        async def healthy() -> bool:
            assert process.poll() is None, (tmp_path / "worker.log").read_text()
            return (await asyncio.to_thread(_health, env)).returncode == 0

        await eventually(healthy, 60, 0.2, "the worker healthy")
    finally:
        assert await asyncio.to_thread(stop, process) == 0
    assert _health(env).returncode == 1




def test_the_cli_exits_1_when_a_service_died(fresh_dsn: str, settings: Settings,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import api.runner
    from api.cli import _serve

    async def dying(*_args: object, **_kwargs: object) -> None:
        raise ServiceFailed("background service checker raised RuntimeError('x')")

    monkeypatch.setattr(api.runner, "serve", dying)
    assert _serve(replace(settings, database_url=fresh_dsn), with_api=False,
                  with_services=True) == 1
