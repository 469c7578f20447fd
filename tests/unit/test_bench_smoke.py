"""The benchmarks' smoke run (``bench/smoke.py``, run by ``.ci/run``): every runnable script
of ``bench/`` is in it with a ``--smoke`` mode, and the count checks the scripts exit on say
no to what does not count right."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from bench.dispatch import counted_right, slot_stats
from bench.smoke import BENCH, scripts


def test_every_runnable_bench_script_is_in_the_smoke_run_with_a_smoke_mode() -> None:
    names = scripts()
    runnable = {p.stem for p in BENCH.glob("*.py")
                if '__name__ == "__main__"' in p.read_text()} - {"smoke"}
    assert set(names) == runnable
    assert {"pings", "dispatch", "compare", "scale", "soak"} <= set(names)
    for name in names:
        assert '"--smoke"' in (BENCH / f"{name}.py").read_text(), f"bench/{name}.py"


def _slot(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def test_a_slot_missed_or_delivered_twice_does_not_count_right() -> None:
    first = int(time.time()) // 10 * 10
    hits = [(first + 0.01, job, _slot(slot)) for job in ("a", "b")
            for slot in (first, first + 10)]
    row = {"jobs": 2, "slots": 2, **slot_stats(hits, first, first + 10, 2, 10)}
    assert counted_right(row)
    twice = {"jobs": 2, "slots": 2, **slot_stats([*hits, hits[0]], first, first + 10, 2, 10)}
    assert twice["duplicates"] == 1 and not counted_right(twice)
    missed = {"jobs": 2, "slots": 2, **slot_stats(hits[1:], first, first + 10, 2, 10)}
    assert missed["missed"] == 1 and not counted_right(missed)
