"""Status badges of a team's checks (docs/healthchecks.md, *Badges*), in healthchecks' formats.

- ``svg``: a flat two-part badge, the label (the tag, or the team's name for ``*``) on grey
  and the status on its colour. Text widths are computed as healthchecks computes them
  (``hc/lib/badges.py``): a per-character pixel width of 11 px Verdana, 7 for characters it
  does not list, plus 10 px of padding per part. The text is XML-escaped.
- ``json``: ``{"status", "total", "grace", "down"}`` (healthchecks' JSON badge: ``grace`` is
  the number of late checks).
- ``shields``: shields.io's endpoint format, ``{"schemaVersion": 1, "label", "message",
  "color"}``.

The two-state variant (``-2``) shows ``late`` as ``up``: only ``up`` and ``down``.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

from core.checks import Check, worst

# Character widths in pixels, grouped by width (healthchecks' table, hc/lib/badges.py).
_GROUPS = {
    3: "ijlI", 4: "frJ-", 5: "t", 6: "cesx1FLP_", 8: "ACDHNUV", 9: "wGOQ", 10: "mM", 11: "W",
    7: "abdghknopquvyz023456789BEKRSTXYZ",
}
WIDTHS = {char: width for width, chars in _GROUPS.items() for char in chars}
DEFAULT_WIDTH = 7
COLORS = {"up": "#4c1", "late": "#fe7d37", "down": "#e05d44"}
SHIELDS_COLORS = {"up": "success", "late": "important", "down": "critical"}
FORMATS = ("svg", "json", "shields")
CACHE_SECONDS = 10  # badges are cached briefly (Cache-Control max-age)


def text_width(text: str) -> int:
    """Pixel width of ``text`` in the badge's font."""
    return sum(WIDTHS.get(char, DEFAULT_WIDTH) for char in text)


def badge_status(checks: list[Check], two_state: bool = False) -> str:
    """The badge's status: the worst of ``checks`` (``late`` as ``up`` when ``two_state``)."""
    status = worst(c.status for c in checks)
    return "up" if two_state and status == "late" else status


def svg(label: str, status: str) -> str:
    """The SVG badge (a complete XML document)."""
    w1, w2 = text_width(label) + 10, text_width(status) + 10
    width = w1 + w2
    label_x, status_x = w1 / 2, w1 + w2 / 2
    text, word = escape(label, {'"': "&quot;"}), escape(status)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{text}: {word}">'
        f'<title>{text}: {word}</title>'
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" '
        'stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{width}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{w1}" height="20" fill="#555"/>'
        f'<rect x="{w1}" width="{w2}" height="20" fill="{COLORS[status]}"/>'
        f'<rect width="{width}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" '
        'font-family="DejaVu Sans,Verdana,Geneva,sans-serif" font-size="11">'
        f'<text x="{label_x}" y="15" fill="#010101" fill-opacity=".3">{text}</text>'
        f'<text x="{label_x}" y="14">{text}</text>'
        f'<text x="{status_x}" y="15" fill="#010101" fill-opacity=".3">{word}</text>'
        f'<text x="{status_x}" y="14">{word}</text></g></svg>\n')


def as_json(checks: list[Check], status: str) -> dict[str, Any]:
    """healthchecks' JSON badge."""
    return {"status": status, "total": len(checks),
            "grace": sum(c.status == "late" for c in checks),
            "down": sum(c.status == "down" for c in checks)}


def as_shields(label: str, status: str) -> dict[str, Any]:
    """shields.io's endpoint badge (https://shields.io/badges/endpoint-badge)."""
    return {"schemaVersion": 1, "label": label, "message": status,
            "color": SHIELDS_COLORS[status]}
