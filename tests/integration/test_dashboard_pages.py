"""Dashboard pages through the ASGI test client: the job form with the API's messages, the
actions and their CSRF / scope checks, hostile text rendered inert (docs/dashboard-code.md)."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import AsyncTestClient

from core.db import ConnectionPool
from core.errors import FieldErrors
from core.jobs.definition import normalize_confirm
from core.tags import normalize_tags
from tests.integration.test_dashboard_auth import sign_in
from tests.teams import Team

HOSTILE = "<img src=x onerror=alert(1)> \"quoted\" 'single' </td><script>alert(2)</script>"


def _form(**overrides: str) -> dict[str, str]:
    fields = {"name": "nightly", "schedule": "0 3 * * *", "timezone": "Europe/Berlin",
              "request.method": "POST", "request.url": "https://example.com/hook",
              "request.headers": "X-Token: ${secrets.TOKEN}", "request.body": "{}",
              "timeout_seconds": "30", "retry.attempts": "3", "retry.backoff": "exponential",
              "retry.delay_seconds": "10", "retry.max_delay_seconds": "300", "overlap": "skip",
              "catchup": "latest", "success_statuses": "", "channels": "",
              "alert_after_failures": "1", "realert_every": "", "signing_secret": ""}
    return {**fields, **overrides}


async def _jobs(api: AsyncTestClient, team: Team) -> list[dict[str, Any]]:
    return (await api.get("/v1/jobs", headers=team.auth)).json()["items"]


async def test_a_job_created_through_the_form_is_the_apis_job(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    answer = await frozen_api.post("/ui/jobs/new", data={"csrf": csrf, **_form()},
                                   follow_redirects=False)
    assert answer.status_code == 303, answer.text
    [job] = await _jobs(frozen_api, team)
    assert answer.headers["location"] == f"/ui/jobs/{job['id']}"
    assert job["request"]["headers"] == {"X-Token": "${secrets.TOKEN}"}
    assert job["retry"]["attempts"] == 3 and job["timezone"] == "Europe/Berlin"
    page = await frozen_api.get(f"/ui/jobs/{job['id']}")
    assert page.status_code == 200
    assert "At 03:00" in page.text or "03:00" in page.text
    assert ">Run now</button>" in page.text
    listing = await frozen_api.get("/ui/jobs?name=NIGHT&state=active")
    assert f"/ui/jobs/{job['id']}" in listing.text
    assert f"/ui/jobs/{job['id']}" not in (await frozen_api.get("/ui/jobs?state=paused")).text


async def test_the_form_shows_the_apis_messages_next_to_the_fields(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    answer = await frozen_api.post("/ui/jobs/new", data={"csrf": csrf, **_form(
        schedule="61 * * * *", timeout_seconds="soon", **{"request.url": "ftp://x"})})
    assert answer.status_code == 422
    api = await frozen_api.post("/v1/jobs", headers=team.auth, json={
        "name": "x", "schedule": "61 * * * *", "request": {"url": "https://example.com/"}})
    [schedule_error] = [e["message"] for e in api.json()["errors"] if e["field"] == "schedule"]
    text = answer.text
    assert re.search(r'id="err-schedule">' + re.escape(schedule_error.replace("'", "&#39;")),
                     text), text
    assert 'id="err-timeout_seconds">must be a number' in text
    assert 'id="err-request-url">' in text
    assert 'value="ftp://x"' in text  # the typed values are kept
    assert await _jobs(frozen_api, team) == []


async def test_a_number_beyond_a_floats_range_in_the_form_is_a_field_error(
        frozen_api: AsyncTestClient, team: Team) -> None:
    """Issue 32 (outside test) asked the forms too: ``1e400``, ``inf``, ``nan`` in a number
    field are that field's error (the core refuses non-finite numbers), never a 500."""
    csrf = await sign_in(frozen_api, team.write)
    for field, text in (("timeout_seconds", "1e400"), ("retry.delay_seconds", "-1e400"),
                        ("timeout_seconds", "inf"), ("alert_after_failures", "nan")):
        answer = await frozen_api.post("/ui/jobs/new", data={"csrf": csrf,
                                                             **_form(**{field: text})})
        assert answer.status_code == 422, (field, text, answer.text)
        assert f'id="err-{field.replace(".", "-")}">' in answer.text, (field, text)
    assert await _jobs(frozen_api, team) == []


async def test_the_preview_follows_the_schedule(frozen_api: AsyncTestClient,
                                                team: Team) -> None:
    await sign_in(frozen_api, team.read)
    spring = await frozen_api.get("/ui/schedules/preview",
                                  params={"schedule": "30 2 * * *", "timezone": "Europe/Berlin"})
    assert spring.status_code == 200 and spring.text.count("<li>") == 10
    bad = await frozen_api.get("/ui/schedules/preview", params={"schedule": "61 * * * *"})
    assert 'class="field-error"' in bad.text


async def test_actions_need_the_csrf_token_and_a_write_key(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    created = await frozen_api.post("/v1/jobs", headers=team.auth, json={
        "name": "j", "schedule": "@every 1h", "request": {"url": "https://example.com/"}})
    job_id = created.json()["id"]
    csrf = await sign_in(frozen_api, team.write)
    forged = await frozen_api.post(f"/ui/jobs/{job_id}/pause", data={})
    assert forged.status_code == 403
    wrong = await frozen_api.post(f"/ui/jobs/{job_id}/pause", data={"csrf": "0" * 64})
    assert wrong.status_code == 403
    assert (await frozen_api.get(f"/v1/jobs/{job_id}", headers=team.auth)).json()[
        "status"] == "active"
    paused = await frozen_api.post(f"/ui/jobs/{job_id}/pause", data={"csrf": csrf},
                                   follow_redirects=False)
    assert paused.status_code == 303
    assert (await frozen_api.get(f"/v1/jobs/{job_id}", headers=team.auth)).json()[
        "status"] == "paused"
    frozen_api.cookies.clear()
    read_csrf = await sign_in(frozen_api, team.read)
    page = await frozen_api.get(f"/ui/jobs/{job_id}")
    assert "Resume</button>" not in page.text and "Run now" not in page.text
    refused = await frozen_api.post(f"/ui/jobs/{job_id}/resume", data={"csrf": read_csrf})
    assert refused.status_code == 403 and "read-only" in refused.text
    refused = await frozen_api.post("/ui/jobs/new", data={"csrf": read_csrf, **_form()})
    assert refused.status_code == 403
    assert (await frozen_api.get(f"/ui/jobs/{job_id}/edit")).status_code == 403
    assert (await frozen_api.get("/ui/jobs/new")).status_code == 403
    refused = await frozen_api.post(f"/ui/jobs/{job_id}/edit", data={
        "csrf": read_csrf, **_form(name="renamed")})
    assert refused.status_code == 403
    assert (await frozen_api.get(f"/v1/jobs/{job_id}", headers=team.auth)).json()[
        "status"] == "paused"
    assert len(await _jobs(frozen_api, team)) == 1


async def test_hostile_names_and_bodies_render_as_text(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    created = await frozen_api.post("/v1/jobs", headers=team.auth, json={
        "name": HOSTILE, "schedule": "@every 1h",
        "request": {"url": "https://example.com/", "body": HOSTILE + "x" * 200_000}})
    job_id = created.json()["id"]
    await sign_in(frozen_api, team.read)
    for path in ("/", "/ui/jobs", f"/ui/jobs/{job_id}"):
        text = (await frozen_api.get(path)).text
        assert "<img src=x" not in text and "<script>alert" not in text, path
    text = (await frozen_api.get(f"/ui/jobs/{job_id}")).text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text


async def test_the_edit_form_changes_the_job_and_keeps_the_signing_secret(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    created = await frozen_api.post("/ui/jobs/new", data={"csrf": csrf, **_form(
        signing_secret="s" * 32)}, follow_redirects=False)
    [job] = await _jobs(frozen_api, team)
    assert created.status_code == 303 and job["signing"] is True
    form = await frozen_api.get(f"/ui/jobs/{job['id']}/edit")
    assert 'value="nightly"' in form.text and "s" * 32 not in form.text
    saved = await frozen_api.post(f"/ui/jobs/{job['id']}/edit", data={
        "csrf": csrf, "version": str(job["version"]), **_form(name="renamed",
                                                                schedule="*/5 * * * *")},
        follow_redirects=False)
    assert saved.status_code == 303, saved.text
    [after] = await _jobs(frozen_api, team)
    assert after["name"] == "renamed" and after["schedule"] == "*/5 * * * *"
    assert after["signing"] is True
    history = (await frozen_api.get(f"/ui/jobs/{job['id']}")).text
    assert '<li class="del">- name: &#34;nightly&#34;</li>' in history
    assert '<li class="add">+ name: &#34;renamed&#34;</li>' in history
    stale = await frozen_api.post(f"/ui/jobs/{job['id']}/edit", data={
        "csrf": csrf, "version": str(job["version"]), **_form(name="again")})
    assert stale.status_code == 409


async def test_bad_list_queries_are_answered_not_failed(frozen_api: AsyncTestClient,
                                                        team: Team) -> None:
    await sign_in(frozen_api, team.read)
    assert (await frozen_api.get("/ui/jobs", params={"name": "a\x00b"})).status_code == 200
    assert (await frozen_api.get("/ui/jobs", params={"state": "nope"})).status_code == 422
    assert (await frozen_api.get("/ui/jobs", params={"cursor": "garbage"})).status_code == 422
    preview = await frozen_api.get("/ui/schedules/preview", params={
        "schedule": "* * * * *\x00", "timezone": "Nowhere/\x00"})
    assert preview.status_code == 200 and "field-error" in preview.text


async def test_tags_confirm_and_words_go_through_the_form_and_back(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    new = await frozen_api.get("/ui/jobs/new")
    assert '<label for="f-tags">Tags</label>' in new.text
    assert '<label for="f-confirm-timeout_seconds">Confirmation timeout (seconds)</label>' \
        in new.text
    created = await frozen_api.post("/ui/jobs/new", data={"csrf": csrf, **_form(
        schedule="every day at 9am", tags="billing, nightly  eu,billing",
        **{"confirm.timeout_seconds": "600"})}, follow_redirects=False)
    assert created.status_code == 303, created.text
    [job] = await _jobs(frozen_api, team)
    assert job["tags"] == ["billing", "nightly", "eu"]
    assert job["confirm"] == {"timeout_seconds": 600}
    assert job["schedule"] == "0 9 * * *" and job["schedule_text"] == "every day at 9am"
    shown = (await frozen_api.get(f"/ui/jobs/{job['id']}")).text
    assert '<span class="schedule-text">every day at 9am</span>: <code>0 9 * * *</code>' in shown
    assert '<span class="tag">billing</span>' in shown and "within 10 min" in shown
    form = (await frozen_api.get(f"/ui/jobs/{job['id']}/edit")).text
    assert 'name="tags" type="text" value="billing nightly eu"' in form
    assert 'name="confirm.timeout_seconds" type="text" value="600"' in form
    assert 'name="schedule" type="text" value="every day at 9am"' in form
    assert '<code class="canonical">0 9 * * *</code>' in form  # the preview's canonical form
    saved = await frozen_api.post(f"/ui/jobs/{job['id']}/edit", data={
        "csrf": csrf, "version": str(job["version"]), **_form(
            schedule="every day at 9am", tags="eu", **{"confirm.timeout_seconds": ""})},
        follow_redirects=False)
    assert saved.status_code == 303, saved.text
    [after] = await _jobs(frozen_api, team)
    assert after["tags"] == ["eu"] and after["confirm"] is None
    assert after["schedule_text"] == "every day at 9am"
    assert "none: a 2xx is the outcome" in (await frozen_api.get(f"/ui/jobs/{job['id']}")).text


async def test_a_bad_tag_or_timeout_is_the_cores_message_at_its_field(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    answer = await frozen_api.post("/ui/jobs/new", data={"csrf": csrf, **_form(
        tags="fine bad/tag", **{"confirm.timeout_seconds": "0"})})
    assert answer.status_code == 422
    core = FieldErrors()
    normalize_tags(["bad/tag"], core)
    normalize_confirm({"timeout_seconds": 0}, core)
    messages = {e.field: e.message for e in core.items}
    assert set(messages) == {"tags[0]", "confirm.timeout_seconds"}
    assert ('id="err-tags">&#39;bad/tag&#39;: ' + messages["tags[0]"]) in answer.text
    assert f'id="err-confirm-timeout_seconds">{messages["confirm.timeout_seconds"]}' \
        in answer.text
    assert 'id="f-tags" name="tags" aria-invalid="true"' in answer.text
    assert 'value="fine bad/tag"' in answer.text
    assert await _jobs(frozen_api, team) == []


async def test_a_bad_runs_cursor_is_named_runs_and_said_once(
        frozen_api: AsyncTestClient, team: Team) -> None:
    """Issue 32 (outside test): ``?runs=²`` answered a 422 naming ``cursor``, and the error
    page said its message twice ("cursor: is not a valid cursor…: cursor: is not …")."""
    made = await frozen_api.post("/v1/jobs", headers=team.auth, json={
        "name": "cursor", "schedule": "1h", "request": {"url": "https://example.com/"}})
    assert made.status_code == 201, made.text
    await sign_in(frozen_api, team.read)
    for bad in ("²", "-1", "abc"):
        answer = await frozen_api.get(f"/ui/jobs/{made.json()['id']}", params={"runs": bad})
        assert answer.status_code == 422, (bad, answer.text)
        assert answer.text.count("is not a valid cursor") == 1, answer.text
        assert "runs: is not a valid cursor" in answer.text
        assert "cursor: is not" not in answer.text.replace("runs: is not", "")
    page = await frozen_api.get("/ui/jobs?cursor=abc")
    assert page.status_code == 422 and page.text.count("is not a valid cursor") == 1
