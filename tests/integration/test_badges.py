"""Badges and the per-team metrics (docs/healthchecks.md): the worst status of the tagged
checks, as SVG (valid XML, computed widths), JSON and shields.io's format; promtool accepts
both metrics endpoints."""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from litestar.testing import AsyncTestClient

from core.badges import svg, text_width
from tests.teams import Team

SVG = "{http://www.w3.org/2000/svg}"


async def _badge_key(api: AsyncTestClient, team: Team) -> str:
    r = await api.get("/v1/team", headers=team.auth)
    assert r.status_code == 200
    return r.json()["badge_key"]


async def _monitor(api: AsyncTestClient, team: Team, name: str, tags: list[str]) -> str:
    r = await api.post("/v1/monitors", json={"name": name, "schedule": "1h", "tags": tags},
                       headers=team.auth)
    assert r.status_code == 201, r.text
    assert r.json()["tags"] == tags
    return r.json()["ping_url"]


def test_text_widths_follow_healthchecks() -> None:
    assert text_width("mm") == 20 and text_width("@") == 7 and text_width("up") == 14
    root = ET.fromstring(svg('a<b&"c', "down"))
    assert root.get("width") == str(text_width('a<b&"c') + 10 + text_width("down") + 10)
    assert [t.text for t in root.iter(f"{SVG}text")][:2] == ['a<b&"c', 'a<b&"c']


async def test_badge_shows_the_worst_status_of_the_tag(api: AsyncTestClient,
                                                       team: Team) -> None:
    key = await _badge_key(api, team)
    db = await _monitor(api, team, "db backup", ["db", "nightly"])
    web = await _monitor(api, team, "web", ["web"])
    assert (await api.get(db.replace("http://testserver.local", ""))).status_code == 200
    r = await api.get(f"/badge/{key}/db.svg")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert "max-age" in r.headers["cache-control"]
    root = ET.fromstring(r.content)
    assert [t.text for t in root.iter(f"{SVG}text")][2] == "up"
    await api.get(web.replace("http://testserver.local", "") + "/fail")
    assert (await api.get(f"/badge/{key}/db.json")).json() == {
        "status": "up", "total": 1, "grace": 0, "down": 0}
    assert (await api.get(f"/badge/{key}/*.json")).json() == {
        "status": "down", "total": 2, "grace": 0, "down": 1}
    assert (await api.get(f"/badge/{key}/web-2.shields")).json() == {
        "schemaVersion": 1, "label": "web", "message": "down", "color": "critical"}
    root = ET.fromstring((await api.get(f"/badge/{key}/*.svg")).content)
    assert [t.text for t in root.iter(f"{SVG}text")][2] == "down"
    assert (await api.get(f"/badge/{key}/nothing.json")).json()["status"] == "up"
    assert (await api.get(f"/badge/{'x' * 22}/db.svg")).status_code == 404
    assert (await api.get(f"/badge/{key}/db.png")).status_code == 404


def _promtool(text: bytes) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool is missing in CI")
        pytest.skip("promtool is not installed: apt-get install prometheus")
    done = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                          check=False)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()


async def test_promtool_accepts_both_metrics_endpoints(api: AsyncTestClient,
                                                       team: Team) -> None:
    key = await _badge_key(api, team)
    await _monitor(api, team, "queue", ["ops", "queue"])
    service = await api.get("/metrics")
    assert service.status_code == 200
    for name in ("cronledger_runs_total", "cronledger_pings_total",
                 "cronledger_run_duration_seconds_bucket", "cronledger_monitors",
                 "cronledger_projector_lag_events"):
        assert name in service.text, name
    _promtool(service.content)
    per_team = await api.get(f"/metrics/team/{key}")
    assert per_team.status_code == 200
    assert 'hc_check_up{name="queue",tags="ops queue",unique_key="' in per_team.text
    assert 'hc_tag_up{tag="ops"} 1.0' in per_team.text
    _promtool(per_team.content)
    own = await api.get("/metrics/team", headers=team.read_auth)
    assert own.status_code == 200 and own.text == per_team.text
    assert (await api.get("/metrics/team/" + "y" * 22)).status_code == 404


async def test_jobs_carry_tags_into_badges(api: AsyncTestClient, team: Team) -> None:
    r = await api.post("/v1/jobs", json={
        "name": "report", "schedule": "0 3 * * *", "tags": ["reports"],
        "request": {"method": "GET", "url": "http://127.0.0.1:9/"}}, headers=team.auth)
    assert r.status_code == 201, r.text
    assert r.json()["tags"] == ["reports"]
    job = r.json()
    r = await api.patch(f"/v1/jobs/{job['id']}", json={"tags": ["reports", "daily"]},
                        headers=team.auth)
    assert r.status_code == 200 and r.json()["tags"] == ["reports", "daily"]
    events = (await api.get(f"/v1/jobs/{job['id']}/events", headers=team.auth)).json()
    assert events["items"][-1]["data"]["changes"]["tags"] == ["reports", "daily"]
    key = await _badge_key(api, team)
    assert (await api.get(f"/badge/{key}/daily.json")).json() == {
        "status": "up", "total": 1, "grace": 0, "down": 0}
    r = await api.post("/v1/jobs", json={
        "name": "bad", "schedule": "0 3 * * *", "tags": ["has space"],
        "request": {"method": "GET", "url": "http://127.0.0.1:9/"}}, headers=team.auth)
    assert r.status_code == 422
