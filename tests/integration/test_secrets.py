"""Secrets: the key ring, the write-only API, key files, rotation, and the guarantee that a
plaintext value appears nowhere: not in a dump of the database, the logs, the events or any API
response."""

from __future__ import annotations

import base64
import logging
import os
import re
import shutil
import stat
import subprocess
import threading
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar.testing import AsyncTestClient

from api.app import create_app
from api.cli import with_key_source
from core.actor import Actor
from core.apikeys import create_api_key
from core.clock import FrozenClock
from core.config import ConfigError, Settings, load_settings
from core.crypto import (
    KeyConfigError,
    KeyRing,
    SecretUnavailable,
    ensure_key_file,
    key_id,
    new_key,
    parse_keys,
    secret_aad,
)
from core.db import ConnectionPool
from core.errors import Unavailable
from core.secrets import NAME_WORDS, put_secret, rotate_key
from tests.helpers import make_worker
from tests.processes import ROOT
from tests.sink import Reply, Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
TEAM = uuid.uuid4().bytes


# -- the key ring -------------------------------------------------------------------------------
def test_seal_and_open_bind_team_and_name() -> None:
    ring = KeyRing.from_sources(new_key(), "")
    a = ring.seal(b"hunter2", secret_aad(TEAM, "DB"))
    b = ring.seal(b"hunter2", secret_aad(TEAM, "DB"))
    assert a.nonce != b.nonce and a.ciphertext != b.ciphertext  # fresh nonce every time
    assert len(a.nonce) == 12 and b"hunter2" not in a.ciphertext
    assert ring.open(a, secret_aad(TEAM, "DB")) == b"hunter2"
    with pytest.raises(SecretUnavailable, match="does not authenticate"):
        ring.open(a, secret_aad(TEAM, "OTHER"))  # moved to another name
    with pytest.raises(SecretUnavailable, match="does not authenticate"):
        ring.open(a, secret_aad(uuid.uuid4().bytes, "DB"))  # moved to another team
    tampered = replace(a, ciphertext=bytes([a.ciphertext[0] ^ 1]) + a.ciphertext[1:])
    with pytest.raises(SecretUnavailable):
        ring.open(tampered, secret_aad(TEAM, "DB"))


def test_rotation_keeps_old_keys_readable() -> None:
    old, new = new_key(), new_key()
    before = KeyRing.from_sources(old, "").seal(b"v", b"aad")
    rotated = KeyRing.from_sources(f"{new}, {old}", "")
    assert rotated.current_id == key_id(base64.b64decode(new))
    assert rotated.open(before, b"aad") == b"v"
    assert rotated.seal(b"v", b"aad").key_id == rotated.current_id
    with pytest.raises(SecretUnavailable, match=f"key {before.key_id}, which is not configured"):
        KeyRing.from_sources(new, "").open(before, b"aad")


def test_bad_keys_are_refused_without_echoing_them() -> None:
    for bad in ("not-base64!!", base64.b64encode(b"short").decode()):
        with pytest.raises(KeyConfigError) as err:
            parse_keys(f"{new_key()},{bad}", "CRONLEDGER_SECRET_KEY")
        assert "key #2" in str(err.value) and bad not in str(err.value)
    with pytest.raises(ConfigError, match="CRONLEDGER_SECRET_KEY"):
        load_settings({"CRONLEDGER_SECRET_KEY": "nope"})
    key = new_key()
    settings = load_settings({"CRONLEDGER_SECRET_KEY": key})
    assert settings.secret_key == key and key not in repr(settings)


def test_an_empty_ring_refuses_to_seal() -> None:
    ring = KeyRing([])
    assert not ring.enabled
    with pytest.raises(Unavailable, match="CRONLEDGER_SECRET_KEY"):
        ring.seal(b"x", b"")


def test_embedded_key_file_is_created_once_with_mode_0600(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    paths: list[Path] = []
    threads = [threading.Thread(target=lambda: paths.append(ensure_key_file(data_dir)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    path = data_dir / "secret.key"
    assert set(paths) == {path}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(parse_keys(path.read_text(), "file")) == 1
    assert [p.name for p in data_dir.iterdir()] == ["secret.key"]  # no temporary file left
    first = path.read_text()
    ensure_key_file(data_dir)
    assert path.read_text() == first
    # What `cronledger serve` does without DATABASE_URL and without a configured key:
    settings = with_key_source(Settings(database_url=None, data_dir=str(data_dir)))
    assert settings.secret_key_file == str(path)
    assert KeyRing.from_sources("", settings.secret_key_file).enabled
    # With DATABASE_URL, no key is invented (several hosts must share one).
    remote = with_key_source(Settings(database_url="postgresql://x/y", data_dir=str(tmp_path)))
    assert remote.secret_key_file == "" and not (tmp_path / "secret.key").exists()
    path.chmod(0o644)
    with pytest.raises(KeyConfigError, match="chmod 600"):
        ensure_key_file(data_dir)


# -- the API ------------------------------------------------------------------------------------
async def test_secrets_api_is_write_only(api: AsyncTestClient, team: Team) -> None:
    auth = team.auth
    r = await api.put("/v1/secrets/API_TOKEN", json={"value": "v-one-7781"}, headers=auth)
    assert r.status_code == 201, r.text
    assert set(r.json()) == {"name", "created_at", "updated_at"}
    r = await api.put("/v1/secrets/API_TOKEN", json={"value": "v-two-7782"}, headers=auth)
    assert r.status_code == 200
    for name in ("b.second", "c-third"):
        await api.put(f"/v1/secrets/{name}", json={"value": "x"}, headers=auth)
    page = (await api.get("/v1/secrets", params={"limit": 2}, headers=team.read_auth)).json()
    assert [s["name"] for s in page["items"]] == ["API_TOKEN", "b.second"]
    rest = (await api.get("/v1/secrets", params={"cursor": page["next_cursor"]},
                          headers=auth)).json()
    assert [s["name"] for s in rest["items"]] == ["c-third"] and rest["next_cursor"] is None
    assert "v-one" not in str(page) and all(set(s) == {"name", "created_at", "updated_at"}
                                            for s in page["items"])
    assert (await api.delete("/v1/secrets/c-third", headers=auth)).status_code == 204
    r = await api.delete("/v1/secrets/c-third", headers=auth)
    assert r.status_code == 404 and r.headers["content-type"].startswith("application/problem")


@pytest.mark.parametrize(("name", "body", "field"), [
    ("bad name", {"value": "x"}, "name"),
    ("-dash-first", {"value": "x"}, "name"),
    ("x" * 101, {"value": "x"}, "name"),
    ("OK", {"value": ""}, "value"),
    ("OK", {"value": "x" * (64 * 1024 + 1)}, "value"),
    ("OK", {"value": 42}, "value"),
    ("OK", {"value": "x", "extra": 1}, "extra"),
    ("OK", {}, "value"),
])
async def test_bad_secrets_are_422_and_change_nothing(
    api: AsyncTestClient, team: Team, pool: ConnectionPool, name: str,
    body: dict[str, Any], field: str,
) -> None:
    r = await api.put(f"/v1/secrets/{name}", json=body, headers=team.auth)
    assert r.status_code == 422, r.text
    assert field in [e["field"] for e in r.json().get("errors", [])], r.json()
    if field == "name":  # the path's pattern in words (issue 32), never the raw regex
        assert r.json()["errors"] == [{"field": "name", "message": NAME_WORDS}], r.json()
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM secrets WHERE team_id = %s",
                                 (team.actor.team_id,))
        assert (await cur.fetchone())["n"] == 0


async def test_secrets_are_team_scoped(
    api: AsyncTestClient, team: Team, pool: ConnectionPool
) -> None:
    await api.put("/v1/secrets/MINE", json={"value": "mine-value"}, headers=team.auth)
    r = await api.put("/v1/secrets/MINE", json={"value": "x"}, headers=team.read_auth)
    assert r.status_code == 403
    other, _ = await create_api_key(pool, f"other-{uuid.uuid4().hex[:8]}")
    other_auth = {"Authorization": f"Bearer {other}"}
    assert (await api.get("/v1/secrets", headers=other_auth)).json()["items"] == []
    assert (await api.delete("/v1/secrets/MINE", headers=other_auth)).status_code == 404
    assert len((await api.get("/v1/secrets", headers=team.auth)).json()["items"]) == 1


async def test_without_a_key_secrets_answer_503(
    shared_dsn: str, settings: Settings, team: Team, pool: ConnectionPool
) -> None:
    app = create_app(shared_dsn, replace(settings, secret_key=""))
    async with AsyncTestClient(app=app, raise_server_exceptions=False) as client:
        r = await client.put("/v1/secrets/X", json={"value": "v"}, headers=team.auth)
        assert r.status_code == 503 and "CRONLEDGER_SECRET_KEY" in r.json()["detail"]
        r = await client.post("/v1/jobs", headers=team.auth, json={
            "name": "signed", "schedule": "@daily", "request": {"url": "http://127.0.0.1:9/"},
            "signing_secret": "0123456789abcdef"})
        assert r.status_code == 503
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM jobs WHERE team_id = %s",
                                 (team.actor.team_id,))
        assert (await cur.fetchone())["n"] == 0


# -- rotation -----------------------------------------------------------------------------------
async def _seed(pool: ConnectionPool, ring: KeyRing) -> tuple[Actor, uuid.UUID]:
    from core.jobs.commands import create_job

    _, record = await create_api_key(pool, f"rot-{uuid.uuid4().hex[:8]}")
    actor = Actor(team_id=record["team_id"], key_id=record["id"])
    for i in range(3):
        await put_secret(pool, ring, actor, f"S{i}", f"value-{i}", T0)
    job = await create_job(pool, actor, {
        "name": "signed", "schedule": "@daily", "request": {"url": "http://127.0.0.1:9/"},
        "signing_secret": "signing-secret-000"}, T0, ring)
    return actor, job


async def _key_ids(pool: ConnectionPool) -> set[str]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT key_id FROM secrets UNION SELECT key_id FROM job_signing_secrets")
        return {r["key_id"] for r in await cur.fetchall()}


async def test_rotate_key_reencrypts_under_the_newest_key(fresh_pool: ConnectionPool) -> None:
    old, new = new_key(), new_key()
    old_ring = KeyRing.from_sources(old, "")
    actor, _ = await _seed(fresh_pool, old_ring)
    assert await _key_ids(fresh_pool) == {old_ring.current_id}
    ring = KeyRing.from_sources(f"{new},{old}", "")
    summary = await rotate_key(fresh_pool, ring)
    assert (summary["secrets"], summary["signing_secrets"], summary["unreadable"]) == (3, 1, 0)
    assert summary["key_usage"] == {ring.current_id: 4}
    assert await _key_ids(fresh_pool) == {ring.current_id}
    only_new = KeyRing.from_sources(new, "")
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM secrets WHERE team_id = %s ORDER BY name",
                                 (actor.team_id,))
        rows = await cur.fetchall()
    from core.crypto import Sealed

    assert [only_new.open(Sealed(r["key_id"], r["nonce"], r["ciphertext"]),
                          secret_aad(actor.team_id.bytes, r["name"])) for r in rows] == [
        b"value-0", b"value-1", b"value-2"]
    again = await rotate_key(fresh_pool, ring)
    assert (again["secrets"], again["signing_secrets"]) == (0, 0)


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import sys

    return subprocess.run([sys.executable, "-m", "api.cli", *args], cwd=ROOT,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)


async def test_rotate_key_command(fresh_dsn: str, fresh_pool: ConnectionPool,
                                  tmp_path: Path) -> None:
    old = new_key()
    await _seed(fresh_pool, KeyRing.from_sources(old, ""))
    new = _cli("secrets", "new-key", env={}).stdout.strip()
    assert len(base64.b64decode(new)) == 32
    done = _cli("secrets", "rotate-key",
                env={"DATABASE_URL": fresh_dsn, "CRONLEDGER_SECRET_KEY": f"{new},{old}"})
    assert done.returncode == 0, done.stderr
    new_id, old_id = key_id(base64.b64decode(new)), key_id(base64.b64decode(old))
    assert (f"re-encrypted 3 secrets, 1 signing secrets, 0 channels and 0 ping tokens under key "
            f"{new_id}"
            in done.stdout)
    assert f"key {old_id}: 0 values (unused: can be removed)" in done.stdout
    assert await _key_ids(fresh_pool) == {new_id}
    assert new not in done.stdout + done.stderr and old not in done.stdout + done.stderr
    # A key file (the embedded mode's, or CRONLEDGER_SECRET_KEY_FILE): --new-key adds a key
    # on top and re-encrypts; a ring loaded from the file before picks the new key up.
    key_file = tmp_path / "secret.key"
    key_file.write_text(new + "\n")
    key_file.chmod(0o600)
    running = KeyRing.from_sources("", str(key_file))
    done = _cli("secrets", "rotate-key", "--new-key",
                env={"DATABASE_URL": fresh_dsn, "CRONLEDGER_SECRET_KEY_FILE": str(key_file)})
    assert done.returncode == 0, done.stderr
    keys = parse_keys(key_file.read_text(), "file")
    assert len(keys) == 2 and keys[1] == base64.b64decode(new)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert await _key_ids(fresh_pool) == {key_id(keys[0])}
    async with fresh_pool.connection() as conn:
        row = await (await conn.execute("SELECT * FROM secrets LIMIT 1")).fetchone()
    from core.crypto import Sealed

    sealed = Sealed(row["key_id"], row["nonce"], row["ciphertext"])
    assert running.open(sealed, secret_aad(row["team_id"].bytes, row["name"])).startswith(b"value")
    refused = _cli("secrets", "rotate-key", "--new-key",
                   env={"DATABASE_URL": fresh_dsn, "CRONLEDGER_SECRET_KEY": new})
    assert refused.returncode == 2 and "key file" in refused.stderr


# -- plaintext nowhere --------------------------------------------------------------------------
class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.level_before = logging.getLogger().level

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(logging.Formatter("%(name)s %(message)s").format(record))

    def attach(self) -> None:
        """Start capturing. Call it after the app started: Litestar's start-up configures the
        root logger (dictConfig) and would drop a handler added before."""
        root = logging.getLogger()
        root.addHandler(self)
        root.setLevel(logging.DEBUG)


@pytest.fixture
def all_logs() -> Iterator[_Capture]:
    """Every log record of every logger, at DEBUG, once attached, until the test ends."""
    capture = _Capture()
    yield capture
    root = logging.getLogger()
    root.removeHandler(capture)
    root.setLevel(capture.level_before)


def _database_text(dsn: str) -> tuple[str, str]:
    """The whole database as text: ``pg_dump`` when a version able to dump the server exists,
    else every row of every table through SQL (``row::text`` shows bytea as hex, like a dump).

    Returns:
        ``(text, how)``.
    """
    with psycopg.connect(dsn) as conn:
        major = int(conn.execute("SHOW server_version_num").fetchone()[0]) // 10000
        tables = [r[0] for r in conn.execute(
            "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables "
            "WHERE schemaname NOT IN ('pg_catalog', 'information_schema')").fetchall()]
    for candidate in (f"/usr/lib/postgresql/{major}/bin/pg_dump", shutil.which("pg_dump")):
        if candidate and os.path.exists(candidate):
            done = subprocess.run([candidate, "--no-owner", "-d", dsn], capture_output=True,
                                  text=True, timeout=120)
            if done.returncode == 0:
                return done.stdout, candidate
    # The embedded PostgreSQL 18 ships no pg_dump: read every table instead.
    with psycopg.connect(dsn) as conn:
        rows = [str(r[0]) for t in tables
                for r in conn.execute(f"SELECT t::text FROM {t} t").fetchall()]  # noqa: S608
    return "\n".join(rows), "SQL"


def _forms(value: str) -> list[str]:
    raw = value.encode()
    return [value, raw.hex(), base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw)
            .decode().rstrip("=")]


async def test_plaintext_appears_nowhere(
    fresh_dsn: str, fresh_pool: ConnectionPool, settings: Settings, all_logs: _Capture,
) -> None:
    token = f"tok{uuid.uuid4().hex[:12]}"
    first_value = f"old{uuid.uuid4().hex[:12]}"
    signing = f"sig{uuid.uuid4().hex[:16]}"
    clock = FrozenClock(T0)
    key, _ = await create_api_key(fresh_pool, "leak-check")
    auth = {"Authorization": f"Bearer {key}"}
    responses: list[str] = []
    worker = make_worker(fresh_pool, fresh_dsn, settings, clock, "leak-worker")
    async with Sink() as sink, AsyncTestClient(app=create_app(fresh_dsn, settings, clock),
                                               raise_server_exceptions=False) as api:
        all_logs.attach()

        async def call(method: str, path: str, **kw: Any) -> Any:
            r = await api.request(method, path, headers=auth, **kw)
            assert r.status_code < 400, r.text
            responses.append(r.text + str(r.headers))
            return r.json() if r.content else None

        sink.reply("/echo", Reply(echo=True))
        sink.reply("/fail", Reply(status=500, echo=True))
        await call("PUT", "/v1/secrets/API_TOKEN", json={"value": first_value})
        await call("PUT", "/v1/secrets/API_TOKEN", json={"value": token})
        jobs = [
            await call("POST", "/v1/jobs", json={
                "name": "uses a secret everywhere", "schedule": "@daily",
                "signing_secret": signing,
                "request": {"method": "POST", "url": sink.url("/echo") + "?t=${secrets.API_TOKEN}",
                            "headers": {"Authorization": "Bearer ${secrets.API_TOKEN}",
                                        "X-Token": "${secrets.API_TOKEN}"},
                            "body": '{"token": "${secrets.API_TOKEN}"}'}}),
            await call("POST", "/v1/jobs", json={
                "name": "fails and retries", "schedule": "@daily",
                "retry": {"attempts": 2, "backoff": "fixed", "delay_seconds": 1},
                "request": {"url": sink.url("/fail") + "?t=${secrets.API_TOKEN}"}}),
            await call("POST", "/v1/jobs", json={
                "name": "secret in the host", "schedule": "@daily",
                "request": {"url": "http://${secrets.API_TOKEN}.invalid/"}}),
            await call("POST", "/v1/jobs", json={
                "name": "missing secret", "schedule": "@daily",
                "request": {"url": sink.url("/echo"), "headers": {"X": "${secrets.NOPE}"}}}),
        ]
        await call("PATCH", f"/v1/jobs/{jobs[0]['id']}", json={"signing_secret": signing})
        runs = [(await call("POST", f"/v1/jobs/{j['id']}/trigger"))["id"] for j in jobs]
        for at in (T0, T0 + timedelta(seconds=5)):
            clock.set(at)
            await worker.run_once()
            await worker.settle()
        await worker.executor.aclose()
        for job in jobs:
            await call("GET", f"/v1/jobs/{job['id']}")
            await call("GET", f"/v1/jobs/{job['id']}/runs")
            await call("GET", f"/v1/jobs/{job['id']}/events")
        for run in runs:
            detail = await call("GET", f"/v1/runs/{run}")
            assert detail["status"] in ("succeeded", "failed")
        await call("GET", "/v1/jobs")
        await call("GET", "/v1/secrets")
        await call("GET", "/schema/openapi.json")
    # The values did go out on the wire (the test would prove nothing otherwise).
    echo = sink.hits_for("/echo")[0]
    assert echo.headers["X-Token"] == token and token.encode() in echo.body
    assert "X-Cronledger-Signature" in echo.headers
    assert len(sink.hits_for("/fail")) == 2
    dump, how = _database_text(fresh_dsn)
    assert "run_attempts" in dump or how == "SQL"
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT event_type, data::text, metadata::text FROM events")
        events = "\n".join(str(r) for r in await cur.fetchall())
    assert "secret.set" in events
    logs = "\n".join(all_logs.lines)
    assert logs, "no log line was captured"
    for value in (token, first_value, signing):
        for form in _forms(value):
            assert form not in dump, f"{form!r} in the database ({how})"
            assert form not in events, f"{form!r} in an event"
            assert form not in logs, f"{form!r} in the logs"
            for text in responses:
                assert form not in text, f"{form!r} in an API response"
    assert re.search(r"\$\{secrets\.API_TOKEN\}", dump)  # placeholders are what is stored
