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
from datetime import UTC
from email.utils import parsedate_to_datetime
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

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


def ping_target(monitor: str, *, base_url: str | None = None, ping_key: str | None = None,
                base_source: str = URL_ENV) -> PingTarget:
    """The :class:`PingTarget` of ``monitor``, a slug or a full ping URL.

    Args:
        monitor: a slug (``backup``: 1 to 100 of ``a-z``, ``0-9``, ``-``, ``_``) or an
            ``http(s)://`` ping URL without an action, in one of the forms of :func:`read_path`.
        base_url: the server of a slug (default ``http://127.0.0.1:8000``); unused for a URL.
        ping_key: the team's ping key, required for a slug; unused for a URL.
        base_source: what messages call ``base_url`` (``--url`` or ``CRONLEDGER_URL``).

    Raises:
        BadTarget: a slug without a ping key, a malformed slug, a URL that is not http(s), has
            no host, has a fragment, a path that is not one of the ping URL forms (percent
            escapes, ``;`` parameters and extra segments included), or already ends with an
            action (``…/<token>/start``: the action is ours to add).
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
    base, query = _server_url(base_url or DEFAULT_URL, base_source)
    url = f"{base}/ping/{ping_key}/{monitor}"
    return PingTarget(url, query, masked(url))


TOKEN_SHOWN, KEY_SHOWN, HIDDEN = "<token>", "<ping key>", "<hidden>"
PING_PREFIX = "ping"
FORMS = ("…/ping/<token>, …/ping/<ping key>/<slug>, or healthchecks' https://hc-ping.com/<uuid> "
         "and https://hc-ping.com/<ping key>/<slug>")
# Anything a token or a ping key may be, for text no URL can be read from (:func:`masked`).
_SECRET_LIKE = re.compile(r"[A-Za-z0-9_-]{22,}|[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_SHOWN_QUERY_NAME = re.compile(r"[a-z_]{1,20}")
_SHOWN_QUERY_VALUE = re.compile(r"[A-Za-z0-9.]{0,20}")
_SHOWN_SERVER_SEGMENT = re.compile(r"[A-Za-z0-9._~-]{1,21}")


@dataclass(frozen=True, slots=True)
class PingPath:
    """A ping URL's path read against the documented forms (docs/exec.md, "Naming the monitor").

    Attributes:
        shown: the path as messages may show it, ``/``-joined without a leading ``/``: the
            prefix ``ping``, ``<token>`` or ``<ping key>``, a validated slug and action; every
            other segment after the prefix is :data:`HIDDEN` (unless known safe, masked).
        action: the action it ends with (``start``, ``fail``, ``log``, an exit status), or
            ``None``.
        problem: why the path is none of the forms, naming the segment, or ``None``.
    """

    shown: str
    action: str | None = None
    problem: str | None = None


def read_path(path: str) -> PingPath:
    """Read a raw URL path (still percent-encoded) as one of the ping URL forms, optionally
    ending with an action: after an optional ``ping/`` prefix, ``<token>`` (64 hex characters,
    or a healthchecks check UUID) or ``<ping key>/<slug>`` (:data:`SLUG_PATTERN`). A token is
    never read as a ping key (core/teams.py: a ping key is never 64 hex characters). One
    trailing ``/`` is allowed; anything else (empty segments, ``%`` escapes, ``;`` parameters,
    more segments) is a problem naming the first segment that cannot be read."""
    prefix, rest = _split_path(path)
    kind, known, shown = _monitor_segments(rest)
    action = None
    if kind and len(rest) == known + 1 and _ACTION.fullmatch(rest[known]):
        action = shown[known] = rest[known]
    text = "/".join([*prefix, *shown])
    return PingPath(text, action, _path_problem(rest, kind, known + (action is not None),
                                                bool(prefix)))


def _split_path(path: str) -> tuple[list[str], list[str]]:
    """The optional ``ping/`` prefix and the segments after it; one leading and one trailing
    ``/`` are dropped."""
    body = path[1:] if path.startswith("/") else path
    body = body[:-1] if body.endswith("/") else body
    segments = body.split("/") if body else []
    prefix = segments[:1] if segments[:1] == [PING_PREFIX] else []
    return prefix, segments[len(prefix):]


def _monitor_segments(rest: list[str]) -> tuple[str, int, list[str]]:
    """What the first segments name: ``"token"``, ``"key"`` (a ping key and a slug) or ``""``
    (neither); how many segments that takes; every segment as shown (:data:`HIDDEN` unless
    read). A first segment of neither form is shown as what its shape looks like."""
    shown = [HIDDEN] * len(rest)
    if rest and _TOKEN.fullmatch(rest[0]):
        shown[0] = TOKEN_SHOWN
        return "token", 1, shown
    if len(rest) >= 2 and _PING_KEY.fullmatch(rest[0]) and _SLUG.fullmatch(rest[1]):
        shown[:2] = [KEY_SHOWN, rest[1]]
        return "key", 2, shown
    if rest:  # a segment of a ping key's shape is called one, a slug missing or not
        shown[0] = KEY_SHOWN if _PING_KEY.fullmatch(rest[0]) else TOKEN_SHOWN
    return "", 0, shown


def _path_problem(rest: list[str], kind: str, read: int, prefixed: bool) -> str | None:
    """Why the segments ``rest`` are no ping URL form, naming the first that cannot be read,
    or None; ``read`` segments were read (the monitor's and an action)."""
    if not rest:
        return "names no monitor"
    if kind and len(rest) <= read:
        return None
    index = read if kind else (1 if _PING_KEY.fullmatch(rest[0]) else 0)
    segment = rest[index] if index < len(rest) else None
    where = f"path segment {index + 1}" + (f" after /{PING_PREFIX}/" if prefixed else "")
    return f"is none of the ping URL forms: its {where} {_segment_fault(segment, kind, index)}"


def _segment_fault(segment: str | None, kind: str, index: int) -> str:
    """What is wrong with the path segment at ``index`` (None: missing)."""
    if segment is None:
        return "is missing (the monitor's slug after the ping key)"
    if not segment:
        return "is empty"
    if "%" in segment:
        return "has a percent escape (%)"
    if ";" in segment:
        return "has a ';' parameter"
    if kind:
        return "is not an action (start, fail, log or an exit status) or nothing"
    return f"is not {'a slug' if index == 1 else 'a token, a check UUID or a ping key'}"


def masked(text: str) -> str:
    """A URL as messages may show it (docs/exec.md: never the token or the ping key): scheme,
    host and port, the path as :func:`read_path` shows it (default-deny: after the ``ping/``
    prefix only a validated slug and action are kept, the token is :data:`TOKEN_SHOWN`, the
    ping key :data:`KEY_SHOWN`, every other segment :data:`HIDDEN`), and query pairs whose
    name and value are short plain words (others :data:`HIDDEN`); no user info, no fragment.
    Text that does not split as a URL has every run of 22 or more token characters and every
    UUID replaced instead. At most 300 characters."""
    try:
        parts = urlsplit(text.strip())
        host = parts.netloc.rpartition("@")[2]
    except ValueError:
        return _SECRET_LIKE.sub(TOKEN_SHOWN, text)[:300]
    path = read_path(parts.path).shown
    query = "&".join(
        f"{name if _SHOWN_QUERY_NAME.fullmatch(name) else HIDDEN}="
        f"{value if _SHOWN_QUERY_VALUE.fullmatch(value) else HIDDEN}"
        for name, value in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, host, f"/{path}" if path else "", query, ""))[:300]


def _shown_server(text: str) -> str:
    """A server URL (``CRONLEDGER_URL``, ``--url``) as messages may show it: scheme, host, port
    and short path segments; no user info, query or fragment; text that is no URL with its
    token-like runs replaced."""
    try:
        parts = urlsplit(text.strip())
    except ValueError:
        parts = None
    if parts is None or not parts.netloc:
        return _SECRET_LIKE.sub(TOKEN_SHOWN, text.rpartition("@")[2])[:100]
    path = "/".join(s if _SHOWN_SERVER_SEGMENT.fullmatch(s) else HIDDEN
                    for s in parts.path.split("/"))
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], path, "", ""))[:100]


def _server_url(text: str, source: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The base URL of a slug's pings, without a trailing ``/`` or query, and its query
    (kept on every ping); ``source`` names it in messages."""
    parts = _http_parts(text, f"{source} {_shown_server(text)!r}", "a server URL")
    url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
    return url, tuple(parse_qsl(parts.query, keep_blank_values=True))


def _http_parts(text: str, what: str, kind: str) -> SplitResult:
    """``text`` split as an http:// or https:// URL with a host, a number for a port and no
    #fragment; ``what`` names it (masked) and ``kind`` says what it is in the messages.

    Raises:
        BadTarget: anything else.
    """
    if any(c.isspace() for c in text):  # urlsplit would drop it: what was meant is unclear
        raise BadTarget(f"{what} contains whitespace (a space, tab or line end): give it "
                        "without")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        raise BadTarget(f"{what} cannot be read: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadTarget(f"{what} is not an http:// or https:// URL with a host")
    if parts.fragment:
        raise BadTarget(f"{what} has a #fragment: {kind} has none")
    return parts


def _url_target(text: str) -> PingTarget:
    """The target of a ping URL given whole (docs/exec.md, "Naming the monitor").

    Raises:
        BadTarget: not one of the documented forms, or already ending with an action.
    """
    what = f"the ping URL {masked(text)!r}"
    parts = _http_parts(text, what, "a ping URL")
    path = read_path(parts.path)
    if path.action is not None:
        raise BadTarget(f"{what} already ends with an action (/{path.action}): give the "
                        "monitor's ping URL without it")
    if path.problem is not None:
        raise BadTarget(f"{what} {path.problem}: give {FORMS}")
    raw = parts.path.strip("/")
    url = urlunsplit((parts.scheme, parts.netloc, f"/{raw}", "", ""))
    query = tuple(parse_qsl(parts.query, keep_blank_values=True))
    if any(name == "rid" for name, _ in query):
        raise BadTarget(f"{what} has a rid: each run gets its own")
    return PingTarget(url, query, masked(url))


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
        clock: the time now in Unix seconds, for a ``Retry-After`` given as a date.
    """

    def __init__(self, target: PingTarget, *, retries: int = DEFAULT_RETRIES,
                 timeout: float = DEFAULT_TIMEOUT, backoff: float = DEFAULT_BACKOFF,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time) -> None:
        self.target = target
        self._clock = clock
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
        limit = response.headers.get("Ping-Body-Limit", "").strip()
        return PingResult(response.is_success, tries, response.status_code,
                          None if response.is_success else f"HTTP {response.status_code}",
                          int(limit) if limit.isdigit() else None,
                          retry_after(response.headers.get("Retry-After", ""), self._clock()))

    def _wait(self, attempt: int, last: PingResult) -> float:
        """Seconds before try ``attempt + 1``: the backoff, or ``Retry-After`` when longer."""
        wait = max(self.backoff * 2.0 ** (attempt - 1), last.retry_after or 0.0)
        return min(wait, MAX_WAIT)


def retry_after(value: str, now: float) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (RFC 9110 §10.2.3): a number of seconds,
    or an HTTP date less ``now`` (Unix seconds; a date already past is 0); ``None`` for a
    missing or unreadable header."""
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 §5.6.7: HTTP dates are in GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)
