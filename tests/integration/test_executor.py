"""The executor against real local HTTP servers: every failure class, limits, headers, cookies,
signatures, and the private-target guard."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import hmac
import ipaddress
import re
import socket
import ssl
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from core.clock import FrozenClock, SystemClock
from core.crypto import KeyRing, secret_aad, signing_aad
from core.http.clients import classify_error
from core.http.netguard import BlockedTarget, GuardedResolver, blocked_reason
from core.job_definition import Request, RetryPolicy
from core.runs.dispatch import Dispatch
from core.runs.executor import Executor
from tests.conftest import TEST_SECRET_KEY
from tests.helpers import eventually
from tests.sink import Reply, Sink, counting_server

ROOT = Path(__file__).resolve().parents[2]
T0 = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.UTC)
KEYRING = KeyRing.from_sources(TEST_SECRET_KEY, "")


def dispatch(url: str, *, method: str = "GET", headers: dict[str, str] | None = None,
             body: str | None = None, timeout: float = 5.0, **extra: Any) -> Dispatch:
    return Dispatch(
        run_id=uuid.uuid4(), job_id=uuid.uuid4(), team_id=uuid.uuid4(), scheduled_for=T0,
        trigger="manual", attempt=1, max_attempts=1, lease_token=uuid.uuid4(), version=1,
        request=Request(method=method, url=url, headers=headers or {}, body=body),
        timeout_seconds=timeout, retry=RetryPolicy.from_json({}), **extra)


@pytest.fixture
async def executor() -> AsyncIterator[Executor]:
    executor = Executor(SystemClock(), body_limit=1000, keyring=KEYRING, max_connections=20)
    yield executor
    await executor.aclose()


# -- outcomes -----------------------------------------------------------------------------------
async def test_success_records_request_and_response(executor: Executor, sink: Sink) -> None:
    sink.reply("/ok", Reply(status=201, body=b"created", headers={"X-Reply": "1"}))
    d = dispatch(sink.url("/ok"), method="POST", body='{"a": 1}',
                 headers={"Content-Type": "application/json"})
    result = await executor.send(d)
    assert result.ok and result.response_status == 201 and result.response_body == b"created"
    assert result.response_headers is not None and result.response_headers["X-Reply"] == "1"
    assert result.request["url"] == sink.url("/ok") and result.request["body"] == '{"a": 1}'
    assert result.request["headers"]["Idempotency-Key"] == str(d.run_id)
    assert result.duration_ms >= 0 and result.finished_at >= result.started_at
    [hit] = sink.hits
    assert hit.headers["User-Agent"].startswith("cronledger/")
    assert hit.headers["X-Cronledger-Attempt"] == "1"


async def test_server_error_is_http_status(executor: Executor, sink: Sink) -> None:
    sink.reply("/fail", Reply(status=500, body=b"boom"))
    result = await executor.send(dispatch(sink.url("/fail")))
    assert (result.error_class, result.error, result.response_body) == (
        "http_status", "HTTP 500", b"boom")


async def test_redirect_is_not_followed(executor: Executor, sink: Sink) -> None:
    sink.reply("/moved", Reply(status=302, headers={"Location": sink.url("/target")}))
    result = await executor.send(dispatch(sink.url("/moved")))
    assert result.error_class == "http_status" and result.response_status == 302
    assert "redirects are not followed" in (result.error or "")
    assert [h.path for h in sink.hits] == ["/moved"]
    accepted = await executor.send(dispatch(sink.url("/moved"), success_statuses=(200, 302)))
    assert accepted.ok and accepted.response_status == 302


async def test_success_statuses_replace_2xx(executor: Executor, sink: Sink) -> None:
    sink.reply("/gone", Reply(status=410))
    assert (await executor.send(dispatch(sink.url("/gone"), success_statuses=(410,)))).ok
    refused = await executor.send(dispatch(sink.url("/"), success_statuses=(204,)))
    assert refused.error_class == "http_status" and refused.response_status == 200


async def test_read_timeout(executor: Executor, sink: Sink) -> None:
    sink.reply("/slow", Reply(delay=3.0))
    result = await executor.send(dispatch(sink.url("/slow"), timeout=0.5))
    assert result.error_class == "timeout"
    assert result.error == "read timeout after 0.5 s (waiting for the response)"
    assert result.response_status is None


async def test_read_timeout_while_reading_the_body(executor: Executor, sink: Sink) -> None:
    sink.reply("/drip", Reply(body=b"0123456789", trickle=3.0))
    result = await executor.send(dispatch(sink.url("/drip"), timeout=0.5))
    assert result.error_class == "timeout" and result.response_status == 200
    assert result.error == "read timeout after 0.5 s (while reading the response body)"


@contextlib.contextmanager
def unanswered_port() -> Iterator[int]:
    """A port whose accept queue is full: new connections hang in the handshake."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(server.getsockname())
        fillers.append(filler)
    try:
        yield server.getsockname()[1]
    finally:
        for s in (*fillers, server):
            s.close()


async def test_connect_timeout_is_told_apart(executor: Executor) -> None:
    with unanswered_port() as port:
        result = await executor.send(dispatch(f"http://127.0.0.1:{port}/", timeout=0.5))
    assert result.error_class == "timeout"
    assert result.error is not None and result.error.startswith("connect timeout after 0.5 s")


def test_overall_deadline_is_classified_by_phase() -> None:
    assert classify_error(TimeoutError(), 2, "connect")[1] == "connect timeout after 2 s"
    assert classify_error(TimeoutError(), 2, "dns") == (  # one fault, one class (test_dns)
        "dns", "DNS lookup unanswered after 2 s")
    assert classify_error(TimeoutError(), 2, "request")[1].startswith("read timeout after 2 s")
    assert "response body" in classify_error(TimeoutError(), 2, "request", True)[1]


async def test_closed_connection(executor: Executor, sink: Sink) -> None:
    sink.reply("/drop", Reply(close=True))
    result = await executor.send(dispatch(sink.url("/drop")))
    assert result.error_class == "connect"
    assert result.error == "the server closed the connection without a response"


async def test_refused_connection(executor: Executor) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused
        result = await executor.send(dispatch(f"http://127.0.0.1:{port}/"))
    assert result.error_class == "connect" and "cannot connect" in (result.error or "")


async def test_dns_failure(executor: Executor) -> None:
    result = await executor.send(dispatch("http://cronledger-test.invalid/hook"))
    assert result.error_class == "dns"
    assert "cronledger-test.invalid" in (result.error or "")


def _self_signed(tmp: Path) -> ssl.SSLContext:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    (tmp / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp / "key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
    return context


async def test_tls_error(executor: Executor, tmp_path: Path) -> None:
    async with Sink(ssl_context=_self_signed(tmp_path)) as tls:
        result = await executor.send(dispatch(tls.url("/secure")))
    assert result.error_class == "tls"
    assert "certificate" in (result.error or "").lower()
    assert tls.hits == []


async def test_body_over_the_limit_is_truncated(executor: Executor, sink: Sink) -> None:
    sink.reply("/big", Reply(body=b"x" * 50_000))
    sink.reply("/exact", Reply(body=b"y" * 1000))
    big = await executor.send(dispatch(sink.url("/big")))
    assert big.ok and big.truncated and big.response_body == b"x" * 1000
    exact = await executor.send(dispatch(sink.url("/exact")))
    assert exact.ok and not exact.truncated and exact.response_body == b"y" * 1000


async def test_cookies_are_never_carried_between_requests(
    executor: Executor, sink: Sink
) -> None:
    sink.reply("/login", Reply(headers={"Set-Cookie": "session=team-a-secret; Path=/"}))
    await executor.send(dispatch(sink.url("/login")))
    await executor.send(dispatch(sink.url("/other")))  # another job, maybe another team
    assert "Cookie" not in sink.hits_for("/other")[0].headers


async def test_literal_credentials_are_redacted_in_the_record(
    executor: Executor, sink: Sink
) -> None:
    result = await executor.send(dispatch(sink.url("/"), headers={
        "Authorization": "Bearer literal-token", "X-Api-Key": "k", "X-Other": "visible"}))
    headers = result.request["headers"]
    assert headers["Authorization"] == "[redacted]" and headers["X-Api-Key"] == "[redacted]"
    assert headers["X-Other"] == "visible"
    assert sink.hits[0].headers["Authorization"] == "Bearer literal-token"  # sent as typed


# -- secrets and signatures ---------------------------------------------------------------------
def _with_secrets(d: Dispatch, values: dict[str, str]) -> Dispatch:
    from dataclasses import replace

    sealed = {n: KEYRING.seal(v.encode(), secret_aad(d.team_id.bytes, n))
              for n, v in values.items()}
    return replace(d, secret_names=tuple(sorted(set(values) | set(d.secret_names))),
                   secrets=sealed)


async def test_secrets_are_resolved_on_the_wire_and_kept_as_placeholders(
    executor: Executor, sink: Sink
) -> None:
    sink.reply("/echo", Reply(echo=True))
    d = _with_secrets(dispatch(
        sink.url("/echo") + "?token=${secrets.TOKEN}", method="POST",
        headers={"Authorization": "Bearer ${secrets.TOKEN}"},
        body='{"password": "${secrets.PASSWORD}"}'),
        {"TOKEN": "tok-3f9a7c", "PASSWORD": "pw-81bd2e"})
    result = await executor.send(d)
    assert result.ok, result.error
    [hit] = sink.hits
    assert hit.headers["Authorization"] == "Bearer tok-3f9a7c"
    assert hit.body == b'{"password": "pw-81bd2e"}'
    assert result.request["url"].endswith("?token=${secrets.TOKEN}")
    assert result.request["headers"]["Authorization"] == "Bearer ${secrets.TOKEN}"
    assert result.request["body"] == '{"password": "${secrets.PASSWORD}"}'
    # The echo server sent the values back: they are replaced before recording.
    recorded = (result.response_body or b"").decode() + str(result.response_headers)
    assert "tok-3f9a7c" not in recorded and "pw-81bd2e" not in recorded
    assert "${secrets.TOKEN}" in recorded and "${secrets.PASSWORD}" in recorded


async def test_missing_secret_fails_without_sending(executor: Executor, sink: Sink) -> None:
    d = dispatch(sink.url("/") + "?k=${secrets.NOPE}", secret_names=("NOPE",))
    result = await executor.send(d)
    assert result.error_class == "secret" and result.final
    assert result.error == "secret NOPE is not defined for this team " \
                           "(create it with PUT /v1/secrets/NOPE)"
    assert sink.hits == []


async def test_secret_of_another_team_does_not_open(executor: Executor, sink: Sink) -> None:
    d = _with_secrets(dispatch(sink.url("/?k=${secrets.K}")), {"K": "value-1234"})
    from dataclasses import replace

    stolen = replace(d, team_id=uuid.uuid4())  # the ciphertext is bound to its team and name
    result = await executor.send(stolen)
    assert result.error_class == "secret" and "does not authenticate" in (result.error or "")
    assert sink.hits == []


async def test_secret_with_line_break_is_refused_in_a_header(
    executor: Executor, sink: Sink
) -> None:
    d = _with_secrets(dispatch(sink.url("/"), headers={"X-Token": "${secrets.T}"}),
                      {"T": "a\r\nX-Injected: 1"})
    result = await executor.send(d)
    assert result.error_class == "secret" and "line break" in (result.error or "")
    assert "Injected" not in (result.error or "") and sink.hits == []


async def test_secret_is_scrubbed_from_error_messages(executor: Executor) -> None:
    d = _with_secrets(dispatch("http://${secrets.HOST}.invalid/x"), {"HOST": "hidden-host-77"})
    result = await executor.send(d)
    assert result.error_class == "dns"
    assert "hidden-host-77" not in (result.error or "")
    assert "${secrets.HOST}.invalid" in (result.error or "")


def _receiver_from_docs() -> Any:
    """The receiver shown in docs/api.md, executed as written."""
    text = (ROOT / "docs" / "api.md").read_text()
    code = re.search(r"```python\n(# verify-signature.*?)```", text, re.S)
    assert code, "docs/api.md lost its signature receiver example"
    namespace: dict[str, Any] = {}
    exec(code.group(1), namespace)  # noqa: S102 - our own documentation
    return namespace["verify_signature"]


async def test_signature_verifies_with_the_documented_receiver(sink: Sink) -> None:
    clock = FrozenClock(dt.datetime.now(dt.UTC).replace(microsecond=0))
    executor = Executor(clock, 1000, KEYRING, max_connections=5)
    try:
        d = dispatch(sink.url("/signed"), method="POST", body='{"n": 1}', signing=True)
        from dataclasses import replace

        d = replace(d, signing_key=KEYRING.seal(
            b"whsec-test-0123456789", signing_aad(d.team_id.bytes, d.job_id.bytes)))
        result = await executor.send(d)
    finally:
        await executor.aclose()
    assert result.ok
    [hit] = sink.hits
    header = hit.headers["X-Cronledger-Signature"]
    t = int(clock.now().timestamp())
    mac = hmac.new(b"whsec-test-0123456789", f"{t}.".encode() + b'{"n": 1}',
                   hashlib.sha256).hexdigest()
    assert header == f"t={t},v1={mac}"
    assert result.request["headers"]["X-Cronledger-Signature"] == header
    verify = _receiver_from_docs()
    assert verify("whsec-test-0123456789", header, hit.body)
    assert not verify("whsec-test-0123456789", header, hit.body + b" ")
    assert not verify("another-secret-000000", header, hit.body)


async def test_signing_without_its_secret_fails(executor: Executor, sink: Sink) -> None:
    result = await executor.send(dispatch(sink.url("/"), signing=True))
    assert result.error_class == "secret" and sink.hits == []


# -- private targets ----------------------------------------------------------------------------
@pytest.mark.parametrize(("ip", "reason"), [
    ("127.0.0.1", "loopback"), ("::1", "loopback"), ("10.1.2.3", "private"),
    ("192.168.0.10", "private"), ("172.16.5.4", "private"), ("169.254.169.254", "link-local"),
    ("fe80::1", "link-local"), ("fd00:ec2::254", "cloud metadata"),
    ("100.100.100.200", "cloud metadata"), ("100.64.0.1", "non-public"),
    ("0.0.0.0", "unspecified"), ("::ffff:127.0.0.1", "loopback"),
    ("64:ff9b::a00:1", "private"), ("224.0.0.1", "multicast"),
    ("93.184.215.14", None), ("2606:4700::1111", None),
])
def test_blocked_addresses(ip: str, reason: str | None) -> None:
    assert blocked_reason(ip) == reason


async def test_block_private_targets_refuses_literals_and_resolved_names(sink: Sink) -> None:
    guarded = Executor(SystemClock(), 1000, KEYRING, max_connections=5,
                       block_private_targets=True)
    try:
        literal = await guarded.send(dispatch(sink.url("/")))
        named = await guarded.send(dispatch(f"http://localhost:{sink.port}/"))
        mapped = await guarded.send(dispatch(f"http://[::ffff:127.0.0.1]:{sink.port}/"))
    finally:
        await guarded.aclose()
    assert literal.error_class == "blocked" and literal.final
    assert "127.0.0.1 is a loopback address" in (literal.error or "")
    assert named.error_class == "blocked"
    assert "localhost resolves to" in (named.error or "")
    assert mapped.error_class == "blocked"
    assert sink.hits == []


async def test_guard_checks_the_addresses_actually_resolved() -> None:
    """DNS rebinding: whatever a name resolved to before, the answer used to connect is the
    one checked."""
    from aiohttp.abc import AbstractResolver

    class Rebinding(AbstractResolver):
        answers = ["93.184.215.14", "127.0.0.1"]  # public at first, then loopback

        async def resolve(self, host: str, port: int = 0, family: Any = socket.AF_INET) -> Any:
            ip = self.answers.pop(0)
            return [{"hostname": host, "host": ip, "port": port, "family": socket.AF_INET,
                     "proto": 0, "flags": 0}]

        async def close(self) -> None:
            return None

    guard = GuardedResolver(Rebinding())
    assert (await guard.resolve("rebind.example", 80))[0]["host"] == "93.184.215.14"
    with pytest.raises(BlockedTarget, match="rebind.example resolves to 127.0.0.1"):
        await guard.resolve("rebind.example", 80)


async def test_private_targets_are_allowed_by_default(executor: Executor, sink: Sink) -> None:
    assert (await executor.send(dispatch(f"http://localhost:{sink.port}/"))).ok


async def test_many_attempts_in_parallel_are_independent(executor: Executor, sink: Sink) -> None:
    sink.reply("/slow", Reply(delay=3.0))
    results = await asyncio.gather(
        executor.send(dispatch(sink.url("/slow"), timeout=0.5)),
        executor.send(dispatch(sink.url("/fast"))))
    assert results[0].error_class == "timeout" and results[1].ok


# -- wire details of the aiohttp session --------------------------------------------------------
async def test_compressed_response_is_recorded_decoded(executor: Executor, sink: Sink) -> None:
    import gzip

    sink.reply("/gz", Reply(body=gzip.compress(b"plain text " * 50),
                            headers={"Content-Encoding": "gzip"}))
    result = await executor.send(dispatch(sink.url("/gz")))
    assert result.ok and result.response_body == b"plain text " * 50


async def test_undecodable_body_says_so(executor: Executor, sink: Sink) -> None:
    sink.reply("/fake-gz", Reply(body=b"this is not gzip", headers={"Content-Encoding": "gzip"}))
    result = await executor.send(dispatch(sink.url("/fake-gz")))
    assert result.error_class == "connect" and result.response_status == 200
    assert "could not be decoded" in (result.error or ""), result.error


async def test_no_content_type_is_invented(executor: Executor, sink: Sink) -> None:
    await executor.send(dispatch(sink.url("/raw"), method="POST", body="x=1"))
    await executor.send(dispatch(sink.url("/typed"), method="POST", body="x=1",
                                 headers={"content-type": "text/plain"}))
    [raw], [typed] = sink.hits_for("/raw"), sink.hits_for("/typed")
    assert "Content-Type" not in raw.headers and raw.body == b"x=1"
    assert typed.headers.getall("Content-Type") == ["text/plain"]


# -- preconnect ---------------------------------------------------------------------------------
async def test_preconnect_opens_connections_and_sends_nothing(executor: Executor) -> None:
    async with counting_server() as (base, connections):
        prepared = [executor.prepare(dispatch(f"{base}/job/{i}")) for i in range(5)]
        assert await executor.preconnect(prepared) == 5
        await eventually(lambda: len(connections) == 5, 5, 0.01, "5 connections at the server")
        assert sum(c.requests for c in connections) == 0
        results = await asyncio.gather(*(executor.transmit(p) for p in prepared))
        assert all(r.ok for r in results)
        # The requests used the connections opened ahead: none was opened at send time.
        assert len(connections) == 5 and sorted(c.requests for c in connections) == [1] * 5
        # Idle pooled connections count: a second preconnect opens nothing new.
        again = [executor.prepare(dispatch(f"{base}/job/{i}")) for i in range(3)]
        assert await executor.preconnect(again) == 3
        assert len(connections) == 5


async def test_preconnect_skips_refused_and_blocked_targets(sink: Sink) -> None:
    guarded = Executor(SystemClock(), 1000, KEYRING, max_connections=5,
                       block_private_targets=True)
    try:
        async with counting_server() as (base, connections):
            port = base.rsplit(":", 1)[1]
            prepared = [guarded.prepare(dispatch(f"{base}/literal")),
                        guarded.prepare(dispatch(f"http://localhost:{port}/name")),
                        guarded.prepare(dispatch(f"{base}/secret",
                                                 headers={"X": "${secrets.MISSING}"}))]
            assert await guarded.preconnect(prepared) == 0
            await asyncio.sleep(0.05)
            assert connections == []
    finally:
        await guarded.aclose()


async def test_cancelled_preconnect_leaves_the_pool_free(sink: Sink) -> None:
    """Connections still being opened when the slot comes are given up, not kept: with a pool
    of two, two hanging preconnects cancelled at the slot leave room for the real requests."""
    small = Executor(SystemClock(), 1000, KEYRING, max_connections=2)
    try:
        with unanswered_port() as port:
            hanging = [small.prepare(dispatch(f"http://127.0.0.1:{port}/")) for _ in range(2)]
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.2):
                    await small.preconnect(hanging)
            results = await asyncio.gather(*(small.send(dispatch(sink.url("/after"), timeout=2))
                                             for _ in range(2)))
        assert all(r.ok for r in results) and len(sink.hits_for("/after")) == 2
    finally:
        await small.aclose()


@pytest.mark.parametrize("flood", [b"X-Flood-%d: aaaaaaaa\r\n", b"X-Long: %d" + b"a" * 70000])
async def test_a_header_flood_is_an_http_protocol_error(executor: Executor,
                                                         flood: bytes) -> None:
    """Too many headers, or one too long: the response is not HTTP the client can read."""
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        with contextlib.suppress(OSError):
            writer.write(b"HTTP/1.1 200 OK\r\n")
            for i in range(20000):
                writer.write(flood % i)
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        result = await executor.send(dispatch(f"http://127.0.0.1:{port}/", timeout=5))
    finally:
        server.close()
    assert result.error_class == "http", result.error
    assert (result.error or "").startswith("HTTP protocol error: the response could not be read")
