"""Shared acceptance cases (tests/data/time_cases.json, a copy of shared/cases) for cron evaluation.

Only cases whose ``input.op`` is ``next_fire_times`` are ours; monitor and ping cases (M01, H01)
belong to other modules' tests and are left alone here.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from core.schedule import parse_schedule
from tests.reference_cron import reference_fires

CASES_FILE = Path(__file__).parents[1] / "data" / "time_cases.json"


def _load() -> list[tuple[str, dict, dict]]:
    document = json.loads(CASES_FILE.read_text())
    rows = []
    for case in document["cases"]:
        if case["input"].get("op") != "next_fire_times":
            continue
        expected = {r["label"]: r for r in case["expected"]["results"]}
        for sub in case["input"]["cases"]:
            rows.append((f"{case['id']}-{sub['label']}", sub, expected[sub["label"]]))
    return rows


CASES = _load()


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _z(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def test_case_file_is_loaded_and_keeps_other_modules_cases() -> None:
    ids = {case["id"] for case in json.loads(CASES_FILE.read_text())["cases"]}
    assert {"C01", "C09", "C16", "M01", "H01"} <= ids
    assert {row[0].split("-")[0] for row in CASES} == {"C01", "C09", "C16"}


@pytest.mark.parametrize(("case_id", "sub", "expected"), CASES, ids=[row[0] for row in CASES])
def test_next_fire_times(case_id: str, sub: dict, expected: dict) -> None:
    # croniter_kwargs (C16) describe croniter's own knobs; the engine must give the product
    # answer whatever they say, so they are deliberately ignored.
    after = _utc(sub["after_utc"])
    schedule = parse_schedule(sub["expr"], sub["tz"], anchor=after)
    fires = schedule.fires(after, sub["n"])
    assert [_z(f.at) for f in fires] == expected["next_utc"]
    assert [f.local.isoformat() for f in fires] == expected["next_local"]


@pytest.mark.parametrize(("case_id", "sub", "expected"), CASES, ids=[row[0] for row in CASES])
def test_next_fire_chain_matches_case(case_id: str, sub: dict, expected: dict) -> None:
    """next_fire applied repeatedly walks the same list (strictly-after semantics)."""
    after = _utc(sub["after_utc"])
    schedule = parse_schedule(sub["expr"], sub["tz"], anchor=after)
    chain, cursor = [], after
    for _ in range(sub["n"]):
        cursor = schedule.next_fire(cursor)
        chain.append(_z(cursor))
    assert chain == expected["next_utc"]


@pytest.mark.parametrize(("case_id", "sub", "expected"), CASES, ids=[row[0] for row in CASES])
def test_reference_agrees_with_case(case_id: str, sub: dict, expected: dict) -> None:
    """The brute-force reference itself passes the shared cases (so it can be trusted)."""
    after = _utc(sub["after_utc"])
    until = _utc(expected["next_utc"][-1])
    fires = reference_fires(sub["expr"], sub["tz"], after, until)
    assert [_z(at) for at, _ in fires] == expected["next_utc"]
