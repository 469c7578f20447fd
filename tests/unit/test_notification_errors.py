"""A notification that cannot be built fails as ``internal`` without quoting its channel's
secrets: an error text may contain the webhook URL or a token, and it is logged and recorded
(docs/operations.md, "Poison items")."""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from core.clock import FrozenClock
from core.config import Settings
from core.http.clients import make_client
from core.notifications.delivery import Delivery, Target, without_secrets

URL = "https://hooks.example.test/services/T000/B000/s3cr3t-webhook-path"
TOKEN = "123456:telegram-bot-token"
TARGET = Target(uuid.uuid4(), uuid.uuid4(), "hook", "webhook", {},
                {"url": URL, "signing_secret": "whsec-0123456789abcdef"},
                {"token_secret": TOKEN, "missing": None})


def test_without_secrets_redacts_every_unsealed_value() -> None:
    text = f"bad {URL} and {TOKEN} and whsec-0123456789abcdef; also {URL}/x"
    assert without_secrets(text, TARGET) == (
        "bad [redacted] and [redacted] and [redacted]; also [redacted]/x")
    assert without_secrets("nothing secret", TARGET) == "nothing secret"


class _Poison(Delivery):
    async def _send(self, target: Target, message: dict[str, Any],
                    notification_id: uuid.UUID) -> Any:
        raise ValueError(f"cannot render for {target.secrets['url']} ({TOKEN})")


async def test_a_poison_notification_records_and_logs_no_secret(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = make_client(1)
    try:
        delivery = _Poison(client, Settings(database_url=None),
                           FrozenClock(datetime(2026, 11, 30, tzinfo=UTC)))
        with caplog.at_level(logging.ERROR):
            result = await delivery.send(TARGET, {"event": "down"}, uuid.uuid4())
    finally:
        await client.aclose()
    assert (result.ok, result.error_class, result.permanent) == (False, "internal", True)
    assert result.error and "[redacted]" in result.error
    assert URL not in result.error and TOKEN not in result.error
    assert "cannot be built or sent" in caplog.text
    assert URL not in caplog.text and TOKEN not in caplog.text
