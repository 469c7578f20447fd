"""The OpenAPI document at /schema/openapi.json describes what the API answers (docs/api.md):
the error answers of every route, the unauthenticated routes, the core's limits."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core import apikeys, secrets
from core.alerting import MAX_CHANNELS
from core.channels import definition as chandef
from core.jobs import definition as jobdef
from core.monitors import definition as mondef
from core.monitors.ping import MAX_EXIT_STATUS

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
        if any(p["in"] == "path" for p in params) and method != "put":
            expected.add("404")
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
    api: AsyncTestClient, doc: dict[str, Any], team: dict[str, Any],
) -> None:
    schema = doc["components"]["schemas"]["Problem"]
    assert set(schema["required"]) == {"type", "title", "status", "detail"}
    assert set(schema["properties"]["errors"]["items"]["required"]) == {"field", "message"}
    r = await api.post("/v1/jobs", json={"name": "", "schedule": "1h"}, headers=team["auth"])
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
    api: AsyncTestClient, team: dict[str, Any], body: dict[str, Any], field: str,
) -> None:
    r = await api.post("/v1/api-keys", json=body, headers=team["auth"])
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["title"] == "Invalid input"
    assert field in [e["field"] for e in r.json()["errors"]]


@pytest.mark.parametrize("path", ["/v1/jobs/{id}/events", "/v1/monitors/{id}/events",
                                  "/v1/monitors/{id}/pings"])
async def test_a_non_ascii_digit_cursor_is_422_not_500(
    api: AsyncTestClient, team: dict[str, Any], path: str,
) -> None:
    # "²".isdigit() is true but int("²") raises: the parameter's pattern refuses it first.
    r = await api.get(path.format(id=uuid.uuid4()), params={"cursor": "²"},
                      headers=team["auth"])
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
    api: AsyncTestClient, team: dict[str, Any], path: str, body: dict[str, Any], field: str,
) -> None:
    r = await api.post(path, json=body, headers=team["auth"])
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert [e["field"] for e in r.json()["errors"]] == [field], r.json()
    assert (await api.post(path, json=body)).status_code == 401  # authentication comes first


async def test_revoking_a_key(api: AsyncTestClient, team: dict[str, Any]) -> None:
    # The one operation .ci/schemathesis does not fuzz (it would revoke the fuzzer's key).
    made = await api.post("/v1/api-keys", json={"name": "spare"}, headers=team["auth"])
    assert made.status_code == 201, made.text
    spare = {"Authorization": f"Bearer {made.json()['key']}"}
    assert (await api.get("/v1/api-keys", headers=spare)).status_code == 200
    path = f"/v1/api-keys/{made.json()['id']}"
    assert (await api.delete(path, headers=team["read_auth"])).status_code == 403
    assert (await api.delete(path, headers=team["auth"])).status_code == 204
    again = await api.delete(path, headers=team["auth"])
    assert again.status_code == 404 and again.headers["content-type"] == "application/problem+json"
    assert (await api.get("/v1/api-keys", headers=spare)).status_code == 401
