"""``cronledger exec`` as a real process against a running ``cronledger serve`` (docs/exec.md):
a succeeding, a failing and a killed command, signals passed on, a ping endpoint that fails
first (retried), and arguments refused with exit 2 before anything runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.processes import ROOT

PY = sys.executable


def _exec(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([PY, "-m", "api.cli", "exec", *args], cwd=ROOT,
                          env={**os.environ, **(env or {})}, capture_output=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def _monitor(served: dict[str, str], slug: str) -> dict[str, Any]:
    r = httpx.post(f"{served['base']}/v1/monitors",
                   headers={"Authorization": f"Bearer {served['write']}"},
                   json={"name": slug, "slug": slug, "schedule": "1h"})
    assert r.status_code == 201, r.text
    return r.json()


def _pings(served: dict[str, str], monitor: dict[str, Any]) -> list[dict[str, Any]]:
    """The monitor's pings, oldest first."""
    r = httpx.get(f"{served['base']}/v1/monitors/{monitor['id']}/pings",
                  headers={"Authorization": f"Bearer {served['write']}"})
    assert r.status_code == 200, r.text
    return list(reversed(r.json()["items"]))


def _slug_env(served: dict[str, str]) -> dict[str, str]:
    return {"CRONLEDGER_URL": served["base"], "CRONLEDGER_PING_KEY": served["ping_key"]}


def test_success_by_slug(served: dict[str, str]) -> None:
    monitor = _monitor(served, "exec-ok")
    code = "import sys; sys.stdout.write('out\\n'); sys.stderr.write('err\\n')"
    done = _exec("--monitor", "exec-ok", "--", PY, "-c", code, env=_slug_env(served))
    assert done.returncode == 0
    assert (done.stdout, done.stderr) == (b"out\n", b"err\n")  # passed through unchanged
    start, end = _pings(served, monitor)
    assert (start["kind"], end["kind"], end["exit_status"]) == ("start", "success", 0)
    assert start["rid"] is not None and end["rid"] == start["rid"]
    assert end["duration_ms"] is not None
    assert sorted(end["body"].splitlines()) == ["err", "out"]
    assert end["user_agent"].startswith("cronledger-client/")


def test_failure_by_url_sends_the_tail(served: dict[str, str]) -> None:
    monitor = _monitor(served, "exec-fail")
    # stdout and stderr are two pipes read side by side: what the tail holds last is stdout's
    code = ("import sys\nprint('starting', file=sys.stderr, flush=True)\n"
            "for n in range(4000): print(f'line {n:05}')\nsys.exit(3)")
    done = _exec("--monitor", monitor["ping_url"], "--", PY, "-c", code)
    assert done.returncode == 3
    assert done.stdout.count(b"\n") == 4000 and done.stderr == b"starting\n"
    start, end = _pings(served, monitor)
    assert (end["kind"], end["exit_status"], end["rid"]) == ("fail", 3, start["rid"])
    # the server's Ping-Body-Limit (10,000 bytes) bounds what was sent: the last lines
    assert end["body_size"] <= 10_000 and not end["body_truncated"]
    lines = end["body"].splitlines()
    assert lines[0] == "[cronledger exec: output truncated to its last bytes]"
    assert lines[-1] == "line 03999" and "line 00000" not in lines


def test_killed_command_exits_128_plus_the_signal(served: dict[str, str]) -> None:
    monitor = _monitor(served, "exec-killed")
    done = _exec("--monitor", monitor["ping_url"], "--", "sh", "-c",
                 "echo before; kill -KILL $$")
    assert done.returncode == 128 + signal.SIGKILL
    assert done.stdout == b"before\n" and done.stderr == b""
    _, end = _pings(served, monitor)
    assert (end["kind"], end["exit_status"]) == ("fail", 137)
    assert end["body"] == "before\n\n[cronledger exec: killed by SIGKILL, exit status 137]\n"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_is_passed_to_the_command(served: dict[str, str], signum: int) -> None:
    monitor = _monitor(served, f"exec-signal-{signum}")
    code = ("import signal, sys\n"
            "def bye(n, _): print(f'got {signal.Signals(n).name}', flush=True); sys.exit(7)\n"
            f"signal.signal({int(signum)}, bye)\nprint('ready', flush=True)\n"
            "while True: signal.pause()")
    process = subprocess.Popen([PY, "-m", "api.cli", "exec", "--monitor", monitor["ping_url"],
                                "--", PY, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"ready\n"  # the command runs: now signal exec
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 7, err
    assert out == f"got {signal.Signals(signum).name}\n".encode()
    _, end = _pings(served, monitor)
    assert (end["kind"], end["exit_status"]) == ("fail", 7)


def test_stdin_is_the_commands(served: dict[str, str]) -> None:
    monitor = _monitor(served, "exec-stdin")
    done = subprocess.run([PY, "-m", "api.cli", "exec", "--monitor", monitor["ping_url"], "--",
                           "cat"], cwd=ROOT, input=b"from stdin\n", capture_output=True,
                          timeout=120)
    assert (done.returncode, done.stdout) == (0, b"from stdin\n")
    _, end = _pings(served, monitor)
    assert end["body"] == "from stdin\n"


def test_command_not_found_is_127_and_reported(served: dict[str, str]) -> None:
    monitor = _monitor(served, "exec-missing")
    done = _exec("--monitor", monitor["ping_url"], "--", "/nonexistent/backup.sh")
    assert done.returncode == 127
    assert done.stderr.decode().splitlines() == [
        "cronledger exec: cannot run '/nonexistent/backup.sh': No such file or directory"]
    _, end = _pings(served, monitor)
    assert (end["kind"], end["exit_status"]) == ("fail", 127)
    assert "No such file or directory" in end["body"]


class _Flaky(BaseHTTPRequestHandler):
    """Answers 503 to the first ``failures`` requests, then forwards to ``upstream``."""

    upstream = ""
    failures = 0
    seen: list[tuple[str, int]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if type(self).failures > 0:
            type(self).failures -= 1
            status, headers, content = 503, {"Retry-After": "0"}, b"try later"
        else:
            r = httpx.post(f"{self.upstream}{self.path}", content=body,
                           headers={"Content-Type": self.headers["Content-Type"],
                                    "User-Agent": self.headers["User-Agent"]})
            status, content = r.status_code, r.content
            headers = {k: v for k, v in r.headers.items() if k.lower() == "ping-body-limit"}
        self.seen.append((self.path.split("?")[0].rsplit("/", 1)[-1], status))
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(content))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flaky(served: dict[str, str]) -> Iterator[tuple[str, type[_Flaky]]]:
    handler = type("Flaky", (_Flaky,), {"upstream": served["base"], "failures": 1, "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def test_a_failed_ping_is_retried(served: dict[str, str],
                                  flaky: tuple[str, type[_Flaky]]) -> None:
    monitor = _monitor(served, "exec-retry")
    url = monitor["ping_url"].replace(served["base"], flaky[0])
    done = _exec("--monitor", url, "--", "true")
    assert done.returncode == 0 and done.stderr == b""
    token = monitor["ping_token"]
    assert flaky[1].seen == [("start", 503), ("start", 200), ("0", 200)]
    start, end = _pings(served, monitor)
    assert (start["kind"], end["kind"], end["rid"]) == ("start", "success", start["rid"])
    assert token not in done.stdout.decode()


def test_a_ping_that_keeps_failing_never_changes_the_exit_status(
        served: dict[str, str], flaky: tuple[str, type[_Flaky]]) -> None:
    flaky[1].failures = 100
    url = f"{flaky[0]}/ping/{'0' * 64}"
    done = _exec("--monitor", url, "--retries", "1", "--", "sh", "-c", "exit 5")
    assert done.returncode == 5
    lines = done.stderr.decode().splitlines()
    # scheme, host and port, the token masked (issue 32: the port was dropped)
    shown = f"{flaky[0]}/ping/<token>"
    assert lines == [f"cronledger exec: the {what} ping to {shown} failed after 2 "
                     "tries: HTTP 503; the command's exit status is unchanged"
                     for what in ("start", "end")]
    assert "0" * 64 not in done.stderr.decode()  # the token is a credential: never shown
    # an unknown token is final: not retried
    flaky[1].failures = 0
    gone = _exec("--monitor", url, "--", "true")
    assert gone.returncode == 0
    assert "failed after 1 try: HTTP 404" in gone.stderr.decode()


@pytest.mark.parametrize(("args", "message"), [
    (["--monitor", "backup", "touch", "{file}"], "put -- before the command"),
    (["--monitor", "backup", "--"], "no command after --"),
    (["--", "touch", "{file}"], "--monitor is required"),
    (["--monitor", "not a slug", "--", "touch", "{file}"], "is neither a slug"),
    (["--monitor", "https://", "--", "touch", "{file}"], "not an http:// or https:// URL"),
    (["--monitor", "https://hc-ping.com/", "--", "touch", "{file}"], "names no monitor"),
    (["--monitor", f"https://hc-ping.com/{uuid.UUID(int=1)}/fail", "--", "touch", "{file}"],
     "already ends with an action (/fail)"),
    (["--monitor", "http://x/ping/" + "a" * 64 + "#x", "--", "touch", "{file}"],
     "has a #fragment"),
    # issue 32 (outside test): these printed argparse's usage block, or were accepted
    (["--retries", "11", "--monitor", "backup", "--", "touch", "{file}"],
     "argument --retries: must be a whole number from 0 to 10, got '11'"),
    (["--timeout", "-1", "--monitor", "backup", "--", "touch", "{file}"],
     "argument --timeout: must be seconds"),
    (["--bogus", "--monitor", "backup", "--", "touch", "{file}"],
     "unrecognized arguments: --bogus"),
    ([f"--monitor= http://x/ping/{'a' * 64} ", "--", "touch", "{file}"],
     "contains whitespace"),
])
def test_unreadable_arguments_exit_2_before_anything_runs(
        tmp_path: Path, args: list[str], message: str) -> None:
    file = tmp_path / "ran"
    done = _exec(*[a.replace("{file}", str(file)) for a in args],
                 env={"CRONLEDGER_PING_KEY": ""})
    assert done.returncode == 2
    [line] = done.stderr.decode().splitlines()
    assert line.startswith("cronledger exec: ") and message in line
    assert not file.exists()


def test_refusals_never_show_the_token_or_the_ping_key(served: dict[str, str],
                                                        tmp_path: Path) -> None:
    """Issue 32: each message that quotes a ping URL masks its token or ping key and keeps
    scheme, host and port (docs/exec.md); a failing ping's message likewise."""
    token, key = "a" * 64, served["ping_key"]
    base = served["base"]  # http://127.0.0.1:<port>
    file = tmp_path / "ran"
    for monitor, shown, env in (
            (f"{base}/ping/{token}/start", f"{base}/ping/<token>/start", {}),
            (f"{base}/ping/{key}/backup/start", f"{base}/ping/<ping key>/backup/start", {}),
            (f"{base}/ping/{token}?rid=123", f"{base}/ping/<token>?rid=123", {}),
            (f"{base}/ping/{key}/backup#x", f"{base}/ping/<ping key>/backup", {}),
            ("backup", f"http://u:<pw>@{base.removeprefix('http://')}:x",
             {"CRONLEDGER_URL": f"http://u:pw@{base.removeprefix('http://')}:x",
              "CRONLEDGER_PING_KEY": key}),
            (token, "<token>", {"CRONLEDGER_PING_KEY": ""}),
            (key.upper() + " ", "<token>", {})):
        done = _exec("--monitor", monitor, "--", "touch", str(file),
                     env={"CRONLEDGER_PING_KEY": "", **env})
        assert done.returncode == 2
        [line] = done.stderr.decode().splitlines()
        assert token not in line and key not in line and key.upper() not in line, line
        assert "pw" not in line, line
        if "<pw>" not in shown:
            assert shown in line, line
        assert not file.exists()
    # a ping that fails: its message shows the port and the slug, not the key
    done = _exec("--monitor", "exec-never-made", "--retries", "0", "--", "true",
                 env=_slug_env(served))
    assert done.returncode == 0
    assert f"ping to {base}/ping/<ping key>/exec-never-made failed after 1 try: HTTP 404" \
        in done.stderr.decode()
    assert key not in done.stderr.decode()


def test_a_slug_needs_the_ping_key(tmp_path: Path) -> None:
    done = _exec("--monitor", "backup", "--", "true", env={"CRONLEDGER_PING_KEY": ""})
    assert done.returncode == 2
    assert "needs the team's ping key: set CRONLEDGER_PING_KEY" in done.stderr.decode()


# Issue 32 (outside test): masking read fixed path positions, so these printed the token or the
# ping key, and were run; they are refused now, naming the part, with no secret in any output.
SECRET_TOKEN = "9cc33fa5" + "0123456789abcdef" * 3 + "0f1e717a"
SECRET_KEY = "OCB6dYCenCWP_X3fDLq7dA"


@pytest.mark.parametrize(("path", "shown", "why"), [
    (f"/ping/{SECRET_TOKEN}/extra/parts/here", "/ping/<token>/<hidden>/<hidden>/<hidden>",
     "path segment 2 after /ping/ is not an action"),
    (f"/ping/{SECRET_KEY}/mona1/extra", "/ping/<ping key>/mona1/<hidden>",
     "path segment 3 after /ping/ is not an action"),
    (f"/ping/{SECRET_KEY}/a/b/c", "/ping/<ping key>/a/<hidden>/<hidden>",
     "path segment 3 after /ping/"),
    (f"/ping/{SECRET_TOKEN};x", "/ping/<token>", "has a ';' parameter"),
    (f"/ping/{SECRET_TOKEN}%2Fstart", "/ping/<token>", "has a percent escape"),
    (f"/{SECRET_TOKEN}/x/y", "/<token>/<hidden>/<hidden>", "path segment 2 is not an action"),
    (f"/ping/{SECRET_KEY}/Bad-Slug", "/ping/<ping key>/<hidden>",
     "path segment 2 after /ping/ is not a slug"),
])
def test_urls_of_no_ping_form_are_refused_without_their_secret(
        tmp_path: Path, path: str, shown: str, why: str) -> None:
    nobody = "http://127.0.0.1:8799"  # nothing listens; nothing may be sent anyway
    file = tmp_path / "ran"
    done = _exec("--retries", "0", "--monitor", f"{nobody}{path}", "--", "touch", str(file),
                 env={"CRONLEDGER_PING_KEY": ""})
    out = done.stdout.decode() + done.stderr.decode()
    assert SECRET_TOKEN not in out and SECRET_KEY not in out, out
    assert done.returncode == 2, out
    [line] = done.stderr.decode().splitlines()
    assert line.startswith(f"cronledger exec: the ping URL '{nobody}{shown}' is none of the "
                           "ping URL forms: its "), line
    assert why in line, line
    assert not file.exists()


@pytest.mark.parametrize(("args", "env", "named"), [
    (["--url", "127.0.0.1:8799"], {}, "--url"),
    ([], {"CRONLEDGER_URL": "127.0.0.1:8799"}, "CRONLEDGER_URL"),
])
def test_a_bad_server_url_is_named_by_its_source(
        tmp_path: Path, args: list[str], env: dict[str, str], named: str) -> None:
    file = tmp_path / "ran"
    done = _exec(*args, "--monitor", "backup", "--", "touch", str(file),
                 env={"CRONLEDGER_PING_KEY": SECRET_KEY, **env})
    assert done.returncode == 2
    assert done.stderr.decode() == (f"cronledger exec: {named} '127.0.0.1:8799' is not an "
                                    "http:// or https:// URL with a host\n")
    assert not file.exists()
