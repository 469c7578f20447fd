"""Bodies of ``/v1/status-pages`` and ``PUT /v1/alerts/{id}/note``: a status page to create or
change, the page as its owner sees it, and an incident's note (docs/status-pages.md)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from msgspec import UNSET, Meta, Struct, UnsetType

from api.schemas.common import Tags, page_of
from core.statuspages import commands
from core.statuspages import definition as sdef

Title = Annotated[str, Meta(min_length=1, max_length=sdef.MAX_TITLE,
                            pattern=f"^{sdef.TEXT_PATTERN}$",
                            description="shown at the top of the public page")]
DISPLAY_NAME = {"type": "string", "minLength": 1, "maxLength": sdef.MAX_NAME,
                "pattern": f"^{sdef.TEXT_PATTERN}$"}
Components = Annotated[list[uuid.UUID], Meta(
    min_length=1, max_length=sdef.MAX_COMPONENTS,
    description="ids of the team's jobs and monitors, in the order shown")]
PageTags = Annotated[Tags, Meta(min_length=1, description="every live job and monitor "
                                                          "carrying one of them is shown")]
# Keys and names are checked by core/statuspages/definition.py (not by the decoder, whose
# errors cannot say which key), so each error names `names.<key>`; the document states the
# same rule.
Names = Annotated[dict[str, str], Meta(
    max_length=sdef.MAX_COMPONENTS,
    extra_json_schema={"propertyNames": {"type": "string", "format": "uuid"},
                       "additionalProperties": DISPLAY_NAME},
    description="display names by component id, shown instead of the internal names. A "
                "PATCH that gives `names` replaces the whole map: send every display name to "
                "keep (`{}` removes them all)")]
Path = Annotated[str, Meta(pattern=f"^{sdef.PATH_PATTERN}$",
                           description="a custom public path: /status/<path>; never 32 hexadecimal "
                                       "characters, the form of a page's key (422)")]
# No control characters but tabs and newlines, no invisible formatting characters
# (core/statuspages/commands.py:set_note refuses them): the pattern states that rule, so the
# document is as strict as the server.
Note = Annotated[str, Meta(max_length=commands.MAX_NOTE,
                           pattern=f"^{commands.NOTE_PATTERN}$")]


class StatusPageCreate(Struct, forbid_unknown_fields=True):
    """Body of ``POST /v1/status-pages``: a ``title`` and either ``tags`` or ``components``
    (never both), optional display ``names`` and custom ``path``."""

    title: Title
    tags: PageTags | None = None
    components: Components | None = None
    names: Names = {}
    path: Path | None = None


class StatusPagePatch(Struct, forbid_unknown_fields=True):
    """Body of ``PATCH /v1/status-pages/{id}``: the fields given change, each replaced whole
    (``tags`` replaces ``components`` and the reverse; ``names`` replaces the whole map of
    display names: send every one to keep; ``path: null`` clears it); ``rotate_key: true`` mints a
    new public key (the old URL answers 404 at once); ``version`` makes the change
    conditional (409 otherwise)."""

    title: Title | UnsetType = UNSET
    tags: PageTags | UnsetType = UNSET
    components: Components | UnsetType = UNSET
    names: Names | UnsetType = UNSET
    path: Path | None | UnsetType = UNSET
    rotate_key: bool = False
    version: int | UnsetType = UNSET


class StatusPage(Struct):
    """A status page as its owner sees it. ``url``: the public page (no key needed to read
    it; ``null`` when the server cannot show the key again, ``url_note`` says why),
    ``feed_url``: its Atom feed of incidents, ``path_url``: the page at its custom path."""

    id: uuid.UUID
    title: str
    tags: list[str]
    components: list[uuid.UUID]
    names: dict[str, str]
    path: str | None
    url: str | None
    feed_url: str | None
    path_url: str | None
    url_note: str | None
    version: int
    created_at: datetime
    updated_at: datetime


StatusPagePage = page_of(StatusPage)


class IncidentNote(Struct, forbid_unknown_fields=True):
    """Body of ``PUT /v1/alerts/{id}/note``: the note shown with the incident the alert
    opened on the status pages (``null`` or ``""`` removes it)."""

    note: Note | None


class IncidentNoteView(Struct):
    """The note now on the alert's incident."""

    alert_id: uuid.UUID
    note: str | None
