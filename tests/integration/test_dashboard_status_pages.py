"""Status pages in the dashboard (api/ui/pages/statuspages.py): listed with their public URL,
created by tags with the API's field messages, the key rotated, deleted."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import AsyncTestClient

from tests.integration.test_dashboard_auth import sign_in


async def test_a_page_is_created_listed_rotated_and_deleted(
        frozen_api: AsyncTestClient, team: dict[str, Any]) -> None:
    csrf = await sign_in(frozen_api, team["write"])
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
