"""Render a message (:mod:`core.notifications.messages`) in each provider's documented format.

- Slack incoming webhook: ``{"text": fallback, "blocks": [...]}`` (Block Kit: a header block of
  plain text up to 150 characters, section text up to 3000, at most 10 section fields of 2000,
  mrkdwn with ``&``, ``<``, ``>`` escaped as the Slack docs require).
- Discord webhook: ``{"content", "embeds": [...], "allowed_mentions": {"parse": []}}``; content
  up to 2000 characters, embed title 256, description 4096, field name 256 and value 1024, at
  most 25 fields, 6000 characters over one embed. ``allowed_mentions`` keeps a job name such as
  ``@everyone`` from pinging anybody.
- Telegram Bot API ``sendMessage``: ``{"chat_id", "text", "parse_mode": "HTML",
  "link_preview_options": {"is_disabled": true}}``; text up to 4096 characters, HTML-escaped.
- Webhook: the message itself as JSON with the notification id and absolute links.
- E-mail: a plain-text message with the title as subject.
"""

from __future__ import annotations

import html
import json
import re
import uuid
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from core.version import USER_AGENT

SLACK_HEADER = 150
SLACK_SECTION = 3000
SLACK_FIELD = 2000
SLACK_FIELDS = 10
DISCORD_CONTENT = 2000
DISCORD_TITLE = 256
DISCORD_DESCRIPTION = 4096
DISCORD_FIELD_NAME = 256
DISCORD_FIELD_VALUE = 1024
DISCORD_FIELDS = 25
DISCORD_EMBED_TOTAL = 6000
TELEGRAM_TEXT = 4096
COLORS = {"down": 0xE5484D, "up": 0x30A46C, "info": 0x3E63DD}
LINK_LABELS = {"job": "Job", "run": "Run", "runs": "Run history", "monitor": "Monitor",
               "pings": "Pings", "channel": "Channel", "explain": "Why this alert"}
_DISCORD_MARKDOWN = re.compile(r"([\\*_~`|>#\[\]()-])")


def trim(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``…`` when cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…" if limit > 0 else ""


def absolute_links(message: dict[str, Any], base_url: str) -> dict[str, str]:
    """The message's API paths prefixed with the server's public base URL, the subject's own
    resource first (jsonb does not keep key order, so the order is fixed here)."""
    base = base_url.rstrip("/")
    order = list(LINK_LABELS)
    links = sorted((message.get("links") or {}).items(),
                   key=lambda item: order.index(item[0]) if item[0] in order else len(order))
    return {name: base + path for name, path in links}


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plain_text(message: dict[str, Any], base_url: str) -> str:
    """The message as plain text: title, text, facts, links (e-mail body, fallbacks)."""
    lines = [message["title"], "", message["text"]]
    if message.get("facts"):
        lines.append("")
        lines += [f"{f['name']}: {f['value']}" for f in message["facts"]]
    links = absolute_links(message, base_url)
    if links:
        lines.append("")
        lines += [f"{LINK_LABELS.get(k, k)}: {url}" for k, url in links.items()]
    return "\n".join(lines)


def slack_payload(message: dict[str, Any], base_url: str) -> dict[str, Any]:
    """An incoming-webhook payload: ``text`` (notification fallback) and Block Kit ``blocks``."""
    blocks: list[dict[str, Any]] = [
        {"type": "header",
         "text": {"type": "plain_text", "text": trim(message["title"], SLACK_HEADER)}},
        {"type": "section",
         "text": {"type": "mrkdwn", "text": trim(_slack_escape(message["text"]),
                                                 SLACK_SECTION)}},
    ]
    facts = message.get("facts") or []
    if facts:
        blocks.append({"type": "section", "fields": [
            {"type": "mrkdwn",
             "text": trim(f"*{_slack_escape(f['name'])}*\n{_slack_escape(f['value'])}",
                          SLACK_FIELD)}
            for f in facts[:SLACK_FIELDS]]})
    links = absolute_links(message, base_url)
    if links:
        blocks.append({"type": "context", "elements": [
            {"type": "mrkdwn", "text": f"<{url}|{LINK_LABELS.get(k, k)}>"}
            for k, url in list(links.items())[:10]]})
    fallback = f"{message['title']}: {message['text']}"
    return {"text": trim(_slack_escape(fallback), SLACK_SECTION), "blocks": blocks}


def _discord_escape(text: str) -> str:
    return _DISCORD_MARKDOWN.sub(r"\\\1", text)


def discord_payload(message: dict[str, Any], base_url: str) -> dict[str, Any]:
    """A webhook payload: short ``content`` plus one embed; no mention is ever resolved."""
    links = absolute_links(message, base_url)
    title = trim(message["title"], DISCORD_TITLE)
    footer = "cronledger"
    description = _discord_escape(message["text"])
    # 6000 characters over the whole embed: keep some description, then fields while they fit.
    budget = DISCORD_EMBED_TOTAL - len(title) - len(footer)
    reserve = min(len(description), 500)
    candidates: list[dict[str, Any]] = [{"name": trim(f["name"], DISCORD_FIELD_NAME),
                   "value": trim(f["value"], DISCORD_FIELD_VALUE) or "-", "inline": False}
                  for f in message.get("facts") or []]
    if links:
        candidates.insert(0, {"name": "Links", "inline": False, "value": trim(" · ".join(
            f"[{LINK_LABELS.get(k, k)}]({url})" for k, url in links.items()),
            DISCORD_FIELD_VALUE)})
    fields: list[dict[str, Any]] = []
    for item in candidates[:DISCORD_FIELDS]:
        size = len(item["name"]) + len(item["value"])
        if size > budget - reserve:
            break
        fields.append(item)
        budget -= size
    if fields and fields[0]["name"] == "Links":
        fields.append(fields.pop(0))  # links last when shown, but kept first when space is short
    embed: dict[str, Any] = {
        "title": title,
        "description": trim(description, min(DISCORD_DESCRIPTION, budget)),
        "color": COLORS.get(message.get("status", "info"), COLORS["info"]),
        "timestamp": message["occurred_at"],
        "fields": fields,
        "footer": {"text": footer},
    }
    first = next(iter(links.values()), None)
    if first:
        embed["url"] = first
    return {"content": trim(f"**{_discord_escape(message['title'])}**", DISCORD_CONTENT),
            "embeds": [embed], "allowed_mentions": {"parse": []}}


def telegram_payload(message: dict[str, Any], base_url: str, chat_id: str) -> dict[str, Any]:
    """A ``sendMessage`` body in HTML parse mode (numeric chat ids sent as numbers)."""
    esc = html.escape
    head = f"<b>{esc(trim(message['title'], 512), quote=False)}</b>\n"
    tail_lines = [f"<b>{esc(f['name'], quote=False)}:</b> {esc(f['value'], quote=False)}"
                  for f in message.get("facts") or []]
    links = absolute_links(message, base_url)
    if links:
        tail_lines.append(" · ".join(
            f'<a href="{esc(url)}">{LINK_LABELS.get(k, k)}</a>' for k, url in links.items()))
    tail = "\n\n" + "\n".join(tail_lines) if tail_lines else ""
    if len(head) + len(tail) > TELEGRAM_TEXT - 100:
        tail = ""  # absurdly long facts: keep the title and text, drop the rest
    room = TELEGRAM_TEXT - len(head) - len(tail)
    raw = message["text"]
    body = esc(raw, quote=False)
    while len(body) > room:  # cut the raw text, so no entity or tag is ever cut in half
        raw = raw[: max(0, len(raw) - (len(body) - room) - 1)]
        body = esc(raw, quote=False) + "…"
    text = head + body + tail
    chat: int | str = int(chat_id) if chat_id.lstrip("-").isdigit() else chat_id
    return {"chat_id": chat, "text": text, "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": True}}


def webhook_payload(message: dict[str, Any], base_url: str,
                    notification_id: uuid.UUID) -> dict[str, Any]:
    """The JSON a generic webhook receives: the message with its id and absolute links."""
    return {"id": str(notification_id), "type": message["event"], **{
        k: v for k, v in message.items() if k not in ("event", "links")},
        "links": absolute_links(message, base_url)}


def json_body(payload: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON, the exact bytes that are sent (and signed)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def email_message(message: dict[str, Any], base_url: str, notification_id: uuid.UUID,
                  sender: str, recipients: list[str]) -> EmailMessage:
    """A plain-text e-mail; ``Message-ID`` is derived from the notification id, so a
    redelivery after a crash carries the same id (receivers and filters can deduplicate)."""
    mail = EmailMessage()
    mail["Subject"] = f"[cronledger] {message['title']}"
    mail["From"] = sender
    mail["To"] = ", ".join(recipients)
    mail["Message-ID"] = f"<{notification_id}@cronledger>"
    mail["X-Cronledger-Notification-Id"] = str(notification_id)
    mail["User-Agent"] = USER_AGENT
    occurred = message.get("occurred_at")
    if occurred:
        mail["Date"] = format_datetime(datetime.fromisoformat(occurred))
    mail.set_content(plain_text(message, base_url))
    return mail
