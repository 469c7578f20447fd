"""The reference count of a data folder: which live processes use its one server.

``embedded-owners.json`` lists one entry per started handle (pid, process start time, handle
id), read and written under the data folder's :class:`core.embedded.files.FileLock`. Entries
of dead processes (``kill -9``, pid reuse) are dropped on every read, so the last live handle's
``stop()`` stops the server ("Several processes on one folder" in docs/operations.md).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from core.embedded.files import atomic_write

logger = logging.getLogger("cronledger.embedded")


@dataclass(frozen=True)
class Owner:
    """One live handle: process id, its start time (guards against pid reuse), handle id."""

    pid: int
    started: float
    handle: str

    @classmethod
    def current(cls, handle: str) -> Owner:
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
        created: float = proc.create_time()  # psutil: seconds since the epoch
        return created
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:
        return None


class Owners:
    """The reference-count file: JSON list of live handles (call under :class:`FileLock`)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def load_live(self) -> list[Owner]:
        try:
            raw = json.loads(self._path.read_text(encoding="utf-8") or "[]")
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            logger.warning("ignoring unreadable %s: %s", self._path, exc)
            return []
        owners: list[Owner] = []
        for item in raw if isinstance(raw, list) else []:
            try:
                owner = Owner(int(item["pid"]), float(item["started"]), str(item["handle"]))
            except (KeyError, TypeError, ValueError):
                continue
            if owner.alive():
                owners.append(owner)
            else:
                logger.info("dropping handle of dead process %d", owner.pid)
        return owners

    def save(self, owners: list[Owner]) -> None:
        payload = [{"pid": o.pid, "started": o.started, "handle": o.handle} for o in owners]
        atomic_write(self._path, json.dumps(payload), mode=0o600)
