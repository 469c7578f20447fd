"""Sorted whole numbers written as people write them: a run of consecutive values as one span
(``1-5``, ``Monday through Friday``), the rest one by one.

One rule for the three writers of a schedule's values: a cron field
(``core/schedule/words/day_fields.py:cron_list``), a window's minutes and hours
(``core/schedule/windows.py``) and an OnCalendar description
(``core/schedule/oncalendar.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


def spans(values: Iterable[int], shortest: int, span: Callable[[int, int], str],
          one: Callable[[int], str]) -> list[str]:
    """``values`` (ascending) as items: each run of at least ``shortest`` consecutive values
    as ``span(first, last)``, every other value as ``one(value)``, in order.

    ``spans([1, 2, 3, 5], 3, lambda a, b: f"{a}-{b}", str)`` is ``["1-3", "5"]``.
    """
    items: list[str] = []
    run: list[int] = []
    for v in [*values, None]:
        if v is not None and run and v == run[-1] + 1:
            run.append(v)
            continue
        if run:
            items += [span(run[0], run[-1])] if len(run) >= shortest else [one(x) for x in run]
        run = [] if v is None else [v]
    return items
