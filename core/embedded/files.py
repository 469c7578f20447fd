"""File primitives shared by the parts: an ``flock`` with a timeout, atomic writes, reads.

:class:`FileLock` serialises start/stop on a data folder (``embedded.lock``) and the copying
of the binaries (``pgbin/.lock``) between processes.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

from core.embedded.errors import EmbeddedPostgresError

_LOCK_TIMEOUT_S = 60.0


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path`` without surrounding whitespace; ``""`` if it cannot be read."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def atomic_write(path: Path, text: str, *, mode: int) -> None:
    """Replace ``path`` with ``text`` (UTF-8) through a temporary file and a rename.

    Args:
        mode: Permission bits of a newly created file (subject to the umask).

    Raises:
        OSError: The folder is not writable.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, path)


class FileLock:
    """Exclusive ``flock`` on a file (created 0600 if missing), as a context manager.

    Args:
        path: The lock file.
        timeout: Seconds to wait for the lock (polled every 50 ms).

    Raises:
        EmbeddedPostgresError: On entering, the lock was not obtained within ``timeout``.
    """

    def __init__(self, path: Path, timeout: float = _LOCK_TIMEOUT_S) -> None:
        self._path = path
        self._timeout = timeout
        self._fd: int | None = None

    def __enter__(self) -> FileLock:
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
