"""``cronledger exec --monitor <slug or ping URL> -- <command…>``: run a command and report it to
a monitor, as runitor (github.com/bdd/runitor, ``cmd/runitor/main.go``) and ``cronitor exec``
do (docs/exec.md).

1. ``/start?rid=<new uuid>``; the server's ``Ping-Body-Limit`` answer header bounds the body
   unless ``--body-limit`` is given (runitor's rule).
2. The command runs with this process's stdin, environment and working directory; its stdout
   and stderr are copied byte for byte to ours (through pipes: the command does not see a
   terminal) and into a :class:`Tail` of the last ``body_limit`` bytes.
3. ``/<exit status>?rid=…`` with the tail as the body; the server measures the duration from
   the start it pairs by ``rid``.
4. We exit with the command's status: its exit code, ``128 + N`` when signal N killed it, 127
   when it cannot be found and 126 when it cannot be run (the shell's numbers, POSIX
   "Command Search and Execution"). A ping that fails after its retries
   (:class:`api.client.pings.Pinger`) is one line on stderr and changes nothing else.

SIGINT and SIGTERM sent to us are passed to the command and we go on waiting for it; a SIGINT
typed at the terminal already reached the command (same foreground process group) and is not
sent twice. Unreadable arguments exit 2 with one line, before anything runs or is pinged.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from types import FrameType
from typing import Any, NoReturn

from api.client.pings import (
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    PING_KEY_ENV,
    URL_ENV,
    BadTarget,
    Pinger,
    PingResult,
    ping_target,
)

COMMAND = "exec"
DEFAULT_BODY_LIMIT = 10_000  # bytes: healthchecks' and our CRONLEDGER_PING_BODY_LIMIT default
MAX_BODY_LIMIT = 10_000_000  # bytes: runitor's cap on what a server's header may ask for
DRAIN_SECONDS = 5.0  # after the command exits, how long its output may still be copied (a
# background child it left may hold the pipes open for ever)
FORWARDED = (signal.SIGINT, signal.SIGTERM)
_READ = 65536
PREFIX = "cronledger exec"
TRUNCATED = f"[{PREFIX}: output truncated to its last bytes]\n".encode()
"""The first line of a body whose earlier output was left out; a limit of ``len(TRUNCATED)``
(54) bytes or less has no room for it (docs/exec.md, *Output*)."""


class Tail:
    """The last ``limit`` bytes written, from several threads; :meth:`body` notes a cut."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.truncated = False
        self._data = bytearray()
        self._lock = threading.Lock()

    def write(self, chunk: bytes) -> None:
        with self._lock:
            self._data += chunk
            if len(self._data) > self.limit:
                del self._data[:len(self._data) - self.limit]
                self.truncated = True

    def body(self) -> bytes:
        """The tail; when output was cut, a first line says so and the body stays within
        ``limit`` bytes."""
        with self._lock:
            data = bytes(self._data)
        if not self.truncated:
            return data
        return TRUNCATED + data[len(TRUNCATED):] if self.limit > len(TRUNCATED) else data


def _copy(source: int, sink: int, tail: Tail) -> None:
    """Copy ``source`` to ``sink`` and ``tail`` until end of file. A sink that fails (our
    stdout closed) is dropped; the tail still gets everything."""
    while chunk := os.read(source, _READ):
        tail.write(chunk)
        view = memoryview(chunk)
        while sink >= 0 and view:
            try:
                view = view[os.write(sink, view):]
            except OSError:
                sink = -1
    os.close(source)


def exit_status(returncode: int) -> int:
    """The shell's exit status of a child: its code, or ``128 + N`` when signal N killed it."""
    return 128 - returncode if returncode < 0 else returncode


def start(command: list[str], tail: Tail
          ) -> tuple[subprocess.Popen[bytes] | None, list[threading.Thread], int, str]:
    """Start ``command`` with its output copied into ``tail`` by the threads returned:
    ``(process, threads, 0, "")``, or ``(None, [], 127 or 126, why)`` when it cannot be run."""
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError as exc:
        return None, [], 127, f"cannot run {command[0]!r}: {exc.strerror or exc}"
    except OSError as exc:
        return None, [], 126, f"cannot run {command[0]!r}: {exc.strerror or exc}"
    assert process.stdout is not None and process.stderr is not None
    threads = []
    for pipe, sink in ((process.stdout, 1), (process.stderr, 2)):
        threads.append(threading.Thread(target=_copy, args=(os.dup(pipe.fileno()), sink, tail),
                                        daemon=True, name=f"{PREFIX} fd {sink}"))
        threads[-1].start()
        pipe.close()
    return process, threads, 0, ""


class Forwarder:
    """Passes SIGINT and SIGTERM on to the child while installed; a signal that comes before
    the child exists is passed once it does."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self._pending: list[int] = []
        self._old: dict[int, Any] = {}

    def __enter__(self) -> Forwarder:
        for signum in FORWARDED:
            self._old[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._old.items():
            signal.signal(signum, handler)

    def attach(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        for signum in self._pending:
            self._send(signum)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.process is None:
            self._pending.append(signum)
        elif not (signum == signal.SIGINT and _same_foreground_group()):
            self._send(signum)

    def _send(self, signum: int) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signum)


def _same_foreground_group() -> bool:
    """Whether a SIGINT came from our terminal, which sends it to the whole foreground process
    group, the child included."""
    try:
        return os.tcgetpgrp(sys.stdin.fileno()) == os.getpgrp()
    except (OSError, ValueError):
        return False


def run_command(command: list[str], tail: Tail, forwarder: Forwarder) -> int:
    """Run ``command`` to its end: its shell exit status (see the module)."""
    process, readers, status, problem = start(command, tail)
    if process is None:
        print(f"{PREFIX}: {problem}", file=sys.stderr)
        tail.write(f"[{PREFIX}: {problem}]\n".encode())
        return status
    forwarder.attach(process)
    status = exit_status(process.wait())
    for reader in readers:
        reader.join(DRAIN_SECONDS)
    if status > 128:
        name = _signal_name(status - 128)
        tail.write(f"\n[{PREFIX}: killed by {name}, exit status {status}]\n".encode())
    return status


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _report(result: PingResult, what: str, shown: str) -> None:
    if not result.ok:
        tries = f"{result.tries} tries" if result.tries != 1 else "1 try"
        print(f"{PREFIX}: the {what} ping to {shown} failed after {tries}: {result.error}; "
              "the command's exit status is unchanged", file=sys.stderr)


def run(args: argparse.Namespace, *, sleep: Callable[[float], None] | None = None) -> int:
    """``cronledger exec``: the command's exit status, or 2 for unreadable arguments."""
    command = list(args.argv)
    problem = _usage_problem(args.monitor, command)
    if problem is None:
        try:
            target = ping_target(args.monitor, base_url=args.url or os.environ.get(URL_ENV),
                                 ping_key=os.environ.get(PING_KEY_ENV, "").strip() or None,
                                 base_source="--url" if args.url else URL_ENV)
        except BadTarget as exc:
            problem = str(exc)
    if problem is not None:
        print(f"{PREFIX}: {problem}", file=sys.stderr)
        return 2
    rid = uuid.uuid4()
    options: dict[str, Any] = {"retries": args.retries, "timeout": args.timeout}
    if sleep:
        options["sleep"] = sleep
    with Pinger(target, **options) as pinger, \
            Forwarder() as forwarder:
        started = pinger.ping("start", rid)
        _report(started, "start", target.shown)
        tail = Tail(body_limit(args.body_limit, started.body_limit))
        status = run_command(command[1:], tail, forwarder)
        _report(pinger.ping(str(min(status, 255)), rid, tail.body()), "end", target.shown)
    return status


def body_limit(given: int | None, server: int | None) -> int:
    """Bytes of output a ping carries: ``--body-limit`` (``given``) or the default, lowered to
    the server's ``Ping-Body-Limit``; without ``--body-limit`` the server's limit even when
    higher, up to ``MAX_BODY_LIMIT`` (runitor's rule). A limit of 0 sends no output."""
    if server is None:
        return given or DEFAULT_BODY_LIMIT
    return min(given or MAX_BODY_LIMIT, server)


def _usage_problem(monitor: str | None, command: list[str]) -> str | None:
    # argparse (3.11) keeps the "--" as the first item of a REMAINDER; tests/e2e/test_exec.py
    # fails if a later version stops doing so.
    if not monitor:
        return "--monitor is required: a slug or a ping URL (cronledger exec --help)"
    if not command or command[0] != "--":
        return "put -- before the command: cronledger exec --monitor SLUG -- COMMAND [ARGS…]"
    if len(command) == 1:
        return "no command after --: cronledger exec --monitor SLUG -- COMMAND [ARGS…]"
    return None


def _count(text: str) -> int:
    if not text.isdigit() or int(text) > 10:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 10, got {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 300:
        raise argparse.ArgumentTypeError(f"must be seconds, more than 0 and at most 300, got "
                                         f"{text!r}")
    return value


def _bytes(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_BODY_LIMIT:
        raise argparse.ArgumentTypeError(f"must be bytes from 1 to {MAX_BODY_LIMIT}, got "
                                         f"{text!r}")
    return int(text)


def add_parser(sub: Any, command: Callable[..., argparse.ArgumentParser]) -> None:
    """Add ``exec`` to the ``cronledger`` parser (``command`` as in ``api/cli.py:_parser``)."""
    parser = command(
        sub, COMMAND, "run a command and report it to a monitor",
        "Run COMMAND and report it to a monitor: /start with a new run id, then the exit "
        "status with the last bytes of its output as the body. Exits with the command's own "
        "status (128+N when signal N killed it); a failed ping is retried, then reported on "
        "stderr, and never changes the exit status. docs/exec.md.",
        (URL_ENV, PING_KEY_ENV),
        "--monitor takes a slug (pinged at $CRONLEDGER_URL/ping/$CRONLEDGER_PING_KEY/SLUG) or "
        "a full ping URL, healthchecks' included (https://hc-ping.com/<uuid>).")
    parser.add_argument("--monitor", metavar="SLUG_OR_URL",
                        help="the monitor: a slug, or its ping URL without an action")
    parser.add_argument("--url", help=f"the server of a slug ({URL_ENV}, default "
                                      "http://127.0.0.1:8000)")
    parser.add_argument("--retries", type=_count, default=DEFAULT_RETRIES,
                        help=f"more tries of a failed ping, 0-10 (default {DEFAULT_RETRIES})")
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT,
                        help=f"seconds per try of a ping (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--body-limit", type=_bytes, default=None,
                        help=f"bytes of output sent, the last ones (default: the server's "
                             f"Ping-Body-Limit, else {DEFAULT_BODY_LIMIT})")
    parser.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND …",
                        help="the command and its arguments, after --")
    parser.error = option_error  # type: ignore[method-assign]  # one line, not the usage block


def option_error(message: str) -> NoReturn:
    """An option argparse could not read (``--retries 11``, an unknown option): one line and
    exit 2, as every other refusal of ``exec`` (argparse would print its usage block first)."""
    print(f"{PREFIX}: {message} (cronledger exec --help)", file=sys.stderr)
    raise SystemExit(2)
