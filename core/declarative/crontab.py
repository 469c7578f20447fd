"""``cronledger import crontab``: a crontab as a declarative document and a report
(docs/config.md, "Importing a crontab"). Pure: nothing is created until the document is applied.

The crontab format is crontab(5)'s (cronie and Debian's cron): five time fields then the
command, or, in the system format (``/etc/crontab``, ``/etc/cron.d/*``), five time fields, a
user and the command; ``@yearly`` … ``@hourly`` in place of the fields; ``NAME=value``
environment lines, of which ``CRON_TZ`` (cronie) and ``TZ`` set the time zone of the lines that
follow; ``%`` ends the command (the rest is its standard input) unless escaped as ``\\%``.

A line whose command is one ``curl`` or ``wget`` call (redirections allowed, no ``&&``, pipes
or ``;``) becomes an HTTP job with that method, URL, headers and body; every other line becomes
a monitor with the same schedule, and the report shows the line rewritten to ping it.
Credential values (``-u``, ``Authorization`` and other secret-looking headers) are replaced by
``${secrets.NAME}`` placeholders, and the report says which secrets to create.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.schedule import InvalidSchedule, parse_schedule
from core.schedule.zones import load_zone

MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
          "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
          "@hourly": "0 * * * *"}
PING = "curl -fsS -m 10 --retry 5"  # the healthchecks.io-style ping of a rewritten line
PING_URL = "<ping url of {name}>"  # printed by `cronledger apply` when it creates the monitor
_ENV = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
_USER = re.compile(r"^[a-z_][a-z0-9_.-]*\$?$")
_SECRET_HEADER = re.compile(r"^(?:authorization|proxy-authorization|cookie|x-api-key|api-key|"
                            r".*(?:token|secret|password|apikey|auth).*)$", re.I)
_SCHEME = re.compile(r"^(bearer|basic|token|digest)\s+", re.I)
# curl options: those without an argument that change nothing here, and those with one.
_CURL_FLAGS = set("fsSLkgGvi") | {"--fail", "--silent", "--show-error", "--location",
                                  "--insecure", "--compressed", "--globoff", "--verbose",
                                  "--include", "--fail-with-body", "--no-progress-meter",
                                  "-sS", "--http1.1", "--http2"}
_CURL_IGNORED_ARGS = {"-o", "--output", "--connect-timeout", "--retry-delay",
                      "--retry-max-time", "-w", "--write-out", "-c", "--cookie-jar",
                      "-e", "--referer", "--max-redirs", "-r", "--range"}
_CURL_ARGS = {"-X", "--request", "-H", "--header", "-d", "--data", "--data-raw",
              "--data-binary", "--data-ascii", "--data-urlencode", "--json", "-u", "--user",
              "-A", "--user-agent", "-m", "--max-time", "--retry", "--url",
              *_CURL_IGNORED_ARGS}
_SHORT_WITH_ARG = set("XHdumAoweCrc")


class CrontabRefused(ValueError):
    """The crontab cannot be imported as it is: a line would change how the lines after it
    are read (an unknown ``CRON_TZ``), so importing around it would be silently wrong.

    Attributes:
        line: the line's number (1-based).
    """

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass
class Imported:
    """The result of :func:`import_crontab`.

    Attributes:
        document: ``{"jobs": [...], "monitors": [...]}`` for ``cronledger apply``.
        report: human-readable lines: one per crontab line that is not blank, saying what
            became of it (comments and environment lines are kept there).
        secrets: the ``${secrets.NAME}`` names the jobs use, to create before applying.
    """

    document: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"jobs": [], "monitors": []})
    report: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)


def _slug(text: str, limit: int = 60) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return slug[:limit].rstrip("-") or "job"


def _split_command(raw: str) -> tuple[str, str | None]:
    """crontab(5): an unescaped ``%`` ends the command; the rest is its standard input."""
    out, i = [], 0
    while i < len(raw):
        if raw[i] == "\\" and raw[i + 1:i + 2] == "%":
            out.append("%")
            i += 2
        elif raw[i] == "%":
            return "".join(out), raw[i + 1:]
        else:
            out.append(raw[i])
            i += 1
    return "".join(out), None


def looks_like_system(text: str) -> bool:
    """Whether ``text`` is in the system format: its first schedule line has a user column
    (a user name followed by a command), as ``/etc/crontab`` does; ``root`` is taken as the
    sign (a user crontab's command is rarely a program named ``root``)."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or _ENV.match(stripped):
            continue
        parts = stripped.split()
        user_at = 1 if parts[0].startswith("@") else 5
        return len(parts) > user_at + 1 and parts[user_at] == "root"
    return False


class _Unimportable(Exception):
    """The command is not one curl/wget call this importer understands."""


_REDIRECTION = re.compile(r"(?<![^\s])\d*(?:>>?|<)(?:&\d+|\s*[^\s&|;<>]+)|(?<![^\s])&>\s*\S+")


def _tokens(command: str) -> list[str]:
    """The words of a single simple command, its redirections (``>/dev/null 2>&1``) dropped.

    Raises:
        _Unimportable: unbalanced quotes, or more than one command (``&&``, ``|``, ``;`` …).
    """
    lexer = shlex.shlex(_REDIRECTION.sub(" ", command), posix=True,
                        punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as exc:  # unbalanced quotes
        raise _Unimportable(str(exc)) from None
    if any(token and set(token) <= set(";&|()<>") for token in tokens):
        raise _Unimportable("more than one command")
    return tokens


def _secret_name(job: str, what: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", f"{job}_{what}").strip("_").upper()[:100]


def _protect_header(job: str, name: str, value: str, secrets: list[str]) -> str:
    if not (_SECRET_HEADER.match(name) or _SCHEME.match(value)) or "${secrets." in value:
        return value
    secret = _secret_name(job, name)
    secrets.append(secret)
    scheme = _SCHEME.match(value)
    return f"{scheme.group(1)} ${{secrets.{secret}}}" if scheme else f"${{secrets.{secret}}}"


@dataclass
class _CurlCall:
    """What a curl command line sends, gathered option by option."""

    method: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    data: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)

    def option(self, name: str, value: str) -> None:
        """An option that takes a value (``_CURL_ARGS``); those of ``_CURL_IGNORED_ARGS``
        change nothing sent."""
        if name in ("-X", "--request"):
            self.method = value.upper()
        elif name in ("-H", "--header"):
            key, _, text = value.partition(":")
            self.headers[key.strip()] = text.strip()
        elif name in ("-d", "--data", "--data-raw", "--data-binary", "--data-ascii",
                      "--data-urlencode"):
            self.data.append(value)
        elif name == "--json":
            self.data.append(value)
            self.headers.setdefault("Content-Type", "application/json")
            self.headers.setdefault("Accept", "application/json")
        elif name in ("-u", "--user"):
            self.options["user"] = value
        elif name in ("-A", "--user-agent"):
            self.headers["User-Agent"] = value
        elif name in ("-m", "--max-time"):
            self.options["timeout"] = value
        elif name == "--retry":
            self.options["retry"] = value
        elif name == "--url":
            self.url = value

    def request(self) -> dict[str, Any]:
        return {"method": self.method, "url": self.url, "headers": self.headers,
                "body": "&".join(self.data) or None, **self.options}


def _curl_split(token: str) -> tuple[str, str | None] | None:
    """``(name, value)`` of one curl argument: ``--max-time=5`` is ``("--max-time", "5")``,
    ``-sXPOST`` is ``("-X", "POST")`` (its flags before), a URL is ``(url, None)``; None for
    short flags only (``-s``, ``-fsS``), which change nothing sent."""
    if token.startswith("--") and "=" in token:
        name, value = token.split("=", 1)
        return name, value
    if not (token.startswith("-") and not token.startswith("--") and len(token) > 1):
        return token, None
    letters = token[1:]
    for k, letter in enumerate(letters):  # combined short flags: -fsS, -sX POST
        if letter in _SHORT_WITH_ARG:
            return f"-{letter}", letters[k + 1:] or None
        if letter not in _CURL_FLAGS:
            raise _Unimportable(f"unknown curl option -{letter}")
    return None


def _curl(args: list[str]) -> dict[str, Any]:
    """The request of a curl command line's arguments (``args``, after ``curl``).

    Raises:
        _Unimportable: an option this importer does not know, one without its value, or more
            than one URL.
    """
    call = _CurlCall()
    i = 0
    while i < len(args):
        split = _curl_split(args[i])
        name, value = split if split is not None else ("", None)
        if split is None or name in _CURL_FLAGS:
            pass
        elif name in _CURL_ARGS:
            if value is None:
                i += 1
                if i >= len(args):
                    raise _Unimportable(f"{args[i - 1]} needs a value")
                value = args[i]
            call.option(name, value)
        elif name.startswith("-"):
            raise _Unimportable(f"unknown curl option {name}")
        elif call.url is None:
            call.url = name
        else:
            raise _Unimportable("more than one URL")
        i += 1
    return call.request()


def _wget(args: list[str]) -> dict[str, Any]:
    method, url, headers, body = None, None, {}, None
    options: dict[str, str | None] = {}
    i = 0
    while i < len(args):
        token = args[i]
        name, _, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if name in ("--method", "--header", "--post-data", "--body-data", "--timeout",
                    "--tries", "-T", "-t", "-O", "--output-document", "-o", "--output-file",
                    "--user-agent", "-U") and not value:
            i += 1
            if i >= len(args):
                raise _Unimportable(f"{name} needs a value")
            value = args[i]
        if name == "--method":
            method = value.upper()
        elif name == "--header":
            key, _, text = value.partition(":")
            headers[key.strip()] = text.strip()
        elif name in ("--post-data", "--body-data"):
            body = value
            method = method or ("POST" if name == "--post-data" else None)
        elif name in ("--timeout", "-T"):
            options["timeout"] = value
        elif name in ("--tries", "-t"):
            options["retry"] = str(max(int(value) - 1, 0)) if value.isdigit() else None
        elif name in ("--user-agent", "-U"):
            headers["User-Agent"] = value
        elif name == "--spider":
            method = "HEAD"
        elif name in ("-O", "--output-document", "-o", "--output-file", "-q", "--quiet",
                      "-nv", "--no-verbose", "--no-check-certificate", "-S",
                      "--server-response", "--delete-after", "-nc"):
            pass
        elif re.fullmatch(r"-[qSO]+-?", token):
            pass  # -qO- and friends: quiet, output to stdout
        elif token.startswith("-"):
            raise _Unimportable(f"unknown wget option {name}")
        elif url is None:
            url = token
        else:
            raise _Unimportable("more than one URL")
        i += 1
    return {"method": method, "url": url, "headers": headers, "body": body, **options}


def http_request(command: str) -> dict[str, Any] | None:
    """The request of a command that is one ``curl`` or ``wget`` call, else ``None``:
    ``{"method", "url", "headers", "body"}`` plus ``user`` (``-u``), ``timeout`` and
    ``retry`` (strings, as written)."""
    try:
        tokens = _tokens(command)
        program = tokens[0].rsplit("/", 1)[-1] if tokens else ""
        if program == "curl":
            parsed = _curl(tokens[1:])
        elif program == "wget":
            parsed = _wget(tokens[1:])
        else:
            return None
    except _Unimportable:
        return None
    if not parsed["url"]:
        return None
    if "://" not in parsed["url"]:
        parsed["url"] = "http://" + parsed["url"]  # curl's and wget's default
    parsed["method"] = parsed["method"] or ("POST" if parsed["body"] is not None else "GET")
    return parsed


def _job(name: str, schedule: str, zone: str, request: dict[str, Any],
         secrets: list[str]) -> dict[str, Any]:
    headers = {k: _protect_header(name, k, v, secrets) for k, v in request["headers"].items()}
    url = request["url"]
    if request.get("user"):
        user, pw = _secret_name(name, "user"), _secret_name(name, "password")
        secrets += [user, pw]
        scheme, _, rest = url.partition("://")
        url = f"{scheme}://${{secrets.{user}}}:${{secrets.{pw}}}@{rest}"
    job: dict[str, Any] = {"name": name, "schedule": schedule}
    if zone != "UTC":
        job["timezone"] = zone
    job["request"] = {"method": request["method"], "url": url,
                      **({"headers": headers} if headers else {}),
                      **({"body": request["body"]} if request["body"] is not None else {})}
    timeout = request.get("timeout")
    if timeout and re.fullmatch(r"\d+(\.\d+)?", timeout) and 0 < float(timeout) <= 900:
        job["timeout_seconds"] = float(timeout)
    retry = request.get("retry")
    if retry and retry.isdigit() and int(retry) > 0:
        job["retry"] = {"attempts": min(int(retry) + 1, 10)}
    return job


#: what Vixie cron and cronie read in a field: numbers, '*', lists, ranges, steps and the
#: three-letter names of months and weekdays (entry.c); no Quartz 'L', 'W', '#' or '?'
_VIXIE_FIELD = re.compile(r"(?:[\d*]+|[a-z]{3})(?:-(?:\d+|[a-z]{3}))?(?:/\d+)?"
                          r"(?:,(?:[\d*]+|[a-z]{3})(?:-(?:\d+|[a-z]{3}))?(?:/\d+)?)*",
                          re.IGNORECASE)


def _valid(schedule: str, zone: str) -> str | None:
    for part in schedule.split():
        if not _VIXIE_FIELD.fullmatch(part):
            return (f"{part!r} is not cron's: Vixie cron and cronie refuse it, so the line "
                    "never ran as written")
    now = datetime(2000, 1, 1, tzinfo=UTC)
    try:
        parse_schedule(schedule, zone, anchor=now, now=now)
    except InvalidSchedule as exc:
        return str(exc)
    return None


def import_crontab(text: str, *, system: bool | None = None) -> Imported:
    """Read a crontab.

    Args:
        text: the crontab's content.
        system: the system format (a user column); ``None``: :func:`looks_like_system`.

    Returns:
        The :class:`Imported` document, report and secret names. Lines that cannot be
        imported (``@reboot``, a schedule the engine refuses, a malformed line) are reported
        and left out.

    Raises:
        CrontabRefused: a ``CRON_TZ`` or ``TZ`` line names no time zone (``localtime``, a
            typo): every line after it would be read in the wrong zone.
    """
    if system is None:
        system = looks_like_system(text)
    out = Imported()
    zone = "UTC"
    names: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        where = f"line {number}"
        if not stripped:
            continue
        if stripped.startswith("#"):
            out.report.append(f"{where}: comment kept here: {stripped}")
        elif (env := _env_line(stripped)) is not None:
            zone = _read_env(out, number, *env, stripped, zone)
        elif (entry := _entry(out, where, stripped, system)) is not None:
            _import_entry(out, where, stripped, *entry, zone, names)
    out.secrets = list(dict.fromkeys(out.secrets))
    return out


def _env_line(stripped: str) -> tuple[str, str] | None:
    """``(name, value)`` of an environment line (``MAILTO=x``, ``CRON_TZ="Europe/Paris"``),
    quotes stripped; None for any other line."""
    env = _ENV.match(stripped)
    if env and not stripped.startswith("@") and " " not in env.group(1):
        return env.group(1), env.group(2).strip("'\"")
    return None


def _read_env(out: Imported, number: int, key: str, value: str, stripped: str,
              zone: str) -> str:
    """Report an environment line; the zone of the lines below it (``CRON_TZ``, ``TZ``).

    Raises:
        CrontabRefused: a ``CRON_TZ`` or ``TZ`` that names no zone.
    """
    where = f"line {number}"
    if key not in ("CRON_TZ", "TZ"):
        out.report.append(f"{where}: environment line kept here (not imported; jobs "
                          f"and monitors do not run commands): {stripped}")
        return zone
    try:
        load_zone(value)
    except InvalidSchedule as exc:
        # the lines below would be read in another zone than the crontab says
        raise CrontabRefused(number, f"{key}={value}: {exc}; the lines below "
                             "would fire at other times than cron's, so nothing "
                             "is imported (fix the line or remove it)") from None
    out.report.append(f"{where}: {key}={value}: the time zone of the lines below")
    return value


def _entry(out: Imported, where: str, stripped: str, system: bool
           ) -> tuple[str, str | None, str] | None:
    """``(schedule, user, command line)`` of a crontab entry (``user`` None unless
    ``system``); None, with the reason reported, when the line is not one this imports."""
    parts = stripped.split(None, 1 if stripped.startswith("@") else 5)
    if parts[0] == "@reboot":
        out.report.append(f"{where}: @reboot is not supported (there is no boot to "
                          f"run at): {stripped}")
        return None
    if stripped.startswith("@") and (parts[0] not in MACROS or len(parts) < 2) \
            or not stripped.startswith("@") and len(parts) < 6:
        out.report.append(f"{where}: not a crontab line, skipped: {stripped}")
        return None
    schedule, rest = (MACROS[parts[0]], parts[1]) if stripped.startswith("@") \
        else (" ".join(parts[:5]), parts[5])
    if not system:
        return schedule, None, rest
    user_parts = rest.split(None, 1)
    if len(user_parts) < 2 or not _USER.match(user_parts[0]):
        out.report.append(f"{where}: no user and command, skipped: {stripped}")
        return None
    return schedule, user_parts[0], user_parts[1]


def _import_entry(out: Imported, where: str, stripped: str, schedule: str, user: str | None,
                  rest: str, zone: str, names: set[str]) -> None:
    """Add an entry to the document: an HTTP job when its command is one curl or wget call,
    else a monitor to ping; a schedule the engine refuses is reported and skipped."""
    command, stdin = _split_command(rest)
    problem = _valid(schedule, zone)
    if problem:
        out.report.append(f"{where}: schedule {schedule!r} not supported ({problem}), "
                          f"skipped: {stripped}")
        return
    request = http_request(command) if stdin is None else None
    name = _unique(_slug(request["url"].split("://", 1)[-1] if request else command), names)
    if request is not None:
        job = _job(name, schedule, zone, request, out.secrets)
        out.document["jobs"].append(job)
        out.report.append(f"{where}: HTTP job {name!r}: {job['request']['method']} "
                          f"{job['request']['url']}")
        return
    monitor: dict[str, Any] = {"name": name, "schedule": schedule}
    if zone != "UTC":
        monitor["timezone"] = zone
    out.document["monitors"].append(monitor)
    out.report += _monitor_report(where, name, schedule, user, command, stdin)


def _unique(base: str, names: set[str]) -> str:
    """``base``, or ``base-2``, ``base-3`` … the first not in ``names`` (added to it)."""
    name, k = base, 2
    while name in names:
        name, k = f"{base}-{k}", k + 1
    names.add(name)
    return name


def _monitor_report(where: str, name: str, schedule: str, user: str | None, command: str,
                    stdin: str | None) -> list[str]:
    """The lines telling how to make the crontab line ping its monitor: on success only, and
    with a start signal and the exit status (docs/heartbeats.md)."""
    url = PING_URL.format(name=name)
    command = command.replace("%", "\\%")  # back to crontab(5)'s escape
    head = f"{schedule} {user + ' ' if user else ''}"
    wrapped = f"( {command.strip()} )" if any(op in command for op in ("&&", "||", ";", "|")) \
        else command.strip()
    tail = f"%{stdin}" if stdin is not None else ""
    return [
        f"{where}: monitor {name!r} (the command stays in your crontab); make it ping:",
        f"    {head}{wrapped} && {PING} {url}{tail}",
        "  or, with the start and the exit status:",
        f"    {head}{PING} -o /dev/null {url}/start ; {wrapped} ; {PING} {url}/$?{tail}",
    ]
