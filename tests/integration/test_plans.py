"""The hot statements' plans on large tables that autovacuum never analyzed (docs/storage.md):
the claim, the projector's read, a stream's read, a monitor's pings and the
recorder's update use indexes, never a sequential scan of a large table or partition."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import psycopg
from psycopg import sql

from core.events import stream_kinds
from core.queries import Q
from core.retention.maintenance import ensure_partitions

DAY = datetime(2027, 6, 1, tzinfo=UTC)
BIG = ("events_pings_p20270601", "events_runs_p20270601", "runs", "jobs", "due_jobs",
       "events_keep", "monitor_ping_bodies_p20270601", "monitors")


def _fill(conn: psycopg.Connection) -> None:
    team = uuid.uuid4()
    conn.execute("INSERT INTO teams (id, name) VALUES (%s, %s)", (team, str(team)))
    for table in BIG:
        conn.execute(sql.SQL("ALTER TABLE {} SET (autovacuum_enabled = false)").format(
            sql.Identifier(table)))
    conn.execute("""
        INSERT INTO jobs (id, team_id, name, schedule, timezone, request, timeout_seconds, retry,
                          overlap, catchup, status, version, anchor_at, created_at, updated_at)
        SELECT gen_random_uuid(), %(team)s, 'j' || i, '* * * * *', 'UTC', '{}', 30, '{}',
               'skip', 'latest', 'active', 1, %(day)s, %(day)s, %(day)s
        FROM generate_series(1, 20000) AS i""", {"team": team, "day": DAY})
    conn.execute("INSERT INTO due_jobs (job_id, due_at) SELECT id, %(day)s + "
                 "(random() * interval '30 days') FROM jobs", {"day": DAY})
    conn.execute("""
        INSERT INTO runs (id, job_id, team_id, scheduled_for, trigger, status, version, created_at)
        SELECT gen_random_uuid(), j.id, j.team_id, %(day)s + s * interval '1 minute', 'schedule',
               'succeeded', 2, %(day)s
        FROM (SELECT id, team_id FROM jobs LIMIT 2000) j, generate_series(1, 50) AS s""",
                 {"day": DAY})
    conn.execute("""
        INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, data,
                            occurred_at)
        SELECT 'monitor', m, v, 'monitor.pinged', %(team)s, '{"kind": "success"}',
               %(day)s + v * interval '1 second'
        FROM (SELECT gen_random_uuid() AS m FROM generate_series(1, 1000)) ms,
             generate_series(2, 201) AS v""", {"team": team, "day": DAY})
    conn.execute("""
        INSERT INTO monitors (id, team_id, name, schedule, timezone, grace_seconds, methods,
                              manual_resume, status, version, created_at, updated_at)
        SELECT DISTINCT stream_id, %(team)s, 'm ' || stream_id, '1h', 'UTC', 60, 'any', false,
               'up', 201, %(day)s, %(day)s
        FROM events_pings""", {"team": team, "day": DAY})
    conn.execute("""
        INSERT INTO monitor_ping_bodies (monitor_id, version, body, received_at)
        SELECT stream_id, stream_version, '\\x6f6b', occurred_at FROM events_pings
        WHERE stream_version % 4 = 0""")
    conn.execute("""
        INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, data,
                            occurred_at)
        SELECT 'run', r.id, v, 'run.started', r.team_id, '{}', r.scheduled_for
        FROM runs r, generate_series(1, 2) AS v""")
    conn.execute("""
        INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, data,
                            occurred_at)
        SELECT 'job', id, 1, 'job.created', team_id, '{}', %(day)s FROM jobs""", {"day": DAY})


def _plan(conn: psycopg.Connection, query: str | sql.Composable,
          params: dict[str, object]) -> str:
    rows = conn.execute(sql.SQL("EXPLAIN (FORMAT JSON) ") + (
        sql.SQL(query) if isinstance(query, str) else query), params).fetchone()
    return json.dumps(rows[0])


def _function_plan(conn: psycopg.Connection, function: str, names: tuple[str, ...],
                   values: tuple[object, ...]) -> str:
    """The generic plan of the one ``RETURN QUERY`` statement of a PL/pgSQL ``function``.

    ``EXPLAIN`` of the function's call shows a Function Scan only, so its statement (from
    ``pg_proc.prosrc``, each ``function.name`` made a parameter) is prepared with the function's
    ``SET`` clause (``proconfig``) and explained with ``values``: the plan the function keeps
    (migrations 0035, 0036, 0039, 0040, 0042).
    """
    source, config, types = conn.execute(
        "SELECT prosrc, proconfig, proargtypes::regtype[]::text[] FROM pg_proc "
        "WHERE proname = %s", (function,)).fetchone()
    statement = source.split("RETURN QUERY", 1)[1].rsplit(";", 1)[0]
    for i, name in enumerate(names, start=1):
        statement = statement.replace(f"{function}.{name}", f"${i}")
    conn.execute("BEGIN")
    for setting in config or ():
        key, value = setting.split("=", 1)
        conn.execute(sql.SQL("SET LOCAL {} = {}").format(sql.Identifier(key), sql.Literal(value)))
    conn.execute(sql.SQL("PREPARE fn_plan ({}) AS {}").format(
        sql.SQL(", ").join(sql.SQL(t) for t in types), sql.SQL(statement)))
    try:
        rows = conn.execute(
            sql.SQL("EXPLAIN (FORMAT JSON) EXECUTE fn_plan ({})").format(
                sql.SQL(", ").join(sql.Literal(v) for v in values))).fetchone()
    finally:
        conn.execute("DEALLOCATE fn_plan")
        conn.execute("ROLLBACK")
    return json.dumps(rows[0])


def _nodes(plan: str) -> list[dict]:
    """Every node of an ``EXPLAIN (FORMAT JSON)`` plan."""
    found: list[dict] = []

    def walk(node: dict) -> None:
        found.append(node)
        for child in node.get("Plans", ()):
            walk(child)

    for top in json.loads(plan):
        walk(top["Plan"])
    return found


def _seq_scans(plan: str) -> set[str]:
    return {n["Relation Name"] for n in _nodes(plan)
            if n.get("Node Type") == "Seq Scan" and n.get("Relation Name") in BIG}


def _relations(plan: str) -> set[str]:
    return {n["Relation Name"] for n in _nodes(plan) if "Relation Name" in n}


async def test_hot_statements_use_indexes_on_never_analyzed_tables(
        fresh_pool, fresh_dsn: str) -> None:  # noqa: ANN001 - fixtures
    await ensure_partitions(fresh_pool, DAY, 1)  # analyzes the new, empty leaves
    with psycopg.connect(fresh_dsn) as conn:
        _fill(conn)
        conn.commit()
        stats = conn.execute(
            "SELECT relname, coalesce(last_analyze, last_autoanalyze) IS NULL AS never "
            "FROM pg_stat_user_tables WHERE relname IN ('runs', 'jobs', 'due_jobs')").fetchall()
        assert all(never for _, never in stats), stats
        one = conn.execute("SELECT stream_id FROM events_pings LIMIT 1").fetchone()[0]
        job = conn.execute("SELECT id, team_id FROM jobs LIMIT 1").fetchone()
        last = conn.execute("SELECT max(tx_id)::text, max(global_position) FROM events"
                            ).fetchone()
        plans = {
            "job_claim_due": _plan(conn, Q["job_claim_due"], {
                "finished": [], "horizon": DAY, "limit": 100, "worker_id": "w",
                "live_after": DAY, "now": DAY}),
            "projection_events_after": _plan(conn, Q["projection_events_after"], {
                "tx_id": last[0], "position": last[1] - 10, "limit": 20000}),
            "event_read_stream": _plan(conn, Q["event_read_stream"], {
                "stream_type": "monitor", "kinds": list(stream_kinds("monitor")),
                "stream_id": one, "team_id": job[1], "after_version": 0, "limit": 1000}),
            "event_read_stream (job)": _plan(conn, Q["event_read_stream"], {
                "stream_type": "job", "kinds": list(stream_kinds("job")),
                "stream_id": job[0], "team_id": job[1], "after_version": 0, "limit": 1000}),
            "monitor_ping_list": _function_plan(conn, "monitor_ping_list", (
                "monitor", "team", "before_version", "lim"), (one, job[1], None, 50)),
            "alert_monitor_events": _function_plan(conn, "alert_monitor_events", (
                "monitor", "team", "until_at", "lim"), (one, job[1], DAY, 20)),
            "projection_lag": _function_plan(conn, "projection_lag_seconds", (
                "after_tx", "after_position"), (last[0], last[1] - 10)),
            "run_finish_many": _plan(conn, Q["run_finish_many"], {
                "ids": [uuid.uuid4()], "lease_tokens": [uuid.uuid4()], "statuses": ["failed"],
                "finished_at": [DAY], "available_at": [None], "started_at": [DAY],
                "lateness_ms": [1], "duration_ms": [1], "response_status": [500],
                "error_class": [None], "error": [None]}),
        }
    scans = {name: _seq_scans(plan) for name, plan in plans.items()}
    assert {name: s for name, s in scans.items() if s} == {}
    # Stream reads name the partition key: a job's stream is read from events_keep alone, a
    # monitor's pings from the pings' leaves (and their bodies' leaves) alone.
    assert _relations(plans["event_read_stream (job)"]) == {"events_keep"}
    ping_list = _relations(plans["monitor_ping_list"])
    assert {r for r in ping_list if r.startswith("events_")} \
        <= {"events_pings_default"} | {r for r in ping_list if r.startswith("events_pings_p")}
    assert "events_pings_p20270601" in ping_list
    # An alert's monitor stream: the partitions of a monitor's stream alone (named in the
    # function as constants: core/events.py STREAM_KINDS["monitor"]).
    assert stream_kinds("monitor") == ("keep", "pings")
    around = _relations(plans["alert_monitor_events"])
    assert {r for r in around if r.startswith("events_")} \
        <= {"events_keep", "events_pings_default"} \
        | {r for r in around if r.startswith("events_pings_p")}
    assert "events_pings_p20270601" in around
