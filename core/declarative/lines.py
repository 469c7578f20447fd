"""Where each key of a TOML file is written, so that an error on ``jobs.2.request.url`` names
its file and line (``tomllib`` returns values without positions).

:func:`key_lines` scans the source: ``[[kind]]`` headers count the entries of an array of
tables, ``[kind.sub]`` headers open a table inside the latest entry, and ``key = …`` lines
(dotted and quoted keys included) record ``header path + key``. Multi-line strings are skipped;
keys inside inline tables and multi-line arrays are found through their enclosing key
(:func:`line_of` falls back to the longest recorded prefix of a path).
"""

from __future__ import annotations

import re

_BARE = r"[A-Za-z0-9_-]+"
_QUOTED = r'"(?:[^"\\]|\\.)*"|\'[^\']*\''
_PART = rf"(?:{_BARE}|{_QUOTED})"
_DOTTED = rf"{_PART}(?:\s*\.\s*{_PART})*"
_ARRAY_HEADER = re.compile(rf"^\s*\[\[\s*({_DOTTED})\s*\]\]")
_TABLE_HEADER = re.compile(rf"^\s*\[\s*({_DOTTED})\s*\]")
_ASSIGNMENT = re.compile(rf"^\s*({_DOTTED})\s*=")
_SPLIT = re.compile(rf"\s*({_PART})\s*(?:\.|$)")


def _parts(dotted: str) -> list[str]:
    out = []
    for match in _SPLIT.finditer(dotted):
        part = match.group(1)
        if part[:1] in "\"'":
            part = part[1:-1]
            if match.group(1)[0] == '"':
                part = part.encode().decode("unicode_escape")
        out.append(part)
    return out


def key_lines(source: str) -> dict[tuple[str, ...], int]:
    """``{path: line}`` (1-based) for each table entry and key of ``source``; a path is the
    key's parts with array entries as their index (``("jobs", "2", "request", "url")``).
    The first definition of a path wins."""
    found: dict[tuple[str, ...], int] = {}
    counts: dict[tuple[str, ...], int] = {}
    prefix: tuple[str, ...] = ()
    in_string: str | None = None
    for number, line in enumerate(source.splitlines(), start=1):
        if in_string is not None:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        array, table, assignment = (pattern.match(line) for pattern in
                                    (_ARRAY_HEADER, _TABLE_HEADER, _ASSIGNMENT))
        if array:
            parts = tuple(_parts(array.group(1)))
            counts[parts] = counts.get(parts, -1) + 1
            prefix = (*_resolve(parts[:-1], counts), parts[-1], str(counts[parts]))
            found.setdefault(prefix, number)
        elif table:
            prefix = _resolve(tuple(_parts(table.group(1))), counts)
            found.setdefault(prefix, number)
        elif assignment:
            found.setdefault((*prefix, *_parts(assignment.group(1))), number)
            rest = line[assignment.end():]
            for quote in ('"""', "'''"):
                if rest.count(quote) % 2 == 1:
                    in_string = quote
    return found


def _resolve(parts: tuple[str, ...], counts: dict[tuple[str, ...], int]) -> tuple[str, ...]:
    """A table path with the latest entry index after each array-of-tables part."""
    out: list[str] = []
    for i, part in enumerate(parts):
        out.append(part)
        if parts[:i + 1] in counts:
            out.append(str(counts[parts[:i + 1]]))
    return tuple(out)


def line_of(lines: dict[tuple[str, ...], int], field: str) -> int | None:
    """The line of a dotted document path (``jobs.2.request.url``): of the path itself, else
    of its longest recorded prefix; ``None`` when not even its first part is in the file."""
    parts = tuple(field.split("."))
    while parts:
        if parts in lines:
            return lines[parts]
        parts = parts[:-1]
    return None
