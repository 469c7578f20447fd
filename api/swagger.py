"""The API reference pages under ``/schema``, served with no CDN.

Litestar's render plugins load their JavaScript and CSS from jsDelivr by default, so offline
or behind a strict firewall the reference page is blank. Here:

- the Swagger UI assets come from the ``swagger-ui-bundle`` wheel
  (``swagger_ui_bundle.swagger_ui_path``) and are served by cronledger itself at
  :data:`ASSETS_PATH` (:func:`assets_router`, a Litestar static-files router);
- :func:`render_plugins` gives the list ``OpenAPIConfig(render_plugins=...)`` takes: Swagger UI
  at ``/schema`` and ``/schema/swagger`` pointing at those assets (and their favicon), and the
  document itself at ``/schema/openapi.json`` and ``/schema/openapi.yaml`` (``.yml``). ReDoc,
  Stoplight Elements and RapiDoc, which ship no Python package, are not offered.

See docs/api.md ("The OpenAPI document").
"""

from __future__ import annotations

from pathlib import Path

from litestar import Router
from litestar.openapi.plugins import (
    JsonRenderPlugin,
    OpenAPIRenderPlugin,
    SwaggerRenderPlugin,
    YamlRenderPlugin,
)
from litestar.static_files import create_static_files_router
from swagger_ui_bundle import swagger_ui_path

ASSETS_PATH = "/schema/assets/swagger-ui"
"""Where the Swagger UI files are served (one path segment per file of the wheel's folder)."""

ASSETS_DIR = Path(swagger_ui_path)
"""The wheel's folder: the bundle, the standalone preset, the CSS, favicons and source maps."""


def asset_url(name: str) -> str:
    """The local URL of one Swagger UI file, e.g. ``/schema/assets/swagger-ui/swagger-ui.css``."""
    return f"{ASSETS_PATH}/{name}"


def assets_router() -> Router:
    """A router serving :data:`ASSETS_DIR` at :data:`ASSETS_PATH` (GET and HEAD, the file's
    content type by its extension, 404 for a name not in the folder), not in the document."""
    return create_static_files_router(
        path=ASSETS_PATH, directories=[ASSETS_DIR], name="swagger-ui-assets",
        include_in_schema=False)


def render_plugins() -> list[OpenAPIRenderPlugin]:
    """New plugin instances for one application (a plugin adds routes to the app it serves)."""
    return [
        SwaggerRenderPlugin(
            path=["/", "/swagger"],
            js_url=asset_url("swagger-ui-bundle.js"),
            css_url=asset_url("swagger-ui.css"),
            standalone_preset_js_url=asset_url("swagger-ui-standalone-preset.js"),
            favicon=f"<link rel='icon' type='image/png' href='{asset_url('favicon-32x32.png')}'>"),
        JsonRenderPlugin(),
        YamlRenderPlugin(path=["/openapi.yaml", "/openapi.yml"]),
    ]
