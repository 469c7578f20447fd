"""The dashboard forms' tags field: one text of space- or comma-separated words to the
``tags`` list of the API, and the core's messages about them back to that field.

The rule for a tag is :mod:`core.tags`' alone; this module only splits the text and names the
tag a message is about (the core reports ``tags[2]``, the form shows ``"a/b": <message>``).
"""

from __future__ import annotations

import re
from typing import Any

from core.errors import FieldError

_SEPARATORS = re.compile(r"[\s,]+")
_INDEXED = re.compile(r"tags\[(\d+)\]")


def parse_tags(text: str) -> list[str]:
    """The words of ``text`` split at spaces, line breaks and commas, in order (empty: [])."""
    return [word for word in _SEPARATORS.split(text) if word]


def tags_text(tags: Any) -> str:
    """A stored tag list as the field's text (space-separated)."""
    return " ".join(str(t) for t in tags or [])


def place_tag_errors(errors: list[FieldError], tags: list[str]) -> list[FieldError]:
    """``errors`` with each ``tags[N]`` error moved to the ``tags`` field, its message
    prefixed by the tag it is about."""
    placed: list[FieldError] = []
    for error in errors:
        match = _INDEXED.fullmatch(error.field)
        if match and int(match.group(1)) < len(tags):
            tag = tags[int(match.group(1))]
            placed.append(FieldError("tags", f"{tag[:60]!r}: {error.message}"))
        else:
            placed.append(error)
    return placed
