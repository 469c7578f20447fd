"""Sending one notification to one channel: HTTP providers on the shared client, SMTP for mail.

:meth:`Delivery.send` never raises for delivery problems: it returns a :class:`DeliveryResult`
saying whether it worked, what the provider answered, and whether a retry could help
(``permanent``: a 4xx other than 408/425/429, a Telegram ``ok: false`` on a 4xx, an SMTP 5xx,
a configuration error).
"""

from __future__ import annotations

import asyncio
import json
import logging
import smtplib
import ssl
import time
import uuid
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

import aiohttp
import httpx

from core.clock import Clock
from core.config import Settings
from core.http.clients import SIGNATURE_HEADER, classify_error, sign, tracking_progress
from core.notifications import formatting
from core.reasons import reason_of
from core.version import USER_AGENT

log = logging.getLogger("cronledger.delivery")

ANSWER_LIMIT = 2048  # characters of a provider's answer kept in the outbox row
TRANSIENT_STATUSES = (408, 425, 429)


@dataclass
class Target:
    """A channel ready to send to.

    Attributes:
        kind: ``webhook`` | ``slack`` | ``discord`` | ``telegram`` | ``email``.
        config: the channel's public fields (``chat_id``, ``to``, ``smtp``, …).
        secrets: its unsealed fields (``url``, ``signing_secret``).
        team_secrets: values of the team secrets it names (``token_secret``,
            ``smtp.password_secret``), ``None`` for a name the team does not have.
    """

    channel_id: uuid.UUID
    team_id: uuid.UUID
    name: str
    kind: str
    config: dict[str, Any]
    secrets: dict[str, str] = field(default_factory=dict)
    team_secrets: dict[str, str | None] = field(default_factory=dict)


_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    OSError, TimeoutError, asyncio.TimeoutError, httpx.HTTPError, aiohttp.ClientError,
    smtplib.SMTPException, ssl.SSLError)


def without_secrets(text: str, target: Target) -> str:
    """``text`` with every unsealed value of ``target`` (its URL, signing secret, team secrets)
    replaced by ``[redacted]``: an error message may quote the URL it failed on, and it is
    logged and recorded (``last_error``, the ``notification.failed`` event)."""
    values = [v for v in (*target.secrets.values(), *target.team_secrets.values())
              if isinstance(v, str) and v]
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, "[redacted]")
    return text


def _is_transport(exc: BaseException) -> bool:
    """Whether ``exc`` (or one of its causes) is a network, TLS, SMTP or timeout failure; any
    other exception while sending is a bug or a poison row (``internal``, never retried)."""
    seen: set[int] = set()
    err: BaseException | None = exc
    while err is not None and id(err) not in seen:
        if isinstance(err, _TRANSPORT_ERRORS):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False


@dataclass
class DeliveryResult:
    """The outcome of one delivery attempt.

    Attributes:
        ok: the provider accepted the notification.
        status: HTTP status, or the SMTP reply code of a refusal.
        answer: the provider's answer (body text, truncated).
        error_class: ``timeout`` | ``connect`` | ``dns`` | ``tls`` | ``http_status`` |
            ``provider`` | ``smtp`` | ``config`` | ``secret`` | ``internal`` (the row could not
            be built or sent for a reason other than the network: a poison message or
            channel configuration; always permanent).
        permanent: retrying cannot help.
        retry_after: a ``Retry-After`` value (or Telegram's ``retry_after`` seconds).
    """

    ok: bool
    status: int | None = None
    answer: str | None = None
    error_class: str | None = None
    error: str | None = None
    permanent: bool = False
    retry_after: str | None = None
    duration_ms: int = 0


def _status_result(status: int, answer: str) -> DeliveryResult:
    if 200 <= status < 300:
        return DeliveryResult(True, status, answer)
    permanent = 400 <= status < 500 and status not in TRANSIENT_STATUSES
    return DeliveryResult(False, status, answer, "http_status", f"HTTP {status}", permanent)


class Delivery:
    """Renders and sends notifications.

    Args:
        client: the shared ``httpx.AsyncClient``.
        settings: base URL for links, Telegram API URL, SMTP defaults, timeout.
        clock: signature timestamps.
    """

    def __init__(self, client: httpx.AsyncClient, settings: Settings, clock: Clock) -> None:
        self.client, self.settings, self.clock = client, settings, clock

    async def send(self, target: Target, message: dict[str, Any],
                   notification_id: uuid.UUID) -> DeliveryResult:
        """Deliver ``message`` to ``target``; never raises for delivery failures."""
        t0 = time.perf_counter()
        # Tracked like a job attempt, so classify_error sees the phase the request reached
        # (a resolver that never answers is "dns" here too).
        with tracking_progress():
            try:
                result = await self._send(target, message, notification_id)
            except Exception as exc:  # noqa: BLE001 - every failure becomes a recorded outcome
                if _is_transport(exc):
                    error_class, error = classify_error(exc,
                                                        self.settings.notify_timeout_seconds)
                    result = DeliveryResult(False, None, None, error_class, error)
                else:  # a poison row (bad message or channel config): retrying cannot help
                    reason = without_secrets(reason_of(exc), target)
                    log.error("notification %s cannot be built or sent: %s", notification_id,
                              reason)
                    result = DeliveryResult(
                        False, error_class="internal", permanent=True,
                        error=f"the notification cannot be built or sent: {reason}")
        result.duration_ms = round((time.perf_counter() - t0) * 1000)
        return result

    async def _send(self, target: Target, message: dict[str, Any],
                    notification_id: uuid.UUID) -> DeliveryResult:
        base = self.settings.base_url
        headers = {"User-Agent": USER_AGENT, "Content-Type": "application/json"}
        if target.kind == "email":
            return await self._send_mail(target, message, notification_id)
        if target.kind == "telegram":
            token = target.team_secrets.get(target.config["token_secret"])
            if not token:
                return DeliveryResult(False, error_class="config", error=(
                    f"the team has no secret {target.config['token_secret']!r} "
                    "(the bot token)"))
            url = f"{self.settings.telegram_api_url.rstrip('/')}/bot{token}/sendMessage"
            payload = formatting.telegram_payload(message, base, target.config["chat_id"])
            return await self._telegram(url, formatting.json_body(payload), headers, token)
        url = target.secrets["url"]
        if target.kind == "slack":
            payload = formatting.slack_payload(message, base)
        elif target.kind == "discord":
            payload = formatting.discord_payload(message, base)
        else:
            payload = formatting.webhook_payload(message, base, notification_id)
        body = formatting.json_body(payload)
        if target.kind == "webhook":
            headers["Idempotency-Key"] = str(notification_id)
            headers["X-Cronledger-Notification-Id"] = str(notification_id)
            if target.secrets.get("signing_secret"):
                stamp = int(self.clock.now().timestamp())
                headers[SIGNATURE_HEADER] = sign(target.secrets["signing_secret"], stamp, body)
        status, answer, retry_after = await self._post(url, body, headers)
        result = _status_result(status, answer)
        result.retry_after = retry_after
        return result

    async def _post(self, url: str, body: bytes,
                    headers: dict[str, str]) -> tuple[int, str, str | None]:
        timeout = self.settings.notify_timeout_seconds
        async with asyncio.timeout(timeout):
            response = await self.client.post(url, content=body, headers=headers,
                                              timeout=httpx.Timeout(timeout))
        answer = response.content[:ANSWER_LIMIT].decode("utf-8", "replace")
        return response.status_code, answer, response.headers.get("retry-after")

    async def _telegram(self, url: str, body: bytes, headers: dict[str, str],
                        token: str) -> DeliveryResult:
        try:
            status, answer, retry_after = await self._post(url, body, headers)
        except Exception as exc:  # noqa: BLE001 - the token is in the URL: keep it out
            error_class, error = classify_error(exc, self.settings.notify_timeout_seconds)
            return DeliveryResult(False, None, None, error_class, error.replace(token, "***"))
        result = _status_result(status, answer)
        result.retry_after = retry_after
        try:
            reply = json.loads(answer)
        except ValueError:
            reply = None
        if isinstance(reply, dict) and reply.get("ok") is not True:
            result.ok = False
            result.error_class = result.error_class or "provider"
            result.error = str(reply.get("description") or "Telegram answered ok: false")
            after = (reply.get("parameters") or {}).get("retry_after")
            if after is not None:
                result.retry_after = str(after)
        elif result.ok and not isinstance(reply, dict):
            result.ok, result.error_class = False, "provider"
            result.error = "Telegram's answer is not JSON"
        return result

    # -- e-mail -----------------------------------------------------------------------------
    def _smtp_config(self, target: Target) -> tuple[dict[str, Any] | None, str | None]:
        own = target.config.get("smtp")
        s = self.settings
        if own:
            password = None
            if own.get("password_secret"):
                password = target.team_secrets.get(own["password_secret"])
                if password is None:
                    return None, f"the team has no secret {own['password_secret']!r}"
            return {**own, "password": password,
                    "from": own.get("from") or s.smtp_from or "cronledger@localhost"}, None
        if not s.smtp_host:
            return None, ("no SMTP server: set CRONLEDGER_SMTP_HOST or give the channel an "
                          "smtp object")
        return {"host": s.smtp_host, "port": s.smtp_port, "security": s.smtp_security,
                "username": s.smtp_username or None, "password": s.smtp_password or None,
                "from": s.smtp_from or "cronledger@localhost"}, None

    async def _send_mail(self, target: Target, message: dict[str, Any],
                         notification_id: uuid.UUID) -> DeliveryResult:
        smtp, problem = self._smtp_config(target)
        if smtp is None:
            return DeliveryResult(False, error_class="config", error=problem)
        mail = formatting.email_message(message, self.settings.base_url, notification_id,
                                        smtp["from"], target.config["to"])
        try:
            return await asyncio.to_thread(self._smtp_send, smtp, mail)
        except smtplib.SMTPRecipientsRefused as exc:
            codes = [code for code, _ in exc.recipients.values()]
            return DeliveryResult(False, max(codes, default=None), str(exc.recipients)[:300],
                                  "smtp", "every recipient was refused",
                                  permanent=all(c >= 500 for c in codes))
        except smtplib.SMTPResponseException as exc:
            answer = exc.smtp_error.decode("utf-8", "replace") if isinstance(
                exc.smtp_error, bytes) else str(exc.smtp_error)
            return DeliveryResult(False, exc.smtp_code, answer[:ANSWER_LIMIT], "smtp",
                                  f"SMTP {exc.smtp_code}: {answer[:200]}",
                                  permanent=exc.smtp_code >= 500)
        except ssl.SSLError as exc:
            return DeliveryResult(False, error_class="tls", error=f"TLS error: {exc}")
        except TimeoutError:
            return DeliveryResult(False, error_class="timeout", error=(
                f"SMTP timeout after {self.settings.notify_timeout_seconds:g} s"))
        except (OSError, smtplib.SMTPException) as exc:
            return DeliveryResult(False, error_class="connect",
                                  error=f"SMTP: {type(exc).__name__}: {exc}")

    def _smtp_send(self, smtp: dict[str, Any], mail: EmailMessage) -> DeliveryResult:
        timeout = self.settings.notify_timeout_seconds
        context = ssl.create_default_context(cafile=self.settings.smtp_ca_file or None)
        if smtp["security"] == "tls":
            server: smtplib.SMTP = smtplib.SMTP_SSL(smtp["host"], smtp["port"],
                                                    timeout=timeout, context=context)
        else:
            server = smtplib.SMTP(smtp["host"], smtp["port"], timeout=timeout)
        with server:
            server.ehlo()
            if smtp["security"] == "starttls":
                server.starttls(context=context)
                server.ehlo()
            if smtp.get("username"):
                server.login(smtp["username"], smtp.get("password") or "")
            refused = server.send_message(mail)
        note = f"accepted; refused: {sorted(refused)}" if refused else "accepted"
        return DeliveryResult(True, 250, note)
