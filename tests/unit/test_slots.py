"""Catch-up and overlap decisions of ``core/runs/slots.py``, row by row against docs/schedules.md.

Rules checked ("Overlap and catch-up" in docs/schedules.md):

- "A slot late by at most **10 seconds** is simply on time ... and fires normally with
  `trigger: schedule`. For slots later than that, `catchup` decides":
  ``latest`` - the most recent (late) slot runs once with ``trigger: catchup``, every earlier
  slot is ``missed``; ``skip`` - every slot late beyond the grace is ``missed``; ``all`` - every
  missed slot runs (``trigger: catchup``), the most recent 100, older ones are ``missed``.
- "In every case the next regular slot is computed from now"; "At most 1,000 slots of one
  outage are recorded (... records its most recent 1,000)".
- Overlap: ``skip`` records the new slot as skipped while a run is in flight (``running`` or
  ``queued``), ``allow`` runs it alongside, ``queue`` buffers one slot and skips further ones;
  "Catch-up runs under `all` are dispatched together, whatever the overlap policy".
- A one-shot ``@at`` fires once and then has no next slot.

Every expected answer below was worked out by hand from those sentences.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache

import pytest

from core.runs.slots import MAX_RECORDED_SLOTS, SlotPlan, apply_overlap, plan_slots, recent_slots
from core.schedule import Schedule, parse_schedule
from tests.unit.instants import utc

ANCHOR = utc("2026-12-01T10:00:00Z")  # the job's creation instant (anchors intervals)



def t(hms: str, day: int = 1) -> datetime:
    """An instant on 2026-12-<day> (UTC), e.g. ``t("10:01:30.5")``."""
    return utc(f"2026-12-{day:02d}T{hms}Z")


def minutes(first: str, count: int, day: int = 1) -> list[datetime]:
    """``count`` whole-minute instants from ``first`` on, one minute apart."""
    start = t(first, day)
    return [start + timedelta(minutes=i) for i in range(count)]


def sched(expression: str) -> Schedule:
    return parse_schedule(expression, "UTC", anchor=ANCHOR)


S, C = "schedule", "catchup"

# (id, expression, due_at, now, catchup, expected fire, expected missed, expected next_due)
PLAN_ROWS = [
    # --- one per-minute slot, exactly at / before / after now ------------------------------
    ("at-now", "* * * * *", t("10:01:00"), t("10:01:00"), "latest",
     [(t("10:01:00"), S)], [], t("10:02:00")),
    ("claimed-ahead-half-second", "* * * * *", t("10:01:00"), t("10:00:59.5"), "latest",
     [(t("10:01:00"), S)], [], t("10:02:00")),
    ("claimed-ahead-skip-policy", "* * * * *", t("10:01:00"), t("10:00:59.5"), "skip",
     [(t("10:01:00"), S)], [], t("10:02:00")),
    ("late-1ms", "* * * * *", t("10:01:00"), t("10:01:00.001"), "latest",
     [(t("10:01:00"), S)], [], t("10:02:00")),
    ("late-2s", "* * * * *", t("10:01:00"), t("10:01:02"), "latest",
     [(t("10:01:00"), S)], [], t("10:02:00")),
    ("late-5s-skip", "* * * * *", t("10:01:00"), t("10:01:05"), "skip",
     [(t("10:01:00"), S)], [], t("10:02:00")),
    ("late-8s-all", "* * * * *", t("10:01:00"), t("10:01:08"), "all",
     [(t("10:01:00"), S)], [], t("10:02:00")),
    ("late-exactly-10s-latest", "* * * * *", t("10:01:00"), t("10:01:10"), "latest",
     [(t("10:01:00"), S)], [], t("10:02:00")),
    ("late-exactly-10s-skip", "* * * * *", t("10:01:00"), t("10:01:10"), "skip",
     [(t("10:01:00"), S)], [], t("10:02:00")),
    ("late-exactly-10s-all", "* * * * *", t("10:01:00"), t("10:01:10"), "all",
     [(t("10:01:00"), S)], [], t("10:02:00")),
    # --- one slot just beyond the 10 s grace ----------------------------------------------
    ("late-10.001s-latest", "* * * * *", t("10:01:00"), t("10:01:10.001"), "latest",
     [(t("10:01:00"), C)], [], t("10:02:00")),
    ("late-10.001s-skip", "* * * * *", t("10:01:00"), t("10:01:10.001"), "skip",
     [], [t("10:01:00")], t("10:02:00")),
    ("late-10.001s-all", "* * * * *", t("10:01:00"), t("10:01:10.001"), "all",
     [(t("10:01:00"), C)], [], t("10:02:00")),
    ("late-59s-latest", "* * * * *", t("10:01:00"), t("10:01:59"), "latest",
     [(t("10:01:00"), C)], [], t("10:02:00")),
    # --- an outage of six slots, all late beyond the grace (10:05 is 30 s late) ----------
    ("outage-latest", "* * * * *", t("10:00:00"), t("10:05:30"), "latest",
     [(t("10:05:00"), C)], minutes("10:00:00", 5), t("10:06:00")),
    ("outage-skip", "* * * * *", t("10:00:00"), t("10:05:30"), "skip",
     [], minutes("10:00:00", 6), t("10:06:00")),
    ("outage-all", "* * * * *", t("10:00:00"), t("10:05:30"), "all",
     [(m, C) for m in minutes("10:00:00", 6)], [], t("10:06:00")),
    # now exactly on a slot after an outage: that slot is on time (0 s late)
    ("outage-ends-on-slot-skip", "* * * * *", t("10:00:00"), t("10:03:00"), "skip",
     [(t("10:03:00"), S)], minutes("10:00:00", 3), t("10:04:00")),
    ("outage-ends-on-slot-all", "* * * * *", t("10:00:00"), t("10:03:00"), "all",
     [(t("10:00:00"), C), (t("10:01:00"), C), (t("10:02:00"), C), (t("10:03:00"), S)], [],
     t("10:04:00")),
    # --- late slots AND an on-time slot (10:00 is 65 s late, 10:01 is 5 s late) -----------
    ("mixed-skip", "* * * * *", t("10:00:00"), t("10:01:05"), "skip",
     [(t("10:01:00"), S)], [t("10:00:00")], t("10:02:00")),
    ("mixed-all", "* * * * *", t("10:00:00"), t("10:01:05"), "all",
     [(t("10:00:00"), C), (t("10:01:00"), S)], [], t("10:02:00")),
    pytest.param("mixed-latest", "* * * * *", t("10:00:00"), t("10:01:05"), "latest",
                 [(t("10:00:00"), C), (t("10:01:00"), S)], [], t("10:02:00"), id="mixed-latest"),
    pytest.param("mixed-three-late-latest", "* * * * *", t("10:00:00"), t("10:03:04"), "latest",
                 [(t("10:02:00"), C), (t("10:03:00"), S)], [t("10:00:00"), t("10:01:00")],
                 t("10:04:00"),
                 id="mixed-three-late-latest"),
    # --- several slots, every one within 10 s: all on time, all `schedule` ---------------
    pytest.param("every-5s-both-on-time-latest", "*/5 * * * * *", t("10:00:00"), t("10:00:05"),
                 "latest", [(t("10:00:00"), S), (t("10:00:05"), S)], [], t("10:00:10"),
                 id="every-5s-both-on-time-latest"),
    pytest.param("every-5s-both-on-time-skip", "*/5 * * * * *", t("10:00:00"), t("10:00:05"),
                 "skip", [(t("10:00:00"), S), (t("10:00:05"), S)], [], t("10:00:10"),
                 id="every-5s-both-on-time-skip"),
    pytest.param("every-2s-five-on-time-all", "*/2 * * * * *", t("10:00:00"), t("10:00:08"),
                 "all", [(t(f"10:00:0{s}"), S) for s in (0, 2, 4, 6, 8)], [], t("10:00:10"),
                 id="every-2s-five-on-time-all"),
    # every 5 s, 12 s after the first slot: 10:00:00 is late (12 s), :05 (7 s) and :10 (2 s)
    # are on time
    pytest.param("every-5s-one-late-skip", "*/5 * * * * *", t("10:00:00"), t("10:00:12"),
                 "skip", [(t("10:00:05"), S), (t("10:00:10"), S)], [t("10:00:00")],
                 t("10:00:15"),
                 id="every-5s-one-late-skip"),
    pytest.param("every-5s-one-late-latest", "*/5 * * * * *", t("10:00:00"), t("10:00:12"),
                 "latest", [(t("10:00:00"), C), (t("10:00:05"), S), (t("10:00:10"), S)], [],
                 t("10:00:15"),
                 id="every-5s-one-late-latest"),
    pytest.param("every-5s-one-late-all", "*/5 * * * * *", t("10:00:00"), t("10:00:12"),
                 "all", [(t("10:00:00"), C), (t("10:00:05"), S), (t("10:00:10"), S)], [],
                 t("10:00:15"),
                 id="every-5s-one-late-all"),
    # --- catch-up cap of 100 under `all` --------------------------------------------------
    # 10:00 .. 11:39 is 100 slots, all late (11:39 is 30 s late): every one runs
    ("all-exactly-100", "* * * * *", t("10:00:00"), t("11:39:30"), "all",
     [(m, C) for m in minutes("10:00:00", 100)], [], t("11:40:00")),
    # 101 slots: the oldest (10:00) is missed, 10:01 .. 11:40 run
    ("all-101", "* * * * *", t("10:00:00"), t("11:40:30"), "all",
     [(m, C) for m in minutes("10:01:00", 100)], [t("10:00:00")], t("11:41:00")),
    # 100 late slots (10:00 .. 11:39) and an on-time one (11:40, 5 s late): the 100 missed
    # slots all run, and the on-time slot fires as usual
    pytest.param("all-100-late-plus-on-time", "* * * * *", t("10:00:00"), t("11:40:05"), "all",
                 [*((m, C) for m in minutes("10:00:00", 100)), (t("11:40:00"), S)], [],
                 t("11:41:00"),
                 id="all-100-late-plus-on-time"),
    # 121 slots (10:00 .. 12:00): 10:21 .. 12:00 run, 10:00 .. 10:20 (21 slots) are missed
    ("all-121", "* * * * *", t("10:00:00"), t("12:00:30"), "all",
     [(m, C) for m in minutes("10:21:00", 100)], minutes("10:00:00", 21), t("12:01:00")),
    # --- interval @every 90s anchored at 10:00:00: 10:01:30, 10:03:00, 10:04:30, 10:06:00 ---
    ("interval-on-time", "@every 90s", t("10:01:30"), t("10:01:30"), "latest",
     [(t("10:01:30"), S)], [], t("10:03:00")),
    ("interval-bare-90s-late-3s", "90s", t("10:01:30"), t("10:01:33"), "skip",
     [(t("10:01:30"), S)], [], t("10:03:00")),
    ("interval-outage-last-on-time-skip", "@every 90s", t("10:01:30"), t("10:06:10"), "skip",
     [(t("10:06:00"), S)], [t("10:01:30"), t("10:03:00"), t("10:04:30")], t("10:07:30")),
    ("interval-outage-last-on-time-all", "@every 90s", t("10:01:30"), t("10:06:10"), "all",
     [(t("10:01:30"), C), (t("10:03:00"), C), (t("10:04:30"), C), (t("10:06:00"), S)], [],
     t("10:07:30")),
    pytest.param("interval-outage-last-on-time-latest", "@every 90s", t("10:01:30"),
                 t("10:06:10"), "latest", [(t("10:04:30"), C), (t("10:06:00"), S)],
                 [t("10:01:30"), t("10:03:00")], t("10:07:30"),
                 id="interval-outage-last-on-time-latest"),
    ("interval-outage-all-late-latest", "@every 90s", t("10:01:30"), t("10:06:11"), "latest",
     [(t("10:06:00"), C)], [t("10:01:30"), t("10:03:00"), t("10:04:30")], t("10:07:30")),
    ("interval-outage-all-late-skip", "@every 90s", t("10:01:30"), t("10:06:11"), "skip",
     [], [t("10:01:30"), t("10:03:00"), t("10:04:30"), t("10:06:00")], t("10:07:30")),
    ("interval-outage-all-late-all", "@every 90s", t("10:01:30"), t("10:06:11"), "all",
     [(t("10:01:30"), C), (t("10:03:00"), C), (t("10:04:30"), C), (t("10:06:00"), C)], [],
     t("10:07:30")),
    # --- one-shot @at: fires once, then no next slot ---------------------------------------
    ("at-on-time", "@at 2026-12-01T10:05:00Z", t("10:05:00"), t("10:05:00"), "latest",
     [(t("10:05:00"), S)], [], None),
    ("at-claimed-ahead", "@at 2026-12-01T10:05:00Z", t("10:05:00"), t("10:04:59.6"), "skip",
     [(t("10:05:00"), S)], [], None),
    ("at-late-3s", "@at 2026-12-01T10:05:00Z", t("10:05:00"), t("10:05:03"), "skip",
     [(t("10:05:00"), S)], [], None),
    ("at-late-60s-latest", "@at 2026-12-01T10:05:00Z", t("10:05:00"), t("10:06:00"), "latest",
     [(t("10:05:00"), C)], [], None),
    ("at-late-60s-skip", "@at 2026-12-01T10:05:00Z", t("10:05:00"), t("10:06:00"), "skip",
     [], [t("10:05:00")], None),
    ("at-late-60s-all", "@at 2026-12-01T10:05:00Z", t("10:05:00"), t("10:06:00"), "all",
     [(t("10:05:00"), C)], [], None),
    # --- a daily job down for three days: next slot from now, no backlog -------------------
    ("daily-outage-latest", "0 3 * * *", t("03:00:00", 1), t("12:00:00", 3), "latest",
     [(t("03:00:00", 3), C)], [t("03:00:00", 1), t("03:00:00", 2)], t("03:00:00", 4)),
    ("daily-outage-skip", "0 3 * * *", t("03:00:00", 1), t("12:00:00", 3), "skip",
     [], [t("03:00:00", 1), t("03:00:00", 2), t("03:00:00", 3)], t("03:00:00", 4)),
]


def _row_id(row: object) -> str | None:
    return row[0] if isinstance(row, tuple) else None


@pytest.mark.parametrize(
    ("name", "expression", "due_at", "now", "catchup", "fire", "missed", "next_due"),
    PLAN_ROWS, ids=_row_id,
)
def test_plan_slots(name: str, expression: str, due_at: datetime, now: datetime, catchup: str,
                    fire: list[tuple[datetime, str]], missed: list[datetime],
                    next_due: datetime | None) -> None:
    plan = plan_slots(sched(expression), due_at, now, catchup)
    assert (plan.fire, plan.missed, plan.next_due) == (fire, missed, next_due)


# --- the 1,000 recorded slots of one long outage -------------------------------------------
# `* * * * *` due 2026-12-01T10:00, claimed 2026-12-03T10:00:30: 2,881 slots, all late.
# The most recent 1,000 are 2026-12-02T17:21 .. 2026-12-03T10:00 (10:00 minus 999 minutes).
LONG_DUE, LONG_NOW = t("10:00:00", 1), t("10:00:30", 3)
RECENT_1000 = minutes("17:21:00", 1000, day=2)


@cache
def long_outage(policy: str) -> SlotPlan:
    """The outage planned once per policy for the tests below (each plan walks 2,881 slots)."""
    return plan_slots(sched("* * * * *"), LONG_DUE, LONG_NOW, policy)


def test_long_outage_next_slot_is_computed_from_now() -> None:
    for policy in ("latest", "skip", "all"):
        assert long_outage(policy).next_due == \
            t("10:01:00", 3)


def test_long_outage_latest_runs_the_most_recent_slot() -> None:
    plan = long_outage("latest")
    assert plan.fire == [(t("10:00:00", 3), C)]
    assert len(plan.missed) == 999


def test_long_outage_latest_records_the_999_before_it() -> None:
    plan = long_outage("latest")
    assert plan.missed == RECENT_1000[:-1]


def test_long_outage_skip_records_the_most_recent_1000() -> None:
    plan = long_outage("skip")
    assert plan.missed == RECENT_1000


def test_long_outage_all_runs_the_most_recent_100() -> None:
    plan = long_outage("all")
    assert plan.fire == [(m, C) for m in RECENT_1000[-100:]]
    assert plan.missed == RECENT_1000[:-100]


# --- recent_slots: the slots from due_at to now; the last one is the latest fire ----------
LATEST_ROWS = [
    ("minute-mid", "* * * * *", t("10:05:30"), t("10:00:00"), t("10:05:00")),
    ("minute-t-is-a-fire", "* * * * *", t("10:05:00"), t("10:00:00"), t("10:05:00")),
    ("minute-narrow-window", "* * * * *", t("10:05:00"), t("10:04:59"), t("10:05:00")),
    ("minute-just-before-fire", "* * * * *", t("10:04:59.999"), t("10:00:00"), t("10:04:00")),
    ("hourly-far", "@hourly", t("23:59:59", 3), t("00:00:00", 1), t("23:00:00", 3)),
    ("daily-week", "30 2 * * *", t("01:00:00", 8), t("00:00:00", 1), t("02:30:00", 7)),
    ("interval-on-fire", "@every 90s", t("11:00:00"), ANCHOR, t("11:00:00")),  # 40 x 90 s
    ("interval-between", "@every 90s", t("10:59:59"), ANCHOR, t("10:58:30")),
    ("every-second", "* * * * * *", t("12:00:00.5"), t("10:00:00"), t("12:00:00")),
    # 3,600 fires in hour 12, none after: the search must walk past 1,000 to the last one
    ("dense-burst-walk", "* * 12 * * *", t("20:00:00"), utc("2026-11-30T20:00:00Z"),
     t("12:59:59")),
    ("one-shot", "@at 2026-12-01T10:05:00Z", t("11:00:00"), t("10:00:00"), t("10:05:00")),
]


@pytest.mark.parametrize(("name", "expression", "until", "since", "expected"), LATEST_ROWS,
                         ids=_row_id)
def test_recent_slots_end_at_the_latest_fire(name: str, expression: str, until: datetime,
                                             since: datetime, expected: datetime) -> None:
    slots = recent_slots(sched(expression), since, until)
    assert slots[-1] == expected
    # from due_at, unless more than MAX_RECORDED_SLOTS passed: then the most recent ones
    assert slots[0] == since or len(slots) == MAX_RECORDED_SLOTS


@pytest.mark.parametrize(("since", "until"), [
    (t("10:05:00"), t("10:05:30")),  # since is exclusive: the 10:05 fire is not in the window
    (t("10:05:00"), t("10:05:00")),  # empty window
    (t("10:05:00.5"), t("10:05:59.9")),
])
def test_recent_slots_without_a_later_fire(since: datetime, until: datetime) -> None:
    assert recent_slots(sched("* * * * *"), since, until) == [since]


# --- apply_overlap ----------------------------------------------------------------------------
A, B, D = (t("10:01:00"), S), (t("10:02:00"), S), (t("10:03:00"), S)
CA, CB, CD = (t("10:01:00"), C), (t("10:02:00"), C), (t("10:03:00"), C)

# (id, fire, policy, running, queued, expected run, expected queue, expected skip)
OVERLAP_ROWS = [
    ("nothing-to-fire", [], "skip", 1, 0, [], [], []),
    ("skip-idle", [A], "skip", 0, 0, [A], [], []),
    ("skip-one-running", [A], "skip", 1, 0, [], [], [A]),
    ("skip-one-queued", [A], "skip", 0, 1, [], [], [A]),
    ("skip-running-and-queued", [A], "skip", 1, 1, [], [], [A]),
    ("allow-idle", [A], "allow", 0, 0, [A], [], []),
    ("allow-one-running", [A], "allow", 1, 0, [A], [], []),
    ("allow-one-queued", [A], "allow", 0, 1, [A], [], []),
    ("allow-many-running-two-slots", [A, B], "allow", 3, 2, [A, B], [], []),
    ("queue-idle", [A], "queue", 0, 0, [A], [], []),
    ("queue-one-running", [A], "queue", 1, 0, [], [A], []),
    ("queue-one-running-one-buffered", [A], "queue", 1, 1, [], [], [A]),
    # a queued run (retry, manual trigger or buffered slot) is in flight and fills the buffer
    ("queue-one-queued", [A], "queue", 0, 1, [], [], [A]),
    # two on-time slots at once: the first runs, the second overlaps it
    ("skip-two-slots-idle", [A, B], "skip", 0, 0, [A], [], [B]),
    ("queue-two-slots-idle", [A, B], "queue", 0, 0, [A], [B], []),
    ("queue-three-slots-idle", [A, B, D], "queue", 0, 0, [A], [B], [D]),
    ("queue-two-slots-running", [A, B], "queue", 1, 0, [], [A], [B]),
    # a single catch-up slot (catchup=latest) obeys the overlap policy like any slot
    ("latest-catchup-skip-running", [CD], "skip", 1, 0, [], [], [CD]),
    ("latest-catchup-queue-running", [CD], "queue", 1, 0, [], [CD], []),
    ("latest-catchup-skip-idle", [CD], "skip", 0, 0, [CD], [], []),
    # catchup=all: catch-up runs are dispatched together, whatever the policy
    ("all-catchups-skip-running", [CA, CB, CD], "skip", 1, 0, [CA, CB, CD], [], []),
    ("all-catchups-queue-running-and-queued", [CA, CB], "queue", 1, 1, [CA, CB], [], []),
    ("all-catchups-skip-idle", [CA, CB], "skip", 0, 0, [CA, CB], [], []),
]


@pytest.mark.parametrize(
    ("name", "fire", "policy", "running", "queued", "run", "queue", "skip"), OVERLAP_ROWS,
    ids=_row_id,
)
def test_apply_overlap(name: str, fire: list, policy: str, running: int, queued: int,
                       run: list, queue: list, skip: list) -> None:
    decision = apply_overlap(fire, policy, running, queued)
    assert (decision.run, decision.queue, decision.skip) == (run, queue, skip)
