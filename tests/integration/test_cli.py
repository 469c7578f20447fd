"""The ``cronledger`` command as a new user meets it: every ``--help`` says what the command
does and which environment variables it reads; ``apikey list`` and ``apikey revoke`` work on
the real database (``main`` called in-process, output read with capsys)."""

from __future__ import annotations

import argparse
import re
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from api import cli
from core.tokens import token_hash

ROOT = Path(__file__).resolve().parents[2]
DATABASE = ("DATABASE_URL", "CRONLEDGER_DATA_DIR")
KEYS = ("CRONLEDGER_SECRET_KEY", "CRONLEDGER_SECRET_KEY_FILE")
# command path -> variables its --help must name
EXPECTED = {
    (): DATABASE,
    ("serve",): DATABASE + KEYS + ("CRONLEDGER_HOST", "CRONLEDGER_PORT",
                                    "CRONLEDGER_TRUSTED_PROXIES", "CRONLEDGER_METRICS_TOKEN"),
    ("api",): DATABASE + KEYS + ("CRONLEDGER_HOST", "CRONLEDGER_PORT",
                                  "CRONLEDGER_TRUSTED_PROXIES", "CRONLEDGER_METRICS_TOKEN"),
    ("worker",): DATABASE + KEYS + ("CRONLEDGER_WORKER_ID", "CRONLEDGER_HEARTBEAT_FILE"),
    ("health",): ("CRONLEDGER_HEARTBEAT_FILE",),
    ("migrate",): DATABASE,
    ("db-url",): DATABASE,
    ("apikey",): DATABASE,
    ("apikey", "create"): DATABASE,
    ("apikey", "list"): DATABASE,
    ("apikey", "revoke"): DATABASE,
    ("secrets",): (),
    ("secrets", "new-key"): (),
    ("secrets", "rotate-key"): DATABASE + KEYS,
    ("projections",): (),
    ("projections", "rebuild"): DATABASE,
    ("prune",): DATABASE + ("CRONLEDGER_RETENTION_PINGS_DAYS", "CRONLEDGER_RETENTION_RUNS_DAYS"),
    ("db-size",): DATABASE,
    ("apply",): ("CRONLEDGER_URL", "CRONLEDGER_API_KEY"),
    ("export",): ("CRONLEDGER_URL", "CRONLEDGER_API_KEY") + DATABASE,
    ("import",): (),
    ("import", "crontab"): (),
    ("exec",): ("CRONLEDGER_URL", "CRONLEDGER_PING_KEY"),
}


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
              ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, (*path, name))


def test_every_command_is_described() -> None:
    commands = dict(_commands(cli._parser()))
    assert set(commands) == set(EXPECTED)  # a new command must join the table
    for path, parser in commands.items():
        text = parser.format_help()
        assert parser.description and len(parser.description) > 20, path
        for name in EXPECTED[path]:
            assert re.search(rf"^  {name} ", text, re.M), (path, name, text)
        if "DATABASE_URL" in EXPECTED[path]:
            assert "embedded PostgreSQL" in " ".join(text.split()), path


def test_help_names_only_real_settings() -> None:
    """Every variable the help names is read by core/config.py or the CLI, and documented."""
    config = (ROOT / "core" / "config.py").read_text() + (ROOT / "api" / "cli.py").read_text()
    operations = (ROOT / "docs" / "operations.md").read_text()
    for name in cli._ENV:
        assert f'"{name}"' in config.replace("os.environ.get(", ""), name
        assert f"`{name}`" in operations, name


def test_help_defaults_are_the_settings_defaults() -> None:
    serve = " ".join(dict(_commands(cli._parser()))[("serve",)].format_help().split())
    assert "default 127.0.0.1" in serve and "default 8000" in serve
    assert "default 127.0.0.1,::1" in serve


@pytest.fixture
def on_database(shared_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``DATABASE_URL`` set to the shared test database; the SIGTERM handler ``main`` installs
    is put back afterwards."""
    monkeypatch.setenv("DATABASE_URL", shared_dsn)
    previous = signal.getsignal(signal.SIGTERM)
    yield shared_dsn
    signal.signal(signal.SIGTERM, previous)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = cli.main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_apikey_list_and_revoke(on_database: str, capsys: pytest.CaptureFixture[str]) -> None:
    team = f"cli-{uuid.uuid4().hex[:10]}"
    status, first, _ = _run(capsys, "apikey", "create", "--team", team, "--scope", "read",
                            "--name", "ci")
    assert status == 0
    first = first.strip()
    status, second, _ = _run(capsys, "apikey", "create", "--team", team)
    second = second.strip()

    status, out, _ = _run(capsys, "apikey", "list", "--team", team)
    assert status == 0
    header, *rows = out.splitlines()
    assert header.split() == ["ID", "TEAM", "SCOPE", "NAME", "PREFIX", "CREATED", "REVOKED"]
    assert [r.split()[1:5] for r in rows] == [[team, "read", "ci", first[:8]],
                                              [team, "write", "-", second[:8]]]
    assert all(r.split()[-1] == "-" for r in rows)
    for key in (first, second):  # never the key, nor its hash
        assert key not in out and token_hash(key).hex() not in out
    first_id = rows[0].split()[0]

    status, out, err = _run(capsys, "apikey", "revoke", first_id)
    assert (status, err) == (0, "") and first_id in out
    with psycopg.connect(on_database) as conn:
        revoked = conn.execute("SELECT id::text FROM api_keys WHERE key_hash = %s "
                               "AND revoked_at IS NOT NULL", (token_hash(first),)).fetchall()
        active = conn.execute("SELECT count(*) FROM api_keys WHERE key_hash = %s "
                              "AND revoked_at IS NULL", (token_hash(second),)).fetchone()
    assert revoked == [(first_id,)] and active == (1,)
    status, out, _ = _run(capsys, "apikey", "list", "--team", team)
    rows = out.splitlines()[1:]
    assert rows[0].split()[0] == first_id and rows[0].split()[-1] != "-"
    assert rows[1].split()[-1] == "-"

    status, out, err = _run(capsys, "apikey", "revoke", first_id)
    assert status == 1 and out == "" and "already revoked" in err
    unknown = str(uuid.uuid4())
    status, out, err = _run(capsys, "apikey", "revoke", unknown)
    assert status == 1 and out == "" and f"no API key {unknown}" in err

    status, out, _ = _run(capsys, "apikey", "list")  # every team
    assert status == 0 and first_id in out and team in out


def test_apikey_usage_errors(on_database: str, capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["apikey", "revoke", "not-a-uuid"], ["apikey", "revoke"], ["apikey"],
                 ["apikey", "list", "--bogus"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(args)
        assert exc.value.code == 2, args
    status, out, err = _run(capsys, "apikey", "list", "--team", f"none-{uuid.uuid4().hex}")
    assert status == 0 and out == "" and "no API keys" in err


@pytest.mark.parametrize("args", [["--max-age", "-5"], ["--max-age", "0"], ["--max-age", "nan"],
                                  ["--max-age", "x"], ["--timeout", "-1"]])
def test_health_refuses_a_non_positive_duration(args: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["health", *args])
    assert exc.value.code == 2
