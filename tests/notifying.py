"""Helpers for notification tests: a real local SMTP server (aiosmtpd), a team-secret lookup
backed by a dict, and a notifier on a frozen clock.

The dict-backed :class:`DictSecrets` is the one stand-in here: the team-secrets store is built
elsewhere, and the notifier only depends on the :class:`core.notifications.lookup.SecretLookup`
protocol.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import random
import ssl
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from email import message_from_bytes, policy
from email.message import Message
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from core.channels.sealing import Sealer
from core.clock import Clock
from core.config import Settings
from core.db import Connection, ConnectionPool
from core.http.clients import make_client
from core.notifications.delivery import Delivery
from core.notifications.notifier import Notifier
from tests.processes import free_port
from tests.sink import Sink


class DictSecrets:
    """``{(team_id, name): value}`` as a :class:`SecretLookup`; records every lookup."""

    def __init__(self) -> None:
        self.values: dict[tuple[uuid.UUID, str], str] = {}
        self.asked: list[tuple[uuid.UUID, str]] = []

    def put(self, team_id: uuid.UUID, name: str, value: str) -> None:
        self.values[(team_id, name)] = value

    async def __call__(self, conn: Connection, team_id: uuid.UUID,
                       name: str) -> str | None:
        self.asked.append((team_id, name))
        return self.values.get((team_id, name))


def make_notifier(pool: ConnectionPool, settings: Settings, clock: Clock, sealer: Sealer,
                  secrets: DictSecrets, worker_id: str = "notifier-1") -> Notifier:
    """A notifier without LISTEN; close ``notifier.delivery.client`` when done."""
    settings = replace(settings, worker_id=worker_id)
    delivery = Delivery(make_client(20), settings, clock)
    return Notifier(pool, None, settings, delivery, sealer, secrets, clock,
                    rng=random.Random(7))


@dataclass
class Mail:
    mail_from: str
    rcpt_tos: list[str]
    message: Message
    login: tuple[str, str] | None


@dataclass
class _Handler:
    mails: list[Mail] = field(default_factory=list)
    refuse: int | None = None  # answer DATA with this code (e.g. 451, 554)
    logins: list[tuple[str, str]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.refuse:
            return f"{self.refuse} refused by the test server"
        self.mails.append(Mail(envelope.mail_from, list(envelope.rcpt_tos),
                               message_from_bytes(envelope.content, policy=policy.default),
                               self.logins[-1] if self.logins else None))
        return "250 OK"



def self_signed(tmp: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1/localhost and its key (PEM files in ``tmp``)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp / "smtp.crt", tmp / "smtp.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class SmtpSink:
    """A real SMTP server on 127.0.0.1 (aiosmtpd, in its own thread) recording every mail.

    Args:
        users: accepted ``{username: password}`` for AUTH (none: AUTH not offered).
        tls: ``(cert, key)`` to offer STARTTLS (and require it).
    """

    def __init__(self, users: dict[str, str] | None = None,
                 tls: tuple[Path, Path] | None = None) -> None:
        self.handler = _Handler()
        self.port = free_port()
        self.users = users or {}
        kwargs: dict[str, Any] = {"auth_require_tls": tls is not None}
        if users:
            kwargs["authenticator"] = self._authenticate
        if tls:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            kwargs.update(tls_context=context, require_starttls=True)
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.port,
                                     **kwargs)

    def _authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str,
                      auth_data: Any) -> AuthResult:
        user = auth_data.login.decode()
        password = auth_data.password.decode()
        ok = self.users.get(user) == password
        if ok:
            self.handler.logins.append((user, password))
        return AuthResult(success=ok, handled=False)

    @property
    def mails(self) -> list[Mail]:
        return self.handler.mails

    def __enter__(self) -> SmtpSink:
        self.controller.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.controller.stop()


@contextmanager
def threaded_sink() -> Iterator[Sink]:
    """A :class:`Sink` on its own event loop in a thread. Litestar's test client runs the app
    through a blocking portal, which blocks the test's loop during a request: a sink on that
    loop could not answer the app's own outbound calls (the channel test endpoint)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="sink", daemon=True)
    thread.start()
    sink = Sink()
    asyncio.run_coroutine_threadsafe(sink.__aenter__(), loop).result(10)
    try:
        yield sink
    finally:
        asyncio.run_coroutine_threadsafe(sink.__aexit__(None, None, None), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
