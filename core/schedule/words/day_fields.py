"""The day fields of a phrase's cron expression (:mod:`core.schedule.words`): day of the
month, month and day of the week, in the frame of a period of months or a year, with cron's
OR rule between the two kinds of days said only when the phrase says "or"."""

from __future__ import annotations

from core.schedule.spans import spans
from core.schedule.words.reading import (
    SUB_DAY,
    UNIT_SECONDS,
    Period,
    PhraseError,
    Reading,
    ambiguous,
)


def day_fields(r: Reading, periods: set[Period], words: dict[Period, str]) -> list[str]:
    """The day-of-month, month and day-of-week fields of the days a reading gives, in the
    frame of its period of a month or a year (``every 3 months on the 1st``), if any."""
    unit, n = _frame(r, periods, words)
    dom_items, dow_items = _dom_items(r), _dow_items(r)
    month_items = _framed_months(unit, n, _named_months(r), words)
    if unit in ("month", "year") and not (dom_items or dow_items):
        dom_items = ["1"]  # a period of months or years, no day given: the 1st
    if dom_items and dow_items and not r.said_or:
        raise _both_days(r)
    return [",".join(dom_items) or "*", ",".join(month_items) or "*",
            ",".join(dow_items) or "*"]


def _dom_items(r: Reading) -> list[str]:
    """The day-of-month field's items: the days of the month, then ``L`` (the last day)."""
    return ([cron_list(sorted(r.doms))] if r.doms else []) + (["L"] if r.last_dom else [])


def _named_months(r: Reading) -> list[str]:
    """The month field's items of the months named (``in March``), before any frame."""
    return [cron_list(sorted(r.months))] if r.months else []


def _dow_items(r: Reading) -> list[str]:
    """The day-of-week field's items: the weekdays, then ``<dow>#<k>`` and ``<dow>L`` (the
    k-th and the last of them in the month)."""
    items = [cron_list(sorted(r.dows))] if r.dows else []
    return items + [f"{d}L" if k == -1 else f"{d}#{k}" for d, k in sorted(r.nth)]


def _frame(r: Reading, periods: set[Period], words: dict[Period, str]) -> tuple[str, int]:
    """``(unit, n)`` of the period of days or longer that frames the days given (``("", 1)``:
    none). Two of them hold only as one in the other, each once: "every day of the month",
    "the last day of every month" (the longer unit frames days of the month, weekdays or
    months; the shorter one frames none)."""
    long: dict[str, int] = {}
    for n, unit in sorted(periods):  # "day 1 of the month, every 2 months": the larger n wins
        if unit not in SUB_DAY:
            long[unit] = n
    if len(long) > 1:
        units = sorted(long, key=lambda u: list(UNIT_SECONDS).index(u)
                       if u in UNIT_SECONDS else 9)
        if set(long) == {"day", "month"} and long["day"] == 1 and long["month"] == 1:
            long = {"month": 1} if (r.doms or r.last_dom or r.nth) else {"day": 1}
        elif set(long) in ({"week", "day"}, {"day", "year"}, {"week", "month"},
                           {"month", "year"}) and all(v == 1 for v in long.values()):
            long = {units[-1]: 1} if (r.doms or r.last_dom or r.nth or r.months) \
                else {units[0]: 1}
        else:
            first = next(iter(long))
            raise ambiguous("two different periods cannot both hold", words[(long[first], first)])
    (unit, n), = long.items() if long else [("", 1)]
    return unit, n


def _framed_months(unit: str, n: int, month_items: list[str], words: dict[Period, str]
                   ) -> list[str]:
    """The month field's items in the frame ``(unit, n)``: a step for every N months, January
    for a year without a named month. Periods of days and weeks are calendar periods
    (:func:`core.schedule.words.builder._day_period`): "every week" comes here only with its
    days; named months alone
    ("in March") are every day of those months."""
    if unit == "month" and n > 1:
        return [_month_step(n, month_items, words[(n, "month")])]
    if unit == "year" and n > 1:
        raise ambiguous(f"every {n} years cannot be written in cron", words[(n, "year")])
    if unit == "year" and not month_items:
        return ["1"]
    return month_items


def _month_step(n: int, month_items: list[str], word: str) -> str:
    """The month field of ``every N months``: ``*/N``, N dividing the year, no month named."""
    if month_items:
        raise ambiguous(f"every {n} months cannot be combined with named months", word)
    if n > 12:
        raise ambiguous(f"every {n} months is longer than a year", word)
    if 12 % n:
        months = ", ".join(str(m) for m in range(1, 13, n))
        raise ambiguous(f"every {n} months does not divide the year: cron's month step "
                        f"restarts each January (months {months}, then 1 again), so "
                        "the months would not be that far apart", word)
    return f"*/{n}"


def _both_days(r: Reading) -> PhraseError:
    """Days of the month and weekdays given together without 'or'."""
    if r.days_joined:  # "the 1st and every monday": both sets of days, which 'or' says
        return ambiguous("a day of the month and a weekday together fire on either (cron's "
                         "OR rule); say 'or' if that is what you mean", r.dow_word)
    # "friday the 13th": days that are both, which 'or' would not say
    return ambiguous(f"{r.dow_word!r} and a day of the month side by side would be the days "
                     "that are both, which one schedule cannot hold (cron fires on a day of "
                     "the month or a weekday, never only on days that are both)", r.dow_word)


def cron_list(values: list[int]) -> str:
    """``[1, 2, 3, 4, 5]`` as ``1-5``: runs of three or more become ranges, as people write."""
    return ",".join(spans(values, 3, lambda a, b: f"{a}-{b}", str))
