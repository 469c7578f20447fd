"""The ``cronledger`` command line.

    cronledger serve      API + scheduler in one process (embedded PostgreSQL without DATABASE_URL)
    cronledger api        the API only            cronledger worker   the scheduler only
    cronledger migrate    apply migrations        cronledger db-url   print the DSN
    cronledger apikey create [--team T] [--scope read|write] [--name N]   print a new key
    cronledger projections rebuild   truncate every projection and replay the event log
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Iterator

from core.config import ConfigError, Settings, load_settings

log = logging.getLogger("cronledger")


def _terminate(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def database(settings: Settings, *, migrate: bool = True) -> Iterator[str]:
    """Yield the DSN: ``DATABASE_URL``, or an embedded server started (and stopped) here."""
    embedded = None
    try:
        if settings.database_url:
            dsn = settings.database_url
        else:
            from core.embedded import EmbeddedPostgres

            embedded = EmbeddedPostgres(settings.data_dir)
            dsn = embedded.start()
            log.info("embedded PostgreSQL in %s (DATABASE_URL is unset)", embedded.data_dir)
        if migrate:
            from core.migrate import upgrade

            upgrade(dsn)
        yield dsn
    finally:
        if embedded is not None:
            embedded.stop()


def _serve(settings: Settings, *, with_api: bool, with_services: bool) -> int:
    from api.runner import serve

    with database(settings) as dsn:
        if with_api:
            log.info("API on http://%s:%d (OpenAPI at /schema)", settings.host, settings.port)
        asyncio.run(serve(dsn, settings, with_api=with_api, with_services=with_services))
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


def _projections_rebuild(settings: Settings) -> int:
    from core.clock import SystemClock
    from core.db import open_pool
    from core.projections.rebuild import rebuild

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
    if settings.database_url:
        print(settings.database_url)
        return 0
    from core.embedded import read_dsn

    dsn = read_dsn(settings.data_dir)
    if dsn is None:
        print(f"no embedded PostgreSQL is running for {settings.data_dir}: start "
              "`cronledger serve` first, or set DATABASE_URL", file=sys.stderr)
        return 1
    print(dsn)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cronledger", description=__doc__.split("\n")[0])
    parser.add_argument("--log-level", default=os.environ.get("CRONLEDGER_LOG_LEVEL", "INFO"))
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("serve", "run the API and the scheduler in one process"),
                       ("api", "run the API only")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--host", help="listen address (CRONLEDGER_HOST, default 127.0.0.1)")
        p.add_argument("--port", type=int, help="listen port (CRONLEDGER_PORT, default 8000)")
    sub.add_parser("worker", help="run the scheduler only")
    sub.add_parser("migrate", help="apply database migrations")
    sub.add_parser("db-url", help="print the database DSN")
    key = sub.add_parser("apikey", help="manage API keys").add_subparsers(
        dest="action", required=True)
    create = key.add_parser("create", help="create a key and print it (shown once)")
    create.add_argument("--team", default="default", help="team name (created if missing)")
    create.add_argument("--scope", choices=("read", "write"), default="write")
    create.add_argument("--name", default="", help="a label for the key")
    projections = sub.add_parser("projections", help="manage projections").add_subparsers(
        dest="action", required=True)
    projections.add_parser("rebuild", help="truncate every projection and replay the log")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cronledger`` console script."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # One line per outbound request is noise (runs are recorded in the database).
    logging.getLogger("httpx").setLevel(logging.WARNING)
    signal.signal(signal.SIGTERM, _terminate)  # until the event loop takes over
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"cronledger: {exc}", file=sys.stderr)
        return 2
    overrides = {k: v for k in ("host", "port") if (v := getattr(args, k, None)) is not None}
    if overrides:
        from dataclasses import replace

        settings = replace(settings, **overrides)
    if args.command == "serve":
        return _serve(settings, with_api=True, with_services=True)
    if args.command == "api":
        return _serve(settings, with_api=True, with_services=False)
    if args.command == "worker":
        return _serve(settings, with_api=False, with_services=True)
    if args.command == "migrate":
        with database(settings):
            return 0
    if args.command == "db-url":
        return _db_url(settings)
    if args.command == "projections":
        return _projections_rebuild(settings)
    return _apikey_create(settings, args)


if __name__ == "__main__":
    raise SystemExit(main())
