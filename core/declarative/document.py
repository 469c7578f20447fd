"""The declarative document (docs/config.md, "File format"): what each table may hold, and the
checks that need no database.

A document is ``{"channels": [...], "monitors": [...], "jobs": [...]}``, each a list of
objects whose keys are the API's fields of that kind (``POST /v1/jobs``, ``/v1/monitors``,
``/v1/channels``) plus the file's own directives: ``enabled`` (``false``: paused; jobs and
monitors) and ``run_on_start`` (jobs: fire once at once when the job has never run, as bext
does on its first tick). Jobs and monitors list their ``channels`` by channel *name*. Jobs
and channels are matched by name, monitors by slug (:func:`monitor_key`).

Errors and warnings are :class:`core.errors.FieldError` s whose ``field`` is a path from the
document's root: ``jobs.2.request.url`` (the third job's request URL).
"""

from __future__ import annotations

import re
from typing import Any

from core.alerting import MAX_CHANNELS
from core.channels import definition as chandef
from core.errors import FieldError, FieldErrors, nul_errors
from core.jobs import definition as jobdef
from core.monitors import definition as mondef
from core.monitors.slugs import slug_problem, slugify
from core.secrets import PLACEHOLDER

KINDS = ("channels", "monitors", "jobs")  # the order in which creates and updates are applied
SINGULAR = {"channels": "channel", "monitors": "monitor", "jobs": "job"}
DIRECTIVES = {"jobs": ("enabled", "run_on_start"), "monitors": ("enabled",), "channels": ()}
CHANNEL_FIELDS = ("name", "kind", *dict.fromkeys(
    f for fields in chandef.KIND_FIELDS.values() for f in fields))
KEYS: dict[str, tuple[str, ...]] = {
    "jobs": (*jobdef.DEFINITION_FIELDS, "signing_secret", *DIRECTIVES["jobs"]),
    "monitors": (*mondef.DEFINITION_FIELDS, *DIRECTIVES["monitors"]),
    "channels": CHANNEL_FIELDS,
}
MAX_OBJECTS = 10_000  # per kind in one document

# Header names whose value is a credential, and values that look like one wherever they are.
_SECRET_HEADERS = re.compile(r"^(?:authorization|proxy-authorization|cookie|x-api-key|api-key|"
                             r".*(?:token|secret|password|apikey|api-key|auth).*)$", re.I)
_SECRET_QUERY = re.compile(r"[?&](?:[a-z_-]*(?:token|secret|key|password|sig|auth)[a-z_-]*)"
                           r"=([^&#]+)", re.I)
_SCHEMES = re.compile(r"^(?:bearer|basic|token|digest|apikey)\s+", re.I)
SECRET_ADVICE = ("looks like a literal secret: store it with PUT /v1/secrets/NAME and write "
                 "${secrets.NAME} instead (the file is meant to be committed)")


def check_document(document: Any, errors: FieldErrors) -> dict[str, list[dict[str, Any]]]:
    """The document's objects by kind, checked for shape (unknown keys, names, directives).

    The definitions themselves are checked by each kind's ``normalize_*`` in
    :mod:`core.declarative.apply`, with the same rules as the API, so that one answer lists
    every problem.

    Returns:
        ``{"channels": [...], "monitors": [...], "jobs": [...]}`` (absent kinds empty); the
        problems found, each with its path (``jobs.0.name``), are added to ``errors``.

    Raises:
        InvalidInput: the document is not a table, or holds NUL characters.
    """
    errors.items += nul_errors(document)
    errors.raise_if_any()
    if not isinstance(document, dict):
        errors.add("document", "must be a table of [[jobs]], [[monitors]] and [[channels]]")
        errors.raise_if_any()
    for key in document:
        if key not in KINDS:
            errors.add(str(key), "is not a known table: use [[jobs]], [[monitors]] and "
                                 "[[channels]]")
    out: dict[str, list[dict[str, Any]]] = {}
    for kind in KINDS:
        items = document.get(kind, [])
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            errors.add(kind, f"must be an array of tables ([[{kind}]])")
            items = []
        elif len(items) > MAX_OBJECTS:
            errors.add(kind, f"must have at most {MAX_OBJECTS} entries")
            items = []
        seen: dict[str, int] = {}
        for i, item in enumerate(items):
            _check_object(kind, i, item, seen, errors)
        out[kind] = items
    return out


def _check_object(kind: str, i: int, item: dict[str, Any], seen: dict[str, int],
                  errors: FieldErrors) -> None:
    path = f"{kind}.{i}"
    for key in item:
        if key not in KEYS[kind]:
            errors.add(f"{path}.{key}", f"is not a field of a {SINGULAR[kind]}: use "
                                        + ", ".join(KEYS[kind]))
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        errors.add(f"{path}.name", f"is required: every {SINGULAR[kind]} has a name")
    elif kind == "monitors":
        _check_monitor_key(path, i, item, seen, errors)
    elif name in seen:
        errors.add(f"{path}.name", f"{SINGULAR[kind]} {name!r} is already defined above "
                                   f"({kind}.{seen[name]}): names are unique per team")
    else:
        seen[name] = i
    if item.get("schedule_text") is not None and not isinstance(item["schedule_text"], str):
        errors.add(f"{path}.schedule_text", "must be text: the words of the schedule")
    for directive in DIRECTIVES[kind]:
        if directive in item and not isinstance(item[directive], bool):
            errors.add(f"{path}.{directive}", "must be true or false")
    if kind != "channels" and "channels" in item:
        names = item["channels"]
        if not isinstance(names, list) or len(names) > MAX_CHANNELS:
            errors.add(f"{path}.channels", f"must be a list of at most {MAX_CHANNELS} "
                                           "channel names")
        else:
            for k, entry in enumerate(names):
                if not isinstance(entry, str) or not entry:
                    errors.add(f"{path}.channels.{k}", "must be a channel name")


def monitor_key(item: dict[str, Any]) -> str | None:
    """What identifies a monitor of a document: its ``slug``, else the slug its name gives
    (:func:`core.monitors.slugs.slugify`, as a create derives it); ``None`` when neither is
    usable. Monitor names may repeat (docs/config.md, *Monitors are matched by slug*)."""
    slug = item.get("slug")
    if slug is not None:
        return slug if isinstance(slug, str) and slug_problem(slug) is None else None
    name = item.get("name")
    return slugify(name) if isinstance(name, str) else None


def _check_monitor_key(path: str, i: int, item: dict[str, Any], seen: dict[str, int],
                       errors: FieldErrors) -> None:
    key = monitor_key(item)
    if key is None:
        if item.get("slug") is not None:
            errors.add(f"{path}.slug", slug_problem(item["slug"]) or "is not a slug")
        else:
            errors.add(f"{path}.slug", "is required: a monitor is matched by its slug, and "
                                       "its name has no letter or digit to make one from")
    elif key in seen:
        errors.add(f"{path}.slug" if item.get("slug") is not None else f"{path}.name",
                   f"monitor slug {key!r} is already defined above (monitors.{seen[key]}): "
                   "a monitor is matched by its slug (given, or made from its name), so "
                   "give one of them another slug")
    else:
        seen[key] = i


def _literal(value: str) -> str:
    """What is left of ``value`` once placeholders and an auth scheme word are removed."""
    return _SCHEMES.sub("", PLACEHOLDER.sub("", value)).strip()


def secret_warnings(objects: dict[str, list[dict[str, Any]]]) -> list[FieldError]:
    """Literal secret-looking values: credential headers, credential query parameters and
    webhook URLs or signing secrets written in clear instead of ``${secrets.NAME}``."""
    found: list[FieldError] = []
    for i, job in enumerate(objects.get("jobs", [])):
        request = job.get("request")
        if not isinstance(request, dict):
            request = {}
        headers = request.get("headers")
        if not isinstance(headers, dict):
            headers = {}
        for name, value in headers.items():
            if isinstance(value, str) and _literal(value) and (
                    _SECRET_HEADERS.match(str(name)) or _SCHEMES.match(value)):
                found.append(FieldError(f"jobs.{i}.request.headers.{name}", SECRET_ADVICE))
        url = request.get("url")
        if isinstance(url, str) and any(PLACEHOLDER.sub("", m) for m in
                                        _SECRET_QUERY.findall(url)):
            found.append(FieldError(f"jobs.{i}.request.url", SECRET_ADVICE))
        if isinstance(job.get("signing_secret"), str) and _literal(job["signing_secret"]):
            found.append(FieldError(f"jobs.{i}.signing_secret", SECRET_ADVICE))
    for i, channel in enumerate(objects.get("channels", [])):
        for field in chandef.SECRET_FIELDS:
            value = channel.get(field)
            if isinstance(value, str) and PLACEHOLDER.sub("", value) == value:
                found.append(FieldError(f"channels.{i}.{field}", SECRET_ADVICE))
    return found
