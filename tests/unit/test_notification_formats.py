"""Provider limits, escaping, signatures, sealing and channel validation (no database)."""

from __future__ import annotations

import hashlib
import hmac
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from core.channels.definition import normalize_channel, redact_url
from core.channels.sealing import AesGcmSealer, SealError, channel_aad, parse_keys
from core.durations import parse_duration
from core.errors import InvalidInput, Unavailable
from core.http.clients import sign
from core.notifications import formatting
from core.notifications.messages import job_message, monitor_message

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
BASE = "https://cron.example.com"


def huge_message() -> dict:
    message = monitor_message("down", monitor_id=uuid.uuid4(), monitor_name="m" * 5000,
                              since=NOW - timedelta(hours=1),
                              last_ping={"at": "x", "kind": "fail", "body": "b" * 9000},
                              now=NOW)
    message["text"] = "t" * 10_000
    message["facts"] = [{"name": "n" * 400, "value": "v" * 3000} for _ in range(40)]
    return message


def test_discord_limits() -> None:
    payload = formatting.discord_payload(huge_message(), BASE)
    assert len(payload["content"]) <= 2000
    [embed] = payload["embeds"]
    assert len(embed["title"]) <= 256
    assert len(embed["description"]) <= 4096
    assert len(embed["fields"]) <= 25
    assert all(len(f["name"]) <= 256 and len(f["value"]) <= 1024 for f in embed["fields"])
    total = (len(embed["title"]) + len(embed["description"]) + len(embed["footer"]["text"])
             + sum(len(f["name"]) + len(f["value"]) for f in embed["fields"]))
    assert total <= 6000


def test_slack_limits_and_escaping() -> None:
    payload = formatting.slack_payload(huge_message(), BASE)
    header, section, facts, _ = payload["blocks"]
    assert len(header["text"]["text"]) <= 150
    assert len(section["text"]["text"]) <= 3000 and len(payload["text"]) <= 3000
    assert len(facts["fields"]) <= 10
    assert all(len(f["text"]) <= 2000 for f in facts["fields"])
    message = job_message("failed", job_id=uuid.uuid4(), job_name="a<b>&c", run_id=uuid.uuid4(),
                          scheduled_for=NOW, attempts=1, consecutive_failures=1, since=NOW,
                          last_response={"status": None, "body": None,
                                         "error_class": "connect", "error": "refused"},
                          now=NOW)
    payload = formatting.slack_payload(message, BASE)
    assert payload["text"].startswith("Job \u201ca&lt;b&gt;&amp;c\u201d failed")
    assert "connect: refused" in payload["blocks"][1]["text"]["text"]


def test_telegram_limit_and_html() -> None:
    payload = formatting.telegram_payload(huge_message(), BASE, "@chan_name")
    assert len(payload["text"]) <= 4096
    assert payload["chat_id"] == "@chan_name"
    message = monitor_message("up", monitor_id=uuid.uuid4(), monitor_name="<i>&",
                              since=NOW - timedelta(minutes=90), last_ping=None, now=NOW)
    text = formatting.telegram_payload(message, BASE, "-42")["text"]
    assert text.startswith("<b>Monitor \u201c&lt;i&gt;&amp;\u201d is up</b>\n")
    assert "down for 1h 30m" in text


def test_signature_is_hmac_over_timestamp_and_body() -> None:
    body = b'{"a":1}'
    expected = hmac.new(b"key-material-123", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert sign("key-material-123", 1700000000, body) == f"t=1700000000,v1={expected}"


def test_sealing_binds_team_and_channel_and_rotates() -> None:
    old, new = AesGcmSealer.random(), AesGcmSealer.random()
    team, ch = uuid.uuid4(), uuid.uuid4()
    kid, blob = old.seal(b"https://hooks/secret", channel_aad(team.bytes, ch.bytes))
    assert b"secret" not in blob
    with pytest.raises(SealError):
        old.unseal(kid, blob, channel_aad(team.bytes, uuid.uuid4().bytes))
    with pytest.raises(SealError):
        new.unseal(kid, blob, channel_aad(team.bytes, ch.bytes))
    assert new.current_id != old.current_id
    import base64
    import secrets

    k1, k2 = secrets.token_bytes(32), secrets.token_bytes(32)
    first = AesGcmSealer([k1])
    kid, blob = first.seal(b"x", b"aad")
    ring = AesGcmSealer.from_text(f"{base64.b64encode(k2).decode()}, "
                                  f"{base64.b64encode(k1).decode()}")
    assert ring.unseal(kid, blob, b"aad") == b"x"
    assert ring.seal(b"y", b"aad")[0] != kid  # new values use the first (current) key
    with pytest.raises(Unavailable):
        AesGcmSealer([]).seal(b"x", b"aad")
    with pytest.raises(ValueError, match="key #1"):
        parse_keys("not-a-key")


def test_channel_validation_and_redaction() -> None:
    assert redact_url("https://u:p@hooks.example.com:8443/a/b?c=d") == \
        "https://hooks.example.com:8443/[redacted]"
    public, sealed = normalize_channel({"name": "w", "kind": "webhook", "url": "http://h/x"})
    assert public == {"name": "w", "kind": "webhook", "url": "http://h/[redacted]",
                      "signing_secret": "[redacted]"}
    assert sealed == {"url": "http://h/x"}
    with pytest.raises(InvalidInput) as bad:
        normalize_channel({"name": "e", "kind": "email", "to": ["a@b.co", "bad"],
                           "smtp": {"host": "h", "security": "ssl"}})
    assert sorted(e.field for e in bad.value.errors) == ["smtp.security", "to.1"]


@pytest.mark.parametrize(("value", "seconds"), [
    (3600, 3600), ("90s", 90), ("30m", 1800), ("1h30m", 5400), ("1d", 86400),
    ("", None), ("1x", None), (True, None), (1.5, None), ("h", None)])
def test_parse_duration(value: object, seconds: int | None) -> None:
    assert parse_duration(value) == seconds
