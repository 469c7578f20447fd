"""Bodies of ``POST /v1/apply`` and ``GET /v1/export``: a declarative document (docs/config.md)
and the plan of its apply."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from msgspec import Meta, Struct

from core.declarative.document import MAX_OBJECTS
from core.declarative.plan import ACTIONS

Objects = Annotated[list[dict[str, Any]], Meta(
    max_length=MAX_OBJECTS,
    description="objects with the API's fields of their kind; see docs/config.md")]
Digest = Annotated[str, Meta(pattern="^[0-9a-f]{64}$",
                             description="SHA-256 (hex) of the file, recorded in every event")]
Action = Literal[ACTIONS]  # type: ignore[valid-type]  # Literal of a runtime tuple


class ApplyDocument(Struct, forbid_unknown_fields=True):
    """Body of ``POST /v1/apply``: the parsed file (``cronledger apply`` sends the TOML as
    JSON) and its digest. Jobs and channels are matched by ``name``, monitors by ``slug`` (given,
    or made from the name: monitor names may repeat); jobs and monitors name their
    ``channels`` by the names of channels of this document; ``enabled = false`` pauses; jobs
    may say ``run_on_start = true``. A name, and a monitor's slug, appears once in its table
    (422 naming the second otherwise)."""

    channels: Objects = []
    monitors: Objects = []
    jobs: Objects = []
    digest: Digest | None = None


class FieldChange(Struct):
    """One field that changes: ``old`` / ``new`` are ``null`` when absent; sealed values are
    shown as ``[sealed]`` / ``[sealed, changed]``, never in clear."""

    field: str
    old: Any
    new: Any


class ObjectChange(Struct, omit_defaults=True):
    """What the apply does (or would do) to one object. ``ping_url`` (a created monitor),
    ``signing_secret`` (a created webhook channel whose secret was generated) and ``run_id``
    (a run queued by ``run_on_start``) are shown only in the answer that made them."""

    kind: Literal["job", "monitor", "channel"]
    name: str
    action: Action
    changes: list[FieldChange] = []
    id: uuid.UUID | None = None
    ping_url: str | None = None
    signing_secret: str | None = None
    run_id: uuid.UUID | None = None


class ApplyWarning(Struct):
    """A value that looks like a literal secret (``field``: its document path)."""

    field: str
    message: str


class ApplyResult(Struct):
    """The plan, in order (channels, monitors, jobs; deletes last in each), and whether it
    was written (``false`` for a dry run or when nothing changes)."""

    dry_run: bool
    applied: bool
    digest: str | None
    changes: list[ObjectChange]
    warnings: list[ApplyWarning]


class ExportDocument(Struct):
    """``GET /v1/export``: the team's definitions as a document for ``POST /v1/apply``
    (defaults and sealed values left out: an apply of it changes nothing)."""

    channels: list[dict[str, Any]]
    monitors: list[dict[str, Any]]
    jobs: list[dict[str, Any]]
