"""The web dashboard (docs/dashboard-code.md): server-rendered pages at ``/`` and
``/ui/…``, calling ``core/`` directly.

To add a page group: write ``api/ui/pages/<group>.py`` with Litestar handlers and a
``ROUTES`` list (see :mod:`api.ui.render` for the handler pattern), its templates in
``api/ui/templates/``, and add the module's name to :data:`PAGE_MODULES`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from litestar import Router
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig

from api.ui.errors import EXCEPTION_HANDLERS
from api.ui.render import configure

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
STATIC_PATH = "/ui/static"

PAGE_MODULES = (  # one line per page group: api/ui/pages/<name>.py, its ROUTES
    "signin",
    "overview",
    "jobs",
    "monitors",
    "channels",
    "secrets",
    "maintenance",
    "alerts",
    "advice",
    "apikeys",
    "events",
    "statuspages",
    "status",  # the public status pages (no session)
    "errors",  # last: its catch-all answers unknown /ui/ paths with the 404 page
)


def template_config() -> TemplateConfig[JinjaTemplateEngine]:
    """Jinja over ``api/ui/templates``, autoescape on for every template."""
    environment = Environment(loader=FileSystemLoader(TEMPLATES),
                              autoescape=select_autoescape(default=True,
                                                           default_for_string=True),
                              trim_blocks=True, lstrip_blocks=True)
    configure(environment)
    return TemplateConfig(instance=JinjaTemplateEngine.from_environment(environment))


def ui_router() -> Router:
    """Every dashboard page and its static files, with the HTML error handlers."""
    handlers: list[Any] = []
    for name in PAGE_MODULES:
        handlers.extend(importlib.import_module(f"api.ui.pages.{name}").ROUTES)
    static = create_static_files_router(path=STATIC_PATH, directories=[STATIC],
                                        include_in_schema=False, name="ui_static")
    return Router(path="/", route_handlers=[*handlers, static], include_in_schema=False,
                  exception_handlers=EXCEPTION_HANDLERS)
