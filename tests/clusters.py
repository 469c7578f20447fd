"""Two real PostgreSQL clusters on this machine, a primary and a streaming standby, for the
failover tests and ``bench/outage.py`` (docs/operations.md, "High availability").

``with replicated_pair(folder, synchronous=True) as pair``: a primary made by ``initdb``, a
standby made from it by ``pg_basebackup -R`` (Debian's PostgreSQL binaries, the version the
machine has), each on a free TCP port of 127.0.0.1 chosen now, with trust authentication.
``synchronous=True`` names the standby in the primary's ``synchronous_standby_names`` (a commit
returns once the standby has flushed it: nothing is lost by a failover); ``False`` leaves it
asynchronous. ``pair.dsn(dbname)`` is the multi-host DSN an operator would write
(``target_session_attrs=read-write``); ``pair.fail_over()`` kills the primary
(``pg_ctl stop -m immediate``) and promotes the standby (``pg_ctl promote``).

As root the clusters run as the ``postgres`` system user (PostgreSQL refuses root), in a folder
of their own under the system's temporary folder, never inside the caller's (possibly 0700)
checkout.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from tests.processes import free_port

STANDBY_NAME = "standby"
START_TIMEOUT = 60  # seconds


def pg_bin() -> Path | None:
    """The folder of the newest Debian PostgreSQL server binaries, or ``None``."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_basebackup"),
                   key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit()
                   else 0)
    for candidate in reversed(found):
        if all((candidate.parent / tool).exists() for tool in ("initdb", "pg_ctl", "postgres")):
            return candidate.parent
    return None


def require_pg_bin() -> Path:
    """:func:`pg_bin`, or skip the test (fail it in CI, where .ci/run installs them)."""
    found = pg_bin()
    if found is None:
        message = "Debian's PostgreSQL server binaries (/usr/lib/postgresql/*/bin) are missing"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


@dataclass
class Cluster:
    bin: Path
    data: Path
    port: int
    socket_dir: Path
    user: str | None  # run the server as this system user (root runs), else as ourselves

    def run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(self.bin / tool), *args]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              cwd=tempfile.gettempdir())
        if check and done.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(args)} failed ({done.returncode}): "
                               f"{done.stdout}{done.stderr}")
        return done

    def conninfo(self, dbname: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname}"

    def start(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.data / "server.log"),
                 "-w", "-t", str(START_TIMEOUT), "start")

    def stop(self, mode: str = "fast") -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def restart(self, mode: str = "fast") -> None:
        """``pg_ctl restart``: every session ends; returns once it accepts connections."""
        self.run("pg_ctl", "-D", str(self.data), "-m", mode, "-l",
                 str(self.data / "server.log"), "-w", "-t", str(START_TIMEOUT), "restart")

    def promote(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-w", "-t", str(START_TIMEOUT), "promote")

    def execute(self, statement: str, dbname: str = "postgres") -> list[tuple]:
        with psycopg.connect(self.conninfo(dbname), autocommit=True, connect_timeout=5) as conn:
            cur = conn.execute(statement)
            return cur.fetchall() if cur.description else []


@dataclass
class ReplicatedPair:
    primary: Cluster
    standby: Cluster
    synchronous: bool

    def dsn(self, dbname: str = "postgres", form: str = "uri") -> str:
        """The operator's DSN: both hosts, the primary first, read-write sessions only."""
        ports = (self.primary.port, self.standby.port)
        if form == "keyvalue":
            return (f"host=127.0.0.1,127.0.0.1 port={ports[0]},{ports[1]} user=postgres "
                    f"dbname={dbname} target_session_attrs=read-write")
        return (f"postgresql://postgres@127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}/{dbname}"
                "?target_session_attrs=read-write")

    def standby_caught_up(self, timeout: float = 30) -> None:
        """Wait until the standby has replayed everything the primary has written so far."""
        [(lsn,)] = self.primary.execute("SELECT pg_current_wal_lsn()::text")
        deadline = time.monotonic() + timeout
        while self.standby.execute(
                f"SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn") != [(True,)]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the standby did not replay up to {lsn} in {timeout} s")
            time.sleep(0.02)

    def detach_standby(self, timeout: float = 30) -> None:
        """Stop the standby's replication (its WAL receiver): what the primary commits from
        now on is lost by a failover, as with an asynchronous standby that lagged."""
        self.standby.execute("ALTER SYSTEM SET primary_conninfo = ''")
        self.standby.execute("SELECT pg_reload_conf()")
        deadline = time.monotonic() + timeout
        while self.standby.execute("SELECT count(*) FROM pg_stat_wal_receiver") != [(0,)]:
            if time.monotonic() > deadline:
                raise RuntimeError("the standby's WAL receiver did not stop")
            time.sleep(0.02)

    def fail_over(self) -> float:
        """Kill the primary (``-m immediate``: no shutdown checkpoint, connections cut as by a
        crash) and promote the standby; returns the ``time.monotonic()`` of the promotion's
        end."""
        self.primary.stop("immediate")
        self.standby.promote()
        return time.monotonic()


def _owner() -> str | None:
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("running as root needs the 'postgres' system user to run PostgreSQL")
    return "postgres"


def _conf(cluster: Cluster, extra: str = "") -> None:
    with open(cluster.data / "postgresql.conf", "a") as conf:
        conf.write(f"\nport = {cluster.port}\nlisten_addresses = '127.0.0.1'\n"
                   f"unix_socket_directories = '{cluster.socket_dir}'\n"
                   "max_wal_senders = 5\nwal_level = replica\nhot_standby = on\n"
                   "fsync = off\nfull_page_writes = off\nmax_connections = 60\n"
                   "shared_buffers = 16MB\n" + extra)


@contextlib.contextmanager
def single_cluster() -> Iterator[Cluster]:
    """One PostgreSQL cluster of its own (to restart for real), destroyed afterwards."""
    bin_dir = require_pg_bin()
    user = _owner()
    folder = Path(tempfile.mkdtemp(prefix="cronledger-pg-"))
    os.chmod(folder, 0o755)
    cluster = Cluster(bin_dir, folder / "data", free_port(), folder, user)
    if user is not None:
        shutil.chown(folder, user)
    try:
        cluster.run("initdb", "-D", str(cluster.data), "-U", "postgres", "--auth=trust",
                    "--no-sync", "-E", "UTF8", "--locale=C")
        _conf(cluster)
        cluster.start()
        yield cluster
    finally:
        cluster.stop("immediate")
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def replicated_pair(synchronous: bool = True) -> Iterator[ReplicatedPair]:
    """A primary and a streaming standby, running for the block, destroyed afterwards."""
    bin_dir = require_pg_bin()
    user = _owner()
    folder = Path(tempfile.mkdtemp(prefix="cronledger-ha-"))
    os.chmod(folder, 0o755)
    primary = Cluster(bin_dir, folder / "primary", free_port(), folder, user)
    standby = Cluster(bin_dir, folder / "standby", free_port(), folder, user)
    if user is not None:
        shutil.chown(folder, user)
    started: list[Cluster] = []
    try:
        primary.run("initdb", "-D", str(primary.data), "-U", "postgres", "--auth=trust",
                    "--no-sync", "-E", "UTF8", "--locale=C")
        _conf(primary)
        primary.start()
        started.append(primary)
        standby.run("pg_basebackup", "-h", "127.0.0.1", "-p", str(primary.port), "-U",
                    "postgres", "-D", str(standby.data), "-R", "-X", "stream", "--no-sync")
        _conf(standby)
        # -R wrote standby.signal and primary_conninfo into postgresql.auto.conf, read after
        # postgresql.conf: the standby's name for synchronous_standby_names goes there too.
        with open(standby.data / "postgresql.auto.conf", "a") as auto:
            auto.write(f"primary_conninfo = 'host=127.0.0.1 port={primary.port} "
                       f"user=postgres application_name={STANDBY_NAME}'\n")
        standby.start()
        started.append(standby)
        if synchronous:
            primary.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{STANDBY_NAME}'")
            primary.execute("SELECT pg_reload_conf()")
        wanted = "sync" if synchronous else "async"
        deadline = time.monotonic() + START_TIMEOUT
        while primary.execute(
                "SELECT sync_state FROM pg_stat_replication WHERE application_name = "
                f"'{STANDBY_NAME}' AND state = 'streaming'") != [(wanted,)]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the standby is not streaming ({wanted}) after "
                                   f"{START_TIMEOUT} s")
            time.sleep(0.05)
        yield ReplicatedPair(primary, standby, synchronous)
    finally:
        for cluster in reversed(started):
            cluster.stop("immediate")
        shutil.rmtree(folder, ignore_errors=True)
