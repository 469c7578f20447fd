"""Tags of jobs and monitors: short words that group them for badges and the per-team metrics
(docs/healthchecks.md).

A tag is 1 to 50 characters without whitespace or blank-looking characters (:data:`BLANK`),
``/`` (it is a path segment of the badge URLs), ``*`` (the badges of every tag), control
characters or invisible formatting characters
(:data:`TAG_PATTERN`, the one rule: the OpenAPI document states it as the tags' ``pattern``,
spelled out rather than with a whitespace class, so that JSON Schema's regular expressions
and Python's read it alike); a definition has at most 20, kept in the order given, duplicates
dropped. healthchecks keeps them as one space-separated string; the ``/api/v3`` translation
joins and splits them (:func:`split_tags`).
"""

from __future__ import annotations

import re
from typing import Any

from core.errors import FieldErrors

MAX_TAGS = 20
MAX_TAG = 50
# Not in a tag: whitespace (Unicode's Zs, Zl, Zp and the ASCII spaces), the C0 and C1
# controls, the formatting characters of the Basic Multilingual Plane (Unicode 14's Cf: soft
# hyphen, zero-width and direction marks ...), "/" and "*". (Lone surrogates never reach it:
# the JSON decoder refuses them; a surrogate range would also be no regular expression in
# the Rust engine schemathesis checks patterns with.)
# INVISIBLE: the controls and formatting characters alone (also refused in the texts people
# read, such as a status page's title: core/statuspages/definition.py).
# FORMATTING: INVISIBLE but the C0 controls (a note keeps its tabs and newlines:
# core/statuspages/commands.py:set_note).
FORMATTING = (
    r"\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u1680"
    r"\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u206f\u3000"
    r"\ufeff\ufff9-\ufffb")
INVISIBLE = r"\x00-\x1f" + FORMATTING
# BLANK: characters that print as blank space though Unicode calls them letters or symbols
# (the space, the no-break space, the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, the
# braille blank U+2800): never in a tag, and a title, display name or note of nothing else
# is blank (issue 32).
BLANK = r"\x20\xa0\u115f\u1160\u2800\u3164\uffa0"
_NOT_IN_A_TAG = BLANK + "/*" + INVISIBLE
TAG_PATTERN = f"[^{_NOT_IN_A_TAG}]{{1,50}}"
_TAG = re.compile(TAG_PATTERN)
TAG_WORDS = (f"must be 1 to {MAX_TAG} characters without spaces or blank-looking characters, "
             "/ or *, control or invisible formatting characters")


def normalize_tags(value: Any, errors: FieldErrors, field: str = "tags") -> list[str]:
    """The canonical tag list of ``value`` (a list of strings; ``None``: none)."""
    if value is None:
        return []
    if not isinstance(value, list | tuple) or len(value) > MAX_TAGS:
        errors.add(field, f"must be a list of at most {MAX_TAGS} tags")
        return []
    tags: list[str] = []
    for n, tag in enumerate(value):
        if not isinstance(tag, str) or not _TAG.fullmatch(tag):
            errors.add(f"{field}[{n}]", TAG_WORDS)
        elif tag not in tags:
            tags.append(tag)
    return tags


def split_tags(text: str) -> list[str]:
    """healthchecks' space-separated tags as a list."""
    return text.split()
