"""The declarative file's pure parts: the field-level diff and the plan, the document's shape
checks and literal-secret warnings, key lines of a TOML source, and the TOML rendering."""

from __future__ import annotations

import tomllib
import uuid

import pytest

from core.declarative.document import check_document, monitor_key, secret_warnings
from core.declarative.lines import key_lines, line_of
from core.declarative.plan import FieldDiff, diff_fields, plan_kind, plan_lines
from core.declarative.render import render_document
from core.errors import FieldErrors, InvalidInput


def test_diff_names_the_innermost_field_and_removed_keys() -> None:
    old = {"schedule": "0 3 * * *", "request": {"url": "u", "headers": {"A": "1", "B": "2"}},
           "retry": {"attempts": 1}}
    new = {"schedule": "0 4 * * *", "request": {"url": "u", "headers": {"A": "1"}},
           "retry": {"attempts": 1}}
    assert diff_fields(old, new) == [FieldDiff("schedule", "0 3 * * *", "0 4 * * *"),
                                     FieldDiff("request.headers.B", "2", None)]
    assert diff_fields(new, new) == []


def test_plan_create_update_unchanged_and_prune() -> None:
    a, b, c = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    current = {"same": (a, {"x": 1}), "changed": (b, {"x": 1}), "gone": (c, {"x": 1})}
    desired = [("new", {"x": 2}), ("same", {"x": 1}), ("changed", {"x": 3})]
    plan = plan_kind("job", desired, current, prune=False)
    assert [(p.name, p.action) for p in plan] == [
        ("new", "create"), ("same", "unchanged"), ("changed", "update")]
    assert plan[2].diffs == [FieldDiff("x", 1, 3)] and plan[2].id == b
    pruned = plan_kind("job", desired, current, prune=True)
    assert [(p.name, p.action, p.id) for p in pruned][-1] == ("gone", "delete", c)


def test_plan_lines() -> None:
    lines = plan_lines([
        {"kind": "job", "name": "a", "action": "create", "changes": []},
        {"kind": "job", "name": "b", "action": "update",
         "changes": [{"field": "schedule", "old": "1h", "new": "2h"},
                     {"field": "url", "old": "[sealed]", "new": "[sealed, changed]"}]},
        {"kind": "monitor", "name": "c", "action": "delete", "changes": []},
        {"kind": "channel", "name": "d", "action": "unchanged", "changes": []}])
    assert lines == ["+ create job 'a'", "~ update job 'b'", "    schedule: '1h' -> '2h'",
                     "    url: [sealed] -> [sealed, changed]", "- delete monitor 'c'",
                     "= unchanged channel 'd'"]


def test_document_shape_errors_have_paths() -> None:
    errors = FieldErrors()
    check_document({"jobs": [{"name": "a", "colour": 1}, {"name": "a", "enabled": "no"},
                             {"schedule": "1h", "channels": "ops"}],
                    "tasks": []}, errors)
    fields = {e.field for e in errors.items}
    assert fields == {"tasks", "jobs.0.colour", "jobs.1.name", "jobs.1.enabled",
                      "jobs.2.name", "jobs.2.channels"}
    with pytest.raises(InvalidInput):
        check_document(["not", "a", "table"], FieldErrors())


def test_monitors_are_keyed_by_slug_and_names_may_repeat() -> None:
    errors = FieldErrors()
    check_document({"monitors": [
        {"name": "Backup", "schedule": "1h"}, {"name": "Backup", "slug": "b2", "schedule": "1h"},
        {"name": "backup!", "schedule": "1h"}, {"name": "!!!", "schedule": "1h"},
        {"name": "x", "slug": "Not A Slug", "schedule": "1h"}]}, errors)
    assert {e.field: e.message.split(":")[0] for e in errors.items} == {
        "monitors.2.name": "monitor slug 'backup' is already defined above (monitors.0)",
        "monitors.3.slug": "is required",
        "monitors.4.slug": "must be 1 to 100 lowercase letters, digits, - or _"}
    assert [monitor_key(m) for m in ({"name": "Nightly Backup (DB)"}, {"name": "x", "slug": "y"},
                                     {"name": "!!!"})] == ["nightly-backup-db", "y", None]


def test_literal_secrets_warn_placeholders_do_not() -> None:
    objects = {"jobs": [
        {"name": "a", "request": {"url": "https://x/?api_key=123", "headers": {
            "Authorization": "Bearer abc", "X-Token": "${secrets.T}", "Accept": "text/plain"}},
         "signing_secret": "literal-signing-secret"},
        {"name": "b", "request": {"url": "https://x/?api_key=${secrets.K}", "headers": {
            "Authorization": "Bearer ${secrets.T}"}}}],
        "channels": [{"name": "c", "kind": "slack", "url": "https://hooks.slack.com/x"},
                     {"name": "d", "kind": "slack", "url": "${secrets.SLACK}"}]}
    assert {w.field for w in secret_warnings(objects)} == {
        "jobs.0.request.url", "jobs.0.request.headers.Authorization", "jobs.0.signing_secret",
        "channels.0.url"}


SOURCE = '''# a comment
[[channels]]
name = "ops"
kind = "slack"

[[jobs]]
name = "one"
schedule = "1h"
request = { url = "https://a/", headers = { A = "1" } }

[[jobs]]
name = "two"
description = """
name = "not a key"
"""
"schedule" = "2h"
request.url = "https://b/"
channels = [
  "ops",
]

[jobs.retry]
attempts = 3
'''


def test_key_lines_follow_arrays_subtables_and_dotted_keys() -> None:
    lines = key_lines(SOURCE)
    assert line_of(lines, "channels.0.kind") == 4
    assert line_of(lines, "jobs.0") == 6
    assert line_of(lines, "jobs.0.schedule") == 8
    assert line_of(lines, "jobs.0.request.headers.A") == 9  # inside an inline table
    assert line_of(lines, "jobs.1.name") == 12
    assert line_of(lines, "jobs.1.description") == 13
    assert line_of(lines, "jobs.1.schedule") == 16  # quoted key, after a multi-line string
    assert line_of(lines, "jobs.1.request.url") == 17
    assert line_of(lines, "jobs.1.channels.0") == 18  # an array item: the array's key
    assert line_of(lines, "jobs.1.retry.attempts") == 23
    assert line_of(lines, "jobs.1.unknown") == 11  # falls back to the table
    assert line_of(lines, "monitors.0.name") is None


def test_render_round_trips_through_tomllib() -> None:
    document = {
        "channels": [{"name": "mail", "kind": "email", "to": ["a@example.com"],
                      "smtp": {"host": "smtp.example.com", "port": 587, "username": None}}],
        "monitors": [{"name": "m", "schedule": "10m", "grace_seconds": 60}],
        "jobs": [{"name": "j", "schedule": "@at 2099-01-01T00:00:00Z", "channels": ["mail"],
                  "request": {"url": "https://a/", "headers": {"X-A": "${secrets.A}"}},
                  "retry": {"attempts": 3, "delay_seconds": 2.5}},
                 {"name": "k", "schedule": "1h", "request": {"url": "https://b/"}}]}
    text = render_document(document, ["header"])
    assert text.startswith("# header\n") and text.count("[[jobs]]") == 2
    parsed = tomllib.loads(text)
    del document["channels"][0]["smtp"]["username"]  # TOML has no null
    assert parsed == document
