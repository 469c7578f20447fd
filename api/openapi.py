"""The OpenAPI document's error answers and unauthenticated routes, added in one place.

Litestar generates each operation and its success response from the handler;
:func:`complete_document` then, once per application:

- replaces the schemas of the request and response bodies by msgspec's own JSON Schema of
  the same Structs, which carries every constraint (lengths, ranges, patterns, enums, nested
  items, ``additionalProperties: false`` for bodies that refuse unknown fields), where
  Litestar's generator keeps only some;
- states the fields that exclude each other (a channel's kind, a maintenance window's
  one-off or recurring form) as ``oneOf`` branches (:func:`_exclusive_fields`);
- registers the ``Problem`` schema (the body :func:`api.errors.problem` builds) and gives every
  authenticated operation the ``application/problem+json`` answers it can give
  (:func:`error_statuses`), replacing Litestar's own ``400`` description;
- marks ``/healthz``, ``/readyz`` and ``/metrics`` as needing no API key (``security: []``);
- adds the ping routes and the runs' confirmation URLs (``/ping/run/{token}``), which are a
  raw ASGI mount (:mod:`api.ping`) Litestar does not describe.

See docs/api.md ("The OpenAPI document").
"""

from __future__ import annotations

import copy
from types import ModuleType
from typing import Any

import msgspec
from litestar.openapi.spec import (
    OpenAPI,
    OpenAPIFormat,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Parameter,
    PathItem,
    Reference,
    RequestBody,
    Schema,
)

from api.deps import READ_METHODS
from api.errors import PROBLEM, TITLES
from api.ping import METHODS as PING_METHODS
from api.schemas import MODULES as SCHEMA_MODULES
from core.alerting import MAX_CHANNELS
from core.channels import definition as chandef
from core.declarative import document
from core.monitors.ping import MAX_BODY_BYTES, MAX_EXIT_STATUS, TOKEN_PATTERN
from core.runs.confirm import TOKEN_PATTERN as CONFIRM_TOKEN_PATTERN

PROBLEM_REF = "#/components/schemas/Problem"
PROBLEM_SCHEMA = Schema(
    type=OpenAPIType.OBJECT,
    description="RFC 9457 problem details; ``errors`` lists field problems (422).",
    required=["type", "title", "status", "detail"],
    properties={
        "type": Schema(type=OpenAPIType.STRING, description="always about:blank"),
        "title": Schema(type=OpenAPIType.STRING, description="the status' title"),
        "status": Schema(type=OpenAPIType.INTEGER, minimum=400, maximum=599),
        "detail": Schema(type=OpenAPIType.STRING),
        "deleted_at": Schema(type=OpenAPIType.STRING, format=OpenAPIFormat.DATE_TIME,
                             description="410 only: when the object was deleted"),
        "errors": Schema(
            type=OpenAPIType.ARRAY,
            items=Schema(type=OpenAPIType.OBJECT, required=["field", "message"], properties={
                "field": Schema(type=OpenAPIType.STRING,
                                description="dotted path, e.g. request.url"),
                "message": Schema(type=OpenAPIType.STRING)})),
    },
)

WHEN = {
    400: "the request body is not valid JSON, or is missing; or more than one Authorization "
         "header",
    415: "a body sent with a Content-Type other than JSON (application/json or …+json)",
    401: "no API key, or an unknown or revoked one (with WWW-Authenticate: Bearer)",
    403: "a read-only API key on a write route",
    404: "no such object in the caller's team (another team's objects are reported the same)",
    409: "a version mismatch, a state that forbids the command, or a concurrent change: "
         "read again and retry",
    410: "the object had been deleted by the ?as_of= instant (`deleted_at` says when)",
    422: "the input breaks a rule; `errors` names every field and its problem",
    503: "the database is unavailable, or the server is not configured for this request "
         "(e.g. no secret key for secrets); retry later",
}
HEALTH_PATHS = ("/healthz", "/readyz", "/metrics")
PING_PREFIXES = ("/ping", "/v1/ping")
_OPERATIONS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def problem_response(status: int, description: str | None = None) -> OpenAPIResponse:
    """An ``application/problem+json`` answer referencing the ``Problem`` component."""
    return OpenAPIResponse(
        description=description or f"{TITLES[status]}: {WHEN[status]}",
        content={PROBLEM: OpenAPIMediaType(schema=Reference(ref=PROBLEM_REF))})


def error_statuses(method: str, operation: Operation) -> list[int]:
    """The error statuses an authenticated operation can answer with.

    Every one: 400 (two Authorization headers), 401 and 503. With a body: 400 (malformed
    JSON) and 415 (not JSON). Writes (not
    GET, HEAD, OPTIONS): 403 (read key) and 409 (every write runs in a transaction that may
    conflict). With a path parameter: 404, except a ``PUT`` by name (create-or-replace; one
    under an id, such as an alert's note, needs the object). With a body, a
    query parameter or a path parameter that the route itself does not check (not a UUID): 422.
    With ``?as_of=`` (a past view, docs/ledger.md): 410.
    """
    params = [p for p in operation.parameters or [] if isinstance(p, Parameter)]
    return sorted([400, 401, 503, *_input_statuses(operation, params),
                   *_write_statuses(method), *_object_statuses(method, params)])


def _checked_in_handler(params: list[Parameter]) -> list[Parameter]:
    """The path parameters the route itself checks (not UUIDs, which Litestar checks)."""
    return [p for p in params if p.param_in == "path" and not (
        isinstance(p.schema, Schema) and p.schema.format == "uuid")]


def _input_statuses(operation: Operation, params: list[Parameter]) -> list[int]:
    """415 with a body; 422 with a body, a query parameter or a path parameter the route
    checks."""
    has_body = operation.request_body is not None
    statuses = [415] if has_body else []
    if has_body or _checked_in_handler(params) or any(p.param_in == "query" for p in params):
        statuses.append(422)
    return statuses


def _write_statuses(method: str) -> list[int]:
    """403 and 409 for a write (not GET, HEAD, OPTIONS)."""
    return [] if method.upper() in READ_METHODS else [403, 409]


def _object_statuses(method: str, params: list[Parameter]) -> list[int]:
    """404 with a path parameter, except a ``PUT`` by name only; 410 with ``?as_of=``."""
    path = [p for p in params if p.param_in == "path"]
    statuses = []
    if path and (method.upper() != "PUT" or len(_checked_in_handler(params)) < len(path)):
        statuses.append(404)
    if any(p.param_in == "query" and p.name == "as_of" for p in params):
        statuses.append(410)
    return statuses


def _text(description: str, example: str) -> OpenAPIResponse:
    return OpenAPIResponse(description=description, content={
        "text/plain; charset=utf-8": OpenAPIMediaType(
            schema=Schema(type=OpenAPIType.STRING, examples=[example]))})


def _ping_operation(method: str, action: str | None, exit_status: bool) -> Operation:
    """One ping operation: the answers of :func:`api.ping.ping_endpoint`."""
    limit = OpenAPIHeader(description="bytes of the body that are kept",
                          schema=Schema(type=OpenAPIType.INTEGER))
    ok = _text("OK: the ping was recorded (empty body for HEAD)", "OK")
    ok.headers = {"Ping-Body-Limit": limit}
    params: list[Parameter | Reference]  # what Operation takes
    params = [Parameter(name="token", param_in="path", required=True,
                        schema=Schema(type=OpenAPIType.STRING, pattern=f"^{TOKEN_PATTERN}$"),
                        description="the monitor's ping token")]
    if exit_status:
        params.append(Parameter(
            name="exit_status", param_in="path", required=True,
            schema=Schema(type=OpenAPIType.INTEGER, minimum=0, maximum=MAX_EXIT_STATUS),
            description="the job's exit status: 0 is a success, 1-255 a failure"))
    params.append(Parameter(name="rid", param_in="query", required=False,
                            schema=Schema(type=OpenAPIType.STRING, format=OpenAPIFormat.UUID),
                            description="run id pairing a /start with its end"))
    kind = "exit status" if exit_status else action or "success"
    body = None
    if method == "POST":
        body = RequestBody(required=False, description="kept as the ping's body", content={
            "text/plain": OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING))})
    return Operation(
        tags=["ping"], summary=f"Ping a monitor ({kind}); no API key, the token is the credential",
        operation_id=f"Ping{method.title()}{kind.title().replace(' ', '')}",
        parameters=params, request_body=body, security=[],
        responses={
            "200": ok,
            "400": _text("an exit status above 255, or a rid that is not a UUID (empty "
                                 "included)", "invalid uuid format"),
            "404": _text("unknown, malformed or deleted token", "not found"),
            "413": _text(f"a body over {MAX_BODY_BYTES} bytes", "payload too large"),
            "503": _text("the database is unavailable (Retry-After: 1)",
                         "service unavailable, retry"),
        })


def _ping_paths(prefix: str) -> dict[str, PathItem]:
    routes = {"{token}": (None, False), "{token}/start": ("start", False),
              "{token}/fail": ("fail", False), "{token}/log": ("log", False),
              "{token}/{exit_status}": (None, True)}
    items = {}
    for suffix, (action, exit_status) in routes.items():
        item = PathItem()
        for method in PING_METHODS:
            operation = _ping_operation(method, action, exit_status)
            if prefix != "/ping":
                operation.operation_id = f"V1{operation.operation_id}"
            setattr(item, method.lower(), operation)
        items[f"{prefix}/{suffix}"] = item
    return items


def _confirm_operation(method: str, prefix: str, suffix: str) -> Operation:
    """One operation of a run's confirmation URL: the answers of :func:`api.ping._confirm`."""
    params: list[Parameter | Reference]  # what Operation takes
    params = [Parameter(name="token", param_in="path", required=True,
                        schema=Schema(type=OpenAPIType.STRING,
                                      pattern=f"^{CONFIRM_TOKEN_PATTERN}$"),
                        description="the attempt's one-time confirmation token")]
    kind = {"": "Success", "/fail": "Fail", "/{exit_status}": "ExitStatus"}[suffix]
    if suffix == "/{exit_status}":
        params.append(Parameter(
            name="exit_status", param_in="path", required=True,
            schema=Schema(type=OpenAPIType.INTEGER, minimum=0, maximum=MAX_EXIT_STATUS),
            description="0 confirms a success, 1-255 a failure"))
    v1 = "V1" if prefix != "/ping" else ""
    return Operation(
        tags=["ping"], summary="Confirm a run (fire-and-confirm); no API key, the token is "
                               "the credential and works once",
        operation_id=f"{v1}ConfirmRun{method.title()}{kind}", parameters=params, security=[],
        responses={
            "200": _text("OK: the run's confirmation was recorded", "OK"),
            "400": _text("/start, /log, or an exit status above 255", "invalid exit status"),
            "404": _text("unknown, used or expired token", "not found"),
            "503": _text("the database is unavailable (Retry-After: 1)",
                         "service unavailable, retry"),
        })


def _confirm_paths(prefix: str) -> dict[str, PathItem]:
    items = {}
    for suffix in ("", "/fail", "/{exit_status}"):
        item = PathItem()
        for method in PING_METHODS:
            setattr(item, method.lower(), _confirm_operation(method, prefix, suffix))
        items[f"{prefix}/run/{{token}}{suffix}"] = item
    return items


def _needs_a_change(openapi: OpenAPI, operation: Operation) -> None:
    """A PATCH body must name at least one field to change besides ``version`` (the handlers
    answer 422 "give at least one field to change" otherwise); a status page's may instead
    rotate its key (``rotate_key: true``)."""
    body = operation.request_body
    if not isinstance(body, RequestBody):
        return
    for media in body.content.values():
        ref = getattr(media.schema, "ref", "")
        schema = (openapi.components.schemas or {}).get(ref.rsplit("/", 1)[-1]) \
            if openapi.components and ref else None
        if isinstance(schema, dict):
            schema["minProperties"] = 1
            if "version" in schema.get("properties", {}):
                schema["not"] = {"required": ["version"], "maxProperties": 1}
            if "rotate_key" in schema.get("properties", {}):  # a status page's
                only = {"propertyNames": {"enum": ["rotate_key", "version"]}}
                schema["not"] = {"anyOf": [
                    {"propertyNames": {"enum": ["version"]}},
                    {**only, "properties": {"rotate_key": {"const": False}}}]}


# The fields each kind of channel requires (core.channels.definition.normalize_channel); the
# others of KIND_FIELDS are optional.
_CHANNEL_REQUIRED = {"webhook": ("url",), "slack": ("url",), "discord": ("url",),
                     "telegram": ("chat_id", "token_secret"), "email": ("to",)}


def _branch(required: tuple[str, ...], null_only: set[str],
            const: dict[str, str] | None = None) -> dict[str, Any]:
    """A ``oneOf`` branch: ``required`` present and not ``null``, ``null_only`` absent or
    ``null`` (the core ignores ``null``, refuses a value), ``const`` fields fixed."""
    properties: dict[str, Any] = {k: {"const": v} for k, v in (const or {}).items()}
    properties.update({f: {"type": "null"} for f in sorted(null_only)})
    properties.update({f: {"not": {"type": "null"}} for f in required})
    return {"properties": properties, "required": [*(const or {}), *required]}


def _exclusive_fields(schemas: dict[str, Any]) -> None:
    """State what one field decides about the others, as ``oneOf`` branches: in
    ``ChannelCreate`` a ``kind``'s fields (core.channels.definition), in
    ``MaintenanceCreate`` a one-off window (``from``, ``to``) or a recurring one
    (``schedule``, ``duration_seconds``, ``timezone``; core.maintenance.definition), in
    ``StatusPageCreate`` its components by ``tags`` or by ``components``."""
    own = {f for fields in chandef.KIND_FIELDS.values() for f in fields}
    schemas["ChannelCreate"]["oneOf"] = [
        _branch(_CHANNEL_REQUIRED[kind], own - set(fields), {"kind": kind})
        for kind, fields in chandef.KIND_FIELDS.items()]
    schemas["StatusPageCreate"]["oneOf"] = [  # core.statuspages.definition
        _branch(("tags",), {"components"}), _branch(("components",), {"tags"})]
    for window in ("MaintenanceCreate", "ProposedWindow"):  # a simulation's proposed window
        schemas[window]["oneOf"] = [
            _branch(("from", "to"), {"schedule", "duration_seconds", "timezone"}),
            _branch(("schedule", "duration_seconds"), {"from", "to"})]


# The API body each table of a declarative document takes (core.declarative.document: the
# API's fields of the kind, channels by name, the file's directives).
_APPLY_ITEMS = {"jobs": ("ApplyJob", "JobCreate"), "monitors": ("ApplyMonitor", "MonitorCreate"),
                "channels": ("ApplyChannel", "ChannelCreate")}


NO_NUL_PATTERN = "^[^\\x00]*$"
# A team secret's value is sealed, never stored as text (core/secrets.py): any text.
NUL_ALLOWED = {("SecretPut", "value")}
# Strings that cannot hold NUL whatever their schema says: formats with their own grammar.
_NUL_FREE_FORMATS = ("date-time", "uuid")


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[-1])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _no_nul(node: Any) -> None:
    """Give every text of ``node`` without a pattern the pattern that refuses NUL."""
    if isinstance(node, list):
        for value in node:
            _no_nul(value)
        return
    if not isinstance(node, dict):
        return
    if node.get("type") == "string" and "pattern" not in node and "enum" not in node \
            and node.get("format") not in _NUL_FREE_FORMATS:
        node["pattern"] = NO_NUL_PATTERN
    for key, value in node.items():
        if key not in ("examples", "default", "const", "enum"):
            _no_nul(value)


def _texts_without_nul(openapi: OpenAPI, schemas: dict[str, Any]) -> None:
    """No text of a request holds NUL (U+0000), which PostgreSQL text cannot store: the server
    refuses it (:func:`core.errors.nul_errors`, 422). Stated as a ``pattern`` on every string
    of a request body's schemas that has none; the patterns the schemas have refuse it already
    (a test checks them)."""
    names: set[str] = set()
    for item in (openapi.paths or {}).values():
        for method in _OPERATIONS:
            operation = getattr(item, method, None)
            if operation is None or not isinstance(operation.request_body, RequestBody):
                continue
            for media in operation.request_body.content.values():
                schema = media.schema
                _refs(schema.to_schema() if schema is not None and hasattr(schema, "to_schema")
                      else schema, names)
    pending = set(names)
    while pending:  # the components those refer to, in turn
        found: set[str] = set()
        _refs(schemas[pending.pop()], found)
        pending |= found - names
        names |= found
    for name in names:
        _no_nul({k: v for k, v in schemas[name].items() if k != "properties"})
        for field, schema in schemas[name].get("properties", {}).items():
            if (name, field) not in NUL_ALLOWED:
                _no_nul(schema)


def _allows_null(schema: dict[str, Any]) -> bool:
    return not schema or schema.get("type") == "null" or any(
        _allows_null(s) for s in schema.get("anyOf", []))


def _apply_items(schemas: dict[str, Any]) -> None:
    """The items of ``ApplyDocument``'s tables as components ``ApplyJob``, ``ApplyMonitor``
    and ``ApplyChannel``: the create body of the kind, with the keys
    :data:`core.declarative.document.KEYS` allows (``channels`` by name, ``enabled``,
    ``run_on_start``, ``schedule_text`` carried as the export writes it; ``null`` for a field's
    default, as the core reads it). What names refer
    to (a channel of the file or the team, a name or slug given twice) is checked by the
    server (422 with the document path)."""
    for table, (name, base) in _APPLY_ITEMS.items():
        item = copy.deepcopy(schemas[base])
        keys = document.KEYS[table]
        item["properties"] = {k: v for k, v in item["properties"].items() if k in keys}
        item["title"] = name
        item["description"] = f"One of the document's [[{table}]] (docs/config.md)."
        for directive in document.DIRECTIVES[table]:
            item["properties"][directive] = {"type": "boolean"}
        if "schedule_text" in keys:
            item["properties"]["schedule_text"] = {
                "type": "string", "description": "the words of the schedule, as the export "
                "writes them (kept when they read as the schedule, else ignored)"}
        if table == "jobs":  # the core reads a null method, headers or body as the default
            request = copy.deepcopy(schemas["RequestSpec"])
            for key in ("method", "headers", "body"):
                if not _allows_null(request["properties"][key]):
                    request["properties"][key] = {"anyOf": [request["properties"][key],
                                                            {"type": "null"}]}
            item["properties"]["request"] = request
        if "channels" in item["properties"] and table != "channels":
            item["properties"]["channels"] = {
                "type": "array", "maxItems": MAX_CHANNELS, "description": "channels by name",
                "items": {"type": "string", "minLength": 1}}
        item["required"] = sorted({"name", *item.get("required", [])})
        for key, schema in item["properties"].items():  # null: the field's default
            if key not in item["required"] and key not in ("channels", *document.DIRECTIVES[
                    table]) and not _allows_null(schema):
                item["properties"][key] = {"anyOf": [schema, {"type": "null"}]}
        schemas[name] = item
        schemas["ApplyDocument"]["properties"][table]["items"] = {
            "$ref": f"#/components/schemas/{name}"}


def struct_schemas(modules: tuple[ModuleType, ...] = SCHEMA_MODULES) -> dict[str, Any]:
    """msgspec's JSON Schema of every Struct defined in ``modules`` (the :mod:`api.schemas`
    modules, pages made by :func:`api.schemas.common.page_of` included), by class name, with
    references into ``#/components/schemas``."""
    structs = [obj for module in modules for obj in vars(module).values()
               if isinstance(obj, type) and issubclass(obj, msgspec.Struct)
               and obj.__module__ == module.__name__]
    _, components = msgspec.json.schema_components(
        structs, ref_template="#/components/schemas/{name}")
    return components


def complete_document(openapi: OpenAPI) -> OpenAPI:
    """Add the error answers, the unauthenticated routes and the ``Problem`` component to the
    document Litestar generated (in place; returned for convenience)."""
    assert openapi.components is not None and openapi.paths is not None
    openapi.components.schemas = {**(openapi.components.schemas or {}), **struct_schemas(),
                                  "Problem": PROBLEM_SCHEMA}
    _exclusive_fields(openapi.components.schemas)
    _apply_items(openapi.components.schemas)
    _texts_without_nul(openapi, openapi.components.schemas)
    for path, item in openapi.paths.items():
        for method in _OPERATIONS:
            operation = getattr(item, method, None)
            if operation is None:
                continue
            responses = operation.responses or {}
            responses.pop("400", None)  # Litestar's own; ours is the Problem below
            if path in HEALTH_PATHS:
                operation.security = []
                if path != "/healthz":
                    responses["503"] = problem_response(
                        503, "Service unavailable: the database is unreachable, or (readyz) "
                             "its migrations are not at head")
            else:
                for status in error_statuses(method, operation):
                    responses[str(status)] = problem_response(status)
            operation.responses = responses
            if method == "patch":
                _needs_a_change(openapi, operation)
    for prefix in PING_PREFIXES:
        openapi.paths.update(_ping_paths(prefix))
        openapi.paths.update(_confirm_paths(prefix))
    return openapi
