"""Ping URLs of the client and ``cronledger exec`` (``api/client/pings.py``), the exec's output
tail and body limit (``api/cli_exec.py``), without a server."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from api.cli_exec import TRUNCATED, Tail, body_limit, exit_status
from api.client import monitor, pings
from api.client.pings import BadTarget, Pinger, PingTarget, ping_target, retry_after
from core.monitors.slugs import SLUG_PATTERN

TOKEN = "ab" * 32
KEY = "k" * 22


def test_the_slug_rule_is_the_servers() -> None:
    assert pings.SLUG_PATTERN == SLUG_PATTERN


@pytest.mark.parametrize(("monitor", "url"), [
    (f"https://cron.example.com/ping/{TOKEN}", f"https://cron.example.com/ping/{TOKEN}"),
    (f"https://cron.example.com/ping/{TOKEN}/", f"https://cron.example.com/ping/{TOKEN}"),
    (f"https://hc-ping.com/{uuid.UUID(int=7)}", f"https://hc-ping.com/{uuid.UUID(int=7)}"),
    (f"https://hc-ping.com/{KEY}/backup", f"https://hc-ping.com/{KEY}/backup"),
    (f"http://h:8000/ping/{KEY}/start", f"http://h:8000/ping/{KEY}/start"),  # slug "start"
    (f"http://h/ping/{KEY}/0", f"http://h/ping/{KEY}/0"),  # slug "0"
])
def test_ping_urls_are_taken_as_given(monitor: str, url: str) -> None:
    assert ping_target(monitor).url == url


def test_a_slug_is_pinged_by_the_teams_ping_key() -> None:
    target = ping_target("backup", base_url="https://cron.example.com/", ping_key=KEY)
    assert target.url == f"https://cron.example.com/ping/{KEY}/backup"
    assert target.shown == "https://cron.example.com/ping/<ping key>/backup"
    assert KEY not in target.shown


@pytest.mark.parametrize(("monitor", "shown"), [
    (f"http://127.0.0.1:8123/ping/{TOKEN}/start", "http://127.0.0.1:8123/ping/<token>/start"),
    (f"http://127.0.0.1:8123/ping/{KEY}/backup/start",
     "http://127.0.0.1:8123/ping/<ping key>/backup/start"),
    (f"http://127.0.0.1:8123/ping/{TOKEN}?rid=123", "http://127.0.0.1:8123/ping/<token>?rid=123"),
    (f"http://u:pw@h:9/ping/{KEY}/backup/log", "http://h:9/ping/<ping key>/backup/log"),
    (f"http://h:port/ping/{TOKEN}", "http://h:port/ping/<token>"),
    (f"http://h/ping/{TOKEN}#x", "http://h/ping/<token>"),
    (f"https://hc-ping.com/{uuid.UUID(int=1)}/fail", "https://hc-ping.com/<token>/fail"),
])
def test_refusals_show_the_url_with_its_secret_masked(monitor: str, shown: str) -> None:
    """Issue 32: every message keeps scheme, host and port, never the token or the ping key
    (docs/exec.md)."""
    with pytest.raises(BadTarget) as raised:
        ping_target(monitor)
    message = str(raised.value)
    assert repr(shown) in message, message
    assert TOKEN not in message and KEY not in message and "pw" not in message


def test_targets_show_the_port_and_never_the_secret() -> None:
    assert ping_target(f"http://127.0.0.1:8123/ping/{TOKEN}").shown == \
        "http://127.0.0.1:8123/ping/<token>"
    assert ping_target(f"https://hc-ping.com/{KEY}/backup?create=1").shown == \
        "https://hc-ping.com/<ping key>/backup"
    assert ping_target("backup", base_url="http://u:pw@127.0.0.1:8123",
                       ping_key=KEY).shown == "http://127.0.0.1:8123/ping/<ping key>/backup"
    for pasted in (TOKEN, KEY.upper()):  # a token or a key given as --monitor
        with pytest.raises(BadTarget) as raised:
            ping_target(pasted)
        assert pasted not in str(raised.value) and "<token>" in str(raised.value)


def test_action_urls_carry_the_rid_and_the_given_query() -> None:
    target = ping_target(f"https://hc-ping.com/{KEY}/backup?create=1")
    rid = uuid.UUID(int=5)
    assert target.action_url("start", rid) == \
        f"https://hc-ping.com/{KEY}/backup/start?create=1&rid={rid}"
    assert PingTarget("https://h/ping/x").action_url(None) == "https://h/ping/x"
    assert PingTarget("https://h/ping/x").action_url("3", rid) == f"https://h/ping/x/3?rid={rid}"


@pytest.mark.parametrize(("monitor", "message"), [
    (f"https://h/ping/{TOKEN}/start", "already ends with an action"),
    (f"https://h/ping/{TOKEN}/17", "already ends with an action"),
    (f"https://h/ping/{KEY}/backup/log", "already ends with an action"),
    (f"https://h/ping/{TOKEN}?rid={uuid.UUID(int=1)}", "has a rid"),
    ("https://h:port/x", "cannot be read"),
    ("mailto://h/x", "not an http:// or https:// URL"),
    ("Backup", "neither a slug"),
    ("backup", "needs the team's ping key"),
])
def test_unreadable_monitors_are_refused(monitor: str, message: str) -> None:
    with pytest.raises(BadTarget, match=message):
        ping_target(monitor)


def test_a_malformed_ping_key_is_refused_without_showing_it() -> None:
    with pytest.raises(BadTarget) as raised:
        ping_target("backup", ping_key="secret/with/slashes")
    assert "secret" not in str(raised.value)


def test_the_tail_keeps_the_last_bytes_and_says_it_cut() -> None:
    tail = Tail(100)
    tail.write(b"x" * 80)
    assert tail.body() == b"x" * 80 and not tail.truncated
    tail.write(b"0123456789" * 5)
    body = tail.body()
    assert len(body) == 100 and body.endswith(b"0123456789" * 4)  # the note took the rest
    assert body.startswith(b"[cronledger exec: output truncated to its last bytes]\n")


@pytest.mark.parametrize("limit", [1, 5, 54, 55])
def test_a_limit_too_small_for_the_note_is_the_last_bytes_as_the_doc_says(limit: int) -> None:
    """Issue 32 (outside test): ``--body-limit 5`` dropped the note, which docs/exec.md did not
    say; the doc now gives the size below which it is dropped, which is the note's."""
    tail = Tail(limit)
    tail.write(b"y" * 100)
    body = tail.body()
    assert len(body) == limit
    assert body.startswith(TRUNCATED) == (limit > len(TRUNCATED))
    doc = (Path(__file__).parents[2] / "docs" / "exec.md").read_text()
    assert f"a limit of {len(TRUNCATED)} bytes or less has no room for it" in \
        " ".join(doc.split())


@pytest.mark.parametrize(("given", "server", "limit"), [
    (None, None, 10_000), (500, None, 500), (None, 100_000, 100_000),
    (None, 10**9, 10_000_000), (500, 200, 200), (500, 1_000, 500), (None, 0, 0), (500, 0, 0),
])
def test_body_limit(given: int | None, server: int | None, limit: int) -> None:
    assert body_limit(given, server) == limit


def test_exit_status_as_a_shell_gives_it() -> None:
    assert [exit_status(c) for c in (0, 3, -9, -15)] == [0, 3, 137, 143]


# Issue 32 (outside test): masking read fixed path positions, so a token or ping key elsewhere in
# the path was shown, and such URLs were taken. Both are a real token's and key's shape.
SECRET_TOKEN = "9cc33fa5" + "0123456789abcdef" * 3 + "0f1e717a"
SECRET_KEY = "OCB6dYCenCWP_X3fDLq7dA"
NOBODY = "http://127.0.0.1:8799"  # nothing listens: nothing may be sent anyway


@pytest.mark.parametrize(("monitor_url", "shown", "why"), [
    (f"{NOBODY}/ping/{SECRET_TOKEN}/extra/parts/here",
     f"{NOBODY}/ping/<token>/<hidden>/<hidden>/<hidden>", "path segment 2 after /ping/ is not"),
    (f"{NOBODY}/ping/{SECRET_KEY}/mona1/extra", f"{NOBODY}/ping/<ping key>/mona1/<hidden>",
     "path segment 3 after /ping/ is not an action"),
    (f"{NOBODY}/ping/{SECRET_KEY}/a/b/c", f"{NOBODY}/ping/<ping key>/a/<hidden>/<hidden>",
     "path segment 3 after /ping/"),
    (f"{NOBODY}/ping/{SECRET_TOKEN};x", f"{NOBODY}/ping/<token>",
     "path segment 1 after /ping/ has a ';' parameter"),
    (f"{NOBODY}/ping/{SECRET_TOKEN}%2Fstart", f"{NOBODY}/ping/<token>",
     "path segment 1 after /ping/ has a percent escape"),
    (f"{NOBODY}/ping/{SECRET_KEY}%2Fbackup", f"{NOBODY}/ping/<token>", "percent escape"),
    (f"http://h/{SECRET_TOKEN}/x/y", "http://h/<token>/<hidden>/<hidden>", "path segment 2 is"),
    (f"http://h/{SECRET_KEY}/x/y", "http://h/<ping key>/x/<hidden>", "path segment 3 is"),
    # a ping key with a malformed or missing slug is still called the ping key
    (f"{NOBODY}/ping/{SECRET_KEY}/Bad-Slug", f"{NOBODY}/ping/<ping key>/<hidden>",
     "path segment 2 after /ping/ is not a slug"),
    (f"{NOBODY}/ping/{SECRET_KEY}/a%20b", f"{NOBODY}/ping/<ping key>/<hidden>",
     "path segment 2 after /ping/ has a percent escape"),
    (f"{NOBODY}/ping/{SECRET_KEY}", f"{NOBODY}/ping/<ping key>",
     "path segment 2 after /ping/ is missing (the monitor's slug after the ping key)"),
    (f"http://h/cron/ping/{SECRET_TOKEN}", "http://h/<token>/<hidden>/<hidden>",
     "path segment 1 is not"),
    (f"http://h/ping//{SECRET_TOKEN}", "http://h/ping/<token>/<hidden>",
     "segment 1 after /ping/ is empty"),
])
def test_urls_that_are_no_ping_url_form_are_refused_and_masked(
        monitor_url: str, shown: str, why: str) -> None:
    """Default-deny: every path segment after the ping prefix that is not a validated slug or
    action is masked, and a URL that is none of the forms is refused, naming the part."""
    with pytest.raises(BadTarget) as raised:
        ping_target(monitor_url)
    message = str(raised.value)
    assert SECRET_TOKEN not in message and SECRET_KEY not in message, message
    assert why in message, message
    assert pings.masked(monitor_url) == shown
    assert f"{shown}'" in message, message


def test_the_query_is_shown_only_in_plain_short_words() -> None:
    assert pings.masked(f"http://h/ping/{SECRET_TOKEN}?k={SECRET_KEY}&{SECRET_KEY}=1&create=1") \
        == "http://h/ping/<token>?k=<hidden>&<hidden>=1&create=1"


def test_a_percent_encoded_action_is_no_way_past_the_action_refusal() -> None:
    with pytest.raises(BadTarget, match="none of the ping URL forms"):
        ping_target(f"{NOBODY}/ping/{SECRET_TOKEN}%2Fstart")
    with pytest.raises(BadTarget, match="none of the ping URL forms"):
        ping_target(f"{NOBODY}/ping/{SECRET_TOKEN}/%73tart")


@pytest.mark.parametrize(("source", "named"), [("--url", "--url"), (pings.URL_ENV, pings.URL_ENV)])
def test_the_servers_url_is_named_by_its_source(source: str, named: str) -> None:
    with pytest.raises(BadTarget) as raised:
        ping_target("backup", base_url="127.0.0.1:8799", ping_key=KEY, base_source=source)
    assert str(raised.value) == (f"{named} '127.0.0.1:8799' is not an http:// or https:// URL "
                                 "with a host")


def test_the_client_refuses_such_a_url_and_logs_no_secret(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(BadTarget) as raised, \
            monitor(f"{NOBODY}/ping/{SECRET_TOKEN}/extra/x", retries=0):
        pass
    assert SECRET_TOKEN not in str(raised.value)
    assert SECRET_TOKEN not in caplog.text and SECRET_KEY not in caplog.text


@pytest.mark.parametrize(("value", "seconds"), [
    ("7", 7.0), (" 120 ", 120.0), (formatdate(1_000_060, usegmt=True), 60.0),
    ("Sun, 11 Jan 1970 13:46:40 GMT", 0.0),  # a date already past
    ("Monday, 12-Jan-70 13:47:40 GMT", 60.0),  # RFC 850, which recipients must read
    ("soon", None), ("", None), ("-3", None),
])
def test_retry_after_in_seconds_or_as_an_http_date(value: str, seconds: float | None) -> None:
    """RFC 9110 §10.2.3: delay-seconds or an HTTP-date (now = 1,000,000 s after the epoch)."""
    assert retry_after(value, 1_000_000.0) == seconds


class _Busy(BaseHTTPRequestHandler):
    """Answers 503 with a ``Retry-After`` date 20 s after the client's clock, then 200."""

    answers: list[int] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        status = 503 if not self.answers else 200
        self.answers.append(status)
        self.send_response(status)
        self.send_header("Retry-After", formatdate(2_000_020, usegmt=True))
        self.send_header("Ping-Body-Limit", "0")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def busy() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Busy", (_Busy,), {"answers": []}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_retry_after_date_is_waited_for_and_a_zero_body_limit_kept(busy: str) -> None:
    waits: list[float] = []
    with Pinger(ping_target(f"{busy}/ping/{TOKEN}"), retries=1, backoff=1.0,
                sleep=waits.append, clock=lambda: 2_000_000.0) as pinger:
        result = pinger.ping("start")
    assert result.ok and result.tries == 2 and waits == [20.0]
    assert result.body_limit == 0 and body_limit(None, result.body_limit) == 0
    tail = Tail(0)
    tail.write(b"output")
    assert tail.body() == b""


@pytest.mark.parametrize("url", [f" {NOBODY}/ping/{SECRET_TOKEN}",
                                 f"{NOBODY}/ping/{SECRET_TOKEN}\n",
                                 f"{NOBODY}/ping/\t{SECRET_TOKEN}"])
def test_a_ping_url_with_whitespace_is_refused(url: str) -> None:
    """Issue 32 (outside test): a ping URL with spaces around it was taken (stripped)."""
    with pytest.raises(BadTarget, match="contains whitespace") as raised:
        ping_target(url)
    assert SECRET_TOKEN not in str(raised.value)
    with pytest.raises(BadTarget, match="contains whitespace"):
        ping_target("backup", base_url=" http://127.0.0.1:8000", ping_key=KEY)
