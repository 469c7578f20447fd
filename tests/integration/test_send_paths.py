"""The executor's and the DNS faults' tests, unchanged, on the send path that is not the
default (``CRONLEDGER_SEND_PATH``, core/http/exchange.py): both paths keep every behaviour the
executor has, so each test runs on both. The default path runs them in their own modules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.http import exchange
from tests.integration.test_dns import *  # noqa: F403 - the same tests, collected again here
from tests.integration.test_executor import *  # noqa: F403

OTHER_PATH = {"connection": "session", "session": "connection"}[
    exchange.DEFAULT_SEND_PATH]


@pytest.fixture(autouse=True)
def _other_send_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(exchange, "DEFAULT_SEND_PATH", OTHER_PATH)
    yield
