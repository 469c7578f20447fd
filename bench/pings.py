"""Ping throughput and latency over real HTTP against ``cronledger api`` (one process).

    DATABASE_URL=postgresql://... uv run python bench/pings.py [--duration 10] [--connections 16]
        [--workers 1] [--code DIR] [--smoke]

For each ``synchronous_commit`` setting of the ping connections (``--commit both`` by default)
it creates a scratch database on the server of ``DATABASE_URL`` (an embedded server without
it), starts ``cronledger api --workers N`` on a free port against it and creates a team and a
key. ``--workers`` is 1 by default, as for ``cronledger api``: on the 2-core machine, where
PostgreSQL shares the cores, one process spent half the CPU per ping of two (each process
batches its own pings, docs/benchmarks.md, *Where a ping's CPU goes*); the sets measured
before 2026-12-02 16:00 UTC ran ``--workers 2``. ``--code DIR`` runs the API (and its
migrations) from another checkout of cronledger, with that checkout's ``.venv`` (``git
worktree add /tmp/old <commit> && cd /tmp/old && uv sync --frozen``): the way two versions
are compared side by side on one machine. Then, for each scenario of ``--monitors``
(default: one monitor, then 100 monitors pinged in turn - every ping
of one monitor is serialised on its row, so one monitor is the worst case) and each URL form
of ``--urls`` (default both: the token URL ``/ping/<token>`` and the slug URL
``/ping/<ping-key>/<slug>``, docs/healthchecks.md), it creates the monitors (``1h``; with
``--keywords``, every other one also has keyword rules, ``success_keywords`` and
``failure_keywords``, so the statement matches its pings' bodies: docs/heartbeats.md) and:

1. drives ``GET`` on their ping URLs with ``wrk`` (Debian package; ``apt-get install -y wrk``) for
   ``--duration`` seconds after a short warm-up, or with an aiohttp load loop when wrk is
   missing, and reads pings/s and p50/p99 latency;
2. checks that every answered ping was recorded: ``monitor.pinged`` events counted in the
   database against the 200 answers (wrk stops with up to ``--connections`` requests in flight,
   which the server still records, so the check allows that many extra);
3. sends exactly ``--exact`` more pings with an aiohttp client and requires the event count to
   grow by exactly that number.

Client, server and PostgreSQL share the machine: the figures include the load generator, and
whatever else runs. So the table also gives the CPU time each answered ping cost the API
processes and the PostgreSQL backends of the database (from ``/proc``), which depends little on
the other load, and the 1-minute load average before and after the run. When the server loads
``pg_stat_statements`` (``shared_preload_libraries``; ``pg_stat_statements.track_planning = on``
for the planning column), a second table gives, per statement of the measured run, its calls,
how many were planned, the planning and execution time per call and per ping, and the
answered pings per call (for the ping statement, the batches' mean size: a statement costs
PostgreSQL a fixed share per call, so larger batches cost less per ping,
``bench/ping_statement.py``).

``--smoke`` is the CI check (``bench/smoke.py``): one short run of each scenario (1 and 3
monitors, both URL forms, ``synchronous_commit`` on), the same count checks, no timing
assertion. Exit status 1 when a count does not match.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import psycopg

from bench.common import ROOT, scratch_database
from tests.embedded_server import server_dsn


@dataclass
class Statement:
    """One statement's share of a measured run, from ``pg_stat_statements`` (ms in total)."""

    query: str
    calls: int
    plans: int
    plan_ms: float
    exec_ms: float


@dataclass
class Result:
    commit: str
    url: str
    monitors: int
    tool: str
    pings_per_s: float
    p50_ms: float
    p99_ms: float
    answered: int
    errors: int
    recorded: int
    in_flight: int
    exact_sent: int
    exact_recorded: int
    api_cpu_ms: float
    pg_cpu_ms: float
    load: tuple[float, float]
    statements: list[Statement]

    @property
    def matches(self) -> bool:
        counted = 0 <= self.recorded - self.answered <= self.in_flight
        return counted and self.errors == 0 and self.exact_sent == self.exact_recorded


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of ``pids`` so far (Linux ``/proc``; 0 where unreadable)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _descendants(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in children:
            found += [child, *_descendants(child)]
    return found


def _backends(dsn: str) -> list[int]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                            "AND pid <> pg_backend_pid()").fetchall()
    return [r[0] for r in rows]


def statements_available(dsn: str) -> bool:
    """Whether the server loads ``pg_stat_statements``; if so, the extension is created in the
    database at ``dsn`` (a scratch database) so that its view can be read."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        loaded = conn.execute("SHOW shared_preload_libraries").fetchone()[0]
        if "pg_stat_statements" not in loaded:
            return False
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    return True


def statements_reset(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database "
                      "WHERE datname = current_database()), 0)")


def statements_read(dsn: str) -> list[Statement]:
    """The statements run in this database since :func:`statements_reset`, most time first."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT query, calls, plans, total_plan_time, total_exec_time "
            "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database "
            "WHERE datname = current_database()) AND query NOT LIKE '%%pg_stat_statements%%' "
            "ORDER BY total_plan_time + total_exec_time DESC LIMIT 5").fetchall()
    return [Statement(" ".join(q.split())[:60], calls, plans, plan, exe)
            for q, calls, plans, plan, exe in rows]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def python_of(code: Path) -> str:
    """The interpreter that runs checkout ``code``: its own ``.venv``, else this one."""
    venv = code / ".venv" / "bin" / "python"
    return str(venv) if code != ROOT and venv.exists() else sys.executable


def cli(code: Path, *args: str, env: dict[str, str]) -> str:
    done = subprocess.run([python_of(code), "-m", "api.cli", *args], cwd=code, env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise SystemExit(f"cronledger {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout.strip()


def wait_ready(url: str, process: subprocess.Popen, timeout: float = 120) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"cronledger api exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not answer within {timeout} s")


def pinged_events(dsn: str, monitor_ids: list[str]) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM events WHERE stream_id = ANY(%s::uuid[]) "
                           "AND event_type = 'monitor.pinged'", (monitor_ids,)).fetchone()
    return row[0]


def _ms(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run_wrk(url: str, duration: int, connections: int, threads: int, script: Path
            ) -> tuple[float, float, float, int, int]:
    """``(pings/s, p50 ms, p99 ms, answered, errors)`` from ``wrk --latency``."""
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s",
                          "--latency", "-s", str(script), url],
                         capture_output=True, text=True, check=True).stdout
    latency = {m[0]: _ms(m[1], m[2])
               for m in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)}
    total = int(re.search(r"(\d+) requests in", out).group(1))
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), "
                              r"timeout (\d+)", out)
    errors = int(non2xx.group(1)) if non2xx else 0
    if socket_errors:
        errors += sum(int(g) for g in socket_errors.groups())
    return rate, latency["50"], latency["99"], total - errors, errors


async def _load(urls: list[str], seconds: float | None, count: int | None, concurrency: int
                ) -> tuple[float, list[float], int, int]:
    """aiohttp load loop over ``urls`` in turn: either for ``seconds`` or exactly ``count``
    requests."""
    latencies: list[float] = []
    errors = 0
    sent = 0
    stop_at = None if seconds is None else time.monotonic() + seconds

    async def one(session: aiohttp.ClientSession) -> None:
        nonlocal errors, sent
        while True:
            if stop_at is not None and time.monotonic() >= stop_at:
                return
            if count is not None:
                if sent >= count:
                    return
                sent += 1
            start = time.perf_counter()
            async with session.get(urls[len(latencies) % len(urls)]) as response:
                await response.read()
                if response.status != 200:
                    errors += 1
            latencies.append((time.perf_counter() - start) * 1000)

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        began = time.perf_counter()
        await asyncio.gather(*(one(session) for _ in range(concurrency)))
        elapsed = time.perf_counter() - began
    return elapsed, latencies, len(latencies) - errors, errors


def run_loop(urls: list[str], duration: int, connections: int
             ) -> tuple[float, float, float, int, int]:
    elapsed, latencies, answered, errors = asyncio.run(_load(urls, duration, None,
                                                             connections))
    cuts = statistics.quantiles(latencies, n=100)
    return len(latencies) / elapsed, cuts[49], cuts[98], answered, errors


def _lua(paths: list[str]) -> str:
    """A wrk script cycling through ``paths`` (one request per path in turn)."""
    listed = ",\n".join(f'  "{p}"' for p in paths)
    return (f"local paths = {{\n{listed}\n}}\nlocal i = 0\n"
            "request = function()\n  i = i + 1\n"
            "  return wrk.format(\"GET\", paths[(i % #paths) + 1])\nend\n")


def run_scenario(dsn: str, base: str, key: str, commit: str, monitors: int, form: str,
                 args: argparse.Namespace, server_pid: int) -> Result:
    created = [asyncio.run(_create_monitor(base, key, args.keywords and n % 2 == 1))
               for n in range(monitors)]
    ids = [m["id"] for m in created]
    if form == "slug":
        ping_key = asyncio.run(_ping_key(base, key))
        urls = [f"{base}/ping/{ping_key}/{m['slug']}" for m in created]
    else:
        urls = [f"{base}/ping/{m['ping_token']}" for m in created]
    use_wrk = shutil.which("wrk") is not None and not args.no_wrk
    script = Path(tempfile.mkstemp(suffix=".lua")[1])
    script.write_text(_lua([u.removeprefix(base) for u in urls]))
    with_statements = statements_available(dsn)
    try:
        load = (lambda d: run_wrk(urls[0], d, args.connections, args.threads, script)) \
            if use_wrk else (lambda d: run_loop(urls, d, args.connections))
        load(args.warmup)  # warm-up: connections, caches
        time.sleep(1.0)  # the warm-up's requests in flight are recorded before counting starts
        before = pinged_events(dsn, ids)
        api, pg = [server_pid, *_descendants(server_pid)], _backends(dsn)
        if with_statements:
            statements_reset(dsn)
        cpu_before = (_cpu_seconds(api), _cpu_seconds(pg))
        load_before = os.getloadavg()[0]
        rate, p50, p99, answered, errors = load(args.duration)
        cpu_after = (_cpu_seconds(api), _cpu_seconds(pg))
        load_after = os.getloadavg()[0]
        statements = statements_read(dsn) if with_statements else []
        time.sleep(1.0)  # requests in flight when the load stopped are still recorded
        recorded = pinged_events(dsn, ids) - before
        before = pinged_events(dsn, ids)
        _, _, _, exact_errors = asyncio.run(_load(urls, None, args.exact, 16))
        exact_recorded = pinged_events(dsn, ids) - before
    finally:
        script.unlink()
    per_ping = [(after - before) * 1000 / max(answered, 1)
                for before, after in zip(cpu_before, cpu_after, strict=True)]
    return Result(commit, form, monitors, "wrk" if use_wrk else "aiohttp", rate, p50, p99, answered,
                  errors + exact_errors, recorded, args.connections, args.exact, exact_recorded,
                  per_ping[0], per_ping[1], (load_before, load_after), statements)


def bench(admin: str, commit: str, args: argparse.Namespace) -> list[Result]:
    """The scenarios of one commit setting, on a scratch database of their own."""
    code = args.code
    with scratch_database(admin, "cronledger_bench_pings", migrate=False) as dsn:
        port = free_port()
        env = {**os.environ, "DATABASE_URL": dsn, "CRONLEDGER_PORT": str(port),
               "CRONLEDGER_PING_SYNCHRONOUS_COMMIT": commit, "CRONLEDGER_LOG_LEVEL": "WARNING"}
        cli(code, "migrate", env=env)  # the schema of the code measured
        key = cli(code, "apikey", "create", "--team", f"bench-{uuid.uuid4().hex[:8]}", env=env)
        base = f"http://127.0.0.1:{port}"
        log_path = Path(tempfile.gettempdir()) / f"cronledger-bench-{port}.log"
        with log_path.open("wb") as log:
            server = subprocess.Popen([python_of(code), "-m", "api.cli", "api", "--workers",
                                       str(args.workers)], cwd=code, env=env, stdout=log,
                                      stderr=subprocess.STDOUT)
            try:
                wait_ready(f"{base}/readyz", server)
                return [run_scenario(dsn, base, key, commit, n, form, args, server.pid)
                        for form in args.urls for n in args.monitors]
            finally:
                server.send_signal(signal.SIGTERM)
                try:
                    server.wait(60)
                except subprocess.TimeoutExpired:
                    server.kill()


async def _create_monitor(base: str, key: str, keywords: bool = False) -> dict:
    headers = {"Authorization": f"Bearer {key}"}
    # Names are unique per team; the slug is derived from the name.
    name = f"bench-{uuid.uuid4().hex}"
    body: dict = {"name": name, "schedule": "1h"}
    if keywords:
        body.update(success_keywords=["backup done", "OK"], failure_keywords=["ERROR", "FAIL"])
    async with aiohttp.ClientSession(headers=headers) as session, session.post(
            f"{base}/v1/monitors", json=body) as response:
        assert response.status == 201, await response.text()
        return await response.json()


async def _ping_key(base: str, key: str) -> str:
    headers = {"Authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession(headers=headers) as session, session.post(
            f"{base}/v1/team/ping-key") as response:
        assert response.status == 200, await response.text()
        return (await response.json())["ping_key"]


def _code(value: str) -> Path:
    code = Path(value).resolve()
    if not (code / "api" / "cli.py").exists():
        raise argparse.ArgumentTypeError(f"{code} is not a cronledger checkout")
    return code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds of load per run")
    parser.add_argument("--warmup", type=int, default=2, help="seconds of load before each run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--workers", type=int, default=1,
                        help="cronledger api --workers (2 in the sets before 2026-12-02 16:00)")
    parser.add_argument("--exact", type=int, default=2000, help="pings of the exact count check")
    parser.add_argument("--commit", choices=("on", "off", "both"), default="both",
                        help="synchronous_commit of the ping connections")
    parser.add_argument("--monitors", type=lambda t: [int(n) for n in t.split(",")],
                        default=[1, 100], help="monitors pinged in turn, per scenario (1,100)")
    parser.add_argument("--urls", type=lambda t: t.split(","), default=["token", "slug"],
                        help="ping URL forms, per scenario (token,slug)")
    parser.add_argument("--no-wrk", action="store_true", help="use the aiohttp load loop")
    parser.add_argument("--code", type=_code, default=ROOT,
                        help="the cronledger checkout whose API is measured (default: this one)")
    parser.add_argument("--keywords", action="store_true",
                        help="keyword rules on every other monitor of a scenario")
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: short runs, small sizes, the count checks only")
    args = parser.parse_args()
    if args.smoke:
        args.duration, args.warmup, args.exact, args.connections = 2, 1, 100, 4
        args.monitors, args.commit, args.workers = [1, 3], "on", 1
        args.keywords = True
    commits = ("off", "on") if args.commit == "both" else (args.commit,)
    with server_dsn() as admin:
        results = [r for commit in commits for r in bench(admin, commit, args)]
    print(f"\n{os.cpu_count()} CPUs, cronledger api --workers {args.workers}, "
          f"{args.connections} connections, {args.duration} s per run, code {args.code}\n")
    print("| ping commit | URL | monitors | load | pings/s | p50 ms | p99 ms | answered | errors | "
          "pinged events | exact check | CPU ms/ping api + pg | load avg |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|---|")
    for r in results:
        exact = f"{r.exact_recorded}/{r.exact_sent}"
        print(f"| synchronous_commit={r.commit} | {r.url} | {r.monitors} | {r.tool} | "
              f"{r.pings_per_s:,.0f} | {r.p50_ms:.1f} | {r.p99_ms:.1f} | {r.answered:,} | "
              f"{r.errors} | {r.recorded:,} | {exact} {'ok' if r.matches else 'MISMATCH'} | "
              f"{r.api_cpu_ms:.2f} + {r.pg_cpu_ms:.2f} | {r.load[0]:.1f} / {r.load[1]:.1f} |")
    if any(r.statements for r in results):
        print("\npg_stat_statements over each measured run (the five statements with the most "
              "time; ms per call, and per answered ping):\n")
        print("| ping commit | URL | monitors | statement | calls | planned | plan ms/call "
              "| exec ms/call | plan + exec ms/ping | pings per call |")
        print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
        for r in results:
            for st in r.statements:
                per_ping = (st.plan_ms + st.exec_ms) / max(r.answered, 1)
                print(f"| {r.commit} | {r.url} | {r.monitors} | `{st.query}` | {st.calls:,} "
                      f"| {st.plans:,} | {st.plan_ms / max(st.plans, 1):.3f} "
                      f"| {st.exec_ms / max(st.calls, 1):.3f} | {per_ping:.3f} "
                      f"| {r.answered / max(st.calls, 1):.1f} |")
    return 0 if all(r.matches for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
