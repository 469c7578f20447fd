"""Tags of jobs and monitors: short words that group them for badges and the per-team metrics
(docs/healthchecks.md).

A tag is 1 to 50 printable characters without spaces or ``/`` (it is a path segment of the
badge URLs); a definition has at most 20, kept in the order given, duplicates dropped.
healthchecks keeps them as one space-separated string; the ``/api/v3`` translation joins and
splits them (:func:`split_tags`).
"""

from __future__ import annotations

import re
from typing import Any

from core.errors import FieldErrors

MAX_TAGS = 20
MAX_TAG = 50
TAG_PATTERN = r"[^\s/*]{1,50}"
_TAG = re.compile(TAG_PATTERN)


def normalize_tags(value: Any, errors: FieldErrors, field: str = "tags") -> list[str]:
    """The canonical tag list of ``value`` (a list of strings; ``None``: none)."""
    if value is None:
        return []
    if not isinstance(value, list | tuple) or len(value) > MAX_TAGS:
        errors.add(field, f"must be a list of at most {MAX_TAGS} tags")
        return []
    tags: list[str] = []
    for n, tag in enumerate(value):
        if not isinstance(tag, str) or not _TAG.fullmatch(tag) or not tag.isprintable():
            errors.add(f"{field}[{n}]", f"must be 1 to {MAX_TAG} characters without spaces, "
                                         "/ or *")
        elif tag not in tags:
            tags.append(tag)
    return tags


def split_tags(text: str) -> list[str]:
    """healthchecks' space-separated tags as a list."""
    return text.split()
