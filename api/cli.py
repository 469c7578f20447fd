"""cronledger: a Postgres-only, event-sourced scheduler.

    cronledger serve      API + scheduler + checker in one process (embedded PostgreSQL without
                          DATABASE_URL)
    cronledger api [--workers N]  the API only    cronledger worker   scheduler and monitor checker
    cronledger migrate    apply migrations        cronledger db-url   print the DSN
    cronledger apikey create [--team T] [--scope read|write] [--name N]   print a new key
    cronledger apikey list [--team T]     list keys (never the keys)   cronledger apikey revoke ID
    cronledger secrets new-key            print a new secret key (for CRONLEDGER_SECRET_KEY)
    cronledger secrets rotate-key [--new-key]   re-encrypt every secret under the current key
    cronledger projections rebuild   truncate every projection and replay the event log
    cronledger health [--max-age S] [--url U]   exit 0 when the serve/worker heartbeat file is
                          fresh (or U answers 2xx), else 1 (the container health check)
    cronledger apply -f FILE [--dry-run] [--prune]   apply a declarative file (docs/config.md)
    cronledger export [--team T]     print the definitions as such a file
    cronledger import crontab FILE   convert a crontab into such a file
    cronledger exec --monitor SLUG_OR_URL -- COMMAND…   run a command, report it to a monitor
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import textwrap
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from api.database import database
from core.config import ConfigError, Settings, load_settings
from core.dsn import libpq_dsn
from core.errors import DomainError

log = logging.getLogger("cronledger")


def _terminate(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def with_key_source(settings: Settings) -> Settings:
    """Settings with a secret key source: in embedded mode without ``CRONLEDGER_SECRET_KEY``
    or ``CRONLEDGER_SECRET_KEY_FILE``, the data folder's ``secret.key`` (created, mode 0600, on
    first start). With ``DATABASE_URL`` no key is invented: several hosts share the database
    and must share the key, so the operator sets it.

    Raises:
        ConfigError: the key file cannot be created or is readable by other users.
    """
    from dataclasses import replace

    from core.crypto import KeyConfigError, KeyRing, ensure_key_file

    if not settings.secret_key and not settings.secret_key_file and not settings.database_url:
        try:
            settings = replace(settings, secret_key_file=str(ensure_key_file(settings.data_dir)))
        except (KeyConfigError, OSError) as exc:
            raise ConfigError(str(exc)) from None
    try:
        KeyRing.from_sources(settings.secret_key, settings.secret_key_file)
    except KeyConfigError as exc:
        raise ConfigError(str(exc)) from None
    return settings


def listen_problem(host: str, port: int) -> str | None:
    """Why the API could not listen on ``host:port``, or ``None`` when it can: checked before
    PostgreSQL is started or waited for, so a port already taken is one clear line at once,
    not uvicorn's ``[Errno 98]`` after the database's start-up. The socket is bound as uvicorn
    binds it (``SO_REUSEADDR``) and closed at once."""
    import errno
    import socket

    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return (f"cannot listen on {host}:{port}: the host does not resolve ({exc.strerror}); "
                "set --host (or CRONLEDGER_HOST) to an address of this machine")
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (f"cannot listen on {host}:{port}: port {port} is already in use by "
                        f"another program; choose another with --port N (or "
                        f"CRONLEDGER_PORT=N), e.g. --port {port + 1 if port < 65535 else 8000}")
            return (f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another "
                    "address with --host/--port (or CRONLEDGER_HOST/CRONLEDGER_PORT)")
    return None


def _serve(settings: Settings, *, with_api: bool, with_services: bool, workers: int = 1,
           config: Any = None) -> int:
    from api.runner import ServiceFailed, serve, serve_api_workers

    with database(settings, wait=True) as dsn:
        if config is not None:
            from api.cli_apply import apply_at_start

            if not apply_at_start(dsn, settings, config):
                return 1
        if workers > 1:
            log.info("API on http://%s:%d with %d worker processes", settings.host,
                     settings.port, workers)
            serve_api_workers(dsn, settings, workers)
            return 0
        if with_api:
            log.info("API on http://%s:%d (OpenAPI at /schema)", settings.host, settings.port)
        first_run = with_api and with_services and not settings.database_url
        try:
            with asyncio.Runner(loop_factory=_loop_factory(with_services)) as runner:
                runner.run(serve(dsn, settings, with_api=with_api, with_services=with_services,
                                 on_ready=_signin_link(dsn, settings) if first_run else None))
        except ServiceFailed:
            return 1  # already logged, with the exception, by the runner
    return 0


def _loop_factory(with_services: bool) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop for ``cronledger api`` (the API alone), as uvicorn gives each of
    ``--workers`` processes: less of the API's CPU per ping than asyncio's own loop
    (docs/benchmarks.md, *The ping fast path and uvloop*). ``serve`` and ``worker`` keep
    asyncio's loop, on which the send path was built and measured. ``None`` (asyncio's)
    where uvloop is not installed."""
    if with_services:
        return None
    try:
        import uvloop
    except ImportError:  # pragma: no cover - a dependency except on Windows
        return None
    return uvloop.new_event_loop


SIGNIN_TEAM = "default"  # the team of `serve`'s sign-in link (and of `apikey create`)


def _signin_link(dsn: str, settings: Settings) -> Callable[[], Awaitable[None]]:
    """``serve`` with the embedded database: once the API is up, print a one-time sign-in link
    to the dashboard for the default team (Jupyter's token URL; :mod:`core.sessions`)."""

    async def show() -> None:
        from core.clock import SystemClock
        from core.db import open_pool
        from core.sessions import SIGNIN_LINK_SECONDS, issue_signin_link

        pool = await open_pool(dsn, min_size=1, max_size=1)
        try:
            token = await issue_signin_link(pool, SIGNIN_TEAM, SystemClock().now())
        finally:
            await pool.close()
        base = settings.base_url.replace("://0.0.0.0:", "://127.0.0.1:")
        hours = SIGNIN_LINK_SECONDS // 3600
        print(f"\ncronledger is ready. Open the dashboard with this sign-in link (it works once, "
              f"within {hours} hours):\n\n    {base}/ui/signin?token={token}\n", flush=True)

    return show


def _health(args: argparse.Namespace) -> int:
    """``cronledger health``: 0 when the heartbeat file is fresh (or, with ``--url``, when the
    URL answers 2xx), else 1 with the reason on stderr (docs/operations.md)."""
    if args.url:
        import urllib.request

        try:
            with urllib.request.urlopen(args.url, timeout=args.timeout) as response:
                ok = 200 <= response.status < 300
        except OSError as exc:
            print(f"cronledger health: {args.url}: {exc}", file=sys.stderr)
            return 1
        if not ok:
            print(f"cronledger health: {args.url}: HTTP {response.status}", file=sys.stderr)
        return 0 if ok else 1
    from core.clock import SystemClock
    from core.services.health import check_heartbeat, heartbeat_path

    path = heartbeat_path()
    problem = check_heartbeat(path, SystemClock().now(), args.max_age)
    if problem is not None:
        print(f"cronledger health: {problem}", file=sys.stderr)
        return 1
    return 0


def _apikey_create(settings: Settings, args: argparse.Namespace) -> int:
    from core.apikeys import create_api_key
    from core.db import open_pool

    async def run(dsn: str) -> str:
        pool = await open_pool(dsn, min_size=1, max_size=1)
        try:
            key, _ = await create_api_key(pool, args.team, args.scope, args.name)
            return key
        finally:
            await pool.close()

    with database(settings) as dsn:
        key = asyncio.run(run(dsn))
    print(key)
    return 0


def _apikey(settings: Settings, args: argparse.Namespace) -> int:
    """``apikey create|list|revoke``: 0 on success, 1 for an unknown or revoked key."""
    if args.action == "create":
        return _apikey_create(settings, args)
    from core.actor import Actor
    from core.apikeys import find_api_key, list_all_api_keys, revoke_api_key
    from core.clock import SystemClock
    from core.db import open_pool
    from core.errors import NotFound

    async def run(dsn: str) -> tuple[int, list[str]]:
        pool = await open_pool(dsn, min_size=1, max_size=1)
        try:
            if args.action == "list":
                return 0, _key_table(await list_all_api_keys(pool, args.team))
            row = await find_api_key(pool, args.key_id)
            if row is None:
                return 1, [f"cronledger: no API key {args.key_id}"]
            if row["revoked_at"] is not None:
                return 1, [f"cronledger: API key {args.key_id} was already revoked at "
                           f"{row['revoked_at'].isoformat()}"]
            try:  # the API's DELETE /v1/api-keys/{id}, as the key's own team
                await revoke_api_key(pool, Actor(team_id=row["team_id"]), args.key_id,
                                     SystemClock().now())
            except NotFound:  # revoked meanwhile
                return 1, [f"cronledger: API key {args.key_id} was already revoked"]
            return 0, [f"revoked API key {args.key_id}"]
        finally:
            await pool.close()

    with database(settings) as dsn:
        status, lines = asyncio.run(run(dsn))
    if args.action == "list" and not lines:
        print("no API keys" + (f" for team {args.team!r}" if args.team else "")
              + ": create one with `cronledger apikey create`", file=sys.stderr)
    for line in lines:
        print(line, file=sys.stderr if status else sys.stdout)
    return status


def _key_table(rows: list[dict[str, Any]]) -> list[str]:
    """Aligned columns with a header line; ``[]`` for no rows. Never the key or its hash."""
    if not rows:
        return []
    header = ("ID", "TEAM", "SCOPE", "NAME", "PREFIX", "CREATED", "REVOKED")
    cells = [header] + [
        (str(r["id"]), r["team"], r["scope"], r["name"] or "-", r["prefix"],
         r["created_at"].isoformat(timespec="seconds"),
         r["revoked_at"].isoformat(timespec="seconds") if r["revoked_at"] else "-")
        for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in cells]


def _secrets(settings: Settings, args: argparse.Namespace) -> int:
    from core.crypto import KeyRing, new_key, prepend_key_file

    if args.action == "new-key":
        print(new_key())
        return 0
    if args.new_key:
        if settings.secret_key or not settings.secret_key_file:
            print("cronledger: --new-key only works with a key file (embedded mode or "
                  "CRONLEDGER_SECRET_KEY_FILE). With CRONLEDGER_SECRET_KEY, put a new key "
                  "(`cronledger secrets new-key`) first in the list on every process, restart "
                  "them, then run `cronledger secrets rotate-key`.", file=sys.stderr)
            return 2
        from pathlib import Path

        added = prepend_key_file(Path(settings.secret_key_file))
        log.info("added key %s at the top of %s", added, settings.secret_key_file)
    keyring = KeyRing.from_sources(settings.secret_key, settings.secret_key_file)

    async def run(dsn: str) -> dict[str, Any]:
        from core.channels.commands import reseal_channels
        from core.channels.sealing import AesGcmSealer
        from core.db import open_pool
        from core.secrets import rotate_key

        pool = await open_pool(dsn, min_size=1, max_size=2)
        try:
            result = await rotate_key(pool, keyring)
            channels, unreadable = await reseal_channels(pool, AesGcmSealer(keyring),
                                                         keyring.current_id or "")
            result["channels"] = channels
            result["unreadable"] = int(result["unreadable"]) + unreadable
            return result
        finally:
            await pool.close()

    from core.errors import Unavailable

    with database(settings) as dsn:
        try:
            summary = asyncio.run(run(dsn))
        except Unavailable as exc:
            print(f"cronledger: {exc.detail}", file=sys.stderr)
            return 2
    print(f"re-encrypted {summary['secrets']} secrets, {summary['signing_secrets']} signing "
          f"secrets, {summary['channels']} channels and {summary['ping_tokens']} ping tokens "
          f"under key {keyring.current_id}")
    usage = summary["key_usage"]
    assert isinstance(usage, dict)
    for kid in keyring.key_ids:
        state = "current" if kid == keyring.current_id else (
            "still used" if usage.get(kid) else "unused: can be removed")
        print(f"  key {kid}: {usage.get(kid, 0)} values ({state})")
    if summary["unreadable"]:
        print(f"cronledger: {summary['unreadable']} values are encrypted with keys that are not "
              "configured and were left as they are", file=sys.stderr)
        return 1
    return 0


def _projections_rebuild(settings: Settings) -> int:
    from core.clock import SystemClock
    from core.db import open_pool
    from core.rebuild import rebuild

    async def run(dsn: str) -> dict[str, int]:
        pool = await open_pool(dsn, min_size=1, max_size=1)
        try:
            return await rebuild(pool, SystemClock().now())
        finally:
            await pool.close()

    with database(settings) as dsn:
        counts = asyncio.run(run(dsn))
    print(" ".join(f"{name}={count}" for name, count in counts.items()))
    return 0


def _db_url(settings: Settings) -> int:
    if settings.database_url:  # as libpq reads it: psql "$(cronledger db-url)" must connect
        print(libpq_dsn(settings.database_url))
        return 0
    from core.embedded import read_dsn

    dsn = read_dsn(settings.data_dir)
    if dsn is None:
        print(f"no embedded PostgreSQL is running for {settings.data_dir}: start "
              "`cronledger serve` first, or set DATABASE_URL", file=sys.stderr)
        return 1
    print(dsn)
    return 0


def _positive(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError(f"must be an integer from 1 to 64, got {text!r}")
    return value


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


_D = Settings()  # the defaults shown in --help come from the settings themselves
# Every environment variable a command's --help names: one line each (docs/operations.md has
# the full list with units and ranges).
_ENV = {
    "CRONLEDGER_RETENTION_PINGS_DAYS": "days pings and their bodies are kept (default 30; a "
                                       "monitor's newest 100 stay readable)",
    "CRONLEDGER_RETENTION_RUNS_DAYS": "days run events are kept (default 90)",
    "CRONLEDGER_RETENTION_ATTEMPT_BODIES_DAYS": "days run attempts' requests and responses are "
                                                "kept (default 14)",
    "CRONLEDGER_RETENTION_DELIVERIES_DAYS": "days notification delivery events are kept "
                                            "(default 90)",
    "DATABASE_URL": "libpq DSN of the database; unset: an embedded PostgreSQL is started in "
                    "CRONLEDGER_DATA_DIR (and stopped on exit)",
    "CRONLEDGER_DATA_DIR": f"embedded mode: data folder (default {_D.data_dir})",
    "CRONLEDGER_HOST": f"listen address (default {_D.host}; --host)",
    "CRONLEDGER_PORT": f"listen port (default {_D.port}; --port)",
    "CRONLEDGER_PUBLIC_URL": "externally visible base URL of ping URLs (default: the URL the "
                             "client used)",
    "CRONLEDGER_SECRET_KEY": "base64 32-byte keys for secrets, current first (make one: "
                             "cronledger secrets new-key); unset with DATABASE_URL: secrets "
                             "are disabled",
    "CRONLEDGER_SECRET_KEY_FILE": "a file of keys, one per line (embedded mode default: "
                                  "$CRONLEDGER_DATA_DIR/secret.key, created on first start)",
    "CRONLEDGER_TRUSTED_PROXIES": f"peers whose X-Forwarded-For is believed (default "
                                  f"{_D.trusted_proxies}; * for all)",
    "CRONLEDGER_METRICS_TOKEN": "bearer token /metrics requires (default unset: /metrics is "
                                "public)",
    "CRONLEDGER_WORKER_ID": "name of this worker in runs and events (default hostname:pid)",
    "CRONLEDGER_MAX_CONCURRENCY": f"requests in flight per worker (default "
                                  f"{_D.max_concurrency})",
    "CRONLEDGER_SHUTDOWN_GRACE": f"seconds in-flight attempts may finish on SIGTERM (default "
                                 f"{_D.shutdown_grace_seconds:g})",
    "CRONLEDGER_HEARTBEAT_FILE": "file the services' supervisor keeps fresh while every loop "
                                 "runs and the database answers (default "
                                 "$XDG_RUNTIME_DIR/cronledger-heartbeat, else in the temp "
                                 "folder)",
    "CRONLEDGER_URL": "apply/export/exec: the server (default http://127.0.0.1:8000; --url)",
    "CRONLEDGER_PING_KEY": "exec: the team's ping key, for a slug (POST /v1/team/ping-key)",
    "CRONLEDGER_API_KEY": "apply/export: an API key of the team (cronledger apikey create)",
    "CRONLEDGER_CONFIG": "serve: a declarative file applied at start (--config)",
    "CRONLEDGER_LOG_LEVEL": "DEBUG, INFO, WARNING… (--log-level; default INFO for serve, api "
                            "and worker, WARNING for the other commands)",
}
_DB = ("DATABASE_URL", "CRONLEDGER_DATA_DIR")
_KEYS = ("CRONLEDGER_SECRET_KEY", "CRONLEDGER_SECRET_KEY_FILE")
_API = ("CRONLEDGER_HOST", "CRONLEDGER_PORT", "CRONLEDGER_PUBLIC_URL",
        "CRONLEDGER_TRUSTED_PROXIES", "CRONLEDGER_METRICS_TOKEN")
_WORKER = ("CRONLEDGER_WORKER_ID", "CRONLEDGER_MAX_CONCURRENCY", "CRONLEDGER_SHUTDOWN_GRACE",
           "CRONLEDGER_HEARTBEAT_FILE")
_MIGRATES = "Applies pending database migrations first."
_RETENTION = ("CRONLEDGER_RETENTION_PINGS_DAYS", "CRONLEDGER_RETENTION_RUNS_DAYS",
              "CRONLEDGER_RETENTION_ATTEMPT_BODIES_DAYS", "CRONLEDGER_RETENTION_DELIVERIES_DAYS")
_WIDTH = 79


def _epilog(names: tuple[str, ...], *notes: str) -> str:
    """The ``--help`` epilog: ``notes``, then the environment variables ``names`` read."""
    width = max(len(n) for n in names) if names else 0
    lines = [*map(_fill, notes), *([""] if notes else [])]
    if names:
        lines.append("environment:")
        lines += [textwrap.fill(_ENV[name], _WIDTH, initial_indent=f"  {name:<{width}}  ",
                                subsequent_indent=" " * (width + 4)) for name in names]
        lines.append("  (every setting: docs/operations.md)")
    return "\n".join(lines)


def _fill(text: str) -> str:
    return textwrap.fill(text, _WIDTH)


def _key_id(text: str) -> uuid.UUID:
    try:
        return uuid.UUID(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an API key id (a UUID): {text[:64]!r}") from None


def _parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="cronledger", formatter_class=formatter,
        description=_fill("cronledger: a Postgres-only, event-sourced HTTP cron scheduler and "
                          "heartbeat monitor. `cronledger COMMAND --help` describes each "
                          "command."),
        epilog=_epilog(_DB + ("CRONLEDGER_LOG_LEVEL",),
                       "Start with `cronledger serve` (embedded PostgreSQL when DATABASE_URL "
                       "is unset), then `cronledger apikey create` for a key; the API is on "
                       f"http://{_D.host}:{_D.port}."))
    parser.add_argument("--log-level", default=os.environ.get("CRONLEDGER_LOG_LEVEL"),
                        help="DEBUG, INFO, WARNING… (CRONLEDGER_LOG_LEVEL; default INFO for "
                             "serve, api and worker, WARNING for the other commands)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(parent: Any, name: str, help_text: str, description: str,
                env: tuple[str, ...], *notes: str) -> argparse.ArgumentParser:
        child: argparse.ArgumentParser = parent.add_parser(
            name, help=help_text, description=_fill(description), epilog=_epilog(env, *notes),
            formatter_class=formatter)
        return child

    serving = {
        "serve": ("run the API and the background services in one process",
                  "Run the API and the background services (scheduler, monitor checker, "
                  "notifier, projector) in one process until SIGINT or SIGTERM.",
                  _DB + _KEYS + _API + _WORKER + ("CRONLEDGER_CONFIG",)),
        "api": ("run the API only",
                "Run the HTTP API only (jobs, monitors, pings, /metrics); run `cronledger "
                "worker` next to it for the scheduler.", _DB + _KEYS + _API),
    }
    for name, (help_text, description, env) in serving.items():
        p = command(sub, name, help_text, description, env, _MIGRATES)
        p.add_argument("--host", help=f"listen address (CRONLEDGER_HOST, default {_D.host})")
        p.add_argument("--port", type=int,
                       help=f"listen port (CRONLEDGER_PORT, default {_D.port})")
        if name == "serve":
            p.add_argument("--config", help="a declarative file (docs/config.md) applied for "
                                            "the default team before serving "
                                            "(CRONLEDGER_CONFIG)")
        if name == "api":
            p.add_argument("--workers", type=_positive, default=1,
                           help="API processes sharing the port (1-64, default 1); needs "
                                "nothing else: DATABASE_URL is passed on")
    command(sub, "worker", "run the background services only",
            "Run the scheduler, monitor checker, notifier and projector (no HTTP) until SIGINT "
            "or SIGTERM; any number may run against one database.",
            _DB + _KEYS + ("CRONLEDGER_PUBLIC_URL",) + _WORKER, _MIGRATES)
    health = command(sub, "health", "exit 0 when this container's process is healthy",
                     "Exit 0 when the background services of this host's serve or worker "
                     "process are alive and reached the database recently (their heartbeat "
                     "file is fresh), else 1; with --url, when that URL answers 2xx instead. "
                     "For container health checks (docs/operations.md, \"Supervision and "
                     "health checks\").", ("CRONLEDGER_HEARTBEAT_FILE",))
    health.add_argument("--max-age", type=_positive_seconds, default=60.0,
                        help="seconds after which the heartbeat file is stale (default 60)")
    health.add_argument("--url", help="check this URL answers 2xx instead (the api container: "
                                      "http://127.0.0.1:8000/readyz)")
    health.add_argument("--timeout", type=_positive_seconds, default=3.0,
                        help="seconds, with --url (default 3)")
    command(sub, "migrate", "apply database migrations",
            "Apply pending database migrations and exit (serve, api and worker also do).", _DB)
    command(sub, "db-url", "print the database DSN",
            "Print DATABASE_URL, or the DSN of the embedded PostgreSQL running for "
            "CRONLEDGER_DATA_DIR (exit 1 when none runs), e.g. psql \"$(cronledger db-url)\".",
            _DB)

    key = command(sub, "apikey", "manage API keys",
                  "Create, list and revoke the API keys of teams.", _DB).add_subparsers(
        dest="action", required=True, metavar="ACTION")
    create = command(key, "create", "create a key and print it (shown once)",
                     "Create an API key and print it on stdout. It is shown only this once "
                     "(only its hash is stored): to replace a lost key, create a new one and "
                     "revoke the old.", _DB, _MIGRATES)
    create.add_argument("--team", default=SIGNIN_TEAM,
                        help="team name, created if missing (default: default)")
    create.add_argument("--scope", choices=("read", "write"), default="write",
                        help="read keys may only GET (default: write)")
    create.add_argument("--name", default="", help="a label for the key (default: none)")
    listing = command(key, "list", "list API keys (never the keys themselves)",
                      "List API keys, oldest first per team: id, team, scope, name, prefix (the "
                      "key's first 8 characters), created, revoked. Revoked keys are listed "
                      "too. Last use is not recorded.", _DB, _MIGRATES)
    listing.add_argument("--team", help="only this team (default: every team)")
    revoke = command(key, "revoke", "revoke an API key",
                     "Revoke an API key at once: requests with it get 401. Exit 1 when no "
                     "such key exists or it is already revoked.", _DB, _MIGRATES)
    revoke.add_argument("key_id", type=_key_id, metavar="ID",
                        help="the key's id (from `cronledger apikey list` or GET /v1/api-keys)")

    secrets = command(sub, "secrets", "manage the secret encryption keys",
                      "Make and rotate the keys that encrypt team secrets and signing secrets "
                      "(docs/operations.md, \"Secrets and key rotation\").", ()).add_subparsers(
        dest="action", required=True, metavar="ACTION")
    command(secrets, "new-key", "print a new random key for CRONLEDGER_SECRET_KEY",
            "Print a new random key (base64 of 32 bytes) for CRONLEDGER_SECRET_KEY; touches "
            "no database.", ())
    rotate = command(secrets, "rotate-key",
                     "re-encrypt every secret under the current (first) key",
                     "Re-encrypt every secret and signing secret that is not under the current "
                     "(first) key, and print how many values each configured key still "
                     "encrypts. Exit 1 when some values use a key that is not configured.",
                     _DB + _KEYS, _MIGRATES)
    rotate.add_argument("--new-key", action="store_true",
                        help="key file only: first add a new current key at the top of the file")
    projections = command(sub, "projections", "manage projections",
                          "Manage the read models built from the event log.", ()
                          ).add_subparsers(dest="action", required=True, metavar="ACTION")
    command(projections, "rebuild", "truncate every projection and replay the log",
            "Truncate every projection and replay the whole event log in one transaction "
            "(commands wait meanwhile), then print the row counts.", _DB, _MIGRATES)
    prune = command(sub, "prune", "drop the history past its retention",
                    "Drop the daily partitions of history past their retention (pings, runs, "
                    "attempt bodies, deliveries; docs/operations.md, \"Retention\") and print "
                    "what went; the retention service of serve and worker does this hourly.",
                    _DB + _RETENTION, _MIGRATES)
    prune.add_argument("--dry-run", action="store_true",
                       help="print what would be dropped and change nothing")
    command(sub, "db-size", "print the database size per kind of data",
            "Print the size of each table family (a partitioned table with its partitions) "
            "and the kind of history it belongs to, largest first, then the total.", _DB,
            _MIGRATES)
    from api.cli_apply import add_parsers
    from api.cli_exec import add_parser as add_exec

    add_parsers(sub, command)
    add_exec(sub, command)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cronledger`` console script."""
    parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        if args.command == "exec":  # as its other refusals: one line (api/cli_exec.py)
            from api.cli_exec import option_error

            option_error(f"unrecognized arguments: {' '.join(unknown)}")
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command == "health":
        return _health(args)
    if args.command == "exec":  # runs a command: no logging set-up, its own signal handling
        from api.cli_exec import run

        return run(args)
    _set_up_logging(args)
    signal.signal(signal.SIGTERM, _terminate)  # until the event loop takes over
    from api import cli_apply

    if args.command in cli_apply.COMMANDS:
        return cli_apply.main(args)
    try:
        settings = _settings(args)
    except (ConfigError, _Refused) as exc:
        print(f"cronledger: {exc}", file=sys.stderr)  # before anything is started
        return 2
    return _run(args, settings)


class _Refused(Exception):
    """A command that cannot start, and why (printed; exit status 2)."""


def _set_up_logging(args: argparse.Namespace) -> None:
    servers = ("serve", "api", "worker")
    level = args.log_level or ("INFO" if args.command in servers else "WARNING")
    logging.basicConfig(level=level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # One line per outbound request is noise (runs are recorded in the database).
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # The pools warn on every failed reconnection attempt; an outage is logged once, by
    # core.services.outage (docs/operations.md, "Database outages").
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    # alembic announces its plugins and context on every start; its warnings still show.
    logging.getLogger("alembic").setLevel(logging.WARNING)


def _settings(args: argparse.Namespace) -> Settings:
    """The settings of the environment, with the command's ``--host``/``--port``, and the
    secret key's source for the commands that use it.

    Raises:
        ConfigError: a setting that cannot be used, or no usable secret key.
        _Refused: the API cannot listen where it is told to.
    """
    settings = load_settings()
    overrides = {k: v for k in ("host", "port") if (v := getattr(args, k, None)) is not None}
    if overrides:
        from dataclasses import replace

        settings = replace(settings, **overrides)
    if args.command in ("serve", "api") and \
            (problem := listen_problem(settings.host, settings.port)):
        raise _Refused(problem)
    if args.command in ("serve", "api", "worker", "secrets") and \
            getattr(args, "action", None) != "new-key":
        settings = with_key_source(settings)
    return settings


def _run(args: argparse.Namespace, settings: Settings) -> int:
    """Run a command that needs the settings; its exit status."""
    from api import cli_apply

    if args.command == "serve":
        return _serve(settings, with_api=True, with_services=True,
                      config=cli_apply.config_path(args))
    if args.command == "api":
        return _serve(settings, with_api=True, with_services=False, workers=args.workers)
    if args.command == "worker":
        return _serve(settings, with_api=False, with_services=True)
    if args.command == "migrate":
        with database(settings):
            return 0
    if args.command == "db-url":
        return _db_url(settings)
    if args.command == "projections":
        return _projections_rebuild(settings)
    if args.command in ("prune", "db-size"):
        from api import retention_cli

        with database(settings) as dsn:
            if args.command == "prune":
                return retention_cli.prune(dsn, settings, dry_run=args.dry_run)
            return retention_cli.db_size(dsn)
    try:
        if args.command == "secrets":
            return _secrets(settings, args)
        return _apikey(settings, args)
    except DomainError as exc:
        print(f"cronledger: {exc.detail}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
