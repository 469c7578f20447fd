"""Ping URLs of the client and ``cronledger exec`` (``api/client/pings.py``), the exec's output
tail and body limit (``api/cli_exec.py``), without a server."""

from __future__ import annotations

import uuid

import pytest

from api.cli_exec import Tail, body_limit, exit_status
from api.client import pings
from api.client.pings import BadTarget, PingTarget, ping_target
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


@pytest.mark.parametrize(("given", "server", "limit"), [
    (None, None, 10_000), (500, None, 500), (None, 100_000, 100_000),
    (None, 10**9, 10_000_000), (500, 200, 200), (500, 1_000, 500), (None, 0, 10_000),
])
def test_body_limit(given: int | None, server: int | None, limit: int) -> None:
    assert body_limit(given, server) == limit


def test_exit_status_as_a_shell_gives_it() -> None:
    assert [exit_status(c) for c in (0, 3, -9, -15)] == [0, 3, 137, 143]
