"""cronledger: a Postgres-only, event-sourced scheduler.

    cronledger serve      API + scheduler + checker in one process (embedded PostgreSQL without
                          DATABASE_URL)
    cronledger api [--workers N]  the API only    cronledger worker   scheduler and monitor checker
    cronledger migrate    apply migrations        cronledger db-url   print the DSN
    cronledger apikey create [--team T] [--scope read|write] [--name N]   print a new key
    cronledger secrets new-key            print a new secret key (for CRONLEDGER_SECRET_KEY)
    cronledger secrets rotate-key [--new-key]   re-encrypt every secret under the current key
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
from core.errors import DomainError

log = logging.getLogger("cronledger")


def _terminate(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def database(settings: Settings, *, migrate: bool = True, wait: bool = False) -> Iterator[str]:
    """Yield the DSN: ``DATABASE_URL``, or an embedded server started (and stopped) here.

    With ``wait`` (the servers), a ``DATABASE_URL`` that cannot be reached yet, or is full, is
    waited for - one log line, retries with backoff up to 5 s apart
    (:func:`core.outage.wait_for_database`) - and migrated once it answers.
    """
    embedded = None
    try:
        if settings.database_url and wait:
            import psycopg

            from core.migrate import upgrade
            from core.outage import connect_dsn, describe, probe, wait_for_database

            dsn = connect_dsn(settings.database_url)
            try:
                wait_for_database(lambda: upgrade(dsn) if migrate else probe(dsn), dsn, log)
            except KeyboardInterrupt:  # Ctrl-C while waiting (SIGTERM exits via _terminate)
                raise SystemExit(128 + signal.SIGINT) from None
            except psycopg.OperationalError as exc:  # refused for good: password, database name
                text = " ".join(str(exc).split())
                raise SystemExit(f"cronledger: PostgreSQL at {describe(dsn)}: {text}") from None
            migrate = False  # done
        elif settings.database_url:
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
            # A second Ctrl-C (or a SIGTERM after it) must not interrupt stopping the server.
            previous = {sig: signal.signal(sig, signal.SIG_IGN)
                        for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                embedded.stop()
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)


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


def _serve(settings: Settings, *, with_api: bool, with_services: bool, workers: int = 1) -> int:
    from api.runner import serve, serve_api_workers

    with database(settings, wait=True) as dsn:
        if workers > 1:
            log.info("API on http://%s:%d with %d worker processes", settings.host,
                     settings.port, workers)
            serve_api_workers(dsn, settings, workers)
            return 0
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

    async def run(dsn: str) -> dict[str, object]:
        from core.db import open_pool
        from core.notifications.channels import reseal_channels
        from core.notifications.sealing import AesGcmSealer
        from core.secrets import rotate_key

        pool = await open_pool(dsn, min_size=1, max_size=2)
        try:
            result = await rotate_key(pool, keyring)
            channels, unreadable = await reseal_channels(pool, AesGcmSealer(keyring),
                                                         keyring.current_id or "")
            result["channels"] = channels
            result["unreadable"] = int(result["unreadable"]) + unreadable  # type: ignore[call-overload]
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
          f"secrets and {summary['channels']} channels under key {keyring.current_id}")
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


def _positive(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError(f"must be an integer from 1 to 64, got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cronledger", description=__doc__.split("\n")[0])
    parser.add_argument("--log-level", default=os.environ.get("CRONLEDGER_LOG_LEVEL"),
                        help="DEBUG, INFO, WARNING… (CRONLEDGER_LOG_LEVEL; default INFO for "
                             "serve, api and worker, WARNING for the other commands)")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("serve", "run the API and the scheduler in one process"),
                       ("api", "run the API only")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--host", help="listen address (CRONLEDGER_HOST, default 127.0.0.1)")
        p.add_argument("--port", type=int, help="listen port (CRONLEDGER_PORT, default 8000)")
        if name == "api":
            p.add_argument("--workers", type=_positive, default=1,
                           help="API processes sharing the port (default 1)")
    sub.add_parser("worker", help="run the scheduler only")
    sub.add_parser("migrate", help="apply database migrations")
    sub.add_parser("db-url", help="print the database DSN")
    key = sub.add_parser("apikey", help="manage API keys").add_subparsers(
        dest="action", required=True)
    create = key.add_parser("create", help="create a key and print it (shown once)")
    create.add_argument("--team", default="default", help="team name (created if missing)")
    create.add_argument("--scope", choices=("read", "write"), default="write")
    create.add_argument("--name", default="", help="a label for the key")
    secrets = sub.add_parser("secrets", help="manage the secret encryption keys").add_subparsers(
        dest="action", required=True)
    secrets.add_parser("new-key", help="print a new random key for CRONLEDGER_SECRET_KEY")
    rotate = secrets.add_parser("rotate-key",
                                help="re-encrypt every secret under the current (first) key")
    rotate.add_argument("--new-key", action="store_true",
                        help="key file only: first add a new current key to the file")
    projections = sub.add_parser("projections", help="manage projections").add_subparsers(
        dest="action", required=True)
    projections.add_parser("rebuild", help="truncate every projection and replay the log")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cronledger`` console script."""
    args = _parser().parse_args(argv)
    servers = ("serve", "api", "worker")
    level = args.log_level or ("INFO" if args.command in servers else "WARNING")
    logging.basicConfig(level=level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # One line per outbound request is noise (runs are recorded in the database).
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # The pools warn on every failed reconnection attempt; an outage is logged once, by
    # core.outage (docs/operations.md, "Database outages").
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
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
    if args.command in ("serve", "api", "worker", "secrets") and \
            getattr(args, "action", None) != "new-key":
        try:
            settings = with_key_source(settings)
        except ConfigError as exc:
            print(f"cronledger: {exc}", file=sys.stderr)
            return 2
    if args.command == "serve":
        return _serve(settings, with_api=True, with_services=True)
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
    try:
        if args.command == "secrets":
            return _secrets(settings, args)
        return _apikey_create(settings, args)
    except DomainError as exc:
        print(f"cronledger: {exc.detail}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
