"""Running ``cronledger`` as real processes in tests."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


# Ports handed out by free_port: below the kernel's ephemeral range (32768-60999 by default),
# so a server that binds port 0 later (a sink, a test's own listener) is never given the port a
# process was just told to listen on; a port once handed out is not handed out again.
_PORTS = range(20000, 32000)
_handed_out: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now, outside the kernel's ephemeral range and not
    returned before by this process. Choosing it and a child process binding it are two steps,
    so a port the kernel picks for ``bind(0)`` in between would take it (the failover test's
    sink answered as the API once); ports below the ephemeral range are never picked that way."""
    for _ in range(200):
        port = random.choice(_PORTS)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError("no free TCP port found in 20000-31999")


def cronledger(*args: str, env: dict[str, str], log: Path | None = None) -> subprocess.Popen:
    """Start ``cronledger ARGS`` with the test interpreter; output goes to ``log``."""
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - closed with process
    return subprocess.Popen([sys.executable, "-m", "api.cli", *args], cwd=ROOT,
                            env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT)


def run_cli(*args: str, env: dict[str, str]) -> str:
    """Run ``cronledger ARGS`` to completion and return its stdout."""
    done = subprocess.run([sys.executable, "-m", "api.cli", *args], cwd=ROOT,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def wait_http(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} did not answer within {timeout} s")


def stop(process: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
    """Send ``sig`` and wait for the exit code."""
    if process.poll() is None:
        process.send_signal(sig)
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
