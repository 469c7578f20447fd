"""The dashboard's error pages: a failing page is the 500 page in the dashboard's style, with
no internals; a missing session is a redirect to sign-in (docs/dashboard-code.md)."""

from __future__ import annotations

from litestar import Litestar, Router, get
from litestar.testing import TestClient

from api.ui import template_config
from api.ui.auth import SignInRequired
from api.ui.errors import EXCEPTION_HANDLERS
from core.clock import SystemClock


@get("/ui/boom")
async def boom() -> None:
    raise RuntimeError("secret internals /etc/passwd")


@get("/ui/private")
async def private() -> None:
    raise SignInRequired("/ui/private?x=1")


def _app() -> Litestar:
    app = Litestar([Router("/", route_handlers=[boom, private],
                           exception_handlers=EXCEPTION_HANDLERS)],
                   template_config=template_config())
    app.state.clock = SystemClock()
    return app


def test_an_internal_error_is_the_500_page_without_internals() -> None:
    with TestClient(_app()) as client:
        answer = client.get("/ui/boom")
    assert answer.status_code == 500
    assert answer.headers["content-type"].startswith("text/html")
    assert "Internal server error" in answer.text and "dashboard.css" in answer.text
    assert "secret internals" not in answer.text and "Traceback" not in answer.text


def test_a_missing_session_redirects_to_sign_in() -> None:
    with TestClient(_app()) as client:
        answer = client.get("/ui/private", follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/ui/signin?next=/ui/private%3Fx%3D1"
