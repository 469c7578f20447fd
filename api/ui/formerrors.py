"""The API's messages placed next to the fields of a dashboard form.

Every rule and message is the core's (the same as the JSON API's); this module only decides at
which form field a message is shown: ``schedule`` for ``schedule``, ``request`` for
``request.url``, ``tags`` for ``tags[2]`` (naming the tag, :mod:`api.ui.tagfield`), and the
field a 409 is about (a name or a slug already taken).
"""

from __future__ import annotations

from api.ui.tagfield import place_tag_errors
from core.errors import Conflict, InvalidInput


def field_errors(exc: InvalidInput, tags: list[str] | None = None) -> dict[str, str]:
    """``{form field: message}`` of a 422 (several messages of one field joined by ``; ``)."""
    errors: dict[str, str] = {}
    for e in place_tag_errors(exc.errors, tags or []):
        field = e.field.split(".")[0].split("[")[0]
        errors[field] = f"{errors[field]}; {e.message}" if field in errors else e.message
    return errors


def conflict_errors(exc: Conflict) -> dict[str, str]:
    """A 409's message at the field it is about (a name or a slug already taken), for a form
    shown again with it; ``{}`` when it is about no one field."""
    for field in ("slug", "name"):
        if field in exc.detail:
            return {field: exc.detail}
    return {}
