"""Monitor slugs: the name in ``/ping/<ping-key>/<slug>`` (docs/healthchecks.md).

A slug is 1 to 100 of ``a-z``, ``0-9``, ``-`` and ``_``, unique among a team's live monitors
(the partial unique index ``monitors_team_slug_key``). When a monitor is given none, it gets
:func:`slugify` of its name, the rule healthchecks takes from Django (``django.utils.text.
slugify``: accents folded to ASCII, lower case, anything but word characters, spaces and
hyphens dropped, runs of spaces and hyphens made one hyphen, ``-`` and ``_`` stripped from the
ends), made unique with ``-2``, ``-3`` … when another live monitor has it
(``core/monitors/commands.py:derived_slug``: names may repeat, slugs may not); a name with
nothing left (``"!!!"``) gives no slug.
"""

from __future__ import annotations

import re
import unicodedata

SLUG_PATTERN = "[a-z0-9_-]{1,100}"
MAX_SLUG = 100
SLUG_WORDS = f"must be 1 to {MAX_SLUG} of a-z, 0-9, - and _"
_SLUG = re.compile(SLUG_PATTERN)
_DROP = re.compile(r"[^\w\s-]")
_JOIN = re.compile(r"[-\s]+")


def slugify(name: str) -> str | None:
    """The slug healthchecks derives from ``name`` (cut to 100 characters), or ``None``."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    text = _JOIN.sub("-", _DROP.sub("", text.lower())).strip("-_")[:MAX_SLUG].strip("-_")
    return text or None


def slug_problem(value: object) -> str | None:
    """Why ``value`` is not a slug, or ``None`` when it is one."""
    if not isinstance(value, str) or not _SLUG.fullmatch(value):
        return "must be 1 to 100 lowercase letters, digits, - or _"
    return None
