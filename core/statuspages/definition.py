"""Validation of a status page definition (the body of ``POST /v1/status-pages``).

A page has a ``title`` (1 to :data:`MAX_TITLE` characters) and its components either by
``tags`` (every live job and monitor of the team carrying one of them, when the page is read)
or by ``components`` (ids of the team's jobs and monitors, at most :data:`MAX_COMPONENTS`, in
the order given, each once: a duplicate is refused), never both. ``names`` gives display names
by component id (1 to :data:`MAX_NAME` characters; a component without one shows its own
name). Texts hold no control or invisible formatting characters (:data:`core.tags.INVISIBLE`,
the tags' rule) and are not blank (:data:`TEXT_PATTERN`). ``path``: an optional custom public
path (:data:`PATH_PATTERN`), unique over every team, never of a key's form
(:data:`KEY_PATTERN`, 32 hexadecimal characters): a URL's last segment is looked up as a key
when it has that form and as a path otherwise (:func:`url_kind`), so the two never collide.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from core.errors import FieldErrors, nul_errors
from core.tags import BLANK, INVISIBLE, normalize_tags

MAX_TITLE = 200
MAX_NAME = 100
MAX_COMPONENTS = 250
PATH_PATTERN = "[a-z0-9][a-z0-9-]{0,62}[a-z0-9]"
_PATH = re.compile(PATH_PATTERN)
PATH_WORDS = "must be 2 to 64 lowercase letters, digits or inner hyphens"
KEY_PATTERN = "[0-9a-f]{32}"  # a minted key (core/statuspages/keys.py:new_key)
_KEY = re.compile(KEY_PATTERN)
KEY_FORM_WORDS = ("must not be 32 hexadecimal characters: that is the form of a page's key, "
                  "which a path may never be taken for")
# A title or display name: no control or invisible formatting character, and at least one
# character that is not blank (core/tags.py:BLANK).
TEXT_PATTERN = f"[^{INVISIBLE}]*[^{BLANK}{INVISIBLE}][^{INVISIBLE}]*"
TEXT_WORDS = ("must be text without control or invisible formatting characters, not blank "
              "(not only spaces or blank-looking characters)")
FIELDS = ("title", "tags", "components", "names", "path")


_TEXT = re.compile(TEXT_PATTERN)
_INVISIBLE = re.compile(f"[{INVISIBLE}]")


def url_kind(segment: str) -> str | None:
    """What the last segment of a public URL can be: ``"key"`` (:data:`KEY_PATTERN`),
    ``"path"`` (:data:`PATH_PATTERN`) or ``None`` (neither: no page, nothing to look up)."""
    if _KEY.fullmatch(segment):
        return "key"
    if _PATH.fullmatch(segment):
        return "path"
    return None


def _text(value: Any, field: str, limit: int, errors: FieldErrors) -> str | None:
    if not isinstance(value, str) or not 1 <= len(value) <= limit:
        errors.add(field, f"must be 1 to {limit} characters")
        return None
    if _INVISIBLE.search(value):
        errors.add(field, "must not contain control or invisible formatting characters")
        return None
    if not _TEXT.fullmatch(value):
        errors.add(field, "must not be blank")
        return None
    return value


def _components(value: Any, errors: FieldErrors) -> list[uuid.UUID]:
    if value is None:
        return []
    if not isinstance(value, list | tuple) or len(value) > MAX_COMPONENTS:
        errors.add("components", f"must be a list of at most {MAX_COMPONENTS} ids")
        return []
    out: list[uuid.UUID] = []
    for n, item in enumerate(value):
        try:
            one = item if isinstance(item, uuid.UUID) else uuid.UUID(str(item))
        except ValueError:
            errors.add(f"components.{n}", "must be the id of a job or monitor")
            continue
        if one in out:
            errors.add(f"components.{n}", f"repeats {one} (components.{out.index(one)}): "
                                          "give each component once")
            continue
        out.append(one)
    return out


def _names(value: Any, errors: FieldErrors) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > MAX_COMPONENTS:
        errors.add("names", f"must be an object of at most {MAX_COMPONENTS} display names "
                            "by component id")
        return {}
    out: dict[str, str] = {}
    for key, name in value.items():
        try:
            one = str(key if isinstance(key, uuid.UUID) else uuid.UUID(str(key)))
        except ValueError:
            errors.add(f"names.{key}", "is not the id of a job or monitor: names are keyed "
                                       "by component id")
            continue
        text = _text(name, f"names.{one}", MAX_NAME, errors)
        if text is not None:
            out[one] = text
    return out


def normalize_page(fields: dict[str, Any]) -> dict[str, Any]:
    """The canonical definition of ``fields`` (keys of :data:`FIELDS`; absent ones are empty):
    ``{"title": str, "tags": [str], "components": [UUID], "names": {str(UUID): str},
    "path": str | None}``.

    Raises:
        InvalidInput: every problem found, by field (``components.3``, ``names.<id>`` …);
            ``tags`` and ``components`` both given, or neither.
    """
    errors = FieldErrors()
    for problem in nul_errors({k: v for k, v in fields.items() if isinstance(v, str | dict)}):
        errors.add(problem.field, problem.message)
    errors.raise_if_any()
    title = _text(fields.get("title"), "title", MAX_TITLE, errors)
    tags = normalize_tags(fields.get("tags"), errors)
    components = _components(fields.get("components"), errors)
    names = _names(fields.get("names"), errors)
    if not errors.items and bool(tags) == bool(components):
        errors.add("components", "give either `tags` or `components` (ids of jobs and "
                                 "monitors), not both" if tags else
                   "give `tags` or `components` (ids of jobs and monitors): a page needs "
                   "at least one component")
    if components and names:
        for key in names:
            if uuid.UUID(key) not in components:
                errors.add(f"names.{key}", "is not one of `components`")
    path = fields.get("path")
    if path is not None and (not isinstance(path, str) or not _PATH.fullmatch(path)):
        errors.add("path", PATH_WORDS)
    elif path is not None and _KEY.fullmatch(path):
        errors.add("path", KEY_FORM_WORDS)
    errors.raise_if_any()
    assert title is not None
    return {"title": title, "tags": tags, "components": components, "names": names,
            "path": path}
