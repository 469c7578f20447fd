"""Report a block of Python code to a cronledger monitor, in the manner of Sentry's ``monitor``
(``sentry_sdk.crons.monitor``): a context manager and a decorator that ping ``/start`` before
the block, then success after it or ``/fail`` with the exception when it raises; and
:meth:`Monitor.upsert`, which writes the monitor's definition from code, so the definition
lives next to the job it watches (docs/exec.md, *The Python client*).

.. code-block:: python

    from api.client import monitor

    backup = monitor("nightly-backup", schedule="0 3 * * *", timezone="Europe/Paris",
                     grace_seconds=900, max_duration="2h", channels=["ops"])

    @backup
    def run_backup() -> None: ...

    with monitor("https://hc-ping.com/8116e449-d71c-4112-8f5d-a66f60902091"):
        ...

Settings come from the arguments, else the environment: ``CRONLEDGER_URL`` (the server,
default ``http://127.0.0.1:8000``), ``CRONLEDGER_PING_KEY`` (the team's ping key, for a slug)
and ``CRONLEDGER_API_KEY`` (a write key, for :meth:`Monitor.upsert`).

Failures of the monitoring never break the job: a ping that fails after its retries
(:class:`api.client.pings.Pinger`), or an upsert that fails when a block is entered (whatever
stops it: the server, a refused field, a definition that is no JSON), is a warning on the
``cronledger.client`` logger. What is wrong in the code is refused at once:
:func:`monitor` raises :class:`api.client.pings.BadTarget` for a monitor it cannot read, and an
explicit :meth:`Monitor.upsert` raises :class:`ClientError`.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hashlib
import inspect
import json
import logging
import math
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar, cast

import httpx

from api.client.pings import (
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_URL,
    PING_KEY_ENV,
    URL_ENV,
    BadTarget,
    Pinger,
    PingTarget,
    ping_target,
)

API_KEY_ENV = "CRONLEDGER_API_KEY"
MAX_FAIL_BODY = 10_000  # bytes of the exception's text sent with /fail (the server's default)
log = logging.getLogger("cronledger.client")
F = TypeVar("F", bound=Callable[..., Any])


class ClientError(Exception):
    """An upsert the server refused or could not be asked: ``errors`` are its
    ``{"field", "message"}`` (a 422 names every problem), ``status`` its HTTP status or
    ``None`` when no answer came."""

    def __init__(self, message: str, status: int | None = None,
                 errors: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.errors = errors or []


@dataclass(frozen=True, slots=True)
class Upserted:
    """What an upsert did: ``action`` ``create`` | ``update`` | ``unchanged``, the monitor's
    ``id``, and the field changes as ``{"field", "old", "new"}``."""

    action: str
    id: uuid.UUID
    changes: list[dict[str, Any]]


class Monitor:
    """A monitor to report to; use :func:`monitor` to make one. Entered as a context manager it
    pings a start with a new run id; left, a success, or ``/fail`` with the exception (which is
    raised on). Called on a function (``async def`` too) it wraps each call the same way.
    Entering is safe from several threads and tasks at once: each run has its own ``rid``."""

    def __init__(self, monitor: str, definition: dict[str, Any], *, base_url: str | None,
                 ping_key: str | None, api_key: str | None, retries: int,
                 timeout: float) -> None:
        self.monitor = monitor
        self.definition = definition
        self.base_url = (base_url or os.environ.get(URL_ENV) or DEFAULT_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
        self.slug = definition.get("slug") or (None if "://" in monitor else monitor)
        self.retries, self.timeout = retries, timeout
        self._runs: contextvars.ContextVar[tuple[uuid.UUID, ...]] = \
            contextvars.ContextVar(f"cronledger-runs-{id(self)}", default=())
        self._lock = threading.Lock()
        self._upserted = not definition  # nothing to write
        key = ping_key if ping_key is not None else os.environ.get(PING_KEY_ENV)
        self._target: PingTarget | None = None
        if definition and not self.slug:
            raise BadTarget("a monitor's definition needs its slug: name it by its slug, or "
                            "pass slug=")
        if "://" in monitor or key or not (definition and self.api_key):
            # a slug with neither a ping key nor an upsert to learn its URL from is refused here
            self._target = ping_target(monitor, base_url=self.base_url, ping_key=key,
                                       base_source="base_url" if base_url else URL_ENV)

    # -- upsert ------------------------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        """The ``POST /v1/apply`` body that upserts this monitor: the definition, ``name``
        defaulting to the slug, and the SHA-256 of the definition as the ``digest``."""
        item = {"name": self.slug, **self.definition, "slug": self.slug}
        canonical = json.dumps(item, sort_keys=True, separators=(",", ":")).encode()
        return {"monitors": [item], "digest": hashlib.sha256(canonical).hexdigest()}

    def upsert(self) -> Upserted:
        """Create or update the monitor to match the definition, through ``POST /v1/apply``
        (matched by slug; docs/config.md): a field left out takes its default, a paused monitor
        is resumed (``enabled=False`` keeps it paused), other objects are left alone.

        Raises:
            ClientError: no API key, the server unreachable, or an answer other than 200 (a 422
                lists every refused field).
        """
        if not self.api_key:
            raise ClientError(f"upsert needs a write API key: set {API_KEY_ENV} or pass "
                              "api_key=")
        try:  # strict JSON: a float("inf") or nan is no JSON number, a set no JSON value
            body = json.dumps(self.document(), allow_nan=False).encode()
        except (TypeError, ValueError) as exc:
            raise ClientError(f"the definition cannot be sent as JSON: {_unsendable(self)}"
                              f"{exc}") from None
        headers = {"Authorization": f"Bearer {self.api_key}",
                   "Content-Type": "application/json"}
        try:
            with httpx.Client(timeout=DEFAULT_TIMEOUT, headers=headers) as http:
                r = http.post(f"{self.base_url}/v1/apply", content=body)
                if r.status_code != 200:
                    raise _refused(r)
                try:
                    [change] = [c for c in r.json()["changes"] if c["kind"] == "monitor"]
                except (ValueError, KeyError, TypeError):
                    raise ClientError(f"{self.base_url} gave an answer that is not cronledger's "
                                      "(no monitor in its changes)") from None
                if self._target is None:
                    self._target = self._read_target(http, change)
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach {self.base_url}: {type(exc).__name__}") from None
        except httpx.InvalidURL as exc:  # not an HTTPError
            raise ClientError(f"cannot reach {self.base_url}: {exc}") from None
        self._upserted = True
        return Upserted(change["action"], uuid.UUID(change["id"]), change.get("changes", []))

    def _read_target(self, http: httpx.Client, change: dict[str, Any]) -> PingTarget:
        """The ping URL the server gives for the upserted monitor (write keys read it)."""
        url = change.get("ping_url")
        if not url:
            r = http.get(f"{self.base_url}/v1/monitors/{change['id']}")
            url = r.json().get("ping_url") if r.status_code == 200 else None
        try:
            return ping_target(url or "")
        except BadTarget:
            raise ClientError(f"the server shows no ping URL for {self.slug!r} (it keeps none "
                              f"without a secret key): set {PING_KEY_ENV}") from None

    def _ensure_upserted(self) -> None:
        with self._lock:
            if self._upserted:
                return
            try:
                self.upsert()
            except ClientError as exc:
                log.warning("cronledger: the definition of monitor %r was not written: %s",
                            self.slug, exc)
            except Exception as exc:  # anything else the upsert meets: the block still runs
                log.warning("cronledger: the definition of monitor %r was not written: %s: %s",
                            self.slug, type(exc).__name__, exc)

    # -- pings -------------------------------------------------------------------------------

    def _ping(self, action: str | None, rid: uuid.UUID, body: bytes | None = None) -> None:
        if self._target is None:
            log.warning("cronledger: no %s ping for monitor %r: its ping URL is unknown (set "
                        "%s)", action or "success", self.slug, PING_KEY_ENV)
            return
        with Pinger(self._target, retries=self.retries, timeout=self.timeout) as pinger:
            result = pinger.ping(action, rid, body)
        if not result.ok:
            tries = "1 try" if result.tries == 1 else f"{result.tries} tries"
            log.warning("cronledger: the %s ping to %s failed after %s: %s",
                        action or "success", self._target.shown, tries, result.error)

    def start(self) -> uuid.UUID:
        """Upsert when due, ping ``/start`` with a new run id, and return it."""
        self._ensure_upserted()
        rid = uuid.uuid4()
        self._ping("start", rid)
        return rid

    def finish(self, rid: uuid.UUID, error: BaseException | None = None) -> None:
        """Ping the end of run ``rid``: success, or ``/fail`` with ``error``'s type and message
        (at most ``MAX_FAIL_BODY`` bytes). ``SystemExit`` with status 0 or ``None`` is a
        success."""
        if error is None or (isinstance(error, SystemExit) and error.code in (0, None)):
            self._ping(None, rid)
            return
        text = f"{type(error).__module__}.{type(error).__qualname__}: {error}"
        self._ping("fail", rid, text.removeprefix("builtins.").encode()[:MAX_FAIL_BODY])

    def __enter__(self) -> Monitor:
        self._runs.set((*self._runs.get(), self.start()))
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        *outer, rid = self._runs.get()
        self._runs.set(tuple(outer))
        self.finish(rid, exc)  # returns None: the exception, if any, goes on

    def __call__(self, func: F) -> F:
        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                rid = await asyncio.to_thread(self.start)  # pings never block the loop
                try:
                    result = await func(*args, **kwargs)
                except BaseException as exc:
                    await asyncio.to_thread(self.finish, rid, exc)
                    raise
                await asyncio.to_thread(self.finish, rid)
                return result

            return cast(F, run_async)

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return cast(F, run)


def _unsendable(monitor: Monitor) -> str:
    """``"grace_seconds: "`` (the fields of the definition holding no JSON number: inf, nan)
    before the encoder's words, which name no field."""
    names = [k for k, v in monitor.definition.items()
             if isinstance(v, float) and not math.isfinite(v)]
    return f"{', '.join(names)}: " if names else ""


def _refused(response: httpx.Response) -> ClientError:
    try:
        problem = response.json()
    except ValueError:
        problem = {}
    if not isinstance(problem, dict):
        problem = {}
    errors = [e for e in problem.get("errors") or [] if isinstance(e, dict)]
    detail = "; ".join(f"{e.get('field')}: {e.get('message')}" for e in errors) \
        or str(problem.get("detail") or response.reason_phrase)
    return ClientError(f"the server refused the definition (HTTP {response.status_code}): "
                       f"{detail}", response.status_code, errors)


def monitor(monitor: str, *, base_url: str | None = None, ping_key: str | None = None,
            api_key: str | None = None, retries: int = DEFAULT_RETRIES,
            timeout: float = DEFAULT_TIMEOUT, **definition: Any) -> Monitor:
    """A :class:`Monitor`: a context manager and a decorator.

    Args:
        monitor: a slug, or a full ping URL (cronledger's or healthchecks'; see
            :func:`api.client.pings.ping_target`).
        base_url: the server (default ``CRONLEDGER_URL``, else ``http://127.0.0.1:8000``).
        ping_key: the team's ping key, for a slug (default ``CRONLEDGER_PING_KEY``).
        api_key: a write API key, for the upsert (default ``CRONLEDGER_API_KEY``).
        retries: more tries of a failed ping; timeout: seconds per try.
        definition: the monitor's fields as ``POST /v1/monitors`` takes them (``schedule``,
            ``timezone``, ``grace_seconds``, ``min_duration``, ``max_duration``, ``channels``
            by name, ``alert_after_failures``, ``realert_every``, …; docs/heartbeats.md), checked
            by the server. With any, the monitor is upserted the first time a block is entered
            in this process (or by :meth:`Monitor.upsert`).

    Raises:
        BadTarget: ``monitor`` cannot be read, a slug has no ping key and no upsert can give
            its URL, or a definition has no slug.
    """
    return Monitor(monitor, definition, base_url=base_url, ping_key=ping_key,
                   api_key=api_key, retries=retries, timeout=timeout)
