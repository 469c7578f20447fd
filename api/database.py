"""The database of a CLI command: ``DATABASE_URL``, or an embedded server started for it.

Used by every command of :mod:`api.cli` and :mod:`api.cli_apply` that reads or writes the
database (its own module, so that the two do not import each other).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
from collections.abc import Iterator

from core.config import Settings

log = logging.getLogger("cronledger")


@contextlib.contextmanager
def database(settings: Settings, *, migrate: bool = True, wait: bool = False) -> Iterator[str]:
    """Yield the DSN: ``DATABASE_URL``, or an embedded server started (and stopped) here.

    With ``wait`` (the servers), a ``DATABASE_URL`` that cannot be reached yet, or is full, is
    waited for - one log line, retries with backoff up to 5 s apart
    (:func:`core.services.outage.wait_for_database`) - and migrated once it answers.

    Raises:
        SystemExit: (code 1) the embedded server could not be started, or the database refused
            or could not be reached for the migrations; one line or paragraph saying what
            failed was printed to stderr (never a traceback).
    """
    embedded = None
    try:
        if settings.database_url and wait:
            import psycopg

            from core.migrate import upgrade
            from core.services.outage import connect_dsn, describe, probe, wait_for_database

            dsn = connect_dsn(settings.database_url)
            try:
                # migrations take a session advisory lock: direct, never through a pooler
                direct = connect_dsn(settings.listen_database_url or settings.database_url)
                wait_for_database(lambda: upgrade(direct) if migrate else probe(dsn), dsn, log)
            # Ctrl-C while waiting (SIGTERM exits via api/cli.py:_terminate)
            except KeyboardInterrupt:
                raise SystemExit(128 + signal.SIGINT) from None
            except psycopg.OperationalError as exc:  # refused for good: password, database name
                text = " ".join(str(exc).split())
                raise SystemExit(f"cronledger: PostgreSQL at {describe(dsn)}: {text}") from None
            migrate = False  # done
        elif settings.database_url:
            dsn = settings.database_url
        else:
            from core.embedded import EmbeddedPostgres, EmbeddedPostgresError, start_failure_message

            embedded = EmbeddedPostgres(settings.data_dir)
            try:
                dsn = embedded.start()
            except EmbeddedPostgresError as exc:
                # One paragraph, never a traceback: the message says what failed and what to do.
                print(f"cronledger: {start_failure_message(exc, embedded.data_dir)}",
                      file=sys.stderr)
                raise SystemExit(1) from None
            log.info("embedded PostgreSQL in %s (DATABASE_URL is unset)", embedded.data_dir)
        if migrate:
            import psycopg

            from core.migrate import upgrade
            from core.services.outage import describe

            target = settings.listen_database_url or dsn
            try:
                upgrade(target)
            except psycopg.OperationalError as exc:  # unreachable, refused: one line, exit 1
                text = " ".join(str(exc).split())
                raise SystemExit(f"cronledger: PostgreSQL at {describe(target)}: {text}") from None
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
