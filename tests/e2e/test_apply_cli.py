"""``cronledger serve --config``, ``apply``, ``export`` and ``import crontab`` as real processes
against a running server: exit statuses, plans, file:line errors, the export round trip."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import TEST_SECRET_KEY
from tests.processes import ROOT, cronledger, free_port, run_cli, stop, wait_http

CONFIG = """\
[[channels]]
name = "hook"
kind = "webhook"
url = "https://hooks.example.com/cronledger"

[[monitors]]
name = "backup"
schedule = "0 3 * * *"
timezone = "Europe/Paris"
channels = ["hook"]

[[jobs]]
name = "report"
schedule = "0 9 * * 1-5"
timezone = "America/New_York"
channels = ["hook"]

[jobs.request]
method = "POST"
url = "https://example.com/report"

[jobs.retry]
attempts = 3
backoff = "linear"

[[jobs]]
name = "once"
schedule = "@at 2099-06-01T12:00:00Z"
enabled = false
request = { url = "https://example.com/once" }
"""

BROKEN = """\
[[jobs]]
name = "fine"
schedule = "1h"
request = { url = "https://example.com/" }

[[jobs]]
name = "bad"
schedule = "99 * * * *"

[jobs.request]
url = "https://example.com/"
colour = "red"
"""


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "api.cli", *args], cwd=ROOT,
                          env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=120)


async def test_serve_config_then_apply_export_round_trip(fresh_dsn: str, tmp_path: Path) -> None:
    port = free_port()
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_PORT": str(port),
           "CRONLEDGER_SECRET_KEY": TEST_SECRET_KEY}
    config = tmp_path / "cronledger.toml"
    config.write_text(CONFIG)
    log = tmp_path / "serve.log"
    server = cronledger("serve", "--config", str(config), env=env, log=log)
    try:
        await asyncio.to_thread(wait_http, f"http://127.0.0.1:{port}/readyz")
        text = log.read_text()
        assert "+ create job 'report'" in text and "+ create monitor 'backup'" in text
        assert "cronledger.toml:4: warning: channels.0.url: looks like a literal secret" in text
        key = run_cli("apikey", "create", "--team", "default", env=env).strip()
        client = {**env, "CRONLEDGER_URL": f"http://127.0.0.1:{port}", "CRONLEDGER_API_KEY": key}

        again = await asyncio.to_thread(_cli, "apply", "-f", str(config), env=client)
        assert again.returncode == 0, again.stderr
        assert again.stdout.splitlines()[-1] == "nothing to do: 4 unchanged"

        changed = tmp_path / "changed.toml"
        changed.write_text(CONFIG.replace('"0 3 * * *"', '"0 4 * * *"'))
        dry = await asyncio.to_thread(_cli, "apply", "-f", str(changed), "--dry-run",
                                      env=client)
        assert dry.returncode == 0, dry.stderr
        assert "~ update monitor 'backup'\n    schedule: '0 3 * * *' -> '0 4 * * *'" in dry.stdout
        assert dry.stdout.splitlines()[-1] == "dry run: 1 to update, 3 unchanged; nothing applied"
        done = await asyncio.to_thread(_cli, "apply", "-f", str(changed), env=client)
        assert done.stdout.splitlines()[-1] == "applied: 1 to update, 3 unchanged"

        exported = await asyncio.to_thread(_cli, "export", env=client)
        assert exported.returncode == 0, exported.stderr
        assert "hooks.example.com" not in exported.stdout  # sealed: never exported
        assert 'timezone = "America/New_York"' in exported.stdout
        export_file = tmp_path / "export.toml"
        export_file.write_text(exported.stdout)
        round_trip = await asyncio.to_thread(_cli, "apply", "-f", str(export_file), env=client)
        assert round_trip.returncode == 0, round_trip.stderr
        assert round_trip.stdout.splitlines()[-1] == "nothing to do: 4 unchanged"
        local = await asyncio.to_thread(_cli, "export", "--team", "default", env=env)
        assert local.stdout.split("\n", 1)[1] == exported.stdout.split("\n", 1)[1]

        broken = tmp_path / "broken.toml"
        broken.write_text(BROKEN)
        refused = await asyncio.to_thread(_cli, "apply", "-f", str(broken), env=client)
        assert refused.returncode == 1
        assert f"{broken}:8: jobs.1.schedule:" in refused.stderr
        assert f"{broken}:12: jobs.1.request.colour: is not a known field" in refused.stderr
        assert "refused, nothing applied" in refused.stderr
        syntax = tmp_path / "syntax.toml"
        syntax.write_text('[[jobs]]\nname = "x"\nschedule = \n')
        bad_toml = await asyncio.to_thread(_cli, "apply", "-f", str(syntax), env=client)
        assert bad_toml.returncode == 1 and f"{syntax}:3:" in bad_toml.stderr

        no_key = await asyncio.to_thread(_cli, "apply", "-f", str(config),
                                         env={**client, "CRONLEDGER_API_KEY": ""})
        assert no_key.returncode == 2 and "CRONLEDGER_API_KEY" in no_key.stderr
        missing = await asyncio.to_thread(_cli, "apply", "-f", str(tmp_path / "nope.toml"),
                                          env=client)
        assert missing.returncode == 2
        usage = await asyncio.to_thread(_cli, "apply", env=client)
        assert usage.returncode == 2

        crontab = await asyncio.to_thread(
            _cli, "import", "crontab", str(ROOT / "tests/data/crontabs/debian-etc-crontab"),
            "-o", str(tmp_path / "imported.toml"), env=client)
        assert crontab.returncode == 0, crontab.stderr
        assert "0 jobs and 4 monitors written" in crontab.stderr
        imported = await asyncio.to_thread(_cli, "apply", "-f", str(tmp_path / "imported.toml"),
                                           "--dry-run", "--prune", env=client)
        assert imported.returncode == 0, imported.stderr
        assert "+ create monitor 'cd-run-parts-report-etc-cron-hourly'" in imported.stdout
        assert "- delete job 'report'" in imported.stdout
    finally:
        code = await asyncio.to_thread(stop, server)
    assert code == 0, log.read_text()[-3000:]
    assert "Traceback" not in log.read_text()


async def test_serve_refuses_a_bad_config(fresh_dsn: str, tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(BROKEN)
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_PORT": str(free_port()),
           "CRONLEDGER_CONFIG": str(config)}
    done = await asyncio.to_thread(_cli, "serve", env=env)
    assert done.returncode == 1
    assert f"{config}:8: jobs.1.schedule:" in done.stderr
