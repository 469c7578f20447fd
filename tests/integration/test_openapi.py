"""The OpenAPI document at /schema/openapi.json describes what the API answers (docs/api.md):
the error answers of every route, the unauthenticated routes, the core's limits."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import AsyncTestClient

from api.pagination import decode_cursor, encode_cursor
from core import apikeys, secrets
from core.alerting import (
    MAX_CHANNELS,
    MAX_REALERT_SECONDS,
    MAX_RUN_SECONDS,
    MIN_REALERT_SECONDS,
)
from core.channels import definition as chandef
from core.durations import parse_duration
from core.errors import FieldErrors, InvalidInput, nul_errors
from core.jobs import definition as jobdef
from core.maintenance import definition as mdef
from core.monitors import definition as mondef
from core.monitors.ping import MAX_EXIT_STATUS
from core.tags import normalize_tags
from tests.teams import Team

PROBLEM_REF = "#/components/schemas/Problem"
OPERATIONS = ("get", "put", "post", "delete", "patch", "head", "options")
PING_ROUTES = ("{token}", "{token}/start", "{token}/fail", "{token}/log", "{token}/{exit_status}")


@pytest.fixture
async def doc(api: AsyncTestClient) -> dict[str, Any]:
    r = await api.get("/schema/openapi.json")
    assert r.status_code == 200
    return r.json()


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in doc["paths"].items()
            for method, op in item.items() if method in OPERATIONS]


def _authenticated(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(p, m, op) for p, m, op in _operations(doc)
            if p.startswith("/v1/") and not p.startswith("/v1/ping/")]


def _is_problem(response: dict[str, Any]) -> bool:
    return response.get("content", {}).get("application/problem+json", {}).get(
        "schema") == {"$ref": PROBLEM_REF}


def test_every_v1_operation_documents_its_problem_answers(doc: dict[str, Any]) -> None:
    operations = _authenticated(doc)
    assert len(operations) >= 35
    for path, method, op in operations:
        where = f"{method.upper()} {path}"
        responses = op["responses"]
        params = op.get("parameters", [])
        takes_input = ("requestBody" in op or any(p["in"] == "query" for p in params)
                       or any(p["in"] == "path" and p["schema"].get("format") != "uuid"
                              for p in params))
        expected = {"400", "401", "503"}  # 400: two Authorization headers
        if takes_input:
            expected.add("422")
        if method not in ("get", "head"):
            expected |= {"403", "409"}
        by_id = any(p["in"] == "path" and p["schema"].get("format") == "uuid" for p in params)
        if any(p["in"] == "path" for p in params) and (method != "put" or by_id):
            expected.add("404")  # a PUT by name creates; one under an id needs the object
        if "requestBody" in op:
            expected |= {"400", "415"}
        if any(p["in"] == "query" and p["name"] == "as_of" for p in params):
            expected.add("410")  # a past view of a deleted object (docs/ledger.md)
        errors = {code for code in responses if code >= "400"}
        assert errors == expected, where
        assert all(_is_problem(responses[code]) for code in errors), where
        assert "security" not in op, where  # the document's bearer requirement applies


def test_routes_without_input_or_ids_do_not_claim_those_errors(doc: dict[str, Any]) -> None:
    paths = doc["paths"]
    assert set(paths["/v1/dashboard"]["get"]["responses"]) == {"200", "400", "401", "503"}
    assert "404" not in paths["/v1/jobs"]["post"]["responses"]
    assert "404" not in paths["/v1/secrets/{name}"]["put"]["responses"]  # create-or-replace
    assert {"200", "201"} <= set(paths["/v1/secrets/{name}"]["put"]["responses"])
    assert "422" not in paths["/v1/runs/{run_id}"]["get"]["responses"]
    assert "409" not in paths["/v1/jobs/{job_id}"]["get"]["responses"]


async def test_the_problem_schema_is_the_shape_errors_have(
    api: AsyncTestClient, doc: dict[str, Any], team: Team,
) -> None:
    schema = doc["components"]["schemas"]["Problem"]
    assert set(schema["required"]) == {"type", "title", "status", "detail"}
    assert set(schema["properties"]["errors"]["items"]["required"]) == {"field", "message"}
    r = await api.post("/v1/jobs", json={"name": "", "schedule": "1h"}, headers=team.auth)
    assert r.status_code == 422 and r.headers["content-type"] == "application/problem+json"
    body = r.json()
    assert set(schema["required"]) <= set(body) <= set(schema["properties"])
    assert all(set(e) == {"field", "message"} for e in body["errors"])
    unauthorized = await api.get("/v1/jobs")
    assert unauthorized.status_code == 401
    assert set(schema["required"]) <= set(unauthorized.json()) <= set(schema["properties"])


def test_ping_and_health_routes_need_no_api_key(doc: dict[str, Any]) -> None:
    paths = doc["paths"]
    assert doc["security"] == [{"bearer": []}]
    for path in ("/healthz", "/readyz", "/metrics"):
        assert paths[path]["get"]["security"] == [], path
    assert _is_problem(paths["/readyz"]["get"]["responses"]["503"])
    for prefix in ("/ping", "/v1/ping"):
        for route in PING_ROUTES:
            item = paths[f"{prefix}/{route}"]
            assert set(item) == {"get", "post", "head"}, route
            for op in item.values():
                assert op["security"] == []
                assert {"200", "400", "404", "413", "503"} <= set(op["responses"])
                assert "text/plain; charset=utf-8" in op["responses"]["200"]["content"]
    status = next(p for p in paths["/ping/{token}/{exit_status}"]["get"]["parameters"]
                  if p["name"] == "exit_status")
    assert status["schema"]["maximum"] == MAX_EXIT_STATUS


def test_field_constraints_are_the_cores(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]

    def prop(name: str, field: str) -> dict[str, Any]:
        schema = schemas[name]["properties"][field]
        return next((s for s in schema.get("anyOf", []) if s.get("type") != "null"), schema)

    assert prop("JobCreate", "name")["maxLength"] == jobdef.MAX_NAME
    assert prop("JobPatch", "name")["maxLength"] == jobdef.MAX_NAME
    assert prop("RequestSpec", "url")["maxLength"] == jobdef.MAX_URL
    assert prop("RequestSpec", "headers")["maxProperties"] == jobdef.MAX_HEADERS
    assert prop("RequestSpec", "body")["maxLength"] == jobdef.MAX_BODY
    timeout = prop("JobCreate", "timeout_seconds")
    assert (timeout["minimum"], timeout["maximum"]) == (jobdef.MIN_TIMEOUT_SECONDS,
                                                        jobdef.MAX_TIMEOUT_SECONDS)
    assert prop("RetrySpec", "attempts")["maximum"] == jobdef.MAX_ATTEMPTS
    assert prop("JobCreate", "success_statuses")["items"]["maximum"] == jobdef.MAX_STATUS
    assert set(prop("JobCreate", "overlap")["enum"]) == set(jobdef.OVERLAP_POLICIES)
    assert prop("JobCreate", "channels")["maxItems"] == MAX_CHANNELS
    assert prop("JobCreate", "signing_secret")["minLength"] == secrets.MIN_SIGNING_SECRET
    assert prop("MonitorCreate", "grace_seconds")["maximum"] == mondef.MAX_GRACE_SECONDS
    assert set(prop("ChannelCreate", "kind")["enum"]) == set(chandef.KINDS)
    assert prop("ChannelCreate", "signing_secret")["maxLength"] == chandef.MAX_WEBHOOK_SECRET
    assert prop("SecretPut", "value")["maxLength"] == secrets.MAX_VALUE_BYTES
    assert set(prop("ApiKeyCreate", "scope")["enum"]) == set(apikeys.SCOPES)
    for body in ("JobCreate", "JobPatch", "MonitorCreate", "ChannelCreate", "SecretPut",
                 "ApiKeyCreate", "RequestSpec"):
        assert schemas[body]["additionalProperties"] is False, body
    name = next(p for p in doc["paths"]["/v1/secrets/{name}"]["put"]["parameters"]
                if p["name"] == "name")
    assert name["schema"]["pattern"] == f"^{secrets.NAME_PATTERN}$"


@pytest.mark.parametrize(("body", "field"), [
    ({"scope": "admin"}, "scope"),
    ({"name": "k" * (apikeys.MAX_KEY_NAME + 1)}, "name"),
])
async def test_schema_limits_answer_the_usual_422(
    api: AsyncTestClient, team: Team, body: dict[str, Any], field: str,
) -> None:
    r = await api.post("/v1/api-keys", json=body, headers=team.auth)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["title"] == "Invalid input"
    assert field in [e["field"] for e in r.json()["errors"]]


@pytest.mark.parametrize("path", ["/v1/jobs/{id}/events", "/v1/monitors/{id}/events",
                                  "/v1/monitors/{id}/pings"])
async def test_a_non_ascii_digit_cursor_is_422_not_500(
    api: AsyncTestClient, team: Team, path: str,
) -> None:
    # "²".isdigit() is true but int("²") raises: the parameter's pattern refuses it first.
    r = await api.get(path.format(id=uuid.uuid4()), params={"cursor": "²"},
                      headers=team.auth)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"


async def test_options_lists_every_method_of_the_path(api: AsyncTestClient) -> None:
    for path, methods in (("/v1/jobs", {"GET", "POST"}),
                          (f"/v1/jobs/{uuid.uuid4()}", {"GET", "PATCH", "DELETE"}),
                          ("/v1/secrets/x", {"PUT", "DELETE"})):
        r = await api.options(path)
        assert r.status_code == 204
        assert set(r.headers["allow"].split(", ")) == methods | {"OPTIONS"}, path


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/v1/monitors", {"name": "m", "schedule": "1h", "manual_resume": 0}, "manual_resume"),
    ("/v1/jobs", {"name": "j", "schedule": "1h", "paused": 1,
                  "request": {"url": "https://example.com/"}}, "paused"),
    ("/v1/jobs", {"name": "j", "schedule": "1h", "timeout_seconds": "30",
                  "request": {"url": "https://example.com/"}}, "timeout_seconds"),
    ("/v1/monitors", {"name": "m", "schedule": "1h", "grace_seconds": "60"}, "grace_seconds"),
    ("/v1/jobs", {"name": "j", "schedule": "1h", "request": {"url": "https://e.com/",
                                                             "headers": {"X": 1}}},
     "request.headers"),
])
async def test_bodies_are_not_coerced_to_their_types(
    api: AsyncTestClient, team: Team, path: str, body: dict[str, Any], field: str,
) -> None:
    r = await api.post(path, json=body, headers=team.auth)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert [e["field"] for e in r.json()["errors"]] == [field], r.json()
    assert (await api.post(path, json=body)).status_code == 401  # authentication comes first


_NOWHERE = "00000000-0000-4000-8000-000000000000"


@pytest.mark.parametrize(("method", "path", "raw", "field"), [
    ("POST", "/v1/monitors", '{"name":"ok","schedule":"1h","grace_seconds":1e400}',
     "grace_seconds"),
    ("POST", "/v1/monitors", '{"name":"ok","schedule":"1h","grace_seconds":-1e400}',
     "grace_seconds"),
    ("POST", "/v1/status-pages", '{"title":"t","path":1e400}', "path"),
    ("POST", "/v1/jobs", '{"name":"j","schedule":"1h","spread":1e400,'
                         '"request":{"url":"https://example.com/"}}', "spread"),
    ("POST", "/v1/jobs", '{"name":"j","schedule":"1h","timeout_seconds":1e400,'
                         '"request":{"url":"https://example.com/","body":{"a":1e400}}}',
     "timeout_seconds"),
    ("POST", "/v1/jobs", '{"name":"j","schedule":"1h","success_statuses":[200,1e400],'
                         '"request":{"url":"https://example.com/"}}', "success_statuses.1"),
    ("PATCH", f"/v1/monitors/{_NOWHERE}", '{"grace_seconds":1e400}', "grace_seconds"),
    ("PATCH", f"/v1/status-pages/{_NOWHERE}", '{"version":1e400}', "version"),
    ("POST", "/v1/apply", '{"monitors":[{"name":"m","schedule":"1h","grace_seconds":1e400}]}',
     "monitors.0.grace_seconds"),
    ("PUT", f"/v1/alerts/{_NOWHERE}/note", '{"note":"n","extra":1e999}', "extra"),
])
async def test_a_number_beyond_a_floats_range_is_a_422_naming_its_field(
    api: AsyncTestClient, team: Team, method: str, path: str, raw: str, field: str,
) -> None:
    """Issue 32 (outside test): ``1e400`` anywhere in a body was a 500 (msgspec's untyped
    decoding refuses it too, and the 422's field was then never found)."""
    r = await api.request(method, path, content=raw.encode(),
                          headers={**team.auth, "Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    errors = r.json()["errors"]
    assert errors[0] == {"field": field,
                         "message": "is a number out of the range this field can hold"}, errors
    assert r.json()["detail"].startswith(f"{field}: is a number out of the range")
    for listing in ("/v1/monitors", "/v1/jobs", "/v1/status-pages"):
        assert (await api.get(listing, headers=team.auth)).json()["items"] == []


async def test_a_number_beyond_range_beside_other_bad_fields_names_them_all(
    api: AsyncTestClient, team: Team,
) -> None:
    raw = b'{"name":"ok","schedule":"1h","grace_seconds":1e400,"manual_resume":0}'
    r = await api.post("/v1/monitors", content=raw,
                       headers={**team.auth, "Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert [e["field"] for e in r.json()["errors"]] == ["grace_seconds", "manual_resume"]


@pytest.mark.parametrize(("method", "path", "body", "field", "words"), [
    ("POST", "/v1/status-pages", {"title": ""}, "title", "must not be empty"),
    ("POST", "/v1/status-pages", {"title": "t" * 201}, "title",
     "must be at most 200 characters long"),
    ("POST", "/v1/schedules/parse", {"text": "every day", "count": 0}, "count",
     "must be at least 1"),
    ("POST", "/v1/schedules/parse", {"text": "every day", "count": 101}, "count",
     "must be at most 100"),
    ("POST", "/v1/api-keys", {"name": "k", "scope": "admin"}, "scope",
     "must be one of: read, write"),
    ("POST", "/v1/jobs", {"name": "j", "schedule": "1h", "overlap": "maybe",
                          "request": {"url": "https://example.com/"}}, "overlap",
     "must be one of: allow, queue, skip"),
    ("POST", "/v1/monitors", {"name": "m", "schedule": "1h", "grace_seconds": 1.5},
     "grace_seconds", "must be a whole number, not a number with a fractional part"),
    ("GET", "/v1/monitors/{id}/advice?days=0", None, "days", "must be at least 1"),
    ("GET", "/v1/monitors/{id}/advice?days=91", None, "days", "must be at most 90"),
    ("GET", "/v1/jobs?limit=0", None, "limit", "must be at least 1"),
    ("GET", "/v1/schedules/preview", None, "schedule", "is required (a query parameter)"),
])
async def test_bounds_lengths_and_enums_are_refused_in_plain_words(
    api: AsyncTestClient, team: Team, method: str, path: str,
    body: dict[str, Any] | None, field: str, words: str,
) -> None:
    """Issue 32 (outside test): ``"title": ""`` answered msgspec's "Expected `str` of length
    >= 1", ``?days=0`` "Expected `int` >= 1". A body field and a query parameter alike are
    refused in words, the field named by ``field`` and at the head of ``detail``."""
    made = await api.post("/v1/monitors", json={"name": "words", "schedule": "1h"},
                          headers=team.auth)
    path = path.replace("{id}", made.json()["id"])
    r = await api.request(method, path, json=body, headers=team.auth)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["errors"] == [{"field": field, "message": words}], r.json()
    assert r.json()["detail"] == f"{field}: {words}"


async def test_every_bad_field_of_a_body_is_named(
    api: AsyncTestClient, team: Team,
) -> None:
    """Issue 32 (outside test): a body with two bad fields was told of the first only. Every
    bad field is named, nested ones, unknown and missing ones too, in the body's order with
    the missing ones last; nothing is created."""
    r = await api.post("/v1/status-pages", json={"title": "", "tags": 5, "bogus": 1},
                       headers=team.auth)
    assert r.status_code == 422, r.text
    assert r.json()["errors"] == [
        {"field": "title", "message": "must not be empty"},
        {"field": "tags", "message": "must be an array or null, not a whole number"},
        {"field": "bogus", "message": "is not a field of this object (check its spelling)"}]
    assert r.json()["detail"].startswith("title: must not be empty; tags: ")
    r = await api.post("/v1/jobs", json={"name": "j" * 201, "overlap": "maybe",
                                         "request": {"url": 5, "colour": "red"}},
                       headers=team.auth)
    assert r.status_code == 422, r.text
    assert [(e["field"], e["message"]) for e in r.json()["errors"]] == [
        ("name", "must be at most 200 characters long"),
        ("overlap", "must be one of: allow, queue, skip"),
        ("request.url", "must be a string, not a whole number"),
        ("request.colour", "is not a field of this object (check its spelling)"),
        ("schedule", "is required")]
    listed = await api.get("/v1/jobs", headers=team.auth)
    assert listed.json()["items"] == []


async def test_an_integer_written_with_a_fraction_of_zero_is_an_integer(
    api: AsyncTestClient, team: Team,
) -> None:
    """JSON Schema's ``integer`` is a number without a fractional part: ``200.0`` and ``1e2``
    are integers the document allows, so the server takes them; ``200.5`` is not one."""
    body = {"name": "j", "schedule": "1h", "paused": True, "success_statuses": [200.0, 1e2],
            "alert_after_failures": 3.0, "request": {"url": "https://example.com/"}}
    r = await api.post("/v1/jobs", json=body, headers=team.auth)
    assert r.status_code == 201, r.text
    assert (r.json()["success_statuses"], r.json()["alert_after_failures"]) == ([100, 200], 3)
    r = await api.post("/v1/jobs", json={**body, "success_statuses": [200.5]},
                       headers=team.auth)
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "success_statuses.0"
    r = await api.post("/v1/monitors", json={"name": "m", "schedule": "1h", "grace_seconds": 60.0},
                       headers=team.auth)
    assert r.status_code == 201 and r.json()["grace_seconds"] == 60, r.text


async def test_revoking_a_key(api: AsyncTestClient, team: Team) -> None:
    # The one operation .ci/schemathesis does not fuzz (it would revoke the fuzzer's key).
    made = await api.post("/v1/api-keys", json={"name": "spare"}, headers=team.auth)
    assert made.status_code == 201, made.text
    spare = {"Authorization": f"Bearer {made.json()['key']}"}
    assert (await api.get("/v1/api-keys", headers=spare)).status_code == 200
    path = f"/v1/api-keys/{made.json()['id']}"
    assert (await api.delete(path, headers=team.read_auth)).status_code == 403
    assert (await api.delete(path, headers=team.auth)).status_code == 204
    again = await api.delete(path, headers=team.auth)
    assert again.status_code == 404 and again.headers["content-type"] == "application/problem+json"
    assert (await api.get("/v1/api-keys", headers=spare)).status_code == 401


def _pattern(schema: dict[str, Any]) -> re.Pattern[str]:
    """A document pattern as a Python regular expression (the subset both engines read)."""
    return re.compile(schema["pattern"])


def test_the_documents_patterns_are_the_servers_rules(doc: dict[str, Any]) -> None:
    """What a generated client learns from the document (a pattern) is what the server
    decides: each text matches the pattern exactly when the server's own rule accepts it."""
    schemas = doc["components"]["schemas"]
    tag = _pattern(schemas["JobCreate"]["properties"]["tags"]["items"])
    for text in ("ok", "café", "日本", "a-b_c.d:e", "\ue000", "x" * 50, "", "x" * 51, "a b",
                 "a/b", "*", "a\x85b", "zero\u200bwidth", "soft\xadhyphen", "bom\ufeff",
                 "nb\xa0sp", "\u2028", "\x00", "a\x1fb"):
        errors = FieldErrors()
        normalize_tags([text], errors)
        assert bool(tag.fullmatch(text)) == (not errors.items), repr(text)
    realert = next(s for s in schemas["JobCreate"]["properties"]["realert_every"]["anyOf"]
                   if s.get("type") == "string")
    duration = _pattern(realert)
    for text in ("30m", "1h30m", "1d", " 2h ", "90s", "1d2h3m4s", "", " ", "90", "1x", "h",
                 "\u0661m", "1m1h", "-1m", "1.5h", "1 h"):
        assert bool(duration.match(text)) == (parse_duration(text) is not None), repr(text)
    methods = _pattern(schemas["MonitorCreate"]["properties"]["methods"])
    assert [bool(methods.match(m)) for m in ("any", "POST", "Post", "", "get")] == [
        True, True, True, False, False]
    method = _pattern(schemas["RequestSpec"]["properties"]["method"])
    assert [bool(method.match(m)) for m in ("get", "DELETE", "", "FETCH")] == [
        True, True, True, False]
    names = schemas["RequestSpec"]["properties"]["headers"]["propertyNames"]
    token, reserved = _pattern(names), _pattern(names["not"])
    for name in ("X-Team", "Host", "HOST", "content-length", "Idempotency-Key", "X-Host",
                 "Hostname", "a b", "Transfer-Encoding", "x-cronledger-attempt"):
        errors = FieldErrors()
        jobdef._check_headers({name: "v"}, errors)  # noqa: SLF001 - the rule itself
        allowed = bool(token.match(name)) and not reserved.match(name)
        assert allowed == (not errors.items), name
    cursors = {p["name"]: p["schema"] for p in doc["paths"]["/v1/jobs"]["get"]["parameters"]}
    keyset = _pattern(next(s for s in cursors["cursor"].get("anyOf", [cursors["cursor"]])
                           if "pattern" in s))
    at = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    row = uuid.uuid4()
    assert keyset.match(encode_cursor(at, row)) and decode_cursor(encode_cursor(at, row)) == (
        at, row)
    for text in ("0_" + "0" * 32, "-" + "9" * 16 + "_" + "f" * 32, ""):
        assert keyset.match(text)
        decode_cursor(text)  # every cursor of the pattern is a position


async def test_what_the_document_allows_the_server_takes(
    api: AsyncTestClient, team: Team,
) -> None:
    """The examples of the patterns above, end to end."""
    r = await api.post("/v1/monitors", headers=team.auth, json={
        "name": "doc", "schedule": "1h", "methods": "Post", "tags": ["café", "\ue000"],
        "realert_every": " 1h30m ", "max_duration": "1d2s"})
    assert r.status_code == 201, r.text
    assert (r.json()["methods"], r.json()["realert_every"]) == ("post", 5400)
    r = await api.post("/v1/monitors", headers=team.auth, json={
        "name": "doc", "schedule": "1h", "realert_every": "\u0661\u0662m"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "realert_every"
    for cursor in ("0_" + "0" * 32, "9" * 16 + "_" + "f" * 32):
        r = await api.get("/v1/monitors", params={"cursor": cursor}, headers=team.auth)
        assert r.status_code == 200, r.text


def _validator(doc: dict[str, Any], name: str) -> Any:
    import jsonschema_rs  # schemathesis' validator (a dev dependency through it)

    return jsonschema_rs.validator_for({**doc["components"]["schemas"][name],
                                        "components": doc["components"]})


@pytest.mark.parametrize(("path", "name", "body"), [
    ("/v1/channels", "ChannelCreate", {"kind": "webhook", "url": "https://example.com/h"}),
    ("/v1/channels", "ChannelCreate", {"kind": "webhook"}),
    ("/v1/channels", "ChannelCreate", {"kind": "webhook", "url": "https://example.com/h",
                                       "chat_id": 1}),
    ("/v1/channels", "ChannelCreate", {"kind": "webhook", "url": "https://example.com/h",
                                       "chat_id": None, "to": None}),
    ("/v1/channels", "ChannelCreate", {"kind": "slack", "url": None}),
    ("/v1/channels", "ChannelCreate", {"kind": "slack", "url": "https://example.com/s",
                                       "signing_secret": "x" * 40}),
    ("/v1/channels", "ChannelCreate", {"kind": "telegram", "chat_id": 1, "token_secret": "T"}),
    ("/v1/channels", "ChannelCreate", {"kind": "telegram", "chat_id": "@chan"}),
    ("/v1/channels", "ChannelCreate", {"kind": "email", "to": "a@example.com"}),
    ("/v1/channels", "ChannelCreate", {"kind": "email", "to": None}),
    ("/v1/maintenance", "MaintenanceCreate", {"from": "2030-01-01T00:00:00Z",
                                              "to": "2030-01-01T01:00:00Z"}),
    ("/v1/maintenance", "MaintenanceCreate", {"from": "2030-01-01T00:00:00Z",
                                              "to": "2030-01-01T01:00:00Z",
                                              "duration_seconds": 60}),
    ("/v1/maintenance", "MaintenanceCreate", {"schedule": "0 3 * * *", "duration_seconds": 60,
                                              "timezone": "Europe/Paris"}),
    ("/v1/maintenance", "MaintenanceCreate", {"schedule": "0 3 * * *"}),
    ("/v1/maintenance", "MaintenanceCreate", {"schedule": "0 3 * * *", "duration_seconds": 60,
                                              "to": "2030-01-01T01:00:00Z"}),
    ("/v1/maintenance", "MaintenanceCreate", {}),
])
async def test_fields_that_exclude_each_other_are_in_the_document(
    api: AsyncTestClient, team: Team, doc: dict[str, Any], path: str, name: str,
    body: dict[str, Any],
) -> None:
    """A channel's kind decides its fields, a window is one-off or recurring: the document's
    ``oneOf`` and the server agree on each body."""
    if name == "ChannelCreate":
        body = {"name": f"c-{uuid.uuid4().hex[:8]}", **body}
    valid = _validator(doc, name).is_valid(body)
    r = await api.post(path, json=body, headers=team.auth)
    assert r.status_code == (201 if valid else 422), (valid, r.text)


def _string_branch(schema: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in schema.get("anyOf", [schema]) if s.get("type") == "string")


def test_bounded_durations_schedules_and_zones_have_formats(doc: dict[str, Any]) -> None:
    """What a pattern cannot bound (a duration's seconds summed over its units) or spell (a
    schedule, a zone) is a format of the document, its bounds the core's constants."""
    schemas = doc["components"]["schemas"]
    bounds = {
        ("JobCreate", "realert_every"): (MIN_REALERT_SECONDS, MAX_REALERT_SECONDS),
        ("MonitorPatch", "realert_every"): (MIN_REALERT_SECONDS, MAX_REALERT_SECONDS),
        ("MonitorCreate", "min_duration"): (1, MAX_RUN_SECONDS),
        ("MonitorChanges", "max_duration"): (1, MAX_RUN_SECONDS),
        ("JobPatch", "max_duration"): (1, MAX_RUN_SECONDS),
        ("Snooze", "for"): (mdef.MIN_SNOOZE_SECONDS, mdef.MAX_SNOOZE_SECONDS),
    }
    for (name, field), (low, high) in bounds.items():
        text = _string_branch(schemas[name]["properties"][field])
        assert text["format"] == "cronledger-duration", (name, field)
        assert (text["x-minimum-seconds"], text["x-maximum-seconds"]) == (low, high)
        integer = next(s for s in schemas[name]["properties"][field]["anyOf"]
                       if s.get("type") == "integer")
        assert (integer["minimum"], integer["maximum"]) == (low, high), (name, field)
    assert _string_branch(schemas["JobCreate"]["properties"]["schedule"])["format"] == (
        "cronledger-schedule")
    for name in ("MonitorCreate", "MonitorChanges"):
        assert _string_branch(schemas[name]["properties"]["schedule"])["format"] == (
            "cronledger-repeating-schedule")
    assert _string_branch(schemas["ProposedWindow"]["properties"]["schedule"])["format"] == (
        "cronledger-schedule")
    assert schemas["JobCreate"]["properties"]["timezone"]["format"] == "cronledger-time-zone"
    assert schemas["RequestSpec"]["properties"]["url"]["format"] == "cronledger-url"
    preview = {p["name"]: p["schema"]
               for p in doc["paths"]["/v1/schedules/preview"]["get"]["parameters"]}
    assert (preview["schedule"]["format"], preview["timezone"]["format"]) == (
        "cronledger-schedule", "cronledger-time-zone")


def test_names_addresses_and_keywords_patterns_are_the_servers(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    name = re.compile(schemas["JobCreate"]["properties"]["name"]["pattern"])
    for text in ("a", " a ", " ", "\u3000", "\t\n", "x" * 3, "a\x00b", "\x00"):
        errors = FieldErrors()
        errors.items += nul_errors({"name": text})
        accepted = bool(text.strip()) and not errors.items
        assert bool(name.fullmatch(text)) == accepted, repr(text)
    channel = schemas["ChannelCreate"]["properties"]
    email = re.compile(_string_branch(channel["to"])["pattern"])
    smtp = next(s for s in channel["smtp"]["anyOf"] if "properties" in s)
    assert smtp["required"] == ["host"] and smtp["additionalProperties"] is False
    for text in ("ops@example.com", "a b@c.de", "a\x00@b.co", "a\x1c@b.co", "x@y",
                 "ops@example.com\n", "@b.co"):
        try:
            chandef.normalize_channel({"name": "n", "kind": "email", "to": [text]})
            accepted = True
        except InvalidInput:
            accepted = False
        # fullmatch: an anchored JSON Schema pattern's `$` is the end of the text, not a
        # final newline as Python's
        assert bool(email.fullmatch(text)) == accepted, repr(text)
    keyword = re.compile(schemas["MonitorCreate"]["properties"]["start_keywords"]["items"][
        "pattern"])
    for text in ("ok", "a b", " a", "a ", "a,b", "x", "\u3000x"):
        errors = FieldErrors()
        mondef.normalize_keywords([text], "start_keywords", errors)
        assert bool(keyword.fullmatch(text)) == (not errors.items), repr(text)


@pytest.mark.parametrize(("body", "valid"), [
    ({"jobs": [{}]}, False),
    ({"jobs": [{"name": "j", "schedule": "1h", "request": {"url": "https://example.com/"},
                "tags": None, "enabled": False}]}, True),
    ({"jobs": [{"name": "j", "schedule": "1h", "request": {"url": "https://example.com/"},
                "enabled": None}]}, False),
    ({"jobs": [{"name": "j", "schedule": "1h", "request": {
        "url": "https://example.com/", "method": None, "headers": None}}]}, True),
    ({"jobs": [{"name": "j", "schedule": "1h", "request": {
        "url": "https://example.com/", "method": {}}}]}, False),
    ({"jobs": [{"name": "j", "schedule": "1h", "request": {
        "url": "https://example.com/", "headers": {"X-A": "a\rb"}}}]}, False),
    ({"jobs": [{"name": "j", "schedule": "1h", "request": {"url": "https://example.com/"},
                "schedule_text": 1}]}, False),
    ({"monitors": [{"schedule": "1h"}]}, False),
    ({"monitors": [{"name": "m", "schedule": "1h", "grace_seconds": 60.0}]}, True),
    ({"channels": [{"name": "c", "kind": "email", "to": "ops@example.com",
                    "smtp": {"host": "mail.example.com", "security": ""}}]}, True),
    ({"channels": [{"name": "c", "kind": "email", "to": "ops@example.com",
                    "smtp": {"host": "mail.example.com", "security": {}}}]}, False),
    ({"channels": [{"name": "c", "kind": "email", "to": "ops@example.com", "smtp": {}}]}, False),
    ({"channels": [{"name": "c", "kind": "email", "to": [{}]}]}, False),  # was a 500
    ({"channels": [{"name": "c", "kind": "webhook", "url": "https://example.com/",
                    "signing_secret": "x" * 20 + "\x00"}]}, False),
])
async def test_an_applied_documents_items_are_in_the_document(
    api: AsyncTestClient, team: Team, doc: dict[str, Any], body: dict[str, Any],
    valid: bool,
) -> None:
    """``POST /v1/apply``'s tables take the create bodies of their kind (``name`` required,
    ``null`` for a default, ``200.0`` an integer): the document and the server agree."""
    assert _validator(doc, "ApplyDocument").is_valid(body) == valid
    r = await api.post("/v1/apply", params={"dry_run": "true"}, json=body, headers=team.auth)
    assert r.status_code == (200 if valid else 422), r.text


@pytest.mark.parametrize(("window", "valid"), [
    ({"schedule": "0 3 * * *", "duration_seconds": 60}, True),
    ({"schedule": "0 3 * * *", "duration_seconds": None}, False),
    ({"from": "2026-11-01T00:00:00Z", "to": "2026-11-01T01:00:00Z"}, True),
    ({"from": "2026-11-01T00:00:00Z", "to": None}, False),
])
async def test_a_simulated_window_is_one_off_or_recurring_in_the_document(
    api: AsyncTestClient, team: Team, doc: dict[str, Any],
    window: dict[str, Any], valid: bool,
) -> None:
    body = {"changes": {"maintenance": [window]}}
    assert _validator(doc, "MonitorSimulate").is_valid(body) == valid
    r = await api.post("/v1/monitors", json={"name": "sim", "schedule": "1h"},
                       headers=team.auth)
    assert r.status_code == 201, r.text
    r = await api.post(f"/v1/monitors/{r.json()['id']}/simulate", json=body,
                       headers=team.auth)
    assert r.status_code == (200 if valid else 422), r.text


def _request_strings(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The string schemas of the components a request body refers to (transitively)."""
    schemas = doc["components"]["schemas"]
    names: set[str] = set()
    pending = [m["schema"]["$ref"].rsplit("/", 1)[-1]
               for _, _, op in _operations(doc) if "requestBody" in op
               for m in op["requestBody"]["content"].values() if "$ref" in m["schema"]]
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "$ref" in node:
                pending.append(node["$ref"].rsplit("/", 1)[-1])
            if node.get("type") == "string":
                found.append(node)
            for key, value in node.items():
                if key == "properties":
                    for field, schema in value.items():
                        if (name, field) != ("SecretPut", "value"):  # sealed, any text
                            walk(schema)
                elif key not in ("examples", "default"):
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    while pending:
        name = pending.pop()
        if name not in names:
            names.add(name)
            walk(schemas[name])
    return found


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_no_text_of_a_request_may_hold_nul(doc: dict[str, Any], data: st.DataObject) -> None:
    """The server refuses NUL in any text (PostgreSQL cannot store it): every string of a
    request body has a pattern, and no pattern matches a text with NUL in it."""
    strings = [s for s in _request_strings(doc) if s.get("format") not in ("date-time", "uuid")
               and "enum" not in s]
    assert strings
    for schema in strings:
        assert "pattern" in schema, schema
        pattern = re.compile(schema["pattern"])
        text = data.draw(st.from_regex(pattern, fullmatch=True), label=schema["pattern"])
        at = data.draw(st.integers(0, len(text)))
        assert not pattern.fullmatch(text[:at] + "\x00" + text[at:]), schema["pattern"]


def _patterns(schema: dict[str, Any]) -> list[str]:
    found = [schema["pattern"]] if "pattern" in schema else []
    for key in ("oneOf", "anyOf", "allOf"):
        for part in schema.get(key, ()):
            found += _patterns(part)
    if "items" in schema:
        found += _patterns(schema["items"])
    return found


def test_every_parameter_pattern_is_refused_in_words(doc: dict[str, Any]) -> None:
    """A query or path parameter the decoder checks against a pattern is refused with the
    pattern's words (api/errors.py:PATTERN_WORDS), never with the raw regex as the message
    (issue 32: the preview's spread said ~600 characters of pattern). The ping routes' tokens
    are not decoded by pattern: an unknown one is a plain 404, as healthchecks answers."""
    from api.errors import PATTERN_WORDS

    raw = sorted({(path, p["name"], pattern) for path, _, op in _operations(doc)
                  for p in op.get("parameters", ()) if p.get("in") in ("query", "path")
                  for pattern in _patterns(p.get("schema", {}))
                  if pattern not in PATTERN_WORDS and "/ping/" not in path})
    assert raw == [], "\n".join(map(str, raw))


def _decoder_patterns(kind: Any) -> set[str]:
    """Every ``pattern`` msgspec checks while decoding ``kind`` (a msgspec.inspect type)."""
    import msgspec.inspect as mi

    if isinstance(kind, mi.StrType):
        return {kind.pattern} if kind.pattern else set()
    if isinstance(kind, mi.Metadata):  # a description or schema extra around the type
        return _decoder_patterns(kind.type)
    if isinstance(kind, mi.StructType):
        return set().union(*(_decoder_patterns(f.type) for f in kind.fields))
    if isinstance(kind, mi.UnionType):
        return set().union(*(_decoder_patterns(t) for t in kind.types))
    if isinstance(kind, mi.DictType):
        return _decoder_patterns(kind.key_type) | _decoder_patterns(kind.value_type)
    if isinstance(kind, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        return _decoder_patterns(kind.item_type)
    if isinstance(kind, mi.TupleType):
        return set().union(*(_decoder_patterns(t) for t in kind.item_types))
    return set()


def test_every_body_pattern_is_refused_in_words(doc: dict[str, Any]) -> None:
    """A body field the decoder checks against a pattern is refused with the pattern's words
    (api/errors.py:PATTERN_WORDS), never with the raw regex (issue 32: a blank title was told
    ~1,500 characters of pattern, a custom path and a monitor's slug theirs). Every Struct of
    api/schemas is walked as the decoder sees it; and no pattern of the document's request
    bodies, fed to the error handler as the decoder words it, comes out as a regex."""
    import importlib
    import pkgutil

    import msgspec
    import msgspec.inspect as mi

    import api.schemas
    from api.errors import PATTERN_WORDS, _words
    from core.monitors.slugs import SLUG_PATTERN
    from core.statuspages.definition import TEXT_PATTERN

    structs = [value for info in pkgutil.iter_modules(api.schemas.__path__)
               for value in vars(importlib.import_module(f"api.schemas.{info.name}")).values()
               if isinstance(value, type) and issubclass(value, msgspec.Struct)
               and value.__module__.startswith("api.schemas.")]
    assert len(structs) > 20
    found = set().union(*(_decoder_patterns(t) for t in mi.multi_type_info(structs)))
    assert f"^{SLUG_PATTERN}$" in found and f"^{TEXT_PATTERN}$" in found
    assert sorted(found - PATTERN_WORDS.keys()) == []
    body = [p for s in _request_strings(doc) for p in _patterns(s)]
    assert body
    for pattern in body:
        message = _words(f"Expected `str` matching regex {pattern!r} - at `$.x`")
        assert "regex" not in message and pattern not in message, pattern
