"""The suite's own rules, read from its source: every test asserts something."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

# Helpers that assert (or fail the test) themselves, so a test that only calls one of them still
# checks something. Keep this short: a test should rather say what it expects.
ASSERTING_HELPERS = {
    "raises",  # pytest.raises
    "eventually",  # tests/helpers.py: fails when the condition never holds
    "_compare_with_reference",  # tests/unit/test_schedule_engine.py
    "_check_days_against_reference",  # tests/unit/test_schedule_engine.py
    "_check_phrase",  # tests/unit/test_phrase_properties.py
    "check_table_phrase",  # tests/unit/test_schedule_words.py
    "_bars_agree",  # tests/unit/test_status_bars.py
    "test_the_count_equals_the_straightforward_one_on_generated_jobs",  # tests/unit/test_peaks.py
    "test_skipping_replays_alert_as_the_full_ones",  # tests/unit/test_advice_skipping.py
}


def _called(node: ast.AST) -> set[str]:
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            names.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
    return names


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in ``body`` at any depth (a test function is one): only the statement
    lists are walked, not the expressions inside them, which were most of the nodes."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, field, ()):
                if isinstance(child, ast.excepthandler | ast.match_case):
                    yield from _statements(child.body)
                elif isinstance(child, ast.stmt):
                    yield from _statements([child])


def _silent_tests(path: Path, root: Path = TESTS.parent) -> list[str]:
    """``file:line name`` of each ``test_*`` function in ``path`` that checks nothing."""
    silent = []
    for node in _statements(ast.parse(path.read_text(), filename=str(path)).body):
        if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name.startswith("test_")
                and not any(isinstance(n, ast.Assert) for n in ast.walk(node))
                and not _called(node) & ASSERTING_HELPERS):
            silent.append(f"{path.relative_to(root)}:{node.lineno} {node.name}")
    return silent


def test_every_test_asserts_something() -> None:
    files = sorted(TESTS.rglob("test_*.py"))
    assert len(files) > 40, files  # the scan found the suite
    silent = [name for path in files for name in _silent_tests(path)]
    assert silent == [], "tests with no assert, no pytest.raises and no asserting helper"


def test_the_scan_catches_a_silent_test(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text("import pytest\n\n"
                      "def test_silent():\n    print('hi')\n\n"
                      "def test_asserts():\n    assert 1\n\n"
                      "async def test_raises():\n    with pytest.raises(ValueError):\n"
                      "        int('x')\n")
    assert _silent_tests(sample, tmp_path) == ["test_sample.py:3 test_silent"]

