"""Notification channels: where a team's alerts go, event-sourced on the ``channel`` stream.

A channel is ``{"name", "kind", …the kind's fields}``, its name unique within the team. The kinds
are ``webhook``, ``slack``, ``discord``, ``telegram`` and ``email``; their fields, limits and
normalisation are in :mod:`core.channels.definition` (docs/notifications.md, *Setup*).

Secrets are never stored in plaintext: URLs (a Slack or Discord webhook URL *is* a credential)
and webhook signing secrets are sealed with AES-256-GCM under the server's key ring
(:mod:`core.channels.sealing`) into the ``sealed`` column, bound to the team and channel; the
``config`` column keeps only what may be shown, URLs redacted to scheme and host. Telegram bot
tokens and SMTP passwords are not part of the channel: they are named team secrets
(``core/secrets.py``).

Events of the ``channel`` stream (redacted, never a secret): ``channel.created`` ``{"name",
"kind", "config"}``, ``channel.updated`` ``{"changes"}``, ``channel.tested`` (the outcome of
``POST /v1/channels/{id}/test``, :mod:`core.notifications.probe`) and ``channel.deleted`` ``{}``.

Modules: ``definition`` (validation), ``state`` (the row, a frozen ``ChannelState``, and its
fold), ``decide`` (what a command decides, pure), ``commands`` (create, update, delete,
re-seal: events and projection in one transaction), ``queries`` (reads, and the check of
channel ids listed by jobs and monitors), ``sealing`` (the
:class:`~core.channels.sealing.Sealer` and the channel's associated data). Delivering to a
channel is :mod:`core.notifications`'.
"""

# Goes away once the OpenAPI work on api/controllers/channels.py lands: that file calls
# ``channels.<function>`` and is edited in parallel (import lines only here); it should then
# import from core.channels.commands and core.channels.queries.
from core.channels.commands import create_channel, delete_channel, update_channel
from core.channels.queries import channel_view, get_channel, list_channels

__all__ = ["channel_view", "create_channel", "delete_channel", "get_channel", "list_channels",
           "update_channel"]
