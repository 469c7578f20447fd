"""The Python client (``api/client/monitoring.py``) against a running ``cronledger serve``
(docs/exec.md, *The Python client*): the context manager and the decorator ping start, success
and failure with a run id; the definition is upserted from code; failed pings and upserts only
warn."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from api.client import ClientError, monitor
from api.client.pings import BadTarget
from tests.processes import free_port


@pytest.fixture(autouse=True)
def _no_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CRONLEDGER_URL", "CRONLEDGER_PING_KEY", "CRONLEDGER_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _v1(served: dict[str, str], path: str) -> Any:
    r = httpx.get(f"{served['base']}{path}",
                  headers={"Authorization": f"Bearer {served['write']}"})
    assert r.status_code == 200, r.text
    return r.json()


def _pings(served: dict[str, str], monitor_id: Any) -> list[dict[str, Any]]:
    return list(reversed(_v1(served, f"/v1/monitors/{monitor_id}/pings")["items"]))


def test_the_definition_is_upserted_from_code(served: dict[str, str]) -> None:
    fields = {"schedule": "0 3 * * *", "timezone": "Europe/Paris", "grace_seconds": 900,
              "max_duration": "2h", "alert_after_failures": 2, "realert_every": "1h"}
    backup = monitor("client-backup", base_url=served["base"], api_key=served["write"],
                     name="nightly backup", **fields)
    created = backup.upsert()
    assert created.action == "create"
    stored = _v1(served, f"/v1/monitors/{created.id}")
    assert (stored["name"], stored["slug"], stored["schedule"], stored["timezone"]) == \
        ("nightly backup", "client-backup", "0 3 * * *", "Europe/Paris")
    assert (stored["grace_seconds"], stored["max_duration"], stored["alert_after_failures"],
            stored["realert_every"]) == (900, 7200, 2, 3600)
    assert backup.upsert().action == "unchanged"  # the same definition: nothing written
    later = monitor("client-backup", base_url=served["base"], api_key=served["write"],
                    name="nightly backup", **{**fields, "grace_seconds": 1800})
    updated = later.upsert()
    assert (updated.action, updated.id) == ("update", created.id)
    assert updated.changes == [{"field": "grace_seconds", "old": 900, "new": 1800}]
    events = _v1(served, f"/v1/monitors/{created.id}/events")["items"]
    assert {e["metadata"].get("actor") for e in events} == {"apply"}


def test_a_block_pings_start_and_success_with_a_run_id(served: dict[str, str]) -> None:
    # no ping key: the URL is read from the server after the upsert
    job = monitor("client-ok", base_url=served["base"], api_key=served["write"],
                  schedule="1h")
    with job:
        done = True
    assert done
    [monitor_id] = [m["id"] for m in _v1(served, "/v1/monitors?limit=200")["items"]
                    if m["slug"] == "client-ok"]
    start, end = _pings(served, monitor_id)
    assert (start["kind"], end["kind"]) == ("start", "success")
    assert start["rid"] is not None and end["rid"] == start["rid"]
    assert end["duration_ms"] is not None


def test_an_exception_pings_fail_and_is_raised_on(served: dict[str, str]) -> None:
    made = httpx.post(f"{served['base']}/v1/monitors",
                      headers={"Authorization": f"Bearer {served['write']}"},
                      json={"name": "client-fail", "schedule": "1h"}).json()
    job = monitor(made["ping_url"])
    with pytest.raises(OSError, match="disk full"), job:
        raise OSError("disk full")
    start, end = _pings(served, made["id"])
    assert (end["kind"], end["rid"]) == ("fail", start["rid"])
    assert end["body"] == "OSError: disk full"


def test_the_decorator_wraps_each_call(served: dict[str, str]) -> None:
    made = httpx.post(f"{served['base']}/v1/monitors",
                      headers={"Authorization": f"Bearer {served['write']}"},
                      json={"name": "client-deco", "schedule": "1h"}).json()

    @monitor("client-deco", base_url=served["base"], ping_key=served["ping_key"])
    def report(n: int) -> int:
        if n < 0:
            raise ValueError(f"negative: {n}")
        return n * 2

    assert report(21) == 42
    with pytest.raises(ValueError, match="negative"):
        report(-1)
    kinds = [(p["kind"], p["body"]) for p in _pings(served, made["id"])]
    assert kinds == [("start", None), ("success", None), ("start", None),
                     ("fail", "ValueError: negative: -1")]
    rids = [p["rid"] for p in _pings(served, made["id"])]
    assert rids[0] == rids[1] != rids[2] == rids[3]


async def test_the_decorator_wraps_coroutines(served: dict[str, str]) -> None:
    made = httpx.post(f"{served['base']}/v1/monitors",
                      headers={"Authorization": f"Bearer {served['write']}"},
                      json={"name": "client-async", "schedule": "1h"}).json()

    @monitor(made["ping_url"])
    async def sync_mirror() -> str:
        return "synced"

    assert await sync_mirror() == "synced"
    assert [p["kind"] for p in _pings(served, made["id"])] == ["start", "success"]


def test_a_refused_definition_raises_on_upsert_and_only_warns_in_a_block(
        served: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    bad = monitor("client-bad", base_url=served["base"], api_key=served["write"],
                  ping_key=served["ping_key"], schedule="99 * * * *", colour="red")
    with pytest.raises(ClientError) as refused:
        bad.upsert()
    assert refused.value.status == 422
    assert {e["field"] for e in refused.value.errors} >= {"monitors.0.schedule",
                                                          "monitors.0.colour"}
    ran = []
    with caplog.at_level(logging.WARNING, logger="cronledger.client"), bad:
        ran.append(True)
    assert ran == [True]
    assert "the definition of monitor 'client-bad' was not written" in caplog.text
    assert "HTTP 422" in caplog.text
    assert "not found" in caplog.text or "HTTP 404" in caplog.text  # no such slug to ping


def test_a_definition_that_cannot_be_sent_raises_on_upsert_and_only_warns_in_a_block(
        served: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    """Issue 32 (outside test): ``grace_seconds=float("inf")`` raised httpx's ValueError "Out
    of range float values are not JSON compliant" when the block was entered, and the block
    never ran. It is a ClientError naming the field, and in a block a warning."""
    for slug, fields in (("client-inf", {"grace_seconds": float("inf")}),
                         ("client-nan", {"grace_seconds": float("nan")}),
                         ("client-set", {"tags": {"a"}})):
        bad = monitor(slug, base_url=served["base"], api_key=served["write"],
                      ping_key=served["ping_key"], schedule="1h", retries=0, **fields)
        with pytest.raises(ClientError, match="cannot be sent as JSON") as refused:
            bad.upsert()
        if "grace_seconds" in fields:
            assert "grace_seconds: " in str(refused.value)
        ran = []
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="cronledger.client"), bad:
            ran.append(True)
        assert ran == [True], slug
        assert f"the definition of monitor {slug!r} was not written" in caplog.text
    slugs = {m["slug"] for m in _v1(served, "/v1/monitors?limit=200")["items"]}
    assert not slugs & {"client-inf", "client-nan", "client-set"}


def test_a_failed_ping_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    job = monitor(f"http://127.0.0.1:{free_port()}/ping/{'c' * 64}", retries=1, timeout=2)
    with caplog.at_level(logging.WARNING, logger="cronledger.client"), job:
        value = 1
    assert value == 1
    assert caplog.text.count("failed after 2 tries: ConnectError") == 2
    assert "c" * 64 not in caplog.text  # the token is a credential


def test_what_cannot_be_read_is_refused_at_once() -> None:
    with pytest.raises(BadTarget, match="needs the team's ping key"):
        monitor("backup")
    with pytest.raises(BadTarget, match="needs its slug"):
        monitor(f"https://hc-ping.com/{'d' * 64}", schedule="1h")
    with pytest.raises(ClientError, match="needs a write API key"):
        monitor("backup", ping_key="k" * 22, schedule="1h").upsert()
