"""Ping URLs and sending pings, with bounded retries: the transport of ``cronledger exec``
(``api/cli_exec.py``) and of :mod:`api.client`.

A monitor is named by a **slug**, pinged at ``<base URL>/ping/<ping key>/<slug>`` (the base URL
from ``CRONLEDGER_URL``, the team's ping key from ``CRONLEDGER_PING_KEY``), or by a **full ping
URL**: cronledger's ``/ping/<token>`` and ``/ping/<ping key>/<slug>``, and healthchecks'
``https://hc-ping.com/<uuid>`` and ``https://hc-ping.com/<ping key>/<slug>`` (the ping API is
the same: docs/healthchecks.md). The action is appended to it: ``/start``, ``/fail``, ``/log``,
``/<exit status>``, nothing for a success; ``?rid=<uuid>`` pairs a start with its end.

Retries follow runitor (``internal/api.go``, github.com/bdd/runitor): a connection error, a
timeout, or an answer 408, 429, 500, 502, 503 or 504 is tried again, at most ``retries`` more
times; any other answer is final. Between tries we wait ``backoff`` seconds, doubled each time,
or the server's ``Retry-After`` when it says more (either at most ``MAX_WAIT`` seconds).

Only the standard library and httpx: this package never imports the server (``core``, ``api``).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

URL_ENV = "CRONLEDGER_URL"
PING_KEY_ENV = "CRONLEDGER_PING_KEY"
DEFAULT_URL = "http://127.0.0.1:8000"
# The same rule as core/monitors/slugs.py (SLUG_PATTERN); tests/unit/test_client_pings.py keeps
# the two equal, since this package may not import the server's.
SLUG_PATTERN = "[a-z0-9_-]{1,100}"
DEFAULT_RETRIES = 2  # runitor's -api-retries
DEFAULT_TIMEOUT = 10.0  # seconds per try
DEFAULT_BACKOFF = 1.0  # seconds before the first retry, doubled for each next one
MAX_WAIT = 30.0  # seconds: no wait between tries is longer
RETRIED = frozenset({408, 429, 500, 502, 503, 504})
USER_AGENT = "cronledger-client/0.1"

_SLUG = re.compile(SLUG_PATTERN)
# A segment that names a monitor by itself: cronledger's token, healthchecks' check UUID.
_TOKEN = re.compile(r"[0-9a-f]{64}|[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_PING_KEY = re.compile(r"[A-Za-z0-9_-]{22,64}")
_ACTION = re.compile(r"start|fail|log|[0-9]{1,3}")


class BadTarget(ValueError):
    """A monitor that cannot be read: not a slug, not a usable ping URL, or a slug without a
    ping key. The message is one line, meant for a person."""


@dataclass(frozen=True, slots=True)
class PingTarget:
    """Where a monitor's pings go.

    Attributes:
        url: the ping URL without an action, no trailing slash (``https://h/ping/<token>``).
        query: query parameters of the given URL, kept on every ping (``create=1``).
        shown: what messages may show (:func:`masked`): scheme, host, port and slug, never
            the token or ping key.
    """

    url: str
    query: tuple[tuple[str, str], ...] = ()
    shown: str = ""

    def action_url(self, action: str | None, rid: uuid.UUID | None = None) -> str:
        """The URL of one ping: ``action`` ``None`` (success), ``"start"``, ``"fail"``,
        ``"log"`` or an exit status ``"0"``-``"255"``; ``rid`` as ``?rid=``."""
        query = [*self.query, *([("rid", str(rid))] if rid else [])]
        path = self.url if action is None else f"{self.url}/{action}"
        return f"{path}?{urlencode(query)}" if query else path


def ping_target(monitor: str, *, base_url: str | None = None,
                ping_key: str | None = None) -> PingTarget:
    """The :class:`PingTarget` of ``monitor``, a slug or a full ping URL.

    Args:
        monitor: a slug (``backup``: 1 to 100 of ``a-z``, ``0-9``, ``-``, ``_``) or an
            ``http(s)://`` ping URL without an action.
        base_url: the server of a slug (default ``http://127.0.0.1:8000``); unused for a URL.
        ping_key: the team's ping key, required for a slug; unused for a URL.

    Raises:
        BadTarget: a slug without a ping key, a malformed slug, a URL that is not http(s), has
            no host, names no monitor, has a fragment, or already ends with an action
            (``…/<token>/start``: the action is ours to add).
    """
    if "://" in monitor:
        return _url_target(monitor)
    if not _SLUG.fullmatch(monitor):
        shown = _SECRET_LIKE.sub(TOKEN_SHOWN, monitor)[:100]  # a pasted token or key
        raise BadTarget(f"--monitor {shown!r} is neither a slug (1 to 100 of a-z, 0-9, -, _) "
                        "nor an http(s):// ping URL")
    if not ping_key:
        shown = _TOKEN.sub(TOKEN_SHOWN, monitor)  # a bare token reads as a slug
        raise BadTarget(f"the slug {shown!r} needs the team's ping key: set {PING_KEY_ENV} "
                        "(POST /v1/team/ping-key makes one), or give the full ping URL")
    if not _PING_KEY.fullmatch(ping_key):
        raise BadTarget(f"{PING_KEY_ENV} is not a ping key (22 to 64 of A-Z, a-z, 0-9, -, _)")
    base = _url_target(base_url or DEFAULT_URL, server=True)
    url = f"{base.url}/ping/{ping_key}/{monitor}"
    return PingTarget(url, base.query, masked(url))


TOKEN_SHOWN, KEY_SHOWN = "<token>", "<ping key>"
# Anything a token or a ping key may be, for text no URL can be read from (:func:`masked`).
_SECRET_LIKE = re.compile(r"[A-Za-z0-9_-]{22,}|[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def masked(text: str) -> str:
    """A URL as messages may show it (docs/exec.md: never the token or the ping key): scheme,
    host and port, the path with the monitor's credential replaced by :data:`TOKEN_SHOWN`
    (``…/<token>``, healthchecks' ``…/<uuid>``, a lone last segment) or :data:`KEY_SHOWN`
    (``…/<ping key>/<slug>``, the slug kept), an action after it and the query kept; no user
    info. Text that does not split as a URL has every run of 22 or more token characters and
    every UUID replaced instead. At most 300 characters."""
    try:
        parts = urlsplit(text.strip())
    except ValueError:
        return _SECRET_LIKE.sub(TOKEN_SHOWN, text)[:300]
    segments = [s for s in parts.path.split("/") if s]
    action = segments.pop() if _ends_with_action(segments) else None
    if segments and (_TOKEN.fullmatch(segments[-1]) or len(segments) == 1):
        segments[-1] = TOKEN_SHOWN
    elif len(segments) >= 2:
        segments[-2] = KEY_SHOWN
    path = "/".join([*segments, *([action] if action else [])])
    host = parts.netloc.rpartition("@")[2]
    query = _SECRET_LIKE.sub(TOKEN_SHOWN, parts.query)
    return urlunsplit((parts.scheme, host, f"/{path}" if path else "", query, ""))[:300]


def _url_target(text: str, *, server: bool = False) -> PingTarget:
    what = f"{URL_ENV} {masked(text)!r}" if server else f"the ping URL {masked(text)!r}"
    try:
        parts = urlsplit(text.strip())
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        raise BadTarget(f"{what} cannot be read: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadTarget(f"{what} is not an http:// or https:// URL with a host")
    if parts.fragment:
        raise BadTarget(f"{what} has a #fragment: a ping URL has none")
    segments = [s for s in parts.path.split("/") if s]
    if not server and not segments:
        raise BadTarget(f"{what} names no monitor: give …/ping/<token>, …/ping/<ping key>/<slug>"
                        " or healthchecks' https://hc-ping.com/<uuid>")
    if not server and _ends_with_action(segments):
        raise BadTarget(f"{what} already ends with an action (/{segments[-1]}): give the "
                        "monitor's ping URL without it")
    path = "/".join(segments)
    url = urlunsplit((parts.scheme, parts.netloc, f"/{path}" if path else "", "", ""))
    query = tuple(parse_qsl(parts.query, keep_blank_values=True))
    if any(name == "rid" for name, _ in query):
        raise BadTarget(f"{what} has a rid: each run gets its own")
    return PingTarget(url.rstrip("/"), query, masked(url))


def _ends_with_action(segments: list[str]) -> bool:
    """Whether the path is a monitor's URL with an action already on it: ``<token>/start``, or
    ``<ping key>/<slug>/fail``. A slug may itself be ``start`` (``/ping/<key>/start``), so an
    action is only seen after a token or after a ping key and a slug."""
    if len(segments) < 2 or not _ACTION.fullmatch(segments[-1]):
        return False
    return bool(_TOKEN.fullmatch(segments[-2])) or (
        len(segments) >= 3 and bool(_PING_KEY.fullmatch(segments[-3]))
        and not _TOKEN.fullmatch(segments[-3]))


@dataclass(frozen=True, slots=True)
class PingResult:
    """What became of one ping.

    Attributes:
        ok: the server answered 2xx.
        tries: requests made (1 + retries used).
        status: the last answer's HTTP status, ``None`` when none came.
        error: why it failed (``"HTTP 404"``, ``"ConnectError: …"``), ``None`` when ``ok``.
        body_limit: the server's ``Ping-Body-Limit`` header in bytes, when it sent one.
        retry_after: the server's ``Retry-After`` in seconds, when it sent one.
    """

    ok: bool
    tries: int
    status: int | None = None
    error: str | None = None
    body_limit: int | None = None
    retry_after: float | None = None


class Pinger:
    """Sends the pings of one monitor; never raises for a failed ping (see :class:`PingResult`).

    Args:
        target: where the pings go.
        retries: more tries after a failed one that may succeed later (0 or more).
        timeout: seconds per try.
        backoff: seconds before the first retry, doubled for each next one.
        sleep: waits between tries (tests pass a recorder).
    """

    def __init__(self, target: PingTarget, *, retries: int = DEFAULT_RETRIES,
                 timeout: float = DEFAULT_TIMEOUT, backoff: float = DEFAULT_BACKOFF,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.target = target
        self.retries = max(0, retries)
        self.backoff = backoff
        self._sleep = sleep
        self._http = httpx.Client(timeout=timeout, headers={"User-Agent": USER_AGENT})

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Pinger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ping(self, action: str | None, rid: uuid.UUID | None = None,
             body: bytes | None = None) -> PingResult:
        """POST one ping (``action`` as :meth:`PingTarget.action_url`), retrying as the module
        says."""
        url = self.target.action_url(action, rid)
        result = PingResult(False, 0)
        for attempt in range(self.retries + 1):
            if attempt:
                self._sleep(self._wait(attempt, result))
            result = self._try(url, body or b"", attempt + 1)
            if result.ok or (result.status is not None and result.status not in RETRIED):
                return result
        return result

    def _try(self, url: str, body: bytes, tries: int) -> PingResult:
        try:
            response = self._http.post(url, content=body,
                                       headers={"Content-Type": "text/plain; charset=utf-8"})
        except httpx.HTTPError as exc:
            said = str(exc).replace(url, masked(url))  # an error may quote the URL
            return PingResult(False, tries, None, f"{type(exc).__name__}: {said}")
        limit = response.headers.get("Ping-Body-Limit", "")
        after = response.headers.get("Retry-After", "")
        return PingResult(response.is_success, tries, response.status_code,
                          None if response.is_success else f"HTTP {response.status_code}",
                          int(limit) if limit.isdigit() else None,
                          float(after) if after.isdigit() else None)

    def _wait(self, attempt: int, last: PingResult) -> float:
        """Seconds before try ``attempt + 1``: the backoff, or ``Retry-After`` when longer."""
        wait = max(self.backoff * 2.0 ** (attempt - 1), last.retry_after or 0.0)
        return min(wait, MAX_WAIT)
