"""``cronledger apply``, ``export``, ``import crontab`` and ``serve --config`` (docs/config.md).

``apply`` and ``export`` talk to a running server over HTTP (``--url`` / ``CRONLEDGER_URL``,
``CRONLEDGER_API_KEY``), so they work from a laptop or a CI job; ``import crontab`` is local
and changes nothing; ``serve --config`` applies the file through the core, for the default
team, before serving. Errors and warnings name the file, the line and the field
(:mod:`core.declarative.lines`).

Exit status of ``apply``: 0 applied or nothing to do, 1 refused (nothing applied), 2 usage.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from core.declarative.lines import key_lines, line_of
from core.declarative.plan import plan_lines

DEFAULT_URL = "http://127.0.0.1:8000"
DEFAULT_TEAM = "default"  # the team of `serve --config` (and of `apikey create`'s default)
CONFIG_ENV = "CRONLEDGER_CONFIG"
TIMEOUT_SECONDS = 60.0
COMMANDS = ("apply", "export", "import")
_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


class Refused(Exception):
    """The file was refused (exit 1): ``lines`` are the messages, one per problem."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


class Usage(Exception):
    """A usage error (exit 2)."""


def read_document(path: Path) -> tuple[str, dict[str, Any], str]:
    """``(source, document, digest)`` of a TOML file; ``digest`` is the SHA-256 (hex) of its
    bytes.

    Raises:
        Usage: the file cannot be read.
        Refused: it is not valid TOML (``FILE:LINE: message``).
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise Usage(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        source = raw.decode()
        document = tomllib.loads(source)
    except UnicodeDecodeError:
        raise Refused([f"{path}: not UTF-8 text"]) from None
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE.search(str(exc))
        message = _TOML_LINE.sub("", str(exc)).strip()
        raise Refused([f"{path}:{found.group(1) if found else 1}: {message}"]) from None
    return source, document, hashlib.sha256(raw).hexdigest()


def located(path: Path, source: str, items: list[dict[str, str]], label: str = "") -> list[str]:
    """``FILE:LINE: [label]field: message`` for each ``{"field", "message"}``."""
    lines = key_lines(source)
    out = []
    for item in items:
        line = line_of(lines, item["field"])
        out.append(f"{path}:{line if line is not None else 1}: {label}{item['field']}: "
                   f"{item['message']}")
    return out


def report(result: dict[str, Any], path: Path, source: str) -> list[str]:
    """The plan, what was made once (ping URLs, generated secrets, queued runs) and the
    summary line, as printed by ``cronledger apply``."""
    changes = result["changes"]
    out = plan_lines(changes)
    for change in changes:
        if change.get("ping_url"):
            out.append(f"  monitor {change['name']!r}: ping URL {change['ping_url']}")
        if change.get("signing_secret"):
            out.append(f"  channel {change['name']!r}: generated signing secret (shown once) "
                       f"{change['signing_secret']}")
        if change.get("run_id"):
            out.append(f"  job {change['name']!r}: run {change['run_id']} queued (run_on_start)")
    counts = {a: sum(c["action"] == a for c in changes)
              for a in ("create", "update", "delete", "unchanged")}
    summary = ", ".join(f"{n} to {a}" if a != "unchanged" else f"{n} unchanged"
                        for a, n in counts.items() if n)
    if result["dry_run"]:
        out.append(f"dry run: {summary or 'the file is empty'}; nothing applied")
    elif result["applied"]:
        out.append(f"applied: {summary}")
    else:
        out.append(f"nothing to do: {summary or 'the file is empty'}")
    return out


def _client_settings(args: argparse.Namespace) -> tuple[str, str]:
    url = (args.url or os.environ.get("CRONLEDGER_URL") or DEFAULT_URL).rstrip("/")
    key = os.environ.get("CRONLEDGER_API_KEY", "").strip()
    if not key:
        raise Usage("set CRONLEDGER_API_KEY to an API key of the team (cronledger apikey "
                    "create)")
    return url, key


def _problem(response: Any) -> tuple[str, list[dict[str, str]]]:
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}: {response.text[:200]}", []
    return str(body.get("detail", response.status_code)), list(body.get("errors") or [])


def _apply(args: argparse.Namespace) -> int:
    import httpx

    path = Path(args.file)
    url, key = _client_settings(args)
    source, document, digest = read_document(path)
    params = {"dry_run": "true" if args.dry_run else "false",
              "prune": "true" if args.prune else "false"}
    body = msgspec.json.encode({**document, "digest": digest})
    try:
        response = httpx.post(f"{url}/v1/apply", params=params, content=body,
                              headers={"Authorization": f"Bearer {key}",
                                       "Content-Type": "application/json"},
                              timeout=TIMEOUT_SECONDS)
    except httpx.HTTPError as exc:
        raise Refused([f"cronledger apply: cannot reach {url}: {exc}"]) from None
    if response.status_code != 200:
        detail, errors = _problem(response)
        if errors and response.status_code in (400, 422):
            raise Refused([*located(path, source, errors), f"{path}: refused, nothing applied"])
        raise Refused([f"cronledger apply: {url} answered {response.status_code}: {detail}; "
                       "nothing applied"])
    result = response.json()
    for line in located(path, source, result["warnings"], "warning: "):
        print(line, file=sys.stderr)
    print("\n".join(report(result, path, source)))
    return 0


def _export(args: argparse.Namespace) -> int:
    from core.declarative.export import SEALED_NOTE, SLUG_NOTE
    from core.declarative.render import render_document

    if args.team:
        document = _export_local(args.team)
        origin = f"team {args.team!r}"
    else:
        import httpx

        url, key = _client_settings(args)
        try:
            response = httpx.get(f"{url}/v1/export", headers={"Authorization": f"Bearer {key}"},
                                 timeout=TIMEOUT_SECONDS)
        except httpx.HTTPError as exc:
            raise Refused([f"cronledger export: cannot reach {url}: {exc}"]) from None
        if response.status_code != 200:
            raise Refused([f"cronledger export: {url} answered {response.status_code}: "
                           f"{_problem(response)[0]}"])
        document, origin = response.json(), url
    sys.stdout.write(render_document(document, [
        f"Exported by `cronledger export` from {origin}; `cronledger apply -f` of this file "
        "changes nothing.", SEALED_NOTE, SLUG_NOTE]))
    return 0


def _export_local(team: str) -> dict[str, Any]:
    """The export of ``team`` read on the database directly (``--team``)."""
    from api.database import database
    from core.actor import Actor
    from core.config import load_settings
    from core.db import open_pool
    from core.declarative.apply import team_id_of
    from core.declarative.export import export_document

    async def run(dsn: str) -> dict[str, Any] | None:
        pool = await open_pool(dsn, min_size=1, max_size=1)
        try:
            team_id = await team_id_of(pool, team, create=False)
            return None if team_id is None else await export_document(pool, Actor(team_id))
        finally:
            await pool.close()

    with database(load_settings()) as dsn:
        document = asyncio.run(run(dsn))
    if document is None:
        raise Refused([f"cronledger export: no team named {team!r}"])
    return document


def _import(args: argparse.Namespace) -> int:
    from core.declarative.crontab import CrontabRefused, import_crontab
    from core.declarative.render import render_document

    path = Path(args.file)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise Usage(f"cannot read {path}: {exc}") from None
    try:
        imported = import_crontab(text, system=args.system)
    except CrontabRefused as exc:
        raise Refused([f"{path}: {exc}"]) from None
    toml = render_document(imported.document, [
        f"Imported from {path} by `cronledger import crontab`: review it, then "
        "`cronledger apply -f` it (this file changes nothing by itself)."])
    if args.output == "-":
        sys.stdout.write(toml)
    else:
        Path(args.output).write_text(toml)
    lines = [f"{path}: {line}" if line.startswith("line ") else line
             for line in imported.report]
    if imported.secrets:
        lines.append("create these team secrets before applying (PUT /v1/secrets/NAME), "
                     "with the values from the crontab: " + ", ".join(imported.secrets))
    jobs, monitors = len(imported.document["jobs"]), len(imported.document["monitors"])
    lines.append(f"{jobs} jobs and {monitors} monitors written to "
                 f"{'stdout' if args.output == '-' else args.output}")
    print("\n".join(lines), file=sys.stderr)
    return 0


def add_parsers(sub: Any, command: Any) -> None:
    """Register ``apply``, ``export`` and ``import`` on the ``cronledger`` sub-parsers
    (``command`` is :func:`api.cli._parser`'s helper)."""
    remote = ("CRONLEDGER_URL", "CRONLEDGER_API_KEY")
    apply = command(sub, "apply", "apply a declarative file of jobs, monitors and channels",
                    "Plan the file against the team of CRONLEDGER_API_KEY on a running server "
                    "and apply it in one transaction: + create, ~ update (with the fields), "
                    "- delete (--prune only), = unchanged. Exit 0 applied or nothing to do, "
                    "1 refused (every error with its file, line and field; nothing applied), "
                    "2 usage (docs/config.md).", remote)
    apply.add_argument("-f", "--file", required=True, help="the TOML file")
    apply.add_argument("--dry-run", action="store_true", help="print the plan only")
    apply.add_argument("--prune", action="store_true",
                       help="delete the team's jobs, monitors and channels the file does not "
                            "name")
    apply.add_argument("--url", help=f"the server (CRONLEDGER_URL, default {DEFAULT_URL})")
    export = command(sub, "export", "print the current definitions as a file for apply",
                     "Print the team's jobs, monitors and channels as TOML that `cronledger "
                     "apply` applies as a no-op (sealed values are left out and kept); with "
                     "--team, read on the database (embedded PostgreSQL when DATABASE_URL is "
                     "unset) instead of the server.", remote + ("DATABASE_URL",
                                                                "CRONLEDGER_DATA_DIR"))
    export.add_argument("--team", help="read this team on the database directly "
                                       "(DATABASE_URL) instead of the server")
    export.add_argument("--url", help=f"the server (CRONLEDGER_URL, default {DEFAULT_URL})")
    imports = command(sub, "import", "turn other schedulers' files into a file for apply",
                      "Convert, locally; nothing is created until you apply the result.", ()
                      ).add_subparsers(dest="source", required=True, metavar="SOURCE")
    crontab = command(imports, "crontab", "convert a crontab",
                      "Convert a crontab (user or system format): curl and wget lines become "
                      "HTTP jobs, every other line a monitor, and the report (stderr) shows "
                      "the line rewritten to ping it.", ())
    crontab.add_argument("file", metavar="FILE", help="the crontab (e.g. /etc/crontab)")
    crontab.add_argument("-o", "--output", default="-",
                         help="where to write the TOML (default: stdout)")
    fmt = crontab.add_mutually_exclusive_group()
    fmt.add_argument("--system", dest="system", action="store_const", const=True,
                     help="system format: a user column after the time fields")
    fmt.add_argument("--user", dest="system", action="store_const", const=False,
                     help="user format (default: guessed from the first line)")


def main(args: argparse.Namespace) -> int:
    """Run ``apply``, ``export`` or ``import``; 0, 1 (refused) or 2 (usage)."""
    from core.config import ConfigError

    handler = {"apply": _apply, "export": _export, "import": _import}[args.command]
    try:
        return handler(args)
    except ConfigError as exc:  # DATABASE_URL & co. (docs/operations.md, "Configuration")
        print(f"cronledger: {exc}", file=sys.stderr)
        return 2
    except Usage as exc:
        print(f"cronledger {args.command}: {exc}", file=sys.stderr)
        return 2
    except Refused as exc:
        print("\n".join(exc.lines), file=sys.stderr)
        return 1


def config_path(args: argparse.Namespace) -> Path | None:
    """``serve --config FILE``, else ``CRONLEDGER_CONFIG``, else ``None``."""
    value = getattr(args, "config", None) or os.environ.get(CONFIG_ENV)
    return Path(value) if value else None


def apply_at_start(dsn: str, settings: Any, path: Path) -> bool:
    """``serve --config``: apply ``path`` for the default team through the core (before the
    server starts), printing the plan to stderr; ``False`` when it was refused."""
    from core.actor import Actor
    from core.channels.sealing import AesGcmSealer
    from core.clock import SystemClock
    from core.crypto import KeyRing
    from core.db import open_pool
    from core.declarative.apply import apply_document, team_id_of
    from core.errors import DomainError

    try:
        source, document, digest = read_document(path)
    except (Usage, Refused) as exc:
        print(str(exc), file=sys.stderr)
        return False
    keyring = KeyRing.from_sources(settings.secret_key, settings.secret_key_file)

    async def run() -> dict[str, Any]:
        pool = await open_pool(dsn, min_size=1, max_size=1)
        try:
            team_id = await team_id_of(pool, DEFAULT_TEAM, create=True)
            assert team_id is not None
            outcome = await apply_document(
                pool, Actor(team_id), document, SystemClock().now(), keyring=keyring,
                sealer=AesGcmSealer(keyring), base_url=settings.base_url, digest=digest)
        finally:
            await pool.close()
        from api.controllers.apply import change_view

        return {"dry_run": False, "applied": outcome.applied,
                "changes": [msgspec.to_builtins(change_view(c)) for c in outcome.changes],
                "warnings": [{"field": w.field, "message": w.message}
                             for w in outcome.warnings]}

    try:
        result = asyncio.run(run())
    except DomainError as exc:
        errors = [{"field": e.field, "message": e.message} for e in exc.errors]
        lines = located(path, source, errors) if errors else [f"{path}: {exc.detail}"]
        print("\n".join([*lines, f"{path}: refused, nothing applied"]), file=sys.stderr)
        return False
    for line in located(path, source, result["warnings"], "warning: "):
        print(line, file=sys.stderr)
    print("\n".join(f"{path}: {line}" for line in report(result, path, source)),
          file=sys.stderr)
    return True
