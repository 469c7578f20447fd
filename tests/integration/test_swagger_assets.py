"""The API reference pages load nothing from another host: Swagger UI's files are served by
cronledger itself (api/swagger.py, docs/api.md "The OpenAPI document")."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from litestar.testing import AsyncTestClient

CONTENT_TYPES = {".js": "javascript", ".css": "text/css", ".png": "image/png"}


class _Refs(HTMLParser):
    """Every ``src`` and ``href`` of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.refs += [value for name, value in attrs if name in ("src", "href") and value]


def _refs(html: str) -> list[str]:
    parser = _Refs()
    parser.feed(html)
    return parser.refs


@pytest.mark.parametrize("path", ["/schema", "/schema/swagger"])
async def test_the_reference_page_references_no_other_host(api: AsyncTestClient,
                                                            path: str) -> None:
    r = await api.get(path)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    refs = _refs(r.text)
    assert len(refs) == 4  # the bundle, the standalone preset, the stylesheet, the favicon
    assert all(urlsplit(ref).netloc == "" and ref.startswith("/schema/assets/") for ref in refs)
    assert "://" not in r.text.split("<body>", 1)[0]  # nor any other URL in its head


async def test_every_asset_the_page_references_is_served(api: AsyncTestClient) -> None:
    r = await api.get("/schema/swagger")
    for ref in _refs(r.text):
        asset = await api.get(ref)
        assert asset.status_code == 200, ref
        suffix = ref[ref.rfind("."):]
        assert CONTENT_TYPES[suffix] in asset.headers["content-type"], ref
        assert len(asset.content) > 500, ref
    bundle = await api.get("/schema/assets/swagger-ui/swagger-ui-bundle.js")
    assert b"SwaggerUIBundle" in bundle.content


@pytest.mark.parametrize("path", ["/schema/redoc", "/schema/elements", "/schema/rapidoc",
                                  "/schema/assets/swagger-ui/no-such-file.js"])
async def test_the_cdn_pages_are_not_offered(api: AsyncTestClient, path: str) -> None:
    r = await api.get(path)
    assert r.status_code == 404


async def test_the_document_is_still_served(api: AsyncTestClient) -> None:
    json_doc = await api.get("/schema/openapi.json")
    assert json_doc.status_code == 200 and json_doc.json()["info"]["title"] == "cronledger"
    for path in ("/schema/openapi.yaml", "/schema/openapi.yml"):
        yaml_doc = await api.get(path)
        assert yaml_doc.status_code == 200 and "title: cronledger" in yaml_doc.text
    assert "/schema/assets/swagger-ui/{file_path:path}" not in json_doc.json()["paths"]
