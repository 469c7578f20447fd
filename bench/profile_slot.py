"""Where the time of one big slot goes: claim, build, connect, send, read, record.

Runs ``bench/dispatch.py``'s scenario (N jobs on ``*/10 * * * * *``, all due in the same
second, calling the same local sink) with 1 and 2 real ``cronledger worker`` processes, each
started through this script (``--child``), which installs timing wrappers and an
``aiohttp.TraceConfig`` in the worker process before handing over to ``api.cli.main(["worker"])``.
Nothing in ``core/`` is changed; the wrappers are module attributes replaced in the child:

* claim: ``core.runs.worker.claim_due`` (duration, due rows claimed, runs returned);
* build: ``Executor.prepare`` (per attempt);
* connect: ``Executor.preconnect`` (the connections opened ahead of the slot) and the trace's
  ``on_connection_create_end`` / ``on_connection_reuseconn`` inside an attempt (at the slot);
* gate: ``Worker._open_gate`` (when the slot's attempts are released);
* send: ``Executor.transmit`` entry to ``on_request_headers_sent`` (aiohttp writes the request
  bytes right after that signal; the sink's arrival time is the check);
* read: ``on_request_headers_sent`` to ``on_request_end`` (response headers and body read);
* record: ``Recorder.record`` (per batch).

All instants are wall-clock (``time.time()``, seconds) so the processes and the sink share one
time line; each slot's figures are relative to the slot instant. It prints, per scenario, one
table with each step's total (ms, summed over the slots' requests and the workers), its cost per
request, when it ran relative to the slot (the earliest start and the latest end, mean over the
slots), and how much of it fell between the slot instant and the slot's last send (the slot's
critical path).

    uv run python bench/profile_slot.py [--jobs 1000] [--workers 1 2] [--slots 3]
        [--env CRONLEDGER_MAX_CONCURRENCY=500 ...] [--smoke]

DATABASE_URL names the PostgreSQL server (a scratch database is created on it); without it an
embedded server is started. The exit status is 1 when a slot was missed or fired twice, or an
attempt sent was not profiled; ``--smoke`` (CI, ``bench/smoke.py``): 20 jobs every 5 seconds,
1 worker, 2 slots.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.common import ROOT, scratch_database, stop_process, workers_registered
from bench.dispatch import (
    PERIOD,
    SinkProtocol,
    create_jobs,
    runs_in_db,
    slot_stats,
    stop_scheduling,
)

# -- the child: a `cronledger worker` with timing wrappers --------------------------------------


def _epoch(instant: Any) -> int:
    return int(instant.timestamp())


def _instrument(rec: dict[str, list]) -> None:
    """Replace the functions the worker calls by timing wrappers that append to ``rec``."""
    import aiohttp

    import core.runs.executor as executor_mod
    import core.runs.recorder as recorder_mod
    import core.runs.worker as worker_mod

    now = time.time
    current: contextvars.ContextVar[dict | None] = contextvars.ContextVar("attempt",
                                                                          default=None)

    claim_due = worker_mod.claim_due

    async def timed_claim(*args: Any, **kwargs: Any) -> Any:
        t0 = now()
        claimed, dispatches = await claim_due(*args, **kwargs)
        slots = sorted({_epoch(d.scheduled_for) for d in dispatches})
        rec["claim"].append([t0, now(), claimed, len(dispatches), slots])
        return claimed, dispatches

    worker_mod.claim_due = timed_claim

    prepare = executor_mod.Executor.prepare

    def timed_prepare(self: Any, dispatch: Any) -> Any:
        t0 = now()
        prepared = prepare(self, dispatch)
        rec["build"].append([_epoch(dispatch.scheduled_for), t0, now()])
        return prepared

    executor_mod.Executor.prepare = timed_prepare  # type: ignore[method-assign]

    preconnect = executor_mod.Executor.preconnect

    async def timed_preconnect(self: Any, prepared: list) -> int:
        t0 = now()
        slot = _epoch(min(p.dispatch.scheduled_for for p in prepared))
        held = 0
        try:
            held = await preconnect(self, prepared)
            return held
        finally:  # cancelled at the slot's margin: still recorded
            rec["preconnect"].append([slot, t0, now(), held, len(prepared)])

    executor_mod.Executor.preconnect = timed_preconnect  # type: ignore[method-assign]

    transmit = executor_mod.Executor.transmit

    async def timed_transmit(self: Any, prepared: Any) -> Any:
        item = {"slot": _epoch(prepared.dispatch.scheduled_for), "enter": now()}
        token = current.set(item)
        try:
            return await transmit(self, prepared)
        finally:
            item["exit"] = now()
            current.reset(token)
            rec["attempt"].append(item)

    executor_mod.Executor.transmit = timed_transmit  # type: ignore[method-assign]

    def mark(name: str) -> Any:
        async def hook(session: Any, ctx: Any, params: Any) -> None:
            item = current.get()
            if item is not None:
                item.setdefault(name, now())
        return hook

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(mark("request_start"))
    trace.on_request_headers_sent.append(mark("headers_sent"))
    trace.on_request_end.append(mark("request_end"))
    trace.on_request_exception.append(mark("exception"))
    trace.on_connection_queued_start.append(mark("queued_start"))
    trace.on_connection_queued_end.append(mark("queued_end"))
    trace.on_connection_create_start.append(mark("create_start"))
    trace.on_connection_create_end.append(mark("create_end"))
    trace.on_connection_reuseconn.append(mark("reuse"))
    trace.freeze()
    make_session = executor_mod.make_session

    def traced_session(*args: Any, **kwargs: Any) -> Any:
        session = make_session(*args, **kwargs)
        session.trace_configs.append(trace)  # the session's own list (aiohttp's property)
        return session

    executor_mod.make_session = traced_session

    open_gate = worker_mod.Worker._open_gate

    def timed_gate(self: Any, slot: Any, *args: Any) -> None:
        open_gate(self, slot, *args)
        if slot not in self._gates:  # released now (not re-armed because the timer was early)
            rec["gate"].append([_epoch(slot), now()])

    worker_mod.Worker._open_gate = timed_gate  # type: ignore[method-assign]

    record = recorder_mod.Recorder.record

    async def timed_record(self: Any, results: list, clock: Any) -> int:
        t0 = now()
        accepted = await record(self, results, clock)
        slots = sorted({_epoch(r.dispatch.scheduled_for) for r in results})
        rec["record"].append([t0, now(), len(results), slots])
        return accepted

    recorder_mod.Recorder.record = timed_record  # type: ignore[method-assign]


def child(out: str) -> int:
    """Run ``cronledger worker`` with the wrappers; write what they measured to ``out``."""
    rec: dict[str, list] = defaultdict(list)
    _instrument(rec)
    from api.cli import main

    try:
        return main(["worker"])
    finally:
        Path(out).write_text(json.dumps({"pid": os.getpid(), **rec}))


# -- the parent: the scenario and the table ------------------------------------------------------


async def scenario(admin: str, jobs: int, workers: int, slots: int, logdir: Path,
                   env: dict[str, str], period: int = PERIOD) -> dict:
    """One scenario; the children's measurements, the sink's hits and the database's split."""
    SinkProtocol.hits = []
    loop = asyncio.get_running_loop()
    server = await loop.create_server(SinkProtocol, "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    outs = [logdir / f"profile-{jobs}-{workers}-{i}.json" for i in range(workers)]
    with scratch_database(admin) as dsn:
        procs = [subprocess.Popen(
            [sys.executable, "-m", "bench.profile_slot", "--child", str(out)], cwd=ROOT,
            env={**os.environ, "DATABASE_URL": dsn, "CRONLEDGER_WORKER_ID": f"bench-{i}",
                 "CRONLEDGER_LOG_LEVEL": "WARNING", **env},
            stdout=(logdir / f"worker-{jobs}-{workers}-{i}.log").open("ab"),
            stderr=subprocess.STDOUT) for i, out in enumerate(outs)]
        try:
            await workers_registered(dsn, [f"bench-{i}" for i in range(workers)])
            # Jobs created between slots: the first is full.
            while time.time() % period > min(2, period / 2):
                await asyncio.sleep(0.05)
            await create_jobs(dsn, f"http://127.0.0.1:{port}/hook", jobs, period)
            first = (int(time.time()) // period + 1) * period
            last = first + period * (slots - 1)
            await asyncio.sleep(max(0.0, last + 1 - time.time()))
            deadline = time.time() + 30
            last_slot = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(last))
            while time.time() < deadline and sum(
                    1 for _, _, s in SinkProtocol.hits if s == last_slot) < jobs:
                await asyncio.sleep(0.1)
            await asyncio.sleep(2)  # the last slot's results recorded
            await stop_scheduling(dsn)
        finally:
            for proc in procs:
                await asyncio.to_thread(stop_process, proc)
        _, _, split = await runs_in_db(dsn)
    server.close()
    keys = ("claim", "build", "preconnect", "attempt", "gate", "record")
    profiles = [{**{key: [] for key in keys}, **json.loads(out.read_text())}
                for out in outs if out.exists()]  # a worker that got no work has no entries
    return {"jobs": jobs, "workers": workers, "first": first, "last": last, "period": period,
            "profiles": profiles, "hits": list(SinkProtocol.hits), "split": split,
            "stats": slot_stats(SinkProtocol.hits, first, last, jobs, period)}


def _span(intervals: list[tuple[float, float]], slot: float, until: float) -> float:
    """Seconds of the union of ``intervals`` inside [slot, until]."""
    total, end = 0.0, slot
    for a, b in sorted(intervals):
        a, b = max(a, end), min(b, until)
        if b > a:
            total += b - a
            end = b
    return total


def analyse(result: dict) -> dict:
    """Per step, means over the slots: total ms, ms per request, window, critical-path ms."""
    slots = slot_range(result)
    per_slot: list[dict[str, Any]] = []
    for slot in slots:
        steps: dict[str, dict[str, Any]] = defaultdict(lambda: {
            "total": 0.0, "n": 0, "start": None, "end": None, "intervals": [], "each": []})

        def add(name: str, a: float, b: float, n: int = 1, *, cost: bool = True,
                steps: dict = steps) -> None:
            s = steps[name]
            if cost:
                s["total"] += b - a
                s["each"].append(b - a)
            s["n"] += n
            s["start"] = a if s["start"] is None else min(s["start"], a)
            s["end"] = b if s["end"] is None else max(s["end"], b)
            s["intervals"].append((a, b))

        extra: dict[str, Any] = defaultdict(float)
        last_send = float(slot)
        per_worker = []
        for prof in result["profiles"]:
            mine = [a for a in prof["attempt"] if a["slot"] == slot]
            per_worker.append(len(mine))
            for a in mine:
                if "headers_sent" in a:
                    last_send = max(last_send, a["headers_sent"])
            for t0, t1, claimed, _, claim_slots in prof["claim"]:
                if slot in claim_slots:
                    add("claim", t0, t1, claimed)
            for s, t0, t1 in prof["build"]:
                if s == slot:
                    add("build", t0, t1)
            for s, t0, t1, held, _ in prof["preconnect"]:
                if s == slot:
                    add("connect ahead", t0, t1, held)
            for s, t in prof["gate"]:
                if s == slot:
                    extra["gate"] = max(extra["gate"], t - slot)
            for a in mine:
                if "create_start" in a and "create_end" in a:
                    add("connect at slot", a["create_start"], a["create_end"])
                if "headers_sent" in a:
                    add("send", a["enter"], a["headers_sent"])
                    if "create_start" in a and "create_end" in a:  # connecting is not sending
                        s = steps["send"]
                        s["total"] -= a["create_end"] - a["create_start"]
                        s["each"][-1] -= a["create_end"] - a["create_start"]
                    if "request_end" in a:
                        add("read", a["headers_sent"], a["request_end"])
                if "create_end" in a:
                    extra["opened at slot"] += 1
                if "reuse" in a:
                    extra["reused"] += 1
                if "queued_end" in a:
                    extra["queued"] += 1
            for t0, t1, n, rec_slots in prof["record"]:
                if slot in rec_slots:
                    add("record", t0, t1, n)
        until = last_send
        for prof in result["profiles"]:
            for a in prof["attempt"]:
                if a["slot"] == slot and "request_end" in a and a["request_end"] <= until:
                    extra["read before last send"] += 1
        arrivals = [t for t, _, s in result["hits"]
                    if s == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(slot))]
        out = {name: {"total": s["total"], "n": s["n"], "start": s["start"] - slot,
                      "end": s["end"] - slot,
                      "critical": _span(s["intervals"], slot, until),
                      "median": statistics.median(s["each"]) if s["each"] else 0.0}
               for name, s in steps.items()}
        out["_"] = {"last send": until - slot, "last arrival": max(arrivals, default=slot) - slot,
                    "per worker": per_worker, **extra}
        per_slot.append(out)
    return {"slots": per_slot}


STEPS = ("claim", "build", "connect ahead", "connect at slot", "send", "read", "record")


def table(result: dict, analysis: dict) -> str:
    slots = analysis["slots"]
    jobs = result["jobs"]
    lines = [f"### {jobs} jobs, {result['workers']} worker(s), {len(slots)} slots "
             f"(runs per worker by slot: {result['split']})", "",
             "| step | total ms (per slot) | per request | n per slot | window vs slot (ms) "
             "| on the critical path (ms) |", "|---|---:|---:|---:|---:|---:|"]
    for name in STEPS:
        got = [s[name] for s in slots if name in s]
        if not got:
            lines.append(f"| {name} | – | – | 0 | – | 0 |")
            continue
        total = statistics.mean(g["total"] for g in got) * 1000
        n = statistics.mean(g["n"] for g in got)
        per_request = total / jobs
        unit = f"{per_request * 1000:.0f} µs" if per_request < 1 else f"{per_request:.2f} ms"
        if name in ("send", "read", "connect at slot"):
            med = statistics.mean(g["median"] for g in got) * 1e6
            unit = f"{unit} (median {med:.0f} µs)"
        if name == "read":
            unit += ", wall: waiting included"
        if name == "connect ahead":
            total_s = f"{total:.1f} (wall)"
            unit = "–"
        else:
            total_s = f"{total:.1f}"
        window = (f"{statistics.mean(g['start'] for g in got) * 1000:+.0f} … "
                  f"{statistics.mean(g['end'] for g in got) * 1000:+.0f}")
        critical = statistics.mean(g["critical"] for g in got) * 1000
        lines.append(f"| {name} | {total_s} | {unit} | {n:.0f} | {window} | {critical:.0f} |")
    extra = [s["_"] for s in slots]
    claims = [s["claim"] for s in slots if "claim" in s]

    n_claims = statistics.mean(len_claims(result, s) for s in slot_range(result))

    def mean(key: str) -> float:
        return statistics.mean(e.get(key, 0) for e in extra)

    lines += [
        "",
        f"- claims per slot: {statistics.mean(c['n'] for c in claims) if claims else 0:.0f} rows "
        f"in {n_claims:.1f} claims (all workers), "
        f"{statistics.mean(c['total'] for c in claims) * 1000 / max(n_claims, 1):.0f} ms a "
        f"claim; claims ending after the slot: "
        + " ".join(str(late_claims(result, s)) for s in slot_range(result)),
        f"- gate opened at slot + {mean('gate') * 1000:.2f} ms; connections opened at the slot "
        f"{mean('opened at slot'):.0f}, reused {mean('reused'):.0f}, waited for the pool "
        f"{mean('queued'):.0f}",
        f"- responses read before the slot's last send: {mean('read before last send'):.0f}",
        "- last send after the slot (ms, by slot): "
        + " ".join(f"{e['last send'] * 1000:.0f}" for e in extra)
        + "; last sink arrival: " + " ".join(f"{e['last arrival'] * 1000:.0f}" for e in extra),
        f"- fire lateness p50 {result['stats']['p50']:.1f} ms, p99 "
        f"{result['stats']['p99']:.1f} ms, missed {result['stats']['missed']}, duplicates "
        f"{result['stats']['duplicates']}",
    ]
    return "\n".join(lines)


def slot_range(result: dict) -> range:
    return range(result["first"], result["last"] + 1, result["period"])


def len_claims(result: dict, slot: int) -> int:
    return sum(1 for prof in result["profiles"] for c in prof["claim"] if slot in c[4])


def late_claims(result: dict, slot: int) -> int:
    return sum(1 for prof in result["profiles"] for c in prof["claim"]
               if slot in c[4] and c[1] > slot)


def counted_right(result: dict) -> bool:
    """Every (job, slot) delivered once, and every attempt of the slots profiled."""
    stats = result["stats"]
    expected = result["jobs"] * len(slot_range(result))
    profiled = sum(1 for prof in result["profiles"] for a in prof["attempt"]
                   if result["first"] <= a["slot"] <= result["last"])
    return stats["missed"] == 0 and stats["duplicates"] == 0 \
        and stats["delivered"] == expected == profiled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--slots", type=int, default=3)
    parser.add_argument("--env", nargs="*", default=[], metavar="NAME=VALUE",
                        help="settings for the workers (e.g. CRONLEDGER_MAX_CONCURRENCY=500)")
    parser.add_argument("--period", type=int, default=PERIOD, help="seconds between slots")
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: small sizes, the count checks only")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.exit(child(args.child))
    if args.smoke:
        args.jobs, args.workers, args.slots, args.period = [20], [1], 2, 5
    from tests.embedded_server import server_dsn

    env = dict(item.split("=", 1) for item in args.env)
    ok = True
    with server_dsn() as admin, tempfile.TemporaryDirectory() as tmp:
        for jobs in args.jobs:
            for workers in args.workers:
                started = os.getloadavg()[0]
                result = asyncio.run(scenario(admin, jobs, workers, args.slots, Path(tmp),
                                              env, args.period))
                print(table(result, analyse(result)))
                ok = ok and counted_right(result)
                print(f"- load average (1 min) at the start {started:.2f}, at the end "
                      f"{os.getloadavg()[0]:.2f}; settings {env or 'defaults'}\n", flush=True)
    if not ok:
        print("a slot was missed or fired twice, or an attempt was not profiled",
              file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
