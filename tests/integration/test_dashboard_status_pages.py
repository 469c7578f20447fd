"""Status pages in the dashboard (api/ui/pages/statuspages.py): listed with their public URL,
created by tags or by chosen components with display names, with the API's field messages,
edited, the key rotated, deleted."""

from __future__ import annotations

import re

from litestar.testing import AsyncTestClient

from core.clock import FrozenClock
from core.db import ConnectionPool
from tests.helpers import add_job
from tests.integration.test_dashboard_auth import sign_in
from tests.monitor_helpers import add_monitor
from tests.teams import Team


async def test_a_page_is_created_listed_rotated_and_deleted(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    empty = await frozen_api.get("/ui/status-pages")
    assert empty.status_code == 200 and "No status page yet." in empty.text
    bad = await frozen_api.post("/ui/status-pages", data={
        "csrf": csrf, "title": "Acme", "tags": "", "path": "Bad Path"})
    assert bad.status_code == 422
    assert "give `tags` or `components`" in bad.text and "lowercase letters" in bad.text
    made = await frozen_api.post("/ui/status-pages", data={
        "csrf": csrf, "title": "Acme status", "tags": "public web", "path": ""},
        follow_redirects=False)
    assert made.status_code == 303, made.text
    listing = (await frozen_api.get("/ui/status-pages")).text
    url = re.search(r'<a href="(http[^"]+/status/[0-9a-f]{32})">', listing).group(1)  # type: ignore[union-attr]
    assert "Acme status" in listing and f"created: {url}" in listing
    assert "<code>public</code>" in listing and f'href="{url}/feed.atom"' in listing
    public = url.split("testserver.local")[-1]
    assert (await frozen_api.get(public)).status_code == 200
    page_id = re.search(r"/ui/status-pages/([0-9a-f-]{36})/rotate", listing).group(1)  # type: ignore[union-attr]
    form = await frozen_api.get(f"/ui/status-pages/{page_id}/edit")
    assert form.status_code == 200 and 'value="public web"' in form.text
    refused = await frozen_api.post(f"/ui/status-pages/{page_id}/edit", data={
        "csrf": csrf, "title": "Acme", "tags": "", "path": ""})
    assert refused.status_code == 422 and "give `tags` or `components`" in refused.text
    saved = await frozen_api.post(f"/ui/status-pages/{page_id}/edit", data={
        "csrf": csrf, "title": "Acme, renamed", "tags": "public", "path": "acme-dash"})
    assert saved.status_code == 200 and "Status page saved." in saved.text
    assert "Acme, renamed" in (await frozen_api.get("/status/acme-dash")).text
    rotated = await frozen_api.post(f"/ui/status-pages/{page_id}/rotate", data={"csrf": csrf})
    assert rotated.status_code == 200 and "New public URL minted" in rotated.text
    assert (await frozen_api.get(public)).status_code == 404
    log = await frozen_api.get("/ui/events?stream_type=status_page")
    assert log.status_code == 200
    assert "status_page.created" in log.text and "status_page.updated" in log.text
    deleted = await frozen_api.post(f"/ui/status-pages/{page_id}/delete", data={"csrf": csrf})
    assert "Status page deleted." in deleted.text and "No status page yet." in deleted.text


async def test_components_and_display_names_are_chosen_in_the_dashboard(
        frozen_api: AsyncTestClient, pool: ConnectionPool, team: Team,
        clock: FrozenClock) -> None:
    """By choice: ticked jobs and monitors with display names, the API's messages at their
    fields (a name for a component not ticked, tags and components both, a name too long),
    nothing changed by a refused form; then edited (another component, another name) and
    switched to tags and back."""
    actor = team.actor
    job = await add_job(pool, actor, clock.now(), "https://internal.example.com/x",
                        name="nightly-db-internal")
    monitor, _ = await add_monitor(pool, actor, clock.now(), name="hb-queue-internal")
    other, _ = await add_monitor(pool, actor, clock.now(), name="hb-other-internal")
    csrf = await sign_in(frozen_api, team.write)
    listing = (await frozen_api.get("/ui/status-pages")).text
    assert 'aria-label="Show nightly-db-internal"' in listing
    assert 'aria-label="Display name for hb-queue-internal"' in listing
    base = {"csrf": csrf, "title": "Acme", "tags": "", "path": ""}
    refused = await frozen_api.post("/ui/status-pages", data={
        **base, "components": [str(job)], f"name-{monitor}": "Queue",
        f"name-{job}": "x" * 101})
    assert refused.status_code == 422
    assert "is not one of `components`" in refused.text
    assert "must be 1 to 100 characters" in refused.text
    assert f'value="{job}" aria-label="Show nightly-db-internal" checked' in refused.text
    both = await frozen_api.post("/ui/status-pages", data={
        **base, "tags": "public", "components": [str(job)]})
    assert both.status_code == 422 and "give either `tags` or `components`" in both.text
    assert "No status page yet." in (await frozen_api.get("/ui/status-pages")).text
    made = await frozen_api.post("/ui/status-pages", data={
        **base, "path": "acme-choice", "components": [str(monitor), str(job)],
        f"name-{monitor}": "Queue", f"name-{job}": "Backups"}, follow_redirects=False)
    assert made.status_code == 303, made.text
    public = (await frozen_api.get("/status/acme-choice")).text
    assert "Queue" in public and "Backups" in public and "internal" not in public
    assert public.index("Queue") < public.index("Backups")  # the order ticked
    listing = (await frozen_api.get("/ui/status-pages")).text
    page_id = re.search(r"/ui/status-pages/([0-9a-f-]{36})/edit", listing).group(1)  # type: ignore[union-attr]
    form = (await frozen_api.get(f"/ui/status-pages/{page_id}/edit")).text
    assert f'value="{monitor}" aria-label="Show hb-queue-internal" checked' in form
    assert f'value="{other}" aria-label="Show hb-other-internal">' in form
    assert 'value="Backups"' in form
    saved = await frozen_api.post(f"/ui/status-pages/{page_id}/edit", data={
        **base, "path": "acme-choice", "components": [str(job), str(other)],
        f"name-{job}": "Nightly backups", f"name-{other}": "Search"})
    assert saved.status_code == 200 and "Status page saved." in saved.text
    public = (await frozen_api.get("/status/acme-choice")).text
    assert "Nightly backups" in public and "Search" in public and "Queue" not in public
    tagged = await frozen_api.post(f"/ui/status-pages/{page_id}/edit", data={
        **base, "path": "acme-choice", "tags": "nothing-tagged-so"})
    assert "Status page saved." in tagged.text
    assert "No components to show." in (await frozen_api.get("/status/acme-choice")).text
